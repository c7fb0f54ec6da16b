// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Inode table (see inodes.h).  Sharded chained hash on (dev, ino); lookups
 * and reference changes take one shard mutex for O(1) work.  Each shard
 * allocates its inodes (each with its first name) and their other names
 * from its own slab (lib/slab.h): on a listed 1,000,000-file tree of
 * 23-character names, 128 bytes an inode where a malloc'd inode and name
 * took 176.  No FUSE headers here, so unit tests link this file directly.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "cache.h"
#include "inodes.h"
#include "slab.h"

#define INODE_SHARDS 64
#define FUSE_ROOT_NODEID 1

struct ishard {
	pthread_mutex_t lock;
	struct dsfs_inode **buckets;	/* protected by lock */
	size_t nbuckets;		/* power of two, protected by lock */
	size_t count;			/* protected by lock */
	struct dsfs_slab slab;		/* its inodes and names; own lock */
};

struct dsfs_inodes {
	struct dsfs_inode *root;
	struct ishard shards[INODE_SHARDS];
};

static uint64_t id_hash(uint64_t dev, uint64_t ino)
{
	uint64_t w[2] = { dev, ino };

	return XXH3_64bits(w, sizeof(w));
}

static struct ishard *shard_of(struct dsfs_inodes *t, uint64_t h)
{
	return &t->shards[h % INODE_SHARDS];
}

static size_t bucket_of(const struct ishard *s, uint64_t h)
{
	return (h / INODE_SHARDS) & (s->nbuckets - 1);
}

static size_t name_size(const char *name)
{
	return sizeof(struct dsfs_name) + strlen(name) + 1;
}

static struct dsfs_name *name_init(struct dsfs_name *w,
				   struct dsfs_inode *parent, const char *name)
{
	w->older = NULL;
	w->parent = parent;
	strcpy(w->name, name);
	return w;
}

static struct dsfs_name *name_alloc(struct ishard *s, struct dsfs_inode *parent,
				   const char *name)
{
	struct dsfs_name *w = dsfs_slab_alloc(&s->slab, name_size(name));

	return w ? name_init(w, parent, name) : NULL;
}

/* The name an inode was first found under, allocated with it. */
static struct dsfs_name *first_name(const struct dsfs_inode *in)
{
	return (struct dsfs_name *)(uintptr_t)(in + 1);
}

static size_t inode_size(const struct dsfs_inode *in)
{
	return sizeof(*in) + name_size(first_name(in)->name);
}

static const struct dsfs_name *where(const struct dsfs_inode *in)
{
	return __atomic_load_n(&in->where, __ATOMIC_ACQUIRE);
}

static struct dsfs_inode *inode_alloc(struct ishard *s,
				      struct dsfs_inode *parent,
				      const char *name, const struct stat *st,
				      uint64_t gen)
{
	struct dsfs_inode *in = dsfs_slab_alloc(&s->slab, sizeof(*in) +
						name_size(name));

	if (!in)
		return NULL;
	in->where = name_init(first_name(in), parent, name);
	in->hnext = NULL;
	in->refs = 1;
	in->dev = st->st_dev;
	in->ino = st->st_ino;
	in->gen = gen;
	in->type = (uint16_t)(st->st_mode & S_IFMT);
	in->size = (uint64_t)st->st_size;
	in->ctime_ns = (uint64_t)st->st_ctim.tv_sec * 1000000000u +
		       (uint64_t)st->st_ctim.tv_nsec;
	in->plan_when = DSFS_CACHE_KEEP; /* no news from the plan yet */
	in->report_seq = 0;
	in->more = NULL;
	in->lookup_state = DSFS_LOOKUP_NONE;
	return in;
}

/* Frees in, from shard s, and its names, dropping the references of all
 * but the front one on their parents; returns the front one's parent for
 * the caller to drop. */
static struct dsfs_inode *inode_free(struct dsfs_inodes *t, struct ishard *s,
				     struct dsfs_inode *in)
{
	struct dsfs_name *w = in->where, *older;
	struct dsfs_inode *parent = w->parent;
	bool front = true;

	for (; w; w = older, front = false) {
		older = w->older;
		if (!front) /* only inodes found under several names */
			dsfs_inodes_unref(t, w->parent, 1);
		if (w != first_name(in))
			dsfs_slab_free(&s->slab, w, name_size(w->name));
	}
	free(in->more);
	dsfs_slab_free(&s->slab, in, inode_size(in));
	return parent;
}

/* References saturate at REFS_PINNED: an inode that reached it (4 billion
 * lookups without a FORGET) is never freed.  Shard lock held. */
#define REFS_PINNED UINT32_MAX

static void refs_add(struct dsfs_inode *in, uint64_t n)
{
	in->refs = n >= REFS_PINNED - in->refs ? REFS_PINNED
					       : in->refs + (uint32_t)n;
}

struct dsfs_inodes *dsfs_inodes_new(const struct stat *root_st,
				     uint64_t root_gen)
{
	struct dsfs_inodes *t = calloc(1, sizeof(*t));
	unsigned i;

	if (!t)
		return NULL;
	for (i = 0; i < INODE_SHARDS; i++) {
		pthread_mutex_init(&t->shards[i].lock, NULL);
		dsfs_slab_init(&t->shards[i].slab);
	}
	for (i = 0; i < INODE_SHARDS; i++) {
		t->shards[i].nbuckets = 16;
		t->shards[i].buckets = calloc(16, sizeof(struct dsfs_inode *));
		if (!t->shards[i].buckets)
			goto fail;
	}
	/* The root lives outside the table: no child lookup can return it
	 * by identity, which keeps SOURCE's parent links acyclic. */
	t->root = inode_alloc(&t->shards[0], NULL, "", root_st, root_gen);
	if (!t->root)
		goto fail;
	return t;
fail:
	dsfs_inodes_free(t);
	return NULL;
}

/* Every inode and name goes with its shard's slab; only the state kept
 * apart is freed inode by inode. */
void dsfs_inodes_free(struct dsfs_inodes *t)
{
	struct dsfs_inode *in;
	unsigned i;
	size_t b;

	if (!t)
		return;
	if (t->root)
		free(t->root->more);
	for (i = 0; i < INODE_SHARDS; i++) {
		for (b = 0; t->shards[i].buckets && b < t->shards[i].nbuckets; b++)
			for (in = t->shards[i].buckets[b]; in; in = in->hnext)
				free(in->more);
		free(t->shards[i].buckets);
		dsfs_slab_destroy(&t->shards[i].slab);
		pthread_mutex_destroy(&t->shards[i].lock);
	}
	free(t);
}

struct dsfs_inode *dsfs_inodes_get(struct dsfs_inodes *t, uint64_t nodeid)
{
	if (nodeid == FUSE_ROOT_NODEID)
		return t->root;
	return (struct dsfs_inode *)(uintptr_t)nodeid;
}

uint64_t dsfs_inodes_nodeid(struct dsfs_inodes *t, struct dsfs_inode *inode)
{
	if (inode == t->root)
		return FUSE_ROOT_NODEID;
	return (uint64_t)(uintptr_t)inode;
}

/* Double the bucket array when chains average above 2.  Shard lock held. */
static void maybe_grow(struct ishard *s)
{
	size_t n = s->nbuckets * 2, b;
	struct dsfs_inode **nb;

	if (s->count <= s->nbuckets * 2)
		return;
	nb = calloc(n, sizeof(*nb));
	if (!nb)
		return; /* longer chains, still correct */
	for (b = 0; b < s->nbuckets; b++) {
		struct dsfs_inode *in = s->buckets[b], *next;

		for (; in; in = next) {
			size_t nbk = (id_hash(in->dev, in->ino) / INODE_SHARDS) &
				     (n - 1);

			next = in->hnext;
			in->hnext = nb[nbk];
			nb[nbk] = in;
		}
	}
	free(s->buckets);
	s->buckets = nb;
	s->nbuckets = n;
}

static struct dsfs_inode *find_locked(struct ishard *s, uint64_t h,
				      uint64_t dev, uint64_t ino, uint64_t gen)
{
	struct dsfs_inode *in = s->buckets[bucket_of(s, h)];

	while (in && (in->dev != dev || in->ino != ino || in->gen != gen))
		in = in->hnext;
	return in;
}

void dsfs_inodes_ref(struct dsfs_inodes *t, struct dsfs_inode *in, uint64_t n)
{
	struct ishard *s;

	if (in == t->root)
		return; /* never freed; its count is not tracked */
	s = shard_of(t, id_hash(in->dev, in->ino));
	pthread_mutex_lock(&s->lock);
	refs_add(in, n);
	pthread_mutex_unlock(&s->lock);
}

/*
 * Make parent/name in's front name: it is already, or an older name moves
 * to the front, or a new one is added (*named: the caller takes a reference
 * on parent for it).  Names are never freed while in lives, so a reader
 * holding an older one still builds a path.  false: out of memory.
 * Called with in's shard lock held.
 */
static bool name_front_locked(struct ishard *s, struct dsfs_inode *in,
			      struct dsfs_inode *parent, const char *name,
			      bool *named)
{
	struct dsfs_name *front = in->where, **pp, *w;

	*named = false;
	if (front->parent == parent && !strcmp(front->name, name))
		return true;
	for (pp = &front->older; (w = *pp); pp = &w->older) {
		if (w->parent == parent && !strcmp(w->name, name)) {
			*pp = w->older; /* readers never follow `older` */
			break;
		}
	}
	if (!w) {
		w = name_alloc(s, parent, name);
		if (!w)
			return false;
		*named = true;
	}
	w->older = front;
	__atomic_store_n(&in->where, w, __ATOMIC_RELEASE);
	return true;
}

struct dsfs_inode *dsfs_inodes_ref_child(struct dsfs_inodes *t,
					 struct dsfs_inode *parent,
					 const char *name,
					 const struct stat *st, uint64_t gen)
{
	uint64_t h = id_hash(st->st_dev, st->st_ino);
	struct ishard *s = shard_of(t, h);
	struct dsfs_inode *in, *fresh;
	bool named;

	if (st->st_dev == t->root->dev && st->st_ino == t->root->ino)
		return t->root; /* a hard link or bind mount back to SOURCE */
	pthread_mutex_lock(&s->lock);
	in = find_locked(s, h, st->st_dev, st->st_ino, gen);
	if (in) {
		if (!name_front_locked(s, in, parent, name, &named)) {
			pthread_mutex_unlock(&s->lock);
			return NULL;
		}
		refs_add(in, 1);
		pthread_mutex_unlock(&s->lock);
		/* As below: the kernel holds parent throughout. */
		if (named)
			dsfs_inodes_ref(t, parent, 1);
		return in;
	}
	pthread_mutex_unlock(&s->lock);

	fresh = inode_alloc(s, parent, name, st, gen);
	if (!fresh)
		return NULL;
	pthread_mutex_lock(&s->lock);
	in = find_locked(s, h, st->st_dev, st->st_ino, gen);
	if (in) { /* lost a race with another lookup of the same file */
		refs_add(in, 1);
		pthread_mutex_unlock(&s->lock);
		inode_free(t, s, fresh);
		return in;
	}
	fresh->hnext = s->buckets[bucket_of(s, h)];
	s->buckets[bucket_of(s, h)] = fresh;
	s->count++;
	maybe_grow(s);
	pthread_mutex_unlock(&s->lock);
	/* The kernel holds a reference on parent for the whole lookup, so it
	 * cannot be freed before this one is added. */
	dsfs_inodes_ref(t, parent, 1);
	return fresh;
}

void dsfs_inodes_unref(struct dsfs_inodes *t, struct dsfs_inode *in,
		       uint64_t n)
{
	while (in && in != t->root) {
		uint64_t h = id_hash(in->dev, in->ino);
		struct ishard *s = shard_of(t, h);
		struct dsfs_inode **pp, *parent;

		pthread_mutex_lock(&s->lock);
		if (in->refs != REFS_PINNED)
			in->refs = in->refs > n ? in->refs - (uint32_t)n : 0;
		if (in->refs) {
			pthread_mutex_unlock(&s->lock);
			return;
		}
		pp = &s->buckets[bucket_of(s, h)];
		while (*pp != in)
			pp = &(*pp)->hnext;
		*pp = in->hnext;
		s->count--;
		pthread_mutex_unlock(&s->lock);
		parent = inode_free(t, s, in);
		in = parent; /* drop the child's reference on its parent */
		n = 1;
	}
}

/* One pass from the leaf up, right to left into buf, then moved to its
 * start: names read once each, whatever lookups change meanwhile. */
int dsfs_inodes_path(const struct dsfs_inode *in, char *buf, size_t size)
{
	const struct dsfs_name *w = where(in);
	size_t pos, l;

	if (!w->parent) {
		if (size < 2)
			return -ENAMETOOLONG;
		strcpy(buf, ".");
		return 0;
	}
	if (!size)
		return -ENAMETOOLONG;
	pos = size - 1;
	buf[pos] = '\0';
	for (; w->parent; w = where(w->parent)) {
		l = strlen(w->name);
		if (pos < l + (pos < size - 1))
			return -ENAMETOOLONG;
		if (pos < size - 1)
			buf[--pos] = '/';
		pos -= l;
		memcpy(buf + pos, w->name, l);
	}
	memmove(buf, buf + pos, size - pos);
	return 0;
}

const char *dsfs_inodes_name(const struct dsfs_inode *in)
{
	return where(in)->name;
}

/* The live inode for (dev, ino), with `refs` more references; NULL if
 * none.  The root is never freed, and unref ignores it. */
static struct dsfs_inode *find_live(struct dsfs_inodes *t, uint64_t dev,
				    uint64_t ino, uint64_t gen, uint64_t refs)
{
	uint64_t h = id_hash(dev, ino);
	struct ishard *s = shard_of(t, h);
	struct dsfs_inode *in;

	if (dev == t->root->dev && ino == t->root->ino)
		return t->root;
	pthread_mutex_lock(&s->lock);
	in = find_locked(s, h, dev, ino, gen);
	if (in)
		refs_add(in, refs);
	pthread_mutex_unlock(&s->lock);
	return in;
}

int dsfs_inodes_renamed(struct dsfs_inodes *t, uint64_t dev, uint64_t ino,
			uint64_t gen, struct dsfs_inode *parent,
			const char *name)
{
	uint64_t h = id_hash(dev, ino);
	struct ishard *s = shard_of(t, h);
	struct dsfs_inode *in;
	bool named = false, ok;

	pthread_mutex_lock(&s->lock);
	in = find_locked(s, h, dev, ino, gen);
	ok = !in || name_front_locked(s, in, parent, name, &named);
	pthread_mutex_unlock(&s->lock);
	if (!in)
		return -ENOENT;
	if (named) /* the new name holds its parent, as a lookup's does */
		dsfs_inodes_ref(t, parent, 1);
	return ok ? 0 : -ENOMEM;
}

int dsfs_inodes_unlinked(struct dsfs_inodes *t, uint64_t dev, uint64_t ino,
			 uint64_t gen, const struct dsfs_inode *parent,
			 const char *name)
{
	uint64_t h = id_hash(dev, ino);
	struct ishard *s = shard_of(t, h);
	struct dsfs_inode *in;
	struct dsfs_name *front, *w;
	int err = -ENOENT;

	pthread_mutex_lock(&s->lock);
	in = find_locked(s, h, dev, ino, gen);
	if (in) {
		front = in->where;
		err = 0;
		if (front->older && front->parent == parent &&
		    !strcmp(front->name, name)) {
			/* The next name to the front, the gone one last:
			 * readers never follow `older`. */
			for (w = front->older; w->older; w = w->older)
				;
			w->older = front;
			__atomic_store_n(&in->where, front->older,
					 __ATOMIC_RELEASE);
			front->older = NULL;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

int dsfs_inodes_find(struct dsfs_inodes *t, uint64_t dev, uint64_t ino,
		     uint64_t gen, uint64_t *nodeid)
{
	struct dsfs_inode *in = find_live(t, dev, ino, gen, 0);

	if (!in)
		return -ENOENT;
	*nodeid = dsfs_inodes_nodeid(t, in);
	return 0;
}

struct dsfs_inode *dsfs_inodes_find_ref(struct dsfs_inodes *t, uint64_t dev,
					uint64_t ino, uint64_t gen)
{
	return find_live(t, dev, ino, gen, 1);
}

bool dsfs_inodes_held(struct dsfs_inodes *t, const struct dsfs_inode *parent,
		      const char *name, uint64_t dev, uint64_t ino,
		      uint64_t *gen)
{
	uint64_t h = id_hash(dev, ino);
	struct ishard *s = shard_of(t, h);
	const struct dsfs_inode *in;

	pthread_mutex_lock(&s->lock);
	for (in = s->buckets[bucket_of(s, h)]; in; in = in->hnext) {
		if (in->dev == dev && in->ino == ino && in->refs &&
		    in->where->parent == parent &&
		    !strcmp(in->where->name, name)) {
			*gen = in->gen;
			break;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return in != NULL;
}

struct dsfs_inode_more *dsfs_inodes_more(struct dsfs_inode *in)
{
	struct dsfs_inode_more *m = __atomic_load_n(&in->more,
						    __ATOMIC_ACQUIRE), *fresh;

	if (m)
		return m;
	fresh = calloc(1, sizeof(*fresh));
	if (!fresh)
		return NULL;
	/* Release: the zeroed fields before the pointer; a loser frees its
	 * own and takes the winner's (acquire). */
	if (__atomic_compare_exchange_n(&in->more, &m, fresh, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return fresh;
	free(fresh);
	return m;
}

uint64_t dsfs_inodes_count(struct dsfs_inodes *t)
{
	uint64_t n = 1;
	unsigned i;

	for (i = 0; i < INODE_SHARDS; i++) {
		pthread_mutex_lock(&t->shards[i].lock);
		n += t->shards[i].count;
		pthread_mutex_unlock(&t->shards[i].lock);
	}
	return n;
}
