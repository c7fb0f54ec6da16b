/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tracker: follows one loader (one local rank) through its predicted read
 * order from the sample accesses dsfs sees, so that the scheduler knows which
 * epoch and which position of that epoch's order the loader is at.
 *
 * DataLoader workers read the order locally permuted (batch k goes to worker
 * k mod W, about W * prefetch_factor batches in flight: SAMPLERS.md section
 * 3), and some reads never reach dsfs (page cache), so progress is a
 * low-water mark (smallest position not yet seen, given-up holes skipped)
 * plus a frontier (one past the highest position seen), and an access is in
 * the plan when its position is unseen and near the frontier (see
 * dsfs_tracker_access()).
 *
 * Threads: none of its own and no locks.  A tracker is single-threaded: the
 * caller serialises every call on one tracker with its own lock (the const
 * query dsfs_tracker_state() included).  Distinct trackers are independent.
 * Memory: for n samples and this rank's order of count positions, two
 * orders (current and next epoch, 4 bytes a position), two inverses (4 bytes
 * a sample) and a bitmap: about 8 * (n + count) bytes plus count / 8; and
 * the starts of candidate epochs kept for finding the loader again (8 bytes
 * a position, about W + 40 positions a candidate and rank of the group, up
 * to 64 kept and, while lost, 64 ahead).
 * Costs are given per function; the O(n) ones compute an epoch's order.
 */
#ifndef DSFS_TRACKER_H
#define DSFS_TRACKER_H

#include <stdbool.h>
#include <stdint.h>

#include "sampler.h"

/* Next-epoch votes count in at least this many first positions. */
#define DSFS_TRACKER_VOTE_SPAN 256U
/* Window used when dsfs_tracker_new() gets 0. */
#define DSFS_TRACKER_WINDOW_DEFAULT 1024U
/* The largest window dsfs_tracker_window_for() gives. */
#define DSFS_TRACKER_WINDOW_MAX 4096U
/* Epoch auto-detection: candidate epochs tried from `epoch` on. */
#define DSFS_TRACKER_DETECT_EPOCHS 64U
/* Distinct indices collected before the candidates are tested. */
#define DSFS_TRACKER_DETECT_SAMPLES 32U
/* At most this many hinted candidates (dsfs_tracker_hint()). */
#define DSFS_TRACKER_HINT_MAX 4096U

/* dsfs_tracker_time() and dsfs_tracker_next_use(): no plan time. */
#define DSFS_TRACKER_NEVER UINT64_MAX

/* What one access meant (dsfs_tracker_access()). */
enum dsfs_track {
	DSFS_TRACK_IN_PLAN,	/* placed in the current epoch */
	DSFS_TRACK_NEXT_EPOCH,	/* the loader started the next epoch */
	DSFS_TRACK_MISS,	/* not placeable: a misprediction */
	DSFS_TRACK_DETECTED,	/* epoch_auto: the epoch is now known */
	DSFS_TRACK_DETECTING,	/* epoch_auto: collected, not known yet */
};

/* Where the tracker stands. */
enum dsfs_tracker_mode {
	DSFS_TRACKER_CONFIGURED, /* following the epoch it was given */
	DSFS_TRACKER_DETECTED,	 /* following an epoch it detected */
	DSFS_TRACKER_LOST,	 /* too many misses: not predicting */
	DSFS_TRACKER_DETECTING,	 /* epoch_auto, epoch not found yet */
};

struct dsfs_tracker_state {
	enum dsfs_tracker_mode detected;
	uint64_t epoch;		 /* current epoch (meaningless while detecting) */
	uint64_t low;		 /* low-water mark: first position not seen */
	uint64_t frontier;	 /* one past the highest position seen; 0: none */
	uint64_t seen;		 /* positions of this epoch seen */
	uint64_t count;		 /* length of this rank's order this epoch */
	uint64_t mispredictions; /* MISS results, every mode but detecting */
	uint64_t accesses;	 /* every dsfs_tracker_access() call */
	uint64_t starts;	 /* times the loader was found again at an
				    epoch's start while lost (that epoch's
				    positions start afresh, also when it is
				    the same epoch) */
	bool strays;		 /* more than a quarter of the last accesses
				    missed, but the loader's runs go on: its
				    Dataset reads samples besides the ones
				    asked (see dsfs_tracker_access()) */
};

struct dsfs_tracker;

/*
 * A tracker of rank `rank`'s loader (ignored unless s is torch-distributed)
 * over n samples, ordered as s orders them (copied: s need not outlive it).
 * window: how far out of order accesses may arrive (DataLoader: an open
 * lags the furthest one by up to about num_workers * prefetch_factor *
 * batch_size); 0 means
 * DSFS_TRACKER_WINDOW_DEFAULT.  epoch_auto false: follow epoch `epoch`
 * from its start.  epoch_auto true: detect the epoch from the first accesses
 * (candidates `epoch`, epoch + 1, ...; see dsfs_tracker_access()).
 * 0 and *out, or -EINVAL (kind none, rank >= world, n = 0), -ENOMEM, or an
 * error of dsfs_sampler_order() for `epoch` when not epoch_auto.
 * Cost: epoch_auto false: one dsfs_sampler_order() (O(n), torch-random
 * O(epoch * n)); true: O(n) to allocate.
 */
int dsfs_tracker_new(const struct dsfs_sampler_cfg *s, uint64_t n,
		     uint32_t rank, bool epoch_auto, uint64_t epoch,
		     uint32_t window, struct dsfs_tracker **out);

/*
 * The window for a loader reading `count` samples an epoch (one rank's).
 * A DataLoader's workers each read a batch of their own, num_workers *
 * prefetch_factor batches in flight, and the loader takes them in order:
 * an open lags the furthest one by up to num_workers * prefetch_factor *
 * batch_size positions when a worker is slow, and an epoch starts with
 * every worker at the start of its own batch, up to num_workers *
 * batch_size positions in.  The tracker places opens up to twice the
 * window behind the furthest one and the window past it, takes next-epoch
 * votes from the window's first positions, and detects an epoch from the
 * first 32 opens within 32 + window positions.  DSFS_TRACKER_WINDOW_MAX
 * covers 16 workers of batch 256 with prefetch_factor 2, behind and at an
 * epoch's start.  An epoch under 4 * DSFS_TRACKER_WINDOW_MAX samples gets
 * a quarter of it (at least 16): so that chance cannot place a wrong
 * order's opens (half of them miss, once the loader is a window into the
 * epoch), nor the detection take one epoch for another.  (A missed access,
 * a read the kernel served itself, holds the low-water mark back by less:
 * twice the opens' recent lag.)
 */
uint32_t dsfs_tracker_window_for(uint64_t count);

/*
 * A tracker following one epoch whose order is given (a seed discovered for
 * that epoch alone: no other epoch is known).  Takes order (malloc'd, count
 * positions, each < n) whatever it returns.  It tracks like a configured
 * tracker but never switches epochs: dsfs_tracker_prepare_next() gives
 * -ESRCH, dsfs_tracker_at() stops at count, next uses stay in this epoch.
 * 0 and *out, -EINVAL (n = 0, an index >= n, count = 0) or -ENOMEM.  O(n).
 */
int dsfs_tracker_new_fixed(uint32_t *order, uint64_t count, uint64_t n,
			   uint64_t epoch, uint32_t window,
			   struct dsfs_tracker **out);

void dsfs_tracker_free(struct dsfs_tracker *t);

/*
 * Epoch auto-detection: also try epochs first .. first + count - 1 after
 * the default candidates (for seed + epoch samplers the caller may know a
 * range, e.g. from a checkpoint's name).  0; -EINVAL for torch-random (each
 * candidate e costs O(e * n) there) or count > DSFS_TRACKER_HINT_MAX;
 * -EALREADY once the epoch is known.  O(1).
 */
int dsfs_tracker_hint(struct dsfs_tracker *t, uint64_t first, uint64_t count);

/*
 * Compute the next epoch's order now, off the access path (after a switch,
 * the access that needs it would compute it).  0 (also when already done),
 * -EAGAIN while detecting (or lost without an epoch), or the error of dsfs_sampler_order(), which is
 * kept: accesses then never switch epochs.  O(n); torch-random
 * O((epoch + 1) * n).
 */
int dsfs_tracker_prepare_next(struct dsfs_tracker *t);

/*
 * Record that the loader opened sample idx; returns an enum dsfs_track value
 * (never an error: an order that cannot be computed makes the access a MISS).
 *
 * Tracking (configured or detected), with W the window and F the frontier:
 * IN_PLAN when one of idx's positions in the current order is unseen and in
 * [F - 2W, F + W) ([0, W) before any), unless F is within G of the
 * epoch's end, that position is behind the low-water mark (or repeats a
 * position of idx seen) and idx sits in
 * the first W positions of the next epoch (known already): then it is a
 * vote for the next epoch, as below (with push, the kernel serves most of
 * an epoch, and the next epoch's first opens land on positions never
 * seen).  Positions further behind F than twice the opens' recent lag
 * plus G (at most 2W; G is 64, or an eighth of a smaller epoch) are given
 * up (reads served by the page cache never
 * come): the low-water mark passes them.  NEXT_EPOCH when idx is not placeable but
 * sits in the first W positions of the next epoch, and: the low-water mark
 * reached the end of the current epoch (or a DistributedSampler's padding
 * there, which the kernel may serve unseen); or it is >= 90% seen (its distinct
 * indices: a repeat is read from the page cache) and the access
 * before was such an access too (so that one stray cannot switch); or,
 * below 90%, on the 8th such access in a row (a sixteenth of a smaller
 * epoch, at least the 2nd).  ("The first W positions"
 * are at least the first DSFS_TRACKER_VOTE_SPAN: with push, the loader's
 * reads of most samples never reach dsfs, and votes come sparse.)  The accesses before the
 * switching one return MISS, and are marked seen in the new epoch.
 * Else MISS.
 * Repeated indices: every position of an index is kept and an access takes
 * its first unseen one (O(repeats) once the first is seen).  No sampler
 * repeats today (DistributedSampler's padding never lands twice on one
 * rank, checked for N < 60, R < 40), but samples sharing a file do, once
 * cfg.canon maps them to the one the accesses report (a list naming a
 * path twice to oversample it).
 * LOST after 64 misses in a row, or when at least 64 of the accesses are
 * recorded and more than a quarter of the last min(accesses, 256) missed,
 * unless (an epoch of 16384 samples or more) a sixteenth of those went on
 * with a worker's run.
 * Strays (a loader's Dataset reading random samples besides the ones
 * asked, mosaic or mixup augmentation): in an epoch of 512 samples or
 * more, an open placed more than G past F moves F only when the last
 * open of a run opened among the last 64 sits up to 8 positions before it
 * (or, with push, at the sentinel before it); else it is placed and F
 * stays.  Runs: the 64 whose last opens are the latest, each open going on
 * with one whose last sits up to 8 positions before it, else beginning
 * one (a worker's run is kept however many opens the others make
 * meanwhile).  Once the epoch is (nearly) over, an open of the next one
 * going on from a run's last open that missed is a vote wherever it
 * sits.  In an epoch of 16384 or more (tracking) with more than an eighth
 * of the last 256 accesses missed, misses between votes for the next
 * epoch do not end their run, and only votes within G of its start or up
 * to 8 past another vote count (but for the one vote that switches an
 * epoch over).
 * dsfs_tracker_state()'s strays says that more than a quarter of the
 * recent accesses missed while its runs went on.
 * Lost: every access is a MISS but the one that finds the loader again:
 * 16 in a row in the first W positions of the next epoch switch to it
 * (NEXT_EPOCH); or the last DSFS_TRACKER_DETECT_SAMPLES distinct accesses
 * sit, all but a quarter, in the first positions of a candidate epoch (as
 * detection tests them): the current one begun again, the next, up to 64
 * after it (the loader ran ahead, unheard while the page cache served it;
 * built at the first test, within the detection's budget), or the epoch
 * a new job starts at (the configured epoch, or epoch_auto's candidates,
 * whose starts the detection kept), or for torch-random and the script
 * shuffles the epoch before the current one, the current and the next two
 * as a loader drawing its generator another way makes them (persistent
 * workers, the sampler's own generator, one permutation an epoch; a
 * generator seeded once, a list shuffled in place: options the plan was
 * not given), whose way the tracker then keeps (dsfs_tracker_way()).
 * That access returns NEXT_EPOCH, or DETECTED when a group's candidate
 * matched or detection had found none before.  While lost, the candidates move on an
 * epoch per count accesses, as the loader does.
 * Candidates need count >= 4 (collected + 8 + W') so that chance cannot
 * match them, W' being W or, when less, an eighth of this rank's samples
 * (from 320 samples on, whatever W).
 *
 * Detecting (epoch_auto): returns DETECTING while it collects up to
 * DSFS_TRACKER_DETECT_SAMPLES distinct indices (half of this rank's
 * samples when it has fewer than twice that); then tests each candidate epoch: it matches when all but
 * an eighth of the collected indices have a position below collected + W
 * in its order (or next to another collected one, in an epoch of 512 or
 * more), or as many as chance places there once in 2^20 if fewer; with
 * 32 collected and one candidate placing all but a quarter, or as many as
 * chance does once in 2^14, 16 more are collected and it tests again.  The first match: DETECTED, tracking it with the collected
 * positions seen.  None: LOST (MISS).  Needs count well above
 * collected + W, or early epochs all match.
 *
 * Cost: O(1) amortised (bitmap scans a word at a time) when the next epoch
 * is prepared; else the first access needing it pays O(n) (torch-random
 * O(epoch * n)).  The detecting access pays O(n) per candidate, up to
 * DSFS_TRACKER_DETECT_EPOCHS plus the hinted ones; torch-random candidate e
 * costs O(e * n) and the search stops after 2^30 + 64 n MT19937 outputs
 * (about 1 s plus 64 orders).
 */
int dsfs_tracker_access(struct dsfs_tracker *t, uint64_t idx);

/*
 * Epoch auto-detection for a group of local ranks sharing one mount
 * (torch-distributed only): ranks rank .. rank + ranks - 1 all feed this
 * tracker while it detects, and a candidate epoch matches when the
 * collected indices sit near the start of any of those ranks' orders
 * (one permutation per candidate, whatever the group's size).  Once
 * detected, the tracker follows its own rank; dsfs_tracker_collected()
 * gives the indices it collected, for the caller to hand the other ranks'
 * trackers.  Before the first access; 0, -EINVAL (not distributed, 0, or
 * past the world), -EALREADY.
 */
int dsfs_tracker_group(struct dsfs_tracker *t, uint32_t ranks);
/*
 * An access known to be this rank's, near the start of the epoch followed
 * (one a group's detection collected, or the last ones when the loader was
 * found again): its position is seen, whatever the window, if it lies in
 * the epoch's first 4 (collected + 8 + W) positions; either way it counts
 * as opened lately, for a worker's run that goes on from it.  O(1).
 */
void dsfs_tracker_place(struct dsfs_tracker *t, uint64_t idx);
/* The indices collected for detection, or that found the loader again
 * (0 before the epoch is known). */
uint32_t dsfs_tracker_collected(const struct dsfs_tracker *t,
				const uint32_t **idx);

/*
 * How strongly idx is this rank's to read, for routing an access among the
 * trackers of several local ranks (the highest claim wins):
 */
enum dsfs_claim {
	DSFS_CLAIM_NONE,	/* not in this rank's current or next epoch */
	DSFS_CLAIM_LATER,	/* in them, but its access would be a miss now
				   (an unseen position far from the frontier,
				   the next epoch past its start, or lost) */
	DSFS_CLAIM_NEXT_START,	/* at the next epoch's start: a vote for it */
	DSFS_CLAIM_NOW,		/* an unseen position in the window */
};
/* An enum dsfs_claim.  O(1) (plus repeats). */
int dsfs_tracker_claim(const struct dsfs_tracker *t, uint64_t idx);
/* How far idx is from the tracker's place: the positions of this epoch
 * past its frontier, plus idx's first position in the next epoch
 * (UINT64_MAX: not in it, or the next epoch not prepared).  Between two
 * ranks that both claim idx for their next epoch's start, the one it comes
 * first for: in an epoch of a few hundred samples, the next epoch's first
 * positions are all of it, and a rank that has just begun an epoch finds
 * the first samples of another's in its next one, often before where they
 * are in that rank's (which is still ending its epoch).  O(1). */
uint64_t dsfs_tracker_next_dist(const struct dsfs_tracker *t, uint64_t idx);
/*
 * torch-random: how the tracker's orders draw from the loader's generator
 * (sampler.h persistent_workers, sampler_generator, subset: one
 * permutation an epoch): as configured, or as the loader was found to
 * draw while lost (a loader option the plan was not given).  O(1).
 */
struct dsfs_tracker_way {
	bool persistent_workers, sampler_generator, one_perm;
	uint64_t num_samples;	/* one_perm: the samples an epoch the loader
				   was found to read, 0 when not learned */
	bool seeded_once, inplace;	/* the script shuffles' */
	uint64_t cut_epochs;	/* torch-random: epochs found left early */
};
struct dsfs_tracker_way dsfs_tracker_way(const struct dsfs_tracker *t);

/* Lost, and holding the starts of a group's candidate epochs (the group's
 * detecting tracker): only it can find the group again, from every rank's
 * opens.  O(1). */
bool dsfs_tracker_holds_group(const struct dsfs_tracker *t);
/* A tracker made for an epoch that another rank's detection found: it
 * reports DETECTED, not CONFIGURED (and comes back to it from LOST). */
void dsfs_tracker_set_detected(struct dsfs_tracker *t);

/*
 * Plan time of position pos counted from the start of the current epoch
 * (pos >= count: into the next): epoch * count + pos, saturating below
 * DSFS_TRACKER_NEVER - 1; DSFS_TRACKER_NEVER when not following an epoch
 * (detecting, lost).  The cache orders planned entries by it.  O(1).
 */
uint64_t dsfs_tracker_time(const struct dsfs_tracker *t, uint64_t pos);
/*
 * Plan time of idx's next read: its unseen position of the current epoch
 * at or past the low-water mark, else its position in the next epoch (if
 * computed); DSFS_TRACKER_NEVER when none or not following.  Call after
 * dsfs_tracker_access() for the access itself: the read it just did is
 * seen, so this is the read after.  O(1) (plus repeats).
 */
uint64_t dsfs_tracker_next_use(const struct dsfs_tracker *t, uint64_t idx);
/* Where an open of idx stands in the plan, as a plan time: its first unseen
 * position in the current epoch, behind the low-water mark too (a loader's
 * late open), else its position in the next epoch; DSFS_TRACKER_NEVER as
 * dsfs_tracker_next_use().  O(1) (plus repeats). */
uint64_t dsfs_tracker_place_of(const struct dsfs_tracker *t, uint64_t idx);

/*
 * The first position at or past the low-water mark that is a multiple of
 * `every` and not seen (the epoch's count when none is): where the loader
 * is, when it reads only every `every`-th position through dsfs (the rest
 * pushed into the page cache, see scheduler.h) and the low-water mark
 * stands up to twice the window behind the furthest open.  O(1)
 * amortised: a cursor moves forward within the epoch (and starts again
 * when `every` changes).  The low-water mark
 * while the current epoch's order is not known, or every is 0.
 */
uint64_t dsfs_tracker_low_every(struct dsfs_tracker *t, uint32_t every);

/*
 * Plan time of idx's read after the one at position pos of the current
 * epoch: its position in the next epoch, if that order is computed; else
 * (or pos past the current epoch) DSFS_TRACKER_NEVER.  For a read the
 * daemon will not see (pushed into the page cache): its entry's next use.
 * Repeats within an epoch are not looked for.  O(1).
 */
uint64_t dsfs_tracker_use_after(const struct dsfs_tracker *t, uint64_t idx,
				uint64_t pos);

/* Snapshot of the tracker.  O(1). */
void dsfs_tracker_state(const struct dsfs_tracker *t,
			struct dsfs_tracker_state *st);

/*
 * The sample at position pos counted from the start of the current epoch,
 * continuing into the next epoch for pos >= count (the scheduler may
 * prefetch across the boundary).  0 and *idx; -ERANGE past the end of the
 * next epoch; -EAGAIN while detecting or lost; an error of
 * dsfs_sampler_order() when the next epoch cannot be computed.  O(1), or
 * the cost of dsfs_tracker_prepare_next() the first time past count.
 */
int dsfs_tracker_at(struct dsfs_tracker *t, uint64_t pos, uint64_t *idx);

#endif
