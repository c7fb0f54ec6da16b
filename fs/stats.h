/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Read-path counters and the stats snapshot.
 *
 * Counters are per-mount relaxed atomics: each is an independent monotonic
 * count, nothing is inferred from the order of two counters, so no ordering
 * is needed; no lock is taken on the read path.
 *
 * The snapshot is one flat text document, one "key value" line per field,
 * keys dotted for nesting ("cache.used_bytes"), values JSON tokens (numbers,
 * strings, true/false, arrays of numbers).  The daemon serves it as the
 * value of the extended attribute DSFS_STATS_XATTR on the mount root (it
 * works on a read-only mount and shows in no listing); dsfs-stats turns it
 * into a table, JSON or Prometheus text.  Keys are only ever added.
 */
#ifndef DSFS_STATS_H
#define DSFS_STATS_H

#include <stddef.h>
#include <stdint.h>

#define DSFS_STATS_XATTR "user.dsfs.stats"

struct dsfs_counters {
	uint64_t reads;		/* FUSE READ requests */
	uint64_t read_bytes;	/* bytes replied */
	uint64_t hit_bytes;	/* ... served without waiting on backing I/O */
	uint64_t miss_bytes;	/* ... that waited on backing I/O */
	uint64_t stalls;	/* reads that waited on backing I/O */
	uint64_t stall_ns;	/* total time they waited */
	uint64_t bypass_bytes;	/* ... read around the cache (not admitted) */
	uint64_t prefetch_bytes; /* bytes fetched ahead of any reader */
	uint64_t errors;	/* reads answered with an error */
	uint64_t pushes;	/* chunks pushed into the page cache */
	uint64_t push_bytes;	/* ... their bytes */
	uint64_t push_skipped;	/* chunks not pushed: no kernel inode,
				   evicted, changed, or the queue full */
	uint64_t direct_opens;	/* opens answered FOPEN_DIRECT_IO */
	uint64_t cached_opens;	/* ... with the page cache (direct_io=auto) */
	uint64_t warmed;	/* the plan's files stat'ed ahead (warm.c) */
	uint64_t warm_bytes;	/* not a count: memory of the warm-up's
				   records not yet given back (warm.c) */
};

static inline void dsfs_count(uint64_t *counter, uint64_t n)
{
	__atomic_add_fetch(counter, n, __ATOMIC_RELAXED); /* see file comment */
}

static inline uint64_t dsfs_counter_get(const uint64_t *counter)
{
	return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

#endif
