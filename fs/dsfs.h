/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's state and the interfaces between the files of fs/, the only
 * part of dsfs that speaks FUSE.
 *
 * One struct dsfs_fs per mount, created by main() before the session starts
 * and reached from every request through fuse_req_userdata().  After the
 * session starts, `opts`, `root_fd` and the object pointers are read-only;
 * the objects they point to do their own locking.
 */
#ifndef DSFS_FS_H
#define DSFS_FS_H

#define FUSE_USE_VERSION 314

#include <fuse_lowlevel.h>
#include <stdbool.h>

#include "alloc.h"
#include "arena.h"
#include "cache.h"
#include "fdpool.h"
#include "io.h"
#include "plan.h"
#include "scheduler.h"
#include "stats.h"

/* Parsed command line; see opts.c for the table and the help text. */
struct dsfs_opts {
	char *source;		/* absolute, resolved */
	char *mountpoint;	/* absolute, resolved; NULL with --print-plan */
	double entry_timeout;	/* seconds the kernel may cache a lookup */
	double attr_timeout;	/* seconds the kernel may cache attributes */
	unsigned max_open;	/* fds the backing pool may keep */
	unsigned max_threads;	/* FUSE worker threads */
	struct dsfs_arena_cfg cache;	/* cache_size, hugepages, numa */
	unsigned io_depth;	/* engine reads in flight */
	uint64_t whole_file_max; /* fetch files up to this size whole */
	uint64_t readahead_max;	/* sequential read-ahead window limit */
	uint64_t lead_max;	/* plan prefetch runs at most this far ahead */
	int verify;		/* hash entries at fill, check when served;
				   an int: fuse_opt stores flags as int */
	bool stats_public;	/* stats readable by every user */
	struct dsfs_plan_opts plan_opts; /* plan option strings as given */
	struct dsfs_plan_cfg plan;	/* ... checked */
	int print_plan;		/* --print-plan: print an epoch's order */
	bool foreground;
	bool debug;
	/* raw strings as given, validated by dsfs_opts_parse() */
	char *entry_timeout_s, *attr_timeout_s, *max_open_s, *max_threads_s;
	char *cache_size_s, *hugepages_s, *numa_s, *io_depth_s;
	char *whole_file_max_s, *readahead_max_s, *lead_max_s, *stats_s;
};

struct dsfs_fs {
	struct dsfs_opts opts;
	int root_fd;			/* O_PATH fd of SOURCE */
	uid_t owner;			/* the user who mounted */
	struct dsfs_inodes *inodes;
	struct dsfs_fdpool *fdpool;
	struct dsfs_arena arena;
	struct dsfs_cache *cache;
	struct dsfs_io *io;
	struct dsfs_layout *layout;	/* the plan's samples; NULL: no plan */
	struct dsfs_sched *sched;	/* follows the plan; NULL: no plan */
	bool direct_io;			/* relaxed atomic: O_DIRECT still works */
	struct dsfs_counters counters;
};

/* opts.c: parse argv into opts and the arguments for fuse_session_new(). */
enum dsfs_opts_result { DSFS_OPTS_OK, DSFS_OPTS_ERROR };
enum dsfs_opts_result dsfs_opts_parse(int argc, char **argv,
				      struct dsfs_opts *opts,
				      struct fuse_args *fuse_args);
void dsfs_opts_free(struct dsfs_opts *opts);

/* ops.c, dirops.c: the lowlevel operation tables' members. */
extern const struct fuse_lowlevel_ops dsfs_ops;
void dsfs_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void dsfs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi);
void dsfs_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			 off_t off, struct fuse_file_info *fi);
void dsfs_op_releasedir(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi);
/* ops.c: tell the scheduler the loader opened this inode's file, and keep
 * the plan time of its next read in in->plan_when for the cache. */
struct dsfs_inode;
void dsfs_note_access(struct dsfs_fs *fs, struct dsfs_inode *in);
/* read.c */
void dsfs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		  struct fuse_file_info *fi);
/* fresh.c: watch SOURCE for changes (see fresh.c).  Failure to watch is
 * logged and not fatal: *out stays NULL. */
struct dsfs_fresh;
int dsfs_fresh_start(struct dsfs_fs *fs, struct fuse_session *se,
		     struct dsfs_fresh **out);
void dsfs_fresh_stop(struct dsfs_fresh *f);
/* stats.c: answer getxattr of the stats attribute; false if not ours. */
bool dsfs_stats_xattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		      size_t size);

/* ops.c: shared by dirops.c. */
static inline struct dsfs_fs *dsfs_req_fs(fuse_req_t req)
{
	return fuse_req_userdata(req);
}
struct dsfs_inode *dsfs_req_inode(fuse_req_t req, fuse_ino_t ino);
/* Open the inode's backing object (flags as for dsfs_open_beneath) and check
 * it is still the same file: an fd, or -errno (-ESTALE if replaced). */
int dsfs_inode_open(struct dsfs_fs *fs, const struct dsfs_inode *in, int flags);
void dsfs_fill_entry(struct dsfs_fs *fs, struct fuse_entry_param *e,
		     struct dsfs_inode *in, const struct stat *st);

#endif
