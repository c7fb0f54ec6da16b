/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Minimal assertion helpers for the unit tests: report and count failures. */
#ifndef DSFS_UNIT_CHECK_H
#define DSFS_UNIT_CHECK_H

#include <stdio.h>

static int unit_failures;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, \
				__LINE__, #cond);                              \
			__atomic_add_fetch(&unit_failures, 1,                 \
					   __ATOMIC_RELAXED);                  \
		}                                                              \
	} while (0)

#define UNIT_DONE()                                                            \
	(unit_failures ? (fprintf(stderr, "%d check(s) failed\n",              \
				  unit_failures), 1) : 0)

#endif
