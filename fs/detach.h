/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Going to the background with an honest exit status: the command returns
 * 0 only once the daemon serves the mount (detach.c).
 */
#ifndef DSFS_DETACH_H
#define DSFS_DETACH_H

/*
 * Fork, first thing: the parent (the command) waits for
 * dsfs_detach_ready() and a working mount at mountpoint, then exits 0, or
 * 1 with a message when the daemon stopped first or the mount does not
 * answer; it never returns.  The child (the daemon) returns 0 with
 * *ready_fd to signal on, still in the terminal's session and with its
 * standard streams, so that it can say on the terminal what it refuses
 * while setting up; -1 (said on stderr) when it cannot fork.
 */
int dsfs_detach_fork(const char *mountpoint, int *ready_fd);

/* The daemon, mounted: leave the session and the working directory, and
 * take /dev/null for the standard streams.  0, or -1 (said on stderr). */
int dsfs_detach(void);

/* The daemon is about to serve: let the command exit 0.  Closes *ready_fd
 * (-1 after; nothing to do when it is -1). */
void dsfs_detach_ready(int *ready_fd);

/* The daemon stops before serving: the command exits 1, saying nothing
 * more if the daemon still had the terminal to say why itself, else
 * pointing to the system log.  Closes *ready_fd (nothing to do when -1). */
void dsfs_detach_failed(int *ready_fd);

#endif
