/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A pass in sorted order over a directory tree outside the plan's data
 * set: the validation loop of a training script, a DataLoader with
 * shuffle=False over ImageFolder(".../val") beside the plan's train/,
 * run after every epoch.  The plan has no sample index for these files,
 * so its index-order pass (seqpass.h) cannot see it; this notices one
 * from the paths alone, so that the scheduler can list the tree and
 * follow it by index from there (sched_side.c).
 *
 * Each process of such a pass opens, within one directory, names in
 * sorted order (a DataLoader worker reads its batch in index order, and
 * ImageFolder's index order is the sorted class directories' sorted
 * files).  An open is a *step* when its process's last open was in the
 * same directory and its name sorts before this one's (Python's order,
 * dsfs_layout_strcmp).  A shuffled loader's process steps only when two
 * of its opens fall in one directory, one in as many as the tree has
 * directories of the size; random opens in one flat directory step half
 * the time, far from DSFS_SEQPASS_ON of DSFS_SEQPASS_HISTORY but not
 * never: a false notice costs a listing of the tree, whose pass by index
 * then never turns on.  A class directory crossed is one open not a step.
 *
 * Not thread-safe: the caller locks.  O(DSFS_SEQPASS_PROCS + path length)
 * an open; DSFS_SEQPASS_PROCS paths of memory.
 */
#ifndef DSFS_DIRPASS_H
#define DSFS_DIRPASS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "seqpass.h"

/* The processes (seqpass.h's slots: the least recently seen gives way;
 * their `last` unused) and the path each opened last, procs[k]'s in
 * last[k]. */
struct dsfs_dirpass {
	struct dsfs_seqproc procs[DSFS_SEQPASS_PROCS];
	char last[DSFS_SEQPASS_PROCS][PATH_MAX];
	uint64_t opens;			/* judged so far */
	uint32_t hist;			/* a bit an open, the latest lowest:
					   it was a step */
};

/*
 * An open of path (relative to SOURCE, a file outside the plan's data
 * set) by process pid (0: not known, not judged).  True when at least
 * DSFS_SEQPASS_ON of the last DSFS_SEQPASS_HISTORY opens judged were
 * steps (seqpass.h's thresholds).
 */
bool dsfs_dirpass_access(struct dsfs_dirpass *d, uint32_t pid,
			 const char *path);

/* Forget the opens judged (the processes' last paths stay): the next
 * notice needs DSFS_SEQPASS_ON new steps. */
void dsfs_dirpass_clear(struct dsfs_dirpass *d);

/*
 * The tree a sorted pass that opened path walks, relative to SOURCE, into
 * root: the file's directory's parent (ImageFolder's root, over class
 * directories), or the file's own directory where the parent is SOURCE
 * itself or holds a directory of the plan's data set (a flat directory
 * of files beside it).  datasets: the plan's directories relative to
 * SOURCE, ':' between ("." for SOURCE).  Its length, or 0 when there is
 * none: path is inside one of the data sets, directly in SOURCE, or
 * longer than root holds.  O(path + datasets).
 */
size_t dsfs_dirpass_root(const char *path, const char *datasets,
			 char root[PATH_MAX]);

/* Whether path (relative to SOURCE) lies in one of the data sets'
 * directories (datasets as for dsfs_dirpass_root): no pass outside them
 * can have opened it.  O(path + datasets). */
bool dsfs_dirpass_in_dataset(const char *path, const char *datasets);

#endif
