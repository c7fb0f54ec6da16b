// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Plan-following prefetch (see scheduler.h).
 *
 * Locking: s->lock protects the tracker, `fetched`, the lead window,
 * `epoch`, `inflight`, `idle`, `full` and `stop`; the scheduler thread
 * drops it while it opens files and submits reads.  Completions (engine
 * thread) take it to count a read done and wake the scheduler.  Counters
 * read by stats are relaxed atomics.
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
#include "readers.h"
#include "scheduler.h"
#include "seek.h"

/* One local rank's loader and how far the scheduler got ahead of it. */
struct srank {
	struct dsfs_tracker *t;	/* NULL until the epoch is known (a group
				   detects through the first rank's) */
	/* While the group detects the epoch (epoch=auto): a tracker of this
	 * rank configured at the first candidate epoch, which the prefetch
	 * follows meanwhile (a job that starts fresh starts there), fed the
	 * opens its order claims; dropped once the group's tracker knows or
	 * has lost the loader, or once the guess loses it; made the rank's
	 * tracker when the guesses placed the opens the group's could not
	 * (guesses_right_locked). */
	struct dsfs_tracker *guess;
	uint32_t rank;
	uint64_t epoch;		/* tracker epoch `fetched` counts in */
	uint64_t starts;	/* ... and its count of fresh starts */
	uint64_t fetched;	/* next position to fetch */
	uint64_t lead_from;	/* the lead window is [lead_from, fetched) */
	uint64_t lead_bytes;	/* ... and holds this many bytes */
	/* The counts of the trackers this rank had before its current one
	 * (a loader found anew, a seed found): the stats' counters only grow. */
	uint64_t past_misses, past_accesses;
	bool blocked;		/* the cache refused its next sample: every
				   cached one is needed sooner; wait for
				   the loaders to move */
	uint64_t blocked_epoch, blocked_low; /* where the loader was then */
};

struct dsfs_sched {
	struct dsfs_sched_cfg cfg;
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* progress, a completion, or stop */
	pthread_t thread;
	struct srank *ranks;		/* nranks; protected by lock */
	uint32_t nranks;
	bool repush;			/* see dsfs_sched_repush; written
					   under lock, read relaxed too */
	unsigned inflight;		/* reads submitted, not completed */
	bool stop;
	/* The thread waits on `wake` (idle), and for room among the reads
	 * in flight rather than for the loaders (full).  Wakers signal only
	 * when the thread has a batch worth of work: a wake-up per sample
	 * cost more CPU than the fetch itself (see wake_worth_locked). */
	bool idle, full;
	size_t prefix_len;		/* strlen(dataset "/"), 0 for "." */
	uint64_t prefetch_bytes;	/* relaxed atomic */
	uint64_t prefetch_errors;	/* relaxed atomic */
	/* Reports so far (every open the daemon hears of is one: fs/ reports
	 * each open once).  Written under lock. */
	uint64_t reports;
	uint64_t last_report_ns;	/* CLOCK_MONOTONIC_COARSE; 0: none;
					   under lock */
	struct dsfs_ratelimit log_rl;	/* log_change_locked's lines */
	struct dsfs_seek *seek;		/* seed=discover, else NULL; lock */
	/* The sampler the trackers follow: the plan's, or the one a seed
	 * search found (discovered: then the seek is no longer fed).
	 * Protected by lock. */
	struct dsfs_sampler_cfg sampler;
	uint32_t *canon;		/* sampler.canon's, or NULL */
	bool discovered;
	/* The processes whose opens reach the plan: another program's are
	 * left out while a loader follows (readers.h).  Under lock. */
	struct dsfs_readers readers;
	struct dsfs_ratelimit other_rl;	/* the lines naming them */
	uint64_t other_opens;		/* left out; relaxed atomic */
};

struct fetch {
	struct dsfs_sched *s;
	struct dsfs_cache_entry *e;
	struct dsfs_cache_key k;
	uint64_t size;		/* the file's */
	uint64_t when, after;	/* see cfg.filled */
	uint32_t len;		/* the chunk's */
	bool filled;		/* tell cfg.filled when read whole */
};

/* Reads prepared by the scheduler thread, submitted together (one queue
 * lock and at most one wake-up of the engine per batch). */
#define BATCH 16
struct batch {
	struct dsfs_io_req req[BATCH];
	unsigned n;
};

static void publish_now_locked(struct dsfs_sched *s);

static void fetch_done(void *arg, int result)
{
	struct fetch *f = arg;
	struct dsfs_sched *s = f->s;

	dsfs_cache_fill_done(s->cfg.cache, f->e, result);
	dsfs_cache_unpin(s->cfg.cache, f->e);
	if (f->filled && result == (int)f->len)
		s->cfg.filled(s->cfg.filled_arg, &f->k, f->len, f->size,
			      f->when, f->after);
	if (result > 0)
		__atomic_add_fetch(&s->prefetch_bytes, (uint64_t)result,
				   __ATOMIC_RELAXED);
	else if (result < 0)
		__atomic_add_fetch(&s->prefetch_errors, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&s->lock);
	s->inflight--;
	/* Waiting for room: come back when half the depth is free (or at
	 * the last read, which the stopping thread waits for). */
	if (!s->inflight || (s->idle && s->full &&
			     s->inflight <= s->cfg.depth / 2))
		pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	free(f);
}

/* A planned read that will not happen: its entry fails with err (readers
 * waiting on it retry with their own read), and it is counted. */
static void fetch_failed(struct dsfs_sched *s, struct dsfs_cache_entry *e,
			 int err)
{
	__atomic_add_fetch(&s->prefetch_errors, 1, __ATOMIC_RELAXED);
	dsfs_cache_fill_done(s->cfg.cache, e, err);
	dsfs_cache_unpin(s->cfg.cache, e);
}

/* Submit the batch's reads; on failure each one fails (fetch_failed), its
 * fd goes back to the pool and it no longer counts as in flight. */
static void batch_flush(struct dsfs_sched *s, struct batch *b)
{
	unsigned i;
	int err;

	if (!b->n)
		return;
	err = dsfs_io_submit_many(s->cfg.io, b->req, b->n);
	for (i = 0; err && i < b->n; i++) {
		struct fetch *f = b->req[i].arg;

		dsfs_fdpool_put(s->cfg.fdpool, &b->req[i].fd);
		fetch_failed(s, f->e, err);
		pthread_mutex_lock(&s->lock);
		s->inflight--;
		pthread_mutex_unlock(&s->lock);
		free(f);
	}
	b->n = 0;
}

/* The pool takes over an fd we opened ourselves (see fetch_chunk). */
static int adopt_fd(void *arg, const struct dsfs_fdkey *key)
{
	return *(int *)arg;
}

/*
 * Fetch one chunk of an open file unless it is cached or being fetched,
 * as a planned entry next read at plan time `when`: a read added to b
 * (submitted when b fills, or by the caller).  The fd reference is taken
 * here and returned by the engine.  -ENOSPC when the cache refused it
 * (everything cached is needed sooner), else 0 (other failures are
 * counted; the reader's own read will try again).
 */
static int fetch_chunk(struct dsfs_sched *s, struct batch *b,
		       const struct dsfs_fdkey *key, int *fd, uint64_t size,
		       uint64_t chunk, uint64_t when, uint64_t after,
		       bool filled, bool repush)
{
	struct dsfs_cache_key k = { key->dev, key->ino, chunk };
	uint64_t start = chunk << DSFS_CHUNK_SHIFT;
	uint32_t len = size - start < DSFS_CHUNK_SIZE ? (uint32_t)(size - start)
						       : DSFS_CHUNK_SIZE;
	struct dsfs_io_req *req = &b->req[b->n];
	struct dsfs_cache_entry *e;
	struct fetch *f;
	int err;

	err = dsfs_cache_get_at(s->cfg.cache, &k, len,
				DSFS_CACHE_NOWAIT | DSFS_CACHE_FORCE, when, &e);
	if (err == DSFS_CACHE_HIT) {
		/* Cached, and the kernel drops what it is given: again; if
		 * that has no room now, wait for the loader as for the cache
		 * (the lead walked again would otherwise overflow it). */
		if (repush && filled && s->cfg.filled &&
		    dsfs_cache_len(e) == len &&
		    !s->cfg.filled(s->cfg.filled_arg, &k, len, size,
				   dsfs_cache_when(e), after))
			err = -ENOSPC;
		dsfs_cache_unpin(s->cfg.cache, e);
	}
	if (err != DSFS_CACHE_FILL)
		return err == -ENOSPC ? err : 0; /* cached or being fetched */
	f = malloc(sizeof(*f));
	err = f ? dsfs_fdpool_get(s->cfg.fdpool, key, adopt_fd, fd, &req->fd)
		: -ENOMEM;
	if (err) {
		free(f);
		fetch_failed(s, e, err);
		return 0;
	}
	if (req->fd.fd == *fd)
		*fd = -1; /* the pool owns it now */
	/* The next use the cache took (NEVER while no loader is followed):
	 * cfg.filled's `when`. */
	*f = (struct fetch){ s, e, k, size, dsfs_cache_when(e), after, len,
			     filled && s->cfg.filled };
	req->niov = dsfs_cache_iov(s->cfg.cache, e, 0, dsfs_cache_capacity(e),
				   req->iov);
	req->off = start;
	req->done = fetch_done;
	req->arg = f;
	pthread_mutex_lock(&s->lock);
	s->inflight++;
	pthread_mutex_unlock(&s->lock);
	if (++b->n == BATCH)
		batch_flush(s, b);
	return 0;
}

/* What the scheduler thread fetches next. */
struct pick {
	struct srank *r;
	uint64_t pos, idx, when, size, epoch;
	uint64_t after;		/* dsfs_tracker_use_after */
	bool repush;		/* s->repush when picked */
	bool push;		/* its data may go to the page cache: see
				   pushable_locked */
};

/*
 * A sample the scheduler thread opened, with what fstat said of it: opened
 * to settle the sample's size, it is kept for the fetch that follows.
 * Owned by the scheduler thread; fd -1 when it holds none.
 */
struct opened {
	uint64_t idx;
	int fd, flags;
	struct stat st;
};

static void opened_close(struct opened *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
}

/* The path below SOURCE that the loader's open of sample idx reaches
 * (through a symlink: the file it leads to).  0 or -ENAMETOOLONG. */
static int sample_path(const struct dsfs_sched *s, uint64_t idx,
		       char path[PATH_MAX])
{
	const char *rel = dsfs_layout_path(s->cfg.layout, idx),
		   *alias = dsfs_layout_alias(s->cfg.layout, idx);
	int n;

	n = alias ? snprintf(path, PATH_MAX, "%s", alias)
	    : s->prefix_len ? snprintf(path, PATH_MAX, "%s/%s",
				       s->cfg.plan->dataset, rel)
			    : snprintf(path, PATH_MAX, "%s", rel);
	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/* Open sample idx below SOURCE into o (closing what o held), as the
 * loader's open would reach it (the final name not followed): O_DIRECT
 * while the filesystem takes it.  0 or -errno. */
static int open_sample(struct dsfs_sched *s, uint64_t idx, struct opened *o)
{
	char path[PATH_MAX];
	int fd = -EINVAL;

	opened_close(o);
	o->idx = idx;
	if (sample_path(s, idx, path))
		return -ENAMETOOLONG;
	o->flags = O_RDONLY;
	if (__atomic_load_n(s->cfg.direct_io, __ATOMIC_RELAXED)) {
		fd = dsfs_open_beneath(s->cfg.root_fd, path,
				       O_RDONLY | O_DIRECT | O_NOFOLLOW);
		if (fd != -EINVAL)
			o->flags = O_RDONLY | O_DIRECT;
	}
	if (fd == -EINVAL)
		fd = dsfs_open_beneath(s->cfg.root_fd, path,
				       O_RDONLY | O_NOFOLLOW);
	if (fd < 0)
		return fd;
	o->fd = fd;
	if (fstat(fd, &o->st) == 0)
		return 0;
	fd = -errno;
	opened_close(o);
	return fd;
}

/*
 * The layout was listed without a stat pass (dsfs_layout_build_quick):
 * settle idx's size before it enters a lead window, whose byte sum must
 * use one size for the sample throughout.  Anything but a regular file,
 * or a failure, settles it as not prefetchable (the loader's own reads
 * still work).  The open stays in o for the fetch.  Called without
 * s->lock.
 */
static void settle_sample(struct dsfs_sched *s, uint64_t idx,
			  struct opened *o)
{
	dsfs_layout_settle(s->cfg.layout, idx,
			   open_sample(s, idx, o) ? NULL : &o->st);
}

/* Fetch every chunk of the sample pk picked through o's open if it holds
 * it.  Called without s->lock.  -ENOSPC as fetch_chunk, else 0. */
static int fetch_sample(struct dsfs_sched *s, struct batch *b,
			struct opened *o, const struct pick *pk)
{
	uint64_t idx = pk->idx;
	struct dsfs_fdkey key;
	uint64_t c, size;
	int err = 0;

	if (!dsfs_layout_prefetchable(s->cfg.layout, idx))
		return 0;
	if ((o->fd < 0 || o->idx != idx) && open_sample(s, idx, o))
		return 0; /* e.g. a symlink: the reader's own reads still work */
	if (S_ISREG(o->st.st_mode)) {
		key = (struct dsfs_fdkey){ o->st.st_dev, o->st.st_ino,
					   (uint32_t)o->flags };
		size = (uint64_t)o->st.st_size;
		for (c = 0; !err && (c << DSFS_CHUNK_SHIFT) < size; c++)
			err = fetch_chunk(s, b, &key, &o->fd, size, c,
					  pk->when, pk->after, pk->push,
					  pk->repush);
	}
	opened_close(o);
	return err;
}

/* The tracker r's prefetch follows: the guess while there is one. */
static struct dsfs_tracker *plan_of(const struct srank *r)
{
	return r->guess ? r->guess : r->t;
}

/* Drop r's tracker, keeping its counts for the stats.  Called with
 * s->lock held (or before the thread starts). */
static void retire_locked(struct srank *r)
{
	struct dsfs_tracker_state st;

	if (!r->t)
		return;
	dsfs_tracker_state(r->t, &st);
	r->past_misses += st.mispredictions;
	r->past_accesses += st.accesses;
	dsfs_tracker_free(r->t);
	r->t = NULL;
}

/* Bytes of the sample at position p of r's current epoch (0 past the
 * plan).  Called with s->lock held. */
static uint64_t size_at(struct dsfs_sched *s, struct srank *r, uint64_t p)
{
	uint64_t idx;

	return dsfs_tracker_at(plan_of(r), p, &idx) ? 0 :
	       dsfs_layout_size(s->cfg.layout, idx);
}

/*
 * Move r's lead window [lead_from, fetched) to start at low, keeping its
 * byte sum: O(positions the loader moved past), so the scheduler pays O(1)
 * amortised per sample instead of re-adding the whole lead each time.
 * recount: positions were renumbered (epoch change): sum afresh, once.
 * Called with s->lock held.
 */
static void lead_move_locked(struct dsfs_sched *s, struct srank *r,
			     uint64_t low, bool recount)
{
	uint64_t p;

	if (r->fetched <= low) { /* the loader caught up: nothing ahead */
		r->fetched = low;
		r->lead_bytes = 0;
	} else if (recount || low < r->lead_from) {
		r->lead_bytes = 0;
		for (p = low; p < r->fetched; p++)
			r->lead_bytes += size_at(s, r, p);
	} else {
		for (p = r->lead_from; p < low; p++)
			r->lead_bytes -= size_at(s, r, p);
	}
	r->lead_from = low;
}

/* Bring r's lead window up to date with its tracker.  false when r is not
 * following a plan.  Called with s->lock held. */
static bool rank_update_locked(struct dsfs_sched *s, struct srank *r)
{
	struct dsfs_tracker *t = plan_of(r);
	struct dsfs_tracker_state st;
	bool recount = false;

	if (!t)
		return false;
	dsfs_tracker_state(t, &st);
	if (st.detected == DSFS_TRACKER_LOST ||
	    st.detected == DSFS_TRACKER_DETECTING)
		return false;
	if (st.epoch != r->epoch || st.starts != r->starts) {
		/* positions restart at the boundary; from 0 when the
		 * loader was found again at an epoch's start */
		r->fetched = r->fetched > st.count ? r->fetched - st.count : 0;
		if (st.epoch != r->epoch + 1 || st.starts != r->starts)
			r->fetched = 0;
		r->epoch = st.epoch;
		/* a new epoch: the kernel may keep it */
		__atomic_store_n(&s->repush, false, __ATOMIC_RELAXED);
		r->starts = st.starts;
		recount = true;
	}
	/* The next epoch's order gives the samples read now their next use
	 * (dsfs_tracker_next_use): compute it as soon as this epoch is
	 * followed, the first one included.  O(1) once made. */
	dsfs_tracker_prepare_next(t);
	/* A guess's lead stays where it began: until the epoch is known, the
	 * prefetch fetches at most one lead, which a wrong guess wastes.  The
	 * lead starts where the loader is: with push, only the sentinels'
	 * opens are seen, and the low-water mark stands behind the furthest
	 * open by twice their lag, over samples long read. */
	if (!r->guess)
		lead_move_locked(s, r,
				 dsfs_tracker_low_every(t, DSFS_SCHED_SENTINEL),
				 recount);
	return true;
}

/* idx's next plan read over every rank.  Called with s->lock held. */
static uint64_t next_use_locked(struct dsfs_sched *s, uint64_t idx)
{
	uint64_t when = DSFS_CACHE_NEVER, t;
	struct dsfs_tracker *tr;
	uint32_t i;

	for (i = 0; i < s->nranks; i++) {
		if (!(tr = plan_of(&s->ranks[i])))
			continue;
		t = dsfs_tracker_next_use(tr, idx);
		if (t < when)
			when = t;
	}
	return when;
}

/*
 * Whether pk's sample may be pushed into the page cache (cfg.filled): not
 * at a sentinel position (scheduler.h), and only for the sample's next
 * read over every rank.  A lead that reaches into the next epoch, walked
 * again after the kernel dropped a push (dsfs_sched_repush), meets there
 * samples this epoch still reads ahead of the loader, some at sentinel
 * positions: pushed for the next epoch, they would be served by the
 * kernel this epoch, and the plan would stop seeing the loader.  Called
 * with s->lock held.
 */
static bool pushable_locked(struct dsfs_sched *s, const struct pick *pk)
{
	return pk->pos % DSFS_SCHED_SENTINEL != 0 &&
	       next_use_locked(s, pk->idx) >= pk->when;
}

/*
 * The next sample to fetch: of the ranks following a plan, not blocked and
 * within their share of the lead budget, the one whose next sample is read
 * soonest (so that every local rank stays ahead).  false when none, or
 * when the reads in flight fill the engine's depth, or when that sample's
 * size is not known yet (*settle is then its index).  Called with s->lock
 * held.
 */
static bool next_locked(struct dsfs_sched *s, struct pick *pk,
			uint64_t *settle)
{
	uint64_t share = s->cfg.lead_bytes / s->nranks, idx, when;
	struct srank *r;
	uint32_t i;

	pk->r = NULL;
	s->full = s->inflight >= s->cfg.depth;
	if (s->full)
		return false;
	for (i = 0; i < s->nranks; i++) {
		r = &s->ranks[i];
		if (!rank_update_locked(s, r) || r->blocked ||
		    r->lead_bytes >= share ||
		    dsfs_tracker_at(plan_of(r), r->fetched, &idx))
			continue; /* idle, or the end of the next epoch */
		when = dsfs_tracker_time(plan_of(r), r->fetched);
		if (pk->r && when >= pk->when)
			continue;
		*pk = (struct pick){ r, r->fetched, idx, when,
				     dsfs_layout_size(s->cfg.layout, idx),
				     r->epoch, 0, s->repush, false };
	}
	if (!pk->r)
		return false;
	pk->after = dsfs_tracker_use_after(plan_of(pk->r), pk->idx, pk->pos);
	pk->push = pushable_locked(s, pk);
	if (dsfs_layout_pending(s->cfg.layout, pk->idx)) {
		*settle = pk->idx; /* its size first: see settle_sample */
		pk->r = NULL;
		return false;
	}
	pk->r->lead_bytes += pk->size;
	pk->r->fetched++;
	return true;
}

/* The cache refused pk's sample: take it back, unless the window moved
 * meanwhile, and wait for progress.  Called with s->lock held. */
static void refused_locked(struct dsfs_sched *s, const struct pick *pk)
{
	struct srank *r = pk->r;

	r->blocked = true;
	r->blocked_epoch = r->epoch;
	r->blocked_low = r->lead_from;
	if (r->epoch == pk->epoch && r->fetched == pk->pos + 1 &&
	    r->lead_from <= pk->pos) {
		r->fetched = pk->pos;
		r->lead_bytes -= pk->size;
	}
}

static void prepare_all_locked(struct dsfs_sched *s)
{
	uint32_t i;

	for (i = 0; i < s->nranks; i++)
		if (s->ranks[i].t)
			dsfs_tracker_prepare_next(s->ranks[i].t);
}

/* Where the prefetch of a tracker that joins mid-epoch starts. */
static void follow_from_locked(struct dsfs_sched *s, struct srank *r)
{
	struct dsfs_tracker_state st;

	dsfs_tracker_state(r->t, &st);
	r->epoch = st.epoch;
	r->starts = st.starts;
	/* The loader is at the frontier by now: fetch from there (what lies
	 * before it was read, or is being read, around the cache). */
	r->fetched = st.frontier;
	r->lead_from = st.low;
	r->blocked = false;
	lead_move_locked(s, r, st.low, true);
}

static struct srank *route_locked(struct dsfs_sched *s, uint64_t idx);
static int rank_tracker(struct dsfs_sched *s, struct srank *r, bool detect,
			uint64_t epoch);

static void replay_one(void *arg, uint32_t idx)
{
	struct dsfs_sched *s = arg;
	struct srank *r = route_locked(s, idx);

	if (r->t)
		dsfs_tracker_access(r->t, idx);
}

/*
 * A DistributedSampler's seed was found: follow it from this epoch on with
 * its own trackers, one per local rank, as if it had been given (seed =
 * the one found, epoch 0 = this one), fed this epoch's opens so far.
 */
static void discovered_locked(struct dsfs_sched *s, uint32_t seed)
{
	uint32_t i;

	s->sampler.kind = DSFS_SAMPLER_TORCH_DISTRIBUTED;
	dsfs_seed_from_i64(seed, &s->sampler.seed);
	for (i = 0; i < s->nranks; i++) {
		if (rank_tracker(s, &s->ranks[i], false, 0))
			dsfs_warn("plan: rank %u: cannot follow the seed found",
				  s->ranks[i].rank);
	}
	dsfs_seek_replay(s->seek, replay_one, s);
	for (i = 0; i < s->nranks; i++)
		if (s->ranks[i].t)
			follow_from_locked(s, &s->ranks[i]);
	s->discovered = true;
}

/* seed=discover: a search ended; follow the epoch it found.  Called with
 * s->lock held. */
static void seek_poll_locked(struct dsfs_sched *s)
{
	struct srank *r = &s->ranks[0];
	struct dsfs_tracker *t;
	uint32_t seed;

	switch (dsfs_seek_poll(s->seek, &t, &seed)) {
	case 1: /* RandomSampler: this epoch's order */
		retire_locked(r);
		r->t = t;
		follow_from_locked(s, r);
		break;
	case 2: /* DistributedSampler: every epoch from this one */
		discovered_locked(s, seed);
		break;
	default:
		return;
	}
	publish_now_locked(s);
}

static void *sched_thread(void *arg)
{
	struct dsfs_sched *s = arg;
	struct batch b = { .n = 0 };
	struct opened o = { .fd = -1 };
	struct pick pk = { 0 };
	uint64_t settle;
	int err;

	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		if (s->seek && !s->discovered)
			seek_poll_locked(s);
		settle = UINT64_MAX;
		if (next_locked(s, &pk, &settle)) {
			pthread_mutex_unlock(&s->lock);
			err = fetch_sample(s, &b, &o, &pk);
			pthread_mutex_lock(&s->lock);
			if (err == -ENOSPC)
				refused_locked(s, &pk);
			continue;
		}
		if (settle != UINT64_MAX) {
			pthread_mutex_unlock(&s->lock);
			settle_sample(s, settle, &o);
			pthread_mutex_lock(&s->lock);
			continue;
		}
		if (b.n) { /* nothing more for now: send what is prepared */
			pthread_mutex_unlock(&s->lock);
			batch_flush(s, &b);
			pthread_mutex_lock(&s->lock);
			continue;
		}
		/* Off the access path: the next epochs' orders, if not yet. */
		prepare_all_locked(s);
		if (s->seek && dsfs_seek_reapable(s->seek)) {
			/* Ended searches are joined without the lock (their
			 * end wakes us under it); then look again. */
			pthread_mutex_unlock(&s->lock);
			dsfs_seek_reap(s->seek);
			pthread_mutex_lock(&s->lock);
			continue;
		}
		s->idle = true;
		pthread_cond_wait(&s->wake, &s->lock);
		s->idle = false;
	}
	/* Reads prepared but not sent: counted in flight, and their entries
	 * are being filled, which readers may wait for.  Send them. */
	pthread_mutex_unlock(&s->lock);
	batch_flush(s, &b);
	opened_close(&o);
	pthread_mutex_lock(&s->lock);
	while (s->inflight) /* completions still reference s */
		pthread_cond_wait(&s->wake, &s->lock);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Samples one rank reads per epoch, near enough for
 * dsfs_tracker_window_for(). */
static uint64_t per_rank(const struct dsfs_plan_cfg *p, uint64_t n)
{
	if (p->sampler.kind != DSFS_SAMPLER_TORCH_DISTRIBUTED)
		return n;
	return (n + p->sampler.world - 1) / p->sampler.world;
}

static void ranks_free(struct dsfs_sched *s)
{
	uint32_t i;

	for (i = 0; i < s->nranks; i++) {
		dsfs_tracker_free(s->ranks[i].guess);
		dsfs_tracker_free(s->ranks[i].t);
	}
	free(s->ranks);
}

/* A tracker for rank r following epoch `epoch` (configured), or, for the
 * first rank with epoch auto-detection, one that detects for the group.
 * Replaces r's tracker and where its prefetch stood, if it had one. */
static int rank_tracker(struct dsfs_sched *s, struct srank *r, bool detect,
			uint64_t epoch)
{
	const struct dsfs_plan_cfg *p = s->cfg.plan;
	uint64_t n = dsfs_layout_count(s->cfg.layout);
	int err;

	dsfs_tracker_free(r->guess);
	retire_locked(r);
	r->guess = NULL;
	r->fetched = r->lead_from = r->lead_bytes = 0;
	r->blocked = false;
	err = dsfs_tracker_new(&s->sampler, n, r->rank, detect, epoch,
			       dsfs_tracker_window_for(per_rank(p, n)), &r->t);
	if (!err && detect)
		err = dsfs_tracker_group(r->t, s->nranks);
	if (err) {
		dsfs_tracker_free(r->t);
		r->t = NULL;
	}
	r->epoch = epoch;
	r->starts = 0;
	return err;
}

/* Trackers for every local rank: all of them now for a configured epoch;
 * with auto-detection, the first only (the others once it knows). */
static int ranks_init(struct dsfs_sched *s)
{
	const struct dsfs_plan_cfg *p = s->cfg.plan;
	uint64_t n = dsfs_layout_count(s->cfg.layout);
	uint32_t i;
	int err;

	s->nranks = p->sampler.kind == DSFS_SAMPLER_TORCH_DISTRIBUTED ?
		    p->rank_last - p->rank_first + 1 : 1;
	s->ranks = calloc(s->nranks, sizeof(*s->ranks));
	if (!s->ranks)
		return -ENOMEM;
	for (i = 0; i < s->nranks; i++)
		s->ranks[i].rank = p->rank_first + i;
	if (p->discover)
		return 0; /* trackers come from the searches (seek_poll_locked) */
	for (i = 0; i < (p->epoch_auto ? 1 : s->nranks); i++) {
		err = rank_tracker(s, &s->ranks[i], p->epoch_auto, p->epoch);
		if (err)
			return err;
	}
	/* Fetch from the mount on: each rank's order in the first candidate
	 * epoch until the loaders show their epoch.  Without the guesses,
	 * nothing is fetched before the first opens (which the detection
	 * needs); a rank whose guess cannot be made detects first. */
	for (i = 0; p->epoch_auto && i < s->nranks; i++) {
		if (dsfs_tracker_new(&s->sampler, n, s->ranks[i].rank, false,
				     p->epoch,
				     dsfs_tracker_window_for(per_rank(p, n)),
				     &s->ranks[i].guess))
			s->ranks[i].guess = NULL;
		s->ranks[i].epoch = p->epoch;
	}
	return 0;
}

/* A seed search ended (called by its last thread, no lock held). */
static void sched_wake(void *arg)
{
	struct dsfs_sched *s = arg;

	pthread_mutex_lock(&s->lock);
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
}

/* seed=discover: the per-epoch search (seek.h). */
static int seek_init(struct dsfs_sched *s)
{
	const struct dsfs_plan_cfg *p = s->cfg.plan;
	uint64_t n = dsfs_layout_count(s->cfg.layout);
	struct dsfs_seek_cfg sc = {
		.n = n,
		.models = p->discover_models,
		.world = p->sampler.world,
		.rank_first = p->rank_first,
		.rank_last = p->rank_last,
		.first = p->discover_first,
		.end = p->discover_end,
		.threads = p->discover_threads,
		.window = dsfs_tracker_window_for(per_rank(p, n)),
		.wake = sched_wake,
		.arg = s,
	};
	uint64_t i, shared = 0;

	/* The search matches the opens against raw permutations: a file that
	 * several samples share opens as one of them only. */
	for (i = 0; s->canon && i < n; i++)
		shared += s->canon[i] != i;
	if (shared) {
		dsfs_warn("plan: seed=discover: %llu of %llu samples share a file with an earlier one (a list naming a path twice, or links to one file), so no seed can be searched: following no plan",
			  (unsigned long long)shared, (unsigned long long)n);
		return 0;
	}
	return dsfs_seek_new(&sc, &s->seek);
}

static int sample_of(const struct dsfs_sched *s, const char *path,
		     uint64_t *idx, bool *linked);

/*
 * Samples that share a file (a list naming one path on several lines,
 * links to one file) are one sample to the accesses: sample_of() gives
 * the first.  The trackers then see each such file at every position of
 * its samples (sampler.canon), so that an oversampling list is followed.
 * Only for layouts with repeated lines or aliases: O(n) lookups then.
 */
static int canon_init(struct dsfs_sched *s)
{
	const struct dsfs_layout_info *info = dsfs_layout_info(s->cfg.layout);
	uint64_t i, idx, n = dsfs_layout_count(s->cfg.layout), same = 0;
	char path[PATH_MAX];
	bool linked;

	if (!info->duplicates && !info->aliases)
		return 0;
	s->canon = malloc(n * sizeof(*s->canon));
	if (!s->canon)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (sample_path(s, i, path) ||
		    sample_of(s, path, &idx, &linked))
			idx = i;
		s->canon[i] = (uint32_t)idx;
		same += idx == i;
	}
	if (same == n) {
		free(s->canon);
		s->canon = NULL;
	}
	s->sampler.canon = s->canon;
	return 0;
}

int dsfs_sched_start(const struct dsfs_sched_cfg *cfg, struct dsfs_sched **out)
{
	const struct dsfs_plan_cfg *p = cfg->plan;
	struct dsfs_sched *s = calloc(1, sizeof(*s));
	int err;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	s->sampler = p->sampler;
	s->prefix_len = strcmp(p->dataset, ".") ? strlen(p->dataset) + 1 : 0;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	err = canon_init(s);
	if (!err)
		err = ranks_init(s);
	if (!err && p->discover)
		err = seek_init(s);
	/* Nothing is planned until an access places the loader. */
	dsfs_cache_set_now(s->cfg.cache, DSFS_CACHE_NEVER);
	if (!err)
		err = -pthread_create(&s->thread, NULL, sched_thread, s);
	if (err) {
		dsfs_seek_free(s->seek);
		ranks_free(s);
		free(s->canon);
		pthread_cond_destroy(&s->wake);
		pthread_mutex_destroy(&s->lock);
		free(s);
		return err;
	}
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
	/* Before the lock goes: a search's end takes it (sched_wake). */
	dsfs_seek_free(s->seek);
	/* Nothing planned any more: the cache's entries age out by CLOCK. */
	dsfs_cache_set_now(s->cfg.cache, DSFS_CACHE_NEVER);
	ranks_free(s);
	free(s->canon);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* Whether every local rank is lost and the first holds the group's epoch
 * starts: then all opens go to it, mixed as its starts are.  O(ranks). */
static bool all_lost_locked(struct dsfs_sched *s)
{
	struct dsfs_tracker_state st;
	uint32_t i;

	if (s->nranks < 2 || !s->ranks[0].t ||
	    !dsfs_tracker_holds_group(s->ranks[0].t))
		return false;
	for (i = 1; i < s->nranks; i++) {
		if (!s->ranks[i].t)
			continue;
		dsfs_tracker_state(s->ranks[i].t, &st);
		if (st.detected != DSFS_TRACKER_LOST)
			return false;
	}
	return true;
}

/*
 * The rank whose loader read idx: the first with the highest claim
 * (tracker.h): idx unseen in the window of its current epoch; else at its
 * next epoch's start (a vote for the switch); else anywhere in its orders;
 * else the first rank (a misprediction there).  A rank that pushed most of
 * its epoch (and so saw few of its reads) must not take another rank's
 * vote for an unseen position far behind its frontier.  O(ranks).
 */
static struct srank *route_locked(struct dsfs_sched *s, uint64_t idx)
{
	struct srank *best = &s->ranks[0];
	int claim, top = 0;
	uint32_t i;

	if (all_lost_locked(s))
		return best; /* the group's tracker finds them again */
	for (i = 0; i < s->nranks && top < DSFS_CLAIM_NOW; i++) {
		if (!s->ranks[i].t)
			continue;
		claim = dsfs_tracker_claim(s->ranks[i].t, idx);
		if (claim > top) {
			top = claim;
			best = &s->ranks[i];
		}
	}
	return best;
}

/*
 * The first rank detected the group's epoch (or found the group again at
 * an epoch's start): give the other ranks new trackers of that epoch and
 * the accesses the detection collected that are theirs, and end the
 * guesses (each rank keeps the lead of a right one).  O(ranks * n).
 * Called with s->lock held.
 */
static void group_detected_locked(struct dsfs_sched *s)
{
	struct dsfs_tracker_state st;
	const uint32_t *got;
	uint32_t i, k, ngot;

	dsfs_tracker_state(s->ranks[0].t, &st);
	for (i = 0; i < s->nranks; i++) {
		struct srank *r = &s->ranks[i], was = *r;
		/* A guess of this epoch fetched this rank's order: its lead
		 * stands.  Another epoch's is forgotten (its entries, stale
		 * under the plan time, go first). */
		bool right = was.guess && was.epoch == st.epoch;

		if (i > 0) { /* a new tracker (rank_tracker ends the guess) */
			if (rank_tracker(s, r, false, st.epoch)) {
				dsfs_warn("plan: rank %u: cannot follow epoch %llu",
					  r->rank, (unsigned long long)st.epoch);
				continue;
			}
			dsfs_tracker_set_detected(r->t);
		}
		dsfs_tracker_free(r->guess);
		r->guess = NULL;
		r->epoch = st.epoch;
		if (right) {
			r->fetched = was.fetched;
			r->lead_from = was.lead_from;
			r->lead_bytes = was.lead_bytes;
		} else if (was.guess) {
			r->fetched = r->lead_from = r->lead_bytes = 0;
			r->blocked = false;
		}
	}
	/* Each index is one rank's in an epoch: its tracker alone places it. */
	ngot = dsfs_tracker_collected(s->ranks[0].t, &got);
	for (k = 0; k < ngot; k++)
		for (i = 1; i < s->nranks; i++)
			if (s->ranks[i].t)
				dsfs_tracker_place(s->ranks[i].t, got[k]);
}

/*
 * Publish the plan time now to the cache: the slowest following rank's
 * low-water mark (NEVER when none follows), less NOW_SLACK positions.  The
 * slack is for the read that follows each report: the report moves the
 * mark past the sample before that read finds its entry and gives it its
 * next use, and meanwhile the entry must not look stale (the scheduler
 * would evict it first).  Called with s->lock held.
 */
#define NOW_SLACK 64
static void publish_now_locked(struct dsfs_sched *s)
{
	uint64_t now = DSFS_CACHE_NEVER, t;
	struct dsfs_tracker_state st;
	struct dsfs_tracker *tr;
	uint32_t i;

	for (i = 0; i < s->nranks; i++) {
		if (!(tr = plan_of(&s->ranks[i])))
			continue;
		dsfs_tracker_state(tr, &st);
		t = dsfs_tracker_time(tr, st.low);
		if (t != DSFS_CACHE_NEVER)
			t = t > NOW_SLACK ? t - NOW_SLACK : 0;
		if (t < now)
			now = t;
	}
	dsfs_cache_set_now(s->cfg.cache, now);
}

/* Feed one access to its rank's tracker.  Called with s->lock held. */
/*
 * One log line when a rank's tracker changed mode or epoch over an access
 * (was -> now): the epoch detected, the next epoch begun, the prediction
 * lost or found again.  Rate-limited (a loader that keeps contradicting
 * the plan may flip between lost and tracking).  Called with s->lock held.
 */
static void log_change_locked(struct dsfs_sched *s, const struct srank *r,
			      const struct dsfs_tracker_state *was,
			      const struct dsfs_tracker_state *now, bool group)
{
	bool ddp = s->cfg.plan->sampler.kind == DSFS_SAMPLER_TORCH_DISTRIBUTED;
	unsigned long long e = now->epoch;
	char who[32] = "";
	uint64_t missed;

	if (!dsfs_ratelimit(&s->log_rl, &missed))
		return;
	/* Local ranks detect their epoch together, in the first one's
	 * tracker, and are found again together once all are lost (group:
	 * group_detected_locked gives the others new trackers). */
	if (ddp && (was->detected == DSFS_TRACKER_DETECTING || group) &&
	    s->nranks > 1)
		snprintf(who, sizeof(who), "ranks %u-%u: ", s->ranks[0].rank,
			 s->ranks[s->nranks - 1].rank);
	else if (ddp)
		snprintf(who, sizeof(who), "rank %u: ", r->rank);
	if (missed)
		dsfs_info("plan: %llu changes not logged",
			  (unsigned long long)missed);
	if (now->detected == DSFS_TRACKER_LOST &&
	    was->detected == DSFS_TRACKER_DETECTING)
		dsfs_warn(
			"plan: %sprediction lost: no epoch of the %u tried matches the first %llu opens (wrong seed, sampler or layout, a later epoch: give epoch=N, or another program reading the data set); prefetch by the plan waits for opens that match",
			who, DSFS_TRACKER_DETECT_EPOCHS,
			(unsigned long long)now->accesses);
	else if (now->detected == DSFS_TRACKER_LOST)
		dsfs_warn(
			"plan: %sprediction lost in epoch %llu: %llu of %llu opens mispredicted (a new job, another reader, or a wrong seed or sampler?); prefetch by the plan stops until an epoch's start matches",
			who, e, (unsigned long long)now->mispredictions,
			(unsigned long long)now->accesses);
	else if (was->detected == DSFS_TRACKER_DETECTING)
		dsfs_info("plan: %sepoch %llu detected after %llu opens", who,
			  e, (unsigned long long)now->accesses);
	else if (was->detected == DSFS_TRACKER_LOST)
		dsfs_info(
			"plan: %sprediction found again: following epoch %llu",
			who, e);
	else
		dsfs_info("plan: %sepoch %llu begun", who, e);
}

/*
 * After an access: unblock each rank refused by the cache whose loader has
 * moved WAKE_ITEMS samples on since (their entries may now give way), and
 * say whether the idle thread now has a batch of work: such a rank, or one
 * with fewer than WAKE_ITEMS samples fetched ahead or an eighth of its lead
 * share free.  Never while the thread waits for reads in flight to
 * complete: their completions wake it.  A wake-up per sample cost more CPU
 * than the fetch itself.  Called with s->lock held.
 */
#define WAKE_ITEMS BATCH
static bool wake_worth_locked(struct dsfs_sched *s)
{
	uint64_t share = s->cfg.lead_bytes / s->nranks;
	bool worth = false;
	struct srank *r;
	uint32_t i;

	for (i = 0; i < s->nranks; i++) {
		r = &s->ranks[i];
		if (!rank_update_locked(s, r))
			continue;
		if (r->blocked && r->epoch == r->blocked_epoch &&
		    r->lead_from < r->blocked_low + WAKE_ITEMS)
			continue;
		worth |= r->blocked || r->fetched - r->lead_from < WAKE_ITEMS ||
			 r->lead_bytes + share / 8 <= share;
		r->blocked = false;
	}
	return worth && s->idle && !s->full;
}

/*
 * seed=discover: the open goes to the search of its epoch and, once the
 * epoch's order is known, to its tracker.  An open that starts a new epoch
 * drops the old epoch's tracker.  Called with s->lock held.
 */
static void seek_access_locked(struct dsfs_sched *s, uint64_t idx)
{
	struct srank *r = &s->ranks[0];

	if (dsfs_seek_access(s->seek, idx)) {
		retire_locked(r);
		r->fetched = r->lead_from = r->lead_bytes = 0;
	}
	if (r->t)
		dsfs_tracker_access(r->t, idx);
	publish_now_locked(s);
	if (wake_worth_locked(s))
		pthread_cond_signal(&s->wake);
}

/*
 * The guesses see every open made while the group's tracker detects: the
 * guess whose order claims it most takes it (one rank's, as each file is
 * in one rank's share of an epoch).  A guess that lost the loader ends.
 * O(ranks).  Called with s->lock held.
 */
static void guesses_access_locked(struct dsfs_sched *s, uint64_t idx)
{
	struct dsfs_tracker_state g;
	struct srank *best = NULL;
	int claim, top = DSFS_CLAIM_NONE;
	uint32_t i;

	for (i = 0; i < s->nranks; i++) {
		struct srank *r = &s->ranks[i];

		if (!r->guess)
			continue;
		claim = dsfs_tracker_claim(r->guess, idx);
		if (claim > top) {
			top = claim;
			best = r;
		}
	}
	if (!best)
		return;
	dsfs_tracker_access(best->guess, idx);
	dsfs_tracker_state(best->guess, &g);
	if (g.detected == DSFS_TRACKER_LOST) {
		dsfs_tracker_free(best->guess);
		best->guess = NULL;
	}
}

/*
 * Whether the guesses followed the loaders through the opens the group's
 * detection took (`opens` of them) although the detection found no epoch:
 * every rank still guesses, and the guesses placed all but an eighth of
 * the opens in their orders.  Their prefetch pushes the files it fetched
 * into the page cache, whose reads never reach dsfs but for every
 * DSFS_SCHED_SENTINEL-th sample: the opens the daemon sees then lie
 * spread over eight times as many positions, past what the detection
 * allows (the 32 opens and the window: in an epoch of a few thousand
 * samples, an eighth of it), while each guess follows them as it follows
 * a loader.  A loader at another epoch is placed by chance at most half
 * the time.  O(ranks).  Called with s->lock held.
 */
static bool guesses_right_locked(struct dsfs_sched *s, uint64_t opens)
{
	struct dsfs_tracker_state g;
	uint64_t placed = 0;
	uint32_t i;

	for (i = 0; i < s->nranks; i++) {
		if (!s->ranks[i].guess)
			return false;
		dsfs_tracker_state(s->ranks[i].guess, &g);
		placed += g.accesses - g.mispredictions;
	}
	return opens > 0 && placed >= opens - opens / 8;
}

/* The guesses were right (guesses_right_locked): each becomes its rank's
 * tracker, reporting its epoch as detected, and the lead it fetched
 * stands.  Called with s->lock held. */
static void guesses_promote_locked(struct dsfs_sched *s)
{
	uint32_t i;

	for (i = 0; i < s->nranks; i++) {
		struct srank *r = &s->ranks[i];

		/* Not retired: the guess counted the same opens. */
		dsfs_tracker_free(r->t);
		r->t = r->guess;
		r->guess = NULL;
		dsfs_tracker_set_detected(r->t);
	}
}

static void guesses_end_locked(struct dsfs_sched *s)
{
	uint32_t i;

	for (i = 0; i < s->nranks; i++) {
		dsfs_tracker_free(s->ranks[i].guess);
		s->ranks[i].guess = NULL;
	}
}

/* Whether every local rank follows its loader (none lost or detecting). */
static bool all_follow_locked(struct dsfs_sched *s)
{
	struct dsfs_tracker_state st;
	uint32_t i;

	for (i = 0; i < s->nranks; i++) {
		if (!s->ranks[i].t)
			return false;
		dsfs_tracker_state(s->ranks[i].t, &st);
		if (st.detected != DSFS_TRACKER_CONFIGURED &&
		    st.detected != DSFS_TRACKER_DETECTED)
			return false;
	}
	return true;
}

/* The command name of process pid, or "?". */
static void proc_name(uint32_t pid, char *buf, size_t len)
{
	char path[32];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	if (n <= 0)
		n = snprintf(buf, len, "?");
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

_Static_assert(DSFS_TRACKER_NEVER == DSFS_READERS_NOWHERE,
	       "a plan time the tracker has not is one readers.h has not");

/* CLOCK_MONOTONIC_COARSE in nanoseconds. */
static uint64_t coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Whether process pid's open of idx (routed to r) is left out of the plan
 * (readers.h), only while every rank follows its loader.  A loader's
 * process moves on through r's plan by at most a sixteenth of an epoch
 * from one of its opens to the next (a quarter of the window: DataLoader
 * workers jump further only between their batches), and at least 64
 * positions; a new one starts within the window past the others.  Logs
 * each process judged another program.  The open's time is the report's
 * (last_report_ns, just set by dsfs_sched_access).
 */
static bool other_reader_locked(struct dsfs_sched *s, struct srank *r,
				uint64_t idx, uint32_t pid)
{
	enum dsfs_reader_verdict v;
	struct dsfs_tracker_state st;
	struct dsfs_reader_open o;
	uint64_t missed;
	char name[32];

	if (!pid || !all_follow_locked(s))
		return false;
	dsfs_tracker_state(r->t, &st);
	o.near = dsfs_tracker_window_for(st.count);
	o.span = o.near / 4;
	if (o.span < 64)
		o.span = 64;
	o.when = dsfs_tracker_place_of(r->t, idx);
	v = dsfs_readers_note(&s->readers, pid, &o, s->last_report_ns);
	if (v == DSFS_READER_FEED)
		return false;
	__atomic_add_fetch(&s->other_opens, 1, __ATOMIC_RELAXED);
	if (v == DSFS_READER_LEAVE_NEW &&
	    dsfs_ratelimit(&s->other_rl, &missed)) {
		proc_name(pid, name, sizeof(name));
		dsfs_info("plan: process %u (%s) reads the data set out of the plan's order while the loader follows it: its opens are left out of the plan%s",
			  pid, name,
			  missed ? " (some such lines not logged)" : "");
	}
	return true;
}

static void access_locked(struct dsfs_sched *s, uint64_t idx, uint32_t pid)
{
	struct srank *r = route_locked(s, idx);
	struct dsfs_tracker_state was, now;
	int got;

	if (s->seek && !s->discovered) {
		seek_access_locked(s, idx);
		return;
	}
	if (!r->t || other_reader_locked(s, r, idx, pid))
		return;
	dsfs_tracker_state(r->t, &was);
	got = dsfs_tracker_access(r->t, idx);
	dsfs_tracker_state(r->t, &now);
	/* While a guess is left, only the first rank has a tracker: the
	 * group's, which took this open. */
	if (was.detected == DSFS_TRACKER_DETECTING) {
		guesses_access_locked(s, idx);
		if (now.detected == DSFS_TRACKER_LOST &&
		    guesses_right_locked(s, now.accesses)) {
			/* Every rank has its tracker now: no group's detection
			 * to hand on (group_detected_locked). */
			guesses_promote_locked(s);
			got = DSFS_TRACK_IN_PLAN;
			r = &s->ranks[0];
			dsfs_tracker_state(r->t, &now);
			now.accesses = was.accesses + 1; /* logged: the group's */
		}
	}
	/* Lost or found: every process is judged afresh; a new epoch: all
	 * but other programs (a DataLoader's new workers open samples of
	 * both epochs at first). */
	if (now.detected != was.detected)
		dsfs_readers_clear(&s->readers);
	else if (now.epoch != was.epoch)
		dsfs_readers_new_epoch(&s->readers);
	/* (A lost tracker's candidates moving on an epoch is no news.) */
	if (now.detected != was.detected ||
	    (now.epoch != was.epoch && now.detected != DSFS_TRACKER_DETECTING &&
	     now.detected != DSFS_TRACKER_LOST))
		log_change_locked(s, r, &was, &now,
				  got == DSFS_TRACK_DETECTED && s->nranks > 1);
	/* A group's detection keeps the leads of right guesses; then, or
	 * once one rank knows its epoch (rank_update_locked keeps a right
	 * guess's lead) or lost it, the guesses end. */
	if (got == DSFS_TRACK_DETECTED && s->nranks > 1)
		group_detected_locked(s);
	if (was.detected == DSFS_TRACKER_DETECTING &&
	    now.detected != DSFS_TRACKER_DETECTING)
		guesses_end_locked(s);
	publish_now_locked(s);
	if (wake_worth_locked(s))
		pthread_cond_signal(&s->wake);
}

/* The sample path (relative to SOURCE) is: 0 and *idx, -ENOENT if none.
 * *linked: known only as the target of a symlink. */
static int sample_of(const struct dsfs_sched *s, const char *path,
		     uint64_t *idx, bool *linked)
{
	const char *rel = path;

	if (s->prefix_len &&
	    (strncmp(path, s->cfg.plan->dataset, s->prefix_len - 1) ||
	     path[s->prefix_len - 1] != '/'))
		rel = NULL; /* outside the dataset directory */
	else
		rel += s->prefix_len;
	*linked = false;
	if (rel && !dsfs_layout_lookup(s->cfg.layout, rel, idx))
		return 0;
	/* A sample opened through a symlink shows its target's path. */
	*linked = true;
	return dsfs_layout_lookup_alias(s->cfg.layout, path, idx);
}

bool dsfs_sched_linked(const struct dsfs_sched *s, const char *path)
{
	uint64_t idx;
	bool linked;

	return !sample_of(s, path, &idx, &linked) && linked;
}

uint64_t dsfs_sched_access(struct dsfs_sched *s, const char *path,
			   uint32_t pid, uint64_t *seq)
{
	uint64_t idx, when, now;
	bool linked;

	*seq = __atomic_load_n(&s->reports, __ATOMIC_RELAXED);
	if (sample_of(s, path, &idx, &linked))
		return DSFS_CACHE_NEVER;
	now = coarse_ns();
	pthread_mutex_lock(&s->lock);
	s->last_report_ns = now;
	/* Relaxed: dsfs_sched_recent reads it without the lock. */
	__atomic_store_n(&s->reports, s->reports + 1, __ATOMIC_RELAXED);
	*seq = s->reports;
	access_locked(s, idx, pid);
	when = next_use_locked(s, idx);
	pthread_mutex_unlock(&s->lock);
	return when;
}

void dsfs_sched_repush(struct dsfs_sched *s)
{
	uint32_t i;

	/* Relaxed: the common case, already set, takes no lock. */
	if (__atomic_load_n(&s->repush, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&s->lock);
	if (!s->repush) {
		__atomic_store_n(&s->repush, true, __ATOMIC_RELAXED);
		/* Walk each lead again from the loader's place: what it holds
		 * was found cached, and not handed on, or handed on and
		 * dropped by the kernel since. */
		for (i = 0; i < s->nranks; i++) {
			s->ranks[i].fetched = s->ranks[i].lead_from;
			s->ranks[i].lead_bytes = 0;
		}
		pthread_cond_signal(&s->wake);
	}
	pthread_mutex_unlock(&s->lock);
}

bool dsfs_sched_recent(struct dsfs_sched *s, uint64_t seq, uint64_t within)
{
	return __atomic_load_n(&s->reports, __ATOMIC_RELAXED) - seq <= within;
}

/* Relaxed, both: no report is under way (the caller's word), and
 * dsfs_sched_recent reads the count without a lock. */
uint64_t dsfs_sched_reports(const struct dsfs_sched *s)
{
	return __atomic_load_n(&s->reports, __ATOMIC_RELAXED);
}

void dsfs_sched_number_from(struct dsfs_sched *s, uint64_t n)
{
	__atomic_store_n(&s->reports, n, __ATOMIC_RELAXED);
}

/* One rank's part of the stats.  Called with s->lock held. */
static void rank_stats_locked(struct dsfs_sched *s, struct srank *r,
			      struct dsfs_sched_rank_stats *rs)
{
	memset(rs, 0, sizeof(*rs));
	rs->rank = r->rank;
	rs->track.detected = DSFS_TRACKER_DETECTING;
	if (r->t)
		dsfs_tracker_state(r->t, &rs->track);
	rs->track.mispredictions += r->past_misses;
	rs->track.accesses += r->past_accesses;
	if (rank_update_locked(s, r)) { /* the guess's lead while it guesses */
		rs->lead_bytes = r->lead_bytes;
		rs->lead_items = r->fetched - r->lead_from;
	}
}

void dsfs_sched_get_stats(struct dsfs_sched *s, struct dsfs_sched_stats *st)
{
	struct dsfs_sched_rank_stats rs, *slow = NULL;
	uint64_t slow_time = DSFS_CACHE_NEVER, t, now;
	uint32_t i;

	memset(st, 0, sizeof(*st));
	now = coarse_ns();
	pthread_mutex_lock(&s->lock);
	st->last_open_ns = !s->last_report_ns ? UINT64_MAX :
			   now > s->last_report_ns ? now - s->last_report_ns : 0;
	st->nranks = s->nranks;
	st->discover = s->seek != NULL;
	if (s->seek)
		dsfs_seek_stats(s->seek, &st->seek);
	/* The seek, no longer fed, stays at the epoch of the seed found;
	 * the trackers count the epochs since. */
	if (s->discovered && s->ranks[0].t) {
		dsfs_tracker_state(s->ranks[0].t, &rs.track);
		st->seek.seed += (uint32_t)rs.track.epoch;
		st->seek.epoch += rs.track.epoch;
	}
	for (i = 0; i < s->nranks; i++) {
		rank_stats_locked(s, &s->ranks[i], &rs);
		if (i < DSFS_SCHED_STATS_RANKS)
			st->ranks[i] = rs;
		st->track.mispredictions += rs.track.mispredictions;
		st->track.accesses += rs.track.accesses;
		t = s->ranks[i].t ?
		    dsfs_tracker_time(s->ranks[i].t, rs.track.low) :
		    DSFS_CACHE_NEVER;
		if (i == 0 || (i < DSFS_SCHED_STATS_RANKS && t < slow_time)) {
			slow = &st->ranks[i];
			slow_time = t;
		}
	}
	pthread_mutex_unlock(&s->lock);
	/* The slowest rank's place, and the sums of the counts. */
	st->track.detected = st->ranks[0].track.detected;
	st->track.epoch = slow->track.epoch;
	st->track.low = slow->track.low;
	st->track.frontier = slow->track.frontier;
	st->track.seen = slow->track.seen;
	st->track.count = slow->track.count;
	st->lead_items = slow->lead_items;
	st->lead_bytes = slow->lead_bytes;
	st->prefetch_bytes = __atomic_load_n(&s->prefetch_bytes, __ATOMIC_RELAXED);
	st->prefetch_errors = __atomic_load_n(&s->prefetch_errors,
					      __ATOMIC_RELAXED);
	st->other_opens = __atomic_load_n(&s->other_opens, __ATOMIC_RELAXED);
}
