// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The scheduler's fetch of a sample (sched_int.h): open it below SOURCE as
 * the loader's open would reach it, settle its size, and read each chunk
 * the cache lacks into the cache, in batches of engine requests; a sample
 * whose file is known and whose chunks are all cached is not opened.
 *
 * Threads: the scheduler thread, without s->lock but for the count of
 * reads in flight; the engine's completion thread runs fetch_done, which
 * fills the entry, hands a whole file to cfg.filled (push) and takes the
 * lock to count the read done.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "beneath.h"
#include "ident.h"
#include "sched_int.h"

struct fetch {
	struct dsfs_sched *s;
	struct dsfs_cache_entry *e;
	struct dsfs_cache_key k;
	uint64_t size;		/* the file's */
	uint64_t when, after;	/* see cfg.filled */
	uint32_t len;		/* the chunk's */
	bool filled;		/* tell cfg.filled when read whole */
};
_Static_assert(sizeof(struct fetch) <= DSFS_SLAB_MAX, "a fetch fits the slab");

static void fetch_done(void *arg, int result)
{
	struct fetch *f = arg;
	struct dsfs_sched *s = f->s;

	dsfs_cache_fill_done(s->cfg.cache, f->e, result);
	dsfs_cache_unpin(s->cfg.cache, f->e);
	if (f->filled && result == (int)f->len)
		s->cfg.filled(s->cfg.filled_arg, &f->k, f->len, f->size,
			      f->when, f->after);
	if (result > 0)
		__atomic_add_fetch(&s->prefetch_bytes, (uint64_t)result,
				   __ATOMIC_RELAXED);
	else if (result < 0)
		__atomic_add_fetch(&s->prefetch_errors, 1, __ATOMIC_RELAXED);
	/* Before the count: the last read done, the scheduler may go. */
	dsfs_slab_free(&s->fetches, f, sizeof(*f));
	pthread_mutex_lock(&s->lock);
	s->inflight--;
	/* Waiting for room: come back when half the depth is free (or at
	 * the last read, which the stopping thread waits for). */
	if (!s->inflight || (s->idle && s->full &&
			     s->inflight <= s->depth / 2))
		pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
}

/* A planned read that will not happen: its entry fails with err (readers
 * waiting on it retry with their own read), and it is counted, but for
 * -ESTALE: a known sample's file gone (open_known), opened anew. */
static void fetch_failed(struct dsfs_sched *s, struct dsfs_cache_entry *e,
			 int err)
{
	if (err != -ESTALE)
		__atomic_add_fetch(&s->prefetch_errors, 1, __ATOMIC_RELAXED);
	dsfs_cache_fill_done(s->cfg.cache, e, err);
	dsfs_cache_unpin(s->cfg.cache, e);
}

/* Submit the batch's reads; on failure each one fails (fetch_failed), its
 * fd goes back to the pool and it no longer counts as in flight. */
void dsfs_sched_batch_flush(struct dsfs_sched *s, struct batch *b)
{
	unsigned i;
	int err;

	if (!b->n)
		return;
	err = dsfs_io_submit_many(s->cfg.io, b->req, b->n);
	for (i = 0; err && i < b->n; i++) {
		struct fetch *f = b->req[i].arg;

		dsfs_fdpool_put(s->cfg.fdpool, &b->req[i].fd);
		fetch_failed(s, f->e, err);
		dsfs_slab_free(&s->fetches, f, sizeof(*f));
		pthread_mutex_lock(&s->lock);
		s->inflight--;
		pthread_mutex_unlock(&s->lock);
	}
	b->n = 0;
}

/* The pool takes over an fd we opened ourselves (see fetch_chunk): it is
 * the pool's from this call on, kept or closed. */
static int adopt_fd(void *arg, const struct dsfs_fdkey *key)
{
	int *fd = arg, ret = *fd;

	(void)key;
	*fd = -1;
	return ret;
}

/*
 * Fetch one chunk of an open file unless it is cached or being fetched,
 * as a planned entry next read at plan time `when`: a read added to b
 * (submitted when b fills, or by the caller).  The fd reference is taken
 * here and returned by the engine.  -ENOSPC when the cache refused it
 * (everything cached is needed sooner), else 0 (other failures are
 * counted; the reader's own read will try again).
 */
static int fetch_chunk(struct dsfs_sched *s, struct batch *b,
		       const struct dsfs_fdkey *key, dsfs_fdpool_open_fn open_fn,
		       void *open_arg, uint64_t size, uint64_t chunk,
		       uint64_t when, uint64_t after, bool filled, bool repush)
{
	struct dsfs_cache_key k = { key->dev, key->ino, chunk, key->gen };
	uint64_t start = chunk << DSFS_CHUNK_SHIFT;
	uint32_t len = size - start < DSFS_CHUNK_SIZE ? (uint32_t)(size - start)
						       : DSFS_CHUNK_SIZE;
	struct dsfs_io_req *req = &b->req[b->n];
	struct dsfs_cache_entry *e;
	struct fetch *f;
	int err;

	err = dsfs_cache_get_at(s->cfg.cache, &k, len,
				DSFS_CACHE_NOWAIT | DSFS_CACHE_FORCE, when, &e);
	if (err == DSFS_CACHE_HIT) {
		/* Cached, and the kernel drops what it is given: again; if
		 * that has no room now, wait for the loader as for the cache
		 * (the lead walked again would otherwise overflow it).
		 * Otherwise the kernel is taken to hold it; when a reader's
		 * READ filled it (not the plan: its bytes were pushed, or
		 * are a sentinel's, read this epoch), a READ of it from the
		 * file's start that still reaches the daemon says the kernel
		 * does not (fs/read.c). */
		if (!repush && filled && s->cfg.filled &&
		    !dsfs_cache_by_plan(e))
			dsfs_cache_set_held(e);
		else if (repush && filled && s->cfg.filled &&
			 dsfs_cache_len(e) == len &&
			 !s->cfg.filled(s->cfg.filled_arg, &k, len, size,
					dsfs_cache_when(e), after))
			err = -ENOSPC;
		dsfs_cache_unpin(s->cfg.cache, e);
	}
	if (err != DSFS_CACHE_FILL)
		return err == -ENOSPC ? err : 0; /* cached or being fetched */
	dsfs_cache_set_by_plan(e);
	f = dsfs_slab_alloc(&s->fetches, sizeof(*f));
	err = f ? dsfs_fdpool_get(s->cfg.fdpool, key, open_fn, open_arg,
				  &req->fd)
		: -ENOMEM;
	if (err) {
		if (f)
			dsfs_slab_free(&s->fetches, f, sizeof(*f));
		fetch_failed(s, e, err);
		return err == -ESTALE ? err : 0;
	}
	/* The next use the cache took (NEVER while no loader is followed):
	 * cfg.filled's `when`. */
	*f = (struct fetch){ s, e, k, size, dsfs_cache_when(e), after, len,
			     filled && s->cfg.filled };
	req->niov = dsfs_cache_iov(s->cfg.cache, e, 0, dsfs_cache_capacity(e),
				   req->iov);
	req->off = start;
	req->want = len; /* of `size`: the fd's fstat (open_sample) */
	req->done = fetch_done;
	req->arg = f;
	pthread_mutex_lock(&s->lock);
	s->inflight++;
	pthread_mutex_unlock(&s->lock);
	b->made++;
	if (++b->n == BATCH)
		dsfs_sched_batch_flush(s, b);
	return 0;
}

void dsfs_sched_opened_close(struct opened *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
}

/* The path below SOURCE that the loader's open of sample idx reaches
 * (through a symlink: the file it leads to).  0 or -ENAMETOOLONG. */
int dsfs_sched_sample_path(const struct dsfs_sched *s, uint64_t idx,
			   char path[PATH_MAX])
{
	const char *rel = dsfs_layout_path(s->cfg.layout, idx),
		   *alias = dsfs_layout_alias(s->cfg.layout, idx);
	int n;

	n = alias ? snprintf(path, PATH_MAX, "%s", alias)
	    : s->prefix_len ? snprintf(path, PATH_MAX, "%s/%s",
				       s->cfg.plan->dir, rel)
			    : snprintf(path, PATH_MAX, "%s", rel);
	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/* Open sample idx below SOURCE into o (closing what o held), as the
 * loader's open would reach it (the final name not followed): O_DIRECT
 * while the filesystem takes it.  side: idx is the side pass's file
 * (sched_side.c), not the plan's sample.  0 or -errno. */
static int open_sample(struct dsfs_sched *s, uint64_t idx, bool side,
		       struct opened *o)
{
	char path[PATH_MAX];
	int fd = -EINVAL;

	dsfs_sched_opened_close(o);
	o->idx = idx;
	o->side = side;
	if (side ? dsfs_sched_side_path(s, idx, path)
		 : dsfs_sched_sample_path(s, idx, path))
		return -ENAMETOOLONG;
	o->flags = O_RDONLY;
	if (__atomic_load_n(s->cfg.direct_io, __ATOMIC_RELAXED)) {
		fd = dsfs_open_beneath(s->cfg.root_fd, path,
				       O_RDONLY | O_DIRECT | O_NOFOLLOW);
		if (fd != -EINVAL)
			o->flags = O_RDONLY | O_DIRECT;
	}
	if (fd == -EINVAL)
		fd = dsfs_open_beneath(s->cfg.root_fd, path,
				       O_RDONLY | O_NOFOLLOW);
	if (fd < 0)
		return fd;
	__atomic_add_fetch(&s->sample_opens, 1, __ATOMIC_RELAXED);
	o->fd = fd;
	if (fstat(fd, &o->st) == 0)
		return 0;
	fd = -errno;
	dsfs_sched_opened_close(o);
	return fd;
}

/*
 * The layout was listed without a stat pass (dsfs_layout_build_quick):
 * settle idx's size before it enters a lead window, whose byte sum must
 * use one size for the sample throughout.  Anything but a regular file,
 * or a failure, settles it as not prefetchable (the loader's own reads
 * still work).  The open stays in o for the fetch.  Called without
 * s->lock.
 */
void dsfs_sched_settle_sample(struct dsfs_sched *s, uint64_t idx,
			      struct opened *o)
{
	dsfs_layout_settle(s->cfg.layout, idx,
			   open_sample(s, idx, false, o) ? NULL : &o->st);
}

/* fetch_chunk for every chunk of pk's sample of `size` bytes, key's file
 * (opened by open_fn if a chunk needs it), up to the first error. */
static int fetch_chunks(struct dsfs_sched *s, struct batch *b,
			const struct dsfs_fdkey *key, dsfs_fdpool_open_fn open_fn,
			void *open_arg, uint64_t size, const struct pick *pk)
{
	uint64_t c;
	int err = 0;

	for (c = 0; !err && (c << DSFS_CHUNK_SHIFT) < size; c++)
		err = fetch_chunk(s, b, key, open_fn, open_arg, size, c,
				  pk->use, pk->after, pk->push, pk->repush);
	return err;
}

/*
 * Known identities (struct dsfs_sched's known): a cached sample costs an
 * open, an fstat and a file handle to learn its identity, the cache's key;
 * once learned, and while the watch of SOURCE has seen every change
 * (cfg.settled) and no name changed since, the path still leads to that
 * file, and its cached chunks are found without opening it.  A chunk not
 * cached opens the file then (open_known), which must still be that
 * file, of the size the layout says.  16 bytes a sample, allocated at
 * the first (calloc: untouched pages cost no memory).
 */
static const struct known_id *known_get(struct dsfs_sched *s, uint64_t idx)
{
	uint64_t names;

	if (!s->known)
		return NULL;
	names = __atomic_load_n(s->cfg.names_changed, __ATOMIC_RELAXED);
	if (names != s->known_names) { /* all forgotten, not cleared: O(1) */
		free(s->known);
		s->known = NULL;
		return NULL;
	}
	/* The watch's check (an ioctl) only for a sample known: a cold
	 * epoch asks for every sample, and knows none of them. */
	if (!s->known[idx].ino ||
	    !s->cfg.settled(s->cfg.settled_arg, s->cfg.dev))
		return NULL;
	return &s->known[idx];
}

/* Remember what sample idx's path led to when just opened.  A name
 * change before the open that the count shows only later clears it with
 * the rest (known_get). */
static void known_set(struct dsfs_sched *s, uint64_t idx,
		      const struct dsfs_fdkey *key)
{
	uint64_t names;

	if (!s->cfg.settled || !s->cfg.names_changed ||
	    key->dev != s->cfg.dev)
		return;
	names = __atomic_load_n(s->cfg.names_changed, __ATOMIC_RELAXED);
	if (!s->known) {
		if (!s->cfg.settled(s->cfg.settled_arg, s->cfg.dev))
			return; /* no watch now: none later, as a rule */
		s->known = calloc(dsfs_layout_count(s->cfg.layout),
				  sizeof(*s->known));
		if (!s->known)
			return;
		s->known_names = names;
	}
	if (names == s->known_names)
		s->known[idx] = (struct known_id){ key->ino, key->gen };
}

struct known_open {
	struct dsfs_sched *s;
	struct opened *o;
	uint64_t idx, size;
};

/* The pool's open of a known sample's chunk not cached: the path must
 * still lead to key's file, of the size fetched by; -ESTALE if not. */
static int open_known(void *arg, const struct dsfs_fdkey *key)
{
	struct known_open *k = arg;
	struct opened *o = k->o;
	int fd;

	if (open_sample(k->s, k->idx, false, o))
		return -ESTALE;
	if (!S_ISREG(o->st.st_mode) || (uint64_t)o->st.st_dev != key->dev ||
	    (uint64_t)o->st.st_ino != key->ino ||
	    (uint64_t)o->st.st_size != k->size ||
	    (uint32_t)o->flags != key->flags ||
	    dsfs_ident_gen(o->fd, "") != key->gen) {
		dsfs_sched_opened_close(o);
		return -ESTALE;
	}
	fd = o->fd;
	o->fd = -1; /* the pool's now */
	return fd;
}

/* Fetch sample idx by its known identity: 0 when done (every chunk cached,
 * or read through open_known), -ENOSPC as fetch_chunk, -ESTALE when the
 * identity is gone (forgotten: the caller opens the sample anew). */
static int fetch_known(struct dsfs_sched *s, struct batch *b,
		       struct opened *o, const struct pick *pk,
		       const struct known_id *id)
{
	uint64_t size = dsfs_layout_size(s->cfg.layout, pk->idx);
	struct known_open k = { s, o, pk->idx, size };
	struct dsfs_fdkey key = {
		s->cfg.dev, id->ino,
		__atomic_load_n(s->cfg.direct_io, __ATOMIC_RELAXED) ?
			O_RDONLY | O_DIRECT : O_RDONLY,
		id->gen
	};
	int err;

	dsfs_sched_opened_close(o);
	err = fetch_chunks(s, b, &key, open_known, &k, size, pk);
	if (err == -ESTALE)
		s->known[pk->idx] = (struct known_id){ 0, 0 };
	return err;
}

/* Fetch every chunk of the sample pk picked through o's open if it holds
 * it.  -ENOSPC as fetch_chunk, else 0. */
static int fetch_sample(struct dsfs_sched *s, struct batch *b,
			struct opened *o, const struct pick *pk)
{
	const struct known_id *id;
	uint64_t idx = pk->idx;
	struct dsfs_fdkey key;
	bool held = o->fd >= 0 && o->idx == idx && o->side == pk->side;
	int err = 0;

	if (!dsfs_layout_prefetchable(pk->side ? s->side.layout
					       : s->cfg.layout, idx))
		return 0;
	if (!held && !pk->side && (id = known_get(s, idx)) &&
	    (err = fetch_known(s, b, o, pk, id)) != -ESTALE)
		return err;
	err = 0;
	if (!held && open_sample(s, idx, pk->side, o))
		return 0; /* e.g. a symlink: the reader's own reads still work */
	if (S_ISREG(o->st.st_mode)) {
		key = (struct dsfs_fdkey){ o->st.st_dev, o->st.st_ino,
					   (uint32_t)o->flags,
					   dsfs_ident_gen(o->fd, "") };
		err = fetch_chunks(s, b, &key, adopt_fd, &o->fd,
				   (uint64_t)o->st.st_size, pk);
		if (!pk->side)
			known_set(s, idx, &key);
	}
	dsfs_sched_opened_close(o);
	return err;
}

/* fetch_sample, and the thread's priority: a read made for a sample the
 * loader is close behind says the fetch is behind, as a reader's wait on
 * one does (lib/bgprio.h's boost).  Called without s->lock. */
int dsfs_sched_fetch_sample(struct dsfs_sched *s, struct batch *b,
			    struct opened *o, const struct pick *pk)
{
	uint64_t made = b->made;
	int err = fetch_sample(s, b, o, pk);

	if (pk->near && b->made != made && s->cfg.waited)
		dsfs_boost_waited(s->cfg.waited, dsfs_sched_coarse_ns());
	dsfs_boost_poll(&s->boost);
	return err;
}
