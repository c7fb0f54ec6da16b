// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Script-side shuffles (see shuffle.h), transcribed from CPython 3.11
 * (random.py shuffle and _randbelow_with_getrandbits, _randommodule.c
 * seeding) and numpy 1.24 (mtrand.pyx and _generator.pyx _shuffle_raw,
 * distributions.c random_interval; generators in mt19937.c and pcg64.c).
 * Pure functions of their state: any thread, no locks.
 */
#include "config.h"

#include "shuffle.h"

/* The words of a zero seed, as CPython and SeedSequence take it. */
static const uint32_t zero_key[1] = { 0 };

void dsfs_shuffler_seed(struct dsfs_shuffler *g, enum dsfs_shuffle_gen gen,
			const struct dsfs_seed *s)
{
	const uint32_t *w = s->nwords ? s->w : zero_key;
	size_t nw = s->nwords ? s->nwords : 1;

	g->gen = gen;
	switch (gen) {
	case DSFS_SHUFFLE_PYTHON:
		dsfs_mt_init_by_array(&g->u.mt, w, nw);
		break;
	case DSFS_SHUFFLE_NUMPY_LEGACY:
		dsfs_mt_init_genrand(&g->u.mt, dsfs_seed_low32(s));
		break;
	case DSFS_SHUFFLE_NUMPY_PCG64:
		dsfs_pcg64_seed(&g->u.pcg, w, nw);
		break;
	}
}

/* CPython _randbelow(m), 1 <= m <= 2^31: getrandbits(bit_length(m))
 * until < m. */
static uint32_t python_randbelow(struct dsfs_mt19937 *mt, uint32_t m)
{
	unsigned shift = (unsigned)__builtin_clz(m); /* 32 - bit_length(m) */
	uint32_t r;

	do
		r = dsfs_mt_next32(mt) >> shift;
	while (r >= m);
	return r;
}

/* The smallest 2^k - 1 >= max. */
static uint32_t fill_mask(uint32_t max)
{
	max |= max >> 1;
	max |= max >> 2;
	max |= max >> 4;
	max |= max >> 8;
	return max | max >> 16;
}

/* numpy random_interval(max), max < 2^32: masked rejection on the bit
 * generator's 32-bit outputs (for PCG64 each 64-bit output gives two). */
static uint32_t numpy_interval(struct dsfs_shuffler *g, uint32_t max)
{
	uint32_t mask = fill_mask(max), v;

	do
		v = (g->gen == DSFS_SHUFFLE_NUMPY_PCG64 ?
			     dsfs_pcg64_next32(&g->u.pcg) :
			     dsfs_mt_next32(&g->u.mt)) &
		    mask;
	while (v > max);
	return v;
}

void dsfs_shuffler_run(struct dsfs_shuffler *g, uint32_t *a, uint32_t n)
{
	uint32_t i, j, t;

	for (i = n; i-- > 1;) {
		j = g->gen == DSFS_SHUFFLE_PYTHON ?
			    python_randbelow(&g->u.mt, i + 1) :
			    numpy_interval(g, i);
		t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}
