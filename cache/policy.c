// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cache's memory policy (see cache.h): page runs from the allocator
 * (an entry takes up to DSFS_CACHE_MAX_RUNS of them, so free pages that
 * are not contiguous still serve it, and every evicted page counts),
 * next-use eviction of planned entries, CLOCK eviction and frequency-based
 * admission of the others, and ageing of the frequency sketch.
 *
 * Planned entries (a plan said when each will next be read, in plan time:
 * epoch * samples + position) sit in two heaps by that time (nextuse.c).
 * Room is made first by evicting a planned entry whose time has passed
 * (its read never came: served by the page cache, or the plan moved on);
 * a planned candidate then takes unplanned entries, then the planned entry
 * read furthest in the future, but only if that is later than the
 * candidate's own next use (else the candidate is refused and read around
 * the cache): Belady's MIN rule with a byte budget, and what bounds how far
 * a prefetch may run ahead.  The plan's owner publishes the time now
 * (dsfs_cache_set_now); NEVER makes every planned entry stale at once.
 *
 * Unplanned entries sit on one CLOCK ring (new ones just
 * behind the hand, so they get a full turn).  A hit sets the entry's
 * referenced bit with a relaxed store and no lock; the hand clears set bits
 * as it passes and stops at the first unreferenced entry that is linked,
 * READY and unpinned (checked under that entry's shard lock).
 *
 * Admission (TinyLFU-like): when room must be made, the candidate's
 * frequency estimate must be strictly greater than each victim's; ties
 * refuse.  The candidate's estimate excludes the access being served (it is
 * the count from before it): under random-order epochs every key is read
 * once per epoch, so a key still to be read this epoch would otherwise beat
 * an entry that is also still to be read, and the cache would keep swapping
 * entries that were about to hit for ones that will not be read again this
 * epoch.  Without that, the hit rate of epochs larger than the cache drops
 * well below cache/dataset; with it, the cache keeps a stable set and gets
 * about cache/dataset.  A key read more often than its victim still gets in.
 * Several victims may be needed (sizes differ); each is tested as it
 * comes, and a refusal keeps the ones already evicted evicted.
 *
 * Ageing: every W accesses all counters are halved, W = 10 x the entries
 * the cache holds at the current mean entry size, so that old epochs fade.
 * Accesses are counted per shard under the shard lock; a shard reaching
 * W / CACHE_SHARDS adds one tick to an atomic, and the thread whose tick
 * completes CACHE_SHARDS of them halves the sketch (O(sketch) every W
 * accesses, no lock on the hit path beyond the shard's).
 *
 * Threads: every function here except dsfs_cache_age_tick runs with
 * c->policy held; eviction takes a victim's shard lock under it (lock order
 * policy -> shard).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "internal.h"

#define AGE_FACTOR 10u /* W = AGE_FACTOR x entries the cache holds */

/* EVICT_MOVED: no victim, but a stale entry took its later use (after);
 * look again. */
enum evict_result { EVICT_DONE, EVICT_REFUSED, EVICT_NONE, EVICT_MOVED };

static void store_counts(struct dsfs_cache *c)
{
	/* Relaxed: readers (stats, the ageing period) want a recent value,
	 * and nothing else is published through these. */
	__atomic_store_n(&c->used_pages, dsfs_alloc_used_pages(c->alloc),
			 __ATOMIC_RELAXED);
}

static void ring_add(struct dsfs_cache *c, struct dsfs_cache_entry *e)
{
	if (!c->hand) {
		e->cprev = e->cnext = e;
		c->hand = e;
	} else {
		e->cnext = c->hand;
		e->cprev = c->hand->cprev;
		e->cprev->cnext = e;
		c->hand->cprev = e;
	}
	c->nring++;
}

static void ring_del(struct dsfs_cache *c, struct dsfs_cache_entry *e)
{
	if (e->cnext == e) {
		c->hand = NULL;
	} else {
		if (c->hand == e)
			c->hand = e->cnext;
		e->cprev->cnext = e->cnext;
		e->cnext->cprev = e->cprev;
	}
	e->cprev = e->cnext = NULL;
	c->nring--;
}

bool dsfs_cache_planned(struct dsfs_cache *c, uint64_t when)
{
	return when != DSFS_CACHE_NEVER &&
	       when >= __atomic_load_n(&c->now, __ATOMIC_RELAXED);
}

/* Put e where its next use says: the heaps, or the ring (also when the
 * heaps cannot grow: CLOCK still works). */
static void file_entry(struct dsfs_cache *c, struct dsfs_cache_entry *e,
		       uint64_t when)
{
	__atomic_store_n(&e->when, when, __ATOMIC_RELAXED);
	if (when != DSFS_CACHE_NEVER && dsfs_nextuse_add(&c->planned, e))
		return;
	__atomic_store_n(&e->when, DSFS_CACHE_NEVER, __ATOMIC_RELAXED);
	ring_add(c, e);
}

static void unfile_entry(struct dsfs_cache *c, struct dsfs_cache_entry *e)
{
	if (e->when == DSFS_CACHE_NEVER)
		ring_del(c, e);
	else
		dsfs_nextuse_del(&c->planned, e);
}

void dsfs_cache_place(struct dsfs_cache *c, struct dsfs_cache_entry *e,
		      uint64_t when)
{
	e->after = DSFS_CACHE_NEVER;
	file_entry(c, e, when);
	__atomic_store_n(&c->nentries, c->nentries + 1, __ATOMIC_RELAXED);
}

void dsfs_cache_replace(struct dsfs_cache *c, struct dsfs_cache_entry *e,
			uint64_t when)
{
	e->after = DSFS_CACHE_NEVER; /* a new next use supersedes it */
	if (e->when == when)
		return;
	if (e->when != DSFS_CACHE_NEVER && when != DSFS_CACHE_NEVER) {
		/* Relaxed: hits only compare it (see internal.h). */
		__atomic_store_n(&e->when, when, __ATOMIC_RELAXED);
		dsfs_nextuse_moved(&c->planned, e);
		return;
	}
	unfile_entry(c, e);
	file_entry(c, e, when);
}

/* Free e's memory and e.  Nobody can reach e any more: it is unlinked from
 * the index and unpinned, and the hand moves off it here. */
void dsfs_cache_release(struct dsfs_cache *c, struct dsfs_cache_entry *e)
{
	unfile_entry(c, e);
	dsfs_cache_unreserve(c, e);
	__atomic_store_n(&c->nentries, c->nentries - 1, __ATOMIC_RELAXED);
	dsfs_slab_free(&c->entries, e, sizeof(*e));
}

static bool evictable(const struct dsfs_cache_entry *e)
{
	return e->linked && e->state == ENTRY_READY && !e->pins;
}

/* Evict e, found evictable under its shard's lock s (held; dropped here). */
static void evict(struct dsfs_cache *c, struct cshard *s,
		  struct dsfs_cache_entry *e)
{
	if (e->unused) /* READY: len is final */
		__atomic_add_fetch(&c->evicted_unused_bytes, e->len,
				   __ATOMIC_RELAXED);
	dsfs_cache_unlink_locked(s, e);
	pthread_mutex_unlock(&s->lock);
	dsfs_cache_release(c, e);
	__atomic_add_fetch(&c->evictions, 1, __ATOMIC_RELAXED);
}

/*
 * Evict the entry under the CLOCK hand, if the candidate (estimate est)
 * beats it or force.  At most two turns of the ring: the first may only
 * clear referenced bits.  O(entries) worst case, O(1) typical.
 */
static enum evict_result evict_one(struct dsfs_cache *c, uint32_t est,
				   bool force)
{
	uint64_t steps, limit = 2 * c->nring + 1;
	struct dsfs_cache_entry *e;
	struct cshard *s;

	for (steps = 0; steps < limit && c->hand; steps++) {
		e = c->hand;
		/* Relaxed: the bit is a hint; a hit racing with the clear
		 * merely loses one second chance. */
		if (__atomic_load_n(&e->referenced, __ATOMIC_RELAXED)) {
			__atomic_store_n(&e->referenced, 0, __ATOMIC_RELAXED);
			c->hand = e->cnext;
			continue;
		}
		s = shard_of(c, e->hash);
		pthread_mutex_lock(&s->lock);
		if (!evictable(e)) {
			pthread_mutex_unlock(&s->lock);
			c->hand = e->cnext;
			continue;
		}
		if (!force &&
		    est <= dsfs_sketch_estimate(&c->sketch, e->hash)) {
			pthread_mutex_unlock(&s->lock);
			return EVICT_REFUSED; /* the hand stays: same victim next */
		}
		evict(c, s, e);
		return EVICT_DONE;
	}
	return EVICT_NONE;
}

/* Whether entry e of heap h is still beyond the bound (see evict_heap). */
static bool beyond(int h, const struct dsfs_cache_entry *e, uint64_t bound)
{
	return h == NEXTUSE_FAR ? e->when > bound : e->when < bound;
}

/*
 * Evict the best entry of heap h (FAR: used furthest; NEAR: whose use
 * passed longest ago) that is evictable and beyond bound (FAR: used later
 * than bound; NEAR: its use passed before bound).  The heap is explored
 * best first, up to HEAP_PROBES entries, never into a subtree whose root
 * is not beyond the bound; entries being filled or read are skipped (they
 * are few: reads and fills in flight).  Any freed page serves the next
 * entry (entries take several runs), so the order is MIN's own.
 */
#define HEAP_PROBES 64
static enum evict_result evict_heap(struct dsfs_cache *c, int h,
				    uint64_t bound)
{
	uint32_t open[HEAP_PROBES + 2], nopen = 1, probes, i, best;
	struct dsfs_cache_entry *e, *pick = NULL;
	struct cshard *s;
	bool ok;

	open[0] = 0;
	for (probes = 0; probes < HEAP_PROBES && nopen && !pick; probes++) {
		for (best = 0, i = 1; i < nopen; i++) { /* few: O(probes) */
			e = dsfs_nextuse_at(&c->planned, h, open[best]);
			if (beyond(h, dsfs_nextuse_at(&c->planned, h, open[i]),
				   e->when))
				best = i;
		}
		i = open[best];
		open[best] = open[--nopen];
		e = dsfs_nextuse_at(&c->planned, h, i);
		if (!e || !beyond(h, e, bound))
			continue;
		if (dsfs_nextuse_at(&c->planned, h, 2 * i + 1))
			open[nopen++] = 2 * i + 1;
		if (dsfs_nextuse_at(&c->planned, h, 2 * i + 2))
			open[nopen++] = 2 * i + 2;
		s = shard_of(c, e->hash);
		pthread_mutex_lock(&s->lock);
		ok = evictable(e);
		pthread_mutex_unlock(&s->lock);
		if (ok)
			pick = e;
	}
	if (!pick)
		return EVICT_NONE;
	/* A stale entry whose use was served elsewhere (pushed into the
	 * kernel's page cache) is next used `after`: it moves, as a read
	 * would have moved it. */
	if (h == NEXTUSE_NEAR && dsfs_cache_planned(c, pick->after)) {
		dsfs_cache_replace(c, pick, pick->after);
		return EVICT_MOVED;
	}
	/* The policy lock kept pick allocated; its pins may have changed. */
	s = shard_of(c, pick->hash);
	pthread_mutex_lock(&s->lock);
	if (!evictable(pick)) {
		pthread_mutex_unlock(&s->lock);
		return EVICT_NONE;
	}
	evict(c, s, pick);
	return EVICT_DONE;
}

/*
 * One victim for a candidate whose next use is `when`.  First a planned
 * entry whose use has passed unread (stale), then: for a planned candidate,
 * an unplanned entry (CLOCK, no admission test: the plan knows better),
 * then the planned entry used furthest in the future if that is later than
 * the candidate (Belady's MIN; else the candidate itself would be the
 * victim: refused); for an unplanned candidate, CLOCK with admission only.
 */
static enum evict_result make_room(struct dsfs_cache *c, uint32_t est,
				   bool force, uint64_t when)
{
	uint64_t now = __atomic_load_n(&c->now, __ATOMIC_RELAXED);
	enum evict_result r;

	while ((r = evict_heap(c, NEXTUSE_NEAR, now)) == EVICT_MOVED)
		;
	if (r == EVICT_DONE)
		return EVICT_DONE;
	if (!dsfs_cache_planned(c, when))
		return evict_one(c, est, force);
	r = evict_one(c, est, true);
	if (r == EVICT_DONE)
		return r;
	return evict_heap(c, NEXTUSE_FAR, when) == EVICT_DONE ? EVICT_DONE
							     : EVICT_REFUSED;
}

/*
 * Take npages for e in as few runs as the free runs allow, at most
 * DSFS_CACHE_MAX_RUNS: one run of npages if there is one, else the largest
 * runs first.  false (nothing taken) when the free pages are too few or
 * too scattered.  O(DSFS_CACHE_MAX_RUNS).
 */
static bool gather(struct dsfs_cache *c, struct dsfs_cache_entry *e,
		   uint32_t npages)
{
	uint32_t left = npages, got;
	int64_t first;

	if (dsfs_alloc_total_pages(c->alloc) - dsfs_alloc_used_pages(c->alloc) <
	    npages)
		return false;
	e->npages = npages;
	e->nruns = 0;
	while (left && e->nruns < DSFS_CACHE_MAX_RUNS) {
		first = dsfs_alloc_get_upto(c->alloc, left, &got);
		if (first < 0)
			break;
		e->run[e->nruns++] = (struct cache_run){ (uint32_t)first, got };
		left -= got;
	}
	if (!left)
		return true;
	dsfs_cache_unreserve(c, e);
	return false;
}

int dsfs_cache_reserve(struct dsfs_cache *c, struct dsfs_cache_entry *e,
		       uint32_t npages, uint32_t est, bool force,
		       uint64_t when)
{
	while (!gather(c, e, npages)) {
		switch (make_room(c, est, force, when)) {
		case EVICT_DONE:
			continue;
		case EVICT_REFUSED:
			__atomic_add_fetch(&c->rejections, 1, __ATOMIC_RELAXED);
			return -ENOSPC;
		case EVICT_NONE:
		case EVICT_MOVED: /* make_room looks again itself */
			return -ENOSPC;
		}
	}
	if (e->nruns > 1)
		__atomic_add_fetch(&c->scattered, 1, __ATOMIC_RELAXED);
	store_counts(c);
	return 0;
}

void dsfs_cache_unreserve(struct dsfs_cache *c, struct dsfs_cache_entry *e)
{
	while (e->nruns) {
		e->nruns--;
		dsfs_alloc_put(c->alloc, e->run[e->nruns].first,
			       e->run[e->nruns].npages);
	}
	store_counts(c);
}

/* W / CACHE_SHARDS for the current mean entry size (4 KiB .. 2 MiB). */
void dsfs_cache_set_period(struct dsfs_cache *c)
{
	uint64_t n = __atomic_load_n(&c->nentries, __ATOMIC_RELAXED);
	uint64_t used = __atomic_load_n(&c->used_pages, __ATOMIC_RELAXED);
	uint64_t total = dsfs_alloc_total_pages(c->alloc), holds, per;

	/* Unknown mean (empty cache): assume full chunks. */
	holds = n && used ? total * n / used : total / DSFS_ALLOC_MAX_PAGES;
	per = AGE_FACTOR * (holds ? holds : 1) / CACHE_SHARDS;
	per = per < 1 ? 1 : per > UINT32_MAX ? UINT32_MAX : per;
	__atomic_store_n(&c->shard_period, (uint32_t)per, __ATOMIC_RELAXED);
}

void dsfs_cache_age_tick(struct dsfs_cache *c)
{
	/* Relaxed: only the count matters; exactly one thread sees each
	 * multiple of CACHE_SHARDS and does the halving. */
	uint32_t t = __atomic_add_fetch(&c->ticks, 1, __ATOMIC_RELAXED);

	/* Follow the mean entry size as the cache fills. */
	dsfs_cache_set_period(c);
	if (t % CACHE_SHARDS == 0)
		dsfs_sketch_halve(&c->sketch);
}
