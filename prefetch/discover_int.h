/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside seed discovery (see discover.h): the first-output filter shared by
 * the scalar and vector kernels (discover_scan.c, discover_kernel.h) and the
 * prefix generator used to confirm candidates (discover_prefix.c).
 *
 * A filter is read only once built, so any number of threads may scan with
 * one; a scratch belongs to one thread.
 */
#ifndef DSFS_DISCOVER_INT_H
#define DSFS_DISCOVER_INT_H

#include <stdint.h>

#include "discover.h"

/* MT19937 (mt19937ar.c): init_genrand multiplier, twist and tempering. */
#define DISCOVER_MT_MULT 1812433253U
#define DISCOVER_MT_M 397
#define DISCOVER_MT_MATRIX_A 0x9908b0dfU
#define DISCOVER_MT_UPPER 0x80000000U
#define DISCOVER_MT_LOWER 0x7fffffffU
#define DISCOVER_MT_TEMPER_B 0x9d2c5680U
#define DISCOVER_MT_TEMPER_C 0xefc60000U

/*
 * One probe of the filter: randperm(n)[pos] is taken as pos + o_pos % (n -
 * pos), which it is unless an earlier step of the shuffle moved another
 * value to that place (probability about pos / n; pos = 0: always).  The
 * probe passes a seed when that is one of the heads.
 */
struct dsfs_discover_probe {
	uint32_t pos, d; /* d = n - pos */
	/*
	 * o / d = (t + ((o - t) >> sh1)) >> sh2 with t = (o * magic) >> 32
	 * (Granlund & Montgomery 1994, fig. 4.1): exact for every 32-bit o,
	 * so vectors need no division.
	 */
	uint32_t magic, sh1, sh2;
	/* head - pos for each head; heads below pos can never match: ~0U */
	uint32_t heads[DSFS_DISCOVER_MAX_HEADS];
};

/* The init words a probe needs: w[pos], w[pos + 1] and w[pos + 397]. */
#define DISCOVER_WORDS 3

struct dsfs_discover_filter {
	uint32_t n;
	uint32_t nheads;
	uint32_t nprobes;
	struct dsfs_discover_probe probes[DSFS_DISCOVER_MAX_PROBES];
	/*
	 * The init steps after which a word is kept, ascending, and where:
	 * word j of probe k is kept[slot[k][j]] (init step 0 is the seed).
	 */
	uint32_t nsteps;
	uint32_t steps[DSFS_DISCOVER_MAX_PROBES * DISCOVER_WORDS];
	uint8_t slot[DSFS_DISCOVER_MAX_PROBES][DISCOVER_WORDS];
};

/*
 * Scan [first, first + count) (first + count <= 2^32): write the seeds that
 * pass a probe to out (room for count), in increasing order; return how
 * many.  count may be 0.
 */
typedef uint32_t (*dsfs_discover_scan_fn)(const struct dsfs_discover_filter *f,
					  uint32_t first, uint32_t count,
					  uint32_t *out);

/*
 * A filter of nprobes (1 or 2) probes at positions pos[], each below n and
 * at most DSFS_DISCOVER_MAX_POS, over the same heads; n >= 2, 1 <= nheads
 * <= DSFS_DISCOVER_MAX_HEADS.
 */
void dsfs_discover_filter_init(struct dsfs_discover_filter *f, uint32_t n,
			       const uint32_t *pos, uint32_t nprobes,
			       const uint32_t *heads, uint32_t nheads);

/* AUTO becomes the best supported path; others map to themselves. */
enum dsfs_discover_path dsfs_discover_resolve(enum dsfs_discover_path path);
/* The kernel of a resolved path; NULL when the CPU lacks it. */
dsfs_discover_scan_fn dsfs_discover_kernel(enum dsfs_discover_path path);

/* o / d through the probe's magic (what the vector kernels compute). */
static inline uint32_t dsfs_discover_div(const struct dsfs_discover_probe *p,
					 uint32_t o)
{
	uint32_t t = (uint32_t)(((uint64_t)o * p->magic) >> 32);

	return (t + ((o - t) >> p->sh1)) >> p->sh2;
}

static inline uint32_t dsfs_discover_init_step(uint32_t prev, uint32_t i)
{
	return DISCOVER_MT_MULT * (prev ^ (prev >> 30)) + i;
}

/* Output k < 227 of a fresh generator from init words k, k + 1, k + 397. */
static inline uint32_t dsfs_discover_output(uint32_t wk, uint32_t wk1,
					    uint32_t wk397)
{
	uint32_t y = (wk & DISCOVER_MT_UPPER) | (wk1 & DISCOVER_MT_LOWER);

	y = wk397 ^ (y >> 1) ^ ((wk1 & 1U) ? DISCOVER_MT_MATRIX_A : 0U);
	y ^= y >> 11;
	y ^= (y << 7) & DISCOVER_MT_TEMPER_B;
	y ^= (y << 15) & DISCOVER_MT_TEMPER_C;
	return y ^ (y >> 18);
}

/* The first output of MT19937 after init_genrand(seed): 397 steps. */
uint32_t dsfs_discover_first_output(uint32_t seed);

/*
 * A thread's buffers for prefixes of up to `len` positions: the draws, the
 * displaced values of the sparse Fisher-Yates (an open-addressing map
 * position -> value, cleared by bumping `gen`) and the prefix itself.
 */
struct dsfs_discover_scratch {
	uint32_t len, mask, gen;
	uint32_t *draws;  /* len outputs */
	uint32_t *keys;	  /* mask + 1 slots: position */
	uint32_t *vals;	  /* value now at that position */
	uint32_t *stamps; /* slot valid iff stamps[i] == gen */
	uint32_t *prefix; /* len positions of the last prefix */
};

/* 0 or -ENOMEM; a failed init leaves nothing to free (free() is safe). */
int dsfs_discover_scratch_init(struct dsfs_discover_scratch *s, uint32_t len);
void dsfs_discover_scratch_free(struct dsfs_discover_scratch *s);

/* randperm(n) from `seed`, positions [0, len) into s->prefix; len <= s->len. */
void dsfs_discover_prefix_into(struct dsfs_discover_scratch *s, uint32_t seed,
			       uint32_t n, uint32_t len);

#endif
