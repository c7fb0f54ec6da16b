/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * torch.utils.data.random_split(dataset, lengths, generator=g), g seeded:
 * which of the dataset's samples a loader over one of the parts reads, and
 * in which index order (the part's Subset maps its index i to
 * indices[offset + i], indices = randperm(len(dataset), generator=g)).
 * The lengths are random_split's own: fractions adding up to 1 (each part
 * floor(n * fraction) long, the remainder dealt one by one from the first
 * part on), or whole lengths adding up to n.  Computed as torch 1.13 and
 * CPython 3.11 compute them: a sum of the values from left to right, in
 * integers until a fraction comes (Python 3.12 adds floats with
 * compensation, which may decide a sum at the edge of 1 otherwise), and
 * math.isclose() to tell fractions.
 *
 * No FUSE, no locks, no state: any thread, on values it owns.
 */
#ifndef DSFS_SPLIT_H
#define DSFS_SPLIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seed.h"

#define DSFS_SPLIT_MAX_PARTS 64

struct dsfs_split {
	unsigned nparts;		/* 0: no split */
	unsigned part;			/* the part the loader reads */
	double value[DSFS_SPLIT_MAX_PARTS]; /* as given */
	bool whole[DSFS_SPLIT_MAX_PARTS];   /* given as an integer */
	struct dsfs_seed seed;		/* the generator's manual_seed() */
	const char *text;		/* split= as given (the caller's) */
};

/*
 * Parses split=, split_seed= and split_part= (NULL: not given; part 0 by
 * default): lengths "0.8:0.2" or "45000:5000", each a decimal integer or
 * fraction (an exponent allowed, no sign, hex, inf or nan); the seed as torch's
 * manual_seed() takes it (-2^63 to 2^64 - 1).  0, or -EINVAL with a
 * one-line reason naming the option in why.  O(length).
 */
int dsfs_split_parse(const char *lengths, const char *seed, const char *part,
		     struct dsfs_split *out, char *why, size_t whylen);

/*
 * The lengths random_split gives n samples, into len[nparts]: 0, or
 * -EINVAL with why where random_split raises (fractions outside 0..1,
 * lengths not adding up to n) or would be given a fraction as a length.
 * O(nparts).
 */
int dsfs_split_lengths(const struct dsfs_split *s, uint64_t n, uint64_t *len,
		       char *why, size_t whylen);

/*
 * The dataset indices of part s->part, in the part's order: *idx
 * (malloc'd, *count of them; a valid pointer when 0).  0, or -EINVAL
 * (lengths, with why), -EFBIG (n >= DSFS_SAMPLER_TORCH_MAX_N), -ENOMEM.
 * O(n): one randperm(n).
 */
int dsfs_split_indices(const struct dsfs_split *s, uint64_t n, uint32_t **idx,
		       uint64_t *count, char *why, size_t whylen);

#endif
