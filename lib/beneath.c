// SPDX-License-Identifier: GPL-2.0-or-later
/* openat2 wrappers (see beneath.h).  Stateless; any thread. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "beneath.h"

static int open_resolved(int dirfd, const char *relpath, int flags,
			 unsigned long long resolve)
{
	struct open_how how;
	long fd;

	memset(&how, 0, sizeof(how));
	how.flags = (unsigned)(flags | O_CLOEXEC);
	how.resolve = resolve;
	do
		fd = syscall(SYS_openat2, dirfd, relpath, &how, sizeof(how));
	while (fd < 0 && errno == EAGAIN);
	return fd < 0 ? -errno : (int)fd;
}

int dsfs_open_beneath(int dirfd, const char *relpath, int flags)
{
	return open_resolved(dirfd, relpath, flags,
			     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
				     RESOLVE_NO_MAGICLINKS);
}

int dsfs_open_inside(int dirfd, const char *relpath, int flags)
{
	return open_resolved(dirfd, relpath, flags,
			     RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
}
