/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Internals shared by the tracker's files (tracker.c: following a known
 * epoch; tracker_find.c: detection and recovery while lost).  Every call
 * on a tracker is serialised by the caller (tracker.h).
 */
#ifndef DSFS_TRACKER_INT_H
#define DSFS_TRACKER_INT_H

#include <stdbool.h>
#include <stdint.h>

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
#define RUN_RECENT 64	     /* runs kept: the last opens a worker's next
				open may follow (runs_add()) */
#define RUN_MIN_COUNT (8 * RUN_RECENT) /* epochs where chance rarely does */
#define STRAY_MIN_COUNT (4 * DSFS_TRACKER_WINDOW_MAX) /* epochs where a
				loader's runs tell it from chance (tracker.c's
				runs_go_on()) */
#define RUN_GAP 8	     /* a worker's next open past its last, at most
				(those between read from the page cache) */
#define FAR_MOVE 8	     /* window opens far past the frontier, with no
				run, that move it (tracker.c's far_placed()) */
#define KEEP_AFTER 4	     /* starts kept past the epoch detected */
#define AHEAD_MAX 64	     /* lost: epochs past the next one tested */
#define WAYS_EPOCHS 4	     /* lost: epochs drawn other ways */
#define WAYS_MAX (6 * WAYS_EPOCHS) /* ... five other ways each at most
				      (torch-random; a script shuffle 3),
				      and one more epoch cut */

/* A worker's run of opens (runs_add()): its last open and the one before
 * (an open reported a little late still goes on from it); used: when it
 * was last opened or began (runs_clock), 0 for none. */
struct dsfs_tracker_run {
	uint32_t last, before;
	uint64_t used;
};

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
	uint64_t whole;		/* 0, or cut at a learned length (count):
				   the count before, order's length */
	struct pentry *tail;	/* then: the window's positions past the
				   cut (pos: how far), sorted by index */
	uint32_t ntail;
	bool ready;
	int err;		/* next epoch: dsfs_sampler_order() failed */
};

struct dsfs_tracker {
	struct dsfs_sampler_cfg cfg;
	struct dsfs_sampler_cfg start_cfg; /* cfg as made: the way the
					      starts kept for a new job
					      are drawn */
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
				   (see dsfs_tracker_mark_seen) */
	uint32_t far_n, far_min; /* window opens placed far past the
				   frontier since it last moved, and the
				   nearest (tracker.c's far_placed()) */
	uint64_t every_low;	/* dsfs_tracker_low_every()'s cursor */
	uint32_t every_of;	/* ... for this `every` */
	uint64_t misses, accesses;
	/* Miss history: a ring of the last HIST_BITS results, 1 = miss. */
	uint64_t hist[HIST_BITS / 64];
	uint32_t hist_len, hist_pos, hist_misses, miss_run;
	/* ... and of those placed going on with a run (up to RUN_GAP past
	 * its last: tracker.c's run_before()), 1 = such. */
	uint64_t hist_run[HIST_BITS / 64];
	uint32_t hist_runs;
	/* Votes for a switch to the next epoch: positions there; nmaybe of
	 * them are opens also placed in this epoch (tracker.c's
	 * maybe_next()), which do not count towards a switch. */
	uint32_t votes[VOTES_MAX];
	uint32_t nvotes, nmaybe;
	uint32_t nsupported;	/* of them, those that go on from the start
				   (tracker.c's vote_goes_on()) */
	/* Detection. */
	uint32_t group;		/* local ranks rank .. rank + group - 1 */
	bool fixed;		/* dsfs_tracker_new_fixed(): one epoch only */
	uint64_t detect_base, hint_first, hint_count;
	uint32_t collected[DSFS_TRACKER_DETECT_SAMPLES + RECENT];
	uint32_t ncollected;
	/* Finding the loader again while lost (dsfs_tracker_recover()). */
	struct prefix kept[KEPT_MAX];	/* where a new job starts */
	uint32_t nkept;
	bool kept_group;		/* kept holds the group's starts */
	/* Lost: the starts of epochs cur + 2, cur + 3, ... (ahead_extend),
	 * and what they cost (candidate_work). */
	struct prefix ahead[AHEAD_MAX];
	uint32_t nahead;
	/* Lost, torch-random: the starts of the epochs around the current
	 * one as a loader draws them that has persistent workers, or draws
	 * no base seed (sampler_generator), or one permutation an epoch,
	 * when the plan says otherwise (ways_build); ways_built once per
	 * time lost. */
	struct prefix ways[WAYS_MAX];
	uint8_t way_of[WAYS_MAX];	/* index in tracker_way.c's table */
	uint32_t nways;
	bool ways_built;
	/* torch-random, one permutation an epoch (cfg.subset): where the
	 * last epoch was left, if before its end (dsfs_tracker_learn_length);
	 * learned: cfg.num_samples is that place, not the plan's. */
	uint64_t left_at;
	uint64_t head;		/* the frontier once the epoch was begun:
				   opens before may have left holes below */
	uint64_t learned;	/* 0, or the samples an epoch the loader was
				   found to read: epochs are cut there */
	uint32_t past;		/* opens in a row past that length */
	uint64_t ahead_work;
	uint32_t ring[DSFS_TRACKER_DETECT_SAMPLES]; /* last distinct accesses */
	uint32_t nring, ring_pos, since_test;
	uint32_t plan_run;		/* accesses in plan in a row */
	uint32_t recent[RECENT];	/* the last accesses, any result */
	uint32_t recent_pos;
	struct dsfs_tracker_run runs[RUN_RECENT]; /* runs_add() */
	uint64_t runs_missed;		/* bit i: runs[i]'s last missed */
	uint64_t runs_clock;
	uint64_t lost_run;		/* accesses since lost or moved on */
	uint64_t starts;	/* epochs found again (dsfs_tracker_adopt) */
};

/* The run whose last open, or the one before, is idx, the latest opened
 * of them (a file opened twice, a stray then the loader's own, is in two):
 * its index in t->runs, or RUN_RECENT for none.  O(RUN_RECENT). */
static inline uint32_t runs_find(const struct dsfs_tracker *t, uint32_t idx)
{
	uint32_t i, found = RUN_RECENT;

	for (i = 0; i < RUN_RECENT; i++)
		if (t->runs[i].used &&
		    (t->runs[i].last == idx || t->runs[i].before == idx) &&
		    (found == RUN_RECENT ||
		     t->runs[i].used > t->runs[found].used))
			found = i;
	return found;
}

/* Whether run i was opened (began or went on) among the last RUN_RECENT
 * opens. */
static inline bool run_lately(const struct dsfs_tracker *t, uint32_t i)
{
	return t->runs[i].used + RUN_RECENT > t->runs_clock;
}

/*
 * Record idx as opened lately (tracker.c's runs_has()), and whether that
 * open missed: as the next open of the run whose last (or the one before)
 * was `from`, or as a new run (from UINT32_MAX, or no run's), which
 * replaces the run left alone longest.  Going on from the one before
 * drops the last: a stray placed by chance just past a worker's open (or
 * an open reported ahead of the one before it) leaves the run with its
 * worker's.  A run is kept while fewer than RUN_RECENT others began or
 * went on since its last open, however many opens the others made: a
 * worker descheduled while seven others read on may come back 100 opens
 * later.  An order the loader does not follow makes a new run of each
 * open: the last RUN_RECENT opens, as before.  O(RUN_RECENT).
 */
static inline void runs_add(struct dsfs_tracker *t, uint32_t idx, bool miss,
			    uint32_t from)
{
	uint32_t i, j = from == UINT32_MAX ? RUN_RECENT : runs_find(t, from);
	struct dsfs_tracker_run *r;

	if (j == RUN_RECENT) {		/* a new run, in the oldest's place */
		for (i = j = 0; i < RUN_RECENT; i++)
			if (t->runs[i].used < t->runs[j].used)
				j = i;
		from = UINT32_MAX;
	}
	r = &t->runs[j];
	r->before = from;
	r->last = idx;
	r->used = ++t->runs_clock;
	t->runs_missed = miss ? t->runs_missed | 1ULL << j :
				t->runs_missed & ~(1ULL << j);
}

/* Forget the votes for a switch. */
static inline void votes_clear(struct dsfs_tracker *t)
{
	t->nvotes = t->nmaybe = t->nsupported = 0;
}

/* The seen bitmap's bits. */
static inline bool bit_get(const uint64_t *b, uint64_t i)
{
	return b[i / 64] >> (i % 64) & 1;
}

static inline void bit_set(uint64_t *b, uint64_t i)
{
	b[i / 64] |= 1ULL << (i % 64);
}

/* tracker.c */
/* An order's indices as the accesses report them (cfg.canon).  O(count). */
void dsfs_tracker_canon_apply(const struct dsfs_tracker *t, uint32_t *order,
			      uint64_t count);
/* Epoch e's order of `rank` under cfg into ep, with its inverse and
 * repeats.  O(n).  0 or -errno. */
int dsfs_tracker_epoch_build_as(struct dsfs_tracker *t,
				struct dsfs_tracker_epoch *ep, uint64_t e,
				const struct dsfs_sampler_cfg *cfg,
				uint32_t rank);
/* Epoch e's order of this tracker's rank (cut at a length learned).
 * O(n). */
int dsfs_tracker_epoch_build(struct dsfs_tracker *t,
			     struct dsfs_tracker_epoch *ep, uint64_t e);
/* ep's inverse and repeats, from its order and count, replacing those
 * it had.  0 or -ENOMEM (then ep->order is freed).  O(n). */
int dsfs_tracker_epoch_index(struct dsfs_tracker *t,
			     struct dsfs_tracker_epoch *ep);
/* Forget the current epoch's progress. */
void dsfs_tracker_progress_reset(struct dsfs_tracker *t);
/* Mark position pos of the current epoch seen, moving low and frontier. */
void dsfs_tracker_mark_seen(struct dsfs_tracker *t, uint64_t pos);
/* Mark positions pos[0..n) of an epoch just begun seen, sorting them;
 * the frontier moves only as tracker.c's moves_frontier() lets it. */
void dsfs_tracker_mark_start(struct dsfs_tracker *t, uint32_t *pos,
			     uint32_t n);
/* Mark pos seen, a run's next open (tracker.c's run_before()): the
 * low-water mark moves over seen positions only, the frontier stays. */
void dsfs_tracker_mark_run(struct dsfs_tracker *t, uint64_t pos);
/* An unseen position of idx in the current epoch, or NO_POS. */
uint32_t dsfs_tracker_unseen_pos(const struct dsfs_tracker *t, uint64_t idx);
/* Make the seen bitmap hold at least count bits; 0 or -ENOMEM. */
int dsfs_tracker_bitmap_reserve(struct dsfs_tracker *t, uint64_t count);
/* Make cur the next epoch (which must be ready) and mark the votes seen;
 * 0 or -errno. */
int dsfs_tracker_switch_epoch(struct dsfs_tracker *t);
/* Leave lost: forget the history that made the tracker lost. */
void dsfs_tracker_unlose(struct dsfs_tracker *t);

/* tracker_find.c */
/* qsort/bsearch order of struct pentry: by idx. */
int dsfs_tracker_pentry_cmp(const void *a, const void *b);
void dsfs_tracker_prefix_free(struct prefix *p);
/* Keep an epoch's start among those a new job may start at. */
void dsfs_tracker_keep_start(struct dsfs_tracker *t, const uint32_t *order,
			     uint64_t count, uint64_t stride, uint64_t e);
/* Follow the loader from the start of epoch e (the group's, for a group).
 * A return value as tracker.h says. */
int dsfs_tracker_adopt(struct dsfs_tracker *t, uint64_t e, bool group);
/* Remember a missed access among the distinct ones of the ring. */
void dsfs_tracker_ring_add(struct dsfs_tracker *t, uint64_t idx);
/* Forget the epochs ahead (the loader is followed again). */
void dsfs_tracker_ahead_free(struct dsfs_tracker *t);
/* A candidate epoch's start, under cfg (the group's, for stride > 1).
 * 0 or -errno.  O(n), torch-random O(e * n). */
int dsfs_tracker_prefix_build_as(struct dsfs_tracker *t,
				 const struct dsfs_sampler_cfg *c,
				 uint32_t rank, uint64_t stride, uint64_t e,
				 struct prefix *out);
/* Whether the last misses sit at the start of p (or of ep). */
bool dsfs_tracker_at_start(const struct dsfs_tracker *t,
			   const struct prefix *p,
			   const struct dsfs_tracker_epoch *ep);
/* What building candidate e costs, in MT19937 outputs (or positions),
 * drawn as t->cfg draws, or as c does. */
uint64_t dsfs_tracker_candidate_work(const struct dsfs_tracker *t, uint64_t e);
uint64_t dsfs_tracker_candidate_work_as(const struct dsfs_tracker *t,
					const struct dsfs_sampler_cfg *c,
					uint64_t e);
/* A lost access: remembered, and now and then the candidates tested. */
int dsfs_tracker_recover(struct dsfs_tracker *t, uint64_t idx);
/* An access while detecting: collected, and the candidates tested once
 * enough are in. */
int dsfs_tracker_access_detecting(struct dsfs_tracker *t, uint64_t idx);

/* tracker_way.c */
/* Lost, torch-random: the loader at the start of an epoch drawn another
 * way (tracker.h)?  Then followed so: NEXT_EPOCH or DETECTED; else MISS. */
int dsfs_tracker_ways_find(struct dsfs_tracker *t);
/* Draw as c from now on, the loader about to be followed at epoch e:
 * the next epoch built again when needed, the current one now if it is e.
 * 0, or -errno (then the current epoch is not ready). */
int dsfs_tracker_redraw(struct dsfs_tracker *t,
			const struct dsfs_sampler_cfg *c, uint64_t e);
/* Lost, a new job at kept start e: followed (dsfs_tracker_adopt) drawn as
 * the loader was found to draw, but with a fresh generator (no epoch cut),
 * or as the tracker was made when the way found draws no base seed (the
 * kept starts do).  A return value as tracker.h says. */
int dsfs_tracker_new_job(struct dsfs_tracker *t, uint64_t e);
/* The current epoch is over: with one permutation an epoch, the place it
 * was left, and when two in a row were left at one place k < count, the
 * epochs from the next on are cut at k (learned; next built again).
 * Called before the switch.  0, or -errno when next could not be built
 * again (then not ready, and nothing learned).  O(n). */
int dsfs_tracker_learn_length(struct dsfs_tracker *t);
/* Cut ep (a whole permutation) at k < count, keeping the window's
 * indices past k as its tail.  0 or -ENOMEM (then ep->order is freed).
 * O(n). */
int dsfs_tracker_epoch_cut(struct dsfs_tracker *t,
			   struct dsfs_tracker_epoch *ep, uint64_t k);
/* Tracking, a length learned: whether an open of idx (at position p of
 * the next epoch's start, or NO_POS) is one past the current epoch's cut
 * (in its window there, and nearer its cut than the next epoch's start);
 * after two in a row, the length is forgotten, and the current epoch
 * whole again.  O(log W). */
bool dsfs_tracker_past_end(struct dsfs_tracker *t, uint64_t idx, uint32_t p);
/* Forget a length learned: the current epoch whole again (its progress
 * kept; not ready when out of memory), the next to be built again.
 * O(n). */
void dsfs_tracker_unlearn(struct dsfs_tracker *t);

#endif
