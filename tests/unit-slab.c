// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * unit-slab: objects of mixed sizes from lib/slab.c are 8-byte aligned,
 * never overlap (each keeps the bytes written into it while others come
 * and go), are reused by size after a free, span several blocks, and hold
 * under four threads allocating and freeing at once; sizes 0 and above
 * DSFS_SLAB_MAX are refused.
 */
#include "config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "slab.h"
#include "unit-check.h"

#define OBJS 20000	/* about 4 MiB: many blocks */

struct obj {
	unsigned char *p;
	size_t size;
	unsigned char fill;
};

static size_t size_of(unsigned i)
{
	return 1 + (i * 7919u) % DSFS_SLAB_MAX;
}

static void fill(struct obj *o, struct dsfs_slab *s, size_t size,
		 unsigned char c)
{
	o->p = dsfs_slab_alloc(s, size);
	o->size = size;
	o->fill = c;
	CHECK(o->p != NULL);
	CHECK(((uintptr_t)o->p & 7) == 0);
	if (o->p)
		memset(o->p, c, size);
}

static bool intact(const struct obj *o)
{
	size_t i;

	for (i = 0; i < o->size; i++)
		if (o->p[i] != o->fill)
			return false;
	return true;
}

/* Fill, free every third, fill those again: every object keeps its bytes;
 * a freed object is the next one handed out for its size. */
static void test_mixed(void)
{
	static struct obj o[OBJS];
	struct dsfs_slab s;
	unsigned i, bad = 0;
	void *p;

	dsfs_slab_init(&s);
	CHECK(dsfs_slab_alloc(&s, 0) == NULL);
	CHECK(dsfs_slab_alloc(&s, DSFS_SLAB_MAX + 1) == NULL);
	for (i = 0; i < OBJS; i++)
		fill(&o[i], &s, size_of(i), (unsigned char)(i * 13 + 1));
	for (i = 0; i < OBJS; i += 3)
		dsfs_slab_free(&s, o[i].p, o[i].size);
	for (i = 0; i < OBJS; i += 3)
		fill(&o[i], &s, o[i].size, (unsigned char)(i * 29 + 5));
	for (i = 0; i < OBJS; i++)
		bad += !intact(&o[i]);
	CHECK(bad == 0);
	/* the last freed of a size comes back first, with any size rounding
	 * to the same multiple of 8 */
	dsfs_slab_free(&s, o[3].p, o[3].size);
	p = dsfs_slab_alloc(&s, (o[3].size + 7) / 8 * 8);
	CHECK(p == o[3].p);
	dsfs_slab_destroy(&s);
}

struct worker {
	struct dsfs_slab *s;
	unsigned seed;
	unsigned bad;
};

static void *churn(void *arg)
{
	struct worker *w = arg;
	struct obj o[512];
	unsigned i, round, k;

	memset(o, 0, sizeof(o));
	for (round = 0; round < 200; round++) {
		for (i = 0; i < 512; i++) {
			k = (w->seed + round * 512 + i) * 2654435761u;
			if (o[i].p) {
				w->bad += !intact(&o[i]);
				dsfs_slab_free(w->s, o[i].p, o[i].size);
			}
			fill(&o[i], w->s, 1 + k % DSFS_SLAB_MAX,
			     (unsigned char)(k >> 24));
		}
	}
	for (i = 0; i < 512; i++) {
		w->bad += !intact(&o[i]);
		dsfs_slab_free(w->s, o[i].p, o[i].size);
	}
	return NULL;
}

static void test_threads(void)
{
	struct dsfs_slab s;
	struct worker w[4];
	pthread_t th[4];
	unsigned i;

	dsfs_slab_init(&s);
	for (i = 0; i < 4; i++) {
		w[i] = (struct worker){ &s, i * 1000003u, 0 };
		CHECK(pthread_create(&th[i], NULL, churn, &w[i]) == 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CHECK(w[i].bad == 0);
	}
	dsfs_slab_destroy(&s);
}

int main(void)
{
	test_mixed();
	test_threads();
	return UNIT_DONE();
}
