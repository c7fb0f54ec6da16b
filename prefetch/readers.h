/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which processes follow the plan.  A program that reads the data set
 * beside the loader (tar, sha1sum, rsync, a second job with another seed)
 * opens samples out of the plan's order; fed to the trackers, its opens
 * would take places the loader has yet to read (a tracker's window is up
 * to a quarter of the epoch) and drag its frontier ahead, and the
 * loader's own opens would then miss until the plan is lost.
 *
 * The scheduler notes every open with the process that made it (FUSE
 * gives the caller's pid) and the plan time of the sample's next read.  An
 * open is placed when it moves its process on through the plan a little
 * (at most span), and, unless it follows, lands at most `near` past the
 * furthest place of the processes that follow (a new DataLoader worker
 * starts a batch or more ahead of the others: up to the trackers'
 * window), or goes on with its process's run (at most DSFS_READERS_RUN
 * past its last open: a worker of a loader with most of a small epoch in
 * flight starts its batch anywhere in it, and reads on from there).  A DataLoader worker reads its batches in order (with push,
 * every 8th sample reaches dsfs) and jumps over the other workers' batches
 * between its own; another program's opens land anywhere.  While another
 * process follows the plan closely (three quarters of its last opens
 * placed, and it still exists), an open of a process new to it (fewer than
 * DSFS_READERS_JUDGE opens) is left out when it lands more than `near`
 * past the followers' place, and every open of a process judged another
 * program (at most a quarter of its last opens placed) is left out.  A
 * newcomer's open counts as near when it lands within twice the spread of
 * the followers' places (at least span): a DataLoader's workers are that
 * far apart, and a new one starts about that far ahead, while another
 * program's opens, anywhere in the window, would drag the frontier (near
 * an epoch's end, into the next epoch).  When an epoch begins the caller
 * forgets every process but those judged other programs: the new epoch's
 * workers, whose first opens straddle two epochs' plan times, are judged
 * afresh, and meanwhile the other programs stay left out.  Before that, as
 * an epoch ends, a new worker opens samples of the next one: a sample the
 * epoch passed unseen (pushed into the page cache and read there) has its
 * next read far behind the followers in this epoch's plan times, and is
 * placed at its read in the next epoch when that lands near them.
 *
 * When no other process follows (a wrong seed, a new job after the old
 * one ended) nothing is left out, and the trackers lose and find the
 * loader as before.  Not thread-safe: the caller locks.
 */
#ifndef DSFS_READERS_H
#define DSFS_READERS_H

#include <stdbool.h>
#include <stdint.h>

/* Processes remembered; the least recently seen gives way. */
#define DSFS_READERS_MAX 64
/* A process is judged on its last this many opens (a bit each)... */
#define DSFS_READERS_HISTORY 32
/* ... once it made at least this many. */
#define DSFS_READERS_JUDGE 8
/* A process's open this far past its last at most goes on with its
 * batch (a DataLoader worker's next sample, or with push the 8th). */
#define DSFS_READERS_RUN 8
/* Another process follows when it placed an open within this long. */
#define DSFS_READERS_FOLLOW_NS 1000000000ULL
/* No plan time: the plan cannot place the open. */
#define DSFS_READERS_NOWHERE UINT64_MAX

/* Where an open lands in the plan (plan times: epoch * count + position). */
struct dsfs_reader_open {
	uint64_t when;		/* the sample's next read; NOWHERE: none */
	uint64_t later;		/* its read in the next epoch; NOWHERE: none */
	uint64_t span;		/* how far a process moves on, at most */
	uint64_t near;		/* how far past the followers' place */
};

struct dsfs_reader {
	uint32_t pid;		/* 0: a free slot */
	uint32_t placed;	/* last opens, newest in bit 0: 1 placed */
	uint32_t opens;		/* opens noted, up to DSFS_READERS_HISTORY */
	bool other;		/* judged another program (logged) */
	uint64_t judged_ns;	/* when it was first judged so */
	uint64_t seen_ns;	/* its latest open */
	uint64_t placed_ns;	/* its latest placed open; 0: none */
	uint64_t when;		/* its latest open's plan time */
};

struct dsfs_readers {
	struct dsfs_reader r[DSFS_READERS_MAX];
	uint64_t followed_ns;	/* at the latest new epoch, the latest
				   placed open of a process following;
				   0: none */
	/* Whether process pid still exists; NULL: every one does.  Asked
	 * of the followers for each open of a process not following: a
	 * loader's workers that ended (a DataLoader without persistent
	 * workers, at an epoch's end or a break out of it, or the whole job)
	 * follow no more, and the next epoch's new workers, whose opens land
	 * at its start, or the next job's, landing anywhere, are fed. */
	bool (*alive)(uint32_t pid);
};

/* What dsfs_readers_note() decided. */
enum dsfs_reader_verdict {
	DSFS_READER_FEED,	/* give the open to the plan */
	DSFS_READER_LEAVE,	/* leave it out */
	DSFS_READER_LEAVE_NEW,	/* the same, and pid is newly judged
				   another program (say so) */
};

/* Forget every process (keeping `alive`).  Zero-initialised is empty. */
void dsfs_readers_clear(struct dsfs_readers *rs);
/* An epoch begins: forget every process but those judged other programs
 * at least DSFS_READERS_FOLLOW_NS before the loader's latest placed open
 * (one judged in the last moments of a job that ends may be the next job),
 * which stay left out (until their opens follow the plan) while the
 * loader's processes are judged afresh: for DSFS_READERS_FOLLOW_NS after
 * that open, or as long as one is judged to follow again. */
void dsfs_readers_new_epoch(struct dsfs_readers *rs);

/*
 * Process pid opened a sample at now_ns, landing at *o: FEED, or LEAVE
 * as the file's comment says.  pid 0 (a caller outside the daemon's pid
 * namespace) is always fed.  O(DSFS_READERS_MAX).
 */
enum dsfs_reader_verdict dsfs_readers_note(struct dsfs_readers *rs,
					   uint32_t pid,
					   const struct dsfs_reader_open *o,
					   uint64_t now_ns);

#endif
