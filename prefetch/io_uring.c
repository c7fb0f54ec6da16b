// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The io_uring backend of the I/O engine (see io.h): one thread, one ring.
 *
 * The engine thread is the ring's only user.  Its single wait point is
 * io_uring_submit_and_wait(): besides the reads, one poll on an eventfd is
 * kept armed, and submitters write that eventfd when they append to an empty
 * queue.  Each turn the thread (1) moves queued requests into SQEs while
 * fewer than depth reads are in the ring, (2) submits and waits for at least
 * one completion, (3) reaps: a short read before EOF is resubmitted for the
 * rest, a complete one is finished (fd put back, callback called).  If the
 * queue is non-empty after (1), depth reads are in flight, so a completion
 * is sure to wake the thread to look again; if it is empty, the next
 * submitter finds it empty and writes the eventfd.  Hence no wake-up is lost
 * and no request waits while a slot is free.
 *
 * Ring sizes: SQ = depth, CQ = 2 * depth (the kernel's default); at most
 * depth reads + 1 poll exist at a time, so the CQ cannot overflow.
 *
 * Threads: dsfs_io_uring_kick from any thread (eventfd write); everything
 * else on the engine thread, except start/stop, which run before it starts
 * and after it is joined.  Fields of struct dsfs_io_ring: `reading`,
 * `armed` and `warned` belong to the engine thread; the rest are set by
 * start and read-only after.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <liburing.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "bgprio.h"
#include "io_int.h"
#include "log.h"

#define RING_PIECE (1ul << 30) /* the kernel's limit per fixed buffer */

struct dsfs_io_ring {
	struct io_uring ring;
	int efd;	      /* eventfd: submitters -> engine */
	pthread_t thread;     /* the engine thread */
	unsigned reading;     /* reads in the ring (prepared or in flight) */
	bool armed;	      /* the eventfd poll is in the ring */
	bool warned;	      /* a submit error has been logged */
	uintptr_t fixed_base; /* registered region */
	size_t fixed_size;    /* its size; 0 if nothing is registered */
};

/* An SQE, flushing the SQ to the kernel first if it is full (rare). */
static struct io_uring_sqe *ring_sqe(struct dsfs_io_ring *r)
{
	struct io_uring_sqe *sqe;

	while (!(sqe = io_uring_get_sqe(&r->ring)))
		io_uring_submit(&r->ring);
	return sqe;
}

/* Index of the registered piece holding all of buffer v, or -1. */
static int ring_fixed_index(const struct dsfs_io_ring *r,
			    const struct iovec *v)
{
	uintptr_t b = (uintptr_t)v->iov_base, rel, end;
	size_t idx;

	if (!r->fixed_size || b < r->fixed_base)
		return -1;
	rel = b - r->fixed_base;
	if (rel >= r->fixed_size || v->iov_len > r->fixed_size - rel)
		return -1;
	idx = rel / RING_PIECE;
	end = (idx + 1) * RING_PIECE;
	return rel + v->iov_len <= end ? (int)idx : -1;
}

/* Queue a read of what op still lacks: into one buffer, from the fixed
 * buffers where it lies in one; else scattered (readv). */
static void ring_prep(struct dsfs_io_ring *r, struct io_op *op)
{
	struct io_uring_sqe *sqe = ring_sqe(r);
	uint64_t off = op->req.off + op->done;
	int idx;

	dsfs_io_rest(op);
	if (op->nrest == 1) {
		idx = ring_fixed_index(r, &op->rest[0]);
		if (idx >= 0)
			io_uring_prep_read_fixed(sqe, op->req.fd.fd,
						 op->rest[0].iov_base,
						 (unsigned)op->rest[0].iov_len,
						 off, idx);
		else
			io_uring_prep_read(sqe, op->req.fd.fd,
					   op->rest[0].iov_base,
					   (unsigned)op->rest[0].iov_len, off);
	} else {
		io_uring_prep_readv(sqe, op->req.fd.fd, op->rest, op->nrest,
				    off);
	}
	io_uring_sqe_set_data(sqe, op);
}

/* Move queued requests into the ring while fewer than depth are in it. */
static bool ring_fill(struct dsfs_io *io, struct dsfs_io_ring *r)
{
	unsigned room = io->cfg.depth - r->reading;
	struct io_op *op, *next;
	bool stop;

	if (!room)
		return false; /* a completion will bring us back */
	for (op = dsfs_io_take(io, room, &stop); op; op = next) {
		next = op->next;
		ring_prep(r, op);
		r->reading++;
	}
	return stop;
}

static void ring_arm(struct dsfs_io_ring *r)
{
	struct io_uring_sqe *sqe = ring_sqe(r);

	io_uring_prep_poll_add(sqe, r->efd, POLLIN);
	io_uring_sqe_set_data(sqe, NULL);
	r->armed = true;
}

/*
 * Reset the eventfd before the next ring_fill() looks at the queue: a kick
 * after this read is kept for the next poll; one before it is for a request
 * that ring_fill() will see anyway.
 */
static void ring_ack_kick(struct dsfs_io_ring *r)
{
	uint64_t v;
	ssize_t n = read(r->efd, &v, sizeof(v)); /* EAGAIN: nothing pending */

	(void)n;
	r->armed = false;
}

static void ring_reap(struct dsfs_io *io, struct dsfs_io_ring *r)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;

	io_uring_for_each_cqe(&r->ring, head, cqe)
	{
		struct io_op *op = io_uring_cqe_get_data(cqe);

		n++;
		if (!op) {
			ring_ack_kick(r);
		} else if (dsfs_io_advance(op, cqe->res)) {
			ring_prep(r, op);
		} else {
			r->reading--;
			dsfs_io_finish(io, op);
		}
	}
	io_uring_cq_advance(&r->ring, n);
}

static void *ring_main(void *arg)
{
	struct dsfs_io *io = arg;
	struct dsfs_io_ring *r = io->ring;
	struct dsfs_boost boost;
	int ret;

	dsfs_boost_init(&boost, io->cfg.waited);
	for (;;) {
		dsfs_boost_poll(&boost);
		if (ring_fill(io, r) && !r->reading)
			break; /* stopping, nothing queued, nothing in flight */
		if (!r->armed)
			ring_arm(r);
		ret = io_uring_submit_and_wait(&r->ring, 1);
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN &&
		    ret != -EBUSY && !r->warned) {
			dsfs_warn("io_uring submit: %s (retrying)",
				  strerror(-ret));
			r->warned = true;
		}
		ring_reap(io, r);
	}
	return NULL; /* the armed poll is cancelled by io_uring_queue_exit */
}

/* Register the arena in <= 1 GiB pieces; on failure log and go without. */
static void ring_register(struct dsfs_io *io, struct dsfs_io_ring *r)
{
	uintptr_t base = (uintptr_t)io->cfg.fixed_base;
	size_t size = io->cfg.fixed_size, n, i;
	const char *hint = "";
	struct iovec *iov;
	int ret = -ENOMEM;

	if (!base)
		return;
	n = size / RING_PIECE + (size % RING_PIECE != 0);
	iov = n <= UINT_MAX ? calloc(n, sizeof(*iov)) : NULL;
	if (iov) {
		for (i = 0; i < n; i++) {
			size_t left = size - i * RING_PIECE;

			iov[i].iov_base = (void *)(base + i * RING_PIECE);
			iov[i].iov_len = left < RING_PIECE ? left : RING_PIECE;
		}
		ret = io_uring_register_buffers(&r->ring, iov, (unsigned)n);
		free(iov);
	}
	if (ret == -ENOMEM)
		hint = "; raise the locked memory limit (ulimit -l, LimitMEMLOCK=)";
	if (ret) {
		dsfs_warn(
			"cannot register %zu MiB of cache memory as io_uring fixed buffers (%s%s): reading without",
			size >> 20, strerror(-ret), hint);
		return;
	}
	r->fixed_base = base;
	r->fixed_size = size;
	io->fixed = true;
}

/*
 * SUBMIT_ALL: one bad SQE does not hold back the others.  COOP_TASKRUN:
 * completions wait for the engine's next io_uring_enter instead of
 * interrupting it (it enters every turn anyway).  Both need Linux 5.19;
 * older kernels get a plain ring.
 */
static int ring_init(struct dsfs_io_ring *r, unsigned depth)
{
	struct io_uring_params p = {
		.flags = IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN,
	};
	int ret = io_uring_queue_init_params(depth, &r->ring, &p);

	if (ret == -EINVAL) {
		memset(&p, 0, sizeof(p));
		ret = io_uring_queue_init_params(depth, &r->ring, &p);
	}
	return ret;
}

int dsfs_io_uring_start(struct dsfs_io *io)
{
	struct dsfs_io_ring *r = calloc(1, sizeof(*r));
	int ret;

	if (!r)
		return -ENOMEM;
	ret = ring_init(r, io->cfg.depth);
	if (ret) {
		free(r);
		return ret;
	}
	r->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (r->efd < 0) {
		ret = -errno;
		goto fail;
	}
	ring_register(io, r);
	io->ring = r;
	ret = dsfs_io_spawn(&r->thread, "dsfs-io", ring_main, io);
	if (!ret)
		return 0;
	io->ring = NULL;
	io->fixed = false;
	close(r->efd);
fail:
	io_uring_queue_exit(&r->ring); /* unregisters the buffers too */
	free(r);
	return ret;
}

void dsfs_io_uring_kick(struct dsfs_io *io)
{
	uint64_t one = 1;
	/* Fails only if 2^64 - 2 kicks are pending: then one is, too. */
	ssize_t n = write(io->ring->efd, &one, sizeof(one));

	(void)n;
}

void dsfs_io_uring_stop(struct dsfs_io *io)
{
	struct dsfs_io_ring *r = io->ring;

	dsfs_io_uring_kick(io); /* io->stopping is set: come and see */
	pthread_join(r->thread, NULL);
	if (io->fixed)
		io_uring_unregister_buffers(&r->ring);
	io_uring_queue_exit(&r->ring);
	close(r->efd);
	free(r);
}
