// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The plan control channel: change the plan of a mounted dsfs (sampler,
 * seed, epoch, ranks) without remounting.
 *
 * A command is a getxattr of the mount root whose name carries it,
 * "user.dsfs.plan=seed=7,epoch=3": getxattr because it reaches the daemon
 * on the read-only mount (the kernel refuses setxattr there before asking),
 * a name because no listxattr shows it.  The command has the mount-option
 * syntax and goes through the mount's own option table and plan checks
 * (opts.c, plan.c); the value replied is the plan now in force, as the
 * plan.* lines of the stats.  "user.dsfs.plan" alone only replies the plan;
 * "user.dsfs.plan.error" replies the message of the last refused command.
 * Only root and the user who mounted may use them (EPERM for others).
 *
 * A command naming sampler= states the plan afresh; any other changes the
 * options it names on top of the plan in force.  layout=, dataset=, list=,
 * extensions= and split= with its seed and part (which files the plan
 * covers) are accepted only while the mount has not listed any (it was
 * mounted with sampler=none and never had a plan); the listing then stays
 * for the mount, and a command may only restate them.  A command that
 * leaves the plan as it is changes nothing, so a caller that asks twice
 * (for the size first, as getfattr does) applies it once and gets the same
 * answer both times.
 *
 * Threads: any FUSE worker.  ctl->lock serialises the commands and
 * protects struct dsfs_ctl.  A change lists the files if needed and starts
 * the new scheduler first, without plan_lock (O(files) for a listing), then
 * swaps fs->plan and fs->sched holding plan_lock for writing, and stops the
 * old scheduler after: workers that use either hold plan_lock for reading
 * (dsfs_sched_hold) for as long as they use them.  plan_lock prefers
 * writers, so a steady stream of lookups cannot starve a command; no
 * thread takes it twice, so that preference cannot deadlock a reader.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsfs.h"
#include "log.h"

/* One plan and the option strings its configuration points into. */
struct plan_gen {
	struct dsfs_plan_opts opts;
	struct dsfs_plan_cfg cfg;
};

struct dsfs_ctl {
	pthread_mutex_t lock;	/* serialises commands; protects the rest */
	struct plan_gen *gen;	/* the plan in force once changed; NULL:
				   the mount's (fs->opts.plan) */
	char error[512];	/* the last refused command's message */
	uint64_t reports;	/* the latest report number of the plans
				   replaced (dsfs_sched_reports) */
};

static void gen_free(struct plan_gen *g)
{
	if (!g)
		return;
	dsfs_plan_opts_free(&g->opts);
	free(g);
}

int dsfs_ctl_init(struct dsfs_fs *fs)
{
	pthread_rwlockattr_t attr;
	int err;

	fs->ctl = calloc(1, sizeof(*fs->ctl));
	if (!fs->ctl)
		return -ENOMEM;
	pthread_rwlockattr_init(&attr);
	/* Without it glibc lets readers in while a writer waits. */
	pthread_rwlockattr_setkind_np(&attr,
				      PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	err = pthread_rwlock_init(&fs->plan_lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	if (err) {
		free(fs->ctl);
		fs->ctl = NULL;
		return -err;
	}
	pthread_mutex_init(&fs->ctl->lock, NULL);
	fs->plan = &fs->opts.plan;
	return 0;
}

void dsfs_ctl_free(struct dsfs_fs *fs)
{
	struct dsfs_ctl *c = fs->ctl;

	if (!c)
		return;
	fs->plan = &fs->opts.plan;
	gen_free(c->gen);
	pthread_mutex_destroy(&c->lock);
	pthread_rwlock_destroy(&fs->plan_lock);
	free(c);
	fs->ctl = NULL;
}

struct dsfs_sched *dsfs_sched_hold(struct dsfs_fs *fs)
{
	pthread_rwlock_rdlock(&fs->plan_lock);
	return fs->sched;
}

void dsfs_sched_unhold(struct dsfs_fs *fs)
{
	pthread_rwlock_unlock(&fs->plan_lock);
}

static bool push_filled(void *arg, const struct dsfs_cache_key *k,
			uint32_t len, uint64_t size, uint64_t when,
			uint64_t after)
{
	return dsfs_push_offer(arg, k, len, size, when, after);
}

/* cfg.settled: the watch of SOURCE has applied every change (fresh.c). */
static bool settled(void *arg, uint64_t dev)
{
	return dsfs_fresh_settled(arg, dev);
}

int dsfs_ctl_sched_start(struct dsfs_fs *fs, const struct dsfs_plan_cfg *plan,
			 struct dsfs_layout *layout,
			 struct dsfs_sched **out)
{
	struct dsfs_sched_cfg cfg = { 0 };

	cfg.root_fd = fs->root_fd;
	cfg.plan = plan;
	cfg.layout = layout;
	cfg.cache = fs->cache;
	cfg.io = fs->io;
	cfg.fdpool = fs->fdpool;
	cfg.direct_io = &fs->direct_io;
	cfg.lead_bytes = dsfs_lead_bytes(fs);
	cfg.depth = fs->opts.fetch_depth;
	cfg.depth_ahead = fs->opts.fetch_depth_ahead;
	cfg.names_changed = &fs->names_changed;
	cfg.waited = &fs->waited;
	cfg.names_listed = __atomic_load_n(&fs->names_listed, __ATOMIC_RELAXED);
	if (fs->push) {
		cfg.filled = push_filled;
		cfg.filled_arg = fs->push;
	}
	cfg.settled = settled;
	cfg.settled_arg = fs;
	cfg.dev = fs->root_dev;
	return dsfs_sched_start(&cfg, out);
}

/* The options that say which files the plan covers, with their values
 * when not given.  All but weights= (the sampler's) stay with a plan
 * stated afresh. */
static const struct listing_opt {
	const char *name;
	size_t off;		/* in struct dsfs_plan_opts */
	const char *dflt;
} listing[] = {
	{ "layout", offsetof(struct dsfs_plan_opts, layout), "imagefolder" },
	{ "dataset", offsetof(struct dsfs_plan_opts, dataset), "." },
	{ "list", offsetof(struct dsfs_plan_opts, list), NULL },
	{ "extensions", offsetof(struct dsfs_plan_opts, extensions), NULL },
	{ "suffix", offsetof(struct dsfs_plan_opts, suffix), NULL },
	{ "hidden", offsetof(struct dsfs_plan_opts, hidden), "keep" },
	{ "split", offsetof(struct dsfs_plan_opts, split), NULL },
	{ "split_seed", offsetof(struct dsfs_plan_opts, split_seed), NULL },
	{ "split_part", offsetof(struct dsfs_plan_opts, split_part), "0" },
	{ "weights", offsetof(struct dsfs_plan_opts, weights), NULL },
};
#define LISTING_OPTS (sizeof(listing) / sizeof(listing[0]))
#define LISTING_KEPT (LISTING_OPTS - 1) /* the first ones, all but weights */

static char *listing_value(const struct dsfs_plan_opts *o, size_t i)
{
	return *(char *const *)((const char *)o + listing[i].off);
}

/* dst's listing options but weights= become src's (pointers shared). */
static void listing_copy(struct dsfs_plan_opts *dst,
			 const struct dsfs_plan_opts *src)
{
	size_t i;

	for (i = 0; i < LISTING_KEPT; i++)
		*(char **)((char *)dst + listing[i].off) =
			listing_value(src, i);
}

/*
 * layout=, dataset=, list=, extensions=, suffix=, hidden=, split=,
 * split_seed=, split_part=,
 * weights=: free while the mount has listed no files, and then only
 * restated (getfattr sends a command twice: see the file comment); the
 * weights are read with the listing, one per file.
 */
static int check_listing(const struct dsfs_fs *fs,
			 const struct dsfs_plan_opts *cur,
			 const struct dsfs_plan_opts *over, char *why,
			 size_t whylen)
{
	size_t i;

	for (i = 0; fs->layout && i < LISTING_OPTS; i++) {
		const char *val = listing_value(over, i),
			   *was = listing_value(cur, i);

		if (!was)
			was = listing[i].dflt;
		if (!val || (was && !strcmp(val, was)))
			continue;
		snprintf(why, whylen, "%s=%s: cannot change without remounting (the plan's files are listed once per mount, here with %s=%s)",
			 listing[i].name, val, listing[i].name,
			 was ? was : "(none)");
		return -EINVAL;
	}
	return 0;
}

/*
 * The plan `over` asks for on top of the plan in force (afresh when it
 * names sampler=, but for the files covered): *out, or -errno with why.
 */
static int gen_build(struct dsfs_fs *fs, const struct dsfs_plan_opts *over,
		     struct plan_gen **out, char *why, size_t whylen)
{
	const struct dsfs_plan_opts *cur = fs->ctl->gen ? &fs->ctl->gen->opts :
					   &fs->opts.plan_opts;
	struct dsfs_plan_opts fresh = { 0 }, view;
	struct plan_gen *g;
	int err = check_listing(fs, cur, over, why, whylen);

	if (err)
		return err;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	listing_copy(&fresh, cur);
	err = dsfs_plan_opts_merge(&g->opts, over->sampler ? &fresh : cur, over);
	if (err) {
		free(g);
		return err;
	}
	if (over->rank && !over->ranks) { /* each replaces the other */
		free(g->opts.ranks);
		g->opts.ranks = NULL;
	}
	if (over->ranks && !over->rank) {
		free(g->opts.rank);
		g->opts.rank = NULL;
	}
	/* Without a plan, the files last covered are kept for the next one,
	 * but not shown to the checks, which refuse them with sampler=none. */
	view = g->opts;
	if (!view.sampler || !strcmp(view.sampler, "none")) {
		listing_copy(&view, over);
	}
	err = dsfs_plan_cfg_parse(&view, &g->cfg, why, whylen);
	if (err) {
		gen_free(g);
		return err;
	}
	*out = g;
	return 0;
}

static bool same_plan(const struct dsfs_plan_cfg *a,
		      const struct dsfs_plan_cfg *b)
{
	char *sa = dsfs_plan_cfg_string(a), *sb = dsfs_plan_cfg_string(b);
	bool same = sa && sb && !strcmp(sa, sb);

	free(sa);
	free(sb);
	return same;
}

/* A scheduler for g's plan, listing the files first if the mount has none
 * yet (*listed: the new listing, for the caller to install; the data set
 * picked as at a mount, dsfs_plan_list). */
static int start_plan(struct dsfs_fs *fs, struct plan_gen *g,
		      struct dsfs_layout **listed, struct dsfs_sched **out,
		      char *why, size_t whylen)
{
	const struct dsfs_plan_cfg *p = &g->cfg;
	struct dsfs_layout *layout = fs->layout;
	int err;

	*listed = NULL;
	if (!layout) {
		__atomic_store_n(&fs->names_listed,
				 __atomic_load_n(&fs->names_changed,
						 __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
		err = dsfs_plan_list(&g->opts, &g->cfg, fs->root_fd, true,
				     listed, why, whylen);
		if (err) /* the command named what is missing or wrong */
			return err == -ENOMEM ? err : -EINVAL;
		layout = *listed;
	}
	if (dsfs_plan_check_epoch(p, layout, why, whylen)) {
		dsfs_layout_free(*listed);
		*listed = NULL;
		return -EINVAL;
	}
	err = dsfs_ctl_sched_start(fs, p, layout, out);
	if (err) {
		snprintf(why, whylen, "cannot start following sampler=%s: %s",
			 dsfs_sampler_name(p->sampler.kind), strerror(-err));
		dsfs_layout_free(*listed);
		*listed = NULL;
	}
	return err;
}

/* Install g, with its scheduler s, as the plan in force. */
static void swap_plan(struct dsfs_fs *fs, struct plan_gen *g,
		      struct dsfs_layout *listed, struct dsfs_sched *s)
{
	struct dsfs_sched *old;

	pthread_rwlock_wrlock(&fs->plan_lock);
	if (listed)
		fs->layout = listed;
	fs->plan = &g->cfg;
	old = fs->sched;
	if (old) {
		struct dsfs_sched_stats st;

		/* The stats' prefetch_bytes stays monotonic; what the old
		 * scheduler's reads in flight bring in is not counted. */
		dsfs_sched_get_stats(old, &st);
		dsfs_count(&fs->counters.prefetch_bytes, st.prefetch_bytes);
		fs->ctl->reports = dsfs_sched_reports(old);
	}
	/* No worker reports under plan_lock: the inodes' report numbers
	 * (dsfs_note_access) stay comparable across plans, and plan off. */
	if (s)
		dsfs_sched_number_from(s, fs->ctl->reports);
	/* read.c tests it without plan_lock, as a flag: an atomic store
	 * keeps that read whole; no ordering is needed for a flag. */
	__atomic_store_n(&fs->sched, s, __ATOMIC_RELAXED);
	pthread_rwlock_unlock(&fs->plan_lock);
	dsfs_sched_stop(old); /* no worker can reach it any more */
	gen_free(fs->ctl->gen); /* nor its plan, now stopped */
	fs->ctl->gen = g;
}

/* Apply cmd under ctl->lock: 1 if the plan changed, 0 if it already was
 * what cmd asks, or -errno with a one-line message in why. */
static int apply(struct dsfs_fs *fs, const char *cmd, char *why,
		 size_t whylen)
{
	struct dsfs_plan_opts over;
	struct dsfs_layout *listed = NULL;
	struct dsfs_sched *s = NULL;
	struct plan_gen *g = NULL;
	int err;

	err = dsfs_opts_parse_plan_cmd(cmd, &over, why, whylen);
	if (err)
		return err;
	err = gen_build(fs, &over, &g, why, whylen);
	dsfs_plan_opts_free(&over);
	if (err)
		return err;
	if (same_plan(&g->cfg, fs->plan)) {
		gen_free(g);
		return 0;
	}
	if (g->cfg.sampler.kind != DSFS_SAMPLER_NONE)
		err = start_plan(fs, g, &listed, &s, why, whylen);
	if (err) {
		gen_free(g);
		return err;
	}
	swap_plan(fs, g, listed, s);
	if (listed) /* the mount's first plan: the tree's size is known now */
		dsfs_memroom_advise(fs);
	return 1;
}

/* A command from uid: 0 or -errno; logged, and the message of a refusal
 * kept for DSFS_PLAN_XATTR ".error". */
static int command(struct dsfs_fs *fs, const char *cmd, unsigned uid)
{
	struct dsfs_ctl *c = fs->ctl;
	char why[512] = "", *now;
	int err;

	pthread_mutex_lock(&c->lock);
	err = apply(fs, cmd, why, sizeof(why));
	if (err < 0) {
		if (!why[0])
			snprintf(why, sizeof(why), "%s", strerror(-err));
		snprintf(c->error, sizeof(c->error), "%s", why);
		dsfs_warn("plan: command \"%s\" from uid %u refused: %s", cmd,
			  uid, why);
	} else if (err > 0) {
		err = 0;
		now = dsfs_plan_cfg_string(fs->plan);
		dsfs_info("plan: %s (command \"%s\" from uid %u)",
			  now ? now : "changed", cmd, uid);
		free(now);
	}
	pthread_mutex_unlock(&c->lock);
	return err;
}

static size_t error_doc(struct dsfs_fs *fs, char *buf, size_t size)
{
	size_t len;

	pthread_mutex_lock(&fs->ctl->lock);
	len = strlen(fs->ctl->error);
	if (size)
		memcpy(buf, fs->ctl->error, len < size ? len : size);
	pthread_mutex_unlock(&fs->ctl->lock);
	return len;
}

bool dsfs_ctl_name(const char *name)
{
	static const size_t n = sizeof(DSFS_PLAN_XATTR) - 1;
	const char *rest = name + n;

	return !strncmp(name, DSFS_PLAN_XATTR, n) &&
	       (!*rest || *rest == '=' || !strcmp(rest, ".error"));
}

bool dsfs_ctl_xattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		    size_t size)
{
	static const size_t n = sizeof(DSFS_PLAN_XATTR) - 1;
	struct dsfs_fs *fs = dsfs_req_fs(req);
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	const char *rest = name + n;
	int err;

	if (ino != FUSE_ROOT_ID || !dsfs_ctl_name(name))
		return false;
	if (ctx->uid != 0 && ctx->uid != fs->owner) {
		fuse_reply_err(req, EPERM);
		return true;
	}
	if (*rest == '.') {
		dsfs_reply_doc(req, size, error_doc);
		return true;
	}
	err = *rest == '=' ? command(fs, rest + 1, (unsigned)ctx->uid) : 0;
	if (err)
		fuse_reply_err(req, -err);
	else
		dsfs_reply_doc(req, size, dsfs_stats_plan_doc);
	return true;
}
