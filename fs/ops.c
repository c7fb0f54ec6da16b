// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * FUSE lowlevel operations on names, attributes and file data.
 *
 * The mount is read-only at the VFS level and uses default_permissions, so
 * the kernel refuses writes (EROFS) and checks permissions itself before a
 * request arrives here.  For speed the kernel is left to serve warm data on
 * its own: long timeouts, and OPEN answered ENOSYS so the kernel stops
 * sending OPEN/RELEASE and keeps each file's page cache (FLUSH is not
 * implemented, so libfuse answers ENOSYS to it too); OPENDIR likewise
 * (dirops.c).  Reads arrive with the
 * node id only and are served by read.c.
 *
 * Threads: every FUSE worker enters here; state is reached through the
 * request (struct dsfs_fs) and locked by the objects themselves.  Each
 * request gets exactly one reply; errors are -errno internally and turned
 * into a reply only here at the edge.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <xxhash.h>

#include "beneath.h"
#include "dsfs.h"
#include "ident.h"
#include "inodes.h"
#include "log.h"
#include "stats.h"

struct dsfs_inode *dsfs_req_inode(fuse_req_t req, fuse_ino_t ino)
{
	return dsfs_inodes_get(dsfs_req_fs(req)->inodes, ino);
}

int dsfs_inode_open(struct dsfs_fs *fs, const struct dsfs_inode *in, int flags)
{
	char path[PATH_MAX];
	struct stat st;
	int fd, err = dsfs_inodes_path(in, path, sizeof(path));

	if (err)
		return err;
	fd = dsfs_open_beneath(fs->root_fd, path, flags);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if ((uint64_t)st.st_dev != in->dev || (uint64_t)st.st_ino != in->ino ||
	    dsfs_ident_gen(fd, "") != in->gen) {
		close(fd);
		return -ESTALE; /* replaced behind dsfs's back */
	}
	return fd;
}

static int inode_stat(struct dsfs_fs *fs, const struct dsfs_inode *in,
		      struct stat *st)
{
	int fd = dsfs_inode_open(fs, in, O_PATH | O_NOFOLLOW);
	int err = 0;

	if (fd < 0)
		return fd;
	if (fstat(fd, st) < 0)
		err = -errno;
	close(fd);
	return err;
}

/*
 * Record attributes just read from SOURCE.  A new ctime means the file was
 * written, truncated or replaced since dsfs last looked: its cached data is
 * dropped (the kernel drops its own pages when it sees the new mtime/size,
 * FUSE_CAP_AUTO_INVAL_DATA).  This is how changes made elsewhere (another
 * machine on a shared filesystem) are noticed, bounded by attr_timeout.
 */
/*
 * A file of a filesystem mounted below SOURCE: its inode number may be one
 * of SOURCE's, and the mount shows both on one device, so it gets another
 * number (top bit set, the rest hashed from its device and inode).  The
 * first time one is seen (and whenever another such filesystem is), a
 * warning: changes there are not watched.
 */
static void nested_attr(struct dsfs_fs *fs, struct dsfs_inode *in,
			struct stat *st)
{
	uint64_t dev = (uint64_t)st->st_dev, h;
	char path[PATH_MAX];

	h = XXH3_64bits_withSeed(&st->st_ino, sizeof(st->st_ino), dev);
	st->st_ino = (ino_t)(h | 1ULL << 63);
	if (__atomic_exchange_n(&fs->nested_dev, dev, __ATOMIC_RELAXED) == dev)
		return;
	if (dsfs_inodes_path(in, path, sizeof(path)))
		snprintf(path, sizeof(path), "?");
	dsfs_warn("%s is on another filesystem (device %u:%u) mounted below SOURCE: changes there are not watched, so reads may return stale data until attr_timeout; mount dsfs over that filesystem on its own",
		  path, major(st->st_dev), minor(st->st_dev));
}

/* Attributes going to the kernel: note the size and ctime (a changed file's
 * cached data goes), and renumber a nested filesystem's inodes. */
static void note_attr(struct dsfs_fs *fs, struct dsfs_inode *in,
		      struct stat *st)
{
	uint64_t ct = (uint64_t)st->st_ctim.tv_sec * 1000000000u +
		      (uint64_t)st->st_ctim.tv_nsec;

	__atomic_store_n(&in->size, (uint64_t)st->st_size, __ATOMIC_RELAXED);
	if (__atomic_exchange_n(&in->ctime_ns, ct, __ATOMIC_RELAXED) != ct &&
	    S_ISREG(st->st_mode)) {
		dsfs_cache_invalidate(fs->cache, in->dev, in->ino);
		dsfs_fdpool_forget(fs->fdpool, in->dev, in->ino);
	}
	if ((uint64_t)st->st_dev != fs->root_dev)
		nested_attr(fs, in, st);
}

bool dsfs_note_access(struct dsfs_fs *fs, uint32_t pid,
		      struct dsfs_inode *in, bool unless_recent)
{
	char path[PATH_MAX];
	struct dsfs_sched *sched = dsfs_sched_hold(fs);
	uint64_t when, seq = __atomic_load_n(&in->report_seq, __ATOMIC_RELAXED);

	if (!sched ||
	    (unless_recent && seq &&
	     dsfs_sched_recent(sched, seq - 1)) ||
	    dsfs_inodes_path(in, path, sizeof(path))) {
		dsfs_sched_unhold(fs);
		return false;
	}
	when = dsfs_sched_access(sched, path, pid, &seq);
	/* Relaxed: hints for this file's next reads. */
	__atomic_store_n(&in->plan_when, when, __ATOMIC_RELAXED);
	__atomic_store_n(&in->report_seq, seq + 1, __ATOMIC_RELAXED);
	dsfs_sched_unhold(fs);
	return true;
}

/* Whether a lookup of the regular file in may stand for its open: not for
 * a sample known only as a symlink's target (dsfs_sched_linked). */
static bool lookup_tells(struct dsfs_fs *fs, struct dsfs_inode *in)
{
	struct dsfs_sched *sched = dsfs_sched_hold(fs);
	char path[PATH_MAX];
	bool tells = !sched || dsfs_inodes_path(in, path, sizeof(path)) ||
		     !dsfs_sched_linked(sched, path);

	dsfs_sched_unhold(fs);
	return tells;
}

void dsfs_fill_entry(struct dsfs_fs *fs, struct fuse_entry_param *e,
		     struct dsfs_inode *in, const struct stat *st)
{
	memset(e, 0, sizeof(*e));
	e->ino = dsfs_inodes_nodeid(fs->inodes, in);
	e->attr = *st;
	note_attr(fs, in, &e->attr);
	e->attr_timeout = fs->opts.attr_timeout;
	e->entry_timeout = fs->opts.entry_timeout;
}

static void dsfs_op_init(void *userdata, struct fuse_conn_info *conn)
{
	unsigned want = FUSE_CAP_READDIRPLUS | FUSE_CAP_POSIX_ACL |
			FUSE_CAP_CACHE_SYMLINKS | FUSE_CAP_PARALLEL_DIROPS |
			FUSE_CAP_ASYNC_READ;

	conn->want |= conn->capable & want;
	((struct dsfs_fs *)userdata)->no_opendir =
		conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT;
	/* Always READDIRPLUS: a listing is nearly always followed by stats
	 * (os.walk, ImageFolder), which it saves one round trip each. */
	conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
	if (!(conn->capable & FUSE_CAP_POSIX_ACL))
		dsfs_warn("kernel lacks FUSE POSIX ACL support: ACLs on SOURCE are not enforced through the mount, only mode bits");
}

static void dsfs_op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct dsfs_fs *fs = dsfs_req_fs(req);
	struct dsfs_inode *dir = dsfs_req_inode(req, parent), *in;
	uint8_t replied = DSFS_LOOKUP_REPLIED,
		reporting = DSFS_LOOKUP_REPORTING;
	uint32_t pid;
	struct fuse_entry_param e;
	char path[PATH_MAX];
	struct stat st;
	uint64_t gen;
	size_t len;
	int fd, err;

	dsfs_readahead_tune(fs); /* before the first open, after INIT */
	err = dsfs_inodes_path(dir, path, sizeof(path));
	len = strlen(path);
	if (!err && len + 1 + strlen(name) + 1 > sizeof(path))
		err = -ENAMETOOLONG;
	if (err)
		goto out;
	snprintf(path + len, sizeof(path) - len, "/%s", name);
	fd = dsfs_open_beneath(fs->root_fd, path, O_PATH | O_NOFOLLOW);
	if (fd < 0) {
		err = fd;
		goto out;
	}
	err = fstat(fd, &st) < 0 ? -errno : 0;
	gen = err ? 0 : dsfs_ident_gen(fd, "");
	close(fd);
	if (err)
		goto out;
	in = dsfs_inodes_ref_child(fs->inodes, dir, name, &st, gen);
	if (!in) {
		err = -ENOMEM;
		goto out;
	}
	dsfs_fill_entry(fs, &e, in, &st);
	if (!S_ISREG(st.st_mode)) {
		fuse_reply_entry(req, &e);
		return;
	}
	if (!lookup_tells(fs, in)) {
		/* Its read from offset 0 reports the open instead. */
		__atomic_store_n(&in->lookup_state, DSFS_LOOKUP_NONE,
				 __ATOMIC_SEQ_CST);
		fuse_reply_entry(req, &e);
		return;
	}
	/* The kernel may FORGET the inode as soon as it has the reply, so
	 * hold a reference of our own until the report below is done (and
	 * req is gone with the reply: keep its caller). */
	pid = (uint32_t)fuse_req_ctx(req)->pid;
	dsfs_inodes_ref(fs->inodes, in, 1);
	__atomic_store_n(&in->lookup_state, DSFS_LOOKUP_REPLIED,
			 __ATOMIC_SEQ_CST);
	fuse_reply_entry(req, &e);
	/* An open looks the name up first: report it now, unless the read
	 * from offset 0 that follows (dsfs_op_read) came first and did.
	 * Whichever of the two takes the state from REPLIED reports; a read
	 * that comes while this reports waits for it (report_open). */
	if (__atomic_compare_exchange_n(&in->lookup_state, &replied,
					DSFS_LOOKUP_REPORTING, false,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		dsfs_note_access(fs, pid, in, false);
		__atomic_compare_exchange_n(&in->lookup_state, &reporting,
					    DSFS_LOOKUP_REPORTED, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	}
	dsfs_inodes_unref(fs->inodes, in, 1);
	return;
out:
	fuse_reply_err(req, -err);
}

static void dsfs_op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct dsfs_fs *fs = dsfs_req_fs(req);

	dsfs_inodes_unref(fs->inodes, dsfs_req_inode(req, ino), nlookup);
	fuse_reply_none(req);
}

static void dsfs_op_forget_multi(fuse_req_t req, size_t count,
				 struct fuse_forget_data *forgets)
{
	struct dsfs_fs *fs = dsfs_req_fs(req);
	size_t i;

	for (i = 0; i < count; i++)
		dsfs_inodes_unref(fs->inodes,
				  dsfs_req_inode(req, forgets[i].ino),
				  forgets[i].nlookup);
	fuse_reply_none(req);
}

static void dsfs_op_getattr(fuse_req_t req, fuse_ino_t ino,
			    struct fuse_file_info *fi)
{
	struct dsfs_fs *fs = dsfs_req_fs(req);
	struct dsfs_inode *in = dsfs_req_inode(req, ino);
	struct stat st;
	int err = inode_stat(fs, in, &st);

	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	note_attr(fs, in, &st);
	fuse_reply_attr(req, &st, fs->opts.attr_timeout);
}

static void dsfs_op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct dsfs_fs *fs = dsfs_req_fs(req);
	char buf[PATH_MAX + 1];
	ssize_t n;
	int fd = dsfs_inode_open(fs, dsfs_req_inode(req, ino),
				 O_PATH | O_NOFOLLOW);

	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	n = readlinkat(fd, "", buf, sizeof(buf) - 1);
	if (n < 0) {
		fuse_reply_err(req, errno);
	} else {
		buf[n] = '\0';
		fuse_reply_readlink(req, buf);
	}
	close(fd);
}

static void dsfs_op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;

	if (fstatvfs(dsfs_req_fs(req)->root_fd, &sv) < 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_statfs(req, &sv);
}

/*
 * Only reached if the kernel stops using default_permissions, which dsfs
 * always sets; answer from the mode bits for the caller, and EROFS for writes.
 */
static void dsfs_op_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct stat st;
	int err = inode_stat(dsfs_req_fs(req), dsfs_req_inode(req, ino), &st);
	unsigned bits;

	if (!err && (mask & W_OK))
		err = -EROFS;
	if (err || mask == F_OK)
		goto out;
	if (ctx->uid == 0) {
		bits = (mask & X_OK) && !(st.st_mode & 0111) ? 0 : 7;
	} else {
		unsigned shift = ctx->uid == st.st_uid ? 6 :
				 ctx->gid == st.st_gid ? 3 : 0;
		bits = (st.st_mode >> shift) & 7;
	}
	if ((bits & (unsigned)mask) != (unsigned)mask)
		err = -EACCES;
out:
	fuse_reply_err(req, -err);
}

/*
 * No OPEN (see the file comment): ENOSYS makes the kernel stop asking,
 * unless some opens bypass the kernel's page cache (direct.c): with
 * -o direct_io all, so that no read can see a page of an older version of
 * a file that changed meanwhile (see "Backing changes" in dsfs(8)); with
 * direct_io=auto those that would only churn it.
 */
static void dsfs_op_open(fuse_req_t req, fuse_ino_t ino,
			 struct fuse_file_info *fi)
{
	struct dsfs_fs *fs = dsfs_req_fs(req);

	if (dsfs_direct_open(fs, dsfs_req_inode(req, ino), fi))
		fuse_reply_open(req, fi);
	else
		fuse_reply_err(req, ENOSYS);
}

/*
 * getxattr/listxattr through /proc/self/fd on an O_PATH fd: works for
 * files, directories and symlinks alike without opening data.
 */
static ssize_t xattr_call(struct dsfs_fs *fs, fuse_ino_t ino, fuse_req_t req,
			  const char *name, char *buf, size_t size)
{
	char proc[64];
	ssize_t n;
	int fd = dsfs_inode_open(fs, dsfs_req_inode(req, ino),
				 O_PATH | O_NOFOLLOW);

	if (fd < 0)
		return fd;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = name ? getxattr(proc, name, buf, size) : listxattr(proc, buf, size);
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}

static void reply_xattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			size_t size)
{
	char *buf = size ? malloc(size) : NULL;
	ssize_t n;

	if (size && !buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = xattr_call(dsfs_req_fs(req), ino, req, name, buf, size);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else if (!size)
		fuse_reply_xattr(req, (size_t)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

static void dsfs_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			     size_t size)
{
	if (dsfs_stats_xattr(req, ino, name, size) ||
	    dsfs_ctl_xattr(req, ino, name, size))
		return;
	reply_xattr(req, ino, name, size);
}

/*
 * A name a listing must not show: trusted.* to any but root (the kernel
 * shows them only to CAP_SYS_ADMIN; the daemon's own listing has them), and
 * on the root the backing's own attributes under the names the daemon
 * answers itself (stats and the plan channel), which no one can read.
 */
static bool hidden_name(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	if (!strncmp(name, "trusted.", 8) && fuse_req_ctx(req)->uid != 0)
		return true;
	return ino == FUSE_ROOT_ID &&
	       (!strcmp(name, DSFS_STATS_XATTR) || dsfs_ctl_name(name));
}

/* The backing's list of names, less the hidden ones: *list (malloc'd) and
 * its length, or -errno. */
static ssize_t visible_names(fuse_req_t req, fuse_ino_t ino, char **list)
{
	struct dsfs_fs *fs = dsfs_req_fs(req);
	ssize_t n, want;
	char *buf = NULL, *p, *out;
	size_t len;

	do { /* the list may grow between the two calls */
		free(buf);
		want = xattr_call(fs, ino, req, NULL, NULL, 0);
		if (want < 0)
			return want;
		buf = malloc((size_t)want + 1);
		if (!buf)
			return -ENOMEM;
		n = xattr_call(fs, ino, req, NULL, buf, (size_t)want);
	} while (n == -ERANGE);
	if (n < 0) {
		free(buf);
		return n;
	}
	/* Names kept move down over hidden ones: measure each first. */
	for (p = out = buf; p < buf + n; p += len + 1) {
		len = strnlen(p, (size_t)(buf + n - p));
		if (p + len == buf + n)
			break; /* not NUL-terminated: cannot happen */
		if (!hidden_name(req, ino, p)) {
			memmove(out, p, len + 1);
			out += len + 1;
		}
	}
	*list = buf;
	return out - buf;
}

static void dsfs_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	char *list;
	ssize_t n = visible_names(req, ino, &list);

	if (n < 0) {
		fuse_reply_err(req, (int)-n);
		return;
	}
	if (!size)
		fuse_reply_xattr(req, (size_t)n);
	else if ((size_t)n > size)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, list, (size_t)n);
	free(list);
}

const struct fuse_lowlevel_ops dsfs_ops = {
	.init = dsfs_op_init,
	.lookup = dsfs_op_lookup,
	.forget = dsfs_op_forget,
	.forget_multi = dsfs_op_forget_multi,
	.getattr = dsfs_op_getattr,
	.readlink = dsfs_op_readlink,
	.open = dsfs_op_open,
	.read = dsfs_op_read,
	.lseek = dsfs_op_lseek,
	.statfs = dsfs_op_statfs,
	.access = dsfs_op_access,
	.getxattr = dsfs_op_getxattr,
	.listxattr = dsfs_op_listxattr,
	.opendir = dsfs_op_opendir,
	.readdir = dsfs_op_readdir,
	.readdirplus = dsfs_op_readdirplus,
	.releasedir = dsfs_op_releasedir,
};
