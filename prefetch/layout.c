// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Layout storage, lookup and Python's name order (see layout.h); the
 * builders live in layout_walk.c and layout_list.c.
 *
 * Storage: one arena of "path\0" strings, a 32-bit arena offset and a 64-bit
 * size word (top bit: prefetchable) per sample, and an open-addressing table
 * of 32-bit sample numbers keyed by XXH3 of the path, sized to a power of two
 * at least twice the sample count (linear probing, ~1.5 probes per hit).
 * Threads: a layout is written only while it is built, by one thread; after
 * that it is read-only and needs no lock.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "beneath.h"
#include "layout_int.h"

static const char *const kind_names[] = {
	[DSFS_LAYOUT_IMAGEFOLDER] = "imagefolder",
	[DSFS_LAYOUT_SORTED] = "sorted",
	[DSFS_LAYOUT_LIST] = "list",
	[DSFS_LAYOUT_WALK] = "walk",
};

const char *dsfs_layout_kind_name(enum dsfs_layout_kind kind)
{
	if ((unsigned)kind >= sizeof(kind_names) / sizeof(kind_names[0]))
		return NULL;
	return kind_names[kind];
}

int dsfs_layout_kind_parse(const char *name, enum dsfs_layout_kind *kind)
{
	unsigned i;

	for (i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++) {
		if (name && strcmp(name, kind_names[i]) == 0) {
			*kind = (enum dsfs_layout_kind)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* ---- Python's str order of fsdecoded names ---- */

/*
 * Decodes one code point at *p the way CPython's strict UTF-8 decoder with
 * surrogateescape does: shortest forms only, no UTF-16 surrogates, nothing
 * above U+10FFFF; a byte that does not start a valid sequence becomes
 * U+DC00 + byte and decoding resumes at the next byte (CPython escapes each
 * byte of its maximal invalid subpart, which is the same thing).
 */
static uint32_t decode_cp(const unsigned char **pp)
{
	const unsigned char *p = *pp;
	unsigned char c = p[0], lo = 0x80, hi = 0xBF;
	uint32_t cp;
	int n, i;

	if (c < 0x80) {
		*pp = p + 1;
		return c;
	}
	if (c >= 0xC2 && c <= 0xDF) {
		n = 1, cp = c & 0x1F;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 2, cp = c & 0x0F;
		lo = c == 0xE0 ? 0xA0 : 0x80;
		hi = c == 0xED ? 0x9F : 0xBF;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 3, cp = c & 0x07;
		lo = c == 0xF0 ? 0x90 : 0x80;
		hi = c == 0xF4 ? 0x8F : 0xBF;
	} else {
		goto escape;
	}
	for (i = 1; i <= n; i++) {
		if (p[i] < lo || p[i] > hi)
			goto escape; /* also stops at the NUL */
		cp = cp << 6 | (p[i] & 0x3F);
		lo = 0x80, hi = 0xBF;
	}
	*pp = p + n + 1;
	return cp;
escape:
	*pp = p + 1;
	return 0xDC00 + c;
}

int dsfs_layout_strcmp(const char *a, const char *b)
{
	const unsigned char *x = (const unsigned char *)a;
	const unsigned char *y = (const unsigned char *)b;
	size_t i = 0, j;

	while (x[i] == y[i] && x[i])
		i++;
	if (x[i] == y[i])
		return 0;
	/*
	 * Bytes before i are equal.  An ASCII byte (or the start) is always a
	 * code point boundary, since no sequence can continue through it, so
	 * decoding both strings from the last one before i gives equal code
	 * points up to the first difference.
	 */
	if (x[i] < 0x80 && y[i] < 0x80)
		return (int)x[i] - (int)y[i];
	j = i;
	while (j > 0 && x[j - 1] >= 0x80)
		j--;
	x += j, y += j;
	for (;;) {
		uint32_t cx, cy;

		if (!*x || !*y)
			return (int)(*x != 0) - (int)(*y != 0);
		cx = decode_cp(&x);
		cy = decode_cp(&y);
		if (cx != cy)
			return cx < cy ? -1 : 1;
	}
}

/* ---- building ---- */

int dsfs_layout_grow(void *arr, size_t *cap, size_t need, size_t elem)
{
	void **pa = arr;
	size_t n = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*pa, n * elem);
	if (!p)
		return -ENOMEM;
	*pa = p;
	*cap = n;
	return 0;
}

int dsfs_strbuf_add(struct dsfs_strbuf *b, const char *s, size_t len,
		    uint32_t *off)
{
	int err;

	if (b->len + len + 1 > DSFS_LAYOUT_MAX_ARENA)
		return -EFBIG;
	err = dsfs_layout_grow(&b->p, &b->cap, b->len + len + 1, 1);
	if (err)
		return err;
	memcpy(b->p + b->len, s, len);
	b->p[b->len + len] = '\0';
	*off = (uint32_t)b->len;
	b->len += len + 1;
	return 0;
}

static int grow_samples(struct dsfs_layout *l)
{
	size_t n = l->cap ? l->cap * 2 : 1024;
	void *p;

	p = realloc(l->offs, n * sizeof(*l->offs));
	if (!p)
		return -ENOMEM;
	l->offs = p;
	p = realloc(l->sizes, n * sizeof(*l->sizes));
	if (!p)
		return -ENOMEM;
	l->sizes = p;
	l->cap = n;
	return 0;
}

int dsfs_layout_add(struct dsfs_layout *l, const char *dir, size_t dlen,
		    const char *name, size_t nlen, uint64_t sizeflag)
{
	size_t len = (dlen ? dlen + 1 : 0) + nlen + 1;
	char *p;
	int err;

	if (l->count >= DSFS_LAYOUT_MAX_COUNT ||
	    l->arena_len + len > DSFS_LAYOUT_MAX_ARENA)
		return -EFBIG;
	err = dsfs_layout_grow(&l->arena, &l->arena_cap, l->arena_len + len, 1);
	if (!err && l->count == l->cap)
		err = grow_samples(l);
	if (err)
		return err;
	p = l->arena + l->arena_len;
	if (dlen) {
		memcpy(p, dir, dlen);
		p[dlen] = '/';
		p += dlen + 1;
	}
	memcpy(p, name, nlen);
	p[nlen] = '\0';
	l->offs[l->count] = (uint32_t)l->arena_len;
	l->sizes[l->count++] = sizeflag;
	l->arena_len += len;
	return 0;
}

static int cmp_sample(const void *pa, const void *pb, void *arg)
{
	const struct dsfs_layout *l = arg;

	return dsfs_layout_strcmp(l->arena + l->offs[*(const uint32_t *)pa],
				  l->arena + l->offs[*(const uint32_t *)pb]);
}

int dsfs_layout_sort(struct dsfs_layout *l)
{
	uint32_t *perm = malloc((l->count ? l->count : 1) * sizeof(*perm));
	uint32_t *offs = malloc((l->count ? l->count : 1) * sizeof(*offs));
	uint64_t i;

	if (!perm || !offs) {
		free(perm);
		free(offs);
		return -ENOMEM;
	}
	for (i = 0; i < l->count; i++)
		perm[i] = (uint32_t)i;
	if (l->count > 1)
		qsort_r(perm, l->count, sizeof(*perm), cmp_sample, l);
	/* Apply the permutation: offsets through a copy, sizes in cycles. */
	for (i = 0; i < l->count; i++)
		offs[i] = l->offs[perm[i]];
	free(l->offs);
	l->offs = offs;
	for (i = 0; i < l->count; i++) {
		uint64_t j = i, v = l->sizes[i];

		if (perm[i] == UINT32_MAX)
			continue;
		for (;;) {
			uint64_t k = perm[j];

			perm[j] = UINT32_MAX;
			if (k == i) {
				l->sizes[j] = v;
				break;
			}
			l->sizes[j] = l->sizes[k];
			j = k;
		}
	}
	free(perm);
	return 0;
}

uint64_t dsfs_layout_hash(const char *path)
{
	return XXH3_64bits(path, strlen(path));
}

int dsfs_layout_finish(struct dsfs_layout *l)
{
	void *p;

	/* Trim growth slack: realloc to a smaller size does not fail in
	   practice; if it does, keeping the larger block is fine. */
	if (l->count && (p = realloc(l->offs, l->count * sizeof(*l->offs))))
		l->offs = p;
	if (l->count && (p = realloc(l->sizes, l->count * sizeof(*l->sizes))))
		l->sizes = p;
	if (l->arena_len && (p = realloc(l->arena, l->arena_len)))
		l->arena = p;
	l->cap = l->count;
	l->arena_cap = l->arena_len;
	return dsfs_layout_table(l, dsfs_layout_path, l->count, &l->slots,
				 &l->nslots, &l->info.duplicates);
}

int dsfs_layout_table(const struct dsfs_layout *l,
		      const char *(*key)(const struct dsfs_layout *, uint64_t),
		      uint64_t keys, uint32_t **slots, uint64_t *nslots,
		      uint64_t *repeats)
{
	uint64_t n = 16, i, h, mask;
	uint32_t *t;

	while (n < 2 * keys)
		n *= 2;
	t = calloc(n, sizeof(*t));
	if (!t)
		return -ENOMEM;
	mask = n - 1;
	for (i = 0; i < l->count; i++) {
		const char *s = key(l, i);

		if (!s)
			continue;
		for (h = dsfs_layout_hash(s) & mask; t[h]; h = (h + 1) & mask) {
			if (!strcmp(key(l, t[h] - 1), s))
				break; /* a repeat keeps the first sample */
		}
		if (t[h])
			(*repeats)++;
		else
			t[h] = (uint32_t)(i + 1);
	}
	*slots = t;
	*nslots = n;
	return 0;
}

/* ---- reading ---- */

int dsfs_layout_probe(const struct dsfs_layout *l, const uint32_t *slots,
		      uint64_t nslots,
		      const char *(*key)(const struct dsfs_layout *, uint64_t),
		      const char *path, uint64_t *index)
{
	uint64_t mask = nslots - 1, h;

	if (!nslots)
		return -ENOENT;
	for (h = dsfs_layout_hash(path) & mask; slots[h]; h = (h + 1) & mask) {
		if (!strcmp(key(l, slots[h] - 1), path)) {
			*index = slots[h] - 1;
			return 0;
		}
	}
	return -ENOENT;
}

int dsfs_layout_lookup(const struct dsfs_layout *l, const char *path,
		       uint64_t *index)
{
	return dsfs_layout_probe(l, l->slots, l->nslots, dsfs_layout_path, path,
				 index);
}

int dsfs_layout_lookup_in(const struct dsfs_layout *l, const char *dir,
			  const char *path, uint64_t *index)
{
	size_t n = strlen(dir);

	if (strcmp(dir, ".")) {
		if (strncmp(path, dir, n) || path[n] != '/')
			return -ENOENT;
		path += n + 1;
	}
	return dsfs_layout_lookup(l, path, index);
}

uint64_t dsfs_layout_count(const struct dsfs_layout *l)
{
	return l->count;
}

enum dsfs_layout_kind dsfs_layout_kind(const struct dsfs_layout *l)
{
	return l->kind;
}

const struct dsfs_layout_info *dsfs_layout_info(const struct dsfs_layout *l)
{
	return &l->info;
}

size_t dsfs_layout_memory(const struct dsfs_layout *l)
{
	return sizeof(*l) + l->arena_cap + l->cap * (sizeof(*l->offs) +
	       sizeof(*l->sizes)) + l->nslots * sizeof(*l->slots) +
	       l->alias_len + l->alias_nslots * sizeof(*l->alias_slots) +
	       (l->alias_offs ? l->count * sizeof(*l->alias_offs) : 0) +
	       (l->weights ? l->count * sizeof(*l->weights) : 0);
}

const char *dsfs_layout_path(const struct dsfs_layout *l, uint64_t i)
{
	return l->arena + l->offs[i];
}

uint64_t dsfs_layout_count_below(const struct dsfs_layout *l,
				 const char *prefix, size_t len)
{
	uint64_t i, n = 0;

	for (i = 0; i < l->count; i++)
		n += !strncmp(dsfs_layout_path(l, i), prefix, len);
	return n;
}

/* The size word of sample i: written once more, from PENDING, by
 * dsfs_layout_settle(), hence the atomic load. */
static uint64_t size_word(const struct dsfs_layout *l, uint64_t i)
{
	return __atomic_load_n(&l->sizes[i], __ATOMIC_RELAXED);
}

uint64_t dsfs_layout_size(const struct dsfs_layout *l, uint64_t i)
{
	uint64_t w = size_word(l, i);

	return w == DSFS_LAYOUT_PENDING ? 0 : w & ~DSFS_LAYOUT_PREFETCH;
}

bool dsfs_layout_prefetchable(const struct dsfs_layout *l, uint64_t i)
{
	return size_word(l, i) & DSFS_LAYOUT_PREFETCH;
}

bool dsfs_layout_pending(const struct dsfs_layout *l, uint64_t i)
{
	return size_word(l, i) == DSFS_LAYOUT_PENDING;
}

void dsfs_layout_settle(struct dsfs_layout *l, uint64_t i,
			const struct stat *st)
{
	uint64_t pending = DSFS_LAYOUT_PENDING;
	uint64_t w = st && S_ISREG(st->st_mode) ?
			     ((uint64_t)st->st_size | DSFS_LAYOUT_PREFETCH) : 0;

	__atomic_compare_exchange_n(&l->sizes[i], &pending, w, false,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

void dsfs_layout_free(struct dsfs_layout *l)
{
	if (!l)
		return;
	free(l->arena);
	free(l->offs);
	free(l->sizes);
	free(l->slots);
	free(l->alias_arena);
	free(l->alias_offs);
	free(l->alias_slots);
	free(l->weights);
	free(l);
}

void dsfs_layout_set_weights(struct dsfs_layout *l, double *weights)
{
	free(l->weights);
	l->weights = weights;
}

const double *dsfs_layout_weights(const struct dsfs_layout *l)
{
	return l->weights;
}

/* ---- helpers for the builders ---- */

void dsfs_layout_why(struct dsfs_layout_ctx *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->whylen)
		return;
	va_start(ap, fmt);
	vsnprintf(c->why, c->whylen, fmt, ap);
	va_end(ap);
}

void dsfs_layout_quote(char *dst, size_t n, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, o = 0;

	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];
		bool plain = ch >= 0x20 && ch < 0x7F && ch != '\\';

		if (o + (plain ? 1 : 4) + 4 > n) {
			memcpy(dst + o, "...", 4);
			return;
		}
		if (plain) {
			dst[o++] = (char)ch;
			continue;
		}
		dst[o++] = '\\';
		dst[o++] = 'x';
		dst[o++] = hex[ch >> 4];
		dst[o++] = hex[ch & 15];
	}
	dst[o] = '\0';
}

int dsfs_layout_openat(int root_fd, const char *dir, const char *rel,
		       size_t len, int flags)
{
	char path[PATH_MAX];

	if (!dir || !*dir)
		dir = ".";
	if ((size_t)snprintf(path, sizeof(path), "%s/%.*s", dir, (int)len,
			     rel) >= sizeof(path))
		return -ENAMETOOLONG;
	return dsfs_open_inside(root_fd, path, flags);
}

int dsfs_layout_open_in_root(struct dsfs_layout_ctx *c, const char *rel,
			     int flags)
{
	return dsfs_layout_openat(c->root_fd, c->ds_rel, rel, strlen(rel),
				  flags);
}

int dsfs_layout_resolve(struct dsfs_layout_ctx *c, const char *rel,
			struct stat *st, bool *inside)
{
	int fd = dsfs_layout_open_in_root(c, rel, O_PATH);

	if (fd >= 0) {
		int err = fstat(fd, st) ? -errno : 0;

		close(fd);
		*inside = true;
		return err;
	}
	/* Not provably inside: does it exist at all (following links)? */
	if (fstatat(c->ds_fd, rel, st, 0))
		return -errno;
	*inside = false;
	return 0;
}

uint64_t dsfs_layout_sizeflag(struct dsfs_layout *l, const struct stat *st,
			      bool inside)
{
	if (!inside) {
		l->info.outside++;
		return 0;
	}
	if (!S_ISREG(st->st_mode)) {
		l->info.not_regular++;
		return 0;
	}
	return (uint64_t)st->st_size | DSFS_LAYOUT_PREFETCH;
}

static int open_dataset(struct dsfs_layout_ctx *c)
{
	char q[256];
	int fd;

	c->ds_len = strlen(c->ds_rel);
	fd = dsfs_layout_open_in_root(c, ".", O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		c->ds_fd = fd;
		return 0;
	}
	dsfs_layout_quote(q, sizeof(q), c->ds_rel, c->ds_len);
	if (fd == -EXDEV)
		dsfs_layout_why(c, "dataset '%s' leaves the source directory",
				q);
	else
		dsfs_layout_why(c, "dataset '%s': %s", q, strerror(-fd));
	return fd;
}

/* torchvision's IMG_EXTENSIONS, as ImageFolder passes them. */
#define IMAGE_EXTENSIONS ".jpg:.jpeg:.png:.ppm:.bmp:.pgm:.tif:.tiff:.webp"
#define MAX_EXTENSIONS 64
#define MAX_EXTENSIONS_LEN 1023

/* The two options that list suffixes: extensions= (imagefolder, compared
 * lower-cased: capitals would match nothing) and suffix= (as given). */
struct suffix_opt {
	const char *name, *one, *plural, *example;
	bool lower;
};

static const struct suffix_opt extensions_opt = {
	"extensions", "extension", "extensions", ".npy:.wav", true
};
static const struct suffix_opt suffix_opt = {
	"suffix", "suffix", "suffixes", ".jpg:.JPEG", false
};

/* One suffix of option o, ext[0..len). */
static int suffix_check(const struct suffix_opt *o, const char *ext,
			size_t len, char *why, size_t whylen)
{
	char q[64];
	size_t i;

	dsfs_layout_quote(q, sizeof(q), ext, len);
	for (i = 0; i < len; i++) {
		if (o->lower && ext[i] >= 'A' && ext[i] <= 'Z') {
			snprintf(why, whylen, "extensions=: '%s' has capitals: torchvision compares lower-cased file names with the extensions as given, so it would match no file; give it in lower case, which matches every case",
				 q);
			return -EINVAL;
		}
		if (ext[i] < 0x20 || ext[i] > 0x7e || ext[i] == '/') {
			snprintf(why, whylen, "%s=: '%s': give printable ASCII without '/', and separate %s with ':'",
				 o->name, q, o->plural);
			return -EINVAL;
		}
	}
	if (!len)
		snprintf(why, whylen, "%s=: an empty %s; give suffixes separated by ':', such as %s",
			 o->name, o->one, o->example);
	return len ? 0 : -EINVAL;
}

/* Option o's list of suffixes, each checked. */
static int suffixes_check(const struct suffix_opt *o, const char *list,
			  char *why, size_t whylen)
{
	const char *p = list, *end;
	unsigned n = 0;
	int err;

	if (strlen(list) > MAX_EXTENSIONS_LEN) {
		snprintf(why, whylen, "%s=: longer than %d bytes", o->name,
			 MAX_EXTENSIONS_LEN);
		return -EINVAL;
	}
	for (;; p = end + 1) {
		end = strchrnul(p, ':');
		err = suffix_check(o, p, (size_t)(end - p), why, whylen);
		if (err)
			return err;
		if (++n > MAX_EXTENSIONS) {
			snprintf(why, whylen, "%s=: more than %d %s", o->name,
				 MAX_EXTENSIONS, o->plural);
			return -EINVAL;
		}
		if (!*end)
			return 0;
	}
}

int dsfs_layout_extensions_check(const char *extensions, char *why,
				 size_t whylen)
{
	return suffixes_check(&extensions_opt, extensions, why, whylen);
}

int dsfs_layout_suffix_check(const char *suffix, char *why, size_t whylen)
{
	return suffixes_check(&suffix_opt, suffix, why, whylen);
}

/* The names options that apply to kind, checked.  0 or -EINVAL. */
static int names_check(struct dsfs_layout_ctx *c, enum dsfs_layout_kind kind,
		       const struct dsfs_layout_names *n)
{
	bool tree = kind == DSFS_LAYOUT_SORTED || kind == DSFS_LAYOUT_WALK;

	if (n->extensions && kind != DSFS_LAYOUT_IMAGEFOLDER) {
		dsfs_layout_why(c, "extensions= applies only to layout=imagefolder (a DatasetFolder given extensions=)%s",
				tree ? "; with layout=sorted or walk, give suffix=" : "");
		return -EINVAL;
	}
	if ((n->suffix || n->skip_hidden) && !tree) {
		dsfs_layout_why(c, "%s applies only to layout=sorted and layout=walk%s",
				n->suffix ? "suffix=" : "hidden=skip",
				kind == DSFS_LAYOUT_IMAGEFOLDER ?
				" (an ImageFolder keeps hidden files and matches extensions= in any case)" : "");
		return -EINVAL;
	}
	if (n->extensions)
		return dsfs_layout_extensions_check(n->extensions, c->why,
						    c->whylen);
	if (n->suffix)
		return dsfs_layout_suffix_check(n->suffix, c->why, c->whylen);
	return 0;
}

static int build(int root_fd, const char *dataset_rel,
		 enum dsfs_layout_kind kind, const char *list_file,
		 const struct dsfs_layout_names *names, bool sizes_later,
		 struct dsfs_layout **out, char *why, size_t whylen)
{
	static const struct dsfs_layout_names none;
	const struct dsfs_layout_names *n = names ? names : &none;
	struct dsfs_layout_ctx c = {
		.root_fd = root_fd, .ds_fd = -1, .why = why, .whylen = whylen,
		.ds_rel = dataset_rel && *dataset_rel ? dataset_rel : ".",
		.sizes_later = sizes_later,
		.extensions = n->extensions ? n->extensions : IMAGE_EXTENSIONS,
		.suffix = n->suffix,
		.skip_hidden = n->skip_hidden,
	};
	int err;

	*out = NULL;
	if (whylen)
		why[0] = '\0';
	if (!dsfs_layout_kind_name(kind)) {
		dsfs_layout_why(&c, "unknown layout kind %d", (int)kind);
		return -EINVAL;
	}
	err = names_check(&c, kind, n);
	if (err)
		return err;
	c.l = calloc(1, sizeof(*c.l));
	if (!c.l)
		return -ENOMEM;
	c.l->kind = kind;
	err = open_dataset(&c);
	if (!err)
		err = kind == DSFS_LAYOUT_LIST ?
			      dsfs_layout_build_list(&c, list_file) :
			      dsfs_layout_build_walk(&c, kind);
	if (!err)
		err = dsfs_layout_finish(c.l);
	if (!err)
		err = dsfs_layout_find_aliases(&c);
	if (c.ds_fd >= 0)
		close(c.ds_fd);
	if (err) {
		if (whylen && !why[0])
			dsfs_layout_why(&c, "layout=%s: %s",
					dsfs_layout_kind_name(kind),
					err == -EFBIG ? "more than 2^32 - 2 samples or 4 GiB of paths"
						      : strerror(-err));
		dsfs_layout_free(c.l);
		return err;
	}
	*out = c.l;
	return 0;
}

int dsfs_layout_build(int root_fd, const char *dataset_rel,
		      enum dsfs_layout_kind kind, const char *list_file,
		      const struct dsfs_layout_names *names,
		      struct dsfs_layout **out, char *why, size_t whylen)
{
	return build(root_fd, dataset_rel, kind, list_file, names, false, out,
		     why, whylen);
}

int dsfs_layout_build_quick(int root_fd, const char *dataset_rel,
			    enum dsfs_layout_kind kind, const char *list_file,
			    const struct dsfs_layout_names *names,
			    struct dsfs_layout **out, char *why,
			    size_t whylen)
{
	return build(root_fd, dataset_rel, kind, list_file, names, true, out,
		     why, whylen);
}
