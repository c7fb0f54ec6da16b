// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Slab of small objects of mixed sizes (see slab.h).  Each block begins
 * with a pointer to the block before it, so that destroy finds them all.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "slab.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define BLOCK_HEAD 8	/* the link to the previous block */

void dsfs_slab_init(struct dsfs_slab *s)
{
	size_t i;

	pthread_mutex_init(&s->lock, NULL);
	for (i = 0; i < DSFS_SLAB_MAX / 8; i++)
		s->free[i] = NULL;
	s->block = NULL;
	s->used = 0;
}

void dsfs_slab_destroy(struct dsfs_slab *s)
{
	char *b, *prev;

	for (b = s->block; b; b = prev) {
		prev = *(char **)b;
		UNPOISON(b, DSFS_SLAB_BLOCK);
		free(b);
	}
	s->block = NULL;
	pthread_mutex_destroy(&s->lock);
}

/* A fresh block for an object of n bytes.  Lock held. */
static void *carve_new(struct dsfs_slab *s, size_t n)
{
	char *b = malloc(DSFS_SLAB_BLOCK);

	if (!b)
		return NULL;
	*(char **)b = s->block;
	POISON(b + BLOCK_HEAD, DSFS_SLAB_BLOCK - BLOCK_HEAD);
	s->block = b;
	s->used = BLOCK_HEAD + n;
	return b + BLOCK_HEAD;
}

void *dsfs_slab_alloc(struct dsfs_slab *s, size_t size)
{
	size_t n = (size + 7) & ~(size_t)7;
	void **head, *p;

	if (!size || n > DSFS_SLAB_MAX)
		return NULL;
	head = &s->free[n / 8 - 1];
	pthread_mutex_lock(&s->lock);
	if ((p = *head)) {
		UNPOISON(p, sizeof(void *));
		*head = *(void **)p;
	} else if (s->block && s->used + n <= DSFS_SLAB_BLOCK) {
		p = s->block + s->used;
		s->used += n;
	} else {
		/* the rest of the old block (under DSFS_SLAB_MAX) is lost */
		p = carve_new(s, n);
	}
	pthread_mutex_unlock(&s->lock);
	if (p)
		UNPOISON(p, n);
	return p;
}

void dsfs_slab_free(struct dsfs_slab *s, void *p, size_t size)
{
	size_t n = (size + 7) & ~(size_t)7;
	void **head = &s->free[n / 8 - 1];

	if (!p)
		return;
	pthread_mutex_lock(&s->lock);
	*(void **)p = *head;
	*head = p;
	POISON(p, n);
	pthread_mutex_unlock(&s->lock);
}
