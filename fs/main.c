// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dsfs daemon entry point: parse options, check SOURCE and MOUNTPOINT, fork
 * the daemon (detach.c), build the per-mount state, mount read-only, leave
 * the terminal, and run the multi-threaded FUSE loop until unmounted or
 * signalled (SIGTERM, SIGINT, SIGHUP unmount cleanly through libfuse's
 * handlers).  Runs in the main thread; the loop's worker threads enter
 * through ops.c and dirops.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "detach.h"
#include "dsfs.h"
#include "ident.h"
#include "inodes.h"
#include "log.h"

/* Resolve a command-line path to an absolute directory path, or say why not. */
static int resolve_dir(const char *what, char **path)
{
	char *abs = realpath(*path, NULL);
	struct stat st;

	if (!abs) {
		fprintf(stderr, "dsfs: %s %s: %s\n", what, *path, strerror(errno));
		return -1;
	}
	if (stat(abs, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "dsfs: %s %s: not a directory\n", what, *path);
		free(abs);
		return -1;
	}
	free(*path);
	*path = abs;
	return 0;
}

/* A directory that is the root of a mount already has something mounted. */
static int check_not_mounted(const char *mnt)
{
	struct statx stx;

	if (statx(AT_FDCWD, mnt, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &stx) == 0 &&
	    (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	    (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT)) {
		fprintf(stderr, "dsfs: MOUNTPOINT %s: already a mount point; unmount it first or choose another directory\n",
			mnt);
		return -1;
	}
	return 0;
}

/* Whether directory `path` (absolute, resolved) is `dir` or lies below it:
 * compared by device and inode, path and each ancestor, so that another
 * name of dir (a bind mount) is seen too where it is an ancestor by name. */
static bool within(const char *path, const struct stat *dir)
{
	char *p = strdup(path), *slash;
	struct stat st;
	bool in = false;

	if (!p)
		return false;
	for (;;) {
		if (stat(*p ? p : "/", &st) == 0 && st.st_dev == dir->st_dev &&
		    st.st_ino == dir->st_ino) {
			in = true;
			break;
		}
		slash = strrchr(p, '/');
		if (!slash || !*p)
			break;
		*slash = '\0';
	}
	free(p);
	return in;
}

/* A MOUNTPOINT that is SOURCE, above it or inside it would put the mount
 * in its own tree: the daemon's reads of SOURCE would wait on itself. */
static int check_apart(const char *src, const char *mnt)
{
	struct stat s, m;
	const char *where;

	if (stat(src, &s) < 0 || stat(mnt, &m) < 0)
		return 0; /* resolve_dir() checked both: a race, found later */
	if (s.st_dev == m.st_dev && s.st_ino == m.st_ino)
		where = "is";
	else if (within(src, &m))
		where = "is above";
	else if (within(mnt, &s))
		where = "is inside";
	else
		return 0;
	fprintf(stderr, "dsfs: MOUNTPOINT %s %s SOURCE %s: the mount would be part of its own tree; choose a directory outside SOURCE\n",
		mnt, where, src);
	return -1;
}

/* fsname=SOURCE (escaped for libfuse's option parser), subtype, ro, and
 * nosuid,nodev last, so that they win over the suid and dev that mount.fuse3
 * passes when root mounts through mount(8) or fstab: a data set's setuid
 * files and device nodes never take effect through the mount. */
static int add_mount_args(struct fuse_args *args, const struct dsfs_opts *o)
{
	size_t len = strlen(o->source);
	char *opt = malloc(2 * len + 32), *p;
	const char *s;
	int err;

	if (!opt)
		return -1;
	p = opt + sprintf(opt, "-ofsname=");
	for (s = o->source; *s; s++) {
		if (*s == ',' || *s == '\\')
			*p++ = '\\';
		*p++ = *s;
	}
	*p = '\0';
	err = fuse_opt_add_arg(args, opt) ||
	      fuse_opt_add_arg(args, "-osubtype=dsfs,ro,default_permissions,nosuid,nodev");
	free(opt);
	return err ? -1 : 0;
}

/* The cache: before mounting, so a refusal (hugepages=require with too
 * small a pool, a memory cgroup too small) reaches the user's terminal and
 * nothing gets mounted. */
static int cache_init(struct dsfs_fs *fs)
{
	struct dsfs_cache_cfg ccfg = { &fs->arena, fs->opts.verify != 0 };
	char why[256] = "";
	int err;

	err = dsfs_arena_create(&fs->arena, &fs->opts.cache, why, sizeof(why));
	if (err) {
		fprintf(stderr, "dsfs: %s\n", why[0] ? why : strerror(-err));
		return -1;
	}
	if (dsfs_memroom_check(fs))
		return -1; /* the caller's cleanup unmaps the arena */
	fs->cache = dsfs_cache_new(&ccfg);
	if (!fs->cache) {
		fprintf(stderr, "dsfs: out of memory for the cache index\n");
		return -1;
	}
	return 0;
}

/* The plan's layout, built before mounting so that a bad list file or
 * dataset directory is refused on the user's terminal. */
static int plan_init(struct dsfs_fs *fs)
{
	struct dsfs_plan_cfg *p = &fs->opts.plan;
	char why[512] = "";
	int err;

	if (p->sampler.kind == DSFS_SAMPLER_NONE)
		return 0;
	err = dsfs_plan_list(&fs->opts.plan_opts, p, fs->root_fd, true,
			     &fs->layout, why, sizeof(why));
	if (!err)
		err = dsfs_plan_check_epoch(p, fs->layout, why, sizeof(why));
	if (err) {
		fprintf(stderr, "dsfs: %s\n", why[0] ? why : strerror(-err));
		return -1;
	}
	return 0;
}

static int fs_init(struct dsfs_fs *fs)
{
	struct stat st;

	fs->root_fd = open(fs->opts.source, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fs->root_fd < 0 || fstat(fs->root_fd, &st) < 0) {
		fprintf(stderr, "dsfs: SOURCE %s: %s\n", fs->opts.source,
			strerror(errno));
		return -1;
	}
	fs->owner = getuid();
	fs->root_dev = st.st_dev;
	fs->direct_io = true;
	clock_gettime(CLOCK_MONOTONIC, &fs->started);
	fs->inodes = dsfs_inodes_new(&st, dsfs_ident_gen(fs->root_fd, ""));
	fs->fdpool = dsfs_fdpool_new(fs->opts.max_open);
	if (!fs->inodes || !fs->fdpool || dsfs_ctl_init(fs)) {
		fprintf(stderr, "dsfs: out of memory\n");
		return -1;
	}
	return cache_init(fs) ? -1 : plan_init(fs);
}

/* The I/O engine: after daemonizing, as its thread would not survive
 * fuse_daemonize()'s fork. */
static int io_init(struct dsfs_fs *fs)
{
	struct dsfs_io_cfg cfg = { 0 };
	char why[256] = "";
	int err;

	cfg.depth = fs->opts.io_depth;
	cfg.fdpool = fs->fdpool;
	cfg.waited = &fs->waited;
	/* Registering pins and faults in the whole arena at once: free for
	 * hugetlb pages (reserved at mmap anyway), a start-up cost and a full
	 * cache_size of RSS from the first second for THP or 4 KiB pages. */
	if (fs->arena.kind == DSFS_PAGE_HUGETLB) {
		cfg.fixed_base = fs->arena.base;
		cfg.fixed_size = fs->arena.size;
	}
	err = dsfs_io_new(&cfg, &fs->io, why, sizeof(why));
	if (err)
		dsfs_err("I/O engine: %s", why[0] ? why : strerror(-err));
	return err;
}

static void fs_destroy(struct dsfs_fs *fs)
{
	dsfs_sched_stop(fs->sched); /* waits for its reads in flight */
	dsfs_ctl_free(fs); /* the plan it followed, if changed */
	if (fs->io)
		dsfs_io_free(fs->io); /* completes every fill in flight */
	dsfs_push_free(fs->push); /* after the last completion's offer */
	if (fs->cache)
		dsfs_cache_free(fs->cache);
	if (fs->arena.base)
		dsfs_arena_destroy(&fs->arena);
	dsfs_layout_free(fs->layout);
	dsfs_fdpool_free(fs->fdpool);
	dsfs_inodes_free(fs->inodes);
	if (fs->root_fd >= 0)
		close(fs->root_fd);
	dsfs_opts_free(&fs->opts);
}

/* The plan's scheduler: after the I/O engine, whose reads it submits.  It
 * may fetch ahead up to lead_max, and the cache refuses a fetch once
 * everything it keeps is read sooner (next-use eviction).  Before the
 * session loop: no worker uses fs->sched yet. */
static int sched_init(struct dsfs_fs *fs)
{
	const struct dsfs_plan_cfg *p = &fs->opts.plan;
	char links[64] = "", warning[512];
	uint64_t aliases;
	int err;

	if (!fs->layout)
		return 0;
	err = dsfs_ctl_sched_start(fs, p, fs->layout, &fs->sched);
	if (err) {
		dsfs_err("plan: cannot start following %s: %s",
			 dsfs_sampler_name(p->sampler.kind), strerror(-err));
		return err;
	}
	aliases = dsfs_layout_info(fs->layout)->aliases;
	if (aliases)
		snprintf(links, sizeof(links), ", %llu reached through symlinks",
			 (unsigned long long)aliases);
	dsfs_info("plan: %s over %llu samples (layout %s of %s%s), epoch %s",
		  dsfs_sampler_name(p->sampler.kind),
		  (unsigned long long)dsfs_layout_count(fs->layout),
		  dsfs_layout_kind_name(p->layout), p->dataset, links,
		  p->epoch_auto ? "auto" : "given");
	if (dsfs_plan_layout_warning(p, fs->layout, warning, sizeof(warning)))
		dsfs_warn("plan: %s", warning);
	return 0;
}

/* The cache's memory, and a fallback from huge pages worth fixing. */
static void log_cache(const struct dsfs_fs *fs)
{
	dsfs_info("cache: %llu MiB of %s pages on NUMA node(s) %s",
		  (unsigned long long)(fs->arena.size >> 20),
		  dsfs_page_kind_name(fs->arena.kind), fs->arena.nodes);
	if (fs->opts.cache.hugepages == DSFS_HUGEPAGES_AUTO &&
	    fs->arena.kind != DSFS_PAGE_HUGETLB)
		dsfs_warn(
			"cache: too few free huge pages for cache_size=%llu MiB: fell back to %s pages (more TLB misses); reserve 2 MiB pages with vm.nr_hugepages (see dsfs(8), DEPLOYMENT)",
			(unsigned long long)(fs->arena.size >> 20),
			fs->arena.kind == DSFS_PAGE_THP ? "transparent huge" :
							  "4 KiB");
}

/* Mount and serve until unmounted.  *ready: see dsfs_detach_fork (-1 in
 * the foreground); signalled (and -1) once the mount serves. */
static int run_session(struct dsfs_fs *fs, struct fuse_args *args, int *ready)
{
	struct fuse_loop_config *cfg = NULL;
	struct dsfs_fresh *fresh = NULL;
	struct dsfs_warm *warm = NULL;
	struct fuse_session *se;
	int ret = 1, err;

	se = fuse_session_new(args, &dsfs_ops, sizeof(dsfs_ops), fs);
	if (!se)
		return 1; /* libfuse said why (e.g. an unknown option) */
	if (fuse_set_signal_handlers(se) != 0)
		goto out_session;
	if (fuse_session_mount(se, fs->opts.mountpoint) != 0)
		goto out_signals;
	if (dsfs_direct_init(fs, dsfs_memroom_page_room(fs)) &&
	    (err = dsfs_devio_install(se))) {
		if (fs->direct.autom)
			dsfs_direct_unmappable(fs);
		else
			dsfs_warn("direct_io: a shared mmap of a file will fail with ENODEV (%s)",
				  strerror(-err));
	}
	if (!fs->opts.foreground) {
		if (dsfs_detach() != 0)
			goto out_unmount;
		dsfs_log_to_syslog();
	}
	log_cache(fs);
	dsfs_memroom_advise(fs);
	if (io_init(fs))
		goto out_unmount;
	if (dsfs_memroom_push(fs) && (err = dsfs_push_start(fs, se, &fs->push)))
		dsfs_warn("push: cannot start (%s): planned data is served by reads only",
			  strerror(-err));
	if (sched_init(fs))
		goto out_unmount;
	/* The watch first: the warm-up's stats are dated by it. */
	dsfs_fresh_start(fs, se, &fresh);
	if (fs->layout && (err = dsfs_warm_start(fs, &warm)))
		dsfs_warn("plan: cannot warm SOURCE's inodes ahead of a listing (%s)",
			  strerror(-err));
	__atomic_store_n(&fs->warm, warm, __ATOMIC_RELEASE);
	dsfs_info("mounted %s on %s (read-only)", fs->opts.source,
		  fs->opts.mountpoint);
	cfg = fuse_loop_cfg_create();
	if (!cfg)
		goto out_unmount;
	fuse_loop_cfg_set_max_threads(cfg, fs->opts.max_threads);
	fuse_loop_cfg_set_clone_fd(cfg, 1);
	/* A signal while setting up (Ctrl-C on a slow start) only marked the
	 * session as ended, and the loop would not have seen it. */
	if (fuse_session_exited(se)) {
		dsfs_info("stopped by a signal while starting");
		goto out_loop;
	}
	dsfs_detach_ready(ready); /* the command checks the mount answers */
	/* A positive value is the signal that ended the loop: a clean exit. */
	ret = fuse_session_loop_mt(se, cfg) < 0 ? 1 : 0;
	dsfs_info("unmounting %s", fs->opts.mountpoint);
out_loop:
	fuse_loop_cfg_destroy(cfg);
out_unmount:
	dsfs_push_stop(fs->push); /* no push to a session that is gone */
	__atomic_store_n(&fs->warm, NULL, __ATOMIC_RELEASE);
	dsfs_warm_stop(warm);
	dsfs_fresh_stop(fresh);
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_session:
	fuse_session_destroy(se);
	return ret;
}

/* dsfs --print-plan[0] SOURCE -o ...: the predicted order of one epoch. */
static int print_plan(struct dsfs_fs *fs)
{
	struct dsfs_plan_cfg *p = &fs->opts.plan;
	char why[512] = "";
	int err;

	fs->root_fd = open(fs->opts.source, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fs->root_fd < 0) {
		fprintf(stderr, "dsfs: SOURCE %s: %s\n", fs->opts.source,
			strerror(errno));
		return 1;
	}
	err = dsfs_plan_print(&fs->opts.plan_opts, p, fs->root_fd, p->epoch,
			      p->rank_first,
			      fs->opts.print_plan == 2 ? '\0' : '\n', stdout,
			      why, sizeof(why));
	if (!err && fflush(stdout))
		err = -errno;
	if (err)
		fprintf(stderr, "dsfs: %s\n", why[0] ? why : strerror(-err));
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct dsfs_fs fs = { .root_fd = -1 };
	struct fuse_args args;
	int ret = 1, ready = -1;

	if (dsfs_opts_parse(argc, argv, &fs.opts, &args) != DSFS_OPTS_OK)
		goto out;
	dsfs_log_set_debug(fs.opts.debug);
	if (fs.opts.print_plan) {
		ret = resolve_dir("SOURCE", &fs.opts.source) ? 1 : print_plan(&fs);
		goto out;
	}
	if (resolve_dir("SOURCE", &fs.opts.source) ||
	    resolve_dir("MOUNTPOINT", &fs.opts.mountpoint) ||
	    check_not_mounted(fs.opts.mountpoint) ||
	    check_apart(fs.opts.source, fs.opts.mountpoint) ||
	    add_mount_args(&args, &fs.opts))
		goto out;
	/* To the background before setting up: see detach.c. */
	if (!fs.opts.foreground && dsfs_detach_fork(fs.opts.mountpoint, &ready))
		goto out;
	if (fs_init(&fs))
		goto out;
	ret = run_session(&fs, &args, &ready);
out:
	dsfs_detach_failed(&ready); /* no-op once the daemon served */
	fuse_opt_free_args(&args);
	fs_destroy(&fs);
	return ret;
}
