/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Going to the background with an honest exit status: the command returns
 * 0 only once the daemon serves the mount (detach.c).
 */
#ifndef DSFS_DETACH_H
#define DSFS_DETACH_H

/*
 * Fork: the parent (the command) waits for dsfs_detach_ready() and a
 * working mount at mountpoint, then exits 0, or 1 with a message when the
 * daemon stopped first or the mount does not answer; it never returns.
 * The child leaves the session and the working directory, takes /dev/null
 * for its standard streams and returns 0 with *ready_fd to signal on; -1
 * (said on stderr) when it cannot.
 */
int dsfs_detach(const char *mountpoint, int *ready_fd);

/* The daemon is about to serve: let the command exit 0.  Closes *ready_fd
 * (-1 after; nothing to do when it is -1). */
void dsfs_detach_ready(int *ready_fd);

#endif
