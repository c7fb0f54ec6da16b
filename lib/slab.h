/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Memory for many long-lived objects of mixed small sizes (the inode
 * table's inodes, each with its name): carved from 64 KiB blocks in
 * multiples of 8 bytes, with no per-object header, where malloc adds 8
 * bytes to each and rounds to 16 (a 128-byte inode with its name takes
 * 128 bytes here, 144 from malloc).  A freed object waits on its size's
 * list for the next object of that size; blocks go back to the system
 * only when the slab is destroyed, as most of malloc's arena memory does.
 *
 * Threads: any; each slab has its own mutex, held for O(1) work.  Under
 * AddressSanitizer an object is unpoisoned while allocated only, so a use
 * after its free is reported as malloc's would be.
 */
#ifndef DSFS_SLAB_H
#define DSFS_SLAB_H

#include <pthread.h>
#include <stddef.h>

#define DSFS_SLAB_MAX 512	/* the largest object, in bytes */
#define DSFS_SLAB_BLOCK 65536	/* bytes taken from malloc at a time */

struct dsfs_slab {
	pthread_mutex_t lock;
	void *free[DSFS_SLAB_MAX / 8];	/* by size / 8 - 1: freed objects,
					   each one's first word the next;
					   protected by lock */
	char *block;			/* the newest block; protected by
					   lock */
	size_t used;			/* bytes of it handed out or its
					   header; protected by lock */
};

void dsfs_slab_init(struct dsfs_slab *s);
/* Frees every block: every object allocated from s goes with them. */
void dsfs_slab_destroy(struct dsfs_slab *s);
/* size bytes, 8-byte aligned, uninitialised; NULL when size is 0 or above
 * DSFS_SLAB_MAX, or when malloc fails.  O(1). */
void *dsfs_slab_alloc(struct dsfs_slab *s, size_t size);
/* Give back p, allocated from s with this size.  O(1). */
void dsfs_slab_free(struct dsfs_slab *s, void *p, size_t size);

#endif
