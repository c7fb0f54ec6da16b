// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Plan-following prefetch (see scheduler.h): the scheduler thread, each
 * local rank's tracker and lead window, start, stop and the stats.  The
 * fetch of a sample is in sched_fetch.c, the loaders' opens in
 * sched_access.c; sched_int.h holds what the three share.
 *
 * Locking: s->lock protects the tracker, `fetched`, the lead window,
 * `epoch`, `inflight`, `idle`, `full` and `stop`; the scheduler thread
 * drops it while it opens files and submits reads.  Completions (engine
 * thread) take it to count a read done and wake the scheduler.  Counters
 * read by stats are relaxed atomics.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sched_int.h"


/* Drop r's tracker, keeping its counts for the stats.  Called with
 * s->lock held (or before the thread starts). */
void dsfs_sched_retire_locked(struct srank *r)
{
	struct dsfs_tracker_state st;

	if (!r->t)
		return;
	dsfs_tracker_state(r->t, &st);
	r->past_misses += st.mispredictions;
	r->past_accesses += st.accesses;
	dsfs_tracker_free(r->t);
	r->t = NULL;
}

uint64_t dsfs_sched_size_at_locked(const struct dsfs_sched *s,
				   const struct srank *r, uint64_t p)
{
	uint64_t idx;

	return dsfs_tracker_at(plan_of(r), p, &idx) ? 0 :
	       dsfs_layout_size(s->cfg.layout, idx);
}

/*
 * Move r's lead window [lead_from, fetched) to start at low, keeping its
 * byte sum: O(positions the loader moved past), so the scheduler pays O(1)
 * amortised per sample instead of re-adding the whole lead each time.
 * recount: positions were renumbered (epoch change): sum afresh, once.
 * Called with s->lock held.
 */
static void lead_move_locked(struct dsfs_sched *s, struct srank *r,
			     uint64_t low, bool recount)
{
	uint64_t p;

	if (r->fetched <= low) { /* the loader caught up: nothing ahead */
		r->fetched = low;
		r->lead_bytes = 0;
	} else if (recount || low < r->lead_from) {
		r->lead_bytes = 0;
		for (p = low; p < r->fetched; p++)
			r->lead_bytes += dsfs_sched_size_at_locked(s, r, p);
	} else {
		for (p = r->lead_from; p < low; p++)
			r->lead_bytes -= dsfs_sched_size_at_locked(s, r, p);
	}
	r->lead_from = low;
}

/*
 * The sentinel stride of a rank's epoch: the prefetch's lead starts at the
 * first sentinel the loader has not read (dsfs_tracker_low_every), so up
 * to every - 1 samples the loader is still to read lie before the lead and
 * are held in the cache beside it.  Kept to a quarter of the rank's share
 * of the lead: 8 (DSFS_SCHED_SENTINEL) for files of up to 1/32 of it, 1
 * (nothing pushed, every read seen) for shards of an eighth.  1 without
 * push, and once a loader was seen to read strays (strays_found_locked).
 * Called with s->lock held.
 */
static uint32_t stride_locked(const struct dsfs_sched *s)
{
	uint64_t share = s->cfg.lead_bytes / s->nranks, mean, every;

	if (!s->cfg.filled || s->strays)
		return 1;
	if (!s->sizes)
		return DSFS_SCHED_SENTINEL;
	mean = s->size_sum / s->sizes;
	every = share / 4 / (mean ? mean : 1);
	return every >= DSFS_SCHED_SENTINEL ? DSFS_SCHED_SENTINEL :
	       every ? (uint32_t)every : 1;
}

/* Count a sample's size in the mean that sets the stride: a mean of the
 * last million or so. */
static void size_seen_locked(struct dsfs_sched *s, uint64_t size)
{
	if (s->sizes >= 1u << 20) {
		s->size_sum /= 2;
		s->sizes /= 2;
	}
	s->size_sum += size;
	s->sizes++;
}

/*
 * A loader's Dataset reads samples besides the ones its sampler asks
 * (mosaic or mixup augmentation drawing random others, pairs of views):
 * its tracker follows it through those strays (tracker.h), but with push
 * it would see only every eighth of the loader's own opens among them,
 * too few to follow.  From now on every rank's reads all reach the daemon
 * (stride 1: nothing pushed; the planned files are served from the cache
 * by READ), until a rank begins an epoch with no strays in its recent
 * opens (another program read beside the loader for a while).  Logged
 * once.  Called with s->lock held.
 */
static void strays_found_locked(struct dsfs_sched *s)
{
	uint32_t i;

	s->strays = true;
	for (i = 0; i < s->nranks; i++)
		s->ranks[i].every = stride_locked(s);
	if (s->strays_said)
		return;
	s->strays_said = true;
	dsfs_info("plan: more than a quarter of the loader's opens are of samples out of its order while it reads on in it (its Dataset reads others besides the ones asked, such as mosaic or mixup augmentation): following it through them%s",
		  s->cfg.filled ? ", every planned file read through dsfs (no push)" : "");
}

/* Whether guess t placed every open it was given, GUESS_FOLLOWED of them
 * at least.  A wrong guess may place a few by chance (its window is a
 * quarter of the epoch, 16 samples at least), but its lead moves only as
 * far as its low-water mark, which opens scattered over the window hardly
 * move, and only until the detection ends it. */
#define GUESS_FOLLOWED 4
static bool guess_followed(const struct dsfs_tracker *t)
{
	struct dsfs_tracker_state g;

	dsfs_tracker_state(t, &g);
	return g.accesses >= GUESS_FOLLOWED && g.mispredictions == 0;
}

/* Bring r's lead window up to date with its tracker.  false when r is not
 * following a plan.  Called with s->lock held. */
bool dsfs_sched_rank_update_locked(struct dsfs_sched *s, struct srank *r)
{
	struct dsfs_tracker *t = plan_of(r);
	struct dsfs_tracker_state st;
	bool recount = false;

	if (!t)
		return false;
	dsfs_tracker_state(t, &st);
	if (st.detected == DSFS_TRACKER_LOST ||
	    st.detected == DSFS_TRACKER_DETECTING)
		return false;
	if (st.strays && !s->strays)
		strays_found_locked(s);
	if (st.epoch != r->epoch || st.starts != r->starts) {
		/* positions restart at the boundary; from 0 when the
		 * loader was found again at an epoch's start */
		r->fetched = r->fetched > st.count ? r->fetched - st.count : 0;
		if (st.epoch != r->epoch + 1 || st.starts != r->starts)
			r->fetched = 0;
		r->epoch = st.epoch;
		/* a new epoch: the kernel may keep it */
		__atomic_store_n(&s->repush, false, __ATOMIC_RELAXED);
		r->starts = st.starts;
		if (!st.strays)
			s->strays = false;
		r->every = stride_locked(s);
		recount = true;
	}
	/* The next epoch's order gives the samples read now their next use
	 * (dsfs_tracker_next_use): compute it as soon as this epoch is
	 * followed, the first one included.  O(1) once made. */
	dsfs_tracker_prepare_next(t);
	/* A guess's lead stays where it began until the guess placed
	 * GUESS_FOLLOWED opens and missed none: until then the prefetch
	 * fetches at most one lead, which a wrong guess wastes; then it moves
	 * with the loader, as detection may take half an epoch of a few
	 * shards.  The lead starts where the loader is: with push, only the
	 * sentinels' opens are seen, and the low-water mark stands behind the
	 * furthest open by twice their lag, over samples long read. */
	if (!r->guess || guess_followed(r->guess))
		lead_move_locked(s, r,
				 dsfs_tracker_low_every(t, r->every),
				 recount);
	return true;
}

/* idx's next plan read over every rank.  Called with s->lock held. */
uint64_t dsfs_sched_next_use_locked(struct dsfs_sched *s, uint64_t idx)
{
	uint64_t when = DSFS_CACHE_NEVER, t;
	struct dsfs_tracker *tr;
	uint32_t i;

	for (i = 0; i < s->nranks; i++) {
		if (!(tr = plan_of(&s->ranks[i])))
			continue;
		t = dsfs_tracker_next_use(tr, idx);
		if (t < when)
			when = t;
	}
	return when;
}

/*
 * Whether pk's sample may be pushed into the page cache (cfg.filled): not
 * at a sentinel position (scheduler.h), and only for the sample's next
 * read over every rank.  A lead that reaches into the next epoch, walked
 * again after the kernel dropped a push (dsfs_sched_repush), meets there
 * samples this epoch still reads ahead of the loader, some at sentinel
 * positions: pushed for the next epoch, they would be served by the
 * kernel this epoch, and the plan would stop seeing the loader.  Called
 * with s->lock held.
 */
static bool pushable_locked(const struct pick *pk, uint64_t next_use)
{
	return pk->pos % pk->r->every != 0 && next_use >= pk->when;
}

/* At most now: all of cfg.depth while the fetch is behind (scheduler.h). */
static unsigned depth_locked(const struct dsfs_sched *s)
{
	return dsfs_boost_behind(s->cfg.waited, dsfs_sched_coarse_ns()) ?
		s->cfg.depth : s->cfg.depth_ahead;
}

uint64_t dsfs_sched_pass_ahead_locked(const struct dsfs_sched *s, bool side)
{
	uint64_t mean = side ? s->side.mean
			: s->sizes ? s->size_sum / s->sizes : 0,
		 ahead = mean ? s->cfg.lead_bytes / mean : 0;

	return ahead > BATCH ? ahead : BATCH;
}

bool dsfs_sched_pass_wants_locked(const struct dsfs_sched *s, bool side)
{
	const struct dsfs_layout *l = side ? s->side.layout : s->cfg.layout;

	return l && dsfs_seqpass_wants(side ? &s->side.seq : &s->seq,
				       dsfs_sched_pass_ahead_locked(s, side),
				       dsfs_layout_count(l), BATCH);
}

/* The next sample of an index-order pass (seqpass.h): the plan's, or
 * (side) the side's over its tree's listing (sched_side.c); fetched into
 * the cache as unplanned (nothing plans it), never pushed.  As
 * next_locked.  Called with s->lock held. */
static bool pass_next_locked(struct dsfs_sched *s, bool side, struct pick *pk,
			     uint64_t *settle)
{
	struct dsfs_seqpass *q = side ? &s->side.seq : &s->seq;
	const struct dsfs_layout *l = side ? s->side.layout : s->cfg.layout;
	uint64_t idx;

	if (!l || !dsfs_seqpass_peek(q, dsfs_sched_pass_ahead_locked(s, side),
				     dsfs_layout_count(l), &idx))
		return false;
	/* (the side's listing has every file's size) */
	if (!side && dsfs_layout_pending(l, idx)) {
		*settle = idx;
		return false;
	}
	dsfs_seqpass_take(q);
	*pk = (struct pick){ .idx = idx, .when = DSFS_CACHE_NEVER,
			     .size = dsfs_layout_size(l, idx),
			     .after = DSFS_CACHE_NEVER,
			     .use = DSFS_CACHE_NEVER, .seq = true, .side = side,
			     .near = idx < q->front +
					   2 * (uint64_t)s->cfg.depth_ahead };
	if (!side)
		size_seen_locked(s, pk->size);
	return true;
}

/*
 * The next sample to fetch: of the ranks following a plan, not blocked and
 * within their share of the lead budget, the one whose next sample is read
 * soonest (so that every local rank stays ahead); when none has one, the
 * index-order pass's next (while no rank follows), then the side pass's
 * (sched_side.c).  false when none, or when the reads in flight fill the
 * engine's depth, or when that sample's size is not known yet (*settle is
 * then its index).  Called with s->lock held.
 */
static bool next_locked(struct dsfs_sched *s, struct pick *pk,
			uint64_t *settle)
{
	uint64_t share = s->cfg.lead_bytes / s->nranks, idx, when, next_use;
	struct srank *r;
	uint32_t i;
	bool follows = false;

	pk->r = NULL;
	s->depth = depth_locked(s);
	s->full = s->inflight >= s->depth;
	if (s->full)
		return false;
	for (i = 0; i < s->nranks; i++) {
		r = &s->ranks[i];
		if (!dsfs_sched_rank_update_locked(s, r))
			continue;
		follows = true;
		if (r->blocked || r->lead_bytes >= share ||
		    dsfs_tracker_at(plan_of(r), r->fetched, &idx))
			continue; /* idle, or the end of the next epoch */
		when = dsfs_tracker_time(plan_of(r), r->fetched);
		if (pk->r && when >= pk->when)
			continue;
		*pk = (struct pick){ .r = r, .pos = r->fetched, .idx = idx,
				     .when = when,
				     .size = dsfs_layout_size(s->cfg.layout,
							      idx),
				     .epoch = r->epoch, .repush = s->repush };
	}
	if (!pk->r)
		return (!follows && pass_next_locked(s, false, pk, settle)) ||
		       (*settle == UINT64_MAX &&
			pass_next_locked(s, true, pk, settle));
	pk->after = dsfs_tracker_use_after(plan_of(pk->r), pk->idx, pk->pos);
	next_use = dsfs_sched_next_use_locked(s, pk->idx);
	pk->push = pushable_locked(pk, next_use);
	/* A lead reaching into the next epoch meets samples this one still
	 * reads: their entries' next use stays this epoch's. */
	pk->use = next_use < pk->when ? next_use : pk->when;
	if (dsfs_layout_pending(s->cfg.layout, pk->idx)) {
		/* its size first: see dsfs_sched_settle_sample */
		*settle = pk->idx;
		pk->r = NULL;
		return false;
	}
	size_seen_locked(s, pk->size);
	/* Not before the loader's first open: a fetch that starts at the
	 * mount is ahead of a loader still listing its data set.  Within
	 * twice the depth ahead, not the depth behind: a window that grew
	 * with the depth it turns on would keep it on. */
	pk->near = s->reports && pk->pos < pk->r->lead_from +
						 2 * (uint64_t)s->cfg.depth_ahead;
	pk->r->lead_bytes += pk->size;
	pk->r->fetched++;
	return true;
}

/* The cache refused pk's sample: take it back, unless the window moved
 * meanwhile, and wait for progress.  Called with s->lock held. */
static void refused_locked(struct dsfs_sched *s, const struct pick *pk)
{
	struct srank *r = pk->r;

	r->blocked = true;
	r->blocked_epoch = r->epoch;
	r->blocked_low = r->lead_from;
	if (r->epoch == pk->epoch && r->fetched == pk->pos + 1 &&
	    r->lead_from <= pk->pos) {
		r->fetched = pk->pos;
		r->lead_bytes -= pk->size;
	}
}

static void prepare_all_locked(struct dsfs_sched *s)
{
	uint32_t i;

	for (i = 0; i < s->nranks; i++)
		if (s->ranks[i].t)
			dsfs_tracker_prepare_next(s->ranks[i].t);
}

/* Where the prefetch of a tracker that joins mid-epoch starts. */
static void follow_from_locked(struct dsfs_sched *s, struct srank *r)
{
	struct dsfs_tracker_state st;

	dsfs_tracker_state(r->t, &st);
	r->epoch = st.epoch;
	r->starts = st.starts;
	/* The loader is at the frontier by now: fetch from there (what lies
	 * before it was read, or is being read, around the cache). */
	r->fetched = st.frontier;
	r->lead_from = st.low;
	r->every = stride_locked(s);
	r->blocked = false;
	lead_move_locked(s, r, st.low, true);
}


static void replay_one(void *arg, uint32_t idx)
{
	struct dsfs_sched *s = arg;
	struct srank *r = dsfs_sched_route_locked(s, idx);

	if (r->t)
		dsfs_tracker_access(r->t, idx);
}

/*
 * A DistributedSampler's seed was found: follow it from this epoch on with
 * its own trackers, one per local rank, as if it had been given (seed =
 * the one found, epoch 0 = this one), fed this epoch's opens so far.
 */
static void discovered_locked(struct dsfs_sched *s, uint32_t seed)
{
	uint32_t i;

	s->sampler.kind = DSFS_SAMPLER_TORCH_DISTRIBUTED;
	dsfs_seed_from_i64(seed, &s->sampler.seed);
	for (i = 0; i < s->nranks; i++) {
		if (dsfs_sched_rank_tracker(s, &s->ranks[i], false, 0))
			dsfs_warn("plan: rank %u: cannot follow the seed found",
				  s->ranks[i].rank);
	}
	dsfs_seek_replay(s->seek, replay_one, s);
	for (i = 0; i < s->nranks; i++)
		if (s->ranks[i].t)
			follow_from_locked(s, &s->ranks[i]);
	s->discovered = true;
}

/* seed=discover: a search ended; follow the epoch it found.  Called with
 * s->lock held. */
static void seek_poll_locked(struct dsfs_sched *s)
{
	struct srank *r = &s->ranks[0];
	struct dsfs_tracker *t;
	uint32_t seed;

	switch (dsfs_seek_poll(s->seek, &t, &seed)) {
	case 1: /* RandomSampler: this epoch's order */
		dsfs_sched_retire_locked(r);
		r->t = t;
		follow_from_locked(s, r);
		break;
	case 2: /* DistributedSampler: every epoch from this one */
		discovered_locked(s, seed);
		break;
	default:
		return;
	}
	dsfs_sched_publish_now_locked(s);
}

/*
 * The sizes of SIZES_SAMPLED of the layout's samples, spread over it, for
 * the first epoch's stride: the layout is listed without them, and the
 * first samples fetched may be a few large files among small ones.
 * Called as the scheduler starts, before its thread: run by the thread,
 * it delayed the thread's first work past the loader's first opens, and
 * t-nextuse's hit rate without prefetch fell from MIN's 32.6% to as low
 * as 28.9% in some runs.
 */
#define SIZES_SAMPLED 64
static void sizes_sample(struct dsfs_sched *s)
{
	uint64_t n = dsfs_layout_count(s->cfg.layout), i, size[SIZES_SAMPLED];
	struct opened o = { .fd = -1 };
	uint64_t step = n > SIZES_SAMPLED ? n / SIZES_SAMPLED : 1;
	uint32_t k = 0, j;

	for (i = 0; i < n && k < SIZES_SAMPLED; i += step) {
		if (dsfs_layout_pending(s->cfg.layout, i)) {
			dsfs_sched_settle_sample(s, i, &o);
			dsfs_sched_opened_close(&o);
		}
		size[k++] = dsfs_layout_size(s->cfg.layout, i);
	}
	pthread_mutex_lock(&s->lock);
	for (j = 0; j < k; j++)
		size_seen_locked(s, size[j]);
	for (j = 0; j < s->nranks; j++)
		s->ranks[j].every = stride_locked(s);
	pthread_mutex_unlock(&s->lock);
}

static void *sched_thread(void *arg)
{
	struct dsfs_sched *s = arg;
	struct batch b = { .n = 0 };
	struct opened o = { .fd = -1 };
	struct pick pk = { 0 };
	uint64_t settle, made;
	int err;

	dsfs_boost_init(&s->boost, s->cfg.waited);
	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		if (s->seek && !s->discovered)
			seek_poll_locked(s);
		dsfs_sched_side_poll_locked(s);
		settle = UINT64_MAX;
		if (next_locked(s, &pk, &settle)) {
			made = b.made;
			pthread_mutex_unlock(&s->lock);
			err = dsfs_sched_fetch_sample(s, &b, &o, &pk);
			pthread_mutex_lock(&s->lock);
			if (pk.seq && b.made != made)
				s->seq_samples++;
			if (err == -ENOSPC && pk.side)
				s->side.seq.blocked = true;
			else if (err == -ENOSPC && pk.seq)
				s->seq.blocked = true;
			else if (err == -ENOSPC)
				refused_locked(s, &pk);
			continue;
		}
		if (settle != UINT64_MAX) {
			pthread_mutex_unlock(&s->lock);
			dsfs_sched_settle_sample(s, settle, &o);
			pthread_mutex_lock(&s->lock);
			continue;
		}
		if (b.n) { /* nothing more for now: send what is prepared */
			pthread_mutex_unlock(&s->lock);
			dsfs_sched_batch_flush(s, &b);
			pthread_mutex_lock(&s->lock);
			continue;
		}
		/* Off the access path: the next epochs' orders, if not yet. */
		prepare_all_locked(s);
		if (s->seek && dsfs_seek_reapable(s->seek)) {
			/* Ended searches are joined without the lock (their
			 * end wakes us under it); then look again. */
			pthread_mutex_unlock(&s->lock);
			dsfs_seek_reap(s->seek);
			pthread_mutex_lock(&s->lock);
			continue;
		}
		s->idle = true;
		pthread_cond_wait(&s->wake, &s->lock);
		s->idle = false;
	}
	/* Reads prepared but not sent: counted in flight, and their entries
	 * are being filled, which readers may wait for.  Send them. */
	pthread_mutex_unlock(&s->lock);
	dsfs_sched_batch_flush(s, &b);
	dsfs_sched_opened_close(&o);
	pthread_mutex_lock(&s->lock);
	while (s->inflight) /* completions still reference s */
		pthread_cond_wait(&s->wake, &s->lock);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Samples one rank reads per epoch, for dsfs_tracker_window_for(). */
static uint64_t per_rank(const struct dsfs_plan_cfg *p, uint64_t n)
{
	return dsfs_sampler_count(&p->sampler, n);
}

static void ranks_free(struct dsfs_sched *s)
{
	uint32_t i;

	for (i = 0; i < s->nranks; i++) {
		dsfs_tracker_free(s->ranks[i].guess);
		dsfs_tracker_free(s->ranks[i].t);
	}
	free(s->ranks);
}

/* A tracker for rank r following epoch `epoch` (configured), or, for the
 * first rank with epoch auto-detection, one that detects for the group.
 * Replaces r's tracker and where its prefetch stood, if it had one. */
int dsfs_sched_rank_tracker(struct dsfs_sched *s, struct srank *r, bool detect,
			    uint64_t epoch)
{
	const struct dsfs_plan_cfg *p = s->cfg.plan;
	uint64_t n = dsfs_layout_count(s->cfg.layout);
	int err;

	dsfs_tracker_free(r->guess);
	dsfs_sched_retire_locked(r);
	r->guess = NULL;
	r->fetched = r->lead_from = r->lead_bytes = 0;
	r->blocked = false;
	r->every = stride_locked(s);
	err = dsfs_tracker_new(&s->sampler, n, r->rank, detect, epoch,
			       dsfs_tracker_window_for(per_rank(p, n)), &r->t);
	if (!err && detect)
		err = dsfs_tracker_group(r->t, s->nranks);
	if (err) {
		dsfs_tracker_free(r->t);
		r->t = NULL;
	}
	r->epoch = epoch;
	r->starts = 0;
	return err;
}

/* Trackers for every local rank: all of them now for a configured epoch;
 * with auto-detection, the first only (the others once it knows). */
static int ranks_init(struct dsfs_sched *s)
{
	const struct dsfs_plan_cfg *p = s->cfg.plan;
	uint64_t n = dsfs_layout_count(s->cfg.layout);
	uint32_t i;
	int err;

	s->nranks = p->sampler.kind == DSFS_SAMPLER_TORCH_DISTRIBUTED ?
		    p->rank_last - p->rank_first + 1 : 1;
	s->ranks = calloc(s->nranks, sizeof(*s->ranks));
	if (!s->ranks)
		return -ENOMEM;
	for (i = 0; i < s->nranks; i++) {
		s->ranks[i].rank = p->rank_first + i;
		s->ranks[i].every = stride_locked(s);
	}
	if (p->discover)
		return 0; /* trackers come from the searches (seek_poll_locked) */
	for (i = 0; i < (p->epoch_auto ? 1 : s->nranks); i++) {
		err = dsfs_sched_rank_tracker(s, &s->ranks[i], p->epoch_auto,
					      p->epoch);
		if (err)
			return err;
	}
	/* Fetch from the mount on: each rank's order in the first candidate
	 * epoch until the loaders show their epoch.  Without the guesses,
	 * nothing is fetched before the first opens (which the detection
	 * needs); a rank whose guess cannot be made detects first. */
	for (i = 0; p->epoch_auto && i < s->nranks; i++) {
		if (dsfs_tracker_new(&s->sampler, n, s->ranks[i].rank, false,
				     p->epoch,
				     dsfs_tracker_window_for(per_rank(p, n)),
				     &s->ranks[i].guess))
			s->ranks[i].guess = NULL;
		s->ranks[i].epoch = p->epoch;
	}
	return 0;
}

/* A seed search ended (called by its last thread, no lock held). */
static void sched_wake(void *arg)
{
	struct dsfs_sched *s = arg;

	pthread_mutex_lock(&s->lock);
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
}

/* seed=discover: the per-epoch search (seek.h). */
static int seek_init(struct dsfs_sched *s)
{
	const struct dsfs_plan_cfg *p = s->cfg.plan;
	uint64_t n = dsfs_layout_count(s->cfg.layout);
	struct dsfs_seek_cfg sc = {
		.n = n,
		.count = p->sampler.num_samples,
		.models = p->discover_models,
		.world = p->sampler.world,
		.rank_first = p->rank_first,
		.rank_last = p->rank_last,
		.first = p->discover_first,
		.end = p->discover_end,
		.threads = p->discover_threads,
		.window = dsfs_tracker_window_for(per_rank(p, n)),
		.wake = sched_wake,
		.arg = s,
	};
	uint64_t i, shared = 0;

	/* The search matches the opens against raw permutations: a file that
	 * several samples share opens as one of them only. */
	for (i = 0; s->canon && i < n; i++)
		shared += s->canon[i] != i;
	if (shared) {
		dsfs_warn("plan: seed=discover: %llu of %llu samples share a file with an earlier one (a list naming a path twice, or links to one file), so no seed can be searched: following no plan",
			  (unsigned long long)shared, (unsigned long long)n);
		return 0;
	}
	return dsfs_seek_new(&sc, &s->seek);
}

/*
 * Samples that share a file (a list naming one path on several lines,
 * links to one file) are one sample to the accesses:
 * dsfs_sched_sample_of() gives the first.  The trackers then see each such
 * file at every position of its samples (sampler.canon), so that an
 * oversampling list is followed.
 * Only for layouts with repeated lines or aliases: O(n) lookups then.
 */
static int canon_init(struct dsfs_sched *s)
{
	const struct dsfs_layout_info *info = dsfs_layout_info(s->cfg.layout);
	uint64_t i, idx, n = dsfs_layout_count(s->cfg.layout), same = 0;
	char path[PATH_MAX];
	bool linked;

	if (!info->duplicates && !info->aliases)
		return 0;
	s->canon = malloc(n * sizeof(*s->canon));
	if (!s->canon)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (dsfs_sched_sample_path(s, i, path) ||
		    dsfs_sched_sample_of(s, path, &idx, &linked))
			idx = i;
		s->canon[i] = (uint32_t)idx;
		same += idx == i;
	}
	if (same == n) {
		free(s->canon);
		s->canon = NULL;
	}
	s->sampler.canon = s->canon;
	return 0;
}

int dsfs_sched_start(const struct dsfs_sched_cfg *cfg, struct dsfs_sched **out)
{
	const struct dsfs_plan_cfg *p = cfg->plan;
	struct dsfs_sched *s = calloc(1, sizeof(*s));
	int err;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	s->sampler = p->sampler;
	/* a listing keeps the weights of the plan it was made for */
	s->sampler.weights = p->weights ? dsfs_layout_weights(cfg->layout)
					: NULL;
	s->prefix_len = strcmp(p->dir, ".") ? strlen(p->dir) + 1 : 0;
	s->readers.alive = dsfs_sched_pid_alive;
	/* A validation pass of the job's DistributedSampler(shuffle=False):
	 * its local ranks' share (seqpass.h) */
	if (p->sampler.kind == DSFS_SAMPLER_TORCH_DISTRIBUTED) {
		dsfs_seqpass_ranks(&s->seq, p->sampler.world, p->rank_first,
				   p->rank_last);
		dsfs_seqpass_ranks(&s->side.seq, p->sampler.world,
				   p->rank_first, p->rank_last);
	}
	s->way = (struct dsfs_tracker_way){
		.persistent_workers = p->sampler.persistent_workers,
		.sampler_generator = p->sampler.sampler_generator,
		.one_perm = p->sampler.subset,
		.seeded_once = p->sampler.seeded_once,
		.inplace = p->sampler.inplace,
	};
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	dsfs_slab_init(&s->fetches);
	err = canon_init(s);
	if (!err)
		err = ranks_init(s);
	if (!err && p->discover)
		err = seek_init(s);
	/* Nothing is planned until an access places the loader. */
	dsfs_cache_set_now(s->cfg.cache, DSFS_CACHE_NEVER);
	if (!err) {
		sizes_sample(s);
		err = dsfs_io_spawn(&s->thread, "dsfs-sched", sched_thread,
				    s);
	}
	if (err) {
		dsfs_seek_free(s->seek);
		ranks_free(s);
		free(s->canon);
		dsfs_slab_destroy(&s->fetches);
		pthread_cond_destroy(&s->wake);
		pthread_mutex_destroy(&s->lock);
		free(s);
		return err;
	}
	*out = s;
	return 0;
}

void dsfs_sched_stop(struct dsfs_sched *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	/* Before the lock goes: a search's end takes it (sched_wake), as
	 * the side's builder does. */
	dsfs_seek_free(s->seek);
	dsfs_sched_side_stop(s);
	/* Nothing planned any more: the cache's entries age out by CLOCK. */
	dsfs_cache_set_now(s->cfg.cache, DSFS_CACHE_NEVER);
	ranks_free(s);
	free(s->canon);
	free(s->known);
	dsfs_slab_destroy(&s->fetches);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void dsfs_sched_rewalk_locked(struct dsfs_sched *s)
{
	uint32_t i;

	for (i = 0; i < s->nranks; i++) {
		s->ranks[i].fetched = s->ranks[i].lead_from;
		s->ranks[i].lead_bytes = 0;
	}
}

void dsfs_sched_repush(struct dsfs_sched *s)
{

	/* Relaxed: the common case, already set, takes no lock. */
	if (__atomic_load_n(&s->repush, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&s->lock);
	if (!s->repush) {
		__atomic_store_n(&s->repush, true, __ATOMIC_RELAXED);
		/* Walk each lead again from the loader's place: what it holds
		 * was found cached, and not handed on, or handed on and
		 * dropped by the kernel since. */
		dsfs_sched_rewalk_locked(s);
		pthread_cond_signal(&s->wake);
	}
	pthread_mutex_unlock(&s->lock);
}

/* dsfs_sched_recent's bounds. */
#define SAME_OPEN_MIN 16
#define SAME_OPEN_MAX 1024

bool dsfs_sched_recent(struct dsfs_sched *s, uint64_t seq)
{
	uint64_t within = dsfs_layout_count(s->cfg.layout) / 2;

	if (within < SAME_OPEN_MIN)
		within = SAME_OPEN_MIN;
	if (within > SAME_OPEN_MAX)
		within = SAME_OPEN_MAX;
	return __atomic_load_n(&s->reports, __ATOMIC_RELAXED) - seq <= within;
}

/* Relaxed, both: no report is under way (the caller's word), and
 * dsfs_sched_recent reads the count without a lock. */
uint64_t dsfs_sched_reports(const struct dsfs_sched *s)
{
	return __atomic_load_n(&s->reports, __ATOMIC_RELAXED);
}

void dsfs_sched_number_from(struct dsfs_sched *s, uint64_t n)
{
	__atomic_store_n(&s->reports, n, __ATOMIC_RELAXED);
}

/* One rank's part of the stats.  Called with s->lock held. */
static void rank_stats_locked(struct dsfs_sched *s, struct srank *r,
			      struct dsfs_sched_rank_stats *rs)
{
	memset(rs, 0, sizeof(*rs));
	rs->rank = r->rank;
	rs->track.detected = DSFS_TRACKER_DETECTING;
	if (r->t)
		dsfs_tracker_state(r->t, &rs->track);
	rs->track.mispredictions += r->past_misses;
	rs->track.accesses += r->past_accesses;
	/* the guess's lead while it guesses */
	if (dsfs_sched_rank_update_locked(s, r)) {
		rs->lead_bytes = r->lead_bytes;
		rs->lead_items = r->fetched - r->lead_from;
	}
}

void dsfs_sched_get_stats(struct dsfs_sched *s, struct dsfs_sched_stats *st)
{
	struct dsfs_sched_rank_stats rs, *slow = NULL;
	uint64_t slow_time = DSFS_CACHE_NEVER, t, now;
	uint32_t i;

	memset(st, 0, sizeof(*st));
	now = dsfs_sched_coarse_ns();
	pthread_mutex_lock(&s->lock);
	st->last_open_ns = !s->last_report_ns ? UINT64_MAX :
			   now > s->last_report_ns ? now - s->last_report_ns : 0;
	st->nranks = s->nranks;
	st->discover = s->seek != NULL;
	if (s->seek)
		dsfs_seek_stats(s->seek, &st->seek);
	/* The seek, no longer fed, stays at the epoch of the seed found;
	 * the trackers count the epochs since. */
	if (s->discovered && s->ranks[0].t) {
		dsfs_tracker_state(s->ranks[0].t, &rs.track);
		st->seek.seed += (uint32_t)rs.track.epoch;
		st->seek.epoch += rs.track.epoch;
	}
	for (i = 0; i < s->nranks; i++) {
		rank_stats_locked(s, &s->ranks[i], &rs);
		if (i < DSFS_SCHED_STATS_RANKS)
			st->ranks[i] = rs;
		st->track.mispredictions += rs.track.mispredictions;
		st->track.accesses += rs.track.accesses;
		t = s->ranks[i].t ?
		    dsfs_tracker_time(s->ranks[i].t, rs.track.low) :
		    DSFS_CACHE_NEVER;
		if (i == 0 || (i < DSFS_SCHED_STATS_RANKS && t < slow_time)) {
			slow = &st->ranks[i];
			slow_time = t;
		}
	}
	st->index_pass_samples = s->seq_samples;
	pthread_mutex_unlock(&s->lock);
	/* The slowest rank's place, and the sums of the counts. */
	st->track.detected = st->ranks[0].track.detected;
	st->track.epoch = slow->track.epoch;
	st->track.low = slow->track.low;
	st->track.frontier = slow->track.frontier;
	st->track.seen = slow->track.seen;
	st->track.count = slow->track.count;
	st->lead_items = slow->lead_items;
	st->lead_bytes = slow->lead_bytes;
	st->prefetch_bytes = __atomic_load_n(&s->prefetch_bytes, __ATOMIC_RELAXED);
	st->prefetch_errors = __atomic_load_n(&s->prefetch_errors,
					      __ATOMIC_RELAXED);
	st->other_opens = __atomic_load_n(&s->other_opens, __ATOMIC_RELAXED);
	st->sample_opens = __atomic_load_n(&s->sample_opens, __ATOMIC_RELAXED);
}

