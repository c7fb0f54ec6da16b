// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Memory cgroup limit (see cgroup.h).  Single call, no state.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"

#define V1_ROOT "/sys/fs/cgroup/memory"
#define V2_ROOT "/sys/fs/cgroup"

/* The number in file path; UINT64_MAX for "max", absent or unreadable. */
static uint64_t read_limit(const char *path)
{
	char buf[64];
	FILE *f = fopen(path, "re");
	unsigned long long v;
	uint64_t r = UINT64_MAX;

	if (!f)
		return r;
	if (fgets(buf, sizeof(buf), f) && sscanf(buf, "%llu", &v) == 1)
		r = v;
	fclose(f);
	return r;
}

/* The smallest limit of dir and its ancestors below root. */
static uint64_t walk_up(const char *root, const char *rel, const char *file,
			char *where, size_t wherelen)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], *slash;
	uint64_t best = UINT64_MAX, v;

	if (snprintf(dir, sizeof(dir), "%s%s", root, rel) >= (int)sizeof(dir))
		return best;
	for (;;) {
		snprintf(path, sizeof(path), "%s/%s", dir, file);
		v = read_limit(path);
		if (v < best) {
			best = v;
			if (where)
				snprintf(where, wherelen, "%s", dir);
		}
		if (strlen(dir) <= strlen(root))
			break;
		slash = strrchr(dir, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	return best;
}

int dsfs_cgroup_mem_limit(uint64_t *limit, char *where, size_t wherelen)
{
	char line[PATH_MAX + 64], *rel;
	FILE *f = fopen("/proc/self/cgroup", "re");
	uint64_t v1 = UINT64_MAX, v2 = UINT64_MAX;
	char w1[PATH_MAX] = "", w2[PATH_MAX] = "";

	*limit = UINT64_MAX;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		rel = strchr(line, ':');
		rel = rel ? strchr(rel + 1, ':') : NULL;
		if (!rel)
			continue;
		*rel++ = '\0';
		if (strstr(line, ":memory") || strstr(line, ",memory"))
			v1 = walk_up(V1_ROOT, strcmp(rel, "/") ? rel : "",
				     "memory.limit_in_bytes", w1, sizeof(w1));
		else if (!strcmp(line, "0:"))
			v2 = walk_up(V2_ROOT, strcmp(rel, "/") ? rel : "",
				     "memory.max", w2, sizeof(w2));
	}
	fclose(f);
	/* v1 reports "no limit" as a huge page-rounded number. */
	if (v1 >= (1ULL << 62))
		v1 = UINT64_MAX;
	*limit = v1 < v2 ? v1 : v2;
	if (where && wherelen)
		snprintf(where, wherelen, "%s", v1 < v2 ? w1 : w2);
	return 0;
}
