// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cache's index and entry life (see cache.h): a hash table of entries
 * keyed by XXH3 of (dev, ino, chunk), split into CACHE_SHARDS shards, each
 * with a mutex, a condition variable and its own growing bucket array.
 *
 * A hit costs one shard lock, a few relaxed atomics on the frequency sketch
 * and the referenced bit: no policy lock.  A miss also takes c->policy to
 * reserve memory (policy.c), then the shard lock to insert.  Waiters for a
 * FILLING entry pin it and sleep on its shard's condition variable; every
 * fill_done broadcasts there.
 *
 * Who frees an entry: whoever sees it unlinked with no pins, under the shard
 * lock, exactly once: the evictor (policy.c), invalidate (no pins), or the
 * last unpin of an unlinked entry (failed fill, invalidated while pinned).
 * The free itself happens after the shard lock is dropped, under c->policy,
 * keeping the lock order policy -> shard.
 *
 * Invalidation: matching entries are unlinked at once, so no later get can
 * see them.  A FILLING one is marked stale: its fill_done discards the bytes
 * and fails the entry with -ESTALE (what dsfs_cache_wait returns to the
 * filler's reader, who should get again); waiters in dsfs_cache_get do not
 * see -ESTALE but start over, and may get FILL for a fresh entry.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#include "internal.h"

/* Internal dsfs_cache_get outcomes beside enum dsfs_cache_got. */
#define GET_ABSENT 100 /* not in the index */
#define GET_RETRY 101  /* raced with a fill or an invalidation */

static uint64_t key_hash(const struct dsfs_cache_key *k)
{
	uint64_t w[4] = { k->dev, k->ino, k->chunk, k->gen };

	return XXH3_64bits(w, sizeof(w));
}

static bool key_eq(const struct dsfs_cache_key *a,
		   const struct dsfs_cache_key *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->chunk == b->chunk &&
	       a->gen == b->gen;
}

static struct dsfs_cache_entry **bucket(struct cshard *s, uint64_t h)
{
	return &s->buckets[(h / CACHE_SHARDS) & (s->nbuckets - 1)];
}

static struct dsfs_cache_entry *
find_locked(struct cshard *s, const struct dsfs_cache_key *k, uint64_t h)
{
	struct dsfs_cache_entry *e = *bucket(s, h);

	while (e && (e->hash != h || !key_eq(&e->key, k)))
		e = e->hnext;
	return e;
}

/* Double the bucket array when chains average above 2.  Lock held. */
static void maybe_grow(struct cshard *s)
{
	uint32_t n = s->nbuckets * 2, b;
	struct dsfs_cache_entry **nb, *e, *next;

	if (s->count <= s->nbuckets * 2 || n < s->nbuckets)
		return;
	nb = calloc(n, sizeof(*nb));
	if (!nb)
		return; /* longer chains, still correct */
	for (b = 0; b < s->nbuckets; b++)
		for (e = s->buckets[b]; e; e = next) {
			next = e->hnext;
			e->hnext = nb[(e->hash / CACHE_SHARDS) & (n - 1)];
			nb[(e->hash / CACHE_SHARDS) & (n - 1)] = e;
		}
	free(s->buckets);
	s->buckets = nb;
	s->nbuckets = n;
}

static void link_locked(struct cshard *s, struct dsfs_cache_entry *e)
{
	struct dsfs_cache_entry **b = bucket(s, e->hash);

	e->hnext = *b;
	*b = e;
	e->linked = true;
	s->count++;
	maybe_grow(s);
}

void dsfs_cache_unlink_locked(struct cshard *s, struct dsfs_cache_entry *e)
{
	struct dsfs_cache_entry **pp = bucket(s, e->hash);

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	e->hnext = NULL;
	e->linked = false;
	s->count--;
}

/* Free an unlinked, unpinned entry (see "Who frees").  No lock held. */
static void release(struct dsfs_cache *c, struct dsfs_cache_entry *e)
{
	pthread_mutex_lock(&c->policy);
	dsfs_cache_release(c, e);
	pthread_mutex_unlock(&c->policy);
}

struct dsfs_cache *dsfs_cache_new(const struct dsfs_cache_cfg *cfg)
{
	uint64_t pages = cfg->arena->size / DSFS_PAGE_SIZE;
	struct dsfs_cache *c;
	unsigned i;

	if (!pages || pages > UINT32_MAX)
		return NULL;
	c = aligned_alloc(64, sizeof(*c));
	if (!c)
		return NULL;
	*c = (struct dsfs_cache){ .arena = cfg->arena, .verify = cfg->verify };
	pthread_mutex_init(&c->policy, NULL);
	dsfs_slab_init(&c->entries);
	for (i = 0; i < CACHE_SHARDS; i++) {
		pthread_mutex_init(&c->shards[i].lock, NULL);
		pthread_cond_init(&c->shards[i].cond, NULL);
	}
	c->alloc = dsfs_alloc_new((uint32_t)pages);
	if (!c->alloc || dsfs_sketch_init(&c->sketch, 4 * pages))
		goto fail;
	for (i = 0; i < CACHE_SHARDS; i++) {
		c->shards[i].nbuckets = 8;
		c->shards[i].buckets =
			calloc(8, sizeof(struct dsfs_cache_entry *));
		if (!c->shards[i].buckets)
			goto fail;
	}
	dsfs_cache_set_period(c);
	return c;
fail:
	dsfs_cache_free(c);
	return NULL;
}

void dsfs_cache_free(struct dsfs_cache *c)
{
	unsigned i;

	if (!c)
		return;
	while (c->hand)
		dsfs_cache_release(c, c->hand);
	while (c->planned.n)
		dsfs_cache_release(c, dsfs_nextuse_at(&c->planned, 0, 0));
	dsfs_nextuse_destroy(&c->planned);
	for (i = 0; i < CACHE_SHARDS; i++) {
		free(c->shards[i].buckets);
		pthread_cond_destroy(&c->shards[i].cond);
		pthread_mutex_destroy(&c->shards[i].lock);
	}
	dsfs_sketch_destroy(&c->sketch);
	dsfs_alloc_free(c->alloc);
	dsfs_slab_destroy(&c->entries);
	pthread_mutex_destroy(&c->policy);
	free(c);
}

/*
 * Take a found entry: pin it and, if FILLING, wait (unless NOWAIT).  Called
 * with s->lock held; returns with it released.  HIT, BUSY, GET_RETRY, or the
 * failed fill's -errno.
 */
static int take_found(struct dsfs_cache *c, struct cshard *s,
		      struct dsfs_cache_entry *e, unsigned flags,
		      struct dsfs_cache_entry **out)
{
	bool dead;
	int r;

	if (e->state == ENTRY_FILLING && (flags & DSFS_CACHE_NOWAIT)) {
		pthread_mutex_unlock(&s->lock);
		return DSFS_CACHE_BUSY;
	}
	e->pins++;
	while (e->state == ENTRY_FILLING)
		pthread_cond_wait(&s->cond, &s->lock);
	if (e->state == ENTRY_READY && e->linked) {
		/* Relaxed, and only when it changes: a hint for CLOCK that
		 * must not make every hit write a shared line. */
		if (!__atomic_load_n(&e->referenced, __ATOMIC_RELAXED))
			__atomic_store_n(&e->referenced, 1, __ATOMIC_RELAXED);
		if (flags & DSFS_CACHE_USE)
			e->unused = false;
		pthread_mutex_unlock(&s->lock);
		*out = e;
		return DSFS_CACHE_HIT;
	}
	/* Failed, or invalidated while we waited. */
	r = e->state == ENTRY_FAILED && !e->stale ? e->error : GET_RETRY;
	dead = --e->pins == 0;
	pthread_mutex_unlock(&s->lock);
	if (dead)
		release(c, e);
	return r;
}

/* Look k up and count the access for ageing.  GET_ABSENT if missing. */
static int lookup(struct dsfs_cache *c, struct cshard *s,
		  const struct dsfs_cache_key *k, uint64_t h, unsigned flags,
		  struct dsfs_cache_entry **out)
{
	struct dsfs_cache_entry *e;
	bool tick;
	int r;

	pthread_mutex_lock(&s->lock);
	tick = ++s->accesses >=
	       __atomic_load_n(&c->shard_period, __ATOMIC_RELAXED);
	if (tick)
		s->accesses = 0;
	e = find_locked(s, k, h);
	if (e) {
		r = take_found(c, s, e, flags, out);
	} else {
		pthread_mutex_unlock(&s->lock);
		r = GET_ABSENT;
	}
	if (tick)
		dsfs_cache_age_tick(c);
	return r;
}

/* Reserve memory and insert a FILLING entry.  FILL, -ENOSPC or GET_RETRY
 * (someone inserted k meanwhile). */
static int create(struct dsfs_cache *c, struct cshard *s,
		  const struct dsfs_cache_key *k, uint64_t h, uint32_t len,
		  uint32_t est, unsigned flags, uint64_t when,
		  struct dsfs_cache_entry **out)
{
	uint32_t npages = (len + DSFS_PAGE_SIZE - 1) / DSFS_PAGE_SIZE;
	struct dsfs_cache_entry *e = dsfs_slab_alloc(&c->entries, sizeof(*e));
	int err;

	if (!e)
		return -ENOSPC; /* no room, as far as the caller is concerned */
	memset(e, 0, sizeof(*e));
	pthread_mutex_lock(&c->policy);
	if (!dsfs_cache_planned(c, when))
		when = DSFS_CACHE_NEVER;
	err = dsfs_cache_reserve(c, e, npages, est, flags & DSFS_CACHE_FORCE,
				 when);
	if (err) {
		pthread_mutex_unlock(&c->policy);
		dsfs_slab_free(&c->entries, e, sizeof(*e));
		return err;
	}
	pthread_mutex_lock(&s->lock);
	if (find_locked(s, k, h)) {
		pthread_mutex_unlock(&s->lock);
		dsfs_cache_unreserve(c, e);
		pthread_mutex_unlock(&c->policy);
		dsfs_slab_free(&c->entries, e, sizeof(*e));
		return GET_RETRY;
	}
	e->key = *k;
	e->hash = h;
	e->state = ENTRY_FILLING;
	e->pins = 1;
	/* A planned prefetch is wanted soon: spare it one sweep. */
	e->referenced = (flags & DSFS_CACHE_FORCE) ? 1 : 0;
	e->unused = !(flags & DSFS_CACHE_USE);
	link_locked(s, e);
	pthread_mutex_unlock(&s->lock);
	dsfs_cache_place(c, e, when);
	pthread_mutex_unlock(&c->policy);
	*out = e;
	return DSFS_CACHE_FILL;
}

/* A found entry's next use changed: move it (once per change, so hits
 * that bring no news take no policy lock).  The caller's pin keeps e. */
static void renew(struct dsfs_cache *c, struct dsfs_cache_entry *e,
		  uint64_t when)
{
	if (!dsfs_cache_planned(c, when))
		when = DSFS_CACHE_NEVER;
	/* Relaxed: a hint; the move re-checks under the policy lock. */
	if (__atomic_load_n(&e->when, __ATOMIC_RELAXED) == when)
		return;
	pthread_mutex_lock(&c->policy);
	dsfs_cache_replace(c, e, when);
	pthread_mutex_unlock(&c->policy);
}

int dsfs_cache_get_at(struct dsfs_cache *c, const struct dsfs_cache_key *k,
		      uint32_t len, unsigned flags, uint64_t when,
		      struct dsfs_cache_entry **out)
{
	uint64_t h = key_hash(k);
	struct cshard *s = shard_of(c, h);
	uint32_t est;
	int r;

	*out = NULL;
	if (!len || len > DSFS_CHUNK_SIZE)
		return -EINVAL;
	est = dsfs_sketch_add(&c->sketch, h);
	do {
		r = lookup(c, s, k, h, flags, out);
		if (r == DSFS_CACHE_HIT && when != DSFS_CACHE_KEEP &&
		    !(flags & DSFS_CACHE_STAY))
			renew(c, *out, when);
		if (r != GET_ABSENT)
			continue;
		if (flags & DSFS_CACHE_NOFILL)
			return -ENOENT;
		r = create(c, s, k, h, len, est, flags,
			   when == DSFS_CACHE_KEEP ? DSFS_CACHE_NEVER : when,
			   out);
	} while (r == GET_RETRY);
	return r;
}

int dsfs_cache_get(struct dsfs_cache *c, const struct dsfs_cache_key *k,
		   uint32_t len, unsigned flags, struct dsfs_cache_entry **out)
{
	return dsfs_cache_get_at(c, k, len, flags, DSFS_CACHE_KEEP, out);
}

void dsfs_cache_set_now(struct dsfs_cache *c, uint64_t now)
{
	/* Relaxed: eviction reads a recent value; a late one only delays
	 * the eviction of an entry whose use just passed. */
	__atomic_store_n(&c->now, now, __ATOMIC_RELAXED);
}

void dsfs_cache_set_after(struct dsfs_cache *c, struct dsfs_cache_entry *e,
			  uint64_t after)
{
	__atomic_store_n(&e->pushed, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&c->policy);
	if (e->when != DSFS_CACHE_NEVER)
		e->after = after;
	pthread_mutex_unlock(&c->policy);
}

bool dsfs_cache_pushed(const struct dsfs_cache_entry *e)
{
	return __atomic_load_n(&e->pushed, __ATOMIC_RELAXED);
}

void dsfs_cache_set_by_plan(struct dsfs_cache_entry *e)
{
	__atomic_store_n(&e->by_plan, 1, __ATOMIC_RELAXED);
}

bool dsfs_cache_by_plan(const struct dsfs_cache_entry *e)
{
	return __atomic_load_n(&e->by_plan, __ATOMIC_RELAXED);
}

void dsfs_cache_set_held(struct dsfs_cache_entry *e)
{
	__atomic_store_n(&e->held, 1, __ATOMIC_RELAXED);
}

bool dsfs_cache_held(const struct dsfs_cache_entry *e)
{
	return __atomic_load_n(&e->held, __ATOMIC_RELAXED);
}

unsigned dsfs_cache_iov(struct dsfs_cache *c, const struct dsfs_cache_entry *e,
			uint32_t off, uint32_t len, struct iovec *iov)
{
	uint64_t start, rlen, from, to, end = (uint64_t)off + len;
	unsigned i, n = 0;

	for (i = 0, start = 0; i < e->nruns && start < end; i++, start += rlen) {
		rlen = (uint64_t)e->run[i].npages * DSFS_PAGE_SIZE;
		if (start + rlen <= off)
			continue;
		from = off > start ? off - start : 0;
		to = end < start + rlen ? end - start : rlen;
		iov[n].iov_base = c->arena->base +
				  (size_t)e->run[i].first * DSFS_PAGE_SIZE +
				  from;
		iov[n++].iov_len = (size_t)(to - from);
	}
	return n;
}

/* XXH3-64 of the entry's first len bytes, run by run. */
static uint64_t entry_sum(struct dsfs_cache *c,
			  const struct dsfs_cache_entry *e, uint32_t len)
{
	struct iovec iov[DSFS_CACHE_MAX_RUNS];
	unsigned i, n = dsfs_cache_iov(c, e, 0, len, iov);
	XXH3_state_t st;

	XXH3_64bits_reset(&st);
	for (i = 0; i < n; i++)
		XXH3_64bits_update(&st, iov[i].iov_base, iov[i].iov_len);
	return XXH3_64bits_digest(&st);
}

uint32_t dsfs_cache_capacity(const struct dsfs_cache_entry *e)
{
	return e->npages * DSFS_PAGE_SIZE;
}

uint32_t dsfs_cache_len(const struct dsfs_cache_entry *e)
{
	return e->len;
}

uint64_t dsfs_cache_when(const struct dsfs_cache_entry *e)
{
	return __atomic_load_n(&e->when, __ATOMIC_RELAXED);
}

void dsfs_cache_fill_done(struct dsfs_cache *c, struct dsfs_cache_entry *e,
			  int result)
{
	struct cshard *s = shard_of(c, e->hash);
	uint64_t sum = 0;

	if (result > (int64_t)dsfs_cache_capacity(e))
		result = -EIO; /* a caller bug; never expose past the run */
	/* The filler owns the bytes until READY: hash them unlocked. */
	if (result >= 0 && c->verify)
		sum = entry_sum(c, e, (uint32_t)result);
	pthread_mutex_lock(&s->lock);
	if (result >= 0 && !e->stale) {
		e->len = (uint32_t)result;
		e->sum = sum;
		e->state = ENTRY_READY;
	} else {
		e->state = ENTRY_FAILED;
		e->error = e->stale ? -ESTALE : result;
		if (e->linked)
			dsfs_cache_unlink_locked(s, e);
	}
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

int dsfs_cache_wait(struct dsfs_cache *c, struct dsfs_cache_entry *e)
{
	struct cshard *s = shard_of(c, e->hash);
	int r;

	pthread_mutex_lock(&s->lock);
	while (e->state == ENTRY_FILLING)
		pthread_cond_wait(&s->cond, &s->lock);
	r = e->state == ENTRY_READY ? 0 : e->error;
	pthread_mutex_unlock(&s->lock);
	return r;
}

void dsfs_cache_unpin(struct dsfs_cache *c, struct dsfs_cache_entry *e)
{
	struct cshard *s = shard_of(c, e->hash);
	bool dead;

	pthread_mutex_lock(&s->lock);
	dead = --e->pins == 0 && !e->linked;
	pthread_mutex_unlock(&s->lock);
	if (dead)
		release(c, e);
}

int dsfs_cache_verify(struct dsfs_cache *c, const struct dsfs_cache_entry *e)
{
	if (!c->verify)
		return 0;
	if (entry_sum(c, e, e->len) == e->sum)
		return 0;
	__atomic_add_fetch(&c->verify_failures, 1, __ATOMIC_RELAXED);
	return -EIO;
}

/* Unlink s's entries of (dev, ino); chain the unpinned ones on *dead. */
static uint64_t invalidate_shard(struct cshard *s, uint64_t dev, uint64_t ino,
				 struct dsfs_cache_entry **dead)
{
	struct dsfs_cache_entry *e, *next;
	uint64_t n = 0;
	uint32_t b;

	pthread_mutex_lock(&s->lock);
	for (b = 0; b < s->nbuckets; b++)
		for (e = s->buckets[b]; e; e = next) {
			next = e->hnext;
			if (e->key.dev != dev || e->key.ino != ino)
				continue;
			dsfs_cache_unlink_locked(s, e);
			n++;
			if (e->state == ENTRY_FILLING)
				e->stale = true;
			if (!e->pins) {
				e->hnext = *dead;
				*dead = e;
			}
		}
	pthread_mutex_unlock(&s->lock);
	return n;
}

void dsfs_cache_invalidate(struct dsfs_cache *c, uint64_t dev, uint64_t ino)
{
	struct dsfs_cache_entry *dead = NULL, *next;
	uint64_t n = 0;
	unsigned i;

	for (i = 0; i < CACHE_SHARDS; i++)
		n += invalidate_shard(&c->shards[i], dev, ino, &dead);
	if (n)
		__atomic_add_fetch(&c->invalidations, n, __ATOMIC_RELAXED);
	if (!dead)
		return;
	pthread_mutex_lock(&c->policy);
	for (; dead; dead = next) {
		next = dead->hnext;
		dsfs_cache_release(c, dead);
	}
	pthread_mutex_unlock(&c->policy);
}

void dsfs_cache_get_stats(struct dsfs_cache *c, struct dsfs_cache_stats *s)
{
	/* Relaxed loads: a snapshot of independent counters. */
	*s = (struct dsfs_cache_stats){
		.capacity_bytes = c->arena->size,
		.used_bytes =
			__atomic_load_n(&c->used_pages, __ATOMIC_RELAXED) *
			DSFS_PAGE_SIZE,
		.entries = __atomic_load_n(&c->nentries, __ATOMIC_RELAXED),
		.evictions = __atomic_load_n(&c->evictions, __ATOMIC_RELAXED),
		.scattered = __atomic_load_n(&c->scattered, __ATOMIC_RELAXED),
		.evicted_unused_bytes = __atomic_load_n(&c->evicted_unused_bytes,
							__ATOMIC_RELAXED),
		.rejections = __atomic_load_n(&c->rejections, __ATOMIC_RELAXED),
		.invalidations =
			__atomic_load_n(&c->invalidations, __ATOMIC_RELAXED),
		.verify_failures =
			__atomic_load_n(&c->verify_failures, __ATOMIC_RELAXED),
	};
}
