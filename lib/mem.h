/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tables the daemon sizes at mount and writes all over: mapped with their
 * pages in place (MAP_POPULATE), so that their first writes do not each
 * take a page fault in the I/O path.  A fault costs 16 to 22 us on the
 * development VM (shadow paging), populating under 1 us a page; a table
 * touched at random (a hash table, a sketch) would otherwise fault a page
 * at a time through most of the first epoch.  Their memory is resident
 * from the start, which is what they come to anyway.
 *
 * Threads: any.
 */
#ifndef DSFS_MEM_H
#define DSFS_MEM_H

#include <stddef.h>

/* n zeroed bytes, resident; NULL when out of memory.  Free with
 * dsfs_table_free(p, n), the same n. */
void *dsfs_table_new(size_t n);
void dsfs_table_free(void *p, size_t n);

#endif
