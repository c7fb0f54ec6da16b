// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Tracker (see tracker.h): one loader's epoch and position from the
 * accesses dsfs sees.  This file follows a known epoch (positions seen,
 * the window, the votes for the next epoch, the miss history that makes
 * the tracker lost) and answers the plan's questions; tracker_find.c finds
 * the epoch: detection at the start, recovery while lost.  Single-threaded
 * by contract: the caller's lock serialises every call on a tracker.  The
 * current and the next epoch each keep an order, its inverse (first
 * position of every index) and the positions repeating an index (those of
 * files several samples share: see tracker.h); the current epoch also
 * keeps a bitmap of seen positions.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tracker_int.h"

/* An order's indices as the accesses report them (cfg.canon).  O(count). */
void dsfs_tracker_canon_apply(const struct dsfs_tracker *t, uint32_t *order,
			      uint64_t count)
{
	uint64_t p;

	if (t->cfg.canon)
		for (p = 0; p < count; p++)
			order[p] = t->cfg.canon[order[p]];
}

/* Fill ep's inverse and repeats from ep->order (ep->count positions, set
 * by the caller), dropping those of its order before, and make it ready;
 * on failure ep->order is freed.  O(n).  Repeats chain each position to
 * the index's next one, built backwards with inv as each index's latest
 * head. */
static int epoch_index(struct dsfs_tracker *t, struct dsfs_tracker_epoch *ep)
{
	uint64_t p;

	free(ep->chain);
	ep->chain = NULL;
	ep->ndups = 0;
	ep->ready = false;
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

int dsfs_tracker_epoch_build_as(struct dsfs_tracker *t,
				struct dsfs_tracker_epoch *ep, uint64_t e,
				const struct dsfs_sampler_cfg *cfg,
				uint32_t rank)
{
	int err;

	free(ep->order);
	free(ep->tail);
	ep->order = NULL;
	ep->tail = NULL;
	ep->ntail = 0;
	ep->whole = 0;
	ep->ready = false;
	ep->epoch = e;
	err = dsfs_sampler_order(cfg, t->n, e, rank, &ep->order, &ep->count);
	if (err)
		return err;
	dsfs_tracker_canon_apply(t, ep->order, ep->count);
	return epoch_index(t, ep);
}


/* Epoch e's order of this tracker's rank (cut at a length learned).
 * O(n). */
int dsfs_tracker_epoch_build(struct dsfs_tracker *t,
			     struct dsfs_tracker_epoch *ep, uint64_t e)
{
	int err = dsfs_tracker_epoch_build_as(t, ep, e, &t->cfg, t->rank);

	if (!err && t->learned)
		err = dsfs_tracker_epoch_cut(t, ep, t->learned);
	return err;
}

int dsfs_tracker_epoch_index(struct dsfs_tracker *t,
			     struct dsfs_tracker_epoch *ep)
{
	return epoch_index(t, ep);
}

/* Make the seen bitmap hold at least count bits.  Nothing else changes. */
int dsfs_tracker_bitmap_reserve(struct dsfs_tracker *t, uint64_t count)
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

static void runs_keep_missed(struct dsfs_tracker *t);

/* Forget the current epoch's progress (the bitmap holds cur.count bits). */
void dsfs_tracker_progress_reset(struct dsfs_tracker *t)
{
	uint64_t words = (t->cur.count + 63) / 64;

	if (words)
		memset(t->seen, 0, words * sizeof(*t->seen));
	t->nseen = t->nfirst = t->low = t->frontier = t->every_low = 0;
	t->far_n = 0;
	t->head = 0;
	votes_clear(t);
	runs_keep_missed(t);
}

/*
 * Forget the runs of the epoch before (they continue no run of this one:
 * each is next to one of them with a chance of RUN_RECENT / count), but
 * not those whose last open missed among the last RUN_RECENT: the opens
 * that began this one, the switch's votes and those beyond the vote span,
 * whose runs go on.  (An older miss was another open of the epoch before,
 * whose position here is anywhere.)
 */
static void runs_keep_missed(struct dsfs_tracker *t)
{
	uint32_t i;

	for (i = 0; i < RUN_RECENT; i++) {
		t->runs[i].before = UINT32_MAX;
		if (!(t->runs_missed >> i & 1) || !run_lately(t, i))
			t->runs[i] = (struct dsfs_tracker_run){
				UINT32_MAX, UINT32_MAX, 0
			};
	}
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

void dsfs_tracker_mark_run(struct dsfs_tracker *t, uint64_t pos)
{
	bit_set(t->seen, pos);
	t->nseen++;
	t->nfirst += t->cur.inv[t->cur.order[pos]] == pos;
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

/* An open at pos moves the frontier past it (if ahead), and low up to
 * where an open that far behind would give up. */
static void frontier_to(struct dsfs_tracker *t, uint64_t pos)
{
	uint64_t giveup, behind;

	if (t->lag)
		t->lag -= (t->lag >> 8) + 1;
	if (pos + 1 < t->frontier && t->frontier - 1 - pos > t->lag)
		t->lag = t->frontier - 1 - pos;
	if (pos + 1 > t->frontier) {
		t->frontier = pos + 1;
		t->far_n = 0;
	}
	behind = 2 * t->lag + giveup_min(t);
	if (behind > 2ULL * t->window)
		behind = 2ULL * t->window;
	giveup = t->frontier > behind ? t->frontier - behind : 0;
	if (t->low < giveup)
		t->low = giveup;
}

void dsfs_tracker_mark_seen(struct dsfs_tracker *t, uint64_t pos)
{
	frontier_to(t, pos);
	dsfs_tracker_mark_run(t, pos);
}

/*
 * An unseen position of idx in the current epoch (the first one), or
 * NO_POS.  O(1), plus O(repeats of idx) when its first position is seen.
 */
uint32_t dsfs_tracker_unseen_pos(const struct dsfs_tracker *t, uint64_t idx)
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

static bool moves_frontier(const struct dsfs_tracker *t, uint64_t p);

/*
 * Mark positions pos[0..n) of an epoch just begun seen (sorted first, in
 * place): those the frontier may move to (moves_frontier(), position by
 * position from the lowest) as the window's, the others as runs'.  An
 * epoch's first opens include strays, when the loader's Dataset reads
 * random samples besides the ones asked, and one of them, anywhere in the
 * first positions, would put the frontier there.  O(n^2) (n <= 48).
 */
void dsfs_tracker_mark_start(struct dsfs_tracker *t, uint32_t *pos,
			     uint32_t n)
{
	uint32_t i, j, p;

	for (i = 1; i < n; i++)
		for (j = i, p = pos[i]; j > 0 && pos[j - 1] > p; j--) {
			pos[j] = pos[j - 1];
			pos[j - 1] = p;
		}
	for (i = 0; i < n; i++) {
		if (bit_get(t->seen, pos[i]))
			continue;
		if (moves_frontier(t, pos[i]))
			dsfs_tracker_mark_seen(t, pos[i]);
		else
			dsfs_tracker_mark_run(t, pos[i]);
	}
}

/* Make cur the next epoch (which must be ready) and mark the votes seen. */
int dsfs_tracker_switch_epoch(struct dsfs_tracker *t)
{
	struct dsfs_tracker_epoch tmp = t->cur;
	uint32_t votes[VOTES_MAX], nvotes = t->nvotes, i, n;
	int err = dsfs_tracker_learn_length(t);

	if (!err)
		err = dsfs_tracker_bitmap_reserve(t, t->next.count);
	if (err)
		return err;
	memcpy(votes, t->votes, sizeof(votes));
	t->cur = t->next;
	t->next = tmp;
	t->next.ready = false;
	t->next.err = 0;
	dsfs_tracker_progress_reset(t);
	for (i = n = 0; i < nvotes; i++)
		if (votes[i] < t->cur.count)
			votes[n++] = votes[i];
	dsfs_tracker_mark_start(t, votes, n);
	t->head = t->frontier;
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
	err = dsfs_tracker_epoch_build(t, &t->next, t->cur.epoch + 1);
	/* -ENOMEM may pass: only a lasting error is kept. */
	t->next.err = err == -ENOMEM ? 0 : err;
	return err;
}

/*
 * The next epoch's first positions that vote for it.  Lost, no more than
 * a quarter of an epoch of LOST_SPAN_MIN samples or more: the span of 256
 * would hold almost all of a small epoch, and any 16 opens in a row would
 * switch to the next epoch, then the next, ahead of the loader, before the
 * candidates' test finds where it is.  A smaller epoch (a few shards) has
 * no candidates (recover_limit()): its votes are its only way back.
 */
#define LOST_SPAN_MIN (4 * LOST_VOTES)

static uint64_t vote_span(const struct dsfs_tracker *t)
{
	uint64_t span = t->window > DSFS_TRACKER_VOTE_SPAN ?
				t->window : DSFS_TRACKER_VOTE_SPAN;

	if (t->mode == DSFS_TRACKER_LOST && t->next.count >= LOST_SPAN_MIN &&
	    span > t->next.count / 4)
		span = t->next.count / 4;
	return span;
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
 * Whether the epoch's unseen positions outnumber the vote span: then the
 * kernel served them (push), else they are mostly opens still to come (a
 * late open hits one of the unseen, an early open of the next epoch one of
 * its first span).
 */
static bool holes_served(const struct dsfs_tracker *t)
{
	return t->cur.count - t->nseen > vote_span(t);
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
 * epoch is known (the scheduler prepares it ahead), and only while
 * holes_served(): with fewer unseen positions than the span (no push),
 * the open is more likely late.  In a small epoch, whose span holds most
 * of the next one, late opens would otherwise switch it early, then
 * again.  O(1).
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
	       holes_served(t) &&
	       t->next.inv[idx] != NO_POS && t->next.inv[idx] < vote_span(t);
}

/* What run_before() asks of the open before. */
enum run_of {
	RUN_ANY,	/* a run's last open, or the one before */
	RUN_MISSED,	/* ... and its position still unseen: it missed */
	RUN_LATELY,	/* ... of a run opened among the last RUN_RECENT */
};

/* Whether idx is a run's last open, or the one before (runs_add()); with
 * lately, of a run opened among the last RUN_RECENT. */
static bool runs_has(const struct dsfs_tracker *t, uint32_t idx, bool lately)
{
	uint32_t i = runs_find(t, idx);

	return i < RUN_RECENT && (!lately || run_lately(t, i));
}

/*
 * The position before unseen position p in its run, or NO_POS when p
 * continues none: the nearest of the `gap` positions before p that one of
 * the RUN_RECENT runs opened last (runs_add()), or with push, whose
 * sentinels are the positions that are multiples of the scheduler's
 * stride (dsfs_tracker_low_every()), the sentinel before a sentinel p.  Each
 * worker opens its batch's positions one after another, so the one before
 * p was opened lately (gap 1; RUN_GAP when those between may have been
 * read from the page cache, or by another worker).  A loader whose
 * batches in flight (workers x prefetch_factor x batch size) span most of
 * a small epoch opens it as that many runs side by side, which the
 * window, a quarter of the epoch ahead of the furthest open, does not
 * hold.  Not in an epoch under RUN_MIN_COUNT samples, where chance would
 * place the opens of a wrong order so (RUN_RECENT / count: each of its
 * opens begins a run).  With RUN_MISSED, only a position still unseen: an
 * open that missed (the bitmap first: most often the position before is
 * seen); with RUN_LATELY, only a run opened among the last RUN_RECENT
 * opens, so that a stray's run of one is soon forgotten (moves_frontier():
 * another stray lands up to RUN_GAP past it once in count / RUN_GAP).
 * O(gap * RUN_RECENT).
 */
static uint32_t run_before(const struct dsfs_tracker *t, uint64_t p,
			   uint32_t gap, enum run_of of)
{
	uint64_t every = t->every_of, q;
	bool missed = of == RUN_MISSED, lately = of == RUN_LATELY;

	if (t->cur.count < RUN_MIN_COUNT || p >= t->cur.count)
		return NO_POS;
	for (q = p; q > 0 && q + gap > p; q--) /* the nearest first */
		if ((!missed || !bit_get(t->seen, q - 1)) &&
		    runs_has(t, t->cur.order[q - 1], lately))
			return (uint32_t)(q - 1);
	if (every <= 1 || p % every || p < every)
		return NO_POS;
	q = p - every;
	if ((!missed || !bit_get(t->seen, q)) &&
	    runs_has(t, t->cur.order[q], lately))
		return (uint32_t)q;
	return NO_POS;
}

/* Whether unseen position p goes on with a worker's run opened lately,
 * loosely (up to RUN_GAP past its last). */
static bool runs_near(const struct dsfs_tracker *t, uint64_t p)
{
	return run_before(t, p, RUN_GAP, RUN_LATELY) != NO_POS;
}

/*
 * Whether the window's unseen position p may move the frontier: it is
 * within giveup_min() past it, or goes on with a run (runs_near()): a
 * worker's next open.  A loader's workers open their batches' positions
 * one after another, a new batch's first open at most a batch past the
 * frontier, and its next ones take the frontier there.  An open far past
 * the frontier with none before it is placed without moving it: a stray
 * (a sample the loader's Dataset reads besides the one asked, such as
 * mosaic or mixup augmentation drawing random others) lands anywhere in
 * the window and would drag the frontier ahead by up to a window each,
 * until the loader's own opens fall behind it.  Only in an epoch of
 * RUN_MIN_COUNT or more, as for runs.
 */
static bool moves_frontier(const struct dsfs_tracker *t, uint64_t p)
{
	return t->cur.count < RUN_MIN_COUNT ||
	       p < t->frontier + giveup_min(t) || runs_near(t, p);
}

/*
 * How idx, unseen at p in the current epoch (or NO_POS), is placed there:
 * by the window, which holds it (not taken for a vote for the next
 * epoch); as a run's next open; or, in an epoch of RUN_MIN_COUNT or more
 * whose unseen positions are fewer than the vote span (!holes_served()),
 * as a late open of a sample not opened yet (a worker that stalled while
 * the others read on, further than the window reaches); or not.  The last
 * two leave the frontier, the window's place, alone: a stray open would
 * move it by chance up to the epoch's end.
 */
enum place { PLACE_NONE, PLACE_WINDOW, PLACE_FAR, PLACE_RUN };

static enum place place_of(const struct dsfs_tracker *t, uint64_t idx,
			   uint32_t p)
{
	if (p == NO_POS)
		return PLACE_NONE;
	if (in_window(t, p) && !rather_next(t, idx, p))
		return moves_frontier(t, p) ? PLACE_WINDOW : PLACE_FAR;
	if (run_before(t, p, 1, RUN_ANY) != NO_POS)
		return PLACE_RUN;
	return t->cur.count >= RUN_MIN_COUNT && p == t->cur.inv[idx] &&
		       !holes_served(t) ? PLACE_RUN : PLACE_NONE;
}

/*
 * Mark p seen, a window's open far past the frontier that goes on from no
 * run (!moves_frontier()): the frontier stays, unless it is the FAR_MOVE-th
 * such since the frontier last moved while few opens miss (a sixteenth of
 * the miss history at most, 2 * FAR_MOVE results recorded at least); then
 * it moves past the nearest of them.  A loader whose opens mostly reach the
 * page cache (a data set read before: 1% of them reach the daemon) opens
 * its workers' samples a hundred positions apart or more, none near the
 * frontier nor going on from a run, and would leave the window behind.
 * A loader whose Dataset reads strays misses a third of its opens or more
 * (those the window does not hold), and keeps the frontier where its own
 * opens put it, as before.
 */
static void far_placed(struct dsfs_tracker *t, uint32_t p)
{
	if (!t->far_n || p < t->far_min)
		t->far_min = p;
	dsfs_tracker_mark_run(t, p);
	if (++t->far_n >= FAR_MOVE && t->hist_len >= 2 * FAR_MOVE &&
	    t->hist_misses * 16 <= t->hist_len)
		frontier_to(t, t->far_min);
}

/* Mark p seen, placed `how`, and the opens before it in its run that
 * missed (they began the run beyond the window, or before the switch to
 * this epoch): holes the low-water mark would stop at, and the epoch
 * would not look over at its end. */
static void mark_placed(struct dsfs_tracker *t, uint32_t p, enum place how)
{
	uint32_t q = p, n;

	if (how == PLACE_WINDOW)
		dsfs_tracker_mark_seen(t, p);
	else if (how == PLACE_FAR)
		far_placed(t, p);
	else
		dsfs_tracker_mark_run(t, p);
	for (n = 0; n < RUN_RECENT; n++) {
		q = run_before(t, q, 1, RUN_MISSED);
		if (q == NO_POS ||
		    dsfs_tracker_unseen_pos(t, t->cur.order[q]) != q)
			break;
		dsfs_tracker_mark_run(t, q);
	}
}

/* Whether more than a quarter of the miss history missed (HIST_MIN
 * accesses recorded at least). */
static bool misses_many(const struct dsfs_tracker *t)
{
	return t->hist_len >= HIST_MIN && t->hist_misses * 4 > t->hist_len;
}

/*
 * Whether the loader's runs go on while many of its opens miss: in an
 * epoch of STRAY_MIN_COUNT or more, at least a sixteenth of the accesses
 * of the miss history were placed up to RUN_GAP past a run's last open
 * (run_before()).  A loader whose Dataset reads random samples besides the
 * one asked (mosaic, mixup, pairs) opens as many strays as samples of the
 * order, or three times as many: they miss, but its own opens go on in
 * runs, which a wrong order's (or another job's) make by chance about
 * once in 32 opens at most (RUN_GAP * RUN_RECENT / count): 8 of 256
 * against the 16 needed (a loader with three strays a sample makes 50).
 * O(1).
 */
static bool runs_go_on(const struct dsfs_tracker *t)
{
	return t->cur.count >= STRAY_MIN_COUNT &&
	       t->hist_runs * 16 >= t->hist_len;
}

/* Record one result in the miss history (run: placed going on with a
 * run); may make the tracker lost: LOST_RUN misses in a row, or more than
 * a quarter of the history unless runs_go_on(). */
static void record(struct dsfs_tracker *t, bool miss, bool run)
{
	uint64_t *w = &t->hist[t->hist_pos / 64];
	uint64_t *wr = &t->hist_run[t->hist_pos / 64];
	uint64_t bit = 1ULL << (t->hist_pos % 64);

	if (t->hist_len == HIST_BITS) {
		t->hist_misses -= !!(*w & bit);
		t->hist_runs -= !!(*wr & bit);
	} else {
		t->hist_len++;
	}
	*w = miss ? *w | bit : *w & ~bit;
	*wr = run ? *wr | bit : *wr & ~bit;
	t->hist_misses += miss;
	t->hist_runs += run;
	t->hist_pos = (t->hist_pos + 1) % HIST_BITS;
	t->miss_run = miss ? t->miss_run + 1 : 0;
	if (!miss)
		return;
	t->misses++;
	if (t->mode == DSFS_TRACKER_LOST)
		return;
	if (t->miss_run >= LOST_RUN || (misses_many(t) && !runs_go_on(t))) {
		t->mode = DSFS_TRACKER_LOST;
		dsfs_tracker_unlearn(t);
		votes_clear(t);
		t->since_test = RECOVER_EVERY - 1; /* test at the next access */
		t->lost_run = 0;
	}
}

/* Leave lost (tracking again): forget the history that made it lost. */
void dsfs_tracker_unlose(struct dsfs_tracker *t)
{
	dsfs_tracker_ahead_free(t);
	t->mode = t->tracking;
	memset(t->hist, 0, sizeof(t->hist));
	memset(t->hist_run, 0, sizeof(t->hist_run));
	t->hist_len = t->hist_pos = t->hist_misses = t->miss_run = 0;
	t->hist_runs = 0;
	t->nring = t->ring_pos = t->since_test = 0;
	t->lost_run = 0;
}

/*
 * Positions at the end of this rank's order that the sampler pads with
 * the permutation's first samples (dsfs_sampler_padded): samples that
 * other ranks read at the epoch's start.  On a mount following those
 * ranks too, the kernel serves them the second time (pushed, or read
 * there), so their opens never come: the epoch is over once the
 * low-water mark reaches them.  0 for a group's tracker.
 */
static uint64_t padded_tail(const struct dsfs_tracker *t)
{
	if (t->group > 1 || t->cur.count != dsfs_sampler_count(&t->cfg, t->n))
		return 0;
	return dsfs_sampler_padded(&t->cfg, t->n, t->rank);
}

/*
 * Whether the current epoch looks over though votes must confirm it: it is
 * mostly seen (>= 90% of its distinct files: the page cache serves the
 * repeats), or its opens reached its last positions (frontier within
 * giveup_min() of its end) with at most 1/16 of the recent accesses
 * missed besides the votes in progress: the kernel served the others from
 * pushed pages.  (A tracker following a wrong order, its frontier moved by
 * chance, misses as it goes.)
 */
static bool nearly_over(const struct dsfs_tracker *t)
{
	if (t->nfirst * 10 >= (t->cur.count - t->cur.ndups) * 9)
		return true;
	return t->frontier + giveup_min(t) + padded_tail(t) >= t->cur.count &&
	       (t->hist_misses - t->miss_run) * 16 <= t->hist_len;
}

/*
 * Whether strays may come between the votes for the next epoch: in an
 * epoch of STRAY_MIN_COUNT or more, while tracking, with more than an
 * eighth of the miss history missed.  A loader whose Dataset reads random
 * samples besides the ones asked opens strays between its votes, which
 * would end each run of them; but a stray lands at the next epoch's start
 * too, once in count / vote_span() opens, and would add to the votes.  So
 * there, a vote counts only where it goes on from the start
 * (vote_goes_on()), and a miss elsewhere ends no run.  (A loader without
 * strays switches on its first votes, as before: each worker's first
 * batch of the next epoch begins a batch or more past its start, and with
 * push 8 workers of 64 made 7 more misses a switch.)
 */
static bool strays_allowed(const struct dsfs_tracker *t)
{
	return t->mode != DSFS_TRACKER_LOST &&
	       t->cur.count >= STRAY_MIN_COUNT &&
	       t->hist_misses * 8 > t->hist_len;
}

/* Whether vote p, a position of the next epoch, goes on from its start:
 * within giveup_min() of it, or at most RUN_GAP past another vote (a
 * worker's batch).  A stray's chance: (giveup_min() + RUN_GAP * votes) /
 * count.  O(votes). */
static bool vote_goes_on(const struct dsfs_tracker *t, uint32_t p)
{
	uint32_t i;

	if (p < giveup_min(t))
		return true;
	for (i = 0; i < t->nvotes; i++)
		if (t->votes[i] < p && p - t->votes[i] <= RUN_GAP)
			return true;
	return false;
}

/*
 * idx's first position in the next epoch when it goes on from the last
 * open of a run that missed (its position there less one), else NO_POS:
 * a worker's batch of the next epoch, begun past its vote span.  A
 * loader of 8 workers begins 8 batches of the next epoch at once, most
 * beyond the span, and their opens, side by side, would end every run of
 * votes from the first two.  A miss of another reader lands so by chance
 * once in count / RUN_RECENT.  Not in an epoch under RUN_MIN_COUNT, as
 * for runs.  O(RUN_RECENT).
 */
static uint32_t next_run_pos(const struct dsfs_tracker *t, uint64_t idx)
{
	uint32_t q = next_known(t) ? t->next.inv[idx] : NO_POS, i, before;

	if (q == NO_POS || q == 0 || t->next.count < RUN_MIN_COUNT)
		return NO_POS;
	before = t->next.order[q - 1];
	i = runs_find(t, before);
	return i < RUN_RECENT && t->runs[i].last == before &&
		       (t->runs_missed >> i & 1) ? q : NO_POS;
}

/*
 * idx is not placeable in the current epoch: a vote for the next one when
 * it sits at that epoch's start.  Switches after `need` votes in a row
 * (lost, or the current epoch not nearly_over()), 2 when it is nearly
 * over, 1 when the low-water mark reached its end (or its padding:
 * padded_tail()), or with push every sentinel from it on was seen
 * (dsfs_tracker_low_every()'s cursor).  "In a row": with no open placed
 * in this epoch between them (maybe_next()), and no other miss; where
 * strays_allowed(), counting only the votes that go on from the start,
 * whatever misses come between (but for one that switches an epoch
 * over).
 */
static int vote_next(struct dsfs_tracker *t, uint64_t idx, uint32_t need)
{
	uint32_t p = next_start_pos(t, idx);
	bool strays, run = false;

	if (t->mode != DSFS_TRACKER_LOST &&
	    (t->low + padded_tail(t) >= t->cur.count ||
	     (t->every_of > 1 &&
	      t->every_low + padded_tail(t) >= t->cur.count)))
		need = 1;	/* all seen (or given up, or padding; with
				   push, every sentinel): the epoch is over */
	else if (t->mode != DSFS_TRACKER_LOST && nearly_over(t))
		need = 2;	/* one stray must not switch */
	if (t->learned && t->mode != DSFS_TRACKER_LOST &&
	    dsfs_tracker_past_end(t, idx, p))
		return DSFS_TRACK_MISS;
	if (p == NO_POS && need <= 2 && t->mode != DSFS_TRACKER_LOST) {
		p = next_run_pos(t, idx);
		run = p != NO_POS;
	}
	if (p == NO_POS) {
		if (!strays_allowed(t))
			votes_clear(t);
		return DSFS_TRACK_MISS;
	}
	if (need == 1 && p >= t->window && !run)
		need = 2;	/* a lone vote only from the first W */
	strays = strays_allowed(t);
	if (strays)
		t->nsupported += vote_goes_on(t, p);
	if (!strays || t->nvotes < VOTES_MAX)
		t->votes[t->nvotes++] = p;
	if ((strays && need > 1 ? t->nsupported : t->nvotes - t->nmaybe) <
	    need)
		return DSFS_TRACK_MISS;
	if (dsfs_tracker_switch_epoch(t)) {
		votes_clear(t);
		return DSFS_TRACK_MISS;
	}
	if (t->mode == DSFS_TRACKER_LOST)
		dsfs_tracker_unlose(t);
	return DSFS_TRACK_NEXT_EPOCH;
}


/* Votes in a row that begin the next epoch early: EARLY_VOTES, or a
 * sixteenth of a smaller epoch (at least 2, so that one stray cannot):
 * with push, an epoch of 20 shards shows its loader a few opens each. */
static uint32_t early_votes(const struct dsfs_tracker *t)
{
	uint64_t v = t->cur.count / 16;

	return v > EARLY_VOTES ? EARLY_VOTES : v < 2 ? 2 : (uint32_t)v;
}

/*
 * Accesses in plan in a row that show the tracker follows the loader, and
 * empty the ring of misses: EARLY_VOTES, or in a small epoch, whose window
 * places an open anywhere in it with a chance of about 3W / count (three
 * quarters of an epoch of 400 samples), as many as chance makes in a row
 * less than once in 2^24 (at most 8 / (7/8): 125).  A new job starting at
 * another epoch would otherwise empty the ring of its first misses, which
 * show where it started, and be found only at its next epoch.
 */
static uint32_t follow_run(const struct dsfs_tracker *t)
{
	double p = t->cur.count ? 3.0 * t->window / (double)t->cur.count : 1;
	double run;

	if (p > 7.0 / 8)
		p = 7.0 / 8;
	run = ceil(-24.0 / log2(p));
	return run > EARLY_VOTES ? (uint32_t)run : EARLY_VOTES;
}

/*
 * Whether idx, placed in this epoch at an unseen position of its window,
 * keeps a run of votes for the next epoch going: it sits at that epoch's
 * start too.  A loader whose epoch is cut short (a cap on its steps)
 * begins the next one while this one's window still holds some of the
 * files it opens (a quarter of them, in a small epoch); each of those,
 * taken for this epoch, would end the run, and the votes would come in a
 * row only by chance, after many misses.  Such an open counts neither way,
 * and its position is kept for the switch to mark seen.  An open placed
 * here that is not at the next epoch's start ends the run.
 */
static bool maybe_next(struct dsfs_tracker *t, uint64_t idx)
{
	uint32_t p;

	if (!t->nvotes || (p = next_start_pos(t, idx)) == NO_POS)
		return false;
	if (t->nvotes < VOTES_MAX - EARLY_VOTES) {
		t->votes[t->nvotes++] = p;
		t->nmaybe++;
	}
	return true;
}

/* One access while tracking or lost; *from: the run's open it goes on
 * from (runs_add()), if any. */
static int access_tracking(struct dsfs_tracker *t, uint64_t idx,
			   uint32_t *from)
{
	enum place how;
	uint32_t p, q;
	int r;

	if (!t->cur.ready) {	/* detection found no epoch */
		record(t, true, false);
		return dsfs_tracker_recover(t, idx);
	}
	if (t->mode != DSFS_TRACKER_LOST) {
		p = dsfs_tracker_unseen_pos(t, idx);
		how = place_of(t, idx, p);
		if (how != PLACE_NONE) {
			q = run_before(t, p, RUN_GAP, RUN_ANY);
			if (q != NO_POS)
				*from = t->cur.order[q];
			mark_placed(t, p, how);
			if (!maybe_next(t, idx))
				votes_clear(t);
			record(t, false, q != NO_POS);
			if (++t->plan_run >= EARLY_VOTES &&
			    t->plan_run >= follow_run(t))
				t->nring = t->ring_pos = 0;
			return DSFS_TRACK_IN_PLAN;
		}
		r = vote_next(t, idx, early_votes(t));
		if (r == DSFS_TRACK_MISS)
			dsfs_tracker_ring_add(t, idx);
	} else {
		r = vote_next(t, idx, LOST_VOTES);
		if (r == DSFS_TRACK_MISS)
			r = dsfs_tracker_recover(t, idx);
	}
	record(t, r == DSFS_TRACK_MISS, false);
	return r;
}


int dsfs_tracker_access(struct dsfs_tracker *t, uint64_t idx)
{
	uint32_t from = UINT32_MAX;
	int r;

	t->accesses++;
	if (idx >= t->n) {
		if (t->mode != DSFS_TRACKER_DETECTING)
			record(t, true, false);
		return DSFS_TRACK_MISS;
	}
	t->recent[t->recent_pos++ % RECENT] = (uint32_t)idx;
	r = t->mode == DSFS_TRACKER_DETECTING ?
		    dsfs_tracker_access_detecting(t, idx) :
		    access_tracking(t, idx, &from);
	runs_add(t, (uint32_t)idx, r == DSFS_TRACK_MISS, from);
	return r;
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
	p = dsfs_tracker_unseen_pos(t, idx);
	if (place_of(t, idx, p) != PLACE_NONE)
		return DSFS_CLAIM_NOW;
	if (next && t->next.inv[idx] < vote_span(t))
		return DSFS_CLAIM_NEXT_START;
	return next || p != NO_POS ? DSFS_CLAIM_LATER : DSFS_CLAIM_NONE;
}

uint64_t dsfs_tracker_next_dist(const struct dsfs_tracker *t, uint64_t idx)
{
	uint64_t left;

	if (idx >= t->n || !next_known(t) || t->next.inv[idx] == NO_POS)
		return UINT64_MAX;
	left = t->frontier < t->cur.count ? t->cur.count - t->frontier : 0;
	return left + t->next.inv[idx];
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
	p = dsfs_tracker_unseen_pos(t, idx);
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
	if (every != t->every_of) { /* another stride: its own cursor */
		t->every_of = every;
		t->every_low = 0;
	}
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
	st->strays = t->mode != DSFS_TRACKER_LOST && misses_many(t) &&
		     runs_go_on(t);
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
	free(ep->tail);
}

void dsfs_tracker_free(struct dsfs_tracker *t)
{
	uint32_t i;

	if (!t)
		return;
	epoch_free(&t->cur);
	epoch_free(&t->next);
	for (i = 0; i < t->nkept; i++)
		dsfs_tracker_prefix_free(&t->kept[i]);
	dsfs_tracker_ahead_free(t);
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
		err = dsfs_tracker_bitmap_reserve(t, t->cur.count);
	if (err) {
		dsfs_tracker_free(t);
		return err;
	}
	dsfs_tracker_progress_reset(t);
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
	t->cfg = t->start_cfg = *s;
	t->rank = s->kind == DSFS_SAMPLER_TORCH_DISTRIBUTED ? rank : 0;
	if (epoch_auto) {
		t->mode = DSFS_TRACKER_DETECTING;
		t->detect_base = epoch;
		*out = t;
		return 0;
	}
	err = dsfs_tracker_epoch_build(t, &t->cur, epoch);
	if (!err) /* a new job starts at the configured epoch again */
		dsfs_tracker_keep_start(t, t->cur.order, t->cur.count, 1,
					epoch);
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
	t->start_cfg = t->cfg;
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

