// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The first-output filter of seed discovery (see discover.h, discover_int.h):
 * a scalar reference kernel and vector kernels for the baseline ISA, AVX2 and
 * AVX-512F, chosen at run time.  The vector kernels are compiled with target
 * attributes, so the build needs no -mavx2 and the binary runs on any x86-64;
 * elsewhere only the scalar and portable vector kernels exist.
 *
 * Pure functions: any thread, no locks; a filter is read only.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "discover_int.h"
#include "sampler.h"

#if defined(__x86_64__) || defined(__i386__)
#define DISCOVER_X86 1
#endif

uint32_t dsfs_discover_first_output(uint32_t seed)
{
	uint32_t w1 = dsfs_discover_init_step(seed, 1), x = w1, i;

	for (i = 2; i <= DISCOVER_MT_M; i++)
		x = dsfs_discover_init_step(x, i);
	return dsfs_discover_output(seed, w1, x);
}

/* randperm(n)[pos]'s guess (see struct dsfs_discover_probe), minus pos. */
static uint32_t probe_value(const struct dsfs_discover_probe *p, uint32_t seed)
{
	uint32_t w[DSFS_DISCOVER_MAX_POS + DISCOVER_MT_M + 1], i;

	w[0] = seed;
	for (i = 1; i <= p->pos + DISCOVER_MT_M; i++)
		w[i] = dsfs_discover_init_step(w[i - 1], i);
	return dsfs_discover_output(w[p->pos], w[p->pos + 1],
				    w[p->pos + DISCOVER_MT_M]) % p->d;
}

static bool passes(const struct dsfs_discover_filter *f, uint32_t seed)
{
	uint32_t h, k, z;

	for (k = 0; k < f->nprobes; k++) {
		z = probe_value(&f->probes[k], seed);
		for (h = 0; h < f->nheads; h++)
			if (f->probes[k].heads[h] == z)
				return true;
	}
	return false;
}

/* The reference: one seed and probe at a time, a plain %. */
static uint32_t scan_scalar(const struct dsfs_discover_filter *f,
			    uint32_t first, uint32_t count, uint32_t *out)
{
	uint32_t found = 0, i;

	for (i = 0; i < count; i++)
		if (passes(f, first + i))
			out[found++] = first + i;
	return found;
}

#define KERNEL_NAME scan_vector
#define KERNEL_LANES 4
#define KERNEL_CHAINS 12
#define KERNEL_TARGET
#include "discover_kernel.h"

#ifdef DISCOVER_X86
#define KERNEL_NAME scan_avx2
#define KERNEL_LANES 8
#define KERNEL_CHAINS 12
#define KERNEL_TARGET __attribute__((target("avx2")))
#include "discover_kernel.h"

#define KERNEL_NAME scan_avx512
#define KERNEL_LANES 16
#define KERNEL_CHAINS 16
#define KERNEL_TARGET __attribute__((target("avx512f")))
#include "discover_kernel.h"
#endif

static void probe_init(struct dsfs_discover_probe *p, uint32_t n,
		       uint32_t pos, const uint32_t *heads, uint32_t nheads)
{
	uint32_t l = 0, h, d = n - pos;

	while ((UINT64_C(1) << l) < d) /* l = ceil(log2(d)) */
		l++;
	p->pos = pos;
	p->d = d;
	p->magic = (uint32_t)((((UINT64_C(1) << l) - d) << 32) / d + 1);
	p->sh1 = l ? 1 : 0;
	p->sh2 = l ? l - 1 : 0;
	for (h = 0; h < nheads; h++)
		p->heads[h] = heads[h] >= pos ? heads[h] - pos : ~0U;
}

/* Keep the word after init step `step` (once, however many need it). */
static uint8_t keep_step(struct dsfs_discover_filter *f, uint32_t step)
{
	uint32_t e, m;

	for (e = 0; e < f->nsteps && f->steps[e] < step; e++)
		;
	if (e < f->nsteps && f->steps[e] == step)
		return (uint8_t)e;
	for (m = f->nsteps; m > e; m--)
		f->steps[m] = f->steps[m - 1];
	f->steps[e] = step;
	f->nsteps++;
	return (uint8_t)e;
}

void dsfs_discover_filter_init(struct dsfs_discover_filter *f, uint32_t n,
			       const uint32_t *pos, uint32_t nprobes,
			       const uint32_t *heads, uint32_t nheads)
{
	uint32_t k, j, e;

	f->n = n;
	f->nheads = nheads;
	f->nprobes = nprobes;
	f->nsteps = 0;
	for (k = 0; k < nprobes; k++) {
		probe_init(&f->probes[k], n, pos[k], heads, nheads);
		keep_step(f, pos[k]);
		keep_step(f, pos[k] + 1);
		keep_step(f, pos[k] + DISCOVER_MT_M);
	}
	/* slots once every step is in place (inserting shifts them) */
	for (k = 0; k < nprobes; k++)
		for (j = 0; j < DISCOVER_WORDS; j++) {
			for (e = 0; f->steps[e] != pos[k] +
				    (j == 2 ? DISCOVER_MT_M : j); e++)
				;
			f->slot[k][j] = (uint8_t)e;
		}
}

static bool cpu_has(enum dsfs_discover_path path)
{
#ifdef DISCOVER_X86
	__builtin_cpu_init();
	if (path == DSFS_DISCOVER_AVX2)
		return __builtin_cpu_supports("avx2");
	if (path == DSFS_DISCOVER_AVX512)
		return __builtin_cpu_supports("avx512f");
#endif
	return path == DSFS_DISCOVER_SCALAR || path == DSFS_DISCOVER_VECTOR;
}

bool dsfs_discover_path_supported(enum dsfs_discover_path path)
{
	return path == DSFS_DISCOVER_AUTO || cpu_has(path);
}

enum dsfs_discover_path dsfs_discover_resolve(enum dsfs_discover_path path)
{
	if (path != DSFS_DISCOVER_AUTO)
		return path;
	if (cpu_has(DSFS_DISCOVER_AVX512))
		return DSFS_DISCOVER_AVX512;
	if (cpu_has(DSFS_DISCOVER_AVX2))
		return DSFS_DISCOVER_AVX2;
	return DSFS_DISCOVER_VECTOR;
}

dsfs_discover_scan_fn dsfs_discover_kernel(enum dsfs_discover_path path)
{
	if (!cpu_has(path))
		return NULL;
	switch (path) {
	case DSFS_DISCOVER_SCALAR:
		return scan_scalar;
	case DSFS_DISCOVER_VECTOR:
		return scan_vector;
#ifdef DISCOVER_X86
	case DSFS_DISCOVER_AVX2:
		return scan_avx2;
	case DSFS_DISCOVER_AVX512:
		return scan_avx512;
#endif
	default:
		return NULL;
	}
}

static const char *const path_names[] = {
	[DSFS_DISCOVER_AUTO] = "auto",	   [DSFS_DISCOVER_SCALAR] = "scalar",
	[DSFS_DISCOVER_VECTOR] = "vector", [DSFS_DISCOVER_AVX2] = "avx2",
	[DSFS_DISCOVER_AVX512] = "avx512",
};

const char *dsfs_discover_path_name(enum dsfs_discover_path path)
{
	return (unsigned)path < sizeof(path_names) / sizeof(path_names[0]) ?
		       path_names[path] :
		       NULL;
}

int dsfs_discover_scan(enum dsfs_discover_path path, uint32_t n, uint32_t pos,
		       const uint32_t *heads, uint32_t nheads, uint32_t first,
		       uint32_t count, uint32_t *out, uint32_t *nout)
{
	struct dsfs_discover_filter f;
	dsfs_discover_scan_fn scan;

	if (n < 2 || n >= DSFS_SAMPLER_TORCH_MAX_N || pos >= n ||
	    pos > DSFS_DISCOVER_MAX_POS || !nheads ||
	    nheads > DSFS_DISCOVER_MAX_HEADS ||
	    (uint64_t)first + count > DSFS_DISCOVER_SEEDS ||
	    !dsfs_discover_path_name(path))
		return -EINVAL;
	scan = dsfs_discover_kernel(dsfs_discover_resolve(path));
	if (!scan)
		return -EOPNOTSUPP;
	dsfs_discover_filter_init(&f, n, &pos, 1, heads, nheads);
	*nout = scan(&f, first, count, out);
	return 0;
}
