// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Temp-dir helpers of the harnesses that build files (see fuzz.h).
 * Single-threaded: the state is one directory name per process.
 */
#include "config.h"

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

static char tmpdir[PATH_MAX];

static int rm_one(const char *path, const struct stat *st, int type,
		  struct FTW *ftw)
{
	(void)st, (void)ftw;
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

void fuzz_rmtree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void remove_tmpdir(void)
{
	fuzz_rmtree(tmpdir);
}

const char *fuzz_tmpdir(const char *tag)
{
	const char *base = getenv("TMPDIR");

	if (tmpdir[0])
		return tmpdir;
	snprintf(tmpdir, sizeof(tmpdir), "%s/dsfs-fuzz-%s.XXXXXX",
		 base && *base ? base : "/tmp", tag);
	FUZZ_CHECK(mkdtemp(tmpdir), "mkdtemp %s", tmpdir);
	atexit(remove_tmpdir);
	return tmpdir;
}

void fuzz_write(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	const char *p = data;
	ssize_t got = 0;

	FUZZ_CHECK(fd >= 0, "open %s", path);
	while (len && (got = write(fd, p, len)) > 0)
		p += got, len -= (size_t)got;
	FUZZ_CHECK(got >= 0 && !close(fd), "write %s", path);
}
