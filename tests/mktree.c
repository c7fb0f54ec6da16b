// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mktree: deterministic test-tree generator for the mount tests.
 *
 *   mktree DIR NFILES NDIRS MEANSIZE SEED
 *	creates DIR/dNNNNN (NDIRS of them) holding NFILES files fNNNNNNN in
 *	total, dealt round-robin.  Sizes are uniform in 1..2*MEANSIZE-1 except
 *	that one file in 32 is empty; content is a xorshift stream seeded by
 *	(SEED, file number), so the same arguments give the same tree.
 *   mktree --file PATH SIZE SEED
 *	creates one file of exactly SIZE bytes of seeded content.
 *
 * Single-threaded; O(NFILES + total bytes).  Exit 0, or 1 with a message.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUF_SIZE (1u << 20)

static uint64_t mix(uint64_t x)
{
	/* splitmix64 finaliser: decorrelates nearby seeds. */
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static int parse_u64(const char *what, const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	if (errno || !*s || *end || *s == '-') {
		fprintf(stderr, "mktree: %s '%s': not a number\n", what, s);
		return -1;
	}
	return 0;
}

/* Write size bytes of the stream seeded by seed to dirfd/name. */
static int write_file(int dirfd, const char *name, uint64_t size,
		      uint64_t seed, char *buf)
{
	uint64_t st = mix(seed) | 1;
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			0644);

	if (fd < 0) {
		fprintf(stderr, "mktree: create %s: %s\n", name, strerror(errno));
		return -1;
	}
	while (size) {
		size_t n = size < BUF_SIZE ? (size_t)size : BUF_SIZE, i;

		for (i = 0; i < n; i += 8) {
			uint64_t v = next(&st);

			memcpy(buf + i, &v, n - i < 8 ? n - i : 8);
		}
		if (write(fd, buf, n) != (ssize_t)n) {
			fprintf(stderr, "mktree: write %s: %s\n", name,
				strerror(errno));
			close(fd);
			return -1;
		}
		size -= n;
	}
	return close(fd);
}

static int make_tree(const char *dir, uint64_t nfiles, uint64_t ndirs,
		     uint64_t mean, uint64_t seed, char *buf)
{
	uint64_t rng = mix(seed ^ 0x6d6b74726565ull) | 1, i, d;
	int *dfd = calloc(ndirs, sizeof(*dfd));
	char name[32];
	int root, ret = -1;

	if (!dfd)
		return -1;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "mktree: mkdir %s: %s\n", dir, strerror(errno));
		goto out_free;
	}
	root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		fprintf(stderr, "mktree: open %s: %s\n", dir, strerror(errno));
		goto out_free;
	}
	for (d = 0; d < ndirs; d++) {
		snprintf(name, sizeof(name), "d%05" PRIu64, d);
		if (mkdirat(root, name, 0755) < 0 ||
		    (dfd[d] = openat(root, name, O_RDONLY | O_DIRECTORY |
						  O_CLOEXEC)) < 0) {
			fprintf(stderr, "mktree: %s/%s: %s\n", dir, name,
				strerror(errno));
			ndirs = d;
			goto out_close;
		}
	}
	for (i = 0; i < nfiles; i++) {
		uint64_t r = next(&rng), size;

		size = r % 32 == 0 ? 0 : 1 + (r >> 8) % (2 * mean - 1);
		snprintf(name, sizeof(name), "f%07" PRIu64, i);
		if (write_file(dfd[i % ndirs], name, size, seed * 1000003 + i,
			       buf))
			goto out_close;
	}
	ret = 0;
out_close:
	for (d = 0; d < ndirs; d++)
		close(dfd[d]);
	close(root);
out_free:
	free(dfd);
	return ret;
}

int main(int argc, char **argv)
{
	uint64_t a, b, c, seed;
	char *buf = malloc(BUF_SIZE);
	int ret = 1;

	if (!buf)
		return 1;
	if (argc == 5 && !strcmp(argv[1], "--file")) {
		if (parse_u64("SIZE", argv[3], &a) ||
		    parse_u64("SEED", argv[4], &seed))
			goto out;
		ret = write_file(AT_FDCWD, argv[2], a, seed, buf) ? 1 : 0;
	} else if (argc == 6) {
		if (parse_u64("NFILES", argv[2], &a) ||
		    parse_u64("NDIRS", argv[3], &b) ||
		    parse_u64("MEANSIZE", argv[4], &c) ||
		    parse_u64("SEED", argv[5], &seed))
			goto out;
		if (!b || !c) {
			fprintf(stderr, "mktree: NDIRS and MEANSIZE must be >= 1\n");
			goto out;
		}
		ret = make_tree(argv[1], a, b, c, seed, buf) ? 1 : 0;
	} else {
		fprintf(stderr, "usage: mktree DIR NFILES NDIRS MEANSIZE SEED\n"
				"       mktree --file PATH SIZE SEED\n");
	}
out:
	free(buf);
	return ret;
}
