// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * unit-io: the I/O engine reads exactly what pread(2) reads, short only at
 * end of file, passes errors on, returns every fd to the pool and calls
 * every callback exactly once, also when freed with reads in flight; for
 * io_uring and the pread fallback, depth 1 and 64, buffered and O_DIRECT,
 * with and without fixed buffers.  Real files in a directory under the
 * build tree (a real disk filesystem, for O_DIRECT), no mocks.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdpool.h"
#include "io.h"
#include "io_int.h" /* dsfs_io_advance, for the short-read rules */
#include "unit-check.h"

#define NFILES 7   /* regular files; f[NFILES] is the directory itself */
#define POOL_CAP 4 /* fewer than the files: private fds get used too */
#define SUBMITTERS 4
#define SYSCTL "/proc/sys/kernel/io_uring_disabled"
#define SYSCTL_LOCK "/tmp/dsfs-unit-io-sysctl.lock"

static const size_t file_sizes[NFILES] = {
	0, 1, 4095, 4096, 4097, (1u << 20) + 123, 8u << 20,
};

struct tfile {
	char path[PATH_MAX];
	size_t size;
	unsigned char *data;   /* the file's bytes, as pread(2) returns them */
	struct dsfs_fdkey key; /* flags 0; set per request */
};

struct ctx {
	char dir[PATH_MAX];
	struct tfile f[NFILES + 1];
	struct dsfs_fdpool *pool;
	bool direct;	    /* O_DIRECT opens work here */
	bool dio_strict;    /* and a misaligned O_DIRECT pread is EINVAL */
	int uring_expected; /* 1 yes, 0 no, -1 unknown (no sysctl) */
};

struct waiter {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned pending; /* protected by lock */
};

struct treq {
	struct ctx *c;
	struct waiter *w; /* or NULL */
	unsigned file;
	int flags; /* open flags of the fd to read through */
	uint64_t off;
	uint32_t len;
	unsigned char *buf;
	int result;	    /* set by the callback */
	unsigned calls;	    /* atomic: callbacks seen */
	struct dsfs_io *io; /* shutdown test: where the child goes */
	struct treq *child; /* shutdown test: read chained from done */
	bool child_queued;  /* the chained submit was accepted */
};

static int open_key(void *arg, const struct dsfs_fdkey *key)
{
	struct ctx *c = arg;
	unsigned i;
	int fd;

	for (i = 0; i <= NFILES; i++) {
		if (c->f[i].key.dev != key->dev || c->f[i].key.ino != key->ino)
			continue;
		fd = open(c->f[i].path, (int)key->flags | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	return -ENOENT;
}

static void waiter_init(struct waiter *w, unsigned n)
{
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->pending = n;
}

static void waiter_done(struct waiter *w)
{
	pthread_mutex_lock(&w->lock);
	w->pending--;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

/* Wait until at most `left` callbacks are pending. */
static void waiter_wait_for(struct waiter *w, unsigned left)
{
	pthread_mutex_lock(&w->lock);
	while (w->pending > left)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
}

static void waiter_destroy(struct waiter *w)
{
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
}

static void waiter_wait(struct waiter *w)
{
	waiter_wait_for(w, 0);
	waiter_destroy(w);
}

static int submit_one(struct dsfs_io *io, struct treq *t);

static void on_done(void *arg, int result)
{
	struct treq *t = arg;

	t->result = result;
	/* Relaxed: the waiter's mutex (or the engine's join) orders it. */
	__atomic_add_fetch(&t->calls, 1, __ATOMIC_RELAXED);
	if (t->child) /* engine thread, maybe while it stops */
		t->child_queued = submit_one(t->io, t->child) == 0;
	if (t->w)
		waiter_done(t->w);
}

/* Borrow the fd and submit; on refusal the fd is ours to put back. */
static int submit_one(struct dsfs_io *io, struct treq *t)
{
	struct dsfs_fdkey key = t->c->f[t->file].key;
	struct dsfs_io_req req = {
		.off = t->off,
		.done = on_done,
		.arg = t,
	};
	int ret;

	dsfs_io_req_buf(&req, t->buf, t->len);
	key.flags = (uint32_t)t->flags;
	ret = dsfs_fdpool_get(t->c->pool, &key, open_key, t->c, &req.fd);
	if (ret)
		return ret;
	ret = dsfs_io_submit(io, &req);
	if (ret)
		dsfs_fdpool_put(t->c->pool, &req.fd);
	return ret;
}

static int expected(const struct treq *t)
{
	size_t size = t->c->f[t->file].size;

	if (t->off >= size)
		return 0;
	return (int)(size - t->off < t->len ? size - t->off : t->len);
}

/* One callback with the right length and the file's own bytes. */
static bool read_ok(const struct treq *t)
{
	int want = expected(t);
	bool ok = t->calls == 1 && t->result == want &&
		  (want <= 0 || !memcmp(t->buf, t->c->f[t->file].data + t->off,
					(size_t)want));

	if (!ok)
		fprintf(stderr,
			"file %u (%zu B) flags %#x off %llu len %u: %u calls, result %d, want %d\n",
			t->file, t->c->f[t->file].size, t->flags,
			(unsigned long long)t->off, t->len, t->calls, t->result,
			want);
	return ok;
}

static struct dsfs_io *engine(struct ctx *c, bool threads, unsigned depth,
			      void *fixed, size_t fixed_size)
{
	struct dsfs_io_cfg cfg = {
		.depth = depth,
		.fdpool = c->pool,
		.fixed_base = fixed,
		.fixed_size = fixed_size,
		.force_threads = threads,
	};
	struct dsfs_io_stats st;
	struct dsfs_io *io;
	char why[256] = "";

	if (dsfs_io_new(&cfg, &io, why, sizeof(why))) {
		fprintf(stderr, "dsfs_io_new: %s\n", why);
		CHECK(!"dsfs_io_new failed");
		return NULL;
	}
	dsfs_io_get_stats(io, &st);
	if (threads)
		CHECK(!st.uring && !st.fixed);
	else if (c->uring_expected >= 0)
		CHECK(st.uring == (c->uring_expected == 1));
	return io;
}

/* Every fd came back: the pool holds only idle cached fds, all forgettable. */
static void check_fds_returned(struct ctx *c)
{
	unsigned i;

	CHECK(dsfs_fdpool_open_count(c->pool) <= POOL_CAP);
	for (i = 0; i <= NFILES; i++)
		dsfs_fdpool_forget(c->pool, c->f[i].key.dev, c->f[i].key.ino);
	CHECK(dsfs_fdpool_open_count(c->pool) == 0);
}

/* ---- many concurrent reads, checked byte for byte ---- */

struct variant {
	bool threads;
	unsigned depth;
	bool direct;
	bool fixed;
};

struct batch {
	struct treq *t;
	unsigned *order; /* submission order, shuffled */
	unsigned n;
	unsigned char *arena; /* fixed: one mapping; else per request */
	size_t arena_size;
};

/* Requests covering each file in steps of len from start, one past EOF. */
static unsigned plan(struct ctx *c, const struct variant *v, struct treq *t)
{
	static const uint32_t dio[][2] = { { 4096, 0 },
					   { 65536, 0 },
					   { 1u << 20, 0 } };
	static const uint32_t buffered[][2] = { { 1000, 3 },
						{ 12345, 77 },
						{ 1u << 20, 0 } };
	const uint32_t(*p)[2] = v->direct ? dio : buffered;
	unsigned f, k, n = 0;
	uint64_t off;

	for (f = 0; f < NFILES; f++)
		for (k = 0; k < 3; k++)
			for (off = p[k][1]; off < c->f[f].size + p[k][0];
			     off += p[k][0], n++)
				if (t)
					t[n] = (struct treq){
						.c = c,
						.file = f,
						.off = off,
						.len = p[k][0],
						.flags = O_RDONLY |
							 (v->direct ? O_DIRECT :
								      0),
					};
	return n;
}

/* Buffers 4 KiB aligned (O_DIRECT) or at odd addresses (buffered). */
static void batch_init(struct ctx *c, const struct variant *v, struct batch *b)
{
	size_t slot, pos = 0;
	unsigned i, j, tmp;
	unsigned seed = 1;

	b->n = plan(c, v, NULL);
	b->t = calloc(b->n, sizeof(*b->t));
	b->order = calloc(b->n, sizeof(*b->order));
	plan(c, v, b->t);
	for (i = 0; i < b->n; i++)
		b->arena_size += (b->t[i].len + 64 + 4095) & ~(size_t)4095;
	if (v->fixed)
		b->arena = mmap(NULL, b->arena_size, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (i = 0; i < b->n; i++) {
		slot = (b->t[i].len + 64 + 4095) & ~(size_t)4095;
		if (v->fixed)
			b->t[i].buf = b->arena + pos;
		else if (posix_memalign((void **)&b->t[i].buf, 4096, slot))
			abort();
		b->t[i].buf += v->direct ? 0 : i % 61;
		pos += slot;
		b->order[i] = i;
	}
	for (i = b->n; i > 1; i--) { /* Fisher-Yates, fixed seed */
		j = (unsigned)rand_r(&seed) % i;
		tmp = b->order[i - 1];
		b->order[i - 1] = b->order[j];
		b->order[j] = tmp;
	}
}

static void batch_free(const struct variant *v, struct batch *b)
{
	unsigned i;

	if (v->fixed)
		munmap(b->arena, b->arena_size);
	else
		for (i = 0; i < b->n; i++)
			free(b->t[i].buf - (v->direct ? 0 : i % 61));
	free(b->t);
	free(b->order);
}

struct submitter {
	struct dsfs_io *io;
	struct batch *b;
	unsigned id;
	pthread_t thread;
};

static void *submit_main(void *arg)
{
	struct submitter *s = arg;
	unsigned k;

	for (k = s->id; k < s->b->n; k += SUBMITTERS) {
		struct treq *t = &s->b->t[s->b->order[k]];

		if (submit_one(s->io, t)) {
			CHECK(!"submit refused");
			waiter_done(t->w);
		}
	}
	return NULL;
}

static void run_batch(struct dsfs_io *io, struct batch *b)
{
	struct submitter s[SUBMITTERS];
	struct waiter w;
	unsigned i;

	waiter_init(&w, b->n);
	for (i = 0; i < b->n; i++)
		b->t[i].w = &w;
	for (i = 0; i < SUBMITTERS; i++) {
		s[i] = (struct submitter){ .io = io, .b = b, .id = i };
		pthread_create(&s[i].thread, NULL, submit_main, &s[i]);
	}
	for (i = 0; i < SUBMITTERS; i++)
		pthread_join(s[i].thread, NULL);
	waiter_wait(&w);
}

static void test_variant(struct ctx *c, const struct variant *v)
{
	struct dsfs_io_stats st;
	struct batch b = { 0 };
	struct dsfs_io *io;
	uint64_t bytes = 0;
	unsigned i, bad = 0;

	batch_init(c, v, &b);
	io = engine(c, v->threads, v->depth, v->fixed ? b.arena : NULL,
		    b.arena_size);
	if (io) {
		run_batch(io, &b);
		for (i = 0; i < b.n; i++) {
			bad += !read_ok(&b.t[i]);
			bytes += (uint64_t)(b.t[i].result > 0 ? b.t[i].result :
								0);
		}
		CHECK(bad == 0);
		dsfs_io_get_stats(io, &st);
		CHECK(st.reads == b.n && st.errors == 0 && st.inflight == 0);
		CHECK(st.bytes == bytes);
		if (v->fixed && st.uring && geteuid() == 0)
			CHECK(st.fixed); /* CAP_IPC_LOCK: no memlock limit */
		dsfs_io_free(io);
		printf("%-7s depth %2u %-8s %-5s: %u reads, %u bad, fixed %d\n",
		       st.uring ? "uring" : "threads", v->depth,
		       v->direct ? "O_DIRECT" : "buffered",
		       v->fixed ? "fixed" : "heap", b.n, bad, st.fixed);
	}
	check_fds_returned(c);
	batch_free(v, &b);
}

static void test_variants(struct ctx *c)
{
	static const unsigned depths[] = { 1, 64 };
	unsigned m, d;

	for (m = 0; m < 8; m++) {
		for (d = 0; d < 2; d++) {
			struct variant v = {
				.threads = m & 1,
				.direct = m & 2,
				.fixed = m & 4,
				.depth = depths[d],
			};

			if (v.direct && !c->direct)
				continue;
			test_variant(c, &v);
		}
	}
}

/* ---- errors ---- */

static void test_errors(struct ctx *c, bool threads)
{
	struct dsfs_io *io = engine(c, threads, 4, NULL, 0);
	unsigned char *buf;
	struct treq t[4];
	struct waiter w;
	struct dsfs_io_stats st;
	struct dsfs_io_req huge = { .niov = 2 }, none = { .niov = 0 },
			   many = { .niov = DSFS_IO_MAX_IOV + 1 };
	unsigned i, n = c->direct && c->dio_strict ? 4 : 2;

	if (!io || posix_memalign((void **)&buf, 4096, 4 * 8192))
		return;
	waiter_init(&w, n);
	for (i = 0; i < 4; i++)
		t[i] = (struct treq){ .c = c,
				      .w = &w,
				      .file = 6,
				      .len = 4096,
				      .flags = O_RDONLY | O_DIRECT,
				      .buf = buf + i * 8192 };
	t[0].file = NFILES; /* a directory: EISDIR */
	t[0].flags = O_RDONLY;
	t[1].flags = O_RDONLY; /* fine, between the errors */
	t[1].off = 100;
	t[2].buf += 1; /* O_DIRECT, misaligned buffer */
	t[3].off = 1;  /* O_DIRECT, misaligned offset */
	for (i = 0; i < n; i++)
		if (submit_one(io, &t[i]))
			waiter_done(&w);
	waiter_wait(&w);
	CHECK(t[0].calls == 1 && t[0].result == -EISDIR);
	CHECK(read_ok(&t[1]));
	for (i = 2; i < n; i++)
		CHECK(t[i].calls == 1 && t[i].result == -EINVAL);
	huge.iov[0].iov_len = INT_MAX;
	huge.iov[1].iov_len = 1;
	CHECK(dsfs_io_submit(io, &huge) == -EINVAL);
	CHECK(dsfs_io_submit(io, &none) == -EINVAL);
	CHECK(dsfs_io_submit(io, &many) == -EINVAL);
	dsfs_io_get_stats(io, &st);
	CHECK(st.reads == n && st.errors == n - 1 && st.inflight == 0);
	dsfs_io_free(io);
	check_fds_returned(c);
	free(buf);
}

/*
 * A buffer whose second page is unmapped: the read copies one page and
 * stops short, not at EOF, so the engine reads on and gets EFAULT.
 */
static void test_fault(struct ctx *c, bool threads)
{
	struct dsfs_io *io = engine(c, threads, 2, NULL, 0);
	unsigned char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct treq t = { .c = c, .file = 6, .len = 8192, .flags = O_RDONLY };
	struct waiter w;

	if (!io || m == MAP_FAILED || mprotect(m + 4096, 4096, PROT_NONE))
		return;
	t.buf = m;
	t.w = &w;
	waiter_init(&w, 1);
	if (submit_one(io, &t))
		waiter_done(&w);
	waiter_wait(&w);
	CHECK(t.calls == 1 && t.result == -EFAULT);
	CHECK(!memcmp(m, c->f[6].data, 4096));
	dsfs_io_free(io);
	munmap(m, 8192);
	check_fds_returned(c);
}

/*
 * One read scattered over three buffers (laid out in reverse memory order,
 * so that a read into one region would put bytes in the wrong place), the
 * last one past EOF: the file's bytes land in iov order, through O_DIRECT
 * where it works.  Fixed buffers registered over all three: a scattered
 * read does not use them, and must still be right.
 */
static void test_scatter(struct ctx *c, bool threads, bool fixed)
{
	static const uint32_t lens[3] = { 8192, 4096, 1u << 20 };
	size_t msize = (1u << 20) + 3 * 4096;
	unsigned char *m = mmap(NULL, msize, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct dsfs_io *io = m == MAP_FAILED ? NULL :
			     engine(c, threads, 4, fixed ? m : NULL,
				    fixed ? msize : 0);
	struct treq t = { .c = c, .file = 5, .off = 4096,
			  .len = lens[0] + lens[1] + lens[2],
			  .flags = c->direct ? O_RDONLY | O_DIRECT : O_RDONLY };
	struct dsfs_io_req req = { .off = t.off, .done = on_done, .arg = &t,
				   .niov = 3 };
	struct dsfs_fdkey key = c->f[t.file].key;
	size_t at = 0, take;
	struct waiter w;
	unsigned i;

	if (!io || !(t.buf = malloc(t.len)))
		return;
	req.iov[2] = (struct iovec){ m, lens[2] };
	req.iov[1] = (struct iovec){ m + lens[2], lens[1] };
	req.iov[0] = (struct iovec){ m + lens[2] + lens[1], lens[0] };
	key.flags = (uint32_t)t.flags;
	t.w = &w;
	waiter_init(&w, 1);
	if (dsfs_fdpool_get(c->pool, &key, open_key, c, &req.fd))
		waiter_done(&w);
	else if (dsfs_io_submit(io, &req))
		dsfs_fdpool_put(c->pool, &req.fd), waiter_done(&w);
	waiter_wait(&w);
	for (i = 0; i < 3 && t.result > 0; i++, at += take) {
		take = (size_t)t.result - at < lens[i] ? (size_t)t.result - at
						      : lens[i];
		memcpy(t.buf + at, req.iov[i].iov_base, take);
	}
	CHECK(read_ok(&t));
	CHECK(t.result > (int)(lens[0] + lens[1])); /* it reached iov 2 */
	dsfs_io_free(io);
	munmap(m, msize);
	free(t.buf);
	check_fds_returned(c);
}

/* The short-read rules, white box: when to read on, when it is EOF. */
static void test_advance(struct ctx *c)
{
	int fd = open(c->f[5].path, O_RDONLY | O_CLOEXEC); /* 1 MiB + 123 */
	struct io_op op = { .req = { .fd.fd = fd }, .len = 8192 };

	CHECK(dsfs_io_advance(&op, -EINTR) && dsfs_io_advance(&op, -EAGAIN));
	CHECK(dsfs_io_advance(&op, 100) && op.done == 100); /* not EOF */
	CHECK(!dsfs_io_advance(&op, 8092) && op.result == 8192);
	op = (struct io_op){ .req = { .fd.fd = fd }, .len = 8192 };
	CHECK(dsfs_io_advance(&op, 100));
	CHECK(!dsfs_io_advance(&op, 0) && op.result == 100); /* EOF by 0 */
	op = (struct io_op){ .req = { .fd.fd = fd }, .len = 8192 };
	CHECK(!dsfs_io_advance(&op, -EIO) && op.result == -EIO);
	op = (struct io_op){ .req = { .fd.fd = fd }, .len = 8192 };
	CHECK(!dsfs_io_advance(&op, -EINVAL) && op.result == -EINVAL);
	/* O_DIRECT read short at an unaligned EOF, then the file grew. */
	op = (struct io_op){ .req = { .fd.fd = fd }, .len = 8192 };
	CHECK(dsfs_io_advance(&op, 100));
	CHECK(!dsfs_io_advance(&op, -EINVAL) && op.result == 100);
	/* Short at EOF: fstat says so, no read to see 0. */
	op = (struct io_op){
		.req = { .fd.fd = fd, .off = 1u << 20 }, .len = 8192
	};
	CHECK(!dsfs_io_advance(&op, 123) && op.result == 123);
	close(fd);
	/* What is left after a short read: from inside the second buffer. */
	op = (struct io_op){ .req = { .niov = 3 }, .len = 12288, .done = 5000 };
	op.req.iov[0] = (struct iovec){ (void *)0x10000, 4096 };
	op.req.iov[1] = (struct iovec){ (void *)0x20000, 4096 };
	op.req.iov[2] = (struct iovec){ (void *)0x30000, 4096 };
	dsfs_io_rest(&op);
	CHECK(op.nrest == 2 && op.rest[0].iov_base == (void *)(0x20000 + 904) &&
	      op.rest[0].iov_len == 3192 &&
	      op.rest[1].iov_base == (void *)0x30000 &&
	      op.rest[1].iov_len == 4096);
}

static void test_bad_cfg(struct ctx *c)
{
	struct dsfs_io_cfg cfg = { .depth = 0, .fdpool = c->pool };
	struct dsfs_io *io = (struct dsfs_io *)&cfg;
	char why[128] = "";

	CHECK(dsfs_io_new(&cfg, &io, why, sizeof(why)) == -EINVAL);
	CHECK(io == NULL && strstr(why, "depth 0"));
	cfg.depth = DSFS_IO_MAX_DEPTH + 1;
	CHECK(dsfs_io_new(&cfg, &io, why, sizeof(why)) == -EINVAL);
	cfg = (struct dsfs_io_cfg){ .depth = 1 };
	CHECK(dsfs_io_new(&cfg, &io, why, sizeof(why)) == -EINVAL);
}

/* ---- shutdown with reads queued and in flight ---- */

#define SHUT_READS 3000

/*
 * Every parent read chains a child read from its callback: children
 * submitted before the engine stops are read, the others refused with
 * -ESHUTDOWN (and never called back); either way exactly one outcome.
 * The engine is freed once a tenth of the parents are done: with many
 * reads queued, some in flight and chained submits on both sides of it.
 */
static void test_shutdown(struct ctx *c, bool threads)
{
	struct dsfs_io *io = engine(c, threads, 8, NULL, 0);
	struct treq *t = calloc(2 * SHUT_READS, sizeof(*t));
	unsigned char *buf = malloc(2 * SHUT_READS * 4096);
	unsigned i, bad = 0, queued = 0, submitted = 0;
	struct waiter w;

	waiter_init(&w, SHUT_READS);
	for (i = 0; io && i < 2 * SHUT_READS; i++) {
		t[i] = (struct treq){ .c = c,
				      .file = 5 + i % 2,
				      .len = 4096,
				      .off = (i * 4099u) % (2u << 20),
				      .flags = O_RDONLY,
				      .io = io,
				      .buf = buf + i * 4096 };
		if (i < SHUT_READS) {
			t[i].child = &t[SHUT_READS + i];
			t[i].w = &w;
		}
	}
	for (i = 0; io && i < SHUT_READS; i++)
		submitted += submit_one(io, &t[i]) == 0;
	if (io)
		waiter_wait_for(&w, SHUT_READS - SHUT_READS / 10);
	dsfs_io_free(io);
	waiter_destroy(&w);
	for (i = 0; io && i < SHUT_READS; i++) {
		bad += !read_ok(&t[i]);
		queued += t[i].child_queued;
		if (t[i].child_queued)
			bad += !read_ok(t[i].child);
		else
			bad += t[i].child->calls != 0;
	}
	CHECK(submitted == SHUT_READS && bad == 0);
	printf("shutdown %s: %u reads, %u chained reads accepted, %u bad\n",
	       threads ? "threads" : "uring", SHUT_READS, queued, bad);
	check_fds_returned(c);
	free(buf);
	free(t);
}

/* ---- fixed buffers: more than one 1 GiB piece; registration failure ---- */

static bool mem_available(size_t need)
{
	unsigned long long kib = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib * 1024 >= need;
}

static void read_into(struct ctx *c, struct dsfs_io *io, int flags,
		      unsigned char **bufs, const uint32_t *lens, unsigned n)
{
	struct treq t[8];
	struct waiter w;
	unsigned i;

	waiter_init(&w, n);
	for (i = 0; i < n; i++) {
		t[i] = (struct treq){ .c = c,
				      .w = &w,
				      .file = 6,
				      .off = i * 4096,
				      .len = lens[i],
				      .buf = bufs[i],
				      .flags = flags };
		if (submit_one(io, &t[i]))
			waiter_done(&w);
	}
	waiter_wait(&w);
	for (i = 0; i < n; i++)
		CHECK(read_ok(&t[i]));
}

/* Buffers in piece 0, across the 1 GiB boundary, and in piece 1. */
static void test_fixed_pieces(struct ctx *c)
{
	size_t size = (1ul << 30) + (8ul << 20);
	unsigned char *m, *bufs[3];
	static const uint32_t lens[3] = { 4u << 20, 2u << 20, 4u << 20 };
	struct dsfs_io_stats st;
	struct dsfs_io *io;

	if (!mem_available(4ul << 30) || c->uring_expected != 1) {
		printf("fixed pieces: skipped (needs io_uring and 4 GiB free)\n");
		return;
	}
	m = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return;
	bufs[0] = m + 4096;
	bufs[1] = m + (1ul << 30) - (1ul << 20);
	bufs[2] = m + (1ul << 30) + (2ul << 20) + 4096;
	io = engine(c, false, 4, m, size);
	if (io) {
		dsfs_io_get_stats(io, &st);
		printf("fixed pieces: registered %d\n", st.fixed);
		read_into(c, io, O_RDONLY, bufs, lens, 3);
		if (c->direct)
			read_into(c, io, O_RDONLY | O_DIRECT, bufs, lens, 3);
		dsfs_io_free(io);
	}
	munmap(m, size);
	check_fds_returned(c);
}

static void test_fixed_unregistrable(struct ctx *c)
{
	size_t size = 16u << 20;
	void *none = mmap(NULL, size, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	unsigned char *buf = NULL;
	uint32_t len = 1u << 20;
	struct dsfs_io_stats st;
	struct dsfs_io *io;

	if (none == MAP_FAILED || posix_memalign((void **)&buf, 4096, len))
		return;
	io = engine(c, false, 4, none, size); /* logs one line */
	if (io) {
		dsfs_io_get_stats(io, &st);
		CHECK(!st.fixed);
		read_into(c, io, O_RDONLY, &buf, &len, 1);
		dsfs_io_free(io);
	}
	check_fds_returned(c);
	munmap(none, size);
	free(buf);
}

/* ---- the real fallback: kernel.io_uring_disabled = 2 ---- */

static int sysctl_rw(const char *set, char *old, size_t oldlen)
{
	int fd = open(SYSCTL, set ? O_WRONLY : O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = set ? write(fd, set, strlen(set)) : read(fd, old, oldlen - 1);
	close(fd);
	if (n < 0)
		return -errno;
	if (!set)
		old[n] = '\0';
	return 0;
}

/*
 * The sysctl is machine-wide: hold it at 2 only while the engine starts,
 * under a lock file so that concurrent runs of this test do not restore
 * each other's "2".
 */
static void test_sysctl_fallback(struct ctx *c)
{
	char old[16] = "";
	struct dsfs_io *io = NULL;
	struct dsfs_io_stats st;
	int lock, ret;
	unsigned char *buf = NULL;
	uint32_t len = 1u << 20;

	if (geteuid() != 0 || sysctl_rw(NULL, old, sizeof(old))) {
		printf("io_uring_disabled fallback: skipped (needs root and " SYSCTL
		       ")\n");
		return;
	}
	lock = open(SYSCTL_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock < 0 || flock(lock, LOCK_EX) ||
	    sysctl_rw(NULL, old, sizeof(old))) {
		CHECK(!"cannot lock " SYSCTL_LOCK);
		return;
	}
	ret = sysctl_rw("2", NULL, 0);
	if (!ret) {
		struct dsfs_io_cfg cfg = { .depth = 16, .fdpool = c->pool };
		char why[256];

		if (dsfs_io_new(&cfg, &io, why, sizeof(why)))
			io = NULL;
		CHECK(sysctl_rw(old, NULL, 0) == 0); /* restore at once */
	}
	close(lock);
	if (ret) {
		printf("io_uring_disabled fallback: skipped (%s)\n",
		       strerror(-ret));
		return;
	}
	CHECK(io != NULL);
	if (!io || posix_memalign((void **)&buf, 4096, len))
		return;
	dsfs_io_get_stats(io, &st);
	CHECK(!st.uring);
	read_into(c, io, O_RDONLY, &buf, &len, 1);
	dsfs_io_free(io);
	check_fds_returned(c);
	free(buf);
	printf("io_uring_disabled fallback: uring %d\n", st.uring);
}

/* ---- setup ---- */

static int make_file(struct ctx *c, unsigned i)
{
	struct tfile *f = &c->f[i];
	uint64_t x = 0x9e3779b97f4a7c15ull * (i + 1);
	struct stat st;
	size_t k;
	int fd;

	snprintf(f->path, sizeof(f->path), "%s/f%u", c->dir, i);
	f->size = file_sizes[i];
	f->data = malloc(f->size + 1);
	for (k = 0; k < f->size; k++) { /* xorshift: no two files alike */
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		f->data[k] = (unsigned char)x;
	}
	fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, f->data, f->size) != (ssize_t)f->size ||
	    fstat(fd, &st))
		return -1;
	memset(f->data, 0, f->size); /* the reference is what pread reads */
	if (pread(fd, f->data, f->size, 0) != (ssize_t)f->size)
		return -1;
	close(fd);
	f->key = (struct dsfs_fdkey){ .dev = st.st_dev, .ino = st.st_ino };
	return 0;
}

/* Does O_DIRECT work here, and is a misaligned O_DIRECT read EINVAL? */
static void probe_direct(struct ctx *c)
{
	int fd = open(c->f[6].path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	void *buf;

	c->direct = fd >= 0;
	if (fd < 0 || posix_memalign(&buf, 4096, 8192)) {
		printf("O_DIRECT unsupported in %s: O_DIRECT cases skipped\n",
		       c->dir);
		return;
	}
	c->dio_strict = pread(fd, (char *)buf + 1, 4096, 0) < 0 &&
			errno == EINVAL;
	if (!c->dio_strict)
		printf("misaligned O_DIRECT reads succeed here: not tested\n");
	free(buf);
	close(fd);
}

static int setup(struct ctx *c)
{
	char val[16] = "";
	struct stat st;
	unsigned i;

	/* In the build tree: a disk filesystem, unlike a tmpfs /tmp. */
	strcpy(c->dir, "unit-io.XXXXXX");
	if (!mkdtemp(c->dir))
		return -1;
	for (i = 0; i < NFILES; i++)
		if (make_file(c, i))
			return -1;
	snprintf(c->f[NFILES].path, PATH_MAX, "%s", c->dir);
	if (stat(c->dir, &st))
		return -1;
	c->f[NFILES].key =
		(struct dsfs_fdkey){ .dev = st.st_dev, .ino = st.st_ino };
	probe_direct(c);
	c->uring_expected = -1;
	if (sysctl_rw(NULL, val, sizeof(val)) == 0)
		c->uring_expected = atoi(val) == 0 ||
				    (atoi(val) == 1 && geteuid() == 0);
	c->pool = dsfs_fdpool_new(POOL_CAP);
	return c->pool ? 0 : -1;
}

static void cleanup(struct ctx *c)
{
	unsigned i;

	for (i = 0; i < NFILES; i++) {
		if (c->f[i].path[0])
			unlink(c->f[i].path);
		free(c->f[i].data);
	}
	if (c->dir[0])
		rmdir(c->dir);
	dsfs_fdpool_free(c->pool);
}

static unsigned count_fds(void)
{
	char path[64];
	unsigned n = 0;
	int fd;

	for (fd = 0; fd < 1024; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n += access(path, F_OK) == 0;
	}
	return n;
}

int main(void)
{
	struct ctx *c = calloc(1, sizeof(*c));
	unsigned fds = count_fds();

	alarm(600); /* a hang fails the test instead of blocking make */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!c || setup(c)) {
		perror("unit-io: setup");
		if (c)
			cleanup(c);
		return 99;
	}
	test_bad_cfg(c);
	test_advance(c);
	test_variants(c);
	test_errors(c, false);
	test_errors(c, true);
	test_fault(c, false);
	test_fault(c, true);
	test_scatter(c, false, false);
	test_scatter(c, false, true);
	test_scatter(c, true, false);
	test_shutdown(c, false);
	test_shutdown(c, true);
	test_fixed_pieces(c);
	test_fixed_unregistrable(c);
	test_sysctl_fallback(c);
	cleanup(c);
	CHECK(count_fds() == fds); /* the engine leaks no fd either */
	free(c);
	return UNIT_DONE();
}
