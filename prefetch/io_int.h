/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Internals of the I/O engine shared by its three files: io.c (the request
 * queue, completion and the public entry points), io_uring.c (the io_uring
 * backend) and io_threads.c (the pread fallback).  Not for other modules.
 *
 * Threads: submitters append to the queue under dsfs_io.lock; the backend's
 * thread(s) take requests off it under the same lock and own a request from
 * then on until dsfs_io_finish() has called its callback.
 */
#ifndef DSFS_IO_INT_H
#define DSFS_IO_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "io.h"
#include "slab.h"

/* One queued or running request. */
struct io_op {
	struct dsfs_io_req req;
	uint32_t len;	    /* bytes wanted: the sum of req.iov's lengths */
	uint32_t done;	    /* bytes read so far; owned by the backend */
	/* What is still to read: req.iov less the first `done` bytes, made
	 * by dsfs_io_rest(); the backend's, kept until the read completes
	 * (io_uring may look at it after the submission). */
	struct iovec rest[DSFS_IO_MAX_IOV];
	unsigned nrest;
	int result;	    /* final result, set by dsfs_io_advance() */
	struct io_op *next; /* queue link, protected by dsfs_io.lock */
};

struct dsfs_io_ring;
struct dsfs_io_threads;

struct dsfs_io {
	struct dsfs_io_cfg cfg;
	pthread_mutex_t lock;
	pthread_cond_t work;	   /* pread pool: queue non-empty or stopping */
	struct io_op *head, *tail; /* protected by lock */
	bool stopping;		   /* protected by lock */
	/* The ops: made by submitters, given back by the engine's threads;
	 * kept for the next (malloc's arena of the submitting thread, fed
	 * from another, grew and shrank its heap every few dozen reads). */
	struct dsfs_slab ops;
	/* Set by dsfs_io_new() before any engine thread starts; read-only. */
	bool fixed;
	struct dsfs_io_ring *ring;	 /* io_uring backend, or NULL */
	struct dsfs_io_threads *threads; /* pread backend, or NULL */
	/*
	 * Counters, relaxed atomics: each is an independent tally read only
	 * for display; nothing else is published through them, so only
	 * atomicity (no lost or torn updates between submitters and engine
	 * threads) is needed, not ordering.
	 */
	uint64_t n_reads, n_bytes, n_errors, n_inflight;
};

/* io.c */
/*
 * Take up to max requests off the queue (a list linked by next, in order).
 * *stop is set when the engine is stopping and the queue is now empty.
 */
struct io_op *dsfs_io_take(struct dsfs_io *io, unsigned max, bool *stop);
/* Block until a request is queued (return it) or the engine stops (NULL). */
struct io_op *dsfs_io_wait_one(struct dsfs_io *io);
/*
 * Account the result of one read(2)-like call for op.  Returns true when the
 * rest must be read (short read before EOF, EINTR, EAGAIN); false when op is
 * complete, with op->result set.  May fstat(2) the fd after a short read.
 */
bool dsfs_io_advance(struct io_op *op, int res);
/* Set op->rest and op->nrest to the buffers still to fill (the parts of
 * req.iov past its first op->done bytes). */
void dsfs_io_rest(struct io_op *op);
/* Put the fd back, count, call done(arg, op->result), free op. */
void dsfs_io_finish(struct dsfs_io *io, struct io_op *op);

/* io_uring.c: 0 or -errno (io_uring unusable: use the pread pool). */
int dsfs_io_uring_start(struct dsfs_io *io);
/* Wake the engine thread (one eventfd write); any thread, lock or not. */
void dsfs_io_uring_kick(struct dsfs_io *io);
/* Wake, join (the queue must be stopping), tear down. */
void dsfs_io_uring_stop(struct dsfs_io *io);

/* io_threads.c */
int dsfs_io_threads_start(struct dsfs_io *io, unsigned nthreads);
void dsfs_io_threads_stop(struct dsfs_io *io);

#endif
