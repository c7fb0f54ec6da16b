// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Samplers (see sampler.h): per kind, the seeding and the shuffle loop of the
 * library it models, transcribed from torch 1.13 (ATen randperm_cpu,
 * torch/utils/data/{sampler,dataloader,distributed}.py), CPython 3.11
 * (_randommodule.c, random.py) and numpy 1.24 (RandomState and
 * default_rng; their shuffles in shuffle.c).
 *
 * Pure functions: any thread, no locks, no state kept between calls.  Cost:
 * O(n) time and 4 bytes per index; torch-random also skips the generator
 * outputs of earlier epochs, O(epoch * n).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mt19937.h"
#include "sampler.h"
#include "shuffle.h"

static const char *const sampler_names[] = {
	[DSFS_SAMPLER_NONE] = "none",
	[DSFS_SAMPLER_SEQUENTIAL] = "sequential",
	[DSFS_SAMPLER_TORCH_RANDOM] = "torch-random",
	[DSFS_SAMPLER_TORCH_DISTRIBUTED] = "torch-distributed",
	[DSFS_SAMPLER_PYTHON_SHUFFLE] = "python-shuffle",
	[DSFS_SAMPLER_NUMPY_PERMUTATION] = "numpy-permutation",
	[DSFS_SAMPLER_NUMPY_GENERATOR] = "numpy-generator",
};

#define NKINDS (sizeof(sampler_names) / sizeof(sampler_names[0]))

const char *dsfs_sampler_name(enum dsfs_sampler kind)
{
	return (unsigned)kind < NKINDS ? sampler_names[kind] : NULL;
}

int dsfs_sampler_from_name(const char *s, enum dsfs_sampler *out)
{
	unsigned i;

	for (i = 0; i < NKINDS; i++) {
		if (!strcmp(s, sampler_names[i])) {
			*out = (enum dsfs_sampler)i;
			return 0;
		}
	}
	return -EINVAL;
}

bool dsfs_sampler_script(enum dsfs_sampler kind)
{
	return kind == DSFS_SAMPLER_PYTHON_SHUFFLE ||
	       kind == DSFS_SAMPLER_NUMPY_PERMUTATION ||
	       kind == DSFS_SAMPLER_NUMPY_GENERATOR;
}

/* Whether the sampler seeds its generator with seed + epoch. */
static bool seeds_per_epoch(const struct dsfs_sampler_cfg *cfg)
{
	return cfg->kind == DSFS_SAMPLER_TORCH_DISTRIBUTED ||
	       (dsfs_sampler_script(cfg->kind) && !cfg->seeded_once);
}

/* The seed the kind's generator gets in this epoch: 0 or -ERANGE. */
static int epoch_seed(const struct dsfs_sampler_cfg *cfg, uint64_t epoch,
		      struct dsfs_seed *out)
{
	if (!seeds_per_epoch(cfg) || !epoch) {
		memcpy(out, &cfg->seed, sizeof(*out));
		return 0;
	}
	if (epoch > INT64_MAX)
		return -ERANGE;
	return dsfs_seed_add(&cfg->seed, (int64_t)epoch, out);
}

static int seed_error(const struct dsfs_sampler_cfg *cfg, uint64_t epoch,
		      const char *value, const char *rule, char *why,
		      size_t whylen)
{
	if (!why || !whylen)
		return -ERANGE;
	if (seeds_per_epoch(cfg) && epoch)
		snprintf(why, whylen,
			 "seed=%s: in epoch %" PRIu64 " the seed is %s, but %s",
			 cfg->seed.text, epoch, value, rule);
	else
		snprintf(why, whylen, "seed=%s: %s", cfg->seed.text, rule);
	return -ERANGE;
}

int dsfs_sampler_check_epoch(const struct dsfs_sampler_cfg *cfg, uint64_t epoch,
			     char *why, size_t whylen)
{
	struct dsfs_seed s;

	if (why && whylen)
		why[0] = '\0';
	if (!dsfs_sampler_name(cfg->kind)) {
		if (why && whylen)
			snprintf(why, whylen, "sampler: unknown kind %d",
				 (int)cfg->kind);
		return -EINVAL;
	}
	if (cfg->kind == DSFS_SAMPLER_TORCH_DISTRIBUTED && !cfg->world) {
		if (why && whylen)
			snprintf(
				why, whylen,
				"world=0: the number of replicas must be at least 1");
		return -EINVAL;
	}
	if (epoch_seed(cfg, epoch, &s))
		return seed_error(cfg, epoch, "too large",
				  "the seed must stay below 2^4096", why,
				  whylen);
	switch (cfg->kind) {
	case DSFS_SAMPLER_TORCH_RANDOM:
	case DSFS_SAMPLER_TORCH_DISTRIBUTED:
		if (!dsfs_seed_fits(&s, INT64_MIN, UINT64_MAX))
			return seed_error(
				cfg, epoch, s.text,
				"torch manual_seed() accepts only -2^63 <= seed < 2^64",
				why, whylen);
		return 0;
	case DSFS_SAMPLER_NUMPY_PERMUTATION:
		if (!dsfs_seed_fits(&s, 0, UINT32_MAX))
			return seed_error(
				cfg, epoch, s.text,
				"numpy RandomState() accepts only 0 <= seed < 2^32",
				why, whylen);
		return 0;
	case DSFS_SAMPLER_NUMPY_GENERATOR:
		if (s.negative)
			return seed_error(
				cfg, epoch, s.text,
				"numpy default_rng() accepts only seeds >= 0",
				why, whylen);
		return 0;
	default:
		return 0; /* python: any integer; none, sequential: no seed */
	}
}

int dsfs_sampler_check(const struct dsfs_sampler_cfg *cfg, char *why,
		       size_t whylen)
{
	return dsfs_sampler_check_epoch(cfg, 0, why, whylen);
}

/* malloc'd array of max(count, 1) indices (malloc(0) may return NULL). */
static uint32_t *alloc_indices(uint64_t count)
{
	return malloc((count ? count : 1) * sizeof(uint32_t));
}

static void iota(uint32_t *a, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		a[i] = i;
}

static inline void swap(uint32_t *a, uint32_t i, uint32_t j)
{
	uint32_t t = a[i];

	a[i] = a[j];
	a[j] = t;
}

/* torch.randperm(n) on CPU for n < DSFS_SAMPLER_TORCH_MAX_N: n - 1 draws. */
static void torch_randperm(struct dsfs_mt19937 *mt, uint32_t *a, uint32_t n)
{
	uint32_t i;

	iota(a, n);
	for (i = 0; i + 1 < n; i++)
		swap(a, i, i + dsfs_mt_next32(mt) % (n - i));
}

/*
 * Outputs of G drawn before epoch `epoch`'s first randperm (verified against
 * torch 1.13 by tests/golden_sampler.py): each iterator creation draws the
 * base seed (one random64 = 2 outputs; only the first creation with
 * persistent workers, where later epochs reuse the iterator), then the
 * sampler's randperms (n - 1 outputs each): num_samples / n read whole and
 * one more, cut to the rest, which is never read at all when num_samples is
 * n, the default; with replacement, one output per sample instead (two
 * with weights: torch.multinomial draws a random64 for each); a
 * SubsetRandomSampler draws its one randperm and no more.  A generator given
 * to the sampler alone gives no base seed: the DataLoader draws it from
 * torch's global generator.  An epoch the loader leaves before its sampler
 * is done (cfg->cut_epochs of them) never draws that second randperm: the
 * sampler's generator function is dropped where it stands.
 */
bool dsfs_sampler_cuttable(const struct dsfs_sampler_cfg *cfg, uint64_t n)
{
	return cfg->kind == DSFS_SAMPLER_TORCH_RANDOM && n > 1 &&
	       !cfg->replacement && !cfg->subset &&
	       dsfs_sampler_count(cfg, n) == n;
}

/* Whether cfg's epochs cut fit epoch: none, or at most that many of a
 * sampler that can be cut. */
static bool cuts_fit(const struct dsfs_sampler_cfg *cfg, uint64_t n,
		     uint64_t epoch)
{
	return !cfg->cut_epochs ||
	       (cfg->cut_epochs <= epoch && dsfs_sampler_cuttable(cfg, n));
}

int dsfs_sampler_torch_skip(const struct dsfs_sampler_cfg *cfg, uint64_t n,
			    uint64_t epoch, uint64_t *skip)
{
	uint64_t count = dsfs_sampler_count(cfg, n);
	uint64_t per_epoch = !n ? 0 : cfg->weights ? 2 * count :
			     cfg->replacement ? count :
			     cfg->subset ? n - 1 :
			     (count / n + 1) * (uint64_t)(n - 1), s;
	bool base_seed = !cfg->sampler_generator;

	if (base_seed && !cfg->persistent_workers)
		per_epoch += 2;
	if (__builtin_mul_overflow(epoch, per_epoch, &s) ||
	    __builtin_add_overflow(s, base_seed ? 2 : 0, &s))
		return -EOVERFLOW;
	if (!cuts_fit(cfg, n, epoch))
		return -EINVAL;
	s -= cfg->cut_epochs * (uint64_t)(n - 1); /* <= epoch's randperms */
	*skip = s;
	return 0;
}

/*
 * torch.randint(high=n, size=(count,), dtype=int64) on CPU for n < 2^32:
 * one 32-bit output % n per element, in order (a serial kernel).  The
 * sampler asks for 32 at a time, then the rest: the same outputs.
 */
static void torch_randint(struct dsfs_mt19937 *mt, uint32_t *a,
			  uint64_t count, uint32_t n)
{
	uint64_t i;

	for (i = 0; i < count; i++)
		a[i] = dsfs_mt_next32(mt) % n;
}

/*
 * torch.multinomial(weights, count, replacement=True) on CPU: per draw, a
 * random64 (the first output its high word) cut to 53 bits makes u in
 * [0, 1); the index is the first whose normalised cumulative weight is
 * >= u (a binary search, as torch's).  cum[n - 1] is 1 > u: an index < n.
 */
static void torch_multinomial(struct dsfs_mt19937 *mt, const double *cum,
			      uint32_t *a, uint64_t count, uint32_t n)
{
	uint64_t i, r;
	uint32_t lo, hi, mid;
	double u;

	for (i = 0; i < count; i++) {
		r = (uint64_t)dsfs_mt_next32(mt) << 32;
		r |= dsfs_mt_next32(mt);
		u = (double)(r & ((1ULL << 53) - 1)) * 0x1p-53;
		lo = 0;
		hi = n;
		while (lo < hi) {
			mid = lo + (hi - lo) / 2;
			if (cum[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		a[i] = lo < n ? lo : n - 1;
	}
}

uint64_t dsfs_sampler_replay(const struct dsfs_sampler_cfg *cfg, uint64_t n,
			     uint64_t epoch)
{
	uint64_t skip, steps;

	if (cfg->kind == DSFS_SAMPLER_TORCH_RANDOM)
		return dsfs_sampler_torch_skip(cfg, n, epoch, &skip) ?
			       UINT64_MAX :
			       skip / 16;
	if (!dsfs_sampler_script(cfg->kind) ||
	    !(cfg->seeded_once || cfg->inplace))
		return 0;
	return __builtin_mul_overflow(epoch, n, &steps) ? UINT64_MAX : steps;
}

int dsfs_sampler_check_replay(const struct dsfs_sampler_cfg *cfg, uint64_t n,
			      uint64_t epoch, char *why, size_t whylen)
{
	uint64_t replay = dsfs_sampler_replay(cfg, n, epoch);

	if (replay <= DSFS_SAMPLER_MAX_REPLAY)
		return 0;
	if (why && whylen)
		snprintf(why, whylen,
			 "epoch=%" PRIu64 ": sampler=%s reaches epoch %" PRIu64
			 " of %" PRIu64 " samples only by redoing the epochs before it, more work than dsfs takes on (2^33 shuffle steps, a minute or two of a CPU); give the loader's epoch, or epoch=auto",
			 epoch, dsfs_sampler_name(cfg->kind), epoch, n);
	return replay == UINT64_MAX ? -EOVERFLOW : -E2BIG;
}

/* The count indices of the epoch into a.  -EOVERFLOW, -ENOMEM or 0. */
static int order_torch_random(const struct dsfs_sampler_cfg *cfg, uint32_t n,
			      uint64_t count, uint64_t epoch, uint32_t *a)
{
	uint64_t skip, whole = count / n, q;
	struct dsfs_mt19937 mt;
	uint32_t *tmp;
	int ret;

	ret = dsfs_sampler_torch_skip(cfg, n, epoch, &skip);
	if (ret)
		return ret;
	dsfs_mt_init_genrand(&mt, dsfs_seed_low32(&cfg->seed));
	dsfs_mt_skip(&mt, skip);
	if (cfg->weights) {
		torch_multinomial(&mt, cfg->weights, a, count, n);
		return 0;
	}
	if (cfg->replacement) {
		torch_randint(&mt, a, count, n);
		return 0;
	}
	for (q = 0; q < whole; q++)
		torch_randperm(&mt, a + q * n, n);
	if (count % n) { /* the last randperm, read in part */
		tmp = alloc_indices(n);
		if (!tmp)
			return -ENOMEM;
		torch_randperm(&mt, tmp, n);
		memcpy(a + whole * n, tmp, (count % n) * sizeof(*a));
		free(tmp);
	}
	return 0;
}

/* DistributedSampler: num_samples = ceil(n / world), or floor with drop_last. */
static uint64_t distributed_count(const struct dsfs_sampler_cfg *cfg,
				  uint32_t n)
{
	if (cfg->drop_last)
		return n / cfg->world;
	return (n + (uint64_t)cfg->world - 1) / cfg->world;
}

uint64_t dsfs_sampler_count(const struct dsfs_sampler_cfg *cfg, uint64_t n)
{
	if (cfg->kind == DSFS_SAMPLER_TORCH_DISTRIBUTED && cfg->world)
		return distributed_count(cfg, (uint32_t)n);
	if (cfg->kind == DSFS_SAMPLER_TORCH_RANDOM && cfg->num_samples && n)
		return cfg->num_samples;
	return n;
}

uint64_t dsfs_sampler_padded(const struct dsfs_sampler_cfg *cfg, uint64_t n,
			     uint32_t rank)
{
	uint64_t w = cfg->world, count, real;

	if (cfg->kind != DSFS_SAMPLER_TORCH_DISTRIBUTED || !w ||
	    cfg->drop_last)
		return 0;
	count = distributed_count(cfg, (uint32_t)n);
	real = n > rank ? (n - rank + w - 1) / w : 0; /* r + k*w < n */
	return real < count ? count - real : 0;
}

/*
 * Rank r reads positions r, r + world, ... of randperm(n) padded cyclically
 * to num_samples * world (or cut to it with drop_last): idx[(r + k*w) % n].
 */
static int order_torch_distributed(const struct dsfs_sampler_cfg *cfg,
				   const struct dsfs_seed *s, uint32_t n,
				   uint32_t rank, uint32_t **order,
				   uint64_t *count)
{
	uint64_t c = distributed_count(cfg, n), k;
	uint32_t *idx, *out;
	struct dsfs_mt19937 mt;

	idx = alloc_indices(n);
	out = alloc_indices(c);
	if (!idx || !out) {
		free(idx);
		free(out);
		return -ENOMEM;
	}
	dsfs_mt_init_genrand(&mt, dsfs_seed_low32(s));
	torch_randperm(&mt, idx, n);
	for (k = 0; k < c; k++)
		out[k] = idx[(rank + k * cfg->world) % n];
	free(idx);
	*order = out;
	*count = c;
	return 0;
}

/* The generator of a script-side shuffle kind (shuffle.h). */
static enum dsfs_shuffle_gen script_gen(enum dsfs_sampler kind)
{
	return kind == DSFS_SAMPLER_PYTHON_SHUFFLE ? DSFS_SHUFFLE_PYTHON :
	       kind == DSFS_SAMPLER_NUMPY_PERMUTATION ?
						     DSFS_SHUFFLE_NUMPY_LEGACY :
						     DSFS_SHUFFLE_NUMPY_PCG64;
}

/*
 * python-shuffle, numpy-permutation, numpy-generator: the library's
 * generator shuffles list(range(n)) or arange(n) (permutation(n) is
 * arange(n) shuffled), seeded with seed + epoch.  With seeded_once or
 * inplace the epochs before are replayed: one generator seeded with seed
 * for all (seeded_once), one list shuffled again each epoch (inplace).
 * 0, or -ERANGE (a seed + e dsfs_seed_add refuses; checked before).
 */
static int order_script(const struct dsfs_sampler_cfg *cfg, uint64_t epoch,
			uint32_t n, uint32_t *a)
{
	uint64_t e = cfg->seeded_once || cfg->inplace ? 0 : epoch;
	struct dsfs_shuffler g;
	struct dsfs_seed s;
	int err;

	for (; e <= epoch; e++) {
		if (!cfg->seeded_once || !e) {
			err = epoch_seed(cfg, e, &s); /* seed if seeded_once */
			if (err)
				return err;
			dsfs_shuffler_seed(&g, script_gen(cfg->kind), &s);
		}
		if (!cfg->inplace || !e)
			iota(a, n);
		dsfs_shuffler_run(&g, a, n);
	}
	return 0;
}

/* -EINVAL / -EFBIG for arguments no kind accepts, before any work. */
static int order_args(const struct dsfs_sampler_cfg *cfg, uint64_t n,
		      uint32_t rank)
{
	bool torch = cfg->kind == DSFS_SAMPLER_TORCH_RANDOM ||
		     cfg->kind == DSFS_SAMPLER_TORCH_DISTRIBUTED;

	if (cfg->kind == DSFS_SAMPLER_NONE || !dsfs_sampler_name(cfg->kind))
		return -EINVAL;
	if (n > DSFS_SAMPLER_MAX_N || (torch && n >= DSFS_SAMPLER_TORCH_MAX_N))
		return -EFBIG;
	if (cfg->kind == DSFS_SAMPLER_TORCH_DISTRIBUTED &&
	    (!cfg->world || rank >= cfg->world))
		return -EINVAL;
	if ((cfg->num_samples || cfg->replacement || cfg->subset) &&
	    cfg->kind != DSFS_SAMPLER_TORCH_RANDOM)
		return -EINVAL;
	if (cfg->subset && (cfg->num_samples || cfg->replacement))
		return -EINVAL;
	if ((cfg->seeded_once || cfg->inplace) &&
	    !dsfs_sampler_script(cfg->kind))
		return -EINVAL;
	if (cfg->weights && (!cfg->replacement || !cfg->num_samples))
		return -EINVAL;
	if (cfg->num_samples > DSFS_SAMPLER_MAX_N)
		return -EINVAL;
	return 0;
}

int dsfs_sampler_order(const struct dsfs_sampler_cfg *cfg, uint64_t n,
		       uint64_t epoch, uint32_t rank, uint32_t **order,
		       uint64_t *count)
{
	struct dsfs_seed s;
	uint32_t *a;
	uint64_t c;
	int ret;

	ret = order_args(cfg, n, rank);
	if (!ret && !cuts_fit(cfg, n, epoch))
		ret = -EINVAL;
	if (!ret)
		ret = dsfs_sampler_check_epoch(cfg, epoch, NULL, 0);
	if (!ret)
		ret = dsfs_sampler_check_replay(cfg, n, epoch, NULL, 0);
	if (ret)
		return ret;
	ret = epoch_seed(cfg, epoch, &s);
	if (ret)
		return ret;
	if (!n) {
		*order = alloc_indices(0);
		*count = 0;
		return *order ? 0 : -ENOMEM;
	}
	if (cfg->kind == DSFS_SAMPLER_TORCH_DISTRIBUTED)
		return order_torch_distributed(cfg, &s, (uint32_t)n, rank,
					       order, count);
	c = dsfs_sampler_count(cfg, n);
	a = alloc_indices(c);
	if (!a)
		return -ENOMEM;
	switch (cfg->kind) {
	case DSFS_SAMPLER_TORCH_RANDOM:
		ret = order_torch_random(cfg, (uint32_t)n, c, epoch, a);
		break;
	case DSFS_SAMPLER_PYTHON_SHUFFLE:
	case DSFS_SAMPLER_NUMPY_PERMUTATION:
	case DSFS_SAMPLER_NUMPY_GENERATOR:
		ret = order_script(cfg, epoch, (uint32_t)n, a);
		break;
	default:
		iota(a, (uint32_t)n);
		break;
	}
	if (ret) {
		free(a);
		return ret;
	}
	*order = a;
	*count = c;
	return 0;
}
