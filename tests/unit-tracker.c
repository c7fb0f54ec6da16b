// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * unit-tracker: prefetch/tracker against a simulated DataLoader (W workers,
 * batch size B, prefetch factor P: batch k goes to worker k mod W, W * P
 * batches in flight, batch k + W * P queued when batch k is consumed, each
 * worker reading its batch in order; SAMPLERS.md section 3): followed over
 * several epochs, with stray accesses, with a wrong seed, and with the epoch
 * detected; a list naming every file twice; an epoch of 20 shards.  No
 * mount; single-threaded.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sampler.h"
#include "tracker.h"
#include "unit-check.h"
#include "unit-loader.h"
#include "unit-plan.h"

#define N 1000
#define W 2
#define B 8
#define P 2
#define WINDOW (W * P * B)

/* The positions (0 .. count-1) in the order the simulated loader reads them,
 * into pos[count].  Workers take turns at random. */
static void simulate(uint64_t count, uint64_t *rs, uint32_t *pos)
{
	unit_simulate(count, W, B, P, 1, rs, pos);
}

/* One epoch's order, as the loader computes it. */
static uint32_t *order_of(const struct dsfs_sampler_cfg *c, uint64_t epoch,
			  uint32_t rank, uint64_t *count)
{
	return unit_order(c, N, epoch, rank, count);
}

/* dsfs_tracker_at over the current and the next epoch, and past them. */
static void check_at(struct dsfs_tracker *t, const struct dsfs_sampler_cfg *c,
		     uint64_t epoch, uint32_t rank)
{
	uint64_t n0, n1, i, idx = 0, bad = 0;
	uint32_t *o0 = order_of(c, epoch, rank, &n0);
	uint32_t *o1 = order_of(c, epoch + 1, rank, &n1);

	for (i = 0; i < n0; i++)
		bad += dsfs_tracker_at(t, i, &idx) != 0 || idx != o0[i];
	for (i = 0; i < n1; i++)
		bad += dsfs_tracker_at(t, n0 + i, &idx) != 0 || idx != o1[i];
	CHECK(bad == 0);
	CHECK(dsfs_tracker_at(t, n0 + n1, &idx) == -ERANGE);
	free(o0);
	free(o1);
}

/* What run_follow() counts. */
struct follow {
	uint64_t bad_result, bad_epoch, bad_low, bad_stray;
	uint64_t strays, stray_miss, real_miss, switches;
};

/*
 * A stray access (random index): a MISS must leave epoch and progress
 * alone; otherwise it stole a position near the front (or, rarely, started
 * the next epoch once this one is over).
 */
static void stray(struct dsfs_tracker *t, uint64_t *rs, struct follow *f)
{
	struct dsfs_tracker_state st, before;
	int r;

	dsfs_tracker_state(t, &before);
	r = dsfs_tracker_access(t, unit_rnd(rs) % N);
	dsfs_tracker_state(t, &st);
	f->strays++;
	f->switches += r == DSFS_TRACK_NEXT_EPOCH;
	if (r != DSFS_TRACK_MISS)
		return;
	f->stray_miss++;
	f->bad_stray += st.low != before.low || st.frontier != before.frontier ||
			st.epoch != before.epoch;
}

/* One epoch e of the loader, strays at stray_pct percent of the accesses. */
static void follow_epoch(struct dsfs_tracker *t,
			 const struct dsfs_sampler_cfg *c, uint64_t e,
			 unsigned stray_pct, uint64_t *rs, struct follow *f)
{
	struct dsfs_tracker_state st;
	uint64_t count, k, truth = 0;
	uint32_t pos[N], *o = order_of(c, e, 0, &count);
	bool read[N] = { false };

	simulate(count, rs, pos);
	for (k = 0; k < count; k++) {
		while (stray_pct && unit_rnd(rs) % 100 < stray_pct)
			stray(t, rs, f);
		int r = dsfs_tracker_access(t, o[pos[k]]);

		read[pos[k]] = true;
		while (truth < count && read[truth])
			truth++;
		dsfs_tracker_state(t, &st);
		f->switches += r == DSFS_TRACK_NEXT_EPOCH;
		f->real_miss += r == DSFS_TRACK_MISS;
		if (!stray_pct)
			f->bad_result += r != (k == 0 && e > 0 ?
					       DSFS_TRACK_NEXT_EPOCH :
					       DSFS_TRACK_IN_PLAN);
		f->bad_epoch += st.epoch != e;
		f->bad_low += st.low + WINDOW < truth || st.low > truth + WINDOW;
	}
	CHECK(st.count == count);
	if (!stray_pct)
		CHECK(st.seen == count && st.low == count);
	free(o);
}

/*
 * Follow `epochs` epochs of a torch-random loader from epoch 0, with strays
 * (random indices) at `stray_pct` percent of the accesses.
 */
static void run_follow(unsigned epochs, unsigned stray_pct)
{
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	struct follow f = { 0 };
	uint64_t rs = 88172645463325252ULL, e;

	unit_cfg(&c, DSFS_SAMPLER_TORCH_RANDOM, 1234, 1);
	CHECK(dsfs_tracker_new(&c, N, 0, false, 0, WINDOW, &t) == 0);
	check_at(t, &c, 0, 0);
	for (e = 0; e < epochs; e++) {
		follow_epoch(t, &c, e, stray_pct, &rs, &f);
		if (e == 1)
			check_at(t, &c, 1, 0);
	}
	dsfs_tracker_state(t, &st);
	CHECK(f.bad_result == 0 && f.bad_epoch == 0 && f.bad_low == 0);
	CHECK(f.bad_stray == 0);
	CHECK(f.switches == epochs - 1);
	CHECK(st.detected == DSFS_TRACKER_CONFIGURED);
	CHECK(st.mispredictions == f.stray_miss + f.real_miss);
	CHECK(st.accesses == epochs * N + f.strays);
	if (stray_pct) {
		CHECK(f.strays > 0);
		/* Most strays miss; the rest steal a position near the front
		 * (or, in the epoch's last quarter, a sample not opened yet),
		 * and one that missed may lose its position to a run the
		 * loader opens next to it (tracker.c's mark_placed()): each
		 * costs the loader one open at most. */
		CHECK(f.stray_miss * 10 >= f.strays * 8);
		CHECK(f.real_miss <= f.strays);
	} else {
		CHECK(st.mispredictions == 0);
	}
	dsfs_tracker_free(t);
}

/* The tracker believes seed 1234, the loader uses 999: lost quickly. */
static void test_wrong_seed(void)
{
	struct dsfs_sampler_cfg c, wrong;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	uint64_t rs = 42, count, k, lost_at = 0, idx;
	uint32_t pos[N], *o;

	unit_cfg(&c, DSFS_SAMPLER_TORCH_RANDOM, 1234, 1);
	unit_cfg(&wrong, DSFS_SAMPLER_TORCH_RANDOM, 999, 1);
	CHECK(dsfs_tracker_new(&c, N, 0, false, 0, WINDOW, &t) == 0);
	o = order_of(&wrong, 0, 0, &count);
	simulate(count, &rs, pos);
	for (k = 0; k < count; k++) {
		dsfs_tracker_access(t, o[pos[k]]);
		dsfs_tracker_state(t, &st);
		if (!lost_at && st.detected == DSFS_TRACKER_LOST)
			lost_at = k + 1;
	}
	CHECK(lost_at > 0 && lost_at <= 100);
	CHECK(st.detected == DSFS_TRACKER_LOST);
	CHECK(st.accesses == count);
	CHECK(st.mispredictions >= count * 8 / 10);
	CHECK(dsfs_tracker_at(t, 0, &idx) == -EAGAIN);
	free(o);
	dsfs_tracker_free(t);
}

/*
 * A loader of `kind` (rank `rank` of `world`) starting at epoch `epoch`:
 * detected after DSFS_TRACKER_DETECT_SAMPLES accesses, then followed into
 * the next epoch.
 */
static void run_detect(enum dsfs_sampler kind, uint32_t world, uint32_t rank,
		       uint64_t epoch)
{
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	uint64_t rs = 7, count, k, e, bad = 0, detected_at = 0;
	uint32_t pos[N], *o;

	unit_cfg(&c, kind, 31337, world);
	CHECK(dsfs_tracker_new(&c, N, rank, true, 0, WINDOW, &t) == 0);
	dsfs_tracker_state(t, &st);
	CHECK(st.detected == DSFS_TRACKER_DETECTING);
	for (e = epoch; e < epoch + 2; e++) {
		o = order_of(&c, e, rank, &count);
		simulate(count, &rs, pos);
		for (k = 0; k < count; k++) {
			int r = dsfs_tracker_access(t, o[pos[k]]);

			if (r == DSFS_TRACK_DETECTED)
				detected_at = k + 1;
			if (e == epoch && k + 1 < DSFS_TRACKER_DETECT_SAMPLES)
				bad += r != DSFS_TRACK_DETECTING;
			else if (e == epoch && k + 1 == DSFS_TRACKER_DETECT_SAMPLES)
				bad += r != DSFS_TRACK_DETECTED;
			else
				bad += r != (k == 0 ? DSFS_TRACK_NEXT_EPOCH :
					     DSFS_TRACK_IN_PLAN);
		}
		dsfs_tracker_state(t, &st);
		CHECK(st.epoch == e);
		CHECK(st.seen == count && st.low == count);
		free(o);
	}
	CHECK(bad == 0);
	CHECK(detected_at == DSFS_TRACKER_DETECT_SAMPLES);
	CHECK(st.detected == DSFS_TRACKER_DETECTED);
	CHECK(st.mispredictions == 0);
	check_at(t, &c, epoch + 1, rank);
	dsfs_tracker_free(t);
}

/* Nothing matches (another seed): lost, and accesses count as misses. */
static void test_detect_fails(void)
{
	struct dsfs_sampler_cfg c, other;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	uint64_t count, k;
	uint32_t *o;

	unit_cfg(&c, DSFS_SAMPLER_NUMPY_PERMUTATION, 5, 1);
	unit_cfg(&other, DSFS_SAMPLER_NUMPY_PERMUTATION, 5000, 1);
	CHECK(dsfs_tracker_new(&c, N, 0, true, 0, WINDOW, &t) == 0);
	CHECK(dsfs_tracker_hint(t, 100, 50) == 0);
	o = order_of(&other, 0, 0, &count);
	for (k = 0; k < 40; k++)
		dsfs_tracker_access(t, o[k]);
	dsfs_tracker_state(t, &st);
	CHECK(st.detected == DSFS_TRACKER_LOST);
	CHECK(st.accesses == 40);
	CHECK(st.mispredictions == 40 - DSFS_TRACKER_DETECT_SAMPLES + 1);
	CHECK(dsfs_tracker_hint(t, 0, 1) == -EALREADY);
	free(o);
	dsfs_tracker_free(t);
}

/*
 * 5% of the reads never reach dsfs (page cache): the low-water mark passes
 * the holes, nothing is lost, and the boundary costs one MISS (two votes).
 */
static void test_hidden(void)
{
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	uint64_t rs = 5, count, e, k, truth, bad_low = 0, bad_epoch = 0;
	uint64_t delivered, misses = 0, switches = 0;
	uint32_t pos[N], *o;
	bool read[N];

	unit_cfg(&c, DSFS_SAMPLER_PYTHON_SHUFFLE, 77, 1);
	CHECK(dsfs_tracker_new(&c, N, 0, false, 3, WINDOW, &t) == 0);
	for (e = 3; e < 6; e++) {
		o = order_of(&c, e, 0, &count);
		simulate(count, &rs, pos);
		memset(read, 0, sizeof(read));
		truth = delivered = 0;
		for (k = 0; k < count; k++) {
			read[pos[k]] = true;
			while (truth < count && read[truth])
				truth++;
			if (unit_rnd(&rs) % 100 < 5)
				continue;
			int r = dsfs_tracker_access(t, o[pos[k]]);

			delivered++;
			misses += r == DSFS_TRACK_MISS;
			switches += r == DSFS_TRACK_NEXT_EPOCH;
			dsfs_tracker_state(t, &st);
			bad_epoch += delivered > 2 && st.epoch != e;
			bad_low += delivered > 2 && (st.low > truth + WINDOW ||
						     st.low + 3 * WINDOW < truth);
		}
		free(o);
	}
	dsfs_tracker_state(t, &st);
	CHECK(bad_epoch == 0);
	CHECK(bad_low == 0);
	CHECK(switches == 2);
	CHECK(misses <= 2);
	CHECK(st.detected == DSFS_TRACKER_CONFIGURED);
	dsfs_tracker_free(t);
}

/* Near the end of an epoch one access fitting the next start does not switch. */
static void test_stray_near_end(void)
{
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	uint64_t rs = 9, count, count1, k, bad = 0;
	uint32_t pos[N], *o, *o1;

	unit_cfg(&c, DSFS_SAMPLER_NUMPY_PERMUTATION, 11, 1);
	CHECK(dsfs_tracker_new(&c, N, 0, false, 0, WINDOW, &t) == 0);
	CHECK(dsfs_tracker_prepare_next(t) == 0);
	o = order_of(&c, 0, 0, &count);
	o1 = order_of(&c, 1, 0, &count1);
	simulate(count, &rs, pos);
	for (k = 0; k < count; k++) {
		if (k == count * 95 / 100) {
			CHECK(dsfs_tracker_access(t, o1[0]) == DSFS_TRACK_MISS);
			dsfs_tracker_state(t, &st);
			CHECK(st.epoch == 0);
		}
		bad += dsfs_tracker_access(t, o[pos[k]]) != DSFS_TRACK_IN_PLAN;
	}
	CHECK(bad == 0);
	CHECK(dsfs_tracker_access(t, o1[1]) == DSFS_TRACK_NEXT_EPOCH);
	dsfs_tracker_state(t, &st);
	CHECK(st.epoch == 1 && st.seen == 1 && st.mispredictions == 1);
	free(o);
	free(o1);
	dsfs_tracker_free(t);
}

/* Lost on garbage, then the loader starts the next epoch: recovered. */
static void test_recover(void)
{
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	uint64_t rs = 3, count, k, switched_at = 0, bad = 0;
	uint32_t pos[N], *o;

	unit_cfg(&c, DSFS_SAMPLER_TORCH_DISTRIBUTED, 123, 4);
	CHECK(dsfs_tracker_new(&c, N, 3, false, 0, WINDOW, &t) == 0);
	for (k = 0; k < 100; k++)
		dsfs_tracker_access(t, unit_rnd(&rs) % N);
	dsfs_tracker_state(t, &st);
	CHECK(st.detected == DSFS_TRACKER_LOST);
	o = order_of(&c, 1, 3, &count);
	simulate(count, &rs, pos);
	for (k = 0; k < count; k++) {
		int r = dsfs_tracker_access(t, o[pos[k]]);

		if (r == DSFS_TRACK_NEXT_EPOCH && !switched_at)
			switched_at = k + 1;
		else if (switched_at)
			bad += r != DSFS_TRACK_IN_PLAN;
	}
	dsfs_tracker_state(t, &st);
	CHECK(switched_at > 0 && switched_at <= 16);
	CHECK(bad == 0);
	CHECK(st.detected == DSFS_TRACKER_CONFIGURED);
	CHECK(st.epoch == 1 && st.seen == count && st.low == count);
	free(o);
	dsfs_tracker_free(t);
}

/* use_after: a sample's read after the one at a position of this epoch
 * is its position in the next epoch's order (the real sampler's), once
 * that order is computed; NEVER past this epoch. */
static void test_use_after(void)
{
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	uint64_t count, count1, p, q, bad = 0;
	uint32_t *o, *o1;

	unit_cfg(&c, DSFS_SAMPLER_TORCH_RANDOM, 5, 1);
	CHECK(dsfs_tracker_new(&c, N, 0, false, 2, WINDOW, &t) == 0);
	o = order_of(&c, 2, 0, &count);
	o1 = order_of(&c, 3, 0, &count1);
	CHECK(dsfs_tracker_prepare_next(t) == 0);
	for (q = 0; q < count1; q++) {
		for (p = 0; p < count && o[p] != o1[q]; p++)
			;
		bad += p == count ||
		       dsfs_tracker_use_after(t, o1[q], p) !=
			       dsfs_tracker_time(t, count + q);
	}
	CHECK(bad == 0);
	CHECK(dsfs_tracker_time(t, count) == 3 * count);
	CHECK(dsfs_tracker_use_after(t, o[0], count) == DSFS_TRACKER_NEVER);
	CHECK(dsfs_tracker_use_after(t, N, 0) == DSFS_TRACKER_NEVER);
	free(o);
	free(o1);
	dsfs_tracker_free(t);
}

static void test_bad_args(void)
{
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t = (struct dsfs_tracker *)1;

	unit_cfg(&c, DSFS_SAMPLER_NONE, 0, 1);
	CHECK(dsfs_tracker_new(&c, N, 0, false, 0, 0, &t) == -EINVAL && !t);
	unit_cfg(&c, DSFS_SAMPLER_TORCH_DISTRIBUTED, 0, 2);
	CHECK(dsfs_tracker_new(&c, N, 2, false, 0, 0, &t) == -EINVAL);
	CHECK(dsfs_tracker_new(&c, 0, 0, false, 0, 0, &t) == -EINVAL);
	unit_cfg(&c, DSFS_SAMPLER_TORCH_RANDOM, 0, 1);
	CHECK(dsfs_tracker_new(&c, N, 0, true, 0, 0, &t) == 0);
	CHECK(dsfs_tracker_hint(t, 0, 10) == -EINVAL);
	CHECK(dsfs_tracker_access(t, N) == DSFS_TRACK_MISS);
	dsfs_tracker_free(t);
	dsfs_tracker_free(NULL);
}

/*
 * A list naming every file twice (oversampling): 600 samples, sample i
 * the file of sample i % 300, which the accesses report (cfg.canon).
 * Epochs 0 and 1 read every position (direct_io); epoch 2 only the first
 * of each file (the page cache serves the second): each detected or
 * begun, with no miss after the detection.
 */
static void test_canon(void)
{
	enum { M = 600, FILES = 300 };
	static uint32_t canon[M];
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	uint64_t count, p, e, miss = 0, next = 0;
	uint32_t *o;
	bool once[FILES];
	int r;

	for (p = 0; p < M; p++)
		canon[p] = (uint32_t)(p % FILES);
	unit_cfg(&c, DSFS_SAMPLER_PYTHON_SHUFFLE, 5, 1);
	c.canon = canon;
	CHECK(dsfs_tracker_new(&c, M, 0, true, 0, dsfs_tracker_window_for(M),
			       &t) == 0);
	for (e = 0; e < 3; e++) {
		o = unit_order(&c, M, e, 0, &count);
		memset(once, 0, sizeof(once));
		for (p = 0; p < count; p++) {
			if (e == 2 && once[canon[o[p]]])
				continue;
			once[canon[o[p]]] = true;
			r = dsfs_tracker_access(t, canon[o[p]]);
			miss += r == DSFS_TRACK_MISS;
			next += r == DSFS_TRACK_NEXT_EPOCH;
		}
		free(o);
	}
	dsfs_tracker_state(t, &st);
	CHECK(st.detected == DSFS_TRACKER_DETECTED && st.epoch == 2);
	CHECK(miss == 0 && next == 2);
	dsfs_tracker_free(t);
}

/*
 * An epoch of 20 shards, with push: the kernel serves some files of every
 * epoch itself (hidden here: two at the start and two at the end of each).
 * Detected in epoch 0, and every epoch followed in step: at the last open
 * of epoch e the tracker is at epoch e.  (Detection waited for all 20,
 * into epoch 1, and each epoch's opens then filled the holes of the one
 * before: one epoch late for good.)
 */
static void test_small_epochs(void)
{
	enum { M = 20 };
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	uint64_t count, p, e, miss = 0, late = 0;
	uint32_t *o;

	unit_cfg(&c, DSFS_SAMPLER_PYTHON_SHUFFLE, 1, 1);
	CHECK(dsfs_tracker_new(&c, M, 0, true, 0, dsfs_tracker_window_for(M),
			       &t) == 0);
	for (e = 0; e < 6; e++) {
		o = unit_order(&c, M, e, 0, &count);
		for (p = 2; p < count - 2; p++)
			miss += dsfs_tracker_access(t, o[p]) == DSFS_TRACK_MISS;
		dsfs_tracker_state(t, &st);
		late += st.detected == DSFS_TRACKER_DETECTING || st.epoch != e;
		free(o);
	}
	CHECK(late == 0);
	CHECK(miss <= 6);
	dsfs_tracker_free(t);
}

/*
 * A job of a small epoch (400 samples: the window places an open anywhere
 * in three quarters of it) reads epochs 0 and 1, and the same job starts
 * again at epoch 0.  Its opens, out of the tracker's epoch 2, make it lost;
 * its first misses show epoch 0's start, and it is found there, not at the
 * next epoch's: for every one of 64 loaders' timings.
 */
static void test_restart_small(void)
{
	enum { M = 400 };
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	uint64_t count, k, e, late = 0, seed;
	uint32_t pos[M], *o;

	unit_cfg(&c, DSFS_SAMPLER_TORCH_RANDOM, 77, 1);
	for (seed = 1; seed <= 64; seed++) {
		CHECK(dsfs_tracker_new(&c, M, 0, true, 0,
				       dsfs_tracker_window_for(M), &t) == 0);
		for (e = 0; e < 3; e++) {
			o = unit_order(&c, M, e < 2 ? e : 0, 0, &count);
			unit_simulate(count, W, B, P, 1, &seed, pos);
			for (k = 0; k < count; k++)
				dsfs_tracker_access(t, o[pos[k]]);
			free(o);
		}
		dsfs_tracker_state(t, &st);
		late += st.epoch != 0 || st.starts != 1 ||
			st.detected != DSFS_TRACKER_DETECTED;
		dsfs_tracker_free(t);
	}
	CHECK(late == 0);
}

/*
 * DistributedSampler pads 1,001 samples to 1,004 for world 4: ranks 1 to 3
 * end on a padded position, a sample another rank read at the epoch's
 * start, which the kernel then serves (its open never comes).  Rank 1
 * reads three epochs but that last position: each next epoch begins at its
 * first open, with no misprediction.
 */
static void test_padding_unseen(void)
{
	enum { M = 1001, WORLD = 4, RANK = 1 };
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	uint64_t count, k, e, bad = 0;
	uint32_t *o;

	unit_cfg(&c, DSFS_SAMPLER_TORCH_DISTRIBUTED, 42, WORLD);
	CHECK(dsfs_tracker_new(&c, M, RANK, false, 0,
			       dsfs_tracker_window_for(251), &t) == 0);
	for (e = 0; e < 3; e++) {
		o = unit_order(&c, M, e, RANK, &count);
		CHECK(count == 251);
		for (k = 0; k + 1 < count; k++)
			bad += dsfs_tracker_access(t, o[k]) !=
			       (k == 0 && e > 0 ? DSFS_TRACK_NEXT_EPOCH :
						  DSFS_TRACK_IN_PLAN);
		free(o);
	}
	dsfs_tracker_state(t, &st);
	CHECK(bad == 0);
	CHECK(st.epoch == 2 && st.mispredictions == 0);
	dsfs_tracker_free(t);
}

/*
 * With push, the kernel serves most of an epoch from pushed pages and the
 * tracker sees every eighth sample (the sentinels) and a part of the
 * rest: "seen" stays far below 90%, but its opens reach the epoch's last
 * positions.  The next epoch's first opens switch to it after two votes,
 * not eight (world 4 over 1,001 samples, rank 0, in order, 30% of the
 * others seen; the 90% rule alone: 7 misses at each epoch's start).
 */
static void test_sparse_ends(void)
{
	enum { M = 1001, WORLD = 4, KEEP = 30 };
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	uint64_t count, k, e, rs = 7, miss = 0, late = 0;
	uint32_t *o;

	unit_cfg(&c, DSFS_SAMPLER_TORCH_DISTRIBUTED, 23, WORLD);
	CHECK(dsfs_tracker_new(&c, M, 0, false, 0,
			       dsfs_tracker_window_for(251), &t) == 0);
	for (e = 0; e < 4; e++) {
		o = unit_order(&c, M, e, 0, &count);
		for (k = 0; k < count; k++)
			if (k % 8 == 0 || unit_rnd(&rs) % 100 < KEEP)
				miss += dsfs_tracker_access(t, o[k]) ==
					DSFS_TRACK_MISS;
		dsfs_tracker_state(t, &st);
		late += st.epoch != e;
		free(o);
	}
	CHECK(late == 0);
	CHECK(miss <= 3); /* one vote each, at epochs 1 to 3 */
	CHECK(st.detected == DSFS_TRACKER_CONFIGURED);
	dsfs_tracker_free(t);
}

int main(void)
{
	test_canon();
	test_small_epochs();
	run_follow(3, 0);
	run_follow(3, 2);
	test_wrong_seed();
	run_detect(DSFS_SAMPLER_TORCH_DISTRIBUTED, 2, 1, 5);
	run_detect(DSFS_SAMPLER_TORCH_RANDOM, 1, 0, 2);
	test_detect_fails();
	test_hidden();
	test_stray_near_end();
	test_recover();
	test_restart_small();
	test_padding_unseen();
	test_sparse_ends();
	test_use_after();
	test_bad_args();
	return UNIT_DONE();
}
