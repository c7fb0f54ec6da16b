/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Background priority for a daemon thread whose work can wait while it is
 * ahead of the loader (the push into the page cache, the plan's fetches):
 * SCHED_IDLE then, its own policy again as soon as it falls behind.
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

#endif
