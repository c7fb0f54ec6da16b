/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A simulated DataLoader for the tracker's unit tests (unit-tracker,
 * unit-workers): the order in which its workers open an epoch's
 * positions (SAMPLERS.md section 3). */
#ifndef DSFS_UNIT_LOADER_H
#define DSFS_UNIT_LOADER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* Small deterministic generator for the simulation (xorshift64). */
static inline uint64_t unit_rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * The positions (0 .. count-1) in the order a loader of nw workers, batch
 * size bs and prefetch factor pf reads them, into pos[count]: batch k goes
 * to worker k mod nw, nw * pf batches in flight, batch k + nw * pf queued
 * once batch k is consumed (in order); each worker reads its batches in
 * turn.  Workers take turns at random, worker 0 with weight 1 and the
 * others with weight `slow` (1: all alike); one with nothing queued waits.
 * From the stall'th open on, worker 0 stalls (descheduled, a long sample)
 * for as long as another worker has a batch to read (UINT64_MAX: never).
 * A worker whose turn it is reads 1 to 2 * turn - 1 opens in a row (a
 * time slice: more workers than cores), 1 with turn 1.
 */
static inline void unit_simulate_turns(uint64_t count, unsigned nw,
				       unsigned bs, unsigned pf, unsigned slow,
				       uint64_t stall, unsigned turn,
				       uint64_t *rs, uint32_t *pos)
{
	uint64_t nb = (count + bs - 1) / bs, queued, consumed = 0, k = 0;
	uint64_t left = 0;
	uint64_t **q = calloc(nw, sizeof(*q)), *head = calloc(nw, sizeof(*head));
	uint64_t *tail = calloc(nw, sizeof(*tail)), *off = calloc(nw, sizeof(*off));
	bool *done = calloc(nb, 1);
	unsigned w = 0, i;

	for (w = 0; w < nw; w++)
		q[w] = calloc(nb, sizeof(**q));
	for (queued = 0; queued < nb && queued < (uint64_t)nw * pf; queued++)
		q[queued % nw][tail[queued % nw]++] = queued;
	while (k < count) {
		while (consumed < nb && done[consumed]) {
			consumed++;
			if (queued < nb) {
				q[queued % nw][tail[queued % nw]++] = queued;
				queued++;
			}
		}
		if (!left || head[w] == tail[w]) {
			uint64_t r = unit_rnd(rs) %
				     (1 + (uint64_t)slow * (nw - 1));

			w = r == 0 ? 0 : 1 + (unsigned)((r - 1) / slow);
			left = turn > 1 ? 1 + unit_rnd(rs) % (2 * turn - 1) : 1;
		}
		left--;
		for (i = 0; i < nw && head[w] == tail[w]; i++)
			w = (w + 1) % nw;
		for (i = 1; w == 0 && k >= stall && i < nw; i++)
			if (head[i] != tail[i])
				w = i;
		uint64_t b = q[w][head[w]], p = b * bs + off[w];

		pos[k++] = (uint32_t)p;
		if (++off[w] == bs || p + 1 == count) {
			done[b] = true;
			head[w]++;
			off[w] = 0;
		}
	}
	for (w = 0; w < nw; w++)
		free(q[w]);
	free(q);
	free(head);
	free(tail);
	free(off);
	free(done);
}

static inline void unit_simulate_stall(uint64_t count, unsigned nw,
				       unsigned bs, unsigned pf, unsigned slow,
				       uint64_t stall, uint64_t *rs,
				       uint32_t *pos)
{
	unit_simulate_turns(count, nw, bs, pf, slow, stall, 1, rs, pos);
}

static inline void unit_simulate(uint64_t count, unsigned nw, unsigned bs,
				 unsigned pf, unsigned slow, uint64_t *rs,
				 uint32_t *pos)
{
	unit_simulate_stall(count, nw, bs, pf, slow, UINT64_MAX, rs, pos);
}

#endif
