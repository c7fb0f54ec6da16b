/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Open a path below a directory without ever leaving it: ".." cannot climb
 * out and magic links are refused (openat2 RESOLVE_BENEATH).
 * dsfs_open_beneath() follows no symlink at any component either
 * (RESOLVE_NO_SYMLINKS): this is how dsfs keeps its promise never to
 * follow a link out of SOURCE on its own.
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
/*
 * The same, but symlinks are followed as long as every one stays below
 * dirfd (openat2 RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS): how a loader's
 * path through the mount reaches a sample, used only to find the files a
 * layout names, never to serve the daemon's own opens of SOURCE.
 */
int dsfs_open_inside(int dirfd, const char *relpath, int flags);

#endif
