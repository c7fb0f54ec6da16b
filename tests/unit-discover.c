// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * unit-discover: the seed search of prefetch/discover.h.  Its first output
 * and prefixes equal MT19937 and the sampler's randperm; every kernel finds
 * the same candidates as the scalar one over a fixed slice of 2^20 seeds;
 * a known seed is found from its first opens, also when W workers
 * interleave them, and not outside its slice; cancel, free and the
 * completion callback behave; bad configurations are refused.  The values
 * are compared with the real torch by t-discover-golden.sh.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "discover.h"
#include "discover_int.h"
#include "mt19937.h"
#include "sampler.h"
#include "unit-check.h"

#define KNOWN 0x5eed1234U /* the seed the searches look for */
#define SLICE (UINT32_C(1) << 20)

static const enum dsfs_discover_path all_paths[] = {
	DSFS_DISCOVER_SCALAR,
	DSFS_DISCOVER_VECTOR,
	DSFS_DISCOVER_AVX2,
	DSFS_DISCOVER_AVX512,
};
#define NPATHS (sizeof(all_paths) / sizeof(all_paths[0]))

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void test_first_output(void)
{
	static const uint32_t seeds[] = { 0,	       1,	    42,
					  5489,	       0x7fffffffU, 0x80000000U,
					  0xffffffffU, KNOWN };
	struct dsfs_mt19937 mt;
	unsigned i;

	for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		dsfs_mt_init_genrand(&mt, seeds[i]);
		CHECK(dsfs_discover_first_output(seeds[i]) ==
		      dsfs_mt_next32(&mt));
	}
	/* std::mt19937 default seed 5489: first output 3499211612. */
	CHECK(dsfs_discover_first_output(5489) == 3499211612U);
}

/* The magic division of the vector kernels, at the edges of each quotient. */
static void test_division(void)
{
	static const uint32_t ns[] = { 1,	 2,	   3,
				       7,	 1000,	   50000,
				       1281167,	 1U << 20, (1U << 20) + 1,
				       214748363 };
	struct dsfs_discover_filter f0;
	const struct dsfs_discover_probe *f = &f0.probes[0];
	uint32_t h = 0, i, o, q, pos = 0;
	unsigned k;

	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		dsfs_discover_filter_init(&f0, ns[i], &pos, 1, &h, 1);
		for (k = 0; k < 4096; k++) {
			q = k < 2048 ? k : UINT32_MAX / ns[i] - (k - 2048);
			o = q * ns[i];
			CHECK(dsfs_discover_div(f, o) == o / ns[i]);
			CHECK(dsfs_discover_div(f, o - 1) == (o - 1) / ns[i]);
			CHECK(dsfs_discover_div(f, o + ns[i] - 1) ==
			      (o + ns[i] - 1) / ns[i]);
		}
		CHECK(dsfs_discover_div(f, UINT32_MAX) == UINT32_MAX / ns[i]);
	}
}

/* randperm(n) from a fresh generator: DistributedSampler world 1, epoch 0. */
static uint32_t *reference_order(uint32_t seed, uint32_t n)
{
	struct dsfs_sampler_cfg cfg = { .kind = DSFS_SAMPLER_TORCH_DISTRIBUTED,
					.world = 1 };
	uint32_t *order = NULL;
	uint64_t count;

	dsfs_seed_from_i64(seed, &cfg.seed);
	CHECK(dsfs_sampler_order(&cfg, n, 0, 0, &order, &count) == 0);
	CHECK(count == n);
	return order;
}

/* Short (partial init, map), long (whole MT19937) and dense prefixes. */
static void test_prefix(void)
{
	static const uint32_t ns[] = { 2, 3, 10, 1000, 100003 };
	static const uint32_t lens[] = { 1, 2, 17, 227, 228, 229, 700 };
	uint32_t *ref, *got, i, j, seed;

	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		for (seed = KNOWN; seed < KNOWN + 3; seed++) {
			ref = reference_order(seed, ns[i]);
			got = malloc(ns[i] * sizeof(uint32_t));
			CHECK(got && ref);
			if (!got || !ref)
				return;
			for (j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
				uint32_t len = lens[j] < ns[i] ? lens[j] :
								 ns[i];

				CHECK(dsfs_discover_prefix(seed, ns[i], len,
							   got) == 0);
				CHECK(!memcmp(got, ref, len * sizeof(*got)));
			}
			CHECK(dsfs_discover_prefix(seed, ns[i], ns[i], got) ==
			      0);
			CHECK(!memcmp(got, ref, ns[i] * sizeof(*got)));
			free(ref);
			free(got);
		}
	}
	CHECK(dsfs_discover_prefix(1, 10, 11, NULL) == -EINVAL);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static bool is_head(uint32_t z, const uint32_t *heads, uint32_t nheads)
{
	uint32_t h;

	for (h = 0; h < nheads; h++)
		if (heads[h] == z)
			return true;
	return false;
}

/* pos + o_pos % (n - pos) after init_genrand(seed), the plain way. */
static uint32_t probe_reference(uint32_t seed, uint32_t n, uint32_t pos)
{
	struct dsfs_mt19937 mt;
	uint32_t i, o = 0;

	dsfs_mt_init_genrand(&mt, seed);
	for (i = 0; i <= pos; i++)
		o = dsfs_mt_next32(&mt);
	return pos + o % (n - pos);
}

/*
 * Each kernel's candidates over [first, first + count) equal the scalar's,
 * for a probe at pos.
 */
static void check_paths_agree(uint32_t n, uint32_t pos, const uint32_t *heads,
			      uint32_t nheads, uint32_t first, uint32_t count)
{
	uint32_t *ref = malloc(count * sizeof(uint32_t));
	uint32_t *got = malloc(count * sizeof(uint32_t));
	uint32_t nref = 0, ngot, i;
	unsigned p;

	CHECK(ref && got);
	if (!ref || !got)
		goto out;
	CHECK(dsfs_discover_scan(DSFS_DISCOVER_SCALAR, n, pos, heads, nheads,
				 first, count, ref, &nref) == 0);
	for (i = 0; i < nref; i++) /* the reference is what it claims */
		CHECK(is_head(probe_reference(ref[i], n, pos), heads, nheads));
	for (i = 0; i < 64 && i < count; i++) /* ... and misses none */
		CHECK(is_head(probe_reference(first + i, n, pos), heads,
			      nheads) ==
		      (bsearch(&(uint32_t){ first + i }, ref, nref,
			       sizeof(uint32_t), cmp_u32) != NULL));
	for (p = 1; p < NPATHS; p++) {
		if (!dsfs_discover_path_supported(all_paths[p])) {
			fprintf(stderr, "unit-discover: no %s on this CPU\n",
				dsfs_discover_path_name(all_paths[p]));
			continue;
		}
		ngot = UINT32_MAX;
		CHECK(dsfs_discover_scan(all_paths[p], n, pos, heads, nheads,
					 first, count, got, &ngot) == 0);
		CHECK(ngot == nref);
		CHECK(ngot != nref || !memcmp(got, ref, nref * sizeof(*got)));
	}
out:
	free(ref);
	free(got);
}

static void test_paths_agree(void)
{
	static const uint32_t heads[] = { 0, 999, 500, 7, 123 };
	static const uint32_t counts[] = { 0, 1, 15, 17, 255, 257, 4099 };
	unsigned i;

	/* 2^20 seeds: about 5000 candidates at n = 1000. */
	check_paths_agree(1000, 0, heads, 5, 0x9e370000U, SLICE);
	check_paths_agree(1281167, 0, heads, 1, 0, SLICE);
	/* Later positions (DistributedSampler ranks), the last one too. */
	check_paths_agree(1000, 3, heads, 5, 0x9e370000U, SLICE);
	check_paths_agree(1000, DSFS_DISCOVER_MAX_POS, heads, 5, 77, SLICE / 4);
	/* Partial blocks, and the top of the seed space (no wrap). */
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		check_paths_agree(3, 0, heads, 1, 12345, counts[i]);
		check_paths_agree(3, 0, heads, 1,
				  (uint32_t)(DSFS_DISCOVER_SEEDS - counts[i]),
				  counts[i]);
	}
}

/* Two probes in one filter pass exactly the seeds either passes alone. */
static void test_two_probes(void)
{
	static const uint32_t heads[] = { 5, 999, 500, 7, 123 };
	static const uint32_t pos[] = { 0, 6 };
	uint32_t *a = malloc(SLICE * sizeof(uint32_t));
	uint32_t *b = malloc(SLICE * sizeof(uint32_t));
	uint32_t *got = malloc(SLICE * sizeof(uint32_t));
	uint32_t na, nb, ngot, i, j, k, first = 0x12340000U;
	struct dsfs_discover_filter f;
	dsfs_discover_scan_fn scan;
	unsigned p;

	CHECK(a && b && got);
	if (!a || !b || !got)
		goto out;
	CHECK(dsfs_discover_scan(DSFS_DISCOVER_SCALAR, 1000, 0, heads, 5,
				 first, SLICE, a, &na) == 0);
	CHECK(dsfs_discover_scan(DSFS_DISCOVER_SCALAR, 1000, 6, heads, 5,
				 first, SLICE, b, &nb) == 0);
	CHECK(na > 100 && nb > 100);
	dsfs_discover_filter_init(&f, 1000, pos, 2, heads, 5);
	for (p = 0; p < NPATHS; p++) {
		scan = dsfs_discover_kernel(all_paths[p]);
		if (!scan)
			continue;
		ngot = scan(&f, first, SLICE, got);
		/* the sorted union of a and b */
		for (i = j = k = 0; i < na || j < nb; k++) {
			uint32_t want = j == nb || (i < na && a[i] <= b[j]) ?
						a[i] : b[j];

			if (i < na && a[i] == want)
				i++;
			if (j < nb && b[j] == want)
				j++;
			if (k >= ngot || got[k] != want)
				break;
		}
		CHECK(i == na && j == nb && k == ngot);
	}
out:
	free(a);
	free(b);
	free(got);
}

/* Search [first, end) at normal priority on 2 threads; the outcome in *r. */
static void search(const struct dsfs_discover_cfg *base, uint64_t first,
		   uint64_t end, struct dsfs_discover_result *r)
{
	struct dsfs_discover_cfg cfg = *base;
	struct dsfs_discover *d = NULL;

	cfg.first = first;
	cfg.end = end;
	memset(r, 0, sizeof(*r));
	r->status = -EFAULT;
	CHECK(dsfs_discover_start(&cfg, &d) == 0);
	if (!d)
		return;
	CHECK(dsfs_discover_wait(d, 120000) == 0);
	CHECK(dsfs_discover_done(d));
	dsfs_discover_result(d, r);
	dsfs_discover_free(d);
}

/*
 * The first `count` opens of W workers, batch size B: worker w reads
 * positions w * B .. w * B + B - 1 in order, the workers taking turns in the
 * order turn[0 .. W), one open each.
 */
static void interleave(const uint32_t *perm, uint32_t W, uint32_t B,
		       const uint32_t *turn, uint32_t count, uint32_t *obs)
{
	uint32_t next[16] = { 0 }, k = 0, t, w;

	while (k < count) {
		for (t = 0; t < W && k < count; t++) {
			w = turn[t];
			if (next[w] < B)
				obs[k++] = perm[w * B + next[w]++];
		}
	}
}

static void test_find_known(void)
{
	static const uint32_t turn[] = { 2, 0, 3, 1 };
	uint32_t perm[64], obs[16];
	struct dsfs_discover_cfg cfg = { .n = 50000,
					 .observed = obs,
					 .nobserved = 16,
					 .heads = 1,
					 .threads = 2,
					 .prio = DSFS_DISCOVER_NORMAL };
	struct dsfs_discover_result r;
	unsigned p;

	CHECK(dsfs_discover_prefix(KNOWN, cfg.n, 64, perm) == 0);
	memcpy(obs, perm, sizeof(obs));
	search(&cfg, KNOWN - (UINT64_C(1) << 21), KNOWN + (UINT64_C(1) << 21),
	       &r);
	CHECK(r.status == 0 && r.seed == KNOWN);
	CHECK(r.candidates >= 1 && r.tested >= 1);
	/* The slice's edges: the seed first, and last. */
	search(&cfg, KNOWN, KNOWN + SLICE, &r);
	CHECK(r.status == 0 && r.seed == KNOWN);
	search(&cfg, KNOWN + 1 - SLICE, KNOWN + 1, &r);
	CHECK(r.status == 0 && r.seed == KNOWN);
	/* Not in the slice: every seed tested, none confirmed. */
	search(&cfg, KNOWN + 1, KNOWN + 1 + SLICE, &r);
	CHECK(r.status == -ENOENT && r.tested == SLICE);
	/* Each path (the scalar one on a short slice). */
	for (p = 0; p < NPATHS; p++) {
		if (!dsfs_discover_path_supported(all_paths[p]))
			continue;
		cfg.path = all_paths[p];
		search(&cfg, KNOWN - 5000, KNOWN + 5000, &r);
		CHECK(r.status == 0 && r.seed == KNOWN &&
		      r.path == all_paths[p]);
	}
	/* 4 workers, batches of 8: p[0] is the second open, p[8] the fourth. */
	interleave(perm, 4, 8, turn, 16, obs);
	CHECK(obs[1] == perm[0] && obs[0] == perm[16]);
	cfg.path = DSFS_DISCOVER_AUTO;
	search(&cfg, KNOWN - SLICE, KNOWN + SLICE, &r);
	CHECK(r.status == -ENOENT); /* heads = 1: p[0] is not the first open */
	cfg.heads = 4;
	search(&cfg, KNOWN - SLICE, KNOWN + SLICE, &r);
	CHECK(r.status == -ENOENT); /* window 0: p[16] is not in p[0..16) */
	cfg.window = 3 * 8;
	search(&cfg, KNOWN - SLICE, KNOWN + SLICE, &r);
	CHECK(r.status == 0 && r.seed == KNOWN);
	CHECK(dsfs_discover_false_matches(&cfg) < 1e-40);
}

/*
 * DistributedSampler, world 4, local ranks 2 and 3, 2 workers each with
 * batches of 8: the opens of both ranks interleaved are found as that
 * model's, by a search of DISTRIBUTED alone and of both models; a search of
 * RANDOM alone finds nothing; RandomSampler opens searched with both
 * models come out RANDOM.
 */
static void test_find_distributed(void)
{
	static const uint32_t turn[] = { 1, 0 };
	uint32_t perm[256], mine[2][64], per[2][16], obs[32], i, r;
	struct dsfs_discover_cfg cfg = { .n = 50000,
					 .models = DSFS_DISCOVER_DISTRIBUTED,
					 .world = 4,
					 .rank_first = 2,
					 .rank_last = 3,
					 .observed = obs,
					 .nobserved = 32,
					 .heads = 8,
					 .window = 8,
					 .threads = 2,
					 .prio = DSFS_DISCOVER_NORMAL };
	struct dsfs_discover_result res;

	CHECK(dsfs_discover_prefix(KNOWN, cfg.n, 256, perm) == 0);
	for (r = 0; r < 2; r++) {
		for (i = 0; i < 64; i++)
			mine[r][i] = perm[2 + r + 4 * i];
		interleave(mine[r], 2, 8, turn, 16, per[r]);
	}
	for (i = 0; i < 16; i++) { /* rank 3 first: heads hold rank 2's */
		obs[2 * i] = per[1][i];
		obs[2 * i + 1] = per[0][i];
	}
	search(&cfg, KNOWN - SLICE, KNOWN + SLICE, &res);
	CHECK(res.status == 0 && res.seed == KNOWN &&
	      res.model == DSFS_DISCOVER_DISTRIBUTED);
	cfg.models = DSFS_DISCOVER_DISTRIBUTED | DSFS_DISCOVER_RANDOM;
	search(&cfg, KNOWN - SLICE, KNOWN + SLICE, &res);
	CHECK(res.status == 0 && res.seed == KNOWN &&
	      res.model == DSFS_DISCOVER_DISTRIBUTED);
	CHECK(dsfs_discover_false_matches(&cfg) < 1e-20);
	cfg.models = DSFS_DISCOVER_RANDOM;
	search(&cfg, KNOWN - SLICE, KNOWN + SLICE, &res);
	CHECK(res.status == -ENOENT);
	/* RandomSampler's opens: the first 32 of the permutation. */
	memcpy(obs, perm, sizeof(obs));
	cfg.models = DSFS_DISCOVER_DISTRIBUTED | DSFS_DISCOVER_RANDOM;
	search(&cfg, KNOWN - SLICE, KNOWN + SLICE, &res);
	CHECK(res.status == 0 && res.seed == KNOWN &&
	      res.model == DSFS_DISCOVER_RANDOM);
	/* Ranks out of reach are refused. */
	cfg.rank_first = DSFS_DISCOVER_MAX_POS + 1;
	cfg.rank_last = cfg.world = DSFS_DISCOVER_MAX_POS + 2;
	CHECK(dsfs_discover_false_matches(&cfg) < 0);
}

/* Opens of no seed (see bench/discover.c): a search runs to its end. */
static void spread_opens(uint32_t n, uint32_t *obs, uint32_t count)
{
	uint32_t i;

	for (i = 0; i < count; i++)
		obs[i] = n - 1 - i * (n / count);
}

static void test_cancel(void)
{
	uint32_t obs[16];
	struct dsfs_discover_cfg cfg = { .n = 1281167,
					 .observed = obs,
					 .nobserved = 16,
					 .heads = 8,
					 .window = 256,
					 .first = 0,
					 .end = DSFS_DISCOVER_SEEDS,
					 .threads = 2,
					 .prio = DSFS_DISCOVER_NORMAL };
	struct dsfs_discover_result r;
	struct dsfs_discover *d = NULL;
	double t;

	spread_opens(cfg.n, obs, 16);
	CHECK(dsfs_discover_start(&cfg, &d) == 0);
	if (!d)
		return;
	/* Progress is readable while it runs; the caller never blocks. */
	t = now();
	do {
		dsfs_discover_result(d, &r);
		CHECK(r.status == -EINPROGRESS && !dsfs_discover_done(d));
		usleep(1000);
	} while (!r.tested && now() - t < 30);
	CHECK(r.tested > 0 && r.seconds > 0);
	CHECK(dsfs_discover_wait(d, 10) == -ETIMEDOUT);
	t = now();
	dsfs_discover_cancel(d);
	CHECK(dsfs_discover_wait(d, 10000) == 0);
	CHECK(now() - t < 1.0); /* a chunk is ~1 ms; allow a loaded machine */
	dsfs_discover_result(d, &r);
	CHECK(r.status == -ECANCELED && r.tested < DSFS_DISCOVER_SEEDS);
	dsfs_discover_cancel(d); /* idempotent */
	dsfs_discover_free(d);

	/* free() of a running search cancels it. */
	d = NULL;
	CHECK(dsfs_discover_start(&cfg, &d) == 0);
	t = now();
	dsfs_discover_free(d);
	CHECK(now() - t < 1.0);
}

struct done_probe {
	atomic_int calls;
	int policy, nice;
};

static void on_done(void *arg)
{
	struct done_probe *p = arg;

	p->policy = sched_getscheduler(0);
	p->nice = getpriority(PRIO_PROCESS, (id_t)gettid());
	atomic_fetch_add(&p->calls, 1);
}

/* The default priority is idle, and on_done runs once, on a worker. */
static void test_done_callback(void)
{
	struct done_probe probe = { .policy = -1 };
	uint32_t obs[16];
	struct dsfs_discover_cfg cfg = { .n = 50000,
					 .observed = obs,
					 .nobserved = 16,
					 .first = 1000,
					 .end = 1000 + (1 << 16),
					 .threads = 1,
					 .on_done = on_done,
					 .arg = &probe };
	int mine = getpriority(PRIO_PROCESS, (id_t)gettid());
	struct dsfs_discover *d = NULL;

	spread_opens(cfg.n, obs, 16);
	CHECK(dsfs_discover_start(&cfg, &d) == 0);
	if (!d)
		return;
	CHECK(dsfs_discover_wait(d, 120000) == 0);
	dsfs_discover_free(d); /* joins: on_done has returned */
	CHECK(atomic_load(&probe.calls) == 1);
	CHECK(probe.policy == SCHED_IDLE || probe.nice == 19);
	/* the caller keeps its own priority */
	CHECK(getpriority(PRIO_PROCESS, (id_t)gettid()) == mine);
	CHECK(sched_getscheduler(0) == SCHED_OTHER);
}

static void test_parse_range(void)
{
	uint64_t a = 7, b = 7;

	CHECK(dsfs_discover_parse_range("0-4294967296", &a, &b) == 0);
	CHECK(a == 0 && b == DSFS_DISCOVER_SEEDS);
	CHECK(dsfs_discover_parse_range("5-6", &a, &b) == 0 && a == 5 &&
	      b == 6);
	CHECK(dsfs_discover_parse_range("6-6", &a, &b) == -EINVAL);
	CHECK(dsfs_discover_parse_range("1-4294967297", &a, &b) == -ERANGE);
	CHECK(dsfs_discover_parse_range("-5", &a, &b) == -EINVAL);
	CHECK(dsfs_discover_parse_range("5", &a, &b) == -EINVAL);
	CHECK(dsfs_discover_parse_range("5-", &a, &b) == -EINVAL);
	CHECK(dsfs_discover_parse_range("0x5-9", &a, &b) == -EINVAL);
	CHECK(a == 5 && b == 6);
}

static void check_refused(const struct dsfs_discover_cfg *cfg, int want)
{
	static char poison;
	/* not NULL before: start() must clear it */
	struct dsfs_discover *d = (struct dsfs_discover *)&poison;

	CHECK(dsfs_discover_start(cfg, &d) == want);
	CHECK(d == NULL);
}

static void test_bad_cfg(void)
{
	uint32_t obs[4] = { 1, 2, 3, 4 }, dup[3] = { 5, 6, 5 },
		 big[2] = { 9, 10 };
	struct dsfs_discover_cfg ok = { .n = 10,
					.observed = obs,
					.nobserved = 4,
					.first = 0,
					.end = 1 },
				 c;
	struct dsfs_discover_result r;

	c = ok, c.n = 1, check_refused(&c, -EINVAL);
	c = ok, c.n = DSFS_SAMPLER_TORCH_MAX_N, check_refused(&c, -EINVAL);
	c = ok, c.nobserved = 0, check_refused(&c, -EINVAL);
	c = ok, c.observed = NULL, check_refused(&c, -EINVAL);
	c = ok, c.heads = 5, check_refused(&c, -EINVAL);
	c = ok, c.window = DSFS_DISCOVER_MAX_WINDOW + 1,
	check_refused(&c, -EINVAL);
	c = ok, c.end = 0, check_refused(&c, -EINVAL);
	c = ok, c.end = DSFS_DISCOVER_SEEDS + 1, check_refused(&c, -EINVAL);
	c = ok, c.threads = DSFS_DISCOVER_MAX_THREADS + 1,
	check_refused(&c, -EINVAL);
	c = ok, c.path = (enum dsfs_discover_path)99,
	check_refused(&c, -EINVAL);
	c = ok, c.prio = (enum dsfs_discover_prio)99,
	check_refused(&c, -EINVAL);
	c = ok, c.observed = dup, c.nobserved = 3, check_refused(&c, -EINVAL);
	c = ok, c.observed = big, c.nobserved = 2, check_refused(&c, -EINVAL);
	CHECK(dsfs_discover_false_matches(&c) >= 0); /* only fields checked */
	c = ok, c.n = 1;
	CHECK(dsfs_discover_false_matches(&c) < 0);
	/* A tiny data set: every seed whose p[0] is a head passes. */
	c = ok, c.end = DSFS_DISCOVER_SEEDS, c.nobserved = 1, c.window = 9;
	CHECK(dsfs_discover_false_matches(&c) > 4e8);
	/* One seed, one thread: the smallest search. */
	c = ok, c.observed = obs, c.nobserved = 1, c.window = 9;
	c.first = 77, c.end = 78, c.prio = DSFS_DISCOVER_NORMAL;
	search(&c, 77, 78, &r);
	CHECK(r.tested == 1);
	CHECK(r.status ==
	      (dsfs_discover_first_output(77) % 10 == 1 ? 0 : -ENOENT));
	CHECK(dsfs_discover_path_name(DSFS_DISCOVER_AVX512) &&
	      !dsfs_discover_path_name((enum dsfs_discover_path)5));
	CHECK(dsfs_discover_resolve(DSFS_DISCOVER_AUTO) != DSFS_DISCOVER_AUTO);
}

int main(void)
{
	alarm(600); /* a hang fails the test instead of blocking make */
	fprintf(stderr, "unit-discover: fastest path here: %s\n",
		dsfs_discover_path_name(
			dsfs_discover_resolve(DSFS_DISCOVER_AUTO)));
	test_first_output();
	test_division();
	test_prefix();
	test_paths_agree();
	test_two_probes();
	test_find_distributed();
	test_find_known();
	test_cancel();
	test_done_callback();
	test_bad_cfg();
	test_parse_range();
	return UNIT_DONE();
}
