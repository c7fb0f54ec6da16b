// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Warming SOURCE's inodes ahead of the loader's first listing, and keeping
 * what the warm-up learnt for that listing.
 *
 * A loader's first epoch starts with a listing of its data set (ImageFolder
 * walks every class directory), and on dsfs each READDIRPLUS stats every
 * entry it returns, one request after the other.  After a cold start
 * (a reboot, a dropped page cache, another job's data) those stats read
 * the backing filesystem's inodes from the volume, each read waited for
 * in turn, while the raw filesystem's listing (getdents alone) touches no
 * inode.  With a plan, dsfs knows every file the loader will list, so from
 * the mount on a few threads stat them in about the layout's order
 * (ImageFolder's and a sorted tree's: the order a loader lists its
 * directories in), one fstatat(AT_SYMLINK_NOFOLLOW) each through an
 * O_PATH fd of its directory (a dsfs_layout_scan, which resolves it
 * beneath SOURCE as the layout's build does), and the listing finds them
 * in memory.  On 25,000 files of 110 KiB, a cold planned mount listed and
 * read by one thread (4 runs each, in turns): the listing took 0.52 to
 * 0.67 s instead of 0.84 to 0.94 s, the whole run 6,918 to 8,060 files/s
 * instead of 6,664 to 7,486.
 *
 * Each stat, and the file's generation (dsfs_ident_gen), is also kept, one
 * record per sample (struct warm_rec, 104 bytes, for at most WARM_RECS_MAX
 * samples), and the listing's READDIRPLUS answers from it instead of making
 * both calls again (dsfs_warm_entry).  A record is dated with a mark of
 * SOURCE's changes taken before its stat (dsfs_fresh_mark), and used only
 * while the change watch shows nothing on SOURCE's filesystem changed since
 * (dsfs_fresh_settled_at): then the name still leads to that inode and its
 * attributes are those the stat saw.  Any change anywhere on that
 * filesystem, or no watch at all, and the listing stats every name itself.
 * A record serves one listing: the first to reach its name takes it,
 * usable or not (a later listing stats the name itself), and the memory
 * of every RECS_PART samples' records goes back to the system once all of
 * them are taken or known never to be made: a loader's first listing of
 * the data set leaves none (dsfs-stats's warm_bytes), and the inodes that
 * listing gives the kernel and the daemon take their place instead of
 * adding to them.  On 50,000 files, listed by one thread once
 * the warm-up was done: 0.27 and 0.29 s instead of 0.50 s; in a cold run of
 * one reader thread that lists right after a drop of the page cache, the
 * warm-up under way (5 pairs, in turns): the listing 0.55 to 0.61 s instead
 * of 0.67 to 0.75 s, while the whole run, bound by the fetch and the
 * copies that the listing overlaps, took as long (2.8 to 3.3 s both).
 *
 * Threads: WARM_THREADS of a dsfs_layout_scan ("dsfs-warm"), started
 * after the scheduler and joined before the layout is freed; they write
 * the `warmed` counter and each its own samples' records, each published
 * by a release compare-and-swap of its state.  dsfs_warm_entry runs on
 * FUSE workers, between start and stop, and takes a record by swapping
 * its state.  Both give a record up under the warm-up's mutex, which
 * protects the parts' counts and their release.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dsfs.h"
#include "ident.h"
#include "layout.h"

/* Threads that stat at once, and the samples each claims at a time: a
 * cold inode waits for its cluster to be read from the volume, so several
 * reads in flight move the front of the warm-up faster than the listing's
 * one-at-a-time stats, in about the listing's order. */
#define WARM_THREADS 4
#define WARM_CHUNK 32

/* Samples that get a record (the rest are warmed only): at most 26 MiB,
 * a tenth of what target 5 of the benchmark allows a 1,000,000-file tree
 * beyond the cache. */
#define WARM_RECS_MAX (1u << 18)
/* Records given back to the system together: 208 KiB, 52 whole pages of
 * 4 KiB. */
#define RECS_PART 2048u

/* A record's state: none yet, made (dsfs_fresh_mark() + 1), or taken. */
#define REC_NONE 0
#define REC_TAKEN UINT64_MAX

/* What a listing needs of a stat, and when it was true. */
struct warm_rec {
	uint64_t mark;	/* the state; made by a release compare-and-swap
			   from REC_NONE once the fields are written */
	uint64_t ino, gen, size, blocks;
	int64_t atime, mtime, ctime;
	uint32_t atime_ns, mtime_ns, ctime_ns;
	uint32_t mode, nlink, uid, gid, rdev, blksize;
};

struct dsfs_warm {
	struct dsfs_layout_scan scan;
	struct dsfs_fs *fs;
	struct warm_rec *rec;	/* one per sample below nrec (mmap), or
				   NULL */
	uint64_t nrec;
	size_t rec_len;		/* of the mapping */
	size_t page;		/* the system's page size */
	pthread_mutex_t lock;
	uint32_t *left;		/* per part: records neither taken nor
				   given up; 0: the part's pages given back.
				   Protected by lock */
};

static void rec_fill(struct warm_rec *r, const struct stat *st, uint64_t gen)
{
	r->ino = st->st_ino;
	r->gen = gen;
	r->size = (uint64_t)st->st_size;
	r->blocks = (uint64_t)st->st_blocks;
	r->atime = st->st_atim.tv_sec;
	r->mtime = st->st_mtim.tv_sec;
	r->ctime = st->st_ctim.tv_sec;
	r->atime_ns = (uint32_t)st->st_atim.tv_nsec;
	r->mtime_ns = (uint32_t)st->st_mtim.tv_nsec;
	r->ctime_ns = (uint32_t)st->st_ctim.tv_nsec;
	r->mode = st->st_mode;
	r->nlink = (uint32_t)st->st_nlink;
	r->uid = st->st_uid;
	r->gid = st->st_gid;
	r->rdev = (uint32_t)st->st_rdev;
	r->blksize = (uint32_t)st->st_blksize;
}

static void rec_stat(const struct warm_rec *r, uint64_t dev, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = dev;
	st->st_ino = r->ino;
	st->st_size = (off_t)r->size;
	st->st_blocks = (blkcnt_t)r->blocks;
	st->st_atim.tv_sec = r->atime;
	st->st_mtim.tv_sec = r->mtime;
	st->st_ctim.tv_sec = r->ctime;
	st->st_atim.tv_nsec = r->atime_ns;
	st->st_mtim.tv_nsec = r->mtime_ns;
	st->st_ctim.tv_nsec = r->ctime_ns;
	st->st_mode = r->mode;
	st->st_nlink = r->nlink;
	st->st_uid = r->uid;
	st->st_gid = r->gid;
	st->st_rdev = r->rdev;
	st->st_blksize = r->blksize;
}

/* The bytes of part p's records. */
static size_t part_len(const struct dsfs_warm *w, uint64_t p)
{
	size_t off = (size_t)p * RECS_PART * sizeof(*w->rec);

	return w->rec_len - off < RECS_PART * sizeof(*w->rec) ?
		       w->rec_len - off : RECS_PART * sizeof(*w->rec);
}

/*
 * One more record of part p taken or given up: the last gives the part's
 * pages back.  Only pages of this part alone: a page it shares with
 * another part (pages larger than 4 KiB) stays, since a warm-up thread
 * may be writing a record there.  Lock held.
 */
static void part_done_locked(struct dsfs_warm *w, uint64_t p)
{
	size_t off = (size_t)p * RECS_PART * sizeof(*w->rec);
	size_t end = off + part_len(w, p), lo, hi;

	if (--w->left[p])
		return;
	dsfs_count(&w->fs->counters.warm_bytes, -(uint64_t)part_len(w, p));
	lo = (off + w->page - 1) & ~(w->page - 1);
	hi = end < w->rec_len ? end & ~(w->page - 1) : w->rec_len;
	if (hi > lo) /* gone from memory: read as zeros if touched again */
		madvise((char *)w->rec + lo, hi - lo, MADV_DONTNEED);
}

/* Record i will not be made, or was taken before it was: given up. */
static void rec_done(struct dsfs_warm *w, uint64_t i)
{
	pthread_mutex_lock(&w->lock);
	part_done_locked(w, i / RECS_PART);
	pthread_mutex_unlock(&w->lock);
}

/* A name gone or out of reach is not counted: the listing says so.  The
 * mark is taken before the stat: a change after it shows in a later one. */
static void warm_visit(void *arg, uint64_t i, int dfd, const char *name)
{
	struct dsfs_warm *w = arg;
	struct dsfs_fs *fs = w->fs;
	uint64_t mark;
	bool marked = i < w->nrec && dsfs_fresh_mark(fs, fs->root_dev, &mark);
	uint64_t none = REC_NONE;
	bool made = false;
	struct stat st;

	if (dfd >= 0 && !fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		dsfs_count(&fs->counters.warmed, 1);
		if (marked && (uint64_t)st.st_dev == fs->root_dev) {
			rec_fill(&w->rec[i], &st, dsfs_ident_gen(dfd, name));
			/* Release: the fields above before the state that
			 * makes them read.  A listing that reached the name
			 * first took the state. */
			made = __atomic_compare_exchange_n(
				&w->rec[i].mark, &none, mark + 1, false,
				__ATOMIC_RELEASE, __ATOMIC_RELAXED);
		}
	}
	if (i < w->nrec && !made) /* no record, or taken before made */
		rec_done(w, i);
}

bool dsfs_warm_entry(struct dsfs_warm *w, const char *path, uint64_t ino,
		     bool settled, uint64_t mark, struct stat *st,
		     uint64_t *gen)
{
	struct warm_rec *r;
	uint64_t i, state;
	bool ok = false;

	if (!w->nrec ||
	    dsfs_layout_lookup_in(w->scan.layout, w->scan.dir, path, &i) ||
	    i >= w->nrec)
		return false;
	pthread_mutex_lock(&w->lock);
	if (w->left[i / RECS_PART]) {
		r = &w->rec[i];
		/* Acquire: pairs with warm_visit's release of the fields. */
		state = __atomic_exchange_n(&r->mark, REC_TAKEN,
					    __ATOMIC_ACQUIRE);
		if (state != REC_NONE && state != REC_TAKEN) {
			ok = settled && state == mark + 1 && r->ino == ino;
			if (ok) {
				rec_stat(r, w->fs->root_dev, st);
				*gen = r->gen;
			}
			part_done_locked(w, i / RECS_PART);
		}
		/* REC_NONE: not made yet; warm_visit gives it up */
	}
	pthread_mutex_unlock(&w->lock);
	return ok;
}

/* Records for the first nrec samples, in a mapping of their own (pages
 * untouched cost nothing): 0, or -ENOMEM. */
static int recs_alloc(struct dsfs_warm *w, uint64_t nrec)
{
	uint64_t p, parts = (nrec + RECS_PART - 1) / RECS_PART;
	void *m;

	w->rec_len = nrec * sizeof(*w->rec);
	w->left = calloc(parts, sizeof(*w->left));
	m = mmap(NULL, w->rec_len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!w->left || m == MAP_FAILED) {
		free(w->left);
		w->left = NULL;
		if (m != MAP_FAILED)
			munmap(m, w->rec_len);
		return -ENOMEM;
	}
	w->rec = m;
	w->nrec = nrec;
	w->page = (size_t)sysconf(_SC_PAGESIZE);
	for (p = 0; p < parts; p++)
		w->left[p] = (uint32_t)(p + 1 < parts ? RECS_PART :
					nrec - p * RECS_PART);
	dsfs_count(&w->fs->counters.warm_bytes, w->rec_len);
	return 0;
}

static void recs_free(struct dsfs_warm *w)
{
	uint64_t p, held = 0;

	if (!w->nrec)
		return;
	for (p = 0; p * RECS_PART < w->nrec; p++)
		if (w->left[p])
			held += part_len(w, p);
	dsfs_count(&w->fs->counters.warm_bytes, -held);
	munmap(w->rec, w->rec_len);
	free(w->left);
	w->nrec = 0;
}

int dsfs_warm_start(struct dsfs_fs *fs, struct dsfs_warm **out)
{
	struct dsfs_warm *w = calloc(1, sizeof(*w));
	uint64_t n = dsfs_layout_count(fs->layout);

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->fs = fs;
	pthread_mutex_init(&w->lock, NULL);
	/* Without memory for the records, a warm-up only. */
	if (n)
		recs_alloc(w, n < WARM_RECS_MAX ? n : WARM_RECS_MAX);
	w->scan.layout = fs->layout;
	w->scan.root_fd = fs->root_fd;
	w->scan.dir = fs->opts.plan.dir;
	w->scan.chunk = WARM_CHUNK;
	w->scan.visit = warm_visit;
	w->scan.arg = w;
	if (!dsfs_layout_scan_start(&w->scan, WARM_THREADS, "dsfs-warm")) {
		recs_free(w);
		pthread_mutex_destroy(&w->lock);
		free(w);
		return -EAGAIN;
	}
	*out = w;
	return 0;
}

void dsfs_warm_stop(struct dsfs_warm *w)
{
	if (!w)
		return;
	dsfs_layout_scan_join(&w->scan, true);
	recs_free(w);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
