// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * unit-workers: the tracker with the window the scheduler gives it
 * (dsfs_tracker_window_for) against DataLoaders of many workers and large
 * batches: dsfs(8)'s example (batch_size=256, num_workers=8) and 16
 * workers, prefetch_factor 2.  One worker is slower than the rest, so that
 * the others run their batches ahead of it as far as the loader lets them;
 * every epoch starts with all workers at once (a job's start, persistent
 * workers).  The epoch is detected at the job's start and followed over 3
 * epochs with no misprediction; a loader of another seed is still lost.
 * With push (only every 8th open seen) dsfs_tracker_low_every() finds
 * where the loader is; epochs still switch, for a loader of one process
 * too (ImageFolder with num_workers=0); holes in an in-order loader's opens
 * are given up soon; an epoch cut short, the next begun at once, costs
 * only the votes that switch to it; in a small epoch, a worker stalling at
 * its end does not switch it early.
 * No mount; single-threaded.
 */
#include "config.h"

#include <stdlib.h>

#include "sampler.h"
#include "tracker.h"
#include "unit-check.h"
#include "unit-loader.h"
#include "unit-plan.h"

#define N 40000
#define BATCH 256
#define PREFETCH 2
#define SLOW 3 /* the other workers read this many files to worker 0's one */

/* A loader of nw workers of batch BATCH, worker 0 at a third of the
 * others' speed (unit_simulate). */
static void simulate(uint64_t count, unsigned nw, uint64_t *rs, uint32_t *pos)
{
	unit_simulate(count, nw, BATCH, PREFETCH, SLOW, rs, pos);
}

/* The largest lag behind the furthest position read so far in pos. */
static uint64_t max_lag(const uint32_t *pos, uint64_t count)
{
	uint64_t k, front = 0, lag = 0;

	for (k = 0; k < count; k++) {
		if (pos[k] + 1 > front)
			front = pos[k] + 1;
		if (front - 1 - pos[k] > lag)
			lag = front - 1 - pos[k];
	}
	return lag;
}

/* A job of nw workers from epoch 0, the epoch detected; 3 epochs. */
static void run_workers(unsigned nw)
{
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	uint64_t rs = 0x9e3779b97f4a7c15ull + nw, count, k, e, lost = 0;
	uint64_t lag = 0, l;
	uint32_t *pos = calloc(N, sizeof(*pos)), *o;

	unit_cfg(&c, DSFS_SAMPLER_TORCH_RANDOM, 2024, 1);
	CHECK(dsfs_tracker_new(&c, N, 0, true, 0, dsfs_tracker_window_for(N),
			       &t) == 0);
	for (e = 0; e < 3; e++) {
		o = unit_order(&c, N, e, 0, &count);
		simulate(count, nw, &rs, pos);
		l = max_lag(pos, count);
		lag = l > lag ? l : lag;
		for (k = 0; k < count; k++) {
			dsfs_tracker_prepare_next(t); /* the scheduler's */
			dsfs_tracker_access(t, o[pos[k]]);
			dsfs_tracker_state(t, &st);
			lost += st.detected == DSFS_TRACKER_LOST;
		}
		CHECK(st.epoch == e && st.seen == count && st.low == count);
		free(o);
	}
	fprintf(stderr, "%u workers of batch %u: lag up to %llu positions, window %u, %llu mispredictions\n",
		nw, BATCH, (unsigned long long)lag, dsfs_tracker_window_for(N),
		(unsigned long long)st.mispredictions);
	/* The simulation reaches the lag the loader allows. */
	CHECK(lag >= (uint64_t)(nw * PREFETCH - 2) * BATCH);
	CHECK(lost == 0);
	CHECK(st.detected == DSFS_TRACKER_DETECTED);
	CHECK(st.mispredictions == 0);
	dsfs_tracker_free(t);
	free(pos);
}

/*
 * With push the daemon sees only every 8th position's open (the rest are
 * read from the page cache): the low-water mark stands twice the window
 * behind the furthest open, but dsfs_tracker_low_every() finds the loader:
 * below it, only the ends of the workers' batches past their last 8th
 * position may be unread (at most 7 positions a worker).
 */
static void test_low_every(void)
{
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	uint64_t rs = 77, count, k, at = 0, p, below = 0, bad = 0;
	uint64_t gap = 0, n = 0;
	uint32_t *pos = calloc(N, sizeof(*pos)), *o;
	bool *read = calloc(N, 1);

	unit_cfg(&c, DSFS_SAMPLER_TORCH_RANDOM, 2024, 1);
	CHECK(dsfs_tracker_new(&c, N, 0, false, 0, dsfs_tracker_window_for(N),
			       &t) == 0);
	o = unit_order(&c, N, 0, 0, &count);
	simulate(count, 8, &rs, pos);
	for (k = 0; k < count; k++) {
		read[pos[k]] = true;
		below += pos[k] < at; /* read positions below `at` */
		if (pos[k] % 8)
			continue; /* pushed: the daemon does not see it */
		CHECK(dsfs_tracker_access(t, o[pos[k]]) == DSFS_TRACK_IN_PLAN);
		p = at;
		at = dsfs_tracker_low_every(t, 8);
		bad += at < p; /* it only moves forward */
		for (; p < at; p++)
			below += read[p];
		dsfs_tracker_state(t, &st);
		bad += at < st.low || at - below > 8 * 7;
		gap += at - st.low;
		n++;
	}
	fprintf(stderr, "push: the low-water mark %llu positions behind low_every on average\n",
		(unsigned long long)(gap / n));
	CHECK(bad == 0);
	CHECK(gap / n > BATCH); /* the mark alone would not do */
	CHECK(dsfs_tracker_low_every(t, 8) == count);
	free(o);
	free(pos);
	free(read);
	dsfs_tracker_free(t);
}

/*
 * With push, epochs of count samples read by nw workers (0: one process
 * in order), 3 of them: the daemon sees every 8th position's open, and the
 * next epoch's first opens land on positions of this one the kernel served
 * (never seen, behind the low-water mark), which must not be taken for
 * late opens of this epoch.  Each epoch switches, never lost, and only the
 * votes before a switch miss.
 */
static void push_epochs(uint64_t count, unsigned nw)
{
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	uint64_t rs = 5, n, k, e, lost = 0;
	uint32_t *pos = calloc(count, sizeof(*pos)), *o;

	unit_cfg(&c, DSFS_SAMPLER_PYTHON_SHUFFLE, 11, 1);
	CHECK(dsfs_tracker_new(&c, count, 0, false, 0,
			       dsfs_tracker_window_for(count), &t) == 0);
	for (e = 0; e < 3; e++) {
		o = unit_order(&c, count, e, 0, &n);
		if (nw)
			simulate(n, nw, &rs, pos);
		else
			for (k = 0; k < n; k++)
				pos[k] = (uint32_t)k;
		for (k = 0; k < n; k++) {
			if (pos[k] % 8)
				continue;
			dsfs_tracker_prepare_next(t); /* the scheduler's */
			dsfs_tracker_access(t, o[pos[k]]);
			dsfs_tracker_state(t, &st);
			lost += st.detected == DSFS_TRACKER_LOST;
		}
		free(o);
	}
	dsfs_tracker_state(t, &st);
	fprintf(stderr, "push, %llu samples, %u workers: epoch %llu, %llu mispredictions, lost %llu times\n",
		(unsigned long long)count, nw, (unsigned long long)st.epoch,
		(unsigned long long)st.mispredictions,
		(unsigned long long)lost);
	CHECK(st.epoch == 2 && lost == 0);
	CHECK(st.mispredictions <= 2 * 2 * 16);
	free(pos);
	dsfs_tracker_free(t);
}

static void test_push_epochs(void)
{
	push_epochs(4000, 0);
	push_epochs(N, 0);
	push_epochs(4000, 2);
	push_epochs(N, 8);
}

/*
 * A loader reading in order whose every 10th open the daemon does not see
 * (the kernel served it from a page it kept): once its opens show they
 * come in order, the low-water mark (the prefetch's and the cache's plan
 * time) gives the holes up within a few hundred positions, not twice the
 * window (half this epoch).
 */
static void test_holes(void)
{
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	uint64_t count, k, worst = 0;
	uint32_t *o;

	unit_cfg(&c, DSFS_SAMPLER_TORCH_RANDOM, 2024, 1);
	CHECK(dsfs_tracker_new(&c, N, 0, false, 0, dsfs_tracker_window_for(N),
			       &t) == 0);
	o = unit_order(&c, N, 0, 0, &count);
	for (k = 0; k < count; k++) {
		if (k % 10 == 5)
			continue;
		CHECK(dsfs_tracker_access(t, o[k]) == DSFS_TRACK_IN_PLAN);
		dsfs_tracker_state(t, &st);
		if (k >= 4000 && st.frontier - st.low > worst)
			worst = st.frontier - st.low;
	}
	fprintf(stderr, "in order with holes: the low-water mark at most %llu behind after 4000 opens\n",
		(unsigned long long)worst);
	CHECK(worst <= 256);
	CHECK(st.mispredictions == 0);
	free(o);
	dsfs_tracker_free(t);
}

/*
 * t-loader's DistributedSampler (800 samples, 2 workers of batch 16) with
 * its first epoch cut short after 3 to 45 batches, the next begun at once
 * (its new workers open it from its start, after the old ones ended):
 * a quarter to half of those opens are also placeable in the cut epoch's
 * window.  The switch to the next epoch takes its first 8 votes (7
 * mispredictions), whatever falls in that window between them, and the
 * epochs after follow with none; before maybe_next(), up to 65 (lost).
 */
static void test_cut_short(void)
{
	enum { M = 800, NW = 2, BS = 16 };
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	uint64_t rs = 5, count, m, k, e, worst = 0, bad = 0;
	uint32_t pos[M], *o, cut;

	for (cut = 3; cut <= 45; cut++) {
		unit_cfg(&c, DSFS_SAMPLER_TORCH_DISTRIBUTED, 23 + cut, 1);
		CHECK(dsfs_tracker_new(&c, M, 0, true, 0,
				       dsfs_tracker_window_for(M), &t) == 0);
		for (e = 0; e < 3; e++) {
			o = unit_order(&c, M, e, 0, &count);
			m = e == 0 ? (uint64_t)cut * BS : count;
			unit_simulate(m, NW, BS, PREFETCH, 1, &rs, pos);
			for (k = 0; k < m; k++) {
				dsfs_tracker_prepare_next(t);
				dsfs_tracker_access(t, o[pos[k]]);
			}
			free(o);
		}
		dsfs_tracker_state(t, &st);
		bad += st.epoch != 2 || st.seen != count ||
		       st.detected != DSFS_TRACKER_DETECTED;
		worst = st.mispredictions > worst ? st.mispredictions : worst;
		dsfs_tracker_free(t);
	}
	fprintf(stderr, "epoch 0 cut after 3 to 45 batches: up to %llu mispredictions\n",
		(unsigned long long)worst);
	CHECK(bad == 0);
	CHECK(worst <= 7);
}

/*
 * t-loader-fresh's DistributedSampler rank (world 3, rank 1 of 1000
 * samples: 334) read by 3 workers of batch 16, worker 0 stalling near
 * each epoch's end for as long as the others can read on: its opens then
 * lag the furthest by up to 96 positions, behind the low-water mark (given
 * up, the lag having shrunk), and most of the 334 sit in the next epoch's
 * first 256, the vote span.  They are late opens of this epoch all the
 * same (fewer unseen positions left than the span: no push), not votes
 * for the next: 40 jobs of 3 epochs each, every epoch followed with no
 * misprediction.  Taken for votes, they switched epochs early, then again.
 */
static void test_small_slow(void)
{
	enum { M = 1000, NW = 3, BS = 16, JOBS = 40 };
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	uint64_t rs = 3, count, k, e, bad = 0, worst = 0;
	uint32_t pos[M], *o, job;

	for (job = 0; job < JOBS; job++) {
		unit_cfg(&c, DSFS_SAMPLER_TORCH_DISTRIBUTED, 5 + job, 3);
		CHECK(dsfs_tracker_new(&c, M, 1, true, 0,
				       dsfs_tracker_window_for(334), &t) == 0);
		for (e = 0; e < 3; e++) {
			o = unit_order(&c, M, e, 1, &count);
			unit_simulate_stall(count, NW, BS, PREFETCH, 1,
					    count - 40 - unit_rnd(&rs) % 120,
					    &rs, pos);
			for (k = 0; k < count; k++) {
				dsfs_tracker_prepare_next(t);
				dsfs_tracker_access(t, o[pos[k]]);
			}
			dsfs_tracker_state(t, &st);
			bad += st.epoch != e || st.seen != count;
			free(o);
		}
		worst = st.mispredictions > worst ? st.mispredictions : worst;
		dsfs_tracker_free(t);
	}
	fprintf(stderr, "334 samples, a worker stalling: %llu of %u epochs not followed, up to %llu mispredictions\n",
		(unsigned long long)bad, JOBS * 3, (unsigned long long)worst);
	CHECK(bad == 0 && worst == 0);
}

/*
 * Loaders with most of a small epoch in flight (workers x prefetch_factor
 * x batch size: 2,048, 1,024 and 4,096 samples for epochs of 1,000, 1,000
 * and 4,000): each worker opens its batch as a run of positions, the runs
 * side by side far beyond the window (a quarter of the epoch).  Detected,
 * followed 3 epochs, never lost; the opens that miss are runs' first ones
 * beyond the window and the switches' votes.  A loader of another seed is
 * lost within its first 200 opens (with the epoch given: not detected
 * otherwise).  Without runs, all three were lost from the start.  With
 * push after the first epoch (only every 8th position's open seen, the
 * scheduler's sentinels), the runs go from sentinel to sentinel, and an
 * epoch whose every sentinel was seen is over (before: the epochs after
 * the first ended in the wrong place).  With turns (more workers than
 * cores: each reads 1 to 2 * turn - 1 opens in a row), a worker's next
 * open may come 100 opens after its last, the others' in between; with 16
 * workers of 32, even one at a time: its run is kept (runs_add()); and
 * the next epoch's batches begin side by side, most beyond its vote span,
 * their runs taken for votes (tracker.c's next_run_pos()).  The misses
 * stay at 3 a worker a job on average (before: 57 a job for 8 workers of
 * 128 and turns of 4; 16 workers of 32 were lost in 1 or 2 jobs of 40,
 * turns of 1 to 8, and with turns of 16, 8 of 128 in 16 jobs of 40, their
 * first 64 opens of an epoch all misses).
 */
static void big_loader(uint64_t m, unsigned nw, unsigned bs, bool wrong,
		       uint32_t every, unsigned turn, unsigned jobs)
{
	struct dsfs_sampler_cfg c, seed;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	uint64_t rs = 9, count, k, e, lost = 0, lost_at = 0, job, worst = 0;
	uint64_t sum = 0;
	uint32_t *pos = calloc(m, sizeof(*pos)), *o;

	for (job = 0; job < jobs; job++) {
		unit_cfg(&c, DSFS_SAMPLER_TORCH_RANDOM, 2024 + job, 1);
		unit_cfg(&seed, DSFS_SAMPLER_TORCH_RANDOM, wrong ? 999 : 2024 + job, 1);
		CHECK(dsfs_tracker_new(&c, m, 0, !wrong, 0,
				       dsfs_tracker_window_for(m), &t) == 0);
		for (e = 0; e < (wrong ? 1 : 3); e++) {
			o = unit_order(&seed, m, e, 0, &count);
			unit_simulate_turns(count, nw, bs, PREFETCH, 1,
					    UINT64_MAX, turn, &rs, pos);
			for (k = 0; k < count; k++) {
				if (e && pos[k] % every)
					continue; /* pushed */
				dsfs_tracker_prepare_next(t);
				dsfs_tracker_access(t, o[pos[k]]);
				dsfs_tracker_low_every(t, every);
				dsfs_tracker_state(t, &st);
				lost += st.detected == DSFS_TRACKER_LOST;
				if (st.detected == DSFS_TRACKER_LOST && !lost_at)
					lost_at = k + 1;
			}
			free(o);
			if (!wrong)
				CHECK(st.epoch == e);
		}
		if (wrong) {
			CHECK(lost_at > 0 && lost_at <= 200);
			lost_at = 0;
		} else {
			CHECK(lost == 0 && st.detected == DSFS_TRACKER_DETECTED);
			worst = st.mispredictions > worst ? st.mispredictions : worst;
			sum += st.mispredictions;
		}
		dsfs_tracker_free(t);
	}
	if (!wrong) {
		fprintf(stderr, "%llu samples, %u workers of %u, sentinels every %u, turns of %u: %.1f mispredictions in 3 epochs on average, up to %llu\n",
			(unsigned long long)m, nw, bs, every, turn,
			(double)sum / jobs, (unsigned long long)worst);
		CHECK(worst * 20 <= 3 * m); /* at most 5% */
		CHECK(sum <= 3ULL * nw * jobs);
	}
	free(pos);
}

static void test_big_loaders(void)
{
	static const struct {
		uint64_t m;
		unsigned nw, bs;
		bool wrong;
		uint32_t every;
		unsigned turn, jobs;
	} big[] = {
		{ 1000, 8, 128, false, 1, 1, 10 },
		{ 1000, 16, 32, false, 1, 1, 10 },
		{ 4000, 8, 256, false, 1, 1, 10 },
		{ 1000, 8, 128, false, 8, 1, 10 },
		{ 4000, 8, 256, false, 8, 1, 10 },
		{ 1000, 8, 128, true, 1, 1, 10 },
		{ 4000, 8, 256, true, 1, 1, 10 },
		/* workers taking turns (more of them than cores) */
		{ 1000, 8, 128, false, 1, 4, 40 },
		{ 4000, 8, 256, false, 1, 4, 40 },
		{ 1000, 16, 32, false, 1, 1, 40 },
		{ 1000, 16, 32, false, 1, 4, 40 },
		{ 1000, 16, 32, false, 1, 8, 40 },
		{ 1000, 8, 128, false, 1, 16, 40 },
	};
	size_t i;

	for (i = 0; i < sizeof(big) / sizeof(big[0]); i++)
		big_loader(big[i].m, big[i].nw, big[i].bs, big[i].wrong,
			   big[i].every, big[i].turn, big[i].jobs);
}

/*
 * A data set the page cache mostly holds (read before): of each epoch's
 * opens only pct tenths of a percent reach the daemon, at random, a
 * worker's 30 positions apart at 3% and 100 at 1%, and a new batch's
 * first one up to a batch past the furthest.  50,000 samples, 8 workers
 * of 64: followed 3 epochs, never lost, all but 1% (2% at 1%) of the
 * opens that come placed.  (Moving the frontier only for runs of two
 * opens or more, which such opens seldom make, lost one job of two at
 * 3%; at 1%, moving it only for an open near it or going on from a run
 * lost both, the frontier left behind: tracker.c's far_placed().)
 */
static void test_sparse(unsigned pct)
{
	enum { M = 50000, NW = 8, BS = 64 };
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	uint64_t rs = 77, count, k, e, job, fed = 0, placed = 0, lost = 0;
	uint32_t *pos = calloc(M, sizeof(*pos)), *o;

	for (job = 0; job < 2; job++) {
		unit_cfg(&c, DSFS_SAMPLER_TORCH_RANDOM, 2024 + job, 1);
		CHECK(dsfs_tracker_new(&c, M, 0, true, 0,
				       dsfs_tracker_window_for(M), &t) == 0);
		for (e = 0; e < 3; e++) {
			o = unit_order(&c, M, e, 0, &count);
			unit_simulate(count, NW, BS, PREFETCH, 1, &rs, pos);
			for (k = 0; k < count; k++) {
				if (unit_rnd(&rs) % 1000 >= pct)
					continue;	/* the page cache's */
				dsfs_tracker_prepare_next(t);
				placed += dsfs_tracker_access(t, o[pos[k]]) !=
					  DSFS_TRACK_MISS;
				fed++;
				dsfs_tracker_state(t, &st);
				lost += st.detected == DSFS_TRACKER_LOST;
			}
			free(o);
		}
		CHECK(st.epoch == 2);
		dsfs_tracker_free(t);
	}
	fprintf(stderr, "%u samples, %u workers of %u, %u.%u%% of the opens seen: %llu of %llu placed, lost for %llu of them\n",
		(unsigned)M, (unsigned)NW, (unsigned)BS, pct / 10, pct % 10,
		(unsigned long long)placed, (unsigned long long)fed,
		(unsigned long long)lost);
	CHECK(lost == 0);
	CHECK(placed * 100 >= fed * (pct >= 30 ? 99 : 98));
	free(pos);
}

/* The tracker believes seed 2024, the loader (8 workers) uses 999. */
static void test_wrong_seed(void)
{
	struct dsfs_sampler_cfg c, wrong;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	uint64_t rs = 42, count, k, lost_at = 0;
	uint32_t *pos = calloc(N, sizeof(*pos)), *o;

	unit_cfg(&c, DSFS_SAMPLER_TORCH_RANDOM, 2024, 1);
	unit_cfg(&wrong, DSFS_SAMPLER_TORCH_RANDOM, 999, 1);
	CHECK(dsfs_tracker_new(&c, N, 0, false, 0, dsfs_tracker_window_for(N),
			       &t) == 0);
	o = unit_order(&wrong, N, 0, 0, &count);
	simulate(count, 8, &rs, pos);
	for (k = 0; k < count && !lost_at; k++) {
		dsfs_tracker_access(t, o[pos[k]]);
		dsfs_tracker_state(t, &st);
		if (st.detected == DSFS_TRACKER_LOST)
			lost_at = k + 1;
	}
	CHECK(lost_at > 0 && lost_at <= 200);
	free(o);
	free(pos);
	dsfs_tracker_free(t);
}

int main(void)
{
	CHECK(dsfs_tracker_window_for(N) == DSFS_TRACKER_WINDOW_MAX);
	CHECK(dsfs_tracker_window_for(1000) == 250);
	CHECK(dsfs_tracker_window_for(10) == 16);
	run_workers(8);
	run_workers(16);
	test_low_every();
	test_push_epochs();
	test_holes();
	test_cut_short();
	test_small_slow();
	test_big_loaders();
	test_sparse(30);
	test_sparse(10);
	test_wrong_seed();
	return UNIT_DONE();
}
