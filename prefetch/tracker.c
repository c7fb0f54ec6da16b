// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Tracker (see tracker.h): one loader's epoch and position from the
 * accesses dsfs sees.  Single-threaded by contract: the caller's lock
 * serialises every call on a tracker.  The current and the next epoch each
 * keep an order, its inverse (first position of every index) and the
 * positions repeating an index (none with today's samplers: see
 * tracker.h); the current epoch also keeps a bitmap of seen positions.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tracker.h"

#define NO_POS UINT32_MAX
#define EARLY_VOTES 8	     /* early switch: accesses in a row */
#define LOST_VOTES 16	     /* recovery from lost: accesses in a row */
#define VOTES_MAX DSFS_TRACKER_DETECT_SAMPLES /* >= LOST_VOTES */
#define LOST_RUN 64	     /* misses in a row that make the tracker lost */
#define HIST_BITS 256	     /* accesses the miss rate is taken over */
#define HIST_MIN 64	     /* ... once at least this many are recorded */
#define DETECT_WORK (1ULL << 30) /* + 64 n: detection's MT19937 outputs */
#define RECOVER_EVERY 8	     /* lost: accesses between tests of the candidates */
#define KEPT_MAX DSFS_TRACKER_DETECT_EPOCHS /* candidate starts kept */
#define RECENT 16	     /* last accesses kept: where the loader is now */
#define KEEP_AFTER 4	     /* starts kept past the epoch detected */
#define AHEAD_MAX 64	     /* lost: epochs past the next one tested */

/* The start of a candidate epoch: (index, position) pairs sorted by index,
 * the positions below a limit (of each rank of a group). */
struct pentry {
	uint32_t idx, pos;
};

struct prefix {
	uint64_t epoch;
	struct pentry *e;
	uint32_t len;
	uint64_t count;		/* one rank's positions in that epoch */
};

struct dsfs_tracker_epoch {
	uint64_t epoch;
	uint32_t *order;	/* count indices, NULL unless ready */
	uint64_t count;
	uint32_t *inv;		/* n entries: first position, or NO_POS */
	uint32_t *chain;	/* NULL, or count entries: the index's next
				   position, or NO_POS (when one repeats) */
	uint64_t ndups;		/* positions repeating an earlier one's */
	bool ready;
	int err;		/* next epoch: dsfs_sampler_order() failed */
};

struct dsfs_tracker {
	struct dsfs_sampler_cfg cfg;
	uint64_t n;
	uint32_t rank, window;
	enum dsfs_tracker_mode mode;
	enum dsfs_tracker_mode tracking; /* configured or detected */
	struct dsfs_tracker_epoch cur, next;
	uint64_t *seen;		/* bitmap over cur.count positions */
	uint64_t seen_words;	/* allocated words */
	uint64_t nseen, low, frontier;
	uint64_t nfirst;	/* indices seen (nseen, but for repeats) */
	uint64_t lag;		/* how far behind the frontier opens come
				   (see mark_seen) */
	uint64_t every_low;	/* dsfs_tracker_low_every()'s cursor */
	uint64_t misses, accesses;
	/* Miss history: a ring of the last HIST_BITS results, 1 = miss. */
	uint64_t hist[HIST_BITS / 64];
	uint32_t hist_len, hist_pos, hist_misses, miss_run;
	/* Votes for a switch to the next epoch: positions there. */
	uint32_t votes[VOTES_MAX];
	uint32_t nvotes;
	/* Detection. */
	uint32_t group;		/* local ranks rank .. rank + group - 1 */
	bool fixed;		/* dsfs_tracker_new_fixed(): one epoch only */
	uint64_t detect_base, hint_first, hint_count;
	uint32_t collected[DSFS_TRACKER_DETECT_SAMPLES + RECENT];
	uint32_t ncollected;
	/* Finding the loader again while lost (recover()). */
	struct prefix kept[KEPT_MAX];	/* where a new job starts */
	uint32_t nkept;
	bool kept_group;		/* kept holds the group's starts */
	/* Lost: the starts of epochs cur + 2, cur + 3, ... (ahead_extend),
	 * and what they cost (candidate_work). */
	struct prefix ahead[AHEAD_MAX];
	uint32_t nahead;
	uint64_t ahead_work;
	uint32_t ring[DSFS_TRACKER_DETECT_SAMPLES]; /* last distinct accesses */
	uint32_t nring, ring_pos, since_test;
	uint32_t plan_run;		/* accesses in plan in a row */
	uint32_t recent[RECENT];	/* the last accesses, any result */
	uint32_t recent_pos;
	uint64_t lost_run;		/* accesses since lost or moved on */
	uint64_t starts;		/* epochs found again (adopt()) */
};

static bool bit_get(const uint64_t *b, uint64_t i)
{
	return b[i / 64] >> (i % 64) & 1;
}

static void bit_set(uint64_t *b, uint64_t i)
{
	b[i / 64] |= 1ULL << (i % 64);
}

/* An order's indices as the accesses report them (cfg.canon).  O(count). */
static void canon_apply(const struct dsfs_tracker *t, uint32_t *order,
			uint64_t count)
{
	uint64_t p;

	if (t->cfg.canon)
		for (p = 0; p < count; p++)
			order[p] = t->cfg.canon[order[p]];
}

/* Fill ep's inverse and repeats from ep->order (ep->count positions, set
 * by the caller) and make it ready; on failure ep->order is freed.  O(n).
 * Repeats chain each position to the index's next one, built backwards
 * with inv as each index's latest head. */
static int epoch_index(struct dsfs_tracker *t, struct dsfs_tracker_epoch *ep)
{
	uint64_t p;

	memset(ep->inv, 0xff, t->n * sizeof(*ep->inv));
	for (p = 0; p < ep->count; p++) {
		if (ep->inv[ep->order[p]] == NO_POS)
			ep->inv[ep->order[p]] = (uint32_t)p;
		else
			ep->ndups++;
	}
	if (ep->ndups) {
		ep->chain = malloc(ep->count * sizeof(*ep->chain));
		if (!ep->chain) {
			free(ep->order);
			ep->order = NULL;
			return -ENOMEM;
		}
		memset(ep->inv, 0xff, t->n * sizeof(*ep->inv));
		for (p = ep->count; p-- > 0;) {
			ep->chain[p] = ep->inv[ep->order[p]];
			ep->inv[ep->order[p]] = (uint32_t)p;
		}
	}
	ep->ready = true;
	return 0;
}

static int epoch_build_as(struct dsfs_tracker *t, struct dsfs_tracker_epoch *ep,
			  uint64_t e, const struct dsfs_sampler_cfg *cfg,
			  uint32_t rank)
{
	int err;

	free(ep->order);
	free(ep->chain);
	ep->order = NULL;
	ep->chain = NULL;
	ep->ndups = 0;
	ep->ready = false;
	ep->epoch = e;
	err = dsfs_sampler_order(cfg, t->n, e, rank, &ep->order, &ep->count);
	if (err)
		return err;
	canon_apply(t, ep->order, ep->count);
	return epoch_index(t, ep);
}


/* Epoch e's order of this tracker's rank.  O(n). */
static int epoch_build(struct dsfs_tracker *t, struct dsfs_tracker_epoch *ep,
		       uint64_t e)
{
	return epoch_build_as(t, ep, e, &t->cfg, t->rank);
}

/* Make the seen bitmap hold at least count bits.  Nothing else changes. */
static int bitmap_reserve(struct dsfs_tracker *t, uint64_t count)
{
	uint64_t words = (count + 63) / 64;
	uint64_t *b;

	if (words <= t->seen_words)
		return 0;
	b = realloc(t->seen, words * sizeof(*b));
	if (!b)
		return -ENOMEM;
	t->seen = b;
	t->seen_words = words;
	return 0;
}

/* Forget the current epoch's progress (the bitmap holds cur.count bits). */
static void progress_reset(struct dsfs_tracker *t)
{
	uint64_t words = (t->cur.count + 63) / 64;

	if (words)
		memset(t->seen, 0, words * sizeof(*t->seen));
	t->nseen = t->nfirst = t->low = t->frontier = t->every_low = 0;
	t->nvotes = 0;
}

/*
 * Mark position pos of the current epoch seen (it is not yet) and move the
 * low-water mark: over seen positions, and past holes further behind the
 * frontier than the loader's opens lag lately (twice the largest lag, less
 * 1/256 of it and 1 an open since, plus giveup_min(); at most 2W, where it
 * starts).  A hole is a read the kernel served itself (a page it kept, a
 * push): waiting 2W for it would hold the mark, the prefetch's lead and
 * the cache's plan time back by up to half the epoch when the loader reads
 * in order.  A late open past the mark is still placed (in_window).  O(1)
 * amortised: the mark only moves forward.
 */
#define GIVEUP_MIN 64

/* GIVEUP_MIN, or an eighth of a smaller epoch (at least 1): in an epoch
 * of 20 shards, a hole 64 behind would never be given up, and the next
 * epoch's opens would fill this one's holes, one epoch late for good. */
static uint64_t giveup_min(const struct dsfs_tracker *t)
{
	uint64_t m = t->cur.count / 8;

	return m > GIVEUP_MIN ? GIVEUP_MIN : m ? m : 1;
}

static void mark_seen(struct dsfs_tracker *t, uint64_t pos)
{
	uint64_t giveup, behind;

	if (t->lag)
		t->lag -= (t->lag >> 8) + 1;
	if (pos + 1 < t->frontier && t->frontier - 1 - pos > t->lag)
		t->lag = t->frontier - 1 - pos;
	bit_set(t->seen, pos);
	t->nseen++;
	t->nfirst += t->cur.inv[t->cur.order[pos]] == pos;
	if (pos + 1 > t->frontier)
		t->frontier = pos + 1;
	behind = 2 * t->lag + giveup_min(t);
	if (behind > 2ULL * t->window)
		behind = 2ULL * t->window;
	giveup = t->frontier > behind ? t->frontier - behind : 0;
	if (t->low < giveup)
		t->low = giveup;
	while (t->low < t->cur.count) {
		uint64_t w = t->seen[t->low / 64] >> (t->low % 64);

		if (w == ~0ULL >> (t->low % 64)) {	/* rest of word seen */
			t->low += 64 - t->low % 64;
			continue;
		}
		if (!(w & 1))
			break;
		t->low++;
	}
	if (t->low > t->cur.count)
		t->low = t->cur.count;
}

/*
 * An unseen position of idx in the current epoch (the first one), or
 * NO_POS.  O(1), plus O(repeats of idx) when its first position is seen.
 */
static uint32_t unseen_pos(const struct dsfs_tracker *t, uint64_t idx)
{
	uint32_t p = t->cur.inv[idx];

	while (p != NO_POS && bit_get(t->seen, p))
		p = t->cur.chain ? t->cur.chain[p] : NO_POS;
	return p;
}

/* Whether unseen position p is in the window around the frontier. */
static bool in_window(const struct dsfs_tracker *t, uint64_t p)
{
	uint64_t w = t->window;

	return p + 2 * w >= t->frontier && p < t->frontier + w;
}

/* Make cur the next epoch (which must be ready) and mark the votes seen. */
static int switch_epoch(struct dsfs_tracker *t)
{
	struct dsfs_tracker_epoch tmp = t->cur;
	uint32_t votes[VOTES_MAX], nvotes = t->nvotes, i;
	int err = bitmap_reserve(t, t->next.count);

	if (err)
		return err;
	memcpy(votes, t->votes, sizeof(votes));
	t->cur = t->next;
	t->next = tmp;
	t->next.ready = false;
	t->next.err = 0;
	progress_reset(t);
	for (i = 0; i < nvotes; i++)
		if (!bit_get(t->seen, votes[i]))
			mark_seen(t, votes[i]);
	return 0;
}

int dsfs_tracker_prepare_next(struct dsfs_tracker *t)
{
	int err;

	if (t->mode == DSFS_TRACKER_DETECTING || !t->cur.ready)
		return -EAGAIN;
	if (t->fixed)
		return -ESRCH; /* one epoch's order, given: no other known */
	if (t->next.ready && t->next.epoch == t->cur.epoch + 1)
		return 0;
	if (t->next.err && t->next.epoch == t->cur.epoch + 1)
		return t->next.err;
	err = epoch_build(t, &t->next, t->cur.epoch + 1);
	/* -ENOMEM may pass: only a lasting error is kept. */
	t->next.err = err == -ENOMEM ? 0 : err;
	return err;
}

/* The next epoch's first positions that vote for it. */
static uint64_t vote_span(const struct dsfs_tracker *t)
{
	return t->window > DSFS_TRACKER_VOTE_SPAN ? t->window :
						    DSFS_TRACKER_VOTE_SPAN;
}

/* idx's first position in the next epoch if within its first vote_span(),
 * else NO_POS. */
static uint32_t next_start_pos(struct dsfs_tracker *t, uint64_t idx)
{
	uint32_t p;

	if (dsfs_tracker_prepare_next(t))
		return NO_POS;
	p = t->next.inv[idx];
	return p != NO_POS && p < vote_span(t) ? p : NO_POS;
}

/*
 * Whether unseen position p of idx, which the window places, is taken for
 * a vote for the next epoch instead: the loader's furthest open is at the
 * end of the epoch, p is behind the low-water mark (given up: the kernel
 * served it) or repeats one seen, and idx sits at the next epoch's start.
 * With push the
 * kernel serves most of an epoch, whose positions are never seen; the next
 * epoch's first opens would land on them, be placed as late opens of this
 * one, and never add up to the votes of a switch.  Only once the next
 * epoch is known (the scheduler prepares it ahead).  O(1).
 */
static bool next_known(const struct dsfs_tracker *t);
static bool rather_next(const struct dsfs_tracker *t, uint64_t idx,
			uint32_t p)
{
	/* A repeat of an index seen in this epoch is as likely: a file that
	 * several samples share (cfg.canon) is read once, then from the page
	 * cache. */
	return (p < t->low || p != t->cur.inv[idx]) && next_known(t) &&
	       t->frontier + giveup_min(t) >= t->cur.count &&
	       t->next.inv[idx] != NO_POS && t->next.inv[idx] < vote_span(t);
}

/* Record one result in the miss history; may make the tracker lost. */
static void record(struct dsfs_tracker *t, bool miss)
{
	uint64_t *w = &t->hist[t->hist_pos / 64];
	uint64_t bit = 1ULL << (t->hist_pos % 64);

	if (t->hist_len == HIST_BITS && (*w & bit))
		t->hist_misses--;
	else if (t->hist_len < HIST_BITS)
		t->hist_len++;
	*w = miss ? *w | bit : *w & ~bit;
	t->hist_misses += miss;
	t->hist_pos = (t->hist_pos + 1) % HIST_BITS;
	t->miss_run = miss ? t->miss_run + 1 : 0;
	if (!miss)
		return;
	t->misses++;
	if (t->mode == DSFS_TRACKER_LOST)
		return;
	if (t->miss_run >= LOST_RUN ||
	    (t->hist_len >= HIST_MIN && t->hist_misses * 4 > t->hist_len)) {
		t->mode = DSFS_TRACKER_LOST;
		t->nvotes = 0;
		t->since_test = RECOVER_EVERY - 1; /* test at the next access */
		t->lost_run = 0;
	}
}

static void ahead_free(struct dsfs_tracker *t);

/* Leave lost (tracking again): forget the history that made it lost. */
static void unlose(struct dsfs_tracker *t)
{
	ahead_free(t);
	t->mode = t->tracking;
	memset(t->hist, 0, sizeof(t->hist));
	t->hist_len = t->hist_pos = t->hist_misses = t->miss_run = 0;
	t->nring = t->ring_pos = t->since_test = 0;
	t->lost_run = 0;
}

/*
 * idx is not placeable in the current epoch: a vote for the next one when
 * it sits at that epoch's start.  Switches after `need` votes in a row
 * (lost, or the current epoch < 90% seen), 2 when it is >= 90% seen, 1 when
 * the low-water mark reached its end.
 */
static int vote_next(struct dsfs_tracker *t, uint64_t idx, uint32_t need)
{
	uint32_t p = next_start_pos(t, idx);

	if (t->mode != DSFS_TRACKER_LOST && t->low >= t->cur.count)
		need = 1;	/* all seen (or given up): the epoch is over */
	else if (t->mode != DSFS_TRACKER_LOST &&
		 t->nfirst * 10 >= (t->cur.count - t->cur.ndups) * 9)
		need = 2;	/* mostly seen (the files that several samples
				   share, once: the page cache serves the
				   rest): one stray must not switch */
	if (p == NO_POS) {
		t->nvotes = 0;
		return DSFS_TRACK_MISS;
	}
	if (need == 1 && p >= t->window)
		need = 2;	/* a lone vote only from the first W */
	t->votes[t->nvotes++] = p;
	if (t->nvotes < need)
		return DSFS_TRACK_MISS;
	if (switch_epoch(t)) {
		t->nvotes = 0;
		return DSFS_TRACK_MISS;
	}
	if (t->mode == DSFS_TRACKER_LOST)
		unlose(t);
	return DSFS_TRACK_NEXT_EPOCH;
}

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
	uint64_t per = t->n, w = t->window,
		 base = DSFS_TRACKER_DETECT_SAMPLES + RECOVER_EVERY;

	if (t->cfg.kind == DSFS_SAMPLER_TORCH_DISTRIBUTED)
		per = (t->n + t->cfg.world - 1) / t->cfg.world;
	if (w > per / 8)
		w = per / 8;
	if (w > per / 4 - base && per / 4 >= base)
		w = per / 4 - base;
	return base + w;
}

static int pentry_cmp(const void *a, const void *b)
{
	const struct pentry *x = a, *y = b;

	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void prefix_free(struct prefix *p)
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
	qsort(out->e, len, sizeof(*out->e), pentry_cmp);
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

/* The start of epoch e, computed: this rank's, or the group's (whole).
 * O(n), torch-random O(e * n). */
static int prefix_build(struct dsfs_tracker *t, uint64_t e, bool whole,
			struct prefix *out)
{
	uint64_t count, stride;
	uint32_t *order, rank;
	struct dsfs_sampler_cfg c = candidate_cfg(t, whole, &rank, &stride);
	int err;

	err = dsfs_sampler_order(&c, t->n, e, rank, &order, &count);
	if (err)
		return err;
	canon_apply(t, order, count);
	err = prefix_from(t, order, count, stride, e, out);
	free(order);
	return err;
}

/* Keep an epoch's start among those a new job may start at. */
static void keep_start(struct dsfs_tracker *t, const uint32_t *order,
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
	return bsearch(&key, p->e, p->len, sizeof(key), pentry_cmp) != NULL;
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
 * epoch ep whose whole order is held): the ring's misses sit there, or the
 * last RECENT accesses all do (the ring may still hold older misses, such
 * as a pass over the data between two jobs).  Candidates of fewer than
 * 4 (collected + 8 + W) positions are never tested: chance matches them.
 */
static bool loader_at_start(const struct dsfs_tracker *t,
			    const struct prefix *p,
			    const struct dsfs_tracker_epoch *ep)
{
	uint64_t limit = recover_limit(t);

	if (ep ? !ep->ready || ep->count < 4 * limit :
		 !p->e || p->count < 4 * limit)
		return false;
	return all_at_start(p, ep, limit, t->ring, t->nring, t->nring / 8) ||
	       (t->recent_pos >= RECENT &&
		all_at_start(p, ep, limit, t->recent, RECENT, 0));
}

/*
 * The loader is at the start of epoch e: follow it from there, with the
 * ring's accesses seen (those of this rank's order) and handed on as the
 * collection (dsfs_tracker_collected()).  A return value as tracker.h says.
 */
static int adopt(struct dsfs_tracker *t, uint64_t e, bool group)
{
	bool first = !t->cur.ready, again = !first && t->cur.epoch == e;
	uint32_t i, n = t->nring, nrecent;

	if (!again && !(t->next.ready && t->next.epoch == e) &&
	    epoch_build(t, &t->next, e))
		return DSFS_TRACK_MISS;
	/* The ring shows the epoch's start; the last accesses, where the
	 * loader is now: both are seen, and hand on as the collection. */
	memcpy(t->collected, t->ring, n * sizeof(*t->ring));
	nrecent = t->recent_pos < RECENT ? t->recent_pos : RECENT;
	for (i = 0; i < nrecent; i++)
		t->collected[n++] = t->recent[i];
	t->ncollected = n;
	if (again) {		/* the same epoch begun again */
		progress_reset(t);
	} else {
		t->next.err = 0;
		t->nvotes = 0;
		if (switch_epoch(t))
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
	t->starts++;
	if (first || group)
		t->tracking = DSFS_TRACKER_DETECTED;
	unlose(t);
	return first || group ? DSFS_TRACK_DETECTED : DSFS_TRACK_NEXT_EPOCH;
}

void dsfs_tracker_place(struct dsfs_tracker *t, uint64_t idx)
{
	uint32_t p;

	if (idx >= t->n || !t->cur.ready)
		return;
	p = unseen_pos(t, idx);
	if (p != NO_POS && p < 4 * recover_limit(t))
		mark_seen(t, p);
}

/* Lost for an epoch's worth of accesses: the candidates move on one epoch
 * (the loader has), staying lost. */
static void move_on(struct dsfs_tracker *t)
{
	t->lost_run = 0;
	if (t->fixed || dsfs_tracker_prepare_next(t))
		return;
	t->nvotes = 0;
	switch_epoch(t);
}

/*
 * Remember a missed access among distinct ones: while tracking, the first
 * misses since the tracker last followed the loader (8 accesses in plan in
 * a row empty the ring), so that when misses make it lost they show where
 * the loader went, near that epoch's start; while lost, the last ones.
 */
static void ring_add(struct dsfs_tracker *t, uint64_t idx)
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

/* Work of candidate e in MT19937 outputs (or positions). */
static uint64_t candidate_work(const struct dsfs_tracker *t, uint64_t e)
{
	if (t->cfg.kind != DSFS_SAMPLER_TORCH_RANDOM)
		return t->n;
	if (e > (UINT64_MAX / 4) / (t->n + 1))
		return UINT64_MAX / 2;
	return (2 * e + 1) * t->n;
}

/* Forget the epochs ahead (the loader is followed again). */
static void ahead_free(struct dsfs_tracker *t)
{
	uint32_t i;

	for (i = 0; i < t->nahead; i++)
		prefix_free(&t->ahead[i]);
	t->nahead = 0;
	t->ahead_work = 0;
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
			prefix_free(&t->ahead[i]);
		else
			t->ahead[k++] = t->ahead[i];
	}
	for (i = k; i < t->nahead; i++)
		t->ahead[i] = (struct prefix){ 0 }; /* moved down: not owned */
	t->nahead = k;
	if (k)
		e = t->ahead[k - 1].epoch + 1;
	for (; t->nahead < AHEAD_MAX; e++) {
		t->ahead_work += candidate_work(t, e);
		if (t->ahead_work > budget ||
		    prefix_build(t, e, false, &t->ahead[t->nahead]))
			return;
		t->nahead++;
	}
}

/* A lost access: remember it, and now and then test the candidates. */
static int recover(struct dsfs_tracker *t, uint64_t idx)
{
	uint32_t i, want = t->cur.ready ? DSFS_TRACKER_DETECT_SAMPLES :
					  t->ncollected;

	ring_add(t, idx);
	if (t->cur.ready && ++t->lost_run >= t->cur.count)
		move_on(t);
	if (t->fixed || t->nring < want || ++t->since_test < RECOVER_EVERY)
		return DSFS_TRACK_MISS;
	t->since_test = 0;
	if (t->cur.ready) {
		if (!dsfs_tracker_prepare_next(t) &&
		    loader_at_start(t, NULL, &t->next))
			return adopt(t, t->next.epoch, false);
		if (loader_at_start(t, NULL, &t->cur))
			return adopt(t, t->cur.epoch, false);
		ahead_extend(t);
		for (i = 0; i < t->nahead; i++)
			if (loader_at_start(t, &t->ahead[i], NULL))
				return adopt(t, t->ahead[i].epoch, false);
	}
	for (i = 0; i < t->nkept; i++)
		if (loader_at_start(t, &t->kept[i], NULL))
			return adopt(t, t->kept[i].epoch, t->kept_group);
	return DSFS_TRACK_MISS;
}

/* Votes in a row that begin the next epoch early: EARLY_VOTES, or a
 * sixteenth of a smaller epoch (at least 2, so that one stray cannot):
 * with push, an epoch of 20 shards shows its loader a few opens each. */
static uint32_t early_votes(const struct dsfs_tracker *t)
{
	uint64_t v = t->cur.count / 16;

	return v > EARLY_VOTES ? EARLY_VOTES : v < 2 ? 2 : (uint32_t)v;
}

/* One access while tracking or lost. */
static int access_tracking(struct dsfs_tracker *t, uint64_t idx)
{
	uint32_t p;
	int r;

	if (!t->cur.ready) {	/* detection found no epoch */
		record(t, true);
		return recover(t, idx);
	}
	if (t->mode != DSFS_TRACKER_LOST) {
		p = unseen_pos(t, idx);
		if (p != NO_POS && in_window(t, p) &&
		    !rather_next(t, idx, p)) {
			mark_seen(t, p);
			t->nvotes = 0;
			record(t, false);
			if (++t->plan_run >= EARLY_VOTES)
				t->nring = t->ring_pos = 0;
			return DSFS_TRACK_IN_PLAN;
		}
		r = vote_next(t, idx, early_votes(t));
		if (r == DSFS_TRACK_MISS)
			ring_add(t, idx);
	} else {
		r = vote_next(t, idx, LOST_VOTES);
		if (r == DSFS_TRACK_MISS)
			r = recover(t, idx);
	}
	record(t, r == DSFS_TRACK_MISS);
	return r;
}

/*
 * Whether epoch ep's order places all but an eighth of the collection.
 * For a group of local ranks, ep holds the whole permutation (world 1) and
 * an index placed at g belongs to rank g mod world at position g / world
 * (DistributedSampler's rank::world slicing; padding ignored).
 */
static bool candidate_matches(const struct dsfs_tracker *t,
			      const struct dsfs_tracker_epoch *ep)
{
	uint64_t limit = (uint64_t)t->ncollected + t->window, p, r;
	uint32_t i, missed = 0;

	for (i = 0; i < t->ncollected; i++) {
		p = ep->inv[t->collected[i]];
		if (p != NO_POS && t->group > 1) {
			r = p % t->cfg.world;
			p /= t->cfg.world;
			if (r < t->rank || r >= t->rank + t->group)
				p = NO_POS;
		}
		if (p == NO_POS || p >= limit)
			missed++;
	}
	return missed <= t->ncollected / 8;
}

/* Build candidate e into t->next for the test: this rank's order, or the
 * whole permutation for a group. */
static int candidate_build(struct dsfs_tracker *t, uint64_t e)
{
	uint64_t stride;
	uint32_t rank;
	struct dsfs_sampler_cfg c = candidate_cfg(t, true, &rank, &stride);

	return epoch_build_as(t, &t->next, e, &c, rank);
}

/*
 * Test the candidates in turn, building each in t->next; the first match
 * becomes the current epoch with the collection marked seen.
 */
static int detect(struct dsfs_tracker *t)
{
	uint64_t i, e, work = 0, budget = DETECT_WORK + 64 * t->n;
	uint64_t total = DSFS_TRACKER_DETECT_EPOCHS + t->hint_count;
	uint64_t limit = (uint64_t)t->ncollected + t->window;
	uint32_t k;

	t->kept_group = t->group > 1;
	for (i = 0; i < total; i++) {
		e = i < DSFS_TRACKER_DETECT_EPOCHS ? t->detect_base + i :
		    t->hint_first + (i - DSFS_TRACKER_DETECT_EPOCHS);
		work += candidate_work(t, e);
		if (work > budget)
			break;
		if (candidate_build(t, e))
			continue;
		if (i < DSFS_TRACKER_DETECT_EPOCHS)
			keep_start(t, t->next.order, t->next.count,
				   t->group > 1 ? t->cfg.world : 1, e);
		if (!candidate_matches(t, &t->next))
			continue;
		if (t->group > 1 && epoch_build(t, &t->next, e))
			continue;
		t->next.err = 0;
		t->nvotes = 0;
		for (k = 0; k < t->ncollected; k++) {
			uint32_t p = t->next.inv[t->collected[k]];

			if (p != NO_POS && p < limit)
				t->votes[t->nvotes++] = p;
		}
		if (switch_epoch(t))
			break;
		t->mode = t->tracking = DSFS_TRACKER_DETECTED;
		/* A job resumed a few epochs on is found again too. */
		for (k = 1; k <= KEEP_AFTER && i + k < DSFS_TRACKER_DETECT_EPOCHS;
		     k++) {
			work += candidate_work(t, e + k);
			if (work > budget)
				break;
			keep_epoch(t, e + k);
		}
		return DSFS_TRACK_DETECTED;
	}
	t->mode = DSFS_TRACKER_LOST;
	t->tracking = DSFS_TRACKER_DETECTED;
	t->misses++;
	return DSFS_TRACK_MISS;
}

/* Collect idx (distinct indices only); detect when enough are in. */
static int access_detecting(struct dsfs_tracker *t, uint64_t idx)
{
	uint64_t want = t->n * t->group /
			(t->cfg.kind == DSFS_SAMPLER_TORCH_DISTRIBUTED ?
			 t->cfg.world : 1);
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
	return detect(t);
}

int dsfs_tracker_access(struct dsfs_tracker *t, uint64_t idx)
{
	t->accesses++;
	if (idx < t->n)
		t->recent[t->recent_pos++ % RECENT] = (uint32_t)idx;
	if (idx >= t->n) {
		if (t->mode != DSFS_TRACKER_DETECTING)
			record(t, true);
		return DSFS_TRACK_MISS;
	}
	if (t->mode == DSFS_TRACKER_DETECTING)
		return access_detecting(t, idx);
	return access_tracking(t, idx);
}

int dsfs_tracker_hint(struct dsfs_tracker *t, uint64_t first, uint64_t count)
{
	if (t->mode != DSFS_TRACKER_DETECTING)
		return -EALREADY;
	if (t->cfg.kind == DSFS_SAMPLER_TORCH_RANDOM ||
	    count > DSFS_TRACKER_HINT_MAX)
		return -EINVAL;
	t->hint_first = first;
	t->hint_count = count;
	return 0;
}

int dsfs_tracker_group(struct dsfs_tracker *t, uint32_t ranks)
{
	if (t->mode != DSFS_TRACKER_DETECTING || t->ncollected)
		return -EALREADY;
	if (ranks == 0 || (ranks > 1 &&
			   (t->cfg.kind != DSFS_SAMPLER_TORCH_DISTRIBUTED ||
			    ranks > t->cfg.world - t->rank)))
		return -EINVAL;
	t->group = ranks;
	return 0;
}

uint32_t dsfs_tracker_collected(const struct dsfs_tracker *t,
				const uint32_t **idx)
{
	*idx = t->collected;
	return t->mode == DSFS_TRACKER_DETECTING ? 0 : t->ncollected;
}

/* Whether the tracker follows an epoch whose order is known. */
static bool following(const struct dsfs_tracker *t)
{
	return t->cur.ready && t->mode != DSFS_TRACKER_LOST &&
	       t->mode != DSFS_TRACKER_DETECTING;
}

/* Whether t->next holds the epoch after the current one. */
static bool next_known(const struct dsfs_tracker *t)
{
	return t->next.ready && t->next.epoch == t->cur.epoch + 1;
}

void dsfs_tracker_set_detected(struct dsfs_tracker *t)
{
	if (t->mode == DSFS_TRACKER_CONFIGURED)
		t->mode = DSFS_TRACKER_DETECTED;
	t->tracking = DSFS_TRACKER_DETECTED;
}

int dsfs_tracker_claim(const struct dsfs_tracker *t, uint64_t idx)
{
	uint32_t p;
	bool next;

	if (idx >= t->n || !t->cur.ready)
		return DSFS_CLAIM_NONE;
	next = next_known(t) && t->next.inv[idx] != NO_POS;
	if (t->mode == DSFS_TRACKER_LOST || t->mode == DSFS_TRACKER_DETECTING)
		return next || t->cur.inv[idx] != NO_POS ? DSFS_CLAIM_LATER :
							   DSFS_CLAIM_NONE;
	p = unseen_pos(t, idx);
	if (p != NO_POS && in_window(t, p) && !rather_next(t, idx, p))
		return DSFS_CLAIM_NOW;
	if (next && t->next.inv[idx] < vote_span(t))
		return DSFS_CLAIM_NEXT_START;
	return next || p != NO_POS ? DSFS_CLAIM_LATER : DSFS_CLAIM_NONE;
}

uint64_t dsfs_tracker_time(const struct dsfs_tracker *t, uint64_t pos)
{
	uint64_t base, time;

	if (!following(t))
		return DSFS_TRACKER_NEVER;
	if (__builtin_mul_overflow(t->cur.epoch, t->cur.count, &base) ||
	    __builtin_add_overflow(base, pos, &time) ||
	    time >= DSFS_TRACKER_NEVER - 1)
		return DSFS_TRACKER_NEVER - 2; /* far: still a plan time */
	return time;
}

/* idx's unseen position in this epoch (from `from` on), else its position
 * in the next, as a plan time. */
static uint64_t use_from(const struct dsfs_tracker *t, uint64_t idx,
			 uint64_t from)
{
	uint32_t p;

	if (idx >= t->n || !following(t))
		return DSFS_TRACKER_NEVER;
	p = unseen_pos(t, idx);
	if (p != NO_POS && p >= from)
		return dsfs_tracker_time(t, p);
	if (next_known(t) && t->next.inv[idx] != NO_POS)
		return dsfs_tracker_time(t, t->cur.count + t->next.inv[idx]);
	return DSFS_TRACKER_NEVER;
}

uint64_t dsfs_tracker_next_use(const struct dsfs_tracker *t, uint64_t idx)
{
	return use_from(t, idx, t->low);
}

uint64_t dsfs_tracker_place_of(const struct dsfs_tracker *t, uint64_t idx)
{
	return use_from(t, idx, 0);
}

uint64_t dsfs_tracker_low_every(struct dsfs_tracker *t, uint32_t every)
{
	uint64_t p;

	if (!t->cur.ready || every == 0)
		return t->low;
	p = (t->low + every - 1) / every * every;
	if (p < t->every_low)
		p = t->every_low;
	while (p < t->cur.count && bit_get(t->seen, p))
		p += every;
	t->every_low = p;
	return p < t->cur.count ? p : t->cur.count;
}

uint64_t dsfs_tracker_use_after(const struct dsfs_tracker *t, uint64_t idx,
				uint64_t pos)
{
	if (idx >= t->n || !following(t) || pos >= t->cur.count ||
	    !next_known(t) || t->next.inv[idx] == NO_POS)
		return DSFS_TRACKER_NEVER;
	return dsfs_tracker_time(t, t->cur.count + t->next.inv[idx]);
}

void dsfs_tracker_state(const struct dsfs_tracker *t,
			struct dsfs_tracker_state *st)
{
	memset(st, 0, sizeof(*st));
	st->detected = t->mode;
	st->mispredictions = t->misses;
	st->accesses = t->accesses;
	st->starts = t->starts;
	if (!t->cur.ready)
		return;
	st->epoch = t->cur.epoch;
	st->low = t->low;
	st->frontier = t->frontier;
	st->seen = t->nseen;
	st->count = t->cur.count;
}

int dsfs_tracker_at(struct dsfs_tracker *t, uint64_t pos, uint64_t *idx)
{
	int err;

	if (t->mode == DSFS_TRACKER_DETECTING || t->mode == DSFS_TRACKER_LOST)
		return -EAGAIN;
	if (pos < t->cur.count) {
		*idx = t->cur.order[pos];
		return 0;
	}
	err = dsfs_tracker_prepare_next(t);
	if (err)
		return err;
	pos -= t->cur.count;
	if (pos >= t->next.count)
		return -ERANGE;
	*idx = t->next.order[pos];
	return 0;
}

static void epoch_free(struct dsfs_tracker_epoch *ep)
{
	free(ep->order);
	free(ep->inv);
	free(ep->chain);
}

void dsfs_tracker_free(struct dsfs_tracker *t)
{
	uint32_t i;

	if (!t)
		return;
	epoch_free(&t->cur);
	epoch_free(&t->next);
	for (i = 0; i < t->nkept; i++)
		prefix_free(&t->kept[i]);
	ahead_free(t);
	free(t->seen);
	free(t);
}

uint32_t dsfs_tracker_window_for(uint64_t count)
{
	uint64_t w = count / 4;

	return w < 16 ? 16 : w > DSFS_TRACKER_WINDOW_MAX ?
			     DSFS_TRACKER_WINDOW_MAX : (uint32_t)w;
}

/* A tracker of n samples with both inverse arrays, not yet following any
 * epoch; NULL when out of memory. */
static struct dsfs_tracker *tracker_alloc(uint64_t n, uint32_t window)
{
	struct dsfs_tracker *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->n = n;
	t->window = window ? window : DSFS_TRACKER_WINDOW_DEFAULT;
	t->lag = t->window; /* until the opens show how far they lag */
	t->group = 1;
	t->cur.inv = malloc(n * sizeof(*t->cur.inv));
	t->next.inv = malloc(n * sizeof(*t->next.inv));
	if (!t->cur.inv || !t->next.inv) {
		dsfs_tracker_free(t);
		return NULL;
	}
	return t;
}

/* Follow the current epoch, whose order err says was built (0) or not:
 * *out = t, or t is freed and the error returned. */
static int tracker_start(struct dsfs_tracker *t, int err,
			 struct dsfs_tracker **out)
{
	t->mode = t->tracking = DSFS_TRACKER_CONFIGURED;
	if (!err)
		err = bitmap_reserve(t, t->cur.count);
	if (err) {
		dsfs_tracker_free(t);
		return err;
	}
	progress_reset(t);
	*out = t;
	return 0;
}

int dsfs_tracker_new(const struct dsfs_sampler_cfg *s, uint64_t n,
		     uint32_t rank, bool epoch_auto, uint64_t epoch,
		     uint32_t window, struct dsfs_tracker **out)
{
	struct dsfs_tracker *t;
	int err;

	*out = NULL;
	if (s->kind == DSFS_SAMPLER_NONE || n == 0 || n > DSFS_SAMPLER_MAX_N ||
	    (s->kind == DSFS_SAMPLER_TORCH_DISTRIBUTED &&
	     (s->world == 0 || rank >= s->world)))
		return -EINVAL;
	t = tracker_alloc(n, window);
	if (!t)
		return -ENOMEM;
	t->cfg = *s;
	t->rank = s->kind == DSFS_SAMPLER_TORCH_DISTRIBUTED ? rank : 0;
	if (epoch_auto) {
		t->mode = DSFS_TRACKER_DETECTING;
		t->detect_base = epoch;
		*out = t;
		return 0;
	}
	err = epoch_build(t, &t->cur, epoch);
	if (!err) /* a new job starts at the configured epoch again */
		keep_start(t, t->cur.order, t->cur.count, 1, epoch);
	return tracker_start(t, err, out);
}

int dsfs_tracker_new_fixed(uint32_t *order, uint64_t count, uint64_t n,
			   uint64_t epoch, uint32_t window,
			   struct dsfs_tracker **out)
{
	struct dsfs_tracker *t;
	uint64_t p;

	*out = NULL;
	for (p = 0; p < count && n && n <= DSFS_SAMPLER_MAX_N; p++)
		if (order[p] >= n)
			break;
	if (!n || n > DSFS_SAMPLER_MAX_N || !count || p < count) {
		free(order);
		return -EINVAL;
	}
	t = tracker_alloc(n, window);
	if (!t) {
		free(order);
		return -ENOMEM;
	}
	t->cfg.kind = DSFS_SAMPLER_SEQUENTIAL; /* never asked: fixed */
	t->fixed = true;
	t->cur.order = order;
	t->cur.count = count;
	t->cur.epoch = epoch;
	return tracker_start(t, epoch_index(t, &t->cur), out);
}

bool dsfs_tracker_holds_group(const struct dsfs_tracker *t)
{
	return t->mode == DSFS_TRACKER_LOST && t->kept_group && t->nkept;
}
