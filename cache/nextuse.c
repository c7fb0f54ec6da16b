// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The next-use order of planned entries (see policy.c): two binary heaps
 * over the same entries, keyed by the time of each entry's next planned
 * use, one with the furthest use on top (Belady's victim), one with the
 * nearest (an entry whose use has passed unread is stale and goes first).
 * Each entry records its slot in both, so that a changed time or a removal
 * costs O(log n) instead of a search.
 *
 * Threads: every function runs with c->policy held.  Memory: two pointer
 * arrays of the planned entries' count, grown by doubling.
 */
#include "config.h"

#include <stdlib.h>

#include "internal.h"

/* Whether a belongs above b in heap h (NEXTUSE_FAR: the later use). */
static bool above(int h, const struct dsfs_cache_entry *a,
		  const struct dsfs_cache_entry *b)
{
	return h == NEXTUSE_FAR ? a->when > b->when : a->when < b->when;
}

static void put(struct dsfs_nextuse *u, int h, uint32_t i,
		struct dsfs_cache_entry *e)
{
	u->v[h][i] = e;
	e->slot[h] = i;
}

static void sift_up(struct dsfs_nextuse *u, int h, uint32_t i)
{
	struct dsfs_cache_entry *e = u->v[h][i];

	while (i > 0 && above(h, e, u->v[h][(i - 1) / 2])) {
		put(u, h, i, u->v[h][(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	put(u, h, i, e);
}

static void sift_down(struct dsfs_nextuse *u, int h, uint32_t i)
{
	struct dsfs_cache_entry *e = u->v[h][i];
	uint32_t c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= u->n)
			break;
		if (c + 1 < u->n && above(h, u->v[h][c + 1], u->v[h][c]))
			c++;
		if (!above(h, u->v[h][c], e))
			break;
		put(u, h, i, u->v[h][c]);
		i = c;
	}
	put(u, h, i, e);
}

bool dsfs_nextuse_add(struct dsfs_nextuse *u, struct dsfs_cache_entry *e)
{
	struct dsfs_cache_entry **v;
	uint32_t cap = u->cap ? 2 * u->cap : 64;
	int h;

	if (u->n == u->cap) {
		if (cap < u->cap)
			return false;
		for (h = 0; h < NEXTUSE_HEAPS; h++) {
			v = realloc(u->v[h], cap * sizeof(*v));
			if (!v)
				return false; /* the grown one is simply larger */
			u->v[h] = v;
		}
		u->cap = cap;
	}
	for (h = 0; h < NEXTUSE_HEAPS; h++) {
		u->v[h][u->n] = e;
		e->slot[h] = u->n;
	}
	u->n++;
	for (h = 0; h < NEXTUSE_HEAPS; h++)
		sift_up(u, h, u->n - 1);
	return true;
}

void dsfs_nextuse_del(struct dsfs_nextuse *u, struct dsfs_cache_entry *e)
{
	struct dsfs_cache_entry *last;
	uint32_t i;
	int h;

	u->n--;
	for (h = 0; h < NEXTUSE_HEAPS; h++) {
		i = e->slot[h];
		last = u->v[h][u->n];
		if (i == u->n)
			continue;
		put(u, h, i, last);
		sift_up(u, h, i);
		sift_down(u, h, last->slot[h]);
	}
}

void dsfs_nextuse_moved(struct dsfs_nextuse *u, struct dsfs_cache_entry *e)
{
	int h;

	for (h = 0; h < NEXTUSE_HEAPS; h++) {
		sift_up(u, h, e->slot[h]);
		sift_down(u, h, e->slot[h]);
	}
}

struct dsfs_cache_entry *dsfs_nextuse_at(const struct dsfs_nextuse *u, int h,
					 uint32_t i)
{
	return i < u->n ? u->v[h][i] : NULL;
}

void dsfs_nextuse_destroy(struct dsfs_nextuse *u)
{
	int h;

	for (h = 0; h < NEXTUSE_HEAPS; h++)
		free(u->v[h]);
}
