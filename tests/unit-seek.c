// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * unit-seek: the per-epoch seed discovery of prefetch/seek.h over a
 * RandomSampler given num_samples=K.  Each epoch's seed is found from its
 * first opens (searching a narrow slice), the tracker it yields follows the
 * epoch's K opens without a miss, and the epoch ends exactly after K opens:
 * not at a repeated sample when K > n, and at the K-th open when K < n,
 * although the next epoch's first sample was not opened in it.  Without
 * num_samples an epoch still ends at its first repeat.  A DataLoader worker
 * that starts late, after the other's batch (or two), still lets its
 * epoch's seed be found: the epoch's first sample is looked for among the
 * first 64 opens, by a second search when the first had fewer.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "discover.h"
#include "sampler.h"
#include "seek.h"
#include "tracker.h"
#include "unit-check.h"

#define KNOWN 0x5eed1234U

static void nap(void)
{
	nanosleep(&(struct timespec){ .tv_nsec = 2000000 }, NULL);
}

static void no_wake(void *arg)
{
	(void)arg;
}

/* What a fresh generator seeded `seed` gives a RandomSampler(num_samples=k). */
static uint32_t *epoch_order(uint32_t seed, uint64_t n, uint64_t k)
{
	struct dsfs_sampler_cfg c = { .kind = DSFS_SAMPLER_TORCH_RANDOM,
				      .sampler_generator = true,
				      .num_samples = k };
	uint32_t *o = NULL;
	uint64_t count = 0;

	dsfs_seed_from_i64(seed, &c.seed);
	CHECK(dsfs_sampler_order(&c, n, 0, 0, &o, &count) == 0);
	CHECK(count == (k ? k : n));
	return o;
}

/* Wait for the running search's end and take its tracker. */
static struct dsfs_tracker *found(struct dsfs_seek *s, uint32_t want)
{
	struct dsfs_tracker *t = NULL;
	uint32_t seed = 0;
	int i, ret = 0;

	for (i = 0; i < 30000 && !ret; i++) {
		ret = dsfs_seek_poll(s, &t, &seed);
		if (!ret)
			nap();
	}
	CHECK(ret == 1 && t && seed == want);
	return ret == 1 ? t : NULL;
}

/* Two epochs of a loader whose epochs draw seeds KNOWN and KNOWN + 77. */
static void check_epochs(uint64_t n, uint64_t k)
{
	struct dsfs_seek_cfg cfg = { .n = n, .count = k,
				     .first = KNOWN - 1000,
				     .end = KNOWN + 1000, .threads = 1,
				     .window = 8, .wake = no_wake };
	uint64_t len = k ? k : n, p;
	struct dsfs_tracker_state st;
	struct dsfs_seek_stats ss;
	struct dsfs_tracker *t;
	struct dsfs_seek *s;
	uint32_t e, *o;

	CHECK(dsfs_seek_new(&cfg, &s) == 0);
	if (!s)
		return;
	for (e = 0; e < 2; e++) {
		o = epoch_order(KNOWN + 77 * e, n, k);
		t = NULL;
		for (p = 0; p < len && o; p++) {
			CHECK(dsfs_seek_access(s, o[p]) == (e && !p));
			if (t)
				CHECK(dsfs_tracker_access(t, o[p]) ==
				      DSFS_TRACK_IN_PLAN);
			dsfs_seek_stats(s, &ss);
			if (!t && ss.state == DSFS_SEEK_SEARCHING)
				t = found(s, KNOWN + 77 * e);
		}
		CHECK(t != NULL);
		if (t) {
			dsfs_tracker_state(t, &st);
			CHECK(st.count == len && st.seen == len);
			CHECK(st.mispredictions == 0);
		}
		dsfs_tracker_free(t);
		free(o);
	}
	dsfs_seek_free(s);
}

/* Without num_samples, the first repeat ends the epoch. */
static void check_repeat_ends(void)
{
	struct dsfs_seek_cfg cfg = { .n = 100, .first = 0, .end = 1,
				     .threads = 1, .wake = no_wake };
	struct dsfs_seek *s;

	CHECK(dsfs_seek_new(&cfg, &s) == 0);
	if (!s)
		return;
	CHECK(!dsfs_seek_access(s, 5));
	CHECK(!dsfs_seek_access(s, 6));
	CHECK(dsfs_seek_access(s, 5));
	dsfs_seek_free(s);
	cfg.count = (uint64_t)DSFS_SAMPLER_MAX_N + 1;
	CHECK(dsfs_seek_new(&cfg, &s) == -EINVAL);
}

/* The running search's tracker; NULL once it ended without (or none ran). */
static struct dsfs_tracker *settle(struct dsfs_seek *s, uint32_t want)
{
	struct dsfs_seek_stats ss;
	struct dsfs_tracker *t = NULL;
	uint32_t seed = 0;
	int i, ret;

	for (i = 0; i < 30000; i++) {
		ret = dsfs_seek_poll(s, &t, &seed);
		if (ret) {
			CHECK(ret == 1 && seed == want);
			return ret == 1 ? t : NULL;
		}
		dsfs_seek_stats(s, &ss);
		if (ss.state != DSFS_SEEK_SEARCHING)
			return NULL;
		nap();
	}
	CHECK(!"search never ended");
	return NULL;
}

/*
 * Two workers, batches of 16: worker 1 opens its batches 1 .. late (the
 * positions 16 .. 16 * late + 15 of odd batches) before worker 0 opens
 * anything; then they take turns, and the epoch goes on in order.
 */
static void check_late_worker(unsigned late, uint64_t searches)
{
	struct dsfs_seek_cfg cfg = { .n = 1000, .first = KNOWN - 1000,
				     .end = KNOWN + 1000, .threads = 1,
				     .window = 64, .wake = no_wake };
	uint32_t *o = epoch_order(KNOWN, cfg.n, 0), seq[1000], k = 0, b, i;
	struct dsfs_tracker_state st;
	struct dsfs_seek_stats ss;
	struct dsfs_tracker *t = NULL;
	struct dsfs_seek *s;

	for (b = 1; b < 2 * late; b += 2)
		for (i = 0; i < 16; i++)
			seq[k++] = o[16 * b + i];
	for (i = 0; i < 16 * late; i++) /* worker 0's first batches, */
		seq[k++] = o[32 * (i / 16) + i % 16];
	for (i = 32 * late; i < cfg.n; i++) /* then the rest in order */
		seq[k++] = o[i];
	CHECK(k == cfg.n);
	CHECK(dsfs_seek_new(&cfg, &s) == 0);
	for (i = 0; i < cfg.n && s; i++) {
		CHECK(!dsfs_seek_access(s, seq[i]));
		if (t)
			CHECK(dsfs_tracker_access(t, seq[i]) ==
			      DSFS_TRACK_IN_PLAN);
		else
			t = settle(s, KNOWN);
	}
	CHECK(t != NULL);
	if (t) {
		dsfs_tracker_state(t, &st);
		CHECK(st.seen == cfg.n && st.mispredictions == 0);
	}
	if (s) {
		dsfs_seek_stats(s, &ss);
		CHECK(ss.searches == searches && ss.found_count == 1);
	}
	dsfs_tracker_free(t);
	dsfs_seek_free(s);
	free(o);
}

int main(void)
{
	check_epochs(1000, 0);
	check_epochs(1000, 300);
	check_epochs(200, 450);
	check_epochs(200, 400);
	check_repeat_ends();
	check_late_worker(1, 1); /* the first sample is the 17th open */
	check_late_worker(2, 2); /* the 33rd: the first search saw 32 */
	return UNIT_DONE();
}
