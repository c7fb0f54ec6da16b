/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * FUSE inode numbers <-> backing files, without an fd per inode.
 *
 * Each inode the kernel knows is identified by the backing (st_dev, st_ino)
 * and the file's generation (lib/ident.h: a file created later under a
 * reused inode number is another inode) and remembers its parent and name, so its path below SOURCE can be rebuilt
 * and opened (confined, see lib/beneath.h) when needed.  A lookup that finds
 * a known inode under another name (renamed in SOURCE, or a hard link) puts
 * that name in front: the kernel may keep the inode across a rename, and the
 * old name leads nowhere.  This works for any
 * user and any backing filesystem, unlike file handles (open_by_handle_at
 * needs CAP_DAC_READ_SEARCH and an exportable filesystem).
 *
 * Lifetime: an inode holds one reference per kernel lookup (released by
 * FORGET) plus one per child inode; it is freed when both reach zero.  The
 * root is never freed.  FUSE node ids are the inode's address; the root is
 * FUSE_ROOT_ID.
 *
 * Threads: all FUSE workers.  The table is sharded; each shard's mutex
 * protects its chains, the `refs` of its inodes and the order of their
 * names.  The front name is an atomic pointer and every name stays until
 * its inode is freed, so paths are built without locks.
 */
#ifndef DSFS_INODES_H
#define DSFS_INODES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

struct dsfs_inodes;
struct dsfs_inode;

/* One name an inode was found under.  Immutable once published.  An
 * inode's first name is allocated with it, right after it (inodes.c). */
struct dsfs_name {
	struct dsfs_name *older;	/* protected by the shard lock */
	struct dsfs_inode *parent;	/* NULL for the root; holds a ref */
	char name[];			/* "" for the root */
};

/* 88 bytes, and its first name (16 bytes and the name's, 8-byte aligned):
 * an inode per file the kernel holds, a million after a loader lists a
 * million-file tree, so what only some files need is allocated apart. */
struct dsfs_inode {
	struct dsfs_inode *hnext;	/* protected by the shard lock */
	struct dsfs_name *where;	/* the latest name; atomic (release
					   by lookups, acquire by readers) */
	uint64_t dev, ino, gen;		/* backing identity (gen: see
					   lib/ident.h) */
	/* Relaxed atomics, written by lookup/getattr and the read path; a
	 * stale value only delays a heuristic or shortens a read to the size
	 * the kernel was last told. */
	uint64_t size;			/* st_size last reported */
	uint64_t ctime_ns;		/* st_ctim last seen: changes on any
					   write, truncate or rename */
	uint64_t plan_when;		/* plan time of the file's next read
					   after the latest one reported
					   (DSFS_CACHE_KEEP: none reported) */
	uint64_t report_seq;		/* the scheduler's number of the
					   latest report of an open of this
					   file, + 1 (0: none) */
	struct dsfs_inode_more *more;	/* atomic; NULL until needed
					   (dsfs_inodes_more) */
	uint32_t refs;			/* protected by the shard lock;
					   saturates (then never freed) */
	uint16_t type;			/* S_IFMT bits; immutable */
	uint8_t lookup_state;		/* enum dsfs_lookup_state */
};

/* What few files need: allocated at its first use, freed with the inode.
 * Relaxed atomics, as the inode's hints above. */
struct dsfs_inode_more {
	uint64_t ra_next;		/* sequential read-ahead (a file above
					   whole_file_max): where the last
					   read ended */
	uint64_t ra_window;		/* and its window, bytes */
	uint64_t reported_open;		/* with -o direct_io: the open (its
					   file handle) whose read from
					   offset 0 was reported last */
	uint64_t opened_at;		/* direct_io=auto: the mount's bytes
					   opened at its latest open; 0 none */
};

/*
 * How far the latest lookup of a regular file got in reporting its open to
 * the plan (dsfs_op_lookup); the open's read from offset 0 reports it
 * unless the lookup did (dsfs_op_read).
 */
enum dsfs_lookup_state {
	DSFS_LOOKUP_NONE,	/* no lookup since the last read from 0 */
	DSFS_LOOKUP_REPLIED,	/* replied to, not reported yet */
	DSFS_LOOKUP_REPORTING,	/* the lookup is reporting it */
	DSFS_LOOKUP_REPORTED,	/* reported; its read from 0 not seen yet */
};

/* root_st, root_gen: stat and generation of SOURCE.  NULL on allocation
 * failure. */
struct dsfs_inodes *dsfs_inodes_new(const struct stat *root_st,
				     uint64_t root_gen);
void dsfs_inodes_free(struct dsfs_inodes *t);

/* The inode behind a FUSE node id (valid while the kernel holds it). */
struct dsfs_inode *dsfs_inodes_get(struct dsfs_inodes *t, uint64_t nodeid);
uint64_t dsfs_inodes_nodeid(struct dsfs_inodes *t, struct dsfs_inode *inode);

/*
 * Find or add the inode for a child found by lookup (st, and gen from
 * dsfs_ident_gen()) and take one reference; parent/name becomes its front
 * name.  An inode of the same number and another generation is another
 * file, the one deleted before: it is left alone (its reads fail with
 * ESTALE).  Returns NULL on allocation failure.
 */
struct dsfs_inode *dsfs_inodes_ref_child(struct dsfs_inodes *t,
					 struct dsfs_inode *parent,
					 const char *name,
					 const struct stat *st, uint64_t gen);
/* Take n more references on an inode the caller already holds one on. */
void dsfs_inodes_ref(struct dsfs_inodes *t, struct dsfs_inode *inode,
		     uint64_t n);
/* Drop n references (FORGET, or a readdirplus entry that did not fit). */
void dsfs_inodes_unref(struct dsfs_inodes *t, struct dsfs_inode *inode,
		       uint64_t n);

/*
 * Write the inode's path relative to SOURCE ("." for the root) into buf, by
 * the front names.  Returns 0 or -ENAMETOOLONG.  O(depth); no lock.
 */
int dsfs_inodes_path(const struct dsfs_inode *inode, char *buf, size_t size);
/* The inode's front name ("" for the root).  No lock. */
const char *dsfs_inodes_name(const struct dsfs_inode *inode);

/*
 * The live inode for (dev, ino, gen), if any, was renamed to parent/name in
 * SOURCE: that becomes its front name, as a lookup of it would make it, so
 * that a process holding it (an open file, a working directory) reaches it
 * under its new path.  The caller holds a reference on parent.  0, -ENOENT
 * (no such inode) or -ENOMEM.
 */
int dsfs_inodes_renamed(struct dsfs_inodes *t, uint64_t dev, uint64_t ino,
			uint64_t gen, struct dsfs_inode *parent,
			const char *name);

/*
 * The name parent/name of the live inode for (dev, ino, gen), if any, was
 * unlinked in SOURCE while the file lives on under another (a hard link):
 * when it is the front name and the inode was found under others, the
 * latest of those becomes the front name, so that the kernel's dentries
 * of the other names (which lead to the same inode) still reach the file.
 * 0 or -ENOENT (no such inode).
 */
int dsfs_inodes_unlinked(struct dsfs_inodes *t, uint64_t dev, uint64_t ino,
			 uint64_t gen, const struct dsfs_inode *parent,
			 const char *name);

/* The node id of the live inode for (dev, ino, gen): 0, or -ENOENT.  The
 * id is only a name for the kernel; the inode may be freed right after. */
int dsfs_inodes_find(struct dsfs_inodes *t, uint64_t dev, uint64_t ino,
		     uint64_t gen, uint64_t *nodeid);

/* The live inode for (dev, ino, gen) with one reference taken (give it back
 * with dsfs_inodes_unref), so that its node id names this file until then;
 * NULL if the kernel holds none.  For a message to the kernel about the
 * file that must not reach another one (fs/push.c). */
struct dsfs_inode *dsfs_inodes_find_ref(struct dsfs_inodes *t, uint64_t dev,
					uint64_t ino, uint64_t gen);

/*
 * Whether the kernel holds the inode of (dev, ino) that a listing of parent
 * finds under name: a live inode of that number, of any generation, whose
 * front name is parent/name.  Then *gen is its generation.  O(1).
 */
bool dsfs_inodes_held(struct dsfs_inodes *t, const struct dsfs_inode *parent,
		      const char *name, uint64_t dev, uint64_t ino,
		      uint64_t *gen);

/* in's struct dsfs_inode_more, allocated (zeroed) at the first call;
 * NULL when out of memory.  Any thread, no lock. */
struct dsfs_inode_more *dsfs_inodes_more(struct dsfs_inode *in);

/* Number of live inodes, root included; for tests and stats. */
uint64_t dsfs_inodes_count(struct dsfs_inodes *t);

#endif
