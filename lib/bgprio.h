/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A daemon thread's priority follows whether the loader waits on it.
 * Background priority for a thread whose work can wait while it is ahead
 * of the loader (the push into the page cache): SCHED_IDLE then, its own
 * policy again as soon as it falls behind.  And a boost (below) for the
 * threads the loader waits on when the fetch is behind.
 *
 * Why SCHED_IDLE and not a high nice: the kernel's fair scheduler (EEVDF,
 * Linux 6.6 on) lets a running task finish its slice (about 3 ms on 2
 * CPUs) before a woken one of any nice gets its CPU, so a loader thread
 * woken while a nice 19 thread runs waits as long as behind a nice 0 one;
 * a normal task that wakes preempts an idle-policy one at once.  On older
 * kernels (CFS) it is the weakest weight there is, as nice 19 was.
 *
 * Only a thread that may return to its own policy uses it: SCHED_OTHER at
 * start, and CAP_SYS_NICE or a nice within RLIMIT_NICE (sched(7): what
 * lets a thread leave SCHED_IDLE; root in a container may lack the
 * capability, and would stay idle).  Per thread: each calls these for
 * itself, no locks.
 */
#ifndef DSFS_BGPRIO_H
#define DSFS_BGPRIO_H

#include <stdbool.h>
#include <stdint.h>

struct dsfs_bgprio {
	bool can;	/* may go idle and back (dsfs_bgprio_init) */
	bool idle;	/* SCHED_IDLE now */
};

/* For the calling thread, at its start. */
void dsfs_bgprio_init(struct dsfs_bgprio *b);

/* SCHED_IDLE (idle) or the thread's own policy again; nothing if it may
 * not, or if that is what it has.  A refusal leaves it as it is from then
 * on. */
void dsfs_bgprio_set(struct dsfs_bgprio *b, bool idle);

/*
 * The other way round, for the threads a loader waits on when the fetch
 * falls behind it (the plan's scheduler, the I/O engine): nice
 * DSFS_BOOST_NICE for DSFS_BOOST_NS after the fetch was last behind, their
 * own nice otherwise.  Whoever sees the fetch behind (a reader that waited
 * on a backing read, the scheduler reading for a sample the loader is
 * close behind) notes the time in a shared word (dsfs_boost_waited); each
 * boosted thread polls it as it works (dsfs_boost_poll) and changes its
 * own nice only when the answer changes.  A thread asleep keeps what it
 * had until its next poll, which comes before its next piece of work.
 *
 * Why: on a machine whose CPUs the loader's threads keep busy, the fetch
 * (one thread opening each file in turn, one reaping the reads) got a
 * thread's share of the CPUs like any of them and fell behind the loader
 * it was to lead, which then waited on reads not yet made.  On 2 CPUs,
 * 50,000 files of 110 KiB read cold with the plan (5 pairs, in turns;
 * medians): 4 threads 11,700 files/s instead of 10,800, with about 1,000
 * reads waiting on storage instead of 8,000; 1 thread 11,900 instead of
 * 11,000.  Nice -5 left twice as many waits as -10, -19 none but no more
 * files/s.  Only while behind, and not before the loader's first open: a
 * loader that is ahead (a GPU-bound job, with CPUs to spare; one taking
 * 1,400 MB/s stalled 3.4% of its time against 3.6%) or still listing its
 * data set loses no CPU to work it does not wait for.
 *
 * Only a thread that may lower its nice boosts (CAP_SYS_NICE, or an
 * RLIMIT_NICE down to DSFS_BOOST_NICE), one with the SCHED_OTHER policy
 * and a nice above DSFS_BOOST_NICE.
 */
#define DSFS_BOOST_NICE (-10)
#define DSFS_BOOST_NS 1000000000ull

struct dsfs_boost {
	const uint64_t *waited;	/* the shared word, or NULL: never */
	uint64_t seen;		/* its value at the last look */
	int own;		/* the thread's nice at init */
	bool can;		/* may boost (dsfs_boost_init) */
	bool on;		/* at DSFS_BOOST_NICE now */
};

/* For the calling thread, at its start.  waited: see dsfs_boost_waited. */
void dsfs_boost_init(struct dsfs_boost *b, const uint64_t *waited);

/* The fetch is behind at now_ns (CLOCK_MONOTONIC, or its coarse clock,
 * which is never ahead of it): any thread, a relaxed store. */
void dsfs_boost_waited(uint64_t *waited, uint64_t now_ns);

/* Whether the fetch is behind at now_ns (as dsfs_boost_waited's clock):
 * the shared word's last note is less than DSFS_BOOST_NS old (never with
 * no note, or no word).  What a boosted thread follows; the plan's
 * scheduler also sizes its reads in flight by it (prefetch/scheduler.h). */
bool dsfs_boost_behind(const uint64_t *waited, uint64_t now_ns);

/* Boost the calling thread, or let it go, as the shared word says;
 * nothing if it may not.  A clock read while boosted or after a new
 * note, a system call only when the answer changes.  A refusal leaves
 * it as it is from then on. */
void dsfs_boost_poll(struct dsfs_boost *b);

#endif
