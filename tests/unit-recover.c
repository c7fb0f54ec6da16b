// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * unit-recover: a lost tracker finds the loader again at an epoch's start
 * (tracker.h): a new job on the same mount (back at the configured epoch,
 * or at one of epoch_auto's candidates), the same epoch begun again, a
 * loader two epochs ahead, a detection that found nothing (a pre-pass over
 * the data) and retries; and accesses in no order never match by chance.
 * Also: with push, a rank sees only every eighth read, and the next epoch
 * still begins; and a small data set's loader is found again after another
 * job's epoch, or at the start of its own epoch begun again with a few of
 * its old opens (strays) leading its misses; and a loader many epochs on
 * (epochs the page cache served) is found again; a torch-random loader
 * drawn another way than planned (persistent workers, the sampler's own
 * generator) is found and followed that way, and so is one that leaves
 * epochs early.  No mount; single-threaded.
 */
#include "config.h"

#include <stdlib.h>

#include "sampler.h"
#include "tracker.h"
#include "unit-check.h"
#include "unit-plan.h"

#define N 4000
#define WINDOW 64

/* Feed positions from..to of order o; the result of each, counted. */
struct fed {
	uint64_t in_plan, next, detected, miss;
	uint64_t first_found; /* 1 + the access that found the loader, or 0 */
};

static void feed(struct dsfs_tracker *t, const uint32_t *o, uint64_t from,
		 uint64_t to, uint64_t step, struct fed *f)
{
	uint64_t k;

	for (k = from; k < to; k += step) {
		int r = dsfs_tracker_access(t, o[k]);

		f->in_plan += r == DSFS_TRACK_IN_PLAN;
		f->next += r == DSFS_TRACK_NEXT_EPOCH;
		f->detected += r == DSFS_TRACK_DETECTED;
		f->miss += r == DSFS_TRACK_MISS;
		if (!f->first_found && (r == DSFS_TRACK_NEXT_EPOCH ||
					r == DSFS_TRACK_DETECTED))
			f->first_found = k - from + 1;
	}
}

/* Feed the first `to` opens of epoch e drawn as c draws it (all of them
 * when it has fewer); its length. */
static uint64_t feed_epoch_to(struct dsfs_tracker *t,
			      const struct dsfs_sampler_cfg *c, uint64_t n,
			      uint64_t e, uint64_t to, struct fed *f)
{
	uint64_t count;
	uint32_t *o = unit_order(c, n, e, 0, &count);

	feed(t, o, 0, to < count ? to : count, 1, f);
	free(o);
	return count;
}

/* Feed the whole of epoch e drawn as c draws it. */
static void feed_epoch(struct dsfs_tracker *t, const struct dsfs_sampler_cfg *c,
		       uint64_t n, uint64_t e, struct fed *f)
{
	feed_epoch_to(t, c, n, e, UINT64_MAX, f);
}

static void state_is(struct dsfs_tracker *t, enum dsfs_tracker_mode mode,
		     uint64_t epoch)
{
	struct dsfs_tracker_state st;

	dsfs_tracker_state(t, &st);
	CHECK(st.detected == mode);
	if (mode != DSFS_TRACKER_LOST && mode != DSFS_TRACKER_DETECTING)
		CHECK(st.epoch == epoch);
}

/*
 * A job follows epochs 0 and 1 (1 to its middle); then a new job starts at
 * epoch `restart`: lost, then found at its start, then followed to the end.
 */
static void run_new_job(bool epoch_auto, uint64_t base, uint64_t restart)
{
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct fed f = { 0 }, g = { 0 };
	uint64_t n0, n1, nr;
	uint32_t *o0, *o1, *or;

	unit_cfg(&c, DSFS_SAMPLER_TORCH_RANDOM, 42, 1);
	o0 = unit_order(&c, N, base, 0, &n0);
	o1 = unit_order(&c, N, base + 1, 0, &n1);
	or = unit_order(&c, N, restart, 0, &nr);
	CHECK(dsfs_tracker_new(&c, N, 0, epoch_auto, base, WINDOW, &t) == 0);
	feed(t, o0, 0, n0, 1, &f);
	feed(t, o1, 0, n1 / 2, 1, &f);
	state_is(t, epoch_auto ? DSFS_TRACKER_DETECTED :
				 DSFS_TRACKER_CONFIGURED, base + 1);
	feed(t, or, 0, nr, 1, &g);
	/* Lost within 64 + a few misses; found within two tests after. */
	CHECK(g.first_found > 0 && g.first_found <= 64 + 32 + 2 * 8 + 8);
	CHECK(g.next + g.detected == 1);
	CHECK(g.in_plan >= nr - g.first_found);
	state_is(t, epoch_auto ? DSFS_TRACKER_DETECTED :
				 DSFS_TRACKER_CONFIGURED, restart);
	free(o0);
	free(o1);
	free(or);
	dsfs_tracker_free(t);
}

/* The same epoch begun again halfway through (a job stopped and resumed
 * with set_epoch(e)), and a loader that ran two epochs ahead. */
static void test_again_and_ahead(void)
{
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct dsfs_tracker_state st;
	struct fed f = { 0 }, g = { 0 }, h = { 0 };
	uint64_t n2, n3, n5;
	uint32_t *o2, *o3, *o5;

	unit_cfg(&c, DSFS_SAMPLER_TORCH_DISTRIBUTED, 7, 2);
	o2 = unit_order(&c, N, 2, 1, &n2);
	o3 = unit_order(&c, N, 3, 1, &n3);
	o5 = unit_order(&c, N, 5, 1, &n5);
	CHECK(dsfs_tracker_new(&c, N, 1, false, 2, WINDOW, &t) == 0);
	feed(t, o2, 0, n2 / 2, 1, &f);
	feed(t, o2, 0, n2, 1, &g);	/* epoch 2 again */
	CHECK(g.first_found > 0 && g.next == 1);
	dsfs_tracker_state(t, &st);
	/* Read to its end: the opens before the one that found it are
	 * given up, the rest seen. */
	CHECK(st.epoch == 2 && st.starts == 1 && st.low == n2 &&
	      st.seen + g.first_found >= n2);
	/* Epoch 3 stopped at a third; the loader goes on to epoch 5. */
	feed(t, o3, 0, n3 / 3, 1, &h);
	feed(t, o5, 0, n5, 1, &h);
	dsfs_tracker_state(t, &st);
	CHECK(st.detected == DSFS_TRACKER_CONFIGURED && st.epoch == 5 &&
	      st.starts == 2);
	free(o2);
	free(o3);
	free(o5);
	dsfs_tracker_free(t);
}

/*
 * epoch_auto after a pre-pass (every 10th sample, as when computing a
 * data set's mean): detection finds nothing; the loader that follows, at
 * epoch 3, is detected from its own opens.
 */
static void test_detect_retry(void)
{
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct fed f = { 0 };
	uint64_t n3, k;
	uint32_t *o3;

	unit_cfg(&c, DSFS_SAMPLER_NUMPY_PERMUTATION, 9, 1);
	o3 = unit_order(&c, N, 3, 0, &n3);
	CHECK(dsfs_tracker_new(&c, N, 0, true, 0, WINDOW, &t) == 0);
	for (k = 0; k < N; k += 10)
		dsfs_tracker_access(t, k);
	state_is(t, DSFS_TRACKER_LOST, 0);
	feed(t, o3, 0, n3, 1, &f);
	CHECK(f.detected == 1 && f.first_found <= 32 + 8);
	state_is(t, DSFS_TRACKER_DETECTED, 3);
	free(o3);
	dsfs_tracker_free(t);
}

/* Accesses in no order (a WeightedRandomSampler) never match a candidate:
 * the tracker stays lost however long it tries (`rounds` epochs' worth),
 * over a small data set too, whose candidates hold a quarter of it. */
static void test_no_order(enum dsfs_sampler kind, uint64_t n,
			  uint64_t window, uint64_t rounds)
{
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	uint64_t rs = 12345, k, found = 0;

	unit_cfg(&c, kind, 1, 1);
	CHECK(dsfs_tracker_new(&c, n, 0, true, 0, window, &t) == 0);
	for (k = 0; k < rounds * n; k++) {
		int r;

		rs = rs * 6364136223846793005ULL + 1442695040888963407ULL;
		r = dsfs_tracker_access(t, (rs >> 33) % n);
		found += r == DSFS_TRACK_DETECTED || r == DSFS_TRACK_NEXT_EPOCH;
	}
	CHECK(found == 0);
	state_is(t, DSFS_TRACKER_LOST, 0);
	dsfs_tracker_free(t);
}

/* With push, the loader's reads of seven samples in eight are served by
 * the page cache: only every eighth position is seen, in both epochs, and
 * the next epoch still begins near its start. */
static void test_sparse_boundary(void)
{
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct fed f = { 0 }, g = { 0 };
	uint64_t n0, n1;
	uint32_t *o0, *o1;

	unit_cfg(&c, DSFS_SAMPLER_TORCH_DISTRIBUTED, 42, 3);
	o0 = unit_order(&c, N, 0, 0, &n0);
	o1 = unit_order(&c, N, 1, 0, &n1);
	CHECK(dsfs_tracker_new(&c, N, 0, false, 0, 16, &t) == 0);
	feed(t, o0, 0, n0, 8, &f);
	feed(t, o1, 0, n1, 8, &g);
	CHECK(f.miss == 0);
	CHECK(g.next == 1 && g.first_found <= 8 * 8); /* the 8th vote */
	state_is(t, DSFS_TRACKER_CONFIGURED, 1);
	free(o0);
	free(o1);
	dsfs_tracker_free(t);
}

/*
 * A small data set (n samples, the scheduler's window of a quarter): a job
 * of another seed reads one epoch, then the configured one starts at epoch
 * 0.  It is found again at its start (epochs of 160 samples and more have
 * candidates) and followed through its next epochs: the other job's opens
 * the tracker remembered are not taken for the loader's.
 */
static void test_small_after_other(uint64_t n)
{
	struct dsfs_sampler_cfg c, other;
	struct dsfs_tracker *t;
	struct fed f = { 0 }, g = { 0 }, h = { 0 };
	uint64_t nx, n0, n1, n2;
	uint32_t *ox, *o0, *o1, *o2;

	unit_cfg(&c, DSFS_SAMPLER_TORCH_RANDOM, 4, 1);
	unit_cfg(&other, DSFS_SAMPLER_TORCH_RANDOM, 99, 1);
	ox = unit_order(&other, n, 0, 0, &nx);
	o0 = unit_order(&c, n, 0, 0, &n0);
	o1 = unit_order(&c, n, 1, 0, &n1);
	o2 = unit_order(&c, n, 2, 0, &n2);
	CHECK(dsfs_tracker_new(&c, n, 0, true, 0, n / 4, &t) == 0);
	feed(t, ox, 0, nx, 1, &f);
	CHECK(f.detected == 0);
	feed(t, o0, 0, n0, 1, &g);
	CHECK(g.first_found > 0 && g.first_found <= 32 + 2 * 8);
	state_is(t, DSFS_TRACKER_DETECTED, 0);
	feed(t, o1, 0, n1, 1, &h);
	feed(t, o2, 0, n2, 1, &h);
	CHECK(h.next == 2 && h.miss == 0);
	state_is(t, DSFS_TRACKER_DETECTED, 2);
	free(ox);
	free(o0);
	free(o1);
	free(o2);
	dsfs_tracker_free(t);
}

/*
 * Epochs the kernel served from its page cache: dsfs followed epoch 0, then
 * heard nothing until the loader's epoch `at` (memory pressure made its
 * reads cold again).  Lost after 64 misses, then found at once (the first
 * test holds the epoch's first misses, and every epoch up to 64 past the
 * next is a candidate), and the epoch after is followed with no miss.
 */
static void test_served_epochs(enum dsfs_sampler kind, uint64_t n, uint64_t at)
{
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct fed f = { 0 }, g = { 0 }, h = { 0 };
	uint64_t n0, na, nb;
	uint32_t *o0, *oa, *ob;

	unit_cfg(&c, kind, 4, 1);
	o0 = unit_order(&c, n, 0, 0, &n0);
	oa = unit_order(&c, n, at, 0, &na);
	ob = unit_order(&c, n, at + 1, 0, &nb);
	CHECK(dsfs_tracker_new(&c, n, 0, true, 0,
			       dsfs_tracker_window_for(n), &t) == 0);
	feed(t, o0, 0, n0, 1, &f);
	state_is(t, DSFS_TRACKER_DETECTED, 0);
	feed(t, oa, 0, na, 1, &g);
	CHECK(g.miss <= 64 + 8); /* lost, then found at the first test */
	state_is(t, DSFS_TRACKER_DETECTED, at);
	feed(t, ob, 0, nb, 1, &h);
	CHECK(h.next == 1 && h.miss == 0);
	state_is(t, DSFS_TRACKER_DETECTED, at + 1);
	free(o0);
	free(oa);
	free(ob);
	dsfs_tracker_free(t);
}

/*
 * torch-random, a loader option the plan was not given: the loader has
 * persistent workers (epoch 0 as planned, epoch 1 not), or its sampler
 * has the generator (sampler_generator: no epoch as planned), or it draws
 * one permutation an epoch (a SubsetRandomSampler; a RandomSampler with
 * num_samples = k < n, reading the first k of it).  Lost, the tracker
 * finds the loader drawn that way at the first test and follows it from
 * then on.  An epoch of k < n samples ends early, and the next one's
 * first opens are taken for late ones of this epoch (its window), then
 * make the tracker lost; once two epochs in a row were left at k, the
 * epochs hold k samples, and the loader is followed without a miss.
 */
static void test_other_way(bool persistent, bool sampler_generator, bool one,
			   uint64_t n, uint64_t k)
{
	struct dsfs_sampler_cfg c, way;
	struct dsfs_tracker *t;
	struct fed f[6] = { 0 };
	uint64_t e;
	struct dsfs_tracker_way w;

	unit_cfg(&c, DSFS_SAMPLER_TORCH_RANDOM, 42, 1);
	way = c;
	way.persistent_workers = persistent;
	way.sampler_generator = sampler_generator;
	way.subset = one;
	CHECK(dsfs_tracker_new(&c, n, 0, true, 0,
			       dsfs_tracker_window_for(n), &t) == 0);
	for (e = 0; e < 6; e++) {
		CHECK(k <= feed_epoch_to(t, &way, n, e, k, &f[e]));
		if (e == 1) {
			/* Lost (64 misses) and found at the first test, in
			 * epoch 0 or 1. */
			CHECK(f[0].miss + f[1].miss <= 64 + 8 + 32);
			state_is(t, DSFS_TRACKER_DETECTED, 1);
			w = dsfs_tracker_way(t);
			CHECK(w.persistent_workers == persistent &&
			      w.sampler_generator == sampler_generator &&
			      w.one_perm == one && w.num_samples == 0);
		}
		/* Epochs 1 and 2 left at k: the length learned there, and
		 * the epochs cut at k. */
		if (e >= 3)
			CHECK(f[e].next == 1 && f[e].miss == 0);
	}
	state_is(t, DSFS_TRACKER_DETECTED, 5);
	w = dsfs_tracker_way(t);
	CHECK(w.one_perm == one && w.num_samples == (k < n ? k : 0));
	dsfs_tracker_free(t);
}

/*
 * torch-random, persistent workers not given, and the tracker an epoch
 * ahead of the loader when it is lost (in a small epoch, chance votes move
 * a tracker following the planned way's order on to its next epoch; here
 * the planned epoch 1 is read whole).  The loader's epoch 1 draws the
 * generator's third permutation, which is also epoch 2 of the way that
 * draws one permutation an epoch: it is found as drawn two an epoch, at
 * epoch 1, and its epoch 2 is followed without a miss.
 */
static void test_way_epoch_behind(uint64_t n)
{
	struct dsfs_sampler_cfg c, way;
	struct dsfs_tracker *t;
	struct fed f = { 0 }, g = { 0 }, h = { 0 };
	struct dsfs_tracker_way w;

	unit_cfg(&c, DSFS_SAMPLER_TORCH_RANDOM, 17, 1);
	way = c;
	way.persistent_workers = true;
	CHECK(dsfs_tracker_new(&c, n, 0, true, 0, n / 4, &t) == 0);
	feed_epoch(t, &way, n, 0, &f);
	feed_epoch(t, &c, n, 1, &f);
	state_is(t, DSFS_TRACKER_DETECTED, 1);
	feed_epoch(t, &way, n, 1, &g);
	w = dsfs_tracker_way(t);
	CHECK(w.persistent_workers && !w.sampler_generator && !w.one_perm);
	state_is(t, DSFS_TRACKER_DETECTED, 1);
	feed_epoch(t, &way, n, 2, &h);
	CHECK(h.next == 1 && h.miss == 0);
	state_is(t, DSFS_TRACKER_DETECTED, 2);
	dsfs_tracker_free(t);
}

/*
 * A length learned (test_other_way) and then whole epochs read (a loop
 * no longer left early): two opens past the cut, and the length is
 * forgotten, the epoch whole again and followed to its end.
 */
static void test_length_forgotten(void)
{
	struct dsfs_sampler_cfg c, way;
	struct dsfs_tracker *t;
	struct fed f[7] = { 0 };
	uint64_t e, n = 3000;

	unit_cfg(&c, DSFS_SAMPLER_TORCH_RANDOM, 42, 1);
	way = c;
	way.subset = true;
	CHECK(dsfs_tracker_new(&c, n, 0, true, 0,
			       dsfs_tracker_window_for(n), &t) == 0);
	for (e = 0; e < 7; e++) {
		feed_epoch_to(t, &way, n, e, e < 4 ? 1000 : UINT64_MAX, &f[e]);
		if (e == 3)
			CHECK(dsfs_tracker_way(t).num_samples == 1000);
	}
	/* Epoch 4's first two opens past the cut (its window there) are
	 * misses; the epoch is whole again from then on. */
	CHECK(f[4].miss <= 2);
	CHECK(dsfs_tracker_way(t).num_samples == 0);
	CHECK(dsfs_tracker_way(t).one_perm);
	CHECK(f[5].miss == 0 && f[6].miss == 0);
	state_is(t, DSFS_TRACKER_DETECTED, 6);
	dsfs_tracker_free(t);
}

/*
 * torch-random: a loader that leaves epochs early (a break after a third of
 * each: cut[e]) never draws their second permutations, so each epoch after
 * them is drawn as if one more epoch were cut (cfg.cut_epochs).  Lost at
 * each such epoch's start, the tracker finds it at the first test (within
 * the 64 misses that make it lost and a test's 8 more), and follows the
 * whole epoch after without a miss; the way reports the cuts.  Epoch 1
 * after a cut epoch 0 is also epoch 1 of one permutation an epoch, as
 * which it is found; then lost again at epoch 2, it is found as one epoch
 * cut.  A new job on the mount (a fresh generator, none cut) is then found
 * at its start too.
 */
static void test_cut_epochs(uint64_t n, const bool cut[6])
{
	struct dsfs_sampler_cfg c, loader;
	struct dsfs_tracker *t;
	struct fed f[7] = { 0 };
	uint64_t e, ncut = 0;

	unit_cfg(&c, DSFS_SAMPLER_TORCH_RANDOM, 99, 1);
	loader = c;
	CHECK(dsfs_tracker_new(&c, n, 0, true, 0,
			       dsfs_tracker_window_for(n), &t) == 0);
	for (e = 0; e < 6; e++) {
		/* A RandomSampler's epoch: n samples. */
		feed_epoch_to(t, &loader, n, e, cut[e] ? n / 3 : UINT64_MAX,
			      &f[e]);
		state_is(t, DSFS_TRACKER_DETECTED, e);
		if (e && (cut[e - 1] || (e == 2 && cut[0])))
			CHECK(f[e].miss <= 64 + 8 && f[e].first_found > 0);
		else
			CHECK(f[e].miss == 0);
		loader.cut_epochs += cut[e];
		ncut += cut[e] && e < 5;
	}
	CHECK(dsfs_tracker_way(t).cut_epochs == ncut);
	CHECK(!dsfs_tracker_way(t).one_perm);
	feed_epoch(t, &c, n, 0, &f[6]);
	state_is(t, DSFS_TRACKER_DETECTED, 0);
	CHECK(dsfs_tracker_way(t).cut_epochs == 0);
	dsfs_tracker_free(t);
}

/*
 * A small data set's job (n samples, a quarter for window) ends, a few of
 * its late opens (strays) miss, and the same job starts again at once.
 * The next epoch begins on its first opens (the last one is over), chance
 * places many of them there, and it is lost after 64 misses: the first
 * misses, which the strays lead, show the job's epoch start, and it is
 * found there, before its misses move past it.
 */
static void test_strays_then_again(uint64_t n, unsigned strays)
{
	struct dsfs_sampler_cfg c;
	struct dsfs_tracker *t;
	struct fed f = { 0 }, g = { 0 };
	uint64_t count, c5, c7, i;
	uint32_t *o5, *o6, *o7, *inv5, *inv7, k = 0;

	unit_cfg(&c, DSFS_SAMPLER_TORCH_DISTRIBUTED, 23, 1);
	o5 = unit_order(&c, n, 5, 0, &c5);
	o6 = unit_order(&c, n, 6, 0, &count);
	o7 = unit_order(&c, n, 7, 0, &c7);
	inv5 = calloc(n, sizeof(*inv5));
	inv7 = calloc(n, sizeof(*inv7));
	CHECK(inv5 && inv7);
	for (i = 0; i < n; i++) {
		inv5[o5[i]] = (uint32_t)i;
		inv7[o7[i]] = (uint32_t)i;
	}
	CHECK(dsfs_tracker_new(&c, n, 0, true, 5, n / 4, &t) == 0);
	feed(t, o5, 0, c5, 1, &f);
	feed(t, o6, 0, count, 1, &f);
	state_is(t, DSFS_TRACKER_DETECTED, 6);
	/* Strays: samples far into epoch 5 and past epoch 7's votes (its
	 * first DSFS_TRACKER_VOTE_SPAN positions, at least). */
	for (i = 0; i < n && k < strays; i++)
		if (inv5[i] >= n / 2 && inv7[i] >= n / 2 &&
		    inv7[i] >= DSFS_TRACKER_VOTE_SPAN) {
			CHECK(dsfs_tracker_access(t, i) == DSFS_TRACK_MISS);
			k++;
		}
	CHECK(k == strays);
	feed(t, o5, 0, c5, 1, &g);
	CHECK(g.first_found > 0 && g.first_found <= c5 / 2);
	state_is(t, DSFS_TRACKER_DETECTED, 5);
	free(inv5);
	free(inv7);
	free(o5);
	free(o6);
	free(o7);
	dsfs_tracker_free(t);
}

int main(void)
{
	static const bool cuts[6] = { false, true, false, true, true, false };
	static const bool first[6] = { true, false, false, false, false, false };

	test_cut_epochs(800, cuts);
	test_cut_epochs(5000, cuts);
	test_cut_epochs(3000, first);
	test_way_epoch_behind(800);
	test_way_epoch_behind(3000);
	test_strays_then_again(400, 0);
	test_strays_then_again(400, 4);
	test_strays_then_again(400, 6);
	test_strays_then_again(400, 8);
	test_strays_then_again(800, 6);
	test_strays_then_again(1600, 6);
	test_other_way(true, false, false, 3000, 3000);
	test_other_way(false, true, false, 3000, 3000);
	test_other_way(false, false, true, 3000, 3000);
	test_other_way(false, false, true, 3000, 1000);
	test_other_way(true, false, true, 3000, 2200);
	test_other_way(false, true, true, 3000, 700);
	test_other_way(false, true, true, 2000, 700);
	test_other_way(false, false, true, 2000, 700);
	test_other_way(true, false, true, 2000, 700);
	test_length_forgotten();
	test_served_epochs(DSFS_SAMPLER_TORCH_RANDOM, 3000, 6);
	test_served_epochs(DSFS_SAMPLER_TORCH_RANDOM, 3000, 40);
	test_served_epochs(DSFS_SAMPLER_PYTHON_SHUFFLE, 1500, 9);
	test_small_after_other(160);
	test_small_after_other(300);
	test_small_after_other(600);
	test_no_order(DSFS_SAMPLER_TORCH_RANDOM, 160, 40, 2000);
	test_no_order(DSFS_SAMPLER_TORCH_RANDOM, 300, 75, 2000);
	run_new_job(false, 0, 0);
	run_new_job(false, 4, 4);
	run_new_job(true, 0, 0);
	run_new_job(true, 2, 5); /* a resumed job, among the candidates */
	run_new_job(true, 0, 4); /* a job resumed 4 epochs past the detected */
	test_again_and_ahead();
	test_detect_retry();
	test_no_order(DSFS_SAMPLER_PYTHON_SHUFFLE, N, WINDOW, 50);
	test_sparse_boundary();
	return UNIT_DONE();
}
