// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Directory listing, stateless: each READDIR(PLUS) opens the backing
 * directory, seeks to the request's offset and reads on with getdents64,
 * and each entry carries the backing filesystem's own offset (d_off) as its
 * FUSE offset.  So a listing holds no memory and no file descriptor between
 * requests, seekdir/telldir and changes during a listing behave as on
 * SOURCE itself, and entries are exactly the backing entries, "." and ".."
 * included: dsfs adds nothing.
 *
 * OPENDIR is answered ENOSYS where the kernel takes that (Linux >= 5.1),
 * like OPEN: the kernel then stops sending OPENDIR and RELEASEDIR, and
 * keeps every directory's listing cached (FOPEN_KEEP_CACHE and
 * FOPEN_CACHE_DIR are its defaults without OPENDIR), so a warm listing
 * (os.walk, ImageFolder indexing the tree each job) reaches the daemon not
 * at all instead of twice per directory.  fresh.c drops a cached listing
 * whose directory changes in SOURCE.
 *
 * A READDIRPLUS of the plan's data set takes each name's stat from the
 * mount's warm-up where nothing changed since it was made (warm.c), and
 * makes the calls itself only for the rest; each name it lists takes its
 * record, used or not, so that their memory goes back once listed.
 *
 * Threads: FUSE workers; no shared state beyond the inode table and the
 * warm-up's records (warm.c's lock).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dsfs.h"
#include "ident.h"
#include "inodes.h"

/* getdents64's record (the kernel's struct linux_dirent64). */
struct dent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

void dsfs_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	if (dsfs_req_fs(req)->no_opendir) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	fi->fh = 0; /* nothing to hold: READDIR is stateless */
	fi->cache_readdir = 1;
	fi->keep_cache = 1;
	fuse_reply_open(req, fi);
}

/* Only from kernels that send OPENDIR (see the file comment). */
void dsfs_op_releasedir(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static bool is_dot(const char *name)
{
	return name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]));
}

/*
 * What the entries of one READDIRPLUS reply share: whether every change to
 * SOURCE so far has reached the kernel (settled), then at which mark of
 * SOURCE's changes (see dsfs_fresh_settled_at), and for the warm-up's
 * stats (warm.c) the directory's path with room for a name.
 */
struct plus_ctx {
	bool settled;
	uint64_t mark;
	struct dsfs_warm *warm;		/* NULL: stat each name */
	size_t len;			/* of path's directory part */
	char path[PATH_MAX];
};

/*
 * The stat and generation of a name: the warm-up's, when it saw this inode
 * under this name and nothing changed since, else the backing
 * filesystem's (never following a link).  0 or -errno.
 */
static int stat_entry(struct plus_ctx *c, int dirfd, const struct dent64 *d,
		      struct stat *st, uint64_t *gen)
{
	size_t n = strlen(d->d_name);

	if (c->warm && c->len + n < sizeof(c->path)) {
		memcpy(c->path + c->len, d->d_name, n + 1);
		if (dsfs_warm_entry(c->warm, c->path, d->d_ino, c->settled,
				    c->mark, st, gen))
			return 0;
	}
	if (fstatat(dirfd, d->d_name, st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	*gen = dsfs_ident_gen(dirfd, d->d_name);
	return 0;
}

/*
 * READDIRPLUS entry for one name: its stat (stat_entry) and a lookup
 * reference.  Dots get no reference,
 * as the kernel does not link them.  Neither does a name whose inode the
 * kernel holds under it already, when every change to SOURCE so far has
 * reached the kernel (settled): its entry is the name alone (node id 0),
 * which the kernel lists without touching its dentry, and stat and
 * file handle are saved (a listing of a tree the kernel knows, each epoch
 * of a loader that lists its data set).  0, or -errno (e.g. the name
 * vanished).
 */
static int plus_entry(struct dsfs_fs *fs, struct dsfs_inode *dir, int dirfd,
		      const struct dent64 *d, struct plus_ctx *c,
		      struct fuse_entry_param *e, struct dsfs_inode **ref)
{
	struct stat st;
	uint64_t gen;
	int err;

	*ref = NULL;
	memset(e, 0, sizeof(*e));
	e->attr.st_ino = d->d_ino;
	e->attr.st_mode = (mode_t)d->d_type << 12;
	if (is_dot(d->d_name))
		return 0;
	if (c->settled && d->d_type != DT_UNKNOWN &&
	    dsfs_inodes_held(fs->inodes, dir, d->d_name, dir->dev, d->d_ino,
			     &gen)) {
		if (fs->push && d->d_type == DT_REG)
			dsfs_push_listed(fs->push, dir->dev, d->d_ino, gen);
		return 0;
	}
	err = stat_entry(c, dirfd, d, &st, &gen);
	if (err)
		return err;
	*ref = dsfs_inodes_ref_child(fs->inodes, dir, d->d_name, &st, gen);
	if (!*ref)
		return -ENOMEM;
	dsfs_fill_entry(fs, e, *ref, &st);
	if (fs->push && S_ISREG(st.st_mode))
		dsfs_push_listed(fs->push, st.st_dev, st.st_ino, gen);
	return 0;
}

/*
 * Add one backing entry to the reply at *p (rem bytes left).  Returns the
 * bytes it took, 0 if it was skipped (removed since getdents), more than
 * rem if it did not fit (nothing added), or -errno.
 */
static ssize_t add_entry(fuse_req_t req, struct dsfs_inode *dir, int dirfd,
			 const struct dent64 *d, char *p, size_t rem,
			 struct plus_ctx *c)
{
	struct dsfs_fs *fs = dsfs_req_fs(req);
	struct fuse_entry_param e;
	struct dsfs_inode *ref;
	size_t need;
	int err;

	if (!c) {
		struct stat st = { .st_ino = d->d_ino,
				   .st_mode = (mode_t)d->d_type << 12 };

		return (ssize_t)fuse_add_direntry(req, p, rem, d->d_name, &st,
						  d->d_off);
	}
	err = plus_entry(fs, dir, dirfd, d, c, &e, &ref);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	need = fuse_add_direntry_plus(req, p, rem, d->d_name, &e, d->d_off);
	if (need > rem && ref) /* did not fit: undo its lookup reference */
		dsfs_inodes_unref(fs->inodes, ref, 1);
	return (ssize_t)need;
}

/*
 * The shared part of a READDIRPLUS reply's entries (struct plus_ctx), read
 * before the first getdents: a change after it is still to come.  The
 * warm-up's stats serve only a settled listing, from the mark it was
 * settled at.
 */
static void plus_start(struct dsfs_fs *fs, const struct dsfs_inode *dir,
		       struct plus_ctx *c)
{
	c->settled = dsfs_fresh_settled_at(fs, dir->dev, &c->mark);
	/* Unsettled, the records are still taken (and given back). */
	c->warm = __atomic_load_n(&fs->warm, __ATOMIC_ACQUIRE);
	if (!c->warm)
		return;
	if (dsfs_inodes_path(dir, c->path, sizeof(c->path) - 1)) {
		c->warm = NULL;
		return;
	}
	c->len = strcmp(c->path, ".") ? strlen(c->path) : 0;
	if (c->len)
		c->path[c->len++] = '/';
}

/*
 * Fill buf (size bytes) with the entries from offset off on (c: of a
 * READDIRPLUS, else NULL).  O(entries returned), plus at most one
 * getdents64 buffer read and not used.  Returns the bytes filled, or
 * -errno if not even one entry could be.
 */
static ssize_t fill(fuse_req_t req, struct dsfs_inode *dir, int dirfd,
		    off_t off, char *buf, size_t size, struct plus_ctx *c)
{
	char dbuf[8192] __attribute__((aligned(8)));
	/* A plus entry takes 6 to 7 times a dirent's room: read about as
	 * many as will fit (at least one of the longest name). */
	size_t want = c ? size / 4 : size, rem = size;
	ssize_t n = 0, at = 0, took;

	if (c)
		plus_start(dsfs_req_fs(req), dir, c);
	if (lseek(dirfd, off, SEEK_SET) < 0)
		return -errno;
	for (;;) {
		const struct dent64 *d;

		if (at == n) {
			n = getdents64(dirfd, dbuf, want < 1024 ? 1024 :
				       want > sizeof(dbuf) ? sizeof(dbuf) : want);
			if (n <= 0)
				return n < 0 && rem == size ? -errno :
							       (ssize_t)(size - rem);
			at = 0;
		}
		d = (const struct dent64 *)(dbuf + at);
		at += d->d_reclen;
		took = add_entry(req, dir, dirfd, d, buf + (size - rem), rem,
				 c);
		if (took < 0)
			return rem == size ? took : (ssize_t)(size - rem);
		if ((size_t)took > rem)
			return (ssize_t)(size - rem);
		rem -= (size_t)took;
	}
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       bool plus)
{
	struct dsfs_fs *fs = dsfs_req_fs(req);
	struct dsfs_inode *dir = dsfs_req_inode(req, ino);
	char *buf = malloc(size);
	struct plus_ctx c;
	ssize_t n;
	int dirfd;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	dirfd = dsfs_inode_open(fs, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	n = dirfd < 0 ? dirfd : fill(req, dir, dirfd, off, buf, size,
					       plus ? &c : NULL);
	if (dirfd >= 0)
		close(dirfd);
	/* An error after some entries still returns those entries. */
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
}

void dsfs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	(void)fi;
	do_readdir(req, ino, size, off, false);
}

void dsfs_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			 off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	do_readdir(req, ino, size, off, true);
}
