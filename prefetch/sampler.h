/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Samplers: the order in which a training loader reads the n samples of a
 * dataset in a given epoch, recomputed exactly as the loader's Python code
 * computes it (torch 1.13 and later, CPython 3.11, numpy legacy RandomState
 * and numpy 1.17's Generator; see shared/SAMPLERS.md and tests/t-sampler-golden.sh, which compares every
 * kind against the real libraries).
 *
 * No FUSE, no locks, no global state: any thread may call any function; the
 * configuration is read only.  Memory: one uint32_t per returned index.
 */
#ifndef DSFS_SAMPLER_H
#define DSFS_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed.h"

enum dsfs_sampler {
	DSFS_SAMPLER_NONE,	 /* no prediction */
	DSFS_SAMPLER_SEQUENTIAL, /* 0 .. n-1 every epoch */
	/* DataLoader(shuffle=True, generator=torch.Generator().manual_seed(seed)) */
	DSFS_SAMPLER_TORCH_RANDOM,
	/* DistributedSampler(shuffle=True, seed=seed) with set_epoch(epoch) */
	DSFS_SAMPLER_TORCH_DISTRIBUTED,
	/* random.Random(seed + epoch).shuffle(list(range(n))) */
	DSFS_SAMPLER_PYTHON_SHUFFLE,
	/* numpy.random.RandomState(seed + epoch).permutation(n) */
	DSFS_SAMPLER_NUMPY_PERMUTATION,
	/* numpy.random.default_rng(seed + epoch).permutation(n) */
	DSFS_SAMPLER_NUMPY_GENERATOR,
};

/*
 * torch.randperm switches to another algorithm (random64 draws) for
 * n >= UINT32_MAX / 20 in recent releases: the torch kinds refuse such n.
 */
#define DSFS_SAMPLER_TORCH_MAX_N 214748364U
/* Every kind: indices are uint32_t and n < 2^31. */
#define DSFS_SAMPLER_MAX_N 0x7fffffffU

struct dsfs_sampler_cfg {
	enum dsfs_sampler kind;
	struct dsfs_seed seed;	 /* unused by none and sequential */
	bool persistent_workers; /* torch-random: persistent_workers=True */
	bool sampler_generator;	 /* torch-random: the generator is the
				    sampler's alone (RandomSampler(ds,
				    generator=g) in a DataLoader given no
				    generator=): no base seed drawn from it */
	uint64_t num_samples;	 /* torch-random: RandomSampler(num_samples=),
				    1 .. DSFS_SAMPLER_MAX_N; 0: n */
	bool replacement;	 /* torch-random: RandomSampler(replacement=
				    True): each sample drawn on its own */
	bool subset;		 /* torch-random: SubsetRandomSampler(indices,
				    generator=g): one randperm an epoch */
	uint64_t cut_epochs;	 /* torch-random, a RandomSampler of n
				    samples: epochs before the current one
				    that the loader left before their end
				    (a break), each of which never drew its
				    second randperm; at most the epoch.
				    Found by the tracker, not an option */
	/* torch-random with replacement and num_samples: NULL, or a
	 * WeightedRandomSampler's n weights as weights.h keeps them
	 * (normalised cumulative sums; the caller keeps them alive). */
	const double *weights;
	/* python-shuffle, numpy-permutation, numpy-generator: */
	bool seeded_once;	 /* the generator is seeded once, with seed,
				    and draws on epoch after epoch (not
				    seeded with seed + epoch each) */
	bool inplace;		 /* each epoch shuffles the list the last
				    one left, not a fresh range(n) */
	uint32_t world;		 /* torch-distributed: num_replicas, >= 1 */
	bool drop_last;		 /* torch-distributed: drop_last */
	/* For trackers (tracker.h), ignored by dsfs_sampler_order(): NULL,
	 * or n entries giving for each sample the one an open of its file is
	 * reported as, when several samples share a file (a list naming a
	 * path twice, links to one file).  The caller keeps it alive. */
	const uint32_t *canon;
};

/*
 * The samples the loader reads in an epoch: n, rank's num_samples for
 * torch-distributed (every rank's), cfg->num_samples for torch-random when
 * set.  O(1).
 */
uint64_t dsfs_sampler_count(const struct dsfs_sampler_cfg *cfg, uint64_t n);
/*
 * The positions at the end of rank `rank`'s order that repeat samples of
 * the permutation's start, other ranks' first reads: torch-distributed
 * without drop_last pads to world * count when n is not a multiple of
 * world.  0 for every other kind.  O(1).
 */
uint64_t dsfs_sampler_padded(const struct dsfs_sampler_cfg *cfg, uint64_t n,
			     uint32_t rank);

/*
 * Whether a loader of cfg can leave an epoch early and so draw one randperm
 * fewer (cut_epochs): torch-random, a RandomSampler of n > 1 samples
 * without replacement (a SubsetRandomSampler, or num_samples below n,
 * draws one randperm whole epoch or not).  O(1).
 */
bool dsfs_sampler_cuttable(const struct dsfs_sampler_cfg *cfg, uint64_t n);

/*
 * torch-random: the generator outputs drawn before epoch `epoch`'s first
 * (see dsfs_sampler_order()): 0 and *skip, -EOVERFLOW past 2^64, or
 * -EINVAL for cut_epochs above epoch or not cuttable.  O(1).
 */
int dsfs_sampler_torch_skip(const struct dsfs_sampler_cfg *cfg, uint64_t n,
			    uint64_t epoch, uint64_t *skip);

/*
 * The most replay dsfs_sampler_order() takes on, in shuffle steps: the
 * work of redoing the epochs before the one asked for (torch-random's
 * skipped generator outputs, 16 to a step; the script shuffles' earlier
 * shuffles under seeded_once or inplace, n steps an epoch).  A step is
 * 10 to 12 ns here (a script shuffle's draw and swap) and a skipped
 * output 0.25 to 0.5 ns, so the limit, 2^33 steps, is a minute or two
 * of a CPU.
 * It refuses a mistyped epoch= at once where it would take days, and
 * still follows n = 10^6 samples shuffled in place for 8,000 epochs.
 */
#define DSFS_SAMPLER_MAX_REPLAY (1ULL << 33)

/* The replay of epoch `epoch` over n samples in those steps: 0 for the
 * kinds that seed each epoch afresh, UINT64_MAX past 2^64.  O(1). */
uint64_t dsfs_sampler_replay(const struct dsfs_sampler_cfg *cfg, uint64_t n,
			     uint64_t epoch);

/* 0, or -E2BIG with a one-line reason naming epoch= in why
 * (NUL-terminated, truncated to whylen) when that replay is more than
 * DSFS_SAMPLER_MAX_REPLAY (-EOVERFLOW past 2^64).  O(1). */
int dsfs_sampler_check_replay(const struct dsfs_sampler_cfg *cfg, uint64_t n,
			      uint64_t epoch, char *why, size_t whylen);

/* Whether kind is a shuffle the training script runs itself (shuffle.h):
 * python-shuffle, numpy-permutation, numpy-generator. */
bool dsfs_sampler_script(enum dsfs_sampler kind);

/* "none", "sequential", "torch-random", ...; NULL for an unknown value. */
const char *dsfs_sampler_name(enum dsfs_sampler kind);
/* The kind named s (exact, lower case): 0 or -EINVAL. */
int dsfs_sampler_from_name(const char *s, enum dsfs_sampler *out);

/*
 * Whether the library would accept cfg->seed (at epoch 0) and cfg is
 * usable: 0, or -ERANGE / -EINVAL with a one-line reason naming `seed=` (or
 * `world=`) in why (NUL-terminated, truncated to whylen; why may be NULL).
 *   torch-random, torch-distributed: torch manual_seed() takes
 *     -2^63 <= seed < 2^64 (negative: its two's complement uint64); only the
 *     low 32 bits reach MT19937.
 *   python-shuffle: any integer (|seed| is used).
 *   numpy-permutation: RandomState() takes 0 <= seed < 2^32.
 *   numpy-generator: default_rng() takes any seed >= 0.
 * O(1).
 */
int dsfs_sampler_check(const struct dsfs_sampler_cfg *cfg, char *why,
		       size_t whylen);

/*
 * The same for a given epoch: torch-distributed, python-shuffle and the
 * numpy kinds (unless seeded_once) seed their generator with seed + epoch, which may leave
 * the range the library accepts (e.g. RandomState(2^32 - 1 + 1)) although
 * dsfs_sampler_check() passed.  dsfs_sampler_order() fails with the same
 * error; call this to get the message.  O(words of the seed).
 */
int dsfs_sampler_check_epoch(const struct dsfs_sampler_cfg *cfg, uint64_t epoch,
			     char *why, size_t whylen);

/*
 * The sample indices (each < n) the loader reads in epoch `epoch` (0-based),
 * in read order, in a malloc'd array (*order, *count) the caller frees.
 *   sequential: 0 .. n-1.
 *   torch-random: epochs counted from the generator's creation: the outputs
 *     earlier epochs drew are skipped (per epoch: one random64 for the
 *     workers' base seed, drawn once only with persistent_workers, never
 *     with sampler_generator, then randperm(n) and a second, unused
 *     randperm(n) when the epoch ends).  With num_samples = q * n + r:
 *     q randperms read whole, then one more of which the first r are read
 *     (*count = num_samples; every sample read q or q + 1 times).  With
 *     replacement: num_samples (default n) draws of randint(n), one output
 *     each, and nothing more.  With weights (and replacement): num_samples
 *     draws of torch.multinomial, two outputs each (a 53-bit double u),
 *     the first index whose normalised cumulative weight is >= u.  With subset: randperm(n) alone (the n
 *     samples are the subset's, in its indices' order).
 *   torch-distributed: what rank `rank` of cfg->world reads, padding repeats
 *     included (or trimmed with drop_last): *count = num_samples, which may
 *     differ from n.
 *   python-shuffle, numpy-permutation, numpy-generator: a permutation of
 *     0 .. n-1: the generator seeded with seed + epoch shuffles 0 .. n-1;
 *     with seeded_once, epoch e's is the (e+1)-th shuffle of one generator
 *     seeded with seed; with inplace, each epoch shuffles the last one's
 *     order again (both: one generator shuffling one list, e+1 times).
 * n = 0 gives an empty array (*order is still a valid pointer).
 * Errors: -EINVAL (kind none or unknown, world = 0, rank >= world,
 * num_samples, replacement or subset set for another kind than
 * torch-random, subset with either of the others, num_samples too large,
 * weights without replacement and num_samples, seeded_once or inplace for
 * another kind than the script shuffles),
 * -ERANGE (seed + epoch not accepted: see dsfs_sampler_check_epoch()),
 * -EFBIG (n > DSFS_SAMPLER_MAX_N, or torch kinds with
 * n >= DSFS_SAMPLER_TORCH_MAX_N), -EOVERFLOW (torch-random: the outputs to
 * skip exceed 2^64), -E2BIG (the replay exceeds DSFS_SAMPLER_MAX_REPLAY:
 * see dsfs_sampler_check_replay()), -ENOMEM.
 * Cost: O(n + count) time and memory; torch-random also skips
 * 2 * epoch * n MT19937 outputs, O(epoch * n) (0.25 to 1 ns each: epoch
 * 100 of n = 10^7 costs 0.5 to 2 s), and the script shuffles with seeded_once
 * or inplace replay the epochs before, O(epoch * n) too, so callers should
 * cache the order of an epoch.
 */
int dsfs_sampler_order(const struct dsfs_sampler_cfg *cfg, uint64_t n,
		       uint64_t epoch, uint32_t rank, uint32_t **order,
		       uint64_t *count);

#endif
