// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * unit-layout: prefetch/layout on small trees built in a temp dir: Python's
 * name order, imagefolder and sorted orders with their traps, symlinks
 * leaving SOURCE, loops, list files with every refused line, and lookup;
 * the plan's pick of train/ in a directory of data sets, and its warnings.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "layout.h"
#include "plan.h"
#include "unit-check.h"

struct want {
	const char *path;
	uint64_t size;
	bool prefetch;
};

static char tmp[] = "/tmp/dsfs-unit-layout.XXXXXX";
static char src[128], outside[128]; /* short: joined paths fit PATH_MAX */

static void mkparents(const char *path)
{
	char buf[PATH_MAX], *s;

	snprintf(buf, sizeof(buf), "%s", path);
	for (s = buf + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(buf, 0755);
		*s = '/';
	}
}

/* A file of `size` bytes at base/rel (parents created). */
static void put(const char *base, const char *rel, size_t size)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	mkparents(path);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (!f)
		return;
	while (size--)
		fputc('x', f);
	fclose(f);
}

static void dir(const char *base, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s/", base, rel);
	mkparents(path);
}

static void lnk(const char *target, const char *base, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", base, rel);
	mkparents(path);
	CHECK(symlink(target, path) == 0);
}

/* Writes a list file under the temp dir and returns its path (static). */
static const char *list_file(const char *data, size_t len)
{
	static char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/list.txt", tmp);
	f = fopen(path, "w");
	CHECK(f && fwrite(data, 1, len, f) == len);
	if (f)
		fclose(f);
	return path;
}

static int build(const char *ds, enum dsfs_layout_kind kind,
		 const char *list, struct dsfs_layout **l, char *why,
		 size_t whylen)
{
	int fd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;

	CHECK(fd >= 0);
	err = dsfs_layout_build(fd, ds, kind, list, NULL, l, why, whylen);
	close(fd);
	return err;
}

static void check_samples(const struct dsfs_layout *l, const struct want *w,
			  size_t n)
{
	uint64_t i, idx;

	CHECK(dsfs_layout_count(l) == n);
	for (i = 0; i < n && i < dsfs_layout_count(l); i++) {
		if (strcmp(dsfs_layout_path(l, i), w[i].path) ||
		    dsfs_layout_size(l, i) != w[i].size ||
		    dsfs_layout_prefetchable(l, i) != w[i].prefetch) {
			fprintf(stderr, "sample %llu: got %s %llu %d, want %s "
				"%llu %d\n", (unsigned long long)i,
				dsfs_layout_path(l, i),
				(unsigned long long)dsfs_layout_size(l, i),
				dsfs_layout_prefetchable(l, i), w[i].path,
				(unsigned long long)w[i].size, w[i].prefetch);
			CHECK(!"sample as expected");
		}
		CHECK(dsfs_layout_lookup(l, w[i].path, &idx) == 0);
	}
}

static int sign(int v)
{
	return (v > 0) - (v < 0);
}

static void test_strcmp(void)
{
	static const struct {
		const char *a, *b;
		int want; /* Python's order; bytes may differ */
	} t[] = {
		{ "", "", 0 },
		{ "a", "b", -1 },
		{ "a", "a-b", -1 },
		{ "a-b", "a/x", -1 },		/* the os.walk trap */
		{ "x/\x80", "x/\x80", 0 },
		{ "\xc3\xa9", "\xff", -1 },	/* U+00E9 < U+DCFF */
		{ "\x80", "\xc3\xa9", 1 },	/* U+DC80 > U+00E9 */
		{ "\xff", "\xee\x80\x80", -1 },	/* U+DCFF < U+E000 */
		{ "\xf0\x9f\x98\x80", "\xff", 1 },	/* U+1F600 > U+DCFF */
		{ "\xc3", "\xc3\xa9", 1 },	/* truncated: U+DCC3 > U+00E9 */
		{ "\xe2\x82" "A", "\xe2\x82\xac", 1 },	/* U+DCE2 > U+20AC */
		{ "\xc0\xaf", "\xc3\xa9", 1 },	/* overlong: escaped */
		{ "\xed\xa0\x80", "\xee\x80\x80", -1 },	/* UTF-8 surrogate */
		{ "\xed\x9f\xbf", "\xed\xa0\x80", -1 },	/* U+D7FF < U+DCED */
		{ "\xf4\x90\x80\x80", "\xf4\x8f\xbf\xbf", -1 }, /* > U+10FFFF */
		{ "ab\xc3\xa9", "ab\xc3\xa8", 1 },
		{ "\xe0\x80\x80", "\xe0\xa0\x80", 1 },	/* overlong 3-byte */
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (sign(dsfs_layout_strcmp(t[i].a, t[i].b)) != t[i].want ||
		    sign(dsfs_layout_strcmp(t[i].b, t[i].a)) != -t[i].want) {
			fprintf(stderr, "strcmp case %zu\n", i);
			CHECK(!"Python order");
		}
	}
}

static void test_kinds(void)
{
	enum dsfs_layout_kind k;

	CHECK(!strcmp(dsfs_layout_kind_name(DSFS_LAYOUT_IMAGEFOLDER),
		      "imagefolder"));
	CHECK(!strcmp(dsfs_layout_kind_name(DSFS_LAYOUT_SORTED), "sorted"));
	CHECK(!strcmp(dsfs_layout_kind_name(DSFS_LAYOUT_LIST), "list"));
	CHECK(!strcmp(dsfs_layout_kind_name(DSFS_LAYOUT_WALK), "walk"));
	CHECK(dsfs_layout_kind_name((enum dsfs_layout_kind)7) == NULL);
	CHECK(dsfs_layout_kind_parse("list", &k) == 0 && k == DSFS_LAYOUT_LIST);
	CHECK(dsfs_layout_kind_parse("Sorted", &k) == -EINVAL);
}

static void make_tree(void)
{
	char target[PATH_MAX];

	put(src, "data/c/z.jpg", 1);
	put(src, "data/c/a-b/x.jpg", 2);
	put(src, "data/c/a/x/y.PNG", 3);
	put(src, "data/c/a/f.txt", 9);
	put(src, "data/c/.h/h.Jpeg", 4);
	put(src, "data/c/a/b.jpg", 5);
	dir(src, "data/c/empty");
	lnk("z.jpg", src, "data/c/lnk.jpg");
	snprintf(target, sizeof(target), "%s/o.jpg", outside);
	lnk(target, src, "data/c/out.jpg");
	lnk("nope", src, "data/c/broken.jpg");
	put(outside, "dd/q.jpg", 6);
	snprintf(target, sizeof(target), "%s/dd", outside);
	lnk(target, src, "data/d");
	put(src, "data/e/1.jpg", 7);
	lnk(".", src, "data/e/loop");
	put(src, "data/.hc/k.png", 8);
	put(src, "data/file.jpg", 1);
	put(outside, "o.jpg", 10);
	/* Two loops in one directory: Python would walk 2^40 directories. */
	put(src, "loops/l/1.jpg", 1);
	lnk(".", src, "loops/l/s1");
	lnk(".", src, "loops/l/s2");
	lnk("../..", src, "loops/l/sub/s3");
}

/* make_tree()'s data/ as an ImageFolder, once fully built. */
static const struct want data_want[] = {
	{ ".hc/k.png", 8, true },
	{ "c/broken.jpg", 0, false },
	{ "c/lnk.jpg", 1, true },
	{ "c/out.jpg", 0, false },
	{ "c/z.jpg", 1, true },
	{ "c/.h/h.Jpeg", 4, true },
	{ "c/a/b.jpg", 5, true },
	{ "c/a-b/x.jpg", 2, true },
	{ "c/a/x/y.PNG", 3, true },
	{ "d/q.jpg", 0, false },
	{ "e/1.jpg", 7, true },
};
#define NWANT (sizeof(data_want) / sizeof(data_want[0]))

static void test_imagefolder(void)
{
	const struct want *w = data_want;
	const struct dsfs_layout_info *in;
	struct dsfs_layout *l;
	char why[256];
	uint64_t idx;

	CHECK(build("data", DSFS_LAYOUT_IMAGEFOLDER, NULL, &l, why,
		    sizeof(why)) == 0);
	if (!l)
		return;
	check_samples(l, w, NWANT);
	in = dsfs_layout_info(l);
	CHECK(in->loops == 1 && in->outside == 2 && in->not_regular == 1);
	CHECK(in->empty_classes == 0 && in->duplicates == 0);
	CHECK(dsfs_layout_lookup(l, "c/a-b/x.jpg", &idx) == 0 && idx == 7);
	CHECK(dsfs_layout_lookup(l, "c/a/f.txt", &idx) == -ENOENT);
	CHECK(dsfs_layout_lookup(l, "./c/z.jpg", &idx) == -ENOENT);
	CHECK(dsfs_layout_memory(l) < 1024);
	dsfs_layout_free(l);

	CHECK(build("loops", DSFS_LAYOUT_IMAGEFOLDER, NULL, &l, why,
		    sizeof(why)) == 0);
	if (!l)
		return;
	CHECK(dsfs_layout_count(l) == 1 && dsfs_layout_info(l)->loops == 3);
	dsfs_layout_free(l);
}

/*
 * build_quick: the same samples in the same order, the regular files left
 * pending (and only they: symlinks and outside samples are settled by the
 * walk); settling each from its lstat gives exactly the full build's
 * words; the first settling wins; settling with NULL makes a sample not
 * prefetchable.
 */
static void test_quick(void)
{
	const struct want *w = data_want;
	char why[256], path[PATH_MAX];
	struct dsfs_layout *l = NULL;
	unsigned pending = 0;
	struct stat st;
	uint64_t i, idx;
	int fd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	CHECK(fd >= 0);
	CHECK(dsfs_layout_build_quick(fd, "data", DSFS_LAYOUT_IMAGEFOLDER,
				      NULL, NULL, &l, why, sizeof(why)) == 0);
	if (!l) {
		close(fd);
		return;
	}
	CHECK(dsfs_layout_count(l) == NWANT);
	for (i = 0; i < dsfs_layout_count(l); i++) {
		if (!dsfs_layout_pending(l, i))
			continue;
		pending++;
		CHECK(dsfs_layout_size(l, i) == 0 &&
		      !dsfs_layout_prefetchable(l, i));
		snprintf(path, sizeof(path), "%s/data/%s", src,
			 dsfs_layout_path(l, i));
		CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
		dsfs_layout_settle(l, i, &st);
		CHECK(!dsfs_layout_pending(l, i));
	}
	CHECK(pending == 7);
	check_samples(l, w, NWANT);
	st.st_mode = S_IFREG;
	st.st_size = 999;
	dsfs_layout_settle(l, 0, &st); /* settled already: no change */
	CHECK(dsfs_layout_size(l, 0) == 8);
	dsfs_layout_free(l);

	l = NULL;
	CHECK(dsfs_layout_build_quick(fd, "data", DSFS_LAYOUT_IMAGEFOLDER,
				      NULL, NULL, &l, why, sizeof(why)) == 0);
	if (l) {
		CHECK(dsfs_layout_lookup(l, "e/1.jpg", &idx) == 0);
		CHECK(dsfs_layout_pending(l, idx));
		dsfs_layout_settle(l, idx, NULL);
		CHECK(!dsfs_layout_pending(l, idx) &&
		      dsfs_layout_size(l, idx) == 0 &&
		      !dsfs_layout_prefetchable(l, idx));
		dsfs_layout_free(l);
	}
	close(fd);
}

static void test_sorted(void)
{
	static const struct want w[] = {
		{ ".hc/k.png", 8, true },   { "c/.h/h.Jpeg", 4, true },
		{ "c/a-b/x.jpg", 2, true }, { "c/a/b.jpg", 5, true },
		{ "c/a/f.txt", 9, true },   { "c/a/x/y.PNG", 3, true },
		{ "c/z.jpg", 1, true },	    { "e/1.jpg", 7, true },
		{ "file.jpg", 1, true },
	};
	struct dsfs_layout *l;
	char why[256];

	CHECK(build("./data/", DSFS_LAYOUT_SORTED, NULL, &l, why,
		    sizeof(why)) == 0);
	if (!l)
		return;
	check_samples(l, w, sizeof(w) / sizeof(w[0]));
	CHECK(dsfs_layout_info(l)->loops == 0);
	dsfs_layout_free(l);
}

static void test_list_good(void)
{
	static const char data[] = "c/z.jpg\r\n./c//a/b.jpg\nc/lnk.jpg\n"
				   "c/out.jpg\nc/z.jpg\nd/q.jpg";
	static const struct want w[] = {
		{ "c/z.jpg", 1, true },	   { "c/a/b.jpg", 5, true },
		{ "c/lnk.jpg", 1, true },  { "c/out.jpg", 0, false },
		{ "c/z.jpg", 1, true },	   { "d/q.jpg", 0, false },
	};
	struct dsfs_layout *l;
	char why[256];
	uint64_t idx;

	CHECK(build("data", DSFS_LAYOUT_LIST, list_file(data, sizeof(data) - 1),
		    &l, why, sizeof(why)) == 0);
	if (!l)
		return;
	check_samples(l, w, sizeof(w) / sizeof(w[0]));
	CHECK(dsfs_layout_lookup(l, "c/z.jpg", &idx) == 0 && idx == 0);
	CHECK(dsfs_layout_info(l)->duplicates == 1);
	CHECK(dsfs_layout_info(l)->outside == 2);
	dsfs_layout_free(l);
}

/* A list whose line 2 (or `line`) is refused with a reason holding `word`. */
static void bad_list(const char *data, size_t len, int line, int err,
		     const char *word)
{
	struct dsfs_layout *l = (struct dsfs_layout *)1;
	char why[512], at[32];
	int got;

	got = build("data", DSFS_LAYOUT_LIST, list_file(data, len), &l, why,
		    sizeof(why));
	snprintf(at, sizeof(at), " line %d: ", line);
	if (got != err || l != NULL || !strstr(why, word) ||
	    (line && !strstr(why, at))) {
		fprintf(stderr, "bad list %d: got %d, why \"%s\"\n", line, got,
			why);
		CHECK(!"refused as expected");
	}
}

#define BAD(s, line, err, word) bad_list(s, sizeof(s) - 1, line, err, word)

static void test_list_bad(void)
{
	char big[PATH_MAX + 64];
	struct dsfs_layout *l;
	char why[256];

	BAD("c/z.jpg\n/etc/passwd\n", 2, -EINVAL, "absolute");
	BAD("c/z.jpg\n../data/c/z.jpg\n", 2, -EINVAL,
	    "'../data/c/z.jpg' leaves the dataset directory");
	BAD("c/z.jpg\nc/../c/z.jpg\n", 2, -EINVAL, "'..'");
	BAD("c/z.jpg\n\nc/z.jpg\n", 2, -EINVAL, "empty line");
	BAD("c/z.jpg\r\nc/z.jpg\r\n\r\n", 3, -EINVAL, "empty line");
	BAD("c/z.jpg\nc/z.jpg\n\n", 3, -EINVAL, "empty line");
	BAD("c/z.jpg\nc/z\0.jpg\n", 2, -EINVAL, "NUL");
	BAD("c/z.jpg\nc/missing.jpg\n", 2, -ENOENT, "missing");
	BAD("c/z.jpg\nc/broken.jpg\n", 2, -ENOENT, "missing");
	BAD("c/z.jpg\nnodir/z.jpg\n", 2, -ENOENT, "missing");
	BAD("c/z.jpg\nc/a\n", 2, -EISDIR, "directory");
	BAD("c/z.jpg\nd\n", 2, -EISDIR, "directory");
	BAD("c/z.jpg\nc/a/\n", 2, -EINVAL, "ends with '/'");
	BAD("c/z.jpg\nc/z.jpg\rc/a/b.jpg\n", 2, -EINVAL, "carriage return");
	BAD("c/z.jpg\n./.\n", 2, -EINVAL, "dataset directory itself");
	BAD("", 0, -EINVAL, "empty; it must name");
	/* The first bad line wins, whatever kind of fault comes later. */
	BAD("c/z.jpg\nc/gone.jpg\nc/z.jpg\n/abs\n", 2, -ENOENT,
	    "'c/gone.jpg' names a missing file");
	BAD("c/z.jpg\nc/lnk.jpg\nc/broken.jpg\nc/a\n", 3, -ENOENT, "missing");
	memset(big, 'a', sizeof(big));
	memcpy(big, "c/z.jpg\n", 8);
	bad_list(big, sizeof(big), 2, -ENAMETOOLONG, "PATH_MAX");
	memset(big + 8, 'a', PATH_MAX);		/* PATH_MAX bytes + LF */
	big[8 + PATH_MAX] = '\n';
	bad_list(big, 9 + PATH_MAX, 2, -ENAMETOOLONG, "PATH_MAX");

	CHECK(build("data", DSFS_LAYOUT_LIST, "rel.txt", &l, why,
		    sizeof(why)) == -EINVAL && strstr(why, "absolute"));
	CHECK(build("data", DSFS_LAYOUT_LIST, NULL, &l, why, sizeof(why)) ==
	      -EINVAL);
	CHECK(build("data", DSFS_LAYOUT_LIST, "/nonexistent/list.txt", &l, why,
		    sizeof(why)) == -ENOENT && strstr(why, "/nonexistent"));
	CHECK(build("data", DSFS_LAYOUT_LIST, tmp, &l, why, sizeof(why)) ==
	      -EISDIR);
}

/* Many lines: lines cross the reader's 64 KiB buffer at every offset. */
static void test_list_long(void)
{
	const size_t n = 200000;
	char *data = malloc(n * 12), *p = data;
	struct dsfs_layout *l;
	char why[256];
	uint64_t idx;
	size_t i;

	CHECK(data != NULL);
	if (!data)
		return;
	for (i = 0; i < n; i++)
		p += sprintf(p, i % 3 ? "c/z.jpg\n" : "c/a/b.jpg\r\n");
	CHECK(build("data", DSFS_LAYOUT_LIST, list_file(data, (size_t)(p - data)),
		    &l, why, sizeof(why)) == 0);
	free(data);
	if (!l)
		return;
	CHECK(dsfs_layout_count(l) == n);
	CHECK(!strcmp(dsfs_layout_path(l, n - 1), "c/z.jpg"));
	CHECK(dsfs_layout_lookup(l, "c/z.jpg", &idx) == 0 && idx == 1);
	CHECK(dsfs_layout_info(l)->duplicates == n - 2);
	dsfs_layout_free(l);
}

static void test_dataset_errors(void)
{
	struct dsfs_layout *l;
	char why[256];

	CHECK(build("../x", DSFS_LAYOUT_SORTED, NULL, &l, why, sizeof(why)) ==
	      -EXDEV && strstr(why, "leaves the source directory"));
	CHECK(build("data/d", DSFS_LAYOUT_SORTED, NULL, &l, why,
		    sizeof(why)) == -EXDEV);
	CHECK(build("missing", DSFS_LAYOUT_IMAGEFOLDER, NULL, &l, why,
		    sizeof(why)) == -ENOENT && strstr(why, "'missing'"));
	CHECK(build("data/file.jpg", DSFS_LAYOUT_IMAGEFOLDER, NULL, &l, why,
		    sizeof(why)) == -ENOTDIR && l == NULL);
	/* An empty dataset is an empty layout, not an error. */
	dir(src, "void");
	CHECK(build("void", DSFS_LAYOUT_IMAGEFOLDER, NULL, &l, why,
		    sizeof(why)) == 0);
	if (l)
		CHECK(dsfs_layout_count(l) == 0 &&
		      dsfs_layout_lookup(l, "x", &(uint64_t){ 0 }) == -ENOENT);
	dsfs_layout_free(l);
}

/* A DatasetFolder's extensions: their checks and bounds; the build refuses
 * them for the other layouts.  (Their matching is golden_layout.py's.) */
static void test_extensions(void)
{
	char why[256], many[200], *p = many;
	struct dsfs_layout *l = NULL;
	int i, fd;

	CHECK(dsfs_layout_extensions_check(".npy", why, sizeof(why)) == 0);
	CHECK(dsfs_layout_extensions_check("k:.tar.gz:npy: x~", why,
					   sizeof(why)) == 0);
	CHECK(dsfs_layout_extensions_check(".Npy", why, sizeof(why)) ==
	      -EINVAL && strstr(why, "'.Npy' has capitals"));
	CHECK(dsfs_layout_extensions_check(".npy:", why, sizeof(why)) ==
	      -EINVAL && strstr(why, "an empty extension"));
	CHECK(dsfs_layout_extensions_check("", why, sizeof(why)) == -EINVAL);
	CHECK(dsfs_layout_extensions_check(".a\x01" "b", why, sizeof(why)) ==
	      -EINVAL && strstr(why, "'.a\\x01b'"));
	CHECK(dsfs_layout_extensions_check(".\xc3\xa9", why, sizeof(why)) ==
	      -EINVAL && strstr(why, "printable ASCII"));
	for (i = 0; i < 64; i++)
		p += sprintf(p, "%s%c", i ? ":" : "", 'a' + i % 26);
	CHECK(dsfs_layout_extensions_check(many, why, sizeof(why)) == 0);
	strcpy(p, ":z");
	CHECK(dsfs_layout_extensions_check(many, why, sizeof(why)) ==
	      -EINVAL && strstr(why, "more than 64"));
	fd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(dsfs_layout_build(fd, "data", DSFS_LAYOUT_SORTED, NULL,
				&(struct dsfs_layout_names){ .extensions = ".jpg" },
				&l, why, sizeof(why)) == -EINVAL &&
	      !l && strstr(why, "only to layout=imagefolder"));
	CHECK(dsfs_layout_build(fd, "data", DSFS_LAYOUT_IMAGEFOLDER, NULL,
				&(struct dsfs_layout_names){ .extensions = ".JPG" },
				&l, why, sizeof(why)) == -EINVAL && !l);
	close(fd);
}

/* suffix= and hidden=skip (sorted, walk): capitals allowed, compared as
 * given; refused for the other layouts.  (Their order is golden_layout.py's
 * against os.walk, glob and rglob.) */
static void test_suffix(void)
{
	struct dsfs_layout_names sfx = { .suffix = ".jpg:.JPEG" };
	struct dsfs_layout_names hid = { .skip_hidden = true };
	struct dsfs_layout *l = NULL;
	char why[256];
	int fd;

	CHECK(dsfs_layout_suffix_check(".JPG:x.Png", why, sizeof(why)) == 0);
	CHECK(dsfs_layout_suffix_check(".jpg::.png", why, sizeof(why)) ==
	      -EINVAL && strstr(why, "suffix=: an empty suffix"));
	CHECK(dsfs_layout_suffix_check("a/b", why, sizeof(why)) == -EINVAL &&
	      strstr(why, "separate suffixes with ':'"));
	fd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(dsfs_layout_build(fd, "data", DSFS_LAYOUT_IMAGEFOLDER, NULL,
				&sfx, &l, why, sizeof(why)) == -EINVAL && !l &&
	      strstr(why, "suffix= applies only"));
	CHECK(dsfs_layout_build(fd, "data", DSFS_LAYOUT_LIST, "/dev/null",
				&hid, &l, why, sizeof(why)) == -EINVAL && !l &&
	      strstr(why, "hidden=skip applies only"));
	CHECK(dsfs_layout_build(fd, "data", DSFS_LAYOUT_WALK, NULL, &sfx, &l,
				why, sizeof(why)) == 0 && l);
	dsfs_layout_free(l);
	close(fd);
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	return remove(path);
}

/*
 * concat: torch's ConcatDataset of data/ (built quick: pending sizes),
 * loops/ and data/ again: each part's samples in turn, below its
 * directory, sizes pending or not as they were, aliases kept, the
 * listings' counts added, data/'s second copy all duplicates (a lookup
 * gives the first); "." adds no prefix.
 */
static void test_concat(void)
{
	const char *dirs[] = { "data", "loops", "data" }, *dot[] = { "." };
	struct dsfs_layout *part[3] = { NULL }, *l = NULL;
	const struct dsfs_layout_info *in;
	char why[256], path[PATH_MAX];
	uint64_t i, idx;
	int fd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	CHECK(fd >= 0);
	CHECK(dsfs_layout_build_quick(fd, "data", DSFS_LAYOUT_IMAGEFOLDER,
				      NULL, NULL, &part[0], why,
				      sizeof(why)) == 0);
	CHECK(dsfs_layout_build(fd, "loops", DSFS_LAYOUT_IMAGEFOLDER, NULL,
				NULL, &part[1], why, sizeof(why)) == 0);
	part[2] = part[0];
	close(fd);
	if (!part[0] || !part[1])
		goto out;
	CHECK(dsfs_layout_concat((const struct dsfs_layout *const *)part,
				 dirs, 3, &l) == 0);
	if (!l)
		goto out;
	CHECK(dsfs_layout_count(l) == 2 * NWANT + 1);
	CHECK(dsfs_layout_kind(l) == DSFS_LAYOUT_IMAGEFOLDER);
	for (i = 0; i < dsfs_layout_count(l); i++) {
		unsigned k = i < NWANT ? 0 : i == NWANT ? 1 : 2;
		const struct dsfs_layout *p = part[k];
		uint64_t j = k == 0 ? i : k == 1 ? 0 : i - NWANT - 1;

		snprintf(path, sizeof(path), "%s/%s", dirs[k],
			 dsfs_layout_path(p, j));
		CHECK(!strcmp(dsfs_layout_path(l, i), path));
		CHECK(dsfs_layout_pending(l, i) == dsfs_layout_pending(p, j));
		CHECK(dsfs_layout_size(l, i) == dsfs_layout_size(p, j));
		CHECK(dsfs_layout_prefetchable(l, i) ==
		      dsfs_layout_prefetchable(p, j));
		CHECK((dsfs_layout_alias(l, i) == NULL) ==
		      (dsfs_layout_alias(p, j) == NULL));
		if (dsfs_layout_alias(p, j))
			CHECK(!strcmp(dsfs_layout_alias(l, i),
				      dsfs_layout_alias(p, j)));
	}
	CHECK(dsfs_layout_lookup(l, "data/c/z.jpg", &idx) == 0 && idx == 4);
	CHECK(dsfs_layout_lookup(l, "loops/l/1.jpg", &idx) == 0 &&
	      idx == NWANT);
	CHECK(dsfs_layout_lookup_in(l, ".", "data/e/1.jpg", &idx) == 0 &&
	      idx == NWANT - 1);
	CHECK(dsfs_layout_lookup(l, "c/z.jpg", &idx) == -ENOENT);
	CHECK(dsfs_layout_lookup_alias(l, "data/c/z.jpg", &idx) == 0 &&
	      !strcmp(dsfs_layout_path(l, idx), "data/c/lnk.jpg"));
	in = dsfs_layout_info(l);
	CHECK(in->duplicates == NWANT && in->loops == 5 && in->outside == 4);
	CHECK(in->aliases == 2 * dsfs_layout_info(part[0])->aliases);
	dsfs_layout_free(l);

	l = NULL;
	CHECK(dsfs_layout_concat((const struct dsfs_layout *const *)part, dot,
				 1, &l) == 0);
	if (l) {
		CHECK(dsfs_layout_count(l) == NWANT &&
		      !strcmp(dsfs_layout_path(l, 4), "c/z.jpg"));
		dsfs_layout_free(l);
	}
out:
	dsfs_layout_free(part[0]);
	dsfs_layout_free(part[1]);
}

/*
 * pick ROOT (a SOURCE of its own under tmp) with dataset= given or not and
 * the layout: whether dsfs_plan_list() picked train/ (1, else 0), the
 * samples the plan then has, and the warning's text (or "" without one).
 */
static int pick(const char *root, const char *dataset, const char *layout,
		uint64_t *count, char *warning, size_t size)
{
	struct dsfs_plan_opts o = { .sampler = "torch-random", .seed = "1" };
	struct dsfs_plan_cfg c;
	struct dsfs_layout *l = NULL;
	char path[PATH_MAX], why[256];
	int fd, ret = -1;

	o.dataset = (char *)dataset;
	o.layout = (char *)layout;
	snprintf(path, sizeof(path), "%s/%s", tmp, root);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(dsfs_plan_cfg_parse(&o, &c, why, sizeof(why)) == 0);
	CHECK(dsfs_plan_list(&o, &c, fd, true, &l, why, sizeof(why)) == 0);
	warning[0] = '\0';
	if (l) {
		ret = c.dataset_picked;
		*count = dsfs_layout_count(l);
		if (!dsfs_plan_layout_warning(&c, l, warning, size))
			warning[0] = '\0';
		CHECK(ret != 1 || (c.dataset_picked && o.dataset &&
				   !strcmp(o.dataset, "train") &&
				   !strcmp(c.dataset, "train") &&
				   !strcmp(c.dir, "train")));
		CHECK(ret == 1 || (!c.dataset_picked && o.dataset == dataset));
		if (ret == 1)
			free(o.dataset);
	}
	dsfs_layout_free(l);
	close(fd);
	return ret;
}

static void test_pick(void)
{
	static const char *const sets[] = {
		"sets/train/a/1.jpg", "sets/train/a/2.jpg", "sets/train/b/1.jpg",
		"sets/train/c/1.jpg", "sets/val/a/1.jpg", "sets/val/b/1.jpg",
		"other/a/x/1.jpg", "other/a/y/1.jpg", "other/b/x/1.jpg",
		"tiny/n1/images/1.jpg", "tiny/n2/images/1.jpg",
		"tiny/n3/images/1.jpg", "tiny/n3/images/2.jpg",
		"mixed/train/a/1.jpg", "mixed/train/b/1.jpg", "mixed/x/1.jpg",
	};
	char w[1024];
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
		put(tmp, sets[i], 3);
	/* imagenet/ holding train/ and val/, no dataset=: train/ it is. */
	CHECK(pick("sets", NULL, NULL, &n, w, sizeof(w)) == 1);
	CHECK(n == 4 && strstr(w, "dataset=train, not given"));
	/* dataset=. given: as given, with the warning that names train/. */
	CHECK(pick("sets", ".", NULL, &n, w, sizeof(w)) == 0);
	CHECK(n == 6 && strstr(w, "hold no image of their own") &&
	      strstr(w, "give it, as dataset=train;"));
	/* Under dataset=sets: the warning's dataset= is relative to SOURCE. */
	CHECK(pick(".", "sets", NULL, &n, w, sizeof(w)) == 0);
	CHECK(strstr(w, "as dataset=sets/train;") != NULL);
	/* Data sets but no train/: the warning alone, naming the first. */
	CHECK(pick("other", NULL, NULL, &n, w, sizeof(w)) == 0);
	CHECK(n == 3 && strstr(w, "(a/ is one)") &&
	      strstr(w, "as dataset=a;"));
	/* Classes of one directory of images each (Tiny ImageNet's
	 * n01443537/images/): an ImageFolder of its own. */
	CHECK(pick("tiny", NULL, NULL, &n, w, sizeof(w)) == 0);
	CHECK(n == 4 && !w[0]);
	/* A class with an image of its own: no directory of data sets. */
	CHECK(pick("mixed", NULL, NULL, &n, w, sizeof(w)) == 0);
	CHECK(n == 3 && !w[0]);
	/* Not an ImageFolder: nothing picked, no warning. */
	CHECK(pick("sets", NULL, "sorted", &n, w, sizeof(w)) == 0);
	CHECK(n == 6 && !w[0]);
}

int main(void)
{
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(src, sizeof(src), "%s/src", tmp);
	snprintf(outside, sizeof(outside), "%s/outside", tmp);
	mkdir(src, 0755);
	mkdir(outside, 0755);
	make_tree();
	test_strcmp();
	test_kinds();
	test_imagefolder();
	test_quick();
	test_sorted();
	test_list_good();
	test_list_bad();
	test_list_long();
	test_dataset_errors();
	test_extensions();
	test_suffix();
	test_concat();
	test_pick();
	nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return UNIT_DONE();
}
