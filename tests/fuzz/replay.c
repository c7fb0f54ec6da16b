// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * replay: the main() that turns a libFuzzer harness into a plain program, so
 * that `make check` replays the checked-in corpus with any compiler (gcc,
 * no libFuzzer) and under the ASan build.
 *
 *   fuzz/replay-NAME [FILE|DIR...]
 *
 * Runs the harness's LLVMFuzzerTestOneInput() once per file, each read into
 * a buffer of exactly its size (so ASan sees any read past the input), the
 * files of a directory in name order.  Without arguments it replays
 * $srcdir/fuzz/corpus/NAME, NAME being this program's name after "replay-"
 * (automake's test driver exports srcdir).  A harness reports a broken
 * invariant by aborting, which fails the test; the file being replayed is
 * printed first, so the log names the input.  An empty or missing corpus
 * fails too: a replay test must never pass by running nothing.
 * Single-threaded; the harness may start threads of its own.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

/* libFuzzer calls it when the harness defines it; so do we. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

/* Reads all of path into a malloc'd buffer of exactly its size. */
static int read_all(const char *path, uint8_t **data, size_t *len)
{
	uint8_t *buf = NULL;
	ssize_t got = 0;
	struct stat st;
	size_t n = 0, size = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (!fstat(fd, &st)) {
		size = (size_t)st.st_size;
		buf = malloc(size ? size : 1);
	}
	while (buf && n < size && (got = read(fd, buf + n, size - n)) > 0)
		n += (size_t)got;
	close(fd);
	if (!buf || got < 0) {
		free(buf);
		return -1;
	}
	*data = buf;
	*len = n;
	return 0;
}

static int replay_file(const char *path)
{
	uint8_t *data;
	size_t len;

	if (read_all(path, &data, &len)) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
	LLVMFuzzerTestOneInput(data, len);
	free(data);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Replays path (a file, or every file of a directory); files run or -1. */
static long replay(const char *path)
{
	struct dirent **ents;
	char file[PATH_MAX];
	struct stat st;
	long done = 0;
	int n, i;

	if (stat(path, &st)) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path) ? -1 : 1;
	n = scandir(path, &ents, NULL, by_name);
	if (n < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		snprintf(file, sizeof(file), "%s/%s", path, ents[i]->d_name);
		if (ents[i]->d_name[0] != '.' && !stat(file, &st) &&
		    S_ISREG(st.st_mode) && done >= 0)
			done = replay_file(file) ? -1 : done + 1;
		free(ents[i]);
	}
	free(ents);
	return done;
}

int main(int argc, char **argv)
{
	const char *srcdir = getenv("srcdir"), *name = strrchr(argv[0], '/');
	char corpus[PATH_MAX];
	long total = 0, n;
	int i;

	name = name ? name + 1 : argv[0];
	if (!strncmp(name, "replay-", 7))
		name += 7;
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	if (argc < 2) {
		snprintf(corpus, sizeof(corpus), "%s/fuzz/corpus/%s",
			 srcdir ? srcdir : ".", name);
		n = replay(corpus);
		total = n;
	}
	for (i = 1; i < argc && total >= 0; i++) {
		n = replay(argv[i]);
		total = n < 0 ? n : total + n;
	}
	if (total <= 0) {
		fprintf(stderr, "replay: %s\n", total ? "failed" :
			"no input found: the corpus must not be empty");
		return 1;
	}
	printf("replay-%s: %ld inputs replayed\n", name, total);
	return 0;
}
