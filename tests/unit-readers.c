// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * unit-readers: prefetch/readers tells a program reading the data set out
 * of the plan's order from the loader's processes.  Its opens are left out
 * while another process follows (one a process on probation, then all once
 * judged), and never a loader's: DataLoader workers of their own, jumping
 * over each other's batches, new ones each epoch.  Nothing is left out
 * with no follower, nor for pid 0; a process per file is left out too.
 * Another program stays left out when an epoch begins, and a newcomer far
 * past the followers' spread is left out while new, unless it opens a run
 * (a worker of a loader with most of a small epoch in flight).  The next epoch's new
 * worker, opening samples the epoch ending passed unseen (pushed), is fed.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "readers.h"
#include "unit-check.h"

#define MS 1000000ULL
#define COUNT 4000	/* samples in an epoch */
#define SPAN 250	/* how far a process may move on */
#define NEAR 1000	/* how far past the others a new one may start */

static uint64_t front;	/* the furthest plan time placed */
static uint64_t at;	/* the loader's */
static uint64_t now = MS;

/* A plan time anywhere in the two epochs from the loader's place, as
 * another program's opens land: the next read of a sample the loader read
 * already is in the next epoch. */
static uint64_t anywhere(void)
{
	static uint64_t x = 88172645463325252ULL;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return at + x % (2 * COUNT);
}

/* One open of pid at plan time when (later: its read in the next epoch),
 * a millisecond after the last. */
static enum dsfs_reader_verdict note_later(struct dsfs_readers *rs,
					   uint32_t pid, uint64_t when,
					   uint64_t later)
{
	struct dsfs_reader_open o = { .when = when, .later = later,
				      .span = SPAN, .near = NEAR };
	enum dsfs_reader_verdict v;

	now += MS;
	v = dsfs_readers_note(rs, pid, &o, now);
	/* A tracker places a fed open at most a window (a quarter of the
	 * epoch) past its frontier. */
	if (v == DSFS_READER_FEED && when > front && when - front < COUNT / 4)
		front = when;
	return v;
}

static enum dsfs_reader_verdict note(struct dsfs_readers *rs, uint32_t pid,
				     uint64_t when)
{
	return note_later(rs, pid, when, DSFS_READERS_NOWHERE);
}

/* n opens of pid at when, when + step, ... (step 0: anywhere); how many
 * were left out. */
static unsigned opens_at(struct dsfs_readers *rs, uint32_t pid,
			 uint64_t when, uint64_t step, unsigned n)
{
	unsigned left = 0, i;

	for (i = 0; i < n; i++)
		left += note(rs, pid, step ? when + i * step : anywhere()) !=
			DSFS_READER_FEED;
	return left;
}

/* The loader's next n opens, a position on each. */
static unsigned loader(struct dsfs_readers *rs, uint32_t pid, unsigned n)
{
	unsigned left = opens_at(rs, pid, at + 1, 1, n);

	at += n;
	return left;
}

static void reset(struct dsfs_readers *rs)
{
	memset(rs, 0, sizeof(*rs));
	dsfs_readers_clear(rs);
	front = at = 0;
}

/* The processes that exist, for `alive`: all but the ended ones. */
static uint32_t ended_pid, ended_too;

static bool alive(uint32_t pid)
{
	return pid != ended_pid && pid != ended_too;
}

/* A loader's workers end (a break out of an epoch, no persistent
 * workers) and the next epoch's start at once, at its start, far past
 * where the old ones were: fed, once the old ones are known gone. */
static void test_followers_ended(void)
{
	struct dsfs_readers rs;

	reset(&rs);
	rs.alive = alive;
	ended_pid = 0;
	CHECK(!loader(&rs, 100, 200));
	/* Still there: a newcomer far ahead is left out (unless it opens a
	 * run: test_newcomer_run). */
	CHECK(opens_at(&rs, 101, at + COUNT / 2, DSFS_READERS_RUN + 1, 4) ==
	      4);
	ended_pid = 100;
	CHECK(!opens_at(&rs, 102, at + COUNT / 2, 1, 50));
	CHECK(rs.alive == alive); /* kept across a clear */
	dsfs_readers_clear(&rs);
	CHECK(rs.alive == alive);
}

/*
 * The same, with the next epoch's worker placing three of its first eight
 * opens by chance (it follows, just) and then none: as its share of
 * placed opens falls to a quarter it is not judged another program by
 * the ended workers, which it was not checked against while it followed.
 */
static void test_followers_ended_chance(void)
{
	struct dsfs_readers rs;

	reset(&rs);
	rs.alive = alive;
	ended_pid = 0;
	CHECK(!loader(&rs, 100, 200));
	ended_pid = 100;
	CHECK(!opens_at(&rs, 102, at + COUNT / 2, 10, 3));
	CHECK(!opens_at(&rs, 102, at + COUNT / 2 + 700, 700, 12));
	ended_pid = 0;
}

/*
 * A job ends and the next starts within a second (t-ranks: the same job
 * run again on the mount): its processes open samples anywhere in the
 * plan, an eighth of them near where the ended job's were.  None is left
 * out: the ended processes follow no more, wherever an open lands.
 */
static void test_next_job(void)
{
	struct dsfs_readers rs;

	reset(&rs);
	rs.alive = alive;
	ended_pid = ended_too = 0;
	CHECK(!loader(&rs, 100, 200));
	CHECK(!loader(&rs, 101, 200));
	ended_pid = 100;
	CHECK(!loader(&rs, 101, 8)); /* the last batch */
	ended_too = 101;
	CHECK(!opens_at(&rs, 300, 0, 0, 64));
	CHECK(!opens_at(&rs, 301, 0, 0, 64));
	ended_pid = ended_too = 0;
}

/*
 * A new job starts with no loader before it: its first process places
 * three of its first eight opens by chance (in an epoch of a few hundred
 * samples one in six lands within span of the last), then jumps about.
 * That is not following closely enough to judge the job's next process,
 * whose opens land far from it, another program.
 */
static void test_chance_follower(void)
{
	struct dsfs_readers rs;
	unsigned i;

	reset(&rs);
	CHECK(!opens_at(&rs, 300, 1, 10, 3));
	CHECK(!opens_at(&rs, 300, 2000, 700, 5));
	for (i = 0; i < 16; i++)
		CHECK(note(&rs, 301, 6000 + i * 600) == DSFS_READER_FEED);
}

/* A loader (pid 100) and tar (pid 200, its opens anywhere in the plan)
 * taking turns: nearly all of tar's opens are left out, it is said to be
 * another program once; the loader's never. */
static void test_tar_beside_loader(void)
{
	struct dsfs_readers rs;
	unsigned i, left = 0, news = 0;
	enum dsfs_reader_verdict v;

	reset(&rs);
	CHECK(!loader(&rs, 100, DSFS_READERS_JUDGE));
	for (i = 0; i < 1000; i++) {
		CHECK(!loader(&rs, 100, 1));
		v = note(&rs, 200, anywhere());
		left += v != DSFS_READER_FEED;
		news += v == DSFS_READER_LEAVE_NEW;
	}
	CHECK(left >= 980);
	CHECK(news == 1);
	/* An open of tar's that lands right changes nothing. */
	CHECK(opens_at(&rs, 200, at + 1, 1, 1) == 1);
}

/* With no other process following (a wrong seed; a new job once the old
 * one is gone) nothing is left out. */
static void test_no_follower(void)
{
	struct dsfs_readers rs;

	reset(&rs);
	CHECK(!opens_at(&rs, 300, 0, 0, 500));
	CHECK(!opens_at(&rs, 301, 0, 0, 500));
	/* A loader follows (once judged), then ends: its last placed open
	 * goes stale after DSFS_READERS_FOLLOW_NS. */
	CHECK(!loader(&rs, 100, 50));
	CHECK(opens_at(&rs, 300, 0, 0, 100) == 100);
	now += DSFS_READERS_FOLLOW_NS;
	CHECK(!opens_at(&rs, 300, 0, 0, 100));
	/* A process that itself misses on does not count. */
	CHECK(!opens_at(&rs, 301, 0, 0, 100));
	/* Nor one not yet judged. */
	CHECK(!loader(&rs, 101, DSFS_READERS_JUDGE - 1));
	CHECK(!opens_at(&rs, 302, 0, 0, 100));
	/* pid 0 (not known) is always fed. */
	CHECK(!loader(&rs, 100, 10));
	CHECK(!opens_at(&rs, 0, 0, 0, 100));
}

/* A DataLoader of `workers` workers of batch 64, with push (every 8th
 * open reported): worker w reads batches w, w + workers, ...; the workers
 * run at once, each reporting in turn; a new set of workers each epoch
 * (no persistent_workers), the old ones fresh in the table, so that a new
 * worker starts up to workers - 1 batches past them.  How many opens were
 * left out in 20 epochs. */
static unsigned dataloader(unsigned workers)
{
	struct dsfs_readers rs;
	unsigned epoch, batch, w, i, left = 0;

	reset(&rs);
	for (epoch = 0; epoch < 20; epoch++)
		for (batch = 0; batch < COUNT / 64; batch += workers)
			for (i = 0; i < 64; i += 8)
				for (w = 0; w < workers &&
					    batch + w < COUNT / 64; w++)
					left += note(&rs,
						     1000 + epoch * workers + w,
						     (uint64_t)epoch * COUNT +
						     (batch + w) * 64 + i) !=
						DSFS_READER_FEED;
	return left;
}

/* Workers whose jumps between their batches fit the span, and workers
 * whose jumps do not (fed: they follow), their new sets starting up to
 * 11 batches (704 positions) past the old ones: nothing left out. */
static void test_workers(void)
{
	struct dsfs_readers rs;

	CHECK(dataloader(2) == 0);
	CHECK(dataloader(12) == 0);
	/* A process whose opens go back is not placed (its first, behind
	 * the loader, is: a place the loader passed unseen); fed while new
	 * (it cannot drag the frontier on), then judged. */
	reset(&rs);
	CHECK(!loader(&rs, 100, 40));
	CHECK(opens_at(&rs, 200, at - 1, -1ULL, 20) ==
	      20 - (DSFS_READERS_JUDGE - 1));
}

/* A process judged another program that starts following (it was a
 * worker after all) is fed again once more than a quarter of its last
 * opens are placed. */
static void test_recovers(void)
{
	struct dsfs_readers rs;
	unsigned i, fed = 0;

	reset(&rs);
	for (i = 0; i < 100; i++) {
		loader(&rs, 100, 1);
		note(&rs, 200, anywhere());
	}
	CHECK(note(&rs, 200, anywhere()) != DSFS_READER_FEED);
	for (i = 0; i < 32; i++) {
		loader(&rs, 100, 1);
		fed += note(&rs, 200, at + 1) == DSFS_READER_FEED;
	}
	CHECK(fed >= 23);
}

/* More processes than slots: a process per file (find -exec cat), one
 * open each, anywhere.  The loader, seen all along, keeps its slot and
 * is never left out; most one-shot opens are left out (landing more than
 * NEAR past the loader: 7 in 8 here), and tar beside them is judged. */
static void test_many(void)
{
	struct dsfs_readers rs;
	unsigned i, left = 0, shots = 0;

	reset(&rs);
	for (i = 0; i < 10000; i++) {
		left += loader(&rs, 100, 1);
		shots += note(&rs, 5000 + i, anywhere()) != DSFS_READER_FEED;
	}
	CHECK(left == 0);
	CHECK(shots >= 8000);
	CHECK(opens_at(&rs, 200, 0, 0, 100) >= 90);
	CHECK(!loader(&rs, 100, 1));
	/* Cleared: every process is new again, and with no judged follower
	 * nothing is left out. */
	dsfs_readers_clear(&rs);
	CHECK(!opens_at(&rs, 200, 0, 0, 100));
}

/* A process judged another program stays left out when an epoch begins,
 * while the loader's new workers are fed and judged afresh; once no
 * process has followed for DSFS_READERS_FOLLOW_NS (the loader ended), it
 * is fed again.  One judged in the loader's last second is forgotten: it
 * may be the next job, started as the loader ended. */
static void test_epoch_change(void)
{
	struct dsfs_readers rs;
	unsigned i;

	reset(&rs);
	for (i = 0; i < 100; i++) {
		loader(&rs, 100, 1);
		note(&rs, 200, anywhere());
	}
	now += DSFS_READERS_FOLLOW_NS;
	for (i = 0; i < 100; i++) {
		loader(&rs, 100, 1);
		note(&rs, 200, anywhere());
		note(&rs, 201, anywhere());
	}
	CHECK(note(&rs, 201, anywhere()) != DSFS_READER_FEED);
	dsfs_readers_new_epoch(&rs);
	CHECK(!opens_at(&rs, 201, 0, 0, 1));
	CHECK(opens_at(&rs, 200, 0, 0, 20) == 20);
	CHECK(!loader(&rs, 101, 2 * DSFS_READERS_JUDGE));
	CHECK(opens_at(&rs, 200, 0, 0, 20) == 20);
	now += 2 * DSFS_READERS_FOLLOW_NS;
	CHECK(!opens_at(&rs, 200, 0, 0, 20));
	/* With no follower at the epoch's start, nothing is kept out. */
	reset(&rs);
	CHECK(!opens_at(&rs, 200, 0, 0, 20));
	dsfs_readers_new_epoch(&rs);
	CHECK(!opens_at(&rs, 200, 0, 0, 20));
}

/* Two workers (pids 100 and 101) `apart` positions apart, each moving on
 * `step` an open, 2 * JUDGE opens each: both fed. */
static void two_workers(struct dsfs_readers *rs, uint64_t apart,
			uint64_t step)
{
	unsigned i;

	for (i = 0; i < 2 * DSFS_READERS_JUDGE; i++) {
		CHECK(note(rs, 100, at + 1) == DSFS_READER_FEED);
		CHECK(note(rs, 101, at + 1 + apart) == DSFS_READER_FEED);
		at += step;
	}
}

/* A newcomer is near the followers within twice their spread (at least
 * the span), not the whole window: two workers a batch of 64 apart, then
 * a new process 600 past them, moving on by more than a run's step, is
 * left out while new (it would drag the frontier), one starting two
 * batches past them is fed. */
static void test_newcomer_margin(void)
{
	struct dsfs_readers rs;

	reset(&rs);
	two_workers(&rs, 64, 8);
	CHECK(opens_at(&rs, 300, at + 600, DSFS_READERS_RUN + 1,
		       DSFS_READERS_JUDGE - 1) == DSFS_READERS_JUDGE - 1);
	CHECK(!opens_at(&rs, 301, at + 64 + 128, 8, DSFS_READERS_JUDGE));
}

/*
 * A loader with most of a small epoch in flight: its workers start their
 * batches far apart, a new one far past the others.  Its first open is
 * left out, then each next sample of its batch (a run: at most
 * DSFS_READERS_RUN on) is fed, and it follows; a program opening samples
 * anywhere beside them is still left out, every open once judged (its
 * first few land near the followers or behind them by chance).
 */
static void test_newcomer_run(void)
{
	struct dsfs_readers rs;

	reset(&rs);
	two_workers(&rs, 128, 1);
	CHECK(opens_at(&rs, 300, at + 2000, 1, 3 * DSFS_READERS_JUDGE) == 1);
	opens_at(&rs, 301, 0, 0, DSFS_READERS_JUDGE);
	CHECK(opens_at(&rs, 301, 0, 0, 3 * DSFS_READERS_JUDGE) ==
	      3 * DSFS_READERS_JUDGE);
}

/*
 * An epoch ends with push: the next epoch's new worker opens its batch
 * (every 8th sample reaches dsfs) while the old workers read the last
 * samples of this one.  A sample this epoch read through dsfs has its next
 * read in the next epoch; one it passed unseen (pushed) has it anywhere in
 * this epoch, behind the loader.  The worker is fed, never judged another
 * program; tar, its opens as unseen anywhere, still is.
 */
static void test_pushed_epoch_end(void)
{
	struct dsfs_readers rs;
	unsigned i, left = 0, news = 0;
	enum dsfs_reader_verdict v;
	uint64_t later;

	reset(&rs);
	CHECK(!loader(&rs, 100, COUNT - 64));
	for (i = 0; i < 64; i++) {
		if (i % 8 == 0)
			CHECK(!loader(&rs, 100, 8));
		later = COUNT + 8 * i;
		v = note_later(&rs, 101, i % 8 ? anywhere() % at : later,
			       later);
		left += v != DSFS_READER_FEED;
		news += v == DSFS_READER_LEAVE_NEW;
	}
	CHECK(left == 0 && news == 0);
	reset(&rs);
	left = news = 0;
	CHECK(!loader(&rs, 100, COUNT - 256));
	for (i = 0; i < 256; i++) {
		CHECK(!loader(&rs, 100, 1));
		v = note_later(&rs, 200, anywhere() % at,
			       COUNT + anywhere() % COUNT);
		left += v != DSFS_READER_FEED;
		news += v == DSFS_READER_LEAVE_NEW;
	}
	CHECK(left >= 230 && news == 1);
}

int main(void)
{
	test_epoch_change();
	test_newcomer_margin();
	test_newcomer_run();
	test_tar_beside_loader();
	test_no_follower();
	test_followers_ended();
	test_followers_ended_chance();
	test_next_job();
	test_chance_follower();
	test_workers();
	test_recovers();
	test_many();
	test_pushed_epoch_end();
	return UNIT_DONE();
}
