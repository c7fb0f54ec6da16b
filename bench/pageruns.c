// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pageruns: how physically contiguous the page cache of some files is.
 *
 *   pageruns DIR LIST [COUNT]
 *
 * For the first COUNT (default 2000) paths of LIST (relative to DIR), the
 * pages of each file that are in the page cache are mapped and their page
 * frame numbers read from /proc/self/pagemap (root only: others read zero).
 * A run is a stretch of a file's pages at consecutive frames.  Prints
 *
 *   files=N resident_pages=P runs=R runs_per_file=F
 *
 * Why the benchmark asks (target 1, bench/README.md): on the development
 * VM a warm read of a file whose pages lie in a few runs went about 15%
 * faster than one of the same size in many, and which page cache gets the
 * long runs depends on which is filled first after a drop of the caches
 * (the earlier one gets the scattered free pages).  Pages not in the page
 * cache (mincore) are left out and never faulted in, so looking does not
 * change what is looked at.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PFN_PRESENT (1ULL << 63)
#define PFN_MASK ((1ULL << 55) - 1)

struct tally {
	long files, pages, runs;
};

/* The frame of the page mapped at addr, or 0 if none (or not root). */
static uint64_t frame_of(int pagemap, const volatile char *addr, long psz)
{
	uint64_t e;
	off_t at = (off_t)((uintptr_t)addr / (uintptr_t)psz * sizeof(e));

	if (pread(pagemap, &e, sizeof(e), at) != (ssize_t)sizeof(e) ||
	    !(e & PFN_PRESENT))
		return 0;
	return e & PFN_MASK;
}

/* Adds path's resident pages and their runs to t; -errno on failure. */
static int tally_file(int pagemap, const char *path, long psz, struct tally *t)
{
	struct stat st;
	unsigned char *in = NULL;
	volatile char *map;
	uint64_t prev = 0, f;
	size_t n, i;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0 || fstat(fd, &st) < 0) {
		err = -errno;
		goto out;
	}
	t->files++;
	if (st.st_size == 0)
		goto out;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		err = -errno;
		goto out;
	}
	n = ((size_t)st.st_size + (size_t)psz - 1) / (size_t)psz;
	in = malloc(n);
	if (!in || mincore((void *)map, (size_t)st.st_size, in) < 0) {
		err = in ? -errno : -ENOMEM;
		goto unmap;
	}
	for (i = 0; i < n; i++) {
		if (!(in[i] & 1)) {
			prev = 0;
			continue;
		}
		(void)map[i * (size_t)psz]; /* resident: maps it, reads nothing */
		f = frame_of(pagemap, map + i * (size_t)psz, psz);
		if (!f) {
			err = -EPERM; /* frames are shown to root only */
			goto unmap;
		}
		t->pages++;
		if (f != prev + 1)
			t->runs++;
		prev = f;
	}
unmap:
	munmap((void *)map, (size_t)st.st_size);
out:
	free(in);
	if (fd >= 0)
		close(fd);
	return err;
}

int main(int argc, char **argv)
{
	struct tally t = { 0 };
	long psz = sysconf(_SC_PAGESIZE), count = 2000;
	char line[4096], path[8192];
	FILE *list;
	int pagemap, err;

	if (argc == 4)
		count = strtol(argv[3], NULL, 10);
	if ((argc != 3 && argc != 4) || count <= 0) {
		fprintf(stderr, "usage: pageruns DIR LIST [COUNT]\n");
		return 2;
	}
	pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	list = fopen(argv[2], "r");
	if (pagemap < 0 || !list) {
		fprintf(stderr, "pageruns: %s: %s\n",
			pagemap < 0 ? "/proc/self/pagemap" : argv[2],
			strerror(errno));
		return 1;
	}
	while (t.files < count && fgets(line, sizeof(line), list)) {
		line[strcspn(line, "\n")] = '\0';
		snprintf(path, sizeof(path), "%s/%s", argv[1], line);
		err = tally_file(pagemap, path, psz, &t);
		if (err) {
			fprintf(stderr, "pageruns: %s: %s\n", path,
				strerror(-err));
			return 1;
		}
	}
	fclose(list);
	if (!t.files) {
		fprintf(stderr, "pageruns: %s: no paths\n", argv[2]);
		return 1;
	}
	printf("files=%ld resident_pages=%ld runs=%ld runs_per_file=%.2f\n",
	       t.files, t.pages, t.runs, (double)t.runs / (double)t.files);
	return 0;
}
