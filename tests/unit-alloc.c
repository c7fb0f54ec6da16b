// SPDX-License-Identifier: GPL-2.0-or-later
/* unit-alloc: the page allocator never overlaps, counts, coalesces and fits
 * exactly (-ENOSPC only when no free run is long enough). */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "unit-check.h"

struct run {
	uint32_t first, n;
};

/* A model of the arena: which pages are used, and the live runs. */
struct shadow {
	uint32_t total, used, nlive;
	uint8_t *page; /* 1 = used */
	struct run *live;
};

static void shadow_init(struct shadow *s, uint32_t total)
{
	s->total = total;
	s->used = s->nlive = 0;
	s->page = calloc(total, 1);
	s->live = calloc(total, sizeof(*s->live));
}

static void shadow_fini(struct shadow *s)
{
	free(s->page);
	free(s->live);
}

/* Longest free run in the model. */
static uint32_t longest_free(const struct shadow *s)
{
	uint32_t best = 0, cur = 0, i;

	for (i = 0; i < s->total; i++) {
		cur = s->page[i] ? 0 : cur + 1;
		best = cur > best ? cur : best;
	}
	return best;
}

/* get(n) and check it against the model; returns the result. */
static int64_t get_checked(struct dsfs_alloc *a, struct shadow *s, uint32_t n)
{
	int64_t r = dsfs_alloc_get(a, n);
	uint32_t i;
	int overlap = 0;

	if (r < 0) {
		CHECK(r == -ENOSPC);
		CHECK(longest_free(s) < n); /* exact fit, not just good fit */
		return r;
	}
	CHECK((uint64_t)r + n <= s->total);
	for (i = 0; i < n && r + i < s->total; i++) {
		overlap |= s->page[r + i];
		s->page[r + i] = 1;
	}
	CHECK(!overlap);
	s->used += n;
	s->live[s->nlive++] = (struct run){ (uint32_t)r, n };
	CHECK(dsfs_alloc_used_pages(a) == s->used);
	return r;
}

static void put_checked(struct dsfs_alloc *a, struct shadow *s, uint32_t idx)
{
	struct run r = s->live[idx];

	s->live[idx] = s->live[--s->nlive];
	memset(s->page + r.first, 0, r.n);
	s->used -= r.n;
	dsfs_alloc_put(a, r.first, r.n);
	CHECK(dsfs_alloc_used_pages(a) == s->used);
}

static void put_all(struct dsfs_alloc *a, struct shadow *s)
{
	while (s->nlive)
		put_checked(a, s, (uint32_t)rand() % s->nlive);
	CHECK(dsfs_alloc_used_pages(a) == 0);
}

/* After everything is freed, the arena is one run again: it can be handed
 * out whole in maximal runs, and then not one more page. */
static void check_whole(struct dsfs_alloc *a, struct shadow *s)
{
	uint32_t full = s->total / DSFS_ALLOC_MAX_PAGES, i;

	for (i = 0; i < full; i++)
		CHECK(get_checked(a, s, DSFS_ALLOC_MAX_PAGES) >= 0);
	if (s->total % DSFS_ALLOC_MAX_PAGES)
		CHECK(get_checked(a, s, s->total % DSFS_ALLOC_MAX_PAGES) >= 0);
	CHECK(dsfs_alloc_get(a, 1) == -ENOSPC);
	put_all(a, s);
}

static uint32_t random_size(void)
{
	switch (rand() % 4) {
	case 0:
		return 1 + (uint32_t)rand() % 15; /* exact small classes */
	case 1:
		return 16 + (uint32_t)rand() % 112;
	case 2:
		return 1 + (uint32_t)rand() % DSFS_ALLOC_MAX_PAGES;
	default:
		return DSFS_ALLOC_MAX_PAGES; /* full chunks */
	}
}

static void test_random(uint32_t total, unsigned ops)
{
	struct dsfs_alloc *a = dsfs_alloc_new(total);
	struct shadow s;
	unsigned i, fails = 0;

	CHECK(a && dsfs_alloc_total_pages(a) == total);
	if (!a)
		return;
	shadow_init(&s, total);
	for (i = 0; i < ops; i++) {
		/* Drift between mostly-allocating and mostly-freeing phases
		 * so the arena goes through full and fragmented states. */
		int bias = (i / 1000) % 2 ? 35 : 65;

		if (s.nlive && rand() % 100 >= bias)
			put_checked(a, &s, (uint32_t)rand() % s.nlive);
		else
			fails += get_checked(a, &s, random_size()) < 0;
	}
	printf("%u pages, %u ops: %u gets found no run\n", total, ops, fails);
	CHECK(fails > 0); /* the arena did fill up */
	put_all(a, &s);
	check_whole(a, &s);
	shadow_fini(&s);
	dsfs_alloc_free(a);
}

/* Free pages that are not contiguous do not make a run; freeing their
 * neighbours merges everything back into whole maximal runs. */
static void test_fragmentation(void)
{
	uint32_t total = 4 * DSFS_ALLOC_MAX_PAGES, i, got;
	struct dsfs_alloc *a = dsfs_alloc_new(total);
	int64_t r;

	for (i = 0; i < total; i++)
		CHECK(dsfs_alloc_get(a, 1) == i);
	for (i = 0; i < total; i += 2)
		dsfs_alloc_put(a, i, 1);
	CHECK(dsfs_alloc_used_pages(a) == total / 2);
	CHECK(dsfs_alloc_get(a, 2) == -ENOSPC); /* half free, no pair */
	r = dsfs_alloc_get(a, 1);
	CHECK(r >= 0 && r % 2 == 0);
	if (r >= 0)
		dsfs_alloc_put(a, (uint32_t)r, 1);
	/* get_upto takes what there is: one page of the two asked. */
	got = 0;
	r = dsfs_alloc_get_upto(a, 2, &got);
	CHECK(r >= 0 && r % 2 == 0 && got == 1);
	if (r >= 0)
		dsfs_alloc_put(a, (uint32_t)r, 1);
	/* Each put now merges with free runs on both sides. */
	for (i = 1; i < total; i += 2)
		dsfs_alloc_put(a, i, 1);
	CHECK(dsfs_alloc_used_pages(a) == 0);
	for (i = 0; i < 4; i++)
		CHECK(dsfs_alloc_get(a, DSFS_ALLOC_MAX_PAGES) ==
		      i * DSFS_ALLOC_MAX_PAGES);
	CHECK(dsfs_alloc_get(a, 1) == -ENOSPC);
	CHECK(dsfs_alloc_get_upto(a, 1, &got) == -ENOSPC);
	CHECK(dsfs_alloc_get_upto(a, 0, &got) == -EINVAL);
	dsfs_alloc_free(a);
}

/* get_upto prefers one run of all n pages; else the largest run's pages. */
static void test_get_upto(void)
{
	struct dsfs_alloc *a = dsfs_alloc_new(64);
	uint32_t got = 0;
	int64_t r;

	CHECK(dsfs_alloc_get(a, 10) == 0);
	CHECK(dsfs_alloc_get(a, 1) == 10);
	CHECK(dsfs_alloc_get(a, 20) == 11);
	CHECK(dsfs_alloc_get(a, 1) == 31);
	CHECK(dsfs_alloc_get(a, 32) == 32); /* full */
	dsfs_alloc_put(a, 0, 10);
	dsfs_alloc_put(a, 11, 20); /* free: [0, 10) and [11, 31) */
	CHECK(dsfs_alloc_get_upto(a, 8, &got) == 0 && got == 8); /* fits */
	r = dsfs_alloc_get_upto(a, 25, &got); /* no run of 25: the 20 */
	CHECK(r == 11 && got == 20);
	r = dsfs_alloc_get_upto(a, 25, &got); /* then the 2 left of the 10 */
	CHECK(r == 8 && got == 2);
	CHECK(dsfs_alloc_used_pages(a) == 64);
	dsfs_alloc_free(a);
}

/* A free run that is not a size-class boundary still fits a request of
 * exactly its size (the allocator must look inside the class). */
static void test_exact_fit(void)
{
	struct dsfs_alloc *a = dsfs_alloc_new(100);
	struct shadow s;
	int64_t r;

	shadow_init(&s, 100);
	CHECK(get_checked(a, &s, 33) == 0);
	CHECK(get_checked(a, &s, 1) == 33);
	CHECK(get_checked(a, &s, 66) == 34);
	put_checked(a, &s, 0); /* frees [0, 33) */
	CHECK(dsfs_alloc_get(a, 34) == -ENOSPC);
	r = get_checked(a, &s, 33);
	CHECK(r == 0);
	CHECK(dsfs_alloc_get(a, 0) == -EINVAL);
	CHECK(dsfs_alloc_get(a, DSFS_ALLOC_MAX_PAGES + 1) == -EINVAL);
	put_all(a, &s);
	check_whole(a, &s);
	dsfs_alloc_free(a);
	shadow_fini(&s);
}

static void test_sizes(void)
{
	struct dsfs_alloc *a = dsfs_alloc_new(1);
	struct shadow s;

	CHECK(dsfs_alloc_new(0) == NULL);
	shadow_init(&s, 1);
	CHECK(get_checked(a, &s, 1) == 0);
	CHECK(dsfs_alloc_get(a, 1) == -ENOSPC);
	put_all(a, &s);
	dsfs_alloc_free(a);
	shadow_fini(&s);
	/* Large arenas use the high first-level classes (here 4 Mi pages,
	 * 16 GiB of arena: 48 MiB of metadata). */
	a = dsfs_alloc_new(1u << 22);
	CHECK(a != NULL);
	if (a) {
		CHECK(dsfs_alloc_get(a, DSFS_ALLOC_MAX_PAGES) == 0);
		CHECK(dsfs_alloc_get(a, 7) == DSFS_ALLOC_MAX_PAGES);
		dsfs_alloc_put(a, 0, DSFS_ALLOC_MAX_PAGES);
		dsfs_alloc_put(a, DSFS_ALLOC_MAX_PAGES, 7);
		CHECK(dsfs_alloc_used_pages(a) == 0);
		CHECK(dsfs_alloc_get(a, DSFS_ALLOC_MAX_PAGES) == 0);
		dsfs_alloc_free(a);
	}
}

int main(void)
{
	srand(12345);
	test_sizes();
	test_exact_fit();
	test_fragmentation();
	test_get_upto();
	test_random(4099, 40000);
	test_random(3 * DSFS_ALLOC_MAX_PAGES, 20000);
	test_random(40, 5000);
	return UNIT_DONE();
}
