// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dsfs-stats: show a dsfs mount's counters.  The daemon publishes one flat
 * snapshot ("key value" lines, dotted keys, JSON-token values) as the
 * extended attribute user.dsfs.stats of the mount root; this tool renders it
 * as a table (default) or as a JSON document (--json).  --set COMMAND
 * changes the mount's plan through its control channel (getxattr of
 * user.dsfs.plan=COMMAND, see dsfs(8)), and shows the plan's lines of the
 * reply the same way.  Single-threaded.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#define STATS_XATTR "user.dsfs.stats"
#define PLAN_XATTR "user.dsfs.plan"	/* "=COMMAND"; ".error" */
#define MAX_FIELDS 256

struct field {
	char *key;	/* dotted */
	char *val;	/* JSON token */
};

struct snap {
	char *text;
	struct field f[MAX_FIELDS];
	unsigned n;
};

/* One snapshot-shaped attribute of mnt, in one call: asking for the size
 * first would send a plan command twice. */
static int fetch(const char *mnt, const char *name, struct snap *s)
{
	ssize_t len;
	char *line, *save = NULL;

	s->text = malloc(XATTR_SIZE_MAX + 1);
	if (!s->text)
		return -ENOMEM;
	len = getxattr(mnt, name, s->text, XATTR_SIZE_MAX);
	if (len < 0)
		return -errno;
	s->text[len] = '\0';
	for (line = strtok_r(s->text, "\n", &save); line && s->n < MAX_FIELDS;
	     line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');

		if (!sp)
			continue;
		*sp = '\0';
		s->f[s->n++] = (struct field){ line, sp + 1 };
	}
	return 0;
}

static const char *why(int err)
{
	switch (-err) {
	case ENODATA:
	case ENOTSUP:
		return "not a dsfs mount (no stats attribute)";
	case ENOTCONN:
		return "the dsfs daemon is gone (transport endpoint not connected); unmount it with umount";
	case EACCES:
	case EPERM:
		return "stats are private to root and the user who mounted (mount with -o stats=public to share them)";
	default:
		return strerror(-err);
	}
}

/* Length of the dotted prefix of key that names its parent object. */
static size_t parent_len(const char *key)
{
	const char *dot = strrchr(key, '.');

	return dot ? (size_t)(dot - key) : 0;
}

/*
 * JSON: fields sharing a dotted prefix form one object.  Fields of one
 * object are contiguous in the snapshot (the daemon emits them so); one level
 * of nesting is all dsfs uses.
 */
static void print_json(const struct snap *s)
{
	const char *open = NULL;
	size_t open_len = 0;
	bool first = true, first_in = true;
	unsigned i;

	printf("{");
	for (i = 0; i < s->n; i++) {
		const char *k = s->f[i].key;
		size_t pl = parent_len(k);

		if (open && (pl != open_len || strncmp(k, open, pl))) {
			printf("\n  }");
			open = NULL;
		}
		if (pl && !open) {
			printf("%s\n  \"%.*s\": {", first ? "" : ",", (int)pl, k);
			open = k;
			open_len = pl;
			first = false;
			first_in = true;
		}
		if (open) {
			printf("%s\n    \"%s\": %s", first_in ? "" : ",", k + pl + 1,
			       s->f[i].val);
			first_in = false;
		} else {
			printf("%s\n  \"%s\": %s", first ? "" : ",", k, s->f[i].val);
			first = false;
		}
	}
	printf("%s\n}\n", open ? "\n  }" : "");
}

static const char *get(const struct snap *s, const char *key)
{
	unsigned i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->f[i].key, key))
			return s->f[i].val;
	return NULL;
}

static double num(const struct snap *s, const char *key)
{
	const char *v = get(s, key);

	return v ? strtod(v, NULL) : 0;
}

/* A string field without its JSON quotes (dsfs puts no escapes in these). */
static const char *str(const struct snap *s, const char *key, char *buf,
		       size_t size)
{
	const char *v = get(s, key);
	size_t n;

	if (!v)
		return "?";
	n = strlen(v);
	if (n >= 2 && v[0] == '"' && v[n - 1] == '"')
		snprintf(buf, size, "%.*s", (int)(n - 2), v + 1);
	else
		snprintf(buf, size, "%s", v);
	return buf;
}

static void human(double bytes, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned u = 0;

	while (bytes >= 1024 && u < 4) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

static void row_bytes(const char *label, double v)
{
	char h[32];

	human(v, h, sizeof(h));
	printf("  %-22s %s\n", label, h);
}

/* One row per local rank when there are several (plan.ranks, an array of
 * objects in the daemon's fixed field order). */
static void print_ranks(const struct snap *s)
{
	unsigned long long epoch, pos, items, bytes, mis;
	const char *v = get(s, "plan.ranks");
	char h[32], label[32];
	unsigned rank, n = 0;

	for (; v && (v = strchr(v, '{')); v++) {
		if (sscanf(v, "{\"rank\": %u, \"epoch\": %llu, \"position\": %llu, \"lead_items\": %llu, \"lead_bytes\": %llu, \"mispredictions\": %llu",
			   &rank, &epoch, &pos, &items, &bytes, &mis) != 6)
			break;
		if (!n++ && !strchr(v + 1, '{'))
			break; /* one rank: the rows above say it all */
		human((double)bytes, h, sizeof(h));
		snprintf(label, sizeof(label), "rank %u", rank);
		printf("  %-22s epoch %llu, %llu read; lead %llu files, %s; %llu mispredicted\n",
		       label, epoch, pos, items, h, mis);
	}
}

static void print_plan(const struct snap *s)
{
	char a[256], b[1300], c[64], o[16384];

	printf("  %-22s %s", "plan", str(s, "plan.sampler", a, sizeof(a)));
	if (!get(s, "plan.epoch")) {
		printf("\n");
		return;
	}
	if (get(s, "plan.seed"))
		printf(", seed %s", str(s, "plan.seed", b, sizeof(b)));
	printf(": %s\n", str(s, "plan.detected", c, sizeof(c)));
	if (get(s, "plan.options"))
		printf("  %-22s %s\n", "plan options",
		       str(s, "plan.options", o, sizeof(o)));
	printf("  %-22s epoch %.0f, %.0f of %.0f\n", "position",
	       num(s, "plan.epoch"), num(s, "plan.position"),
	       num(s, "plan.length"));
	human(num(s, "plan.lead_bytes"), a, sizeof(a));
	printf("  %-22s %.0f files, %s\n", "prefetch lead",
	       num(s, "plan.lead_items"), a);
	printf("  %-22s %.0f of %.0f opens\n", "mispredictions",
	       num(s, "plan.mispredictions"), num(s, "plan.accesses"));
	print_ranks(s);
}

static void print_table(const struct snap *s, const char *mnt)
{
	double rb = num(s, "read_bytes"), hb = num(s, "hit_bytes");
	char a[4096], b[256];

	printf("%s  (source %s)\n", mnt, str(s, "source", a, sizeof(a)));
	printf("  %-22s %.0f\n", "reads", num(s, "reads"));
	row_bytes("read", rb);
	printf("  %-22s %.1f%%\n", "hit ratio", rb > 0 ? 100.0 * hb / rb : 0.0);
	printf("  %-22s %.0f (%.3f s)\n", "stalls", num(s, "stalls"),
	       num(s, "stall_seconds"));
	row_bytes("from backing", num(s, "backing_read_bytes"));
	row_bytes("prefetched", num(s, "prefetch_bytes"));
	row_bytes("read around cache", num(s, "bypass_bytes"));
	row_bytes("cache used", num(s, "cache.used_bytes"));
	row_bytes("cache capacity", num(s, "cache.capacity_bytes"));
	printf("  %-22s %.0f\n", "cache entries", num(s, "cache.entries"));
	printf("  %-22s %.0f\n", "evictions", num(s, "evictions"));
	printf("  %-22s %s on NUMA node(s) %s\n", "pages",
	       str(s, "cache.page_kind", a, sizeof(a)),
	       str(s, "cache.numa_nodes", b, sizeof(b)));
	printf("  %-22s %s, O_DIRECT %s\n", "I/O engine",
	       str(s, "io.engine", a, sizeof(a)), str(s, "io.direct", b, sizeof(b)));
	printf("  %-22s %.0f\n", "errors", num(s, "errors"));
	print_plan(s);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: dsfs-stats [--json] MOUNTPOINT\n"
		     "       dsfs-stats --set COMMAND [--json] MOUNTPOINT\n"
		     "COMMAND changes the plan, e.g. seed=7,epoch=3 (see dsfs(8))\n");
}

/* Why a command was refused: the daemon's message for EINVAL. */
static void set_failed(const char *mnt, const char *cmd, int err)
{
	char msg[1024];
	ssize_t n = -1;

	if (err == -EINVAL)
		n = getxattr(mnt, PLAN_XATTR ".error", msg, sizeof(msg) - 1);
	if (n > 0) {
		msg[n] = '\0';
	} else {
		snprintf(msg, sizeof(msg), "%s",
			 err == -EPERM ? "only root and the user who mounted may change the plan" :
			 err == -ENODATA || err == -ENOTSUP ? "not a dsfs mount, or its dsfs has no plan control channel" :
			 why(err));
	}
	fprintf(stderr, "dsfs-stats: %s: --set %s: %s\n", mnt, cmd, msg);
}

/* dsfs-stats --set COMMAND: 0, or 1 with a message. */
static int set_plan(const char *mnt, const char *cmd, bool json)
{
	struct snap s = { 0 };
	char name[XATTR_NAME_MAX + 1];
	int err;

	if ((size_t)snprintf(name, sizeof(name), "%s=%s", PLAN_XATTR, cmd) >=
	    sizeof(name)) {
		fprintf(stderr, "dsfs-stats: --set %s: too long; a command has at most %zu bytes\n",
			cmd, sizeof(name) - sizeof(PLAN_XATTR) - 1);
		return 1;
	}
	err = fetch(mnt, name, &s);
	if (err) {
		set_failed(mnt, cmd, err);
	} else if (json) {
		print_json(&s);
	} else {
		printf("%s  (plan after %s)\n", mnt, cmd);
		print_plan(&s);
	}
	free(s.text);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "set", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct snap s = { 0 };
	const char *cmd = NULL;
	bool json = false;
	int c, err;

	while ((c = getopt_long(argc, argv, "js:h", longopts, NULL)) != -1) {
		if (c == 'j') {
			json = true;
		} else if (c == 's') {
			cmd = optarg;
		} else {
			usage(c == 'h' ? stdout : stderr);
			return c == 'h' ? 0 : 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	if (cmd)
		return set_plan(argv[optind], cmd, json);
	err = fetch(argv[optind], STATS_XATTR, &s);
	if (err) {
		fprintf(stderr, "dsfs-stats: %s: %s\n", argv[optind], why(err));
		free(s.text);
		return 1;
	}
	if (json)
		print_json(&s);
	else
		print_table(&s, argv[optind]);
	free(s.text);
	return 0;
}
