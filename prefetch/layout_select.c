// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A layout made of some samples of another, in a given order: the part of
 * a data set that random_split() gives a loader (split.h), whose index i
 * is the data set's sample idx[i].  Single-threaded: the caller's, on a
 * built layout it only reads.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "layout_int.h"

/* Sample i of l appended to out, with its alias, if it has one, kept in
 * the scratch arena (out->alias_offs: offset + 1). */
static int copy_sample(struct dsfs_layout *out, const struct dsfs_layout *l,
		       uint64_t i, struct dsfs_strbuf *aliases)
{
	const char *p = dsfs_layout_path(l, i), *a = dsfs_layout_alias(l, i);
	uint64_t j = out->count;
	uint32_t off;
	int err = dsfs_layout_add(out, NULL, 0, p, strlen(p), l->sizes[i]);

	if (err || !a)
		return err;
	err = dsfs_strbuf_add(aliases, a, strlen(a), &off);
	if (err)
		return err;
	out->alias_offs[j] = off + 1;
	out->info.aliases++;
	return 0;
}

int dsfs_layout_select(const struct dsfs_layout *l, const uint32_t *idx,
		       uint64_t count, struct dsfs_layout **out)
{
	struct dsfs_layout *s = calloc(1, sizeof(*s));
	struct dsfs_strbuf aliases = { 0 };
	uint64_t i, shared = 0;
	int err = 0;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->kind = l->kind;
	s->info = l->info;
	s->info.duplicates = s->info.aliases = 0;
	if (l->alias_offs && !(s->alias_offs = calloc(count ? count : 1,
						      sizeof(*s->alias_offs))))
		err = -ENOMEM;
	for (i = 0; !err && i < count; i++)
		err = idx[i] < l->count ? copy_sample(s, l, idx[i], &aliases) :
					  -EINVAL;
	if (!err)
		err = dsfs_layout_finish(s);
	if (!err && s->info.aliases) {
		s->alias_arena = aliases.p;
		s->alias_len = aliases.len;
		aliases.p = NULL;
		err = dsfs_layout_table(s, dsfs_layout_alias, s->info.aliases,
					&s->alias_slots, &s->alias_nslots,
					&shared);
	}
	free(aliases.p);
	if (err) {
		dsfs_layout_free(s);
		return err;
	}
	*out = s;
	return 0;
}
