// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Scans of a layout's samples by several threads (dsfs_layout_scan, see
 * layout.h), and the stat pass of layout building made of one (see
 * layout_int.h): it fills in the size of every sample the builders left
 * DSFS_LAYOUT_PENDING.
 *
 * A million stats take seconds on one core, and far longer one at a time on
 * a network filesystem, so the stat pass is spread over up to STAT_THREADS
 * threads: the building thread and short-lived helpers (one thread per
 * online CPU at most, none for small layouts).  Each stats names in its
 * sample's directory with one fstatat(AT_SYMLINK_NOFOLLOW) and writes only
 * the size words of the chunks it claimed, nothing else of the layout;
 * pthread_join() publishes those writes to the building thread.
 *
 * Threads: a scan's helpers and whichever thread calls run; they share only
 * the scan's `next` and `stop` (relaxed atomics) and what visit writes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "layout_int.h"

#define STAT_THREADS DSFS_LAYOUT_SCAN_MAX
#define STAT_CHUNK 1024

void dsfs_layout_scan_run(struct dsfs_layout_scan *s)
{
	uint64_t i, end, n = dsfs_layout_count(s->layout);
	const char *dir = NULL;	/* the directory dfd is for */
	size_t dir_len = 0;
	int dfd = -1;

	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		i = __atomic_fetch_add(&s->next, s->chunk, __ATOMIC_RELAXED);
		if (i >= n)
			break;
		end = n - i > s->chunk ? i + s->chunk : n;
		for (; i < end; i++) {
			const char *path = dsfs_layout_path(s->layout, i);
			const char *slash = strrchr(path, '/');
			size_t len = slash ? (size_t)(slash - path) : 0;

			if (!dir || len != dir_len || memcmp(dir, path, len)) {
				if (dfd >= 0)
					close(dfd);
				dfd = dsfs_layout_openat(s->root_fd, s->dir,
							 path, len,
							 O_PATH | O_DIRECTORY);
				dir = path; /* the arena's bytes stay */
				dir_len = len;
			}
			s->visit(s->arg, i, dfd, slash ? slash + 1 : path);
		}
	}
	if (dfd >= 0)
		close(dfd);
}

static void *scan_thread(void *arg)
{
	dsfs_layout_scan_run(arg);
	return NULL;
}

unsigned dsfs_layout_scan_start(struct dsfs_layout_scan *s, unsigned threads,
				const char *name)
{
	sigset_t all, old;

	if (threads > DSFS_LAYOUT_SCAN_MAX)
		threads = DSFS_LAYOUT_SCAN_MAX;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (; s->nthreads < threads; s->nthreads++) {
		if (pthread_create(&s->threads[s->nthreads], NULL, scan_thread,
				   s))
			break; /* fewer helpers: the others go further */
		pthread_setname_np(s->threads[s->nthreads], name);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return s->nthreads;
}

void dsfs_layout_scan_join(struct dsfs_layout_scan *s, bool stop)
{
	if (stop)
		__atomic_store_n(&s->stop, true, __ATOMIC_RELAXED);
	for (; s->nthreads; s->nthreads--)
		pthread_join(s->threads[s->nthreads - 1], NULL);
}

/* A pending sample's size word: a regular file reached inside SOURCE. */
static void stat_visit(void *arg, uint64_t i, int dfd, const char *name)
{
	struct dsfs_layout *l = arg;
	struct stat st;

	if (l->sizes[i] == DSFS_LAYOUT_PENDING && dfd >= 0 &&
	    !fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
	    S_ISREG(st.st_mode))
		l->sizes[i] = (uint64_t)st.st_size | DSFS_LAYOUT_PREFETCH;
}

void dsfs_layout_stat_pending(struct dsfs_layout_ctx *c)
{
	struct dsfs_layout_scan scan = {
		.layout = c->l, .root_fd = c->root_fd, .dir = c->ds_rel,
		.chunk = STAT_CHUNK, .visit = stat_visit, .arg = c->l,
	};
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t want = c->l->count / (4 * STAT_CHUNK);

	want = ncpu > 0 && want > (uint64_t)ncpu ? (uint64_t)ncpu : want;
	want = want > STAT_THREADS ? STAT_THREADS : want;
	if (want > 1)
		dsfs_layout_scan_start(&scan, (unsigned)want - 1, "dsfs-stat");
	dsfs_layout_scan_run(&scan); /* complete even with no helper */
	dsfs_layout_scan_join(&scan, false);
}
