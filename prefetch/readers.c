// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which processes follow the plan (see readers.h).
 */
#include "config.h"

#include <string.h>

#include "readers.h"

void dsfs_readers_clear(struct dsfs_readers *rs)
{
	memset(rs->r, 0, sizeof(rs->r));
	rs->followed_ns = 0;
}

/* Whether a process with these last opens (`placed`'s low `opens` bits)
 * follows: more than a quarter of them placed. */
static bool follows_bits(uint32_t placed, uint32_t opens)
{
	return opens >= DSFS_READERS_JUDGE &&
	       (unsigned)__builtin_popcount(placed) * 4 > opens;
}

/* Whether r is judged to follow the plan (a slot starts at 0, so `placed`
 * holds no bit older than its opens). */
static bool follows(const struct dsfs_reader *r)
{
	return follows_bits(r->placed, r->opens);
}

/* Whether r follows whatever its next open: also with it not placed. */
static bool follows_surely(const struct dsfs_reader *r)
{
	uint32_t opens = r->opens < DSFS_READERS_HISTORY ? r->opens + 1 :
							   r->opens;

	return follows_bits(r->placed << 1, opens);
}

/* Whether r follows closely enough to judge others by: three quarters of
 * its last opens placed.  A loader's process places nearly all; a new
 * job's process, opening samples anywhere in a small epoch (a few hundred
 * samples: one in six lands within span of its last open), places more
 * than a quarter of its first opens now and then, and would judge the
 * job's other processes, which start with it, another program. */
static bool leads(const struct dsfs_reader *r)
{
	return r->opens >= DSFS_READERS_JUDGE &&
	       (unsigned)__builtin_popcount(r->placed) * 4 >= r->opens * 3;
}

/* Whether r is judged another program: judged (JUDGE opens while another
 * process followed) and not following since. */
static bool judged_other(const struct dsfs_reader *r)
{
	return r->other && !follows(r);
}

void dsfs_readers_new_epoch(struct dsfs_readers *rs)
{
	unsigned i;

	rs->followed_ns = 0;
	for (i = 0; i < DSFS_READERS_MAX; i++) {
		const struct dsfs_reader *r = &rs->r[i];

		if (r->pid && follows(r) && r->placed_ns > rs->followed_ns)
			rs->followed_ns = r->placed_ns;
	}
	for (i = 0; i < DSFS_READERS_MAX; i++) {
		struct dsfs_reader *r = &rs->r[i];

		if (!judged_other(r) ||
		    r->judged_ns + DSFS_READERS_FOLLOW_NS > rs->followed_ns)
			memset(r, 0, sizeof(*r));
	}
}

/* pid's slot, or the slot it takes (free, else the least recently seen). */
static struct dsfs_reader *slot_of(struct dsfs_readers *rs, uint32_t pid)
{
	struct dsfs_reader *old = &rs->r[0];
	unsigned i;

	for (i = 0; i < DSFS_READERS_MAX; i++) {
		const struct dsfs_reader *r = &rs->r[i];

		if (r->pid == pid)
			return &rs->r[i];
		if (old->pid && (!r->pid || r->seen_ns < old->seen_ns))
			old = &rs->r[i];
	}
	memset(old, 0, sizeof(*old));
	old->pid = pid;
	return old;
}

/*
 * Where the processes other than r that follow the plan are: the furthest
 * plan time of those that lead (leads()) and placed an open lately;
 * DSFS_READERS_NOWHERE when none does.  Foreign opens fed to a tracker
 * move its frontier, so a newcomer is placed against this instead.  For
 * r that may not follow after this open, only followers that still exist
 * count: a job that ended within FOLLOW_NS follows no more, and the next
 * one's opens, some landing near where it was, are fed; so are those of
 * the next epoch's new worker whose first opens placed a few by chance
 * (following just) and then no more, after the old workers ended.  A
 * system call for each follower, on this path alone: a loader's
 * processes follow closely.
 */
static uint64_t followers_at(const struct dsfs_readers *rs,
			     const struct dsfs_reader *r, uint64_t now_ns,
			     uint64_t *spread)
{
	uint64_t at = DSFS_READERS_NOWHERE, lo = DSFS_READERS_NOWHERE;
	bool check_alive = rs->alive && !follows_surely(r);
	unsigned i;

	for (i = 0; i < DSFS_READERS_MAX; i++) {
		const struct dsfs_reader *o = &rs->r[i];

		if (o == r || !o->pid || !o->placed_ns ||
		    now_ns - o->placed_ns > DSFS_READERS_FOLLOW_NS ||
		    !leads(o) || o->when == DSFS_READERS_NOWHERE ||
		    (check_alive && !rs->alive(o->pid)))
			continue;
		if (at == DSFS_READERS_NOWHERE || o->when > at)
			at = o->when;
		if (lo == DSFS_READERS_NOWHERE || o->when < lo)
			lo = o->when;
	}
	*spread = at == DSFS_READERS_NOWHERE ? 0 : at - lo;
	return at;
}

/* Whether o lands at most o->near past the followers' place `at` (or
 * anywhere behind it: a place they passed unseen). */
static bool near_followers(const struct dsfs_reader_open *o, uint64_t at)
{
	return o->when != DSFS_READERS_NOWHERE &&
	       (at == DSFS_READERS_NOWHERE || o->when <= at ||
		o->when - at <= o->near);
}

/*
 * Where o lands for processes following at `at`: at its read in the next
 * epoch when its next read is one this epoch passed unseen, more than
 * o->near behind them, and the next epoch's lands near them (readers.h).
 * A loader's process opens nothing that far behind the others in an
 * epoch; a new worker opens the next epoch's first batches.
 */
static struct dsfs_reader_open landing(const struct dsfs_reader_open *o,
				       uint64_t at)
{
	struct dsfs_reader_open w = *o;

	w.when = o->later;
	if (o->when == DSFS_READERS_NOWHERE || at == DSFS_READERS_NOWHERE ||
	    o->when >= at || at - o->when <= o->near ||
	    o->later == DSFS_READERS_NOWHERE || !near_followers(&w, at))
		w.when = o->when;
	return w;
}

/* Whether an open at plan time `when` goes on with process r's run: past
 * its last open by at most DSFS_READERS_RUN, the next samples of its
 * batch.  A worker of a loader with most of a small epoch in flight starts
 * its batch far past the others. */
static bool runs_on(const struct dsfs_reader *r,
		    const struct dsfs_reader_open *o)
{
	return r->opens && r->when != DSFS_READERS_NOWHERE &&
	       o->when != DSFS_READERS_NOWHERE && o->when > r->when &&
	       o->when - r->when <= DSFS_READERS_RUN;
}

/*
 * Whether an open at plan time `when` moves process r on through the plan
 * a little: past its last open by at most o->span (r's first: anywhere),
 * and, unless r follows, near the followers or on with its run.  A program
 * reading in its own order lands there now and then by chance, rarely
 * both.
 */
static bool placed(const struct dsfs_reader *r,
		   const struct dsfs_reader_open *o, uint64_t at)
{
	if (!runs_on(r, o) &&
	    !near_followers(o, follows(r) ? DSFS_READERS_NOWHERE : at))
		return false;
	if (!r->opens || r->when == DSFS_READERS_NOWHERE)
		return true;
	return o->when > r->when && o->when - r->when <= o->span;
}

enum dsfs_reader_verdict dsfs_readers_note(struct dsfs_readers *rs,
					   uint32_t pid,
					   const struct dsfs_reader_open *o,
					   uint64_t now_ns)
{
	struct dsfs_reader_open close;
	struct dsfs_reader *r;
	uint64_t at, spread, margin;
	bool on, was, run;

	if (!pid)
		return DSFS_READER_FEED;
	r = slot_of(rs, pid);
	at = followers_at(rs, r, now_ns, &spread);
	/* An open going on with its process's run lands where it is. */
	run = runs_on(r, o);
	close = run ? *o : landing(o, at);
	on = placed(r, &close, at);
	r->when = close.when;
	r->seen_ns = now_ns;
	r->placed = r->placed << 1 | on;
	if (r->opens < DSFS_READERS_HISTORY)
		r->opens++;
	if (on)
		r->placed_ns = now_ns;
	/* Another process follows: leave out a newcomer's opens that land
	 * far past it (they would drag the frontier), and every open of a
	 * process judged another program, also before the loader's
	 * processes are judged again in a new epoch. */
	if (follows(r) ||
	    (at == DSFS_READERS_NOWHERE &&
	     !(judged_other(r) && rs->followed_ns &&
	       now_ns - rs->followed_ns <= DSFS_READERS_FOLLOW_NS)))
		return DSFS_READER_FEED;
	if (r->opens < DSFS_READERS_JUDGE) {
		/* Near: within twice the followers' spread, at least span,
		 * at most the window. */
		margin = 2 * spread > o->span ? 2 * spread : o->span;
		if (close.near > margin)
			close.near = margin;
		return run || near_followers(&close, at) ? DSFS_READER_FEED :
							   DSFS_READER_LEAVE;
	}
	was = r->other;
	if (!was)
		r->judged_ns = now_ns;
	r->other = true;
	return was ? DSFS_READER_LEAVE : DSFS_READER_LEAVE_NEW;
}
