/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cache of file data: an index of entries, each one chunk of one backing
 * file (up to DSFS_CHUNK_SIZE bytes, packed into the arena by the page
 * allocator in up to DSFS_CACHE_MAX_RUNS runs of pages), with states, pins,
 * waiters, admission and eviction.
 *
 * Entry life: absent -> FILLING (created by a get that returns
 * DSFS_CACHE_FILL; the caller reads the bytes into dsfs_cache_iov() and
 * calls dsfs_cache_fill_done()) -> READY -> evicted or invalidated.  A failed
 * fill removes the entry and hands the error to every waiter; the next get
 * starts afresh.  Entries are pinned while anyone reads or fills their
 * memory; eviction and invalidation never free pinned memory (an invalidated
 * pinned entry is unlinked at once and freed at its last unpin).
 *
 * Memory: used bytes (whole pages) never exceed the arena's size.
 *
 * Policy with a plan: each entry may carry the plan time of its next use
 * (dsfs_cache_get_at; plan time: epoch * samples + position, as the plan's
 * owner counts it), and those entries are evicted by next use: the one
 * read furthest in the future goes first, and only for a candidate read
 * sooner (Belady's MIN rule; see policy.c).  An entry whose time passed
 * unread is evicted first.
 *
 * Policy without a plan: scan-resistant admission (an estimate of each key's
 * access frequency, kept for absent keys too and aged periodically): when
 * room must be made, a new entry is admitted only if it is accessed more
 * often than the entries it would evict, so random-order epochs larger than
 * the cache keep a hit rate of about cache/dataset instead of thrashing.
 * (The candidate's estimate counts its accesses before the current one, so
 * a key that is merely next in a random epoch does not displace an entry
 * that is also still to be read; see policy.c.)  Victims are chosen
 * CLOCK-style among unpinned READY entries.
 *
 * Threads: any thread may call anything except new/free.  The index is
 * sharded (a mutex and a condition variable per shard); allocation and
 * eviction take one policy mutex (only on misses); hits take only their
 * shard's mutex.  Lock order: policy, then shard.
 */
#ifndef DSFS_CACHE_H
#define DSFS_CACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "arena.h"

#define DSFS_CHUNK_SHIFT 21u
#define DSFS_CHUNK_SIZE (1u << DSFS_CHUNK_SHIFT) /* 2 MiB */
/* An entry's memory is at most this many runs of whole pages: a reply or
 * a read covering one entry needs at most this many iovecs. */
#define DSFS_CACHE_MAX_RUNS 8u

struct dsfs_cache;
struct dsfs_cache_entry;

struct dsfs_cache_key {
	uint64_t dev, ino;	/* backing file identity */
	uint64_t chunk;		/* byte offset >> DSFS_CHUNK_SHIFT */
	uint64_t gen;		/* ... and the file's generation
				   (lib/ident.h): a file under a reused
				   inode number finds none of the
				   deleted one's chunks */
};

struct dsfs_cache_cfg {
	struct dsfs_arena *arena;	/* not owned; outlives the cache */
	bool verify;			/* keep and check an XXH3-64 per entry */
};

enum dsfs_cache_got {
	DSFS_CACHE_HIT,		/* *out is READY and pinned */
	DSFS_CACHE_FILL,	/* *out is new, FILLING and pinned: fill it */
	DSFS_CACHE_BUSY,	/* NOWAIT only: someone else is filling it */
};

/* Flags for dsfs_cache_get. */
#define DSFS_CACHE_NOWAIT 1u	/* never block on another's fill (prefetch) */
#define DSFS_CACHE_NOFILL 2u	/* lookup only: -ENOENT when absent */
#define DSFS_CACHE_FORCE 4u	/* admit even if the frequency test says no
				   (a planned prefetch knows better) */
#define DSFS_CACHE_USE 8u	/* the caller hands the bytes on (a read, a
				   push): an entry filled ahead of any use
				   (a prefetch) counts as used from then on */
#define DSFS_CACHE_STAY 16u	/* dsfs_cache_get_at: a found entry keeps its
				   next use (a read that leaves part of the
				   chunk to a later one); a new one takes
				   `when` */

/* NULL on allocation failure. */
struct dsfs_cache *dsfs_cache_new(const struct dsfs_cache_cfg *cfg);
/* No entry may be pinned. */
void dsfs_cache_free(struct dsfs_cache *c);

/*
 * Find or create the entry for k.  len: the bytes the chunk should hold
 * (min(file size - chunk start, DSFS_CHUNK_SIZE)), used to size a new entry.
 * Returns a dsfs_cache_got value, or:
 *   -ENOSPC  not admitted, or no room even after eviction (or no memory for
 *            the entry's bookkeeping): read around the cache;
 *   -ENOENT  absent and DSFS_CACHE_NOFILL;
 *   -EINVAL  len is 0 or above DSFS_CHUNK_SIZE;
 *   -errno   the fill this call waited for failed with that error.
 * Never -ESTALE: when the fill it waited for was invalidated, the call
 * starts over (and may return FILL for a fresh entry).
 * Blocks only while another thread fills the same entry (never with NOWAIT).
 * Every access counts for the frequency estimate.  Same as
 * dsfs_cache_get_at with DSFS_CACHE_KEEP.
 */
int dsfs_cache_get(struct dsfs_cache *c, const struct dsfs_cache_key *k,
		   uint32_t len, unsigned flags, struct dsfs_cache_entry **out);

/* Next-use times: no planned use (the entry follows CLOCK and admission) */
#define DSFS_CACHE_NEVER UINT64_MAX
/* ... and, for dsfs_cache_get_at, "leave a found entry's time as it is". */
#define DSFS_CACHE_KEEP (UINT64_MAX - 1)

/*
 * dsfs_cache_get, telling the entry's next planned use: `when` (a plan time
 * not yet past, see dsfs_cache_set_now) sets the found or created entry's
 * next use and makes a created one a planned candidate (never refused by
 * the frequency test; refused when every victim is needed sooner);
 * DSFS_CACHE_NEVER makes it unplanned; DSFS_CACHE_KEEP changes nothing on a
 * found entry (a new one is unplanned).  A time already past counts as
 * NEVER.  A hit that changes the time takes the policy lock once, O(log
 * planned entries).
 */
int dsfs_cache_get_at(struct dsfs_cache *c, const struct dsfs_cache_key *k,
		      uint32_t len, unsigned flags, uint64_t when,
		      struct dsfs_cache_entry **out);
/*
 * The plan time now: planned entries whose time is earlier are stale (their
 * read never came) and evicted before anything else.  DSFS_CACHE_NEVER
 * makes every planned entry stale (the plan was abandoned).  Starts at 0.
 * Relaxed; any thread.
 */
void dsfs_cache_set_now(struct dsfs_cache *c, uint64_t now);

/*
 * The planned use of pinned entry e will be served without the cache (its
 * bytes were pushed into the kernel's page cache): once that use passes
 * unread, its next use is `after` (a plan time; NEVER: none), where a read
 * would have moved it, instead of going first as stale.  A later get_at
 * that sets a next use cancels it.  Unplanned entries ignore it.  Takes
 * the policy lock; O(1).
 */
void dsfs_cache_set_after(struct dsfs_cache *c, struct dsfs_cache_entry *e,
			  uint64_t after);
/* Whether set_after was ever called on e: its bytes were pushed into the
 * kernel's page cache once, so a read of them that reaches the daemon
 * means the kernel dropped them.  Relaxed. */
bool dsfs_cache_pushed(const struct dsfs_cache_entry *e);
/* The plan fills pinned e (dsfs_cache_by_plan: whether it ever did).
 * Relaxed; no lock. */
void dsfs_cache_set_by_plan(struct dsfs_cache_entry *e);
bool dsfs_cache_by_plan(const struct dsfs_cache_entry *e);
/* The plan would have pushed pinned e's bytes into the kernel's page
 * cache, but found them cached by a reader's READ and held them back: the
 * kernel was taken to hold them.  dsfs_cache_held: whether that ever
 * happened.  Relaxed; no lock. */
void dsfs_cache_set_held(struct dsfs_cache_entry *e);
bool dsfs_cache_held(const struct dsfs_cache_entry *e);

/*
 * Memory of an entry: capacity bytes (whole pages) in up to
 * DSFS_CACHE_MAX_RUNS runs, each 4 KiB aligned and a whole number of pages
 * long (for O_DIRECT).  dsfs_cache_iov describes the entry's bytes [off,
 * off + len), clipped to its capacity, as iovecs in order: their count
 * (0 when off is at or past the capacity or len is 0), at most
 * DSFS_CACHE_MAX_RUNS.  O(runs).
 */
unsigned dsfs_cache_iov(struct dsfs_cache *c, const struct dsfs_cache_entry *e,
			uint32_t off, uint32_t len, struct iovec *iov);
uint32_t dsfs_cache_capacity(const struct dsfs_cache_entry *e);
/* Valid bytes of a READY entry (short at end of file). */
uint32_t dsfs_cache_len(const struct dsfs_cache_entry *e);
/* A pinned entry's next planned use (NEVER: none).  Relaxed. */
uint64_t dsfs_cache_when(const struct dsfs_cache_entry *e);

/*
 * End a fill: result is the number of bytes read (0..capacity) or -errno.
 * Wakes every waiter.  Any thread (typically the I/O engine's).  Does not
 * unpin: the filler still holds its pin.
 */
void dsfs_cache_fill_done(struct dsfs_cache *c, struct dsfs_cache_entry *e,
			  int result);
/* Block until e is no longer FILLING: 0 if READY, else the fill's -errno;
 * -ESTALE if the file was invalidated during the fill (the bytes were
 * discarded: get again).  The caller holds a pin on e. */
int dsfs_cache_wait(struct dsfs_cache *c, struct dsfs_cache_entry *e);
void dsfs_cache_unpin(struct dsfs_cache *c, struct dsfs_cache_entry *e);

/* With verify: 0 if the READY entry's bytes still hash as at fill time,
 * else -EIO.  Without verify: 0.  O(len). */
int dsfs_cache_verify(struct dsfs_cache *c, const struct dsfs_cache_entry *e);

/* Drop every chunk of a file (it changed or vanished), of every
 * generation.  On return no get
 * finds any of them: unpinned ones are freed, pinned ones stay readable by
 * their holders and are freed at the last unpin, FILLING ones will be
 * discarded by their fill_done (see dsfs_cache_wait).  Rare; O(entries). */
void dsfs_cache_invalidate(struct dsfs_cache *c, uint64_t dev, uint64_t ino);

struct dsfs_cache_stats {
	uint64_t capacity_bytes;	/* arena size */
	uint64_t used_bytes;		/* pages held by entries */
	uint64_t entries;		/* holding memory (incl. pinned,
					   invalidated ones not yet freed) */
	uint64_t evictions;		/* entries evicted to make room */
	uint64_t evicted_unused_bytes;	/* of those, bytes fetched ahead and
					   evicted before any use */
	uint64_t rejections;		/* admissions refused */
	uint64_t invalidations;		/* entries dropped as stale */
	uint64_t verify_failures;
	uint64_t scattered;		/* entries placed in several runs of
					   pages (free pages not contiguous) */
};
void dsfs_cache_get_stats(struct dsfs_cache *c, struct dsfs_cache_stats *s);

#endif
