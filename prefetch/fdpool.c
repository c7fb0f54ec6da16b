// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Bounded fd pool (see fdpool.h).
 *
 * Layout: a few shards chosen by the key's hash; each shard has a small
 * chained hash table of entries and an LRU list of the idle ones (refs == 0).
 * An entry's fields are protected by its shard's mutex, except `fd` and `key`,
 * which never change after insertion.  O(1) per get/put.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "fdpool.h"

#define FDPOOL_MAX_SHARDS 16
#define FDPOOL_BUCKETS 64 /* per shard; chains stay short at <= 512 fds */

struct fdent {
	struct dsfs_fdkey key;
	int fd;
	unsigned refs;		/* protected by shard->lock */
	bool dead;		/* forgotten while busy; close on last put */
	struct fdent *hnext;	/* bucket chain */
	struct fdent *prev, *next; /* idle LRU; NULL links when busy */
};

struct shard {
	pthread_mutex_t lock;
	struct fdent *buckets[FDPOOL_BUCKETS]; /* protected by lock */
	struct fdent lru;	/* sentinel: lru.next is the oldest idle entry */
	unsigned count;		/* cached entries, protected by lock */
	unsigned capacity;
};

struct dsfs_fdpool {
	unsigned nshards;
	unsigned private_fds;	/* atomic: fds handed out outside the cache */
	uint64_t misses;	/* relaxed atomic: borrows that opened */
	struct shard shards[FDPOOL_MAX_SHARDS];
};

static uint64_t key_hash(const struct dsfs_fdkey *k)
{
	uint64_t w[3] = { k->dev ^ ((uint64_t)k->flags << 48), k->ino,
			  k->gen };

	return XXH3_64bits(w, sizeof(w));
}

static bool key_eq(const struct dsfs_fdkey *a, const struct dsfs_fdkey *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->flags == b->flags &&
	       a->gen == b->gen;
}

struct dsfs_fdpool *dsfs_fdpool_new(unsigned capacity)
{
	struct dsfs_fdpool *pool;
	unsigned i, n;

	if (!capacity)
		return NULL;
	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return NULL;
	n = capacity / 32;
	n = n < 1 ? 1 : n > FDPOOL_MAX_SHARDS ? FDPOOL_MAX_SHARDS : n;
	pool->nshards = n;
	for (i = 0; i < n; i++) {
		struct shard *s = &pool->shards[i];

		pthread_mutex_init(&s->lock, NULL);
		s->lru.prev = s->lru.next = &s->lru;
		s->capacity = capacity / n + (i < capacity % n);
	}
	return pool;
}

static void lru_unlink(struct fdent *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
	e->prev = e->next = NULL;
}

static void lru_push(struct shard *s, struct fdent *e)
{
	e->prev = s->lru.prev;
	e->next = &s->lru;
	s->lru.prev->next = e;
	s->lru.prev = e;
}

static void bucket_remove(struct shard *s, struct fdent *e, uint64_t h)
{
	struct fdent **pp = &s->buckets[h % FDPOOL_BUCKETS];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	s->count--;
}

void dsfs_fdpool_free(struct dsfs_fdpool *pool)
{
	unsigned i, b;

	if (!pool)
		return;
	for (i = 0; i < pool->nshards; i++) {
		struct shard *s = &pool->shards[i];

		for (b = 0; b < FDPOOL_BUCKETS; b++) {
			struct fdent *e = s->buckets[b], *n;

			for (; e; e = n) {
				n = e->hnext;
				close(e->fd);
				free(e);
			}
		}
		pthread_mutex_destroy(&s->lock);
	}
	free(pool);
}

static struct fdent *lookup(struct shard *s, const struct dsfs_fdkey *key,
			    uint64_t h)
{
	struct fdent *e = s->buckets[h % FDPOOL_BUCKETS];

	while (e && (e->dead || !key_eq(&e->key, key)))
		e = e->hnext;
	return e;
}

static void take(struct fdent *e, struct dsfs_fdref *ref)
{
	if (e->refs++ == 0)
		lru_unlink(e);
	ref->fd = e->fd;
	ref->ent = e;
}

/*
 * Make room for one more cached entry by taking out the oldest idle one,
 * into *old for the caller to close and free once it has dropped the lock
 * (a close of a file just read is the costliest step of a miss; the
 * engine's thread, giving back fds, waits on the lock).  Returns false
 * when every cached fd is busy.  Called with s->lock held.
 */
static bool make_room(struct shard *s, struct fdent **old)
{
	struct fdent *e = s->lru.next;

	*old = NULL;
	if (s->count < s->capacity)
		return true;
	if (e == &s->lru)
		return false;
	lru_unlink(e);
	bucket_remove(s, e, key_hash(&e->key));
	*old = e;
	return true;
}

static void drop_entry(struct fdent *e)
{
	if (e) {
		close(e->fd);
		free(e);
	}
}

int dsfs_fdpool_get(struct dsfs_fdpool *pool, const struct dsfs_fdkey *key,
		    dsfs_fdpool_open_fn open_fn, void *arg,
		    struct dsfs_fdref *ref)
{
	uint64_t h = key_hash(key);
	struct shard *s = &pool->shards[h % pool->nshards];
	struct fdent *e, *fresh = NULL, *old;
	int fd;

	pthread_mutex_lock(&s->lock);
	e = lookup(s, key, h);
	if (e) {
		take(e, ref);
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	pthread_mutex_unlock(&s->lock);

	fd = open_fn(arg, key);
	if (fd < 0)
		return fd;
	__atomic_add_fetch(&pool->misses, 1, __ATOMIC_RELAXED);
	fresh = malloc(sizeof(*fresh));

	pthread_mutex_lock(&s->lock);
	e = lookup(s, key, h); /* another thread may have opened it meanwhile */
	if (e) {
		take(e, ref);
		pthread_mutex_unlock(&s->lock);
		close(fd);
		free(fresh);
		return 0;
	}
	if (fresh && make_room(s, &old)) {
		*fresh = (struct fdent){ .key = *key, .fd = fd };
		fresh->hnext = s->buckets[h % FDPOOL_BUCKETS];
		s->buckets[h % FDPOOL_BUCKETS] = fresh;
		s->count++;
		fresh->refs = 1;
		ref->fd = fd;
		ref->ent = fresh;
		pthread_mutex_unlock(&s->lock);
		drop_entry(old);
		return 0;
	}
	pthread_mutex_unlock(&s->lock);
	free(fresh);
	__atomic_add_fetch(&pool->private_fds, 1, __ATOMIC_RELAXED);
	ref->fd = fd;
	ref->ent = NULL;
	return 0;
}

void dsfs_fdpool_put(struct dsfs_fdpool *pool, struct dsfs_fdref *ref)
{
	struct fdent *e = ref->ent;
	struct shard *s;
	uint64_t h;

	if (!e) {
		close(ref->fd);
		__atomic_sub_fetch(&pool->private_fds, 1, __ATOMIC_RELAXED);
		ref->fd = -1;
		return;
	}
	h = key_hash(&e->key);
	s = &pool->shards[h % pool->nshards];
	pthread_mutex_lock(&s->lock);
	if (--e->refs == 0) {
		if (e->dead) {
			bucket_remove(s, e, h);
			close(e->fd);
			free(e);
		} else {
			lru_push(s, e);
		}
	}
	pthread_mutex_unlock(&s->lock);
	ref->fd = -1;
	ref->ent = NULL;
}

/* O(cached fds in the shards); called only when a file is known changed. */
void dsfs_fdpool_forget(struct dsfs_fdpool *pool, uint64_t dev, uint64_t ino)
{
	unsigned i, b;

	for (i = 0; i < pool->nshards; i++) {
		struct shard *s = &pool->shards[i];

		pthread_mutex_lock(&s->lock);
		for (b = 0; b < FDPOOL_BUCKETS; b++) {
			struct fdent *e = s->buckets[b], *n;

			for (; e; e = n) {
				n = e->hnext;
				if (e->key.dev != dev || e->key.ino != ino)
					continue;
				if (e->refs) {
					e->dead = true;
					continue;
				}
				lru_unlink(e);
				bucket_remove(s, e, key_hash(&e->key));
				close(e->fd);
				free(e);
			}
		}
		pthread_mutex_unlock(&s->lock);
	}
}

unsigned dsfs_fdpool_open_count(struct dsfs_fdpool *pool)
{
	unsigned i, n = __atomic_load_n(&pool->private_fds, __ATOMIC_RELAXED);

	for (i = 0; i < pool->nshards; i++) {
		pthread_mutex_lock(&pool->shards[i].lock);
		n += pool->shards[i].count;
		pthread_mutex_unlock(&pool->shards[i].lock);
	}
	return n;
}

uint64_t dsfs_fdpool_misses(struct dsfs_fdpool *pool)
{
	return __atomic_load_n(&pool->misses, __ATOMIC_RELAXED);
}
