// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * readcheck: compare a backing tree with its dsfs view; exit 0 only if they
 * are equal, printing every mismatch ("MISMATCH path: what") on stdout.
 *
 *   readcheck tree BACKING MNT
 *	walk BACKING (nftw, FTW_PHYS: links are never followed); for each
 *	entry lstat both sides and compare type, mode, size, uid, gid, st_ino,
 *	mtime and nlink; regular files byte for byte with read(2); symlinks
 *	by readlink; directories by their sets of names ("." and ".."
 *	included), so the mount neither adds nor hides anything.  Files are
 *	read 1 MiB a read(2), or READCHECK_CHUNK bytes.
 *   readcheck random BACKING MNT THREADS ITERS
 *	THREADS threads each do ITERS random preads (1 byte to 2 MiB, at
 *	offsets inside, across and past end of file, and near page and 128 KiB
 *	boundaries) on the same file through MNT and BACKING; the returned
 *	lengths and bytes must be equal.  A quarter of the mount's opens
 *	are O_DIRECT (no page cache: every pread is a READ to the daemon,
 *	aligned or not, as FUSE allows).  Seeded, so runs repeat; the
 *	environment may set READCHECK_SEED (mixed into every thread's seed,
 *	so parallel runs differ) and READCHECK_SECONDS (stop after that long
 *	even if ITERS are not done).
 *   readcheck mmap BACKING MNT
 *	mmap every non-empty regular file through MNT (PROT_READ), privately
 *	and shared, and memcmp both with the backing file, mapped privately.
 *   readcheck seekdir BACKING MNT
 *	list the directory MNT with telldir(3) before each entry (the names
 *	must be BACKING's), then seekdir(3) back to every third position,
 *	last first, and readdir must give that position's entry again: once
 *	from the kernel's cached listing, once after a drop of the page
 *	cache (the offsets dsfs gave, read on from the backing directory).
 *
 * Threads: main walks the tree; in random mode the workers share only the
 * read-only file list and an atomic mismatch counter.  nftw() takes no
 * user pointer, so the walk's state is file-scope (set before the walk).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1u << 20)
#define MAX_LEN (2u << 20)
#ifndef MAX_REPORTS
#define MAX_REPORTS 50 /* per run (random: per thread), then only counted */
#endif

struct counts {
	uint64_t files, dirs, links, other, bytes, mismatches;
};

struct file_ent {
	char *rel;		/* path below BACKING, with a leading '/' */
	off_t size;
};

/* The walk's state: set up by main(); after that only the main thread's
 * nftw() callbacks write it, and random-mode workers only read `files`. */
static struct {
	const char *backing, *mnt;
	size_t backing_len;
	struct counts n;
	char *buf_b, *buf_m;	/* CHUNK each, for tree mode */
	size_t chunk;		/* tree mode's read(2) size: CHUNK, or
				   READCHECK_CHUNK bytes */
	struct file_ent *files;	/* random mode: the regular files */
	size_t nfiles, cap;
} walk;

static void mismatch(const char *rel, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void mismatch(const char *rel, const char *fmt, ...)
{
	va_list ap;

	if (walk.n.mismatches++ >= MAX_REPORTS)
		return;
	printf("MISMATCH %s: ", *rel ? rel : "/");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static int mnt_path(const char *fpath, char *out, size_t size)
{
	int n = snprintf(out, size, "%s%s", walk.mnt, fpath + walk.backing_len);

	return n < 0 || (size_t)n >= size ? -1 : 0;
}

#define CMP_FIELD(f, fmt, cast)                                               \
	do {                                                                  \
		if (b->f != m->f)                                             \
			mismatch(rel, #f " " fmt " (backing) != " fmt        \
				 " (mount)", (cast)b->f, (cast)m->f);         \
	} while (0)

static void compare_stat(const char *rel, const struct stat *b,
			 const struct stat *m)
{
	CMP_FIELD(st_mode, "%#o", unsigned);
	CMP_FIELD(st_size, "%jd", intmax_t);
	CMP_FIELD(st_uid, "%u", unsigned);
	CMP_FIELD(st_gid, "%u", unsigned);
	CMP_FIELD(st_ino, "%ju", uintmax_t);
	CMP_FIELD(st_nlink, "%ju", uintmax_t);
	CMP_FIELD(st_mtim.tv_sec, "%jd", intmax_t);
	CMP_FIELD(st_mtim.tv_nsec, "%ld", long);
}

/* Read up to size bytes (short only at end of file): n, or -1. */
static ssize_t read_full(int fd, char *buf, size_t size)
{
	size_t done = 0;

	while (done < size) {
		ssize_t n = read(fd, buf + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static size_t first_diff(const char *a, const char *b, size_t n)
{
	size_t i = 0;

	while (i < n && a[i] == b[i])
		i++;
	return i;
}

static void compare_file(const char *rel, const char *bpath,
			 const char *mpath)
{
	int fb = open(bpath, O_RDONLY | O_CLOEXEC);
	int fm = open(mpath, O_RDONLY | O_CLOEXEC);
	uint64_t off = 0;

	if (fb < 0 || fm < 0) {
		mismatch(rel, "open %s: %s", fb < 0 ? "backing" : "mount",
			 strerror(errno));
		goto out;
	}
	for (;;) {
		ssize_t nb = read_full(fb, walk.buf_b, walk.chunk);
		ssize_t nm = read_full(fm, walk.buf_m, walk.chunk);

		if (nb < 0 || nm < 0) {
			mismatch(rel, "read %s at %" PRIu64 ": %s",
				 nb < 0 ? "backing" : "mount", off,
				 strerror(errno));
			break;
		}
		if (nb != nm) {
			mismatch(rel, "read at %" PRIu64 ": %zd bytes (backing) != %zd (mount)",
				 off, nb, nm);
			break;
		}
		if (memcmp(walk.buf_b, walk.buf_m, (size_t)nb)) {
			mismatch(rel, "content differs at byte %" PRIu64,
				 off + first_diff(walk.buf_b, walk.buf_m,
						  (size_t)nb));
			break;
		}
		off += (uint64_t)nb;
		walk.n.bytes += (uint64_t)nb;
		if (nb == 0)
			break;
	}
out:
	if (fb >= 0)
		close(fb);
	if (fm >= 0)
		close(fm);
}

static void compare_link(const char *rel, const char *bpath,
			 const char *mpath)
{
	char lb[PATH_MAX + 1], lm[PATH_MAX + 1];
	ssize_t nb = readlink(bpath, lb, PATH_MAX);
	ssize_t nm = readlink(mpath, lm, PATH_MAX);

	if (nb < 0 || nm < 0) {
		mismatch(rel, "readlink %s: %s", nb < 0 ? "backing" : "mount",
			 strerror(errno));
		return;
	}
	lb[nb] = lm[nm] = '\0';
	if (strcmp(lb, lm))
		mismatch(rel, "link target '%s' (backing) != '%s' (mount)", lb,
			 lm);
}

struct names {
	char **v;
	size_t n, cap;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void names_free(struct names *s)
{
	while (s->n)
		free(s->v[--s->n]);
	free(s->v);
}

/* Every name left in d, in its order; with pos, also each one's telldir()
 * before it (*pos grown with s->v).  0 or -1 (errno set). */
static int collect(DIR *d, struct names *s, long **pos)
{
	struct dirent *e;
	long at;

	for (;;) {
		at = telldir(d);
		errno = 0;
		if (!(e = readdir(d)))
			return errno ? -1 : 0;
		if (s->n == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 64;
			s->v = realloc(s->v, s->cap * sizeof(*s->v));
			if (!s->v || (pos && !(*pos = realloc(*pos, s->cap *
							   sizeof(**pos)))))
				abort();
		}
		if (pos)
			(*pos)[s->n] = at;
		if (!(s->v[s->n++] = strdup(e->d_name)))
			abort();
	}
}

/* All names in dir, sorted; 0 or -1 (errno set). */
static int read_names(const char *dir, struct names *s)
{
	DIR *d = opendir(dir);

	if (!d)
		return -1;
	if (collect(d, s, NULL)) {
		int err = errno;

		closedir(d);
		errno = err;
		return -1;
	}
	closedir(d);
	qsort(s->v, s->n, sizeof(*s->v), cmp_str);
	return 0;
}

static void compare_dir(const char *rel, const char *bpath,
			const char *mpath)
{
	struct names b = { 0 }, m = { 0 };
	size_t i = 0, j = 0;

	if (read_names(bpath, &b) || read_names(mpath, &m)) {
		mismatch(rel, "readdir: %s", strerror(errno));
		goto out;
	}
	while (i < b.n || j < m.n) {
		int c = i == b.n ? 1 : j == m.n ? -1 : strcmp(b.v[i], m.v[j]);

		if (c < 0)
			mismatch(rel, "name '%s' missing from the mount", b.v[i++]);
		else if (c > 0)
			mismatch(rel, "name '%s' only in the mount", m.v[j++]);
		else
			i++, j++;
	}
out:
	names_free(&b);
	names_free(&m);
}

static int tree_entry(const char *fpath, const struct stat *sb, int flag,
		      struct FTW *ftw)
{
	const char *rel = fpath + walk.backing_len;
	char mpath[PATH_MAX];
	struct stat ms;

	(void)ftw;
	if (flag == FTW_NS || flag == FTW_DNR) {
		mismatch(rel, "cannot %s the backing entry",
			 flag == FTW_NS ? "stat" : "read");
		return 0;
	}
	if (mnt_path(fpath, mpath, sizeof(mpath))) {
		mismatch(rel, "path too long");
		return 0;
	}
	if (lstat(mpath, &ms) < 0) {
		mismatch(rel, "lstat through the mount: %s", strerror(errno));
		return 0;
	}
	if ((sb->st_mode & S_IFMT) != (ms.st_mode & S_IFMT)) {
		mismatch(rel, "type %#o (backing) != %#o (mount)",
			 sb->st_mode & S_IFMT, ms.st_mode & S_IFMT);
		return 0;
	}
	compare_stat(rel, sb, &ms);
	if (S_ISREG(sb->st_mode)) {
		walk.n.files++;
		compare_file(rel, fpath, mpath);
	} else if (S_ISLNK(sb->st_mode)) {
		walk.n.links++;
		compare_link(rel, fpath, mpath);
	} else if (S_ISDIR(sb->st_mode)) {
		walk.n.dirs++;
		compare_dir(rel, fpath, mpath);
	} else {
		walk.n.other++;
	}
	return 0;
}

static int cmd_tree(void)
{
	const char *chunk = getenv("READCHECK_CHUNK");

	walk.chunk = chunk ? strtoul(chunk, NULL, 0) : CHUNK;
	if (walk.chunk < 1 || walk.chunk > CHUNK) {
		fprintf(stderr, "readcheck: READCHECK_CHUNK=%s: 1 to %u\n",
			chunk, CHUNK);
		return 2;
	}
	walk.buf_b = malloc(CHUNK);
	walk.buf_m = malloc(CHUNK);
	if (!walk.buf_b || !walk.buf_m)
		return 2;
	if (nftw(walk.backing, tree_entry, 64, FTW_PHYS) != 0) {
		perror("readcheck: nftw");
		return 2;
	}
	printf("tree: %" PRIu64 " files, %" PRIu64 " dirs, %" PRIu64
	       " symlinks, %" PRIu64 " other, %" PRIu64
	       " bytes compared, %" PRIu64 " mismatches\n",
	       walk.n.files, walk.n.dirs, walk.n.links, walk.n.other,
	       walk.n.bytes, walk.n.mismatches);
	free(walk.buf_b);
	free(walk.buf_m);
	return walk.n.mismatches ? 1 : 0;
}

static int collect_file(const char *fpath, const struct stat *sb, int flag,
			struct FTW *ftw)
{
	(void)ftw;
	if (flag != FTW_F || !S_ISREG(sb->st_mode))
		return 0;
	if (walk.nfiles == walk.cap) {
		walk.cap = walk.cap ? 2 * walk.cap : 256;
		walk.files = realloc(walk.files, walk.cap * sizeof(*walk.files));
		if (!walk.files)
			return -1;
	}
	walk.files[walk.nfiles].rel = strdup(fpath + walk.backing_len);
	walk.files[walk.nfiles].size = sb->st_size;
	if (!walk.files[walk.nfiles++].rel)
		return -1;
	return 0;
}

static int collect_files(void)
{
	if (nftw(walk.backing, collect_file, 64, FTW_PHYS) != 0) {
		perror("readcheck: nftw");
		return -1;
	}
	if (!walk.nfiles) {
		fprintf(stderr, "readcheck: no regular files under %s\n",
			walk.backing);
		return -1;
	}
	return 0;
}

static void free_files(void)
{
	while (walk.nfiles)
		free(walk.files[--walk.nfiles].rel);
	free(walk.files);
}

/* ---- random mode ---- */

struct worker {
	pthread_t tid;
	unsigned id;
	uint64_t iters, rng, ops, bytes, mismatches;
	char *buf_b, *buf_m;
};

static uint64_t rnd(struct worker *w)
{
	uint64_t x = w->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return w->rng = x;
}

/* A length from 1 byte to 2 MiB, log-uniform so small reads are common. */
static size_t rnd_len(struct worker *w)
{
	unsigned bits = (unsigned)(rnd(w) % 22);

	return 1 + (size_t)(rnd(w) % (1ull << bits));
}

/* An offset inside, across or past the end of a file of size sz. */
static off_t rnd_off(struct worker *w, uint64_t sz, size_t len)
{
	uint64_t r = rnd(w);

	switch (r % 8) {
	case 0: /* ends past EOF */
		return (off_t)(sz > len ? sz - rnd(w) % len : 0);
	case 1: /* starts at or past EOF */
		return (off_t)(sz + rnd(w) % (1u << 20) * (r % 3 == 0 ? 0 : 1));
	case 2: /* at a page boundary, or one byte either side */
	case 3: { /* at a 128 KiB boundary, likewise */
		uint64_t unit = r % 8 == 2 ? 4096 : 128 << 10;
		uint64_t base = rnd(w) % (sz / unit + 2) * unit;
		int64_t adj = (int64_t)(rnd(w) % 3) - 1;

		return (off_t)(base == 0 && adj < 0 ? 0 : base + (uint64_t)adj);
	}
	default:
		return (off_t)(rnd(w) % (sz + 1));
	}
}

static void worker_mismatch(struct worker *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void worker_mismatch(struct worker *w, const char *fmt, ...)
{
	va_list ap;

	if (w->mismatches++ >= MAX_REPORTS)
		return;
	flockfile(stdout);
	printf("MISMATCH [thread %u] ", w->id);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	funlockfile(stdout);
}

static void random_op(struct worker *w)
{
	const struct file_ent *f = &walk.files[rnd(w) % walk.nfiles];
	size_t len = rnd_len(w);
	off_t off = rnd_off(w, (uint64_t)f->size, len);
	char bpath[PATH_MAX], mpath[PATH_MAX];
	ssize_t nb, nm;
	int fb, fm;

	snprintf(bpath, sizeof(bpath), "%s%s", walk.backing, f->rel);
	snprintf(mpath, sizeof(mpath), "%s%s", walk.mnt, f->rel);
	fb = open(bpath, O_RDONLY | O_CLOEXEC);
	fm = open(mpath, O_RDONLY | O_CLOEXEC | (rnd(w) % 4 ? 0 : O_DIRECT));
	if (fb < 0 || fm < 0) {
		worker_mismatch(w, "%s: open %s: %s", f->rel,
				fb < 0 ? "backing" : "mount", strerror(errno));
		goto out;
	}
	nb = pread(fb, w->buf_b, len, off);
	nm = pread(fm, w->buf_m, len, off);
	w->ops++;
	if (nb != nm)
		worker_mismatch(w, "%s: pread(%zu, %jd) returned %zd (backing) != %zd (mount)",
				f->rel, len, (intmax_t)off, nb, nm);
	else if (nb > 0 && memcmp(w->buf_b, w->buf_m, (size_t)nb))
		worker_mismatch(w, "%s: pread(%zu, %jd) differs at byte %jd",
				f->rel, len, (intmax_t)off,
				(intmax_t)off + (intmax_t)first_diff(w->buf_b, w->buf_m, (size_t)nb));
	else if (nb > 0)
		w->bytes += (uint64_t)nb;
out:
	if (fb >= 0)
		close(fb);
	if (fm >= 0)
		close(fm);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *worker_main(void *arg)
{
	const char *secs = getenv("READCHECK_SECONDS");
	double end = secs ? now_s() + strtod(secs, NULL) : 0;
	struct worker *w = arg;
	uint64_t i;

	for (i = 0; i < w->iters && (!secs || now_s() < end); i++)
		random_op(w);
	return NULL;
}

static int cmd_random(unsigned nthreads, uint64_t iters)
{
	struct worker *w = calloc(nthreads, sizeof(*w));
	uint64_t ops = 0, bytes = 0, bad = 0;
	unsigned i, started = 0;
	int ret = 2;

	if (!w || collect_files())
		goto out;
	for (i = 0; i < nthreads; i++) {
		w[i].id = i;
		w[i].iters = iters;
		w[i].rng = (0x9e3779b97f4a7c15ull * (i + 1) ^
			    strtoull(getenv("READCHECK_SEED") ?
				     getenv("READCHECK_SEED") : "0", NULL, 0) *
			    0xbf58476d1ce4e5b9ull) | 1;
		w[i].buf_b = malloc(MAX_LEN);
		w[i].buf_m = malloc(MAX_LEN);
		if (!w[i].buf_b || !w[i].buf_m ||
		    pthread_create(&w[i].tid, NULL, worker_main, &w[i])) {
			fprintf(stderr, "readcheck: cannot start thread %u\n", i);
			break;
		}
		started++;
	}
	for (i = 0; i < started; i++) {
		pthread_join(w[i].tid, NULL);
		ops += w[i].ops;
		bytes += w[i].bytes;
		bad += w[i].mismatches;
	}
	if (started == nthreads) {
		printf("random: %u threads, %" PRIu64 " preads over %zu files, %"
		       PRIu64 " bytes compared, %" PRIu64 " mismatches\n",
		       nthreads, ops, walk.nfiles, bytes, bad);
		ret = bad ? 1 : 0;
	}
out:
	for (i = 0; w && i < nthreads; i++) {
		free(w[i].buf_b);
		free(w[i].buf_m);
	}
	free(w);
	free_files();
	return ret;
}

/* ---- mmap mode ---- */

static void *map_file(const char *path, size_t size, int flags)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *p;

	if (fd < 0)
		return MAP_FAILED;
	p = mmap(NULL, size, PROT_READ, flags, fd, 0);
	close(fd);
	return p;
}

/* The mount's file mapped with flags against the backing bytes at pb. */
static void check_map(const struct file_ent *f, const char *mpath,
		      const char *pb, size_t size, int flags, uint64_t *bytes)
{
	const char *kind = flags == MAP_SHARED ? "shared" : "private";
	char *pm = map_file(mpath, size, flags);

	if (pm == MAP_FAILED) {
		mismatch(f->rel, "mmap %s of the mount: %s", kind,
			 strerror(errno));
		return;
	}
	if (memcmp(pb, pm, size))
		mismatch(f->rel, "%s mapping differs at byte %zu", kind,
			 first_diff(pb, pm, size));
	else
		*bytes += size;
	munmap(pm, size);
}

static int cmd_mmap(void)
{
	uint64_t mapped = 0, bytes = 0;
	size_t i;

	if (collect_files())
		return 2;
	for (i = 0; i < walk.nfiles; i++) {
		const struct file_ent *f = &walk.files[i];
		size_t size = (size_t)f->size;
		char bpath[PATH_MAX], mpath[PATH_MAX];
		char *pb;

		if (!size)
			continue;
		snprintf(bpath, sizeof(bpath), "%s%s", walk.backing, f->rel);
		snprintf(mpath, sizeof(mpath), "%s%s", walk.mnt, f->rel);
		pb = map_file(bpath, size, MAP_PRIVATE);
		if (pb == MAP_FAILED) {
			mismatch(f->rel, "mmap of the backing file: %s",
				 strerror(errno));
			continue;
		}
		check_map(f, mpath, pb, size, MAP_PRIVATE, &bytes);
		check_map(f, mpath, pb, size, MAP_SHARED, &bytes);
		munmap(pb, size);
		mapped++;
	}
	printf("mmap: %" PRIu64 " files mapped privately and shared, %" PRIu64
	       " bytes compared, %" PRIu64 " mismatches\n",
	       mapped, bytes, walk.n.mismatches);
	free_files();
	return walk.n.mismatches ? 1 : 0;
}

/* One pass of seekdir checks over the recorded positions; mismatches. */
static uint64_t seek_back(DIR *d, const long *pos, char *const *names,
			  size_t n, const char *when)
{
	uint64_t bad = 0;
	struct dirent *e;
	size_t i;

	for (i = n; i-- > 0;) {
		if (i % 3)
			continue;
		seekdir(d, pos[i]);
		e = readdir(d);
		if (!e || strcmp(e->d_name, names[i])) {
			mismatch("", "seekdir to entry %zu (%s): %s, expected %s",
				 i, when, e ? e->d_name : "end", names[i]);
			bad++;
		}
	}
	return bad;
}

static int cmd_seekdir(void)
{
	struct names m = { 0 };
	long *pos = NULL;
	uint64_t bad = 0;
	DIR *d;
	int fd;

	compare_dir("", walk.backing, walk.mnt);
	d = opendir(walk.mnt);
	if (!d) {
		mismatch("", "opendir: %s", strerror(errno));
		return 1;
	}
	if (collect(d, &m, &pos))
		mismatch("", "readdir: %s", strerror(errno));
	bad += seek_back(d, pos, m.v, m.n, "cached");
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0 || write(fd, "1", 1) != 1)
		mismatch("", "cannot drop the page cache: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	bad += seek_back(d, pos, m.v, m.n, "page cache dropped");
	closedir(d);
	printf("seekdir: %zu entries, %" PRIu64 " seeks wrong\n", m.n, bad);
	names_free(&m);
	free(pos);
	return walk.n.mismatches ? 1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: readcheck tree BACKING MNT\n"
			"       readcheck random BACKING MNT THREADS ITERS\n"
			"       readcheck mmap BACKING MNT\n"
			"       readcheck seekdir BACKING MNT\n");
	return 2;
}

/* "dir/" and "dir" name the same tree; keep "/" as it is. */
static char *strip_slashes(char *path)
{
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
	return path;
}

static int parse_num(const char *s, uint64_t max, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || !*s || *end || *s == '-' || !*out || *out > max ? -1 : 0;
}

int main(int argc, char **argv)
{
	uint64_t threads, iters;
	int ret;

	if (argc < 4)
		return usage();
	walk.backing = strip_slashes(argv[2]);
	walk.mnt = strip_slashes(argv[3]);
	walk.backing_len = strlen(walk.backing);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "tree") && argc == 4) {
		ret = cmd_tree();
	} else if (!strcmp(argv[1], "mmap") && argc == 4) {
		ret = cmd_mmap();
	} else if (!strcmp(argv[1], "seekdir") && argc == 4) {
		ret = cmd_seekdir();
	} else if (!strcmp(argv[1], "random") && argc == 6) {
		if (parse_num(argv[4], 1024, &threads) ||
		    parse_num(argv[5], UINT64_MAX, &iters))
			return usage();
		ret = cmd_random((unsigned)threads, iters);
	} else {
		return usage();
	}
	if (walk.n.mismatches > MAX_REPORTS)
		printf("(%" PRIu64 " mismatches, first %d shown)\n",
		       walk.n.mismatches, MAX_REPORTS);
	return ret;
}
