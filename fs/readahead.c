// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel's read-ahead window for the mount.
 *
 * A FUSE mount starts with the kernel's default window (128 KiB), and INIT
 * can only lower it.  A file read whole by a loader then reaches dsfs as
 * one READ per 128 KiB: a typical 110 KiB sample with a 1-in-3 chance of
 * two round trips, a large one with many.  Reads can be up to 1 MiB
 * (max_pages), so dsfs raises the window of its mount's backing device
 * info to that, through /sys/class/bdi/MAJOR:MINOR/read_ahead_kb, once,
 * after INIT (whose reply would lower it again): from the first request
 * that reads.  Needs root; otherwise one log line and the default stays.
 *
 * Threads: any FUSE worker; the first caller does the work, others return.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsfs.h"
#include "log.h"

#define READAHEAD_KB 1024u /* the largest FUSE read: 256 pages of 4 KiB */

/* Undo mountinfo's octal escapes (\040 for a space, ...) in place. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++, d++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
				    (s[3] - '0'));
			s += 3;
		} else {
			*d = *s;
		}
	}
	*d = '\0';
}

/* "MAJOR:MINOR" of the last fuse mount at mnt (the one on top), or -ENOENT. */
static int mount_dev(const char *mnt, char *dev, size_t devlen)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, *save, *fld[6], *sep;
	size_t cap = 0;
	int i, err = -ENOENT;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		fld[0] = strtok_r(line, " ", &save);
		for (i = 1; i < 6 && fld[i - 1]; i++)
			fld[i] = strtok_r(NULL, " ", &save);
		sep = strstr(save ? save : "", "- fuse");
		if (i < 6 || !fld[5] || !sep)
			continue;
		unescape(fld[4]);
		if (strcmp(fld[4], mnt) == 0 &&
		    (size_t)snprintf(dev, devlen, "%s", fld[2]) < devlen)
			err = 0;
	}
	free(line);
	fclose(f);
	return err;
}

static int raise_window(const char *mnt, unsigned *was)
{
	char dev[64], path[128];
	unsigned cur = 0;
	FILE *f;
	int err = mount_dev(mnt, dev, sizeof(dev));

	if (err)
		return err;
	snprintf(path, sizeof(path), "/sys/class/bdi/%s/read_ahead_kb", dev);
	f = fopen(path, "r+e");
	if (!f)
		return -errno;
	if (fscanf(f, "%u", &cur) != 1)
		err = -EIO;
	*was = cur;
	if (!err && cur < READAHEAD_KB) {
		rewind(f);
		if (fprintf(f, "%u\n", READAHEAD_KB) < 0)
			err = -EIO;
	}
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

void dsfs_readahead_tune(struct dsfs_fs *fs)
{
	unsigned was = 0;
	int err;

	if (__atomic_load_n(&fs->readahead_tuned, __ATOMIC_RELAXED) ||
	    __atomic_exchange_n(&fs->readahead_tuned, true, __ATOMIC_RELAXED))
		return;
	err = raise_window(fs->opts.mountpoint, &was);
	if (err)
		dsfs_info("kernel read-ahead for the mount left at its default (%s): files over 128 KiB take more than one read request",
			  strerror(-err));
	else if (was < READAHEAD_KB)
		dsfs_debug("kernel read-ahead for the mount raised from %u to %u KiB",
			   was, READAHEAD_KB);
}
