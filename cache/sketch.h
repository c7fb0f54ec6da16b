/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Count-min sketch of access frequency for the cache's admission test:
 * 4 rows of 8-bit saturating counters, keyed by a 64-bit hash.  Estimates
 * only over-count (collisions), never under-count, until halved.
 *
 * Threads: every function except init/destroy may run in any number of
 * threads at once, lock-free (relaxed atomics on 64-bit words of 8 counters);
 * a racing add and halve may lose one increment, which only blurs an
 * estimate.
 */
#ifndef DSFS_SKETCH_H
#define DSFS_SKETCH_H

#include <stdint.h>

#define DSFS_SKETCH_ROWS 4u

struct dsfs_sketch {
	uint64_t *words;	/* DSFS_SKETCH_ROWS rows of `width` counters */
	uint32_t width;		/* counters per row, a power of two >= 8 */
};

/* width_hint: about how many distinct keys to tell apart (the cache passes
 * 4 x its pages: a few times the most entries it can hold); the width is the
 * next power of two, clamped to [1024, 2^22] (at most 16 MiB).  -ENOMEM. */
int dsfs_sketch_init(struct dsfs_sketch *s, uint64_t width_hint);
void dsfs_sketch_destroy(struct dsfs_sketch *s);

/* Count one access to h; returns the estimate from before it.  O(1). */
uint32_t dsfs_sketch_add(struct dsfs_sketch *s, uint64_t h);
/* Estimated accesses to h (0..255).  O(1). */
uint32_t dsfs_sketch_estimate(const struct dsfs_sketch *s, uint64_t h);
/* Halve every counter (ageing).  O(width). */
void dsfs_sketch_halve(struct dsfs_sketch *s);

#endif
