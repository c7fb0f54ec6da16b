// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Tree layouts (see layout.h): imagefolder, as torchvision's ImageFolder
 * orders samples; sorted, every regular file in Python sorted() order;
 * walk, the same files in os.walk() order.
 *
 * A walk lists each directory once through an fd (readdir, i.e. getdents64)
 * and classifies entries by d_type: it stats inline only symlinks (to tell
 * directories from files, and to resolve a sample from the SOURCE root with
 * RESOLVE_BENEATH) and DT_UNKNOWN entries; regular files are left
 * DSFS_LAYOUT_PENDING for the parallel stat pass (layout_stat.c), or, for
 * dsfs_layout_build_quick(), for the user to settle one by one.
 * Directories are opened by their path below DIR, as os.walk opens them by
 * path, so the kernel's symlink limits match Python's; each is tried beneath
 * the root first, which also tells whether it is inside SOURCE.  A
 * directory's (dev, ino) is compared with those of its ancestors only (the
 * current path), which is what stops symlink loops.
 * walk lists what os.walk(followlinks=False) lists as files: symlinks to
 * files too, resolved like imagefolder's; symlinked directories are not
 * entered.
 * imagefolder keeps, per class, every directory's path and its image names in
 * a scratch arena, then sorts directories by whole path and names within each
 * (sorted(os.walk()) order) and appends the samples; sorted and walk
 * append while walking (a directory's files, then its subdirectories, each
 * in listing order: os.walk's order), and sorted sorts all paths at the
 * end.  The scratch is reset per class.
 * Threads: the building thread only; no shared state.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "beneath.h"
#include "layout_int.h"

/* A directory of the class being walked and its image files. */
struct wdir {
	uint32_t path;		/* scratch offset of "class/sub/dir" */
	uint32_t len;
	uint32_t first, n;	/* its files: files[first .. first + n) */
};

struct wfile {
	uint64_t sizeflag;
	uint32_t name;		/* scratch offset */
	uint32_t len;
};

struct devino {
	dev_t dev;
	ino_t ino;
};

struct walk {
	struct dsfs_layout_ctx *c;
	bool images;		/* imagefolder; else sorted or walk */
	bool walk;		/* walk: os.walk's files, links too */
	char path[PATH_MAX];	/* directory being listed, relative to DIR */
	struct dsfs_strbuf names; /* scratch: dir paths, file and subdir names */
	struct wdir *dirs;
	size_t ndirs, dirs_cap;
	struct wfile *files;
	size_t nfiles, files_cap;
	uint32_t *pending;	/* scratch offsets of subdirectories to enter */
	size_t npending, pending_cap;
	struct devino *chain;	/* (dev, ino) of the current dir's ancestors */
	size_t chain_cap;
};

/* Mark of a directory whose listing failed: skipped whole, like os.walk. */
#define WALK_SKIP 1

/*
 * Whether name[0..len) ends in ext[0..elen), an ASCII suffix without
 * capitals, once lower-cased as Python lower-cases it (layout.h): ASCII
 * letters, and U+212A KELVIN SIGN (UTF-8 e2 84 aa, which CPython decodes
 * so wherever it stands: e2 continues no sequence) to "k"; no other
 * non-ASCII byte can be part of the match.  O(elen).
 */
static bool ends_in(const char *name, size_t len, const char *ext,
		    size_t elen)
{
	for (; elen; elen--) {
		unsigned char ch = len ? (unsigned char)name[len - 1] : 0;

		if (ch >= 0x80 && ext[elen - 1] == 'k' && len >= 3 &&
		    !memcmp(name + len - 3, "\xe2\x84\xaa", 3)) {
			len -= 3;
			continue;
		}
		if (!len || ch >= 0x80)
			return false;
		if (ch >= 'A' && ch <= 'Z')
			ch = (unsigned char)(ch + 32);
		if (ch != (unsigned char)ext[elen - 1])
			return false;
		len--;
	}
	return true;
}

/*
 * Whether name[0..len) ends in one of the ':'-separated suffixes of list:
 * lower-cased as ends_in() compares (imagefolder's extensions), or as
 * given (suffix=).  Both lists are checked by layout.c.
 */
static bool ends_in_one(const char *list, bool fold, const char *name,
			size_t len)
{
	const char *p = list, *end;
	size_t n;

	for (;; p = end + 1) {
		end = strchrnul(p, ':');
		n = (size_t)(end - p);
		if (fold ? ends_in(name, len, p, n) :
			   n <= len && !memcmp(name + len - n, p, n))
			return true;
		if (!*end)
			return false;
	}
}

static int add_pending(struct walk *w, const char *name, size_t nlen)
{
	uint32_t off;
	int err = dsfs_strbuf_add(&w->names, name, nlen, &off);

	if (!err)
		err = dsfs_layout_grow(&w->pending, &w->pending_cap,
				       w->npending + 1, sizeof(*w->pending));
	if (!err)
		w->pending[w->npending++] = off;
	return err;
}

/* Size word of an image that is not a plain regular file in an inside dir. */
static uint64_t link_sizeflag(struct walk *w, const char *name, size_t plen)
{
	struct dsfs_layout *l = w->c->l;
	char rel[PATH_MAX];
	struct stat st;
	bool inside;

	if ((size_t)snprintf(rel, sizeof(rel), "%.*s/%s", (int)plen, w->path,
			     name) >= sizeof(rel) ||
	    dsfs_layout_resolve(w->c, rel, &st, &inside)) {
		l->info.not_regular++; /* broken link: os.walk lists it */
		return 0;
	}
	return dsfs_layout_sizeflag(l, &st, inside);
}

/*
 * One entry as os.walk(followlinks=True) sees it: a directory (symlinks
 * followed; a failing stat means "not a directory") goes to pending; any
 * other entry with a sample's name (ends_in_one) becomes a file of the
 * current directory.
 */
static int image_entry(struct walk *w, int dfd, const struct dirent *de,
		       size_t plen, bool outside)
{
	struct dsfs_layout *l = w->c->l;
	size_t nlen = strlen(de->d_name);
	unsigned char type = de->d_type;
	struct stat st;
	bool have = false;
	uint64_t sf;
	uint32_t off;
	int err;

	if (type == DT_UNKNOWN &&
	    !fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
		type = IFTODT(st.st_mode);
		have = true;
	}
	if (type == DT_LNK)
		l->info.links++;
	if (type == DT_LNK && !fstatat(dfd, de->d_name, &st, 0) &&
	    S_ISDIR(st.st_mode))
		type = DT_DIR;
	if (type == DT_DIR)
		return add_pending(w, de->d_name, nlen);
	if (!ends_in_one(w->c->extensions, true, de->d_name, nlen))
		return 0;
	if (outside) {
		l->info.outside++;
		sf = 0;
	} else if (type == DT_REG) {
		sf = have ? dsfs_layout_sizeflag(l, &st, true) :
			    DSFS_LAYOUT_PENDING;
	} else if (type == DT_LNK) {
		sf = link_sizeflag(w, de->d_name, plen);
	} else {
		sf = 0, l->info.not_regular++;
	}
	if (w->nfiles >= UINT32_MAX)
		return -EFBIG;
	err = dsfs_strbuf_add(&w->names, de->d_name, nlen, &off);
	if (!err)
		err = dsfs_layout_grow(&w->files, &w->files_cap, w->nfiles + 1,
				       sizeof(*w->files));
	if (err)
		return err;
	w->files[w->nfiles++] = (struct wfile){ sf, off, (uint32_t)nlen };
	return 0;
}

/*
 * One entry for sorted and walk, hidden names left out when skip_hidden:
 * a directory (not through a symlink) goes to pending.  sorted keeps
 * regular files.  walk keeps what os.walk(followlinks=False) lists among a
 * directory's files, all but symlinks to directories (which are not
 * entered): regular files, symlinks to files (resolved beneath the root,
 * prefetched when inside), broken ones and fifos (never prefetched).
 * Both only with a kept name (suffix=).
 */
static int tree_entry(struct walk *w, int dfd, const struct dirent *de,
		      size_t plen)
{
	struct dsfs_layout *l = w->c->l;
	size_t nlen = strlen(de->d_name);
	unsigned char type = de->d_type;
	uint64_t sf = DSFS_LAYOUT_PENDING;
	struct stat st;

	if (w->c->skip_hidden && de->d_name[0] == '.')
		return 0;
	if (type == DT_UNKNOWN) {
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			return 0;	/* gone since the listing */
		type = IFTODT(st.st_mode);
		sf = dsfs_layout_sizeflag(l, &st, true);
	}
	if (type == DT_DIR)
		return add_pending(w, de->d_name, nlen);
	if (type != DT_REG && !w->walk)
		return 0;
	if (type == DT_LNK) {
		l->info.links++;
		if (!fstatat(dfd, de->d_name, &st, 0) && S_ISDIR(st.st_mode))
			return 0;
	}
	if (w->c->suffix &&
	    !ends_in_one(w->c->suffix, false, de->d_name, nlen))
		return 0;
	if (type == DT_LNK)
		sf = link_sizeflag(w, de->d_name, plen);
	else if (type != DT_REG)
		sf = 0, l->info.not_regular++;
	return dsfs_layout_add(l, w->path, plen, de->d_name, nlen, sf);
}

/* Reads every entry of fd (consumed).  0, WALK_SKIP or -errno (fatal). */
static int list_dir(struct walk *w, int fd, size_t plen, bool outside)
{
	struct dirent *de;
	int err = 0;
	DIR *d;

	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return WALK_SKIP;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			err = errno ? WALK_SKIP : 0;
			break;
		}
		if (de->d_name[0] == '.' &&
		    (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		err = w->images ? image_entry(w, fd, de, plen, outside) :
				  tree_entry(w, fd, de, plen);
		if (err)
			break;
	}
	closedir(d);
	return err;
}

/*
 * Records the directory at w->path and lists it; on a listing failure
 * forgets everything it added, as os.walk drops a directory whose scandir
 * fails part way.
 */
static int record_dir(struct walk *w, int fd, size_t plen, bool outside)
{
	struct dsfs_layout *l = w->c->l;
	size_t names = w->names.len, nfiles = w->nfiles, ndirs = w->ndirs;
	size_t npending = w->npending, arena = l->arena_len;
	uint64_t count = l->count;
	struct dsfs_layout_info info = l->info;
	uint32_t off;
	int err = 0;

	if (w->images) {
		err = dsfs_strbuf_add(&w->names, w->path, plen, &off);
		if (!err)
			err = dsfs_layout_grow(&w->dirs, &w->dirs_cap,
					       w->ndirs + 1, sizeof(*w->dirs));
		if (err) {
			close(fd);
			return err;
		}
		w->dirs[w->ndirs++] = (struct wdir){ off, (uint32_t)plen,
						     (uint32_t)w->nfiles, 0 };
	}
	err = list_dir(w, fd, plen, outside);
	if (err == WALK_SKIP) {
		w->names.len = names, w->nfiles = nfiles, w->ndirs = ndirs;
		w->npending = npending, l->arena_len = arena, l->count = count;
		l->info = info;
		l->info.unreadable++;
	} else if (!err && w->images) {
		w->dirs[ndirs].n = (uint32_t)(w->nfiles - nfiles);
	}
	return err;
}

/* Opens w->path; *outside becomes true when it is not provably inside. */
static int open_dir(struct walk *w, size_t plen, bool *outside)
{
	const char *rel = plen ? w->path : ".";
	int fd;

	if (!w->images) /* no symlink is ever followed */
		return dsfs_open_beneath(w->c->ds_fd, rel,
					 O_RDONLY | O_DIRECTORY);
	if (!*outside) {
		fd = dsfs_layout_open_in_root(w->c, rel, O_RDONLY | O_DIRECTORY);
		if (fd >= 0)
			return fd;
	}
	fd = openat(w->c->ds_fd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*outside = true;
	return fd;
}

/* Pushes the directory's identity; WALK_SKIP when it is an ancestor. */
static int enter(struct walk *w, int fd, size_t depth)
{
	struct dsfs_layout *l = w->c->l;
	struct stat st;
	size_t i;

	if (fstat(fd, &st)) {
		l->info.unreadable++;
		return WALK_SKIP;
	}
	for (i = 0; i < depth; i++) {
		if (w->chain[i].dev == st.st_dev && w->chain[i].ino == st.st_ino) {
			l->info.loops++;
			return WALK_SKIP;
		}
	}
	if (dsfs_layout_grow(&w->chain, &w->chain_cap, depth + 1,
			     sizeof(*w->chain)))
		return -ENOMEM;
	w->chain[depth] = (struct devino){ st.st_dev, st.st_ino };
	l->info.dirs++;
	return 0;
}

/* Walks w->path (plen bytes) and everything below it.  0 or -errno. */
static int walk_dir(struct walk *w, size_t plen, bool outside, size_t depth)
{
	size_t pend = w->npending, i;
	int fd, err;

	fd = open_dir(w, plen, &outside);
	if (fd < 0) {
		w->c->l->info.unreadable++;
		return 0;
	}
	err = enter(w, fd, depth);
	if (err) {
		close(fd);
		return err == WALK_SKIP ? 0 : err;
	}
	err = record_dir(w, fd, plen, outside);
	if (err)
		return err == WALK_SKIP ? 0 : err;
	for (i = pend; i < w->npending && !err; i++) {
		const char *name = w->names.p + w->pending[i];
		size_t nlen = strlen(name), sep = plen ? 1 : 0;

		if (plen + sep + nlen >= PATH_MAX) {
			w->c->l->info.unreadable++; /* Python's path: longer */
			continue;
		}
		w->path[plen] = '/';
		memcpy(w->path + plen + sep, name, nlen + 1);
		err = walk_dir(w, plen + sep + nlen, outside, depth + 1);
	}
	w->path[plen] = '\0';
	w->npending = pend;
	return err;
}

static int cmp_dir(const void *a, const void *b, void *names)
{
	return dsfs_layout_strcmp((char *)names + ((const struct wdir *)a)->path,
				  (char *)names + ((const struct wdir *)b)->path);
}

static int cmp_file(const void *a, const void *b, void *names)
{
	return dsfs_layout_strcmp((char *)names + ((const struct wfile *)a)->name,
				  (char *)names + ((const struct wfile *)b)->name);
}

/* Appends the walked class in sorted(os.walk()) order. */
static int emit_class(struct walk *w)
{
	struct dsfs_layout *l = w->c->l;
	uint64_t before = l->count;
	size_t i, j;
	int err;

	if (w->ndirs > 1)
		qsort_r(w->dirs, w->ndirs, sizeof(*w->dirs), cmp_dir, w->names.p);
	for (i = 0; i < w->ndirs; i++) {
		const struct wdir *d = &w->dirs[i];

		if (d->n > 1)
			qsort_r(w->files + d->first, d->n, sizeof(*w->files),
				cmp_file, w->names.p);
		for (j = d->first; j < d->first + d->n; j++) {
			const struct wfile *f = &w->files[j];

			err = dsfs_layout_add(l, w->names.p + d->path, d->len,
					      w->names.p + f->name, f->len,
					      f->sizeflag);
			if (err)
				return err;
		}
	}
	if (l->count == before)
		l->info.empty_classes++;
	return 0;
}

static int cmp_dir_name(const void *a, const void *b, void *names)
{
	return dsfs_layout_strcmp((char *)names + *(const uint32_t *)a,
				  (char *)names + *(const uint32_t *)b);
}

/*
 * Class names: entries of DIR that are directories, symlinks followed
 * (find_classes: entry.is_dir()).  Offsets into *cls, sorted.
 */
static int find_classes(struct dsfs_layout_ctx *c, struct dsfs_strbuf *cls,
			uint32_t **offs, size_t *n)
{
	size_t cap = 0;
	struct dirent *de;
	struct stat st;
	int fd, err = 0;
	DIR *d;

	fd = fcntl(c->ds_fd, F_DUPFD_CLOEXEC, 0);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	for (errno = 0; (de = readdir(d)); errno = 0) {
		bool dir = de->d_type == DT_DIR;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type == DT_LNK || de->d_type == DT_UNKNOWN)
			dir = !fstatat(c->ds_fd, de->d_name, &st, 0) &&
			      S_ISDIR(st.st_mode);
		if (dir && de->d_type == DT_LNK)
			c->l->info.links++;
		if (!dir)
			continue;
		err = dsfs_layout_grow(offs, &cap, *n + 1, sizeof(**offs));
		if (!err)
			err = dsfs_strbuf_add(cls, de->d_name,
					      strlen(de->d_name), &(*offs)[*n]);
		if (err)
			break;
		(*n)++;
	}
	if (!de && errno)
		err = -errno;
	closedir(d);
	if (!err && *n > 1)
		qsort_r(*offs, *n, sizeof(**offs), cmp_dir_name, cls->p);
	return err;
}

/* Each class in order: walk it, then append its samples.  O(class size). */
static int walk_classes(struct walk *w)
{
	struct dsfs_strbuf cls = { 0 };
	uint32_t *offs = NULL;
	size_t n = 0, i, len;
	char q[256];
	int err;

	err = find_classes(w->c, &cls, &offs, &n);
	if (err) {
		dsfs_layout_quote(q, sizeof(q), w->c->ds_rel, w->c->ds_len);
		dsfs_layout_why(w->c, "dataset '%s': cannot list: %s", q,
				strerror(-err));
	}
	for (i = 0; i < n && !err; i++) {
		len = strlen(cls.p + offs[i]);
		memcpy(w->path, cls.p + offs[i], len + 1);
		w->names.len = w->ndirs = w->nfiles = w->npending = 0;
		err = walk_dir(w, len, false, 0);
		if (!err)
			err = emit_class(w);
	}
	free(cls.p);
	free(offs);
	return err;
}

int dsfs_layout_build_walk(struct dsfs_layout_ctx *c,
			   enum dsfs_layout_kind kind)
{
	struct walk *w = calloc(1, sizeof(*w));
	uint64_t i;
	int err;

	if (!w)
		return -ENOMEM;
	w->c = c;
	w->images = kind == DSFS_LAYOUT_IMAGEFOLDER;
	w->walk = kind == DSFS_LAYOUT_WALK;
	if (w->images) {
		err = walk_classes(w);
	} else {
		err = walk_dir(w, 0, false, 0);
		if (!err && kind == DSFS_LAYOUT_SORTED)
			err = dsfs_layout_sort(c->l);
	}
	if (!err && !c->sizes_later) {
		dsfs_layout_stat_pending(c);
		for (i = 0; i < c->l->count; i++) {
			if (c->l->sizes[i] == DSFS_LAYOUT_PENDING) {
				c->l->sizes[i] = 0; /* no longer a regular file */
				c->l->info.not_regular++;
			}
		}
	}
	free(w->names.p);
	free(w->dirs);
	free(w->files);
	free(w->pending);
	free(w->chain);
	free(w);
	return err;
}
