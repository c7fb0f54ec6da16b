/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The standard 32-bit Mersenne Twister (Matsumoto & Nishimura, mt19937ar.c),
 * as torch's CPU generator, numpy's legacy RandomState and CPython's random
 * module run it.  The output stream equals C++ std::mt19937.
 *
 * Seeding: dsfs_mt_init_genrand() is torch manual_seed() and numpy
 * RandomState(int) (on the low 32 bits of the seed); dsfs_mt_init_by_array()
 * is CPython random.seed(int) (key = 32-bit words of |seed|).
 *
 * A struct dsfs_mt19937 is plain state (2.5 KiB): no locks, no allocation; one
 * thread uses one state at a time.  Costs: init O(624); next32 O(1) amortised
 * (a 624-word twist every 624 outputs); skip O(k), about 1 ns per output.
 */
#ifndef DSFS_MT19937_H
#define DSFS_MT19937_H

#include <stddef.h>
#include <stdint.h>

#define DSFS_MT_N 624

struct dsfs_mt19937 {
	uint32_t mt[DSFS_MT_N];
	uint32_t mti; /* next word of mt[] to temper; DSFS_MT_N: twist first */
};

/* init_genrand(s): mt[0] = s, mt[i] = 1812433253 * (mt[i-1] ^ mt[i-1] >> 30) + i. */
void dsfs_mt_init_genrand(struct dsfs_mt19937 *mt, uint32_t s);

/*
 * init_by_array(key, len): init_genrand(19650218) and the two mixing loops of
 * mt19937ar.c, then mt[0] = 0x80000000.  len >= 1 (CPython passes [0] for a
 * zero seed).
 */
void dsfs_mt_init_by_array(struct dsfs_mt19937 *mt, const uint32_t *key,
			   size_t len);

/* The next tempered 32-bit output (genrand_int32). */
uint32_t dsfs_mt_next32(struct dsfs_mt19937 *mt);

/*
 * Discard the next k outputs; same state as k calls to dsfs_mt_next32() but
 * whole blocks are skipped without tempering.  O(k).
 */
void dsfs_mt_skip(struct dsfs_mt19937 *mt, uint64_t k);

#endif
