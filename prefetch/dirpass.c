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
#include "seqpass.h"

/* pid's slot, or the least recently seen one given to it (seen 0). */
static struct dsfs_dirproc *proc_of(struct dsfs_dirpass *d, uint32_t pid)
{
	struct dsfs_dirproc *p, *old = &d->procs[0];

	for (p = d->procs; p < d->procs + DSFS_DIRPASS_PROCS; p++) {
		if (p->seen && p->pid == pid)
			return p;
		if (p->seen < old->seen)
			old = p;
	}
	old->pid = pid;
	old->seen = 0;
	old->last[0] = '\0';
	return old;
}

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
	struct dsfs_dirproc *p;
	size_t len = strlen(path);
	bool step;

	if (!pid || len >= sizeof(p->last))
		return false;
	p = proc_of(d, pid);
	step = p->seen && steps(p->last, path);
	memcpy(p->last, path, len + 1);
	p->seen = ++d->opens;
	d->hist = d->hist << 1 | step;
	return __builtin_popcount(d->hist) >= DSFS_SEQPASS_ON;
}

void dsfs_dirpass_clear(struct dsfs_dirpass *d)
{
	d->hist = 0;
}

bool dsfs_dirpass_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "."))
		return true;
	return !strncmp(path, dir, n) && path[n] == '/';
}

/* Whether dir (n bytes, relative to SOURCE; 0: SOURCE) is one of the
 * data sets or holds one. */
static bool holds_dataset(const char *dir, size_t n, const char *datasets)
{
	const char *d = datasets, *end;
	size_t len;

	for (;; d = end + 1) {
		end = strchr(d, ':');
		len = end ? (size_t)(end - d) : strlen(d);
		if (!n || (len == 1 && d[0] == '.') ||
		    (len >= n && !memcmp(d, dir, n) &&
		     (len == n || d[n] == '/')))
			return true;
		if (!end)
			return false;
	}
}

/* Whether path is below one of the data sets. */
static bool in_dataset(const char *path, const char *datasets)
{
	const char *d = datasets, *end;
	size_t len;

	for (;; d = end + 1) {
		end = strchr(d, ':');
		len = end ? (size_t)(end - d) : strlen(d);
		if ((len == 1 && d[0] == '.') ||
		    (!strncmp(path, d, len) && path[len] == '/'))
			return true;
		if (!end)
			return false;
	}
}

size_t dsfs_dirpass_root(const char *path, const char *datasets,
			 char root[PATH_MAX])
{
	size_t dir = dir_len(path), parent;

	if (!dir || dir >= PATH_MAX || in_dataset(path, datasets))
		return 0;
	parent = dir;
	while (parent && path[parent - 1] != '/')
		parent--;
	parent = parent ? parent - 1 : 0; /* "a" of "a/b/c" */
	if (parent && !holds_dataset(path, parent, datasets))
		dir = parent;
	else if (holds_dataset(path, dir, datasets))
		return 0;
	memcpy(root, path, dir);
	root[dir] = '\0';
	return dir;
}
