// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * File generations (see ident.h).  Stateless; any thread.
 */
#include "config.h"

#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>

#include "ident.h"

/* FNV-1a over n bytes, continuing from h. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

uint64_t dsfs_ident_gen(int dirfd, const char *name)
{
	union {
		struct file_handle fh;
		char bytes[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} h;
	int flags = name[0] ? 0 : AT_EMPTY_PATH, mnt;
	struct statx stx;
	uint64_t g;

	h.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(dirfd, name, &h.fh, &mnt, flags) == 0) {
		g = fnv1a(0xcbf29ce484222325ULL, &h.fh.handle_type,
			  sizeof(h.fh.handle_type));
		g = fnv1a(g, h.fh.f_handle, h.fh.handle_bytes);
		return g ? g : 1;
	}
	if (statx(dirfd, name, flags | AT_SYMLINK_NOFOLLOW, STATX_BTIME,
		  &stx) == 0 && (stx.stx_mask & STATX_BTIME)) {
		g = (uint64_t)stx.stx_btime.tv_sec * 1000000000u +
		    stx.stx_btime.tv_nsec;
		return g ? g : 1;
	}
	return 0;
}
