// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The read path: FUSE READ served from the memory cache, filling it through
 * the I/O engine on a miss, plus the plan-free heuristics (whole small files
 * on first read, growing read-ahead for sequential reads of large files).
 *
 * A read looks up each 2 MiB chunk it covers.  READY: pinned and replied
 * from the arena with no copy in the daemon (fuse_reply_iov).  Absent: this
 * thread creates the entry, submits the fetch and waits (a stall).  Being
 * filled by another: wait for it (a stall).  Not admitted (cache full of
 * more useful data): read around the cache into a temporary buffer.  Bytes
 * served are always those of the backing file at fetch time, or an error.
 *
 * Threads: FUSE workers submit and wait; the I/O engine thread runs the
 * completion callbacks (fill_done, and unpin for prefetches).  Per-inode
 * read-ahead state is a pair of relaxed atomics: a lost update only makes a
 * heuristic guess worse, never serves wrong bytes.
 */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "bgprio.h"
#include "dsfs.h"
#include "inodes.h"
#include "log.h"

#define MAX_CHUNKS_PER_READ 4 /* a FUSE read is at most 1 MiB: <= 2 chunks */

struct open_ctx {
	struct dsfs_fs *fs;
	const struct dsfs_inode *in;
};

static int pool_open(void *arg, const struct dsfs_fdkey *key)
{
	struct open_ctx *c = arg;

	return dsfs_inode_open(c->fs, c->in, (int)key->flags | O_NOFOLLOW);
}

/*
 * Borrow an fd for the engine: O_DIRECT while the backing filesystem takes
 * it; the first refusal (EINVAL: ramfs, some FUSE and network filesystems)
 * switches the mount to buffered reads for good, with one log line.
 */
static int borrow_fd(struct dsfs_fs *fs, const struct dsfs_inode *in,
		     struct dsfs_fdref *ref, bool *direct)
{
	struct open_ctx ctx = { fs, in };
	struct dsfs_fdkey key = { in->dev, in->ino, O_RDONLY, in->gen };
	int err;

	*direct = __atomic_load_n(&fs->direct_io, __ATOMIC_RELAXED);
	if (*direct) {
		key.flags = O_RDONLY | O_DIRECT;
		err = dsfs_fdpool_get(fs->fdpool, &key, pool_open, &ctx, ref);
		if (err != -EINVAL)
			return err;
		if (__atomic_exchange_n(&fs->direct_io, false, __ATOMIC_RELAXED))
			dsfs_warn("%s refuses O_DIRECT: falling back to buffered reads",
				  fs->opts.source);
		*direct = false;
		key.flags = O_RDONLY;
	}
	return dsfs_fdpool_get(fs->fdpool, &key, pool_open, &ctx, ref);
}

static uint32_t chunk_len(uint64_t size, uint64_t chunk)
{
	uint64_t start = chunk << DSFS_CHUNK_SHIFT;

	if (start >= size)
		return 0;
	return size - start < DSFS_CHUNK_SIZE ? (uint32_t)(size - start)
					      : DSFS_CHUNK_SIZE;
}

struct fill_ctx {
	struct dsfs_fs *fs;
	struct dsfs_cache_entry *e;
	bool prefetch;		/* nobody waits: unpin when done */
};

static void fill_done(void *arg, int result)
{
	struct fill_ctx *f = arg;

	dsfs_cache_fill_done(f->fs->cache, f->e, result);
	if (result > 0 && f->prefetch)
		dsfs_count(&f->fs->counters.prefetch_bytes, (uint64_t)result);
	if (f->prefetch)
		dsfs_cache_unpin(f->fs->cache, f->e);
	free(f);
}

/* Submit the fill of a FILLING entry we created.  On error the entry is
 * already completed with that error (waiters see it); returns it too. */
static int submit_fill(struct dsfs_fs *fs, const struct dsfs_inode *in,
		       struct dsfs_cache_entry *e, uint64_t chunk,
		       bool prefetch)
{
	struct fill_ctx *f = malloc(sizeof(*f));
	struct dsfs_io_req req;
	bool direct;
	int err = f ? borrow_fd(fs, in, &req.fd, &direct) : -ENOMEM;

	if (!err) {
		*f = (struct fill_ctx){ fs, e, prefetch };
		req.niov = dsfs_cache_iov(fs->cache, e, 0,
					  dsfs_cache_capacity(e), req.iov);
		req.off = chunk << DSFS_CHUNK_SHIFT;
		req.want = 0; /* the inode's size may be an old one */
		req.done = fill_done;
		req.arg = f;
		err = dsfs_io_submit(fs->io, &req);
		if (!err)
			return 0;
		dsfs_fdpool_put(fs->fdpool, &req.fd);
	}
	free(f);
	dsfs_cache_fill_done(fs->cache, e, err);
	if (prefetch)
		dsfs_cache_unpin(fs->cache, e);
	return err;
}

/* The plan's word on the file's next read, for the cache (see
 * dsfs_note_access). */
static uint64_t plan_when(const struct dsfs_inode *in)
{
	return __atomic_load_n(&in->plan_when, __ATOMIC_RELAXED);
}

/* Set in's lookup state to `to` once no report is in progress, and return
 * the state it had (enum dsfs_lookup_state). */
static uint8_t lookup_state_take(struct dsfs_inode *in, uint8_t to)
{
	uint8_t was;

	for (;;) {
		was = __atomic_load_n(&in->lookup_state, __ATOMIC_SEQ_CST);
		if (was == DSFS_LOOKUP_REPORTING) {
			sched_yield();	/* its report comes first */
			continue;
		}
		if (__atomic_compare_exchange_n(&in->lookup_state, &was, to,
						false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST))
			return was;
	}
}

/*
 * A file opened and read from its start: the plan's signal, unless the
 * lookup of this open gave it or is giving it (dsfs_op_lookup).  A lookup
 * that has not reported yet leaves it to this read, so that the read finds
 * the next use the report brings; one that is reporting is waited for, so
 * that the process's next open is not reported first (a worker opens its
 * batch's samples one after another, and the plan follows it so: the
 * lookup's thread, descheduled between its reply and its report, made
 * the daemon hear a worker's opens up to 30 apart out of order, 43 times
 * an epoch of 1,000 under ASan).  With -o direct_io every read reaches the
 * daemon: one from offset 0 again in the same open (a loader that reads a
 * header, seeks back and reads all) is not another open.
 */
static void report_open(struct dsfs_fs *fs, fuse_req_t req,
			struct dsfs_inode *in, const struct fuse_file_info *fi)
{
	struct dsfs_inode_more *m;
	uint8_t was;

	if (fi->fh && (m = dsfs_inodes_more(in)) &&
	    __atomic_exchange_n(&m->reported_open, fi->fh,
				__ATOMIC_RELAXED) == fi->fh)
		return;
	was = lookup_state_take(in, DSFS_LOOKUP_NONE);
	dsfs_note_access(fs, (uint32_t)fuse_req_ctx(req)->pid, in,
			 was == DSFS_LOOKUP_REPORTED);
}

/*
 * A read past offset 0, the first of its open to reach the daemon when the
 * kernel served the file's start from pages an earlier open left: a pass
 * over the data set before training that reads each file's header (an
 * aspect ratio pass opens every image), or part of a file the kernel kept
 * from the epoch before.  Its open is reported unless the file's last
 * report is recent (dsfs_sched_recent: the same open, read on), or its
 * lookup is reporting it.  Reported, it is marked as a lookup's report, so
 * that a read from offset 0 later in the same open (a format read from
 * its end first, as zip and Parquet are) does not report it again.
 */
static void report_read_on(struct dsfs_fs *fs, fuse_req_t req,
			   struct dsfs_inode *in)
{
	uint8_t was = lookup_state_take(in, DSFS_LOOKUP_REPORTING),
		reporting = DSFS_LOOKUP_REPORTING;

	if (dsfs_note_access(fs, (uint32_t)fuse_req_ctx(req)->pid, in,
			     was != DSFS_LOOKUP_REPLIED))
		was = DSFS_LOOKUP_REPORTED;
	/* Unless a lookup of a new open replied meanwhile: it reports. */
	__atomic_compare_exchange_n(&in->lookup_state, &reporting, was, false,
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/* Fetch chunk ahead of any reader if absent; never waits. */
static void prefetch_chunk(struct dsfs_fs *fs, const struct dsfs_inode *in,
			   uint64_t size, uint64_t chunk)
{
	struct dsfs_cache_key k = { in->dev, in->ino, chunk, in->gen };
	struct dsfs_cache_entry *e;
	uint32_t len = chunk_len(size, chunk);
	int got;

	if (!len)
		return;
	got = dsfs_cache_get_at(fs->cache, &k, len,
				DSFS_CACHE_NOWAIT | DSFS_CACHE_STAY,
				plan_when(in), &e);
	if (got == DSFS_CACHE_FILL)
		submit_fill(fs, in, e, chunk, true);
	else if (got == DSFS_CACHE_HIT)
		dsfs_cache_unpin(fs->cache, e);
	/* else being fetched already, or not admitted */
}

/*
 * Plan-free heuristics, run on every read that reaches the daemon: a file
 * up to whole_file_max is fetched whole; a larger one read sequentially gets
 * a read-ahead window doubling from one chunk up to readahead_max.
 */
static void heuristics(struct dsfs_fs *fs, struct dsfs_inode *in,
		       uint64_t size, uint64_t off, uint64_t end, bool missed)
{
	/* the last chunk this read touched */
	uint64_t cur = end > off ? (end - 1) >> DSFS_CHUNK_SHIFT : off >> DSFS_CHUNK_SHIFT;
	struct dsfs_inode_more *m;
	uint64_t next, win, c, last;

	if (size <= fs->opts.whole_file_max) {
		/* Once, on the read that found the file absent; the chunks this
		 * read fetched are not looked up again (each lookup counts as
		 * an access for the cache's admission test). */
		last = size ? (size - 1) >> DSFS_CHUNK_SHIFT : 0;
		for (c = 0; missed && c <= last; c++)
			if (c < off >> DSFS_CHUNK_SHIFT || c > cur)
				prefetch_chunk(fs, in, size, c);
		return;
	}
	m = dsfs_inodes_more(in);
	if (!m)
		return; /* no read-ahead without memory for its state */
	next = __atomic_load_n(&m->ra_next, __ATOMIC_RELAXED);
	win = __atomic_load_n(&m->ra_window, __ATOMIC_RELAXED);
	/* Sequential: starts where the last read ended, or inside the window
	 * the kernel's own read-ahead may have jumped into. */
	if (off >= next && off <= next + win + DSFS_CHUNK_SIZE && next)
		win = win ? win * 2 : DSFS_CHUNK_SIZE;
	else
		win = 0;
	if (win > fs->opts.readahead_max)
		win = fs->opts.readahead_max;
	__atomic_store_n(&m->ra_next, end, __ATOMIC_RELAXED);
	__atomic_store_n(&m->ra_window, win, __ATOMIC_RELAXED);
	if (!win)
		return;
	last = (end + win - 1) >> DSFS_CHUNK_SHIFT;
	for (c = cur + 1; c <= last; c++)
		prefetch_chunk(fs, in, size, c);
}

/* Completion a FUSE worker waits on for a read around the cache. */
struct sync_wait {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;		/* protected by lock */
	int result;		/* protected by lock */
};

static void sync_done(void *arg, int result)
{
	struct sync_wait *w = arg;

	pthread_mutex_lock(&w->lock);
	w->result = result;
	w->done = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

/*
 * Read [off, off + len) around the cache into a fresh aligned buffer, whole
 * 4 KiB pages so O_DIRECT works.  *data points at byte off.  Bytes or -errno.
 */
static ssize_t read_around(struct dsfs_fs *fs, const struct dsfs_inode *in,
			   uint64_t off, size_t len, char **tmp,
			   const char **data)
{
	struct sync_wait w = { PTHREAD_MUTEX_INITIALIZER,
			       PTHREAD_COND_INITIALIZER, false, 0 };
	uint64_t start = off & ~(uint64_t)(DSFS_PAGE_SIZE - 1);
	uint64_t end = (off + len + DSFS_PAGE_SIZE - 1) &
		       ~(uint64_t)(DSFS_PAGE_SIZE - 1);
	struct dsfs_io_req req;
	bool direct;
	int err;

	*tmp = NULL;
	if (posix_memalign((void **)tmp, DSFS_PAGE_SIZE, end - start))
		return -ENOMEM;
	err = borrow_fd(fs, in, &req.fd, &direct);
	if (err)
		return err;
	dsfs_io_req_buf(&req, *tmp, (uint32_t)(end - start));
	req.off = start;
	req.done = sync_done;
	req.arg = &w;
	err = dsfs_io_submit(fs->io, &req);
	if (err) {
		dsfs_fdpool_put(fs->fdpool, &req.fd);
		return err;
	}
	pthread_mutex_lock(&w.lock);
	while (!w.done)
		pthread_cond_wait(&w.cond, &w.lock);
	pthread_mutex_unlock(&w.lock);
	if (w.result < 0)
		return w.result;
	*data = *tmp + (off - start);
	if ((uint64_t)w.result <= off - start)
		return 0;
	return (ssize_t)((uint64_t)w.result - (off - start) < len ?
			 (uint64_t)w.result - (off - start) : len);
}

/* One chunk's part of a reply: len bytes from byte `at` of a pinned
 * entry, or at data in a temporary buffer (read around the cache). */
struct piece {
	struct dsfs_cache_entry *e;
	char *tmp;
	const char *data;
	uint32_t at;
	size_t len;
};

/*
 * Pin the chunk's READY entry into p->e, fetching it if absent and waiting
 * if another reader fetches it.  The entry takes the file's next planned
 * use, unless the read leaves part of the chunk to a later one (`stay`,
 * DSFS_CACHE_STAY): until that one, its use is this one's (a loader
 * reading 1 MiB at a time would otherwise find the chunk's second half
 * evicted as the entry needed last).  *waited: this read waited for
 * backing I/O; *missed: it found the chunk absent.  0, -ENOSPC (not
 * admitted), or -errno.
 */
static int get_ready(struct dsfs_fs *fs, const struct dsfs_inode *in,
		     uint64_t size, uint64_t chunk, unsigned stay,
		     struct piece *p, bool *waited, bool *missed)
{
	struct dsfs_cache_key k = { in->dev, in->ino, chunk, in->gen };
	unsigned flags = DSFS_CACHE_NOWAIT | DSFS_CACHE_USE | stay;
	int tries, got, err;

	for (tries = 0; tries < 8; tries++) {
		got = dsfs_cache_get_at(fs->cache, &k, chunk_len(size, chunk),
					flags, plan_when(in), &p->e);
		if (got == DSFS_CACHE_HIT)
			return 0;
		if (got == DSFS_CACHE_BUSY) { /* another reader's fetch */
			*waited = true;
			flags = DSFS_CACHE_USE | stay;
			continue;
		}
		if (got != DSFS_CACHE_FILL) {
			p->e = NULL;
			return got < 0 ? got : -EIO;
		}
		*waited = *missed = true;
		err = submit_fill(fs, in, p->e, chunk, false);
		if (!err)
			err = dsfs_cache_wait(fs->cache, p->e);
		if (!err)
			return 0;
		dsfs_cache_unpin(fs->cache, p->e);
		p->e = NULL;
		if (err != -ESTALE)
			return err;
		/* The file changed while it was fetched: fetch it again. */
	}
	return -ESTALE;
}

/*
 * Get the bytes [off, off + want) of one chunk into p: from the cache, or
 * read around it when not admitted.  0 (possibly short at end of file) or
 * -errno.
 */
static int serve_chunk(struct dsfs_fs *fs, const struct dsfs_inode *in,
		       uint64_t size, uint64_t off, size_t want,
		       struct piece *p, bool *waited, bool *missed)
{
	uint64_t chunk = off >> DSFS_CHUNK_SHIFT;
	uint32_t in_chunk = (uint32_t)(off & (DSFS_CHUNK_SIZE - 1));
	bool rest = (uint64_t)in_chunk + want < chunk_len(size, chunk);
	int err = get_ready(fs, in, size, chunk, rest ? DSFS_CACHE_STAY : 0,
			    p, waited, missed);

	if (err == -ENOSPC) {
		ssize_t n = read_around(fs, in, off, want, &p->tmp, &p->data);

		*waited = true;
		if (n < 0)
			return (int)n;
		p->len = (size_t)n;
		dsfs_count(&fs->counters.bypass_bytes, (uint64_t)n);
		return 0;
	}
	if (err)
		return err;
	err = dsfs_cache_verify(fs->cache, p->e);
	if (err) {
		dsfs_err("verify: cached bytes of %s chunk %llu changed since they were read: failing the read",
			 dsfs_inodes_name(in), (unsigned long long)chunk);
		return err;
	}
	p->at = in_chunk;
	p->len = dsfs_cache_len(p->e) > in_chunk ?
			 dsfs_cache_len(p->e) - in_chunk : 0;
	if (p->len > want)
		p->len = want;
	return 0;
}

static void pieces_release(struct dsfs_fs *fs, struct piece *p, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		if (p[i].e)
			dsfs_cache_unpin(fs->cache, p[i].e);
		free(p[i].tmp);
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void account(struct dsfs_fs *fs, size_t bytes, bool waited,
		    uint64_t t0, int err)
{
	struct dsfs_counters *c = &fs->counters;
	uint64_t now;

	dsfs_count(&c->reads, 1);
	if (err) {
		dsfs_count(&c->errors, 1);
		return;
	}
	dsfs_count(&c->read_bytes, bytes);
	if (!waited) {
		dsfs_count(&c->hit_bytes, bytes);
		return;
	}
	now = now_ns();
	dsfs_count(&c->miss_bytes, bytes);
	dsfs_count(&c->stalls, 1);
	dsfs_count(&c->stall_ns, now - t0);
	dsfs_boost_waited(&fs->waited, now);
}

/* A failed read, logged with the backing file's path; rate-limited, as a
 * failing disk fails every read.  A file deleted or changed meanwhile is
 * no fault of the backing store: not logged. */
static void log_read_error(struct dsfs_fs *fs, const struct dsfs_inode *in,
			   uint64_t off, int err)
{
	char path[PATH_MAX];
	uint64_t missed;

	if (err == -ENOENT || err == -ESTALE ||
	    !dsfs_ratelimit(&fs->read_errors_log, &missed))
		return;
	if (dsfs_inodes_path(in, path, sizeof(path)))
		snprintf(path, sizeof(path), ".../%s", dsfs_inodes_name(in));
	dsfs_warn("read of %s/%s at offset %llu failed: %s%s", fs->opts.source,
		  path, (unsigned long long)off, strerror(-err),
		  missed ? " (more failed reads not logged)" : "");
}

/* -d: one line per read request, after its reply. */
static void trace_read(const struct dsfs_inode *in, uint64_t off, size_t size,
		       size_t total, bool waited, uint64_t t0, int err)
{
	char path[PATH_MAX], what[64];

	if (!dsfs_log_debug_enabled())
		return;
	if (dsfs_inodes_path(in, path, sizeof(path)))
		snprintf(path, sizeof(path), ".../%s", dsfs_inodes_name(in));
	if (err)
		snprintf(what, sizeof(what), "%s", strerror(-err));
	else
		snprintf(what, sizeof(what), "%zu bytes, %s", total,
			 waited ? "waited for backing" : "hit");
	dsfs_debug("read %s [%llu, +%zu): %s, %llu us", path,
		   (unsigned long long)off, size, what,
		   (unsigned long long)((now_ns() - t0) / 1000));
}

/*
 * Fill p[0 .. *n) with the bytes [off, off + size) of a file of fsize
 * bytes, up to its end; *pos is where they end.  0 or -errno (then the
 * pieces before the failing one are in p[0 .. *n)).
 */
static int serve_range(struct dsfs_fs *fs, const struct dsfs_inode *in,
		       uint64_t fsize, uint64_t off, size_t size,
		       struct piece *p, unsigned *n, uint64_t *pos,
		       bool *waited, bool *missed)
{
	uint64_t end = off + size < fsize ? off + size : fsize;
	int err = 0;

	*pos = off;
	while (*pos < end && *n < MAX_CHUNKS_PER_READ) {
		uint64_t cend = ((*pos >> DSFS_CHUNK_SHIFT) + 1) << DSFS_CHUNK_SHIFT;
		size_t want = (size_t)((cend < end ? cend : end) - *pos);

		err = serve_chunk(fs, in, fsize, *pos, want, &p[*n], waited,
				  missed);
		if (err)
			break;
		*pos += p[*n].len;
		if (p[(*n)++].len < want)
			break; /* end of the file as it is now */
	}
	return err;
}

/*
 * A read that ends before what was asked says "end of file" to the kernel,
 * which pads the page with zeros and keeps it.  If the backing file has
 * grown past pos since dsfs last looked (the change is not noticed yet),
 * that would be bytes the file never held: true when it has, with the
 * new size recorded and the file's cached data dropped, to serve again.
 * Costs an fstat on a pooled fd (often an open) per read that ends short,
 * unless the read ends at the size the kernel was last told and the watch
 * of SOURCE has applied every change so far (dsfs_fresh_settled): then
 * the file has not grown unseen.  Always asked with -o direct_io.
 */
static bool grew_past(struct dsfs_fs *fs, struct dsfs_inode *in, uint64_t pos)
{
	struct dsfs_fdref ref;
	struct stat st;
	bool direct, grew;

	if (!fs->opts.direct_io &&
	    __atomic_load_n(&in->size, __ATOMIC_RELAXED) == pos &&
	    dsfs_fresh_settled(fs, in->dev))
		return false;
	if (borrow_fd(fs, in, &ref, &direct))
		return false; /* gone or replaced: the short read stands */
	grew = fstat(ref.fd, &st) == 0 && (uint64_t)st.st_size > pos;
	dsfs_fdpool_put(fs->fdpool, &ref);
	if (!grew)
		return false;
	__atomic_store_n(&in->size, (uint64_t)st.st_size, __ATOMIC_RELAXED);
	dsfs_cache_invalidate(fs->cache, in->dev, in->ino);
	return true;
}

/*
 * Whether this read, about to be answered, is of bytes once pushed into
 * the kernel's page cache: then the kernel dropped them (memory pressure,
 * a drop of caches).  Or, read from the file's start, of bytes held back
 * from a push as the kernel's already: then it never had them, or dropped
 * them (another reader's eviction kept them from their push, the loader's
 * READs filled them, and this epoch's plan found them cached).  Only from
 * the start: the plan may hold back, for its next read, a file the loader
 * is still reading.  Asked before the reply: a push of the same pages
 * waits for this read's page locks, and must not count.
 */
static bool pushed_before(const struct dsfs_fs *fs, const struct piece *p,
			  unsigned n, off_t off)
{
	unsigned i;

	if (!fs->push)
		return false;
	if (off == 0 && n && p[0].e && dsfs_cache_held(p[0].e))
		return true;
	for (i = 0; i < n; i++)
		if (p[i].e && dsfs_cache_pushed(p[i].e))
			return true;
	return false;
}

/* The plan pushes what it finds cached again (dsfs_sched_repush). */
static void note_dropped(struct dsfs_fs *fs)
{
	struct dsfs_sched *sched = dsfs_sched_hold(fs);

	if (sched)
		dsfs_sched_repush(sched);
	dsfs_sched_unhold(fs);
}

void dsfs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		  struct fuse_file_info *fi)
{
	struct dsfs_fs *fs = dsfs_req_fs(req);
	struct dsfs_inode *in = dsfs_req_inode(req, ino);
	uint64_t fsize = __atomic_load_n(&in->size, __ATOMIC_RELAXED);
	uint64_t pos, t0 = now_ns();
	struct piece p[MAX_CHUNKS_PER_READ] = { { 0 } };
	struct iovec iov[MAX_CHUNKS_PER_READ * DSFS_CACHE_MAX_RUNS];
	bool waited = false, missed = false, dropped;
	unsigned n = 0, niov = 0, i;
	size_t total = 0;
	int err;

	dsfs_readahead_tune(fs); /* opens after READDIRPLUS skip LOOKUP */
	dsfs_direct_read(fs, fi, (uint64_t)off, size, fsize);
	if (!off)
		report_open(fs, req, in, fi);
	else
		report_read_on(fs, req, in);
	err = serve_range(fs, in, fsize, (uint64_t)off, size, p, &n, &pos,
			  &waited, &missed);
	if (!err && pos < (uint64_t)off + size && n < MAX_CHUNKS_PER_READ &&
	    grew_past(fs, in, pos)) {
		pieces_release(fs, p, n);
		memset(p, 0, sizeof(p));
		n = 0;
		fsize = __atomic_load_n(&in->size, __ATOMIC_RELAXED);
		err = serve_range(fs, in, fsize, (uint64_t)off, size, p, &n,
				  &pos, &waited, &missed);
	}
	if (!err || n > 0)
		heuristics(fs, in, fsize, (uint64_t)off, pos, missed);
	if (err) {
		fuse_reply_err(req, -err);
	} else {
		for (i = 0; i < n; i++) { /* an entry: one iovec per run */
			if (p[i].e) {
				niov += dsfs_cache_iov(fs->cache, p[i].e,
						       p[i].at,
						       (uint32_t)p[i].len,
						       iov + niov);
			} else {
				iov[niov].iov_base = (void *)p[i].data;
				iov[niov++].iov_len = p[i].len;
			}
			total += p[i].len;
		}
		dropped = pushed_before(fs, p, n, off);
		fuse_reply_iov(req, iov, (int)niov);
		if (dropped)
			note_dropped(fs);
	}
	account(fs, total, waited, t0, err);
	pieces_release(fs, p, err ? n + 1 : n);
	if (err)
		log_read_error(fs, in, (uint64_t)off, err);
	trace_read(in, (uint64_t)off, size, total, waited, t0, err);
}

/*
 * SEEK_DATA and SEEK_HOLE (the kernel answers the other whences itself):
 * asked of the backing file, so that a sparse file's holes show through
 * the mount (cp --sparse, tar -S).  The pooled fd's own offset moves, but
 * nothing reads at it: every read gives its offset.
 */
void dsfs_op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		   struct fuse_file_info *fi)
{
	struct dsfs_fs *fs = dsfs_req_fs(req);
	struct dsfs_inode *in = dsfs_req_inode(req, ino);
	struct dsfs_fdref ref;
	bool direct;
	off_t got;
	int err;

	(void)fi;
	if (whence != SEEK_DATA && whence != SEEK_HOLE) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	err = borrow_fd(fs, in, &ref, &direct);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	got = lseek(ref.fd, off, whence);
	err = got < 0 ? errno : 0;
	dsfs_fdpool_put(fs->fdpool, &ref);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_lseek(req, got);
}
