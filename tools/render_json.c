// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dsfs-stats --json: the snapshot as one JSON document.  Fields sharing a
 * dotted prefix form one object; their values are the daemon's JSON tokens
 * as they are.  Single-threaded.
 */
#include "config.h"

#include <string.h>

#include "dsfs-stats.h"

/* Length of the dotted prefix of key that names its parent object. */
static size_t parent_len(const char *key)
{
	const char *dot = strrchr(key, '.');

	return dot ? (size_t)(dot - key) : 0;
}

/* Fields of one object are contiguous in the snapshot (the daemon emits
 * them so); one level of nesting is all dsfs uses. */
void dsfs_render_json(const struct dsfs_snap *s)
{
	const char *open = NULL;
	size_t open_len = 0;
	bool first = true, first_in = true;
	unsigned i;

	printf("{");
	for (i = 0; i < s->n; i++) {
		const char *k = s->f[i].key;
		size_t pl = parent_len(k);

		if (open && (pl != open_len || strncmp(k, open, pl))) {
			printf("\n  }");
			open = NULL;
		}
		if (pl && !open) {
			printf("%s\n  \"%.*s\": {", first ? "" : ",", (int)pl,
			       k);
			open = k;
			open_len = pl;
			first = false;
			first_in = true;
		}
		if (open) {
			printf("%s\n    \"%s\": %s", first_in ? "" : ",",
			       k + pl + 1, s->f[i].val);
			first_in = false;
		} else {
			printf("%s\n  \"%s\": %s", first ? "" : ",", k,
			       s->f[i].val);
			first = false;
		}
	}
	printf("%s\n}\n", open ? "\n  }" : "");
}
