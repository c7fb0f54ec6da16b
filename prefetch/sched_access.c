// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The loaders' opens (sched_int.h): each report names a sample, which is
 * routed to the local rank whose loader read it, judged (another program's
 * opens are left out while a loader follows the plan: readers.h) and fed
 * to that rank's tracker; a change of epoch or mode is logged, the other
 * ranks follow a group's detection, and the plan time is published to the
 * cache.
 *
 * Threads: FUSE workers, each report under s->lock (the path lookup
 * before it takes none).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "sched_int.h"

/* Whether every local rank is lost and the first holds the group's epoch
 * starts: then all opens go to it, mixed as its starts are.  O(ranks). */
static bool all_lost_locked(struct dsfs_sched *s)
{
	struct dsfs_tracker_state st;
	uint32_t i;

	if (s->nranks < 2 || !s->ranks[0].t ||
	    !dsfs_tracker_holds_group(s->ranks[0].t))
		return false;
	for (i = 1; i < s->nranks; i++) {
		if (!s->ranks[i].t)
			continue;
		dsfs_tracker_state(s->ranks[i].t, &st);
		if (st.detected != DSFS_TRACKER_LOST)
			return false;
	}
	return true;
}

/*
 * The rank whose loader read idx: the first with the highest claim
 * (tracker.h): idx unseen in the window of its current epoch; else at its
 * next epoch's start (a vote for the switch), the rank it comes first
 * for, counting the rest of each rank's epoch (a small epoch's "start" is
 * most of it: a rank that has just begun its epoch must not take the
 * votes of another rank whose epoch ends, even where idx sits earlier in
 * its next epoch than in the other's);
 * else anywhere in its orders; else the first rank (a misprediction
 * there).  A rank that pushed most of its epoch (and so saw few of its
 * reads) must not take another rank's vote for an unseen position far
 * behind its frontier.  O(ranks).
 */
struct srank *dsfs_sched_route_locked(struct dsfs_sched *s, uint64_t idx)
{
	struct srank *best = &s->ranks[0];
	int claim, top = 0;
	uint32_t i;

	if (all_lost_locked(s))
		return best; /* the group's tracker finds them again */
	for (i = 0; i < s->nranks && top < DSFS_CLAIM_NOW; i++) {
		if (!s->ranks[i].t)
			continue;
		claim = dsfs_tracker_claim(s->ranks[i].t, idx);
		if (claim > top ||
		    (claim == DSFS_CLAIM_NEXT_START && claim == top &&
		     dsfs_tracker_next_dist(s->ranks[i].t, idx) <
			     dsfs_tracker_next_dist(best->t, idx))) {
			top = claim;
			best = &s->ranks[i];
		}
	}
	return best;
}

/*
 * The first rank detected the group's epoch (or found the group again at
 * an epoch's start): give the other ranks new trackers of that epoch and
 * the accesses the detection collected that are theirs, and end the
 * guesses (each rank keeps the lead of a right one).  O(ranks * n).
 * Called with s->lock held.
 */
static void group_detected_locked(struct dsfs_sched *s)
{
	struct dsfs_tracker_state st;
	const uint32_t *got;
	uint32_t i, k, ngot;

	dsfs_tracker_state(s->ranks[0].t, &st);
	for (i = 0; i < s->nranks; i++) {
		struct srank *r = &s->ranks[i], was = *r;
		/* A guess of this epoch fetched this rank's order: its lead
		 * stands.  Another epoch's is forgotten (its entries, stale
		 * under the plan time, go first). */
		bool right = was.guess && was.epoch == st.epoch;

		/* a new tracker (dsfs_sched_rank_tracker ends the guess) */
		if (i > 0) {
			if (dsfs_sched_rank_tracker(s, r, false, st.epoch)) {
				dsfs_warn("plan: rank %u: cannot follow epoch %llu",
					  r->rank, (unsigned long long)st.epoch);
				continue;
			}
			dsfs_tracker_set_detected(r->t);
		}
		dsfs_tracker_free(r->guess);
		r->guess = NULL;
		r->epoch = st.epoch;
		if (right) {
			r->fetched = was.fetched;
			r->lead_from = was.lead_from;
			r->lead_bytes = was.lead_bytes;
		} else if (was.guess) {
			r->fetched = r->lead_from = r->lead_bytes = 0;
			r->blocked = false;
		}
	}
	/* Each index is one rank's in an epoch: its tracker alone places it. */
	ngot = dsfs_tracker_collected(s->ranks[0].t, &got);
	for (k = 0; k < ngot; k++)
		for (i = 1; i < s->nranks; i++)
			if (s->ranks[i].t)
				dsfs_tracker_place(s->ranks[i].t, got[k]);
}

/*
 * Publish the plan time now to the cache: the slowest following rank's
 * low-water mark (NEVER when none follows), less NOW_SLACK positions.  The
 * slack is for the read that follows each report: the report moves the
 * mark past the sample before that read finds its entry and gives it its
 * next use, and meanwhile the entry must not look stale (the scheduler
 * would evict it first).  Called with s->lock held.
 */
#define NOW_SLACK 64
void dsfs_sched_publish_now_locked(struct dsfs_sched *s)
{
	uint64_t now = DSFS_CACHE_NEVER, t;
	struct dsfs_tracker_state st;
	struct dsfs_tracker *tr;
	uint32_t i;

	for (i = 0; i < s->nranks; i++) {
		if (!(tr = plan_of(&s->ranks[i])))
			continue;
		dsfs_tracker_state(tr, &st);
		t = dsfs_tracker_time(tr, st.low);
		if (t != DSFS_CACHE_NEVER)
			t = t > NOW_SLACK ? t - NOW_SLACK : 0;
		if (t < now)
			now = t;
	}
	dsfs_cache_set_now(s->cfg.cache, now);
	/* The leads fetched while nothing was planned (from the mount, or
	 * while lost) went into the cache as unplanned entries, which CLOCK
	 * evicts first, read or not: walk them again, so that each takes its
	 * next use. */
	if (now != DSFS_CACHE_NEVER && !s->planned)
		dsfs_sched_rewalk_locked(s);
	s->planned = now != DSFS_CACHE_NEVER;
}

/* log_way for a script shuffle (python-shuffle, the numpy kinds). */
static void log_script_way(struct dsfs_sched *s, const struct dsfs_tracker *t)
{
	struct dsfs_tracker_way w = dsfs_tracker_way(t);

	if (w.seeded_once == s->way.seeded_once &&
	    w.inplace == s->way.inplace)
		return;
	s->way = w;
	dsfs_warn("plan: the script seeds its generator %s and shuffles %s: following it so; mount with %s to follow it from the start",
		  w.seeded_once ? "once, with the seed," :
				  "with seed + epoch each epoch",
		  w.inplace ? "one list again each epoch" :
			      "a fresh list each epoch",
		  w.seeded_once && w.inplace ? "-o seeded_once,inplace" :
		  w.seeded_once		     ? "-o seeded_once" :
		  w.inplace		     ? "-o inplace" :
						"neither seeded_once nor inplace");
}

/*
 * log_way for a torch-random loader found to have left epochs early
 * (w->cut_epochs changed): say so.  True when it draws as the plan says
 * but for them, so that no option is to be given.
 */
static bool log_cuts(struct dsfs_sched *s, const struct dsfs_tracker *t,
		     const struct dsfs_tracker_way *w)
{
	const struct dsfs_sampler_cfg *p = &s->cfg.plan->sampler;
	struct dsfs_tracker_state st;

	if (w->cut_epochs == s->way.cut_epochs)
		return false;
	s->way.cut_epochs = w->cut_epochs;
	if (!w->cut_epochs || w->one_perm)
		return false;
	dsfs_tracker_state(t, &st);
	dsfs_info("plan: the loader left %llu of its epochs before their end (a break), and its sampler never drew their second permutations: following it so, at epoch %llu",
		  (unsigned long long)w->cut_epochs,
		  (unsigned long long)st.epoch);
	if (w->persistent_workers != p->persistent_workers ||
	    w->sampler_generator != p->sampler_generator || p->subset)
		return false;
	s->way = *w;
	return true;
}

/*
 * A torch-random loader, or a script shuffle, found drawing from its
 * generator another way than the plan says (tracker.h dsfs_tracker_way):
 * say which, once each time it changes, with the options that give it.
 */
static void log_way(struct dsfs_sched *s, const struct dsfs_tracker *t)
{
	const struct dsfs_sampler_cfg *p = &s->cfg.plan->sampler;
	struct dsfs_tracker_way w;
	bool pw, sg, one, perms;
	char k[128];

	if (dsfs_sampler_script(p->kind)) {
		log_script_way(s, t);
		return;
	}
	if (p->kind != DSFS_SAMPLER_TORCH_RANDOM)
		return;
	w = dsfs_tracker_way(t);
	if (log_cuts(s, t, &w))
		return;
	if (w.persistent_workers == s->way.persistent_workers &&
	    w.sampler_generator == s->way.sampler_generator &&
	    w.one_perm == s->way.one_perm &&
	    w.num_samples == s->way.num_samples)
		return;
	s->way = w;
	pw = w.persistent_workers && !w.sampler_generator;
	sg = w.sampler_generator;
	one = w.one_perm;
	/* Permutations an epoch: the plan's own with num_samples=,
	 * replacement (tracker_find.c tries no other). */
	perms = p->num_samples || p->replacement;
	if (w.num_samples)
		snprintf(k, sizeof(k), "-o num_samples=%llu",
			 (unsigned long long)w.num_samples);
	else
		snprintf(k, sizeof(k), "-o subset (a SubsetRandomSampler) or -o num_samples=K (a RandomSampler reading K samples an epoch)");
	dsfs_warn("plan: the loader draws from its generator as %s%s%s: following it so; mount with %s%s%s to follow it from the start",
		  sg ? "a sampler's own (sampler_generator)" :
		  pw ? "a DataLoader's with persistent workers" :
		       "a DataLoader's without persistent workers",
		  perms ? "" :
		  one ? ", one permutation an epoch (a SubsetRandomSampler, or a RandomSampler given num_samples below the data set's size or left before its epoch's end)" :
			", two permutations an epoch (a RandomSampler of the data set's size)",
		  w.num_samples ? ", and reads the first samples of each, as many as the last two epochs read" : "",
		  sg ? "-o sampler_generator" :
		  pw ? "-o persistent_workers" : "",
		  (sg || pw) && one ? " and " : "",
		  one ? k :
		  sg || pw ? "" :
		  perms ? "neither persistent_workers nor sampler_generator" :
			  "none of persistent_workers, sampler_generator, subset and num_samples");
}

/*
 * For a lost plan's warning, what else a loader of the plan's kind gets
 * wrong: the options of a torch-random loader a user forgets to give
 * (persistent_workers, sampler_generator, ...); a DistributedSampler's
 * set_epoch() not called (every epoch reads epoch 0's order); a shuffle
 * whose generator is made once and draws epoch after epoch (the plan
 * seeds one every epoch: seed + epoch).
 */
static const char *lost_also(enum dsfs_sampler kind)
{
	switch (kind) {
	case DSFS_SAMPLER_TORCH_RANDOM:
		return ", or persistent_workers, sampler_generator, num_samples, replacement or subset not given as the loader has them";
	case DSFS_SAMPLER_TORCH_DISTRIBUTED:
		return ", or the sampler's set_epoch() not called every epoch";
	case DSFS_SAMPLER_PYTHON_SHUFFLE:
	case DSFS_SAMPLER_NUMPY_PERMUTATION:
	case DSFS_SAMPLER_NUMPY_GENERATOR:
		return ", or seeded_once or inplace not given as the script seeds its generator and shuffles its list";
	default:
		return "";
	}
}

/*
 * For a lost plan's warning: names created, removed or renamed in SOURCE
 * since the data set's files were listed (fs/fresh.c counts them), which
 * may be the data set's: its files and their order are listed once.
 */
static void names_changed(const struct dsfs_sched *s, char *buf, size_t size)
{
	uint64_t n = s->cfg.names_changed ?
			     __atomic_load_n(s->cfg.names_changed,
					     __ATOMIC_RELAXED) -
				     s->cfg.names_listed :
			     0;

	buf[0] = '\0';
	if (n)
		snprintf(buf, size,
			 "; %llu names were created, removed or renamed in SOURCE since the data set's files were listed: if some are the data set's, its files and their order are not the plan's, which lists them once a mount (remount)",
			 (unsigned long long)n);
}

/*
 * A lost plan's first opens, all below one directory of its data set: the
 * loader's data set may be that directory (a mount over imagenet/ with
 * the default dataset=., and ImageFolder("imagenet/train")).  buf gets
 * "; ... give dataset=DIR", or "" when the opens have no directory in
 * common, the whole data set is below it, or the plan covers several data
 * sets.  O(samples): once, when the plan is lost at its start.
 */
static void below_one(const struct dsfs_sched *s, const struct srank *r,
		      char *buf, size_t size)
{
	const struct dsfs_plan_cfg *p = s->cfg.plan;
	const uint32_t *got;
	uint32_t n, k;
	size_t common = 0, i;
	const char *first;

	buf[0] = '\0';
	n = r->t ? dsfs_tracker_collected(r->t, &got) : 0;
	if (!n || p->ndatasets != 1)
		return;
	first = dsfs_layout_path(s->cfg.layout, got[0]);
	/* The longest directory every path starts with: ends at a '/'. */
	for (i = 0; first[i]; i++)
		if (first[i] == '/')
			common = i + 1;
	for (k = 1; k < n && common; k++) {
		const char *path = dsfs_layout_path(s->cfg.layout, got[k]);

		for (i = 0; i < common && path[i] == first[i]; i++)
			;
		while (i > 0 && first[i - 1] != '/')
			i--;
		common = i;
	}
	if (!common)
		return;
	/* Not when the whole data set is below it (a flat directory of
	 * shards): then it is no narrower data set. */
	if (dsfs_layout_count_below(s->cfg.layout, first, common) ==
	    dsfs_layout_count(s->cfg.layout))
		return;
	snprintf(buf, size,
		 "; all %u of them are below %.*s: if that is the loader's data set, give dataset=%s%s%.*s",
		 n, (int)common, first,
		 strcmp(p->dataset, ".") ? p->dataset : "",
		 strcmp(p->dataset, ".") ? "/" : "", (int)common - 1, first);
}

/*
 * One log line when a rank's tracker changed mode or epoch over an access
 * (was -> now): the epoch detected, the next epoch begun, the prediction
 * lost or found again.  Rate-limited (a loader that keeps contradicting
 * the plan may flip between lost and tracking).  Called with s->lock held.
 */
static void log_change_locked(struct dsfs_sched *s, const struct srank *r,
			      const struct dsfs_tracker_state *was,
			      const struct dsfs_tracker_state *now, bool group)
{
	bool ddp = s->cfg.plan->sampler.kind == DSFS_SAMPLER_TORCH_DISTRIBUTED;
	const char *also = lost_also(s->cfg.plan->sampler.kind);
	unsigned long long e = now->epoch;
	char who[32] = "", changed[256] = "", below[PATH_MAX + 128] = "";
	uint64_t missed;

	if (!dsfs_ratelimit(&s->log_rl, &missed))
		return;
	/* Local ranks detect their epoch together, in the first one's
	 * tracker, and are found again together once all are lost (group:
	 * group_detected_locked gives the others new trackers). */
	if (ddp && (was->detected == DSFS_TRACKER_DETECTING || group) &&
	    s->nranks > 1)
		snprintf(who, sizeof(who), "ranks %u-%u: ", s->ranks[0].rank,
			 s->ranks[s->nranks - 1].rank);
	else if (ddp)
		snprintf(who, sizeof(who), "rank %u: ", r->rank);
	if (missed)
		dsfs_info("plan: %llu changes not logged",
			  (unsigned long long)missed);
	if (now->detected == DSFS_TRACKER_LOST)
		names_changed(s, changed, sizeof(changed));
	if (now->detected == DSFS_TRACKER_LOST &&
	    was->detected == DSFS_TRACKER_DETECTING) {
		below_one(s, r, below, sizeof(below));
		dsfs_warn(
			"plan: %sprediction lost: no epoch of the %u tried matches the first %llu opens (wrong seed, sampler or layout, a later epoch: give epoch=N, another program reading the data set, or a Dataset reading random samples besides the ones asked in too small a data set: dsfs(8), Strays)%s%s; prefetch by the plan waits for opens that match",
			who, DSFS_TRACKER_DETECT_EPOCHS,
			(unsigned long long)now->accesses, below, changed);
	} else if (now->detected == DSFS_TRACKER_LOST)
		dsfs_warn(
			"plan: %sprediction lost in epoch %llu: %llu of %llu opens mispredicted (a new job, another reader, a Dataset reading random samples besides the ones asked, a wrong seed or sampler%s?)%s; prefetch by the plan stops until an epoch's start matches",
			who, e, (unsigned long long)now->mispredictions,
			(unsigned long long)now->accesses, also, changed);
	else if (was->detected == DSFS_TRACKER_DETECTING)
		dsfs_info("plan: %sepoch %llu detected after %llu opens", who,
			  e, (unsigned long long)now->accesses);
	else if (was->detected == DSFS_TRACKER_LOST)
		dsfs_info(
			"plan: %sprediction found again: following epoch %llu",
			who, e);
	else if (was->detected == now->detected)
		dsfs_info("plan: %sepoch %llu begun", who, e);
	if (r->t)
		log_way(s, r->t);
}

#define WAKE_ITEMS BATCH

/* Whether r's loader moved on WAKE_ITEMS samples, or an eighth of its
 * lead share in bytes, since the cache refused r's next sample: what it
 * read since may now give way.  O(WAKE_ITEMS).  Called with s->lock
 * held. */
static bool moved_on_locked(struct dsfs_sched *s, const struct srank *r,
			    uint64_t share)
{
	uint64_t p, bytes = 0;

	if (r->epoch != r->blocked_epoch ||
	    r->lead_from >= r->blocked_low + WAKE_ITEMS)
		return true;
	for (p = r->blocked_low; p < r->lead_from; p++)
		bytes += dsfs_sched_size_at_locked(s, r, p);
	return bytes >= share / 8;
}

/*
 * After an access: unblock each rank refused by the cache whose loader has
 * moved on since (moved_on_locked), and
 * say whether the idle thread now has a batch of work: such a rank, one
 * with fewer than WAKE_ITEMS samples fetched ahead or an eighth of its lead
 * share free, or a pass in index order with a batch to fetch.  Never while
 * the thread waits for reads in flight to complete: their completions wake
 * it.  A wake-up per sample cost more CPU than the fetch itself.  Called
 * with s->lock held.
 */
static bool wake_worth_locked(struct dsfs_sched *s)
{
	uint64_t share = s->cfg.lead_bytes / s->nranks;
	bool worth = false, follows = false;
	struct srank *r;
	uint32_t i;

	for (i = 0; i < s->nranks; i++) {
		r = &s->ranks[i];
		if (!dsfs_sched_rank_update_locked(s, r))
			continue;
		follows = true;
		if (r->blocked && !moved_on_locked(s, r, share))
			continue;
		worth |= r->blocked || r->fetched - r->lead_from < WAKE_ITEMS ||
			 r->lead_bytes + share / 8 <= share;
		r->blocked = false;
	}
	worth |= !follows && dsfs_sched_pass_wants_locked(s, false);
	worth |= dsfs_sched_pass_wants_locked(s, true);
	return worth && s->idle && !s->full;
}

/*
 * seed=discover: the open goes to the search of its epoch and, once the
 * epoch's order is known, to its tracker.  An open that starts a new epoch
 * drops the old epoch's tracker.  Called with s->lock held.
 */
static void seek_access_locked(struct dsfs_sched *s, uint64_t idx)
{
	struct srank *r = &s->ranks[0];

	if (dsfs_seek_access(s->seek, idx)) {
		dsfs_sched_retire_locked(r);
		r->fetched = r->lead_from = r->lead_bytes = 0;
	}
	if (r->t)
		dsfs_tracker_access(r->t, idx);
	dsfs_sched_publish_now_locked(s);
	if (wake_worth_locked(s))
		pthread_cond_signal(&s->wake);
}

/*
 * The guesses see every open made while the group's tracker detects: the
 * guess whose order claims it most takes it (one rank's, as each file is
 * in one rank's share of an epoch).  A guess that lost the loader ends.
 * O(ranks).  Called with s->lock held.
 */
static void guesses_access_locked(struct dsfs_sched *s, uint64_t idx)
{
	struct dsfs_tracker_state g;
	struct srank *best = NULL;
	int claim, top = DSFS_CLAIM_NONE;
	uint32_t i;

	for (i = 0; i < s->nranks; i++) {
		struct srank *r = &s->ranks[i];

		if (!r->guess)
			continue;
		claim = dsfs_tracker_claim(r->guess, idx);
		if (claim > top) {
			top = claim;
			best = r;
		}
	}
	if (!best)
		return;
	dsfs_tracker_access(best->guess, idx);
	dsfs_tracker_state(best->guess, &g);
	if (g.detected == DSFS_TRACKER_LOST) {
		dsfs_tracker_free(best->guess);
		best->guess = NULL;
	}
}

/*
 * Whether the guesses followed the loaders through the opens the group's
 * detection took (`opens` of them) although the detection found no epoch:
 * every rank still guesses, and the guesses placed all but an eighth of
 * the opens in their orders.  Their prefetch pushes the files it fetched
 * into the page cache, whose reads never reach dsfs but for every
 * DSFS_SCHED_SENTINEL-th sample: the opens the daemon sees then lie
 * spread over eight times as many positions, past what the detection
 * allows (the 32 opens and the window: in an epoch of a few thousand
 * samples, an eighth of it), while each guess follows them as it follows
 * a loader.  A loader at another epoch is placed by chance at most half
 * the time.  O(ranks).  Called with s->lock held.
 */
static bool guesses_right_locked(struct dsfs_sched *s, uint64_t opens)
{
	struct dsfs_tracker_state g;
	uint64_t placed = 0;
	uint32_t i;

	for (i = 0; i < s->nranks; i++) {
		if (!s->ranks[i].guess)
			return false;
		dsfs_tracker_state(s->ranks[i].guess, &g);
		placed += g.accesses - g.mispredictions;
	}
	return opens > 0 && placed >= opens - opens / 8;
}

/* The guesses were right (guesses_right_locked): each becomes its rank's
 * tracker, reporting its epoch as detected, and the lead it fetched
 * stands.  Called with s->lock held. */
static void guesses_promote_locked(struct dsfs_sched *s)
{
	uint32_t i;

	for (i = 0; i < s->nranks; i++) {
		struct srank *r = &s->ranks[i];

		/* Not retired: the guess counted the same opens. */
		dsfs_tracker_free(r->t);
		r->t = r->guess;
		r->guess = NULL;
		dsfs_tracker_set_detected(r->t);
	}
}

static void guesses_end_locked(struct dsfs_sched *s)
{
	uint32_t i;

	for (i = 0; i < s->nranks; i++) {
		dsfs_tracker_free(s->ranks[i].guess);
		s->ranks[i].guess = NULL;
	}
}

/* Whether every local rank follows its loader (none lost or detecting). */
static bool all_follow_locked(struct dsfs_sched *s)
{
	struct dsfs_tracker_state st;
	uint32_t i;

	for (i = 0; i < s->nranks; i++) {
		if (!s->ranks[i].t)
			return false;
		dsfs_tracker_state(s->ranks[i].t, &st);
		if (st.detected != DSFS_TRACKER_CONFIGURED &&
		    st.detected != DSFS_TRACKER_DETECTED)
			return false;
	}
	return true;
}

/* The command name of process pid, or "?". */
static void proc_name(uint32_t pid, char *buf, size_t len)
{
	char path[32];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	if (n <= 0)
		n = snprintf(buf, len, "?");
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

bool dsfs_sched_pid_alive(uint32_t pid)
{
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

_Static_assert(DSFS_TRACKER_NEVER == DSFS_READERS_NOWHERE,
	       "a plan time the tracker has not is one readers.h has not");
_Static_assert(DSFS_READERS_RUN >= DSFS_SCHED_SENTINEL,
	       "with push, a worker's opens go sentinel to sentinel: a run");

/* CLOCK_MONOTONIC_COARSE in nanoseconds. */
uint64_t dsfs_sched_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Whether process pid's open of idx (routed to r) is left out of the plan
 * (readers.h), only while every rank follows its loader, and never once a
 * loader was seen to read strays (strays_found_locked(): its workers place
 * a half or a quarter of their opens, their place in the plan moved by
 * each stray; the trackers take another program's opens as more
 * strays).  A loader's
 * process moves on through r's plan by at most a sixteenth of an epoch
 * from one of its opens to the next (a quarter of the window: DataLoader
 * workers jump further only between their batches), and at least 64
 * positions; a new one starts within the window past the others.  Logs
 * each process judged another program.  The open's time is the report's
 * (last_report_ns, just set by dsfs_sched_access).
 */
static bool other_reader_locked(struct dsfs_sched *s, struct srank *r,
				uint64_t idx, uint32_t pid)
{
	enum dsfs_reader_verdict v;
	struct dsfs_tracker_state st;
	struct dsfs_reader_open o;
	uint64_t missed;
	char name[32];

	if (!pid || !all_follow_locked(s) || s->strays)
		return false;
	dsfs_tracker_state(r->t, &st);
	o.near = dsfs_tracker_window_for(st.count);
	o.span = o.near / 4;
	if (o.span < 64)
		o.span = 64;
	o.when = dsfs_tracker_place_of(r->t, idx);
	o.later = dsfs_tracker_use_after(r->t, idx, 0);
	v = dsfs_readers_note(&s->readers, pid, &o, s->last_report_ns);
	if (v == DSFS_READER_FEED)
		return false;
	__atomic_add_fetch(&s->other_opens, 1, __ATOMIC_RELAXED);
	if (v == DSFS_READER_LEAVE_NEW &&
	    dsfs_ratelimit(&s->other_rl, &missed)) {
		proc_name(pid, name, sizeof(name));
		dsfs_info("plan: process %u (%s) reads the data set out of the plan's order while the loader follows it: its opens are left out of the plan%s",
			  pid, name,
			  missed ? " (some such lines not logged)" : "");
	}
	return true;
}

/* Feed the open to the index-order pass (seqpass.h), logging where it
 * begins and ends.  Called with s->lock held. */
static void seqpass_access_locked(struct dsfs_sched *s, uint64_t idx,
				  uint32_t pid)
{
	uint64_t n = dsfs_layout_count(s->cfg.layout), missed;

	if (!dsfs_seqpass_access(&s->seq, pid, idx) ||
	    !dsfs_ratelimit(&s->log_rl, &missed))
		return;
	if (s->seq.on)
		dsfs_info("a pass over the data set in index order, at sample %llu of %llu: fetched ahead of it while the plan does not follow it",
			  (unsigned long long)idx, (unsigned long long)n);
	else
		dsfs_info("the pass in index order ended at sample %llu (%llu samples read ahead of such passes so far)",
			  (unsigned long long)s->seq.front,
			  (unsigned long long)s->seq_samples);
}

static void access_locked(struct dsfs_sched *s, uint64_t idx, uint32_t pid)
{
	struct srank *r = dsfs_sched_route_locked(s, idx);
	struct dsfs_tracker_state was, now;
	int got;

	if (s->seek && !s->discovered) {
		seek_access_locked(s, idx);
		return;
	}
	if (!r->t || other_reader_locked(s, r, idx, pid))
		return;
	dsfs_tracker_state(r->t, &was);
	got = dsfs_tracker_access(r->t, idx);
	dsfs_tracker_state(r->t, &now);
	/* While a guess is left, only the first rank has a tracker: the
	 * group's, which took this open. */
	if (was.detected == DSFS_TRACKER_DETECTING) {
		guesses_access_locked(s, idx);
		if (now.detected == DSFS_TRACKER_LOST &&
		    guesses_right_locked(s, now.accesses)) {
			/* Every rank has its tracker now: no group's detection
			 * to hand on (group_detected_locked). */
			guesses_promote_locked(s);
			got = DSFS_TRACK_IN_PLAN;
			r = &s->ranks[0];
			dsfs_tracker_state(r->t, &now);
			now.accesses = was.accesses + 1; /* logged: the group's */
		}
	}
	/* Lost or found: every process is judged afresh; a new epoch: all
	 * but other programs (a DataLoader's new workers open samples of
	 * both epochs at first). */
	if (now.detected != was.detected)
		dsfs_readers_clear(&s->readers);
	else if (now.epoch != was.epoch)
		dsfs_readers_new_epoch(&s->readers);
	/* (A lost tracker's candidates moving on an epoch is no news.) */
	if (now.detected != was.detected ||
	    (now.epoch != was.epoch && now.detected != DSFS_TRACKER_DETECTING &&
	     now.detected != DSFS_TRACKER_LOST))
		log_change_locked(s, r, &was, &now,
				  got == DSFS_TRACK_DETECTED && s->nranks > 1);
	/* A group's detection keeps the leads of right guesses; then, or
	 * once one rank knows its epoch (dsfs_sched_rank_update_locked keeps
	 * a right guess's lead) or lost it, the guesses end. */
	if (got == DSFS_TRACK_DETECTED && s->nranks > 1)
		group_detected_locked(s);
	if (was.detected == DSFS_TRACKER_DETECTING &&
	    now.detected != DSFS_TRACKER_DETECTING)
		guesses_end_locked(s);
	dsfs_sched_publish_now_locked(s);
	if (wake_worth_locked(s))
		pthread_cond_signal(&s->wake);
}

/* The sample path (relative to SOURCE) is: 0 and *idx, -ENOENT if none.
 * *linked: known only as the target of a symlink. */
int dsfs_sched_sample_of(const struct dsfs_sched *s, const char *path,
			 uint64_t *idx, bool *linked)
{
	*linked = false;
	if (!dsfs_layout_lookup_in(s->cfg.layout, s->cfg.plan->dir, path,
				   idx))
		return 0;
	/* A sample opened through a symlink shows its target's path. */
	*linked = true;
	return dsfs_layout_lookup_alias(s->cfg.layout, path, idx);
}

bool dsfs_sched_linked(const struct dsfs_sched *s, const char *path)
{
	uint64_t idx;
	bool linked;

	return !dsfs_sched_sample_of(s, path, &idx, &linked) && linked;
}

uint64_t dsfs_sched_access(struct dsfs_sched *s, const char *path,
			   uint32_t pid, uint64_t *seq)
{
	uint64_t idx, when, now;
	bool linked;

	*seq = __atomic_load_n(&s->reports, __ATOMIC_RELAXED);
	if (dsfs_sched_sample_of(s, path, &idx, &linked)) {
		dsfs_sched_side_access(s, path, pid);
		return DSFS_CACHE_NEVER;
	}
	now = dsfs_sched_coarse_ns();
	pthread_mutex_lock(&s->lock);
	s->last_report_ns = now;
	/* Relaxed: dsfs_sched_recent reads it without the lock. */
	__atomic_store_n(&s->reports, s->reports + 1, __ATOMIC_RELAXED);
	*seq = s->reports;
	seqpass_access_locked(s, idx, pid);
	access_locked(s, idx, pid);
	when = dsfs_sched_next_use_locked(s, idx);
	pthread_mutex_unlock(&s->lock);
	return when;
}
