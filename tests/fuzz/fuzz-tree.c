// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz-tree: the imagefolder and sorted layout builders over generated
 * trees.  The input is a small program, one operation per few bytes, that
 * builds a tree below SOURCE/ds in a temp dir (removed after each input):
 * files with image extensions in any case or none, directories, hidden
 * names, UTF-8, invalid UTF-8 and control bytes in names, fifos, and
 * symlinks to files and directories inside ds/, into SOURCE outside ds/, out
 * of SOURCE (relative and absolute), dangling, and to an ancestor (a loop).
 * At most 48 nodes, 6 levels and 3 links to directories (more would let a
 * walk, Python's or dsfs's, grow exponentially).
 *
 * Both layouts are compared with models written here from layout.h's
 * contract, with their own walkers, their own Python str order (UTF-8 with
 * surrogateescape, decoded differently from layout.c) and their own
 * RESOLVE_BENEATH resolver.  Invariants:
 *  - imagefolder: classes are the directories of ds (links followed,
 *    hidden ones too) in str order; each class walked as
 *    sorted(os.walk(followlinks=True)): directories by whole path (so
 *    "a-b" before "a/x"), names within each, every non-directory whose
 *    name ends in an image extension (ASCII case folded) a sample;
 *    directories already on the current path not entered (info.loops);
 *  - sorted: every regular file below ds, links not followed, by path;
 *  - a sample is prefetchable, with its size, exactly when it reaches a
 *    regular file without leaving SOURCE; every path exists below ds;
 *    lookup() finds each path at its index; info.empty_classes and
 *    info.loops are the model's;
 *  - dsfs_layout_strcmp() agrees in sign with the model's order on every
 *    pair of names used.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "layout.h"

#define MAX_NODES 48
#define MAX_DEPTH 6
#define MAX_DIR_LINKS 3

/* Names that have tripped ImageFolder clones (SAMPLERS.md section 5). */
static const char *const trap_names[] = {
	"a", "b", "a-b", "a.b", "a b", "A", "B", "x.jpg", "X.JPG", "y.Jpeg",
	"z.png", "w.PNG", "v.ppm", "u.bmp", "t.pgm", "s.tif", "r.TIFF",
	"q.webp", "p.gif", "n.txt", ".hidden", ".h.jpg", ".jpg", "..jpg",
	"...", "jpg", "a.jpg.txt", "a.txt.jpg", "\xc3\xa9.jpg",
	"e\xcc\x81.jpg", "\xff.jpg", "\xed\xa0\x80.png", "\xef\xbf\xbd.jpg",
	"\xf0\x9f\x98\x80.jpeg", "\xc4\xb0.JPG", "x.\xe2\x84\xaaPG",
	"nl\n.jpg", "tab\t.png", "\x7f.bmp", "Z", "z", "_", "~.jpg",
};

enum kind { NODE_DIR, NODE_FILE, NODE_LINK, NODE_FIFO };

struct node {
	enum kind kind;
	int depth;		/* ds itself: 0 */
	bool to_dir;		/* a link to a directory */
	char rel[PATH_MAX];	/* below ds; "" for ds */
};

struct gen {
	const uint8_t *data;
	size_t size, pos;
	struct node nodes[MAX_NODES];
	int n, dir_links;
};

static char root[PATH_MAX];	/* SOURCE: a temp dir's root/ */
static char ds[PATH_MAX];	/* root/ds */

static unsigned next(struct gen *g)
{
	return g->pos < g->size ? g->data[g->pos++] : 0;
}

/* ---- the model's str order and image test ---- */

/* One code point of UTF-8 with surrogateescape (CPython's fsdecode). */
static uint32_t ref_decode(const unsigned char **pp)
{
	static const uint32_t least[] = { 0, 0, 0x80, 0x800, 0x10000 };
	const unsigned char *p = *pp;
	int n = p[0] < 0x80 ? 1 : (p[0] & 0xE0) == 0xC0 ? 2 :
		(p[0] & 0xF0) == 0xE0 ? 3 : (p[0] & 0xF8) == 0xF0 ? 4 : 0;
	uint32_t cp = p[0] & (0xFF >> (n + 1));
	int i;

	for (i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80) {
			n = 0;
			break;
		}
		cp = cp << 6 | (p[i] & 0x3F);
	}
	if (n == 0 || cp < least[n] || cp > 0x10FFFF ||
	    (cp >= 0xD800 && cp <= 0xDFFF)) {
		*pp = p + 1;
		return 0xDC00 + p[0];
	}
	*pp = p + n;
	return n == 1 ? p[0] : cp;
}

static int ref_cmp(const char *a, const char *b)
{
	const unsigned char *x = (const unsigned char *)a;
	const unsigned char *y = (const unsigned char *)b;

	while (*x && *y) {
		uint32_t cx = ref_decode(&x), cy = ref_decode(&y);

		if (cx != cy)
			return cx < cy ? -1 : 1;
	}
	return (*x != 0) - (*y != 0);
}

static int sign(int v)
{
	return (v > 0) - (v < 0);
}

static bool ref_is_image(const char *name)
{
	static const char *const ext[] = { ".jpg", ".jpeg", ".png", ".ppm",
					   ".bmp", ".pgm", ".tif", ".tiff",
					   ".webp" };
	size_t len = strlen(name), i, j, el;

	for (i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		el = strlen(ext[i]);
		for (j = 0; el <= len && j < el; j++) {
			char c = name[len - el + j];

			if ((c >= 'A' && c <= 'Z' ? c + 32 : c) != ext[i][j])
				break;
		}
		if (el <= len && j == el)
			return true;
	}
	return false;
}

/* ---- the model's RESOLVE_BENEATH ---- */

/*
 * Whether ds/rel reaches something without leaving SOURCE, component by
 * component as openat2(RESOLVE_BENEATH) would: an absolute link leaves, a
 * ".." above SOURCE leaves.  1 inside, 0 leaves, -1 does not resolve.
 */
static int ref_inside(const char *rel)
{
	char todo[2 * PATH_MAX], next[2 * PATH_MAX], cur[2 * PATH_MAX];
	char target[PATH_MAX];
	size_t rootlen = strlen(root), curlen, n;
	const char *p, *comp;
	int links = 0;
	ssize_t got;

	curlen = (size_t)snprintf(cur, sizeof(cur), "%s/ds", root);
	snprintf(todo, sizeof(todo), "%s", rel);
	for (p = todo; *p;) {
		comp = p;
		n = strcspn(p, "/");
		p += n + (p[n] == '/');
		if (!n || (n == 1 && comp[0] == '.'))
			continue;
		if (n == 2 && comp[0] == '.' && comp[1] == '.') {
			if (curlen == rootlen)
				return 0;
			while (cur[--curlen] != '/')
				;
			cur[curlen] = '\0';
			continue;
		}
		if (curlen + 1 + n >= sizeof(cur))
			return -1;
		cur[curlen] = '/';
		memcpy(cur + curlen + 1, comp, n);
		cur[curlen + 1 + n] = '\0';
		got = readlink(cur, target, sizeof(target) - 1);
		if (got < 0) {
			if (errno != EINVAL) /* missing: not a link */
				return -1;
			curlen += 1 + n;
			continue;
		}
		cur[curlen] = '\0';
		target[got] = '\0';
		if (target[0] == '/')
			return 0;
		if (++links > 40)
			return -1;
		snprintf(next, sizeof(next), "%s/%s", target, p);
		memcpy(todo, next, strlen(next) + 1);
		p = todo;
	}
	return 1;
}

/* ---- expected samples ---- */

struct sample {
	char *path;
	bool prefetch;
	uint64_t size;
};

struct model {
	struct sample *s;
	size_t n, cap;
	uint64_t loops, empty_classes;
};

static void add_sample(struct model *m, const char *path)
{
	char full[2 * PATH_MAX];
	struct stat st;
	struct sample *s;

	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 64;
		m->s = realloc(m->s, m->cap * sizeof(*m->s));
		FUZZ_CHECK(m->s, "out of memory");
	}
	s = &m->s[m->n++];
	s->path = strdup(path);
	FUZZ_CHECK(s->path, "out of memory");
	snprintf(full, sizeof(full), "%s/%s", ds, path);
	s->prefetch = !stat(full, &st) && S_ISREG(st.st_mode) &&
		      ref_inside(path) == 1;
	s->size = s->prefetch ? (uint64_t)st.st_size : 0;
}

static int cmp_names(const void *a, const void *b)
{
	return ref_cmp(*(char *const *)a, *(char *const *)b);
}

/* Names of the directory ds/rel in the model's order; count in *n. */
static char **list(const char *rel, size_t *n)
{
	char full[2 * PATH_MAX], **v = NULL;
	struct dirent *de;
	DIR *d;

	*n = 0;
	snprintf(full, sizeof(full), "%s/%s", ds, rel);
	d = opendir(full);
	FUZZ_CHECK(d, "opendir %s", full);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		v = realloc(v, (*n + 1) * sizeof(*v));
		FUZZ_CHECK(v && (v[*n] = strdup(de->d_name)), "out of memory");
		(*n)++;
	}
	closedir(d);
	if (*n > 1)
		qsort(v, *n, sizeof(*v), cmp_names);
	return v;
}

static void free_names(char **v, size_t n)
{
	while (n--)
		free(v[n]);
	free(v);
}

static void join(char *dst, size_t size, const char *dir, const char *name)
{
	FUZZ_CHECK((size_t)snprintf(dst, size, "%s%s%s", dir, *dir && *name ? "/" : "",
				    name) < size, "%s/%s: too long", dir, name);
}

/* A walked directory of the current class and its image names. */
struct wdir {
	char *rel;
	char **images;
	size_t nimages;
};

struct class_walk {
	struct wdir *dirs;
	size_t n;
	struct stat chain[MAX_NODES + 8]; /* nodes and the fixed dirs */
};

/* os.walk(followlinks=True) of ds/rel, not entering an ancestor. */
static void walk_class(struct model *m, struct class_walk *w,
		       const char *rel, size_t depth)
{
	char full[2 * PATH_MAX], sub[PATH_MAX], **names;
	struct wdir *d;
	struct stat st;
	size_t n, i, k;
	bool *isdir;

	snprintf(full, sizeof(full), "%s/%s", ds, rel);
	FUZZ_CHECK(!stat(full, &st), "stat %s", full);
	for (k = 0; k < depth; k++) {
		if (w->chain[k].st_dev == st.st_dev &&
		    w->chain[k].st_ino == st.st_ino) {
			m->loops++;
			return;
		}
	}
	FUZZ_CHECK(depth < sizeof(w->chain) / sizeof(w->chain[0]), "deep");
	w->chain[depth] = st;
	w->dirs = realloc(w->dirs, (w->n + 1) * sizeof(*w->dirs));
	FUZZ_CHECK(w->dirs, "out of memory");
	d = &w->dirs[w->n++];
	*d = (struct wdir){ strdup(rel), NULL, 0 };
	names = list(rel, &n);
	isdir = calloc(n + 1, sizeof(*isdir));
	FUZZ_CHECK(d->rel && isdir, "out of memory");
	for (i = 0; i < n; i++) {
		join(sub, sizeof(sub), rel, names[i]);
		snprintf(full, sizeof(full), "%s/%s", ds, sub);
		isdir[i] = !stat(full, &st) && S_ISDIR(st.st_mode);
		if (isdir[i] || !ref_is_image(names[i]))
			continue;
		d->images = realloc(d->images, (d->nimages + 1) * sizeof(char *));
		FUZZ_CHECK(d->images, "out of memory");
		d->images[d->nimages++] = strdup(names[i]);
	}
	for (i = 0; i < n; i++) {
		join(sub, sizeof(sub), rel, names[i]);
		if (isdir[i])
			walk_class(m, w, sub, depth + 1);
	}
	free(isdir);
	free_names(names, n);
}

static int cmp_wdir(const void *a, const void *b)
{
	return ref_cmp(((const struct wdir *)a)->rel,
		       ((const struct wdir *)b)->rel);
}

static void model_imagefolder(struct model *m)
{
	char full[2 * PATH_MAX], path[PATH_MAX], **cls;
	struct class_walk w;
	struct stat st;
	size_t ncls, i, j, k, before;

	cls = list("", &ncls);
	for (i = 0; i < ncls; i++) {
		snprintf(full, sizeof(full), "%s/%s", ds, cls[i]);
		if (stat(full, &st) || !S_ISDIR(st.st_mode))
			continue;
		memset(&w, 0, sizeof(w));
		walk_class(m, &w, cls[i], 0);
		qsort(w.dirs, w.n, sizeof(*w.dirs), cmp_wdir);
		before = m->n;
		for (j = 0; j < w.n; j++) {
			for (k = 0; k < w.dirs[j].nimages; k++) {
				join(path, sizeof(path), w.dirs[j].rel,
				     w.dirs[j].images[k]);
				add_sample(m, path);
			}
			free_names(w.dirs[j].images, w.dirs[j].nimages);
			free(w.dirs[j].rel);
		}
		free(w.dirs);
		m->empty_classes += m->n == before;
	}
	free_names(cls, ncls);
}

static int cmp_sample(const void *a, const void *b)
{
	return ref_cmp(((const struct sample *)a)->path,
		       ((const struct sample *)b)->path);
}

/* Every regular file below ds/rel, links not followed. */
static void collect_regular(struct model *m, const char *rel)
{
	char full[2 * PATH_MAX], sub[PATH_MAX], **names;
	struct stat st;
	size_t n, i;

	names = list(rel, &n);
	for (i = 0; i < n; i++) {
		join(sub, sizeof(sub), rel, names[i]);
		snprintf(full, sizeof(full), "%s/%s", ds, sub);
		FUZZ_CHECK(!lstat(full, &st), "lstat %s", full);
		if (S_ISDIR(st.st_mode))
			collect_regular(m, sub);
		else if (S_ISREG(st.st_mode))
			add_sample(m, sub);
	}
	free_names(names, n);
}

static void model_sorted(struct model *m)
{
	collect_regular(m, "");
	if (m->n > 1)
		qsort(m->s, m->n, sizeof(*m->s), cmp_sample);
}

/* ---- the generator ---- */

static void name_of(struct gen *g, char *name, size_t size)
{
	unsigned b = next(g), len, i;

	if (b < 200) {
		snprintf(name, size, "%s",
			 trap_names[b % (sizeof(trap_names) / sizeof(trap_names[0]))]);
		return;
	}
	len = 1 + b % 6;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)next(g);

		name[i] = c == '/' || c == '\0' ? '_' : (char)c;
	}
	name[len] = '\0';
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		name[0] = '_';
}

/* "../" d times, then rest; "." for nothing at all. */
static void climb(char *dst, size_t size, int d, const char *rest)
{
	size_t o = 0;

	while (d-- > 0 && o + 3 < size)
		o += (size_t)snprintf(dst + o, size - o, "../");
	snprintf(dst + o, size - o, "%s", rest);
	o = strlen(dst);
	if (o && dst[o - 1] == '/')
		dst[o - 1] = '\0';
	if (!dst[0])
		snprintf(dst, size, ".");
}

/* Operations, from the input byte modulo OP_COUNT. */
enum {
	OP_FILE = 0,		/* 0, 1, 2: a file of 0..4 bytes */
	OP_DIR = 3,		/* 3, 4 */
	OP_LINK_REL = 5,	/* to a node, relative: stays inside ds */
	OP_LINK_ABS,		/* to a node, absolute: leaves SOURCE */
	OP_LINK_AWAY,		/* out of SOURCE, out of ds, or dangling */
	OP_LINK_LOOP,		/* to an ancestor or its own directory */
	OP_FIFO,
	OP_COUNT
};

/* The text of a link made by op in p; false when it is one link to a
 * directory too many.  *to_dir: whether it points to a directory. */
static bool link_text(struct gen *g, unsigned op, const struct node *p,
		      char *text, size_t size, bool *to_dir)
{
	static const char *const away[] = { "outside/o.jpg", "outside/odir",
					    "r.jpg", "rdir", "nowhere.jpg" };
	const struct node *t = &g->nodes[next(g) % (unsigned)g->n];
	unsigned sub = next(g);

	*to_dir = false;
	if (op == OP_LINK_REL || op == OP_LINK_ABS) {
		*to_dir = t->kind == NODE_DIR || t->to_dir;
		if (op == OP_LINK_ABS)
			join(text, size, ds, t->rel);
		else
			climb(text, size, p->depth, t->rel);
	} else if (op == OP_LINK_AWAY) {
		sub %= 5;
		*to_dir = sub == 1 || sub == 3;
		if (sub < 2)
			climb(text, size, p->depth + 2, away[sub]);
		else if (sub < 4)
			climb(text, size, p->depth + 1, away[sub]);
		else
			snprintf(text, size, "%s", away[sub]);
	} else {
		climb(text, size, (int)(sub % (unsigned)(p->depth + 1)), "");
		*to_dir = true;
	}
	return !*to_dir || g->dir_links++ < MAX_DIR_LINKS;
}

/* The parent of the next node: one of the directories made so far. */
static struct node *parent(struct gen *g, unsigned pick)
{
	unsigned ndirs = 0;
	int i;

	for (i = 0; i < g->n; i++)
		ndirs += g->nodes[i].kind == NODE_DIR;
	pick %= ndirs;
	for (i = 0; i < g->n; i++) {
		if (g->nodes[i].kind == NODE_DIR && !pick--)
			return &g->nodes[i];
	}
	return &g->nodes[0];
}

/* Makes nn at full as op says; 0 or -1 when it cannot be made. */
static int make(struct gen *g, unsigned op, const struct node *p,
		struct node *nn, const char *full)
{
	char text[PATH_MAX];
	bool to_dir;
	int fd;

	if (op < OP_DIR) {
		nn->kind = NODE_FILE;
		fd = open(full, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			return -1;
		FUZZ_CHECK(write(fd, "abcd", next(g) % 5) >= 0, "write");
		close(fd);
		return 0;
	}
	if (op < OP_LINK_REL) {
		nn->kind = NODE_DIR;
		return p->depth < MAX_DEPTH ? mkdir(full, 0755) : -1;
	}
	if (op == OP_FIFO) {
		nn->kind = NODE_FIFO;
		return mkfifo(full, 0644);
	}
	nn->kind = NODE_LINK;
	if (!link_text(g, op, p, text, sizeof(text), &to_dir))
		return -1;
	nn->to_dir = to_dir;
	return symlink(text, full);
}

/* One operation; false when the input is used up or the tree is full. */
static bool step(struct gen *g)
{
	unsigned op = next(g) % OP_COUNT;
	struct node *p = parent(g, next(g)), *nn = &g->nodes[g->n];
	char name[16], full[2 * PATH_MAX];

	if (g->pos >= g->size)
		return false;
	name_of(g, name, sizeof(name));
	memset(nn, 0, sizeof(*nn));
	join(nn->rel, sizeof(nn->rel), p->rel, name);
	snprintf(full, sizeof(full), "%s/%s", ds, nn->rel);
	nn->depth = p->depth + 1;
	if (!make(g, op, p, nn, full))
		g->n++;
	return g->n < MAX_NODES;
}

/* ---- comparing ---- */

static void dump(const char *what, const struct dsfs_layout *l,
		 const struct model *m)
{
	uint64_t i;

	fprintf(stderr, "%s: dsfs (%llu samples):\n", what,
		(unsigned long long)dsfs_layout_count(l));
	for (i = 0; i < dsfs_layout_count(l); i++)
		fprintf(stderr, "  %s %d %llu\n", dsfs_layout_path(l, i),
			dsfs_layout_prefetchable(l, i),
			(unsigned long long)dsfs_layout_size(l, i));
	fprintf(stderr, "model (%zu samples):\n", m->n);
	for (i = 0; i < m->n; i++)
		fprintf(stderr, "  %s %d %llu\n", m->s[i].path, m->s[i].prefetch,
			(unsigned long long)m->s[i].size);
}

static bool same_samples(const struct dsfs_layout *l, const struct model *m)
{
	uint64_t i, j;

	if (dsfs_layout_count(l) != m->n)
		return false;
	for (i = 0; i < m->n; i++) {
		if (strcmp(dsfs_layout_path(l, i), m->s[i].path) ||
		    dsfs_layout_prefetchable(l, i) != m->s[i].prefetch ||
		    dsfs_layout_size(l, i) != m->s[i].size ||
		    dsfs_layout_lookup(l, m->s[i].path, &j) || j != i)
			return false;
	}
	return true;
}

static void check(enum dsfs_layout_kind kind, int root_fd)
{
	const char *name = dsfs_layout_kind_name(kind);
	struct model m = { 0 };
	struct dsfs_layout *l;
	char why[512];
	size_t i;
	int err;

	err = dsfs_layout_build(root_fd, "ds", kind, NULL, NULL, &l, why,
				sizeof(why));
	FUZZ_CHECK(!err, "layout=%s refused: %s", name, why);
	if (kind == DSFS_LAYOUT_IMAGEFOLDER)
		model_imagefolder(&m);
	else
		model_sorted(&m);
	if (!same_samples(l, &m)) {
		dump(name, l, &m);
		FUZZ_CHECK(0, "layout=%s differs from the model", name);
	}
	if (kind == DSFS_LAYOUT_IMAGEFOLDER)
		FUZZ_CHECK(dsfs_layout_info(l)->loops == m.loops &&
				   dsfs_layout_info(l)->empty_classes ==
					   m.empty_classes,
			   "loops %llu (model %llu), empty classes %llu (%llu)",
			   (unsigned long long)dsfs_layout_info(l)->loops,
			   (unsigned long long)m.loops,
			   (unsigned long long)dsfs_layout_info(l)->empty_classes,
			   (unsigned long long)m.empty_classes);
	for (i = 0; i < m.n; i++)
		free(m.s[i].path);
	free(m.s);
	dsfs_layout_free(l);
}

/* dsfs_layout_strcmp() against the model's order on every pair of names. */
static void check_order(const struct gen *g)
{
	int i, j, a, b;

	for (i = 0; i < g->n; i++) {
		for (j = 0; j < g->n; j++) {
			a = dsfs_layout_strcmp(g->nodes[i].rel, g->nodes[j].rel);
			b = ref_cmp(g->nodes[i].rel, g->nodes[j].rel);
			FUZZ_CHECK(sign(a) == sign(b), "order of '%s' and '%s'",
				   g->nodes[i].rel, g->nodes[j].rel);
		}
	}
}

/* The fixed parts: outside/ (once) and root/ with ds/ (per input). */
static void make_fixed(const char *tmp, bool once)
{
	static const char *const once_dirs[] = { "outside", "outside/odir" };
	static const char *const once_files[] = { "outside/o.jpg",
						  "outside/odir/p.png",
						  "outside/odir/q.txt" };
	static const char *const dirs[] = { "root", "root/ds", "root/rdir" };
	static const char *const files[] = { "root/r.jpg", "root/rdir/s.png" };
	char path[PATH_MAX];
	size_t i;

	for (i = 0; once && i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp, once_dirs[i]);
		FUZZ_CHECK(!mkdir(path, 0755), "mkdir %s", path);
	}
	for (i = 0; once && i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp, once_files[i]);
		fuzz_write(path, "outside", i + 1);
	}
	for (i = 0; !once && i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp, dirs[i]);
		FUZZ_CHECK(!mkdir(path, 0755), "mkdir %s", path);
	}
	for (i = 0; !once && i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp, files[i]);
		fuzz_write(path, "root", i + 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *tmp;
	struct gen *g = calloc(1, sizeof(*g));
	int root_fd;

	FUZZ_CHECK(g, "out of memory");
	if (!tmp) {
		tmp = fuzz_tmpdir("tree");
		make_fixed(tmp, true);
		join(root, sizeof(root), tmp, "root");
		join(ds, sizeof(ds), root, "ds");
	}
	make_fixed(tmp, false);
	g->data = data;
	g->size = size;
	g->nodes[0].kind = NODE_DIR;
	g->n = 1;
	while (step(g))
		;
	root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	FUZZ_CHECK(root_fd >= 0, "open %s", root);
	check(DSFS_LAYOUT_IMAGEFOLDER, root_fd);
	check(DSFS_LAYOUT_SORTED, root_fd);
	check_order(g);
	close(root_fd);
	fuzz_rmtree(root);
	free(g);
	return 0;
}
