/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The memory limit this process runs under: the smallest limit of its
 * memory cgroup and the cgroup's ancestors, v1 (memory.limit_in_bytes under
 * /sys/fs/cgroup/memory) or v2 (memory.max under /sys/fs/cgroup).  Used to
 * refuse a cache that the cgroup would kill the daemon for.  Any thread;
 * reads a few small files.
 */
#ifndef DSFS_CGROUP_H
#define DSFS_CGROUP_H

#include <stddef.h>
#include <stdint.h>

/* 0 with *limit (UINT64_MAX: none) and the cgroup directory that sets it
 * in where (may be NULL); -errno when /proc/self/cgroup cannot be read. */
int dsfs_cgroup_mem_limit(uint64_t *limit, char *where, size_t wherelen);

#endif
