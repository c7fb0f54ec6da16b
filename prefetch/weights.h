/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The weights of a WeightedRandomSampler (-o weights=FILE): one number a
 * line, the i-th line sample i's weight in the layout's order, read as
 * Python's float() reads it (strtod rounds correctly, as CPython does), and
 * kept as torch.multinomial keeps them for its draws: the running sum of
 * the weights in order, in doubles, each divided by the total.
 *
 * No state: any thread may call it.  Memory: one double per sample.
 */
#ifndef DSFS_WEIGHTS_H
#define DSFS_WEIGHTS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Read FILE's n weights into a malloc'd array of their normalised
 * cumulative sums (*cum[n - 1] is 1), which the caller frees.  0, or
 * -errno with a one-line message naming weights= and the line at fault
 * in why: a file that cannot be read, a line that is not a number, a
 * weight that is negative, infinite or NaN, a total of 0 or infinity
 * (torch.multinomial refuses them all), more or fewer lines than n.
 * O(n).
 */
int dsfs_weights_load(const char *path, uint64_t n, double **cum, char *why,
		      size_t whylen);

#endif
