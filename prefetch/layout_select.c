// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Layouts made of the samples of others: some samples of one, in a given
 * order (the part of a data set that random_split() gives a loader,
 * split.h, whose index i is the data set's sample idx[i]); and several
 * one after another (torch's ConcatDataset).  Single-threaded: the
 * caller's, on built layouts it only reads.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "layout_int.h"

/* Sample i of l appended to out, its path below dir (NULL: as it is),
 * with its alias, if it has one, kept in the scratch arena
 * (out->alias_offs: offset + 1). */
static int copy_sample(struct dsfs_layout *out, const struct dsfs_layout *l,
		       uint64_t i, const char *dir,
		       struct dsfs_strbuf *aliases)
{
	const char *p = dsfs_layout_path(l, i), *a = dsfs_layout_alias(l, i);
	uint64_t j = out->count;
	uint32_t off;
	int err = dsfs_layout_add(out, dir, dir ? strlen(dir) : 0, p,
				  strlen(p), l->sizes[i]);

	if (err || !a)
		return err;
	err = dsfs_strbuf_add(aliases, a, strlen(a), &off);
	if (err)
		return err;
	out->alias_offs[j] = off + 1;
	out->info.aliases++;
	return 0;
}

/* The lookup tables of s, once its samples are in (aliases in the
 * scratch arena, which s takes over); s freed on error. */
static int finish(struct dsfs_layout *s, struct dsfs_strbuf *aliases,
		  int err, struct dsfs_layout **out)
{
	uint64_t shared = 0;

	if (!err)
		err = dsfs_layout_finish(s);
	if (!err && s->info.aliases) {
		s->alias_arena = aliases->p;
		s->alias_len = aliases->len;
		aliases->p = NULL;
		err = dsfs_layout_table(s, dsfs_layout_alias, s->info.aliases,
					&s->alias_slots, &s->alias_nslots,
					&shared);
	}
	free(aliases->p);
	if (err) {
		dsfs_layout_free(s);
		return err;
	}
	*out = s;
	return 0;
}

int dsfs_layout_select(const struct dsfs_layout *l, const uint32_t *idx,
		       uint64_t count, struct dsfs_layout **out)
{
	struct dsfs_layout *s = calloc(1, sizeof(*s));
	struct dsfs_strbuf aliases = { 0 };
	uint64_t i;
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
		err = idx[i] < l->count ?
			      copy_sample(s, l, idx[i], NULL, &aliases) :
			      -EINVAL;
	return finish(s, &aliases, err, out);
}

/* The counts of a listing added to those of another. */
static void info_add(struct dsfs_layout_info *to,
		     const struct dsfs_layout_info *from)
{
	to->dirs += from->dirs;
	to->loops += from->loops;
	to->unreadable += from->unreadable;
	to->outside += from->outside;
	to->not_regular += from->not_regular;
	to->empty_classes += from->empty_classes;
	to->links += from->links;
}

int dsfs_layout_concat(const struct dsfs_layout *const *parts,
		       const char *const *dirs, unsigned n,
		       struct dsfs_layout **out)
{
	struct dsfs_layout *s = calloc(1, sizeof(*s));
	struct dsfs_strbuf aliases = { 0 };
	uint64_t count = 0, i;
	bool any_alias = false;
	unsigned k;
	int err = 0;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->kind = n ? parts[0]->kind : DSFS_LAYOUT_LIST;
	for (k = 0; k < n; k++) {
		count += parts[k]->count;
		any_alias |= parts[k]->alias_offs != NULL;
		info_add(&s->info, &parts[k]->info);
	}
	if (count > DSFS_LAYOUT_MAX_COUNT)
		err = -EFBIG;
	else if (any_alias && !(s->alias_offs = calloc(count ? count : 1,
						       sizeof(*s->alias_offs))))
		err = -ENOMEM;
	for (k = 0; !err && k < n; k++) {
		const char *dir = strcmp(dirs[k], ".") ? dirs[k] : NULL;

		for (i = 0; !err && i < parts[k]->count; i++)
			err = copy_sample(s, parts[k], i, dir, &aliases);
	}
	return finish(s, &aliases, err, out);
}
