/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Internals shared by the layout builders (layout.c: storage, lookup, name
 * order; layout_walk.c: imagefolder and sorted; layout_list.c: list).  Only
 * the building thread touches a layout before dsfs_layout_build() returns it.
 */
#ifndef DSFS_LAYOUT_INT_H
#define DSFS_LAYOUT_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "layout.h"

/* Bit of sizes[i] saying "prefetchable"; sizes are below 2^63. */
#define DSFS_LAYOUT_PREFETCH (UINT64_C(1) << 63)
/* Size word of a sample not stat'ed yet (see dsfs_layout_stat_pending). */
#define DSFS_LAYOUT_PENDING (UINT64_C(1) << 62)
/* Caps that keep indices and arena offsets in 32 bits. */
#define DSFS_LAYOUT_MAX_COUNT (UINT32_MAX - 1)
#define DSFS_LAYOUT_MAX_ARENA ((uint64_t)UINT32_MAX)

struct dsfs_layout {
	enum dsfs_layout_kind kind;
	uint64_t count;
	size_t cap;		/* entries allocated in offs and sizes */
	char *arena;		/* "path\0" of each sample */
	size_t arena_len, arena_cap;
	uint32_t *offs;		/* sample -> arena offset of its path */
	uint64_t *sizes;	/* sample -> st_size | DSFS_LAYOUT_PREFETCH */
	uint32_t *slots;	/* open addressing: sample + 1, 0 = empty */
	uint64_t nslots;	/* power of two >= 2 * count */
	/* layout_alias.c: resolved paths of the samples reached through a
	 * symlink; all NULL when there are none. */
	char *alias_arena;	/* "path\0", relative to SOURCE */
	size_t alias_len;	/* bytes in alias_arena */
	uint32_t *alias_offs;	/* sample -> arena offset + 1, 0: none */
	uint32_t *alias_slots;	/* open addressing: sample + 1, 0 = empty */
	uint64_t alias_nslots;	/* power of two >= 2 * info.aliases */
	struct dsfs_layout_info info;
	double *weights;	/* the plan's weights (weights.h), or NULL */
};

/* What every builder needs: the two directories and where to complain. */
struct dsfs_layout_ctx {
	struct dsfs_layout *l;
	int root_fd;		/* SOURCE, borrowed */
	int ds_fd;		/* DIR, resolved beneath root_fd, owned */
	const char *ds_rel;	/* DIR relative to root_fd, never empty */
	size_t ds_len;
	bool sizes_later;	/* walks: no stat pass (dsfs_layout_settle) */
	const char *extensions;	/* imagefolder's suffixes, ':' between */
	const char *suffix;	/* sorted, walk: NULL, or names kept */
	bool skip_hidden;	/* sorted, walk: names with a leading '.' */
	char *why;
	size_t whylen;
};

/* Growable byte buffer with 32-bit offsets (builders' scratch). */
struct dsfs_strbuf {
	char *p;
	size_t len, cap;
};

/*
 * Appends sample dir + "/" + name (dir may be empty: then just name) with
 * its size word.  Amortised O(length).  0, -ENOMEM or -EFBIG (caps).
 */
int dsfs_layout_add(struct dsfs_layout *l, const char *dir, size_t dlen,
		    const char *name, size_t nlen, uint64_t sizeflag);
/* Sorts the samples into dsfs_layout_strcmp() order.  O(n log n). */
int dsfs_layout_sort(struct dsfs_layout *l);
/* Trims the arrays and builds the lookup table.  O(n).  0 or -ENOMEM. */
int dsfs_layout_finish(struct dsfs_layout *l);

/* Writes a printf-style reason into ctx->why. */
void dsfs_layout_why(struct dsfs_layout_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Copies s into dst (size n >= 8) with non-printable bytes as \xHH, cut
   with "..." when too long: user-supplied names in messages stay one line. */
void dsfs_layout_quote(char *dst, size_t n, const char *s, size_t len);

/*
 * Stats DIR/rel (rel relative to DIR) the way the loader's open would reach
 * it: 0 with *st and *inside = true when every symlink on the way stays in
 * SOURCE (openat2 RESOLVE_BENEATH from the root); else, when plain fstatat()
 * following links from DIR succeeds, 0 with *st and *inside = false; else
 * -errno.  One or two path walks.
 */
int dsfs_layout_resolve(struct dsfs_layout_ctx *c, const char *rel,
			struct stat *st, bool *inside);
/* openat2(root_fd, DIR/rel, flags, RESOLVE_BENEATH | NO_MAGICLINKS). */
int dsfs_layout_open_in_root(struct dsfs_layout_ctx *c, const char *rel,
			     int flags);
/* The same for dir/rel[0..len) (dir NULL or "": "."), or -errno. */
int dsfs_layout_openat(int root_fd, const char *dir, const char *rel,
		       size_t len, int flags);
/* Size word of a resolved sample; counts it in info.  O(1). */
uint64_t dsfs_layout_sizeflag(struct dsfs_layout *l, const struct stat *st,
			      bool inside);

/* 0 and *off, or -ENOMEM / -EFBIG past 4 GiB.  Stores s[0..len) + NUL. */
int dsfs_strbuf_add(struct dsfs_strbuf *b, const char *s, size_t len,
		    uint32_t *off);
/* Grows *arr (elements of size elem) to hold at least need.  0 or -ENOMEM. */
int dsfs_layout_grow(void *arr, size_t *cap, size_t need, size_t elem);

/*
 * Sets the size word of every DSFS_LAYOUT_PENDING sample that is a regular
 * file reached inside SOURCE, leaving the others (symlinks, missing files,
 * directories, ...) PENDING for the caller to settle.  Parallel (a
 * dsfs_layout_scan): up to STAT_THREADS threads for big layouts.
 */
void dsfs_layout_stat_pending(struct dsfs_layout_ctx *c);

/* The hash of a path for the lookup tables. */
uint64_t dsfs_layout_hash(const char *path);
/*
 * An open-addressing table of sample + 1 keyed by dsfs_layout_hash() of
 * key(l, sample), for the `keys` samples whose key is not NULL (a key
 * given again keeps its first sample and counts in *repeats): *slots
 * (calloc'd) and *nslots, a power of two >= 2 * keys.  0 or -ENOMEM.  O(n).
 */
int dsfs_layout_table(const struct dsfs_layout *l,
		      const char *(*key)(const struct dsfs_layout *, uint64_t),
		      uint64_t keys, uint32_t **slots, uint64_t *nslots,
		      uint64_t *repeats);
/* The sample whose key(l, sample) is path in such a table: 0 and *index,
 * or -ENOENT. */
int dsfs_layout_probe(const struct dsfs_layout *l, const uint32_t *slots,
		      uint64_t nslots,
		      const char *(*key)(const struct dsfs_layout *, uint64_t),
		      const char *path, uint64_t *index);
/*
 * Finds the samples reached through a symlink and keeps their resolved
 * paths (dsfs_layout_alias()).  After dsfs_layout_finish().  Costs one
 * open and readlink per directory when DIR or a listed path may involve a
 * link, and one lstat per sample when some sample itself may be a link
 * (info.links); nothing for a walk that followed no link.  0 or -ENOMEM.
 */
int dsfs_layout_find_aliases(struct dsfs_layout_ctx *c);

/* imagefolder, sorted or walk (layout_walk.c); list (layout_list.c). */
int dsfs_layout_build_walk(struct dsfs_layout_ctx *c,
			   enum dsfs_layout_kind kind);
int dsfs_layout_build_list(struct dsfs_layout_ctx *c, const char *list_file);

#endif
