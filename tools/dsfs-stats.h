/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dsfs-stats internals: the snapshot a dsfs daemon publishes (see
 * fs/stats.h: "key value" lines, dotted keys, JSON-token values), the list
 * of dsfs mounts, and the renderers (table, one-line summary, JSON,
 * Prometheus text, watch).  The tool is single-threaded; nothing here
 * locks.  Every renderer reads a struct dsfs_snap and writes to stdout.
 */
#ifndef DSFS_STATS_TOOL_H
#define DSFS_STATS_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DSFS_STATS_XATTR "user.dsfs.stats"
#define DSFS_PLAN_XATTR "user.dsfs.plan" /* "=COMMAND"; ".error" */
#define DSFS_SNAP_FIELDS 256
#define DSFS_SNAP_RANKS 64

struct dsfs_snap_field {
	char *key; /* dotted */
	char *val; /* JSON token */
};

/* One snapshot: fields point into text, which the snapshot owns. */
struct dsfs_snap {
	char *text;
	struct dsfs_snap_field f[DSFS_SNAP_FIELDS];
	unsigned n;
};

/* One element of plan.ranks (fields the daemon did not give are 0, "?"). */
struct dsfs_snap_rank {
	unsigned long long rank, epoch, position, lead_items, lead_bytes,
		mispredictions;
	char detected[32];
};

/* snap.c: read the snapshot-shaped attribute `name` of mnt in one call
 * (asking for the size first would send a plan command twice) into a
 * zeroed *s.  0 or -errno; free with dsfs_snap_free() either way. */
int dsfs_snap_fetch(const char *mnt, const char *name, struct dsfs_snap *s);
void dsfs_snap_free(struct dsfs_snap *s);
/* The raw JSON token of key, or NULL.  O(fields). */
const char *dsfs_snap_get(const struct dsfs_snap *s, const char *key);
/* key as a number (true: 1, false and absent: 0). */
double dsfs_snap_num(const struct dsfs_snap *s, const char *key);
/* key as text: a JSON string unescaped (UTF-8), any other token as it is,
 * "?" when absent.  Returns buf. */
const char *dsfs_snap_str(const struct dsfs_snap *s, const char *key, char *buf,
			  size_t size);
/* cache.numa_nodes without its brackets: "0,1".  Returns buf. */
const char *dsfs_snap_nodes(const struct dsfs_snap *s, char *buf, size_t size);
/* plan.ranks parsed into r (at most max); the number of ranks, 0 when
 * absent or malformed. */
unsigned dsfs_snap_ranks(const struct dsfs_snap *s, struct dsfs_snap_rank *r,
			 unsigned max);
/* A one-line explanation of err from dsfs_snap_fetch on path. */
const char *dsfs_snap_why(const char *path, int err, char *buf, size_t size);
/* "812.0 MiB" */
void dsfs_human(double bytes, char *buf, size_t size);

/* mounts.c: the mount points of type fuse.dsfs in /proc/mounts, unescaped,
 * in mount order, as a malloc'ed array of malloc'ed strings (free with
 * dsfs_mounts_free).  0 and *out, *n; or -errno. */
int dsfs_mounts_list(char ***out, unsigned *n);
void dsfs_mounts_free(char **m, unsigned n);
/* Whether path is a dsfs mount point: 1 (also when /proc/mounts cannot be
 * read), 0, or -errno (path cannot be resolved). */
int dsfs_mounts_is_root(const char *path);
/* The dsfs mount point below which path lies, if path is not one itself;
 * NULL when none (or path is one).  Caller frees. */
char *dsfs_mounts_containing(const char *path);

/* render_table.c */
void dsfs_render_table(const struct dsfs_snap *s, const char *mnt);
void dsfs_render_plan(const struct dsfs_snap *s);
/* The no-argument listing: a header, then one line per mount; snaps[i]
 * NULL means errs[i] says why mount i could not be read. */
void dsfs_render_summary(char *const *mnts, const struct dsfs_snap *snaps,
			 const int *errs, unsigned n);

/* render_json.c */
void dsfs_render_json(const struct dsfs_snap *s);

/* render_prom.c: Prometheus text exposition of n mounts; snaps[i].text
 * NULL: mount i could not be read (only its dsfs_up 0 is written). */
void dsfs_render_prom(char *const *mnts, const struct dsfs_snap *snaps,
		      unsigned n);

/* watch.c: refresh mnt's rates every `interval` seconds until SIGINT or
 * SIGTERM (exit status 0) or a read fails (1, with a message). */
int dsfs_watch(const char *mnt, double interval);

#endif
