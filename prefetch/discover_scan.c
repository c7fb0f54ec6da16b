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

static bool is_head(const struct dsfs_discover_filter *f, uint32_t z)
{
	uint32_t h;

	for (h = 0; h < f->nheads; h++)
		if (f->heads[h] == z)
			return true;
	return false;
}

/* The reference: one seed at a time, a plain %. */
static uint32_t scan_scalar(const struct dsfs_discover_filter *f,
			    uint32_t first, uint32_t count, uint32_t *out)
{
	uint32_t found = 0, i;

	for (i = 0; i < count; i++)
		if (is_head(f, dsfs_discover_first_output(first + i) % f->n))
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

void dsfs_discover_filter_init(struct dsfs_discover_filter *f, uint32_t n,
			       const uint32_t *heads, uint32_t nheads)
{
	uint32_t l = 0, h;

	while ((UINT64_C(1) << l) < n) /* l = ceil(log2(n)) */
		l++;
	f->n = n;
	f->magic = (uint32_t)((((UINT64_C(1) << l) - n) << 32) / n + 1);
	f->sh1 = l ? 1 : 0;
	f->sh2 = l ? l - 1 : 0;
	f->nheads = nheads;
	for (h = 0; h < nheads; h++)
		f->heads[h] = heads[h];
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

int dsfs_discover_scan(enum dsfs_discover_path path, uint32_t n,
		       const uint32_t *heads, uint32_t nheads, uint32_t first,
		       uint32_t count, uint32_t *out, uint32_t *nout)
{
	struct dsfs_discover_filter f;
	dsfs_discover_scan_fn scan;

	if (n < 2 || n >= DSFS_SAMPLER_TORCH_MAX_N || !nheads ||
	    nheads > DSFS_DISCOVER_MAX_HEADS ||
	    (uint64_t)first + count > DSFS_DISCOVER_SEEDS ||
	    !dsfs_discover_path_name(path))
		return -EINVAL;
	scan = dsfs_discover_kernel(dsfs_discover_resolve(path));
	if (!scan)
		return -EOPNOTSUPP;
	dsfs_discover_filter_init(&f, n, heads, nheads);
	*nout = scan(&f, first, count, out);
	return 0;
}
