// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * layout-dump: build a layout and print it, for the golden test and for
 * measuring.  Usage: layout-dump [-i] [-q] [-x EXTS] [-s SUFFIXES] [-H] ROOT
 * DATASET_REL KIND [LISTFILE] prints "index<TAB>path<TAB>size<TAB>prefetchable(0|1)" per
 * sample, with backslash, TAB and LF in paths written as \\, \t and \n; on
 * failure prints the reason on stderr and exits 1.  -i adds the build's
 * counts, time and memory on stderr; -q prints no samples; -x gives
 * imagefolder a DatasetFolder's extensions (".npy:.wav", as extensions=);
 * -s keeps, for sorted and walk, the files ending in a suffix (as suffix=),
 * -H leaves out hidden names (as hidden=skip).
 * Single-threaded.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "layout.h"

static void put_path(const char *p)
{
	for (; *p; p++) {
		if (*p == '\\')
			fputs("\\\\", stdout);
		else if (*p == '\t')
			fputs("\\t", stdout);
		else if (*p == '\n')
			fputs("\\n", stdout);
		else
			putchar(*p);
	}
}

static void print_info(const struct dsfs_layout *l, double secs)
{
	const struct dsfs_layout_info *in = dsfs_layout_info(l);
	uint64_t n = dsfs_layout_count(l);
	size_t mem = dsfs_layout_memory(l);

	fprintf(stderr, "count=%llu dirs=%llu loops=%llu unreadable=%llu "
		"outside=%llu not_regular=%llu duplicates=%llu "
		"empty_classes=%llu build_s=%.3f memory=%zu bytes_per_sample=%.1f\n",
		(unsigned long long)n, (unsigned long long)in->dirs,
		(unsigned long long)in->loops,
		(unsigned long long)in->unreadable,
		(unsigned long long)in->outside,
		(unsigned long long)in->not_regular,
		(unsigned long long)in->duplicates,
		(unsigned long long)in->empty_classes, secs, mem,
		n ? (double)mem / (double)n : 0.0);
}

int main(int argc, char **argv)
{
	enum dsfs_layout_kind kind;
	struct dsfs_layout *l;
	struct timespec t0, t1;
	bool info = false, quiet = false;
	struct dsfs_layout_names names = { 0 };
	char why[512];
	uint64_t i;
	int opt, fd, err;

	while ((opt = getopt(argc, argv, "iqx:s:H")) != -1) {
		if (opt == 'i')
			info = true;
		else if (opt == 'q')
			quiet = true;
		else if (opt == 'x')
			names.extensions = optarg;
		else if (opt == 's')
			names.suffix = optarg;
		else if (opt == 'H')
			names.skip_hidden = true;
		else
			return 2;
	}
	argv += optind, argc -= optind;
	if (argc < 3 || argc > 4 || dsfs_layout_kind_parse(argv[2], &kind)) {
		fprintf(stderr, "usage: layout-dump [-i] [-q] [-x EXTS] "
			"[-s SUFFIXES] [-H] ROOT DATASET_REL "
			"imagefolder|sorted|walk|list [LISTFILE]\n");
		return 2;
	}
	fd = open(argv[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[0]);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = dsfs_layout_build(fd, argv[1], kind, argc > 3 ? argv[3] : NULL,
				&names, &l, why, sizeof(why));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	close(fd);
	if (err) {
		fprintf(stderr, "%s\n", why);
		return 1;
	}
	if (info)
		print_info(l, (double)(t1.tv_sec - t0.tv_sec) +
				      (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	for (i = 0; !quiet && i < dsfs_layout_count(l); i++) {
		printf("%llu\t", (unsigned long long)i);
		put_path(dsfs_layout_path(l, i));
		printf("\t%llu\t%d\n",
		       (unsigned long long)dsfs_layout_size(l, i),
		       dsfs_layout_prefetchable(l, i) ? 1 : 0);
	}
	dsfs_layout_free(l);
	return fflush(stdout) ? 1 : 0;
}
