// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Samples reached through symlinks (see dsfs_layout_alias() in layout.h).
 *
 * The kernel resolves every symlink on the way of an open through the mount
 * before the daemon hears of it: a loader that opens train/cat/1.jpg, a link
 * to ../../pool/1.jpg, shows up as pool/1.jpg.  So a sample whose path holds
 * a link is also known by its resolved path, relative to SOURCE, which
 * /proc/self/fd gives for an O_PATH fd opened beneath the root.
 *
 * Directories are resolved once each, through a small direct-mapped cache
 * keyed by the directory's path (walks give samples directory by directory,
 * and a list in any order names few directories).  A sample's own name is
 * lstat'ed only when the build followed a link to a sample (info.links).
 * A path that resolves outside SOURCE gets no alias: the loader's reads of
 * it never reach the mount.
 * Threads: the building thread only.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "layout_int.h"

#define DIR_CACHE 256

/* A directory of samples: its path below DIR and what it resolves to. */
struct dirslot {
	char *dir;		/* malloc'd; NULL: an empty slot */
	char *resolved;		/* malloc'd, relative to SOURCE; NULL: not
				   reachable inside SOURCE */
	bool same;		/* resolved is DIR/dir itself */
};

struct aliasctx {
	struct dsfs_layout_ctx *c;
	char root[PATH_MAX];	/* SOURCE's absolute path, "" for "/" */
	size_t root_len;
	struct dsfs_strbuf arena;
	struct dirslot cache[DIR_CACHE];
};

/* fd's absolute path into buf: 0 or -errno. */
static int fd_path(int fd, char *buf, size_t size)
{
	char proc[64];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, size);
	if (n < 0)
		return -errno;
	if ((size_t)n >= size)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return 0;
}

/* DIR/rel (rel "" for DIR) into out: the path the loader names. */
static int nominal(const struct aliasctx *a, const char *rel, char *out,
		   size_t size)
{
	const char *ds = a->c->ds_rel;
	int n = !strcmp(ds, ".") ? snprintf(out, size, "%s", *rel ? rel : ".")
		: *rel ? snprintf(out, size, "%s/%s", ds, rel)
		       : snprintf(out, size, "%s", ds);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* DIR/rel with every link resolved, relative to SOURCE, into out: 0, or
 * -errno (missing; -EXDEV: outside SOURCE). */
static int resolve(const struct aliasctx *a, const char *rel, char *out,
		   size_t size)
{
	char abs[PATH_MAX];
	const char *r;
	int fd = dsfs_layout_open_in_root(a->c, *rel ? rel : ".", O_PATH);
	int err;

	if (fd < 0)
		return fd;
	err = fd_path(fd, abs, sizeof(abs));
	close(fd);
	if (err)
		return err;
	if (strncmp(abs, a->root, a->root_len) ||
	    (abs[a->root_len] != '/' && abs[a->root_len] != '\0'))
		return -EXDEV;
	r = abs + a->root_len + (abs[a->root_len] == '/');
	if ((size_t)snprintf(out, size, "%s", *r ? r : ".") >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* The cache slot of directory dir (length len), filled.  NULL: no memory. */
static struct dirslot *dir_of(struct aliasctx *a, const char *dir, size_t len)
{
	char res[PATH_MAX], nom[PATH_MAX];
	struct dirslot *d;

	d = &a->cache[XXH3_64bits(dir, len) % DIR_CACHE];
	if (d->dir && strlen(d->dir) == len && !memcmp(d->dir, dir, len))
		return d;
	free(d->dir);
	free(d->resolved);
	*d = (struct dirslot){ .dir = strndup(dir, len) };
	if (!d->dir)
		return NULL;
	if (resolve(a, d->dir, res, sizeof(res)))
		return d; /* missing or outside: its samples get no alias */
	d->resolved = strdup(res);
	if (!d->resolved)
		return NULL;
	d->same = !nominal(a, d->dir, nom, sizeof(nom)) && !strcmp(nom, res);
	return d;
}

/* Records sample i's resolved path.  0 or -ENOMEM / -EFBIG. */
static int add_alias(struct aliasctx *a, uint64_t i, const char *path)
{
	struct dsfs_layout *l = a->c->l;
	uint32_t off;
	int err;

	if (!l->alias_offs) {
		l->alias_offs = calloc(l->count, sizeof(*l->alias_offs));
		if (!l->alias_offs)
			return -ENOMEM;
	}
	err = dsfs_strbuf_add(&a->arena, path, strlen(path), &off);
	if (err)
		return err;
	l->alias_offs[i] = off + 1;
	l->info.aliases++;
	return 0;
}

/* Sample i's alias, if it has one. */
static int sample_alias(struct aliasctx *a, uint64_t i)
{
	struct dsfs_layout *l = a->c->l;
	const char *p = l->arena + l->offs[i], *slash = strrchr(p, '/');
	size_t dlen = slash ? (size_t)(slash - p) : 0;
	char res[PATH_MAX];
	struct dirslot *d = dir_of(a, p, dlen);
	struct stat st;

	if (!d)
		return -ENOMEM;
	if (!d->resolved)
		return 0;
	if (l->info.links && !fstatat(a->c->ds_fd, p, &st, AT_SYMLINK_NOFOLLOW) &&
	    S_ISLNK(st.st_mode)) {
		/* a link never resolves to its own path */
		return resolve(a, p, res, sizeof(res)) ? 0 : add_alias(a, i, res);
	}
	if (d->same)
		return 0;
	if ((size_t)snprintf(res, sizeof(res), "%s%s%s",
			     strcmp(d->resolved, ".") ? d->resolved : "",
			     strcmp(d->resolved, ".") ? "/" : "",
			     slash ? slash + 1 : p) >= sizeof(res))
		return 0;
	return add_alias(a, i, res);
}

/* Whether DIR itself is reached through a link. */
static bool dataset_linked(struct aliasctx *a)
{
	char res[PATH_MAX], nom[PATH_MAX];

	return !resolve(a, "", res, sizeof(res)) &&
	       !nominal(a, "", nom, sizeof(nom)) && strcmp(nom, res);
}

int dsfs_layout_find_aliases(struct dsfs_layout_ctx *c)
{
	struct dsfs_layout *l = c->l;
	struct aliasctx *a;
	uint64_t i, shared = 0;
	int err = 0;

	if (!l->count)
		return 0;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->c = c;
	if (fd_path(c->root_fd, a->root, sizeof(a->root)))
		goto out; /* no /proc: no aliases, as before them */
	a->root_len = strcmp(a->root, "/") ? strlen(a->root) : 0;
	if (l->kind != DSFS_LAYOUT_LIST && !l->info.links &&
	    !dataset_linked(a))
		goto out;
	for (i = 0; !err && i < l->count; i++)
		err = sample_alias(a, i);
	if (!err && l->info.aliases) {
		l->alias_arena = a->arena.p;
		l->alias_len = a->arena.len;
		a->arena.p = NULL;
		err = dsfs_layout_table(l, dsfs_layout_alias, l->info.aliases,
					&l->alias_slots, &l->alias_nslots,
					&shared); /* several links to one file */
	}
out:
	for (i = 0; i < DIR_CACHE; i++) {
		free(a->cache[i].dir);
		free(a->cache[i].resolved);
	}
	free(a->arena.p);
	free(a);
	return err;
}

const char *dsfs_layout_alias(const struct dsfs_layout *l, uint64_t i)
{
	return l->alias_offs && l->alias_offs[i] ?
		       l->alias_arena + l->alias_offs[i] - 1 : NULL;
}

int dsfs_layout_lookup_alias(const struct dsfs_layout *l, const char *path,
			     uint64_t *index)
{
	return dsfs_layout_probe(l, l->alias_slots, l->alias_nslots,
				 dsfs_layout_alias, path, index);
}
