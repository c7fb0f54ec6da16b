// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dsfs-stats's human forms: the table of one mount (dsfs-stats MOUNTPOINT),
 * the plan's rows (also after --set), and the one-line-per-mount listing
 * (dsfs-stats without arguments).  Sizes in binary units, ratios as
 * percentages; every row is described in dsfs-stats(1).  Single-threaded.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "dsfs-stats.h"

#define ROW "  %-20s "

/* A path for one line of a table: control bytes (a newline in a mount
 * point's name) written as /proc/mounts writes them, "\012".  Returns buf. */
static const char *shown(const char *path, char *buf, size_t size)
{
	size_t o = 0;

	for (; *path && o + 5 < size; path++) {
		unsigned char c = (unsigned char)*path;

		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(buf + o, size - o, "\\%03o", c);
		else
			buf[o++] = (char)c;
	}
	buf[o] = '\0';
	return buf;
}

/* Whether the plan has found its epoch (until then its length is 0). */
static bool epoch_known(const struct dsfs_snap *s)
{
	return dsfs_snap_num(s, "plan.length") != 0;
}

static void row_bytes(const char *label, double v)
{
	char h[32];

	dsfs_human(v, h, sizeof(h));
	printf(ROW "%s\n", label, h);
}

/* "3d 04h", "1h 02m", "2m 05s", "7s" */
static void duration(double secs, char *buf, size_t size)
{
	unsigned long long s = (unsigned long long)secs;

	if (s >= 86400)
		snprintf(buf, size, "%llud %02lluh", s / 86400,
			 s % 86400 / 3600);
	else if (s >= 3600)
		snprintf(buf, size, "%lluh %02llum", s / 3600, s % 3600 / 60);
	else if (s >= 60)
		snprintf(buf, size, "%llum %02llus", s / 60, s % 60);
	else
		snprintf(buf, size, "%llus", s);
}

/* One row per local rank when there are several. */
static void print_ranks(const struct dsfs_snap *s)
{
	struct dsfs_snap_rank r[DSFS_SNAP_RANKS];
	unsigned n = dsfs_snap_ranks(s, r, DSFS_SNAP_RANKS), i;
	char h[32], label[32];

	for (i = 0; n > 1 && i < n; i++) {
		dsfs_human((double)r[i].lead_bytes, h, sizeof(h));
		snprintf(label, sizeof(label), "rank %llu", r[i].rank);
		printf(ROW
		       "epoch %llu, %llu read; lead %llu files, %s; %llu mispredicted; %s\n",
		       label, r[i].epoch, r[i].position, r[i].lead_items, h,
		       r[i].mispredictions, r[i].detected);
	}
}

void dsfs_render_plan(const struct dsfs_snap *s)
{
	char a[256], b[1300], c[64], o[16384];

	printf(ROW "%s", "plan",
	       dsfs_snap_str(s, "plan.sampler", a, sizeof(a)));
	if (dsfs_snap_get(s, "plan.seed"))
		printf(", seed %s",
		       dsfs_snap_str(s, "plan.seed", b, sizeof(b)));
	if (!dsfs_snap_get(s, "plan.epoch")) { /* no plan followed */
		printf("\n");
		return;
	}
	printf(": %s\n", dsfs_snap_str(s, "plan.detected", c, sizeof(c)));
	if (dsfs_snap_get(s, "plan.options"))
		printf(ROW "%s\n", "plan options",
		       dsfs_snap_str(s, "plan.options", o, sizeof(o)));
	if (!epoch_known(s))
		printf(ROW "not known yet: no epoch found\n", "position");
	else
		printf(ROW "epoch %.0f, %.0f of %.0f\n", "position",
		       dsfs_snap_num(s, "plan.epoch"),
		       dsfs_snap_num(s, "plan.position"),
		       dsfs_snap_num(s, "plan.length"));
	dsfs_human(dsfs_snap_num(s, "plan.lead_bytes"), a, sizeof(a));
	printf(ROW "%.0f files, %s\n", "prefetch lead",
	       dsfs_snap_num(s, "plan.lead_items"), a);
	printf(ROW "%.0f of %.0f opens\n", "mispredictions",
	       dsfs_snap_num(s, "plan.mispredictions"),
	       dsfs_snap_num(s, "plan.accesses"));
	printf(ROW "%.0f opens left out of the plan\n", "other readers",
	       dsfs_snap_num(s, "plan.other_opens"));
	if (dsfs_snap_num(s, "plan.index_pass_samples") > 0)
		printf(ROW "%.0f samples read ahead\n", "index-order passes",
		       dsfs_snap_num(s, "plan.index_pass_samples"));
	if (dsfs_snap_get(s, "plan.last_open_seconds"))
		printf(ROW "%.1f s ago\n", "last open",
		       dsfs_snap_num(s, "plan.last_open_seconds"));
	else
		printf(ROW "none yet\n", "last open");
	if (dsfs_snap_get(s, "plan.searches"))
		printf(ROW "%.0f searches, %.0f found, %.1f s in all\n",
		       "seed search", dsfs_snap_num(s, "plan.searches"),
		       dsfs_snap_num(s, "plan.discovered"),
		       dsfs_snap_num(s, "plan.search_seconds"));
	print_ranks(s);
}

static void print_cache(const struct dsfs_snap *s)
{
	double used = dsfs_snap_num(s, "cache.used_bytes");
	double cap = dsfs_snap_num(s, "cache.capacity_bytes");
	char a[32], b[32], k[64], nd[256];

	dsfs_human(used, a, sizeof(a));
	dsfs_human(cap, b, sizeof(b));
	printf(ROW "%s of %s (%.0f%%), %.0f entries\n", "cache", a, b,
	       cap > 0 ? 100.0 * used / cap : 0.0,
	       dsfs_snap_num(s, "cache.entries"));
	dsfs_human(dsfs_snap_num(s, "evicted_unused_bytes"), a, sizeof(a));
	printf(ROW "%.0f (%s fetched ahead and never read)\n", "evictions",
	       dsfs_snap_num(s, "evictions"), a);
	printf(ROW "%s on NUMA node(s) %s\n", "pages",
	       dsfs_snap_str(s, "cache.page_kind", k, sizeof(k)),
	       dsfs_snap_nodes(s, nd, sizeof(nd)));
}

void dsfs_render_table(const struct dsfs_snap *s, const char *mnt)
{
	double rb = dsfs_snap_num(s, "read_bytes");
	double back = dsfs_snap_num(s, "backing_read_bytes");
	double up = dsfs_snap_num(s, "uptime_seconds");
	char a[4096], b[64], m[4 * PATH_MAX], src[4 * PATH_MAX];

	printf("%s  (source %s)\n", shown(mnt, m, sizeof(m)),
	       shown(dsfs_snap_str(s, "source", a, sizeof(a)), src,
		     sizeof(src)));
	if (dsfs_snap_get(s, "uptime_seconds")) {
		duration(up, b, sizeof(b));
		printf(ROW "%s\n", "mounted for", b);
	}
	printf(ROW "%.0f\n", "reads", dsfs_snap_num(s, "reads"));
	row_bytes("read", rb);
	printf(ROW "%.1f%%\n", "hit ratio",
	       rb > 0 ? 100.0 * dsfs_snap_num(s, "hit_bytes") / rb : 0.0);
	printf(ROW "%.0f (%.3f s)\n", "stalls", dsfs_snap_num(s, "stalls"),
	       dsfs_snap_num(s, "stall_seconds"));
	dsfs_human(back, a, sizeof(a));
	if (up > 0)
		printf(ROW "%s (%.1f MB/s on average)\n", "from backing", a,
		       back / up / 1e6);
	else
		printf(ROW "%s\n", "from backing", a);
	row_bytes("prefetched", dsfs_snap_num(s, "prefetch_bytes"));
	row_bytes("read around cache", dsfs_snap_num(s, "bypass_bytes"));
	if (dsfs_snap_get(s, "pushes")) {
		dsfs_human(dsfs_snap_num(s, "push_bytes"), a, sizeof(a));
		printf(ROW "%s in %.0f chunks (%.0f not pushed)\n",
		       "pushed to page cache", a, dsfs_snap_num(s, "pushes"),
		       dsfs_snap_num(s, "push_skipped"));
	}
	if (dsfs_snap_get(s, "page_cache"))
		printf(ROW "%s; opens: %.0f bypass it, %.0f use it\n",
		       "kernel page cache",
		       dsfs_snap_str(s, "page_cache", a, sizeof(a)),
		       dsfs_snap_num(s, "direct_opens"),
		       dsfs_snap_num(s, "cached_opens"));
	print_cache(s);
	printf(ROW "%s, O_DIRECT %s, %.0f reads queued or in flight "
		   "(io_depth %.0f)\n",
	       "I/O engine", dsfs_snap_str(s, "io.engine", a, sizeof(a)),
	       dsfs_snap_str(s, "io.direct", b, sizeof(b)),
	       dsfs_snap_num(s, "io.inflight"), dsfs_snap_num(s, "io.depth"));
	printf(ROW "%.0f reads failed, %.0f backing reads failed\n", "errors",
	       dsfs_snap_num(s, "errors"), dsfs_snap_num(s, "io.errors"));
	dsfs_render_plan(s);
}

/* The widest of the n strings, at least min. */
static int widest(char *const *v, unsigned n, int min)
{
	char buf[4 * PATH_MAX];
	unsigned i;
	int w = min;

	for (i = 0; i < n; i++)
		if ((int)strlen(shown(v[i], buf, sizeof(buf))) > w)
			w = (int)strlen(buf);
	return w;
}

/* The PLAN column: "torch-random epoch 3 (epoch-detected)", or "none". */
static void plan_cell(const struct dsfs_snap *s, char *buf, size_t size)
{
	char sampler[64], det[64];

	dsfs_snap_str(s, "plan.sampler", sampler, sizeof(sampler));
	dsfs_snap_str(s, "plan.detected", det, sizeof(det));
	if (!dsfs_snap_get(s, "plan.epoch"))
		snprintf(buf, size, "%s", sampler);
	else if (!epoch_known(s))
		snprintf(buf, size, "%s (%s)", sampler, det);
	else
		snprintf(buf, size, "%s epoch %.0f %.0f/%.0f (%s)", sampler,
			 dsfs_snap_num(s, "plan.epoch"),
			 dsfs_snap_num(s, "plan.position"),
			 dsfs_snap_num(s, "plan.length"), det);
}

static void summary_line(const struct dsfs_snap *s, const char *mnt, int w)
{
	double rb = dsfs_snap_num(s, "read_bytes");
	char read[32], used[32], cap[32], cache[80], plan[256], hit[16];

	dsfs_human(rb, read, sizeof(read));
	/* No bytes read: no ratio, as --watch shows it. */
	if (rb > 0)
		snprintf(hit, sizeof(hit), "%.1f%%",
			 100.0 * dsfs_snap_num(s, "hit_bytes") / rb);
	else
		snprintf(hit, sizeof(hit), "-");
	dsfs_human(dsfs_snap_num(s, "cache.used_bytes"), used, sizeof(used));
	dsfs_human(dsfs_snap_num(s, "cache.capacity_bytes"), cap, sizeof(cap));
	snprintf(cache, sizeof(cache), "%s/%s", used, cap);
	plan_cell(s, plan, sizeof(plan));
	printf("%-*s  %10s  %7s  %8.0f  %8.0f  %-21s  %s\n", w, mnt, read, hit,
	       dsfs_snap_num(s, "stalls"), dsfs_snap_num(s, "errors"), cache,
	       plan);
}

void dsfs_render_summary(char *const *mnts, const struct dsfs_snap *snaps,
			 const int *errs, unsigned n)
{
	int w = widest(mnts, n, (int)strlen("MOUNTPOINT"));
	char why[512], m[4 * PATH_MAX];
	unsigned i;

	printf("%-*s  %10s  %7s  %8s  %8s  %-21s  %s\n", w, "MOUNTPOINT",
	       "READ", "HIT", "STALLS", "ERRORS", "CACHE", "PLAN");
	for (i = 0; i < n; i++) {
		shown(mnts[i], m, sizeof(m));
		if (errs[i])
			printf("%-*s  error: %s\n", w, m,
			       dsfs_snap_why(mnts[i], errs[i], why,
					     sizeof(why)));
		else
			summary_line(&snaps[i], m, w);
	}
}
