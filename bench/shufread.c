// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * shufread: read every regular file under DIR in a seeded shuffled order,
 * the way a training data loader reads an ImageFolder-style dataset, and
 * report throughput per round.
 *
 *   shufread [-t THREADS] [-s SEED] [-r ROUNDS] DIR
 *
 * The file list is collected once (nftw, FTW_PHYS: symlinks are not
 * followed) and sorted by path; round R (1-based) reads it in the order of a
 * Fisher-Yates shuffle driven by splitmix64 seeded with SEED+R, so every
 * round has its own permutation and a run is reproducible.  Within a round
 * THREADS workers take the next file from a shared atomic index and open,
 * read (256 KiB at a time) and close it.  Any failed open or read prints the
 * path and errno and exits 1: a benchmark must not count bytes it did not
 * get.
 *
 * Output, one line per round:
 *   round=R files=N bytes=B seconds=S files_per_s=X MB_per_s=Y
 * (MB = 10^6 bytes.)
 *
 * Threads: the main thread builds the list and the order; workers only read
 * `order` and `paths` (immutable during a round) and touch `next` and
 * `bytes`, which are atomics.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BUF_SIZE (256 * 1024)
#define MAX_THREADS 1024

struct file_list {
	char **paths;
	size_t n, cap;
};

struct round {
	char *const *paths;  /* sorted file list, read-only */
	const size_t *order; /* permutation of 0..n-1, read-only */
	size_t n;
	atomic_size_t next;	    /* next position in order to take */
	atomic_uint_fast64_t bytes; /* bytes read by all workers */
};

/*
 * nftw() passes no user pointer to its callback, so the list being built
 * lives here; it is written only by the main thread during collection.
 */
static struct file_list collected;

static void die_oom(void)
{
	fprintf(stderr, "shufread: out of memory\n");
	exit(1);
}

static int collect_one(const char *path, const struct stat *st, int type,
		       struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_DNR || type == FTW_NS) {
		fprintf(stderr, "shufread: %s: cannot %s\n", path,
			type == FTW_DNR ? "read directory" : "stat");
		exit(1);
	}
	if (type != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	if (collected.n == collected.cap) {
		size_t cap = collected.cap ? 2 * collected.cap : 1024;
		char **p = realloc(collected.paths, cap * sizeof(*p));

		if (!p)
			die_oom();
		collected.paths = p;
		collected.cap = cap;
	}
	collected.paths[collected.n] = strdup(path);
	if (!collected.paths[collected.n])
		die_oom();
	collected.n++;
	return 0;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, bound) without modulo bias (rejection sampling). */
static uint64_t below(uint64_t *state, uint64_t bound)
{
	uint64_t limit = UINT64_MAX - UINT64_MAX % bound, x;

	do
		x = splitmix64(state);
	while (x >= limit);
	return x % bound;
}

/* order := a permutation of 0..n-1 determined by seed alone. */
static void shuffle(size_t *order, size_t n, uint64_t seed)
{
	uint64_t state = seed;
	size_t i;

	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = n; i > 1; i--) {
		size_t j = below(&state, i), t = order[i - 1];

		order[i - 1] = order[j];
		order[j] = t;
	}
}

/* Read one whole file; returns its size, exits on any error. */
static uint64_t read_file(const char *path, char *buf)
{
	uint64_t total = 0;
	ssize_t n;
	int fd;

	do
		fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		fprintf(stderr, "shufread: open %s: %s (errno %d)\n", path,
			strerror(errno), errno);
		exit(1);
	}
	for (;;) {
		n = read(fd, buf, BUF_SIZE);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "shufread: read %s: %s (errno %d)\n",
				path, strerror(errno), errno);
			exit(1);
		}
		total += (uint64_t)n;
	}
	close(fd);
	return total;
}

static void *worker(void *arg)
{
	struct round *r = arg;
	uint64_t bytes = 0;
	char *buf = malloc(BUF_SIZE);
	size_t i;

	if (!buf)
		die_oom();
	/* Relaxed is enough: the index only hands out distinct positions;
	 * the data read is published by pthread_join. */
	while ((i = atomic_fetch_add_explicit(&r->next, 1,
					      memory_order_relaxed)) < r->n)
		bytes += read_file(r->paths[r->order[i]], buf);
	atomic_fetch_add_explicit(&r->bytes, bytes, memory_order_relaxed);
	free(buf);
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void run_round(unsigned rnd, unsigned nthreads, uint64_t seed,
		      size_t *order)
{
	struct round r = { .paths = collected.paths,
			   .order = order,
			   .n = collected.n };
	pthread_t tids[MAX_THREADS];
	double t0, secs;
	uint64_t bytes;
	unsigned t;
	int err;

	shuffle(order, collected.n, seed + rnd);
	atomic_init(&r.next, 0);
	atomic_init(&r.bytes, 0);
	t0 = now();
	for (t = 0; t < nthreads; t++) {
		err = pthread_create(&tids[t], NULL, worker, &r);
		if (err) {
			fprintf(stderr, "shufread: pthread_create: %s\n",
				strerror(err));
			exit(1);
		}
	}
	for (t = 0; t < nthreads; t++)
		pthread_join(tids[t], NULL);
	secs = now() - t0;
	bytes = atomic_load(&r.bytes);
	printf("round=%u files=%zu bytes=%" PRIu64
	       " seconds=%.3f files_per_s=%.1f MB_per_s=%.1f\n",
	       rnd, collected.n, bytes, secs,
	       secs > 0 ? (double)collected.n / secs : 0.0,
	       secs > 0 ? (double)bytes / 1e6 / secs : 0.0);
	fflush(stdout);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: shufread [-t THREADS] [-s SEED] [-r ROUNDS] DIR\n"
		"  -t THREADS  reader threads, 1 to %d (default 1)\n"
		"  -s SEED     shuffle seed; round R uses SEED+R (default 0)\n"
		"  -r ROUNDS   passes over the whole file set (default 1)\n",
		MAX_THREADS);
	exit(1);
}

static uint64_t parse_num(const char *opt, const char *s, uint64_t min,
			  uint64_t max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || v < min || v > max) {
		fprintf(stderr,
			"shufread: %s %s: give an integer from %" PRIu64
			" to %" PRIu64 "\n",
			opt, s, min, max);
		exit(1);
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned nthreads = 1, rounds = 1, rnd;
	uint64_t seed = 0;
	size_t *order;
	int c;

	while ((c = getopt(argc, argv, "t:s:r:h")) != -1) {
		switch (c) {
		case 't':
			nthreads = (unsigned)parse_num("-t", optarg, 1,
						       MAX_THREADS);
			break;
		case 's':
			seed = parse_num("-s", optarg, 0, UINT64_MAX);
			break;
		case 'r':
			rounds = (unsigned)parse_num("-r", optarg, 1, 1000000);
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();
	if (nftw(argv[optind], collect_one, 64, FTW_PHYS) != 0) {
		fprintf(stderr, "shufread: %s: %s (errno %d)\n", argv[optind],
			strerror(errno), errno);
		return 1;
	}
	qsort(collected.paths, collected.n, sizeof(*collected.paths), cmp_path);
	order = malloc((collected.n ? collected.n : 1) * sizeof(*order));
	if (!order)
		die_oom();
	for (rnd = 1; rnd <= rounds; rnd++)
		run_round(rnd, nthreads, seed, order);
	free(order);
	for (size_t i = 0; i < collected.n; i++)
		free(collected.paths[i]);
	free(collected.paths);
	return 0;
}
