/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The plan: which loader order dsfs predicts (sampler, seed, epoch, ranks)
 * over which sample -> file mapping (layout of the dataset directory).
 *
 * dsfs_plan_cfg_parse() turns the plan's option strings (the same syntax as
 * mount options, and of the plan-change commands of fs/ctl.c) into a
 * checked configuration, refusing contradictions with a message that names
 * the option.  dsfs_plan_print() writes one epoch's predicted read order,
 * one path per line, for `dsfs --print-plan`.  No state of their own: any
 * thread may call them on values it owns.
 */
#ifndef DSFS_PLAN_H
#define DSFS_PLAN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "layout.h"
#include "sampler.h"
#include "split.h"

/* dataset=: at most this many directories (a ConcatDataset of them). */
#define DSFS_PLAN_DATASETS_MAX 256

/* Option values as given (NULL: not given).  Flags are ints for fuse_opt. */
struct dsfs_plan_opts {
	char *sampler, *seed, *epoch, *layout, *dataset, *list, *extensions;
	char *suffix, *hidden;
	char *split, *split_seed, *split_part;
	char *world, *rank, *ranks;
	char *discover_threads, *discover_range, *num_samples, *weights;
	int drop_last, persistent_workers, sampler_generator, replacement;
	int subset, seeded_once, inplace;
};

struct dsfs_plan_cfg {
	struct dsfs_sampler_cfg sampler;	/* kind NONE: no plan */
	enum dsfs_layout_kind layout;
	const char *dataset;	/* relative to SOURCE; "." by default; or
				   several, ':' between (ConcatDataset) */
	uint32_t ndatasets;	/* how many */
	const char *dir;	/* what the layout's paths are relative to:
				   dataset, or "." (SOURCE) for several */
	const char *list;	/* layout=list: absolute path */
	/* Names kept: a DatasetFolder's extensions (imagefolder); suffix=
	 * and hidden=skip (sorted, walk).  Pointers into the options. */
	struct dsfs_layout_names names;
	/* random_split(): the part of the layout's samples the loader reads
	 * (split.nparts 0: none). */
	struct dsfs_split split;
	const char *weights;	/* weights=: absolute path, or NULL */
	bool epoch_auto;	/* detect the epoch from the accesses */
	bool dataset_picked;	/* dataset= not given: DSFS_PLAN_PICKED
				   (dsfs_plan_list) */
	uint64_t epoch;		/* the epoch to start from otherwise */
	uint32_t rank_first, rank_last;	/* local ranks (distributed) */
	/*
	 * seed=discover: search each epoch's seed (torch-random), or one
	 * epoch's and follow from it (torch-distributed); sampler=auto
	 * searches both models when ranks are given.  discover_models: the
	 * enum dsfs_discover_model set searched.
	 */
	bool discover;
	bool sampler_auto;
	unsigned discover_models;
	unsigned discover_threads;	/* 0: the online CPUs */
	uint64_t discover_first, discover_end; /* seeds searched */
};

/*
 * Check and convert.  Strings in cfg point into o (which must outlive cfg).
 * 0, or -EINVAL with a one-line message naming the option in why.
 */
int dsfs_plan_cfg_parse(const struct dsfs_plan_opts *o,
			struct dsfs_plan_cfg *cfg, char *why, size_t whylen);
void dsfs_plan_opts_free(struct dsfs_plan_opts *o);

/*
 * dst = base with every option that `over` gives (a string that is not NULL,
 * a flag that is set) replacing base's; strings are duplicated, dst is
 * overwritten (not freed first).  0, or -ENOMEM with dst empty.
 */
int dsfs_plan_opts_merge(struct dsfs_plan_opts *dst,
			 const struct dsfs_plan_opts *base,
			 const struct dsfs_plan_opts *over);

/*
 * The plan as mount options, every value spelled out and in one order
 * ("sampler=python-shuffle,seed=5,epoch=auto,layout=sorted,dataset=train";
 * just "sampler=none" without a plan), a comma or backslash in a path
 * escaped with a backslash as fuse_opt reads it: two configurations give
 * the same string exactly when they are the same plan.  A malloc'd string
 * the caller frees, or NULL (out of memory).  O(length).
 */
char *dsfs_plan_cfg_string(const struct dsfs_plan_cfg *cfg);

/*
 * Lists the plan's samples (dsfs_layout_build, or _quick): 0 and *out, or
 * -errno with why; -ENOENT when there is none (a plan over nothing: the
 * loader's own dataset class would refuse it).  With dataset= not given
 * (o->dataset NULL) over a directory of data sets (an ImageFolder of
 * SOURCE whose few classes hold only directories of images, as imagenet/
 * holding train/ and val/ does) of which one is DSFS_PLAN_PICKED, the plan
 * is that one's, the data set a shuffled loader reads there: o and c
 * become the plan's with dataset=DSFS_PLAN_PICKED (c->dataset_picked set),
 * and *out its listing.
 */
#define DSFS_PLAN_PICKED "train"
int dsfs_plan_list(struct dsfs_plan_opts *o, struct dsfs_plan_cfg *c,
		   int root_fd, bool quick, struct dsfs_layout **out,
		   char *why, size_t whylen);
/* Whether cfg's sampler can reach the epoch cfg starts in (none to check
 * with epoch=auto) over l's samples, the replay
 * dsfs_sampler_check_replay() bounds: 0, or -E2BIG (-EOVERFLOW past
 * 2^64) with why. */
int dsfs_plan_check_epoch(const struct dsfs_plan_cfg *cfg,
			  const struct dsfs_layout *l, char *why,
			  size_t whylen);
/*
 * A warning on cfg's samples l for the user, as one line into buf: the
 * data set picked (dsfs_plan_list); else an ImageFolder tree whose few
 * classes hold only directories of images, as a directory of data sets
 * does (train/, val/: the loader's data set is likely one of them);
 * else class directories without an image, which
 * torchvision (0.14, as Debian has it) refuses unless the loader passes
 * allow_empty=True (0.17 and later), and where the plan counts no sample.
 * Returns whether there is one.
 */
bool dsfs_plan_layout_warning(const struct dsfs_plan_cfg *cfg,
			      const struct dsfs_layout *l, char *buf,
			      size_t size);
/*
 * Print the read order of epoch `epoch` for rank `rank` (ignored unless
 * distributed) of the plan of o and c, listed by dsfs_plan_list() (which
 * may pick its data set), for `dsfs --print-plan`: each path relative to
 * the dataset directory followed by `end` ('\n', or '\0' for names that
 * may hold newlines).  root_fd: SOURCE.  O(samples); 0 or -errno with a
 * reason in why.
 */
int dsfs_plan_print(struct dsfs_plan_opts *o, struct dsfs_plan_cfg *cfg,
		    int root_fd, uint64_t epoch, uint32_t rank, char end,
		    FILE *out, char *why, size_t whylen);

#endif
