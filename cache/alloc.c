// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Page allocator (see alloc.h): two-level segregated fit (TLSF) over runs of
 * pages, with all metadata outside the arena.
 *
 * The arena is tiled by runs, free or used.  Every run stores a boundary tag
 * (its length, with RUN_FREE when free) at its first and its last page, so
 * put() finds both neighbours in O(1) and merges free ones at once: no two
 * free runs are ever adjacent.  Free runs sit on doubly linked lists indexed
 * by size class: first level = position of the top bit, second level = the
 * next SL_LOG2 bits; two bitmaps say which lists are non-empty.
 *
 * get(n) rounds n up to the next class boundary so that any run of the class
 * found by the bitmaps fits: O(1).  Only when that finds nothing does it scan
 * n's own class (runs of that class can still be >= n): O(free runs in that
 * class), which keeps the contract exact (-ENOSPC only when no free run of n
 * pages exists at all).  put() is O(1).
 *
 * Memory: 12 bytes per arena page (0.3 %), resident from the start: the
 * tags and links are written wherever the runs fall (lib/mem.h).
 * Not thread-safe: the cache calls it under its policy mutex.
 */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "alloc.h"
#include "mem.h"

#define SL_LOG2 4u
#define SL_COUNT (1u << SL_LOG2)
#define FL_COUNT (32u - SL_LOG2) /* classes for every size < 2^31 */
#define RUN_FREE 0x80000000u
#define NIL UINT32_MAX

struct links {
	uint32_t next, prev; /* free list neighbours, NIL at the ends */
};

struct dsfs_alloc {
	uint32_t total;		   /* pages in the arena */
	uint32_t used;		   /* pages in used runs */
	uint32_t fl_map;	   /* bit f: some sl_map[f] bit set */
	uint32_t sl_map[FL_COUNT]; /* bit s: head[f][s] != NIL */
	uint32_t head[FL_COUNT][SL_COUNT];
	uint32_t *tag;	    /* first and last page of each run: len|RUN_FREE */
	struct links *link; /* valid at the first page of each free run */
};

static unsigned top_bit(uint32_t x)
{
	return 31u - (unsigned)__builtin_clz(x);
}

/* The class holding runs of exactly `size` pages (size >= 1). */
static void class_of(uint32_t size, unsigned *fl, unsigned *sl)
{
	unsigned t;

	if (size < SL_COUNT) {
		*fl = 0;
		*sl = size;
		return;
	}
	t = top_bit(size);
	*fl = t - SL_LOG2 + 1;
	*sl = (size >> (t - SL_LOG2)) - SL_COUNT;
}

static void set_tags(struct dsfs_alloc *a, uint32_t first, uint32_t n,
		     uint32_t flag)
{
	a->tag[first] = n | flag;
	a->tag[first + n - 1] = n | flag;
}

static void list_insert(struct dsfs_alloc *a, uint32_t first, uint32_t n)
{
	unsigned fl, sl;
	uint32_t old;

	class_of(n, &fl, &sl);
	old = a->head[fl][sl];
	a->link[first] = (struct links){ .next = old, .prev = NIL };
	if (old != NIL)
		a->link[old].prev = first;
	a->head[fl][sl] = first;
	a->sl_map[fl] |= 1u << sl;
	a->fl_map |= 1u << fl;
	set_tags(a, first, n, RUN_FREE);
}

static void list_remove(struct dsfs_alloc *a, uint32_t first, uint32_t n)
{
	struct links l = a->link[first];
	unsigned fl, sl;

	class_of(n, &fl, &sl);
	if (l.prev != NIL)
		a->link[l.prev].next = l.next;
	else
		a->head[fl][sl] = l.next;
	if (l.next != NIL)
		a->link[l.next].prev = l.prev;
	if (a->head[fl][sl] == NIL) {
		a->sl_map[fl] &= ~(1u << sl);
		if (!a->sl_map[fl])
			a->fl_map &= ~(1u << fl);
	}
}

struct dsfs_alloc *dsfs_alloc_new(uint32_t npages)
{
	struct dsfs_alloc *a;
	unsigned f, s;

	if (!npages || npages >= RUN_FREE)
		return NULL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->total = npages;
	a->tag = dsfs_table_new((size_t)npages * sizeof(*a->tag));
	a->link = dsfs_table_new((size_t)npages * sizeof(*a->link));
	if (!a->tag || !a->link) {
		dsfs_alloc_free(a);
		return NULL;
	}
	for (f = 0; f < FL_COUNT; f++)
		for (s = 0; s < SL_COUNT; s++)
			a->head[f][s] = NIL;
	list_insert(a, 0, npages);
	return a;
}

void dsfs_alloc_free(struct dsfs_alloc *a)
{
	if (!a)
		return;
	dsfs_table_free(a->tag, (size_t)a->total * sizeof(*a->tag));
	dsfs_table_free(a->link, (size_t)a->total * sizeof(*a->link));
	free(a);
}

/* First free run of a class at or above (fl, sl), or NIL.  O(1). */
static uint32_t find_class(const struct dsfs_alloc *a, unsigned fl, unsigned sl)
{
	uint32_t sl_bits, fl_bits;

	if (fl >= FL_COUNT)
		return NIL;
	sl_bits = sl < SL_COUNT ? a->sl_map[fl] & (~0u << sl) : 0;
	if (!sl_bits) {
		fl_bits = fl + 1 < 32 ? a->fl_map & (~0u << (fl + 1)) : 0;
		if (!fl_bits)
			return NIL;
		fl = (unsigned)__builtin_ctz(fl_bits);
		sl_bits = a->sl_map[fl];
	}
	return a->head[fl][__builtin_ctz(sl_bits)];
}

/* A free run of at least n pages, or NIL. */
static uint32_t find_fit(const struct dsfs_alloc *a, uint32_t n)
{
	uint32_t up = n, run;
	unsigned fl, sl;

	if (n >= SL_COUNT)
		up = n + (1u << (top_bit(n) - SL_LOG2)) - 1;
	class_of(up, &fl, &sl);
	run = find_class(a, fl, sl);
	if (run != NIL)
		return run;
	/* Rare: only runs of n's own class may fit; look at each. */
	class_of(n, &fl, &sl);
	for (run = a->head[fl][sl]; run != NIL; run = a->link[run].next)
		if ((a->tag[run] & ~RUN_FREE) >= n)
			return run;
	return NIL;
}

/* The first free run of the highest class holding one, or NIL.  O(1). */
static uint32_t find_large(const struct dsfs_alloc *a)
{
	unsigned fl;

	if (!a->fl_map)
		return NIL;
	fl = top_bit(a->fl_map);
	return a->head[fl][top_bit(a->sl_map[fl])];
}

/* Take n pages from the start of free run `run` (at least n pages). */
static int64_t take(struct dsfs_alloc *a, uint32_t run, uint32_t n)
{
	uint32_t size = a->tag[run] & ~RUN_FREE;

	list_remove(a, run, size);
	/* The remainder's right neighbour is used (free runs never touch),
	 * so it goes back without merging. */
	if (size > n)
		list_insert(a, run + n, size - n);
	set_tags(a, run, n, 0);
	a->used += n;
	return run;
}

int64_t dsfs_alloc_get(struct dsfs_alloc *a, uint32_t n)
{
	uint32_t run;

	if (n < 1 || n > DSFS_ALLOC_MAX_PAGES)
		return -EINVAL;
	run = find_fit(a, n);
	return run == NIL ? -ENOSPC : take(a, run, n);
}

int64_t dsfs_alloc_get_upto(struct dsfs_alloc *a, uint32_t n, uint32_t *got)
{
	int64_t r = dsfs_alloc_get(a, n);
	uint32_t run;

	if (r >= 0)
		*got = n;
	if (r != -ENOSPC)
		return r;
	run = find_large(a); /* every free run is shorter than n */
	if (run == NIL)
		return -ENOSPC;
	*got = a->tag[run] & ~RUN_FREE;
	return take(a, run, *got);
}

void dsfs_alloc_put(struct dsfs_alloc *a, uint32_t first, uint32_t n)
{
	uint32_t end = first + n, left;

	assert(n >= 1 && end <= a->total && a->tag[first] == n);
	a->used -= n;
	if (first > 0 && (a->tag[first - 1] & RUN_FREE)) {
		left = a->tag[first - 1] & ~RUN_FREE;
		first -= left;
		n += left;
		list_remove(a, first, left);
	}
	if (end < a->total && (a->tag[end] & RUN_FREE)) {
		uint32_t right = a->tag[end] & ~RUN_FREE;

		list_remove(a, end, right);
		n += right;
	}
	list_insert(a, first, n);
}

uint32_t dsfs_alloc_used_pages(const struct dsfs_alloc *a)
{
	return a->used;
}

uint32_t dsfs_alloc_total_pages(const struct dsfs_alloc *a)
{
	return a->total;
}
