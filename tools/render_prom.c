// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dsfs-stats --prometheus: the snapshots of one or more mounts in the
 * Prometheus text exposition format (version 0.0.4), for node-exporter's
 * textfile collector or any scraper.  Conventions: every metric is named
 * dsfs_*, in base units (bytes, seconds), counters end in _total, every
 * sample carries a mountpoint label, and each family's samples (all
 * mounts) follow its one # HELP and # TYPE line.  Snapshot keys not in the
 * table below are not exported; the table only grows.  Single-threaded.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "dsfs-stats.h"

enum kind { COUNTER, GAUGE };

struct metric {
	const char *key; /* in the snapshot */
	const char *name;
	enum kind kind;
	const char *help;
};

static const struct metric metrics[] = {
	{ "uptime_seconds", "dsfs_uptime_seconds", GAUGE,
	  "Seconds since the filesystem was mounted." },
	{ "reads", "dsfs_reads_total", COUNTER,
	  "FUSE read requests that reached the daemon." },
	{ "read_bytes", "dsfs_read_bytes_total", COUNTER,
	  "Bytes returned by those read requests." },
	{ "hit_bytes", "dsfs_hit_bytes_total", COUNTER,
	  "Bytes served without waiting for the backing store." },
	{ "miss_bytes", "dsfs_miss_bytes_total", COUNTER,
	  "Bytes served after waiting for the backing store." },
	{ "stalls", "dsfs_stalls_total", COUNTER,
	  "Read requests that waited for the backing store." },
	{ "stall_seconds", "dsfs_stall_seconds_total", COUNTER,
	  "Time read requests spent waiting for the backing store." },
	{ "bypass_bytes", "dsfs_bypass_bytes_total", COUNTER,
	  "Bytes read around the cache because they were not admitted." },
	{ "errors", "dsfs_errors_total", COUNTER,
	  "Read requests answered with an error." },
	{ "pushes", "dsfs_pushes_total", COUNTER,
	  "Fetched chunks copied into the kernel's page cache (push)." },
	{ "push_bytes", "dsfs_push_bytes_total", COUNTER,
	  "Bytes of those chunks." },
	{ "push_skipped", "dsfs_push_skipped_total", COUNTER,
	  "Fetched chunks not pushed (read first, no kernel inode, evicted, "
	  "changed)." },
	{ "direct_opens", "dsfs_direct_opens_total", COUNTER,
	  "Opens answered with direct I/O, bypassing the kernel's page cache." },
	{ "cached_opens", "dsfs_cached_opens_total", COUNTER,
	  "Opens answered with the page cache where direct_io=auto chose." },
	{ "warmed", "dsfs_warmed_total", COUNTER,
	  "The plan's files stat'ed ahead of a listing." },
	{ "warm_bytes", "dsfs_warm_bytes", GAUGE,
	  "Memory holding the warm-up's stats for a first listing." },
	{ "prefetch_bytes", "dsfs_prefetch_bytes_total", COUNTER,
	  "Bytes fetched ahead of any reader." },
	{ "backing_read_bytes", "dsfs_backing_read_bytes_total", COUNTER,
	  "Bytes read from the backing directory." },
	{ "fd_pool_misses", "dsfs_fd_pool_misses_total", COUNTER,
	  "Reads and fetches that found no pooled backing file descriptor "
	  "and opened the file." },
	{ "evictions", "dsfs_evictions_total", COUNTER,
	  "Cache entries dropped to make room." },
	{ "evicted_unused_bytes", "dsfs_evicted_unused_bytes_total", COUNTER,
	  "Bytes fetched ahead of any read and evicted before one." },
	{ "cache.capacity_bytes", "dsfs_cache_capacity_bytes", GAUGE,
	  "Memory for cached file data (cache_size)." },
	{ "cache.used_bytes", "dsfs_cache_used_bytes", GAUGE,
	  "Cache memory holding file data." },
	{ "cache.entries", "dsfs_cache_entries", GAUGE,
	  "Cache entries (chunks of up to 2 MiB) holding memory." },
	{ "cache.scattered", "dsfs_cache_scattered_total", COUNTER,
	  "Cache entries placed in several runs of pages (free memory "
	  "not contiguous)." },
	{ "cache.rejections", "dsfs_cache_rejections_total", COUNTER,
	  "Chunks the cache refused to admit." },
	{ "cache.invalidations", "dsfs_cache_invalidations_total", COUNTER,
	  "Cache entries dropped because their file changed." },
	{ "cache.verify_failures", "dsfs_cache_verify_failures_total", COUNTER,
	  "Cached chunks that failed their hash check (verify)." },
	{ "io.direct", "dsfs_io_direct", GAUGE,
	  "1 while backing reads use O_DIRECT, else 0." },
	{ "io.fixed_buffers", "dsfs_io_fixed_buffers", GAUGE,
	  "1 when io_uring reads into registered buffers, else 0." },
	{ "io.depth", "dsfs_io_depth", GAUGE,
	  "Backing reads in flight at most (io_depth)." },
	{ "io.inflight", "dsfs_io_inflight", GAUGE,
	  "Backing reads queued or in flight." },
	{ "io.reads", "dsfs_io_reads_total", COUNTER,
	  "Backing reads completed, failed ones included." },
	{ "io.errors", "dsfs_io_errors_total", COUNTER,
	  "Backing reads that failed." },
	{ "plan.epoch", "dsfs_plan_epoch", GAUGE,
	  "Epoch of the slowest local rank." },
	{ "plan.position", "dsfs_plan_position", GAUGE,
	  "First position of that rank's epoch order not yet opened." },
	{ "plan.length", "dsfs_plan_length", GAUGE,
	  "Samples in one rank's epoch." },
	{ "plan.lead_items", "dsfs_plan_lead_items", GAUGE,
	  "Samples fetched ahead of the slowest rank." },
	{ "plan.lead_bytes", "dsfs_plan_lead_bytes", GAUGE,
	  "Bytes fetched ahead of the slowest rank." },
	{ "plan.mispredictions", "dsfs_plan_mispredictions_total", COUNTER,
	  "Opens the plan could not place (restarts from 0 when the plan changes)." },
	{ "plan.accesses", "dsfs_plan_accesses_total", COUNTER,
	  "Opens reported to the plan (restarts from 0 when the plan changes)." },
	{ "plan.other_opens", "dsfs_plan_other_opens_total", COUNTER,
	  "Opens by other programs reading out of the plan's order, left out of it (restarts from 0 when the plan changes)." },
	{ "plan.index_pass_samples", "dsfs_plan_index_pass_samples_total", COUNTER,
	  "Samples read ahead of passes in index order that the plan does not predict, and files of passes in sorted order over a tree outside the data set (restarts from 0 when the plan changes)." },
	{ "plan.sample_opens", "dsfs_plan_sample_opens_total", COUNTER,
	  "Samples the plan's fetches opened (a sample found whole in the cache needs none; restarts from 0 when the plan changes)." },
	{ "plan.last_open_seconds", "dsfs_plan_last_open_seconds", GAUGE,
	  "Seconds since an open of a sample last reached the plan (a loader the page cache serves opens none: its place stands)." },
	{ "plan.prefetch_bytes", "dsfs_plan_prefetch_bytes_total", COUNTER,
	  "Bytes the plan in force fetched ahead (restarts from 0 when the plan changes)." },
};

/* Per local rank, from plan.ranks (field: offset in struct dsfs_snap_rank). */
static const struct {
	const char *name;
	enum kind kind;
	size_t field;
	const char *help;
} rank_metrics[] = {
	{ "dsfs_plan_rank_epoch", GAUGE, offsetof(struct dsfs_snap_rank, epoch),
	  "Epoch of the local rank." },
	{ "dsfs_plan_rank_position", GAUGE,
	  offsetof(struct dsfs_snap_rank, position),
	  "First position of the rank's epoch order not yet opened." },
	{ "dsfs_plan_rank_lead_items", GAUGE,
	  offsetof(struct dsfs_snap_rank, lead_items),
	  "Samples fetched ahead of the rank." },
	{ "dsfs_plan_rank_lead_bytes", GAUGE,
	  offsetof(struct dsfs_snap_rank, lead_bytes),
	  "Bytes fetched ahead of the rank." },
	{ "dsfs_plan_rank_mispredictions_total", COUNTER,
	  offsetof(struct dsfs_snap_rank, mispredictions),
	  "Opens of the rank the plan could not place (restarts from 0 when the plan changes)." },
};

static const char *const states[] = { "none", "configured", "epoch-detected",
				      "detecting", "lost" };

/* ,name="value" with the exposition format's escapes (\\, \", \n). */
static void label(const char *name, const char *value)
{
	const char *v;

	printf("%s%s=\"", strcmp(name, "mountpoint") ? "," : "", name);
	for (v = value; *v; v++) {
		if (*v == '\\' || *v == '"')
			printf("\\%c", *v);
		else if (*v == '\n')
			printf("\\n");
		else
			putchar(*v);
	}
	putchar('"');
}

static void family(const char *name, enum kind kind, const char *help)
{
	printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name,
	       kind == COUNTER ? "counter" : "gauge");
}

/* The value of a JSON token as a sample value: numbers as they are,
 * true/false as 1/0; NULL for anything else. */
static const char *value(const char *tok)
{
	char *end;

	if (!tok)
		return NULL;
	if (!strcmp(tok, "true"))
		return "1";
	if (!strcmp(tok, "false"))
		return "0";
	strtod(tok, &end);
	return end != tok && !*end ? tok : NULL;
}

static void scalars(char *const *mnts, const struct dsfs_snap *snaps,
		    unsigned n)
{
	const struct metric *m;
	const char *v;
	unsigned i;

	for (m = metrics; m < metrics + sizeof(metrics) / sizeof(*m); m++) {
		for (i = 0; i < n; i++)
			if (snaps[i].text &&
			    value(dsfs_snap_get(&snaps[i], m->key)))
				break;
		if (i == n)
			continue; /* no mount has it: no family */
		family(m->name, m->kind, m->help);
		for (i = 0; i < n; i++) {
			v = snaps[i].text ?
				    value(dsfs_snap_get(&snaps[i], m->key)) :
				    NULL;
			if (!v)
				continue;
			printf("%s{", m->name);
			label("mountpoint", mnts[i]);
			printf("} %s\n", v);
		}
	}
}

/* Labels of the info metrics: label name, snapshot key. */
struct info_label {
	const char *name, *key;
};

static const struct info_label mount_info[] = {
	{ "source", "source" },
	{ "version", "version" },
	{ "page_kind", "cache.page_kind" },
	{ "numa_nodes", "cache.numa_nodes" },
	{ "io_engine", "io.engine" },
	{ "page_cache", "page_cache" },
	{ NULL, NULL },
};
static const struct info_label plan_info[] = {
	{ "sampler", "plan.sampler" },
	{ "seed", "plan.seed" },
	{ NULL, NULL },
};

/* An info metric: value 1, the mount's words as labels ("" when absent,
 * a list without its brackets). */
static void info(const char *name, const char *help, const struct info_label *l,
		 char *const *mnts, const struct dsfs_snap *snaps, unsigned n)
{
	const struct info_label *x;
	char v[4096];
	unsigned i;

	family(name, GAUGE, help);
	for (i = 0; i < n; i++) {
		if (!snaps[i].text)
			continue;
		printf("%s{", name);
		label("mountpoint", mnts[i]);
		for (x = l; x->name; x++) {
			if (!dsfs_snap_get(&snaps[i], x->key))
				v[0] = '\0';
			else if (!strcmp(x->key, "cache.numa_nodes"))
				dsfs_snap_nodes(&snaps[i], v, sizeof(v));
			else
				dsfs_snap_str(&snaps[i], x->key, v, sizeof(v));
			label(x->name, v);
		}
		printf("} 1\n");
	}
}

/* One sample per state, 1 for the one in force (a state set). */
static void state_set(const char *name, const char *mnt, const char *rank,
		      const char *state, unsigned first)
{
	unsigned k;

	for (k = first; k < sizeof(states) / sizeof(*states); k++) {
		printf("%s{", name);
		label("mountpoint", mnt);
		if (rank)
			label("rank", rank);
		label("state", states[k]);
		printf("} %d\n", !strcmp(state, states[k]));
	}
}

static void plan_states(char *const *mnts, const struct dsfs_snap *snaps,
			unsigned n)
{
	char det[64];
	unsigned i;

	family("dsfs_plan_state", GAUGE,
	       "1 for the state the prediction is in (none, configured, epoch-detected, detecting, lost), 0 for the others.");
	for (i = 0; i < n; i++)
		if (snaps[i].text)
			state_set("dsfs_plan_state", mnts[i], NULL,
				  dsfs_snap_str(&snaps[i], "plan.detected", det,
						sizeof(det)),
				  0);
}

static void ranks(char *const *mnts, const struct dsfs_snap *snaps, unsigned n)
{
	struct dsfs_snap_rank *r = calloc(n * DSFS_SNAP_RANKS, sizeof(*r));
	unsigned *nr = calloc(n, sizeof(*nr)), i, j, k, total = 0;
	char rank[24];

	for (i = 0; r && nr && i < n; i++)
		if (snaps[i].text)
			total += nr[i] = dsfs_snap_ranks(
				&snaps[i], r + i * DSFS_SNAP_RANKS,
				DSFS_SNAP_RANKS);
	for (k = 0; total && k < sizeof(rank_metrics) / sizeof(*rank_metrics);
	     k++) {
		family(rank_metrics[k].name, rank_metrics[k].kind,
		       rank_metrics[k].help);
		for (i = 0; i < n; i++)
			for (j = 0; j < nr[i]; j++) {
				const struct dsfs_snap_rank *x =
					&r[i * DSFS_SNAP_RANKS + j];

				snprintf(rank, sizeof(rank), "%llu", x->rank);
				printf("%s{", rank_metrics[k].name);
				label("mountpoint", mnts[i]);
				label("rank", rank);
				printf("} %llu\n",
				       *(const unsigned long long
						 *)((const char *)x +
						    rank_metrics[k].field));
			}
	}
	if (total)
		family("dsfs_plan_rank_state", GAUGE,
		       "1 for the state the rank's prediction is in (configured, epoch-detected, detecting, lost), 0 for the others.");
	for (i = 0; total && i < n; i++)
		for (j = 0; j < nr[i]; j++) {
			snprintf(rank, sizeof(rank), "%llu",
				 r[i * DSFS_SNAP_RANKS + j].rank);
			state_set("dsfs_plan_rank_state", mnts[i], rank,
				  r[i * DSFS_SNAP_RANKS + j].detected, 1);
		}
	free(r);
	free(nr);
}

void dsfs_render_prom(char *const *mnts, const struct dsfs_snap *snaps,
		      unsigned n)
{
	unsigned i, readable = 0;

	for (i = 0; i < n; i++)
		readable += snaps[i].text != NULL;
	if (!n)
		return; /* an empty exposition is a valid one */
	family("dsfs_up", GAUGE,
	       "1 when the mount's statistics could be read, 0 when not (daemon gone, not allowed).");
	for (i = 0; i < n; i++) {
		printf("dsfs_up{");
		label("mountpoint", mnts[i]);
		printf("} %d\n", snaps[i].text != NULL);
	}
	if (!readable)
		return;
	scalars(mnts, snaps, n);
	info("dsfs_info",
	     "Constant 1, with the mount's source, version, page kind, NUMA nodes and I/O engine as labels.",
	     mount_info, mnts, snaps, n);
	info("dsfs_plan_info",
	     "Constant 1, with the plan's sampler and seed as labels (seed empty when none).",
	     plan_info, mnts, snaps, n);
	plan_states(mnts, snaps, n);
	ranks(mnts, snaps, n);
}
