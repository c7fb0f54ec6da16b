// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mkdataset: the benchmark's data sets, deterministic from their arguments.
 *
 *   mkdataset imagefolder DIR CLASSES FILES MEAN SIGMA SEED
 *	an ImageNet-like tree: DIR/nCCCCCCCC/nCCCCCCCC_IIIIIIII.JPEG, CLASSES
 *	class directories holding FILES files in total, dealt round-robin.
 *	Sizes are log-normal with mean MEAN bytes and shape SIGMA (the
 *	standard deviation of the size's logarithm, e.g. 0.5), clamped to
 *	[64, 32 * MEAN].
 *   mkdataset shards DIR COUNT SIZE SEED
 *	COUNT files DIR/shard-NNNNNN.tar of exactly SIZE bytes each
 *	(WebDataset-style shards).
 *
 * Content is not compressible: every file is a window, at a seeded offset,
 * into a 4 MiB pool of splitmix64 output (wrapping around for larger
 * files), so writing costs no arithmetic per byte and 5 GB take as long as
 * the volume needs.  The same arguments give the same tree, byte for byte.
 * Prints the total number of bytes written.  Single-threaded; exit 0, or 1
 * with a message naming what failed.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define POOL_SIZE (4u << 20)

struct gen {
	uint64_t state; /* splitmix64 state: sizes and offsets */
	unsigned char *pool;
	uint64_t total; /* bytes written so far */
};

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in (0, 1): 53 random bits, never 0 (log() below). */
static double uniform(uint64_t *state)
{
	return ((double)(splitmix64(state) >> 11) + 0.5) / 9007199254740992.0;
}

/* A standard normal deviate (Box-Muller, one of the pair). */
static double normal(uint64_t *state)
{
	double u = uniform(state), v = uniform(state);

	return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

static int pool_init(struct gen *g, uint64_t seed)
{
	uint64_t s = seed ^ 0x6d6b64617461ULL, *p;
	size_t i;

	g->pool = malloc(POOL_SIZE);
	if (!g->pool) {
		fprintf(stderr, "mkdataset: out of memory\n");
		return -1;
	}
	p = (uint64_t *)g->pool;
	for (i = 0; i < POOL_SIZE / sizeof(*p); i++)
		p[i] = splitmix64(&s);
	g->state = seed;
	g->total = 0;
	return 0;
}

/* Create dirfd/name with size bytes of the pool, from a seeded offset. */
static int put_file(struct gen *g, int dirfd, const char *name, uint64_t size)
{
	uint64_t off = splitmix64(&g->state) % POOL_SIZE, left = size;
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			0644);

	if (fd < 0) {
		fprintf(stderr, "mkdataset: create %s: %s\n", name,
			strerror(errno));
		return -1;
	}
	while (left) {
		size_t n = POOL_SIZE - off < left ? POOL_SIZE - off : left;
		ssize_t w = write(fd, g->pool + off, n);

		if (w <= 0) {
			fprintf(stderr, "mkdataset: write %s: %s\n", name,
				w < 0 ? strerror(errno) : "short write");
			close(fd);
			return -1;
		}
		left -= (uint64_t)w;
		off = (off + (uint64_t)w) % POOL_SIZE;
	}
	g->total += size;
	if (close(fd) < 0) {
		fprintf(stderr, "mkdataset: close %s: %s\n", name,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* mkdir DIR (it may exist) and open it; -1 with a message on failure. */
static int open_dir(int at, const char *path)
{
	int fd;

	if (mkdirat(at, path, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "mkdataset: mkdir %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	fd = openat(at, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		fprintf(stderr, "mkdataset: open %s: %s\n", path,
			strerror(errno));
	return fd;
}

/* One log-normal size: mean `mean`, log-sd `sigma`, within [64, 32 mean]. */
static uint64_t lognormal_size(struct gen *g, double mean, double sigma)
{
	double mu = log(mean) - sigma * sigma / 2, x;

	x = exp(mu + sigma * normal(&g->state));
	if (x < 64)
		x = 64;
	if (x > 32 * mean)
		x = 32 * mean;
	return (uint64_t)x;
}

/*
 * The class directories are made first, then the files dealt round-robin
 * over them (created by a path relative to DIR: no descriptor per class);
 * sizes and content offsets come from one seeded stream in file order.
 * O(FILES + total bytes).
 */
static int make_imagefolder(struct gen *g, const char *dir, uint64_t classes,
			    uint64_t files, double mean, double sigma)
{
	int root = open_dir(AT_FDCWD, dir), ret = 0;
	char name[96]; /* "n%08/n%08_%08.JPEG" of 20-digit numbers at most */
	uint64_t c, i;

	if (root < 0)
		return -1;
	for (c = 0; c < classes && !ret; c++) {
		snprintf(name, sizeof(name), "n%08" PRIu64, c);
		if (mkdirat(root, name, 0755) < 0 && errno != EEXIST) {
			fprintf(stderr, "mkdataset: mkdir %s/%s: %s\n", dir, name,
				strerror(errno));
			ret = -1;
		}
	}
	for (i = 0; i < files && !ret; i++) {
		c = i % classes;
		snprintf(name, sizeof(name), "n%08" PRIu64 "/n%08" PRIu64
			 "_%08" PRIu64 ".JPEG", c, c, i / classes);
		ret = put_file(g, root, name, lognormal_size(g, mean, sigma));
	}
	close(root);
	return ret;
}

static int make_shards(struct gen *g, const char *dir, uint64_t count,
		       uint64_t size)
{
	int root = open_dir(AT_FDCWD, dir), ret = 0;
	char name[64];
	uint64_t i;

	if (root < 0)
		return -1;
	for (i = 0; i < count && !ret; i++) {
		snprintf(name, sizeof(name), "shard-%06" PRIu64 ".tar", i);
		ret = put_file(g, root, name, size);
	}
	close(root);
	return ret;
}

static int parse_u64(const char *what, const char *s, uint64_t min,
		     uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	if (errno || !*s || *end || *s == '-' || *out < min) {
		fprintf(stderr, "mkdataset: %s '%s': give an integer >= %" PRIu64
				"\n", what, s, min);
		return -1;
	}
	return 0;
}

static int parse_sigma(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno || !*s || *end || !(*out >= 0 && *out <= 4)) {
		fprintf(stderr, "mkdataset: SIGMA '%s': give a number from 0 to 4\n",
			s);
		return -1;
	}
	return 0;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: mkdataset imagefolder DIR CLASSES FILES MEAN SIGMA SEED\n"
		"       mkdataset shards DIR COUNT SIZE SEED\n");
	return 1;
}

int main(int argc, char **argv)
{
	uint64_t a, b, mean, seed;
	struct gen g = { 0 };
	double sigma;
	int ret = 1;

	if (argc == 8 && !strcmp(argv[1], "imagefolder")) {
		if (parse_u64("CLASSES", argv[3], 1, &a) ||
		    parse_u64("FILES", argv[4], 0, &b) ||
		    parse_u64("MEAN", argv[5], 64, &mean) ||
		    parse_sigma(argv[6], &sigma) ||
		    parse_u64("SEED", argv[7], 0, &seed) || pool_init(&g, seed))
			return 1;
		ret = make_imagefolder(&g, argv[2], a, b, (double)mean, sigma);
	} else if (argc == 6 && !strcmp(argv[1], "shards")) {
		if (parse_u64("COUNT", argv[3], 0, &a) ||
		    parse_u64("SIZE", argv[4], 0, &b) ||
		    parse_u64("SEED", argv[5], 0, &seed) || pool_init(&g, seed))
			return 1;
		ret = make_shards(&g, argv[2], a, b);
	} else {
		return usage();
	}
	if (!ret)
		printf("%" PRIu64 "\n", g.total);
	free(g.pool);
	return ret ? 1 : 0;
}
