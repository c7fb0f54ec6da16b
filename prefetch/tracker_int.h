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
#define KEEP_AFTER 4	     /* starts kept past the epoch detected */
#define AHEAD_MAX 64	     /* lost: epochs past the next one tested */
#define WAYS_EPOCHS 3	     /* lost, torch-random: epochs drawn other ways */
#define WAYS_MAX (2 * WAYS_EPOCHS) /* ... two other ways each */

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
				   (see dsfs_tracker_mark_seen) */
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
	 * no base seed (sampler_generator), when the plan says otherwise
	 * (ways_build); ways_built once per time lost. */
	struct prefix ways[WAYS_MAX];
	uint8_t way_of[WAYS_MAX];	/* index in tracker_find.c's table */
	uint32_t nways;
	bool ways_built;
	uint64_t ahead_work;
	uint32_t ring[DSFS_TRACKER_DETECT_SAMPLES]; /* last distinct accesses */
	uint32_t nring, ring_pos, since_test;
	uint32_t plan_run;		/* accesses in plan in a row */
	uint32_t recent[RECENT];	/* the last accesses, any result */
	uint32_t recent_pos;
	uint64_t lost_run;		/* accesses since lost or moved on */
	uint64_t starts;	/* epochs found again (dsfs_tracker_adopt) */
};

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
/* Epoch e's order of this tracker's rank.  O(n). */
int dsfs_tracker_epoch_build(struct dsfs_tracker *t,
			     struct dsfs_tracker_epoch *ep, uint64_t e);
/* Forget the current epoch's progress. */
void dsfs_tracker_progress_reset(struct dsfs_tracker *t);
/* Mark position pos of the current epoch seen, moving low and frontier. */
void dsfs_tracker_mark_seen(struct dsfs_tracker *t, uint64_t pos);
/* An unseen position of idx in the current epoch, or NO_POS. */
uint32_t dsfs_tracker_unseen_pos(const struct dsfs_tracker *t, uint64_t idx);
/* Make cur the next epoch (which must be ready) and mark the votes seen;
 * 0 or -errno. */
int dsfs_tracker_switch_epoch(struct dsfs_tracker *t);
/* Leave lost: forget the history that made the tracker lost. */
void dsfs_tracker_unlose(struct dsfs_tracker *t);

/* tracker_find.c */
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
/* A lost access: remembered, and now and then the candidates tested. */
int dsfs_tracker_recover(struct dsfs_tracker *t, uint64_t idx);
/* An access while detecting: collected, and the candidates tested once
 * enough are in. */
int dsfs_tracker_access_detecting(struct dsfs_tracker *t, uint64_t idx);

#endif
