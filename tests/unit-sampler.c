// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * unit-sampler: MT19937 reference outputs, exact seed parsing and arithmetic,
 * seed range checks, and the shape of every sampler's order (permutations,
 * DistributedSampler padding, edge cases n = 0, 1, 2), a weights file's
 * reading and what its weights allow.  The values of the
 * orders are compared with the real libraries by t-sampler-golden.sh.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mt19937.h"
#include "sampler.h"
#include "unit-check.h"
#include "weights.h"

static void test_mt_reference(void)
{
	/* mt19937ar.out: init_by_array({0x123, 0x234, 0x345, 0x456}, 4). */
	static const uint32_t key[] = { 0x123, 0x234, 0x345, 0x456 };
	static const uint32_t first[] = { 1067595299U, 955945823U, 477289528U,
					  4107218783U, 4228976476U };
	struct dsfs_mt19937 mt;
	uint32_t i, v = 0;

	dsfs_mt_init_by_array(&mt, key, 4);
	for (i = 0; i < 5; i++)
		CHECK(dsfs_mt_next32(&mt) == first[i]);
	/* C++11 [rand.predef]: the 10000th output of std::mt19937 (seed 5489). */
	dsfs_mt_init_genrand(&mt, 5489);
	for (i = 0; i < 10000; i++)
		v = dsfs_mt_next32(&mt);
	CHECK(v == 4123659995U);
	/* CPython 3.11: random.Random(0).getrandbits(32), from /usr/bin/python3. */
	dsfs_mt_init_by_array(&mt, (const uint32_t[]){ 0 }, 1);
	CHECK(dsfs_mt_next32(&mt) == 3626764237U);
}

/* skip(k) leaves the state k next32() calls would, across block edges. */
static void test_mt_skip(void)
{
	static const uint64_t ks[] = { 0, 1, 623, 624, 625, 1247, 1248, 5000 };
	static const uint32_t pre[] = { 0, 1, 623, 624 };
	struct dsfs_mt19937 a, b;
	unsigned i, j;
	uint64_t k;

	for (i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		for (j = 0; j < sizeof(pre) / sizeof(pre[0]); j++) {
			dsfs_mt_init_genrand(&a, 42);
			dsfs_mt_init_genrand(&b, 42);
			for (k = 0; k < pre[j]; k++) {
				dsfs_mt_next32(&a);
				dsfs_mt_next32(&b);
			}
			for (k = 0; k < ks[i]; k++)
				dsfs_mt_next32(&a);
			dsfs_mt_skip(&b, ks[i]);
			CHECK(dsfs_mt_next32(&a) == dsfs_mt_next32(&b));
			CHECK(dsfs_mt_next32(&a) == dsfs_mt_next32(&b));
		}
	}
}

static void test_seed_parse(void)
{
	static const char *const bad[] = { "",	  "-",	"+1",	" 1",
					   "1 ",  "1a", "0x10", "1_000",
					   "--1", "1-", "1.0" };
	struct dsfs_seed s;
	unsigned i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(dsfs_seed_parse(bad[i], &s) == -EINVAL);
	CHECK(dsfs_seed_parse("0", &s) == 0 && s.nwords == 0 && !s.negative);
	CHECK(!strcmp(s.text, "0"));
	CHECK(dsfs_seed_parse("-0", &s) == 0 && !s.negative &&
	      !strcmp(s.text, "0"));
	CHECK(dsfs_seed_parse("007", &s) == 0 && !strcmp(s.text, "7"));
	CHECK(dsfs_seed_parse("-7", &s) == 0 && s.negative && s.nwords == 1 &&
	      s.w[0] == 7 && !strcmp(s.text, "-7"));
	CHECK(dsfs_seed_low32(&s) == 0xfffffff9U);
	CHECK(dsfs_seed_parse("18446744073709551621", &s) == 0); /* 2^64 + 5 */
	CHECK(s.nwords == 3 && s.w[0] == 5 && s.w[1] == 0 && s.w[2] == 1);
	CHECK(!strcmp(s.text, "18446744073709551621"));
	CHECK(dsfs_seed_parse("1000000000000000000000000000000", &s) == 0);
	CHECK(!strcmp(s.text, "1000000000000000000000000000000")); /* 10^30 */
	CHECK(s.nwords == 4 && s.w[0] == 0x40000000U && s.w[3] == 0xcU);
}

/* 2^4096 - 1 is the largest seed; 2^4096 is refused, in text or by adding. */
static void test_seed_limits(void)
{
	struct dsfs_seed max, s;
	char text[DSFS_SEED_TEXT_MAX];
	size_t len;

	memset(&max, 0, sizeof(max));
	max.nwords = DSFS_SEED_WORDS;
	memset(max.w, 0xff, sizeof(max.w));
	CHECK(dsfs_seed_add(&max, 0, &max) == 0); /* sets the text */
	len = strlen(max.text);
	CHECK(len == 1234 && max.text[len - 1] == '5');
	CHECK(dsfs_seed_parse(max.text, &s) == 0 &&
	      !memcmp(s.w, max.w, sizeof(s.w)));
	memcpy(text, max.text, len + 1);
	text[len - 1] = '6';
	CHECK(dsfs_seed_parse(text, &s) == -ERANGE);
	CHECK(dsfs_seed_add(&max, 1, &s) == -ERANGE);
	CHECK(dsfs_seed_add(&max, -1, &s) == 0 && s.w[0] == 0xfffffffeU);
	max.negative = true;
	CHECK(dsfs_seed_add(&max, -1, &s) == -ERANGE);
	CHECK(dsfs_seed_add(&max, 1, &s) == 0 && s.negative &&
	      s.nwords == DSFS_SEED_WORDS);
}

static void check_add(const char *a, int64_t k, const char *want)
{
	struct dsfs_seed s, r;

	CHECK(dsfs_seed_parse(a, &s) == 0);
	CHECK(dsfs_seed_add(&s, k, &r) == 0);
	if (strcmp(r.text, want))
		fprintf(stderr, "%s + %lld = %s, want %s\n", a, (long long)k,
			r.text, want);
	CHECK(!strcmp(r.text, want));
	CHECK(dsfs_seed_parse(want, &s) == 0 && s.nwords == r.nwords &&
	      s.negative == r.negative && !memcmp(s.w, r.w, r.nwords * 4));
	CHECK(dsfs_seed_add(&r, 0, &r) == 0 &&
	      !strcmp(r.text, want)); /* in place */
}

static void test_seed_add(void)
{
	struct dsfs_seed s;

	check_add("4294967295", 1, "4294967296");
	check_add("18446744073709551615", 1, "18446744073709551616");
	check_add("18446744073709551616", -1, "18446744073709551615");
	check_add("79228162514264337593543950335", 1,
		  "79228162514264337593543950336");
	check_add("-1", 1, "0");
	check_add("0", -5, "-5");
	check_add("-4294967296", 1, "-4294967295");
	check_add("-4294967295", -1, "-4294967296");
	check_add("3", -5, "-2");
	check_add("-3", 5, "2");
	check_add("0", INT64_MIN, "-9223372036854775808");
	check_add("9223372036854775808", INT64_MIN, "0");
	check_add("1", INT64_MAX, "9223372036854775808");
	check_add("-18446744073709551616", INT64_MAX, "-9223372036854775809");
	dsfs_seed_from_i64(INT64_MIN, &s);
	CHECK(!strcmp(s.text, "-9223372036854775808") && s.negative);
	dsfs_seed_from_i64(0, &s);
	CHECK(!strcmp(s.text, "0") && !s.nwords && !s.negative);
}

static void test_names(void)
{
	enum dsfs_sampler k;
	int i;

	for (i = DSFS_SAMPLER_NONE; i <= DSFS_SAMPLER_NUMPY_GENERATOR; i++) {
		CHECK(dsfs_sampler_name((enum dsfs_sampler)i) != NULL);
		CHECK(dsfs_sampler_from_name(
			      dsfs_sampler_name((enum dsfs_sampler)i), &k) ==
			      0 &&
		      (int)k == i);
	}
	CHECK(dsfs_sampler_from_name("torch-distributed", &k) == 0 &&
	      k == DSFS_SAMPLER_TORCH_DISTRIBUTED);
	CHECK(dsfs_sampler_from_name("Torch-random", &k) == -EINVAL);
	CHECK(dsfs_sampler_from_name("", &k) == -EINVAL);
	CHECK(dsfs_sampler_name((enum dsfs_sampler)99) == NULL);
}

static struct dsfs_sampler_cfg cfg_of(enum dsfs_sampler kind, const char *seed)
{
	struct dsfs_sampler_cfg cfg = { .kind = kind, .world = 1 };

	CHECK(dsfs_seed_parse(seed, &cfg.seed) == 0);
	return cfg;
}

static int check_seed(enum dsfs_sampler kind, const char *seed, uint64_t epoch)
{
	struct dsfs_sampler_cfg cfg = cfg_of(kind, seed);
	char why[200] = "unset";
	int ret = dsfs_sampler_check_epoch(&cfg, epoch, why, sizeof(why));

	CHECK(ret ? strstr(why, "seed=") == why : why[0] == '\0');
	if (!epoch)
		CHECK(dsfs_sampler_check(&cfg, NULL, 0) == ret);
	return ret;
}

static void test_check(void)
{
	const enum dsfs_sampler T = DSFS_SAMPLER_TORCH_RANDOM,
				D = DSFS_SAMPLER_TORCH_DISTRIBUTED,
				P = DSFS_SAMPLER_PYTHON_SHUFFLE,
				N = DSFS_SAMPLER_NUMPY_PERMUTATION,
				G = DSFS_SAMPLER_NUMPY_GENERATOR;
	struct dsfs_sampler_cfg cfg;
	char why[200];

	CHECK(check_seed(T, "18446744073709551615", 0) == 0);
	CHECK(check_seed(T, "18446744073709551616", 0) == -ERANGE);
	CHECK(check_seed(T, "-9223372036854775808", 0) == 0);
	CHECK(check_seed(T, "-9223372036854775809", 0) == -ERANGE);
	CHECK(check_seed(T, "18446744073709551615", 5) == 0); /* seeded once */
	CHECK(check_seed(D, "18446744073709551615", 0) == 0);
	CHECK(check_seed(D, "18446744073709551615", 1) == -ERANGE);
	CHECK(check_seed(D, "-9223372036854775809", 1) == 0);
	CHECK(check_seed(P, "-1000000000000000000000000000000", 3) == 0);
	CHECK(check_seed(N, "4294967295", 0) == 0);
	CHECK(check_seed(N, "4294967295", 1) == -ERANGE);
	CHECK(check_seed(N, "4294967296", 0) == -ERANGE);
	CHECK(check_seed(N, "-1", 0) == -ERANGE);
	CHECK(check_seed(N, "-1", 1) == 0);
	CHECK(check_seed(G, "0", 0) == 0);
	CHECK(check_seed(G, "340282366920938463463374607431768211456", 2) == 0);
	CHECK(check_seed(G, "-1", 0) == -ERANGE);
	CHECK(check_seed(G, "-2", 1) == -ERANGE);
	CHECK(check_seed(G, "-2", 2) == 0);
	cfg = cfg_of(N, "4294967295");
	CHECK(dsfs_sampler_check_epoch(&cfg, 1, why, sizeof(why)) == -ERANGE);
	CHECK(strstr(why, "epoch 1") && strstr(why, "4294967296"));
	cfg = cfg_of(D, "1");
	cfg.world = 0;
	CHECK(dsfs_sampler_check(&cfg, why, sizeof(why)) == -EINVAL);
	CHECK(strstr(why, "world=0") == why);
}

/* Errors that order() reports before any work. */
static void test_order_errors(void)
{
	struct dsfs_sampler_cfg cfg = cfg_of(DSFS_SAMPLER_NONE, "1");
	uint32_t *o = NULL;
	uint64_t c;

	CHECK(dsfs_sampler_order(&cfg, 10, 0, 0, &o, &c) == -EINVAL);
	cfg.kind = DSFS_SAMPLER_TORCH_RANDOM;
	CHECK(dsfs_sampler_order(&cfg, DSFS_SAMPLER_TORCH_MAX_N, 0, 0, &o,
				 &c) == -EFBIG);
	cfg.kind = DSFS_SAMPLER_TORCH_DISTRIBUTED;
	CHECK(dsfs_sampler_order(&cfg, DSFS_SAMPLER_TORCH_MAX_N, 0, 0, &o,
				 &c) == -EFBIG);
	cfg.world = 3;
	CHECK(dsfs_sampler_order(&cfg, 10, 0, 3, &o, &c) == -EINVAL);
	cfg.world = 0;
	CHECK(dsfs_sampler_order(&cfg, 10, 0, 0, &o, &c) == -EINVAL);
	cfg.kind = DSFS_SAMPLER_PYTHON_SHUFFLE;
	CHECK(dsfs_sampler_order(&cfg, (uint64_t)1 << 31, 0, 0, &o, &c) ==
	      -EFBIG);
	cfg = cfg_of(DSFS_SAMPLER_NUMPY_PERMUTATION, "4294967295");
	CHECK(dsfs_sampler_order(&cfg, 10, 1, 0, &o, &c) == -ERANGE);
	cfg.seeded_once = true; /* RandomState(4294967295) every epoch */
	CHECK(dsfs_sampler_order(&cfg, 10, 1, 0, &o, &c) == 0);
	free(o);
	o = NULL;
	cfg = cfg_of(DSFS_SAMPLER_TORCH_RANDOM, "1");
	cfg.inplace = true;
	CHECK(dsfs_sampler_order(&cfg, 10, 0, 0, &o, &c) == -EINVAL);
	cfg = cfg_of(DSFS_SAMPLER_TORCH_DISTRIBUTED, "1");
	cfg.seeded_once = true;
	CHECK(dsfs_sampler_order(&cfg, 10, 0, 0, &o, &c) == -EINVAL);
	cfg = cfg_of(DSFS_SAMPLER_TORCH_RANDOM, "1");
	CHECK(dsfs_sampler_order(&cfg, 1000, UINT64_MAX / 4, 0, &o, &c) ==
	      -EOVERFLOW);
	CHECK(o == NULL);
}

/* The replay of the epochs before the one asked for is bounded, and
 * refused (at once) past the bound. */
static void test_replay(void)
{
	struct dsfs_sampler_cfg cfg = cfg_of(DSFS_SAMPLER_PYTHON_SHUFFLE, "1");
	uint64_t e = DSFS_SAMPLER_MAX_REPLAY / 1000000, c;
	char why[512];
	uint32_t *o = NULL;

	/* Seeded afresh each epoch: nothing to replay. */
	CHECK(dsfs_sampler_replay(&cfg, 1000000, 1u << 30) == 0);
	CHECK(dsfs_sampler_check_replay(&cfg, 1000000, 1u << 30, why,
					sizeof(why)) == 0);
	cfg.inplace = true; /* n steps an epoch before */
	CHECK(dsfs_sampler_replay(&cfg, 1000000, 7) == 7000000);
	CHECK(dsfs_sampler_check_replay(&cfg, 1000000, e, why, sizeof(why)) ==
	      0);
	CHECK(dsfs_sampler_check_replay(&cfg, 1000000, e + 1, why,
					sizeof(why)) == -E2BIG);
	CHECK(strstr(why, "epoch=8590: sampler=python-shuffle") == why);
	CHECK(dsfs_sampler_order(&cfg, 1000000, e + 1, 0, &o, &c) == -E2BIG);
	CHECK(o == NULL);
	CHECK(dsfs_sampler_replay(&cfg, 1u << 31, UINT64_MAX / 2) ==
	      UINT64_MAX);
	CHECK(dsfs_sampler_check_replay(&cfg, 1u << 31, UINT64_MAX / 2, NULL,
					0) == -EOVERFLOW);
	/* torch-random: 2 (n - 1) + 2 outputs an epoch and 2 before the
	 * first, 16 outputs a step. */
	cfg = cfg_of(DSFS_SAMPLER_TORCH_RANDOM, "1");
	CHECK(dsfs_sampler_replay(&cfg, 1000, 16) == (16 * 2000 + 2) / 16);
	CHECK(dsfs_sampler_check_replay(&cfg, 100, 1000000000, why,
					sizeof(why)) == -E2BIG);
	CHECK(strstr(why, "epoch=1000000000: sampler=torch-random reaches epoch 1000000000 of 100 samples") == why);
	CHECK(dsfs_sampler_check_replay(&cfg, 100, 1000000, why,
					sizeof(why)) == 0);
}

static int is_permutation(const uint32_t *o, uint64_t count, uint64_t n)
{
	char *seen = calloc(n + 1, 1);
	int ok = seen && count == n;
	uint64_t i;

	for (i = 0; ok && i < count; i++) {
		ok = o[i] < n && !seen[o[i]];
		if (ok)
			seen[o[i]] = 1;
	}
	free(seen);
	return ok;
}

static void test_permutations(void)
{
	static const enum dsfs_sampler kinds[] = {
		DSFS_SAMPLER_SEQUENTIAL, DSFS_SAMPLER_TORCH_RANDOM,
		DSFS_SAMPLER_PYTHON_SHUFFLE, DSFS_SAMPLER_NUMPY_PERMUTATION,
		DSFS_SAMPLER_NUMPY_GENERATOR
	};
	static const uint64_t ns[] = { 0, 1, 2, 3, 7, 1000 };
	unsigned i, j, e;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		for (j = 0; j < sizeof(ns) / sizeof(ns[0]); j++) {
			for (e = 0; e < 3; e++) {
				struct dsfs_sampler_cfg cfg =
					cfg_of(kinds[i], "42");
				uint32_t *o = NULL;
				uint64_t c = 99;

				cfg.persistent_workers = e == 2;
				CHECK(dsfs_sampler_order(&cfg, ns[j], e, 0, &o,
							 &c) == 0);
				CHECK(o != NULL && is_permutation(o, c, ns[j]));
				if (kinds[i] == DSFS_SAMPLER_SEQUENTIAL)
					CHECK(c < 2 ||
					      (o[0] == 0 && o[c - 1] == c - 1));
				free(o);
			}
		}
	}
}

/* Epochs draw different orders; persistent workers change epochs >= 1 only. */
static void test_torch_random_epochs(void)
{
	struct dsfs_sampler_cfg cfg = cfg_of(DSFS_SAMPLER_TORCH_RANDOM, "-7");
	uint32_t *a, *b, *c;
	uint64_t na, nb, nc;

	CHECK(dsfs_sampler_order(&cfg, 1000, 0, 0, &a, &na) == 0);
	CHECK(dsfs_sampler_order(&cfg, 1000, 1, 0, &b, &nb) == 0);
	cfg.persistent_workers = true;
	CHECK(dsfs_sampler_order(&cfg, 1000, 0, 0, &c, &nc) == 0);
	CHECK(!memcmp(a, c, 1000 * 4));
	CHECK(memcmp(a, b, 1000 * 4) != 0);
	free(c);
	CHECK(dsfs_sampler_order(&cfg, 1000, 1, 0, &c, &nc) == 0);
	CHECK(memcmp(b, c, 1000 * 4) != 0);
	free(a);
	free(b);
	free(c);
}

/* RandomSampler(num_samples=K) against the default's orders and itself. */
static void test_num_samples(void)
{
	struct dsfs_sampler_cfg cfg = cfg_of(DSFS_SAMPLER_TORCH_RANDOM, "9");
	uint32_t *a, *b;
	uint64_t na, nb, e;

	CHECK(dsfs_sampler_count(&cfg, 7) == 7);
	cfg.num_samples = 17;
	CHECK(dsfs_sampler_count(&cfg, 7) == 17);
	CHECK(dsfs_sampler_count(&cfg, 0) == 0);
	/* K = 2n + 3: two whole permutations, then 3 distinct samples. */
	CHECK(dsfs_sampler_order(&cfg, 7, 1, 0, &a, &na) == 0);
	CHECK(na == 17 && is_permutation(a, 7, 7) &&
	      is_permutation(a + 7, 7, 7));
	CHECK(a[14] != a[15] && a[15] != a[16] && a[14] != a[16]);
	free(a);
	/* K = n is the default; K < n shares its epoch 0's head only. */
	for (e = 0; e < 3; e++) {
		cfg.num_samples = 0;
		CHECK(dsfs_sampler_order(&cfg, 100, e, 0, &a, &na) == 0);
		cfg.num_samples = 100;
		CHECK(dsfs_sampler_order(&cfg, 100, e, 0, &b, &nb) == 0);
		CHECK(na == nb && !memcmp(a, b, na * 4));
		free(b);
		cfg.num_samples = 30;
		CHECK(dsfs_sampler_order(&cfg, 100, e, 0, &b, &nb) == 0);
		CHECK(nb == 30 && !memcmp(a, b, 30 * 4) == (e == 0));
		free(a);
		/* every K < n draws one permutation an epoch: heads agree */
		cfg.num_samples = 99;
		CHECK(dsfs_sampler_order(&cfg, 100, e, 0, &a, &na) == 0);
		CHECK(na == 99 && !memcmp(a, b, 30 * 4));
		free(a);
		free(b);
	}
	cfg.num_samples = DSFS_SAMPLER_MAX_N + 1ULL;
	CHECK(dsfs_sampler_order(&cfg, 10, 0, 0, &a, &na) == -EINVAL);
	cfg = cfg_of(DSFS_SAMPLER_PYTHON_SHUFFLE, "9");
	cfg.num_samples = 5;
	CHECK(dsfs_sampler_order(&cfg, 10, 0, 0, &a, &na) == -EINVAL);
	CHECK(dsfs_sampler_count(&cfg, 10) == 10);
	cfg.num_samples = 0;
	cfg.replacement = true;
	CHECK(dsfs_sampler_order(&cfg, 10, 0, 0, &a, &na) == -EINVAL);
}

/* replacement: one output a sample, so epochs are slices of one stream. */
static void test_replacement(void)
{
	struct dsfs_sampler_cfg cfg = cfg_of(DSFS_SAMPLER_TORCH_RANDOM, "3");
	uint32_t *a, *b, i, hist[50] = { 0 };
	uint64_t na, nb;

	cfg.replacement = true;
	cfg.sampler_generator = true; /* no base seed between epochs */
	cfg.num_samples = 1000;
	CHECK(dsfs_sampler_order(&cfg, 50, 0, 0, &a, &na) == 0);
	CHECK(na == 1000);
	cfg.num_samples = 400;
	CHECK(dsfs_sampler_order(&cfg, 50, 1, 0, &b, &nb) == 0);
	CHECK(nb == 400 && !memcmp(a + 400, b, 400 * 4));
	for (i = 0; i < na; i++)
		hist[a[i] < 50 ? a[i] : 0]++;
	for (i = 0; i < 50; i++) /* 20 expected each: drawn, and repeated */
		CHECK(hist[i] >= 2 && hist[i] <= 60);
	free(a);
	free(b);
	cfg.num_samples = 0; /* n draws */
	CHECK(dsfs_sampler_order(&cfg, 50, 0, 0, &a, &na) == 0);
	CHECK(na == 50);
	free(a);
}

/*
 * Every rank gets num_samples indices; interleaved by rank they are one
 * permutation repeated cyclically (or cut, with drop_last).
 */
static void check_distributed(uint64_t n, uint32_t world, bool drop_last)
{
	struct dsfs_sampler_cfg cfg =
		cfg_of(DSFS_SAMPLER_TORCH_DISTRIBUTED, "5");
	uint64_t want = drop_last ? n / world : (n + world - 1) / world;
	uint64_t total = want * world, i, c;
	uint32_t *all = calloc(total + 1, 4), *o, r;

	cfg.world = world;
	cfg.drop_last = drop_last;
	for (r = 0; r < world; r++) {
		CHECK(dsfs_sampler_order(&cfg, n, 2, r, &o, &c) == 0);
		CHECK(c == want);
		for (i = 0; i < c && c == want; i++)
			all[r + i * world] = o[i];
		free(o);
	}
	if (drop_last || total <= n) {
		char *seen = calloc(n + 1, 1);

		for (i = 0; i < total; i++) {
			CHECK(all[i] < n && !seen[all[i]]);
			seen[all[i] < n ? all[i] : n] = 1;
		}
		free(seen);
	} else {
		CHECK(is_permutation(all, n, n));
		for (i = n; i < total; i++)
			CHECK(all[i] == all[i % n]);
	}
	free(all);
}

static void test_distributed(void)
{
	static const uint64_t ns[] = { 0, 1, 2, 7, 1000 };
	static const uint32_t worlds[] = { 1, 3, 4, 8 };
	unsigned i, j;

	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		for (j = 0; j < sizeof(worlds) / sizeof(worlds[0]); j++) {
			check_distributed(ns[i], worlds[j], false);
			check_distributed(ns[i], worlds[j], true);
		}
	}
}

/* subset: one randperm an epoch, so epochs are a stream's permutations. */
static void test_subset(void)
{
	struct dsfs_sampler_cfg cfg = cfg_of(DSFS_SAMPLER_TORCH_RANDOM, "4");
	uint32_t *a, *b;
	uint64_t na, nb;

	cfg.sampler_generator = true; /* no base seed between epochs */
	cfg.num_samples = 60;	      /* 3 whole permutations of 20 */
	CHECK(dsfs_sampler_order(&cfg, 20, 0, 0, &a, &na) == 0);
	cfg.num_samples = 0;
	cfg.subset = true;
	CHECK(dsfs_sampler_order(&cfg, 20, 2, 0, &b, &nb) == 0);
	CHECK(na == 60 && nb == 20 && !memcmp(a + 40, b, 20 * 4));
	free(a);
	free(b);
	cfg.num_samples = 5;
	CHECK(dsfs_sampler_order(&cfg, 20, 0, 0, &a, &na) == -EINVAL);
	cfg.num_samples = 0;
	cfg.replacement = true;
	CHECK(dsfs_sampler_order(&cfg, 20, 0, 0, &a, &na) == -EINVAL);
}

/* FILE (written with text) read for n samples: dsfs_weights_load's result,
 * *cum set on success. */
static int weights_of(const char *text, uint64_t n, double **cum)
{
	char path[] = "/tmp/unit-sampler.XXXXXX", why[256] = "";
	int fd = mkstemp(path), err;
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
	err = dsfs_weights_load(path, n, cum, why, sizeof(why));
	CHECK(!err == !why[0] && !strchr(why, '\n'));
	unlink(path);
	return err;
}

static void test_weights(void)
{
	struct dsfs_sampler_cfg cfg = cfg_of(DSFS_SAMPLER_TORCH_RANDOM, "9");
	uint64_t count, i;
	uint32_t *a;
	double *cum;

	/* spaces and CRLF line ends, as Python's float() takes them */
	CHECK(weights_of(" 1\r\n0\n\t3.0 \n0.0\n", 4, &cum) == 0);
	CHECK(cum[0] == 0.25 && cum[1] == 0.25 && cum[2] == 1 && cum[3] == 1);
	cfg.num_samples = 1000;
	cfg.weights = cum;
	CHECK(dsfs_sampler_order(&cfg, 4, 0, 0, &a, &count) == -EINVAL);
	cfg.replacement = true;
	CHECK(dsfs_sampler_order(&cfg, 4, 0, 0, &a, &count) == 0);
	CHECK(count == 1000);
	for (i = 0; i < count; i++) /* weight 0: never drawn */
		CHECK(a[i] == 0 || a[i] == 2);
	free(a);
	free(cum);
	CHECK(weights_of("1\n2\n", 3, &cum) == -EINVAL);
	CHECK(weights_of("1\n2\n3\n4\n", 3, &cum) == -EINVAL);
	CHECK(weights_of("1\n\n2\n", 3, &cum) == -EINVAL);
	CHECK(weights_of("1\n-0.0\n2\n", 3, &cum) == 0); /* torch takes it */
	free(cum);
	CHECK(weights_of("1\n-1e-300\n2\n", 3, &cum) == -EINVAL);
	CHECK(weights_of("1\ninf\n2\n", 3, &cum) == -EINVAL);
	CHECK(weights_of("1\n2 3\n2\n", 3, &cum) == -EINVAL);
	CHECK(weights_of("0\n0\n", 2, &cum) == -EINVAL);
	CHECK(weights_of("1e308\n1e308\n", 2, &cum) == -EINVAL);
}

/* DistributedSampler's padding: world 4 over 1,001 samples pads 1,004
 * positions, the last of ranks 1, 2 and 3; each padded position repeats a
 * sample of the permutation's start (another rank's first read). */
static void test_padded(void)
{
	struct dsfs_sampler_cfg cfg;
	uint32_t *o[4], r, j;
	uint64_t count[4];

	memset(&cfg, 0, sizeof(cfg));
	cfg.kind = DSFS_SAMPLER_TORCH_DISTRIBUTED;
	cfg.world = 4;
	dsfs_seed_from_i64(23, &cfg.seed);
	for (r = 0; r < 4; r++) {
		CHECK(dsfs_sampler_order(&cfg, 1001, 0, r, &o[r], &count[r]) == 0);
		CHECK(dsfs_sampler_padded(&cfg, 1001, r) == (r ? 1 : 0));
		CHECK(dsfs_sampler_padded(&cfg, 1000, r) == 0);
	}
	/* Rank r's padded last sample is rank r-1's first. */
	for (r = 1; r < 4; r++)
		CHECK(o[r][count[r] - 1] == o[r - 1][0]);
	cfg.drop_last = true;
	CHECK(dsfs_sampler_padded(&cfg, 1001, 1) == 0);
	cfg.drop_last = false;
	cfg.kind = DSFS_SAMPLER_PYTHON_SHUFFLE;
	CHECK(dsfs_sampler_padded(&cfg, 1001, 1) == 0);
	for (j = 0; j < 4; j++)
		free(o[j]);
}

int main(void)
{
	test_padded();
	test_mt_reference();
	test_mt_skip();
	test_seed_parse();
	test_seed_limits();
	test_seed_add();
	test_names();
	test_check();
	test_order_errors();
	test_replay();
	test_permutations();
	test_torch_random_epochs();
	test_num_samples();
	test_replacement();
	test_subset();
	test_weights();
	test_distributed();
	return UNIT_DONE();
}
