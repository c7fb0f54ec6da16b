// SPDX-License-Identifier: GPL-2.0-or-later
/* unit-cache: fills, hits, pins, waiters, errors, invalidation, verify,
 * scan resistance and a multi-threaded stress of the cache, without a mount
 * (a small 4 KiB-page arena). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "unit-check.h"

#define PAGE 4096u

struct fixture {
	struct dsfs_arena arena;
	struct dsfs_cache *cache;
};

static void setup(struct fixture *f, uint32_t pages, bool verify)
{
	struct dsfs_arena_cfg acfg = { .size = (size_t)pages * PAGE,
				       .hugepages = DSFS_HUGEPAGES_OFF };
	struct dsfs_cache_cfg ccfg = { .arena = &f->arena, .verify = verify };
	char why[256];

	if (dsfs_arena_create(&f->arena, &acfg, why, sizeof(why))) {
		fprintf(stderr, "arena: %s\n", why);
		exit(1);
	}
	f->cache = dsfs_cache_new(&ccfg);
	if (!f->cache) {
		fprintf(stderr, "dsfs_cache_new failed\n");
		exit(1);
	}
}

static void teardown(struct fixture *f)
{
	dsfs_cache_free(f->cache);
	dsfs_arena_destroy(&f->arena);
}

static struct dsfs_cache_key key(uint64_t ino, uint64_t chunk)
{
	return (struct dsfs_cache_key){ .dev = 7, .ino = ino, .chunk = chunk };
}

static struct dsfs_cache_stats stats(struct dsfs_cache *c)
{
	struct dsfs_cache_stats s;

	dsfs_cache_get_stats(c, &s);
	return s;
}

/* Word w of the bytes that encode tag: any mix-up of entries shows. */
static uint64_t pattern(uint64_t tag, uint32_t w)
{
	return (tag + 1) * 0x9e3779b97f4a7c15ull ^
	       (w + 1) * 0xff51afd7ed558ccdull;
}

/* Write (or, with check, compare) pattern(tag) over p[from, len). */
static bool pattern_at(unsigned char *p, uint64_t tag, uint32_t from,
		       uint32_t len, bool check)
{
	uint32_t i, n;
	uint64_t x;

	for (i = from; i < len; i += 8) {
		x = pattern(tag, i / 8);
		n = len - i < 8 ? len - i : 8;
		if (!check)
			memcpy(p + i, &x, n);
		else if (memcmp(p + i, &x, n))
			return false;
	}
	return true;
}

/* Copy len bytes between buf and the entry's memory (its runs, in order;
 * to_entry: into the entry).  Checks the runs cover len bytes, each page
 * aligned. */
static void entry_copy(struct dsfs_cache *c, const struct dsfs_cache_entry *e,
		       unsigned char *buf, uint32_t len, bool to_entry)
{
	struct iovec iov[DSFS_CACHE_MAX_RUNS];
	unsigned i, n = dsfs_cache_iov(c, e, 0, len, iov);
	size_t at = 0;

	for (i = 0; i < n; i++) {
		CHECK((uintptr_t)iov[i].iov_base % PAGE == 0);
		if (to_entry)
			memcpy(iov[i].iov_base, buf + at, iov[i].iov_len);
		else
			memcpy(buf + at, iov[i].iov_base, iov[i].iov_len);
		at += iov[i].iov_len;
	}
	CHECK(at == len);
}

static void fill_pattern(struct dsfs_cache *c, struct dsfs_cache_entry *e,
			 uint64_t tag, uint32_t len)
{
	unsigned char *buf = malloc(len);

	CHECK(buf != NULL);
	pattern_at(buf, tag, 0, len, false);
	entry_copy(c, e, buf, len, true);
	free(buf);
}

static bool has_pattern(struct dsfs_cache *c, const struct dsfs_cache_entry *e,
			uint64_t tag, uint32_t len)
{
	unsigned char *buf = malloc(len);
	bool ok;

	CHECK(buf != NULL);
	entry_copy(c, e, buf, len, false);
	ok = pattern_at(buf, tag, 0, len, true);
	free(buf);
	return ok;
}

/* get; on FILL, fill with the pattern of tag and finish. */
static int get_filled(struct dsfs_cache *c, struct dsfs_cache_key k,
		      uint32_t len, unsigned flags, uint64_t tag,
		      struct dsfs_cache_entry **e)
{
	int r = dsfs_cache_get(c, &k, len, flags, e);

	if (r == DSFS_CACHE_FILL) {
		fill_pattern(c, *e, tag, len);
		dsfs_cache_fill_done(c, *e, (int)len);
	}
	return r;
}

static void test_fill_hit(void)
{
	struct fixture f;
	struct dsfs_cache_entry *e, *e2;
	struct dsfs_cache_key k = key(1, 0), absent = key(1, 1);

	setup(&f, 64, false);
	CHECK(dsfs_cache_get(f.cache, &k, 0, 0, &e) == -EINVAL);
	CHECK(dsfs_cache_get(f.cache, &k, DSFS_CHUNK_SIZE + 1, 0, &e) ==
	      -EINVAL);
	CHECK(dsfs_cache_get(f.cache, &k, 10000, 0, &e) == DSFS_CACHE_FILL);
	CHECK(dsfs_cache_capacity(e) == 3 * PAGE);
	/* While FILLING: NOWAIT says BUSY, NOFILL lookups of others miss. */
	CHECK(dsfs_cache_get(f.cache, &k, 10000, DSFS_CACHE_NOWAIT, &e2) ==
	      DSFS_CACHE_BUSY);
	CHECK(dsfs_cache_get(f.cache, &absent, 10000, DSFS_CACHE_NOFILL, &e2) ==
	      -ENOENT);
	fill_pattern(f.cache, e, 1, 10000);
	dsfs_cache_fill_done(f.cache, e, 10000);
	CHECK(dsfs_cache_wait(f.cache, e) == 0);
	dsfs_cache_unpin(f.cache, e);

	CHECK(dsfs_cache_get(f.cache, &k, 10000, DSFS_CACHE_NOFILL, &e2) ==
	      DSFS_CACHE_HIT);
	CHECK(e2 == e && dsfs_cache_len(e2) == 10000);
	CHECK(has_pattern(f.cache, e2, 1, 10000));
	CHECK(dsfs_cache_verify(f.cache, e2) == 0); /* verify off: always 0 */
	dsfs_cache_unpin(f.cache, e2);
	CHECK(stats(f.cache).entries == 1);
	CHECK(stats(f.cache).used_bytes == 3 * PAGE);
	CHECK(stats(f.cache).capacity_bytes == 64 * PAGE);
	teardown(&f);
}

/* Pinned entries are never evicted: a full cache of pins refuses. */
static void test_pins(void)
{
	struct fixture f;
	struct dsfs_cache_entry *e[8], *x;
	unsigned i;

	setup(&f, 64, false);
	for (i = 0; i < 8; i++)
		CHECK(get_filled(f.cache, key(2, i), 8 * PAGE, 0, i, &e[i]) ==
		      DSFS_CACHE_FILL);
	CHECK(stats(f.cache).used_bytes == 64 * PAGE);
	CHECK(dsfs_cache_get(f.cache, &(struct dsfs_cache_key){ 7, 2, 8, 0 }, PAGE,
			     0, &x) == -ENOSPC);
	CHECK(dsfs_cache_get(f.cache, &(struct dsfs_cache_key){ 7, 2, 8, 0 }, PAGE,
			     DSFS_CACHE_FORCE, &x) == -ENOSPC);
	for (i = 0; i < 8; i++)
		CHECK(has_pattern(f.cache, e[i], i, 8 * PAGE));
	/* One unpinned: a new key seen once does not beat it (admission)... */
	dsfs_cache_unpin(f.cache, e[3]);
	CHECK(get_filled(f.cache, key(2, 9), PAGE, 0, 9, &x) == -ENOSPC);
	CHECK(stats(f.cache).rejections >= 1);
	/* ...but a forced one evicts it, and only it. */
	CHECK(get_filled(f.cache, key(2, 9), PAGE, DSFS_CACHE_FORCE, 9, &x) ==
	      DSFS_CACHE_FILL);
	CHECK(stats(f.cache).evictions == 1 && stats(f.cache).entries == 8);
	dsfs_cache_unpin(f.cache, x);
	for (i = 0; i < 8; i++)
		if (i != 3) {
			CHECK(has_pattern(f.cache, e[i], i, 8 * PAGE));
			dsfs_cache_unpin(f.cache, e[i]);
		}
	teardown(&f);
}

/* evicted_unused_bytes counts the bytes of entries filled ahead (no
 * DSFS_CACHE_USE) and evicted before any use, and nothing else. */
static void test_unused(void)
{
	const uint32_t len = 4 * PAGE - 100;
	struct fixture f;
	struct dsfs_cache_entry *e;
	struct dsfs_cache_key k = key(4, 0);

	setup(&f, 4, false);
	/* Filled ahead, never used: counted when evicted. */
	CHECK(get_filled(f.cache, key(4, 0), len, 0, 40, &e) == DSFS_CACHE_FILL);
	dsfs_cache_unpin(f.cache, e);
	CHECK(get_filled(f.cache, key(4, 1), len,
			 DSFS_CACHE_FORCE | DSFS_CACHE_USE, 41, &e) ==
	      DSFS_CACHE_FILL);
	dsfs_cache_unpin(f.cache, e);
	CHECK(stats(f.cache).evictions == 1);
	CHECK(stats(f.cache).evicted_unused_bytes == len);
	/* Filled by a use (a reader's miss): not counted. */
	CHECK(get_filled(f.cache, key(4, 2), len, DSFS_CACHE_FORCE, 42, &e) ==
	      DSFS_CACHE_FILL);
	dsfs_cache_unpin(f.cache, e);
	CHECK(stats(f.cache).evictions == 2);
	CHECK(stats(f.cache).evicted_unused_bytes == len);
	/* Filled ahead, then used by a hit: not counted either; a hit
	 * without USE (another prefetch's lookup) does not count as one. */
	k = key(4, 2);
	CHECK(dsfs_cache_get(f.cache, &k, len, DSFS_CACHE_NOFILL, &e) ==
	      DSFS_CACHE_HIT);
	dsfs_cache_unpin(f.cache, e);
	CHECK(dsfs_cache_get(f.cache, &k, len,
			     DSFS_CACHE_NOFILL | DSFS_CACHE_USE, &e) ==
	      DSFS_CACHE_HIT);
	dsfs_cache_unpin(f.cache, e);
	CHECK(get_filled(f.cache, key(4, 3), len, DSFS_CACHE_FORCE, 43, &e) ==
	      DSFS_CACHE_FILL);
	dsfs_cache_unpin(f.cache, e);
	CHECK(stats(f.cache).evictions == 3);
	CHECK(stats(f.cache).evicted_unused_bytes == len);
	teardown(&f);
}

/* Used bytes stay within the arena under a random single-threaded load
 * with pins held across operations. */
static void test_used_bound(void)
{
	struct dsfs_cache_entry *held[4] = { NULL }, *e;
	struct dsfs_cache_stats s;
	struct fixture f;
	unsigned i, slot;
	uint32_t len;
	int r;

	setup(&f, 300, false);
	for (i = 0; i < 20000; i++) {
		uint64_t k = (uint64_t)rand() % 64;

		len = 1 + (uint32_t)(k * 7919 % (64 * PAGE));
		r = get_filled(f.cache, key(3, k), len,
			       rand() % 2 ? DSFS_CACHE_FORCE : 0, k, &e);
		if (r == DSFS_CACHE_HIT || r == DSFS_CACHE_FILL) {
			CHECK(dsfs_cache_len(e) == len);
			slot = (unsigned)rand() % 4;
			if (held[slot])
				dsfs_cache_unpin(f.cache, held[slot]);
			held[slot] = e;
		} else {
			CHECK(r == -ENOSPC);
		}
		s = stats(f.cache);
		CHECK(s.used_bytes <= s.capacity_bytes);
	}
	for (slot = 0; slot < 4; slot++)
		if (held[slot])
			dsfs_cache_unpin(f.cache, held[slot]);
	dsfs_cache_invalidate(f.cache, 7, 3);
	CHECK(stats(f.cache).used_bytes == 0 && stats(f.cache).entries == 0);
	teardown(&f);
}

struct waiter {
	struct fixture *f;
	struct dsfs_cache_key k;
	int result;
	struct dsfs_cache_entry *e;
	int filled; /* atomic: the filler is about to call fill_done */
	int early;  /* get returned before that */
};

static void *wait_get(void *arg)
{
	struct waiter *w = arg;

	w->result = dsfs_cache_get(w->f->cache, &w->k, 5000, 0, &w->e);
	w->early = !__atomic_load_n(&w->filled, __ATOMIC_SEQ_CST);
	return NULL;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Start a second get of w->k in a thread while the caller fills it. */
static void start_waiter(struct waiter *w, pthread_t *t)
{
	__atomic_store_n(&w->filled, 0, __ATOMIC_SEQ_CST);
	pthread_create(t, NULL, wait_get, w);
	sleep_ms(50); /* long enough for the thread to block in get */
}

/* fill_done, telling the waiter that it may return now. */
static void done_for_waiter(struct waiter *w, struct dsfs_cache_entry *e,
			    int result)
{
	__atomic_store_n(&w->filled, 1, __ATOMIC_SEQ_CST);
	dsfs_cache_fill_done(w->f->cache, e, result);
}

static void test_waiters(void)
{
	struct fixture f;
	struct waiter w = { .f = &f, .k = key(4, 0) };
	struct dsfs_cache_entry *e;
	pthread_t t;

	setup(&f, 64, false);
	CHECK(dsfs_cache_get(f.cache, &w.k, 5000, 0, &e) == DSFS_CACHE_FILL);
	start_waiter(&w, &t);
	fill_pattern(f.cache, e, 4, 5000);
	done_for_waiter(&w, e, 5000);
	pthread_join(t, NULL);
	CHECK(w.result == DSFS_CACHE_HIT && w.e == e && !w.early);
	CHECK(w.e && has_pattern(f.cache, w.e, 4, 5000));
	dsfs_cache_unpin(f.cache, w.e);
	dsfs_cache_unpin(f.cache, e);

	/* A failed fill: the waiter gets its error, the entry is gone. */
	w.k = key(4, 1);
	CHECK(dsfs_cache_get(f.cache, &w.k, 5000, 0, &e) == DSFS_CACHE_FILL);
	start_waiter(&w, &t);
	done_for_waiter(&w, e, -EIO);
	pthread_join(t, NULL);
	CHECK(w.result == -EIO && !w.early);
	CHECK(dsfs_cache_wait(f.cache, e) == -EIO);
	dsfs_cache_unpin(f.cache, e);
	CHECK(stats(f.cache).entries == 1);
	CHECK(get_filled(f.cache, w.k, 5000, 0, 5, &e) == DSFS_CACHE_FILL);
	dsfs_cache_unpin(f.cache, e);
	CHECK(get_filled(f.cache, w.k, 5000, 0, 5, &e) == DSFS_CACHE_HIT);
	CHECK(has_pattern(f.cache, e, 5, 5000));
	dsfs_cache_unpin(f.cache, e);
	teardown(&f);
}

static void test_invalidate_ready(struct fixture *f)
{
	struct dsfs_cache_entry *a, *b, *other, *x;

	CHECK(get_filled(f->cache, key(5, 0), PAGE, 0, 50, &a) ==
	      DSFS_CACHE_FILL);
	CHECK(get_filled(f->cache, key(5, 1), PAGE, 0, 51, &b) ==
	      DSFS_CACHE_FILL);
	CHECK(get_filled(f->cache, key(6, 0), PAGE, 0, 60, &other) ==
	      DSFS_CACHE_FILL);
	dsfs_cache_unpin(f->cache, a);
	dsfs_cache_unpin(f->cache, other);
	/* b stays pinned across the invalidation. */
	dsfs_cache_invalidate(f->cache, 7, 5);
	CHECK(stats(f->cache).invalidations == 2);
	CHECK(dsfs_cache_get(f->cache, &(struct dsfs_cache_key){ 7, 5, 0, 0 },
			     PAGE, DSFS_CACHE_NOFILL, &x) == -ENOENT);
	CHECK(dsfs_cache_get(f->cache, &(struct dsfs_cache_key){ 7, 5, 1, 0 },
			     PAGE, DSFS_CACHE_NOFILL, &x) == -ENOENT);
	CHECK(stats(f->cache).entries == 2);	   /* b (pinned) and other */
	CHECK(has_pattern(f->cache, b, 51, PAGE)); /* still readable */
	dsfs_cache_unpin(f->cache, b);
	CHECK(stats(f->cache).entries == 1 &&
	      stats(f->cache).used_bytes == PAGE);
	CHECK(get_filled(f->cache, key(6, 0), PAGE, 0, 60, &x) ==
	      DSFS_CACHE_HIT);
	dsfs_cache_unpin(f->cache, x);
}

/* Invalidated while FILLING: the fill is discarded (-ESTALE to the filler),
 * a waiter starts over and fills a fresh entry. */
static void test_invalidate_filling(struct fixture *f)
{
	struct waiter w = { .f = f, .k = key(8, 0) };
	struct dsfs_cache_entry *e, *x;
	pthread_t t;

	CHECK(dsfs_cache_get(f->cache, &w.k, 5000, 0, &e) == DSFS_CACHE_FILL);
	start_waiter(&w, &t);
	fill_pattern(f->cache, e, 80, 5000); /* old bytes */
	dsfs_cache_invalidate(f->cache, 7, 8);
	done_for_waiter(&w, e, 5000);
	pthread_join(t, NULL);
	CHECK(w.result == DSFS_CACHE_FILL && w.e != e && !w.early);
	CHECK(dsfs_cache_wait(f->cache, e) == -ESTALE);
	dsfs_cache_unpin(f->cache, e);
	if (w.result == DSFS_CACHE_FILL) {
		fill_pattern(f->cache, w.e, 81, 5000); /* new bytes */
		dsfs_cache_fill_done(f->cache, w.e, 5000);
		dsfs_cache_unpin(f->cache, w.e);
	}
	CHECK(get_filled(f->cache, w.k, 5000, 0, 82, &x) == DSFS_CACHE_HIT);
	CHECK(has_pattern(f->cache, x, 81, 5000));
	dsfs_cache_unpin(f->cache, x);
}

static void test_invalidate(void)
{
	struct fixture f;

	setup(&f, 64, false);
	test_invalidate_ready(&f);
	test_invalidate_filling(&f);
	dsfs_cache_invalidate(f.cache, 7, 6);
	dsfs_cache_invalidate(f.cache, 7, 8);
	CHECK(stats(f.cache).entries == 0 && stats(f.cache).used_bytes == 0);
	teardown(&f);
}

/* A file created under a reused inode number (another generation) finds
 * none of the old file's chunks; a file's invalidation drops both. */
static void test_generations(void)
{
	struct fixture f;
	struct dsfs_cache_key old = key(9, 0), young = key(9, 0);
	struct dsfs_cache_entry *e;

	setup(&f, 64, false);
	old.gen = 1;
	young.gen = 2;
	CHECK(get_filled(f.cache, old, PAGE, 0, 90, &e) == DSFS_CACHE_FILL);
	dsfs_cache_unpin(f.cache, e);
	CHECK(get_filled(f.cache, young, PAGE, 0, 91, &e) == DSFS_CACHE_FILL);
	dsfs_cache_unpin(f.cache, e);
	CHECK(get_filled(f.cache, old, PAGE, 0, 0, &e) == DSFS_CACHE_HIT);
	CHECK(has_pattern(f.cache, e, 90, PAGE));
	dsfs_cache_unpin(f.cache, e);
	CHECK(get_filled(f.cache, young, PAGE, 0, 0, &e) == DSFS_CACHE_HIT);
	CHECK(has_pattern(f.cache, e, 91, PAGE));
	dsfs_cache_unpin(f.cache, e);
	dsfs_cache_invalidate(f.cache, 7, 9);
	CHECK(stats(f.cache).entries == 0);
	teardown(&f);
}

static void test_verify(void)
{
	struct fixture f;
	struct dsfs_cache_entry *e;

	setup(&f, 64, true);
	CHECK(get_filled(f.cache, key(9, 0), 3 * PAGE + 5, 0, 9, &e) ==
	      DSFS_CACHE_FILL);
	CHECK(dsfs_cache_verify(f.cache, e) == 0);
	{
		struct iovec v;

		CHECK(dsfs_cache_iov(f.cache, e, 3 * PAGE + 4, 1, &v) == 1);
		*(unsigned char *)v.iov_base ^= 1;
	}
	CHECK(dsfs_cache_verify(f.cache, e) == -EIO);
	CHECK(stats(f.cache).verify_failures == 1);
	dsfs_cache_unpin(f.cache, e);
	teardown(&f);
}

/* Whether ino's chunk 0 is cached (a lookup that counts as an access). */
static bool cached(struct fixture *f, uint64_t ino)
{
	struct dsfs_cache_key k = key(ino, 0);
	struct dsfs_cache_entry *e;

	if (dsfs_cache_get(f->cache, &k, PAGE, DSFS_CACHE_NOFILL, &e) !=
	    DSFS_CACHE_HIT)
		return false;
	dsfs_cache_unpin(f->cache, e);
	return true;
}

/* Fill n one-page entries (inos base .. base + n - 1) and drop every
 * other one (base, base + 2, ...): the free pages are then scattered. */
static void checkerboard(struct fixture *f, uint64_t base, uint32_t n)
{
	struct dsfs_cache_entry *e;
	uint32_t i;

	for (i = 0; i < n; i++) {
		CHECK(get_filled(f->cache, key(base + i, 0), PAGE, 0, base + i,
				 &e) == DSFS_CACHE_FILL);
		dsfs_cache_unpin(f->cache, e);
	}
	for (i = 0; i < n; i += 2)
		dsfs_cache_invalidate(f->cache, 7, base + i);
}

/*
 * An entry larger than any free run takes several runs, evicting nothing
 * while the free pages suffice; its bytes, its iovecs over any range and
 * its checksum span the runs.  One needing more than DSFS_CACHE_MAX_RUNS
 * runs evicts until fewer do.
 */
static void test_scattered(void)
{
	uint32_t len = 4 * PAGE - 100, n, i, at;
	struct dsfs_cache_entry *e;
	struct iovec iov[DSFS_CACHE_MAX_RUNS];
	struct fixture f;

	setup(&f, 8, true);
	checkerboard(&f, 100, 8); /* pages 0, 2, 4, 6 free */
	CHECK(get_filled(f.cache, key(1, 0), len, 0, 1, &e) == DSFS_CACHE_FILL);
	CHECK(stats(f.cache).evictions == 0 && stats(f.cache).scattered == 1);
	CHECK(dsfs_cache_capacity(e) == 4 * PAGE);
	CHECK(dsfs_cache_iov(f.cache, e, 0, 4 * PAGE, iov) == 4);
	CHECK(dsfs_cache_iov(f.cache, e, 4 * PAGE, 1, iov) == 0);
	n = dsfs_cache_iov(f.cache, e, PAGE + 10, PAGE, iov);
	CHECK(n == 2 && iov[0].iov_len == PAGE - 10 && iov[1].iov_len == 10);
	CHECK((uintptr_t)iov[1].iov_base % PAGE == 0);
	CHECK(has_pattern(f.cache, e, 1, len));
	CHECK(dsfs_cache_verify(f.cache, e) == 0);
	CHECK(dsfs_cache_iov(f.cache, e, 3 * PAGE + 7, 1, iov) == 1);
	*(unsigned char *)iov[0].iov_base ^= 1; /* in the last run */
	CHECK(dsfs_cache_verify(f.cache, e) == -EIO);
	*(unsigned char *)iov[0].iov_base ^= 1;
	for (i = 1; i < 8; i += 2) /* the others stayed */
		CHECK(cached(&f, 100 + i));
	dsfs_cache_unpin(f.cache, e);
	teardown(&f);

	/* 9 single free pages, an entry of 9 pages: too many runs. */
	setup(&f, 18, false);
	checkerboard(&f, 100, 18);
	CHECK(get_filled(f.cache, key(1, 0), 9 * PAGE, DSFS_CACHE_FORCE, 1,
			 &e) == DSFS_CACHE_FILL);
	CHECK(stats(f.cache).evictions >= 1);
	n = dsfs_cache_iov(f.cache, e, 0, 9 * PAGE, iov);
	for (i = 0, at = 0; i < n; i++)
		at += (uint32_t)iov[i].iov_len;
	CHECK(n >= 2 && n <= DSFS_CACHE_MAX_RUNS && at == 9 * PAGE);
	CHECK(has_pattern(f.cache, e, 1, 9 * PAGE));
	dsfs_cache_unpin(f.cache, e);
	teardown(&f);
}

/* Random-order epochs over twice as many equal keys as the cache holds:
 * after the first epoch each epoch should hit about cache/dataset (a
 * recency-only cache would thrash far below that). */
static void test_scan_resistance(void)
{
	enum { NKEYS = 1024, EPOCHS = 16, PAGES_PER = 2 };
	uint32_t order[NKEYS], i, j, tmp, hits;
	double expect = 0.5, rate, worst = 1.0;
	struct dsfs_cache_entry *e;
	struct fixture f;
	unsigned ep;
	int r;

	setup(&f, NKEYS / 2 * PAGES_PER, false);
	for (i = 0; i < NKEYS; i++)
		order[i] = i;
	for (ep = 0; ep < EPOCHS; ep++) {
		for (i = NKEYS - 1; i > 0; i--) {
			j = (uint32_t)rand() % (i + 1);
			tmp = order[i];
			order[i] = order[j];
			order[j] = tmp;
		}
		for (i = hits = 0; i < NKEYS; i++) {
			r = get_filled(f.cache, key(10, order[i]),
				       PAGES_PER * PAGE, 0, order[i], &e);
			hits += r == DSFS_CACHE_HIT;
			if (r >= 0)
				dsfs_cache_unpin(f.cache, e);
		}
		rate = (double)hits / NKEYS;
		if (ep > 0 && rate < worst)
			worst = rate;
		printf("epoch %u: hit rate %.3f\n", ep, rate);
	}
	printf("worst epoch after the first: %.3f (cache/dataset %.3f)\n",
	       worst, expect);
	CHECK(worst >= expect - 0.05);
	teardown(&f);
}

/*
 * Stress: 4 threads on a small arena, random keys and sizes, NOWAIT and
 * FORCE gets, pins held across operations, failing fills and concurrent
 * invalidations.  Each entry's bytes encode its key and the file generation
 * it was filled at; a hit must show its own key, a generation no older than
 * the last invalidation finished before the get, and intact bytes.  At the
 * end, invalidating everything must leave the cache empty (no leak).
 */
#define ST_FILES 16u
#define ST_CHUNKS 16u
#define ST_THREADS 4

struct stress {
	struct fixture f;
	unsigned ops;
	uint64_t gen[ST_FILES];	     /* atomic: bumped before invalidate */
	uint64_t gen_done[ST_FILES]; /* atomic: highest invalidated gen */
};

struct worker {
	struct stress *st;
	unsigned seed;
	pthread_t tid;
};

static uint32_t st_len(uint32_t id)
{
	return 16 + (uint32_t)((id * 2654435761u) % (8 * PAGE - 16));
}

/* Header (the tag: key id << 32 | generation), then pattern(tag, i). */
static void st_fill(struct dsfs_cache *c, struct dsfs_cache_entry *e,
		    uint64_t tag, uint32_t len)
{
	unsigned char *buf = malloc(len);

	CHECK(buf != NULL);
	pattern_at(buf, tag, 0, len, false);
	memcpy(buf, &tag, sizeof(tag));
	entry_copy(c, e, buf, len, true);
	free(buf);
}

static void st_check(struct stress *st, struct dsfs_cache_entry *e, uint32_t id,
		     uint64_t gen_min)
{
	uint32_t len = dsfs_cache_len(e);
	unsigned char p[8 * PAGE];
	uint64_t tag;

	CHECK(len == st_len(id) && len <= sizeof(p));
	entry_copy(st->f.cache, e, p, len, false);
	memcpy(&tag, p, sizeof(tag));
	CHECK(tag >> 32 == id);
	CHECK((tag & 0xffffffffu) >= gen_min); /* never stale */
	CHECK(pattern_at(p, tag, 8, len, true));
	CHECK(dsfs_cache_verify(st->f.cache, e) == 0);
}

static void st_invalidate(struct stress *st, uint32_t file)
{
	uint64_t g = __atomic_add_fetch(&st->gen[file], 1, __ATOMIC_SEQ_CST);
	uint64_t done = __atomic_load_n(&st->gen_done[file], __ATOMIC_SEQ_CST);

	dsfs_cache_invalidate(st->f.cache, 7, 100 + file);
	while (done < g && !__atomic_compare_exchange_n(
				   &st->gen_done[file], &done, g, false,
				   __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
}

/* One get; returns the entry to keep pinned, or NULL. */
static struct dsfs_cache_entry *st_get(struct worker *w, uint32_t id)
{
	struct stress *st = w->st;
	struct dsfs_cache *c = st->f.cache;
	uint32_t file = id / ST_CHUNKS, len = st_len(id);
	struct dsfs_cache_key k = key(100 + file, id % ST_CHUNKS);
	uint64_t gd = __atomic_load_n(&st->gen_done[file], __ATOMIC_SEQ_CST);
	unsigned r = (unsigned)rand_r(&w->seed) % 100;
	unsigned flags = r < 20 ? DSFS_CACHE_NOWAIT :
			 r < 40 ? DSFS_CACHE_FORCE :
				  0;
	struct dsfs_cache_entry *e;
	int got = dsfs_cache_get(c, &k, len, flags, &e);

	if (got == DSFS_CACHE_FILL) {
		if (rand_r(&w->seed) % 10 == 0) {
			dsfs_cache_fill_done(c, e, -EIO);
			/* -ESTALE when an invalidation raced with the fill */
			got = dsfs_cache_wait(c, e);
			CHECK(got == -EIO || got == -ESTALE);
			dsfs_cache_unpin(c, e);
			return NULL;
		}
		st_fill(c, e,
			(uint64_t)id << 32 | __atomic_load_n(&st->gen[file],
							     __ATOMIC_SEQ_CST),
			len);
		if (rand_r(&w->seed) % 4 == 0)
			sched_yield(); /* let waiters pile up */
		dsfs_cache_fill_done(c, e, (int)len);
		got = dsfs_cache_wait(c, e);
		CHECK(got == 0 || got == -ESTALE);
		if (got) {
			dsfs_cache_unpin(c, e);
			return NULL;
		}
		got = DSFS_CACHE_HIT;
	}
	if (got == DSFS_CACHE_HIT) {
		st_check(st, e, id, gd);
		return e;
	}
	CHECK(got == DSFS_CACHE_BUSY || got == -ENOSPC || got == -EIO);
	return NULL;
}

static void *st_worker(void *arg)
{
	struct worker *w = arg;
	struct dsfs_cache_entry *held[2] = { NULL, NULL }, *e;
	struct dsfs_cache_stats s;
	unsigned i, slot;

	for (i = 0; i < w->st->ops; i++) {
		uint32_t id =
			(uint32_t)rand_r(&w->seed) % (ST_FILES * ST_CHUNKS);

		if (rand_r(&w->seed) % 100 == 0) {
			st_invalidate(w->st, id / ST_CHUNKS);
			continue;
		}
		e = st_get(w, id);
		slot = (unsigned)rand_r(&w->seed) % 2;
		if (held[slot])
			dsfs_cache_unpin(w->st->f.cache, held[slot]);
		held[slot] = e;
		dsfs_cache_get_stats(w->st->f.cache, &s);
		CHECK(s.used_bytes <= s.capacity_bytes);
	}
	for (slot = 0; slot < 2; slot++)
		if (held[slot])
			dsfs_cache_unpin(w->st->f.cache, held[slot]);
	return NULL;
}

static void test_stress(void)
{
	static struct stress st;
	struct worker w[ST_THREADS];
	const char *ops = getenv("UNIT_CACHE_OPS");
	struct dsfs_cache_stats s;
	unsigned i;

	st.ops = ops ? (unsigned)atoi(ops) : 20000;
	setup(&st.f, 96, true);
	for (i = 0; i < ST_THREADS; i++) {
		w[i] = (struct worker){ .st = &st, .seed = 1000 + i };
		pthread_create(&w[i].tid, NULL, st_worker, &w[i]);
	}
	for (i = 0; i < ST_THREADS; i++)
		pthread_join(w[i].tid, NULL);
	dsfs_cache_get_stats(st.f.cache, &s);
	printf("stress: %u ops x %d threads: %llu entries, %llu evictions, "
	       "%llu rejections, %llu invalidations, %llu in several runs\n",
	       st.ops, ST_THREADS, (unsigned long long)s.entries,
	       (unsigned long long)s.evictions,
	       (unsigned long long)s.rejections,
	       (unsigned long long)s.invalidations,
	       (unsigned long long)s.scattered);
	CHECK(s.evictions > 0 && s.invalidations > 0 && !s.verify_failures);
	CHECK(s.scattered > 0); /* the bytes checked spanned runs too */
	for (i = 0; i < ST_FILES; i++)
		dsfs_cache_invalidate(st.f.cache, 7, 100 + i);
	dsfs_cache_get_stats(st.f.cache, &s);
	CHECK(s.used_bytes == 0 && s.entries == 0);
	teardown(&st.f);
}

int main(int argc, char **argv)
{
	srand(4242);
	if (argc > 1 && !strcmp(argv[1], "stress")) { /* for helgrind/TSan */
		test_stress();
		return UNIT_DONE();
	}
	test_fill_hit();
	test_pins();
	test_unused();
	test_used_bound();
	test_waiters();
	test_invalidate();
	test_generations();
	test_verify();
	test_scattered();
	test_scan_resistance();
	test_stress();
	return UNIT_DONE();
}
