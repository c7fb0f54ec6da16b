// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The scheduler's side pass (sched_int.h's struct sched_side): a pass in
 * sorted order over a tree outside the plan's data set, a validation
 * loop's over val/ beside the plan's train/, fetched ahead of as the
 * plan's own index-order pass is (seqpass.h).
 *
 * Opens of files outside the data set feed the notice (dirpass.h); once
 * it fires, a builder thread lists the tree it names (a sorted layout:
 * ImageFolder's order for a tree of class directories, sorted()'s for a
 * flat one, with every file's size) and the scheduler thread installs
 * it.  From then on opens below that tree go to the side's seqpass by
 * their index, and the thread fetches its files in index order when no
 * rank has a sample to fetch (the ranks' leads come first), as
 * unplanned entries: they take free room or other unplanned entries'
 * (cache/policy.c), never a planned one's.  One tree at a time: a pass
 * noticed over another replaces it.
 *
 * Threads: FUSE workers (dsfs_sched_side_access, under s->lock); the
 * scheduler thread (the rest; it alone replaces the layout, under the
 * lock, and reads it without); one builder thread at a time, which takes
 * the lock only to hand its listing over.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"
#include "layout.h"
#include "sched_int.h"

/* The builder: list side.want with its files' mean size, hand it over,
 * wake the scheduler. */
static void *side_build(void *arg)
{
	struct dsfs_sched *s = arg;
	struct dsfs_layout_names names = { NULL, NULL, false };
	struct dsfs_layout *l = NULL;
	uint64_t i, n = 0, sum = 0;
	char why[256];
	int err;

	/* want is not written while building is set */
	err = dsfs_layout_build(s->cfg.root_fd, s->side.want,
				DSFS_LAYOUT_SORTED, NULL, &names, &l, why,
				sizeof(why));
	if (err)
		dsfs_info("a pass in sorted order over %s, outside the plan's data set: not listed (%s), not fetched ahead of",
			  s->side.want, why);
	else
		n = dsfs_layout_count(l);
	for (i = 0; i < n; i++)
		sum += dsfs_layout_size(l, i);
	pthread_mutex_lock(&s->lock);
	s->side.built = err ? NULL : l;
	s->side.built_mean = n ? sum / n : 0;
	s->side.done = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* The pass is judged from where the notice left its processes (those of
 * its last DSFS_SEQPASS_HISTORY opens whose last open is below the tree
 * now listed), by index from now on: on after DSFS_SEQPASS_ON steps, as
 * any (a notice by names alone could fetch a whole lead for random opens
 * in one flat directory). */
static void side_seed_locked(struct dsfs_sched *s)
{
	struct sched_side *d = &s->side;
	const struct dsfs_seqproc *p;
	uint32_t pid[DSFS_SEQPASS_PROCS];
	uint64_t idx[DSFS_SEQPASS_PROCS];
	unsigned k, n = 0;

	for (k = 0; k < DSFS_SEQPASS_PROCS; k++) {
		p = &d->notice.procs[k];
		if (p->seen &&
		    d->notice.opens - p->seen < DSFS_SEQPASS_HISTORY &&
		    !dsfs_layout_lookup_in(d->layout, d->root,
					   d->notice.last[k], &idx[n]))
			pid[n++] = p->pid;
	}
	dsfs_seqpass_seed(&d->seq, pid, idx, n);
	dsfs_dirpass_clear(&d->notice);
}

/* Install the builder's listing (joined), freeing the one before. */
static void side_install_locked(struct dsfs_sched *s)
{
	struct sched_side *d = &s->side;

	pthread_join(d->builder, NULL);
	d->building = d->done = false;
	d->failed = !d->built;
	if (d->failed)
		return;
	dsfs_layout_free(d->layout);
	d->layout = d->built;
	d->built = NULL;
	d->mean = d->built_mean;
	memcpy(d->root, d->want, sizeof(d->root));
	side_seed_locked(s);
	dsfs_info("a pass in sorted order over %s, outside the plan's data set: %llu files listed",
		  d->root, (unsigned long long)dsfs_layout_count(d->layout));
}

void dsfs_sched_side_poll_locked(struct dsfs_sched *s)
{
	struct sched_side *d = &s->side;

	if (d->done)
		side_install_locked(s);
	if (!d->wanted || d->building)
		return;
	d->wanted = false;
	d->building = !dsfs_io_spawn(&d->builder, "dsfs-list", side_build, s);
}

int dsfs_sched_side_path(const struct dsfs_sched *s, uint64_t idx,
			 char path[PATH_MAX])
{
	const char *alias = dsfs_layout_alias(s->side.layout, idx);
	int n = alias ? snprintf(path, PATH_MAX, "%s", alias)
		      : snprintf(path, PATH_MAX, "%s/%s", s->side.root,
				 dsfs_layout_path(s->side.layout, idx));

	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/* Feed the open of a file below the listed tree to its pass, logging
 * where one begins and ends. */
static void side_feed_locked(struct dsfs_sched *s, uint64_t idx,
			     uint32_t pid)
{
	struct sched_side *d = &s->side;
	uint64_t missed;

	if (dsfs_seqpass_access(&d->seq, pid, idx) &&
	    dsfs_ratelimit(&s->log_rl, &missed)) {
		if (d->seq.on)
			dsfs_info("a pass in sorted order over %s, at file %llu of %llu: fetched ahead of it",
				  d->root, (unsigned long long)idx,
				  (unsigned long long)dsfs_layout_count(
					  d->layout));
		else
			dsfs_info("the pass in sorted order over %s ended at file %llu of %llu",
				  d->root, (unsigned long long)d->seq.front,
				  (unsigned long long)dsfs_layout_count(
					  d->layout));
	}
	if (dsfs_sched_pass_wants_locked(s, true) && s->idle && !s->full)
		pthread_cond_signal(&s->wake);
}

void dsfs_sched_side_access(struct dsfs_sched *s, const char *path,
			    uint32_t pid)
{
	struct sched_side *d = &s->side;
	char root[PATH_MAX];
	uint64_t idx;

	if (dsfs_dirpass_in_dataset(path, s->cfg.plan->dataset))
		return; /* a file beside the samples: no pass outside */
	pthread_mutex_lock(&s->lock);
	if (d->layout &&
	    !dsfs_layout_lookup_in(d->layout, d->root, path, &idx)) {
		side_feed_locked(s, idx, pid);
	} else if (dsfs_dirpass_access(&d->notice, pid, path) &&
		   !d->building && !d->wanted &&
		   dsfs_dirpass_root(path, s->cfg.plan->dataset, root) &&
		   (!d->failed || strcmp(root, d->want))) {
		/* A tree not listed, or listed before the files now opened
		 * were there; one whose listing failed is not tried again
		 * until another is. */
		memcpy(d->want, root, sizeof(d->want));
		d->wanted = true;
		pthread_cond_signal(&s->wake);
	}
	pthread_mutex_unlock(&s->lock);
}

void dsfs_sched_side_stop(struct dsfs_sched *s)
{
	if (s->side.building)
		pthread_join(s->side.builder, NULL);
	dsfs_layout_free(s->side.built);
	dsfs_layout_free(s->side.layout);
}
