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
 * chance, one open in n.  The scheduler feeds every open of a sample
 * here; one up to 8 behind its process's last (reported out of order)
 * is not judged.  The pass is on once at least DSFS_SEQPASS_ON of the last
 * DSFS_SEQPASS_HISTORY opens went on by one from their process's last,
 * and off once fewer than DSFS_SEQPASS_OFF did.  While it is on (and no
 * rank's tracker follows a loader) the scheduler fetches the samples in
 * index order from the place of the pass's slowest process to `ahead`
 * samples past its furthest open.  A pass that begins again further back
 * (a second validation pass: every process that opened one of the last
 * 256 opens last opened a sample behind the pass's furthest) is followed
 * from there.
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
				   went on by one */
	bool on;
	bool blocked;		/* the cache refused the next sample: wait
				   for the next open */
	uint64_t front;		/* the furthest sample the pass opened */
	uint64_t next;		/* the next sample to fetch */
};

/* An open of sample idx by process pid (0: not known, never a pass's).
 * Returns true when it turned the pass on or off. */
bool dsfs_seqpass_access(struct dsfs_seqpass *q, uint32_t pid, uint64_t idx);

/* Forget what was fed, and take each process pid[k] to have just opened
 * idx[k] (off until its opens go on from there): the places of a pass
 * noticed before its files had indices (dirpass.h). */
void dsfs_seqpass_seed(struct dsfs_seqpass *q, const uint32_t *pid,
		       const uint64_t *idx, unsigned n);

/* The next sample to fetch for the pass, of the n samples, at most
 * `ahead` past its furthest open: true and *idx, or false when off,
 * blocked, or that far ahead already.  dsfs_seqpass_take() moves on. */
bool dsfs_seqpass_peek(const struct dsfs_seqpass *q, uint64_t ahead,
		       uint64_t n, uint64_t *idx);
void dsfs_seqpass_take(struct dsfs_seqpass *q);

/* Whether the fetch has room to go on of at least an eighth of `ahead`
 * (or is within `batch` of the front): worth waking the scheduler for. */
bool dsfs_seqpass_wants(const struct dsfs_seqpass *q, uint64_t ahead,
			uint64_t n, uint64_t batch);

#endif
