/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The shuffles a training script runs itself over its list of samples,
 * each with its library's generator: CPython's random.shuffle, numpy's
 * legacy RandomState.shuffle and numpy's Generator.shuffle (default_rng).
 * Each is Fisher-Yates from the end, for i = n-1 .. 1 swapping a[i] with
 * a[j], j drawn in 0 .. i as the library draws it (sampler.c's kinds
 * python-shuffle, numpy-permutation and numpy-generator).
 *
 * A struct dsfs_shuffler is plain state (2.5 KiB): no locks, no
 * allocation; one thread uses one at a time.  Seeding O(words of the seed)
 * (O(624) for MT19937); a shuffle O(n).
 */
#ifndef DSFS_SHUFFLE_H
#define DSFS_SHUFFLE_H

#include <stdint.h>

#include "mt19937.h"
#include "pcg64.h"
#include "seed.h"

enum dsfs_shuffle_gen {
	DSFS_SHUFFLE_PYTHON,	   /* random.Random(seed) */
	DSFS_SHUFFLE_NUMPY_LEGACY, /* numpy.random.RandomState(seed) */
	DSFS_SHUFFLE_NUMPY_PCG64,  /* numpy.random.default_rng(seed) */
};

struct dsfs_shuffler {
	enum dsfs_shuffle_gen gen;
	union {
		struct dsfs_mt19937 mt;
		struct dsfs_pcg64 pcg;
	} u;
};

/*
 * The generator as the library seeds it from an integer: CPython
 * init_by_array(words of |seed|), RandomState init_genrand(low 32 bits;
 * the caller checks the range), SeedSequence(seed words; seed >= 0, the
 * caller checks).
 */
void dsfs_shuffler_seed(struct dsfs_shuffler *g, enum dsfs_shuffle_gen gen,
			const struct dsfs_seed *s);

/* Shuffle a[0 .. n-1] in place, drawing from g (which moves on). */
void dsfs_shuffler_run(struct dsfs_shuffler *g, uint32_t *a, uint32_t n);

#endif
