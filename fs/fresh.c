// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Freshness: notice changes made to SOURCE behind dsfs's back on this
 * machine and drop everything that could serve the old bytes: the cache's
 * entries, pooled fds, the kernel's pages and attributes of the inode
 * (notify_inval_inode) and, for names created, deleted or renamed over, the
 * kernel's dentry (notify_inval_entry).
 *
 * Source of truth: a fanotify filesystem mark on SOURCE's filesystem with
 * parent+name and target file-id reporting (Linux >= 5.17), so one mark
 * covers every file however many there are.  File ids are turned into
 * (st_dev, st_ino) with open_by_handle_at.  Both need CAP_SYS_ADMIN /
 * CAP_DAC_READ_SEARCH; without them, or for changes made by other machines
 * on a shared filesystem, freshness comes from the attribute timeout: a
 * lookup or getattr that sees a new size, mtime or ctime drops the file's
 * cached data (dsfs_fresh_check_attr).
 *
 * Threads: one notifier thread owns the fanotify fd; it calls into the
 * cache, the fd pool and libfuse's notify functions, all thread-safe.
 * dsfs_fresh_check_attr and dsfs_fresh_settled run on FUSE workers.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "dsfs.h"
#include "ident.h"
#include "inodes.h"
#include "log.h"

#define FRESH_EVENTS                                                         \
	(FAN_MODIFY | FAN_ATTRIB | FAN_CLOSE_WRITE | FAN_MOVED_FROM |        \
	 FAN_MOVED_TO | FAN_CREATE | FAN_DELETE | FAN_DELETE_SELF |          \
	 FAN_ONDIR)
#define NAME_EVENTS (FAN_MOVED_FROM | FAN_MOVED_TO | FAN_CREATE | FAN_DELETE)

/*
 * A read the kernel sent before a change was noticed may complete after
 * the kernel's pages were dropped, and leave a page of the old file (with
 * zeros past its old end) in the page cache under the new size.  Dropping
 * the pages once more a little later, when such reads are done, closes
 * that window.  At most AGAIN_MAX changes wait (more: the oldest goes at
 * once).
 */
#define AGAIN_MS 100
#define AGAIN_MAX 1024

struct dsfs_fresh {
	struct dsfs_fs *fs;
	struct fuse_session *se;
	int fan_fd;
	int mount_fd;		/* SOURCE, for open_by_handle_at (which
				   refuses O_PATH descriptors) */
	int stop_fd;		/* eventfd: written once to stop the thread */
	bool local;		/* SOURCE's filesystem has no other clients
				   whose changes go unreported */
	bool lost;		/* relaxed atomic: events were lost */
	/* Odd while the thread handles events it has read (see
	 * dsfs_fresh_settled); sequentially consistent. */
	uint64_t seq;
	pthread_t thread;
	/* Inodes whose kernel pages are dropped again AGAIN_MS after the
	 * change (a ring; the notifier thread's alone). */
	struct again {
		uint64_t nodeid;
		uint64_t due_ms;
	} again[AGAIN_MAX];
	unsigned again_head, again_len;
};

/* Identity of the object behind a file handle (its stat and generation),
 * or -errno (gone: ESTALE). */
static int fid_identity(struct dsfs_fresh *f, struct file_handle *fh,
			struct stat *st, uint64_t *gen)
{
	int fd = open_by_handle_at(f->mount_fd, fh, O_PATH | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0)
		err = -errno;
	*gen = err ? 0 : dsfs_ident_gen(fd, "");
	close(fd);
	return err;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Drop the kernel's pages of the waiting inodes that are due (all with
 * force); returns the poll timeout until the next one (-1: none). */
static int again_run(struct dsfs_fresh *f, bool force)
{
	uint64_t now = now_ms();
	struct again *a;

	while (f->again_len) {
		a = &f->again[f->again_head];
		if (!force && a->due_ms > now)
			return (int)(a->due_ms - now);
		fuse_lowlevel_notify_inval_inode(f->se, a->nodeid, 0, 0);
		f->again_head = (f->again_head + 1) % AGAIN_MAX;
		f->again_len--;
	}
	return -1;
}

static void again_add(struct dsfs_fresh *f, uint64_t nodeid)
{
	struct again *a;

	if (f->again_len == AGAIN_MAX) { /* full: the oldest goes now */
		a = &f->again[f->again_head];
		fuse_lowlevel_notify_inval_inode(f->se, a->nodeid, 0, 0);
		f->again_head = (f->again_head + 1) % AGAIN_MAX;
		f->again_len--;
	}
	a = &f->again[(f->again_head + f->again_len++) % AGAIN_MAX];
	a->nodeid = nodeid;
	a->due_ms = now_ms() + AGAIN_MS;
}

/*
 * Forget everything dsfs and the kernel hold for an object's contents: for
 * a file its cached data and fds, for a directory the kernel's listing;
 * attributes in both cases.
 */
static void drop_object(struct dsfs_fresh *f, const struct stat *st,
			uint64_t gen)
{
	struct dsfs_fs *fs = f->fs;
	uint64_t nodeid;

	/* Odd from here to the kernel's invalidation: a push overlapping it
	 * invalidates again after itself (push.c).  Only this thread writes;
	 * sequentially consistent, as push.c reads it. */
	__atomic_add_fetch(&fs->fresh_gen, 1, __ATOMIC_SEQ_CST);
	if (S_ISREG(st->st_mode)) {
		dsfs_cache_invalidate(fs->cache, st->st_dev, st->st_ino);
		dsfs_fdpool_forget(fs->fdpool, st->st_dev, st->st_ino);
	}
	if (dsfs_inodes_find(fs->inodes, st->st_dev, st->st_ino, gen,
			     &nodeid) == 0) {
		fuse_lowlevel_notify_inval_inode(f->se, nodeid, 0, 0);
		if (S_ISREG(st->st_mode))
			again_add(f, nodeid);
	}
	__atomic_add_fetch(&fs->fresh_gen, 1, __ATOMIC_SEQ_CST);
}

/* A name in a directory changed: the kernel must look it up again. */
static void drop_name(struct dsfs_fresh *f, struct file_handle *dir,
		      const char *name)
{
	uint64_t nodeid, gen;
	struct stat st;
	int err;

	if (!name[0] || !strcmp(name, "."))
		return;
	err = fid_identity(f, dir, &st, &gen);
	if (err || dsfs_inodes_find(f->fs->inodes, st.st_dev, st.st_ino, gen,
				    &nodeid))
		return; /* the kernel knows nothing under that directory */
	err = fuse_lowlevel_notify_inval_entry(f->se, nodeid, name, strlen(name));
	drop_object(f, &st, gen); /* its listing, size and times changed too */
	dsfs_debug("freshness: %s changed in directory %llu (%d)", name,
		   (unsigned long long)nodeid, err);
}

/* A file handle copied out of an event into aligned storage. */
union handle_buf {
	struct file_handle fh;
	char bytes[sizeof(struct file_handle) + MAX_HANDLE_SZ];
};

/* What an event's records name: for a rename, the moved object and its
 * new directory and name. */
struct event_ids {
	bool have_target, have_dir;
	struct stat target;
	uint64_t target_gen;
	union handle_buf dir;
	char name[NAME_MAX + 1];
};

/*
 * A name of an object changed (the event's dir/name and target): moved
 * there (FAN_MOVED_TO), the inode the kernel may hold for it (an open
 * file, a working directory) is reached by that name from now on, without
 * waiting for a lookup of it; unlinked (FAN_DELETE) while the file lives
 * on (a hard link: its file id still opens), the kernel's dentries of its
 * other names lead to the inode, which must no longer be reached by the
 * name gone.
 */
static void follow_name(struct dsfs_fresh *f, struct event_ids *ids,
			bool moved_to)
{
	struct dsfs_inodes *inodes = f->fs->inodes;
	struct dsfs_inode *parent;
	struct stat st;
	uint64_t gen;

	if (!ids->have_target || !ids->have_dir || !ids->name[0] ||
	    fid_identity(f, &ids->dir.fh, &st, &gen))
		return;
	parent = dsfs_inodes_find_ref(inodes, st.st_dev, st.st_ino, gen);
	if (!parent)
		return; /* the kernel holds nothing in that directory */
	/* The object's generation: an inode the kernel holds for an older
	 * file of the same number is left alone. */
	if (moved_to)
		dsfs_inodes_renamed(inodes, ids->target.st_dev,
				    ids->target.st_ino, ids->target_gen,
				    parent, ids->name);
	else
		dsfs_inodes_unlinked(inodes, ids->target.st_dev,
				     ids->target.st_ino, ids->target_gen,
				     parent, ids->name);
	dsfs_inodes_unref(inodes, parent, 1);
}

/*
 * One info record at rec (len bytes, unaligned: records are packed with
 * names in between).  Copies what it reads; name points into the record.
 */
static void handle_record(struct dsfs_fresh *f, uint64_t mask,
			  const char *rec, size_t len, struct event_ids *ids)
{
	struct fanotify_event_info_fid info;
	union handle_buf h;
	struct stat st;
	uint64_t gen;
	size_t hlen;

	memcpy(&info, rec, sizeof(info));
	memcpy(&h.fh, rec + sizeof(info), sizeof(h.fh));
	hlen = h.fh.handle_bytes;
	if (hlen > MAX_HANDLE_SZ || sizeof(info) + sizeof(h.fh) + hlen > len)
		return;
	memcpy(h.fh.f_handle, rec + sizeof(info) + sizeof(h.fh), hlen);
	if (info.hdr.info_type == FAN_EVENT_INFO_TYPE_FID) {
		if (fid_identity(f, &h.fh, &st, &gen) == 0) {
			drop_object(f, &st, gen);
			ids->target = st;
			ids->target_gen = gen;
			ids->have_target = true;
		}
	} else if (info.hdr.info_type == FAN_EVENT_INFO_TYPE_DFID_NAME &&
		   (mask & NAME_EVENTS)) {
		const char *name = rec + sizeof(info) + sizeof(h.fh) + hlen;
		size_t nlen = strnlen(name, len - (size_t)(name - rec));

		if (nlen == len - (size_t)(name - rec))
			return; /* no terminating NUL */
		drop_name(f, &h.fh, name);
		__atomic_add_fetch(&f->fs->names_changed, 1, __ATOMIC_RELAXED);
		if ((mask & (FAN_MOVED_TO | FAN_DELETE)) && nlen <= NAME_MAX) {
			memcpy(&ids->dir, &h, sizeof(h.fh) + hlen);
			memcpy(ids->name, name, nlen + 1);
			ids->have_dir = true;
		}
	}
}

/* One event of len bytes at ev (unaligned), metadata already copied. */
static void handle_event(struct dsfs_fresh *f,
			 const struct fanotify_event_metadata *m,
			 const char *ev)
{
	size_t off = m->metadata_len;
	struct fanotify_event_info_header hdr;
	struct event_ids ids;

	ids.have_target = ids.have_dir = false;

	while (off + sizeof(struct fanotify_event_info_fid) +
		       sizeof(struct file_handle) <= m->event_len) {
		memcpy(&hdr, ev + off, sizeof(hdr));
		if (hdr.len < sizeof(hdr) || off + hdr.len > m->event_len)
			break;
		if (hdr.len >= sizeof(struct fanotify_event_info_fid) +
				       sizeof(struct file_handle))
			handle_record(f, m->mask, ev + off, hdr.len, &ids);
		off += hdr.len;
	}
	if (m->mask & FAN_MOVED_TO)
		follow_name(f, &ids, true);
	if (m->mask & FAN_DELETE)
		follow_name(f, &ids, false);
}

static void *fresh_thread(void *arg)
{
	struct dsfs_fresh *f = arg;
	char buf[16384];
	struct pollfd pfd[2] = { { f->fan_fd, POLLIN, 0 },
				 { f->stop_fd, POLLIN, 0 } };

	for (;;) {
		struct fanotify_event_metadata m;
		size_t off;
		ssize_t n;

		if (poll(pfd, 2, again_run(f, false)) < 0 && errno != EINTR)
			break;
		if (pfd[1].revents)
			break;
		if (!pfd[0].revents)
			continue; /* a timeout: again_run() does the due ones */
		__atomic_add_fetch(&f->seq, 1, __ATOMIC_SEQ_CST);
		n = read(f->fan_fd, buf, sizeof(buf));
		if (n <= 0) {
			__atomic_add_fetch(&f->seq, 1, __ATOMIC_SEQ_CST);
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			break;
		}
		/* Events are packed back to back without alignment padding
		 * once names are reported: copy each header out. */
		for (off = 0; off + sizeof(m) <= (size_t)n; off += m.event_len) {
			memcpy(&m, buf + off, sizeof(m));
			if (m.event_len < sizeof(m) || off + m.event_len > (size_t)n)
				break;
			if (m.mask & FAN_Q_OVERFLOW) {
				dsfs_warn("freshness: change events lost (queue overflow)");
				/* never settled again (dsfs_fresh_settled) */
				__atomic_store_n(&f->lost, true,
						 __ATOMIC_RELAXED);
			} else {
				handle_event(f, &m, buf + off);
			}
		}
		__atomic_add_fetch(&f->seq, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

/*
 * Local filesystems, whose every change on this machine fanotify reports
 * (statfs f_type).  On others (NFS, Lustre, CephFS, a FUSE filesystem...)
 * other clients change files unseen.
 */
static bool local_fs(int fd)
{
	static const unsigned long types[] = {
		0x58465342,	/* XFS */
		0xEF53,		/* ext2/3/4 */
		0x9123683E,	/* Btrfs */
		0xF2F52010,	/* F2FS */
		0x2FC12FC1,	/* ZFS */
		0x01021994,	/* tmpfs */
		0x858458F6,	/* ramfs */
	};
	struct statfs sf;
	size_t i;

	if (fstatfs(fd, &sf) < 0)
		return false;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if ((unsigned long)sf.f_type == types[i])
			return true;
	return false;
}

/* The watch on dev's filesystem, if it reports every change made to it. */
static struct dsfs_fresh *watch_of(struct dsfs_fs *fs, uint64_t dev)
{
	struct dsfs_fresh *f = __atomic_load_n(&fs->fresh, __ATOMIC_ACQUIRE);

	if (!f || !f->local || dev != fs->root_dev ||
	    __atomic_load_n(&f->lost, __ATOMIC_RELAXED))
		return NULL;
	return f;
}

bool dsfs_fresh_mark(struct dsfs_fs *fs, uint64_t dev, uint64_t *mark)
{
	struct dsfs_fresh *f = watch_of(fs, dev);

	if (!f)
		return false;
	*mark = __atomic_load_n(&f->seq, __ATOMIC_SEQ_CST);
	return true;
}

/*
 * Every change made on this machine to a file on dev is reported to the
 * watch before the call that made it returns (fsnotify runs inside
 * write, truncate, fallocate...).  So when the watch's queue is empty and
 * the thread holds no event it read and has not handled, every change
 * made so far has been applied: cached data dropped, the kernel told.
 * seq is read around the queue's count, so that a read(2) of the queue
 * in between (the thread then holding events) is seen.  And when seq is
 * still what dsfs_fresh_mark() gave before a stat, no event was read since
 * and none waits: nothing on the filesystem changed after that mark.
 * False for another filesystem than SOURCE's, a filesystem with other
 * clients, no watch, or once events were lost (the queue overflowed).
 * O(1): one ioctl.
 */
bool dsfs_fresh_settled_at(struct dsfs_fs *fs, uint64_t dev, uint64_t *mark)
{
	struct dsfs_fresh *f = watch_of(fs, dev);
	uint64_t seq;
	int pending;

	if (!f)
		return false;
	seq = __atomic_load_n(&f->seq, __ATOMIC_SEQ_CST);
	if ((seq & 1) || ioctl(f->fan_fd, FIONREAD, &pending) < 0 || pending)
		return false;
	*mark = seq;
	return __atomic_load_n(&f->seq, __ATOMIC_SEQ_CST) == seq;
}

bool dsfs_fresh_settled(struct dsfs_fs *fs, uint64_t dev)
{
	uint64_t mark;

	return dsfs_fresh_settled_at(fs, dev, &mark);
}

int dsfs_fresh_start(struct dsfs_fs *fs, struct fuse_session *se,
		     struct dsfs_fresh **out)
{
	struct dsfs_fresh *f = calloc(1, sizeof(*f));
	int err;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	f->fs = fs;
	f->se = se;
	f->stop_fd = f->fan_fd = -1;
	f->mount_fd = open(fs->opts.source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (f->mount_fd < 0)
		goto fail;
	f->fan_fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK |
					  FAN_REPORT_DFID_NAME_TARGET,
				  O_RDONLY | O_CLOEXEC);
	if (f->fan_fd < 0 ||
	    fanotify_mark(f->fan_fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
			  FRESH_EVENTS, AT_FDCWD, fs->opts.source) < 0)
		goto fail;
	f->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (f->stop_fd < 0)
		goto fail;
	f->local = local_fs(f->mount_fd);
	err = pthread_create(&f->thread, NULL, fresh_thread, f);
	if (err) {
		errno = err;
		goto fail;
	}
	__atomic_store_n(&fs->fresh, f, __ATOMIC_RELEASE);
	*out = f;
	return 0;
fail:
	err = -errno;
	dsfs_warn("freshness: cannot watch %s for changes (%s); changes made behind dsfs's back are noticed only when attributes expire (attr_timeout)",
		  fs->opts.source, strerror(errno));
	if (f->fan_fd >= 0)
		close(f->fan_fd);
	if (f->mount_fd >= 0)
		close(f->mount_fd);
	if (f->stop_fd >= 0)
		close(f->stop_fd);
	free(f);
	return err;
}

void dsfs_fresh_stop(struct dsfs_fresh *f)
{
	uint64_t one = 1;

	if (!f)
		return;
	__atomic_store_n(&f->fs->fresh, NULL, __ATOMIC_RELEASE);
	if (write(f->stop_fd, &one, sizeof(one)) != sizeof(one))
		dsfs_warn("freshness: cannot stop the watcher: %s", strerror(errno));
	pthread_join(f->thread, NULL);
	close(f->fan_fd);
	close(f->mount_fd);
	close(f->stop_fd);
	free(f);
}
