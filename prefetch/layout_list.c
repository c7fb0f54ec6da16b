// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The list layout (see layout.h): sample i is line i + 1 of a list file.
 *
 * The file is streamed through a 64 KiB buffer, one line of at most PATH_MAX
 * bytes at a time, so memory is the result's (path bytes + ~25 bytes per
 * line) whatever the file size.  Each line is checked and normalised ("."
 * and empty components dropped) as it is read and appended unresolved; then
 * the parallel stat pass (layout_stat.c) settles the lines that name regular
 * files reached inside SOURCE, and the rest (symlinks, missing files, ...)
 * are resolved here one by one in line order, so the first bad line is the
 * one reported.
 * Threads: the building thread, and the stat pass's helpers.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "layout_int.h"

struct listctx {
	struct dsfs_layout_ctx *c;
	const char *file;
	int fd;
	uint64_t lineno;
	size_t pos, len;	/* unread bytes: buf[pos .. len) */
	bool eof;
	char line[PATH_MAX + 1]; /* room for PATH_MAX - 1 bytes and a CR */
	char path[PATH_MAX];	/* the line, normalised */
	char buf[1 << 16];
};

/*
 * Next line, without its LF, into x->line.  1 and *len; 0 at end of file;
 * -ENAMETOOLONG for a line longer than x->line; -errno on a read error.
 */
static int next_line(struct listctx *x, size_t *len)
{
	size_t n = 0, chunk;
	bool any = false;
	char *start, *nl;
	ssize_t got;

	for (;;) {
		if (x->pos == x->len) {
			if (x->eof)
				break;
			do
				got = read(x->fd, x->buf, sizeof(x->buf));
			while (got < 0 && errno == EINTR);
			if (got < 0)
				return -errno;
			x->eof = got == 0;
			x->pos = 0, x->len = (size_t)got;
			continue;
		}
		any = true;
		start = x->buf + x->pos;
		nl = memchr(start, '\n', x->len - x->pos);
		chunk = nl ? (size_t)(nl - start) : x->len - x->pos;
		if (n + chunk > sizeof(x->line))
			return -ENAMETOOLONG;
		memcpy(x->line + n, start, chunk);
		n += chunk;
		x->pos += chunk + (nl ? 1 : 0);
		if (nl)
			break;
	}
	*len = n;
	return any;
}

/* Reason for refusing line x->lineno, also naming text when len > 0. */
static int refuse(struct listctx *x, const char *text, size_t len,
		  const char *reason, int err)
{
	char q[160];

	if (len) {
		dsfs_layout_quote(q, sizeof(q), text, len);
		dsfs_layout_why(x->c, "list=%s line %llu: '%s' %s", x->file,
				(unsigned long long)x->lineno, q, reason);
	} else {
		dsfs_layout_why(x->c, "list=%s line %llu: %s", x->file,
				(unsigned long long)x->lineno, reason);
	}
	return err;
}

/* Checks x->line and writes it, normalised, to x->path.  0 or -EINVAL. */
static int check_line(struct listctx *x, size_t len, size_t *plen)
{
	size_t i = 0, o = 0, n;

	if (memchr(x->line, '\0', len))
		return refuse(x, NULL, 0, "contains a NUL byte", -EINVAL);
	if (memchr(x->line, '\r', len))
		return refuse(x, x->line, len, "contains a carriage return "
			      "(line ends must be LF or CRLF)", -EINVAL);
	if (!len)
		return refuse(x, NULL, 0, "empty line", -EINVAL);
	if (len >= PATH_MAX)
		return refuse(x, NULL, 0, "is longer than PATH_MAX - 1 bytes",
			      -ENAMETOOLONG);
	if (x->line[0] == '/')
		return refuse(x, x->line, len, "is an absolute path; list paths "
			      "relative to the dataset directory", -EINVAL);
	if (x->line[len - 1] == '/')
		return refuse(x, x->line, len, "ends with '/'", -EINVAL);
	while (i < len) {
		const char *s = x->line + i, *e = memchr(s, '/', len - i);

		n = e ? (size_t)(e - s) : len - i;
		i += n + 1;
		if (!n || (n == 1 && s[0] == '.'))
			continue;
		if (n == 2 && s[0] == '.' && s[1] == '.')
			return refuse(x, x->line, len, o ? "has a '..' component "
				      "(paths may not climb)" :
				      "leaves the dataset directory", -EINVAL);
		if (o)
			x->path[o++] = '/';
		memcpy(x->path + o, s, n);
		o += n;
	}
	if (!o)
		return refuse(x, x->line, len, "names the dataset directory itself",
			      -EINVAL);
	x->path[o] = '\0';
	*plen = o;
	return 0;
}

/*
 * Resolves sample i, which the stat pass left unsettled: a symlink, a path
 * through a symlink, or a missing file or directory (refused).  0 or -errno.
 */
static int settle_one(struct listctx *x, uint64_t i)
{
	struct dsfs_layout *l = x->c->l;
	const char *path = l->arena + l->offs[i];
	size_t len = strlen(path);
	char reason[128];
	struct stat st;
	bool inside;
	int err;

	x->lineno = i + 1; /* every line is a sample */
	err = dsfs_layout_resolve(x->c, path, &st, &inside);
	if (err == -ENOENT || err == -ENOTDIR)
		return refuse(x, path, len, "names a missing file", -ENOENT);
	if (err) {
		snprintf(reason, sizeof(reason), "cannot be resolved: %s",
			 strerror(-err));
		return refuse(x, path, len, reason, err);
	}
	if (S_ISDIR(st.st_mode))
		return refuse(x, path, len, "names a directory, not a file",
			      -EISDIR);
	l->sizes[i] = dsfs_layout_sizeflag(l, &st, inside);
	l->info.links++; /* the stat pass leaves links, and only them */
	return 0;
}

/* Stats every line read so far; refuses the first bad one.  0 or -errno. */
static int settle(struct listctx *x)
{
	struct dsfs_layout *l = x->c->l;
	uint64_t i;
	int err = 0;

	dsfs_layout_stat_pending(x->c);
	for (i = 0; !err && i < l->count; i++) {
		if (l->sizes[i] == DSFS_LAYOUT_PENDING)
			err = settle_one(x, i);
	}
	return err;
}

static int read_list(struct listctx *x)
{
	size_t linelen = 0, len = 0;
	int got, err;

	for (;;) {
		x->lineno++;
		got = next_line(x, &linelen);
		if (got == 0)
			break;
		if (got == -ENAMETOOLONG) {
			err = refuse(x, NULL, 0, "is longer than PATH_MAX - 1 "
				     "bytes", got);
		} else if (got < 0) {
			dsfs_layout_why(x->c, "list=%s: read: %s", x->file,
					strerror(-got));
			return got;
		} else {
			if (linelen && x->line[linelen - 1] == '\r')
				linelen--; /* CRLF, as Python's text mode */
			err = check_line(x, linelen, &len);
		}
		if (err) {
			/* A missing file on an earlier line comes first. */
			got = settle(x);
			return got ? got : err;
		}
		err = dsfs_layout_add(x->c->l, NULL, 0, x->path, len,
				      DSFS_LAYOUT_PENDING);
		if (err)
			return err;
	}
	if (!x->c->l->count) {
		dsfs_layout_why(x->c, "list=%s: empty; it must name at least "
				"one file", x->file);
		return -EINVAL;
	}
	return settle(x);
}

int dsfs_layout_build_list(struct dsfs_layout_ctx *c, const char *list_file)
{
	struct listctx *x;
	struct stat st;
	int err;

	if (!list_file || list_file[0] != '/') {
		dsfs_layout_why(c, list_file ? "list=%s: not an absolute path" :
				"layout=list needs a list file%s",
				list_file ? list_file : "");
		return -EINVAL;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->c = c;
	x->file = list_file;
	x->fd = open(list_file, O_RDONLY | O_CLOEXEC);
	if (x->fd < 0 || fstat(x->fd, &st)) {
		err = -errno;
		dsfs_layout_why(c, "list=%s: %s", list_file, strerror(-err));
	} else if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		dsfs_layout_why(c, "list=%s: is a directory", list_file);
	} else {
		posix_fadvise(x->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
		err = read_list(x);
	}
	if (x->fd >= 0)
		close(x->fd);
	free(x);
	return err;
}
