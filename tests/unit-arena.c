// SPDX-License-Identifier: GPL-2.0-or-later
/* unit-arena: page kinds (4k, THP, hugetlb), the hugepages=require message,
 * NUMA placement and lazy population of the arena. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arena.h"
#include "unit-check.h"

#define MiB (1ul << 20)
#define NR_HUGEPAGES "/proc/sys/vm/nr_hugepages"
#define HUGETLB_SYS "/sys/kernel/mm/hugepages/hugepages-2048kB"

static long read_long(const char *path)
{
	FILE *f = fopen(path, "re");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int write_long(const char *path, long v)
{
	FILE *f = fopen(path, "we");
	int ok;

	if (!f)
		return -errno;
	ok = fprintf(f, "%ld\n", v) > 0;
	ok = fclose(f) == 0 && ok;
	return ok ? 0 : -EIO;
}

static long pool_free(void)
{
	return read_long(HUGETLB_SYS "/free_hugepages") -
	       read_long(HUGETLB_SYS "/resv_hugepages");
}

static long rss_kib(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Create, check the invariants every arena has, write every byte. */
static int make(struct dsfs_arena *a, size_t size, enum dsfs_hugepages hp,
		enum dsfs_numa_mode numa, int node)
{
	struct dsfs_arena_cfg cfg = { .size = size,
				      .hugepages = hp,
				      .numa = numa,
				      .numa_node = node };
	char why[256] = "";
	int err = dsfs_arena_create(a, &cfg, why, sizeof(why));

	if (err) {
		CHECK(why[0] && a->base == NULL);
		return err;
	}
	CHECK(a->base && (uintptr_t)a->base % (2 * MiB) == 0);
	CHECK(a->size == (size & ~(size_t)4095) && a->mapped >= a->size);
	CHECK(a->nodes[0] != '\0');
	return 0;
}

static void write_all(struct dsfs_arena *a)
{
	size_t i;

	memset(a->base, 0xa5, a->size);
	for (i = 0; i < a->size; i += 4096)
		if ((unsigned char)a->base[i] != 0xa5)
			break;
	CHECK(i >= a->size);
}

static void test_off(void)
{
	struct dsfs_arena a;
	long before;

	before = rss_kib();
	CHECK(make(&a, 256 * MiB + 123, DSFS_HUGEPAGES_OFF, DSFS_NUMA_LOCAL,
		   0) == 0);
	CHECK(a.kind == DSFS_PAGE_4K && a.size == 256 * MiB);
	CHECK(!strcmp(dsfs_page_kind_name(a.kind), "4k"));
	/* Not pre-touched: RSS grows as the cache fills. */
	CHECK(rss_kib() - before < 32 * 1024);
	write_all(&a);
	dsfs_arena_destroy(&a);
	CHECK(a.base == NULL);

	CHECK(make(&a, 100, DSFS_HUGEPAGES_OFF, DSFS_NUMA_LOCAL, 0) == -EINVAL);
}

/* With too few free huge pages: auto falls back, require explains. */
static void test_empty_pool(void)
{
	long free_pages = pool_free() < 0 ? 0 : pool_free();
	size_t size = (size_t)(free_pages + 4) * 2 * MiB;
	struct dsfs_arena_cfg cfg = { .size = size,
				      .hugepages = DSFS_HUGEPAGES_REQUIRE };
	char why[512] = "";
	struct dsfs_arena a;
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");
	char thp[128] = "";

	if (f) {
		if (!fgets(thp, sizeof(thp), f))
			thp[0] = '\0';
		fclose(f);
	}
	CHECK(make(&a, size, DSFS_HUGEPAGES_AUTO, DSFS_NUMA_LOCAL, 0) == 0);
	CHECK(a.kind == (thp[0] && !strstr(thp, "[never]") ? DSFS_PAGE_THP :
							     DSFS_PAGE_4K));
	printf("auto, pool short: %s\n", dsfs_page_kind_name(a.kind));
	write_all(&a);
	dsfs_arena_destroy(&a);

	CHECK(dsfs_arena_create(&a, &cfg, why, sizeof(why)) == -ENOMEM);
	CHECK(strstr(why, "/proc/sys/vm/nr_hugepages") != NULL);
	CHECK(strstr(why, "hugepages=require") != NULL);
	printf("require, pool short: %s\n", why);
}

/* In a child, so that the parent restores nr_hugepages whatever happens. */
static int hugetlb_child(size_t size)
{
	struct dsfs_arena a;

	CHECK(make(&a, size, DSFS_HUGEPAGES_AUTO, DSFS_NUMA_LOCAL, 0) == 0);
	CHECK(a.kind == DSFS_PAGE_HUGETLB);
	write_all(&a);
	dsfs_arena_destroy(&a);
	CHECK(make(&a, size, DSFS_HUGEPAGES_REQUIRE, DSFS_NUMA_INTERLEAVE, 0) ==
	      0);
	CHECK(a.kind == DSFS_PAGE_HUGETLB && a.mapped == size);
	CHECK(!strcmp(dsfs_page_kind_name(a.kind), "hugetlb"));
	write_all(&a);
	dsfs_arena_destroy(&a);
	return unit_failures ? 1 : 0;
}

static void test_hugetlb(void)
{
	long old = read_long(NR_HUGEPAGES), need = 8;
	int status = 0;
	pid_t pid;

	if (geteuid() != 0 || old < 0) {
		printf("SKIP hugetlb: needs root to raise " NR_HUGEPAGES "\n");
		return;
	}
	if (write_long(NR_HUGEPAGES, old + need) || pool_free() < need) {
		printf("SKIP hugetlb: the kernel did not provide %ld huge "
		       "pages (free %ld)\n",
		       need, pool_free());
		goto restore;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(hugetlb_child((size_t)need * 2 * MiB));
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	printf("hugetlb: auto and require mapped %ld huge pages\n", need);
restore:
	CHECK(write_long(NR_HUGEPAGES, old) == 0);
	CHECK(read_long(NR_HUGEPAGES) == old);
}

static void test_numa(void)
{
	struct dsfs_arena a;
	char why[256] = "";
	struct dsfs_arena_cfg cfg = { .size = 8 * MiB,
				      .hugepages = DSFS_HUGEPAGES_OFF,
				      .numa = DSFS_NUMA_NODE,
				      .numa_node = 999 };
	enum dsfs_numa_mode modes[] = { DSFS_NUMA_LOCAL, DSFS_NUMA_INTERLEAVE,
					DSFS_NUMA_NODE };
	unsigned i;

	CHECK(dsfs_numa_node_valid(0) == 0);
	CHECK(dsfs_numa_node_valid(999) == -ENODEV);
	CHECK(dsfs_numa_node_valid(-1) == -ENODEV);
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		CHECK(make(&a, 8 * MiB, DSFS_HUGEPAGES_OFF, modes[i], 0) == 0);
		printf("numa mode %u: nodes %s\n", i, a.nodes);
		write_all(&a);
		dsfs_arena_destroy(&a);
	}
	CHECK(make(&a, 8 * MiB, DSFS_HUGEPAGES_AUTO, DSFS_NUMA_NODE, 0) == 0);
	CHECK(!strcmp(a.nodes, "0"));
	dsfs_arena_destroy(&a);
	CHECK(dsfs_arena_create(&a, &cfg, why, sizeof(why)) == -ENODEV);
	CHECK(strstr(why, "999") != NULL);
}

int main(void)
{
	test_off();
	test_empty_pool();
	test_hugetlb();
	test_numa();
	return UNIT_DONE();
}
