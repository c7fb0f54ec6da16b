// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fusefloor: the least a FUSE filesystem can make the kernel do for a warm
 * read, as a reference for target 1 of the benchmark (bench/README.md).
 *
 *   fusefloor SOURCE MOUNTPOINT [-o acl]
 *
 * A read-only passthrough of SOURCE with nothing of dsfs's: no cache, no
 * plan, no push.  It answers OPEN, OPENDIR and FLUSH with ENOSYS (FLUSH by
 * leaving it out: libfuse would answer OPEN and OPENDIR left out with
 * success), so the kernel stops sending them and keeps each file's page
 * cache across opens; entries and attributes are
 * cached for a day; default_permissions.  With -o acl it also asks for
 * FUSE_CAP_POSIX_ACL, as dsfs does.  Once a pass has read every file, a
 * warm pass costs what the kernel's FUSE path costs and nothing more: the
 * daemon is not asked.
 *
 * A node is a name under its parent node (the path is rebuilt for every
 * request that touches SOURCE), so no file descriptor is kept per inode.
 * Nodes are keyed by inode number: SOURCE must be one filesystem.
 */
#define FUSE_USE_VERSION 314
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DAY 86400.0
#define NBUCKET 65536

struct node {
	struct node *parent, *next;	/* next: in its hash bucket */
	ino_t ino;
	uint64_t refs;	/* the kernel's lookups plus child nodes */
	char name[];
};

static struct node root;
static struct node *bucket[NBUCKET];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int src_fd = -1;
static int want_acl;

static struct node *node_of(fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? &root : (struct node *)(uintptr_t)ino;
}

/* The path of n relative to SOURCE ("." for the root) in buf; -ENAMETOOLONG
 * if it does not fit.  Called under lock (names and parents do not change,
 * but a node may be freed once forgotten). */
static int path_of(const struct node *n, char *buf, size_t size)
{
	size_t end = size;

	if (n == &root)
		return snprintf(buf, size, ".") < (int)size ? 0 : -ENAMETOOLONG;
	buf[--end] = '\0';
	for (; n != &root; n = n->parent) {
		size_t len = strlen(n->name);

		if (len + 1 > end)
			return -ENAMETOOLONG;
		end -= len;
		memcpy(buf + end, n->name, len);
		if (n->parent != &root)
			buf[--end] = '/';
	}
	memmove(buf, buf + end, size - end);
	return 0;
}

static int path_of_ino(fuse_ino_t ino, char *buf, size_t size)
{
	int err;

	pthread_mutex_lock(&lock);
	err = path_of(node_of(ino), buf, size);
	pthread_mutex_unlock(&lock);
	return err;
}

/* The node for inode ino found as name under parent: the one the kernel
 * already has, or a new one; one more lookup reference either way. */
static struct node *node_get(struct node *parent, const char *name, ino_t ino)
{
	struct node **b = &bucket[ino % NBUCKET], *n;
	size_t len = strlen(name) + 1;

	pthread_mutex_lock(&lock);
	for (n = *b; n && n->ino != ino; n = n->next)
		;
	if (!n && (n = malloc(sizeof(*n) + len))) {
		n->parent = parent;
		n->ino = ino;
		n->refs = 0;
		memcpy(n->name, name, len);
		n->next = *b;
		*b = n;
		parent->refs++;
	}
	if (n)
		n->refs++;
	pthread_mutex_unlock(&lock);
	return n;
}

/* Drop count references from n, freeing it (and up its parents) at none. */
static void node_put(struct node *n, uint64_t count)
{
	pthread_mutex_lock(&lock);
	while (n != &root && (n->refs -= count) == 0) {
		struct node **p = &bucket[n->ino % NBUCKET], *parent = n->parent;

		while (*p != n)
			p = &(*p)->next;
		*p = n->next;
		free(n);
		n = parent;
		count = 1;
	}
	pthread_mutex_unlock(&lock);
}

static void ff_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	conn->want &= ~(FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO);
	if (want_acl && (conn->capable & FUSE_CAP_POSIX_ACL))
		conn->want |= FUSE_CAP_POSIX_ACL;
}

static void ff_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	char path[PATH_MAX];
	struct fuse_entry_param e = { .attr_timeout = DAY, .entry_timeout = DAY };
	struct node *n;
	size_t len;
	int err = path_of_ino(parent, path, sizeof(path) - NAME_MAX - 2);

	if (err)
		goto fail;
	len = strlen(path);
	snprintf(path + len, sizeof(path) - len, "/%s", name);
	if (fstatat(src_fd, path, &e.attr, AT_SYMLINK_NOFOLLOW)) {
		err = -errno;
		goto fail;
	}
	n = node_get(node_of(parent), name, e.attr.st_ino);
	if (!n) {
		err = -ENOMEM;
		goto fail;
	}
	e.ino = (fuse_ino_t)(uintptr_t)n;
	fuse_reply_entry(req, &e);
	return;
fail:
	fuse_reply_err(req, -err);
}

static void ff_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	node_put(node_of(ino), nlookup);
	fuse_reply_none(req);
}

static void ff_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	char path[PATH_MAX];
	struct stat st;
	int err = path_of_ino(ino, path, sizeof(path));

	(void)fi;
	if (!err && fstatat(src_fd, path, &st, AT_SYMLINK_NOFOLLOW))
		err = -errno;
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_attr(req, &st, DAY);
}

static void ff_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n = -1;
	int err = path_of_ino(ino, path, sizeof(path));

	if (!err && (n = readlinkat(src_fd, path, target, sizeof(target) - 1)) < 0)
		err = -errno;
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	target[n] = '\0';
	fuse_reply_readlink(req, target);
}

/* OPEN and OPENDIR: ENOSYS, once; the kernel opens on its own from then. */
static void ff_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, ENOSYS);
}

/* open(2) of ino's file in SOURCE with flags, or -errno. */
static int open_ino(fuse_ino_t ino, int flags)
{
	char path[PATH_MAX];
	int fd, err = path_of_ino(ino, path, sizeof(path));

	if (err)
		return err;
	fd = openat(src_fd, path, flags | O_CLOEXEC | O_NOFOLLOW);
	return fd < 0 ? -errno : fd;
}

static void ff_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct fuse_bufvec buf = FUSE_BUFVEC_INIT(size);
	int fd = open_ino(ino, O_RDONLY);

	(void)fi;
	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	buf.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	buf.buf[0].fd = fd;
	buf.buf[0].pos = off;
	fuse_reply_data(req, &buf, FUSE_BUF_SPLICE_MOVE);
	close(fd);
}

/* No OPENDIR: each READDIR opens the directory, seeks to off (the d_off of
 * the entry before, which the filesystem keeps stable) and lists on. */
static void ff_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	char dents[32768], *out = malloc(size);
	size_t used = 0;
	long n = 0, at = 0;
	int fd = open_ino(ino, O_RDONLY | O_DIRECTORY);

	(void)fi;
	if (fd < 0 || !out) {
		fuse_reply_err(req, fd < 0 ? -fd : ENOMEM);
		goto out;
	}
	if (lseek(fd, off, SEEK_SET) < 0) {
		fuse_reply_err(req, errno);
		goto out;
	}
	for (;;) {
		struct dirent64 *d;
		struct stat st = { 0 };
		size_t len;

		if (at >= n) {
			n = syscall(SYS_getdents64, fd, dents, sizeof(dents));
			if (n <= 0)
				break;
			at = 0;
		}
		d = (struct dirent64 *)(dents + at);
		st.st_ino = d->d_ino;
		st.st_mode = (mode_t)d->d_type << 12;
		len = fuse_add_direntry(req, out + used, size - used, d->d_name,
					&st, d->d_off);
		if (len > size - used)
			break;
		used += len;
		at += d->d_reclen;
	}
	if (n < 0 && used == 0)
		fuse_reply_err(req, errno);
	else
		fuse_reply_buf(req, out, used);
out:
	if (fd >= 0)
		close(fd);
	free(out);
}

static void ff_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;

	(void)ino;
	if (fstatvfs(src_fd, &sv))
		fuse_reply_err(req, errno);
	else
		fuse_reply_statfs(req, &sv);
}

static const struct fuse_lowlevel_ops ops = {
	.init = ff_init,
	.lookup = ff_lookup,
	.forget = ff_forget,
	.getattr = ff_getattr,
	.readlink = ff_readlink,
	.open = ff_open,
	.opendir = ff_open,
	.read = ff_read,
	.readdir = ff_readdir,
	.statfs = ff_statfs,
};

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_loop_config *loop;
	struct fuse_session *se;
	int rc = 1;

	if (argc == 5 && !strcmp(argv[3], "-o") && !strcmp(argv[4], "acl"))
		want_acl = 1;
	else if (argc != 3) {
		fprintf(stderr, "usage: fusefloor SOURCE MOUNTPOINT [-o acl]\n");
		return 2;
	}
	src_fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (src_fd < 0) {
		fprintf(stderr, "fusefloor: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	root.refs = 1;
	if (fuse_opt_add_arg(&args, argv[0]) ||
	    fuse_opt_add_arg(&args, "-osubtype=fusefloor,fsname=fusefloor,ro,default_permissions"))
		return 1;
	se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
	if (!se)
		goto out_args;
	if (fuse_set_signal_handlers(se) || fuse_session_mount(se, argv[2]))
		goto out_session;
	loop = fuse_loop_cfg_create();
	if (loop) {
		rc = fuse_session_loop_mt(se, loop) ? 1 : 0;
		fuse_loop_cfg_destroy(loop);
	}
	fuse_session_unmount(se);
out_session:
	fuse_remove_signal_handlers(se);
	fuse_session_destroy(se);
out_args:
	fuse_opt_free_args(&args);
	return rc;
}
