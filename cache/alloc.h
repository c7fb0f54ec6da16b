/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Page-granular allocator for the arena: many objects of 1 page (4 KiB) to
 * DSFS_ALLOC_MAX_PAGES pages, packed without a hugepage per object.  Two-level
 * segregated fit over out-of-band metadata (the arena itself holds only file
 * data, so it can be DMA'd into): O(1) get and put, immediate coalescing.
 *
 * Not thread-safe: the cache serialises calls with its own lock.
 */
#ifndef DSFS_ALLOC_H
#define DSFS_ALLOC_H

#include <stdint.h>

#define DSFS_PAGE_SIZE 4096u
#define DSFS_ALLOC_MAX_PAGES 512u /* 2 MiB: one cache chunk */

struct dsfs_alloc;

/* 1 <= npages < 2^31 (8 TiB).  NULL on allocation failure.  Costs 12 bytes
 * of metadata per page. */
struct dsfs_alloc *dsfs_alloc_new(uint32_t npages);
void dsfs_alloc_free(struct dsfs_alloc *a);

/* n in [1, DSFS_ALLOC_MAX_PAGES] (else -EINVAL): first page index, or
 * -ENOSPC if no free run of n pages exists (even if n pages are free in
 * total). */
int64_t dsfs_alloc_get(struct dsfs_alloc *a, uint32_t n);
/* Return a run obtained from dsfs_alloc_get (same first and n). */
void dsfs_alloc_put(struct dsfs_alloc *a, uint32_t first, uint32_t n);

/* Like dsfs_alloc_get, but when no free run of n pages exists, takes up
 * to n pages of one of the largest free runs instead: first page index and
 * *got in [1, n], or -ENOSPC when no page is free, -EINVAL.  O(1), as get
 * (the fallback looks at the head of the highest non-empty class, which
 * is within a size class of the largest run). */
int64_t dsfs_alloc_get_upto(struct dsfs_alloc *a, uint32_t n, uint32_t *got);

uint32_t dsfs_alloc_used_pages(const struct dsfs_alloc *a);
uint32_t dsfs_alloc_total_pages(const struct dsfs_alloc *a);

#endif
