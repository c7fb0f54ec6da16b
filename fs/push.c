// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pushing planned data into the kernel's page cache (-o push, on by
 * default).
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
 * The plan keeps seeing the loader: the scheduler leaves every
 * DSFS_SCHED_SENTINEL-th sample of its order unpushed (scheduler.h), whose
 * reads still come as READs and move the tracker along.
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
 * planned reads), which only queues, never blocking; one push thread does
 * the copies.  `lock` protects the queue and `stop`.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dsfs.h"
#include "inodes.h"
#include "log.h"

#define QUEUE 4096 /* chunks waiting; more are dropped (counted) */

struct item {
	uint64_t dev, ino, chunk, size;
	uint32_t len;
};

struct dsfs_push {
	struct dsfs_fs *fs;
	struct fuse_session *se;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct item q[QUEUE];		/* protected by lock */
	unsigned head, len;		/* protected by lock */
	bool waiting, stop, started;	/* protected by lock */
};

/* Copy one chunk into the kernel's page cache, if the kernel holds the
 * file and the cache still has the chunk. */
static void push_one(struct dsfs_push *p, const struct item *it)
{
	struct dsfs_fs *fs = p->fs;
	struct dsfs_cache_key k = { it->dev, it->ino, it->chunk };
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(it->len);
	struct dsfs_cache_entry *e;
	struct dsfs_inode *in;
	uint64_t gen, nodeid;
	int err;

	/* Sequentially consistent: ordered against fresh.c's invalidation
	 * (see the file comment); the writev of the push is a full barrier
	 * itself. */
	gen = __atomic_load_n(&fs->fresh_gen, __ATOMIC_SEQ_CST);
	in = gen & 1 ? NULL : dsfs_inodes_find_ref(fs->inodes, it->dev, it->ino);
	if (!in || !S_ISREG(in->type) ||
	    __atomic_load_n(&in->size, __ATOMIC_RELAXED) != it->size) {
		dsfs_count(&fs->counters.push_skipped, 1);
		goto out;
	}
	nodeid = dsfs_inodes_nodeid(fs->inodes, in);
	err = dsfs_cache_get_at(fs->cache, &k, it->len,
				DSFS_CACHE_NOWAIT | DSFS_CACHE_NOFILL,
				DSFS_CACHE_KEEP, &e);
	if (err != DSFS_CACHE_HIT) {
		dsfs_count(&fs->counters.push_skipped, 1);
		goto out;
	}
	if (dsfs_cache_len(e) == it->len && !dsfs_cache_verify(fs->cache, e)) {
		bv.buf[0].mem = dsfs_cache_data(fs->cache, e);
		err = fuse_lowlevel_notify_store(p->se, nodeid,
						 it->chunk << DSFS_CHUNK_SHIFT,
						 &bv, 0);
		if (!err) {
			dsfs_count(&fs->counters.push_bytes, it->len);
			dsfs_count(&fs->counters.pushes, 1);
		} else {
			/* -ENOENT: the kernel forgot the inode meanwhile */
			dsfs_count(&fs->counters.push_skipped, 1);
		}
	}
	dsfs_cache_unpin(fs->cache, e);
	if (__atomic_load_n(&fs->fresh_gen, __ATOMIC_SEQ_CST) != gen)
		fuse_lowlevel_notify_inval_inode(p->se, nodeid, 0, 0);
out:
	dsfs_inodes_unref(fs->inodes, in, 1);
}

static void *push_thread(void *arg)
{
	struct dsfs_push *p = arg;
	struct item it;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		if (!p->len) {
			p->waiting = true;
			pthread_cond_wait(&p->wake, &p->lock);
			p->waiting = false;
			continue;
		}
		it = p->q[p->head];
		p->head = (p->head + 1) % QUEUE;
		p->len--;
		pthread_mutex_unlock(&p->lock);
		push_one(p, &it);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int dsfs_push_start(struct dsfs_fs *fs, struct fuse_session *se,
		    struct dsfs_push **out)
{
	struct dsfs_push *p = calloc(1, sizeof(*p));
	int err;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->fs = fs;
	p->se = se;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	err = dsfs_io_spawn(&p->thread, "dsfs-push", push_thread, p);
	if (err) {
		dsfs_warn("push: cannot start its thread (%s): planned data is served by reads only",
			  strerror(-err));
		pthread_cond_destroy(&p->wake);
		pthread_mutex_destroy(&p->lock);
		free(p);
		return err;
	}
	p->started = true;
	*out = p;
	return 0;
}

void dsfs_push_offer(struct dsfs_push *p, const struct dsfs_cache_key *k,
		     uint32_t len, uint64_t size)
{
	bool wake;

	pthread_mutex_lock(&p->lock);
	if (p->stop || p->len == QUEUE) {
		pthread_mutex_unlock(&p->lock);
		dsfs_count(&p->fs->counters.push_skipped, 1);
		return;
	}
	p->q[(p->head + p->len++) % QUEUE] = (struct item){
		k->dev, k->ino, k->chunk, size, len };
	wake = p->waiting;
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
	free(p);
}
