/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A pass over the data set in index order that the plan does not predict:
 * a detection script that reads every image's header before training (to
 * group the images by aspect ratio), a validation pass with shuffle=False
 * over the plan's files, a checksum or copy of the tree in the layout's
 * (sorted) order.  Its opens match no epoch of the plan, so the trackers
 * lose them, and without this each file would be read from storage while
 * its reader waits.
 *
 * Each process of such a pass opens the sample after the one it opened
 * last (a DataLoader worker reads its batch in index order; the workers'
 * batches interleave), where a shuffled loader's process does so by
 * chance, one open in n.  Under a DistributedSampler(shuffle=False) of
 * `world` ranks, each rank's process opens the sample `world` after its
 * last (rank r reads r, r + world, ...): a step too, where the plan says
 * the world (dsfs_seqpass_ranks).  The scheduler feeds every open of a
 * sample here; one up to 8 steps behind its process's last (reported out
 * of order) is not judged.  The pass is on once at least DSFS_SEQPASS_ON
 * of the last DSFS_SEQPASS_HISTORY opens were steps, and off once fewer
 * than DSFS_SEQPASS_OFF were.  While it is on (and, for the plan's own
 * samples, no rank's tracker follows a loader) the scheduler fetches the
 * samples in index order from the place of the pass's slowest process to
 * `ahead` samples past its furthest open: of a pass whose steps are
 * mostly by `world`, only the local ranks' (fetching every sample would
 * read world / local ranks times their share).  A pass that begins again
 * further back (a second validation pass: every process that opened one
 * of the last 256 opens last opened a sample behind the pass's furthest)
 * is followed from there.
 *
 * Not thread-safe: the caller locks.  O(DSFS_SEQPASS_PROCS) an open.
 */
#ifndef DSFS_SEQPASS_H
#define DSFS_SEQPASS_H

#include <stdbool.h>
#include <stdint.h>

/* Processes remembered; the least recently seen gives way. */
#define DSFS_SEQPASS_PROCS 16
/* Opens judged (a bit each)... */
#define DSFS_SEQPASS_HISTORY 32
/* ... of which this many going on by one turn the pass on... */
#define DSFS_SEQPASS_ON 24
/* ... and fewer than this many turn it off. */
#define DSFS_SEQPASS_OFF 16

struct dsfs_seqpass {
	struct dsfs_seqproc {
		uint32_t pid;
		uint64_t last;	/* the sample it opened last */
		uint64_t seen;	/* `opens` then; 0: a free slot */
	} procs[DSFS_SEQPASS_PROCS];
	uint64_t opens;		/* fed so far */
	uint32_t hist;		/* a bit an open, the latest lowest: it
				   was a step */
	uint32_t strided;	/* ... by `world`, not by one */
	/* A DistributedSampler's world and the local ranks, first..last:
	 * world 1 (or 0) for none.  Set by dsfs_seqpass_ranks. */
	uint32_t world, rank_first, rank_last;
	bool on;
	bool blocked;		/* the cache refused the next sample: wait
				   for the next open */
	uint64_t front;		/* the furthest sample the pass opened */
	uint64_t next;		/* the next sample to fetch */
};

/* pid's slot of the DSFS_SEQPASS_PROCS procs, or the least recently seen
 * one, given to it with seen 0 (a new process).  O(DSFS_SEQPASS_PROCS). */
struct dsfs_seqproc *dsfs_seqpass_proc(struct dsfs_seqproc *procs,
				       uint32_t pid);

/* The plan's DistributedSampler: `world` ranks (1: none), of which
 * first..last are local.  Kept by dsfs_seqpass_seed. */
void dsfs_seqpass_ranks(struct dsfs_seqpass *q, uint32_t world,
			uint32_t first, uint32_t last);

/* An open of sample idx by process pid (0: not known, never a pass's).
 * Returns true when it turned the pass on or off. */
bool dsfs_seqpass_access(struct dsfs_seqpass *q, uint32_t pid, uint64_t idx);

/* Forget what was fed (not the ranks), and take each process pid[k] to
 * have just opened idx[k] (off until its opens go on from there): the
 * places of a pass noticed before its files had indices (dirpass.h). */
void dsfs_seqpass_seed(struct dsfs_seqpass *q, const uint32_t *pid,
		       const uint64_t *idx, unsigned n);

/* The next sample to fetch for the pass, of the n samples, at most
 * `ahead` samples to fetch past its furthest open (of a strided pass,
 * the local ranks' ahead samples: world / local ranks times as far):
 * true and *idx, or false when off, blocked, or that far ahead already.
 * dsfs_seqpass_take() moves on past it. */
bool dsfs_seqpass_peek(const struct dsfs_seqpass *q, uint64_t ahead,
		       uint64_t n, uint64_t *idx);
void dsfs_seqpass_take(struct dsfs_seqpass *q);

/* Whether the fetch has room to go on of at least an eighth of `ahead`
 * (or is within `batch` of the front): worth waking the scheduler for. */
bool dsfs_seqpass_wants(const struct dsfs_seqpass *q, uint64_t ahead,
			uint64_t n, uint64_t batch);

#endif
