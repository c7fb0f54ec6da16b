// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Seek (see seek.h): per-epoch seed discovery around the search engine of
 * discover.h.
 *
 * Locking: the caller's lock serialises everything but the retired list,
 * which has its own mutex (a leaf: never held while joining threads), so
 * that a search cancelled under the caller's lock is joined later without
 * it.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "discover.h"
#include "log.h"
#include "sampler.h"
#include "seek.h"

#define SEEK_WANT 32	    /* first opens collected at least */
#define SEEK_FALSE_MAX 1e-3 /* more opens while wrong seeds could pass */
#define SEEK_KEEP_MAX (1u << 20) /* opens kept while a search runs */

struct retired {
	struct dsfs_discover *d;
	struct retired *next;
};

struct dsfs_seek {
	struct dsfs_seek_cfg cfg;
	uint64_t *opened;		/* n bits: opened this epoch */
	uint64_t nopens;		/* opens this epoch */
	enum dsfs_seek_state state;
	uint64_t epoch;
	uint32_t observed[DSFS_DISCOVER_MAX_OBSERVED];
	uint32_t nobserved;
	uint32_t *kept;			/* opens after `observed`, searching */
	uint32_t nkept, capkept;
	uint32_t want;			/* opens to collect; 0: the default */
	bool retried;			/* this epoch's search runs again */
	struct dsfs_discover *d;	/* the running search, or NULL */
	pthread_mutex_t rlock;		/* protects retired */
	struct retired *retired;
	bool found;
	uint32_t seed;
	unsigned model;
	uint64_t searches, found_count;
	double search_seconds;
};

int dsfs_seek_new(const struct dsfs_seek_cfg *cfg, struct dsfs_seek **out)
{
	struct dsfs_seek *s;

	*out = NULL;
	if (cfg->n < 2 || cfg->n >= DSFS_SAMPLER_TORCH_MAX_N ||
	    cfg->count > DSFS_SAMPLER_MAX_N ||
	    cfg->first >= cfg->end || cfg->end > DSFS_DISCOVER_SEEDS)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	s->opened = calloc((cfg->n + 63) / 64, sizeof(uint64_t));
	if (!s->opened) {
		free(s);
		return -ENOMEM;
	}
	pthread_mutex_init(&s->rlock, NULL);
	*out = s;
	return 0;
}

/* Hand a search over for joining outside the caller's lock. */
static void retire(struct dsfs_seek *s)
{
	struct retired *r;

	if (!s->d)
		return;
	dsfs_discover_cancel(s->d);
	r = malloc(sizeof(*r));
	if (!r) { /* cannot defer: it is cancelled; join now (rare) */
		dsfs_discover_free(s->d);
		s->d = NULL;
		return;
	}
	r->d = s->d;
	s->d = NULL;
	pthread_mutex_lock(&s->rlock);
	r->next = s->retired;
	s->retired = r;
	pthread_mutex_unlock(&s->rlock);
}

void dsfs_seek_reap(struct dsfs_seek *s)
{
	struct retired *r, *next;

	pthread_mutex_lock(&s->rlock);
	r = s->retired;
	s->retired = NULL;
	pthread_mutex_unlock(&s->rlock);
	for (; r; r = next) {
		next = r->next;
		dsfs_discover_free(r->d);
		free(r);
	}
}

bool dsfs_seek_reapable(struct dsfs_seek *s)
{
	bool any;

	pthread_mutex_lock(&s->rlock);
	any = s->retired != NULL;
	pthread_mutex_unlock(&s->rlock);
	return any;
}

void dsfs_seek_free(struct dsfs_seek *s)
{
	if (!s)
		return;
	retire(s);
	dsfs_seek_reap(s);
	pthread_mutex_destroy(&s->rlock);
	free(s->kept);
	free(s->opened);
	free(s);
}

/* Forget the epoch that ended; the next one starts collecting.  O(n/64). */
static void new_epoch(struct dsfs_seek *s)
{
	retire(s);
	memset(s->opened, 0, (s->cfg.n + 63) / 64 * sizeof(uint64_t));
	s->epoch++;
	s->state = DSFS_SEEK_COLLECTING;
	s->nobserved = s->nkept = 0;
	s->nopens = 0;
	s->found = false;
	s->want = 0;
	s->retried = false;
}

/* Positions of the epoch's first permutation that it reads: what a search
 * can match. */
static uint64_t head_len(const struct dsfs_seek *s)
{
	return s->cfg.count && s->cfg.count < s->cfg.n ? s->cfg.count :
							 s->cfg.n;
}

/* The search's configuration over the opens collected so far. */
static void search_cfg(const struct dsfs_seek *s, struct dsfs_discover_cfg *dc)
{
	uint32_t room = (uint32_t)(head_len(s) - s->nobserved);
	/* The epoch's first sample may come after many others: a worker (or,
	 * distributed, a local rank) that starts late opens its first batch
	 * after the others opened theirs. */
	uint32_t heads = DSFS_DISCOVER_MAX_HEADS;

	memset(dc, 0, sizeof(*dc));
	dc->n = (uint32_t)s->cfg.n;
	dc->models = s->cfg.models;
	dc->world = s->cfg.world;
	dc->rank_first = s->cfg.rank_first;
	dc->rank_last = s->cfg.rank_last;
	dc->observed = s->observed;
	dc->nobserved = s->nobserved;
	dc->heads = s->nobserved < heads ? s->nobserved : heads;
	dc->window = s->cfg.window < room ? s->cfg.window : room;
	if (dc->window > DSFS_DISCOVER_MAX_WINDOW)
		dc->window = DSFS_DISCOVER_MAX_WINDOW;
	dc->first = s->cfg.first;
	dc->end = s->cfg.end;
	dc->threads = s->cfg.threads;
	dc->prio = DSFS_DISCOVER_IDLE;
	dc->path = DSFS_DISCOVER_AUTO;
	dc->on_done = s->cfg.wake;
	dc->arg = s->cfg.arg;
}

/* Start the search once the opens make a wrong match unlikely. */
static void maybe_start(struct dsfs_seek *s)
{
	uint64_t want = s->cfg.models & DSFS_DISCOVER_DISTRIBUTED ?
				DSFS_DISCOVER_MAX_HEADS : SEEK_WANT;
	uint64_t len = head_len(s),
		 most = len / 2 < DSFS_DISCOVER_MAX_OBSERVED ?
				len / 2 : DSFS_DISCOVER_MAX_OBSERVED;
	struct dsfs_discover_cfg dc;
	int err;

	if (want > len / 4)
		want = len / 4;
	if (s->want)
		want = s->want;
	if (s->nobserved < (want < 2 ? 2 : want))
		return;
	search_cfg(s, &dc);
	if (dsfs_discover_false_matches(&dc) > SEEK_FALSE_MAX &&
	    s->nobserved < most)
		return;
	err = dsfs_discover_start(&dc, &s->d);
	s->searches++;
	if (err) {
		dsfs_warn("plan: epoch %llu: cannot search for the seed: %s",
			  (unsigned long long)s->epoch, strerror(-err));
		s->state = DSFS_SEEK_FAILED;
		return;
	}
	s->state = DSFS_SEEK_SEARCHING;
}

/* Keep an open made while the search runs, for the tracker it yields. */
static void keep(struct dsfs_seek *s, uint32_t idx)
{
	uint32_t cap = s->capkept ? 2 * s->capkept : 1024, *k;

	if (s->nkept == s->capkept) {
		if (s->capkept >= SEEK_KEEP_MAX)
			return; /* the oldest ones are what matter */
		k = realloc(s->kept, cap * sizeof(*k));
		if (!k)
			return;
		s->kept = k;
		s->capkept = cap;
	}
	s->kept[s->nkept++] = idx;
}

bool dsfs_seek_access(struct dsfs_seek *s, uint64_t idx)
{
	bool boundary = false;

	if (idx >= s->cfg.n)
		return false;
	if (s->cfg.count && s->nopens == s->cfg.count) {
		dsfs_info("plan: epoch %llu over: its %llu samples (num_samples) opened; searching the next epoch's seed",
			  (unsigned long long)s->epoch,
			  (unsigned long long)s->cfg.count);
		new_epoch(s);
		boundary = true;
	} else if (s->cfg.count <= s->cfg.n &&
		   s->opened[idx / 64] >> (idx % 64) & 1) {
		dsfs_info("plan: epoch %llu over: sample %llu opened again; searching the next epoch's seed",
			  (unsigned long long)s->epoch,
			  (unsigned long long)idx);
		new_epoch(s);
		boundary = true;
	}
	s->opened[idx / 64] |= 1ULL << (idx % 64);
	s->nopens++;
	switch (s->state) {
	case DSFS_SEEK_COLLECTING:
		s->observed[s->nobserved++] = (uint32_t)idx;
		maybe_start(s);
		break;
	case DSFS_SEEK_SEARCHING:
		keep(s, (uint32_t)idx);
		break;
	default:
		break;
	}
	return boundary;
}

/* The found epoch's tracker, fed every open of the epoch so far.  Its
 * order is what the fresh generator gives the sampler (sampler.h: its own
 * generator, epoch 0): one permutation, or count samples of them. */
static int follow(struct dsfs_seek *s, uint32_t seed, struct dsfs_tracker **t)
{
	struct dsfs_sampler_cfg c = {
		.kind = DSFS_SAMPLER_TORCH_RANDOM,
		.sampler_generator = true, /* no base seed from it */
		.num_samples = s->cfg.count,
	};
	uint32_t *order, i;
	uint64_t count;
	int err;

	dsfs_seed_from_i64(seed, &c.seed);
	err = dsfs_sampler_order(&c, s->cfg.n, 0, 0, &order, &count);
	if (err)
		return err;
	err = dsfs_tracker_new_fixed(order, count, s->cfg.n, s->epoch,
				     s->cfg.window, t);
	if (err)
		return err;
	for (i = 0; i < s->nobserved; i++)
		dsfs_tracker_access(*t, s->observed[i]);
	for (i = 0; i < s->nkept; i++)
		dsfs_tracker_access(*t, s->kept[i]);
	return 0;
}

/*
 * After a search that found nothing: once more over the epoch's first
 * DSFS_DISCOVER_MAX_HEADS opens (with the ones kept meanwhile), when the
 * first search saw fewer.  A worker that starts late opens its first sample
 * after the others' whole batches: the epoch's first sample was not among
 * the opens searched.  False when there is nothing more to search.
 */
static bool retry(struct dsfs_seek *s)
{
	uint64_t len = head_len(s);
	uint32_t want = len / 2 < DSFS_DISCOVER_MAX_HEADS ?
				(uint32_t)(len / 2) : DSFS_DISCOVER_MAX_HEADS;
	uint32_t i, j, more;

	if (s->retried || s->nobserved >= want)
		return false;
	/* The kept opens that join the observed ones: a sample twice among
	 * them (num_samples past n draws repeats) cannot be searched. */
	more = want - s->nobserved < s->nkept ? want - s->nobserved : s->nkept;
	for (i = 0; i < more; i++)
		for (j = 0; j < s->nobserved + i; j++)
			if ((j < s->nobserved ? s->observed[j] :
						s->kept[j - s->nobserved]) ==
			    s->kept[i])
				return false;
	s->retried = true;
	dsfs_info("plan: epoch %llu: no seed matches the epoch's first %u opens; searching again over its first %u",
		  (unsigned long long)s->epoch, s->nobserved, want);
	for (i = 0; i < more; i++)
		s->observed[s->nobserved++] = s->kept[i];
	if (i < s->nkept)
		memmove(s->kept, s->kept + i,
			(s->nkept - i) * sizeof(*s->kept));
	s->nkept -= i;
	s->want = want;
	s->state = DSFS_SEEK_COLLECTING;
	maybe_start(s);
	return true;
}

int dsfs_seek_poll(struct dsfs_seek *s, struct dsfs_tracker **t,
		   uint32_t *seed)
{
	struct dsfs_discover_result r;
	int err = 0;

	*t = NULL;
	if (s->state != DSFS_SEEK_SEARCHING || !dsfs_discover_done(s->d))
		return 0;
	dsfs_discover_result(s->d, &r);
	s->search_seconds += r.seconds;
	retire(s);
	if (r.status == -ENOENT && retry(s))
		return 0;
	if (r.status) {
		s->state = DSFS_SEEK_FAILED;
		s->nkept = 0;
		dsfs_warn("plan: epoch %llu: no seed in [%llu, %llu) opens the epoch as seen (%.1f s, %llu seeds): following no plan until the next epoch",
			  (unsigned long long)s->epoch,
			  (unsigned long long)s->cfg.first,
			  (unsigned long long)s->cfg.end, r.seconds,
			  (unsigned long long)r.tested);
		return -ENOENT;
	}
	if (r.model == DSFS_DISCOVER_RANDOM) {
		err = follow(s, r.seed, t);
		s->nkept = 0;
	}
	if (err) {
		s->state = DSFS_SEEK_FAILED;
		dsfs_warn("plan: epoch %llu: seed %u found but not followed: %s",
			  (unsigned long long)s->epoch, r.seed, strerror(-err));
		return -ENOENT;
	}
	s->state = DSFS_SEEK_FOLLOWING;
	s->found = true;
	s->seed = *seed = r.seed;
	s->model = r.model;
	s->found_count++;
	dsfs_info("plan: epoch %llu: discovered %s seed %u in %.1f s (%llu seeds searched, %s)",
		  (unsigned long long)s->epoch,
		  r.model == DSFS_DISCOVER_RANDOM ? "RandomSampler" :
						    "DistributedSampler",
		  r.seed, r.seconds, (unsigned long long)r.tested,
		  dsfs_discover_path_name(r.path));
	return r.model == DSFS_DISCOVER_RANDOM ? 1 : 2;
}

void dsfs_seek_replay(const struct dsfs_seek *s,
		      void (*fn)(void *arg, uint32_t idx), void *arg)
{
	uint32_t i;

	for (i = 0; i < s->nobserved; i++)
		fn(arg, s->observed[i]);
	for (i = 0; i < s->nkept; i++)
		fn(arg, s->kept[i]);
}

void dsfs_seek_stats(const struct dsfs_seek *s, struct dsfs_seek_stats *st)
{
	*st = (struct dsfs_seek_stats){
		.state = s->state,
		.epoch = s->epoch,
		.found = s->found,
		.seed = s->seed,
		.model = s->model,
		.searches = s->searches,
		.found_count = s->found_count,
		.search_seconds = s->search_seconds,
	};
}
