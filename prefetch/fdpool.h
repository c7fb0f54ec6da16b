/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Bounded pool of open backing file descriptors.
 *
 * dsfs never keeps one fd per inode: every read (and, later, every fetch)
 * borrows an fd from this pool, keyed by the backing file's identity, and
 * returns it.  At most `capacity` idle-or-busy fds stay cached; when every
 * cached fd is busy a borrower gets a private fd that is closed on return, so
 * the process holds at most capacity + (number of concurrent borrowers) fds.
 *
 * Threads: any thread may call any function except new/free.  The pool is
 * split in shards, each with its own mutex; opening a file happens outside
 * every lock.
 */
#ifndef DSFS_FDPOOL_H
#define DSFS_FDPOOL_H

#include <stdint.h>

struct dsfs_fdpool;

/* What an fd is for: the backing file's identity (its generation too:
 * lib/ident.h) and the open flags. */
struct dsfs_fdkey {
	uint64_t dev;
	uint64_t ino;
	uint32_t flags;
	uint64_t gen;
};

/* A borrowed fd; hand it back with dsfs_fdpool_put(). */
struct dsfs_fdref {
	int fd;
	void *ent; /* pool entry, or NULL for a private fd */
};

/*
 * Opens the file for a missing key: returns an fd (owned by the pool from
 * then on) or -errno.  Called without any pool lock held.
 */
typedef int (*dsfs_fdpool_open_fn)(void *arg, const struct dsfs_fdkey *key);

/* capacity >= 1.  Returns NULL on allocation failure. */
struct dsfs_fdpool *dsfs_fdpool_new(unsigned capacity);
/* Closes every fd; no borrow may be outstanding. */
void dsfs_fdpool_free(struct dsfs_fdpool *pool);

/* Borrow an fd for key, opening it through open_fn on a miss.  0 or -errno. */
int dsfs_fdpool_get(struct dsfs_fdpool *pool, const struct dsfs_fdkey *key,
		    dsfs_fdpool_open_fn open_fn, void *arg,
		    struct dsfs_fdref *ref);
void dsfs_fdpool_put(struct dsfs_fdpool *pool, struct dsfs_fdref *ref);

/*
 * Drop the cached fd of a file (dev, ino) under every flag set, e.g. after
 * the file changed.  Busy fds are closed when their last borrower returns.
 */
void dsfs_fdpool_forget(struct dsfs_fdpool *pool, uint64_t dev, uint64_t ino);

/* Borrows so far that found no fd and called open_fn (for stats). */
uint64_t dsfs_fdpool_misses(struct dsfs_fdpool *pool);

/* Number of fds the pool holds now (cached plus private); for tests. */
unsigned dsfs_fdpool_open_count(struct dsfs_fdpool *pool);

#endif
