// SPDX-License-Identifier: GPL-2.0-or-later
/* unit-fdpool: the fd pool reuses, bounds, evicts and forgets descriptors. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdpool.h"
#include "unit-check.h"

#define NFILES 8

static char dir[] = "/tmp/unit-fdpool.XXXXXX";
static unsigned opens; /* atomic */

static int open_file(void *arg, const struct dsfs_fdkey *key)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "%s/%llu", dir,
		 (unsigned long long)key->ino);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	__atomic_add_fetch(&opens, 1, __ATOMIC_RELAXED);
	return fd < 0 ? -errno : fd;
}

static struct dsfs_fdkey key_of(unsigned i)
{
	return (struct dsfs_fdkey){ .dev = 1, .ino = i, .flags = O_RDONLY };
}

/* The fd must read back the file's own content (its index). */
static int fd_is(int fd, unsigned i)
{
	char buf[16] = "";

	return pread(fd, buf, sizeof(buf) - 1, 0) > 0 && (unsigned)atoi(buf) == i;
}

static void test_reuse_and_bound(void)
{
	struct dsfs_fdpool *pool = dsfs_fdpool_new(2);
	struct dsfs_fdref a, b, c;
	struct dsfs_fdkey k0 = key_of(0), k1 = key_of(1), k2 = key_of(2);

	opens = 0;
	CHECK(dsfs_fdpool_get(pool, &k0, open_file, NULL, &a) == 0 && fd_is(a.fd, 0));
	dsfs_fdpool_put(pool, &a);
	CHECK(dsfs_fdpool_get(pool, &k0, open_file, NULL, &a) == 0 && fd_is(a.fd, 0));
	CHECK(opens == 1); /* cached */
	CHECK(dsfs_fdpool_get(pool, &k1, open_file, NULL, &b) == 0 && fd_is(b.fd, 1));
	/* Both cached fds are busy: the third is private and closed on put. */
	CHECK(dsfs_fdpool_get(pool, &k2, open_file, NULL, &c) == 0 && fd_is(c.fd, 2));
	CHECK(c.ent == NULL);
	CHECK(dsfs_fdpool_open_count(pool) == 3);
	dsfs_fdpool_put(pool, &c);
	CHECK(dsfs_fdpool_open_count(pool) == 2);
	dsfs_fdpool_put(pool, &a);
	dsfs_fdpool_put(pool, &b);
	/* k0 is the least recently used idle fd: k2 replaces it. */
	CHECK(dsfs_fdpool_get(pool, &k2, open_file, NULL, &c) == 0 && c.ent);
	dsfs_fdpool_put(pool, &c);
	CHECK(dsfs_fdpool_open_count(pool) == 2);
	opens = 0;
	CHECK(dsfs_fdpool_get(pool, &k1, open_file, NULL, &b) == 0);
	dsfs_fdpool_put(pool, &b);
	CHECK(opens == 0);
	CHECK(dsfs_fdpool_get(pool, &k0, open_file, NULL, &a) == 0);
	dsfs_fdpool_put(pool, &a);
	CHECK(opens == 1);
	/* k0, k1, k2 (private), k2, k0: every open counted as a miss. */
	CHECK(dsfs_fdpool_misses(pool) == 5);
	dsfs_fdpool_free(pool);
}

static void test_forget_and_errors(void)
{
	struct dsfs_fdpool *pool = dsfs_fdpool_new(4);
	struct dsfs_fdkey k3 = key_of(3), missing = key_of(999);
	struct dsfs_fdref a;

	CHECK(dsfs_fdpool_get(pool, &missing, open_file, NULL, &a) == -ENOENT);
	CHECK(dsfs_fdpool_open_count(pool) == 0);
	CHECK(dsfs_fdpool_get(pool, &k3, open_file, NULL, &a) == 0);
	dsfs_fdpool_forget(pool, 1, 3); /* busy: closed on put */
	CHECK(fd_is(a.fd, 3));
	dsfs_fdpool_put(pool, &a);
	CHECK(dsfs_fdpool_open_count(pool) == 0);
	opens = 0;
	CHECK(dsfs_fdpool_get(pool, &k3, open_file, NULL, &a) == 0);
	CHECK(opens == 1); /* forgotten: opened again */
	dsfs_fdpool_put(pool, &a);
	dsfs_fdpool_forget(pool, 1, 3); /* idle: closed now */
	CHECK(dsfs_fdpool_open_count(pool) == 0);
	dsfs_fdpool_free(pool);
}

#define THREADS 8
#define ROUNDS 20000
#define CAP 5

static void *hammer(void *arg)
{
	struct dsfs_fdpool *pool = arg;
	unsigned seed = (unsigned)(uintptr_t)pthread_self(), i;

	for (i = 0; i < ROUNDS; i++) {
		unsigned f = (unsigned)rand_r(&seed) % NFILES;
		struct dsfs_fdkey k = key_of(f);
		struct dsfs_fdref r;

		if (dsfs_fdpool_get(pool, &k, open_file, NULL, &r) ||
		    !fd_is(r.fd, f)) {
			CHECK(!"wrong or missing fd");
			return NULL;
		}
		CHECK(dsfs_fdpool_open_count(pool) <= CAP + THREADS);
		dsfs_fdpool_put(pool, &r);
	}
	return NULL;
}

static void test_concurrent(void)
{
	struct dsfs_fdpool *pool = dsfs_fdpool_new(CAP);
	pthread_t t[THREADS];
	unsigned i;

	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, hammer, pool);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	CHECK(dsfs_fdpool_open_count(pool) <= CAP);
	dsfs_fdpool_free(pool);
}

int main(void)
{
	char path[64];
	unsigned i;

	if (!mkdtemp(dir))
		return 99;
	for (i = 0; i < NFILES; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%u", dir, i);
		f = fopen(path, "w");
		if (!f)
			return 99;
		fprintf(f, "%u\n", i);
		fclose(f);
	}
	CHECK(dsfs_fdpool_new(0) == NULL);
	test_reuse_and_bound();
	test_forget_and_errors();
	test_concurrent();
	for (i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), "%s/%u", dir, i);
		unlink(path);
	}
	rmdir(dir);
	return UNIT_DONE();
}
