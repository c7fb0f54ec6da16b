// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Count-min sketch (see sketch.h).  Row i uses counter (h1 + i * h2) mod
 * width, with h1, h2 the two halves of the key's hash (double hashing).
 * Counters are bytes packed 8 to a 64-bit word so that one compare-and-swap
 * updates one counter without a lock and halving works a word at a time.
 *
 * Every atomic here is relaxed: the counters publish no other memory, and a
 * reader only needs some recent value of each word, never an order between
 * words.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "mem.h"
#include "sketch.h"

#define WIDTH_MIN 1024u
#define WIDTH_MAX (1u << 22)

static size_t bytes(const struct dsfs_sketch *s)
{
	return (size_t)DSFS_SKETCH_ROWS * s->width;
}

int dsfs_sketch_init(struct dsfs_sketch *s, uint64_t width_hint)
{
	uint32_t w = WIDTH_MIN;

	while (w < width_hint && w < WIDTH_MAX)
		w <<= 1;
	s->width = w;
	/* Resident now: every add touches 4 words at random, which would
	 * otherwise fault the table in a page at a time (mem.h). */
	s->words = dsfs_table_new(bytes(s));
	return s->words ? 0 : -ENOMEM;
}

void dsfs_sketch_destroy(struct dsfs_sketch *s)
{
	dsfs_table_free(s->words, bytes(s));
	s->words = NULL;
}

/* Word and bit shift of row r's counter for h. */
static uint64_t *slot(const struct dsfs_sketch *s, uint64_t h, unsigned r,
		      unsigned *shift)
{
	uint32_t h1 = (uint32_t)h, h2 = (uint32_t)(h >> 32) | 1;
	uint32_t i = (h1 + r * h2) & (s->width - 1);

	*shift = (i & 7) * 8;
	return &s->words[((size_t)r * s->width + i) / 8];
}

/* Saturating increment of one counter; returns its previous value. */
static uint32_t bump(uint64_t *w, unsigned shift)
{
	uint64_t old = __atomic_load_n(w, __ATOMIC_RELAXED);
	uint32_t c;

	do {
		c = (old >> shift) & 0xff;
		if (c == 0xff)
			break;
	} while (!__atomic_compare_exchange_n(w, &old, old + (1ull << shift),
					      true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return c;
}

uint32_t dsfs_sketch_add(struct dsfs_sketch *s, uint64_t h)
{
	uint32_t est = 0xff, c;
	unsigned r, shift;
	uint64_t *w;

	for (r = 0; r < DSFS_SKETCH_ROWS; r++) {
		w = slot(s, h, r, &shift);
		c = bump(w, shift);
		est = c < est ? c : est;
	}
	return est;
}

uint32_t dsfs_sketch_estimate(const struct dsfs_sketch *s, uint64_t h)
{
	uint32_t est = 0xff, c;
	unsigned r, shift;
	uint64_t *w;

	for (r = 0; r < DSFS_SKETCH_ROWS; r++) {
		w = slot(s, h, r, &shift);
		c = (__atomic_load_n(w, __ATOMIC_RELAXED) >> shift) & 0xff;
		est = c < est ? c : est;
	}
	return est;
}

void dsfs_sketch_halve(struct dsfs_sketch *s)
{
	size_t i, n = (size_t)DSFS_SKETCH_ROWS * s->width / 8;
	uint64_t old;

	for (i = 0; i < n; i++) {
		old = __atomic_load_n(&s->words[i], __ATOMIC_RELAXED);
		if (!old)
			continue;
		/* Shift every byte right by one; the mask drops the bit that
		 * each byte would take from its left neighbour. */
		while (!__atomic_compare_exchange_n(
			&s->words[i], &old, (old >> 1) & 0x7f7f7f7f7f7f7f7full,
			true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
	}
}
