// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * shufread: read whole files the way a training data loader does, in a
 * seeded shuffled order or in a given one, and report throughput, per-file
 * latency and, for a rate-limited consumer, the time it waits on reads.
 *
 *   shufread [-t THREADS] [-s SEED | -l LIST] [-r ROUNDS] [-S]
 *            [-R MBPS [-q DEPTH] [-w SECS]] DIR
 *
 * The file list is either every regular file under DIR (nftw, FTW_PHYS:
 * symlinks are not followed), sorted by path, read in round R (1-based) in
 * the order of a Fisher-Yates shuffle driven by splitmix64 seeded with
 * SEED+R; or LIST's lines (paths relative to DIR, e.g. `dsfs --print-plan`
 * output), read in that order every round.  THREADS workers take the next
 * position from a shared atomic index and open, read (256 KiB at a time)
 * and close its file; each file's time from open to close is its latency.
 * Any failed open or read prints the path and errno and exits 1: a
 * benchmark must not count bytes it did not get.
 *
 * With -S, DIR is first listed the way a loader indexes its samples
 * (torchvision's ImageFolder through os.walk): every directory read with
 * readdir, none of its files stat'ed.  Round 1's seconds (and rates) count
 * the listing too, as a loader's first epoch does; its line gives the
 * listing's share as scan_s.  The rate-limited job starts after it.
 *
 * With -R, the main thread stands for a GPU-bound job: it takes finished
 * files from a queue the workers fill (DEPTH files at most, default
 * 2*THREADS, like a DataLoader's prefetch) and "computes" on each for
 * size/MBPS seconds (sleeping to an absolute deadline, so sleep overshoot
 * does not add up).  The time it waits on an empty queue is a stall;
 * stall_frac is the stalled share of the time after the first SECS seconds
 * (-w, default 1; of the whole round if it ends sooner: stall_window_s
 * says which).
 *
 * Output, one line per round (MB = 10^6 bytes, latencies in microseconds):
 *   round=R files=N bytes=B seconds=S files_per_s=X MB_per_s=Y
 *   lat_p50_us=A lat_p99_us=B lat_max_us=C [scan_s=T scan_entries=E]
 *   [rate_MBps=M stall_frac=F stall_s=T stall_window_s=W]
 *
 * Threads: the main thread builds the list and the order and, with -R,
 * consumes; workers only read `order` and `paths` (immutable during a
 * round), take positions from the atomic `next`, write their own slots of
 * `lat` and, with -R, push to the queue under its mutex.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BUF_SIZE (256 * 1024)
/*
 * A reader's buffer starts on a page, as fio's do.  Where it starts
 * matters on some CPUs: on the AMD EPYC of the build machine, the kernel's
 * copy out of the page cache (rep movsb) runs at about a tenth of its speed
 * into a destination 1 to 31 bytes past a page's start, and malloc() of
 * 256 KiB returns just that (a fresh mapping plus its 16-byte header), so
 * every reader measured the quirk more than the file systems.
 */
#define BUF_ALIGN 4096
#define MAX_THREADS 1024

struct file_list {
	char **paths;
	size_t n, cap;
};

/* The finished files' sizes, from the workers to the consumer (-R). */
struct queue {
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	uint64_t *sizes; /* ring of depth slots; protected by lock */
	size_t depth, head, count; /* protected by lock */
};

struct round {
	char *const *paths;  /* file list, read-only */
	const size_t *order; /* permutation of 0..n-1, read-only */
	size_t n;
	double *lat;	     /* lat[i]: seconds for order[i]; slot per position */
	struct queue *q;     /* NULL without -R */
	atomic_size_t next;	    /* next position in order to take */
	atomic_uint_fast64_t bytes; /* bytes read by all workers */
};

struct opts {
	unsigned nthreads, rounds;
	uint64_t seed;
	const char *list;
	double rate;	/* bytes per second, 0: unlimited */
	size_t depth;	/* queue depth with -R, 0: 2 * nthreads */
	double warmup;	/* seconds left out of stall_frac */
	bool scan;	/* -S: list DIR before round 1 */
	double scan_s;	/* how long that took */
	uint64_t scan_entries;
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

static void add_path(char *path)
{
	if (!path)
		die_oom();
	if (collected.n == collected.cap) {
		size_t cap = collected.cap ? 2 * collected.cap : 1024;
		char **p = realloc(collected.paths, cap * sizeof(*p));

		if (!p)
			die_oom();
		collected.paths = p;
		collected.cap = cap;
	}
	collected.paths[collected.n++] = path;
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
	if (type == FTW_F && S_ISREG(st->st_mode))
		add_path(strdup(path));
	return 0;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The list file's lines, each joined to DIR; an empty line is an error. */
static void collect_list(const char *dir, const char *list)
{
	FILE *f = fopen(list, "re");
	char *line = NULL, *path;
	size_t cap = 0, lineno = 0;
	ssize_t len;

	if (!f) {
		fprintf(stderr, "shufread: %s: %s\n", list, strerror(errno));
		exit(1);
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		if (!len) {
			fprintf(stderr, "shufread: %s:%zu: empty line\n", list,
				lineno);
			exit(1);
		}
		if (asprintf(&path, "%s/%s", dir, line) < 0)
			die_oom();
		add_path(path);
	}
	free(line);
	fclose(f);
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

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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

/*
 * Lists the tree under the directory open at dfd (closed here) like
 * os.walk: readdir only, recursing by d_type (an fstatat only where the
 * file system gives no type).  Returns the entries seen; exits on error.
 */
static uint64_t scan_dir(int dfd, const char *path)
{
	DIR *d = fdopendir(dfd);
	uint64_t n = 0;
	struct dirent *e;
	struct stat st;

	if (!d) {
		fprintf(stderr, "shufread: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	while ((errno = 0, e = readdir(d))) {
		bool isdir = e->d_type == DT_DIR;
		int sub;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		n++;
		if (e->d_type == DT_UNKNOWN)
			isdir = fstatat(dirfd(d), e->d_name, &st,
					AT_SYMLINK_NOFOLLOW) == 0 &&
				S_ISDIR(st.st_mode);
		if (!isdir)
			continue;
		sub = openat(dirfd(d), e->d_name,
			     O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub < 0) {
			fprintf(stderr, "shufread: %s/%s: %s\n", path,
				e->d_name, strerror(errno));
			exit(1);
		}
		n += scan_dir(sub, e->d_name);
	}
	if (errno) {
		fprintf(stderr, "shufread: reading %s: %s\n", path,
			strerror(errno));
		exit(1);
	}
	closedir(d);
	return n;
}

/* Blocks while the queue is full: the job has not caught up. */
static void queue_push(struct queue *q, uint64_t size)
{
	pthread_mutex_lock(&q->lock);
	while (q->count == q->depth)
		pthread_cond_wait(&q->not_full, &q->lock);
	q->sizes[(q->head + q->count++) % q->depth] = size;
	pthread_cond_signal(&q->not_empty);
	pthread_mutex_unlock(&q->lock);
}

/* Takes the oldest file's size; *waited: the queue was empty at first. */
static uint64_t queue_pop(struct queue *q, int *waited)
{
	uint64_t size;

	pthread_mutex_lock(&q->lock);
	*waited = q->count == 0;
	while (q->count == 0)
		pthread_cond_wait(&q->not_empty, &q->lock);
	size = q->sizes[q->head];
	q->head = (q->head + 1) % q->depth;
	q->count--;
	pthread_cond_signal(&q->not_full);
	pthread_mutex_unlock(&q->lock);
	return size;
}

static void *worker(void *arg)
{
	struct round *r = arg;
	uint64_t bytes = 0, n;
	char *buf = aligned_alloc(BUF_ALIGN, BUF_SIZE);
	double t;
	size_t i;

	if (!buf)
		die_oom();
	/* Relaxed is enough: the index only hands out distinct positions;
	 * the data read and lat[] are published by pthread_join. */
	while ((i = atomic_fetch_add_explicit(&r->next, 1,
					      memory_order_relaxed)) < r->n) {
		t = now();
		n = read_file(r->paths[r->order[i]], buf);
		r->lat[i] = now() - t;
		bytes += n;
		if (r->q)
			queue_push(r->q, n);
	}
	atomic_fetch_add_explicit(&r->bytes, bytes, memory_order_relaxed);
	free(buf);
	return NULL;
}

/* Sleep until the absolute CLOCK_MONOTONIC time t (seconds). */
static void sleep_until(double t)
{
	struct timespec ts = { .tv_sec = (time_t)t };

	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

/*
 * The GPU-bound job: n files, each computed on for size/rate seconds once
 * it is taken from the queue.  A computation starts when the previous one
 * was due to end (so sleep overshoot does not add up) or, when the queue
 * was empty, when the file arrived.  Returns when the last computation
 * ends; *stall_s gets the waits after `from` (an absolute time), *all_s
 * every wait.  O(n) wakeups.
 */
static double consume(struct round *r, double rate, double from,
		      double *stall_s, double *all_s)
{
	double due = now(), w0, w1;
	uint64_t size;
	int waited;
	size_t i;

	*stall_s = *all_s = 0;
	for (i = 0; i < r->n; i++) {
		sleep_until(due); /* the previous computation */
		w0 = now();
		size = queue_pop(r->q, &waited);
		w1 = now();
		if (waited) {
			*all_s += w1 - w0;
			if (w1 > from)
				*stall_s += w1 - (w0 > from ? w0 : from);
			due = w1;
		}
		due += (double)size / rate;
	}
	sleep_until(due);
	return now();
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* lat sorted in place; prints the p50, p99 and maximum in microseconds. */
static void print_latency(double *lat, size_t n)
{
	if (!n) {
		printf(" lat_p50_us=0 lat_p99_us=0 lat_max_us=0");
		return;
	}
	qsort(lat, n, sizeof(*lat), cmp_double);
	printf(" lat_p50_us=%.0f lat_p99_us=%.0f lat_max_us=%.0f",
	       lat[(n - 1) / 2] * 1e6, lat[(n - 1) * 99 / 100] * 1e6,
	       lat[n - 1] * 1e6);
}

static void start_workers(struct round *r, pthread_t *tids, unsigned n)
{
	unsigned t;
	int err;

	for (t = 0; t < n; t++) {
		err = pthread_create(&tids[t], NULL, worker, r);
		if (err) {
			fprintf(stderr, "shufread: pthread_create: %s\n",
				strerror(err));
			exit(1);
		}
	}
}

static void run_round(unsigned rnd, const struct opts *o, size_t *order,
		      double *lat, struct queue *q)
{
	struct round r = { .paths = collected.paths, .order = order,
			   .n = collected.n, .lat = lat, .q = q };
	double t0, end, secs, total, stall = 0, all = 0, window;
	pthread_t tids[MAX_THREADS];
	uint64_t bytes;
	unsigned t;

	if (!o->list)
		shuffle(order, collected.n, o->seed + rnd);
	atomic_init(&r.next, 0);
	atomic_init(&r.bytes, 0);
	t0 = now();
	start_workers(&r, tids, o->nthreads);
	end = q ? consume(&r, o->rate, t0 + o->warmup, &stall, &all) : 0;
	for (t = 0; t < o->nthreads; t++)
		pthread_join(tids[t], NULL);
	if (!q)
		end = now();
	secs = end - t0;
	/* A loader's first epoch starts with its listing. */
	total = secs + (o->scan && rnd == 1 ? o->scan_s : 0);
	bytes = atomic_load(&r.bytes);
	printf("round=%u files=%zu bytes=%" PRIu64
	       " seconds=%.3f files_per_s=%.1f MB_per_s=%.1f",
	       rnd, collected.n, bytes, total,
	       total > 0 ? (double)collected.n / total : 0.0,
	       total > 0 ? (double)bytes / 1e6 / total : 0.0);
	print_latency(lat, collected.n);
	if (o->scan && rnd == 1)
		printf(" scan_s=%.3f scan_entries=%" PRIu64, o->scan_s,
		       o->scan_entries);
	if (q) {
		window = secs > o->warmup ? secs - o->warmup : secs;
		if (secs <= o->warmup)
			stall = all;
		printf(" rate_MBps=%.1f stall_frac=%.4f stall_s=%.3f stall_window_s=%.3f",
		       o->rate / 1e6, window > 0 ? stall / window : 0.0, stall,
		       window);
	}
	printf("\n");
	fflush(stdout);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: shufread [-t THREADS] [-s SEED | -l LIST] [-r ROUNDS]\n"
		"                [-S] [-R MBPS [-q DEPTH] [-w SECS]] DIR\n"
		"  -t THREADS  reader threads, 1 to %d (default 1)\n"
		"  -s SEED     shuffle seed; round R uses SEED+R (default 0)\n"
		"  -l LIST     read LIST's paths (relative to DIR) in its order\n"
		"  -r ROUNDS   passes over the whole file set (default 1)\n"
		"  -S          list DIR first, as a loader does (timed)\n"
		"  -R MBPS     a job consuming MBPS MB/s; report its stalls\n"
		"  -q DEPTH    files read ahead of the job (default 2*THREADS)\n"
		"  -w SECS     leave the first SECS out of stall_frac (default 1)\n",
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

static double parse_real(const char *opt, const char *s, double min)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min && v < 1e12)) {
		fprintf(stderr, "shufread: %s %s: give a number >= %g\n", opt, s,
			min);
		exit(1);
	}
	return v;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	int c, seeded = 0;

	while ((c = getopt(argc, argv, "t:s:l:r:R:q:w:Sh")) != -1) {
		switch (c) {
		case 't':
			o->nthreads = (unsigned)parse_num("-t", optarg, 1,
							  MAX_THREADS);
			break;
		case 's':
			o->seed = parse_num("-s", optarg, 0, UINT64_MAX);
			seeded = 1;
			break;
		case 'l':
			o->list = optarg;
			break;
		case 'r':
			o->rounds = (unsigned)parse_num("-r", optarg, 1, 1000000);
			break;
		case 'R':
			o->rate = parse_real("-R", optarg, 0.001) * 1e6;
			break;
		case 'q':
			o->depth = parse_num("-q", optarg, 1, 1 << 20);
			break;
		case 'w':
			o->warmup = parse_real("-w", optarg, 0);
			break;
		case 'S':
			o->scan = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1 || (seeded && o->list))
		usage();
	if (!o->depth)
		o->depth = 2 * (size_t)o->nthreads;
}

int main(int argc, char **argv)
{
	struct opts o = { .nthreads = 1, .rounds = 1, .warmup = 1 };
	struct queue q = { .lock = PTHREAD_MUTEX_INITIALIZER,
			   .not_empty = PTHREAD_COND_INITIALIZER,
			   .not_full = PTHREAD_COND_INITIALIZER };
	size_t *order, i;
	double *lat;
	unsigned rnd;

	parse_opts(argc, argv, &o);
	if (o.scan) {
		double t0 = now();
		int dfd = open(argv[optind],
			       O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (dfd < 0) {
			fprintf(stderr, "shufread: %s: %s\n", argv[optind],
				strerror(errno));
			return 1;
		}
		o.scan_entries = scan_dir(dfd, argv[optind]);
		o.scan_s = now() - t0;
	}
	if (o.list) {
		collect_list(argv[optind], o.list);
	} else {
		if (nftw(argv[optind], collect_one, 64, FTW_PHYS) != 0) {
			fprintf(stderr, "shufread: %s: %s (errno %d)\n",
				argv[optind], strerror(errno), errno);
			return 1;
		}
		qsort(collected.paths, collected.n, sizeof(*collected.paths),
		      cmp_path);
	}
	order = malloc((collected.n ? collected.n : 1) * sizeof(*order));
	lat = malloc((collected.n ? collected.n : 1) * sizeof(*lat));
	q.depth = o.depth;
	q.sizes = malloc(q.depth * sizeof(*q.sizes));
	if (!order || !lat || !q.sizes)
		die_oom();
	for (i = 0; i < collected.n; i++)
		order[i] = i; /* the list's order (-l); else shuffled per round */
	for (rnd = 1; rnd <= o.rounds; rnd++)
		run_round(rnd, &o, order, lat, o.rate > 0 ? &q : NULL);
	free(q.sizes);
	free(lat);
	free(order);
	for (i = 0; i < collected.n; i++)
		free(collected.paths[i]);
	free(collected.paths);
	return 0;
}
