/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The I/O engine: one thread driving one io_uring that reads backing files
 * straight into cache memory (O_DIRECT where the backing filesystem allows),
 * with a bounded number of reads in flight (the queue depth).  The arena may
 * be registered as fixed buffers (at most 1 GiB per buffer) so the kernel
 * does not pin pages per read.
 *
 * When io_uring is unavailable (kernel.io_uring_disabled, seccomp, old
 * kernel) the same interface is served by a small pool of threads doing
 * pread(2); the engine says which in its stats and logs it once.
 *
 * Submitters borrow the fd from the fd pool themselves and hand the
 * borrowed reference to the engine, which returns it to the pool when the
 * read completes; so the engine never opens files and never outlives an fd.
 *
 * O_DIRECT: the engine issues reads as given.  Alignment is the submitter's
 * duty (see struct dsfs_io_req); a misaligned read on an O_DIRECT fd ends in
 * done(arg, -EINVAL).
 *
 * Threads: dsfs_io_submit from any thread (never blocks on I/O; a short
 * mutex-protected queue and an eventfd wake the engine).  `done` callbacks
 * run on the engine's thread(s) and must not block; they may call
 * dsfs_io_submit (e.g. to chain the next read).
 */
#ifndef DSFS_IO_H
#define DSFS_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "fdpool.h"

struct dsfs_io;

/* Largest depth accepted: keeps the ring (and the pread pool) small. */
#define DSFS_IO_MAX_DEPTH 4096u
/* Buffers one read may scatter into (a cache entry's runs). */
#define DSFS_IO_MAX_IOV 8u

struct dsfs_io_cfg {
	unsigned depth;		    /* reads in flight at most, >= 1 */
	struct dsfs_fdpool *fdpool; /* where borrowed fds are returned */
	void *fixed_base;	    /* memory to register, or NULL */
	size_t fixed_size;	    /* its length in bytes */
	bool force_threads;	    /* tests: use the pread fallback */
	/* When the fetch was last behind the loader, or NULL: the engine's
	 * threads boost themselves after that (lib/bgprio.h's boost). */
	const uint64_t *waited;
};

/* result: bytes read (short only at end of file) or -errno. */
typedef void (*dsfs_io_done_fn)(void *arg, int result);

/*
 * One read of the file's bytes from off on, scattered over the buffers in
 * iov order (readv(2)); the bytes wanted are the sum of their lengths, at
 * most INT_MAX.  For an O_DIRECT fd, every iov_base and iov_len and off
 * must be 4 KiB multiples (the engine does not check; a misaligned read
 * ends in -EINVAL).  Reading past EOF is fine: the result is then short,
 * or 0.  The fd must not be O_NONBLOCK (io_uring would answer EAGAIN,
 * which the engine retries, spinning).
 */
struct dsfs_io_req {
	struct dsfs_fdref fd; /* borrowed; the engine puts it back */
	struct iovec iov[DSFS_IO_MAX_IOV]; /* where the bytes go */
	unsigned niov;	      /* 1 .. DSFS_IO_MAX_IOV */
	uint64_t off;	      /* file offset */
	/* 0, or the bytes the file is known to hold from off on (its size
	 * from an fstat of this fd), when the iov asks more (an O_DIRECT
	 * read rounded up to pages): a read that ends short having read
	 * them is complete, without the fstat that otherwise tells EOF */
	uint32_t want;
	dsfs_io_done_fn done;
	void *arg;
};

/* Make req read len bytes into one buffer. */
static inline void dsfs_io_req_buf(struct dsfs_io_req *req, void *buf,
				   uint32_t len)
{
	req->iov[0].iov_base = buf;
	req->iov[0].iov_len = len;
	req->niov = 1;
	req->want = 0;
}

/*
 * Start the engine.  On failure returns -errno with a one-line reason in
 * why.  Falls back to the thread pool (and logs it) if io_uring cannot be
 * set up.  If cfg->fixed_base is set, [fixed_base, fixed_base + fixed_size)
 * is registered in pieces of at most 1 GiB; a request whose buffer lies
 * inside one piece is read with IORING_OP_READ_FIXED, any other the plain
 * way.  If registration fails (RLIMIT_MEMLOCK, ...) the engine logs one
 * line and runs without (stats.fixed false).  The memory must stay mapped
 * until dsfs_io_free returns.  Cost: registering pins the whole region, so
 * it faults in and commits all of it now, O(size): 0.2 to 2 s per GiB of
 * 4 KiB pages on the development VM, far less with huge pages.
 */
int dsfs_io_new(const struct dsfs_io_cfg *cfg, struct dsfs_io **out, char *why,
		size_t whylen);
/*
 * Stops accepting reads (dsfs_io_submit returns -ESHUTDOWN from then on),
 * performs every read still queued or in flight and calls its callback,
 * joins the engine's threads, unregisters and frees.  Must not be called
 * from a done callback.  No dsfs_io_submit may be started once free could
 * have returned; one that overlaps its start is answered -ESHUTDOWN.
 */
void dsfs_io_free(struct dsfs_io *io);

/*
 * Queue a read (the request is copied).  The engine reads until len bytes or
 * end of file, resubmitting after short reads and retrying EINTR/EAGAIN,
 * then calls done exactly once.  Once the callback has been called the
 * submitter's dsfs_io_submit call touches the engine no more, so a thread
 * that saw every callback may free the engine.
 * Returns 0, or -errno (done is then not called and the fd is NOT put back:
 * the caller still owns it): -ESHUTDOWN if the engine is stopping, -EINVAL
 * if len > INT_MAX, -ENOMEM.  Cost: one malloc and one mutex round; one
 * eventfd write when the engine's queue was empty.
 */
int dsfs_io_submit(struct dsfs_io *io, const struct dsfs_io_req *req);
/*
 * Queue n reads at once, as n dsfs_io_submit calls would, but with one
 * mutex round and at most one eventfd write: what a thread that prepares
 * many reads in a row (the plan's prefetch) should use.  All or nothing:
 * 0, or -errno with no read queued (the caller still owns every fd).
 */
int dsfs_io_submit_many(struct dsfs_io *io, const struct dsfs_io_req *reqs,
			unsigned n);

struct dsfs_io_stats {
	uint64_t reads;	   /* completed requests, failed ones included */
	uint64_t bytes;	   /* bytes read from backing files */
	uint64_t errors;   /* requests that ended in an error */
	uint64_t inflight; /* requests queued or in flight now */
	bool uring;	   /* false: pread thread pool */
	bool fixed;	   /* arena registered as fixed buffers */
};
/* Lock-free; the counters are each exact but not a consistent snapshot. */
void dsfs_io_get_stats(struct dsfs_io *io, struct dsfs_io_stats *s);

/* pthread_create with every signal blocked in the new thread (they
 * belong to the daemon's main thread), named `name`.  0 or -errno. */
int dsfs_io_spawn(pthread_t *t, const char *name, void *(*fn)(void *),
		  void *arg);

#endif
