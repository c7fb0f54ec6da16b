// SPDX-License-Identifier: GPL-2.0-or-later
/* unit-seqpass: a pass over the data set in index order (one process, a
 * DataLoader's workers, reports a little out of order, a second pass) is
 * found and fetched ahead of; a shuffled loader, a DistributedSampler
 * rank's strided share and random opens never turn it on; a shuffled
 * epoch after a pass turns it off within a history. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqpass.h"
#include "unit-check.h"
#include "unit-loader.h"

#define N 20000u
#define AHEAD 256u

/* A simulated fetch beside the pass: after each open, what the pass asks
 * for is fetched at once (fetched[i]), and each open is scored: its sample
 * fetched before it was opened, or not. */
struct sim {
	struct dsfs_seqpass q;
	bool fetched[N];
	uint64_t opens, ahead_of, on_changes, fetches;
	uint64_t on_at;		/* opens when it first turned on; 0: never */
	uint64_t ahead;		/* how far the fetch goes ahead */
	uint64_t foreign;	/* fetches of samples of ranks not local
				   (q's world, rank_first..rank_last) */
};

static void sim_open(struct sim *m, uint32_t pid, uint64_t idx)
{
	uint64_t i;

	m->opens++;
	if (m->fetched[idx])
		m->ahead_of++;
	m->fetched[idx] = true; /* the reader's own read caches it */
	if (dsfs_seqpass_access(&m->q, pid, idx)) {
		m->on_changes++;
		if (m->q.on && !m->on_at)
			m->on_at = m->opens;
	}
	while (dsfs_seqpass_peek(&m->q, m->ahead, N, &i)) {
		CHECK(i < N);
		m->fetched[i] = true;
		m->fetches++;
		if (m->q.world > 1 && (i % m->q.world < m->q.rank_first ||
				       i % m->q.world > m->q.rank_last))
			m->foreign++;
		dsfs_seqpass_take(&m->q);
	}
}

static struct sim *sim_new(void)
{
	struct sim *m = calloc(1, sizeof(struct sim));

	m->ahead = AHEAD;
	return m;
}

static uint64_t rs = 88172645463325252ull;

static void shuffle(uint32_t *a, uint32_t n)
{
	uint32_t i, j, t;

	for (i = 0; i < n; i++)
		a[i] = i;
	for (i = n - 1; i > 0; i--) {
		j = (uint32_t)(unit_rnd(&rs) % (i + 1));
		t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

/*
 * A DataLoader over order[0..n) with w workers (pids base+k) and batches of
 * bs, as unit-loader.h simulates it (prefetch factor 2, workers taking
 * turns at random, each for 1 to 2 * turn - 1 opens): batch k is worker
 * k mod w's.
 */
static void loader_turns(struct sim *m, const uint32_t *order, uint32_t n,
			 uint32_t w, uint32_t bs, uint32_t base, unsigned turn)
{
	uint32_t *pos = malloc(n * sizeof(*pos)), k;

	unit_simulate_turns(n, w, bs, 2, 1, UINT64_MAX, turn, &rs, pos);
	for (k = 0; k < n; k++)
		sim_open(m, base + (pos[k] / bs) % w, order[pos[k]]);
	free(pos);
}

static void loader(struct sim *m, const uint32_t *order, uint32_t n,
		   uint32_t w, uint32_t bs, uint32_t base)
{
	loader_turns(m, order, n, w, bs, base, 1);
}

static uint32_t *identity(void)
{
	uint32_t *a = malloc(N * sizeof(*a)), i;

	for (i = 0; i < N; i++)
		a[i] = i;
	return a;
}

/* One process reads every sample in order: on within a history, never off,
 * all but its first opens fetched ahead, each sample once; what it fetched
 * stays within `ahead` of the reader (which may be all of the data set). */
static void test_one_process(uint64_t ahead)
{
	struct sim *m = sim_new();
	uint64_t i;

	m->ahead = ahead;
	for (i = 0; i < N; i++) {
		sim_open(m, 100, i);
		CHECK(!m->q.on || m->q.next <= i + 1 + ahead + 1);
	}
	printf("one process, %llu ahead: on at open %llu, %llu of %llu fetched ahead, %llu fetches, %llu changes\n",
	       (unsigned long long)ahead,
	       (unsigned long long)m->on_at, (unsigned long long)m->ahead_of,
	       (unsigned long long)m->opens, (unsigned long long)m->fetches,
	       (unsigned long long)m->on_changes);
	CHECK(m->on_at && m->on_at <= DSFS_SEQPASS_HISTORY);
	CHECK(m->on_changes == 1);
	CHECK(m->ahead_of >= N - DSFS_SEQPASS_HISTORY);
	CHECK(m->fetches <= N);
	free(m);
}

/* A DataLoader with shuffle=False: 4 workers of 32, 8 of 64, 16 of 32,
 * each opening one sample a turn or runs of up to 7: each sample is
 * fetched about once (the pass is not taken to begin again when its
 * furthest worker is not among the last 32 opens). */
static void test_workers(uint32_t w, uint32_t bs, unsigned turn)
{
	struct sim *m = sim_new();
	uint32_t *order = identity();

	loader_turns(m, order, N, w, bs, 200, turn);
	printf("%u workers of %u, turns of %u: on at open %llu, %llu of %llu fetched ahead, %llu fetches, %llu changes\n",
	       w, bs, turn, (unsigned long long)m->on_at,
	       (unsigned long long)m->ahead_of, (unsigned long long)m->opens,
	       (unsigned long long)m->fetches,
	       (unsigned long long)m->on_changes);
	CHECK(m->on_at && m->on_at <= 2 * DSFS_SEQPASS_HISTORY);
	CHECK(m->on_changes == 1);
	CHECK(m->ahead_of >= N - N / 50);
	/* The last workers' opens, after the furthest one's end, may be
	 * taken for a new pass: what it fetches again is cached. */
	CHECK(m->fetches <= N + N / 20);
	free(order);
	free(m);
}

/* Reports out of order: every 5th pair of neighbours swapped. */
static void test_reordered(void)
{
	struct sim *m = sim_new();
	uint32_t *order = identity(), i, t;

	for (i = 0; i + 1 < N; i += 10) {
		t = order[i];
		order[i] = order[i + 1];
		order[i + 1] = t;
	}
	for (i = 0; i < N; i++)
		sim_open(m, 300, order[i]);
	printf("reordered: %llu of %llu fetched ahead, %llu changes\n",
	       (unsigned long long)m->ahead_of, (unsigned long long)m->opens,
	       (unsigned long long)m->on_changes);
	CHECK(m->on_changes == 1);
	CHECK(m->ahead_of >= N - N / 50);
	free(order);
	free(m);
}

/* Never on: a shuffled DataLoader (4 workers of 32), a DistributedSampler
 * rank's share in index order (every 4th sample) where the plan has no
 * world, random single opens. */
static void test_never(void)
{
	struct sim *m = sim_new();
	uint32_t *order = malloc(N * sizeof(*order)), i;

	shuffle(order, N);
	loader(m, order, N, 4, 32, 400);
	CHECK(m->on_changes == 0);
	for (i = 0; i < N / 4; i++)
		order[i] = 4 * i + 1;
	loader(m, order, N / 4, 2, 16, 500);
	CHECK(m->on_changes == 0);
	for (i = 0; i < N; i++)
		sim_open(m, 600 + (uint32_t)(unit_rnd(&rs) % 3),
			 unit_rnd(&rs) % N);
	CHECK(m->on_changes == 0);
	printf("never: %llu opens, %llu fetches\n",
	       (unsigned long long)m->opens, (unsigned long long)m->fetches);
	CHECK(m->fetches == 0);
	free(order);
	free(m);
}

/*
 * A DistributedSampler(shuffle=False) of `world` ranks, first..last of
 * them local, each with a DataLoader of 2 workers of 16 (turns of up to
 * 2 * turn - 1 opens), the ranks' opens interleaved at random: each rank
 * reads r, r + world, ... and, padded as torch pads, the start again.
 * On; all but a few of the local ranks' samples fetched ahead of them,
 * each about once, and no other rank's.
 */
static void test_distributed(uint32_t world, uint32_t first, uint32_t last,
			     unsigned turn)
{
	struct sim *m = sim_new();
	uint32_t nl = last - first + 1, per = (N + world - 1) / world;
	uint32_t **pos = calloc(nl, sizeof(*pos)), *at = calloc(nl, 4), r, k;
	uint64_t left = (uint64_t)nl * per;

	dsfs_seqpass_ranks(&m->q, world, first, last);
	for (r = 0; r < nl; r++) {
		pos[r] = malloc(per * sizeof(**pos));
		unit_simulate_turns(per, 2, 16, 2, 1, UINT64_MAX, turn, &rs,
				    pos[r]);
	}
	while (left) {
		r = (uint32_t)(unit_rnd(&rs) % nl);
		if (at[r] == per)
			continue;
		k = pos[r][at[r]++];
		left--;
		/* position k of rank first + r: sample r + k * world, past
		 * the end the start again (padding) */
		sim_open(m, 2000 + 16 * r + (k / 16) % 2,
			 ((uint64_t)first + r + (uint64_t)k * world) % N);
	}
	printf("distributed, world %u, ranks %u-%u, turns of %u: on at open %llu, %llu of %llu fetched ahead, %llu fetches, %llu of other ranks\n",
	       world, first, last, 2 * turn - 1,
	       (unsigned long long)m->on_at, (unsigned long long)m->ahead_of,
	       (unsigned long long)m->opens, (unsigned long long)m->fetches,
	       (unsigned long long)m->foreign);
	CHECK(m->on_at && m->on_at <= 2 * DSFS_SEQPASS_HISTORY);
	CHECK(m->ahead_of >= m->opens - m->opens / 50);
	CHECK(m->fetches <= m->opens + m->opens / 20);
	CHECK(m->foreign == 0);
	for (r = 0; r < nl; r++)
		free(pos[r]);
	free(pos);
	free(at);
	free(m);
}

/* A plain pass (one DataLoader over every sample) on a mount whose plan
 * is distributed: read whole, other ranks' samples too. */
static void test_distributed_whole(void)
{
	struct sim *m = sim_new();
	uint32_t *order = identity();

	dsfs_seqpass_ranks(&m->q, 4, 1, 1);
	loader(m, order, N, 4, 32, 2100);
	printf("whole pass, world 4, rank 1: %llu of %llu fetched ahead, %llu of other ranks\n",
	       (unsigned long long)m->ahead_of, (unsigned long long)m->opens,
	       (unsigned long long)m->foreign);
	CHECK(m->ahead_of >= N - N / 50);
	CHECK(m->foreign >= N / 2);
	free(order);
	free(m);
}

/* A header pass, then a shuffled epoch: off within a history of the
 * epoch's opens, and nothing fetched after that; then a second pass is
 * found again and fetched from its start. */
static void test_then_shuffled(void)
{
	struct sim *m = sim_new();
	uint32_t *order = malloc(N * sizeof(*order)), i;
	uint64_t at, fetches, ahead;

	for (i = 0; i < N / 2; i++)
		sim_open(m, 700, i);
	CHECK(m->q.on);
	shuffle(order, N);
	at = m->opens;
	for (i = 0; i < DSFS_SEQPASS_HISTORY && m->q.on; i++)
		sim_open(m, 800 + i % 4, order[i]);
	CHECK(!m->q.on);
	printf("then shuffled: off after %llu opens\n",
	       (unsigned long long)(m->opens - at));
	fetches = m->fetches;
	loader(m, order, N, 4, 32, 800);
	CHECK(m->fetches == fetches);
	CHECK(!m->q.on);
	/* Validation passes, the second from the start again. */
	memset(m->fetched, 0, sizeof(m->fetched));
	for (i = 0; i < N; i++)
		sim_open(m, 900, i);
	memset(m->fetched, 0, sizeof(m->fetched));
	ahead = m->ahead_of;
	for (i = 0; i < N; i++)
		sim_open(m, 901, i);
	printf("second pass: %llu of %u fetched ahead\n",
	       (unsigned long long)(m->ahead_of - ahead), N);
	CHECK(m->ahead_of - ahead >= N - N / 50);
	/* Twice over a part, [N/4, N/4 + N/8), the whole data set ahead. */
	m->ahead = 2 * N;
	for (i = N / 4; i < N / 4 + N / 8; i++)
		sim_open(m, 902, i);
	memset(m->fetched, 0, sizeof(m->fetched));
	ahead = m->ahead_of;
	fetches = m->fetches;
	for (i = N / 4; i < N / 4 + N / 8; i++)
		sim_open(m, 902, i);
	printf("a part again: %llu of %u fetched ahead, %llu fetches\n",
	       (unsigned long long)(m->ahead_of - ahead), N / 8,
	       (unsigned long long)(m->fetches - fetches));
	CHECK(m->ahead_of - ahead >= N / 8 - N / 50);
	CHECK(m->fetches - fetches <= N);
	free(order);
	free(m);
}

/* A refused fetch (the cache is full) stops the pass until the next open. */
static void test_blocked(void)
{
	struct sim *m = sim_new();
	uint64_t i, idx, fetches;

	for (i = 0; i < 64; i++)
		sim_open(m, 1000, i);
	CHECK(m->q.on);
	m->q.blocked = true;
	m->q.front += 16; /* room again */
	CHECK(!dsfs_seqpass_peek(&m->q, AHEAD, N, &idx));
	CHECK(!dsfs_seqpass_wants(&m->q, AHEAD, N, 16));
	fetches = m->fetches;
	sim_open(m, 1000, 64);
	CHECK(!m->q.blocked);
	CHECK(m->fetches > fetches);
	free(m);
}

int main(void)
{
	test_one_process(AHEAD);
	test_one_process(4 * N);
	test_workers(4, 32, 1);
	test_workers(8, 64, 1);
	test_workers(8, 64, 4);
	test_workers(16, 32, 4);
	test_reordered();
	test_never();
	test_then_shuffled();
	test_blocked();
	test_distributed(4, 0, 3, 1);
	test_distributed(8, 0, 7, 4);
	test_distributed(4, 2, 3, 1);
	test_distributed(8, 3, 3, 4);
	test_distributed_whole();
	return UNIT_DONE();
}
