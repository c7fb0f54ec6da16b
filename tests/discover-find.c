// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * discover-find: run one seed search (prefetch/discover.h) from the command
 * line, for golden_discover.py.
 *
 *   discover-find [-t THREADS] [-H HEADS] [-w WINDOW] N A-B INDEX...
 *
 * Searches the seeds [A, B) for the permutation of N whose first opens were
 * INDEX... (in open order) and prints one line, exit status 0:
 *   found=SEED tested=T candidates=C seconds=S
 * or `found=none ...`; bad arguments or a failed start: a message, exit 2.
 * Normal priority, THREADS workers (default 2).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "discover.h"
#include "parse.h"

static void die(const char *what)
{
	fprintf(stderr,
		"discover-find: %s\n"
		"usage: discover-find [-t THREADS] [-H HEADS] "
		"[-w WINDOW] N A-B INDEX...\n",
		what);
	exit(2);
}

static uint32_t arg_u32(const char *s, uint64_t max, const char *what)
{
	uint64_t v;

	if (dsfs_parse_u64(s, 0, max, &v))
		die(what);
	return (uint32_t)v;
}

int main(int argc, char **argv)
{
	static uint32_t obs[DSFS_DISCOVER_MAX_OBSERVED];
	struct dsfs_discover_cfg cfg = { .threads = 2,
					 .observed = obs,
					 .prio = DSFS_DISCOVER_NORMAL };
	struct dsfs_discover_result r;
	struct dsfs_discover *d;
	int c, ret;

	while ((c = getopt(argc, argv, "t:H:w:")) != -1) {
		if (c == 't')
			cfg.threads = arg_u32(optarg, DSFS_DISCOVER_MAX_THREADS,
					      "bad -t");
		else if (c == 'H')
			cfg.heads = arg_u32(optarg, DSFS_DISCOVER_MAX_HEADS,
					    "bad -H");
		else if (c == 'w')
			cfg.window = arg_u32(optarg, DSFS_DISCOVER_MAX_WINDOW,
					     "bad -w");
		else
			die("unknown option");
	}
	if (argc - optind < 3 || argc - optind - 2 > DSFS_DISCOVER_MAX_OBSERVED)
		die("want N, A-B and 1 to 1024 indices");
	cfg.n = arg_u32(argv[optind], UINT32_MAX, "bad N");
	if (dsfs_discover_parse_range(argv[optind + 1], &cfg.first, &cfg.end))
		die("bad range A-B");
	for (c = optind + 2; c < argc; c++)
		obs[cfg.nobserved++] =
			arg_u32(argv[c], UINT32_MAX, "bad index");
	ret = dsfs_discover_start(&cfg, &d);
	if (ret)
		die(strerror(-ret));
	dsfs_discover_wait(d, -1);
	dsfs_discover_result(d, &r);
	dsfs_discover_free(d);
	if (r.status == 0)
		printf("found=%" PRIu32, r.seed);
	else
		printf("found=none");
	printf(" tested=%" PRIu64 " candidates=%" PRIu64 " seconds=%.3f\n",
	       r.tested, r.candidates, r.seconds);
	return 0;
}
