// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Plan-following prefetch (see scheduler.h).
 *
 * Locking: s->lock protects the tracker, `fetched`, the lead window,
 * `epoch`, `inflight` and `stop`; the scheduler thread drops it while it opens files and submits
 * reads.  Completions (engine thread) take it to count a read done and
 * wake the scheduler.  Counters read by stats are relaxed atomics.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "beneath.h"
#include "log.h"
#include "scheduler.h"

#define RECENT 1024
#define REPEAT_WINDOW 32

struct dsfs_sched {
	struct dsfs_sched_cfg cfg;
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* progress, a completion, or stop */
	pthread_t thread;
	struct dsfs_tracker *tracker;	/* protected by lock */
	uint64_t epoch;			/* tracker epoch `fetched` counts in */
	uint64_t fetched;		/* next position to fetch */
	uint64_t lead_from;		/* the lead window is [lead_from, fetched) */
	uint64_t lead_bytes;		/* ... and holds this many bytes */
	unsigned inflight;		/* reads submitted, not completed */
	bool stop;
	size_t prefix_len;		/* strlen(dataset "/"), 0 for "." */
	uint64_t prefetch_bytes;	/* relaxed atomic */
	uint64_t prefetch_errors;	/* relaxed atomic */
	/* One open shows up as a lookup and a first read: the tracker must
	 * see it once.  Per index modulo RECENT, the index (+1) and the
	 * report number when it was last reported; a repeat within
	 * REPEAT_WINDOW reports is dropped.  Protected by lock. */
	uint64_t recent[RECENT][2];
	uint64_t reports;
};



struct fetch {
	struct dsfs_sched *s;
	struct dsfs_cache_entry *e;
};

static void fetch_done(void *arg, int result)
{
	struct fetch *f = arg;
	struct dsfs_sched *s = f->s;

	dsfs_cache_fill_done(s->cfg.cache, f->e, result);
	dsfs_cache_unpin(s->cfg.cache, f->e);
	if (result > 0)
		__atomic_add_fetch(&s->prefetch_bytes, (uint64_t)result,
				   __ATOMIC_RELAXED);
	else if (result < 0)
		__atomic_add_fetch(&s->prefetch_errors, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&s->lock);
	s->inflight--;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	free(f);
}

/* The pool takes over an fd we opened ourselves (see fetch_file). */
static int adopt_fd(void *arg, const struct dsfs_fdkey *key)
{
	return *(int *)arg;
}

/* Open a sample below SOURCE: O_DIRECT while the filesystem takes it. */
static int open_sample(struct dsfs_sched *s, const char *path, int *flags)
{
	int fd;

	*flags = O_RDONLY;
	if (__atomic_load_n(s->cfg.direct_io, __ATOMIC_RELAXED)) {
		fd = dsfs_open_beneath(s->cfg.root_fd, path,
				       O_RDONLY | O_DIRECT | O_NOFOLLOW);
		if (fd != -EINVAL) {
			*flags = O_RDONLY | O_DIRECT;
			return fd;
		}
	}
	return dsfs_open_beneath(s->cfg.root_fd, path, O_RDONLY | O_NOFOLLOW);
}

/*
 * Fetch one chunk of an open file unless it is cached or being fetched.
 * The fd reference is taken here and returned by the engine.
 */
static void fetch_chunk(struct dsfs_sched *s, const struct dsfs_fdkey *key,
			int *fd, uint64_t size, uint64_t chunk)
{
	struct dsfs_cache_key k = { key->dev, key->ino, chunk };
	uint64_t start = chunk << DSFS_CHUNK_SHIFT;
	uint32_t len = size - start < DSFS_CHUNK_SIZE ? (uint32_t)(size - start)
						       : DSFS_CHUNK_SIZE;
	struct dsfs_cache_entry *e;
	struct dsfs_io_req req;
	struct fetch *f;
	int err;

	err = dsfs_cache_get(s->cfg.cache, &k, len,
			     DSFS_CACHE_NOWAIT | DSFS_CACHE_FORCE, &e);
	if (err == DSFS_CACHE_HIT)
		dsfs_cache_unpin(s->cfg.cache, e);
	if (err != DSFS_CACHE_FILL)
		return; /* cached, being fetched, or no room */
	f = malloc(sizeof(*f));
	err = f ? dsfs_fdpool_get(s->cfg.fdpool, key, adopt_fd, fd, &req.fd)
		: -ENOMEM;
	if (!err && req.fd.fd == *fd)
		*fd = -1; /* the pool owns it now */
	if (!err) {
		*f = (struct fetch){ s, e };
		req.buf = dsfs_cache_data(s->cfg.cache, e);
		req.off = start;
		req.len = dsfs_cache_capacity(e);
		req.done = fetch_done;
		req.arg = f;
		pthread_mutex_lock(&s->lock);
		s->inflight++;
		pthread_mutex_unlock(&s->lock);
		err = dsfs_io_submit(s->cfg.io, &req);
		if (!err)
			return;
		pthread_mutex_lock(&s->lock);
		s->inflight--;
		pthread_mutex_unlock(&s->lock);
		dsfs_fdpool_put(s->cfg.fdpool, &req.fd);
	}
	free(f);
	dsfs_cache_fill_done(s->cfg.cache, e, err);
	dsfs_cache_unpin(s->cfg.cache, e);
}

/* Fetch every chunk of sample idx.  Called without s->lock. */
static void fetch_sample(struct dsfs_sched *s, uint64_t idx)
{
	const char *rel = dsfs_layout_path(s->cfg.layout, idx);
	char path[PATH_MAX];
	struct dsfs_fdkey key;
	struct stat st;
	uint64_t c;
	int fd, flags;

	if (!dsfs_layout_prefetchable(s->cfg.layout, idx))
		return;
	if (s->prefix_len)
		snprintf(path, sizeof(path), "%s/%s", s->cfg.plan->dataset, rel);
	else
		snprintf(path, sizeof(path), "%s", rel);
	fd = open_sample(s, path, &flags);
	if (fd < 0)
		return; /* e.g. a symlink: the reader's own reads still work */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	key = (struct dsfs_fdkey){ st.st_dev, st.st_ino, (uint32_t)flags };
	for (c = 0; (c << DSFS_CHUNK_SHIFT) < (uint64_t)st.st_size; c++)
		fetch_chunk(s, &key, &fd, (uint64_t)st.st_size, c);
	if (fd >= 0)
		close(fd);
}

/* Bytes of the sample at position p of the current epoch (0 past the
 * plan).  Called with s->lock held. */
static uint64_t size_at(struct dsfs_sched *s, uint64_t p)
{
	uint64_t idx;

	return dsfs_tracker_at(s->tracker, p, &idx) ? 0 :
	       dsfs_layout_size(s->cfg.layout, idx);
}

/*
 * Move the lead window [lead_from, fetched) to start at low, keeping its
 * byte sum: O(positions the loader moved past), so the scheduler pays O(1)
 * amortised per sample instead of re-adding the whole lead each time.
 * recount: positions were renumbered (epoch change): sum afresh, once.
 * Called with s->lock held.
 */
static void lead_move_locked(struct dsfs_sched *s, uint64_t low, bool recount)
{
	uint64_t p;

	if (s->fetched <= low) { /* the loader caught up: nothing ahead */
		s->fetched = low;
		s->lead_bytes = 0;
	} else if (recount || low < s->lead_from) {
		s->lead_bytes = 0;
		for (p = low; p < s->fetched; p++)
			s->lead_bytes += size_at(s, p);
	} else {
		for (p = s->lead_from; p < low; p++)
			s->lead_bytes -= size_at(s, p);
	}
	s->lead_from = low;
}

/*
 * The next sample to fetch, or false when far enough ahead, waiting for
 * reads in flight, or not following a plan.  Called with s->lock held.
 */
static bool next_locked(struct dsfs_sched *s, uint64_t *idx)
{
	struct dsfs_tracker_state st;
	bool recount = false;

	dsfs_tracker_state(s->tracker, &st);
	if (st.detected == DSFS_TRACKER_LOST ||
	    st.detected == DSFS_TRACKER_DETECTING)
		return false;
	if (st.epoch != s->epoch) { /* positions restart at the boundary */
		s->fetched = s->fetched > st.count ? s->fetched - st.count : 0;
		if (st.epoch != s->epoch + 1)
			s->fetched = 0;
		s->epoch = st.epoch;
		recount = true;
	}
	lead_move_locked(s, st.low, recount);
	if (s->inflight >= s->cfg.depth || s->lead_bytes >= s->cfg.lead_bytes)
		return false;
	if (dsfs_tracker_at(s->tracker, s->fetched, idx))
		return false; /* the end of the next epoch */
	s->lead_bytes += dsfs_layout_size(s->cfg.layout, *idx);
	s->fetched++;
	return true;
}

static void *sched_thread(void *arg)
{
	struct dsfs_sched *s = arg;
	uint64_t idx;

	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		if (next_locked(s, &idx)) {
			pthread_mutex_unlock(&s->lock);
			fetch_sample(s, idx);
			pthread_mutex_lock(&s->lock);
			continue;
		}
		/* Off the access path: the next epoch's order, if not yet. */
		dsfs_tracker_prepare_next(s->tracker);
		pthread_cond_wait(&s->wake, &s->lock);
	}
	while (s->inflight) /* completions still reference s */
		pthread_cond_wait(&s->wake, &s->lock);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/*
 * How far out of order the loader's opens may arrive: DataLoader workers
 * keep about num_workers * prefetch_factor batches in flight.  1024 covers
 * common settings; small datasets get less, so that a missed access (a read
 * the kernel served itself) holds the low-water mark back only briefly.
 */
static uint32_t window_for(uint64_t n)
{
	uint64_t w = n / 16;

	return w < 16 ? 16 : w > 1024 ? 1024 : (uint32_t)w;
}

int dsfs_sched_start(const struct dsfs_sched_cfg *cfg, struct dsfs_sched **out)
{
	const struct dsfs_plan_cfg *p = cfg->plan;
	uint64_t n = dsfs_layout_count(cfg->layout);
	struct dsfs_sched *s = calloc(1, sizeof(*s));
	int err;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	s->prefix_len = strcmp(p->dataset, ".") ? strlen(p->dataset) + 1 : 0;
	err = dsfs_tracker_new(&p->sampler, n, p->rank_first, p->epoch_auto,
			       p->epoch, window_for(n), &s->tracker);
	if (err) {
		free(s);
		return err;
	}
	s->epoch = p->epoch;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	err = -pthread_create(&s->thread, NULL, sched_thread, s);
	if (err) {
		dsfs_tracker_free(s->tracker);
		free(s);
		return err;
	}
	if (p->rank_last > p->rank_first)
		dsfs_warn("plan: following rank %u only (ranks=%u-%u): several local ranks are not supported yet",
			  p->rank_first, p->rank_first, p->rank_last);
	*out = s;
	return 0;
}

void dsfs_sched_stop(struct dsfs_sched *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	dsfs_tracker_free(s->tracker);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void dsfs_sched_access(struct dsfs_sched *s, const char *path)
{
	uint64_t idx, *r;

	if (s->prefix_len) {
		if (strncmp(path, s->cfg.plan->dataset, s->prefix_len - 1) ||
		    path[s->prefix_len - 1] != '/')
			return; /* outside the dataset: not the plan's business */
		path += s->prefix_len;
	}
	if (dsfs_layout_lookup(s->cfg.layout, path, &idx))
		return;
	pthread_mutex_lock(&s->lock);
	r = s->recent[idx % RECENT];
	s->reports++;
	if (r[0] != idx + 1 || s->reports - r[1] > REPEAT_WINDOW) {
		r[0] = idx + 1; /* +1: 0 means empty */
		r[1] = s->reports;
		dsfs_tracker_access(s->tracker, idx);
		pthread_cond_signal(&s->wake);
	}
	pthread_mutex_unlock(&s->lock);
}

void dsfs_sched_get_stats(struct dsfs_sched *s, struct dsfs_sched_stats *st)
{
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&s->lock);
	dsfs_tracker_state(s->tracker, &st->track);
	if (st->track.detected != DSFS_TRACKER_LOST &&
	    st->track.detected != DSFS_TRACKER_DETECTING &&
	    st->track.epoch == s->epoch) {
		lead_move_locked(s, st->track.low, false);
		st->lead_bytes = s->lead_bytes;
		st->lead_items = s->fetched - s->lead_from;
	}
	pthread_mutex_unlock(&s->lock);
	st->prefetch_bytes = __atomic_load_n(&s->prefetch_bytes, __ATOMIC_RELAXED);
	st->prefetch_errors = __atomic_load_n(&s->prefetch_errors,
					      __ATOMIC_RELAXED);
}
