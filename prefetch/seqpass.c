// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An index-order pass the plan does not predict (seqpass.h).
 *
 * Threads: the caller's lock (the scheduler's).
 */
#include "config.h"

#include "seqpass.h"

/* An open at most this far behind its process's last is one reported out
 * of order (fs/read.c's reports race from FUSE workers), or a DataLoader
 * worker's re-read: left out of the judgement. */
#define BEHIND 8
/* A process that opened none of the last this many is gone. */
#define GONE (8 * DSFS_SEQPASS_HISTORY)

/* pid's slot, or the least recently seen one given to it (seen 0). */
static struct dsfs_seqproc *proc_of(struct dsfs_seqpass *q, uint32_t pid)
{
	struct dsfs_seqproc *p, *old = &q->procs[0];

	for (p = q->procs; p < q->procs + DSFS_SEQPASS_PROCS; p++) {
		if (p->seen && p->pid == pid)
			return p;
		if (p->seen < old->seen)
			old = p;
	}
	old->pid = pid;
	old->seen = 0;
	return old;
}

/* Whether p opened one of the last `within` opens. */
static bool recent(const struct dsfs_seqpass *q, const struct dsfs_seqproc *p,
		   uint64_t within)
{
	return p->seen && q->opens - p->seen < within;
}

/* The furthest sample the processes of the last `within` opens opened. */
static uint64_t furthest(const struct dsfs_seqpass *q, uint64_t within)
{
	const struct dsfs_seqproc *p;
	uint64_t far = 0;

	for (p = q->procs; p < q->procs + DSFS_SEQPASS_PROCS; p++)
		if (recent(q, p, within) && p->last > far)
			far = p->last;
	return far;
}

/* The sample after the last of the slowest recent process: the pass has
 * yet to read it (a DataLoader worker's batch goes on there, or another
 * worker's begins). */
static uint64_t slowest(const struct dsfs_seqpass *q)
{
	const struct dsfs_seqproc *p;
	uint64_t low = UINT64_MAX;

	for (p = q->procs; p < q->procs + DSFS_SEQPASS_PROCS; p++)
		if (recent(q, p, DSFS_SEQPASS_HISTORY) && p->last + 1 < low)
			low = p->last + 1;
	return low;
}

bool dsfs_seqpass_access(struct dsfs_seqpass *q, uint32_t pid, uint64_t idx)
{
	uint64_t low, far;
	struct dsfs_seqproc *p;
	bool step = false, was = q->on;
	int ones;

	q->blocked = false;
	if (pid) {
		p = proc_of(q, pid);
		/* Reported a little out of order (two FUSE workers' opens of
		 * one process): not judged. */
		if (p->seen && idx < p->last && idx + BEHIND >= p->last)
			return false;
		step = p->seen && idx == p->last + 1;
		p->last = idx;
		p->seen = q->opens + 1;
	}
	q->opens++;
	q->hist = q->hist << 1 | step;
	ones = __builtin_popcount(q->hist);
	if (!q->on && ones >= DSFS_SEQPASS_ON) {
		q->on = true;
		q->front = furthest(q, DSFS_SEQPASS_HISTORY);
		q->next = slowest(q);
	} else if (q->on && ones < DSFS_SEQPASS_OFF) {
		q->on = false;
	} else if (q->on && step) {
		far = furthest(q, GONE);
		if (far + DSFS_SEQPASS_HISTORY < q->front) {
			/* The pass began again further back: every process
			 * that opened lately is behind where it was (the
			 * furthest of a DataLoader's 16 workers may be
			 * missing from the last 32 opens, hardly from 256;
			 * the last pass's ended). */
			q->front = far;
			q->next = slowest(q);
		} else if (idx > q->front) {
			q->front = idx;
		}
		low = slowest(q);
		if (low > q->next)
			q->next = low;
	}
	return q->on != was;
}

void dsfs_seqpass_seed(struct dsfs_seqpass *q, const uint32_t *pid,
		       const uint64_t *idx, unsigned n)
{
	struct dsfs_seqproc *p;
	unsigned k;

	*q = (struct dsfs_seqpass){ .opens = 0 };
	for (k = 0; k < n; k++) {
		p = proc_of(q, pid[k]);
		p->last = idx[k];
		p->seen = ++q->opens;
	}
}

bool dsfs_seqpass_peek(const struct dsfs_seqpass *q, uint64_t ahead,
		       uint64_t n, uint64_t *idx)
{
	if (!q->on || q->blocked || q->next >= n ||
	    q->next > q->front + ahead)
		return false;
	*idx = q->next;
	return true;
}

void dsfs_seqpass_take(struct dsfs_seqpass *q)
{
	q->next++;
}

bool dsfs_seqpass_wants(const struct dsfs_seqpass *q, uint64_t ahead,
			uint64_t n, uint64_t batch)
{
	uint64_t idx;

	return dsfs_seqpass_peek(q, ahead, n, &idx) &&
	       (q->front + ahead - idx >= ahead / 8 || idx <= q->front + batch);
}
