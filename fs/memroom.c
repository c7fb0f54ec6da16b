// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The daemon in a memory cgroup.  A cache of 4 KiB pages (not huge pages:
 * the hugetlb pool is not charged) counts against the cgroup's limit, and
 * what the limit leaves beside it must hold the daemon's own memory, the
 * kernel's inodes and names of the tree (the mount's and, for the fetches'
 * opens, the volume's) and the page cache that loaders' reads pass
 * through, when they share the cgroup.  A cache that leaves the daemon too
 * little is refused (the OOM killer would take it); one that leaves the
 * tree's inodes too little is let through with a warning (the kernel
 * reclaims them and every open goes back to the daemon for a lookup); the
 * push into the page cache (push.c) is kept off where its lead has no room.
 * Main thread, at mount; dsfs_memroom_advise() also from a FUSE worker
 * running a plan command (ctl.c, under its lock: the only writer of
 * fs->layout).
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>

#include "cgroup.h"
#include "dsfs.h"
#include "layout.h"
#include "log.h"

/* Memory the daemon needs beside a charged cache: index, inode table,
 * fd pool, threads' stacks, libraries. */
#define DAEMON_ROOM (64ULL << 20)
/* The page cache a loader's reads pass through (readahead windows of the
 * files being read, and what reclaim has yet to take). */
#define PAGES_ROOM (64ULL << 20)
/* The kernel's memory for one file of the tree: the mount's inode and name
 * (fuse_inode, dentry) and the volume's (xfs_inode and its log item,
 * dentry), with their index nodes.  Measured on XFS: 150 MiB of charged
 * kernel memory for a 50,000-file tree, listed and read through dsfs. */
#define FILE_ROOM (3ULL << 10)

/* The daemon's memory cgroup limit; false where none is set or readable. */
static bool cgroup_limit(uint64_t *limit, char *where, size_t wherelen)
{
	return dsfs_cgroup_mem_limit(limit, where, wherelen) == 0 &&
	       *limit != UINT64_MAX;
}

/* The cache's bytes the cgroup is charged for: none in huge pages. */
static uint64_t charged_cache(const struct dsfs_fs *fs)
{
	return fs->arena.kind == DSFS_PAGE_HUGETLB ? 0 : fs->arena.size;
}

/* The plan's files, or 0 before a plan (then unknown). */
static uint64_t tree_files(const struct dsfs_fs *fs)
{
	return fs->layout ? dsfs_layout_count(fs->layout) : 0;
}

/* What the cgroup must hold beside the cache whatever the loaders do: the
 * daemon, and the kernel's inodes of the plan's files. */
static uint64_t daemon_and_inodes(const struct dsfs_fs *fs)
{
	return DAEMON_ROOM + tree_files(fs) * FILE_ROOM;
}

static unsigned long long mib(uint64_t bytes)
{
	return (unsigned long long)((bytes + (1 << 20) - 1) >> 20);
}

/* A charged cache the cgroup would OOM-kill the daemon for, once filled, is
 * refused before mounting, with what would fit. */
int dsfs_memroom_check(const struct dsfs_fs *fs)
{
	uint64_t limit, size = charged_cache(fs);
	char where[PATH_MAX] = "";

	if (!size || !cgroup_limit(&limit, where, sizeof(where)) ||
	    size + DAEMON_ROOM <= limit)
		return 0;
	fprintf(stderr, "dsfs: cache_size=%s does not fit the memory cgroup limit of %llu MiB (%s) with the daemon's own %llu MiB; give at most cache_size=%lluM, or use hugepages, which the memory cgroup does not charge\n",
		fs->opts.cache_size_s ? fs->opts.cache_size_s : "(default)",
		(unsigned long long)(limit >> 20), where,
		(unsigned long long)(DAEMON_ROOM >> 20),
		(unsigned long long)(limit > DAEMON_ROOM ?
				     (limit - DAEMON_ROOM) >> 20 : 0));
	return -1;
}

/* The room for the tree beside the cache: a warning only, as a mount
 * without it serves every byte right, slower.  Once the mount has a plan
 * (the file count): at the mount, or at its first plan from the control
 * channel (ctl.c, which lists the tree then). */
void dsfs_memroom_advise(const struct dsfs_fs *fs)
{
	uint64_t limit, files = tree_files(fs), size = charged_cache(fs), want;
	char where[PATH_MAX] = "", fix[96];

	if (!files || !cgroup_limit(&limit, where, sizeof(where)))
		return;
	want = daemon_and_inodes(fs) + PAGES_ROOM;
	if (size + want <= limit)
		return;
	fix[0] = '\0';
	if (size && limit > want)
		snprintf(fix, sizeof(fix), ", or cache_size=%lluM, or hugepages",
			 (unsigned long long)((limit - want) >> 20));
	else if (size)
		snprintf(fix, sizeof(fix), ", or hugepages");
	dsfs_warn("the memory cgroup limit of %llu MiB (%s) leaves %llu MiB beside the cache, where the daemon, the page cache of reads and the kernel's inodes of the plan's %llu files (about %llu KiB each, the mount's and the volume's) want %llu MiB: the kernel will drop inodes and each open will wait for a lookup; give the cgroup %llu MiB%s",
		  (unsigned long long)(limit >> 20), where,
		  (unsigned long long)(limit > size ? (limit - size) >> 20 : 0),
		  (unsigned long long)files,
		  (unsigned long long)(FILE_ROOM >> 10), mib(want),
		  mib(size + want), fix);
}

/* The page cache's room in the cgroup beside the cache, the daemon and the
 * kernel's inodes of the tree; UINT64_MAX where there is no limit or it
 * leaves room for the lead.  *limit and where: the limit and the cgroup's
 * path, where there is one. */
static uint64_t page_room(const struct dsfs_fs *fs, uint64_t *limit,
			  char *where, size_t wherelen)
{
	uint64_t used = charged_cache(fs) + daemon_and_inodes(fs);

	if (!cgroup_limit(limit, where, wherelen))
		return UINT64_MAX;
	if (*limit > used && *limit - used >= dsfs_lead_bytes(fs))
		return UINT64_MAX;
	return *limit > used ? *limit - used : 0;
}

uint64_t dsfs_memroom_page_room(const struct dsfs_fs *fs)
{
	uint64_t limit;
	char where[PATH_MAX] = "";

	return page_room(fs, &limit, where, sizeof(where));
}

/* Pushed pages are charged to the daemon's cgroup too: with push=auto, no
 * push where the limit leaves less room for them than the prefetch's lead
 * (they would be reclaimed before the loader comes, each push a wasted
 * copy), nor where opens bypass the page cache (no pages kept).  At the
 * mount, after dsfs_direct_init(), whose choice it logs. */
bool dsfs_memroom_push(const struct dsfs_fs *fs)
{
	uint64_t limit, room;
	char where[PATH_MAX] = "";

	room = page_room(fs, &limit, where, sizeof(where));
	if (fs->direct.autom)
		dsfs_info("direct_io=auto: the memory cgroup limit of %llu MiB (%s) leaves %llu MiB, less than the lead (%llu MiB), for the page cache beside the cache, the daemon and the kernel's inodes of the tree: reads bypass the page cache (direct_io=off keeps it)",
			  (unsigned long long)(limit >> 20), where,
			  (unsigned long long)(room >> 20),
			  (unsigned long long)(dsfs_lead_bytes(fs) >> 20));
	if (fs->opts.direct_io || fs->opts.push == DSFS_PUSH_OFF)
		return false;
	if (fs->opts.push == DSFS_PUSH_ON || room == UINT64_MAX)
		return true;
	dsfs_info("push: off: the memory cgroup limit of %llu MiB (%s) leaves less than the lead (%llu MiB) for the page cache beside the cache, the daemon and the kernel's inodes of the tree; push=on forces it",
		  (unsigned long long)(limit >> 20), where,
		  (unsigned long long)(dsfs_lead_bytes(fs) >> 20));
	return false;
}
