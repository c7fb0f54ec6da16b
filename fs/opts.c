// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Command line: one fuse_opt table for dsfs's own options, the help text
 * beside it, and strict validation of every value.  Options dsfs does not
 * know are handed to libfuse, which accepts the generic mount options
 * (those mount.fuse3 adds: rw, dev, suid, ...; allow_other, ...) and refuses
 * anything else with a message naming it.  dsfs_opts_parse() runs once, in
 * the main thread; dsfs_opts_parse_plan_cmd() reads plan-change commands
 * with the same table, in the FUSE worker that got the command, on its own
 * variables.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

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
	DSFS_OPT("cache_size=%s", cache_size_s),
	DSFS_OPT("hugepages=%s", hugepages_s),
	DSFS_OPT("numa=%s", numa_s),
	DSFS_OPT("io_depth=%s", io_depth_s),
	DSFS_OPT("whole_file_max=%s", whole_file_max_s),
	DSFS_OPT("readahead_max=%s", readahead_max_s),
	DSFS_OPT("lead_max=%s", lead_max_s),
	DSFS_OPT("stats=%s", stats_s),
	DSFS_OPT("push=%s", push_s),
	{ "verify", offsetof(struct dsfs_opts, verify), 1 },
	{ "direct_io", offsetof(struct dsfs_opts, direct_io), 1 },
	DSFS_OPT("direct_io=%s", direct_io_s),
	DSFS_OPT("sampler=%s", plan_opts.sampler),
	DSFS_OPT("seed=%s", plan_opts.seed),
	DSFS_OPT("epoch=%s", plan_opts.epoch),
	DSFS_OPT("layout=%s", plan_opts.layout),
	DSFS_OPT("dataset=%s", plan_opts.dataset),
	DSFS_OPT("list=%s", plan_opts.list),
	DSFS_OPT("extensions=%s", plan_opts.extensions),
	DSFS_OPT("suffix=%s", plan_opts.suffix),
	DSFS_OPT("hidden=%s", plan_opts.hidden),
	DSFS_OPT("split=%s", plan_opts.split),
	DSFS_OPT("split_seed=%s", plan_opts.split_seed),
	DSFS_OPT("split_part=%s", plan_opts.split_part),
	DSFS_OPT("world=%s", plan_opts.world),
	DSFS_OPT("rank=%s", plan_opts.rank),
	DSFS_OPT("ranks=%s", plan_opts.ranks),
	DSFS_OPT("discover_threads=%s", plan_opts.discover_threads),
	DSFS_OPT("discover_range=%s", plan_opts.discover_range),
	DSFS_OPT("num_samples=%s", plan_opts.num_samples),
	DSFS_OPT("weights=%s", plan_opts.weights),
	{ "drop_last", offsetof(struct dsfs_opts, plan_opts.drop_last), 1 },
	{ "persistent_workers",
	  offsetof(struct dsfs_opts, plan_opts.persistent_workers), 1 },
	{ "sampler_generator",
	  offsetof(struct dsfs_opts, plan_opts.sampler_generator), 1 },
	{ "seeded_once", offsetof(struct dsfs_opts, plan_opts.seeded_once), 1 },
	{ "inplace", offsetof(struct dsfs_opts, plan_opts.inplace), 1 },
	{ "replacement", offsetof(struct dsfs_opts, plan_opts.replacement), 1 },
	{ "subset", offsetof(struct dsfs_opts, plan_opts.subset), 1 },
	{ "--print-plan", offsetof(struct dsfs_opts, print_plan), 1 },
	{ "--print-plan0", offsetof(struct dsfs_opts, print_plan), 2 },
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
#define DEFAULT_IO_DEPTH 256
#define DEFAULT_CACHE_PERCENT 25
#define DEFAULT_WHOLE_FILE_MAX (16ull << 20)
#define DEFAULT_READAHEAD_MAX (64ull << 20)

static void usage(const char *prog)
{
	printf("usage: %s SOURCE MOUNTPOINT [-o opt[,opt...]] [-f] [-d]\n"
	       "       %s --print-plan[0] SOURCE -o sampler=...[,opt...]\n"
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
	       "    -o cache_size=SIZE     memory for cached file data: N[K|M|G|T] or\n"
	       "                           N%% of physical memory (default 25%%)\n"
	       "    -o hugepages=MODE      auto|require|off (default auto)\n"
	       "    -o numa=POLICY         local|interleave|NODE (default local)\n"
	       "    -o io_depth=N          backing reads in flight (default %d)\n"
	       "    -o whole_file_max=SIZE fetch files up to SIZE whole on first\n"
	       "                           read (default 16M; 0: never)\n"
	       "    -o readahead_max=SIZE  read-ahead limit for sequential reads of\n"
	       "                           larger files (default 64M; 0: none)\n"
	       "    -o lead_max=SIZE       with a plan, prefetch at most SIZE ahead:\n"
	       "                           N[K|M|G|T] or N%% of cache_size (default\n"
	       "                           50%%; 0: the plan orders eviction only)\n"
	       "    -o verify              hash cached data, check it on every read\n"
	       "    -o direct_io           no kernel page cache: every read comes\n"
	       "                           to dsfs (for data changed under readers)\n"
	       "    -o direct_io=MODE      on (as above), off or auto (default: on\n"
	       "                           where a memory cgroup leaves the page\n"
	       "                           cache no room, unless readers read in\n"
	       "                           pieces or the files they read again fit)\n"
	       "    -o push=MODE           with a plan, copy fetched files into the\n"
	       "                           kernel's page cache ahead of the loader:\n"
	       "                           on, off or auto (default: on unless a\n"
	       "                           memory cgroup leaves no room for it)\n"
	       "    -o stats=WHO           private (root and the mounting user) or\n"
	       "                           public (default private)\n"
	       "\n"
	       "Plan (the loader's read order; see dsfs(8)):\n"
	       "    -o sampler=NAME        none, sequential, torch-random,\n"
	       "                           torch-distributed, python-shuffle,\n"
	       "                           numpy-permutation, numpy-generator or\n"
	       "                           auto (seed=discover only) (default none)\n"
	       "    -o seed=INT            the seed the training script uses;\n"
	       "                           discover (torch-random, torch-distributed,\n"
	       "                           auto): search it from the first opens\n"
	       "    -o epoch=auto|N        the epoch the loader is in (default auto)\n"
	       "    -o layout=NAME         imagefolder, sorted, walk (os.walk's\n"
	       "                           order) or list (default imagefolder)\n"
	       "    -o dataset=DIR[:DIR...]\n"
	       "                           the dataset directory, relative to SOURCE\n"
	       "                           (default ., or train where SOURCE holds\n"
	       "                           train/ and val/); several: a ConcatDataset\n"
	       "    -o list=FILE           layout=list: one path per line\n"
	       "    -o extensions=EXT[:EXT...]\n"
	       "                           imagefolder: a DatasetFolder's\n"
	       "                           extensions (.npy:.wav), not\n"
	       "                           ImageFolder's image ones\n"
	       "    -o suffix=SFX[:SFX...] sorted, walk: only files whose names\n"
	       "                           end so, as given (.jpg:.JPEG)\n"
	       "    -o hidden=keep|skip    sorted, walk: skip leaves out names\n"
	       "                           beginning with '.', as glob does\n"
	       "                           (default keep)\n"
	       "    -o split=L0:L1[:...],split_seed=S[,split_part=K]\n"
	       "                           the loader reads part K (0) of\n"
	       "                           random_split(ds, [L0, L1, ...],\n"
	       "                           generator=torch.Generator().manual_seed(S))\n"
	       "    -o world=N             torch-distributed: number of ranks\n"
	       "    -o rank=R, ranks=A-B   torch-distributed: this node's ranks\n"
	       "                           (default all)\n"
	       "    -o drop_last           torch-distributed: drop_last=True\n"
	       "    -o persistent_workers  torch-random: persistent_workers=True\n"
	       "    -o sampler_generator   torch-random: the generator is given to\n"
	       "                           RandomSampler only, not to DataLoader\n"
	       "    -o seeded_once         python-shuffle, numpy-*: the script seeds\n"
	       "                           its generator once, with seed, not with\n"
	       "                           seed + epoch each epoch\n"
	       "    -o inplace             python-shuffle, numpy-*: each epoch shuffles\n"
	       "                           the list the last one left\n"
	       "    -o num_samples=K       torch-random: RandomSampler(num_samples=K)\n"
	       "    -o replacement         torch-random: RandomSampler(replacement=True)\n"
	       "    -o subset              torch-random: SubsetRandomSampler(indices,\n"
	       "                           generator=g) (layout=list: the indices' files)\n"
	       "    -o weights=FILE        torch-random: WeightedRandomSampler(weights,\n"
	       "                           num_samples=K): one weight a line, in the\n"
	       "                           samples' order (with num_samples=K)\n"
	       "    -o discover_threads=N  seed=discover: search threads (default:\n"
	       "                           the CPUs), at idle priority\n"
	       "    -o discover_range=A-B  seed=discover: search seeds A to B-1 only\n"
	       "                           (tests; default 0-4294967296)\n"
	       "    --print-plan           print the read order of one epoch (epoch=N,\n"
	       "                           rank=R) for SOURCE and exit: dsfs\n"
	       "                           --print-plan SOURCE -o OPTIONS\n"
	       "    --print-plan0          the same, each path followed by a NUL\n"
	       "                           byte (names may hold newlines)\n"
	       "    Change the plan of a mounted dsfs with dsfs-stats --set, e.g.\n"
	       "    dsfs-stats --set seed=7,epoch=3 MOUNTPOINT (dsfs(8), PLAN CONTROL)\n"
	       "\n"
	       "Generic mount options (allow_other, ...):\n",
	       prog, prog, DEFAULT_MAX_THREADS, DEFAULT_IO_DEPTH);
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

static uint64_t phys_mem(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);

	return pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : 0;
}

/* v in the largest unit that writes it whole: "4K", "23G", "1000 bytes". */
static const char *size_text(uint64_t v, char *buf, size_t size)
{
	static const char units[] = "TGMK";
	unsigned i;

	for (i = 0; v && i < 4; i++) {
		unsigned shift = 10 * (4 - i);

		if (!(v & ((1ull << shift) - 1))) {
			snprintf(buf, size, "%llu%c",
				 (unsigned long long)(v >> shift), units[i]);
			return buf;
		}
	}
	snprintf(buf, size, "%llu bytes", (unsigned long long)v);
	return buf;
}

static int check_size(const char *name, const char *val, uint64_t total,
		      uint64_t min, uint64_t max, uint64_t *out)
{
	char lo[32], hi[32];
	uint64_t v;
	int err;

	if (!val)
		return 0;
	err = dsfs_parse_size(val, total, &v);
	if (err == -EINVAL) {
		fprintf(stderr, "dsfs: %s=%s: malformed size; use a number with K, M, G or T%s\n",
			name, val, total ? ", or a percentage like 40%" : "");
		return -1;
	}
	if (err || v < min || v > max) {
		if (total && val[0] && val[strlen(val) - 1] == '%')
			fprintf(stderr, "dsfs: %s=%s: give a percentage from %s0%% to 100%%, or a size from %s to %s\n",
				name, val, min ? "above " : "",
				size_text(min, lo, sizeof(lo)),
				size_text(max, hi, sizeof(hi)));
		else
			fprintf(stderr, "dsfs: %s=%s: must be between %s and %s\n",
				name, val, size_text(min, lo, sizeof(lo)),
				size_text(max, hi, sizeof(hi)));
		return -1;
	}
	*out = v;
	return 0;
}

/* One of a fixed set of words; index into words, or -1 with a message. */
static int check_word(const char *name, const char *val,
		      const char *const *words, int *out)
{
	int i;

	if (!val)
		return 0;
	for (i = 0; words[i]; i++) {
		if (!strcmp(val, words[i])) {
			*out = i;
			return 0;
		}
	}
	fprintf(stderr, "dsfs: %s=%s: unknown value; use %s", name, val, words[0]);
	for (i = 1; words[i]; i++)
		fprintf(stderr, "%s%s", words[i + 1] ? ", " : " or ", words[i]);
	fprintf(stderr, "\n");
	return -1;
}

static int check_numa(struct dsfs_opts *o)
{
	uint64_t node;

	if (!o->numa_s || !strcmp(o->numa_s, "local"))
		return 0;
	if (!strcmp(o->numa_s, "interleave")) {
		o->cache.numa = DSFS_NUMA_INTERLEAVE;
		return 0;
	}
	if (dsfs_parse_u64(o->numa_s, 0, 4095, &node) != 0) {
		fprintf(stderr, "dsfs: numa=%s: unknown value; use local, interleave or a node number\n",
			o->numa_s);
		return -1;
	}
	if (dsfs_numa_node_valid((int)node)) {
		fprintf(stderr, "dsfs: numa=%s: no such NUMA node on this machine\n",
			o->numa_s);
		return -1;
	}
	o->cache.numa = DSFS_NUMA_NODE;
	o->cache.numa_node = (int)node;
	return 0;
}

/* The options of the cache and the I/O engine. */
static int validate_cache(struct dsfs_opts *o)
{
	static const char *const hp[] = { "auto", "require", "off", NULL };
	static const char *const who[] = { "private", "public", NULL };
	static const char *const pushes[] = { "off", "on", "auto", NULL };
	uint64_t mem = phys_mem(), size = o->cache.size;
	int h = (int)o->cache.hugepages, pub = 0, push = DSFS_PUSH_AUTO;
	int direct = o->direct_io ? DSFS_DIRECT_ON : DSFS_DIRECT_AUTO;

	if (check_size("cache_size", o->cache_size_s, mem, DSFS_PAGE_SIZE, mem,
		       &size) ||
	    check_word("hugepages", o->hugepages_s, hp, &h) ||
	    check_numa(o) ||
	    check_count("io_depth", o->io_depth_s, 4096, &o->io_depth) ||
	    check_size("whole_file_max", o->whole_file_max_s, 0, 0, 1ull << 40,
		       &o->whole_file_max) ||
	    check_size("readahead_max", o->readahead_max_s, 0, 0, 1ull << 30,
		       &o->readahead_max) ||
	    check_word("stats", o->stats_s, who, &pub) ||
	    check_word("push", o->push_s, pushes, &push) ||
	    check_word("direct_io", o->direct_io_s, pushes, &direct))
		return -1;
	o->cache.size = size;
	o->lead_max = size / 2;
	if (check_size("lead_max", o->lead_max_s, size, 0, 1ull << 50,
		       &o->lead_max))
		return -1;
	o->cache.hugepages = (enum dsfs_hugepages)h;
	o->stats_public = pub == 1;
	o->push = (enum dsfs_push_mode)push;
	o->direct_mode = (enum dsfs_direct_mode)direct;
	o->direct_io = direct == DSFS_DIRECT_ON;
	if (o->push == DSFS_PUSH_ON && o->direct_io) {
		fprintf(stderr, "dsfs: push=on: with direct_io the kernel keeps no pages to push into; give one of the two\n");
		return -1;
	}
	return 0;
}

/*
 * The daemon holds a pool of backing files' descriptors and one /dev/fuse
 * descriptor per worker, and never uses select(): it raises its soft file
 * limit to the hard one, so that the pool is sized by what the system
 * allows and not by a shell's soft default (often 1024).  Where that fails
 * the soft limit stays, and check_fds() fits the pool under it.
 */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	(void)setrlimit(RLIMIT_NOFILE, &rl);
}

/* Defaults that depend on the process's limits. */
static void set_defaults(struct dsfs_opts *o)
{
	struct rlimit rl;
	rlim_t n = 1024;

	raise_nofile();

	o->entry_timeout = o->attr_timeout = DEFAULT_TIMEOUT;
	o->max_threads = DEFAULT_MAX_THREADS;
	o->io_depth = DEFAULT_IO_DEPTH;
	o->cache.size = phys_mem() / 100 * DEFAULT_CACHE_PERCENT;
	o->cache.hugepages = DSFS_HUGEPAGES_AUTO;
	o->cache.numa = DSFS_NUMA_LOCAL;
	o->whole_file_max = DEFAULT_WHOLE_FILE_MAX;
	o->readahead_max = DEFAULT_READAHEAD_MAX;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		n = rl.rlim_cur;
	n /= 4;
	o->max_open = n < 1 ? 1 : n > 512 ? 512 : (unsigned)n;
}

static int validate_plan(struct dsfs_opts *o)
{
	char why[512];

	if (o->plan_opts.dataset) /* "train/" and "./train" name "train" */
		dsfs_parse_tidy_paths(o->plan_opts.dataset);
	if (dsfs_plan_cfg_parse(&o->plan_opts, &o->plan, why, sizeof(why))) {
		fprintf(stderr, "dsfs: %s\n", why);
		return -1;
	}
	if (o->print_plan && o->plan.sampler.kind == DSFS_SAMPLER_NONE) {
		fprintf(stderr, "dsfs: --print-plan needs a plan: give -o sampler=...\n");
		return -1;
	}
	return 0;
}

/* Descriptors the daemon holds beside its pool and its workers' /dev/fuse
 * clones: the session's, SOURCE's, the I/O engine's, fanotify's, listings
 * in progress, syslog. */
#define FD_RESERVE 24

/*
 * The pool (max_open) and one /dev/fuse descriptor per worker thread
 * (max_threads) must fit under the file limit with the reserve, or a busy
 * mount fails reads with EMFILE.  A default max_open shrinks to fit; what
 * was given and cannot fit is refused.
 */
static int check_fds(struct dsfs_opts *o)
{
	unsigned long long limit = 1024, need;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		limit = rl.rlim_cur == RLIM_INFINITY ? ~0ULL : rl.rlim_cur;
	need = (unsigned long long)o->max_open + o->max_threads + FD_RESERVE;
	if (need <= limit)
		return 0;
	if (!o->max_open_s && limit > o->max_threads + FD_RESERVE) {
		o->max_open = (unsigned)(limit - o->max_threads - FD_RESERVE);
		return 0;
	}
	fprintf(stderr, "dsfs: max_open=%u and max_threads=%u need %llu file descriptors with the daemon's own %u, but the limit is %llu (ulimit -n): give fewer, or raise the limit\n",
		o->max_open, o->max_threads, need, FD_RESERVE, limit);
	return -1;
}

/*
 * Each of the plan's reads in flight holds its file's descriptor from the
 * pool until it completes; with every cached one busy the pool hands out
 * private ones.  A fetch with more reads in flight than the pool holds
 * could so take the descriptors the workers' lookups and reads need, and
 * the loader's opens failed with EMFILE (ulimit -n 64: max_open 16, 64
 * reads in flight; 16 threads reading at random failed 1 to 45 of 3,200
 * reads of a 2,000-file tree while the plan fetched it).  The fetch keeps
 * at most half the pool in flight, the rest left to the workers.
 * While it keeps ahead of the loader, a quarter of io_depth
 * (scheduler.h's cfg.depth_ahead).
 */
static void fit_fetch(struct dsfs_opts *o)
{
	unsigned half = o->max_open / 2 ? o->max_open / 2 : 1,
		 quarter = o->io_depth / 4 ? o->io_depth / 4 : 1;

	o->fetch_depth = o->io_depth < half ? o->io_depth : half;
	o->fetch_depth_ahead = quarter < o->fetch_depth ? quarter :
							  o->fetch_depth;
}

static int validate(struct dsfs_opts *o)
{
	if (o->print_plan) {
		if (!o->source || o->mountpoint) {
			fprintf(stderr, "dsfs: usage: dsfs --print-plan SOURCE -o sampler=...,seed=...\n");
			return -1;
		}
		return validate_plan(o);
	}
	if (!o->source || !o->mountpoint) {
		fprintf(stderr, "dsfs: missing %s; usage: dsfs SOURCE MOUNTPOINT [-o options] (dsfs --help)\n",
			o->source ? "MOUNTPOINT" : "SOURCE and MOUNTPOINT");
		return -1;
	}
	if (check_seconds("entry_timeout", o->entry_timeout_s, &o->entry_timeout) ||
	    check_seconds("attr_timeout", o->attr_timeout_s, &o->attr_timeout) ||
	    check_count("max_open", o->max_open_s, 1 << 20, &o->max_open) ||
	    check_count("max_threads", o->max_threads_s, 1024, &o->max_threads) ||
	    check_fds(o))
		return -1;
	if (validate_cache(o))
		return -1;
	fit_fetch(o);
	return validate_plan(o);
}

/* The table entry storing the option an "-o" item names (its key, up to
 * '='), or NULL (keys like "rw" or "debug" are not stored: no entry). */
static const struct fuse_opt *table_entry(const char *item, size_t keylen)
{
	const struct fuse_opt *t;

	for (t = dsfs_opt_table; t->templ; t++)
		if (t->offset != -1U && !strncmp(t->templ, item, keylen) &&
		    (t->templ[keylen] == '\0' || t->templ[keylen] == '='))
			return t;
	return NULL;
}

/* The end of the "-o" item at s: the first comma that a backslash does
 * not escape, as fuse_opt splits them. */
static const char *item_end(const char *s)
{
	for (; *s && *s != ','; s++)
		if (*s == '\\' && s[1])
			s++;
	return s;
}

/*
 * One "-o" argument's items: each of dsfs's options may come once.  seen[]
 * holds the items met so far (pointers into argv), *nseen of them.
 */
static int once_in(const char *list, const char **seen, size_t *nseen,
		   size_t max, char *why, size_t whylen)
{
	const char *item = list, *end;
	size_t klen, i;

	for (; *item; item = *end ? end + 1 : end) {
		end = item_end(item);
		klen = strcspn(item, "=,");
		if (!klen || !table_entry(item, klen))
			continue; /* libfuse's, or unknown: not ours to judge */
		for (i = 0; i < *nseen; i++) {
			if (strncmp(seen[i], item, klen) ||
			    (seen[i][klen] != '=' && seen[i][klen] != ',' &&
			     seen[i][klen]))
				continue;
			snprintf(why, whylen, "%.*s given twice (%.*s, then %.*s); give each option once",
				 (int)klen, item, (int)(item_end(seen[i]) - seen[i]),
				 seen[i], (int)(end - item), item);
			return -1;
		}
		if (*nseen < max)
			seen[(*nseen)++] = item;
	}
	return 0;
}

/* dsfs's options given twice are refused (which one would win is a
 * surprise either way), in "-o A,B" and "-oA,B" forms alike, and so is a
 * second --print-plan or --print-plan0. */
static int refuse_duplicates(int argc, char **argv)
{
	const char *seen[256], *print = NULL;
	size_t nseen = 0;
	char why[512];
	int i;

	for (i = 1; i < argc; i++) {
		const char *list = NULL;

		if (!strcmp(argv[i], "--print-plan") ||
		    !strcmp(argv[i], "--print-plan0")) {
			if (print) {
				fprintf(stderr, "dsfs: %s, then %s: give one of --print-plan and --print-plan0, once\n",
					print, argv[i]);
				return -1;
			}
			print = argv[i];
		}
		if (!strcmp(argv[i], "-o") && i + 1 < argc)
			list = argv[++i];
		else if (!strncmp(argv[i], "-o", 2))
			list = argv[i] + 2;
		if (list && once_in(list, seen, &nseen, 256, why, sizeof(why))) {
			fprintf(stderr, "dsfs: %s\n", why);
			return -1;
		}
	}
	return 0;
}

enum dsfs_opts_result dsfs_opts_parse(int argc, char **argv,
				      struct dsfs_opts *opts,
				      struct fuse_args *fuse_args)
{
	*fuse_args = (struct fuse_args)FUSE_ARGS_INIT(argc, argv);
	set_defaults(opts);
	if (refuse_duplicates(argc, argv))
		return DSFS_OPTS_ERROR;
	if (fuse_opt_parse(fuse_args, opts, dsfs_opt_table, opt_proc) == -1)
		return DSFS_OPTS_ERROR;
	if (validate(opts))
		return DSFS_OPTS_ERROR;
	return DSFS_OPTS_OK;
}

/* What a plan-change command may give (see ctl.c for layout, dataset,
 * list and weights, which only a mount without a plan yet accepts). */
#define CMD_OPTS "sampler, seed, epoch, world, rank, ranks, drop_last, persistent_workers, sampler_generator, seeded_once, inplace, num_samples, replacement, subset, discover_threads and discover_range"

/* A command being parsed: fuse_opt stores values at the table's offsets
 * from the start of the data pointer, hence `o` first. */
struct cmd_parse {
	struct dsfs_opts o;
	char *why;
	size_t whylen;
};

/* The table's NAME=%s entry for a bare NAME given without a value. */
static const char *valued_option(const char *name)
{
	const struct fuse_opt *t;
	size_t n = strlen(name);

	for (t = dsfs_opt_table; t->templ; t++)
		if (!strncmp(t->templ, name, n) && !strcmp(t->templ + n, "=%s"))
			return t->templ;
	return NULL;
}

/* Options the table does not store: unknown ones, and -f, debug, ... */
static int cmd_proc(void *data, const char *arg, int key,
		    struct fuse_args *outargs)
{
	struct cmd_parse *c = data;

	(void)outargs;
	if (key != FUSE_OPT_KEY_OPT)
		snprintf(c->why, c->whylen, "%s: cannot change without remounting; a command gives only %s",
			 arg, CMD_OPTS);
	else if (!*arg)
		snprintf(c->why, c->whylen, "empty option in the command; give NAME=VALUE[,NAME=VALUE...]");
	else if (valued_option(arg))
		snprintf(c->why, c->whylen, "%s needs a value: %s=...", arg, arg);
	else
		snprintf(c->why, c->whylen, "%s: unknown option; a command gives only %s",
			 arg, CMD_OPTS);
	return -1;
}

/* The first option the table stored outside the plan, as "name=value". */
static bool stored_non_plan(const struct dsfs_opts *o, char *buf, size_t size)
{
	const size_t lo = offsetof(struct dsfs_opts, plan_opts),
		     hi = lo + sizeof(o->plan_opts);
	const struct fuse_opt *t;

	for (t = dsfs_opt_table; t->templ; t++) {
		const char *field = (const char *)o + t->offset;
		const char *eq = strchr(t->templ, '=');

		if (t->offset == -1U || (t->offset >= lo && t->offset < hi))
			continue;
		if (eq && *(char *const *)field) {
			snprintf(buf, size, "%.*s%s", (int)(eq - t->templ + 1),
				 t->templ, *(char *const *)field);
			return true;
		}
		if (!eq && *(const int *)field) {
			snprintf(buf, size, "%s", t->templ);
			return true;
		}
	}
	return false;
}

int dsfs_opts_parse_plan_cmd(const char *cmd, struct dsfs_plan_opts *plan,
			     char *why, size_t whylen)
{
	char prog[] = "dsfs", dash_o[] = "-o";
	char *argv[] = { prog, dash_o, (char *)cmd, NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	struct cmd_parse c = { .why = why, .whylen = whylen };
	const char *seen[64];
	size_t nseen = 0;
	char opt[256];
	int err = 0;

	memset(plan, 0, sizeof(*plan));
	why[0] = '\0';
	if (once_in(cmd, seen, &nseen, 64, why, whylen)) {
		err = -EINVAL;
	} else if (fuse_opt_parse(&args, &c, dsfs_opt_table, cmd_proc) == -1) {
		err = why[0] ? -EINVAL : -ENOMEM; /* cmd_proc says why */
		if (err == -ENOMEM)
			snprintf(why, whylen, "cannot parse the command: out of memory");
	} else if (stored_non_plan(&c.o, opt, sizeof(opt))) {
		snprintf(why, whylen, "%s: cannot change without remounting; a command gives only %s",
			 opt, CMD_OPTS);
		err = -EINVAL;
	} else {
		*plan = c.o.plan_opts;
		memset(&c.o.plan_opts, 0, sizeof(c.o.plan_opts));
		if (plan->dataset)
			dsfs_parse_tidy_paths(plan->dataset);
	}
	fuse_opt_free_args(&args);
	dsfs_opts_free(&c.o);
	if (err)
		dsfs_parse_oneline(why); /* options quoted as given */
	return err;
}

void dsfs_opts_free(struct dsfs_opts *o)
{
	free(o->source);
	free(o->mountpoint);
	free(o->entry_timeout_s);
	free(o->attr_timeout_s);
	free(o->max_open_s);
	free(o->max_threads_s);
	free(o->cache_size_s);
	free(o->hugepages_s);
	free(o->numa_s);
	free(o->io_depth_s);
	free(o->whole_file_max_s);
	free(o->readahead_max_s);
	free(o->lead_max_s);
	free(o->stats_s);
	free(o->push_s);
	free(o->direct_io_s);
	dsfs_plan_opts_free(&o->plan_opts);
}
