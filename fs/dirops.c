// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Directory listing.  OPENDIR reads the whole backing directory into a
 * snapshot held by the file handle and closes the fd at once, so an open
 * directory costs memory (about 24 bytes plus the name per entry), never a
 * file descriptor.  READDIR(PLUS) serves the snapshot with offset = index;
 * the kernel keeps the listing cached (cache_readdir, keep_cache).  Entries
 * are exactly the backing entries, "." and ".." included: dsfs adds nothing.
 *
 * Threads: FUSE workers.  A snapshot is immutable after OPENDIR and freed
 * by RELEASEDIR, which the kernel sends after the last use of the handle.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dsfs.h"
#include "ident.h"
#include "inodes.h"

struct snap_ent {
	uint64_t ino;
	unsigned char type;	/* DT_* */
	size_t name;		/* offset into names */
};

struct dir_snap {
	size_t n, cap;
	struct snap_ent *ents;
	char *names;
	size_t names_len, names_cap;
};

static void snap_free(struct dir_snap *s)
{
	if (!s)
		return;
	free(s->ents);
	free(s->names);
	free(s);
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

static int snap_add(struct dir_snap *s, const struct dirent *d)
{
	size_t len = strlen(d->d_name) + 1;

	if (grow((void **)&s->ents, &s->cap, s->n + 1, sizeof(*s->ents)) ||
	    grow((void **)&s->names, &s->names_cap, s->names_len + len, 1))
		return -ENOMEM;
	s->ents[s->n++] = (struct snap_ent){ d->d_ino, d->d_type,
					     s->names_len };
	memcpy(s->names + s->names_len, d->d_name, len);
	s->names_len += len;
	return 0;
}

/* O(entries); called once per OPENDIR. */
static int snap_read(struct dsfs_fs *fs, const struct dsfs_inode *in,
		     struct dir_snap **out)
{
	struct dir_snap *s = calloc(1, sizeof(*s));
	struct dirent *d;
	DIR *dp;
	int fd, err = 0;

	if (!s)
		return -ENOMEM;
	fd = dsfs_inode_open(fs, in, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (fd < 0) {
		free(s);
		return fd;
	}
	dp = fdopendir(fd);
	if (!dp) {
		err = -errno;
		close(fd);
		free(s);
		return err;
	}
	for (errno = 0; !err && (d = readdir(dp)); errno = 0)
		err = snap_add(s, d);
	if (!err && errno)
		err = -errno;
	closedir(dp);
	if (err) {
		snap_free(s);
		return err;
	}
	*out = s;
	return 0;
}

void dsfs_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct dir_snap *s = NULL;
	int err = snap_read(dsfs_req_fs(req), dsfs_req_inode(req, ino), &s);

	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	fi->fh = (uintptr_t)s;
	fi->cache_readdir = 1;
	fi->keep_cache = 1;
	if (fuse_reply_open(req, fi) == -ENOENT) /* interrupted */
		snap_free(s);
}

void dsfs_op_releasedir(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	snap_free((struct dir_snap *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static bool is_dot(const char *name)
{
	return name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]));
}

/*
 * READDIRPLUS entry for one name: stat it through the directory fd (never
 * following a link) and take a lookup reference.  Dots get no reference,
 * as the kernel does not link them.  0, or -errno (e.g. the name vanished).
 */
static int plus_entry(struct dsfs_fs *fs, struct dsfs_inode *dir, int dirfd,
		      const char *name, const struct snap_ent *se,
		      struct fuse_entry_param *e, struct dsfs_inode **ref)
{
	struct stat st;
	uint64_t gen;

	*ref = NULL;
	memset(e, 0, sizeof(*e));
	if (is_dot(name)) {
		e->attr.st_ino = se->ino;
		e->attr.st_mode = (mode_t)se->type << 12;
		return 0;
	}
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	gen = dsfs_ident_gen(dirfd, name);
	*ref = dsfs_inodes_ref_child(fs->inodes, dir, name, &st, gen);
	if (!*ref)
		return -ENOMEM;
	dsfs_fill_entry(fs, e, *ref, &st);
	if (fs->push && S_ISREG(st.st_mode))
		dsfs_push_listed(fs->push, st.st_dev, st.st_ino, gen);
	return 0;
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi, bool plus)
{
	struct dsfs_fs *fs = dsfs_req_fs(req);
	struct dir_snap *s = (struct dir_snap *)(uintptr_t)fi->fh;
	struct dsfs_inode *dir = dsfs_req_inode(req, ino);
	char *buf = malloc(size), *p = buf;
	size_t rem = size, i;
	int dirfd = -1, err = 0;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (plus) {
		dirfd = dsfs_inode_open(fs, dir, O_PATH | O_DIRECTORY);
		err = dirfd < 0 ? dirfd : 0;
	}
	for (i = (size_t)off; !err && i < s->n; i++) {
		const char *name = s->names + s->ents[i].name;
		struct fuse_entry_param e;
		struct dsfs_inode *ref = NULL;
		size_t need;

		if (plus) {
			int e_err = plus_entry(fs, dir, dirfd, name, &s->ents[i],
					       &e, &ref);

			if (e_err == -ENOENT)
				continue; /* removed since OPENDIR */
			if (e_err) {
				err = e_err;
				break;
			}
			need = fuse_add_direntry_plus(req, p, rem, name, &e,
						      (off_t)i + 1);
		} else {
			struct stat st = { .st_ino = s->ents[i].ino,
					   .st_mode = (mode_t)s->ents[i].type << 12 };

			need = fuse_add_direntry(req, p, rem, name, &st,
						 (off_t)i + 1);
		}
		if (need > rem) { /* did not fit: undo its lookup reference */
			if (ref)
				dsfs_inodes_unref(fs->inodes, ref, 1);
			break;
		}
		p += need;
		rem -= need;
	}
	if (dirfd >= 0)
		close(dirfd);
	/* An error after some entries still returns those entries. */
	if (err && p == buf)
		fuse_reply_err(req, -err);
	else
		fuse_reply_buf(req, buf, size - rem);
	free(buf);
}

void dsfs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, false);
}

void dsfs_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			 off_t off, struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, true);
}
