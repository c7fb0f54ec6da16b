// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dsfs-stats: show the counters of dsfs mounts.  The daemon publishes one
 * flat snapshot ("key value" lines, dotted keys, JSON-token values) as the
 * extended attribute user.dsfs.stats of the mount root (snap.c reads it);
 * this file picks the form: the one-line-per-mount listing (no argument),
 * the table, JSON, Prometheus text, --watch rates, or --set COMMAND, which
 * changes the mount's plan through its control channel (getxattr of
 * user.dsfs.plan=COMMAND, see dsfs(8)).  Exit status: 0, 1 when a mount
 * could not be read (see dsfs-stats(1) for the listing's rule), 2 on bad
 * usage.  Single-threaded.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "dsfs-stats.h"

enum form { TABLE, JSON, PROMETHEUS, WATCH };

static void usage(FILE *out)
{
	fprintf(out,
		"usage: dsfs-stats                      every dsfs mount, one line each\n"
		"       dsfs-stats [--json] MOUNTPOINT  one mount's statistics\n"
		"       dsfs-stats --watch SECONDS MOUNTPOINT\n"
		"                                       rates over every SECONDS until Ctrl-C\n"
		"       dsfs-stats --prometheus [MOUNTPOINT...]\n"
		"                                       Prometheus text (every dsfs mount\n"
		"                                       without MOUNTPOINT)\n"
		"       dsfs-stats --set COMMAND [--json] MOUNTPOINT\n"
		"                                       change the plan, e.g. seed=7,epoch=3\n"
		"Options: -j, --json; -p, --prometheus; -w, --watch SECONDS; -s, --set COMMAND;\n"
		"-h, --help; -V, --version.  See dsfs-stats(1).\n");
}

static void say_err(const char *mnt, int err)
{
	char why[512];

	fprintf(stderr, "dsfs-stats: %s: %s\n", mnt,
		dsfs_snap_why(mnt, err, why, sizeof(why)));
}

/* Why a command was refused: the daemon's message for EINVAL. */
static void set_failed(const char *mnt, const char *cmd, int err)
{
	char msg[1024], why[512];
	ssize_t n = -1;

	if (err == -EINVAL)
		n = getxattr(mnt, DSFS_PLAN_XATTR ".error", msg,
			     sizeof(msg) - 1);
	if (n > 0) {
		msg[n] = '\0';
	} else {
		snprintf(
			msg, sizeof(msg), "%s",
			err == -EPERM ?
				"only root and the user who mounted may change the plan" :
				dsfs_snap_why(mnt, err, why, sizeof(why)));
	}
	fprintf(stderr, "dsfs-stats: %s: --set %s: %s\n", mnt, cmd, msg);
}

/* dsfs-stats --set COMMAND: 0, or 1 with a message. */
static int set_plan(const char *mnt, const char *cmd, bool json)
{
	struct dsfs_snap s = { 0 };
	char name[XATTR_NAME_MAX + 1];
	int err;

	if ((size_t)snprintf(name, sizeof(name), "%s=%s", DSFS_PLAN_XATTR,
			     cmd) >= sizeof(name)) {
		fprintf(stderr,
			"dsfs-stats: --set %s: too long; a command has at most %zu bytes\n",
			cmd, sizeof(name) - sizeof(DSFS_PLAN_XATTR) - 1);
		return 1;
	}
	err = dsfs_snap_fetch(mnt, name, &s);
	if (err) {
		set_failed(mnt, cmd, err);
	} else if (json) {
		dsfs_render_json(&s);
	} else {
		printf("%s  (plan after %s)\n", mnt, cmd);
		dsfs_render_plan(&s);
	}
	dsfs_snap_free(&s);
	return err ? 1 : 0;
}

/* One mount as a table or JSON: 0, or 1 with a message. */
static int show_one(const char *mnt, enum form form)
{
	struct dsfs_snap s = { 0 };
	int err = dsfs_snap_fetch(mnt, DSFS_STATS_XATTR, &s);

	if (err)
		say_err(mnt, err);
	else if (form == JSON)
		dsfs_render_json(&s);
	else
		dsfs_render_table(&s, mnt);
	dsfs_snap_free(&s);
	return err ? 1 : 0;
}

/* Read every mount of m[0..n): snaps[i].text NULL and errs[i] on failure.
 * Returns how many were read. */
static unsigned fetch_all(char *const *m, unsigned n, struct dsfs_snap *snaps,
			  int *errs)
{
	unsigned i, ok = 0;

	for (i = 0; i < n; i++) {
		errs[i] = dsfs_snap_fetch(m[i], DSFS_STATS_XATTR, &snaps[i]);
		if (errs[i])
			dsfs_snap_free(&snaps[i]);
		else
			ok++;
	}
	return ok;
}

/*
 * The listing (form TABLE) or the Prometheus text (PROMETHEUS) of the
 * mounts m[0..n); all: they are every dsfs mount (no argument given).
 * Listing: 0 when at least one mount was read.  Prometheus: every mount
 * not read is dsfs_up 0; 1 when a named mount was not read, 0 for all.
 */
static int show_many(char *const *m, unsigned n, enum form form, bool all)
{
	struct dsfs_snap *snaps = calloc(n ? n : 1, sizeof(*snaps));
	int *errs = calloc(n ? n : 1, sizeof(*errs));
	unsigned i, ok;

	if (!snaps || !errs) {
		fprintf(stderr, "dsfs-stats: out of memory\n");
		free(snaps);
		free(errs);
		return 1;
	}
	ok = fetch_all(m, n, snaps, errs);
	if (form == PROMETHEUS) {
		for (i = 0; i < n; i++)
			if (errs[i])
				say_err(m[i], errs[i]);
		dsfs_render_prom(m, snaps, n);
	} else if (n) {
		dsfs_render_summary(m, snaps, errs, n);
	} else {
		fprintf(stderr,
			"dsfs-stats: no dsfs mounts (none of type fuse.dsfs in /proc/mounts)\n");
	}
	for (i = 0; i < n; i++)
		dsfs_snap_free(&snaps[i]);
	free(snaps);
	free(errs);
	if (form == PROMETHEUS)
		return all || ok == n ? 0 : 1;
	return ok ? 0 : 1;
}

/* Every dsfs mount, or the named ones resolved to absolute paths. */
static int show_mounts(int argc, char **argv, enum form form)
{
	char **m = NULL;
	unsigned n = 0;
	int i, err, rc;

	if (argc) {
		m = calloc((size_t)argc, sizeof(*m));
		for (i = 0; m && i < argc; i++) {
			m[i] = realpath(argv[i], NULL);
			if (!m[i])
				m[i] = strdup(
					argv[i]); /* a dead mount: as given */
			if (!m[i])
				break;
			n++;
		}
		err = n == (unsigned)argc ? 0 : -ENOMEM;
	} else {
		err = dsfs_mounts_list(&m, &n);
	}
	if (err) {
		fprintf(stderr, "dsfs-stats: listing the dsfs mounts: %s\n",
			strerror(-err));
		dsfs_mounts_free(m, n);
		return 1;
	}
	rc = show_many(m, n, form, !argc);
	dsfs_mounts_free(m, n);
	return rc;
}

/* --watch SECONDS: a positive number of seconds, at most a day. */
static bool parse_interval(const char *arg, double *out)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || *end || !isfinite(v) || v < 0.1 || v > 86400) {
		fprintf(stderr,
			"dsfs-stats: --watch %s: give the interval in seconds, from 0.1 to 86400\n",
			arg);
		return false;
	}
	*out = v;
	return true;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "prometheus", no_argument, NULL, 'p' },
		{ "watch", required_argument, NULL, 'w' },
		{ "set", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	enum form form = TABLE;
	const char *cmd = NULL;
	double interval = 0;
	int c, forms = 0, nargs;

	while ((c = getopt_long(argc, argv, "jpw:s:hV", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'j':
			form = JSON;
			forms++;
			break;
		case 'p':
			form = PROMETHEUS;
			forms++;
			break;
		case 'w':
			if (!parse_interval(optarg, &interval))
				return 2;
			form = WATCH;
			forms++;
			break;
		case 's':
			cmd = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("dsfs-stats %s\n", PACKAGE_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	nargs = argc - optind;
	if (forms > 1 || (cmd && form != TABLE && form != JSON)) {
		fprintf(stderr,
			"dsfs-stats: --json, --prometheus, --watch and --set go one at a time (--set takes --json)\n");
		return 2;
	}
	if (form == PROMETHEUS || (form == TABLE && !cmd && nargs == 0))
		return show_mounts(nargs, argv + optind, form);
	if (nargs != 1) {
		usage(stderr);
		return 2;
	}
	if (cmd)
		return set_plan(argv[optind], cmd, form == JSON);
	if (form == WATCH)
		return dsfs_watch(argv[optind], interval);
	return show_one(argv[optind], form);
}
