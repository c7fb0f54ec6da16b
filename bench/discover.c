// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * discover: the speed of the seed search (prefetch/discover.h) per kernel,
 * and the time the whole 2^32 seed space would take.
 *
 *   discover [-r A-B] [-t THREADS] [-n N] [-p PATH[,PATH...]]
 *            [-s SCALAR_SHARE] [-k SEED]
 *
 * For each path (default: every one this CPU runs) it searches the seeds
 * [A, B) (default [0, 2^28)) with THREADS workers (default 1) at normal
 * priority and prints one line:
 *   path=P threads=T seeds=S seconds=X seeds_per_s=Y full_scan_s=Z
 *   cpu_s=C seeds_per_cpu_s=R candidates=K found=F
 * full_scan_s extrapolates the wall time to 2^32 seeds at the same rate;
 * seeds_per_cpu_s is the rate per busy core, which other load on the
 * machine disturbs less.  The scalar path
 * takes ~0.7 us a seed, so it scans only the first 1/SCALAR_SHARE of the
 * range (default 256).  Without -k the observed opens belong to no seed of
 * the range (the search runs to the end: found=none); with -k SEED they are
 * the first 16 positions of SEED's permutation, the first 8 of them
 * reversed (8 workers' first opens), and the search stops when it confirms
 * SEED (then the time is the time to discovery, not a rate).  N is the
 * dataset size (default 1281167, ImageNet's training set).
 *
 * Threads: main only; the search runs its own workers.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "discover.h"

#define OBSERVED 16
#define HEADS 8
#define WINDOW 256

struct bench_opts {
	uint64_t first, end;
	unsigned threads;
	uint32_t n;
	unsigned scalar_share;
	const char *paths;
	int64_t known; /* -1: none */
};

static void usage(void)
{
	fprintf(stderr,
		"usage: discover [-r A-B] [-t THREADS] [-n N] [-p PATH[,PATH...]]\n"
		"                [-s SCALAR_SHARE] [-k SEED]\n"
		"  PATH: scalar, vector, avx2, avx512 (default: all this CPU runs)\n");
	exit(2);
}

static uint64_t number(const char *s, uint64_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || v > max) {
		fprintf(stderr,
			"discover: bad number '%s' (at most %" PRIu64 ")\n", s,
			max);
		exit(2);
	}
	return v;
}

static void parse_range(const char *s, struct bench_opts *o)
{
	if (dsfs_discover_parse_range(s, &o->first, &o->end)) {
		fprintf(stderr,
			"discover: -r %s: want A-B, decimal, "
			"A < B <= 4294967296\n",
			s);
		exit(2);
	}
}

static void parse_opts(int argc, char **argv, struct bench_opts *o)
{
	int c;

	*o = (struct bench_opts){ .end = UINT64_C(1) << 28,
				  .threads = 1,
				  .n = 1281167,
				  .scalar_share = 256,
				  .known = -1 };
	while ((c = getopt(argc, argv, "r:t:n:p:s:k:")) != -1) {
		switch (c) {
		case 'r':
			parse_range(optarg, o);
			break;
		case 't':
			o->threads = (unsigned)number(
				optarg, DSFS_DISCOVER_MAX_THREADS);
			break;
		case 'n':
			o->n = (uint32_t)number(optarg, 214748363);
			break;
		case 'p':
			o->paths = optarg;
			break;
		case 's':
			o->scalar_share = (unsigned)number(optarg, 1U << 31);
			break;
		case 'k':
			o->known = (int64_t)number(optarg, UINT32_MAX);
			break;
		default:
			usage();
		}
	}
	if (optind != argc || o->n < 2 * OBSERVED || !o->scalar_share)
		usage();
}

/* The observed opens: SEED's first positions, or indices no seed yields. */
static void observed_opens(const struct bench_opts *o, uint32_t *obs)
{
	uint32_t i, t;

	if (o->known < 0) {
		/*
		 * Spread indices: heads / n of the seeds pass the filter, as
		 * for real opens, and none confirms (all 16 within the first
		 * 272 positions: about (272 / n)^15 per candidate).
		 */
		for (i = 0; i < OBSERVED; i++)
			obs[i] = o->n - 1 - i * (o->n / OBSERVED);
		return;
	}
	if (dsfs_discover_prefix((uint32_t)o->known, o->n, OBSERVED, obs)) {
		fprintf(stderr, "discover: cannot compute seed %" PRId64 "\n",
			o->known);
		exit(1);
	}
	for (i = 0; i < HEADS / 2; i++) {
		t = obs[i];
		obs[i] = obs[HEADS - 1 - i];
		obs[HEADS - 1 - i] = t;
	}
}

/* User and system CPU time of the whole process, workers included. */
static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static int run_path(const struct bench_opts *o, enum dsfs_discover_path path,
		    const uint32_t *obs)
{
	struct dsfs_discover_cfg cfg = {
		.n = o->n,
		.observed = obs,
		.nobserved = OBSERVED,
		.heads = HEADS,
		.window = WINDOW,
		.first = o->first,
		.end = o->end,
		.threads = o->threads,
		.prio = DSFS_DISCOVER_NORMAL,
		.path = path,
	};
	struct dsfs_discover_result r;
	struct dsfs_discover *d;
	char found[16] = "none";
	double cpu;
	int ret;

	if (path == DSFS_DISCOVER_SCALAR && o->known < 0) {
		cfg.end = o->first + (o->end - o->first) / o->scalar_share;
		if (cfg.end == cfg.first)
			cfg.end++;
	}
	cpu = cpu_seconds();
	ret = dsfs_discover_start(&cfg, &d);
	if (ret) {
		fprintf(stderr, "discover: %s: %s\n",
			dsfs_discover_path_name(path), strerror(-ret));
		return 1;
	}
	dsfs_discover_wait(d, -1);
	dsfs_discover_result(d, &r);
	dsfs_discover_free(d);
	cpu = cpu_seconds() - cpu;
	if (r.status == 0)
		snprintf(found, sizeof(found), "%" PRIu32, r.seed);
	printf("path=%s threads=%u seeds=%" PRIu64 " seconds=%.3f "
	       "seeds_per_s=%.4g full_scan_s=%.1f cpu_s=%.3f "
	       "seeds_per_cpu_s=%.4g candidates=%" PRIu64 " found=%s\n",
	       dsfs_discover_path_name(r.path), o->threads, r.tested, r.seconds,
	       r.tested / r.seconds,
	       r.seconds / r.tested * (double)DSFS_DISCOVER_SEEDS, cpu,
	       r.tested / cpu, r.candidates, found);
	fflush(stdout);
	return 0;
}

static bool wanted(const struct bench_opts *o, const char *name)
{
	size_t len = strlen(name);
	const char *p = o->paths;

	if (!p)
		return true;
	for (; (p = strstr(p, name)); p += len)
		if ((p == o->paths || p[-1] == ',') &&
		    (p[len] == '\0' || p[len] == ','))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	static const enum dsfs_discover_path paths[] = {
		DSFS_DISCOVER_SCALAR,
		DSFS_DISCOVER_VECTOR,
		DSFS_DISCOVER_AVX2,
		DSFS_DISCOVER_AVX512,
	};
	uint32_t obs[OBSERVED];
	struct bench_opts o;
	unsigned i;
	int bad = 0;

	parse_opts(argc, argv, &o);
	observed_opens(&o, obs);
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		const char *name = dsfs_discover_path_name(paths[i]);

		if (!wanted(&o, name))
			continue;
		if (!dsfs_discover_path_supported(paths[i])) {
			printf("path=%s unsupported\n", name);
			continue;
		}
		bad |= run_path(&o, paths[i], obs);
	}
	return bad;
}
