// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The dsfs mounts of this mount namespace, from /proc/mounts (fstype
 * fuse.dsfs; the kernel writes space, tab, newline and backslash in a path
 * as \040, \011, \012, \134).  Single-threaded.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsfs-stats.h"

#define PROC_MOUNTS "/proc/mounts"

/* Undo the kernel's octal escapes in place. */
static void unescape_octal(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
				      (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* Add a copy of m to the array *v of *n. */
static int push(char ***v, unsigned *n, const char *m)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[*n] = strdup(m);
	if (!nv[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

int dsfs_mounts_list(char ***out, unsigned *n)
{
	FILE *f = fopen(PROC_MOUNTS, "re");
	char *line = NULL, *save, *mnt, *type;
	size_t cap = 0;
	int err = 0;

	*out = NULL;
	*n = 0;
	if (!f)
		return -errno;
	while (!err && getline(&line, &cap, f) > 0) {
		save = NULL;
		if (!strtok_r(line, " ", &save))
			continue;
		mnt = strtok_r(NULL, " ", &save);
		type = strtok_r(NULL, " ", &save);
		if (!mnt || !type || strcmp(type, "fuse.dsfs"))
			continue;
		unescape_octal(mnt);
		err = push(out, n, mnt);
	}
	free(line);
	fclose(f);
	if (err) {
		dsfs_mounts_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return err;
}

void dsfs_mounts_free(char **m, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		free(m[i]);
	free(m);
}

int dsfs_mounts_is_root(const char *path)
{
	char **m, *abs;
	unsigned n, i;
	int found = 0;

	abs = realpath(path, NULL);
	if (!abs)
		return -errno;
	if (dsfs_mounts_list(&m, &n)) {
		free(abs);
		return 1; /* no /proc/mounts to go by */
	}
	for (i = 0; i < n && !found; i++)
		found = !strcmp(abs, m[i]);
	dsfs_mounts_free(m, n);
	free(abs);
	return found;
}

char *dsfs_mounts_containing(const char *path)
{
	char **m, *abs = realpath(path, NULL), *best = NULL;
	size_t len, best_len = 0;
	unsigned n, i;

	if (!abs || dsfs_mounts_list(&m, &n)) {
		free(abs);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		len = strlen(m[i]);
		if (len > best_len && !strncmp(abs, m[i], len) &&
		    abs[len] == '/') {
			best = m[i];
			best_len = len;
		}
	}
	best = best ? strdup(best) : NULL;
	dsfs_mounts_free(m, n);
	free(abs);
	return best;
}
