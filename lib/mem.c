// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Resident tables (see mem.h).
 */
#include "config.h"

#include <sys/mman.h>

#include "mem.h"

void *dsfs_table_new(size_t n)
{
	void *p;

	if (!n)
		return NULL;
	p = mmap(NULL, n, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void dsfs_table_free(void *p, size_t n)
{
	if (p)
		munmap(p, n);
}
