// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz-list: the list layout's parser (layout=list) against hostile list
 * files.  The input is the list file; the dataset is a fixed tree made once
 * per process: files (ASCII, UTF-8 and invalid UTF-8 names), directories,
 * a fifo, and symlinks that stay inside ds/, leave it for the rest of
 * SOURCE, leave SOURCE (relative and absolute), dangle or loop.
 *
 * Each input is also judged line by line by a model written here from
 * layout.h's contract alone: a line is refused when it holds a NUL or a CR
 * (but for CRLF), is empty, PATH_MAX bytes or longer, absolute, ends in '/',
 * has a ".." component or names the dataset itself, or when its path,
 * "."/empty components dropped, names nothing or a directory.
 * Invariants:
 *  - refused exactly when the model finds a bad line (or no line at all),
 *    with a one-line reason naming the first bad line ("line N:");
 *  - accepted: one sample per line, in order, the normalised path, size and
 *    prefetchability of what the path reaches (prefetchable: a regular file
 *    reached without a symlink leaving SOURCE), lookup() giving the first
 *    line of each path, the duplicates counted;
 *  - memory bounded by the result: path bytes + 28 bytes per sample + a
 *    constant, whatever the input (a 1 MiB line, a million lines).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "layout.h"

static char root[PATH_MAX], list[PATH_MAX];
static int root_fd = -1, ds_fd = -1;

/* The fixture: ds/ inside root/ (SOURCE), with neighbours outside. */
static void setup(void)
{
	static const char *const files[] = {
		"root/ds/a.jpg", "root/ds/b/c.png", "root/ds/b/d/e.JPG",
		"root/ds/sp ace.jpg", "root/ds/\xc3\xa9.png",
		"root/ds/\xff.jpg", "root/ds/.hidden", "root/other.jpg",
		"outside.jpg", "odir/o.jpg",
	};
	/* link, target ("@" + path: absolute, below the temp dir) */
	static const char *const links[][2] = {
		{ "root/ds/in", "a.jpg" }, { "root/ds/bl", "b" },
		{ "root/ds/b/back", "../a.jpg" },
		{ "root/ds/b/d/deep", "../../bl/c.png" },
		{ "root/ds/up", "../other.jpg" },
		{ "root/ds/out", "../../outside.jpg" },
		{ "root/ds/outdir", "../../odir" },
		{ "root/ds/abs", "@root/ds/a.jpg" },
		{ "root/ds/absdir", "@root/ds/b" },
		{ "root/ds/broken", "nowhere" }, { "root/ds/loop", "loop" },
	};
	static const char *const dirs[] = { "root", "root/ds", "root/ds/b",
					    "root/ds/b/d", "root/ds/dir",
					    "odir" };
	const char *tmp = fuzz_tmpdir("list");
	char path[PATH_MAX], target[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp, dirs[i]);
		FUZZ_CHECK(!mkdir(path, 0755), "mkdir %s", path);
	}
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp, files[i]);
		fuzz_write(path, "0123456789", i);
	}
	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tmp, links[i][0]);
		if (links[i][1][0] == '@')
			snprintf(target, sizeof(target), "%s/%s", tmp,
				 links[i][1] + 1);
		else
			snprintf(target, sizeof(target), "%s", links[i][1]);
		FUZZ_CHECK(!symlink(target, path), "symlink %s", path);
	}
	snprintf(path, sizeof(path), "%s/root/ds/fifo", tmp);
	FUZZ_CHECK(!mkfifo(path, 0644), "mkfifo %s", path);
	snprintf(root, sizeof(root), "%s/root", tmp);
	snprintf(list, sizeof(list), "%s/list", tmp);
	root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ds_fd = openat(root_fd, "ds", O_PATH | O_DIRECTORY | O_CLOEXEC);
	FUZZ_CHECK(root_fd >= 0 && ds_fd >= 0, "open %s", root);
}

/* The model's view of one line. */
struct line {
	bool bad;
	bool prefetch;
	uint64_t size;
	char *path;		/* normalised; malloc'd */
};

/* The normalised path of a syntactically good line, or bad. */
static void model_syntax(const char *s, size_t len, struct line *m)
{
	static char path[PATH_MAX];
	size_t i = 0, n, o = 0;

	if (len && s[len - 1] == '\r')
		len--;
	m->bad = !len || len >= PATH_MAX || memchr(s, '\0', len) ||
		 memchr(s, '\r', len) || s[0] == '/' || s[len - 1] == '/';
	while (!m->bad && i < len) {
		const char *c = s + i, *e = memchr(c, '/', len - i);

		n = e ? (size_t)(e - c) : len - i;
		i += n + 1;
		if (!n || (n == 1 && c[0] == '.'))
			continue;
		m->bad = n == 2 && c[0] == '.' && c[1] == '.';
		if (o)
			path[o++] = '/';
		memcpy(path + o, c, n);
		o += n;
	}
	path[o] = '\0';
	m->bad = m->bad || !o;
	m->path = strdup(path);
	FUZZ_CHECK(m->path, "out of memory");
}

/* What the path reaches; in the fixture only these links leave SOURCE. */
static void model_target(struct line *m)
{
	static const char *const leaving[] = { "out", "outdir", "abs",
					       "absdir" };
	size_t first = strcspn(m->path, "/"), i;
	struct stat st;

	if (fstatat(ds_fd, m->path, &st, 0) || S_ISDIR(st.st_mode)) {
		m->bad = true;
		return;
	}
	m->prefetch = S_ISREG(st.st_mode);
	for (i = 0; i < sizeof(leaving) / sizeof(leaving[0]); i++) {
		if (strlen(leaving[i]) == first &&
		    !memcmp(m->path, leaving[i], first))
			m->prefetch = false;
	}
	m->size = m->prefetch ? (uint64_t)st.st_size : 0;
}

static void check_refusal(const char *why, uint64_t bad_line)
{
	char want[PATH_MAX + 64];

	FUZZ_CHECK(why[0] && !strchr(why, '\n'), "reason '%s'", why);
	if (bad_line)
		snprintf(want, sizeof(want), "list=%s line %llu: ", list,
			 (unsigned long long)bad_line);
	else
		snprintf(want, sizeof(want), "list=%s: empty;", list);
	FUZZ_CHECK(!strncmp(why, want, strlen(want)),
		   "'%s' does not start '%s'", why, want);
}

/* What a layout of n samples with path_bytes of paths may hold: 12 bytes a
 * sample, its lookup slots at load 1/4 at worst (16), and for the samples
 * reached through a link, their resolved paths, 16 bytes of their own
 * table's slots each, and 4 bytes a sample to find them. */
static size_t memory_bound(const struct dsfs_layout *l, uint64_t n,
			   size_t path_bytes)
{
	size_t bound = 1024 + path_bytes + 28 * n + 64, linked = 0;
	const char *a;
	uint64_t i;

	for (i = 0; i < n; i++) {
		if ((a = dsfs_layout_alias(l, i))) {
			bound += strlen(a) + 1 + 16;
			linked++;
		}
	}
	return bound + (linked ? 4 * n : 0);
}

static void check_layout(const struct dsfs_layout *l, const struct line *m,
			 uint64_t n, size_t path_bytes)
{
	uint64_t i, j, dup = 0;

	FUZZ_CHECK(dsfs_layout_count(l) == n, "%llu samples for %llu lines",
		   (unsigned long long)dsfs_layout_count(l),
		   (unsigned long long)n);
	for (i = 0; i < n; i++) {
		FUZZ_CHECK(!strcmp(dsfs_layout_path(l, i), m[i].path),
			   "line %llu: '%s', want '%s'", (unsigned long long)i + 1,
			   dsfs_layout_path(l, i), m[i].path);
		FUZZ_CHECK(dsfs_layout_prefetchable(l, i) == m[i].prefetch &&
				   dsfs_layout_size(l, i) == m[i].size,
			   "%s: prefetch %d size %llu", m[i].path,
			   dsfs_layout_prefetchable(l, i),
			   (unsigned long long)dsfs_layout_size(l, i));
		FUZZ_CHECK(!dsfs_layout_lookup(l, m[i].path, &j) && j <= i &&
				   !strcmp(m[j].path, m[i].path),
			   "lookup %s", m[i].path);
		dup += j < i;
	}
	FUZZ_CHECK(dsfs_layout_info(l)->duplicates == dup, "%llu duplicates",
		   (unsigned long long)dsfs_layout_info(l)->duplicates);
	FUZZ_CHECK(dsfs_layout_memory(l) <= memory_bound(l, n, path_bytes),
		   "%zu bytes for %llu samples", dsfs_layout_memory(l),
		   (unsigned long long)n);
}

/* The model of the whole file: lines up to the first bad one.  *n lines. */
static struct line *model(const char *p, size_t size, uint64_t *n,
			  uint64_t *bad, size_t *path_bytes)
{
	const char *end = p + size, *nl;
	struct line *m = calloc(1, sizeof(*m));
	size_t cap = 1;

	FUZZ_CHECK(m, "out of memory");
	for (*n = *bad = *path_bytes = 0; p < end && !*bad; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (*n == cap) {
			m = realloc(m, (cap *= 2) * sizeof(*m));
			FUZZ_CHECK(m, "out of memory");
		}
		memset(&m[*n], 0, sizeof(m[*n]));
		model_syntax(p, nl ? (size_t)(nl - p) : (size_t)(end - p),
			     &m[*n]);
		if (!m[*n].bad)
			model_target(&m[*n]);
		*path_bytes += strlen(m[*n].path) + 1;
		if (m[(*n)++].bad)
			*bad = *n;
		if (!nl)
			break;
	}
	return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dsfs_layout *l = NULL;
	uint64_t n, bad, i;
	size_t path_bytes;
	struct line *m;
	char why[512];
	int err;

	if (root_fd < 0)
		setup();
	m = model((const char *)data, size, &n, &bad, &path_bytes);
	fuzz_write(list, data, size);
	err = dsfs_layout_build(root_fd, "ds", DSFS_LAYOUT_LIST, list, NULL,
				&l, why, sizeof(why));
	if (bad || !n) {
		FUZZ_CHECK(err && !l, "accepted, but line %llu is bad",
			   (unsigned long long)bad);
		check_refusal(why, bad);
	} else {
		FUZZ_CHECK(!err, "refused: %s", why);
		check_layout(l, m, n, path_bytes);
	}
	dsfs_layout_free(l);
	for (i = 0; i < n; i++)
		free(m[i].path);
	free(m);
	return 0;
}
