/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Open a path below a directory without ever leaving it: no symlink is
 * followed at any component, ".." cannot climb out, and magic links are
 * refused (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS).  This is how dsfs
 * keeps its promise never to follow a link out of SOURCE on its own.
 */
#ifndef DSFS_BENEATH_H
#define DSFS_BENEATH_H

/*
 * relpath is relative to dirfd ("." for dirfd itself).  With O_PATH |
 * O_NOFOLLOW a trailing symlink yields an fd for the link itself; otherwise a
 * symlink anywhere gives -ELOOP.  O_CLOEXEC is always added.  Returns an fd or
 * -errno.  Any thread.
 */
int dsfs_open_beneath(int dirfd, const char *relpath, int flags);

#endif
