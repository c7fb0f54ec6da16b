/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The arena: one contiguous mapping that holds every byte of cached file
 * data, so the data budget (cache_size) is a hard bound by construction.
 *
 * Backing memory, by preference: explicit 2 MiB hugetlb pages from the
 * kernel's pool, transparent huge pages (madvise), or 4 KiB pages.  NUMA
 * placement through libnuma before any page is touched.  Created once at
 * mount time by the main thread; afterwards read-only (base/size/kind).
 */
#ifndef DSFS_ARENA_H
#define DSFS_ARENA_H

#include <stddef.h>

enum dsfs_hugepages { DSFS_HUGEPAGES_AUTO, DSFS_HUGEPAGES_REQUIRE,
		      DSFS_HUGEPAGES_OFF };
enum dsfs_page_kind { DSFS_PAGE_HUGETLB, DSFS_PAGE_THP, DSFS_PAGE_4K };
enum dsfs_numa_mode { DSFS_NUMA_LOCAL, DSFS_NUMA_INTERLEAVE, DSFS_NUMA_NODE };

struct dsfs_arena_cfg {
	size_t size;			/* bytes of file data; > 0 */
	enum dsfs_hugepages hugepages;
	enum dsfs_numa_mode numa;
	int numa_node;			/* for DSFS_NUMA_NODE */
};

struct dsfs_arena {
	char *base;			/* 2 MiB aligned */
	size_t size;			/* usable bytes: cfg.size rounded down to 4 KiB */
	size_t mapped;			/* bytes mapped (>= size; hugetlb rounds up) */
	enum dsfs_page_kind kind;
	char nodes[64];			/* NUMA node(s) as text: "0", "0-3", ... */
};

/*
 * Map the arena.  On failure returns -errno and writes a one-line reason a
 * user can act on into why (e.g. for hugepages=require: how many pages are
 * free, how many are needed, and /proc/sys/vm/nr_hugepages).
 */
int dsfs_arena_create(struct dsfs_arena *a, const struct dsfs_arena_cfg *cfg,
		      char *why, size_t whylen);
void dsfs_arena_destroy(struct dsfs_arena *a);
const char *dsfs_page_kind_name(enum dsfs_page_kind kind); /* "hugetlb"|"thp"|"4k" */

/* 0 if node exists on this machine (libnuma), else -ENODEV. */
int dsfs_numa_node_valid(int node);

#endif
