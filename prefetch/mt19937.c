// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * MT19937 (see mt19937.h), transcribed from the reference mt19937ar.c.
 * Pure functions on caller-owned state: any thread, no locks.
 */
#include "config.h"

#include "mt19937.h"

#define MT_M 397
#define MT_MATRIX_A 0x9908b0dfU
#define MT_UPPER 0x80000000U
#define MT_LOWER 0x7fffffffU

void dsfs_mt_init_genrand(struct dsfs_mt19937 *mt, uint32_t s)
{
	uint32_t i;

	mt->mt[0] = s;
	for (i = 1; i < DSFS_MT_N; i++)
		mt->mt[i] =
			1812433253U * (mt->mt[i - 1] ^ (mt->mt[i - 1] >> 30)) +
			i;
	mt->mti = DSFS_MT_N;
}

void dsfs_mt_init_by_array(struct dsfs_mt19937 *mt, const uint32_t *key,
			   size_t len)
{
	uint32_t *s = mt->mt;
	size_t i = 1, j = 0, k;

	dsfs_mt_init_genrand(mt, 19650218U);
	for (k = DSFS_MT_N > len ? DSFS_MT_N : len; k; k--) {
		s[i] = (s[i] ^ ((s[i - 1] ^ (s[i - 1] >> 30)) * 1664525U)) +
		       key[j] + (uint32_t)j;
		i++;
		j++;
		if (i >= DSFS_MT_N) {
			s[0] = s[DSFS_MT_N - 1];
			i = 1;
		}
		if (j >= len)
			j = 0;
	}
	for (k = DSFS_MT_N - 1; k; k--) {
		s[i] = (s[i] ^ ((s[i - 1] ^ (s[i - 1] >> 30)) * 1566083941U)) -
		       (uint32_t)i;
		i++;
		if (i >= DSFS_MT_N) {
			s[0] = s[DSFS_MT_N - 1];
			i = 1;
		}
	}
	s[0] = 0x80000000U; /* MSB is 1, assuring a non-zero initial array */
}

static inline uint32_t twist_one(uint32_t a, uint32_t b, uint32_t far)
{
	uint32_t y = (a & MT_UPPER) | (b & MT_LOWER);

	return far ^ (y >> 1) ^ ((y & 1U) ? MT_MATRIX_A : 0U);
}

/* Regenerate all 624 words: the "generate N words at one time" block. */
static void twist(struct dsfs_mt19937 *mt)
{
	uint32_t *s = mt->mt;
	int k;

	for (k = 0; k < DSFS_MT_N - MT_M; k++)
		s[k] = twist_one(s[k], s[k + 1], s[k + MT_M]);
	for (; k < DSFS_MT_N - 1; k++)
		s[k] = twist_one(s[k], s[k + 1], s[k + (MT_M - DSFS_MT_N)]);
	s[DSFS_MT_N - 1] = twist_one(s[DSFS_MT_N - 1], s[0], s[MT_M - 1]);
	mt->mti = 0;
}

uint32_t dsfs_mt_next32(struct dsfs_mt19937 *mt)
{
	uint32_t y;

	if (mt->mti >= DSFS_MT_N)
		twist(mt);
	y = mt->mt[mt->mti++];
	y ^= y >> 11;
	y ^= (y << 7) & 0x9d2c5680U;
	y ^= (y << 15) & 0xefc60000U;
	y ^= y >> 18;
	return y;
}

void dsfs_mt_skip(struct dsfs_mt19937 *mt, uint64_t k)
{
	uint64_t left = DSFS_MT_N - mt->mti;

	if (k <= left) {
		mt->mti += (uint32_t)k;
		return;
	}
	k -= left;
	/* Every further block of 624 outputs is one twist. */
	for (; k > DSFS_MT_N; k -= DSFS_MT_N)
		twist(mt);
	twist(mt);
	mt->mti = (uint32_t)k;
}
