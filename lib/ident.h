/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which incarnation of an inode number a file is.  A filesystem gives a
 * freed inode's number to the next file it creates nearby (XFS often to
 * the very next one), so (st_dev, st_ino) alone may name a file that was
 * created after the one dsfs knew was deleted or renamed over: an inode
 * held open through the mount would then read the new file's bytes, and a
 * new file the old one's cached bytes.  The generation tells them apart.
 */
#ifndef DSFS_IDENT_H
#define DSFS_IDENT_H

#include <stdint.h>

/*
 * The generation of the file `name` in directory dirfd, not following a
 * final symlink ("" for dirfd itself, which may be an O_PATH fd): a hash
 * of the filesystem's file handle for it (name_to_handle_at(2)), which
 * holds the inode's generation, a number the filesystem changes when it
 * reuses the inode; where the filesystem has no file handles, its birth
 * time (statx STATX_BTIME); else 0, and inode numbers alone tell files
 * apart.  Never 0 otherwise.  One or two system calls, no I/O for an
 * inode in memory.  Any thread.
 */
uint64_t dsfs_ident_gen(int dirfd, const char *name);

#endif
