// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The I/O engine's front (see io.h): configuration, the request queue shared
 * by both backends, the short-read/EOF rules, completion and the counters.
 * The io_uring backend is in io_uring.c, the pread fallback in io_threads.c.
 *
 * Threads: dsfs_io_submit from any thread; dsfs_io_take, dsfs_io_wait_one,
 * dsfs_io_advance and dsfs_io_finish from the backend's thread(s).  The queue
 * and the stopping flag are protected by io->lock; a request taken off the
 * queue belongs to the one backend thread that took it.  Counters are
 * relaxed atomics (see io_int.h).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io_int.h"
#include "log.h"

#define IO_MAX_THREADS 8u  /* pread fallback: min(depth, this) threads */
#define IO_DIO_ALIGN 4096u /* O_DIRECT alignment the submitter keeps */

static int check_cfg(const struct dsfs_io_cfg *cfg, char *why, size_t whylen)
{
	if (cfg->depth < 1 || cfg->depth > DSFS_IO_MAX_DEPTH) {
		snprintf(why, whylen, "I/O depth %u out of range: use 1 to %u",
			 cfg->depth, DSFS_IO_MAX_DEPTH);
		return -EINVAL;
	}
	if (!cfg->fdpool) {
		snprintf(why, whylen, "I/O engine needs an fd pool");
		return -EINVAL;
	}
	if (cfg->fixed_base && !cfg->fixed_size) {
		snprintf(why, whylen, "fixed buffer region of size 0");
		return -EINVAL;
	}
	return 0;
}

/* Falls back to the pread pool; logs the one line saying so. */
static int start_threads(struct dsfs_io *io, int uring_err, char *why,
			 size_t whylen)
{
	unsigned n = io->cfg.depth < IO_MAX_THREADS ? io->cfg.depth :
						      IO_MAX_THREADS;
	int ret = dsfs_io_threads_start(io, n);

	if (ret) {
		snprintf(why, whylen, "cannot start %u pread threads: %s", n,
			 strerror(-ret));
		return ret;
	}
	if (io->cfg.force_threads)
		dsfs_info(
			"io_uring not used (force_threads): using %u pread threads",
			n);
	else
		dsfs_warn("io_uring unavailable (%s): using %u pread threads",
			  strerror(-uring_err), n);
	return 0;
}

int dsfs_io_new(const struct dsfs_io_cfg *cfg, struct dsfs_io **out, char *why,
		size_t whylen)
{
	struct dsfs_io *io;
	int ret;

	*out = NULL;
	ret = check_cfg(cfg, why, whylen);
	if (ret)
		return ret;
	io = calloc(1, sizeof(*io));
	if (!io) {
		snprintf(why, whylen, "I/O engine: out of memory");
		return -ENOMEM;
	}
	io->cfg = *cfg;
	pthread_mutex_init(&io->lock, NULL);
	pthread_cond_init(&io->work, NULL);
	dsfs_slab_init(&io->ops);
	ret = cfg->force_threads ? -EOPNOTSUPP : dsfs_io_uring_start(io);
	if (ret)
		ret = start_threads(io, ret, why, whylen);
	if (ret) {
		dsfs_slab_destroy(&io->ops);
		pthread_cond_destroy(&io->work);
		pthread_mutex_destroy(&io->lock);
		free(io);
		return ret;
	}
	*out = io;
	return 0;
}

void dsfs_io_free(struct dsfs_io *io)
{
	if (!io)
		return;
	pthread_mutex_lock(&io->lock);
	io->stopping = true;
	pthread_mutex_unlock(&io->lock);
	if (io->ring)
		dsfs_io_uring_stop(io);
	else
		dsfs_io_threads_stop(io);
	dsfs_slab_destroy(&io->ops);
	pthread_cond_destroy(&io->work);
	pthread_mutex_destroy(&io->lock);
	free(io);
}

_Static_assert(sizeof(struct io_op) <= DSFS_SLAB_MAX, "an op fits the slab");

/* The bytes req wants, or -1 when its niov or total is out of range. */
static int64_t req_len(const struct dsfs_io_req *req)
{
	uint64_t len = 0;
	unsigned i;

	if (req->niov < 1 || req->niov > DSFS_IO_MAX_IOV)
		return -1;
	for (i = 0; i < req->niov; i++)
		len += req->iov[i].iov_len;
	return len > INT_MAX ? -1 : (int64_t)len;
}

/*
 * The engine is woken under the lock, so that once the lock is released this
 * call touches io no more: a backend thread can only take (and complete) the
 * request after that, hence no callback runs while the submitter still uses
 * io, and whoever saw every callback may free it (io.h).
 */
int dsfs_io_submit_many(struct dsfs_io *io, const struct dsfs_io_req *reqs,
			unsigned n)
{
	struct io_op *first = NULL, *last = NULL, *op;
	bool was_empty;
	int err = 0;
	unsigned i;

	if (!n)
		return 0;
	for (i = n; i > 0; i--) { /* back to front: first = reqs[0] */
		int64_t len = req_len(&reqs[i - 1]);

		op = len < 0 ? NULL : dsfs_slab_alloc(&io->ops, sizeof(*op));
		if (!op) {
			err = len < 0 ? -EINVAL : -ENOMEM;
			break;
		}
		*op = (struct io_op){ .req = reqs[i - 1], .len = (uint32_t)len,
				      .next = first };
		first = op;
		if (!last)
			last = op;
	}
	pthread_mutex_lock(&io->lock);
	if (!err && io->stopping)
		err = -ESHUTDOWN;
	if (err) {
		pthread_mutex_unlock(&io->lock);
		for (; first; first = op) {
			op = first->next;
			dsfs_slab_free(&io->ops, first, sizeof(*first));
		}
		return err;
	}
	__atomic_add_fetch(&io->n_inflight, n, __ATOMIC_RELAXED);
	was_empty = !io->head;
	if (io->tail)
		io->tail->next = first;
	else
		io->head = first;
	io->tail = last;
	if (!io->ring && n == 1)
		pthread_cond_signal(&io->work);
	else if (!io->ring)
		pthread_cond_broadcast(&io->work);
	else if (was_empty) /* else the engine has yet to drain the queue */
		dsfs_io_uring_kick(io);
	pthread_mutex_unlock(&io->lock);
	return 0;
}

int dsfs_io_submit(struct dsfs_io *io, const struct dsfs_io_req *req)
{
	return dsfs_io_submit_many(io, req, 1);
}

struct io_op *dsfs_io_take(struct dsfs_io *io, unsigned max, bool *stop)
{
	struct io_op *first, *last = NULL, *op;
	unsigned n = 0;

	pthread_mutex_lock(&io->lock);
	first = io->head;
	for (op = first; op && n < max; op = op->next, n++)
		last = op;
	if (last) {
		io->head = last->next;
		if (!io->head)
			io->tail = NULL;
		last->next = NULL;
	} else {
		first = NULL;
	}
	*stop = io->stopping && !io->head;
	pthread_mutex_unlock(&io->lock);
	return first;
}

struct io_op *dsfs_io_wait_one(struct dsfs_io *io)
{
	struct io_op *op;

	pthread_mutex_lock(&io->lock);
	while (!io->head && !io->stopping)
		pthread_cond_wait(&io->work, &io->lock);
	op = io->head;
	if (op) {
		io->head = op->next;
		if (!io->head)
			io->tail = NULL;
		op->next = NULL;
	}
	pthread_mutex_unlock(&io->lock);
	return op;
}

/* True when pos is at or past the end of the file (one fstat). */
static bool at_eof(int fd, uint64_t pos)
{
	struct stat st;

	return fstat(fd, &st) == 0 && pos >= (uint64_t)st.st_size;
}

void dsfs_io_rest(struct io_op *op)
{
	uint64_t skip = op->done;
	unsigned i;

	op->nrest = 0;
	for (i = 0; i < op->req.niov; i++) {
		const struct iovec *v = &op->req.iov[i];

		if (skip >= v->iov_len) {
			skip -= v->iov_len;
			continue;
		}
		op->rest[op->nrest].iov_base = (char *)v->iov_base + skip;
		op->rest[op->nrest++].iov_len = v->iov_len - skip;
		skip = 0;
	}
}

/*
 * Short reads: a regular file reads short at EOF (and, rarely, when
 * interrupted).  Rather than pay one more read to see 0, take the bytes the
 * submitter knows the file holds (req.want), or else ask fstat whether the
 * position is at EOF; if not (or the file grew), read the rest.  An
 * O_DIRECT continuation from an unaligned position (the file grew after it
 * read short at its then EOF) fails with EINVAL: that read ended at EOF, so
 * complete it short rather than fail it.
 */
bool dsfs_io_advance(struct io_op *op, int res)
{
	uint64_t pos;

	if (res == -EINTR || res == -EAGAIN)
		return true;
	if (res < 0) {
		pos = op->req.off + op->done;
		if (res == -EINVAL && op->done && pos % IO_DIO_ALIGN)
			op->result = (int)op->done;
		else
			op->result = res;
		return false;
	}
	op->done += (uint32_t)res;
	pos = op->req.off + op->done;
	if (res == 0 || op->done >= op->len ||
	    (op->req.want && op->done >= op->req.want) ||
	    at_eof(op->req.fd.fd, pos)) {
		op->result = (int)op->done;
		return false;
	}
	return true;
}

void dsfs_io_finish(struct dsfs_io *io, struct io_op *op)
{
	dsfs_io_done_fn done = op->req.done;
	void *arg = op->req.arg;
	int result = op->result;

	dsfs_fdpool_put(io->cfg.fdpool, &op->req.fd);
	dsfs_slab_free(&io->ops, op, sizeof(*op));
	__atomic_add_fetch(&io->n_reads, 1, __ATOMIC_RELAXED);
	if (result < 0)
		__atomic_add_fetch(&io->n_errors, 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&io->n_bytes, (uint64_t)result,
				   __ATOMIC_RELAXED);
	/* Before done: a waiter woken by the callback sees it drained. */
	__atomic_sub_fetch(&io->n_inflight, 1, __ATOMIC_RELAXED);
	done(arg, result);
}

void dsfs_io_get_stats(struct dsfs_io *io, struct dsfs_io_stats *s)
{
	s->reads = __atomic_load_n(&io->n_reads, __ATOMIC_RELAXED);
	s->bytes = __atomic_load_n(&io->n_bytes, __ATOMIC_RELAXED);
	s->errors = __atomic_load_n(&io->n_errors, __ATOMIC_RELAXED);
	s->inflight = __atomic_load_n(&io->n_inflight, __ATOMIC_RELAXED);
	s->uring = io->ring != NULL;
	s->fixed = io->fixed;
}

int dsfs_io_spawn(pthread_t *t, const char *name, void *(*fn)(void *),
		  void *arg)
{
	sigset_t all, old;
	int ret;

	/* Signals belong to the daemon's main thread, never to the engine. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		return -ret;
	pthread_setname_np(*t, name);
	return 0;
}
