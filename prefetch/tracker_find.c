// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Finding the loader's epoch (tracker_int.h): detection, which tests
 * candidate epochs against the first opens collected, and recovery while
 * lost, which tests the starts of candidate epochs (the next, the current
 * begun again, those kept where a new job starts, and up to AHEAD_MAX
 * epochs further on) against the last missed opens, and adopts the first
 * that matches.  Single-threaded: the caller's lock, as for tracker.c.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tracker_int.h"

/* Recovery while lost: candidate epochs' starts (see tracker.h). */

/*
 * Positions of a candidate's start that a test accepts: the collection and
 * the window, but no more window than an eighth of the rank's epoch (the
 * scheduler gives a small epoch a quarter), nor than keeps the limit within
 * a quarter of it: a candidate must be 4 times the limit, so that chance
 * cannot match it.  Then epochs of 160 samples and more have candidates,
 * those under 320 with less of the window.
 */
static uint64_t recover_limit(const struct dsfs_tracker *t)
{
	uint64_t per = dsfs_sampler_count(&t->cfg, t->n), w = t->window,
		 base = DSFS_TRACKER_DETECT_SAMPLES + RECOVER_EVERY;

	if (w > per / 8)
		w = per / 8;
	if (w > per / 4 - base && per / 4 >= base)
		w = per / 4 - base;
	return base + w;
}

int dsfs_tracker_pentry_cmp(const void *a, const void *b)
{
	const struct pentry *x = a, *y = b;

	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

void dsfs_tracker_prefix_free(struct prefix *p)
{
	free(p->e);
	p->e = NULL;
	p->len = 0;
}

/*
 * Keep the start of epoch e from its order (count positions): the first
 * `limit` positions; with stride > 1 (a group's whole permutation), the
 * positions g / stride of the group's ranks rank .. rank + group - 1.
 * 0 or -ENOMEM.
 */
static int prefix_from(const struct dsfs_tracker *t, const uint32_t *order,
		       uint64_t count, uint64_t stride, uint64_t e,
		       struct prefix *out)
{
	uint64_t limit = recover_limit(t), g, r, pos, max;
	uint32_t len = 0;

	max = limit * (stride > 1 ? t->group : 1);
	out->e = malloc(max * sizeof(*out->e));
	if (!out->e)
		return -ENOMEM;
	for (g = 0; g < count && len < max; g++) {
		pos = g / stride;
		r = g % stride;
		if (pos >= limit)
			break;
		if (stride > 1 && (r < t->rank || r >= t->rank + t->group))
			continue;
		out->e[len++] = (struct pentry){ order[g], (uint32_t)pos };
	}
	qsort(out->e, len, sizeof(*out->e), dsfs_tracker_pentry_cmp);
	out->len = len;
	out->epoch = e;
	out->count = count / stride;
	return 0;
}

/*
 * What a candidate epoch is ordered by: this rank's order, or for a group
 * (whole) the whole permutation (world 1), whose position g belongs to rank
 * g mod world; *stride is that world (1 for a rank's own order).
 */
static struct dsfs_sampler_cfg candidate_cfg(const struct dsfs_tracker *t,
					     bool whole, uint32_t *rank,
					     uint64_t *stride)
{
	struct dsfs_sampler_cfg c = t->cfg;

	*rank = t->rank;
	*stride = 1;
	if (whole && t->group > 1) {
		c.world = 1;
		c.drop_last = false;
		*rank = 0;
		*stride = t->cfg.world;
	}
	return c;
}

int dsfs_tracker_prefix_build_as(struct dsfs_tracker *t,
				 const struct dsfs_sampler_cfg *c,
				 uint32_t rank, uint64_t stride, uint64_t e,
				 struct prefix *out)
{
	uint64_t count;
	uint32_t *order;
	int err;

	err = dsfs_sampler_order(c, t->n, e, rank, &order, &count);
	if (err)
		return err;
	dsfs_tracker_canon_apply(t, order, count);
	err = prefix_from(t, order, count, stride, e, out);
	free(order);
	return err;
}

static int prefix_build(struct dsfs_tracker *t, uint64_t e, bool whole,
			struct prefix *out)
{
	uint64_t stride;
	uint32_t rank;
	struct dsfs_sampler_cfg c = candidate_cfg(t, whole, &rank, &stride);

	return dsfs_tracker_prefix_build_as(t, &c, rank, stride, e, out);
}

/* Keep an epoch's start among those a new job may start at. */
void dsfs_tracker_keep_start(struct dsfs_tracker *t, const uint32_t *order,
			     uint64_t count, uint64_t stride, uint64_t e)
{
	if (t->nkept < KEPT_MAX &&
	    !prefix_from(t, order, count, stride, e, &t->kept[t->nkept]))
		t->nkept++;
}

/* Keep epoch e's start, computed (the group's, for a group). */
static void keep_epoch(struct dsfs_tracker *t, uint64_t e)
{
	if (t->nkept < KEPT_MAX &&
	    !prefix_build(t, e, true, &t->kept[t->nkept]))
		t->nkept++;
}

/* Whether idx has a position in p's start (in ep's first limit, when ep
 * is given instead). */
static bool at_start(const struct prefix *p,
		     const struct dsfs_tracker_epoch *ep, uint64_t limit,
		     uint32_t idx)
{
	struct pentry key = { idx, 0 };

	if (ep)
		return ep->inv[idx] != NO_POS && ep->inv[idx] < limit;
	return bsearch(&key, p->e, p->len, sizeof(key), dsfs_tracker_pentry_cmp) != NULL;
}

/* Whether n accesses sit at the start, all but `spare` of them. */
static bool all_at_start(const struct prefix *p,
			 const struct dsfs_tracker_epoch *ep, uint64_t limit,
			 const uint32_t *idx, uint32_t n, uint32_t spare)
{
	uint32_t i, missed = 0;

	for (i = 0; i < n && missed <= spare; i++)
		missed += !at_start(p, ep, limit, idx[i]);
	return n && missed <= spare;
}

/*
 * Whether the loader is at the start of a candidate (a kept start p, or an
 * epoch ep whose whole order is held): the ring's misses sit there, all but
 * a quarter (a job's last opens before it ended may lead them, and in a
 * small epoch the new job's first misses, half its opens placed by chance
 * elsewhere, reach past the limit), or the last RECENT accesses all do
 * (the ring may still hold older misses, such as a pass over the data
 * between two jobs).  Candidates of fewer than 4 (collected + 8 + W)
 * positions are never tested: chance matches them (24 of 32 accesses
 * within a quarter of an epoch: about once in 2^28).
 */
bool dsfs_tracker_at_start(const struct dsfs_tracker *t,
			   const struct prefix *p,
			   const struct dsfs_tracker_epoch *ep)
{
	uint64_t limit = recover_limit(t);

	if (ep ? !ep->ready || ep->count < 4 * limit :
		 !p->e || p->count < 4 * limit)
		return false;
	return all_at_start(p, ep, limit, t->ring, t->nring, t->nring / 4) ||
	       (t->recent_pos >= RECENT &&
		all_at_start(p, ep, limit, t->recent, RECENT, 0));
}

/*
 * The loader is at the start of epoch e: follow it from there, with the
 * ring's accesses seen (those of this rank's order) and handed on as the
 * collection (dsfs_tracker_collected()).  A return value as tracker.h says.
 */
int dsfs_tracker_adopt(struct dsfs_tracker *t, uint64_t e, bool group)
{
	bool first = !t->cur.ready, again = !first && t->cur.epoch == e;
	uint32_t i, n = t->nring, nrecent;

	if (!again && !(t->next.ready && t->next.epoch == e) &&
	    dsfs_tracker_epoch_build(t, &t->next, e))
		return DSFS_TRACK_MISS;
	/* The ring shows the epoch's start; the last accesses, where the
	 * loader is now: both are seen, and hand on as the collection. */
	memcpy(t->collected, t->ring, n * sizeof(*t->ring));
	nrecent = t->recent_pos < RECENT ? t->recent_pos : RECENT;
	for (i = 0; i < nrecent; i++)
		t->collected[n++] = t->recent[i];
	t->ncollected = n;
	if (again) {		/* the same epoch begun again */
		dsfs_tracker_progress_reset(t);
	} else {
		t->next.err = 0;
		votes_clear(t);
		if (dsfs_tracker_switch_epoch(t))
			return DSFS_TRACK_MISS;
	}
	/* Only those at its start: the ring may hold misses from before
	 * the loader began it (another job's, when the recent ones matched),
	 * and in a small epoch the first 4 (collected + 8 + W) positions
	 * dsfs_tracker_place() takes are most of it. */
	for (i = 0; i < n; i++)
		if (at_start(NULL, &t->cur, recover_limit(t),
			     t->collected[i]))
			dsfs_tracker_place(t, t->collected[i]);
	t->head = t->frontier;
	t->starts++;
	if (first || group)
		t->tracking = DSFS_TRACKER_DETECTED;
	dsfs_tracker_unlose(t);
	return first || group ? DSFS_TRACK_DETECTED : DSFS_TRACK_NEXT_EPOCH;
}

void dsfs_tracker_place(struct dsfs_tracker *t, uint64_t idx)
{
	uint32_t p;
	bool near;

	if (idx >= t->n || !t->cur.ready)
		return;
	p = dsfs_tracker_unseen_pos(t, idx);
	near = p != NO_POS && p < 4 * recover_limit(t);
	if (near)
		dsfs_tracker_mark_seen(t, p);
	/* Opened lately: a run's next open follows it (and marks it). */
	runs_add(t, (uint32_t)idx, !near, UINT32_MAX);
}

/* Lost for an epoch's worth of accesses: the candidates move on one epoch
 * (the loader has), staying lost. */
static void move_on(struct dsfs_tracker *t)
{
	t->lost_run = 0;
	if (t->fixed || dsfs_tracker_prepare_next(t))
		return;
	votes_clear(t);
	dsfs_tracker_switch_epoch(t);
}

/*
 * Remember a missed access among distinct ones: while tracking, the first
 * misses since the tracker last followed the loader (8 accesses in plan in
 * a row empty the ring, more in a small epoch: tracker.c's follow_run()),
 * so that when misses make it lost they show where the loader went, near
 * that epoch's start; while lost, the last ones.
 */
void dsfs_tracker_ring_add(struct dsfs_tracker *t, uint64_t idx)
{
	uint32_t i;

	t->plan_run = 0;
	for (i = 0; i < t->nring; i++)
		if (t->ring[i] == idx)
			return;
	if (t->mode != DSFS_TRACKER_LOST &&
	    t->nring == DSFS_TRACKER_DETECT_SAMPLES)
		return;
	t->ring[t->ring_pos] = (uint32_t)idx;
	t->ring_pos = (t->ring_pos + 1) % DSFS_TRACKER_DETECT_SAMPLES;
	if (t->nring < DSFS_TRACKER_DETECT_SAMPLES)
		t->nring++;
}

uint64_t dsfs_tracker_candidate_work_as(const struct dsfs_tracker *t,
					const struct dsfs_sampler_cfg *c,
					uint64_t e)
{
	uint64_t count = dsfs_sampler_count(c, t->n), skip;

	if (c->seeded_once || c->inplace) /* the epochs before replayed */
		return e < UINT64_MAX / 4 / (t->n + 1) ? (e + 1) * t->n :
							  UINT64_MAX / 2;
	if (c->kind != DSFS_SAMPLER_TORCH_RANDOM)
		return t->n;
	if (dsfs_sampler_torch_skip(c, t->n, e, &skip) ||
	    skip > UINT64_MAX / 4)
		return UINT64_MAX / 2;
	return skip + count;
}

uint64_t dsfs_tracker_candidate_work(const struct dsfs_tracker *t, uint64_t e)
{
	return dsfs_tracker_candidate_work_as(t, &t->cfg, e);
}

/* Forget the epochs ahead and those drawn other ways (the loader is
 * followed again). */
void dsfs_tracker_ahead_free(struct dsfs_tracker *t)
{
	uint32_t i;

	for (i = 0; i < t->nahead; i++)
		dsfs_tracker_prefix_free(&t->ahead[i]);
	t->nahead = 0;
	t->ahead_work = 0;
	for (i = 0; i < t->nways; i++)
		dsfs_tracker_prefix_free(&t->ways[i]);
	t->nways = 0;
	t->ways_built = false;
}

/*
 * Lost: the epochs ahead among the candidates.  The loader may be many
 * epochs past the current one: when the kernel serves whole epochs from
 * its page cache, dsfs hears nothing of them, and only a later cold read
 * (memory pressure) shows where the loader is.  They are built at the
 * first test, whose ring holds the first misses, near the start of the
 * loader's epoch: AHEAD_MAX epochs past the next one, within the
 * detection's budget for the whole time lost (a torch-random epoch e
 * costs (2e + 1) n outputs: for 10^6 samples, about the next 30).  Those
 * the current epoch moves past (move_on) are dropped, and as many added.
 */
static void ahead_extend(struct dsfs_tracker *t)
{
	uint64_t e = t->cur.epoch + 2, budget = DETECT_WORK + 64 * t->n;
	uint32_t i, k = 0;

	for (i = 0; i < t->nahead; i++) {
		if (t->ahead[i].epoch < e)
			dsfs_tracker_prefix_free(&t->ahead[i]);
		else
			t->ahead[k++] = t->ahead[i];
	}
	for (i = k; i < t->nahead; i++)
		t->ahead[i] = (struct prefix){ 0 }; /* moved down: not owned */
	t->nahead = k;
	if (k)
		e = t->ahead[k - 1].epoch + 1;
	for (; t->nahead < AHEAD_MAX; e++) {
		t->ahead_work += dsfs_tracker_candidate_work(t, e);
		if (t->ahead_work > budget ||
		    prefix_build(t, e, false, &t->ahead[t->nahead]))
			return;
		t->nahead++;
	}
}

/* A lost access: remember it, and now and then test the candidates. */
int dsfs_tracker_recover(struct dsfs_tracker *t, uint64_t idx)
{
	uint32_t i, want = t->cur.ready ? DSFS_TRACKER_DETECT_SAMPLES :
					  t->ncollected;

	dsfs_tracker_ring_add(t, idx);
	if (t->cur.ready && ++t->lost_run >= t->cur.count)
		move_on(t);
	if (t->fixed || t->nring < want || ++t->since_test < RECOVER_EVERY)
		return DSFS_TRACK_MISS;
	t->since_test = 0;
	if (t->cur.ready) {
		if (!dsfs_tracker_prepare_next(t) &&
		    dsfs_tracker_at_start(t, NULL, &t->next))
			return dsfs_tracker_adopt(t, t->next.epoch, false);
		if (dsfs_tracker_at_start(t, NULL, &t->cur))
			return dsfs_tracker_adopt(t, t->cur.epoch, false);
		ahead_extend(t);
		for (i = 0; i < t->nahead; i++)
			if (dsfs_tracker_at_start(t, &t->ahead[i], NULL))
				return dsfs_tracker_adopt(t, t->ahead[i].epoch,
							  false);
	}
	for (i = 0; i < t->nkept; i++)
		if (dsfs_tracker_at_start(t, &t->kept[i], NULL))
			return dsfs_tracker_new_job(t, t->kept[i].epoch);
	return dsfs_tracker_ways_find(t);
}

/* Whether idx is in the collection. */
static bool collected_has(const struct dsfs_tracker *t, uint32_t idx)
{
	uint32_t i;

	for (i = 0; i < t->ncollected; i++)
		if (t->collected[i] == idx)
			return true;
	return false;
}

/*
 * Where epoch ep's order places the k-th index of the collection, or
 * NO_POS: within the collection's size and the window from its start, or
 * anywhere next to another index of the collection (a run: each worker
 * opens its batch's positions one after another, and a loader with most of
 * a small epoch in flight opens it as runs side by side; not in an epoch
 * under RUN_MIN_COUNT, where chance would place a wrong order's so).
 * With `whole`, for a group of local ranks, ep holds the whole permutation
 * (world 1) and an index placed at g belongs to rank g mod world at
 * position g / world (DistributedSampler's rank::world slicing; padding
 * ignored).
 */
static uint32_t collected_pos(const struct dsfs_tracker *t,
			      const struct dsfs_tracker_epoch *ep, uint32_t k,
			      bool whole)
{
	uint64_t limit = (uint64_t)t->ncollected + t->window;
	uint64_t step = whole ? t->cfg.world : 1, g, p, r;

	g = ep->inv[t->collected[k]];
	if (g == NO_POS)
		return NO_POS;
	p = g / step;
	r = g % step;	/* the rank of g when whole */
	if (whole && (r < t->rank || r >= t->rank + t->group))
		return NO_POS;
	if (p < limit)
		return (uint32_t)p;
	/* A rank's neighbours are `world` apart in the whole permutation. */
	if (ep->count / step >= RUN_MIN_COUNT &&
	    ((g >= step && collected_has(t, ep->order[g - step])) ||
	     (g + step < ep->count && collected_has(t, ep->order[g + step]))))
		return (uint32_t)p;
	return NO_POS;
}

/* The collection's indices the current epoch, just begun, places
 * (collected_pos()): seen (those beyond limit as runs', those within as
 * dsfs_tracker_mark_start() marks them); the epoch's head
 * is where they took the frontier.  All of the collection was opened
 * lately, for the runs to go on (a run's first open placed by its next,
 * tracker.c's mark_placed()). */
static void mark_collection(struct dsfs_tracker *t, uint64_t limit)
{
	uint32_t k, p, start[DSFS_TRACKER_DETECT_SAMPLES + RECENT], n = 0;

	for (k = 0; k < t->ncollected; k++)
		runs_add(t, t->collected[k], false, UINT32_MAX);
	for (k = 0; k < t->ncollected; k++) {
		p = collected_pos(t, &t->cur, k, false);
		if (p == NO_POS || bit_get(t->seen, p))
			continue;
		if (p < limit)
			start[n++] = p;
		else
			dsfs_tracker_mark_run(t, p);
	}
	dsfs_tracker_mark_start(t, start, n);
	t->head = t->frontier;
}

/*
 * The fewest of n collected indices a candidate of count positions must
 * place to match: all but an eighth (`strict`), or fewer where chance
 * hardly places that many (a binomial tail under `chance`; each index
 * places by chance with the probability that it falls within limit of
 * the start or next to another of the collection).  A loader's Dataset
 * that reads other samples besides the one asked (mosaic or mixup
 * augmentation drawing random ones, a pair of views) opens as many strays
 * as samples of the order, or more.  With DETECT_CHANCE an epoch of
 * 50,000 samples matches on 13 of 32, one of 1,280,000 on 5, one of 2,000
 * on 24.  Not a group's (its candidates place each rank's).  O(n).
 */
#define DETECT_CHANCE (1.0 / (1 << 20))	/* a match */
#define RETRY_CHANCE (1.0 / (1 << 14))	/* a second test */

static uint32_t placed_needed(const struct dsfs_tracker *t, uint32_t n,
			      uint64_t limit, uint64_t count, uint32_t strict,
			      double chance)
{
	double p, q, pmf, tail = 0, pmfs[DSFS_TRACKER_DETECT_SAMPLES + RECENT + 1];
	uint32_t x;

	if (t->group > 1 || !count)
		return strict;
	p = (double)(limit + (count >= RUN_MIN_COUNT ? 2 * n : 0)) /
	    (double)count;
	if (p >= 1)
		return strict;
	q = 1 - p;
	for (x = 0, pmf = 1; x < n; x++)
		pmf *= q;
	for (x = 0; x <= n; x++) {	/* P(placed = x) */
		pmfs[x] = pmf;
		pmf *= (double)(n - x) / (x + 1) * p / q;
	}
	for (x = n + 1; x > 0; x--) {	/* P(placed >= x - 1) */
		tail += pmfs[x - 1];
		if (tail > chance)
			break;
	}
	return x < strict ? x : strict;
}

/* How many of the collection epoch ep's order does not place. */
static uint32_t candidate_misses(const struct dsfs_tracker *t,
				 const struct dsfs_tracker_epoch *ep)
{
	uint32_t i, missed = 0;

	for (i = 0; i < t->ncollected; i++)
		missed += collected_pos(t, ep, i, t->group > 1) == NO_POS;
	return missed;
}

/* Build candidate e into t->next for the test: this rank's order, or the
 * whole permutation for a group. */
static int candidate_build(struct dsfs_tracker *t, uint64_t e)
{
	uint64_t stride;
	uint32_t rank;
	struct dsfs_sampler_cfg c = candidate_cfg(t, true, &rank, &stride);

	return dsfs_tracker_epoch_build_as(t, &t->next, e, &c, rank);
}

/*
 * Test the candidates in turn, building each in t->next; the first match
 * (placed_needed()) becomes the current epoch with the collection marked
 * seen.  With none, lost; but when not `last` and one placed all but a
 * quarter, or as many as chance places once in 2^14 (RETRY_CHANCE), the
 * collection grows and they are tested again (DSFS_TRACK_DETECTING).
 */
static int detect(struct dsfs_tracker *t, bool last)
{
	uint64_t i, e, work = 0, budget = DETECT_WORK + 64 * t->n;
	uint64_t total = DSFS_TRACKER_DETECT_EPOCHS + t->hint_count;
	uint64_t limit = (uint64_t)t->ncollected + t->window;
	uint32_t k, missed, fewest = UINT32_MAX, need;

	t->kept_group = t->group > 1;
	for (i = 0; i < total; i++) {
		e = i < DSFS_TRACKER_DETECT_EPOCHS ? t->detect_base + i :
		    t->hint_first + (i - DSFS_TRACKER_DETECT_EPOCHS);
		work += dsfs_tracker_candidate_work(t, e);
		if (work > budget)
			break;
		if (candidate_build(t, e))
			continue;
		if (i < DSFS_TRACKER_DETECT_EPOCHS)
			dsfs_tracker_keep_start(t, t->next.order, t->next.count,
				   t->group > 1 ? t->cfg.world : 1, e);
		missed = candidate_misses(t, &t->next);
		fewest = missed < fewest ? missed : fewest;
		need = placed_needed(t, t->ncollected, limit, t->next.count,
				     t->ncollected - t->ncollected / 8,
				     DETECT_CHANCE);
		if (t->ncollected - missed < need)
			continue;
		if (t->group > 1 && dsfs_tracker_epoch_build(t, &t->next, e))
			continue;
		t->next.err = 0;
		votes_clear(t);
		if (dsfs_tracker_switch_epoch(t))
			break;
		mark_collection(t, limit);
		t->mode = t->tracking = DSFS_TRACKER_DETECTED;
		/* A job resumed a few epochs on is found again too. */
		for (k = 1; k <= KEEP_AFTER && i + k < DSFS_TRACKER_DETECT_EPOCHS;
		     k++) {
			work += dsfs_tracker_candidate_work(t, e + k);
			if (work > budget)
				break;
			keep_epoch(t, e + k);
		}
		return DSFS_TRACK_DETECTED;
	}
	if (!last && fewest != UINT32_MAX &&
	    t->ncollected - fewest >=
		    placed_needed(t, t->ncollected, limit, t->next.count,
				  t->ncollected - t->ncollected / 4,
				  RETRY_CHANCE))
		return DSFS_TRACK_DETECTING;
	t->mode = DSFS_TRACKER_LOST;
	t->tracking = DSFS_TRACKER_DETECTED;
	t->misses++;
	return DSFS_TRACK_MISS;
}

/* Collect idx (distinct indices only); detect when enough are in. */
int dsfs_tracker_access_detecting(struct dsfs_tracker *t, uint64_t idx)
{
	uint64_t want = t->n * t->group /
			(t->cfg.kind == DSFS_SAMPLER_TORCH_DISTRIBUTED ?
			 t->cfg.world : 1),
		 per = want;
	uint32_t i;

	/* Half of a small epoch: the rest may be pushed (read without dsfs)
	 * and, once the loader is in the next epoch, would be found late. */
	want = want < 2 * DSFS_TRACKER_DETECT_SAMPLES ? want / 2 :
						      DSFS_TRACKER_DETECT_SAMPLES;
	if (want == 0)
		want = 1;
	for (i = 0; i < t->ncollected; i++)
		if (t->collected[i] == idx)
			return DSFS_TRACK_DETECTING;
	t->collected[t->ncollected++] = (uint32_t)idx;
	if (t->ncollected < want)
		return DSFS_TRACK_DETECTING;
	/* A loader with most of an epoch of RUN_MIN_COUNT or more in flight
	 * opens it as runs side by side, 16 or more: with a single open of
	 * some, the first test may place a few too few of the collection
	 * (collected_pos()); one whose Dataset reads strays besides, too few
	 * of its opens.  The second, with RECENT more, places more. */
	if (t->ncollected == want)
		return detect(t, want != DSFS_TRACKER_DETECT_SAMPLES ||
				     per < RUN_MIN_COUNT);
	return t->ncollected < want + RECENT ? DSFS_TRACK_DETECTING :
					       detect(t, true);
}
