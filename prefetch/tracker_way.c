// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * torch-random and the script shuffles (tracker_int.h): the ways a loader
 * draws from its generator that its options decide, tried while lost when
 * the plan says otherwise (an option the plan was not given), and, for
 * torch-random, the length of an epoch that draws one permutation, learned
 * when the loader leaves two epochs in a row at the same place
 * (num_samples not given).  Single-threaded: the caller's lock, as for
 * tracker.c.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tracker_int.h"

/*
 * torch-random: the ways a loader draws from its generator besides what
 * the plan says (sampler.h): a base seed every epoch, once
 * (persistent_workers), or never (sampler_generator); and two
 * permutations an epoch (a RandomSampler of n samples), or one (`one`: a
 * SubsetRandomSampler, a RandomSampler with num_samples below n, or one
 * whose loop is left before the epoch's end, which never draws its second
 * permutation).  They are loader options a user forgets to give: epoch 0
 * is the same all but the sampler_generator way, so the others lose the
 * loader at epoch 1 for good, and without sampler_generator the detection
 * finds nothing.  And one permutation fewer from now on (CUT_WAY, not in
 * the table): a RandomSampler whose loop was left early once (a break out
 * of one epoch), which never drew that epoch's second permutation
 * (cfg.cut_epochs counts them).  A loader found drawing one permutation an
 * epoch may be such a RandomSampler left early every epoch so far (its
 * epoch e is one of n samples with e epochs cut): when it reads an epoch
 * whole, the next draws two an epoch again, the epochs before counted cut
 * (WHOLE_WAY).  So is the loader that leaves only its first epoch early,
 * whose epoch 1 is both one permutation an epoch's and one epoch cut's.
 *
 * The script shuffles (python-shuffle, the numpy kinds, `script`): a
 * generator seeded with seed + epoch each epoch or once (seeded_once),
 * shuffling a fresh list or the last epoch's again (inplace).  Epoch 0 is
 * the same every way; a script that seeds once or shuffles in place loses
 * the plan at epoch 1 for good.
 */
static const struct way {
	bool script; /* one of the script shuffles' ways, else torch-random's */
	bool persistent_workers, sampler_generator, one;
	bool seeded_once, inplace;
} way_table[] = {
	{ false, false, false, false, false, false },
	{ false, true, false, false, false, false },
	{ false, false, true, false, false, false },
	{ false, false, false, true, false, false },
	{ false, true, false, true, false, false },
	{ false, false, true, true, false, false },
	{ true, false, false, false, false, false },
	{ true, false, false, false, true, false },
	{ true, false, false, false, false, true },
	{ true, false, false, false, true, true },
};

#define NWAYS (sizeof(way_table) / sizeof(way_table[0]))
#define CUT_WAY NWAYS
#define WHOLE_WAY (NWAYS + 1)

/* Whether way w draws as t->cfg does. */
static bool way_is_now(const struct dsfs_tracker *t, unsigned w)
{
	const struct way *x = &way_table[w];

	if (x->script)
		return x->seeded_once == t->cfg.seeded_once &&
		       x->inplace == t->cfg.inplace;
	return x->sampler_generator == t->cfg.sampler_generator &&
	       (x->sampler_generator ||
		x->persistent_workers == t->cfg.persistent_workers) &&
	       x->one == t->cfg.subset;
}

/* Whether the plan's sampler may draw way w: its kind's, and for
 * torch-random with num_samples or replacement given, the permutations
 * drawn are theirs (and one an epoch is a num_samples below n). */
static bool way_possible(const struct dsfs_tracker *t, unsigned w)
{
	if (way_table[w].script)
		return dsfs_sampler_script(t->cfg.kind);
	return t->cfg.kind == DSFS_SAMPLER_TORCH_RANDOM &&
	       (!way_table[w].one ||
		(!t->cfg.num_samples && !t->cfg.replacement));
}

static void way_apply(struct dsfs_sampler_cfg *c, unsigned w)
{
	if (way_table[w].script) {
		c->seeded_once = way_table[w].seeded_once;
		c->inplace = way_table[w].inplace;
		return;
	}
	c->persistent_workers = way_table[w].persistent_workers;
	c->sampler_generator = way_table[w].sampler_generator;
	c->subset = way_table[w].one;
	if (c->subset)
		c->cut_epochs = 0; /* one permutation an epoch, cut or not */
}

/* The sampler of way w (a table way, CUT_WAY or WHOLE_WAY) at epoch e,
 * drawn from c's. */
static struct dsfs_sampler_cfg way_at(const struct dsfs_sampler_cfg *c,
				      unsigned w, uint64_t e)
{
	struct dsfs_sampler_cfg x = *c;

	if (w == CUT_WAY) {
		x.cut_epochs++;
	} else if (w == WHOLE_WAY) {
		x.subset = false;
		x.cut_epochs = e ? e - 1 : 0;
	} else {
		way_apply(&x, w);
	}
	return x;
}

/* Way w's starts of epochs e0 .. e0 + WAYS_EPOCHS - 1 into t->ways while
 * the budget lasts. */
static void ways_build_as(struct dsfs_tracker *t, unsigned w, uint64_t e0,
			  uint64_t *work)
{
	uint64_t budget = DETECT_WORK + 64 * t->n, e;
	struct dsfs_sampler_cfg x;

	for (e = e0; e < e0 + WAYS_EPOCHS && t->nways < WAYS_MAX; e++) {
		x = way_at(&t->cfg, w, e);
		*work += dsfs_tracker_candidate_work_as(t, &x, e);
		if (*work > budget)
			return;
		if (!dsfs_tracker_prefix_build_as(t, &x, t->rank, 1, e,
						  &t->ways[t->nways]))
			t->way_of[t->nways++] = (uint8_t)w;
	}
}

/*
 * Lost: the starts of the epoch before the current one, the current and
 * the next two (epochs 0 to 3 when the detection found none, or the
 * current is 0) drawn the other ways of the plan's kind (way_possible:
 * none but torch-random's and the script shuffles'), built at the first
 * test, once per time lost, within the detection's budget.  The epoch
 * before: in a small epoch a tracker following the planned way's order,
 * not the loader's, is moved on to its next epoch by chance votes now and
 * then; and the loader's epoch e drawn two permutations an epoch is epoch
 * 2e drawn one, so the way found at a later epoch could be the wrong one.
 * Then, for a RandomSampler, the same epochs drawn with one more epoch cut
 * (from the first that can follow a cut one), or, found drawing one
 * permutation an epoch, drawn two again after the one before (WHOLE_WAY).
 * At most 5 table ways and one of those: WAYS_MAX.  O(ways * e * n).
 */
static void ways_build(struct dsfs_tracker *t)
{
	uint64_t e0 = t->cur.ready && t->cur.epoch ? t->cur.epoch - 1 : 0;
	uint64_t work = 0;
	struct dsfs_sampler_cfg whole;
	unsigned w;

	if (t->ways_built)
		return;
	t->ways_built = true;
	for (w = 0; w < NWAYS; w++) {
		if (way_is_now(t, w) || !way_possible(t, w))
			continue;
		ways_build_as(t, w, e0, &work);
	}
	if (dsfs_sampler_cuttable(&t->cfg, t->n))
		ways_build_as(t, CUT_WAY,
			      e0 > t->cfg.cut_epochs ? e0 : t->cfg.cut_epochs + 1,
			      &work);
	whole = way_at(&t->cfg, WHOLE_WAY, 0);
	if (t->cfg.subset && dsfs_sampler_cuttable(&whole, t->n))
		ways_build_as(t, WHOLE_WAY, e0 ? e0 : 1, &work);
}

/*
 * The loader is at the start of ways[i]: draw as it does from now on, and
 * follow it there.  The epochs held were drawn the old way; the starts kept
 * for a new job stay (dsfs_tracker_new_job).
 */
static int adopt_way(struct dsfs_tracker *t, uint32_t i)
{
	uint64_t e = t->ways[i].epoch;
	struct dsfs_sampler_cfg c = way_at(&t->cfg, t->way_of[i], e);

	return dsfs_tracker_redraw(t, &c, e) ? DSFS_TRACK_MISS :
		dsfs_tracker_adopt(t, e, false);
}

int dsfs_tracker_new_job(struct dsfs_tracker *t, uint64_t e)
{
	struct dsfs_sampler_cfg c = t->cfg;

	/* Lost: no length learned (record() forgot it). */
	c.cut_epochs = 0;
	if (c.sampler_generator != t->start_cfg.sampler_generator)
		c = t->start_cfg;
	if ((c.cut_epochs != t->cfg.cut_epochs ||
	     c.sampler_generator != t->cfg.sampler_generator) &&
	    dsfs_tracker_redraw(t, &c, e))
		return DSFS_TRACK_MISS;
	return dsfs_tracker_adopt(t, e, t->kept_group);
}

int dsfs_tracker_redraw(struct dsfs_tracker *t,
			const struct dsfs_sampler_cfg *c, uint64_t e)
{
	t->cfg = *c;
	t->next.ready = false;
	if (t->cur.ready && t->cur.epoch == e)
		return dsfs_tracker_epoch_build(t, &t->cur, e);
	return 0;
}

/* Lost: the loader at the start of an epoch drawn another way?  Then
 * follow it so (NEXT_EPOCH or DETECTED), else MISS. */
int dsfs_tracker_ways_find(struct dsfs_tracker *t)
{
	uint32_t i;

	ways_build(t);
	for (i = 0; i < t->nways; i++)
		if (dsfs_tracker_at_start(t, &t->ways[i], NULL))
			return adopt_way(t, i);
	return DSFS_TRACK_MISS;
}

/*
 * Where the loader left the current epoch: the last place past its head
 * (where the loader was found: the opens before left holes) with the
 * LEFT_RUN positions before it seen and those from it on not, all but an
 * eighth.  Past the place the loader left, only the next epoch's first
 * opens are seen, taken for late ones of this epoch (its window), sparse.
 * count when the epoch was read to its end; the head when no such place
 * is found.  Of two such places up to LEFT_RUN / 8 apart, the first.
 * O(count).
 */
#define LEFT_RUN 16

static uint32_t seen_in(const struct dsfs_tracker *t, uint64_t from,
			uint64_t to)
{
	uint32_t seen = 0;

	for (; from < to && from < t->cur.count; from++)
		seen += bit_get(t->seen, from);
	return seen;
}

static bool left_at(const struct dsfs_tracker *t, uint64_t p)
{
	return (p >= t->cur.count || !bit_get(t->seen, p)) &&
	       bit_get(t->seen, p - 1) &&
	       seen_in(t, p - LEFT_RUN, p) >= LEFT_RUN - LEFT_RUN / 8 &&
	       seen_in(t, p, p + LEFT_RUN) <= LEFT_RUN / 8;
}

static uint64_t left_place(const struct dsfs_tracker *t)
{
	uint64_t p = t->cur.count, q;

	if (p < t->head + LEFT_RUN)
		return t->head;
	for (; p >= t->head + LEFT_RUN; p--) {
		if (!left_at(t, p))
			continue;
		/* A next epoch's open placed right past the place (a late
		 * one by the window) moves it by a position or two. */
		for (q = p - 1; q + LEFT_RUN / 8 >= p &&
				q >= t->head + LEFT_RUN; q--)
			if (left_at(t, q))
				p = q;
		return p;
	}
	return t->head;
}

int dsfs_tracker_learn_length(struct dsfs_tracker *t)
{
	uint64_t k;
	int err;

	if (t->cfg.kind != DSFS_SAMPLER_TORCH_RANDOM || !t->cfg.subset ||
	    t->learned || !t->cur.ready)
		return 0;
	k = left_place(t);
	if (k == t->cur.count || k == t->head) {
		t->left_at = 0;
		return 0;
	}
	if (k != t->left_at) {
		t->left_at = k;
		return 0;
	}
	/* A RandomSampler(num_samples=k) draws as one permutation an epoch
	 * (SubsetRandomSampler) of n samples does, and reads its first k:
	 * the epochs from the next one on end there. */
	t->left_at = 0;
	err = t->next.ready ? dsfs_tracker_epoch_cut(t, &t->next, k) : 0;
	if (err)
		return err;
	t->learned = k;
	t->past = 0;
	return 0;
}

int dsfs_tracker_epoch_cut(struct dsfs_tracker *t,
			   struct dsfs_tracker_epoch *ep, uint64_t k)
{
	uint64_t nt = ep->count - k, i;

	if (k >= ep->count)
		return 0;
	if (nt > t->window)
		nt = t->window;
	ep->tail = malloc(nt * sizeof(*ep->tail));
	if (!ep->tail) {
		free(ep->order);
		ep->order = NULL;
		ep->ready = false;
		return -ENOMEM;
	}
	for (i = 0; i < nt; i++)
		ep->tail[i] = (struct pentry){ ep->order[k + i], (uint32_t)i };
	qsort(ep->tail, nt, sizeof(*ep->tail), dsfs_tracker_pentry_cmp);
	ep->ntail = (uint32_t)nt;
	ep->whole = ep->count;
	ep->count = k;
	return dsfs_tracker_epoch_index(t, ep);
}

/* The current epoch whole again, its progress kept.  O(n). */
static int uncut(struct dsfs_tracker *t)
{
	struct dsfs_tracker_epoch *ep = &t->cur;
	uint64_t k = ep->count, p;
	int err;

	if (!ep->whole)
		return 0;
	err = dsfs_tracker_bitmap_reserve(t, ep->whole);
	if (err)
		return err;
	for (p = k; p < ep->whole && p % 64; p++)
		t->seen[p / 64] &= ~(1ULL << (p % 64));
	if (p < ep->whole)
		memset(t->seen + p / 64, 0,
		       ((ep->whole + 63) / 64 - p / 64) * sizeof(*t->seen));
	free(ep->tail);
	ep->tail = NULL;
	ep->ntail = 0;
	ep->count = ep->whole;
	ep->whole = 0;
	return dsfs_tracker_epoch_index(t, ep);
}

void dsfs_tracker_unlearn(struct dsfs_tracker *t)
{
	if (!t->learned)
		return;
	t->learned = 0;
	t->past = t->left_at = 0;
	t->next.ready = false;
	if (t->cur.ready && uncut(t)) {
		free(t->cur.order);	/* out of memory: no epoch followed */
		t->cur.order = NULL;
		t->cur.ready = false;
	}
}

bool dsfs_tracker_past_end(struct dsfs_tracker *t, uint64_t idx, uint32_t p)
{
	struct pentry key = { (uint32_t)idx, 0 }, *e;
	uint32_t q;

	e = t->cur.ntail ? bsearch(&key, t->cur.tail, t->cur.ntail,
				   sizeof(key), dsfs_tracker_pentry_cmp) : NULL;
	/* Past the cut by e->pos, or at the next epoch's position p: the
	 * loader is at the start of one, the nearer. */
	if (!e || (p != NO_POS && p <= e->pos)) {
		t->past = 0;
		return false;	/* a vote for the next epoch, or a miss */
	}
	votes_clear(t);
	if (++t->past < 2)
		return true;
	/* The loader reads on past the length learned (a loop no longer
	 * left early): the epoch is whole again, and this open in it. */
	dsfs_tracker_unlearn(t);
	if (t->cur.ready && (q = dsfs_tracker_unseen_pos(t, idx)) != NO_POS)
		dsfs_tracker_mark_seen(t, q);
	return true;
}

struct dsfs_tracker_way dsfs_tracker_way(const struct dsfs_tracker *t)
{
	return (struct dsfs_tracker_way){
		.persistent_workers = t->cfg.persistent_workers,
		.sampler_generator = t->cfg.sampler_generator,
		.one_perm = t->cfg.subset,
		.num_samples = t->learned,
		.seeded_once = t->cfg.seeded_once,
		.inplace = t->cfg.inplace,
		.cut_epochs = t->cfg.cut_epochs,
	};
}
