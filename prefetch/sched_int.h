/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Internals shared by the scheduler's files (scheduler.c: the thread, the
 * ranks' trackers and lead windows, start, stop, stats; sched_fetch.c:
 * opening and reading a sample into the cache; sched_access.c: the
 * loaders' opens).  Locking as scheduler.c says: functions named _locked
 * are called with s->lock held.
 */
#ifndef DSFS_SCHED_INT_H
#define DSFS_SCHED_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "bgprio.h"
#include "dirpass.h"
#include "log.h"
#include "readers.h"
#include "scheduler.h"
#include "seek.h"
#include "seqpass.h"
#include "slab.h"

/*
 * A pass in sorted order over a tree outside the plan's data set
 * (sched_side.c).  Protected by the scheduler's lock, but `layout`, which
 * the scheduler thread alone replaces (under the lock) and also reads
 * without it, and `want`, which the builder thread reads while `building`.
 */
struct sched_side {
	struct dsfs_dirpass notice;	/* opens outside the data set */
	struct dsfs_layout *layout;	/* the tree listed, or NULL ... */
	char root[PATH_MAX];		/* ... its directory below SOURCE */
	struct dsfs_seqpass seq;	/* the pass over it, by index */
	uint64_t mean;			/* its files' mean size */
	char want[PATH_MAX];		/* the tree asked for last */
	bool wanted;			/* ... not listed yet */
	bool failed;			/* ... its listing failed */
	bool building, done;		/* the builder runs; has ended */
	pthread_t builder;
	struct dsfs_layout *built;	/* its listing (NULL: it failed) */
	uint64_t built_mean;		/* ... and its files' mean size */
};

/* One local rank's loader and how far the scheduler got ahead of it. */
struct srank {
	struct dsfs_tracker *t;	/* NULL until the epoch is known (a group
				   detects through the first rank's) */
	/* While the group detects the epoch (epoch=auto): a tracker of this
	 * rank configured at the first candidate epoch, which the prefetch
	 * follows meanwhile (a job that starts fresh starts there), fed the
	 * opens its order claims; dropped once the group's tracker knows or
	 * has lost the loader, or once the guess loses it; made the rank's
	 * tracker when the guesses placed the opens the group's could not
	 * (sched_access.c's guesses_right_locked). */
	struct dsfs_tracker *guess;
	uint32_t rank;
	uint64_t epoch;		/* tracker epoch `fetched` counts in */
	uint64_t starts;	/* ... and its count of fresh starts */
	uint64_t fetched;	/* next position to fetch */
	uint64_t lead_from;	/* the lead window is [lead_from, fetched) */
	uint64_t lead_bytes;	/* ... and holds this many bytes */
	/* The counts of the trackers this rank had before its current one
	 * (a loader found anew, a seed found): the stats' counters only grow. */
	uint64_t past_misses, past_accesses;
	/* Every `every`-th position of its order is a sentinel, whose reads
	 * reach the daemon (never pushed): set at each epoch (stride_locked),
	 * so that the loader's place is known to within a quarter of the
	 * lead.  1: every read shows (no push, or samples too large). */
	uint32_t every;
	bool blocked;		/* the cache refused its next sample: every
				   cached one is needed sooner; wait for
				   the loaders to move */
	uint64_t blocked_epoch, blocked_low; /* where the loader was then */
};

struct dsfs_sched {
	struct dsfs_sched_cfg cfg;
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* progress, a completion, or stop */
	pthread_t thread;
	struct srank *ranks;		/* nranks; protected by lock */
	uint32_t nranks;
	bool repush;			/* see dsfs_sched_repush; written
					   under lock, read relaxed too */
	bool strays;			/* a loader reads samples besides
					   its order's (stride_locked); under
					   lock */
	bool strays_said;		/* ... and the log said so once */
	unsigned inflight;		/* reads submitted, not completed */
	unsigned depth;			/* in flight at most now (depth_locked) */
	bool stop;
	/* sched_fetch.c's struct fetch of each read in flight: made by this
	 * thread, given back by the engine's (own lock; see io_int.h's ops) */
	struct dsfs_slab fetches;
	/* The thread waits on `wake` (idle), and for room among the reads
	 * in flight rather than for the loaders (full).  Wakers signal only
	 * when the thread has a batch worth of work: a wake-up per sample
	 * cost more CPU than the fetch itself (see wake_worth_locked). */
	bool idle, full;
	size_t prefix_len;		/* strlen(plan dir "/"), 0 for "." */
	uint64_t prefetch_bytes;	/* relaxed atomic */
	uint64_t prefetch_errors;	/* relaxed atomic */
	uint64_t sample_opens;		/* relaxed atomic */
	/* Reports so far (every open the daemon hears of is one: fs/ reports
	 * each open once).  Written under lock. */
	uint64_t reports;
	uint64_t last_report_ns;	/* CLOCK_MONOTONIC_COARSE; 0: none;
					   under lock */
	struct dsfs_ratelimit log_rl;	/* log_change_locked's lines */
	struct dsfs_seek *seek;		/* seed=discover, else NULL; lock */
	/* The sampler the trackers follow: the plan's, or the one a seed
	 * search found (discovered: then the seek is no longer fed).
	 * Protected by lock. */
	struct dsfs_sampler_cfg sampler;
	uint32_t *canon;		/* sampler.canon's, or NULL */
	struct dsfs_tracker_way way;	/* torch-random, script shuffles: the
					   way the loader was last said to
					   draw (log_way); under lock */
	bool discovered;
	bool planned;			/* the time now last published is not
					   NEVER; under lock */
	/* Bytes and count of the samples fetched (and of the layout's,
	 * sampled at the start): their mean sets each rank's `every`.  Under
	 * lock. */
	uint64_t size_sum, sizes;
	/* The processes whose opens reach the plan: another program's are
	 * left out while a loader follows (readers.h).  Under lock. */
	struct dsfs_readers readers;
	struct dsfs_ratelimit other_rl;	/* the lines naming them */
	uint64_t other_opens;		/* left out; relaxed atomic */
	/* sched_fetch.c: the identity each sample's path led to when it was
	 * last opened (ino 0: none), so that a sample whose chunks are all
	 * cached is not opened again; NULL until the first.  Valid while
	 * cfg.names_changed stays at known_names (cleared otherwise).  The
	 * scheduler thread's alone. */
	struct known_id {
		uint64_t ino, gen;
	} *known;
	uint64_t known_names;
	struct dsfs_boost boost;	/* the scheduler thread's alone */
	/* An index-order pass the plan does not predict, fetched while no
	 * rank follows a loader (seqpass.h), and the samples read for it
	 * (not found cached).  Under lock. */
	struct dsfs_seqpass seq;
	uint64_t seq_samples;
	struct sched_side side;		/* ... and outside the data set's
					   files (seq_samples counts them) */
};

/* Reads prepared by the scheduler thread, submitted together (one queue
 * lock and at most one wake-up of the engine per batch). */
#define BATCH 16
struct batch {
	struct dsfs_io_req req[BATCH];
	unsigned n;
	uint64_t made;		/* reads prepared so far, all batches */
};

/* What the scheduler thread fetches next. */
struct pick {
	struct srank *r;
	uint64_t pos, idx, when, size, epoch;
	uint64_t after;		/* dsfs_tracker_use_after */
	uint64_t use;		/* its entries' next use: `when`, or the
				   sample's read before it */
	bool repush;		/* s->repush when picked */
	bool push;		/* its data may go to the page cache: see
				   scheduler.c's pushable_locked */
	bool near;		/* the loader is close behind: it reads, and
				   its place is within twice the reads in
				   flight */
	bool seq;		/* for an index-order pass (r is NULL) */
	bool side;		/* ... over the side's tree, not the plan's
				   layout (idx is the side layout's) */
};

/*
 * A sample the scheduler thread opened, with what fstat said of it: opened
 * to settle the sample's size, it is kept for the fetch that follows.
 * Owned by the scheduler thread; fd -1 when it holds none.
 */
struct opened {
	uint64_t idx;
	bool side;		/* idx is the side layout's (sched_side.c) */
	int fd, flags;
	struct stat st;
};

/* The tracker r's prefetch follows: the guess while there is one. */
static inline struct dsfs_tracker *plan_of(const struct srank *r)
{
	return r->guess ? r->guess : r->t;
}

/* scheduler.c */
/* Drop r's tracker, keeping its counts for the stats. */
void dsfs_sched_retire_locked(struct srank *r);
/* Bring r's lead window up to date with its tracker; false when r follows
 * no plan (detecting or lost).  O(positions the loader moved past). */
bool dsfs_sched_rank_update_locked(struct dsfs_sched *s, struct srank *r);
/* idx's next plan read over every rank.  O(ranks). */
uint64_t dsfs_sched_next_use_locked(struct dsfs_sched *s, uint64_t idx);
/* How many samples past its furthest open an index-order pass is fetched
 * (seqpass.h): the lead's bytes at the mean sample size (side: of the
 * side's tree), at least BATCH. */
uint64_t dsfs_sched_pass_ahead_locked(const struct dsfs_sched *s, bool side);
/* Whether that pass has a batch to fetch. */
bool dsfs_sched_pass_wants_locked(const struct dsfs_sched *s, bool side);
/* A tracker for r configured at `epoch`, or (detect: the first rank with
 * epoch=auto) one that detects for the group; it replaces r's tracker and
 * where r's prefetch stood.  0 or -errno. */
int dsfs_sched_rank_tracker(struct dsfs_sched *s, struct srank *r,
			    bool detect, uint64_t epoch);

/* sched_fetch.c: called by the scheduler thread without s->lock (and
 * sample_path at the start, before it runs). */
/* The path below SOURCE an open of sample idx reaches.  0 or
 * -ENAMETOOLONG. */
int dsfs_sched_sample_path(const struct dsfs_sched *s, uint64_t idx,
			   char path[PATH_MAX]);
void dsfs_sched_opened_close(struct opened *o);
/* Settle the size of a sample the layout listed without stat, keeping
 * its open in o for the fetch. */
void dsfs_sched_settle_sample(struct dsfs_sched *s, uint64_t idx,
			      struct opened *o);
/* Read each chunk of pk's sample the cache lacks (adding to b).
 * -ENOSPC when the cache refused one (all it holds is needed sooner),
 * else 0: other failures are counted, and the loader's reads retry. */
int dsfs_sched_fetch_sample(struct dsfs_sched *s, struct batch *b,
			    struct opened *o, const struct pick *pk);
/* Submit b's reads (counted in flight since they were added). */
void dsfs_sched_batch_flush(struct dsfs_sched *s, struct batch *b);

/* sched_side.c */
/* An open of path (below SOURCE) that is no sample of the plan, by pid.
 * Takes s->lock. */
void dsfs_sched_side_access(struct dsfs_sched *s, const char *path,
			    uint32_t pid);
/* The scheduler thread's: start the builder of a tree asked for, install
 * one listed. */
void dsfs_sched_side_poll_locked(struct dsfs_sched *s);
/* The path below SOURCE of the side layout's file idx.  0 or
 * -ENAMETOOLONG.  The scheduler thread's. */
int dsfs_sched_side_path(const struct dsfs_sched *s, uint64_t idx,
			 char path[PATH_MAX]);
/* Join the builder, free the listings (the scheduler thread stopped). */
void dsfs_sched_side_stop(struct dsfs_sched *s);

/* sched_access.c */
/* The rank whose loader read idx (the highest claim).  O(ranks). */
struct srank *dsfs_sched_route_locked(struct dsfs_sched *s, uint64_t idx);
/* Tell the cache the plan time now: the slowest rank's place. */
void dsfs_sched_publish_now_locked(struct dsfs_sched *s);
/* Fetch each rank's lead again from its start: cached samples are found
 * (and handed on, or given their next use), the others fetched. */
void dsfs_sched_rewalk_locked(struct dsfs_sched *s);
/* Bytes of the sample at position p of r's current epoch (0 past the
 * plan).  O(1). */
uint64_t dsfs_sched_size_at_locked(const struct dsfs_sched *s,
				   const struct srank *r, uint64_t p);
/* The sample a path below SOURCE opens: 0 and *idx, or -ENOENT; *linked:
 * known only as a symlink's target. */
int dsfs_sched_sample_of(const struct dsfs_sched *s, const char *path,
			 uint64_t *idx, bool *linked);
/* CLOCK_MONOTONIC_COARSE in nanoseconds. */
uint64_t dsfs_sched_coarse_ns(void);
/* Whether process pid exists (readers.h's `alive`). */
bool dsfs_sched_pid_alive(uint32_t pid);

#endif
