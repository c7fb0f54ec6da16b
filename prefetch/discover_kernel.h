/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One vector kernel of the first-output filter (see discover_int.h), written
 * once with GCC vector extensions and instantiated by discover_scan.c for
 * each instruction set: define KERNEL_NAME, KERNEL_LANES (32-bit lanes per
 * vector), KERNEL_CHAINS (independent vectors in flight) and KERNEL_TARGET
 * (a target attribute, or nothing) before including this file.
 *
 * The 397 init steps of one vector form a chain of dependent multiplies, so
 * the kernel advances KERNEL_CHAINS vectors per step to keep the multiplier
 * busy (measured on the bench machine: 16 x 16 lanes for AVX-512, 12 x 8 for
 * AVX2, 12 x 4 for the baseline ISA).  A block of LANES * CHAINS seeds is
 * computed whole; seeds past `count` in the last block are computed and
 * dropped.  The division by n - pos uses each probe's magic multiplier.
 */
#define KERNEL_CAT2(a, b) a##b
#define KERNEL_CAT(a, b) KERNEL_CAT2(a, b)
#define KERNEL_VU KERNEL_CAT(KERNEL_NAME, _vu)
#define KERNEL_VQ KERNEL_CAT(KERNEL_NAME, _vq)
#define KERNEL_BLOCK (KERNEL_LANES * KERNEL_CHAINS)

typedef uint32_t KERNEL_VU __attribute__((vector_size(KERNEL_LANES * 4)));
typedef uint64_t KERNEL_VQ __attribute__((vector_size(KERNEL_LANES * 8)));

/*
 * Lane-wise for the seeds s: run the init steps, keeping the words the
 * filter's probes need, then each probe's output, reduced mod n - pos, into
 * z[probe][chain].
 */
KERNEL_TARGET static inline __attribute__((always_inline)) void
KERNEL_CAT(KERNEL_NAME, _block)(const struct dsfs_discover_filter *f,
				const KERNEL_VU *s,
				KERNEL_VU z[][KERNEL_CHAINS])
{
	KERNEL_VU kept[DSFS_DISCOVER_MAX_PROBES * DISCOVER_WORDS]
		      [KERNEL_CHAINS],
		x[KERNEL_CHAINS];
	uint32_t i = 0, e, j, k;

#pragma GCC unroll 16
	for (j = 0; j < KERNEL_CHAINS; j++)
		x[j] = s[j];
	for (e = 0; e < f->nsteps; e++) {
		const uint32_t stop = f->steps[e];

#pragma GCC unroll 2
		for (; i < stop; i++)
#pragma GCC unroll 16
			for (j = 0; j < KERNEL_CHAINS; j++)
				x[j] = DISCOVER_MT_MULT * (x[j] ^ (x[j] >> 30)) +
				       (i + 1);
#pragma GCC unroll 16
		for (j = 0; j < KERNEL_CHAINS; j++)
			kept[e][j] = x[j];
	}
	for (k = 0; k < f->nprobes; k++) {
		const struct dsfs_discover_probe *p = &f->probes[k];
		const KERNEL_VU *w0 = kept[f->slot[k][0]],
				*w1 = kept[f->slot[k][1]],
				*w397 = kept[f->slot[k][2]];

#pragma GCC unroll 16
		for (j = 0; j < KERNEL_CHAINS; j++) {
			KERNEL_VU y = (w0[j] & DISCOVER_MT_UPPER) |
				      (w1[j] & DISCOVER_MT_LOWER);
			KERNEL_VU o = w397[j] ^ (y >> 1) ^
				      (-(w1[j] & 1U) & DISCOVER_MT_MATRIX_A);
			KERNEL_VU t, q;

			o ^= o >> 11;
			o ^= (o << 7) & DISCOVER_MT_TEMPER_B;
			o ^= (o << 15) & DISCOVER_MT_TEMPER_C;
			o ^= o >> 18;
			t = __builtin_convertvector(
				(__builtin_convertvector(o, KERNEL_VQ) *
				 p->magic) >> 32,
				KERNEL_VU);
			q = (t + ((o - t) >> p->sh1)) >> p->sh2;
			z[k][j] = o - q * p->d;
		}
	}
}

/* Whether lane i of chain j passes a probe (the rare, slow check). */
KERNEL_TARGET static bool
KERNEL_CAT(KERNEL_NAME, _lane)(const struct dsfs_discover_filter *f,
			       KERNEL_VU z[][KERNEL_CHAINS], uint32_t j,
			       uint32_t i)
{
	uint32_t h, k;

	for (k = 0; k < f->nprobes; k++)
		for (h = 0; h < f->nheads; h++)
			if (z[k][j][i] == f->probes[k].heads[h])
				return true;
	return false;
}

KERNEL_TARGET static uint32_t KERNEL_NAME(const struct dsfs_discover_filter *f,
					  uint32_t first, uint32_t count,
					  uint32_t *out)
{
	KERNEL_VU lane, s[KERNEL_CHAINS];
	KERNEL_VU z[DSFS_DISCOVER_MAX_PROBES][KERNEL_CHAINS];
	uint32_t found = 0, i, j, h, k;
	uint64_t done, at;

	for (i = 0; i < KERNEL_LANES; i++)
		lane[i] = i;
	for (done = 0; done < count; done += KERNEL_BLOCK) {
		KERNEL_VU hit = { 0 };
		uint32_t any = 0;

#pragma GCC unroll 16
		for (j = 0; j < KERNEL_CHAINS; j++)
			s[j] = (uint32_t)(first + done + j * KERNEL_LANES) +
			       lane;
		KERNEL_CAT(KERNEL_NAME, _block)(f, s, z);
		for (k = 0; k < f->nprobes; k++)
			for (h = 0; h < f->nheads; h++)
#pragma GCC unroll 16
				for (j = 0; j < KERNEL_CHAINS; j++)
					hit |= (KERNEL_VU)(z[k][j] ==
						f->probes[k].heads[h]);
		for (i = 0; i < KERNEL_LANES; i++)
			any |= hit[i];
		if (!any) /* the usual case: heads / n per seed and probe */
			continue;
		for (j = 0; j < KERNEL_CHAINS; j++) {
			for (i = 0; i < KERNEL_LANES; i++) {
				at = done + j * KERNEL_LANES + i;
				if (at < count &&
				    KERNEL_CAT(KERNEL_NAME, _lane)(f, z, j, i))
					out[found++] = (uint32_t)(first + at);
			}
		}
	}
	return found;
}

#undef KERNEL_CAT2
#undef KERNEL_CAT
#undef KERNEL_VU
#undef KERNEL_VQ
#undef KERNEL_BLOCK
#undef KERNEL_NAME
#undef KERNEL_LANES
#undef KERNEL_CHAINS
#undef KERNEL_TARGET
