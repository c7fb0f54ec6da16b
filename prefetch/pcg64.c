// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * PCG64 and SeedSequence as numpy runs them (see pcg64.h): the hash and mix
 * constants and loops of bit_generator.pyx (SeedSequence.mix_entropy and
 * generate_state), the seeding, step and output of pcg64.h.  Pure
 * functions of their state: any thread, no locks.
 */
#include "config.h"

#include "pcg64.h"

#define POOL 4 /* SeedSequence's default pool_size */
#define INIT_A 0x43b0d7e5u
#define MULT_A 0x931e8875u
#define INIT_B 0x8b51f9ddu
#define MULT_B 0x58f38dedu
#define MIX_MULT_L 0xca01f9ddu
#define MIX_MULT_R 0x4973f715u
#define XSHIFT 16

#define PCG_MULT \
	((unsigned __int128)0x2360ed051fc65da4ull << 64 | 0x4385df649fccf645ull)

static uint32_t hashmix(uint32_t value, uint32_t *hash_const)
{
	value ^= *hash_const;
	*hash_const *= MULT_A;
	value *= *hash_const;
	return value ^ value >> XSHIFT;
}

static uint32_t mix(uint32_t x, uint32_t y)
{
	uint32_t r = MIX_MULT_L * x - MIX_MULT_R * y;

	return r ^ r >> XSHIFT;
}

/* SeedSequence.mix_entropy(pool, entropy). */
static void mix_entropy(uint32_t pool[POOL], const uint32_t *e, size_t len)
{
	uint32_t hc = INIT_A;
	size_t i, src, dst;

	for (i = 0; i < POOL; i++)
		pool[i] = hashmix(i < len ? e[i] : 0, &hc);
	for (src = 0; src < POOL; src++)
		for (dst = 0; dst < POOL; dst++)
			if (src != dst)
				pool[dst] =
					mix(pool[dst], hashmix(pool[src], &hc));
	for (src = POOL; src < len; src++)
		for (dst = 0; dst < POOL; dst++)
			pool[dst] = mix(pool[dst], hashmix(e[src], &hc));
}

/* SeedSequence.generate_state(n, np.uint64): 2n 32-bit words hashed from
 * the pool in turn, paired little-endian (the first the low half). */
static void generate_state(const uint32_t pool[POOL], uint64_t *out, size_t n)
{
	uint32_t hc = INIT_B, v[2];
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		for (int h = 0; h < 2; h++, k++) {
			uint32_t d = pool[k % POOL] ^ hc;

			hc *= MULT_B;
			d *= hc;
			v[h] = d ^ d >> XSHIFT;
		}
		out[i] = (uint64_t)v[1] << 32 | v[0];
	}
}

static void step(struct dsfs_pcg64 *g)
{
	g->state = g->state * PCG_MULT + g->inc;
}

void dsfs_pcg64_seed(struct dsfs_pcg64 *g, const uint32_t *entropy, size_t len)
{
	uint32_t pool[POOL];
	uint64_t w[4];

	mix_entropy(pool, entropy, len);
	generate_state(pool, w, 4);
	/* pcg64_set_seed: state from w[0] (high) and w[1], the stream from
	 * w[2] and w[3]; pcg_setseq_128_srandom_r. */
	g->state = 0;
	g->inc = ((unsigned __int128)w[2] << 64 | w[3]) << 1 | 1;
	step(g);
	g->state += (unsigned __int128)w[0] << 64 | w[1];
	step(g);
	g->has_half = false;
	g->half = 0;
}

uint64_t dsfs_pcg64_next64(struct dsfs_pcg64 *g)
{
	uint64_t x;
	unsigned rot;

	step(g);
	x = (uint64_t)(g->state >> 64) ^ (uint64_t)g->state;
	rot = (unsigned)(g->state >> 122);
	return x >> rot | x << ((64 - rot) & 63);
}

uint32_t dsfs_pcg64_next32(struct dsfs_pcg64 *g)
{
	uint64_t x;

	if (g->has_half) {
		g->has_half = false;
		return g->half;
	}
	x = dsfs_pcg64_next64(g);
	g->half = (uint32_t)(x >> 32);
	g->has_half = true;
	return (uint32_t)x;
}
