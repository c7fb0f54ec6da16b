// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The stats snapshot (format in stats.h) and its delivery as a hidden,
 * read-only extended attribute of the mount root.  One function builds the
 * document for every consumer; dsfs-stats renders it.  Any FUSE worker may
 * call it; it only reads relaxed counters and the modules' own stats calls,
 * and the plan and its scheduler under plan_lock (dsfs_sched_hold).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "discover.h"
#include "dsfs.h"
#include "log.h"

struct doc {
	char *buf;
	size_t size, len;	/* len may exceed size: the bytes needed */
};

static void put(struct doc *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct doc *d, const char *fmt, ...)
{
	size_t room = d->len < d->size ? d->size - d->len : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(d->buf ? d->buf + d->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		d->len += (size_t)n;
}

/* A JSON string token; dsfs only puts paths and fixed words here. */
static void put_str(struct doc *d, const char *key, const char *val)
{
	const char *s;

	put(d, "%s \"", key);
	for (s = val; *s; s++) {
		if (*s == '"' || *s == '\\')
			put(d, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			put(d, "\\u%04x", *s);
		else
			put(d, "%c", *s);
	}
	put(d, "\"\n");
}

static void put_u64(struct doc *d, const char *key, uint64_t v)
{
	put(d, "%s %llu\n", key, (unsigned long long)v);
}

static void put_counters(struct doc *d, const struct dsfs_counters *c)
{
	put_u64(d, "reads", dsfs_counter_get(&c->reads));
	put_u64(d, "read_bytes", dsfs_counter_get(&c->read_bytes));
	put_u64(d, "hit_bytes", dsfs_counter_get(&c->hit_bytes));
	put_u64(d, "miss_bytes", dsfs_counter_get(&c->miss_bytes));
	put_u64(d, "stalls", dsfs_counter_get(&c->stalls));
	put(d, "stall_seconds %.6f\n", (double)dsfs_counter_get(&c->stall_ns) / 1e9);
	put_u64(d, "bypass_bytes", dsfs_counter_get(&c->bypass_bytes));
	put_u64(d, "errors", dsfs_counter_get(&c->errors));
	put_u64(d, "pushes", dsfs_counter_get(&c->pushes));
	put_u64(d, "push_bytes", dsfs_counter_get(&c->push_bytes));
	put_u64(d, "push_skipped", dsfs_counter_get(&c->push_skipped));
	put_u64(d, "direct_opens", dsfs_counter_get(&c->direct_opens));
	put_u64(d, "cached_opens", dsfs_counter_get(&c->cached_opens));
	put_u64(d, "warmed", dsfs_counter_get(&c->warmed));
	put_u64(d, "warm_bytes", dsfs_counter_get(&c->warm_bytes));
}

/* Each local rank's place: one JSON array of objects on one line. */
static void put_ranks(struct doc *d, const struct dsfs_sched_stats *st,
		      const char *const *modes)
{
	const struct dsfs_sched_rank_stats *r;
	uint32_t i;

	put(d, "plan.ranks [");
	for (i = 0; i < st->nranks && i < DSFS_SCHED_STATS_RANKS; i++) {
		r = &st->ranks[i];
		put(d, "%s{\"rank\": %u, \"epoch\": %llu, \"position\": %llu, \"lead_items\": %llu, \"lead_bytes\": %llu, \"mispredictions\": %llu, \"detected\": \"%s\"}",
		    i ? ", " : "", r->rank,
		    (unsigned long long)r->track.epoch,
		    (unsigned long long)r->track.low,
		    (unsigned long long)r->lead_items,
		    (unsigned long long)r->lead_bytes,
		    (unsigned long long)r->track.mispredictions,
		    modes[r->track.detected]);
	}
	put(d, "]\n");
}

/* seed=discover: the searches, and what the epoch's state is. */
static void put_seek(struct doc *d, const struct dsfs_sched_stats *st)
{
	const struct dsfs_seek_stats *k = &st->seek;
	const char *det = "searching";

	if (k->state == DSFS_SEEK_FAILED ||
	    (k->state == DSFS_SEEK_FOLLOWING &&
	     st->track.detected == DSFS_TRACKER_LOST))
		det = "lost";
	else if (k->state == DSFS_SEEK_FOLLOWING)
		det = "discovered";
	put_str(d, "plan.detected", det);
	put_u64(d, "plan.searches", k->searches);
	put(d, "plan.search_seconds %.3f\n", k->search_seconds);
	put_u64(d, "plan.discovered", k->found_count);
}

/* Where the loaders are in the plan, as the trackers see it. */
static void put_sched(struct doc *d, const struct dsfs_sched_stats *st)
{
	static const char *const modes[] = {
		[DSFS_TRACKER_CONFIGURED] = "configured",
		[DSFS_TRACKER_DETECTED] = "epoch-detected",
		[DSFS_TRACKER_LOST] = "lost",
		[DSFS_TRACKER_DETECTING] = "detecting",
	};

	put_u64(d, "plan.epoch", st->discover ? st->seek.epoch : st->track.epoch);
	put_u64(d, "plan.position", st->track.low);
	put_u64(d, "plan.length", st->track.count);
	put_u64(d, "plan.lead_items", st->lead_items);
	put_u64(d, "plan.lead_bytes", st->lead_bytes);
	put_u64(d, "plan.mispredictions", st->track.mispredictions);
	put_u64(d, "plan.accesses", st->track.accesses);
	put_u64(d, "plan.other_opens", st->other_opens);
	put_u64(d, "plan.index_pass_samples", st->index_pass_samples);
	put_u64(d, "plan.sample_opens", st->sample_opens);
	if (st->last_open_ns != UINT64_MAX)
		put(d, "plan.last_open_seconds %.1f\n",
		    (double)st->last_open_ns / 1e9);
	put_u64(d, "plan.prefetch_bytes", st->prefetch_bytes);
	if (st->discover)
		put_seek(d, st);
	else
		put_str(d, "plan.detected", modes[st->track.detected]);
	put_ranks(d, st, modes);
}

/*
 * The plan in force (fs->plan, held), then where the loader is in it.  A
 * seed that fits a JSON number exactly (|seed| < 2^53) is a number, any
 * other a string, so no reader loses digits.  sched: NULL without a plan.
 */
static void put_plan(struct doc *d, const struct dsfs_plan_cfg *p,
		     const struct dsfs_sched_stats *sched)
{
	const struct dsfs_seed *seed = &p->sampler.seed;
	char *opts = dsfs_plan_cfg_string(p);

	if (!p->sampler_auto)
		put_str(d, "plan.sampler", dsfs_sampler_name(p->sampler.kind));
	else if (sched && sched->discover && sched->seek.found)
		put_str(d, "plan.sampler",
			sched->seek.model == DSFS_DISCOVER_RANDOM ?
				"torch-random" : "torch-distributed");
	else
		put_str(d, "plan.sampler", "auto");
	if (p->discover) {
		/* The effective seed found for the latest epoch, if any. */
		if (sched && sched->discover && sched->seek.found)
			put(d, "plan.seed %u\n", sched->seek.seed);
		else
			put_str(d, "plan.seed", "discover");
	} else if (p->sampler.kind != DSFS_SAMPLER_NONE &&
		   p->sampler.kind != DSFS_SAMPLER_SEQUENTIAL) {
		if (dsfs_seed_fits(seed, -(1ll << 53) + 1, (1ull << 53) - 1))
			put(d, "plan.seed %s\n", seed->text);
		else
			put_str(d, "plan.seed", seed->text);
	}
	if (opts)
		put_str(d, "plan.options", opts);
	free(opts);
	if (sched)
		put_sched(d, sched);
	else
		put_str(d, "plan.detected", "none");
}

/* The plan's lines, with plan_lock held for reading around them. */
static void put_plan_held(struct doc *d, struct dsfs_fs *fs)
{
	struct dsfs_sched_stats ss;
	struct dsfs_sched *s = dsfs_sched_hold(fs);

	if (s)
		dsfs_sched_get_stats(s, &ss);
	put_plan(d, fs->plan, s ? &ss : NULL);
	dsfs_sched_unhold(fs);
}

size_t dsfs_stats_plan_doc(struct dsfs_fs *fs, char *buf, size_t size)
{
	struct doc d = { buf, size, 0 };

	put_plan_held(&d, fs);
	return d.len;
}

/* The arena's node list ("0", "0-2,4") as a JSON array of numbers. */
static void put_nodes(struct doc *d, const char *key, const char *text)
{
	const char *p = text;
	const char *sep = "";

	put(d, "%s [", key);
	while (*p) {
		char *e;
		unsigned long a = strtoul(p, &e, 10), b = a, i;

		if (e == p)
			break;
		if (*e == '-')
			b = strtoul(e + 1, &e, 10);
		for (i = a; i <= b && i - a < 1024; i++) {
			put(d, "%s%lu", sep, i);
			sep = ",";
		}
		p = *e == ',' ? e + 1 : e;
	}
	put(d, "]\n");
}

/* Seconds since the mount was set up. */
static double uptime(const struct dsfs_fs *fs)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - fs->started.tv_sec) +
	       (double)(now.tv_nsec - fs->started.tv_nsec) / 1e9;
}

/* Build the document into buf (size 0: just measure).  Returns its length. */
static size_t stats_doc(struct dsfs_fs *fs, char *buf, size_t size)
{
	struct doc d = { buf, size, 0 };
	struct dsfs_cache_stats cs;
	struct dsfs_io_stats is;
	struct dsfs_sched_stats ss = { 0 };
	struct dsfs_sched *s;
	uint64_t prefetched;

	dsfs_cache_get_stats(fs->cache, &cs);
	dsfs_io_get_stats(fs->io, &is);
	/* fetched ahead of readers: by the heuristics and by the plan (a
	 * plan change moves its scheduler's count to the counter, held) */
	s = dsfs_sched_hold(fs);
	if (s)
		dsfs_sched_get_stats(s, &ss);
	prefetched = dsfs_counter_get(&fs->counters.prefetch_bytes) +
		     ss.prefetch_bytes;
	dsfs_sched_unhold(fs);
	put_str(&d, "version", PACKAGE_VERSION);
	put_str(&d, "source", fs->opts.source);
	put_str(&d, "mountpoint", fs->opts.mountpoint);
	put(&d, "uptime_seconds %.3f\n", uptime(fs));
	put_counters(&d, &fs->counters);
	put_u64(&d, "prefetch_bytes", prefetched);
	put_u64(&d, "backing_read_bytes", is.bytes);
	put_u64(&d, "fd_pool_misses", dsfs_fdpool_misses(fs->fdpool));
	put_u64(&d, "evictions", cs.evictions);
	put_u64(&d, "evicted_unused_bytes", cs.evicted_unused_bytes);
	put_u64(&d, "cache.capacity_bytes", cs.capacity_bytes);
	put_u64(&d, "cache.used_bytes", cs.used_bytes);
	put_u64(&d, "cache.entries", cs.entries);
	put_u64(&d, "cache.scattered", cs.scattered);
	put_u64(&d, "cache.rejections", cs.rejections);
	put_u64(&d, "cache.invalidations", cs.invalidations);
	put_u64(&d, "cache.verify_failures", cs.verify_failures);
	put_str(&d, "cache.page_kind", dsfs_page_kind_name(fs->arena.kind));
	put_nodes(&d, "cache.numa_nodes", fs->arena.nodes);
	put_str(&d, "page_cache", dsfs_direct_state(fs));
	put_str(&d, "io.engine", is.uring ? "io_uring" : "threads");
	put(&d, "io.direct %s\n",
	    __atomic_load_n(&fs->direct_io, __ATOMIC_RELAXED) ? "true" : "false");
	put(&d, "io.fixed_buffers %s\n", is.fixed ? "true" : "false");
	put_u64(&d, "io.depth", fs->opts.io_depth);
	put_u64(&d, "io.inflight", is.inflight);
	put_u64(&d, "io.reads", is.reads);
	put_u64(&d, "io.errors", is.errors);
	put_plan_held(&d, fs);
	return d.len;
}

/* May this caller read the stats?  Root, the mounting user, or anyone with
 * stats=public. */
static bool stats_allowed(struct dsfs_fs *fs, fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	return fs->opts.stats_public || ctx->uid == 0 || ctx->uid == fs->owner;
}

void dsfs_reply_doc(fuse_req_t req, size_t size,
		    size_t (*build)(struct dsfs_fs *fs, char *buf, size_t size))
{
	struct dsfs_fs *fs = dsfs_req_fs(req);
	char *buf;
	size_t len;

	if (!size) {
		len = build(fs, NULL, 0);
		fuse_reply_xattr(req, len + 256); /* room for counters to grow */
		return;
	}
	buf = malloc(size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	len = build(fs, buf, size);
	if (len > size)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, buf, len);
	free(buf);
}

bool dsfs_stats_xattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		      size_t size)
{
	if (ino != FUSE_ROOT_ID || strcmp(name, DSFS_STATS_XATTR))
		return false;
	if (!stats_allowed(dsfs_req_fs(req), req))
		fuse_reply_err(req, EACCES);
	else
		dsfs_reply_doc(req, size, stats_doc);
	return true;
}
