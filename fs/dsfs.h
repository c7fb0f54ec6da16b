/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's state and the interfaces between the files of fs/, the only
 * part of dsfs that speaks FUSE.
 *
 * One struct dsfs_fs per mount, created by main() before the session starts
 * and reached from every request through fuse_req_userdata().  After the
 * session starts, `opts`, `root_fd` and the object pointers are read-only,
 * except the plan's, which the control channel (ctl.c) replaces under
 * plan_lock; the objects they point to do their own locking.
 */
#ifndef DSFS_FS_H
#define DSFS_FS_H

#define FUSE_USE_VERSION 314

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "alloc.h"
#include "arena.h"
#include "cache.h"
#include "fdpool.h"
#include "io.h"
#include "log.h"
#include "plan.h"
#include "scheduler.h"
#include "stats.h"

/* -o push=: the values' order is the option's words' (opts.c). */
enum dsfs_push_mode { DSFS_PUSH_OFF, DSFS_PUSH_ON, DSFS_PUSH_AUTO };
/* -o direct_io=: in the order of its words (opts.c) */
enum dsfs_direct_mode { DSFS_DIRECT_OFF, DSFS_DIRECT_ON, DSFS_DIRECT_AUTO };

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
	unsigned fetch_depth;	/* the plan's reads in flight (fit_fetch) */
	unsigned fetch_depth_ahead; /* and while it is ahead of the loader */
	uint64_t whole_file_max; /* fetch files up to this size whole */
	uint64_t readahead_max;	/* sequential read-ahead window limit */
	uint64_t lead_max;	/* plan prefetch runs at most this far ahead */
	int verify;		/* hash entries at fill, check when served;
				   an int: fuse_opt stores flags as int */
	int direct_io;		/* -o direct_io, or direct_io=on: answer
				   every OPEN with FOPEN_DIRECT_IO */
	enum dsfs_direct_mode direct_mode; /* direct_io=, checked */
	enum dsfs_push_mode push; /* push planned data into the page cache */
	bool stats_public;	/* stats readable by every user */
	struct dsfs_plan_opts plan_opts; /* plan option strings as given */
	struct dsfs_plan_cfg plan;	/* ... checked */
	int print_plan;		/* --print-plan: print an epoch's order, a path
				   a line (1) or followed by '\0' (2) */
	bool foreground;
	bool debug;
	/* raw strings as given, validated by dsfs_opts_parse() */
	char *entry_timeout_s, *attr_timeout_s, *max_open_s, *max_threads_s;
	char *cache_size_s, *hugepages_s, *numa_s, *io_depth_s;
	char *whole_file_max_s, *readahead_max_s, *lead_max_s, *stats_s;
	char *push_s, *direct_io_s;
};

/* direct.c: which opens bypass the kernel's page cache (direct_io=). */
struct dsfs_direct {
	bool autom;		/* direct_io=auto chooses each open (relaxed
				   atomic: INIT may clear it) */
	uint64_t opens;		/* the opens answered so far: handles */
	uint64_t room;		/* auto: the page cache's room, bytes */
	uint64_t opened;	/* the bytes of the files opened so far */
	uint32_t reopens, fits;	/* a window of reopens; within the room */
	uint32_t reads, pieces;	/* a window of direct READs; in pieces */
	bool fits_room;		/* the latest window's reopens fit */
	bool in_pieces;		/* a window's READs were in pieces: for good */
};

struct dsfs_fs {
	struct dsfs_opts opts;
	int root_fd;			/* O_PATH fd of SOURCE */
	uint64_t root_dev;		/* SOURCE's filesystem */
	uint64_t nested_dev;		/* the last other one warned of */
	uid_t owner;			/* the user who mounted */
	struct dsfs_inodes *inodes;
	struct dsfs_fdpool *fdpool;
	struct dsfs_arena arena;
	struct dsfs_cache *cache;
	struct dsfs_io *io;
	/*
	 * The plan in force and the scheduler following it.  ctl.c replaces
	 * them holding plan_lock for writing; FUSE workers use them between
	 * dsfs_sched_hold() and dsfs_sched_unhold() (plan_lock for reading).
	 */
	pthread_rwlock_t plan_lock;
	const struct dsfs_plan_cfg *plan;	/* protected by plan_lock */
	struct dsfs_sched *sched;	/* protected by plan_lock; NULL: no plan */
	/* the plan's samples, listed once per mount (at mount, or by the
	 * first plan a mount without one is given); NULL: none yet.
	 * Written under plan_lock, read by ctl.c and main.c only. */
	struct dsfs_layout *layout;
	struct dsfs_ctl *ctl;		/* the control channel's state */
	struct dsfs_push *push;		/* NULL: push off (see push.c) */
	/* Odd while fresh.c drops a changed file's cached data and kernel
	 * pages; bumped before and after.  Read by push.c. */
	uint64_t fresh_gen;
	/* Names created, removed or renamed in SOURCE that fresh.c saw
	 * (relaxed atomic), and their count when the layout was listed. */
	uint64_t names_changed, names_listed;
	/* When the fetch was last behind the loader (CLOCK_MONOTONIC ns,
	 * relaxed atomic; 0: never): a reader waited on a backing read
	 * (read.c), or the scheduler read for a sample the loader is close
	 * behind; the scheduler and the I/O engine run boosted after that
	 * (lib/bgprio.h). */
	uint64_t waited;
	struct dsfs_fresh *fresh;	/* atomic; NULL: SOURCE not watched
					   (fresh.c) */
	struct dsfs_warm *warm;		/* atomic; NULL: no warm-up's stats
					   to list from (warm.c) */
	bool direct_io;			/* relaxed atomic: O_DIRECT still works */
	bool no_opendir;		/* the kernel takes ENOSYS for OPENDIR;
					   set at INIT (dirops.c) */
	struct dsfs_direct direct;	/* direct.c: set at the mount (and
					   INIT), then its windows' counts */
	uint64_t init_unique;		/* relaxed atomic: devio.c's INIT
					   request to answer; 0: none */
	bool readahead_tuned;		/* relaxed atomic: see readahead.c */
	struct timespec started;	/* CLOCK_MONOTONIC at fs_init */
	struct dsfs_ratelimit read_errors_log;	/* failed reads' messages */
	struct dsfs_counters counters;
};

/*
 * push.c: copy planned chunks into the kernel's page cache as their reads
 * complete (see push.c).
 * start: after the session is mounted, before the scheduler; -errno leaves
 * *out NULL.
 * offer: any thread, never blocks; after is the chunk's next use once
 * pushed (struct dsfs_sched_cfg's filled).
 * listed: a listing (READDIRPLUS) named this regular file: push what was
 * parked for it.  Any thread; never blocks on a copy.
 * stop: no push after it returns (before the session goes); free: after
 * the I/O engine is gone (no more offers).
 */
struct dsfs_push;
int dsfs_push_start(struct dsfs_fs *fs, struct fuse_session *se,
		    struct dsfs_push **out);
bool dsfs_push_offer(struct dsfs_push *p, const struct dsfs_cache_key *k,
		     uint32_t len, uint64_t size, uint64_t when,
		     uint64_t after);
void dsfs_push_listed(struct dsfs_push *p, uint64_t dev, uint64_t ino,
		      uint64_t gen);
void dsfs_push_stop(struct dsfs_push *p);
void dsfs_push_free(struct dsfs_push *p);

/*
 * devio.c: under -o direct_io, the session reads and writes /dev/fuse
 * through dsfs so that INIT's reply allows shared mmap of direct-I/O
 * files where the kernel can.  After fuse_session_mount(), before the
 * loop.  0 or -errno (libfuse's own I/O then, shared mmap refused).
 */
int dsfs_devio_install(struct fuse_session *se);

/*
 * warm.c: with a plan (fs->layout), stat the layout's files in its order
 * from a few threads, so that a loader's first listing finds SOURCE's
 * inodes in memory.  start: once the layout is built; -errno leaves *out
 * NULL.  stop: returns once the threads are gone (NULL: nothing).
 */
struct dsfs_warm;
int dsfs_warm_start(struct dsfs_fs *fs, struct dsfs_warm **out);
void dsfs_warm_stop(struct dsfs_warm *w);
/* The stat and generation the warm-up saw for the file at path (relative
 * to SOURCE), if it was inode ino of SOURCE's filesystem and nothing there
 * changed since: settled and mark are what dsfs_fresh_settled_at() gave
 * before the listing read the name.  true and *st, *gen; false: stat it.
 * Either way the record is taken: the next listing of the name stats it.
 * Any thread between start and stop; O(1) expected, no system call. */
bool dsfs_warm_entry(struct dsfs_warm *w, const char *path, uint64_t ino,
		     bool settled, uint64_t mark, struct stat *st,
		     uint64_t *gen);

/* readahead.c: raise the kernel's read-ahead window for the mount to the
 * largest FUSE read; the first call does it, later ones cost one relaxed
 * load.  Call from a request handler (after INIT). */
void dsfs_readahead_tune(struct dsfs_fs *fs);

/* opts.c: parse argv into opts and the arguments for fuse_session_new(). */
enum dsfs_opts_result { DSFS_OPTS_OK, DSFS_OPTS_ERROR };
enum dsfs_opts_result dsfs_opts_parse(int argc, char **argv,
				      struct dsfs_opts *opts,
				      struct fuse_args *fuse_args);
void dsfs_opts_free(struct dsfs_opts *opts);
/* opts.c: a plan-change command (mount-option syntax, "seed=7,epoch=3")
 * through the same option table: *plan gets the plan options it gives
 * (others NULL or 0; the caller frees them).  Any other option is refused:
 * 0, or -EINVAL with a one-line message naming it in why. */
int dsfs_opts_parse_plan_cmd(const char *cmd, struct dsfs_plan_opts *plan,
			     char *why, size_t whylen);

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
 * the plan time of its next read in in->plan_when for the cache.  pid: the
 * process that opened it (fuse_req_ctx; it tells the loader from other
 * programs).  unless_recent: the open may have been reported already (by
 * its lookup, before its read from offset 0; or this is a read past offset
 * 0, the kernel having served the start): report it only if the file's
 * last report is old (dsfs_sched_recent).  True if it was reported. */
struct dsfs_inode;
bool dsfs_note_access(struct dsfs_fs *fs, uint32_t pid,
		      struct dsfs_inode *in, bool unless_recent);
/* read.c */
void dsfs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		  struct fuse_file_info *fi);
void dsfs_op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		   struct fuse_file_info *fi);
/* fresh.c: watch SOURCE for changes (see fresh.c).  Failure to watch is
 * logged and not fatal: *out stays NULL. */
struct dsfs_fresh;
int dsfs_fresh_start(struct dsfs_fs *fs, struct fuse_session *se,
		     struct dsfs_fresh **out);
void dsfs_fresh_stop(struct dsfs_fresh *f);
/* Whether every change made so far to a file on device dev has been
 * applied (see fresh.c).  Any thread; one ioctl. */
bool dsfs_fresh_settled(struct dsfs_fs *fs, uint64_t dev);
/* A mark of dev's changes so far, to take before a stat: false where
 * changes to dev are not all watched.  settled_at: as settled, and
 * *mark then equals a mark taken earlier only if nothing on dev changed
 * since that one was taken.  Any thread; mark is one atomic load,
 * settled_at one ioctl. */
bool dsfs_fresh_mark(struct dsfs_fs *fs, uint64_t dev, uint64_t *mark);
bool dsfs_fresh_settled_at(struct dsfs_fs *fs, uint64_t dev, uint64_t *mark);
/* stats.c: answer getxattr of the stats attribute; false if not ours. */
bool dsfs_stats_xattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		      size_t size);
/* stats.c: the plan.* lines of the stats (size 0: just measure); returns
 * the length.  Takes plan_lock for reading. */
size_t dsfs_stats_plan_doc(struct dsfs_fs *fs, char *buf, size_t size);
/* stats.c: reply to a getxattr of `size` bytes (0: the size wanted) with
 * the document build() writes into a buffer of that size. */
void dsfs_reply_doc(fuse_req_t req, size_t size,
		    size_t (*build)(struct dsfs_fs *fs, char *buf, size_t size));

/* How far ahead of the loaders a plan's prefetch may run: lead_max, at most
 * the cache (the scheduler's lead_bytes). */
static inline uint64_t dsfs_lead_bytes(const struct dsfs_fs *fs)
{
	return fs->opts.lead_max < fs->arena.size ? fs->opts.lead_max :
						    fs->arena.size;
}

/* memroom.c: the daemon in a memory cgroup.  dsfs_memroom_check() refuses
 * (-1, said on stderr) a charged cache that leaves the daemon too little;
 * dsfs_memroom_advise() warns where the plan's tree has too little room
 * beside it; dsfs_memroom_page_room() is the room it leaves the page cache
 * (UINT64_MAX: no limit, or room for the lead), for direct.c;
 * dsfs_memroom_push() says whether to push (push=, direct_io, and, for
 * push=auto, that room), and logs direct.c's choice. */
int dsfs_memroom_check(const struct dsfs_fs *fs);
void dsfs_memroom_advise(const struct dsfs_fs *fs);
bool dsfs_memroom_push(const struct dsfs_fs *fs);
uint64_t dsfs_memroom_page_room(const struct dsfs_fs *fs);

/* direct.c.  dsfs_direct_init: at the mount, before the session starts,
 * with the page cache's room in the memory cgroup (UINT64_MAX: no limit,
 * or room for the lead: see memroom.c); whether OPEN will be answered (not
 * ENOSYS: direct_io=on, or auto).  dsfs_direct_unmappable: at INIT,
 * from a kernel without FUSE_DIRECT_IO_ALLOW_MMAP (or without devio.c).
 * dsfs_direct_open: OPEN's answer (fi set, true) or ENOSYS (false).
 * dsfs_direct_read: each READ, under auto.  dsfs_direct_state: what the
 * stats say of the page cache. */
struct dsfs_inode;
bool dsfs_direct_init(struct dsfs_fs *fs, uint64_t room);
void dsfs_direct_unmappable(struct dsfs_fs *fs);
bool dsfs_direct_open(struct dsfs_fs *fs, struct dsfs_inode *in,
		      struct fuse_file_info *fi);
void dsfs_direct_read(struct dsfs_fs *fs, const struct fuse_file_info *fi,
		      uint64_t off, size_t size, uint64_t fsize);
const char *dsfs_direct_state(const struct dsfs_fs *fs);

/* ctl.c: the plan control channel, getxattr of DSFS_PLAN_XATTR on the mount
 * root (see ctl.c and dsfs(8), PLAN CONTROL). */
#define DSFS_PLAN_XATTR "user.dsfs.plan"
struct dsfs_ctl;
/* Before the session starts; sets fs->plan to the mount's.  0 or -errno. */
int dsfs_ctl_init(struct dsfs_fs *fs);
/* After the scheduler has stopped (it uses the plan). */
void dsfs_ctl_free(struct dsfs_fs *fs);
/* Whether name is one of the channel's on the mount root. */
bool dsfs_ctl_name(const char *name);
/* Answer a getxattr of the channel's names; false if name is not one. */
bool dsfs_ctl_xattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		    size_t size);
/* The scheduler in force (NULL: no plan), and fs->plan, stay valid until
 * dsfs_sched_unhold(), which every hold needs, NULL or not.  Holds
 * plan_lock for reading: keep it short, never hold twice in one thread. */
struct dsfs_sched *dsfs_sched_hold(struct dsfs_fs *fs);
void dsfs_sched_unhold(struct dsfs_fs *fs);
/* Start a scheduler following plan over layout with the mount's cache and
 * engine, fetching ahead up to half the cache.  0 or -errno. */
int dsfs_ctl_sched_start(struct dsfs_fs *fs, const struct dsfs_plan_cfg *plan,
			 struct dsfs_layout *layout,
			 struct dsfs_sched **out);

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
