// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Command line: one fuse_opt table for dsfs's own options, the help text
 * beside it, and strict validation of every value.  Options dsfs does not
 * know are handed to libfuse, which accepts the generic mount options
 * (those mount.fuse3 adds: rw, dev, suid, ...; allow_other, ...) and refuses
 * anything else with a message naming it.  Runs once, in the main thread.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "dsfs.h"
#include "parse.h"

enum { KEY_FOREGROUND, KEY_DEBUG, KEY_HELP, KEY_VERSION, KEY_RW };

#define DSFS_OPT(t, field) { t, offsetof(struct dsfs_opts, field), 1 }

/* Keep in step with usage() below and man/dsfs.8 (tests/t-docs.sh checks). */
static const struct fuse_opt dsfs_opt_table[] = {
	DSFS_OPT("entry_timeout=%s", entry_timeout_s),
	DSFS_OPT("attr_timeout=%s", attr_timeout_s),
	DSFS_OPT("max_open=%s", max_open_s),
	DSFS_OPT("max_threads=%s", max_threads_s),
	FUSE_OPT_KEY("-f", KEY_FOREGROUND),
	FUSE_OPT_KEY("-d", KEY_DEBUG),
	FUSE_OPT_KEY("debug", KEY_DEBUG),
	FUSE_OPT_KEY("-h", KEY_HELP),
	FUSE_OPT_KEY("--help", KEY_HELP),
	FUSE_OPT_KEY("-V", KEY_VERSION),
	FUSE_OPT_KEY("--version", KEY_VERSION),
	/* The mount is always read-only; "rw" (added by mount(8) by default)
	 * is accepted and overridden. */
	FUSE_OPT_KEY("rw", KEY_RW),
	FUSE_OPT_KEY("ro", KEY_RW),
	FUSE_OPT_END
};

#define DEFAULT_TIMEOUT 86400.0
#define DEFAULT_MAX_THREADS 16

static void usage(const char *prog)
{
	printf("usage: %s SOURCE MOUNTPOINT [-o opt[,opt...]] [-f] [-d]\n"
	       "\n"
	       "Mirror the directory SOURCE read-only at MOUNTPOINT.\n"
	       "\n"
	       "dsfs options:\n"
	       "    -f                     stay in the foreground, log to stderr\n"
	       "    -d, -o debug           trace every request (implies -f)\n"
	       "    -h, --help             print this help and exit\n"
	       "    -V, --version          print the version and exit\n"
	       "    -o entry_timeout=SECS  kernel caches names for SECS (default 86400)\n"
	       "    -o attr_timeout=SECS   kernel caches attributes for SECS (default 86400)\n"
	       "    -o max_open=N          backing files kept open at most\n"
	       "                           (default RLIMIT_NOFILE/4, at most 512)\n"
	       "    -o max_threads=N       FUSE worker threads at most (default %d)\n"
	       "\n"
	       "Generic mount options (allow_other, ...):\n",
	       prog, DEFAULT_MAX_THREADS);
	fuse_lowlevel_help();
}

static int opt_proc(void *data, const char *arg, int key,
		    struct fuse_args *outargs)
{
	struct dsfs_opts *o = data;

	switch (key) {
	case FUSE_OPT_KEY_NONOPT:
		if (!o->source)
			return (o->source = strdup(arg)) ? 0 : -1;
		if (!o->mountpoint)
			return (o->mountpoint = strdup(arg)) ? 0 : -1;
		fprintf(stderr, "dsfs: unexpected argument '%s'; usage: dsfs SOURCE MOUNTPOINT [-o options]\n", arg);
		return -1;
	case KEY_FOREGROUND:
		o->foreground = true;
		return 0;
	case KEY_DEBUG:
		o->debug = o->foreground = true;
		return fuse_opt_add_arg(outargs, "-odebug");
	case KEY_HELP:
		usage(outargs->argv[0]);
		exit(0);
	case KEY_VERSION:
		printf("dsfs %s (libfuse %s)\n", PACKAGE_VERSION,
		       fuse_pkgversion());
		exit(0);
	case KEY_RW:
		return 0;
	}
	return 1; /* unknown: keep it for libfuse */
}

static int bad(const char *name, const char *val, int err, const char *want)
{
	fprintf(stderr, "dsfs: %s=%s: %s; %s\n", name, val,
		err == -ERANGE ? "out of range" : "malformed value", want);
	return -1;
}

static int check_seconds(const char *name, const char *val, double *out)
{
	int err;

	if (!val)
		return 0;
	err = dsfs_parse_seconds(val, 1e9, out);
	return err ? bad(name, val, err, "give seconds, e.g. 1, 0.5 or 86400") : 0;
}

static int check_count(const char *name, const char *val, uint64_t max,
		       unsigned *out)
{
	uint64_t v;
	int err;

	if (!val)
		return 0;
	err = dsfs_parse_u64(val, 1, max, &v);
	if (err) {
		char want[64];

		snprintf(want, sizeof(want), "give an integer from 1 to %llu",
			 (unsigned long long)max);
		return bad(name, val, err, want);
	}
	*out = (unsigned)v;
	return 0;
}

/* Defaults that depend on the process's limits. */
static void set_defaults(struct dsfs_opts *o)
{
	struct rlimit rl;
	rlim_t n = 1024;

	o->entry_timeout = o->attr_timeout = DEFAULT_TIMEOUT;
	o->max_threads = DEFAULT_MAX_THREADS;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		n = rl.rlim_cur;
	n /= 4;
	o->max_open = n < 1 ? 1 : n > 512 ? 512 : (unsigned)n;
}

static int validate(struct dsfs_opts *o)
{
	if (!o->source || !o->mountpoint) {
		fprintf(stderr, "dsfs: missing %s; usage: dsfs SOURCE MOUNTPOINT [-o options] (dsfs --help)\n",
			o->source ? "MOUNTPOINT" : "SOURCE and MOUNTPOINT");
		return -1;
	}
	if (check_seconds("entry_timeout", o->entry_timeout_s, &o->entry_timeout) ||
	    check_seconds("attr_timeout", o->attr_timeout_s, &o->attr_timeout) ||
	    check_count("max_open", o->max_open_s, 1 << 20, &o->max_open) ||
	    check_count("max_threads", o->max_threads_s, 1024, &o->max_threads))
		return -1;
	return 0;
}

enum dsfs_opts_result dsfs_opts_parse(int argc, char **argv,
				      struct dsfs_opts *opts,
				      struct fuse_args *fuse_args)
{
	*fuse_args = (struct fuse_args)FUSE_ARGS_INIT(argc, argv);
	set_defaults(opts);
	if (fuse_opt_parse(fuse_args, opts, dsfs_opt_table, opt_proc) == -1)
		return DSFS_OPTS_ERROR;
	if (validate(opts))
		return DSFS_OPTS_ERROR;
	return DSFS_OPTS_OK;
}

void dsfs_opts_free(struct dsfs_opts *o)
{
	free(o->source);
	free(o->mountpoint);
	free(o->entry_timeout_s);
	free(o->attr_timeout_s);
	free(o->max_open_s);
	free(o->max_threads_s);
}
