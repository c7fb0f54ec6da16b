// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which opens bypass the kernel's page cache (FOPEN_DIRECT_IO).
 *
 * By default OPEN is answered ENOSYS and the kernel never asks again
 * (ops.c): every file's reads go through its page cache.  Where the
 * daemon's memory cgroup leaves that page cache less room than the
 * prefetch's lead (memroom.c), a loader's reads pass through pages that
 * the cgroup's reclaim takes back a 4 KiB page at a time soon after: each
 * file costs page allocations, charges and reclaim for nothing, on CPUs a
 * cold epoch already keeps busy.  There direct_io=auto answers OPEN and
 * gives each open FOPEN_DIRECT_IO (the daemon's reply goes to the reader's
 * buffer), except where the page cache would do better:
 *
 *  - readers that read in pieces: with direct I/O each read() is a round
 *    trip to the daemon, where the page cache takes one READ for its
 *    read-ahead window.  Once more than half of a window of direct READs
 *    (not at the end of the file) ask for less than PIECE and end before
 *    the file does, later opens use the page cache, for good.
 *  - files read again while the page cache would still hold them: at each
 *    open, the bytes of the files opened since the file's own last open
 *    (a bound on the distinct bytes between, which an LRU page cache of
 *    the room would have to hold).  While most reopens of a window lie
 *    within the room, opens use the page cache; an epoch later it holds
 *    them (a small data set in a tight cgroup).
 *
 * direct_io=on (-o direct_io) gives every open FOPEN_DIRECT_IO; off, never
 * (OPEN answered ENOSYS).  State is relaxed atomics: each window is a
 * heuristic, and a count lost to a race moves it by one.
 */
#include "config.h"

#include <stdint.h>

#include "dsfs.h"
#include "inodes.h"
#include "log.h"

#define WINDOW 256		/* reopens, and direct READs, a verdict */
#define PIECE (128u << 10)	/* a READ below this, ending before EOF */

/* Handles: the open's number, shifted; the low bit set for direct I/O. */
#define FH_DIRECT 1u

/* Whether OPEN is answered: the kernel sends none after an ENOSYS. */
static bool answers(const struct dsfs_fs *fs)
{
	return fs->opts.direct_io ||
	       __atomic_load_n(&fs->direct.autom, __ATOMIC_RELAXED);
}

bool dsfs_direct_init(struct dsfs_fs *fs, uint64_t room)
{
	struct dsfs_direct *d = &fs->direct;

	d->room = room;
	/* push=on asks for the page cache; with no room, push=auto is off */
	d->autom = fs->opts.direct_mode == DSFS_DIRECT_AUTO &&
		   room != UINT64_MAX && fs->opts.push != DSFS_PUSH_ON;
	return answers(fs);
}

/* At INIT, from a kernel that cannot map a file opened for direct I/O
 * shared (before Linux 6.6; devio.c), or where devio.c could not be put in
 * place: numpy.memmap and Python's mmap would fail with ENODEV, so auto
 * keeps to the page cache (OPEN answered ENOSYS), as -o direct_io does
 * not. */
void dsfs_direct_unmappable(struct dsfs_fs *fs)
{
	struct dsfs_direct *d = &fs->direct;

	if (!__atomic_exchange_n(&d->autom, false, __ATOMIC_RELAXED))
		return;
	dsfs_info("direct_io=auto: a file opened for direct I/O could not be mapped shared here (FUSE_DIRECT_IO_ALLOW_MMAP: Linux 6.6 and later): reads keep to the page cache");
}

/* A window's last count resets it; true, with *hits, for its taker. */
static bool window_full(uint32_t *count, uint32_t *hits, uint32_t *taken)
{
	if (__atomic_add_fetch(count, 1, __ATOMIC_RELAXED) != WINDOW)
		return false;
	*taken = __atomic_exchange_n(hits, 0, __ATOMIC_RELAXED);
	__atomic_store_n(count, 0, __ATOMIC_RELAXED);
	return true;
}

/* Under auto: whether this open of in had better use the page cache. */
static bool page_cache_better(struct dsfs_fs *fs, struct dsfs_inode *in)
{
	struct dsfs_direct *d = &fs->direct;
	uint64_t size = __atomic_load_n(&in->size, __ATOMIC_RELAXED), now, last;
	struct dsfs_inode_more *m;
	uint32_t fit;
	bool fits;

	if (__atomic_load_n(&d->in_pieces, __ATOMIC_RELAXED))
		return true; /* for good: no reopen needs counting */
	now = __atomic_add_fetch(&d->opened, size, __ATOMIC_RELAXED);
	m = dsfs_inodes_more(in);
	if (m && (last = __atomic_exchange_n(&m->opened_at, now,
					     __ATOMIC_RELAXED))) {
		if (now - last <= d->room)
			__atomic_add_fetch(&d->fits, 1, __ATOMIC_RELAXED);
		if (window_full(&d->reopens, &d->fits, &fit)) {
			fits = fit * 2 > WINDOW;
			if (__atomic_exchange_n(&d->fits_room, fits,
						__ATOMIC_RELAXED) != fits)
				dsfs_info("direct_io=auto: %u of the last %u files opened again were within the page cache's room (%llu MiB) since their last open: %s",
					  fit, WINDOW,
					  (unsigned long long)(d->room >> 20),
					  fits ? "opens use the page cache" :
						 "opens bypass it again");
		}
	}
	return __atomic_load_n(&d->fits_room, __ATOMIC_RELAXED);
}

bool dsfs_direct_open(struct dsfs_fs *fs, struct dsfs_inode *in,
		      struct fuse_file_info *fi)
{
	struct dsfs_direct *d = &fs->direct;
	bool direct;

	if (!answers(fs))
		return false;
	direct = !__atomic_load_n(&d->autom, __ATOMIC_RELAXED) ||
		 !page_cache_better(fs, in);
	fi->direct_io = direct;
	/* As the kernel keeps a file's pages without OPEN; changes to SOURCE
	 * drop them (fresh.c) either way. */
	fi->keep_cache = !direct;
	/* Numbered, so that the plan hears of each open once (read.c) */
	fi->fh = __atomic_add_fetch(&d->opens, 1, __ATOMIC_RELAXED) << 1 |
		 (direct ? FH_DIRECT : 0);
	dsfs_count(direct ? &fs->counters.direct_opens :
			    &fs->counters.cached_opens, 1);
	return true;
}

void dsfs_direct_read(struct dsfs_fs *fs, const struct fuse_file_info *fi,
		      uint64_t off, size_t size, uint64_t fsize)
{
	struct dsfs_direct *d = &fs->direct;
	uint32_t pieces;

	if (!(fi->fh & FH_DIRECT) || !__atomic_load_n(&d->autom, __ATOMIC_RELAXED) ||
	    off >= fsize ||
	    __atomic_load_n(&d->in_pieces, __ATOMIC_RELAXED))
		return;
	if (size < PIECE && off + size < fsize)
		__atomic_add_fetch(&d->pieces, 1, __ATOMIC_RELAXED);
	if (window_full(&d->reads, &d->pieces, &pieces) &&
	    pieces * 2 > WINDOW) {
		__atomic_store_n(&d->in_pieces, true, __ATOMIC_RELAXED);
		dsfs_info("direct_io=auto: %u of the last %u reads of files opened for direct I/O asked for less than %u KiB short of the file's end: readers read in pieces, and later opens use the page cache (direct_io=on forces direct I/O)",
			  pieces, WINDOW, PIECE >> 10);
	}
}

const char *dsfs_direct_state(const struct dsfs_fs *fs)
{
	const struct dsfs_direct *d = &fs->direct;

	if (!answers(fs))
		return "used";
	if (!__atomic_load_n(&d->autom, __ATOMIC_RELAXED))
		return "bypassed";
	if (__atomic_load_n(&d->in_pieces, __ATOMIC_RELAXED))
		return "used: readers read in pieces";
	if (__atomic_load_n(&d->fits_room, __ATOMIC_RELAXED))
		return "used: the files read again fit its room";
	return "bypassed: no room in the memory cgroup";
}
