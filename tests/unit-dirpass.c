// SPDX-License-Identifier: GPL-2.0-or-later
/* unit-dirpass: a DataLoader's pass in sorted order over a tree outside
 * the plan (ImageFolder's val/: class directories of 8 to 50 files, a
 * flat directory) is noticed within a few batches; a shuffled loader over
 * a tree of class directories never is; the tree is the right one (or
 * none, inside the data set); and the index-order pass seeded with the
 * notice's processes (dsfs_seqpass_seed) goes on from their places. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dirpass.h"
#include "seqpass.h"
#include "unit-check.h"
#include "unit-loader.h"

static uint64_t rs = 0x9e3779b97f4a7c15ull;

/* File i of a tree of `classes` class directories of `per` files each,
 * below `root` (classes 0: flat), as ImageFolder indexes it. */
static void file_path(char *buf, size_t len, const char *root,
		      uint32_t classes, uint32_t per, uint32_t i)
{
	if (classes)
		snprintf(buf, len, "%s/n%08u/n%08u_%u.JPEG", root, i / per,
			 i / per, 1000 + i % per * 7);
	else
		snprintf(buf, len, "%s/img_%06u.png", root, i);
}

/* The open (counted from 1) at which a DataLoader of w workers of bs,
 * taking turns of 1 to 2 * turn - 1 opens, reading order[0..n) of the
 * tree, is first noticed; 0 for never. */
static uint64_t noticed_at(const uint32_t *order, uint32_t n,
			   uint32_t classes, uint32_t per, unsigned w,
			   unsigned bs, unsigned turn)
{
	struct dsfs_dirpass *d = calloc(1, sizeof(*d));
	uint32_t *pos = malloc(n * sizeof(*pos)), k;
	char path[256];
	uint64_t at = 0;

	unit_simulate_turns(n, w, bs, 2, 1, UINT64_MAX, turn, &rs, pos);
	for (k = 0; k < n && !at; k++) {
		file_path(path, sizeof(path), "data/val", classes, per,
			  order[pos[k]]);
		if (dsfs_dirpass_access(d, 4000 + (pos[k] / bs) % w, path))
			at = k + 1;
	}
	free(pos);
	free(d);
	return at;
}

static uint32_t *identity(uint32_t n)
{
	uint32_t *a = malloc(n * sizeof(*a)), i;

	for (i = 0; i < n; i++)
		a[i] = i;
	return a;
}

static uint32_t *shuffled(uint32_t n)
{
	uint32_t *a = identity(n), i, j, t;

	for (i = n - 1; i > 0; i--) {
		j = (uint32_t)(unit_rnd(&rs) % (i + 1));
		t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
	return a;
}

/* A sorted pass: noticed within the first batches of each worker, with
 * class directories of 50 and of 8 files, and over a flat directory. */
static void test_sorted(void)
{
	static const struct {
		uint32_t classes, per;
		unsigned w, bs, turn;
	} c[] = {
		{ 200, 50, 4, 32, 1 }, { 200, 50, 4, 32, 4 },
		{ 200, 50, 8, 64, 3 }, { 1000, 8, 2, 16, 1 },
		{ 1000, 8, 4, 32, 4 }, { 0, 10000, 4, 32, 2 },
		{ 0, 10000, 1, 1, 1 },
	};
	uint32_t *order = identity(10000);
	uint64_t at;
	unsigned i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		at = noticed_at(order, 10000, c[i].classes, c[i].per, c[i].w,
				c[i].bs, c[i].turn);
		printf("sorted, %u classes of %u, %u workers of %u, turns of up to %u: noticed at open %llu\n",
		       c[i].classes, c[i].per, c[i].w, c[i].bs,
		       2 * c[i].turn - 1, (unsigned long long)at);
		CHECK(at >= DSFS_SEQPASS_ON);
		CHECK(at && at <= 4 * DSFS_SEQPASS_HISTORY);
	}
	free(order);
}

/* A shuffled loader over class directories of 50 files (as a training
 * set) or of 500: its opens fall in one directory too seldom. */
static void test_shuffled(void)
{
	uint32_t *order = shuffled(50000);

	CHECK(!noticed_at(order, 50000, 1000, 50, 4, 32, 1));
	CHECK(!noticed_at(order, 50000, 1000, 50, 8, 64, 4));
	CHECK(!noticed_at(order, 50000, 100, 500, 4, 32, 1));
	free(order);
}

/* pid 0 (not known) is never judged; a path of PATH_MAX bytes neither. */
static void test_unjudged(void)
{
	struct dsfs_dirpass *d = calloc(1, sizeof(*d));
	char path[64], *longp = malloc(PATH_MAX + 1);
	uint32_t i;
	bool any = false;

	for (i = 0; i < 1000; i++) {
		file_path(path, sizeof(path), "val", 10, 100, i);
		any |= dsfs_dirpass_access(d, 0, path);
	}
	memset(longp, 'a', PATH_MAX);
	longp[PATH_MAX] = '\0';
	for (i = 0; i < 100; i++)
		any |= dsfs_dirpass_access(d, 7, longp);
	CHECK(!any && d->opens == 0);
	/* cleared, a pass is noticed again only after new steps */
	for (i = 0; i < 40; i++) {
		file_path(path, sizeof(path), "val", 10, 100, i);
		any = dsfs_dirpass_access(d, 7, path);
	}
	CHECK(any);
	dsfs_dirpass_clear(d);
	file_path(path, sizeof(path), "val", 10, 100, 40);
	CHECK(!dsfs_dirpass_access(d, 7, path));
	free(longp);
	free(d);
}

static void check_root(const char *path, const char *datasets,
		       const char *want)
{
	char root[PATH_MAX] = "unset";
	size_t n = dsfs_dirpass_root(path, datasets, root);

	if (!want) {
		CHECK(n == 0);
		if (n)
			fprintf(stderr, "root of %s (data sets %s): %s, want none\n",
				path, datasets, root);
		return;
	}
	CHECK(n == strlen(want) && !strcmp(root, want));
	if (n != strlen(want) || strcmp(root, want))
		fprintf(stderr, "root of %s (data sets %s): %s, want %s\n",
			path, datasets, n ? root : "none", want);
}

static void test_root(void)
{
	check_root("val/n01/x.JPEG", "train", "val");
	check_root("val/x.png", "train", "val");
	check_root("imagenet/val/n01/x.JPEG", "imagenet/train", "imagenet/val");
	check_root("imagenet/val/x.png", "imagenet/train", "imagenet/val");
	check_root("a/val/n01/sub/x", "train", "a/val/n01");
	check_root("trainval/n01/x", "train", "trainval");
	check_root("val/n01/x", "train:extra", "val");
	check_root("extra/n01/x", "train:extra", NULL);
	check_root("train/n01/labels.txt", "train", NULL);
	check_root("train/x", "train", NULL);
	check_root("imagenet/x.txt", "imagenet/train", NULL);
	check_root("x.txt", "train", NULL);
	check_root("val/n01/x", ".", NULL);
	check_root("val/n01/x", "train:.", NULL);
	CHECK(dsfs_dirpass_in_dataset("val/n01/x", "val"));
	CHECK(!dsfs_dirpass_in_dataset("valx/n01/x", "val"));
	CHECK(!dsfs_dirpass_in_dataset("val", "val"));
	CHECK(dsfs_dirpass_in_dataset("val/x", "."));
	CHECK(dsfs_dirpass_in_dataset("val/x", "train:val"));
}

/* Seeded with three workers' places: off until 24 of their opens go on
 * from there, then fetching from the slowest's next to `ahead` past the
 * furthest; what was fed before is forgotten. */
static void test_seed(void)
{
	static const uint32_t pid[] = { 11, 12, 13 };
	static const uint64_t idx[] = { 40, 10, 70 };
	struct dsfs_seqpass q;
	uint64_t i, k;

	memset(&q, 0xa5, sizeof(q));
	dsfs_seqpass_seed(&q, pid, idx, 3);
	CHECK(!q.on && q.opens == 3 && !q.hist);
	CHECK(!dsfs_seqpass_peek(&q, 100, 1000, &i));
	for (k = 1; k <= 8; k++) {
		CHECK(!q.on);
		dsfs_seqpass_access(&q, 11, 40 + k);
		dsfs_seqpass_access(&q, 12, 10 + k);
		dsfs_seqpass_access(&q, 13, 70 + k);
	}
	CHECK(q.on && q.front == 78);
	CHECK(dsfs_seqpass_peek(&q, 100, 1000, &i) && i == 19);
	CHECK(!dsfs_seqpass_peek(&q, 100, 19, &i));
	dsfs_seqpass_seed(&q, pid, idx, 0);
	CHECK(!q.on && !q.opens && !dsfs_seqpass_peek(&q, 100, 1000, &i));
}

int main(void)
{
	test_sorted();
	test_shuffled();
	test_unjudged();
	test_root();
	test_seed();
	return UNIT_DONE();
}
