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
 * dropped.  The division by n uses the filter's magic multiplier.
 */
#define KERNEL_CAT2(a, b) a##b
#define KERNEL_CAT(a, b) KERNEL_CAT2(a, b)
#define KERNEL_VU KERNEL_CAT(KERNEL_NAME, _vu)
#define KERNEL_VQ KERNEL_CAT(KERNEL_NAME, _vq)
#define KERNEL_BLOCK (KERNEL_LANES * KERNEL_CHAINS)

typedef uint32_t KERNEL_VU __attribute__((vector_size(KERNEL_LANES * 4)));
typedef uint64_t KERNEL_VQ __attribute__((vector_size(KERNEL_LANES * 8)));

/* o_0 % n of the seeds s (lane-wise): init steps 1..397, twist, temper. */
KERNEL_TARGET static inline __attribute__((always_inline)) void
KERNEL_CAT(KERNEL_NAME, _block)(const struct dsfs_discover_filter *f,
				KERNEL_VU *s, KERNEL_VU *z)
{
	KERNEL_VU w1[KERNEL_CHAINS], x[KERNEL_CHAINS];
	uint32_t i, j;

#pragma GCC unroll 16
	for (j = 0; j < KERNEL_CHAINS; j++) {
		w1[j] = DISCOVER_MT_MULT * (s[j] ^ (s[j] >> 30)) + 1;
		x[j] = w1[j];
	}
	for (i = 2; i <= DISCOVER_MT_M; i++)
#pragma GCC unroll 16
		for (j = 0; j < KERNEL_CHAINS; j++)
			x[j] = DISCOVER_MT_MULT * (x[j] ^ (x[j] >> 30)) + i;
#pragma GCC unroll 16
	for (j = 0; j < KERNEL_CHAINS; j++) {
		KERNEL_VU y = (s[j] & DISCOVER_MT_UPPER) |
			      (w1[j] & DISCOVER_MT_LOWER);
		KERNEL_VU o = x[j] ^ (y >> 1) ^
			      (-(w1[j] & 1U) & DISCOVER_MT_MATRIX_A);
		KERNEL_VU t, q;

		o ^= o >> 11;
		o ^= (o << 7) & DISCOVER_MT_TEMPER_B;
		o ^= (o << 15) & DISCOVER_MT_TEMPER_C;
		o ^= o >> 18;
		t = __builtin_convertvector(
			(__builtin_convertvector(o, KERNEL_VQ) * f->magic) >>
				32,
			KERNEL_VU);
		q = (t + ((o - t) >> f->sh1)) >> f->sh2;
		z[j] = o - q * f->n;
	}
}

KERNEL_TARGET static uint32_t KERNEL_NAME(const struct dsfs_discover_filter *f,
					  uint32_t first, uint32_t count,
					  uint32_t *out)
{
	KERNEL_VU lane, s[KERNEL_CHAINS], z[KERNEL_CHAINS];
	uint32_t found = 0, i, j, h;
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
		for (h = 0; h < f->nheads; h++)
#pragma GCC unroll 16
			for (j = 0; j < KERNEL_CHAINS; j++)
				hit |= (KERNEL_VU)(z[j] == f->heads[h]);
		for (i = 0; i < KERNEL_LANES; i++)
			any |= hit[i];
		if (!any) /* the usual case: heads / n per seed */
			continue;
		for (j = 0; j < KERNEL_CHAINS; j++) {
			for (i = 0; i < KERNEL_LANES; i++) {
				at = done + j * KERNEL_LANES + i;
				for (h = 0; at < count && h < f->nheads; h++) {
					if (z[j][i] == f->heads[h]) {
						out[found++] =
							(uint32_t)(first + at);
						break;
					}
				}
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
