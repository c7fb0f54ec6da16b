/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Seed discovery (issue #8): find the 32-bit seed of an unseeded torch
 * RandomSampler, or of a DistributedSampler whose seed nobody gave, from the
 * first sample indices its loaders opened in an epoch.
 *
 * DataLoader(shuffle=True) without a generator seeds, every epoch, a fresh
 * torch.Generator with a 64-bit value drawn from the global RNG; MT19937 keeps
 * only its low 32 bits (shared/SAMPLERS.md, sections 1 and 3), and the epoch's
 * order is randperm(n) drawn first from that generator.  For
 * n < DSFS_SAMPLER_TORCH_MAX_N randperm's step i swaps a[i] with
 * a[i + o_i % (n - i)], o_i being the i-th MT19937 output, so
 * randperm(n)[0] = o_0 % n: the first output alone decides the first index.
 * o_0 after init_genrand(s) needs state words 0, 1 and 397 of the
 * initialisation only (397 multiply-xor steps instead of 624 + a 624-word
 * twist).
 *
 * The search runs the seeds of [first, end) through that filter (is
 * o_0 % n one of the first `heads` observed indices?), then confirms each
 * survivor on the first `nobserved + window` positions of its permutation
 * (dsfs_discover_prefix(), O(397 + len)): every observed index must lie in
 * them, in any order, which is how W workers interleave the first batches.
 *
 * A DistributedSampler's rank r reads positions r, r + world, ...: its
 * first sample is randperm(n)[r], which is r + o_r % (n - r) unless an
 * earlier swap moved another value to position r + o_r % (n - r) (about
 * r / n of the seeds, missed).  o_r needs words r, r + 1 and r + 397, all of
 * the initial state for r <= DSFS_DISCOVER_MAX_POS, so the filter probes
 * the first local rank's position as cheaply as position 0, and one pass
 * can probe both (sampler unknown).  Confirmation then looks at the local
 * ranks' positions only.
 *
 * Threads: dsfs_discover_start() returns at once; the search runs on its own
 * worker threads (at idle priority by default) that share an atomic chunk
 * cursor over the range and stop as soon as one of them confirms a seed or
 * the caller cancels.  One caller thread (or several, serialised by the
 * caller) owns a struct dsfs_discover: done(), wait(), result() and cancel()
 * may be called from any thread while it runs; free() must be called once,
 * by the owner, never from on_done.
 *
 * Cost: 397 steps of shift, xor, multiply, add per seed, 16 seeds a vector
 * with AVX-512.  Measured with bench/discover (bench/README.md) per busy core
 * of the 2-vCPU AMD EPYC build machine: AVX-512 1.0e8 seeds/s (the whole
 * 2^32 range in 43 s), AVX2 4.9e7 (88 s), portable vectors 1.0e7 (7 min),
 * scalar 1.15e6 (62 min); threads divide these times by the cores they get.
 */
#ifndef DSFS_DISCOVER_H
#define DSFS_DISCOVER_H

#include <stdbool.h>
#include <stdint.h>

/* randperm(n)[0] must be one of observed[0 .. heads): at most this many. */
#define DSFS_DISCOVER_MAX_HEADS 64
/* At most this many observed indices, and this window beyond them. */
#define DSFS_DISCOVER_MAX_OBSERVED 1024
#define DSFS_DISCOVER_MAX_WINDOW 65536
#define DSFS_DISCOVER_MAX_THREADS 1024
/*
 * A probe at position pos needs init words up to pos + 397 < 624 (the first
 * 227 outputs come from the initial state alone): DistributedSampler ranks
 * up to this one can be searched.
 */
#define DSFS_DISCOVER_MAX_POS 226
#define DSFS_DISCOVER_MAX_PROBES 2
/* The seed space: [0, 2^32). */
#define DSFS_DISCOVER_SEEDS (UINT64_C(1) << 32)

/* How the first-output filter is computed; every path finds the same seeds. */
enum dsfs_discover_path {
	DSFS_DISCOVER_AUTO,   /* the fastest this CPU runs */
	DSFS_DISCOVER_SCALAR, /* one seed at a time: the reference, ~0.9 us */
	DSFS_DISCOVER_VECTOR, /* portable: 4-lane vectors in the baseline ISA */
	DSFS_DISCOVER_AVX2,   /* x86-64 with AVX2: 8 lanes */
	DSFS_DISCOVER_AVX512, /* x86-64 with AVX-512F: 16 lanes */
};

/* How the worker threads yield the CPU to the loader. */
enum dsfs_discover_prio {
	DSFS_DISCOVER_IDLE,   /* SCHED_IDLE; nice 19 where that is refused */
	DSFS_DISCOVER_NICE,   /* nice 19 */
	DSFS_DISCOVER_NORMAL, /* the caller's priority (benchmarks) */
};

/* Which sampler's order the opens follow (a set of them in a cfg). */
enum dsfs_discover_model {
	/* RandomSampler: the loader reads randperm(n) in order. */
	DSFS_DISCOVER_RANDOM = 1,
	/*
	 * DistributedSampler(seed=S) after set_epoch(e): randperm(n) from a
	 * generator seeded S + e; rank r reads its positions r, r + world,
	 * r + 2 world, ...; the loaders seen are ranks rank_first ..
	 * rank_last.  The seed found is the low 32 bits of S + e.
	 */
	DSFS_DISCOVER_DISTRIBUTED = 2,
};

struct dsfs_discover_cfg {
	uint32_t n; /* dataset size: 2 <= n < DSFS_SAMPLER_TORCH_MAX_N */
	/*
	 * The models searched (0: RANDOM).  With DISTRIBUTED: 1 <= world,
	 * rank_first <= rank_last < world, rank_first <= MAX_POS.
	 */
	unsigned models;
	uint32_t world, rank_first, rank_last;
	/*
	 * The first sample indices opened in the epoch, in open order, each
	 * < n, no duplicates; copied by start().  1 .. MAX_OBSERVED.
	 */
	const uint32_t *observed;
	uint32_t nobserved;
	/*
	 * randperm(n)[0] (DISTRIBUTED: randperm(n)[rank_first], that rank's
	 * first) is one of observed[0 .. heads): with W workers the first
	 * sample of the epoch is among the first W opens.  1 ..
	 * min(nobserved, MAX_HEADS); 0 means that minimum.  The filter passes
	 * heads / n of the seeds per model.
	 */
	uint32_t heads;
	/*
	 * How far out of order the opens may be: every observed index must be
	 * one of the first nobserved + window positions of the permutation
	 * (capped at n; DISTRIBUTED: of the local ranks' positions among the
	 * first world * (nobserved + window)).  With W workers and batch size B, (W - 1) * B covers
	 * the first batch of every worker.  0 .. MAX_WINDOW.
	 */
	uint32_t window;
	uint64_t first, end; /* seeds [first, end): first < end <= 2^32 */
	unsigned threads;    /* 0: the online CPUs; at most MAX_THREADS */
	enum dsfs_discover_prio prio;
	enum dsfs_discover_path path; /* AUTO but in tests and benchmarks */
	/*
	 * Called once, from the last worker thread, when the search ends
	 * (found, exhausted or cancelled), after done() turned true.  It must
	 * not call dsfs_discover_free() or dsfs_discover_wait(); it may call
	 * result() and wake the owner.  May be NULL.
	 */
	void (*on_done)(void *arg);
	void *arg;
};

struct dsfs_discover_result {
	/*
	 * 0: `seed` confirmed; -ENOENT: no seed in the range matched;
	 * -ECANCELED: cancelled first; -EINPROGRESS: still running.
	 */
	int status;
	uint32_t seed;	     /* the effective (low 32 bits) seed, status 0 */
	enum dsfs_discover_model model; /* whose order it is, status 0 */
	uint64_t tested;     /* seeds run through the filter so far */
	uint64_t candidates; /* of them, passed the filter (confirm tried) */
	double seconds;	     /* since start(); frozen when the search ends */
	enum dsfs_discover_path path; /* the path used (never AUTO) */
};

struct dsfs_discover;

/*
 * Check cfg, copy what it points to and start cfg->threads workers; returns
 * without waiting for them.  0 with *out set; -EINVAL (a field out of its
 * range, an observed index >= n or repeated), -EOPNOTSUPP (a forced path
 * this CPU lacks), -ENOMEM, or pthread_create's error (*out is then NULL).
 * Cost: O(nobserved + threads) plus a 256 KiB buffer per thread.
 */
int dsfs_discover_start(const struct dsfs_discover_cfg *cfg,
			struct dsfs_discover **out);

/* Whether the search has ended (then result() is final).  O(1), no lock. */
bool dsfs_discover_done(const struct dsfs_discover *d);

/*
 * Block until the search ends, at most timeout_ms (< 0: no limit): 0 when it
 * has ended, -ETIMEDOUT otherwise.
 */
int dsfs_discover_wait(struct dsfs_discover *d, int timeout_ms);

/*
 * Ask the workers to stop; returns at once.  They notice within one chunk
 * (about a millisecond; 10 ms on the scalar path); result() then says
 * -ECANCELED unless a seed was confirmed first.  Idempotent.
 */
void dsfs_discover_cancel(struct dsfs_discover *d);

/* Progress or outcome; any thread, O(1), no lock while running. */
void dsfs_discover_result(const struct dsfs_discover *d,
			  struct dsfs_discover_result *r);

/*
 * Cancel, join the workers and free; NULL: no-op.  Joining waits for each
 * worker to finish its chunk (see cancel()), which at idle priority on a
 * saturated machine can take much longer: a thread that must not block
 * (a FUSE request) should cancel() and free once done() is true or on_done
 * has been called.
 */
void dsfs_discover_free(struct dsfs_discover *d);

/*
 * Expected number of wrong seeds in cfg's range that would pass both the
 * filter and the confirmation, taking a wrong seed's permutation as
 * uniformly random: (end - first) * heads / n * prod_{k < m-1}
 * (len - 1 - k) / (n - 1 - k), with m = nobserved and len the confirmed
 * prefix.  Callers should observe more opens while it is above ~1e-3.
 * O(nobserved).
 */
double dsfs_discover_false_matches(const struct dsfs_discover_cfg *cfg);

/*
 * "A-B" (decimal) as the seed range [A, B): A < B <= 2^32, what the
 * discover_range= option and the tools take.  0, -EINVAL (syntax, empty
 * range) or -ERANGE (B > 2^32); *first and *end are set only on success.
 */
int dsfs_discover_parse_range(const char *s, uint64_t *first, uint64_t *end);

/* Synchronous building blocks, for tests, benchmarks and the tracker. */

/* "auto", "scalar", "vector", "avx2", "avx512"; NULL for an unknown value. */
const char *dsfs_discover_path_name(enum dsfs_discover_path path);
/* Whether this CPU runs the path (AUTO and the portable ones: always). */
bool dsfs_discover_path_supported(enum dsfs_discover_path path);

/*
 * The filter alone: writes to out (room for `count` seeds) the seeds s of
 * [first, first + count) for which pos + o_pos % (n - pos) is one of
 * heads[0 .. nheads), in increasing order, and their number to *nout
 * (pos = 0: randperm(n)[0]; otherwise randperm(n)[pos] but where an earlier
 * swap moved another value there, about pos / n of the seeds).
 * first + count <= 2^32, 1 <= nheads <= MAX_HEADS, pos <= MAX_POS,
 * 2 <= n < DSFS_SAMPLER_TORCH_MAX_N, pos < n: else -EINVAL; a path this CPU
 * lacks: -EOPNOTSUPP.  Single-threaded.
 */
int dsfs_discover_scan(enum dsfs_discover_path path, uint32_t n, uint32_t pos,
		       const uint32_t *heads, uint32_t nheads, uint32_t first,
		       uint32_t count, uint32_t *out, uint32_t *nout);

/*
 * The first len positions of randperm(n) drawn first from a generator
 * seeded with `seed` (torch.Generator().manual_seed(seed), seed's low 32
 * bits), into out[0 .. len).  len <= n < DSFS_SAMPLER_TORCH_MAX_N, else
 * -EINVAL; -ENOMEM.  O(397 + len) time for len <= 227, else O(624 + len),
 * with a map of about 40 bytes per position; from len >= n / 8 on, an array
 * of n instead (4n bytes, O(n)).  With len = n this is the whole epoch order.
 */
int dsfs_discover_prefix(uint32_t seed, uint32_t n, uint32_t len,
			 uint32_t *out);

#endif
