// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Prefixes of torch.randperm(n) from a fresh generator (see discover.h),
 * for confirming discovery candidates without building whole permutations.
 *
 * randperm's step i swaps a[i] and a[i + o_i % (n - i)] and never touches
 * a[0 .. i] again, so the first len positions need len draws and the values
 * of the positions the swaps displaced: a small map, O(len), instead of an
 * array of n.  The first 227 draws of a fresh MT19937 need init words
 * 0 .. 397 + len only (dsfs_discover_output()), not the whole 624-word state
 * and twist.
 *
 * A scratch belongs to one thread; no locks, no global state.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "discover_int.h"
#include "mt19937.h"
#include "sampler.h"

/* Draws 0 .. 226 come from the first half of the first twist. */
#define EARLY_DRAWS (DSFS_MT_N - DISCOVER_MT_M)

int dsfs_discover_scratch_init(struct dsfs_discover_scratch *s, uint32_t len)
{
	uint32_t bits = 1;

	memset(s, 0, sizeof(*s));
	while ((UINT32_C(1) << bits) < 2 * (uint64_t)len) /* load <= 1/2 */
		bits++;
	s->len = len;
	s->mask = (UINT32_C(1) << bits) - 1;
	s->draws = calloc(len ? len : 1, sizeof(uint32_t));
	s->prefix = calloc(len ? len : 1, sizeof(uint32_t));
	s->keys = calloc((size_t)s->mask + 1, sizeof(uint32_t));
	s->vals = calloc((size_t)s->mask + 1, sizeof(uint32_t));
	s->stamps = calloc((size_t)s->mask + 1, sizeof(uint32_t));
	if (!s->draws || !s->prefix || !s->keys || !s->vals || !s->stamps) {
		dsfs_discover_scratch_free(s);
		return -ENOMEM;
	}
	return 0;
}

void dsfs_discover_scratch_free(struct dsfs_discover_scratch *s)
{
	free(s->draws);
	free(s->prefix);
	free(s->keys);
	free(s->vals);
	free(s->stamps);
	memset(s, 0, sizeof(*s));
}

/* The first d outputs of MT19937 after init_genrand(seed). */
static void first_draws(uint32_t seed, uint32_t d, uint32_t *out)
{
	uint32_t w[EARLY_DRAWS + DISCOVER_MT_M + 1], i;
	struct dsfs_mt19937 mt;

	if (d > EARLY_DRAWS) {
		dsfs_mt_init_genrand(&mt, seed);
		for (i = 0; i < d; i++)
			out[i] = dsfs_mt_next32(&mt);
		return;
	}
	w[0] = seed;
	for (i = 1; i <= d + DISCOVER_MT_M; i++)
		w[i] = dsfs_discover_init_step(w[i - 1], i);
	for (i = 0; i < d; i++)
		out[i] = dsfs_discover_output(w[i], w[i + 1],
					      w[i + DISCOVER_MT_M]);
}

/* The slot of position `key`: where it is, or the free slot to take. */
static uint32_t map_slot(const struct dsfs_discover_scratch *s, uint32_t key)
{
	uint32_t i = (key * 0x9e3779b1U) & s->mask;

	while (s->stamps[i] == s->gen && s->keys[i] != key)
		i = (i + 1) & s->mask;
	return i;
}

/* The value now at position pos: the displaced one, or pos if untouched. */
static uint32_t map_get(const struct dsfs_discover_scratch *s, uint32_t pos)
{
	uint32_t i = map_slot(s, pos);

	return s->stamps[i] == s->gen ? s->vals[i] : pos;
}

static void map_set(struct dsfs_discover_scratch *s, uint32_t pos, uint32_t val)
{
	uint32_t i = map_slot(s, pos);

	s->stamps[i] = s->gen;
	s->keys[i] = pos;
	s->vals[i] = val;
}

/* A fresh, empty map: O(1) but every 2^32 uses, when stamps are reset. */
static void map_clear(struct dsfs_discover_scratch *s)
{
	if (++s->gen == 0) {
		memset(s->stamps, 0, ((size_t)s->mask + 1) * sizeof(uint32_t));
		s->gen = 1;
	}
}

void dsfs_discover_prefix_into(struct dsfs_discover_scratch *s, uint32_t seed,
			       uint32_t n, uint32_t len)
{
	uint32_t d = len < n - 1 ? len : n - 1, i, j, vi;

	first_draws(seed, d, s->draws);
	map_clear(s);
	for (i = 0; i < d; i++) {
		j = i + s->draws[i] % (n - i);
		vi = map_get(s, i);
		s->prefix[i] = j == i ? vi : map_get(s, j);
		if (j != i)
			map_set(s, j, vi);
	}
	if (d < len) /* len == n: the last position takes what is left */
		s->prefix[d] = map_get(s, d);
}

/* Long prefixes: randperm's own loop on an array of n, 4 bytes a position. */
static int prefix_dense(uint32_t seed, uint32_t n, uint32_t len, uint32_t *out)
{
	uint32_t *a = malloc((size_t)n * sizeof(uint32_t)), i, j, t;
	struct dsfs_mt19937 mt;

	if (!a)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		a[i] = i;
	dsfs_mt_init_genrand(&mt, seed);
	for (i = 0; i < len && i + 1 < n; i++) {
		j = i + dsfs_mt_next32(&mt) % (n - i);
		t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
	memcpy(out, a, (size_t)len * sizeof(uint32_t));
	free(a);
	return 0;
}

int dsfs_discover_prefix(uint32_t seed, uint32_t n, uint32_t len, uint32_t *out)
{
	struct dsfs_discover_scratch s;
	int ret;

	if (len > n || n >= DSFS_SAMPLER_TORCH_MAX_N)
		return -EINVAL;
	if (!len)
		return 0;
	if (len >= n / 8) /* the map would take more than the array */
		return prefix_dense(seed, n, len, out);
	ret = dsfs_discover_scratch_init(&s, len);
	if (ret)
		return ret;
	dsfs_discover_prefix_into(&s, seed, n, len);
	memcpy(out, s.prefix, (size_t)len * sizeof(uint32_t));
	dsfs_discover_scratch_free(&s);
	return 0;
}
