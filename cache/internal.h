/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Internals shared by cache/index.c (the sharded index and the public calls)
 * and cache/policy.c (memory, eviction, admission).  Not for other modules.
 *
 * Locks: c->policy (allocator, CLOCK ring, entry counts), then a shard's
 * lock (its hash chains and the state, pins and links of its entries).
 * Never the other way round, never two shard locks at once, and never a
 * wait on a condition variable with c->policy held.
 */
#ifndef DSFS_CACHE_INTERNAL_H
#define DSFS_CACHE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "alloc.h"
#include "cache.h"
#include "sketch.h"
#include "slab.h"

#define CACHE_SHARDS 64u

enum entry_state { ENTRY_FILLING, ENTRY_READY, ENTRY_FAILED };

struct dsfs_cache_entry {
	/* Immutable after creation. */
	struct dsfs_cache_key key;
	uint64_t hash;			/* XXH3 of key */
	uint32_t npages;		/* pages in all runs */
	uint8_t nruns;			/* 1 .. DSFS_CACHE_MAX_RUNS */
	struct cache_run {
		uint32_t first, npages;
	} run[DSFS_CACHE_MAX_RUNS];	/* the arena runs, in file order */
	/* Written by fill_done before state becomes READY (under the shard
	 * lock), read-only afterwards. */
	uint32_t len;
	uint64_t sum;			/* XXH3-64 of the bytes, with verify */
	/* Protected by the shard lock. */
	struct dsfs_cache_entry *hnext;	/* hash chain */
	uint32_t pins;
	uint8_t state;			/* enum entry_state */
	bool linked;			/* reachable from the index */
	bool stale;			/* invalidated while FILLING */
	bool unused;			/* filled ahead, no DSFS_CACHE_USE yet */
	int error;			/* FAILED: the fill's -errno */
	/* CLOCK's referenced bit: relaxed atomic, no lock (a hint). */
	uint8_t referenced;
	/* Its bytes were pushed into the kernel's page cache (set_after),
	 * fetched by the plan (set_by_plan), held back from a push as the
	 * kernel's already (set_held): relaxed atomics, hints. */
	uint8_t pushed;
	uint8_t by_plan;
	uint8_t held;
	/* Protected by c->policy; `when` is also read relaxed by hits to
	 * see whether it changes.  Unplanned entries (when ==
	 * DSFS_CACHE_NEVER) sit on the CLOCK ring, planned ones in the
	 * next-use heaps. */
	uint64_t when;			/* next planned use */
	uint64_t after;			/* the use after it, if `when` passes
					   unread (dsfs_cache_set_after) */
	struct dsfs_cache_entry *cprev, *cnext; /* CLOCK ring */
	uint32_t slot[2];		/* positions in the next-use heaps */
};

/* nextuse.c: the planned entries by next use (policy held throughout). */
#define NEXTUSE_FAR 0	/* furthest use on top */
#define NEXTUSE_NEAR 1	/* nearest use on top */
#define NEXTUSE_HEAPS 2
struct dsfs_nextuse {
	struct dsfs_cache_entry **v[NEXTUSE_HEAPS];
	uint32_t n, cap;
};
/* false when the heaps cannot grow (e stays out). */
bool dsfs_nextuse_add(struct dsfs_nextuse *u, struct dsfs_cache_entry *e);
void dsfs_nextuse_del(struct dsfs_nextuse *u, struct dsfs_cache_entry *e);
/* e->when changed: restore the heap order.  O(log n). */
void dsfs_nextuse_moved(struct dsfs_nextuse *u, struct dsfs_cache_entry *e);
/* Slot i of heap h (0 is the top; children of i are 2i + 1 and 2i + 2),
 * or NULL past the end. */
struct dsfs_cache_entry *dsfs_nextuse_at(const struct dsfs_nextuse *u, int h,
					 uint32_t i);
void dsfs_nextuse_destroy(struct dsfs_nextuse *u);

struct cshard {
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* an entry of this shard left FILLING */
	struct dsfs_cache_entry **buckets; /* protected by lock */
	uint32_t nbuckets;		/* power of two, protected by lock */
	uint32_t count;			/* linked entries, protected by lock */
	uint32_t accesses;		/* since the last ageing tick, lock */
} __attribute__((aligned(64)));

struct dsfs_cache {
	struct dsfs_arena *arena;
	bool verify;
	pthread_mutex_t policy;
	struct dsfs_alloc *alloc;	/* protected by policy */
	/* The entries (own lock): blocks of them, where malloc grew the
	 * arena of the thread that fetches a page (an mprotect) at a time. */
	struct dsfs_slab entries;
	struct dsfs_cache_entry *hand;	/* CLOCK hand, protected by policy */
	uint64_t nring;			/* entries on the ring, policy */
	struct dsfs_nextuse planned;	/* protected by policy */
	uint64_t now;			/* plan time now; relaxed atomic */
	uint64_t nentries;		/* entries holding memory: written
					   under policy, read relaxed */
	uint64_t used_pages;		/* likewise */
	uint64_t evictions, rejections, invalidations, verify_failures;
	uint64_t evicted_unused_bytes;
	uint64_t scattered;		/* entries placed in several runs */
					/* (all these: relaxed atomic
					   counters) */
	struct dsfs_sketch sketch;
	uint32_t shard_period;		/* accesses per shard per ageing tick;
					   relaxed atomic */
	uint32_t ticks;			/* ageing ticks so far; relaxed atomic */
	struct cshard shards[CACHE_SHARDS];
};

static inline struct cshard *shard_of(struct dsfs_cache *c, uint64_t h)
{
	return &c->shards[h % CACHE_SHARDS];
}

/* index.c: remove a linked entry from its shard.  Shard lock held. */
void dsfs_cache_unlink_locked(struct cshard *s, struct dsfs_cache_entry *e);

/* policy.c; each with c->policy held. */
/* npages of arena in 1 .. DSFS_CACHE_MAX_RUNS runs, into e->run and
 * e->nruns (e->npages set), making room as the policy allows: 0 or -ENOSPC
 * (nothing held). */
int dsfs_cache_reserve(struct dsfs_cache *c, struct dsfs_cache_entry *e,
		       uint32_t npages, uint32_t est, bool force,
		       uint64_t when);
/* Give e's runs back (e itself is the caller's). */
void dsfs_cache_unreserve(struct dsfs_cache *c, struct dsfs_cache_entry *e);
/* Give a new entry its next use (DSFS_CACHE_NEVER: unplanned) and put it
 * on the ring or in the heaps; later, move it when its next use changes. */
void dsfs_cache_place(struct dsfs_cache *c, struct dsfs_cache_entry *e,
		      uint64_t when);
void dsfs_cache_replace(struct dsfs_cache *c, struct dsfs_cache_entry *e,
			uint64_t when);
/* Whether `when` is a plan time still to come (not NEVER, not past). */
bool dsfs_cache_planned(struct dsfs_cache *c, uint64_t when);
void dsfs_cache_release(struct dsfs_cache *c, struct dsfs_cache_entry *e);

/* policy.c, no lock held: one ageing tick from a shard; halves the sketch
 * every CACHE_SHARDS ticks. */
void dsfs_cache_age_tick(struct dsfs_cache *c);
/* policy.c, no lock held: recompute c->shard_period from the current mean
 * entry size (at creation and on every tick). */
void dsfs_cache_set_period(struct dsfs_cache *c);

#endif
