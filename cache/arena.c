// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The arena (see arena.h): choose the page kind, map, place on NUMA nodes.
 *
 * hugetlb memory is reserved by the kernel at mmap (no MAP_NORESERVE), so a
 * short pool fails here and not with SIGBUS later; 4 KiB and THP memory is
 * mapped MAP_NORESERVE and never pre-touched, so RSS grows only as the cache
 * fills.  NUMA policy is set with mbind() right after mmap, before any page
 * is touched: numa=local prefers the calling CPU's node (MPOL_PREFERRED, so
 * a full node spills instead of invoking the OOM killer), interleave spreads
 * over the allowed nodes, node N binds (MPOL_BIND).  A machine without NUMA
 * support (numa_available() < 0) counts as one node, "0", and gets no
 * policy.
 *
 * Threads: only the main thread enters, at mount and unmount; no state is
 * shared, so there are no locks.
 */
#include "config.h"

#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "arena.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB (21 << MAP_HUGE_SHIFT)
#endif

#define SMALL_PAGE 4096ul
#define HUGE_PAGE (2ul << 20)
#define HUGETLB_SYS "/sys/kernel/mm/hugepages/hugepages-2048kB"
#define NODE_SYS "/sys/devices/system/node/node%d/hugepages/hugepages-2048kB"
#define NR_HUGEPAGES "/proc/sys/vm/nr_hugepages"
#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"

/* Where the pages go: an mbind() policy over a node mask. */
struct placement {
	int policy;	      /* MPOL_BIND, _PREFERRED, _INTERLEAVE; -1: none */
	int node;	      /* the one node bound or preferred, or -1 */
	struct bitmask *mask; /* owned; NULL when policy is -1 */
};

static size_t round_up(size_t x, size_t to)
{
	return (x + to - 1) / to * to;
}

static int read_long(const char *path, long *v)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%ld", v) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

/* /proc/meminfo's "key: value" in the unit printed there, or -1. */
static long meminfo(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "re");
	size_t klen = strlen(key);
	char line[128];
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/*
 * Free 2 MiB hugetlb pages that a new mapping may reserve: free minus
 * already reserved, and no more than node's free pages when bound to one
 * node (faults on a bound node without pages would raise SIGBUS).
 */
static long hugetlb_free(int node)
{
	long free_p, resv, on_node;
	char path[128];

	if (read_long(HUGETLB_SYS "/free_hugepages", &free_p) ||
	    read_long(HUGETLB_SYS "/resv_hugepages", &resv)) {
		if (meminfo("Hugepagesize") != 2048)
			return 0;
		free_p = meminfo("HugePages_Free");
		resv = meminfo("HugePages_Rsvd");
	}
	free_p = free_p > resv && resv >= 0 ? free_p - resv : 0;
	if (node >= 0) {
		snprintf(path, sizeof(path), NODE_SYS "/free_hugepages", node);
		if (!read_long(path, &on_node) && on_node < free_p)
			free_p = on_node;
	}
	return free_p;
}

static bool thp_enabled(void)
{
	FILE *f = fopen(THP_ENABLED, "re");
	char buf[128] = "";
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, sizeof(buf), f) && !strstr(buf, "[never]");
	fclose(f);
	return ok;
}

/* "0-3,6" from a node mask. */
static void nodes_text(const struct bitmask *m, char *buf, size_t len)
{
	int max = numa_max_node(), n, start;
	size_t off = 0;

	buf[0] = '\0';
	for (n = 0; n <= max && off < len; n++) {
		if (!numa_bitmask_isbitset(m, n))
			continue;
		for (start = n; n < max && numa_bitmask_isbitset(m, n + 1); n++)
			;
		off += snprintf(buf + off, len - off,
				start == n ? "%s%d" : "%s%d-%d", off ? "," : "",
				start, n);
	}
}

static void set_nodes_text(struct dsfs_arena *a, const struct placement *p)
{
	if (p->mask)
		nodes_text(p->mask, a->nodes, sizeof(a->nodes));
	else
		snprintf(a->nodes, sizeof(a->nodes), "0");
}

static int plan_numa(struct placement *p, const struct dsfs_arena_cfg *cfg,
		     char *why, size_t whylen)
{
	*p = (struct placement){ .policy = -1, .node = -1 };
	if (cfg->numa == DSFS_NUMA_NODE &&
	    dsfs_numa_node_valid(cfg->numa_node)) {
		snprintf(why, whylen,
			 "NUMA node %d does not exist on this "
			 "machine (see /sys/devices/system/node)",
			 cfg->numa_node);
		return -ENODEV;
	}
	if (numa_available() < 0)
		return 0;
	if (cfg->numa == DSFS_NUMA_INTERLEAVE) {
		p->mask = numa_get_mems_allowed();
		p->policy = MPOL_INTERLEAVE;
	} else {
		p->node = cfg->numa == DSFS_NUMA_NODE ?
				  cfg->numa_node :
				  numa_node_of_cpu(sched_getcpu());
		if (p->node < 0)
			p->node = 0;
		p->mask = numa_allocate_nodemask();
		if (p->mask)
			numa_bitmask_setbit(p->mask, p->node);
		/* local prefers the node and spills to others when it is
		 * full, like numactl --localalloc; an explicit node binds. */
		p->policy = cfg->numa == DSFS_NUMA_NODE ? MPOL_BIND :
							  MPOL_PREFERRED;
	}
	if (!p->mask) {
		snprintf(why, whylen, "out of memory planning NUMA placement");
		return -ENOMEM;
	}
	return 0;
}

/* An anonymous mapping of len bytes (a multiple of 4 KiB) at a 2 MiB
 * boundary: over-map by 2 MiB and trim both ends. */
static void *map_aligned(size_t len)
{
	size_t head;
	char *p = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	head = round_up((size_t)p, HUGE_PAGE) - (size_t)p;
	if (head)
		munmap(p, head);
	if (HUGE_PAGE - head)
		munmap(p + head + len, HUGE_PAGE - head);
	return p + head;
}

static int map_hugetlb(struct dsfs_arena *a)
{
	size_t len = round_up(a->size, HUGE_PAGE);
	/* Shared: a private hugetlb mapping's reservation stays with the
	 * process that mapped it, so the daemon that dsfs forks to go to the
	 * background could fault (and register with io_uring) only the pool's
	 * unreserved pages until the command exited. */
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_2MB,
		       -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	a->base = p;
	a->mapped = len;
	a->kind = DSFS_PAGE_HUGETLB;
	return 0;
}

/* THP when the kernel allows it (not [never]) and madvise agrees, else
 * 4 KiB pages.  no_thp: hugepages=off, keep THP away even if "always". */
static int map_small(struct dsfs_arena *a, bool no_thp)
{
	bool thp = !no_thp && thp_enabled();
	size_t len = thp ? round_up(a->size, HUGE_PAGE) : a->size;

	a->base = map_aligned(len);
	if (!a->base)
		return -ENOMEM;
	a->mapped = len;
	a->kind = DSFS_PAGE_4K;
	if (thp && !madvise(a->base, len, MADV_HUGEPAGE))
		a->kind = DSFS_PAGE_THP;
	if (no_thp)
		madvise(a->base, len, MADV_NOHUGEPAGE); /* best effort */
	return 0;
}

static void explain_pool(char *why, size_t whylen, long need, long have,
			 int node)
{
	long nr = 0;

	read_long(NR_HUGEPAGES, &nr);
	snprintf(why, whylen,
		 "hugepages=require: cache_size needs %ld huge pages of 2 MiB, "
		 "the pool has %ld free%s; raise " NR_HUGEPAGES
		 " (e.g. echo %ld > " NR_HUGEPAGES ")%s",
		 need, have, node >= 0 ? " on this NUMA node" : "",
		 nr + need - have,
		 node >= 0 ? " or that node's nr_hugepages under "
			     "/sys/devices/system/node" :
			     "");
}

/* Map per cfg->hugepages; why is written only on failure. */
static int map_arena(struct dsfs_arena *a, const struct dsfs_arena_cfg *cfg,
		     int node, char *why, size_t whylen)
{
	long need = (long)(round_up(a->size, HUGE_PAGE) / HUGE_PAGE);
	long have;
	int err;

	if (cfg->hugepages == DSFS_HUGEPAGES_OFF)
		return map_small(a, true);
	have = hugetlb_free(node);
	err = have >= need ? map_hugetlb(a) : -ENOMEM;
	if (!err)
		return 0;
	if (cfg->hugepages == DSFS_HUGEPAGES_AUTO)
		return map_small(a, false);
	if (have < need)
		explain_pool(why, whylen, need, have, node);
	else
		snprintf(why, whylen,
			 "hugepages=require: mmap of %ld huge "
			 "pages of 2 MiB failed: %s",
			 need, strerror(-err));
	return err;
}

static int place(struct dsfs_arena *a, const struct placement *p, char *why,
		 size_t whylen)
{
	int err;

	if (p->policy < 0)
		return 0;
	/* libnuma's convention: maxnode is the mask size + 1. */
	if (mbind(a->base, a->mapped, p->policy, p->mask->maskp,
		  p->mask->size + 1, 0) == 0)
		return 0;
	err = errno;
	snprintf(why, whylen, "cannot place the cache on NUMA node(s) %s: %s",
		 a->nodes, strerror(err));
	return -err;
}

int dsfs_arena_create(struct dsfs_arena *a, const struct dsfs_arena_cfg *cfg,
		      char *why, size_t whylen)
{
	struct placement p;
	int err;

	*a = (struct dsfs_arena){ .base = NULL };
	a->size = cfg->size & ~(SMALL_PAGE - 1);
	if (!a->size) {
		snprintf(why, whylen,
			 "cache size %zu is below one page (4 KiB)", cfg->size);
		return -EINVAL;
	}
	err = plan_numa(&p, cfg, why, whylen);
	if (err)
		return err;
	set_nodes_text(a, &p);
	/* Only a bound node limits the huge pages a fault may take. */
	err = map_arena(a, cfg, p.policy == MPOL_BIND ? p.node : -1, why,
			whylen);
	if (!err) {
		err = place(a, &p, why, whylen);
		if (err)
			dsfs_arena_destroy(a);
	}
	if (p.mask)
		numa_bitmask_free(p.mask);
	if (err)
		a->base = NULL;
	return err;
}

void dsfs_arena_destroy(struct dsfs_arena *a)
{
	if (a->base)
		munmap(a->base, a->mapped);
	a->base = NULL;
	a->mapped = 0;
}

const char *dsfs_page_kind_name(enum dsfs_page_kind kind)
{
	switch (kind) {
	case DSFS_PAGE_HUGETLB:
		return "hugetlb";
	case DSFS_PAGE_THP:
		return "thp";
	default:
		return "4k";
	}
}

int dsfs_numa_node_valid(int node)
{
	if (node < 0)
		return -ENODEV;
	if (numa_available() < 0)
		return node == 0 ? 0 : -ENODEV;
	if (node > numa_max_node() ||
	    !numa_bitmask_isbitset(numa_nodes_ptr, (unsigned)node))
		return -ENODEV;
	return 0;
}
