// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The seed search (see discover.h): checks the configuration, starts the
 * worker threads and keeps the outcome.
 *
 * Threads: the owner calls start() and free(); any thread may call done(),
 * wait(), cancel() and result().  Workers take chunks of the range from an
 * atomic cursor, run the filter kernel over a chunk, then confirm its
 * candidates in order.  What they share:
 *   - next_chunk, tested, candidates: atomics, relaxed (counters; a chunk
 *     is taken exactly once by the fetch-add whatever the ordering);
 *   - found (the seed, its model in bits 32 and up, or -1) and stop:
 *     atomics; found is set once by compare-exchange, so the first
 *     confirmed seed wins;
 *   - running, seconds: protected by lock; `done` is written under lock
 *     with release order after seconds, and read without it (acquire).
 * Everything else is written by start() before the threads exist and read
 * only afterwards.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "discover_int.h"
#include "parse.h"
#include "sampler.h"

/* Seeds per chunk: ~1 ms with vectors, ~10 ms on the scalar path. */
#define CHUNK_VECTOR (UINT32_C(1) << 16)
#define CHUNK_SCALAR (UINT32_C(1) << 14)

struct worker {
	struct dsfs_discover *d;
	pthread_t thread;
	uint32_t *cands; /* chunk_size slots */
	struct dsfs_discover_scratch scratch;
};

struct dsfs_discover {
	/* Set by start(), read only afterwards. */
	struct dsfs_discover_filter filter;
	dsfs_discover_scan_fn scan;
	enum dsfs_discover_path path;
	enum dsfs_discover_prio prio;
	uint32_t *observed; /* sorted, for bsearch in confirm() */
	uint32_t nobserved;
	unsigned models;
	uint32_t len[3];    /* prefix confirmed, by model (1, 2) */
	uint32_t world, rank_first, rank_last;
	uint64_t first, end;
	uint32_t chunk_size;
	uint64_t nchunks;
	struct timespec t0;
	void (*on_done)(void *arg);
	void *arg;
	unsigned nworkers;
	struct worker *workers;

	atomic_uint_fast64_t next_chunk, tested, candidates;
	atomic_int_fast64_t found; /* the confirmed seed, or -1 */
	atomic_bool stop, cancelled, done;
	atomic_bool failed; /* start() could not create every thread */

	pthread_mutex_t lock;
	pthread_cond_t cond; /* signalled when done turns true */
	unsigned running;    /* protected by lock */
	/* Written under lock by the last worker, before done (see above). */
	int status;
	double seconds;
};

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) +
	       (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static bool observed(const struct dsfs_discover *d, uint32_t v)
{
	return bsearch(&v, d->observed, d->nobserved, sizeof(uint32_t),
		       cmp_u32) != NULL;
}

/*
 * Every observed index among the positions of seed's permutation that the
 * model's loaders read first: the first len, or (DISTRIBUTED) the local
 * ranks' among the first len.  The prefix is d->len of the longest model.
 */
static bool confirm(const struct dsfs_discover *d,
		    const struct dsfs_discover_scratch *s,
		    enum dsfs_discover_model m)
{
	uint32_t i, len = d->len[m], hits = 0, r = 0;
	uint32_t nranks = d->rank_last - d->rank_first + 1;
	uint64_t left; /* local positions not yet looked at */

	if (m == DSFS_DISCOVER_RANDOM) {
		for (i = 0; i < len && hits + (len - i) >= d->nobserved; i++)
			hits += observed(d, s->prefix[i]);
		return hits == d->nobserved;
	}
	left = (uint64_t)len / d->world * nranks + nranks;
	for (i = 0; i < len && hits + left >= d->nobserved; i++) {
		if (r - d->rank_first < nranks) {
			hits += observed(d, s->prefix[i]);
			left--;
		}
		if (++r == d->world)
			r = 0;
	}
	return hits == d->nobserved;
}

/* The model whose order seed gives, or 0. */
static enum dsfs_discover_model confirm_any(const struct dsfs_discover *d,
					    struct dsfs_discover_scratch *s,
					    uint32_t seed)
{
	uint32_t len = d->len[1] > d->len[2] ? d->len[1] : d->len[2];

	dsfs_discover_prefix_into(s, seed, d->filter.n, len);
	/* The stricter first: the local ranks' positions of a seed's order
	 * may well lie within the first len of it too. */
	if ((d->models & DSFS_DISCOVER_DISTRIBUTED) &&
	    confirm(d, s, DSFS_DISCOVER_DISTRIBUTED))
		return DSFS_DISCOVER_DISTRIBUTED;
	if ((d->models & DSFS_DISCOVER_RANDOM) &&
	    confirm(d, s, DSFS_DISCOVER_RANDOM))
		return DSFS_DISCOVER_RANDOM;
	return 0;
}

/* Lower this thread's priority (Linux: nice and policy are per thread). */
static void lower_priority(enum dsfs_discover_prio prio)
{
	struct sched_param sp = { .sched_priority = 0 };

	if (prio == DSFS_DISCOVER_NORMAL)
		return;
	if (prio == DSFS_DISCOVER_IDLE &&
	    !pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp))
		return;
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
}

/* Filter one chunk and confirm its candidates; true once a seed is found. */
static bool run_chunk(struct worker *w, uint64_t c)
{
	struct dsfs_discover *d = w->d;
	uint64_t start = d->first + c * d->chunk_size;
	uint32_t count = (uint32_t)(d->end - start < d->chunk_size ?
					    d->end - start :
					    d->chunk_size);
	uint32_t k, nc = d->scan(&d->filter, (uint32_t)start, count, w->cands);
	int_fast64_t none = -1;
	enum dsfs_discover_model m;

	atomic_fetch_add_explicit(&d->tested, count, memory_order_relaxed);
	for (k = 0; k < nc; k++) {
		if (atomic_load_explicit(&d->stop, memory_order_relaxed))
			return false;
		atomic_fetch_add_explicit(&d->candidates, 1,
					  memory_order_relaxed);
		m = confirm_any(d, &w->scratch, w->cands[k]);
		if (!m)
			continue;
		/* found: the seed in bits 0-31, its model above */
		atomic_compare_exchange_strong(&d->found, &none,
					       (int_fast64_t)w->cands[k] |
						       (int_fast64_t)m << 32);
		return true;
	}
	return false;
}

/* The last worker out records the time and wakes waiters. */
static void worker_exit(struct dsfs_discover *d)
{
	bool last;

	pthread_mutex_lock(&d->lock);
	last = --d->running == 0;
	if (last) {
		d->seconds = since(&d->t0);
		if (atomic_load(&d->found) >= 0)
			d->status = 0;
		else if (atomic_load(&d->cancelled))
			d->status = -ECANCELED;
		else
			d->status = -ENOENT;
		/* release: seconds and found are visible to done() readers */
		atomic_store_explicit(&d->done, true, memory_order_release);
		pthread_cond_broadcast(&d->cond);
	}
	pthread_mutex_unlock(&d->lock);
	if (last && d->on_done && !atomic_load(&d->failed))
		d->on_done(d->arg);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct dsfs_discover *d = w->d;
	uint64_t c;

	lower_priority(d->prio);
	while (!atomic_load_explicit(&d->stop, memory_order_relaxed)) {
		c = atomic_fetch_add_explicit(&d->next_chunk, 1,
					      memory_order_relaxed);
		if (c >= d->nchunks)
			break;
		if (run_chunk(w, c))
			atomic_store(&d->stop, true);
	}
	worker_exit(d);
	return NULL;
}

static unsigned models_of(const struct dsfs_discover_cfg *cfg)
{
	return cfg->models ? cfg->models : DSFS_DISCOVER_RANDOM;
}

static bool bad_ranks(const struct dsfs_discover_cfg *cfg)
{
	if (!(models_of(cfg) & DSFS_DISCOVER_DISTRIBUTED))
		return false;
	return !cfg->world || cfg->rank_first > cfg->rank_last ||
	       cfg->rank_last >= cfg->world ||
	       cfg->rank_first > DSFS_DISCOVER_MAX_POS ||
	       cfg->rank_first >= cfg->n;
}

/*
 * Check cfg's scalar fields; the effective heads and, per model, the
 * confirmed prefix.
 */
static int check_cfg(const struct dsfs_discover_cfg *cfg, uint32_t *heads,
		     uint32_t len[3])
{
	uint32_t max_heads = cfg->nobserved < DSFS_DISCOVER_MAX_HEADS ?
				     cfg->nobserved :
				     DSFS_DISCOVER_MAX_HEADS;
	uint64_t l;

	if (cfg->n < 2 || cfg->n >= DSFS_SAMPLER_TORCH_MAX_N ||
	    !cfg->observed || !cfg->nobserved ||
	    cfg->nobserved > DSFS_DISCOVER_MAX_OBSERVED ||
	    cfg->nobserved > cfg->n || cfg->heads > max_heads ||
	    cfg->window > DSFS_DISCOVER_MAX_WINDOW || cfg->first >= cfg->end ||
	    cfg->end > DSFS_DISCOVER_SEEDS ||
	    cfg->threads > DSFS_DISCOVER_MAX_THREADS ||
	    (unsigned)cfg->prio > DSFS_DISCOVER_NORMAL ||
	    (cfg->models & ~(unsigned)(DSFS_DISCOVER_RANDOM |
				       DSFS_DISCOVER_DISTRIBUTED)) ||
	    bad_ranks(cfg) || !dsfs_discover_path_name(cfg->path))
		return -EINVAL;
	*heads = cfg->heads ? cfg->heads : max_heads;
	l = (uint64_t)cfg->nobserved + cfg->window;
	len[0] = 0;
	len[DSFS_DISCOVER_RANDOM] = l < cfg->n ? (uint32_t)l : cfg->n;
	l *= (models_of(cfg) & DSFS_DISCOVER_DISTRIBUTED) ? cfg->world : 0;
	len[DSFS_DISCOVER_DISTRIBUTED] = l < cfg->n ? (uint32_t)l : cfg->n;
	if (!(models_of(cfg) & DSFS_DISCOVER_RANDOM))
		len[DSFS_DISCOVER_RANDOM] = 0;
	return 0;
}

/* One model's share of false_matches(): matches among `local` positions. */
static double false_matches_of(const struct dsfs_discover_cfg *cfg,
			       uint32_t heads, double local)
{
	double e = (double)(cfg->end - cfg->first) * heads / cfg->n;
	uint32_t k;

	for (k = 0; k + 1 < cfg->nobserved; k++)
		e *= local - 1 - k > 0 ? (local - 1 - k) / (cfg->n - 1 - k) : 0;
	return e;
}

double dsfs_discover_false_matches(const struct dsfs_discover_cfg *cfg)
{
	uint32_t heads, len[3];
	double e = 0;

	if (check_cfg(cfg, &heads, len))
		return -1.0;
	if (models_of(cfg) & DSFS_DISCOVER_RANDOM)
		e += false_matches_of(cfg, heads, len[DSFS_DISCOVER_RANDOM]);
	if (models_of(cfg) & DSFS_DISCOVER_DISTRIBUTED)
		e += false_matches_of(
			cfg, heads,
			(double)len[DSFS_DISCOVER_DISTRIBUTED] / cfg->world *
				(cfg->rank_last - cfg->rank_first + 1));
	return e;
}

/* The sorted copy of the observed indices: -EINVAL for one >= n or twice. */
static int copy_observed(struct dsfs_discover *d,
			 const struct dsfs_discover_cfg *cfg)
{
	uint32_t i;

	d->observed = malloc(cfg->nobserved * sizeof(uint32_t));
	if (!d->observed)
		return -ENOMEM;
	memcpy(d->observed, cfg->observed, cfg->nobserved * sizeof(uint32_t));
	d->nobserved = cfg->nobserved;
	qsort(d->observed, d->nobserved, sizeof(uint32_t), cmp_u32);
	for (i = 0; i < d->nobserved; i++)
		if (d->observed[i] >= cfg->n ||
		    (i && d->observed[i] == d->observed[i - 1]))
			return -EINVAL;
	return 0;
}

static unsigned worker_count(const struct dsfs_discover_cfg *cfg,
			     uint64_t nchunks)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t t = cfg->threads ? cfg->threads : (cpus > 0 ? cpus : 1);

	if (t > DSFS_DISCOVER_MAX_THREADS)
		t = DSFS_DISCOVER_MAX_THREADS;
	return (unsigned)(t < nchunks ? t : nchunks);
}

static int alloc_workers(struct dsfs_discover *d,
			 const struct dsfs_discover_cfg *cfg)
{
	unsigned i;

	d->nworkers = worker_count(cfg, d->nchunks);
	d->workers = calloc(d->nworkers, sizeof(*d->workers));
	if (!d->workers)
		return -ENOMEM;
	for (i = 0; i < d->nworkers; i++) {
		d->workers[i].d = d;
		d->workers[i].cands = malloc(d->chunk_size * sizeof(uint32_t));
		if (!d->workers[i].cands ||
		    dsfs_discover_scratch_init(&d->workers[i].scratch,
					       d->len[1] > d->len[2] ?
						       d->len[1] : d->len[2]))
			return -ENOMEM;
	}
	return 0;
}

static void free_search(struct dsfs_discover *d)
{
	unsigned i;

	for (i = 0; d->workers && i < d->nworkers; i++) {
		free(d->workers[i].cands);
		dsfs_discover_scratch_free(&d->workers[i].scratch);
	}
	free(d->workers);
	free(d->observed);
	free(d);
}

/* Everything but the threads; *out is freed by free_search() on error. */
static int setup(const struct dsfs_discover_cfg *cfg,
		 struct dsfs_discover **out)
{
	struct dsfs_discover *d;
	uint32_t heads, pos[DSFS_DISCOVER_MAX_PROBES], npos = 0;
	int ret;

	*out = d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	ret = check_cfg(cfg, &heads, d->len);
	if (ret)
		return ret;
	d->path = dsfs_discover_resolve(cfg->path);
	d->scan = dsfs_discover_kernel(d->path);
	if (!d->scan)
		return -EOPNOTSUPP;
	ret = copy_observed(d, cfg);
	if (ret)
		return ret;
	d->models = models_of(cfg);
	d->world = cfg->world;
	d->rank_first = cfg->rank_first;
	d->rank_last = cfg->rank_last;
	/* RANDOM probes position 0, DISTRIBUTED the first local rank's */
	if (d->models & DSFS_DISCOVER_RANDOM)
		pos[npos++] = 0;
	if ((d->models & DSFS_DISCOVER_DISTRIBUTED) &&
	    !(npos && cfg->rank_first == 0))
		pos[npos++] = cfg->rank_first;
	/* the heads in open order: cfg->observed, not the sorted copy */
	dsfs_discover_filter_init(&d->filter, cfg->n, pos, npos, cfg->observed,
				  heads);
	d->prio = cfg->prio;
	d->first = cfg->first;
	d->end = cfg->end;
	d->chunk_size = d->path == DSFS_DISCOVER_SCALAR ? CHUNK_SCALAR :
							  CHUNK_VECTOR;
	d->nchunks = (d->end - d->first + d->chunk_size - 1) / d->chunk_size;
	d->on_done = cfg->on_done;
	d->arg = cfg->arg;
	atomic_init(&d->found, -1);
	return alloc_workers(d, cfg);
}

static int init_sync(struct dsfs_discover *d)
{
	pthread_condattr_t attr;
	int ret;

	ret = pthread_condattr_init(&attr);
	if (ret)
		return -ret;
	ret = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!ret)
		ret = pthread_cond_init(&d->cond, &attr);
	pthread_condattr_destroy(&attr);
	if (ret)
		return -ret;
	ret = pthread_mutex_init(&d->lock, NULL);
	if (ret) {
		pthread_cond_destroy(&d->cond);
		return -ret;
	}
	return 0;
}

/* Stop the workers start() made before pthread_create failed at `made`. */
static void unwind_threads(struct dsfs_discover *d, unsigned made)
{
	unsigned i;

	atomic_store(&d->failed, true);
	atomic_store(&d->stop, true);
	pthread_mutex_lock(&d->lock);
	d->running -= d->nworkers - made;
	pthread_mutex_unlock(&d->lock);
	for (i = 0; i < made; i++)
		pthread_join(d->workers[i].thread, NULL);
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
}

int dsfs_discover_start(const struct dsfs_discover_cfg *cfg,
			struct dsfs_discover **out)
{
	struct dsfs_discover *d = NULL;
	unsigned i;
	int ret;

	*out = NULL;
	ret = setup(cfg, &d);
	if (!ret)
		ret = init_sync(d);
	if (ret) {
		if (d)
			free_search(d);
		return ret;
	}
	clock_gettime(CLOCK_MONOTONIC, &d->t0);
	d->running = d->nworkers;
	for (i = 0; i < d->nworkers; i++) {
		ret = -pthread_create(&d->workers[i].thread, NULL, worker_main,
				      &d->workers[i]);
		if (ret) {
			unwind_threads(d, i);
			free_search(d);
			return ret;
		}
	}
	*out = d;
	return 0;
}

bool dsfs_discover_done(const struct dsfs_discover *d)
{
	return atomic_load_explicit(&d->done, memory_order_acquire);
}

int dsfs_discover_wait(struct dsfs_discover *d, int timeout_ms)
{
	struct timespec until;
	int ret = 0;

	clock_gettime(CLOCK_MONOTONIC, &until);
	if (timeout_ms > 0) {
		until.tv_sec += timeout_ms / 1000;
		until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
	}
	pthread_mutex_lock(&d->lock);
	while (!atomic_load(&d->done) && ret != ETIMEDOUT)
		ret = timeout_ms < 0 ? pthread_cond_wait(&d->cond, &d->lock) :
				       pthread_cond_timedwait(&d->cond,
							      &d->lock, &until);
	pthread_mutex_unlock(&d->lock);
	return atomic_load(&d->done) ? 0 : -ETIMEDOUT;
}

void dsfs_discover_cancel(struct dsfs_discover *d)
{
	atomic_store(&d->cancelled, true);
	atomic_store(&d->stop, true);
}

void dsfs_discover_result(const struct dsfs_discover *d,
			  struct dsfs_discover_result *r)
{
	bool done = dsfs_discover_done(d);
	int_fast64_t found = atomic_load(&d->found);

	memset(r, 0, sizeof(*r));
	r->path = d->path;
	r->tested = atomic_load_explicit(&d->tested, memory_order_relaxed);
	r->candidates =
		atomic_load_explicit(&d->candidates, memory_order_relaxed);
	/* status and seconds are final once done has been seen (acquire) */
	r->status = done ? d->status : found >= 0 ? 0 : -EINPROGRESS;
	r->seed = found >= 0 ? (uint32_t)found : 0;
	r->model = found >= 0 ? (enum dsfs_discover_model)(found >> 32) : 0;
	r->seconds = done ? d->seconds : since(&d->t0);
}

void dsfs_discover_free(struct dsfs_discover *d)
{
	unsigned i;

	if (!d)
		return;
	dsfs_discover_cancel(d);
	for (i = 0; i < d->nworkers; i++)
		pthread_join(d->workers[i].thread, NULL);
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
	free_search(d);
}

int dsfs_discover_parse_range(const char *s, uint64_t *first, uint64_t *end)
{
	const char *dash = strchr(s, '-');
	char a[24];
	uint64_t f, e;
	int ret;

	if (!dash || (size_t)(dash - s) >= sizeof(a))
		return -EINVAL;
	memcpy(a, s, (size_t)(dash - s));
	a[dash - s] = '\0';
	ret = dsfs_parse_u64(a, 0, DSFS_DISCOVER_SEEDS - 1, &f);
	if (!ret)
		ret = dsfs_parse_u64(dash + 1, 1, DSFS_DISCOVER_SEEDS, &e);
	if (ret)
		return ret;
	if (e <= f)
		return -EINVAL;
	*first = f;
	*end = e;
	return 0;
}
