/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the harnesses of tests/fuzz share.  Each harness is one file that
 * defines LLVMFuzzerTestOneInput(); linked with -fsanitize=fuzzer it is a
 * libFuzzer target (`make fuzz`), linked with replay.c a program that
 * replays the checked-in corpus (`make check`).  A harness must be
 * deterministic, must not leak, and reports a broken invariant with
 * FUZZ_CHECK, which aborts: a crash to libFuzzer, a failed test to replay.
 * Called from one thread (libFuzzer's or replay's main thread).
 */
#ifndef DSFS_FUZZ_H
#define DSFS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                  \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: invariant broken: %s: ",       \
				__FILE__, __LINE__, #cond);                    \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			abort();                                               \
		}                                                              \
	} while (0)

/* util.c, for the harnesses that build files. */

/*
 * A fresh directory "$TMPDIR/dsfs-fuzz-TAG.XXXXXX" (/tmp without TMPDIR),
 * removed with everything in it when the process exits normally.  The
 * path is static; aborts when it cannot be made.
 */
const char *fuzz_tmpdir(const char *tag);
/* Removes path and everything below it (symlinks are not followed). */
void fuzz_rmtree(const char *path);
/* Writes len bytes to path (created or truncated, mode 0644); aborts on error. */
void fuzz_write(const char *path, const void *data, size_t len);

#endif
