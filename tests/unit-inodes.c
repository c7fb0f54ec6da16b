// SPDX-License-Identifier: GPL-2.0-or-later
/* unit-inodes: inode identity, paths, references (saturating) and freeing,
 * the state allocated apart. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "inodes.h"
#include "unit-check.h"

static struct stat st_of(uint64_t ino, mode_t type)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_dev = 7;
	st.st_ino = ino;
	st.st_mode = type | 0644;
	return st;
}

static int path_is(struct dsfs_inode *in, const char *want)
{
	char buf[256];

	return dsfs_inodes_path(in, buf, sizeof(buf)) == 0 && !strcmp(buf, want);
}

static void test_paths_and_refs(void)
{
	struct stat rst = st_of(1, S_IFDIR), ast = st_of(2, S_IFDIR),
		    bst = st_of(3, S_IFREG);
	struct dsfs_inodes *t = dsfs_inodes_new(&rst, 5);
	struct dsfs_inode *root = dsfs_inodes_get(t, 1), *a, *b, *b2, *c;
	char small[4];

	CHECK(path_is(root, "."));
	CHECK(dsfs_inodes_nodeid(t, root) == 1);
	a = dsfs_inodes_ref_child(t, root, "a dir", &ast, 5);
	b = dsfs_inodes_ref_child(t, a, "café.jpg", &bst, 5);
	CHECK(path_is(a, "a dir"));
	CHECK(path_is(b, "a dir/café.jpg"));
	CHECK(dsfs_inodes_get(t, dsfs_inodes_nodeid(t, b)) == b);
	CHECK(dsfs_inodes_path(b, small, sizeof(small)) == -ENAMETOOLONG);
	/* A second name for the same file (hard link, or the file renamed
	 * while the kernel held it) is the same inode, now by that name. */
	b2 = dsfs_inodes_ref_child(t, root, "link", &bst, 5);
	CHECK(b2 == b && path_is(b2, "link"));
	/* SOURCE reached again (bind mount inside it) maps to the root. */
	CHECK(dsfs_inodes_ref_child(t, a, "loop", &rst, 5) == root);
	CHECK(dsfs_inodes_count(t) == 3);
	/* The kernel forgets the directory first: the child's older name
	 * keeps it. */
	dsfs_inodes_unref(t, a, 1);
	CHECK(dsfs_inodes_count(t) == 3);
	CHECK(path_is(b, "link"));
	/* The first name found again comes back to the front. */
	CHECK(dsfs_inodes_ref_child(t, a, "café.jpg", &bst, 5) == b);
	CHECK(path_is(b, "a dir/café.jpg"));
	CHECK(dsfs_inodes_ref_child(t, root, "link", &bst, 5) == b);
	CHECK(path_is(b, "link"));
	/* Renamed in SOURCE (fanotify's word, no lookup): the new name
	 * comes to the front and holds its directory; an unknown inode is
	 * left alone. */
	CHECK(dsfs_inodes_renamed(t, 7, 3, 5, a, "moved") == 0);
	CHECK(path_is(b, "a dir/moved"));
	CHECK(dsfs_inodes_renamed(t, 7, 99, 5, a, "x") == -ENOENT);
	/* The same inode number in another generation is another file (one
	 * created after b's was deleted, the number reused): a new inode,
	 * and a rename of it does not move b. */
	c = dsfs_inodes_ref_child(t, root, "reused", &bst, 6);
	CHECK(c && c != b && path_is(c, "reused") && path_is(b, "a dir/moved"));
	CHECK(dsfs_inodes_renamed(t, 7, 3, 6, root, "elsewhere") == 0);
	CHECK(path_is(c, "elsewhere") && path_is(b, "a dir/moved"));
	CHECK(dsfs_inodes_renamed(t, 7, 3, 7, root, "x") == -ENOENT);
	CHECK(dsfs_inodes_find_ref(t, 7, 3, 6) == c);
	CHECK(dsfs_inodes_find_ref(t, 7, 3, 5) == b);
	dsfs_inodes_unref(t, c, 2);
	dsfs_inodes_unref(t, b, 1);
	dsfs_inodes_unref(t, b, 4);
	CHECK(dsfs_inodes_count(t) == 1);
	dsfs_inodes_unref(t, root, 5); /* the root is never freed */
	CHECK(path_is(root, "."));
	dsfs_inodes_free(t);
}

/* More references than 32 bits count pin an inode for good: no FORGET
 * frees it.  Its state apart is one, zeroed, and goes with it. */
static void test_pinned_and_more(void)
{
	struct stat rst = st_of(1, S_IFDIR), ast = st_of(2, S_IFREG),
		    bst = st_of(3, S_IFREG);
	struct dsfs_inodes *t = dsfs_inodes_new(&rst, 5);
	struct dsfs_inode *root = dsfs_inodes_get(t, 1), *a, *b;
	struct dsfs_inode_more *m;

	a = dsfs_inodes_ref_child(t, root, "a", &ast, 5);
	b = dsfs_inodes_ref_child(t, root, "b", &bst, 5);
	dsfs_inodes_ref(t, a, (1ull << 32) + 5);
	dsfs_inodes_unref(t, a, (1ull << 32) + 6);
	dsfs_inodes_unref(t, a, UINT64_MAX);
	CHECK(dsfs_inodes_find_ref(t, 7, 2, 5) == a && path_is(a, "a"));
	/* just below the limit: still counted, and freed */
	dsfs_inodes_ref(t, b, UINT32_MAX - 2);
	dsfs_inodes_unref(t, b, UINT32_MAX - 2);
	CHECK(dsfs_inodes_find_ref(t, 7, 3, 5) == b);
	m = dsfs_inodes_more(b);
	CHECK(m && m == dsfs_inodes_more(b));
	CHECK(m && !m->ra_next && !m->ra_window && !m->reported_open);
	dsfs_inodes_unref(t, b, 2);
	CHECK(dsfs_inodes_count(t) == 2); /* root and the pinned a */
	dsfs_inodes_free(t);
}

/* A name the kernel holds: a live inode of that number under that front
 * name, whatever its generation. */
static void test_held(void)
{
	struct stat rst = st_of(1, S_IFDIR), ast = st_of(2, S_IFDIR),
		    bst = st_of(3, S_IFREG);
	struct dsfs_inodes *t = dsfs_inodes_new(&rst, 5);
	struct dsfs_inode *root = dsfs_inodes_get(t, 1), *a, *b, *c;
	uint64_t gen = 0;

	a = dsfs_inodes_ref_child(t, root, "a", &ast, 5);
	b = dsfs_inodes_ref_child(t, a, "f", &bst, 5);
	CHECK(dsfs_inodes_held(t, a, "f", 7, 3, &gen) && gen == 5);
	CHECK(!dsfs_inodes_held(t, root, "f", 7, 3, &gen));
	CHECK(!dsfs_inodes_held(t, a, "g", 7, 3, &gen));
	CHECK(!dsfs_inodes_held(t, a, "f", 7, 4, &gen));
	CHECK(!dsfs_inodes_held(t, a, "f", 8, 3, &gen));
	/* Renamed: held under its new name only. */
	CHECK(dsfs_inodes_renamed(t, 7, 3, 5, a, "moved") == 0);
	CHECK(!dsfs_inodes_held(t, a, "f", 7, 3, &gen));
	CHECK(dsfs_inodes_held(t, a, "moved", 7, 3, &gen));
	/* The number reused by another file under another name. */
	c = dsfs_inodes_ref_child(t, root, "new", &bst, 6);
	CHECK(dsfs_inodes_held(t, root, "new", 7, 3, &gen) && gen == 6);
	CHECK(dsfs_inodes_held(t, a, "moved", 7, 3, &gen) && gen == 5);
	/* Forgotten: no longer held. */
	dsfs_inodes_unref(t, b, 1);
	CHECK(!dsfs_inodes_held(t, a, "moved", 7, 3, &gen));
	dsfs_inodes_unref(t, c, 1);
	CHECK(!dsfs_inodes_held(t, root, "new", 7, 3, &gen));
	dsfs_inodes_unref(t, a, 1);
	CHECK(dsfs_inodes_count(t) == 1);
	dsfs_inodes_free(t);
}

#define THREADS 4
#define FILES 2000

static struct dsfs_inodes *shared;

static void *churn(void *arg)
{
	struct dsfs_inode *root = dsfs_inodes_get(shared, 1);
	unsigned round, i;

	for (round = 0; round < 5; round++) {
		struct dsfs_inode *dir, *got[FILES];
		struct stat dst = st_of(100, S_IFDIR);

		dir = dsfs_inodes_ref_child(shared, root, "d", &dst, 5);
		for (i = 0; i < FILES; i++) {
			struct stat fst = st_of(1000 + i, S_IFREG);
			char name[16];

			snprintf(name, sizeof(name), "f%u", i);
			got[i] = dsfs_inodes_ref_child(shared, dir, name, &fst, 5);
			CHECK(got[i] && got[i]->ino == 1000 + i);
		}
		for (i = 0; i < FILES; i++)
			dsfs_inodes_unref(shared, got[i], 1);
		dsfs_inodes_unref(shared, dir, 1);
	}
	return arg;
}

static void test_concurrent(void)
{
	struct stat rst = st_of(1, S_IFDIR);
	pthread_t t[THREADS];
	unsigned i;

	shared = dsfs_inodes_new(&rst, 5);
	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, churn, NULL);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	CHECK(dsfs_inodes_count(shared) == 1); /* everything freed */
	dsfs_inodes_free(shared);
}

/* One file found by turns under two names in two directories (renamed
 * back and forth) while another thread builds its path: every path is one
 * of the two, whole. */
#define MOVES 200000

static struct dsfs_inode *moving, *dirs[2];
static bool moves_done;

static void *mover(void *arg)
{
	struct stat fst = st_of(7, S_IFREG);
	unsigned i;

	for (i = 0; i < MOVES; i++)
		CHECK(dsfs_inodes_ref_child(shared, dirs[i % 2],
					    i % 2 ? "second name" : "x",
					    &fst, 5) == moving);
	__atomic_store_n(&moves_done, true, __ATOMIC_RELEASE);
	return arg;
}

static void test_rename_race(void)
{
	struct stat rst = st_of(1, S_IFDIR), d0 = st_of(2, S_IFDIR),
		    d1 = st_of(3, S_IFDIR), fst = st_of(7, S_IFREG);
	struct dsfs_inode *root;
	unsigned long paths = 0;
	char path[64];
	pthread_t t;

	shared = dsfs_inodes_new(&rst, 5);
	root = dsfs_inodes_get(shared, 1);
	dirs[0] = dsfs_inodes_ref_child(shared, root, "d0", &d0, 5);
	dirs[1] = dsfs_inodes_ref_child(shared, root, "dir one", &d1, 5);
	moving = dsfs_inodes_ref_child(shared, dirs[1], "second name", &fst, 5);
	pthread_create(&t, NULL, mover, NULL);
	while (!__atomic_load_n(&moves_done, __ATOMIC_ACQUIRE)) {
		CHECK(!dsfs_inodes_path(moving, path, sizeof(path)));
		CHECK(!strcmp(path, "d0/x") || !strcmp(path, "dir one/second name"));
		paths++;
	}
	pthread_join(t, NULL);
	CHECK(paths > 0);
	dsfs_inodes_unref(shared, dirs[0], 1);
	dsfs_inodes_unref(shared, dirs[1], 1);
	CHECK(dsfs_inodes_count(shared) == 4); /* its names keep both dirs */
	dsfs_inodes_unref(shared, moving, MOVES + 1);
	CHECK(dsfs_inodes_count(shared) == 1);
	dsfs_inodes_free(shared);
}

int main(void)
{
	test_paths_and_refs();
	test_pinned_and_more();
	test_held();
	test_concurrent();
	test_rename_race();
	return UNIT_DONE();
}
