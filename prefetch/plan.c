// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Plan configuration and --print-plan (see plan.h).  No state of its own:
 * the main thread parses the mount options, a FUSE worker the plan-change
 * commands (fs/ctl.c), each on values it owns.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "discover.h"
#include "parse.h"
#include "plan.h"
#include "weights.h"

/* Which options each sampler takes, beyond sampler= itself. */
static bool needs_seed(enum dsfs_sampler k)
{
	return k != DSFS_SAMPLER_NONE && k != DSFS_SAMPLER_SEQUENTIAL;
}

/* Options that mean nothing without a plan. */
static const char *stray_option(const struct dsfs_plan_opts *o)
{
	return o->seed ? "seed" : o->epoch ? "epoch" : o->layout ? "layout" :
	       o->dataset ? "dataset" : o->list ? "list" :
	       o->extensions ? "extensions" : o->suffix ? "suffix" :
	       o->hidden ? "hidden" : o->split ? "split" :
	       o->split_seed ? "split_seed" : o->split_part ? "split_part" :
	       o->world ? "world" : o->rank ? "rank" : o->ranks ? "ranks" :
	       o->drop_last ? "drop_last" :
	       o->persistent_workers ? "persistent_workers" :
	       o->sampler_generator ? "sampler_generator" :
	       o->seeded_once ? "seeded_once" : o->inplace ? "inplace" :
	       o->num_samples ? "num_samples" :
	       o->replacement ? "replacement" :
	       o->subset ? "subset" : o->weights ? "weights" :
	       o->discover_threads ? "discover_threads" :
	       o->discover_range ? "discover_range" : NULL;
}

static int parse_ranks(const struct dsfs_plan_opts *o, struct dsfs_plan_cfg *c,
		       char *why, size_t whylen)
{
	uint32_t world = c->sampler.world;
	uint64_t a, b;
	char *dash;

	if (o->rank && o->ranks)
		return dsfs_parse_refuse(why, whylen, "rank= and ranks= contradict each other; give one");
	if (o->rank) {
		if (dsfs_parse_u64(o->rank, 0, UINT32_MAX, &a) || a >= world)
			return dsfs_parse_refuse(why, whylen, "rank=%s: must be an integer from 0 to %u (world=%u)",
						 o->rank, world - 1, world);
		c->rank_first = c->rank_last = (uint32_t)a;
		return 0;
	}
	c->rank_first = 0; /* default: every rank runs on this node */
	c->rank_last = world - 1;
	if (!o->ranks)
		return 0;
	dash = strchr(o->ranks, '-');
	if (dash) {
		const char *s = o->ranks;
		char first[24];
		size_t n;

		/* Leading zeros are fine (as dsfs_parse_u64 takes them) and
		   only they make a valid rank longer than first[]. */
		while (s[0] == '0' && s + 1 < dash)
			s++;
		n = (size_t)(dash - s);
		if (n >= sizeof(first))
			n = 0; /* too large: refused as "" is */
		memcpy(first, s, n);
		first[n] = '\0';
		if (dsfs_parse_u64(first, 0, UINT32_MAX, &a) ||
		    dsfs_parse_u64(dash + 1, 0, UINT32_MAX, &b))
			a = b = UINT64_MAX;
	} else if (dsfs_parse_u64(o->ranks, 0, UINT32_MAX, &a)) {
		a = b = UINT64_MAX;
	} else {
		b = a;
	}
	if (a > b || b >= world)
		return dsfs_parse_refuse(why, whylen, "ranks=%s: give A-B with 0 <= A <= B < world (%u)",
					 o->ranks, world);
	c->rank_first = (uint32_t)a;
	c->rank_last = (uint32_t)b;
	return 0;
}

/* world=, rank(s)=, drop_last: only for torch-distributed. */
static int parse_distributed(const struct dsfs_plan_opts *o,
			     struct dsfs_plan_cfg *c, char *why, size_t whylen)
{
	uint64_t w;

	if (c->sampler.kind != DSFS_SAMPLER_TORCH_DISTRIBUTED) {
		const char *opt = o->world ? "world=" : o->rank ? "rank=" :
				  o->ranks ? "ranks=" : o->drop_last ? "drop_last" : NULL;

		if (opt)
			return dsfs_parse_refuse(why, whylen, "%s applies only to sampler=torch-distributed (or auto)",
						 opt);
		c->sampler.world = 1;
		return 0;
	}
	if (!o->world)
		return dsfs_parse_refuse(why, whylen, "sampler=torch-distributed needs world=N (the number of ranks)");
	if (dsfs_parse_u64(o->world, 1, 1u << 20, &w))
		return dsfs_parse_refuse(why, whylen, "world=%s: must be an integer from 1 to 1048576",
					 o->world);
	c->sampler.world = (uint32_t)w;
	c->sampler.drop_last = o->drop_last != 0;
	return parse_ranks(o, c, why, whylen);
}

/* Whether the directory d[0..len) is relative to SOURCE and stays below
 * it: not empty, not absolute, no ".." component. */
static bool dir_below(const char *d, size_t len)
{
	const char *p = d, *end = d + len, *slash;

	if (!len || *d == '/')
		return false;
	for (; p < end; p = slash + 1) {
		slash = memchr(p, '/', (size_t)(end - p));
		if (!slash)
			slash = end;
		if (slash - p == 2 && p[0] == '.' && p[1] == '.')
			return false;
	}
	return true;
}

/* dataset=: a directory, or several with ':' between (a ConcatDataset). */
static int parse_datasets(const char *d, struct dsfs_plan_cfg *c,
			  char *why, size_t whylen)
{
	const char *p = d, *end;
	uint32_t n = 0;

	for (;; p = end + 1) {
		end = strchrnul(p, ':');
		if (!dir_below(p, (size_t)(end - p)) && !strchr(d, ':'))
			return dsfs_parse_refuse(why, whylen, "dataset=%s: give a directory relative to SOURCE, without ..",
						 d);
		if (end == p)
			return dsfs_parse_refuse(why, whylen, "dataset=%s: an empty directory name; give directories relative to SOURCE with one ':' between each two (a ConcatDataset of them)",
						 d);
		if (!dir_below(p, (size_t)(end - p)))
			return dsfs_parse_refuse(why, whylen, "dataset=%s: '%.*s': give directories relative to SOURCE, without .., with ':' between (a ConcatDataset of them)",
						 d, (int)(end - p), p);
		if (++n > DSFS_PLAN_DATASETS_MAX)
			return dsfs_parse_refuse(why, whylen, "dataset=: more than %u directories (a ConcatDataset of them)",
						 DSFS_PLAN_DATASETS_MAX);
		if (!*end)
			break;
	}
	c->dataset = d;
	c->ndatasets = n;
	c->dir = n > 1 ? "." : d;
	return 0;
}

static int parse_layout(const struct dsfs_plan_opts *o, struct dsfs_plan_cfg *c,
			char *why, size_t whylen)
{
	int err;

	c->layout = DSFS_LAYOUT_IMAGEFOLDER;
	if (o->layout && dsfs_layout_kind_parse(o->layout, &c->layout))
		return dsfs_parse_refuse(why, whylen, "layout=%s: unknown layout; use imagefolder, sorted, walk or list",
					 o->layout);
	if (c->layout == DSFS_LAYOUT_LIST && !o->list)
		return dsfs_parse_refuse(why, whylen, "layout=list needs list=FILE (an absolute path)");
	if (o->list && c->layout != DSFS_LAYOUT_LIST)
		return dsfs_parse_refuse(why, whylen, "list= applies only to layout=list");
	if (o->list && o->list[0] != '/')
		return dsfs_parse_refuse(why, whylen, "list=%s: give an absolute path", o->list);
	err = parse_datasets(o->dataset ? o->dataset : ".", c, why, whylen);
	if (err)
		return err;
	if (c->ndatasets > 1 && c->layout == DSFS_LAYOUT_LIST)
		return dsfs_parse_refuse(why, whylen, "dataset=%s: layout=list takes one dataset directory; write the files of all of them into the list, relative to a directory above them",
					 c->dataset);
	c->list = o->list;
	c->names.extensions = o->extensions;
	c->names.suffix = o->suffix;
	if (o->hidden && strcmp(o->hidden, "keep") && strcmp(o->hidden, "skip"))
		return dsfs_parse_refuse(why, whylen, "hidden=%s: give keep (the default: os.walk, rglob) or skip (glob.glob leaves out names beginning with '.')",
					 o->hidden);
	c->names.skip_hidden = o->hidden && !strcmp(o->hidden, "skip");
	if (o->split && o->subset)
		return dsfs_parse_refuse(why, whylen, "split= and subset: give the subset's files with layout=list and no split");
	return dsfs_split_parse(o->split, o->split_seed, o->split_part,
				&c->split, why, whylen);
}

static int parse_epoch(const struct dsfs_plan_opts *o, struct dsfs_plan_cfg *c,
		       char *why, size_t whylen)
{
	c->epoch_auto = !o->epoch || !strcmp(o->epoch, "auto");
	c->epoch = 0;
	if (!c->epoch_auto && dsfs_parse_u64(o->epoch, 0, 1u << 30, &c->epoch))
		return dsfs_parse_refuse(why, whylen, "epoch=%s: give auto or an epoch number from 0 to %u",
					 o->epoch, 1u << 30);
	return 0;
}

/* subset: a SubsetRandomSampler, seeded (torch-random). */
static int parse_subset(const struct dsfs_plan_opts *o, struct dsfs_plan_cfg *c,
			char *why, size_t whylen)
{
	if (!o->subset)
		return 0;
	if (c->sampler.kind != DSFS_SAMPLER_TORCH_RANDOM)
		return dsfs_parse_refuse(why, whylen, "subset applies only to sampler=torch-random (a SubsetRandomSampler given a seeded generator)");
	if (c->discover)
		return dsfs_parse_refuse(why, whylen, "subset: a SubsetRandomSampler without a generator draws from torch's global generator, which seed=discover cannot search; give it a seeded generator and its seed");
	if (o->num_samples || o->replacement)
		return dsfs_parse_refuse(why, whylen, "subset: a SubsetRandomSampler has no %s",
					 o->num_samples ? "num_samples" : "replacement");
	c->sampler.subset = true;
	return 0;
}

/* num_samples=K, replacement: a RandomSampler given them (torch-random). */
static int parse_num_samples(const struct dsfs_plan_opts *o,
			     struct dsfs_plan_cfg *c, char *why, size_t whylen)
{
	if (o->replacement && c->sampler.kind != DSFS_SAMPLER_TORCH_RANDOM)
		return dsfs_parse_refuse(why, whylen, "replacement applies only to sampler=torch-random (a RandomSampler given replacement=True)");
	if (o->replacement && c->discover)
		return dsfs_parse_refuse(why, whylen, "replacement: seed=discover searches permutations only; give the seed");
	c->sampler.replacement = o->replacement != 0;
	if (!o->num_samples)
		return 0;
	if (c->sampler.kind != DSFS_SAMPLER_TORCH_RANDOM)
		return dsfs_parse_refuse(why, whylen, "num_samples applies only to sampler=torch-random (a RandomSampler given num_samples=)");
	if (dsfs_parse_u64(o->num_samples, 1, DSFS_SAMPLER_MAX_N,
			   &c->sampler.num_samples))
		return dsfs_parse_refuse(why, whylen, "num_samples=%s: give the sampler's num_samples, an integer from 1 to %u",
					 o->num_samples, DSFS_SAMPLER_MAX_N);
	return 0;
}

/* weights=FILE: a WeightedRandomSampler(weights, num_samples,
 * generator=g), which draws with replacement (torch-random). */
static int parse_weights(const struct dsfs_plan_opts *o,
			 struct dsfs_plan_cfg *c, char *why, size_t whylen)
{
	if (!o->weights)
		return 0;
	if (c->sampler.kind != DSFS_SAMPLER_TORCH_RANDOM)
		return dsfs_parse_refuse(why, whylen, "weights= applies only to sampler=torch-random (a WeightedRandomSampler given a seeded generator)");
	if (c->discover)
		return dsfs_parse_refuse(why, whylen, "weights=: seed=discover searches permutations only; give the seed");
	if (o->subset)
		return dsfs_parse_refuse(why, whylen, "weights=: a SubsetRandomSampler has no weights");
	if (!o->num_samples)
		return dsfs_parse_refuse(why, whylen, "weights= needs num_samples=K (the WeightedRandomSampler's num_samples)");
	if (o->weights[0] != '/')
		return dsfs_parse_refuse(why, whylen, "weights=%s: give an absolute path", o->weights);
	c->weights = o->weights;
	c->sampler.replacement = true; /* replacement=False is not predicted */
	return 0;
}

/*
 * seed=discover: no seed given; each epoch's is searched (seek.h).  Only an
 * unseeded RandomSampler draws a fresh seed each epoch, and then neither an
 * epoch number nor persistent workers mean anything.
 */
static int parse_discover(const struct dsfs_plan_opts *o,
			  struct dsfs_plan_cfg *c, char *why, size_t whylen)
{
	uint64_t v;

	c->discover_end = DSFS_DISCOVER_SEEDS;
	if (!c->discover) {
		if (o->discover_threads || o->discover_range)
			return dsfs_parse_refuse(why, whylen, "%s= applies only to seed=discover",
						 o->discover_threads ? "discover_threads" :
						 "discover_range");
		return 0;
	}
	if (c->sampler.kind != DSFS_SAMPLER_TORCH_RANDOM &&
	    c->sampler.kind != DSFS_SAMPLER_TORCH_DISTRIBUTED)
		return dsfs_parse_refuse(why, whylen, "seed=discover works with sampler=torch-random (a DataLoader(shuffle=True) without a generator), torch-distributed (a DistributedSampler whose seed is not known) or auto");
	c->discover_models =
		c->sampler.kind == DSFS_SAMPLER_TORCH_RANDOM ?
			DSFS_DISCOVER_RANDOM :
			DSFS_DISCOVER_DISTRIBUTED |
				(c->sampler_auto ? DSFS_DISCOVER_RANDOM : 0);
	if (o->epoch)
		return dsfs_parse_refuse(why, whylen, "epoch=%s means nothing with seed=discover: every epoch's seed is searched",
					 o->epoch);
	if (o->persistent_workers)
		return dsfs_parse_refuse(why, whylen, "persistent_workers means nothing with seed=discover: the sampler seeds a fresh generator every epoch");
	if (o->sampler_generator)
		return dsfs_parse_refuse(why, whylen, "sampler_generator means nothing with seed=discover: the sampler seeds a fresh generator every epoch");
	if (o->discover_threads) {
		if (dsfs_parse_u64(o->discover_threads, 1,
				   DSFS_DISCOVER_MAX_THREADS, &v))
			return dsfs_parse_refuse(why, whylen, "discover_threads=%s: give an integer from 1 to %u",
						 o->discover_threads,
						 DSFS_DISCOVER_MAX_THREADS);
		c->discover_threads = (unsigned)v;
	}
	if (o->discover_range &&
	    dsfs_discover_parse_range(o->discover_range, &c->discover_first,
				      &c->discover_end))
		return dsfs_parse_refuse(why, whylen, "discover_range=%s: give A-B with 0 <= A < B <= 4294967296 (seeds A to B - 1)",
					 o->discover_range);
	return 0;
}

int dsfs_plan_cfg_parse(const struct dsfs_plan_opts *o,
			struct dsfs_plan_cfg *c, char *why, size_t whylen)
{
	struct dsfs_sampler_cfg *s = &c->sampler;
	int err;

	memset(c, 0, sizeof(*c));
	s->kind = DSFS_SAMPLER_NONE;
	if (o->sampler && !strcmp(o->sampler, "auto")) {
		/* an unseeded torch sampler: which one is searched too */
		if (!o->seed || strcmp(o->seed, "discover"))
			return dsfs_parse_refuse(why, whylen, "sampler=auto works with seed=discover only: give the sampler when the seed is known");
		c->sampler_auto = true;
		s->kind = o->world || o->rank || o->ranks ?
				  DSFS_SAMPLER_TORCH_DISTRIBUTED :
				  DSFS_SAMPLER_TORCH_RANDOM;
	} else if (o->sampler && dsfs_sampler_from_name(o->sampler, &s->kind)) {
		return dsfs_parse_refuse(why, whylen, "sampler=%s: unknown sampler; use none, sequential, torch-random, torch-distributed, python-shuffle, numpy-permutation, numpy-generator or auto",
					 o->sampler);
	}
	if (s->kind == DSFS_SAMPLER_NONE) {
		const char *opt = stray_option(o);

		if (opt)
			return dsfs_parse_refuse(why, whylen, "%s= needs a plan: give sampler= too (it is none)",
						 opt);
		return 0;
	}
	if (needs_seed(s->kind) && !o->seed)
		return dsfs_parse_refuse(why, whylen, "sampler=%s needs seed=INT (the seed the training script uses)",
					 o->sampler);
	if (!needs_seed(s->kind) && o->seed)
		return dsfs_parse_refuse(why, whylen, "seed= means nothing to sampler=%s", o->sampler);
	c->discover = o->seed && !strcmp(o->seed, "discover");
	if (c->discover) /* a placeholder: every epoch's is searched */
		dsfs_seed_parse("0", &s->seed);
	else if (o->seed && dsfs_seed_parse(o->seed, &s->seed))
		return dsfs_parse_refuse(
			why, whylen, "seed=%s: %s", o->seed,
			dsfs_seed_parse(o->seed, &s->seed) == -ERANGE ?
				"too large (4096 bits at most)" :
				"not an integer");
	if (o->persistent_workers && s->kind != DSFS_SAMPLER_TORCH_RANDOM)
		return dsfs_parse_refuse(why, whylen, "persistent_workers applies only to sampler=torch-random");
	s->persistent_workers = o->persistent_workers != 0;
	if (o->sampler_generator && s->kind != DSFS_SAMPLER_TORCH_RANDOM)
		return dsfs_parse_refuse(why, whylen, "sampler_generator applies only to sampler=torch-random");
	s->sampler_generator = o->sampler_generator != 0;
	if ((o->seeded_once || o->inplace) && !dsfs_sampler_script(s->kind))
		return dsfs_parse_refuse(why, whylen, "%s applies only to sampler=python-shuffle, numpy-permutation or numpy-generator (a shuffle the script runs itself)",
					 o->seeded_once ? "seeded_once" : "inplace");
	s->seeded_once = o->seeded_once != 0;
	s->inplace = o->inplace != 0;
	err = parse_num_samples(o, c, why, whylen);
	if (!err)
		err = parse_subset(o, c, why, whylen);
	if (!err)
		err = parse_weights(o, c, why, whylen);
	if (!err)
		err = parse_discover(o, c, why, whylen);
	if (!err)
		err = parse_distributed(o, c, why, whylen);
	if (!err && c->discover && c->sampler.kind ==
	    DSFS_SAMPLER_TORCH_DISTRIBUTED && c->rank_first > DSFS_DISCOVER_MAX_POS)
		err = dsfs_parse_refuse(why, whylen, "seed=discover: the first local rank must be at most %u (it is %u)",
					DSFS_DISCOVER_MAX_POS,
					c->rank_first);
	if (!err)
		err = parse_layout(o, c, why, whylen);
	if (!err)
		err = parse_epoch(o, c, why, whylen);
	if (!err && dsfs_sampler_check(s, why, whylen))
		err = -EINVAL;
	return err;
}

/* The string members of struct dsfs_plan_opts. */
static const size_t opt_strings[] = {
	offsetof(struct dsfs_plan_opts, sampler),
	offsetof(struct dsfs_plan_opts, seed),
	offsetof(struct dsfs_plan_opts, epoch),
	offsetof(struct dsfs_plan_opts, layout),
	offsetof(struct dsfs_plan_opts, dataset),
	offsetof(struct dsfs_plan_opts, list),
	offsetof(struct dsfs_plan_opts, extensions),
	offsetof(struct dsfs_plan_opts, suffix),
	offsetof(struct dsfs_plan_opts, hidden),
	offsetof(struct dsfs_plan_opts, split),
	offsetof(struct dsfs_plan_opts, split_seed),
	offsetof(struct dsfs_plan_opts, split_part),
	offsetof(struct dsfs_plan_opts, world),
	offsetof(struct dsfs_plan_opts, rank),
	offsetof(struct dsfs_plan_opts, ranks),
	offsetof(struct dsfs_plan_opts, discover_threads),
	offsetof(struct dsfs_plan_opts, discover_range),
	offsetof(struct dsfs_plan_opts, num_samples),
	offsetof(struct dsfs_plan_opts, weights),
};
#define N_OPT_STRINGS (sizeof(opt_strings) / sizeof(opt_strings[0]))

static char **opt_string(struct dsfs_plan_opts *o, size_t i)
{
	return (char **)((char *)o + opt_strings[i]);
}

static const char *opt_value(const struct dsfs_plan_opts *o, size_t i)
{
	return *(char *const *)((const char *)o + opt_strings[i]);
}

void dsfs_plan_opts_free(struct dsfs_plan_opts *o)
{
	size_t i;

	for (i = 0; i < N_OPT_STRINGS; i++)
		free(*opt_string(o, i));
}

int dsfs_plan_opts_merge(struct dsfs_plan_opts *dst,
			 const struct dsfs_plan_opts *base,
			 const struct dsfs_plan_opts *over)
{
	size_t i;

	memset(dst, 0, sizeof(*dst));
	for (i = 0; i < N_OPT_STRINGS; i++) {
		const char *v = opt_value(over, i) ? opt_value(over, i) :
			        opt_value(base, i);

		if (v && !(*opt_string(dst, i) = strdup(v))) {
			dsfs_plan_opts_free(dst);
			memset(dst, 0, sizeof(*dst));
			return -ENOMEM;
		}
	}
	dst->drop_last = over->drop_last || base->drop_last;
	dst->persistent_workers = over->persistent_workers ||
				  base->persistent_workers;
	dst->sampler_generator = over->sampler_generator ||
				 base->sampler_generator;
	dst->replacement = over->replacement || base->replacement;
	dst->subset = over->subset || base->subset;
	dst->seeded_once = over->seeded_once || base->seeded_once;
	dst->inplace = over->inplace || base->inplace;
	return 0;
}

/* ",key=path" with ',' and '\\' escaped as fuse_opt unescapes them. */
static void put_path(FILE *f, const char *key, const char *path)
{
	fprintf(f, ",%s=", key);
	for (; *path; path++) {
		if (*path == ',' || *path == '\\')
			fputc('\\', f);
		fputc(*path, f);
	}
}

static void format_cfg(const struct dsfs_plan_cfg *c, FILE *f)
{
	const struct dsfs_sampler_cfg *s = &c->sampler;

	fprintf(f, "sampler=%s",
		c->sampler_auto ? "auto" : dsfs_sampler_name(s->kind));
	if (s->kind == DSFS_SAMPLER_NONE)
		return;
	if (c->discover)
		fprintf(f, ",seed=discover");
	else if (needs_seed(s->kind))
		fprintf(f, ",seed=%s", s->seed.text);
	/* seed=discover searches every epoch's seed: it takes no epoch. */
	if (!c->discover && c->epoch_auto)
		fprintf(f, ",epoch=auto");
	else if (!c->discover)
		fprintf(f, ",epoch=%llu", (unsigned long long)c->epoch);
	fprintf(f, ",layout=%s", dsfs_layout_kind_name(c->layout));
	put_path(f, "dataset", c->dataset);
	if (c->list)
		put_path(f, "list", c->list);
	if (c->names.extensions)
		put_path(f, "extensions", c->names.extensions);
	if (c->names.suffix)
		put_path(f, "suffix", c->names.suffix);
	if (c->names.skip_hidden)
		fprintf(f, ",hidden=skip");
	if (c->split.nparts)
		fprintf(f, ",split=%s,split_seed=%s,split_part=%u",
			c->split.text, c->split.seed.text, c->split.part);
	if (s->kind == DSFS_SAMPLER_TORCH_DISTRIBUTED) {
		fprintf(f, ",world=%u", s->world);
		if (c->rank_first == c->rank_last)
			fprintf(f, ",rank=%u", c->rank_first);
		else
			fprintf(f, ",ranks=%u-%u", c->rank_first, c->rank_last);
		if (s->drop_last)
			fprintf(f, ",drop_last");
	}
	if (s->persistent_workers)
		fprintf(f, ",persistent_workers");
	if (s->sampler_generator)
		fprintf(f, ",sampler_generator");
	if (s->seeded_once)
		fprintf(f, ",seeded_once");
	if (s->inplace)
		fprintf(f, ",inplace");
	if (s->num_samples)
		fprintf(f, ",num_samples=%llu",
			(unsigned long long)s->num_samples);
	if (s->replacement)
		fprintf(f, ",replacement");
	if (s->subset)
		fprintf(f, ",subset");
	if (c->weights)
		put_path(f, "weights", c->weights);
	if (c->discover_threads)
		fprintf(f, ",discover_threads=%u", c->discover_threads);
	if (c->discover && (c->discover_first || c->discover_end !=
						 DSFS_DISCOVER_SEEDS))
		fprintf(f, ",discover_range=%llu-%llu",
			(unsigned long long)c->discover_first,
			(unsigned long long)c->discover_end);
}

char *dsfs_plan_cfg_string(const struct dsfs_plan_cfg *c)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	bool failed;

	if (!f)
		return NULL;
	format_cfg(c, f);
	failed = ferror(f) != 0;
	if (fclose(f) || failed) { /* out of memory */
		free(buf);
		return NULL;
	}
	return buf;
}

/* Why the listing of what ("dataset=train", or a part of several) gave
 * no samples: the loader's dataset class would refuse it.  -ENOENT. */
static int no_samples(const struct dsfs_plan_cfg *cfg, const char *what,
		      char *why, size_t whylen)
{
	const char *ext = cfg->names.extensions, *suffix = cfg->names.suffix;

	if (cfg->layout == DSFS_LAYOUT_IMAGEFOLDER && ext)
		snprintf(why, whylen, "%s: no samples for layout=imagefolder,extensions=%s: no class directory holds a file ending in one of them (torchvision's DatasetFolder raises FileNotFoundError here)",
			 what, ext);
	else if (cfg->layout == DSFS_LAYOUT_IMAGEFOLDER)
		snprintf(why, whylen, "%s: no samples for layout=imagefolder: no class directory holds a file with an image extension (torchvision's ImageFolder raises FileNotFoundError here)",
			 what);
	else if (suffix || cfg->names.skip_hidden)
		snprintf(why, whylen, "%s: no samples for layout=%s: no regular file%s%s%s",
			 what, dsfs_layout_kind_name(cfg->layout),
			 suffix ? " ending in one of suffix=" : "",
			 suffix ? suffix : "",
			 cfg->names.skip_hidden ? " outside hidden names" : "");
	else
		snprintf(why, whylen, "%s: no samples for layout=%s",
			 what, dsfs_layout_kind_name(cfg->layout));
	return -ENOENT;
}

/* cfg's random_split part of the samples of *l, which it replaces (freed
 * either way).  0, or -errno with why. */
static int split_layout(const struct dsfs_plan_cfg *cfg,
			struct dsfs_layout **l, char *why, size_t whylen)
{
	struct dsfs_layout *part = NULL;
	uint32_t *idx = NULL;
	uint64_t k;
	int err = dsfs_split_indices(&cfg->split, dsfs_layout_count(*l), &idx,
				     &k, why, whylen);

	if (!err && !k) {
		snprintf(why, whylen, "split=%s,split_part=%u: random_split gives that part no samples",
			 cfg->split.text, cfg->split.part);
		err = -ENOENT;
	} else if (!err && (err = dsfs_layout_select(*l, idx, k, &part))) {
		snprintf(why, whylen, "split=%s: %s", cfg->split.text,
			 strerror(-err));
	}
	free(idx);
	dsfs_layout_free(*l);
	*l = part;
	return err;
}

/* The layout of the dataset directory dir, refused without samples (what
 * names it in the message). */
static int build_dir(const struct dsfs_plan_cfg *cfg, int root_fd,
		     bool quick, const char *dir, const char *what,
		     struct dsfs_layout **l, char *why, size_t whylen)
{
	int err = (quick ? dsfs_layout_build_quick : dsfs_layout_build)(
		root_fd, dir, cfg->layout, cfg->list, &cfg->names, l, why,
		whylen);

	if (err || dsfs_layout_count(*l))
		return err;
	dsfs_layout_free(*l);
	*l = NULL;
	return no_samples(cfg, what, why, whylen);
}

/* The ConcatDataset of the dataset directories, each listed as one. */
static int build_concat(const struct dsfs_plan_cfg *cfg, int root_fd,
			bool quick, struct dsfs_layout **l, char *why,
			size_t whylen)
{
	struct dsfs_layout **parts = calloc(cfg->ndatasets, sizeof(*parts));
	char **dirs = calloc(cfg->ndatasets, sizeof(*dirs));
	const char *p = cfg->dataset, *end;
	char what[PATH_MAX + 64];
	uint32_t k, n = 0;
	int err = parts && dirs ? 0 : -ENOMEM;

	for (; !err && n < cfg->ndatasets; p = end + 1, n++) {
		end = strchrnul(p, ':');
		dirs[n] = strndup(p, (size_t)(end - p));
		if (!dirs[n]) {
			err = -ENOMEM;
			break;
		}
		snprintf(what, sizeof(what), "dataset=%s: %s", cfg->dataset,
			 dirs[n]);
		err = build_dir(cfg, root_fd, quick, dirs[n], what, &parts[n],
				why, whylen);
	}
	if (!err)
		err = dsfs_layout_concat(
			(const struct dsfs_layout *const *)parts,
			(const char *const *)dirs, n, l);
	if (err == -ENOMEM || err == -EFBIG)
		snprintf(why, whylen, "dataset=%s: %s", cfg->dataset,
			 err == -ENOMEM ? "out of memory" :
			 "more than 2^32 - 2 samples or 4 GiB of paths in all");
	for (k = 0; k < n; k++) {
		dsfs_layout_free(parts[k]);
		free(dirs[k]);
	}
	free(parts);
	free(dirs);
	return err;
}

/* Lists cfg's samples (dsfs_layout_build, or _quick): 0 and *out, or
 * -errno with why; -ENOENT when there is none (a plan over nothing: the
 * loader's own dataset class would refuse it). */
static int plan_layout(const struct dsfs_plan_cfg *cfg, int root_fd,
		       bool quick, struct dsfs_layout **out, char *why,
		       size_t whylen)
{
	struct dsfs_layout *l = NULL;
	char what[PATH_MAX + 16];
	double *weights;
	int err;

	*out = NULL;
	snprintf(what, sizeof(what), "dataset=%s", cfg->dataset);
	err = cfg->ndatasets > 1 ?
		      build_concat(cfg, root_fd, quick, &l, why, whylen) :
		      build_dir(cfg, root_fd, quick, cfg->dataset, what, &l,
				why, whylen);
	if (err)
		return err;
	if (cfg->split.nparts && (err = split_layout(cfg, &l, why, whylen)))
		return err;
	if (cfg->weights) {
		err = dsfs_weights_load(cfg->weights, dsfs_layout_count(l),
					&weights, why, whylen);
		if (err) {
			dsfs_layout_free(l);
			return err;
		}
		dsfs_layout_set_weights(l, weights);
	}
	*out = l;
	return 0;
}

int dsfs_plan_check_epoch(const struct dsfs_plan_cfg *cfg,
			  const struct dsfs_layout *l, char *why,
			  size_t whylen)
{
	struct dsfs_sampler_cfg s = cfg->sampler;

	if (cfg->epoch_auto)
		return 0;
	s.weights = dsfs_layout_weights(l);
	return dsfs_sampler_check_replay(&s, dsfs_layout_count(l), cfg->epoch,
					 why, whylen);
}

/* An ImageFolder over a directory of data sets (a mount over imagenet/
 * with the default dataset=., holding train/ and val/): the "classes" are
 * few, none holds a sample of its own, and one holds several directories
 * of them.  Classes of their own images in a subdirectory (Tiny ImageNet's
 * n01443537/images/) are not taken for it. */
#define DATASETS_CLASSES_MAX 16

static bool holds_datasets(const struct dsfs_layout *l)
{
	uint64_t n = dsfs_layout_count(l), i, classes = 0, dirs = 0;
	const char *prev = NULL;
	size_t plen = 0, dlen = 0;

	for (i = 0; i < n; i++) {
		const char *path = dsfs_layout_path(l, i);
		const char *cls = strchr(path, '/');
		const char *dir = cls ? strchr(cls + 1, '/') : NULL;

		if (!dir)
			return false;	/* a sample in its class directory */
		if (!prev || (size_t)(cls - path) != plen ||
		    memcmp(path, prev, plen)) {
			if (++classes > DATASETS_CLASSES_MAX)
				return false;
			dirs++;
		} else if ((size_t)(dir - path) != dlen ||
			   memcmp(path, prev, dlen)) {
			dirs++;
		}
		prev = path;
		plen = (size_t)(cls - path);
		dlen = (size_t)(dir - path);
	}
	return classes && dirs > classes;
}

/*
 * dataset= not given over a directory of data sets (an ImageFolder of
 * SOURCE whose few classes hold only directories of images, as imagenet/
 * holding train/ and val/ does) of which one is DSFS_PLAN_PICKED: the
 * plan is that one's, the data set a shuffled loader reads there.  o and
 * c become the plan's with dataset=DSFS_PLAN_PICKED (c->dataset_picked
 * set) and *l its layout (the one given freed).  0 (picked or not: not if
 * its listing fails too) or -ENOMEM.  O(samples) and, if picked, a
 * listing.
 */
static int pick_dataset(struct dsfs_plan_opts *o, struct dsfs_plan_cfg *c,
			int root_fd, bool quick, struct dsfs_layout **l)
{
	struct dsfs_plan_opts mine = *o;
	struct dsfs_plan_cfg picked;
	struct dsfs_layout *sub;
	char why[256];
	char *name;

	if (o->dataset || c->layout != DSFS_LAYOUT_IMAGEFOLDER ||
	    c->ndatasets != 1 || !holds_datasets(*l) ||
	    !dsfs_layout_count_below(*l, DSFS_PLAN_PICKED "/",
				     strlen(DSFS_PLAN_PICKED "/")))
		return 0;
	mine.dataset = DSFS_PLAN_PICKED;
	if (dsfs_plan_cfg_parse(&mine, &picked, why, sizeof(why)) ||
	    plan_layout(&picked, root_fd, quick, &sub, why, sizeof(why)))
		return 0;	/* (weights= of another count): as given */
	name = strdup(DSFS_PLAN_PICKED);
	if (!name) {
		dsfs_layout_free(sub);
		return -ENOMEM;
	}
	o->dataset = name;
	*c = picked;
	c->dataset_picked = true;
	dsfs_layout_free(*l);
	*l = sub;
	return 0;
}

int dsfs_plan_list(struct dsfs_plan_opts *o, struct dsfs_plan_cfg *c,
		   int root_fd, bool quick, struct dsfs_layout **out,
		   char *why, size_t whylen)
{
	int err = plan_layout(c, root_fd, quick, out, why, whylen);

	if (!err && (err = pick_dataset(o, c, root_fd, quick, out))) {
		dsfs_layout_free(*out);
		*out = NULL;
	}
	return err;
}

bool dsfs_plan_layout_warning(const struct dsfs_plan_cfg *cfg,
			      const struct dsfs_layout *l, char *buf,
			      size_t size)
{
	uint64_t empty = dsfs_layout_info(l)->empty_classes;
	const char *ext = cfg->names.extensions;
	const char *first;
	bool here;
	int len;

	if (cfg->layout != DSFS_LAYOUT_IMAGEFOLDER)
		return false;
	if (cfg->dataset_picked) {
		snprintf(buf, size, "dataset=%s, not given: SOURCE holds data sets (its directories hold only directories of images), and the plan is %s/'s, the one a shuffled loader reads; give dataset= for another, dataset=. for SOURCE itself",
			 cfg->dataset, cfg->dataset);
		return true;
	}
	if (cfg->ndatasets == 1 && dsfs_layout_count(l) && holds_datasets(l)) {
		first = dsfs_layout_path(l, 0);
		len = (int)(strchr(first, '/') - first);
		here = !strcmp(cfg->dataset, ".");
		snprintf(buf, size, "dataset=%s: its classes hold no image of their own, only directories of images, as a directory of data sets does (%.*s/ is one): if the loader's ImageFolder is one of them, give it, as dataset=%s%s%.*s; this plan's samples are every image of them all",
			 cfg->dataset, len, first, here ? "" : cfg->dataset,
			 here ? "" : "/", len, first);
		return true;
	}
	if (!empty)
		return false;
	snprintf(buf, size, "dataset=%s: %llu class director%s without a file %s%s: torchvision's %s refuses such a tree (FileNotFoundError) unless given allow_empty=True; the plan counts no sample there",
		 cfg->dataset, (unsigned long long)empty,
		 empty == 1 ? "y" : "ies",
		 ext ? "ending in one of extensions=" : "with an image extension",
		 ext ? ext : "", ext ? "DatasetFolder" : "ImageFolder");
	return true;
}

int dsfs_plan_print(struct dsfs_plan_opts *o, struct dsfs_plan_cfg *cfg,
		    int root_fd, uint64_t epoch, uint32_t rank, char end,
		    FILE *out, char *why, size_t whylen)
{
	struct dsfs_layout *layout = NULL;
	struct dsfs_sampler_cfg sampler;
	uint32_t *order = NULL;
	uint64_t n, count = 0, i;
	char warning[512];
	int err;

	if (cfg->discover) {
		snprintf(why, whylen, "seed=discover: no order is known before a loader's first opens reveal its seed");
		return -EINVAL;
	}
	err = dsfs_plan_list(o, cfg, root_fd, false, &layout, why, whylen);
	if (err)
		return err;
	if (dsfs_plan_layout_warning(cfg, layout, warning, sizeof(warning)))
		fprintf(stderr, "dsfs: warning: %s\n", warning);
	n = dsfs_layout_count(layout);
	sampler = cfg->sampler;
	sampler.weights = dsfs_layout_weights(layout);
	err = dsfs_sampler_check_epoch(&sampler, epoch, why, whylen);
	if (!err)
		err = dsfs_sampler_check_replay(&sampler, n, epoch, why, whylen);
	if (!err) {
		err = dsfs_sampler_order(&sampler, n, epoch, rank, &order,
					 &count);
		if (err)
			snprintf(why, whylen, "cannot compute the order of %llu samples: %s",
				 (unsigned long long)n, strerror(-err));
	}
	for (i = 0; !err && i < count; i++)
		if (fputs(dsfs_layout_path(layout, order[i]), out) < 0 ||
		    putc(end, out) == EOF)
			err = -EIO;
	free(order);
	dsfs_layout_free(layout);
	return err;
}
