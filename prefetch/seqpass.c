// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An index-order pass the plan does not predict (seqpass.h).
 *
 * Threads: the caller's lock (the scheduler's).
 */
#include "config.h"

#include "seqpass.h"

/* An open at most this many steps behind its process's last is one
 * reported out of order (fs/read.c's reports race from FUSE workers), or
 * a DataLoader worker's re-read: left out of the judgement. */
#define BEHIND 8
/* A process that opened none of the last this many is gone. */
#define GONE (8 * DSFS_SEQPASS_HISTORY)

struct dsfs_seqproc *dsfs_seqpass_proc(struct dsfs_seqproc *procs,
				       uint32_t pid)
{
	struct dsfs_seqproc *p, *old = &procs[0];

	for (p = procs; p < procs + DSFS_SEQPASS_PROCS; p++) {
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

/* The world of a DistributedSampler: 1 for none. */
static uint64_t world_of(const struct dsfs_seqpass *q)
{
	return q->world > 1 ? q->world : 1;
}

void dsfs_seqpass_ranks(struct dsfs_seqpass *q, uint32_t world,
			uint32_t first, uint32_t last)
{
	q->world = world;
	q->rank_first = first;
	q->rank_last = last;
}

bool dsfs_seqpass_access(struct dsfs_seqpass *q, uint32_t pid, uint64_t idx)
{
	uint64_t low, far, w = world_of(q);
	struct dsfs_seqproc *p;
	bool step = false, by_world = false, was = q->on;
	int ones;

	q->blocked = false;
	if (pid) {
		p = dsfs_seqpass_proc(q->procs, pid);
		/* Reported a little out of order (two FUSE workers' opens of
		 * one process): not judged. */
		if (p->seen && idx < p->last && idx + BEHIND * w >= p->last)
			return false;
		by_world = p->seen && w > 1 && idx == p->last + w;
		step = by_world || (p->seen && idx == p->last + 1);
		p->last = idx;
		p->seen = q->opens + 1;
	}
	q->opens++;
	q->hist = q->hist << 1 | step;
	q->strided = q->strided << 1 | by_world;
	ones = __builtin_popcount(q->hist);
	if (!q->on && ones >= DSFS_SEQPASS_ON) {
		q->on = true;
		q->front = furthest(q, DSFS_SEQPASS_HISTORY);
		q->next = slowest(q);
	} else if (q->on && ones < DSFS_SEQPASS_OFF) {
		q->on = false;
	} else if (q->on && step) {
		far = furthest(q, GONE);
		if (far + DSFS_SEQPASS_HISTORY * w < q->front) {
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

	*q = (struct dsfs_seqpass){ .world = q->world,
				    .rank_first = q->rank_first,
				    .rank_last = q->rank_last };
	for (k = 0; k < n; k++) {
		p = dsfs_seqpass_proc(q->procs, pid[k]);
		p->last = idx[k];
		p->seen = ++q->opens;
	}
}

/* How many ranks read here of a pass whose steps are mostly by the world
 * (a DistributedSampler's ranks, each reading its own share); 0 for any
 * other pass, which is read whole. */
static uint64_t local_ranks(const struct dsfs_seqpass *q)
{
	if (world_of(q) == 1 || q->rank_last >= q->world ||
	    q->rank_first > q->rank_last ||
	    2 * __builtin_popcount(q->strided) <= __builtin_popcount(q->hist))
		return 0;
	return q->rank_last - q->rank_first + 1;
}

/* The first sample from i on that the pass reads here: of a strided
 * pass, the next of a local rank's share (rank r reads those that are r
 * modulo the world).  O(1). */
static uint64_t local_from(const struct dsfs_seqpass *q, uint64_t i)
{
	uint64_t w = world_of(q), r = i % w;

	if (!local_ranks(q))
		return i;
	if (r < q->rank_first)
		return i + (q->rank_first - r);
	if (r > q->rank_last)
		return i + (w - r) + q->rank_first;
	return i;
}

/* `ahead` samples to fetch as a distance in samples: world / local ranks
 * times as far for a strided pass. */
static uint64_t span(const struct dsfs_seqpass *q, uint64_t ahead)
{
	uint64_t k = local_ranks(q);

	return k ? ahead * world_of(q) / k : ahead;
}

bool dsfs_seqpass_peek(const struct dsfs_seqpass *q, uint64_t ahead,
		       uint64_t n, uint64_t *idx)
{
	uint64_t i = local_from(q, q->next);

	if (!q->on || q->blocked || i >= n || i > q->front + span(q, ahead))
		return false;
	*idx = i;
	return true;
}

void dsfs_seqpass_take(struct dsfs_seqpass *q)
{
	q->next = local_from(q, q->next) + 1;
}

bool dsfs_seqpass_wants(const struct dsfs_seqpass *q, uint64_t ahead,
			uint64_t n, uint64_t batch)
{
	uint64_t idx, far = span(q, ahead);

	return dsfs_seqpass_peek(q, ahead, n, &idx) &&
	       (q->front + far - idx >= far / 8 || idx <= q->front + batch);
}
