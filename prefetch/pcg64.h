/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numpy's PCG64 bit generator (O'Neill's pcg_setseq_128_xsl_rr_64: a 128-bit
 * LCG, each output the xor of its halves rotated by its top 6 bits) seeded
 * through numpy's SeedSequence, as numpy.random.default_rng(seed) and
 * Generator(PCG64(seed)) run it (numpy 1.17 and later; numpy/random/
 * bit_generator.pyx, src/pcg64/pcg64.h).
 *
 * A struct dsfs_pcg64 is plain state (48 bytes): no locks, no allocation;
 * one thread uses one state at a time.  Costs: seeding O(words of the
 * seed); next32 O(1).
 */
#ifndef DSFS_PCG64_H
#define DSFS_PCG64_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dsfs_pcg64 {
	unsigned __int128 state, inc;
	uint32_t half; /* the high half of the last 64-bit output */
	bool has_half; /* next32 returns `half` next */
};

/*
 * PCG64(SeedSequence(entropy)): entropy is the seed's 32-bit words, least
 * significant first (len >= 1; a zero seed is one word 0), no spawn key.
 * The sequence's pool of 4 words is mixed from them and 8 words drawn from
 * it make the LCG's initial state and increment.
 */
void dsfs_pcg64_seed(struct dsfs_pcg64 *g, const uint32_t *entropy, size_t len);

/* The next 64-bit output. */
uint64_t dsfs_pcg64_next64(struct dsfs_pcg64 *g);

/* numpy's next_uint32: the low half of a 64-bit output, then its high
 * half, then the next output's low half... */
uint32_t dsfs_pcg64_next32(struct dsfs_pcg64 *g);

#endif
