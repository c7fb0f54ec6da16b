// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The stat pass of layout building (see layout_int.h): fills in the size of
 * every sample the builders left DSFS_LAYOUT_PENDING.
 *
 * A million stats take seconds on one core, and far longer one at a time on
 * a network filesystem, so the pass is spread over up to STAT_THREADS
 * short-lived helper threads (one per online CPU at most, none for small
 * layouts).  Helpers claim STAT_CHUNK consecutive samples at a time with an
 * atomic counter; consecutive samples mostly share a directory, so each
 * helper keeps an O_PATH fd of the last directory (resolved from the SOURCE
 * root with RESOLVE_BENEATH, so symlinks staying inside are fine) and stats
 * names in it with one fstatat(AT_SYMLINK_NOFOLLOW).  A helper writes only
 * the size words of the chunks it claimed, and nothing else of the layout;
 * pthread_join() publishes those writes to the building thread.  Helpers
 * block all signals.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "layout_int.h"

#define STAT_THREADS 8
#define STAT_CHUNK 1024

struct statpass {
	struct dsfs_layout_ctx *c;
	uint64_t next;		/* atomic: first sample not yet claimed */
};

/* One helper's cached directory. */
struct statdir {
	int fd;			/* O_PATH fd, or -errno */
	size_t len;		/* SIZE_MAX: none yet */
	char path[PATH_MAX];	/* relative to DIR */
};

/* Size word of path: a regular file reached inside SOURCE, else PENDING. */
static uint64_t stat_one(struct dsfs_layout_ctx *c, struct statdir *d,
			 const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;
	struct stat st;

	if (len != d->len || memcmp(d->path, path, len)) {
		if (d->fd >= 0)
			close(d->fd);
		memcpy(d->path, path, len);
		d->path[len] = '\0';
		d->len = len;
		d->fd = dsfs_layout_open_in_root(c, len ? d->path : ".",
						 O_PATH | O_DIRECTORY);
	}
	if (d->fd < 0 ||
	    fstatat(d->fd, slash ? slash + 1 : path, &st, AT_SYMLINK_NOFOLLOW) ||
	    !S_ISREG(st.st_mode))
		return DSFS_LAYOUT_PENDING;
	return (uint64_t)st.st_size | DSFS_LAYOUT_PREFETCH;
}

static void *stat_chunks(void *arg)
{
	struct statpass *p = arg;
	struct dsfs_layout *l = p->c->l;
	struct statdir *d = malloc(sizeof(*d));
	uint64_t i, end;

	if (!d)
		return NULL; /* the others, or the caller, do the work */
	d->fd = -1;
	d->len = SIZE_MAX;
	for (;;) {
		i = __atomic_fetch_add(&p->next, STAT_CHUNK, __ATOMIC_RELAXED);
		if (i >= l->count)
			break;
		end = i + STAT_CHUNK < l->count ? i + STAT_CHUNK : l->count;
		for (; i < end; i++) {
			if (l->sizes[i] == DSFS_LAYOUT_PENDING)
				l->sizes[i] = stat_one(p->c, d,
						       l->arena + l->offs[i]);
		}
	}
	if (d->fd >= 0)
		close(d->fd);
	free(d);
	return NULL;
}

int dsfs_layout_stat_pending(struct dsfs_layout_ctx *c)
{
	struct statpass p = { .c = c };
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t tid[STAT_THREADS];
	uint64_t want = c->l->count / (4 * STAT_CHUNK);
	unsigned n, i;
	sigset_t all, old;

	want = ncpu > 0 && want > (uint64_t)ncpu ? (uint64_t)ncpu : want;
	want = want > STAT_THREADS ? STAT_THREADS : want;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (n = 0; n + 1 < want; n++) {
		if (pthread_create(&tid[n], NULL, stat_chunks, &p))
			break; /* fewer helpers: still complete */
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	stat_chunks(&p);
	for (i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
	/* Had every helper failed to allocate, chunks stay claimed undone. */
	return __atomic_load_n(&p.next, __ATOMIC_RELAXED) >= c->l->count ||
	       !c->l->count ? 0 : -ENOMEM;
}
