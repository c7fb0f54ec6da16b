// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A pass in sorted order over a tree outside the plan (dirpass.h).
 *
 * Threads: the caller's lock (the scheduler's).
 */
#include "config.h"

#include <string.h>

#include "dirpass.h"
#include "layout.h"

/* Length of path's directory part ("a/b" of "a/b/c"), 0 for none. */
static size_t dir_len(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? (size_t)(slash - path) : 0;
}

/* Whether b is in a's directory with a name that sorts after a's. */
static bool steps(const char *a, const char *b)
{
	size_t n = dir_len(a);

	return n == dir_len(b) && !memcmp(a, b, n) &&
	       dsfs_layout_strcmp(a + n, b + n) < 0;
}

bool dsfs_dirpass_access(struct dsfs_dirpass *d, uint32_t pid,
			 const char *path)
{
	struct dsfs_seqproc *p;
	size_t len = strlen(path);
	char *last;
	bool step;

	if (!pid || len >= sizeof(d->last[0]))
		return false;
	p = dsfs_seqpass_proc(d->procs, pid);
	last = d->last[p - d->procs];
	step = p->seen && steps(last, path);
	memcpy(last, path, len + 1);
	p->seen = ++d->opens;
	d->hist = d->hist << 1 | step;
	return __builtin_popcount(d->hist) >= DSFS_SEQPASS_ON;
}

void dsfs_dirpass_clear(struct dsfs_dirpass *d)
{
	d->hist = 0;
}

/* Whether the directory a (na bytes) is b (nb bytes) or below it; every
 * directory is below SOURCE (nb 0). */
static bool under(const char *a, size_t na, const char *b, size_t nb)
{
	return !nb || (na >= nb && !memcmp(a, b, nb) &&
		       (na == nb || a[nb] == '/'));
}

/* Whether the directory dir (n bytes, relative to SOURCE; 0: SOURCE) is
 * one of the data sets or lies below one (inside), or is one or holds
 * one (!inside). */
static bool by_dataset(const char *dir, size_t n, const char *datasets,
		       bool inside)
{
	const char *d = datasets, *end;
	size_t len;

	for (;; d = end + 1) {
		end = strchr(d, ':');
		len = end ? (size_t)(end - d) : strlen(d);
		if (len == 1 && d[0] == '.')
			len = 0; /* SOURCE */
		if (inside ? under(dir, n, d, len) : under(d, len, dir, n))
			return true;
		if (!end)
			return false;
	}
}

bool dsfs_dirpass_in_dataset(const char *path, const char *datasets)
{
	return by_dataset(path, dir_len(path), datasets, true);
}

size_t dsfs_dirpass_root(const char *path, const char *datasets,
			 char root[PATH_MAX])
{
	size_t dir = dir_len(path), parent;

	if (!dir || dir >= PATH_MAX ||
	    dsfs_dirpass_in_dataset(path, datasets))
		return 0;
	parent = dir;
	while (parent && path[parent - 1] != '/')
		parent--;
	parent = parent ? parent - 1 : 0; /* "a" of "a/b/c" */
	if (parent && !by_dataset(path, parent, datasets, false))
		dir = parent;
	else if (by_dataset(path, dir, datasets, false))
		return 0;
	memcpy(root, path, dir);
	root[dir] = '\0';
	return dir;
}
