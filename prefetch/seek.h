/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Seek: follow a loader whose shuffle seed nobody gave (seed=discover) by
 * discovering it anew every epoch (issue #8).  DataLoader(shuffle=True)
 * without a generator seeds a fresh generator every epoch from the global
 * RNG; the epoch's order is randperm(n) from it, one of 2^32 (discover.h).
 *
 * Per epoch: the first opens are collected (enough that a wrong seed is
 * unlikely to match them, dsfs_discover_false_matches()); a search over the
 * seed range starts on idle-priority threads; the opens meanwhile are kept;
 * when the search confirms a seed, the epoch's whole order goes into a
 * tracker of that epoch alone (dsfs_tracker_new_fixed()), fed every open so
 * far, and the caller prefetches from it.  A search that finds nothing
 * leaves the epoch to the heuristics.  An epoch ends when an index opened
 * in it is opened again (a loader reads each sample once an epoch), or,
 * for a RandomSampler given num_samples=K (cfg.count), after K opens (it
 * reads K samples: whole permutations of the same generator, then the head
 * of one more, so with K > n repeats are no boundary); the next one starts
 * collecting with that open.
 *
 * A DistributedSampler's seed found once gives every later epoch (seed + 1
 * each set_epoch()), so then the caller follows it with the sampler's own
 * trackers and stops feeding the seek (dsfs_seek_poll() returns 2).
 *
 * Threads: the caller serialises every call on one seek with its own lock,
 * except dsfs_seek_reap() and dsfs_seek_free(), which must be called
 * WITHOUT that lock: they join search threads, whose end calls cfg.wake,
 * which may take it.  Memory: n bits, plus the opens kept while a search
 * runs (4 bytes each, at most SEEK_KEEP_MAX) and the search's own.
 */
#ifndef DSFS_SEEK_H
#define DSFS_SEEK_H

#include <stdbool.h>
#include <stdint.h>

#include "tracker.h"

struct dsfs_seek_cfg {
	uint64_t n;		/* samples: 2 <= n < DSFS_SAMPLER_TORCH_MAX_N */
	uint64_t count;		/* opens an epoch (num_samples); 0: n, or at
				   the first repeat; at most DSFS_SAMPLER_MAX_N */
	/* The samplers searched (enum dsfs_discover_model; 0: RANDOM) and,
	 * for DISTRIBUTED, the world and the local ranks (discover.h). */
	unsigned models;
	uint32_t world, rank_first, rank_last;
	uint64_t first, end;	/* the seed range searched: [first, end) */
	unsigned threads;	/* search threads; 0: the online CPUs */
	uint32_t window;	/* how far out of order opens arrive */
	void (*wake)(void *arg); /* a search ended (a search thread calls it) */
	void *arg;
};

enum dsfs_seek_state {
	DSFS_SEEK_COLLECTING,	/* recording the epoch's first opens */
	DSFS_SEEK_SEARCHING,	/* a search runs */
	DSFS_SEEK_FOLLOWING,	/* the epoch's order is known */
	DSFS_SEEK_FAILED,	/* nothing found: heuristics until the epoch ends */
};

struct dsfs_seek_stats {
	enum dsfs_seek_state state;
	uint64_t epoch;		/* epochs seen since the mount, from 0 */
	bool found;		/* seed holds the latest epoch's found seed */
	uint32_t seed;		/* effective (low 32 bits) seed */
	unsigned model;		/* whose it is: enum dsfs_discover_model */
	uint64_t searches;	/* searches started */
	uint64_t found_count;	/* ... that confirmed a seed */
	double search_seconds;	/* total wall time of ended searches */
};

struct dsfs_seek;

/* 0 and *out, -EINVAL (n out of range, empty range) or -ENOMEM. */
int dsfs_seek_new(const struct dsfs_seek_cfg *cfg, struct dsfs_seek **out);
/* Cancel any search and free.  Without the caller's lock (see above). */
void dsfs_seek_free(struct dsfs_seek *s);

/*
 * The loader opened sample idx (< n).  Returns true when this open began a
 * new epoch: the caller must drop the tracker it got from dsfs_seek_poll()
 * (its epoch is over).  May start a search.  O(1) amortised.
 */
bool dsfs_seek_access(struct dsfs_seek *s, uint64_t idx);

/*
 * After a wake: if a search ended, 1 with *t a tracker of the epoch (every
 * open of it so far fed) for the caller to follow and free (RandomSampler);
 * 2 with *seed the DistributedSampler's seed of this epoch (the low 32 bits
 * of its seed + epoch), *t NULL: the caller follows the sampler from there
 * and may replay the epoch's opens (dsfs_seek_replay()) before the next
 * call; -ENOENT when it found nothing; 0 when there is nothing new.  O(n)
 * when it builds *t.
 */
int dsfs_seek_poll(struct dsfs_seek *s, struct dsfs_tracker **t,
		   uint32_t *seed);

/* Call fn on every open of the current epoch so far, in open order. */
void dsfs_seek_replay(const struct dsfs_seek *s,
		      void (*fn)(void *arg, uint32_t idx), void *arg);

/* Free the searches that ended or were cancelled.  Without the caller's
 * lock; returns after their threads are joined. */
void dsfs_seek_reap(struct dsfs_seek *s);
/* Whether there is anything for dsfs_seek_reap().  Any lock. */
bool dsfs_seek_reapable(struct dsfs_seek *s);

void dsfs_seek_stats(const struct dsfs_seek *s, struct dsfs_seek_stats *st);

#endif
