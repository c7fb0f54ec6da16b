// SPDX-License-Identifier: GPL-2.0-or-later
/* unit-nextuse: eviction by next planned use.  The cache, driven through
 * shuffled epochs larger than itself with each entry's next use, must hit
 * as often as an offline simulation of Belady's MIN rule over the same
 * order, sizes and byte budget; stale planned entries go first, a
 * candidate used later than everything cached is refused, and unplanned
 * entries make way for planned ones; a stale entry whose use was served
 * elsewhere takes the use after it.  No mount. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "unit-check.h"

#define PAGE 4096u

static struct dsfs_arena arena;

static struct dsfs_cache *setup(uint32_t pages)
{
	struct dsfs_arena_cfg acfg = { .size = (size_t)pages * PAGE,
				       .hugepages = DSFS_HUGEPAGES_OFF };
	struct dsfs_cache_cfg ccfg = { .arena = &arena };
	struct dsfs_cache *c;
	char why[256];

	if (dsfs_arena_create(&arena, &acfg, why, sizeof(why))) {
		fprintf(stderr, "arena: %s\n", why);
		exit(1);
	}
	c = dsfs_cache_new(&ccfg);
	CHECK(c != NULL);
	return c;
}

static void teardown(struct dsfs_cache *c)
{
	dsfs_cache_free(c);
	dsfs_arena_destroy(&arena);
}

static struct dsfs_cache_key key(uint64_t ino)
{
	return (struct dsfs_cache_key){ .dev = 3, .ino = ino, .chunk = 0 };
}

/* Access ino with next use `when`: 1 hit, 0 filled, -ENOSPC refused. */
static int touch(struct dsfs_cache *c, uint64_t ino, uint32_t len,
		 uint64_t when)
{
	struct dsfs_cache_key k = key(ino);
	struct dsfs_cache_entry *e;
	int r = dsfs_cache_get_at(c, &k, len, 0, when, &e);

	if (r == DSFS_CACHE_FILL)
		dsfs_cache_fill_done(c, e, (int)len);
	if (r == DSFS_CACHE_HIT || r == DSFS_CACHE_FILL)
		dsfs_cache_unpin(c, e);
	CHECK(r == DSFS_CACHE_HIT || r == DSFS_CACHE_FILL || r == -ENOSPC);
	return r == DSFS_CACHE_HIT ? 1 : r == DSFS_CACHE_FILL ? 0 : r;
}

static bool cached(struct dsfs_cache *c, uint64_t ino)
{
	struct dsfs_cache_key k = key(ino);
	struct dsfs_cache_entry *e;

	if (dsfs_cache_get(c, &k, 1, DSFS_CACHE_NOFILL, &e) != DSFS_CACHE_HIT)
		return false;
	dsfs_cache_unpin(c, e);
	return true;
}

static uint64_t rng = 88172645463325252ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Epoch orders and their inverses for E epochs of n samples. */
static void shuffle(uint32_t *order, uint32_t *inv, uint32_t n)
{
	uint32_t i, j, t;

	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = n - 1; i > 0; i--) {
		j = (uint32_t)(next_rand() % (i + 1));
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (i = 0; i < n; i++)
		inv[order[i]] = i;
}

/*
 * MIN with a byte budget, no prefetch: on a miss, evict the cached sample
 * used furthest in the future while that is later than the new sample's
 * own next use; if room cannot be made so, do not cache it.  O(n) per
 * eviction: a test oracle.
 */
static uint64_t simulate(uint32_t n, uint32_t epochs, uint32_t *const *inv,
			 uint32_t *const *order, const uint32_t *pages,
			 uint64_t budget)
{
	uint64_t *next = calloc(n, sizeof(*next)), used = 0, hits = 0, t;
	bool *in = calloc(n, sizeof(*in));
	uint32_t e, p, x, i, far;

	CHECK(next && in);
	for (e = 0; e < epochs; e++)
		for (p = 0; p < n; p++) {
			x = order[e][p];
			t = (uint64_t)(e + 1) * n + inv[e + 1][x];
			if (in[x]) {
				hits++;
				next[x] = t;
				continue;
			}
			while (used + pages[x] > budget) {
				for (far = UINT32_MAX, i = 0; i < n; i++)
					if (in[i] && (far == UINT32_MAX ||
						      next[i] > next[far]))
						far = i;
				if (far == UINT32_MAX || next[far] <= t)
					break;
				in[far] = false;
				used -= pages[far];
			}
			if (used + pages[x] <= budget) {
				in[x] = true;
				next[x] = t;
				used += pages[x];
			}
		}
	free(next);
	free(in);
	return hits;
}

/*
 * Read EPOCHS shuffled epochs of N samples of lo..hi pages through a cache
 * of half the data, telling each access its next use; returns the hits
 * and, in *sim, MIN's.
 */
static uint64_t run_epochs(uint32_t lo, uint32_t hi, uint64_t *sim)
{
	enum { N = 600, EPOCHS = 4 };
	uint32_t *order[EPOCHS + 1], *inv[EPOCHS + 1], pages[N], e, p, x;
	uint64_t total = 0, hits = 0;
	struct dsfs_cache *c;

	for (x = 0; x < N; x++) {
		pages[x] = lo + (uint32_t)(next_rand() % (hi - lo + 1));
		total += pages[x];
	}
	c = setup((uint32_t)(total / 2));
	for (e = 0; e <= EPOCHS; e++) {
		order[e] = malloc(N * sizeof(uint32_t));
		inv[e] = malloc(N * sizeof(uint32_t));
		CHECK(order[e] && inv[e]);
		shuffle(order[e], inv[e], N);
	}
	for (e = 0; e < EPOCHS; e++)
		for (p = 0; p < N; p++) {
			x = order[e][p];
			dsfs_cache_set_now(c, (uint64_t)e * N + p);
			hits += touch(c, x, pages[x] * PAGE,
				      (uint64_t)(e + 1) * N + inv[e + 1][x]) == 1;
		}
	*sim = simulate(N, EPOCHS, inv, order, pages, total / 2);
	printf("%u..%u pages, data %llu pages, cache half: %llu hits, MIN %llu, of %u reads\n",
	       lo, hi, (unsigned long long)total, (unsigned long long)hits,
	       (unsigned long long)*sim, N * EPOCHS);
	CHECK(*sim > N); /* MIN keeps about half of each later epoch */
	for (e = 0; e <= EPOCHS; e++) {
		free(order[e]);
		free(inv[e]);
	}
	teardown(c);
	return hits;
}

static void test_matches_min(void)
{
	uint64_t hits, sim;

	/* Equal sizes: no fragmentation, and MIN is optimal: exactly its
	 * hits. */
	hits = run_epochs(27, 27, &sim);
	CHECK(hits == sim);
	/* Mixed sizes: an entry takes any free pages (up to
	 * DSFS_CACHE_MAX_RUNS runs), so eviction follows MIN's own rule with
	 * the whole byte budget, and gets MIN's hits.  (With one run per
	 * entry, holes cost up to 2 points of the reads here.) */
	hits = run_epochs(1, 5, &sim);
	CHECK(hits == sim);
	hits = run_epochs(14, 40, &sim);
	CHECK(hits == sim);
}

static void test_rules(void)
{
	struct dsfs_cache *c = setup(4);
	uint64_t i;

	/* Four planned one-page entries used at 10..13. */
	for (i = 0; i < 4; i++)
		CHECK(touch(c, i, PAGE, 10 + i) == 0);
	/* A candidate used at 20: everything is needed sooner: refused. */
	CHECK(touch(c, 9, PAGE, 20) == -ENOSPC);
	/* Used at 11.5 (12): the entry used at 13 (ino 3) goes. */
	CHECK(touch(c, 4, PAGE, 12) == 0);
	CHECK(!cached(c, 3) && cached(c, 2));
	/* A hit moves its entry: ino 0 now used at 30, the furthest. */
	CHECK(touch(c, 0, PAGE, 30) == 1);
	CHECK(touch(c, 5, PAGE, 15) == 0);
	CHECK(!cached(c, 0));
	/* Time 12 passed with ino 1 (11) unread: stale, evicted first, even
	 * for an unplanned candidate. */
	dsfs_cache_set_now(c, 12);
	CHECK(touch(c, 6, PAGE, DSFS_CACHE_NEVER) == 0);
	CHECK(!cached(c, 1) && cached(c, 2) && cached(c, 4));
	/* An unplanned entry (ino 6) makes way for a planned candidate
	 * before any planned entry does. */
	CHECK(touch(c, 7, PAGE, 100) == 0);
	CHECK(!cached(c, 6) && cached(c, 5));
	/* Plan abandoned: every planned entry is stale. */
	dsfs_cache_set_now(c, DSFS_CACHE_NEVER);
	CHECK(touch(c, 8, PAGE, 14) == 0); /* a time past: unplanned */
	teardown(c);
}

/* A stale entry whose use was served elsewhere (dsfs_cache_set_after)
 * takes its later use instead of going first. */
static void test_after(void)
{
	struct dsfs_cache *c = setup(2);
	struct dsfs_cache_key k = key(0);
	struct dsfs_cache_entry *e;

	CHECK(touch(c, 0, PAGE, 10) == 0);
	CHECK(touch(c, 1, PAGE, 50) == 0);
	CHECK(dsfs_cache_get_at(c, &k, PAGE, DSFS_CACHE_NOFILL,
				DSFS_CACHE_KEEP, &e) == DSFS_CACHE_HIT);
	dsfs_cache_set_after(c, e, 30);
	dsfs_cache_unpin(c, e);
	/* Time 15: ino 0's use (10) passed; it is next used at 30, so the
	 * candidate used at 20 evicts the furthest, ino 1 (50). */
	dsfs_cache_set_now(c, 15);
	CHECK(touch(c, 2, PAGE, 20) == 0);
	CHECK(cached(c, 0) && !cached(c, 1));
	/* A read's new next use cancels it: ino 0 at 40, stale at 45, goes
	 * first (ino 2 moved on to 70). */
	CHECK(touch(c, 0, PAGE, 40) == 1);
	CHECK(touch(c, 2, PAGE, 70) == 1);
	dsfs_cache_set_now(c, 45);
	CHECK(touch(c, 3, PAGE, 60) == 0);
	CHECK(!cached(c, 0) && cached(c, 2) && cached(c, 3));
	teardown(c);
}

/* The next use of a cached entry, as dsfs_cache_when tells it. */
static uint64_t when_of(struct dsfs_cache *c, uint64_t ino)
{
	struct dsfs_cache_key k = key(ino);
	struct dsfs_cache_entry *e;
	uint64_t when;

	CHECK(dsfs_cache_get_at(c, &k, PAGE, DSFS_CACHE_NOFILL,
				DSFS_CACHE_KEEP, &e) == DSFS_CACHE_HIT);
	when = dsfs_cache_when(e);
	dsfs_cache_unpin(c, e);
	return when;
}

/* dsfs_cache_when is the time the last get_at gave (push compares it with
 * the planned read it pushes for: a read that came moved it). */
static void test_when(void)
{
	struct dsfs_cache *c = setup(2);

	CHECK(touch(c, 0, PAGE, 10) == 0);
	CHECK(when_of(c, 0) == 10);
	CHECK(touch(c, 0, PAGE, 25) == 1);
	CHECK(when_of(c, 0) == 25);
	dsfs_cache_set_now(c, 30);
	CHECK(touch(c, 0, PAGE, 20) == 1); /* a time past: unplanned */
	CHECK(when_of(c, 0) == DSFS_CACHE_NEVER);
	CHECK(touch(c, 0, PAGE, 40) == 1);
	CHECK(when_of(c, 0) == 40);
	teardown(c);
}

int main(void)
{
	test_rules();
	test_after();
	test_when();
	test_matches_min();
	return UNIT_DONE();
}
