// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pushing planned data into the kernel's page cache (-o push; on by
 * default unless a memory cgroup leaves no room, see memroom.c).
 *
 * A chunk the plan fetched is copied into the kernel's page cache of its
 * file with FUSE_NOTIFY_STORE as soon as its read completes, so that the
 * loader's reads of it are served by the kernel like warm ones: no READ
 * round trip through the daemon (the only way to reach page-cache speed on
 * a cold epoch).  Only a file whose inode the kernel holds can take a push:
 * a listing with READDIRPLUS creates them (ImageFolder, os.walk, glob); a
 * loader that looks each name up just before its open gets its reads served
 * from the cache instead, as without push.
 *
 * A chunk fetched before the kernel knew its file (a plan that starts at
 * mount, before the loader lists its data set) is parked; when a listing
 * (READDIRPLUS) then names the file, it is pushed a few milliseconds later,
 * once the kernel has made the inode from that reply, the chunks the
 * loader will read first first (pushq.h).  Parking is bounded
 * (a set-associative table sized for a lead of 64 KiB samples, 56 bytes a
 * chunk, at most 14 MiB): what it loses, like files only ever looked up by
 * name, is served from the cache by READs instead.
 *
 * A read that reaches the daemon for a chunk once pushed means the kernel
 * dropped it (fs/read.c); so does one for a chunk the plan found cached
 * and held back as the kernel's already (filled by a READ: another
 * reader's eviction kept it from its push).  The plan then offers the
 * chunks it finds cached too, until the loader's next epoch
 * (dsfs_sched_repush), each only as the queue has room.
 *
 * A chunk whose planned read came first (a loader level with the plan,
 * served by READ) is not pushed: the copy would be for nothing, and would
 * take the push's time from the chunks still ahead of the loader.  Its
 * entry's next use (dsfs_cache_when) no longer is the one the fetch gave.
 *
 * The plan keeps seeing the loader: the scheduler leaves every
 * DSFS_SCHED_SENTINEL-th sample of its order unpushed (scheduler.h), whose
 * reads still come as READs and move the tracker along, and offers a
 * sample only for its next read (a lead reaching into the next epoch holds
 * samples this one reads ahead, some of them sentinels).
 *
 * Never stale: the push is bracketed by fs->fresh_gen, which fresh.c makes
 * odd while it drops a changed file's cache and kernel pages.  A push that
 * overlaps a change, or starts after one it might have missed, is followed
 * by its own invalidation of the inode's pages.  The node id is held by a
 * reference on the inode throughout (dsfs_inodes_find_ref), so it cannot
 * name another file by the time the kernel reads it.  A push only covers
 * bytes within the size the kernel was last told (never extending it).
 *
 * Threads: dsfs_push_offer() from the I/O engine's thread (completions of
 * planned reads) and dsfs_push_listed() from FUSE workers (READDIRPLUS)
 * only queue, never blocking on a copy; one push thread does the copies,
 * at background priority while it keeps ahead of the loader (pace()).
 * `lock` protects the queues, the parking table and `stop`; the push
 * thread holds it only to take or put back an item, but if it is
 * preempted then, at idle priority, a thread offering a chunk waits for
 * it to get a CPU again.  (Dropping the chunk instead, after a few hundred
 * tries of the lock, lost 2 of 212 pushes in a loaded CI run.)
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bgprio.h"
#include "dsfs.h"
#include "inodes.h"
#include "log.h"
#include "mem.h"
#include "pushq.h"

#define WAYS 4		/* the parking table is 4-way set associative */
#define LATER_NS 5000000ull /* a listed file's push waits 5 ms for the
			       kernel to make its inode */
#define TRIES 3		/* pushes of a listed file the kernel lacks */
#define BEHIND_NS 1000000000ull /* normal priority this long after the
				   push fell behind */

struct dsfs_push {
	struct dsfs_fs *fs;
	struct fuse_session *se;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct dsfs_pushq_ring now;	/* protected by lock */
	struct dsfs_pushq_later later;	/* protected by lock */
	struct dsfs_push_item *park;	/* park_sets * WAYS; protected by
					   lock */
	uint64_t park_sets;
	uint64_t parked;		/* items in park: written under lock,
					   read relaxed by dsfs_push_listed */
	bool waiting, stop, started;	/* protected by lock */
	/* The thread's priority (pace()), and until when (CLOCK_MONOTONIC)
	 * it keeps its own: the push thread's alone. */
	struct dsfs_bgprio prio;
	uint64_t behind_ns;
};

enum pushed { PUSH_DONE, PUSH_LATE, PUSH_NO_INODE, PUSH_KERNEL_LACKS };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The parking set of a chunk: WAYS slots. */
static struct dsfs_push_item *park_set(struct dsfs_push *p, uint64_t dev,
				       uint64_t ino, uint64_t chunk)
{
	uint64_t h = (dev * 0x9e3779b97f4a7c15ull) ^ (ino * 0xc2b2ae3d27d4eb4full) ^
		     (chunk * 0x165667b19e3779f9ull);

	return &p->park[((h ^ (h >> 29)) % p->park_sets) * WAYS];
}

/* The parked item of a chunk, or NULL. */
static struct dsfs_push_item *park_find(struct dsfs_push *p, uint64_t dev,
					uint64_t ino, uint64_t gen,
					uint64_t chunk)
{
	struct dsfs_push_item *set = park_set(p, dev, ino, chunk);
	unsigned w;

	for (w = 0; w < WAYS; w++)
		if (set[w].len && set[w].dev == dev && set[w].ino == ino &&
		    set[w].gen == gen && set[w].chunk == chunk)
			return &set[w];
	return NULL;
}

/* Park it: over itself if parked already (fetched again), in a free way
 * of its set, else over the one parked first. */
static void park_put(struct dsfs_push *p, const struct dsfs_push_item *it)
{
	struct dsfs_push_item *set = park_set(p, it->dev, it->ino, it->chunk);
	struct dsfs_push_item *slot =
		park_find(p, it->dev, it->ino, it->gen, it->chunk);
	unsigned w;

	if (!slot) {
		for (w = 0, slot = set; w < WAYS && set[w].len; w++)
			if (set[w].due_ns < slot->due_ns)
				slot = &set[w];
		if (w < WAYS) {
			slot = &set[w];
			__atomic_store_n(&p->parked, p->parked + 1,
					 __ATOMIC_RELAXED);
		} else { /* the older one is lost: its reads come by READ */
			dsfs_count(&p->fs->counters.push_skipped, 1);
		}
	}
	*slot = *it;
	slot->due_ns = now_ns(); /* here: when parked */
}

/* Store entry e (it->len bytes) into the kernel's page cache: one store
 * per run of its memory (libfuse would copy a vector of buffers into one
 * first); every run but the last is whole pages, so each store covers
 * whole pages of the file.  0 or the first store's -errno. */
static int store(struct dsfs_push *p, uint64_t nodeid,
		 struct dsfs_cache_entry *e, const struct dsfs_push_item *it)
{
	struct iovec iov[DSFS_CACHE_MAX_RUNS];
	unsigned i, n = dsfs_cache_iov(p->fs->cache, e, 0, it->len, iov);
	uint64_t off = it->chunk << DSFS_CHUNK_SHIFT;
	int err = 0;

	for (i = 0; i < n && !err; i++) {
		struct fuse_bufvec bv = FUSE_BUFVEC_INIT(iov[i].iov_len);

		bv.buf[0].mem = iov[i].iov_base;
		err = fuse_lowlevel_notify_store(p->se, nodeid, off, &bv, 0);
		off += iov[i].iov_len;
	}
	return err;
}

/* Copy one chunk into the kernel's page cache, if the kernel holds the
 * file and the cache still has the chunk. */
static enum pushed push_one(struct dsfs_push *p,
			    const struct dsfs_push_item *it)
{
	struct dsfs_fs *fs = p->fs;
	struct dsfs_cache_key k = { it->dev, it->ino, it->chunk, it->gen };
	struct dsfs_cache_entry *e;
	struct dsfs_inode *in;
	enum pushed ret = PUSH_DONE;
	uint64_t fresh, nodeid;
	int err;

	/* Sequentially consistent: ordered against fresh.c's invalidation
	 * (see the file comment); the writev of the push is a full barrier
	 * itself. */
	fresh = __atomic_load_n(&fs->fresh_gen, __ATOMIC_SEQ_CST);
	if (fresh & 1) {
		dsfs_count(&fs->counters.push_skipped, 1);
		return PUSH_DONE;
	}
	in = dsfs_inodes_find_ref(fs->inodes, it->dev, it->ino, it->gen);
	if (!in)
		return PUSH_NO_INODE;
	if (!S_ISREG(in->type) ||
	    __atomic_load_n(&in->size, __ATOMIC_RELAXED) != it->size) {
		dsfs_count(&fs->counters.push_skipped, 1);
		goto out;
	}
	nodeid = dsfs_inodes_nodeid(fs->inodes, in);
	err = dsfs_cache_get_at(fs->cache, &k, it->len,
				DSFS_CACHE_NOWAIT | DSFS_CACHE_NOFILL |
					DSFS_CACHE_USE,
				DSFS_CACHE_KEEP, &e);
	if (err != DSFS_CACHE_HIT) {
		dsfs_count(&fs->counters.push_skipped, 1);
		goto out;
	}
	if (dsfs_cache_when(e) != it->when) {
		/* late: its planned read came (by READ, which gave the entry
		 * its next use), or a later plan fetched it again */
		dsfs_count(&fs->counters.push_skipped, 1);
		ret = PUSH_LATE;
	} else if (dsfs_cache_len(e) == it->len &&
		   !dsfs_cache_verify(fs->cache, e)) {
		err = store(p, nodeid, e, it);
		if (!err) {
			dsfs_count(&fs->counters.push_bytes, it->len);
			dsfs_count(&fs->counters.pushes, 1);
			/* Its planned read will not reach the cache. */
			dsfs_cache_set_after(fs->cache, e, it->after);
		} else if (err == -ENOENT) {
			/* not made yet from a listing, or forgotten */
			ret = PUSH_KERNEL_LACKS;
		} else {
			dsfs_count(&fs->counters.push_skipped, 1);
		}
	} else { /* refilled shorter, or failed verify (the read says) */
		dsfs_count(&fs->counters.push_skipped, 1);
	}
	dsfs_cache_unpin(fs->cache, e);
	if (__atomic_load_n(&fs->fresh_gen, __ATOMIC_SEQ_CST) != fresh)
		fuse_lowlevel_notify_inval_inode(p->se, nodeid, 0, 0);
out:
	dsfs_inodes_unref(fs->inodes, in, 1);
	return ret;
}

/* After push_one, with p->lock held: park what the kernel has no inode
 * for, try a listed file again later, count the rest as skipped. */
static void push_after_locked(struct dsfs_push *p,
			      struct dsfs_push_item *it, enum pushed r)
{
	if (r == PUSH_NO_INODE) {
		park_put(p, it);
		return;
	}
	if (r == PUSH_KERNEL_LACKS) {
		it->due_ns = now_ns() + LATER_NS;
		if (++it->tries < TRIES && dsfs_pushq_later_put(&p->later, it))
			return;
		dsfs_count(&p->fs->counters.push_skipped, 1);
	}
}

/* Take the next item due off its queue: false when none is (*wait: the
 * nanoseconds until the first one waiting is, 0 if none waits). */
static bool take_locked(struct dsfs_push *p, struct dsfs_push_item *it,
			uint64_t *wait)
{
	struct dsfs_push_item *h = dsfs_pushq_head(&p->now);

	*wait = 0;
	if (h) {
		*it = *h;
		dsfs_pushq_pop(&p->now);
		return true;
	}
	return dsfs_pushq_later_take(&p->later, now_ns(), it, wait);
}

/*
 * The push competes for the CPUs with the loader's own threads, whose
 * reads of pushed data are copies too.  While it keeps ahead of the
 * loader it runs at background priority (lib/bgprio.h): a job that waits
 * on its reads (a GPU-bound one, with CPUs to spare) gets them first.  On
 * 2 CPUs, a job taking 1,067 MB/s of a 50,000-file set cold stalled 0.50%
 * of its time so, against 1.25% at nice 19 (medians of 10 interleaved
 * runs; in a noisier hour, 1.34% against 2.12%, 8 runs): the kernel let a
 * running push finish its slice first.
 * A chunk whose planned read came before its push means the push falls
 * behind the loader (other work keeps the CPUs busy: pushing at low
 * priority throughout then lost 10 to 25% of a reader's files/s, its files
 * read by READ instead): it runs at its own priority from then until
 * BEHIND_NS after the last such sign.  A full queue only says the push is
 * behind the fetch, which runs up to a lead ahead of the loader: the chunks
 * it drops are served by READ if the loader comes first.  (Counted as a
 * sign too, it kept the push at its own priority through most of a cold
 * epoch, whose fetch runs ahead at the storage's speed: a job taking
 * 1,067 MB/s stalled 1.17% of its time, median of 5 runs, against 0.66%.)
 */
static void pace(struct dsfs_push *p, uint64_t t)
{
	dsfs_bgprio_set(&p->prio, t >= p->behind_ns);
}

/* A sign that the push falls behind: its own priority for BEHIND_NS. */
static void fell_behind(struct dsfs_push *p)
{
	p->behind_ns = now_ns() + BEHIND_NS;
}

static void *push_thread(void *arg)
{
	struct dsfs_push *p = arg;
	struct timespec ts;
	struct dsfs_push_item it;
	uint64_t wait;
	enum pushed r;

	dsfs_bgprio_init(&p->prio);
	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		if (take_locked(p, &it, &wait)) {
			pthread_mutex_unlock(&p->lock);
			pace(p, now_ns());
			r = push_one(p, &it);
			if (r == PUSH_LATE)
				fell_behind(p);
			pthread_mutex_lock(&p->lock);
			push_after_locked(p, &it, r);
			continue;
		}
		p->waiting = true;
		if (wait) { /* `wake` runs on CLOCK_MONOTONIC */
			clock_gettime(CLOCK_MONOTONIC, &ts);
			wait += (uint64_t)ts.tv_nsec;
			ts.tv_sec += (time_t)(wait / 1000000000u);
			ts.tv_nsec = (long)(wait % 1000000000u);
			pthread_cond_timedwait(&p->wake, &p->lock, &ts);
		} else {
			pthread_cond_wait(&p->wake, &p->lock);
		}
		p->waiting = false;
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int dsfs_push_start(struct dsfs_fs *fs, struct fuse_session *se,
		    struct dsfs_push **out)
{
	struct dsfs_push *p = calloc(1, sizeof(*p));
	pthread_condattr_t ca;
	int err;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->fs = fs;
	p->se = se;
	/* Room to park a lead's worth of samples of 64 KiB or more. */
	p->park_sets = dsfs_lead_bytes(fs) / (64u << 10) / WAYS;
	if (p->park_sets < 1024)
		p->park_sets = 1024;
	if (p->park_sets > 65536)
		p->park_sets = 65536;
	/* Resident: items park at random places in it (lib/mem.h). */
	p->park = dsfs_table_new(p->park_sets * WAYS * sizeof(*p->park));
	if (!p->park) {
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->wake, &ca);
	pthread_condattr_destroy(&ca);
	err = dsfs_io_spawn(&p->thread, "dsfs-push", push_thread, p);
	if (err) {
		pthread_cond_destroy(&p->wake);
		pthread_mutex_destroy(&p->lock);
		dsfs_table_free(p->park, p->park_sets * WAYS * sizeof(*p->park));
		free(p);
		return err;
	}
	p->started = true;
	*out = p;
	return 0;
}

bool dsfs_push_offer(struct dsfs_push *p, const struct dsfs_cache_key *k,
		     uint32_t len, uint64_t size, uint64_t when,
		     uint64_t after)
{
	struct dsfs_push_item it = { .dev = k->dev, .ino = k->ino,
				     .chunk = k->chunk, .gen = k->gen,
				     .size = size, .when = when,
				     .after = after, .len = len };
	bool wake = false, queued = true, known;
	uint64_t nodeid;

	/* A file the kernel holds no inode for is parked here, without
	 * waking the push thread for it: a loader that never lists its data
	 * set (only looks names up) would otherwise cost a wake-up per chunk
	 * for nothing.  The thread checks again before it stores. */
	known = !dsfs_inodes_find(p->fs->inodes, k->dev, k->ino, k->gen,
				  &nodeid);

	pthread_mutex_lock(&p->lock);
	if (p->stop)
		queued = false;
	else if (!known)
		park_put(p, &it);
	else if ((queued = dsfs_pushq_put(&p->now, &it)))
		wake = p->waiting;
	pthread_mutex_unlock(&p->lock);
	if (!queued)
		dsfs_count(&p->fs->counters.push_skipped, 1);
	else if (wake)
		pthread_cond_signal(&p->wake);
	return queued;
}

void dsfs_push_listed(struct dsfs_push *p, uint64_t dev, uint64_t ino,
		      uint64_t gen)
{
	struct dsfs_push_item *slot;
	uint64_t c, due = 0;
	bool wake = false;

	/* Relaxed: nothing parked is the common case (a plan fetching after
	 * the listing); one parked meanwhile waits for the next listing. */
	if (!__atomic_load_n(&p->parked, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&p->lock);
	for (c = 0; (slot = park_find(p, dev, ino, gen, c)); c++) {
		if (!due)
			due = now_ns() + LATER_NS;
		slot->due_ns = due;
		if (!dsfs_pushq_later_put(&p->later, slot))
			dsfs_count(&p->fs->counters.push_skipped, 1);
		slot->len = 0;
		__atomic_store_n(&p->parked, p->parked - 1, __ATOMIC_RELAXED);
		wake = p->waiting && !p->stop;
	}
	pthread_mutex_unlock(&p->lock);
	if (wake)
		pthread_cond_signal(&p->wake);
}

void dsfs_push_stop(struct dsfs_push *p)
{
	if (!p || !p->started)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	p->started = false;
}

void dsfs_push_free(struct dsfs_push *p)
{
	if (!p)
		return;
	dsfs_push_stop(p);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	dsfs_table_free(p->park, p->park_sets * WAYS * sizeof(*p->park));
	free(p);
}
