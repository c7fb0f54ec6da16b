// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dsfs daemon entry point: parse options, check SOURCE and MOUNTPOINT, build
 * the per-mount state, mount read-only, detach, and run the multi-threaded
 * FUSE loop until unmounted or signalled (SIGTERM, SIGINT, SIGHUP unmount
 * cleanly through libfuse's handlers).  Runs in the main thread; the loop's
 * worker threads enter through ops.c and dirops.c.
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

#include "dsfs.h"
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

/* fsname=SOURCE (escaped for libfuse's option parser), subtype, ro. */
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
	      fuse_opt_add_arg(args, "-osubtype=dsfs,ro,default_permissions");
	free(opt);
	return err ? -1 : 0;
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
	fs->inodes = dsfs_inodes_new(&st);
	fs->fdpool = dsfs_fdpool_new(fs->opts.max_open);
	if (!fs->inodes || !fs->fdpool) {
		fprintf(stderr, "dsfs: out of memory\n");
		return -1;
	}
	return 0;
}

static void fs_destroy(struct dsfs_fs *fs)
{
	dsfs_fdpool_free(fs->fdpool);
	dsfs_inodes_free(fs->inodes);
	if (fs->root_fd >= 0)
		close(fs->root_fd);
	dsfs_opts_free(&fs->opts);
}

static int run_session(struct dsfs_fs *fs, struct fuse_args *args)
{
	struct fuse_loop_config *cfg = NULL;
	struct fuse_session *se;
	int ret = 1;

	se = fuse_session_new(args, &dsfs_ops, sizeof(dsfs_ops), fs);
	if (!se)
		return 1; /* libfuse said why (e.g. an unknown option) */
	if (fuse_set_signal_handlers(se) != 0)
		goto out_session;
	if (fuse_session_mount(se, fs->opts.mountpoint) != 0)
		goto out_signals;
	if (fuse_daemonize(fs->opts.foreground) != 0)
		goto out_unmount;
	if (!fs->opts.foreground)
		dsfs_log_to_syslog();
	dsfs_info("mounted %s on %s (read-only)", fs->opts.source,
		  fs->opts.mountpoint);
	cfg = fuse_loop_cfg_create();
	if (!cfg)
		goto out_unmount;
	fuse_loop_cfg_set_max_threads(cfg, fs->opts.max_threads);
	fuse_loop_cfg_set_clone_fd(cfg, 1);
	/* A positive value is the signal that ended the loop: a clean exit. */
	ret = fuse_session_loop_mt(se, cfg) < 0 ? 1 : 0;
	dsfs_info("unmounting %s", fs->opts.mountpoint);
	fuse_loop_cfg_destroy(cfg);
out_unmount:
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_session:
	fuse_session_destroy(se);
	return ret;
}

int main(int argc, char **argv)
{
	struct dsfs_fs fs = { .root_fd = -1 };
	struct fuse_args args;
	int ret = 1;

	if (dsfs_opts_parse(argc, argv, &fs.opts, &args) != DSFS_OPTS_OK)
		goto out;
	dsfs_log_set_debug(fs.opts.debug);
	if (resolve_dir("SOURCE", &fs.opts.source) ||
	    resolve_dir("MOUNTPOINT", &fs.opts.mountpoint) ||
	    check_not_mounted(fs.opts.mountpoint) ||
	    add_mount_args(&args, &fs.opts) || fs_init(&fs))
		goto out;
	ret = run_session(&fs, &args);
out:
	fuse_opt_free_args(&args);
	fs_destroy(&fs);
	return ret;
}
