// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The pread fallback of the I/O engine (see io.h), used when io_uring cannot
 * be set up (kernel.io_uring_disabled, seccomp, old kernel) or when asked
 * to.  A few threads (min(depth, 8)) take requests off the same queue and
 * serve them with blocking preadv(2) under the same rules as the ring: read
 * until len or EOF, retry EINTR, one callback per request.  Reads in flight
 * are bounded by the number of threads (<= depth).
 *
 * Threads: the workers wait on io->work (with io->lock) for the queue;
 * submitters signal it.  The worker array is written by start before the
 * workers run and read by stop after they are told to stop.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bgprio.h"
#include "io_int.h"

struct dsfs_io_threads {
	unsigned n; /* threads started */
	pthread_t t[];
};

static void pool_read(struct io_op *op)
{
	ssize_t n;

	do {
		dsfs_io_rest(op);
		n = preadv(op->req.fd.fd, op->rest, (int)op->nrest,
			   (off_t)(op->req.off + op->done));
	} while (dsfs_io_advance(op, n < 0 ? -errno : (int)n));
}

/* Until stopping and the queue is empty: take a request, read, finish. */
static void *pool_main(void *arg)
{
	struct dsfs_io *io = arg;
	struct dsfs_boost boost;
	struct io_op *op;

	dsfs_boost_init(&boost, io->cfg.waited);
	while ((op = dsfs_io_wait_one(io))) {
		dsfs_boost_poll(&boost);
		pool_read(op);
		dsfs_io_finish(io, op);
	}
	return NULL;
}

static void pool_join(struct dsfs_io *io)
{
	struct dsfs_io_threads *p = io->threads;
	unsigned i;

	pthread_mutex_lock(&io->lock);
	io->stopping = true; /* already set by dsfs_io_free, not on errors */
	pthread_cond_broadcast(&io->work);
	pthread_mutex_unlock(&io->lock);
	for (i = 0; i < p->n; i++)
		pthread_join(p->t[i], NULL);
	free(p);
	io->threads = NULL;
}

int dsfs_io_threads_start(struct dsfs_io *io, unsigned nthreads)
{
	struct dsfs_io_threads *p;
	int ret = 0;

	p = calloc(1, sizeof(*p) + nthreads * sizeof(p->t[0]));
	if (!p)
		return -ENOMEM;
	io->threads = p;
	while (p->n < nthreads && !ret) {
		ret = dsfs_io_spawn(&p->t[p->n], "dsfs-io-pread", pool_main,
				    io);
		if (!ret)
			p->n++;
	}
	if (ret)
		pool_join(io);
	return ret;
}

void dsfs_io_threads_stop(struct dsfs_io *io)
{
	pool_join(io);
}
