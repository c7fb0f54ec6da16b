// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The session's reads and writes of /dev/fuse where opens may bypass the
 * page cache (-o direct_io, direct_io=auto: direct.c): libfuse's own, but
 * for one flag of the INIT reply.
 *
 * A file opened with FOPEN_DIRECT_IO (every file under -o direct_io) can be
 * mapped shared only if the filesystem answered INIT with
 * FUSE_DIRECT_IO_ALLOW_MMAP (Linux 6.6 and later; a shared mapping then
 * reads through the page cache while read() still reaches the daemon).
 * Without it the kernel refuses mmap(MAP_SHARED) with ENODEV, which
 * numpy.memmap, Python's mmap module and many loaders use even to read.
 * libfuse 3.14 has no capability bit for the flag (3.16 added one), so
 * dsfs passes the session's I/O through fuse_session_custom_io(): the read
 * notes the INIT request's unique id when the kernel offers the flag, and
 * the write of the reply to that id adds it (with FUSE_INIT_EXT, which
 * carries the upper flag word).  Every other message passes unchanged.
 *
 * Threads: FUSE workers, on the session fd or their clones.  The kernel
 * sends nothing but INIT until it is answered, so init_unique is written
 * once before any other request is read and cleared by the reply's write;
 * relaxed atomics all the same.
 */
#include "config.h"

#include <errno.h>
#include <linux/fuse.h>
#include <stddef.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "dsfs.h"

#ifndef FUSE_DIRECT_IO_ALLOW_MMAP
#define FUSE_DIRECT_IO_ALLOW_MMAP (1ULL << 36)
#endif
#define ALLOW_MMAP_WORD2 ((uint32_t)(FUSE_DIRECT_IO_ALLOW_MMAP >> 32))

/* The kernel's INIT request: note its unique id if it offers the flag;
 * if not, direct_io=auto keeps to the page cache (direct.c). */
static ssize_t devio_read(int fd, void *buf, size_t len, void *userdata)
{
	struct dsfs_fs *fs = userdata;
	ssize_t n = read(fd, buf, len);
	const struct fuse_in_header *in = buf;
	const struct fuse_init_in *arg = (const void *)(in + 1);
	bool init = n >= (ssize_t)(sizeof(*in) +
				   offsetof(struct fuse_init_in, flags) +
				   sizeof(arg->flags)) &&
		    in->opcode == FUSE_INIT;

	if (init && n >= (ssize_t)(sizeof(*in) +
				   offsetof(struct fuse_init_in, flags2) +
				   sizeof(arg->flags2)) &&
	    (arg->flags & FUSE_INIT_EXT) && (arg->flags2 & ALLOW_MMAP_WORD2))
		__atomic_store_n(&fs->init_unique, in->unique,
				 __ATOMIC_RELAXED);
	else if (init)
		dsfs_direct_unmappable(fs);
	return n;
}

/* The reply to that INIT: the flag added to a copy of libfuse's. */
static ssize_t devio_writev(int fd, struct iovec *iov, int count,
			    void *userdata)
{
	struct dsfs_fs *fs = userdata;
	uint64_t want = __atomic_load_n(&fs->init_unique, __ATOMIC_RELAXED);
	const struct fuse_out_header *out = iov[0].iov_base;
	struct fuse_init_out arg;
	struct iovec v[2];

	if (!want || count != 2 || iov[0].iov_len < sizeof(*out) ||
	    out->unique != want || out->error ||
	    iov[1].iov_len < offsetof(struct fuse_init_out, flags2) +
				     sizeof(arg.flags2) ||
	    iov[1].iov_len > sizeof(arg))
		return writev(fd, iov, count);
	__atomic_store_n(&fs->init_unique, 0, __ATOMIC_RELAXED);
	memcpy(&arg, iov[1].iov_base, iov[1].iov_len);
	arg.flags |= FUSE_INIT_EXT;
	arg.flags2 |= ALLOW_MMAP_WORD2;
	v[0] = iov[0];
	v[1].iov_base = &arg;
	v[1].iov_len = iov[1].iov_len;
	return writev(fd, v, 2);
}

static const struct fuse_custom_io devio = {
	.read = devio_read,
	.writev = devio_writev,
};

/* The callbacks get the session's userdata: the struct dsfs_fs. */
int dsfs_devio_install(struct fuse_session *se)
{
	return fuse_session_custom_io(se, &devio, fuse_session_fd(se));
}
