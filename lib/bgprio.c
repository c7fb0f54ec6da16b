// SPDX-License-Identifier: GPL-2.0-or-later
/* Background priority of a daemon thread (see bgprio.h). */
#include "config.h"

#include <errno.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bgprio.h"
#include "log.h"

/* Whether the calling thread has CAP_SYS_NICE in effect (root need not:
 * a container's root often lacks it). */
static bool may_nice_any(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = { 0 };

	return !syscall(SYS_capget, &h, d) &&
	       (d[CAP_SYS_NICE / 32].effective &
		((uint32_t)1 << (CAP_SYS_NICE % 32)));
}

/* Whether the calling thread may take nice `nice` (or leave SCHED_IDLE
 * for it): the kernel's rule, its can_nice(). */
static bool may_nice(int nice)
{
	struct rlimit rl;

	return may_nice_any() ||
	       (!getrlimit(RLIMIT_NICE, &rl) &&
		(rl.rlim_cur == RLIM_INFINITY ||
		 20 - (long)rl.rlim_cur <= nice));
}

/* The calling thread's nice, if its policy is SCHED_OTHER (the kernel's
 * policy, not glibc's cached one): false otherwise. */
static bool own_nice(int *nice)
{
	if (sched_getscheduler(0) != SCHED_OTHER)
		return false;
	errno = 0;
	*nice = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
	return !errno;
}

void dsfs_bgprio_init(struct dsfs_bgprio *b)
{
	int nice;

	b->idle = false;
	b->can = own_nice(&nice) && may_nice(nice);
}

void dsfs_bgprio_set(struct dsfs_bgprio *b, bool idle)
{
	struct sched_param sp = { .sched_priority = 0 };
	char name[16] = "";
	int err;

	if (!b->can || idle == b->idle)
		return;
	/* sched_setscheduler keeps the thread's nice for its return. */
	err = pthread_setschedparam(pthread_self(),
				    idle ? SCHED_IDLE : SCHED_OTHER, &sp);
	if (!err) {
		b->idle = idle;
		return;
	}
	b->can = false;
	if (b->idle) { /* init said it could: someone changed its rights */
		pthread_getname_np(pthread_self(), name, sizeof(name));
		dsfs_warn("%s: cannot leave idle priority (%s): it keeps it",
			  name, strerror(err));
	}
}

void dsfs_boost_init(struct dsfs_boost *b, const uint64_t *waited)
{
	*b = (struct dsfs_boost){ .waited = waited };
	b->can = waited && own_nice(&b->own) && b->own > DSFS_BOOST_NICE &&
		 may_nice(DSFS_BOOST_NICE);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void dsfs_boost_waited(uint64_t *waited, uint64_t now_ns)
{
	__atomic_store_n(waited, now_ns, __ATOMIC_RELAXED);
}

/* The rule of dsfs_boost_behind for a note w read already. */
static bool behind_at(uint64_t w, uint64_t now_ns)
{
	return w && now_ns < w + DSFS_BOOST_NS;
}

bool dsfs_boost_behind(const uint64_t *waited, uint64_t now_ns)
{
	return waited &&
	       behind_at(__atomic_load_n(waited, __ATOMIC_RELAXED), now_ns);
}

void dsfs_boost_poll(struct dsfs_boost *b)
{
	uint64_t w;
	bool on;

	if (!b->can)
		return;
	w = __atomic_load_n(b->waited, __ATOMIC_RELAXED);
	if (!b->on && w == b->seen)
		return; /* no note since it last looked */
	b->seen = w;
	/* Not a difference: a coarse clock's note may be a tick behind. */
	on = behind_at(w, mono_ns());
	if (on == b->on)
		return;
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid),
			on ? DSFS_BOOST_NICE : b->own)) {
		b->can = false; /* its rights changed: leave it as it is */
		return;
	}
	b->on = on;
}
