/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The scheduler: keeps the files the loader will open next in the cache,
 * in plan order, as far ahead as a byte budget allows.
 *
 * Accesses the daemon sees (lookups and first reads of dataset files) are
 * fed to a tracker (tracker.h), which places them in the predicted order;
 * a scheduler thread fetches the samples from the tracker's low-water mark
 * onwards (across the epoch boundary) through the I/O engine, admitting
 * them to the cache unconditionally, while the bytes fetched ahead of the
 * loader stay under lead_bytes and the reads in flight under the engine's
 * depth.  A tracker that loses the plan (too many accesses it cannot place)
 * stops the prefetch; the daemon's heuristics still serve reads.
 *
 * Several local ranks (ranks=A-B) get a tracker each; an access goes to
 * the rank whose order still has that sample to read.  The thread fetches
 * for the rank whose next sample is read soonest, each within its share of
 * lead_bytes.  With epoch auto-detection the first rank's tracker detects
 * for the whole group (see dsfs_tracker_group()).
 *
 * Eviction by next use: every fetched sample enters the cache with the
 * plan time of its next read, every reported access returns the next one
 * after it (for the reader's cache lookups), and the slowest rank's
 * low-water mark is published as the cache's time now (cache.h).  The
 * cache refuses a fetch when all it holds is needed sooner: the rank then
 * waits for the loaders to move, which bounds the lead by the cache.
 *
 * Threads: dsfs_sched_access from FUSE workers (a layout lookup, then the
 * trackers under the scheduler's mutex: O(ranks) amortised); one scheduler
 * thread; fetch completions on the I/O engine's thread.
 */
#ifndef DSFS_SCHEDULER_H
#define DSFS_SCHEDULER_H

#include <stdbool.h>
#include <stdint.h>

#include "cache.h"
#include "fdpool.h"
#include "io.h"
#include "layout.h"
#include "plan.h"
#include "seek.h"
#include "tracker.h"

/* A fill reads a cache entry's runs in one request. */
_Static_assert(DSFS_IO_MAX_IOV >= DSFS_CACHE_MAX_RUNS,
	       "an I/O request must hold an entry's runs");

struct dsfs_sched;

struct dsfs_sched_cfg {
	int root_fd;				/* SOURCE */
	const struct dsfs_plan_cfg *plan;	/* outlives the scheduler */
	struct dsfs_layout *layout;	/* outlives it; sizes settled */
	struct dsfs_cache *cache;
	struct dsfs_io *io;
	struct dsfs_fdpool *fdpool;
	bool *direct_io;	/* shared relaxed flag: O_DIRECT still works */
	uint64_t lead_bytes;	/* fetch at most this far ahead */
	/*
	 * Prefetch reads in flight at most: `depth` while the fetch is
	 * behind the loader (`waited` below, within DSFS_BOOST_NS), else
	 * depth_ahead (1 to depth).  A loader reading at the fetch's frontier
	 * waits on storage, which gives more the more reads it has; one
	 * behind the fetch waits on none, and a deep queue there cost it
	 * (more of the pushes came after the loader's reads).  On 2 CPUs,
	 * 50,000 files of 110 KiB read cold with the plan, 256 and 64
	 * against 64 throughout (10 rounds in turns, medians): 4 threads
	 * 12,100 files/s against 11,540, 1 thread 12,990 against 12,380
	 * (better in 13 of 18 pairs each, with 8 earlier rounds); 256
	 * throughout lost about a tenth at 1 thread (8 pairs).
	 */
	unsigned depth, depth_ahead;
	/* NULL, or a count of names created, removed or renamed in SOURCE
	 * (relaxed atomic), and its value when the layout was listed: a
	 * lost plan says when the data set may have changed since. */
	const uint64_t *names_changed;
	uint64_t names_listed;
	/* NULL, or when the fetch was last behind the loader: the
	 * scheduler's thread boosts itself after that, and notes there each
	 * read it makes for a sample the loader is close behind
	 * (lib/bgprio.h's boost). */
	uint64_t *waited;
	/*
	 * A planned chunk of `size`-byte file k was read whole (len bytes):
	 * called on the I/O engine's thread, after the entry is READY; must
	 * not block.  when: the next use the entry was given for the planned
	 * read (dsfs_cache_when; NEVER while no loader is followed).  after:
	 * the plan time of the sample's read after the planned one
	 * (dsfs_tracker_use_after), the entry's next use once the planned
	 * read is served without the daemon.  Not called for every
	 * DSFS_SCHED_SENTINEL-th position of a rank's order, whose reads must
	 * still reach the daemon to show the loader's place (fs/push.c), nor
	 * for a position past the sample's next read (one of them may be a
	 * sentinel).
	 * false: no room to take it now.  NULL: never.
	 */
	bool (*filled)(void *arg, const struct dsfs_cache_key *k, uint32_t len,
		       uint64_t size, uint64_t when, uint64_t after);
	void *filled_arg;
	/*
	 * Whether every change made so far to files on device dev, names
	 * included, has been seen (counted in names_changed, cached data of
	 * a changed file dropped): then a sample's path still leads to the
	 * file it led to when names_changed was last the same, and a
	 * sample whose chunks are all cached need not be opened.  NULL:
	 * never (every fetch opens its sample).  Any thread; must be cheap.
	 */
	bool (*settled)(void *arg, uint64_t dev);
	void *settled_arg;
	uint64_t dev;		/* SOURCE's filesystem */
};

#define DSFS_SCHED_SENTINEL 8

struct dsfs_sched_rank_stats {
	uint32_t rank;
	struct dsfs_tracker_state track; /* detecting until it has a tracker */
	uint64_t lead_items;	/* samples fetched ahead of the low-water mark */
	uint64_t lead_bytes;
};

#define DSFS_SCHED_STATS_RANKS 64 /* ranks reported one by one, at most */

struct dsfs_sched_stats {
	/* The slowest local rank's place (epoch, low, ...) and lead; the
	 * mispredictions and accesses of all; the first rank's mode. */
	struct dsfs_tracker_state track;
	uint64_t lead_items;
	uint64_t lead_bytes;
	uint64_t prefetch_bytes; /* bytes fetched by the plan */
	uint64_t prefetch_errors;
	uint64_t sample_opens;	/* samples the fetches opened */
	uint64_t other_opens;	/* opens left out: other programs' */
	uint64_t index_pass_samples; /* read ahead of index-order passes */
	/* Nanoseconds since the last open of a sample reached the plan, or
	 * UINT64_MAX before the first: while the kernel serves a loader
	 * from its page cache, nothing does, and the place above stands. */
	uint64_t last_open_ns;
	bool discover;		/* seed=discover: seek is valid */
	struct dsfs_seek_stats seek;
	uint32_t nranks;	/* local ranks; the first
				   DSFS_SCHED_STATS_RANKS are in ranks[] */
	struct dsfs_sched_rank_stats ranks[DSFS_SCHED_STATS_RANKS];
};

/* Start the thread.  0 or -errno. */
int dsfs_sched_start(const struct dsfs_sched_cfg *cfg, struct dsfs_sched **out);
/* Stop the thread and wait for its reads in flight. */
void dsfs_sched_stop(struct dsfs_sched *s);
/*
 * Process pid (0: not known) opened path (relative to SOURCE); outside
 * the plan's samples, fed to the notice of a pass in sorted order over
 * another tree (sched_side.c), and left out of the plan when pid
 * reads out of its order while the loader follows it (readers.h).  One
 * call per open: the caller tells a second open from a second read of the
 * same one.  Returns the plan time of that sample's next read after this
 * one, for dsfs_cache_get_at() on the reader's lookups (DSFS_CACHE_NEVER:
 * not a planned sample, or no plan followed), and sets *seq to this
 * report's number, for dsfs_sched_recent().
 */
uint64_t dsfs_sched_access(struct dsfs_sched *s, const char *path,
			   uint32_t pid, uint64_t *seq);
/*
 * Whether path (relative to SOURCE) is a sample only as the target of a
 * symlink (dsfs_layout_alias).  The kernel looks such a file up whenever
 * a link to it is followed, by a stat as much as by an open (os.walk
 * follows each link to a file to learn whether it is a directory), so its
 * lookups tell nothing of the loader's order: only its reads do.
 */
bool dsfs_sched_linked(const struct dsfs_sched *s, const char *path);
/*
 * Whether report seq is recent enough that a later sign of its file is of
 * the same open (fs/ops.c's dsfs_note_access): among the latest reports of
 * half the data set's samples, at least 16 and at most 1024.  An open's
 * lookup and its reads come within far fewer reports (other workers' opens
 * between them, however busy the machine); the loader's next open of the
 * file comes about an epoch later.  Any thread, no lock.
 */
bool dsfs_sched_recent(struct dsfs_sched *s, uint64_t seq);
/*
 * The number of s's latest report (0: none yet); and, for a scheduler that
 * replaces others (a new plan), numbering its reports on from n, the
 * highest number they gave, so that report numbers kept from before (an
 * inode's last report) do not look recent again as s counts up from 0.
 * No report may be under way on s meanwhile.
 */
uint64_t dsfs_sched_reports(const struct dsfs_sched *s);
/*
 * The kernel dropped pages that were pushed into its page cache (a read of
 * them reached the daemon): until the loader's next epoch, chunks the plan
 * finds cached are handed to cfg.filled too, from the loader's place on.
 * Any thread; takes s->lock.
 */
void dsfs_sched_repush(struct dsfs_sched *s);
void dsfs_sched_number_from(struct dsfs_sched *s, uint64_t n);
void dsfs_sched_get_stats(struct dsfs_sched *s, struct dsfs_sched_stats *st);

#endif
