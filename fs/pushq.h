/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The push thread's queues of chunks (fs/push.c), with no FUSE dependency
 * so that unit tests link them: a FIFO ring, and the `later` queue of
 * chunks a listing released, each due a few milliseconds after it (when
 * the kernel has made the listed file's inode).
 *
 * A listing releases its files' chunks in its own order, directory by
 * directory, thousands at once on a cold mount's first epoch; the loader,
 * its listing done, reads them in the plan's.  So the chunks due leave
 * `later` by their next use (`when`, least first), not in the order they
 * came: a binary heap of those due, fed from a ring ordered by due time.
 *
 * Fixed capacity (DSFS_PUSHQ items each; a put to a full one fails and the
 * caller counts the chunk as skipped).  Not thread-safe: fs/push.c holds
 * its lock around every call.  O(1) per ring operation, O(log n) per
 * chunk through the heap.
 */
#ifndef DSFS_PUSHQ_H
#define DSFS_PUSHQ_H

#include <stdbool.h>
#include <stdint.h>

#define DSFS_PUSHQ 4096	/* chunks a queue holds */

/* One chunk to push. */
struct dsfs_push_item {
	uint64_t dev, ino, chunk, size;
	uint64_t gen;		/* the file's generation (lib/ident.h) */
	uint64_t when;		/* its entry's next use when fetched */
	uint64_t after;		/* the entry's next use once pushed */
	uint64_t due_ns;	/* CLOCK_MONOTONIC: in `later`, not before;
				   parked, when parked */
	uint32_t len;		/* 0: an empty parking slot */
	uint32_t tries;
};

/* A FIFO of items. */
struct dsfs_pushq_ring {
	struct dsfs_push_item q[DSFS_PUSHQ];
	unsigned head, len;
};

/* Chunks released by a listing: `wait` in due order, `due` a heap. */
struct dsfs_pushq_later {
	struct dsfs_pushq_ring wait;	/* due_ns never decreasing */
	struct {
		struct dsfs_push_item q[DSFS_PUSHQ];
		unsigned len;
	} due;				/* least `when` at q[0] */
};

/* false if full. */
bool dsfs_pushq_put(struct dsfs_pushq_ring *r, const struct dsfs_push_item *it);
/* The first item, or NULL if empty; dsfs_pushq_pop() removes it. */
struct dsfs_push_item *dsfs_pushq_head(struct dsfs_pushq_ring *r);
void dsfs_pushq_pop(struct dsfs_pushq_ring *r);

/* Queue it, due at it->due_ns, which must not be before any queued item's
 * (callers give now + a constant).  false if full. */
bool dsfs_pushq_later_put(struct dsfs_pushq_later *l,
			  const struct dsfs_push_item *it);
/* At time now_ns, take the due item with the least `when` into *it: true;
 * false if none is due, *wait_ns then the nanoseconds until the first one
 * is (0 if none is queued). */
bool dsfs_pushq_later_take(struct dsfs_pushq_later *l, uint64_t now_ns,
			   struct dsfs_push_item *it, uint64_t *wait_ns);
#endif
