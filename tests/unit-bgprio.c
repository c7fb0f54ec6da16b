// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * unit-bgprio: a thread goes to SCHED_IDLE and back to its own policy and
 * nice, only where the kernel lets it return (CAP_SYS_NICE, or a nice
 * within RLIMIT_NICE), and leaves a policy it did not start with alone.
 * A boosted thread runs at DSFS_BOOST_NICE while the shared word is less
 * than DSFS_BOOST_NS old and at its own nice otherwise (dsfs_boost_behind),
 * only where the kernel lets it lower its nice.  Each case in a child process (they
 * change its uid, capabilities, limits, nice and policy).
 */
#include "config.h"

#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bgprio.h"
#include "unit-check.h"

/* Idle and back: the kernel's policy follows, the nice is kept. */
static void round_trip(int nice)
{
	struct dsfs_bgprio b;

	dsfs_bgprio_init(&b);
	CHECK(b.can && !b.idle);
	dsfs_bgprio_set(&b, true);
	CHECK(b.idle && sched_getscheduler(0) == SCHED_IDLE);
	dsfs_bgprio_set(&b, true); /* no change */
	CHECK(b.can && b.idle);
	dsfs_bgprio_set(&b, false);
	CHECK(b.can && !b.idle && sched_getscheduler(0) == SCHED_OTHER);
	CHECK(getpriority(PRIO_PROCESS, 0) == nice);
}

/* Never idle: it could not come back, or its policy is not SCHED_OTHER. */
static void stays(int policy)
{
	struct dsfs_bgprio b;

	dsfs_bgprio_init(&b);
	CHECK(!b.can);
	dsfs_bgprio_set(&b, true);
	CHECK(!b.idle && sched_getscheduler(0) == policy);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Boosted after each note while it is recent, its own nice again once it
 * is DSFS_BOOST_NS old; no new note, no change. */
static void boost_cycle(int own)
{
	struct dsfs_boost b;
	uint64_t word = 0;

	CHECK(getpriority(PRIO_PROCESS, 0) == own);
	dsfs_boost_init(&b, &word);
	CHECK(b.can && !b.on);
	dsfs_boost_poll(&b); /* nothing noted yet */
	CHECK(!b.on && getpriority(PRIO_PROCESS, 0) == own);
	dsfs_boost_waited(&word, mono_ns());
	CHECK(word != 0);
	dsfs_boost_poll(&b);
	CHECK(b.on && getpriority(PRIO_PROCESS, 0) == DSFS_BOOST_NICE);
	dsfs_boost_poll(&b);
	CHECK(b.on && getpriority(PRIO_PROCESS, 0) == DSFS_BOOST_NICE);
	word -= DSFS_BOOST_NS; /* the note is that old now */
	dsfs_boost_poll(&b);
	CHECK(!b.on && getpriority(PRIO_PROCESS, 0) == own);
	dsfs_boost_poll(&b);
	CHECK(!b.on && getpriority(PRIO_PROCESS, 0) == own);
	dsfs_boost_waited(&word, mono_ns()); /* a new one */
	dsfs_boost_poll(&b);
	CHECK(b.on && getpriority(PRIO_PROCESS, 0) == DSFS_BOOST_NICE);
	word -= DSFS_BOOST_NS;
	dsfs_boost_poll(&b);
	CHECK(!b.on && b.can && getpriority(PRIO_PROCESS, 0) == own);
}

/* Behind while the last note is less than DSFS_BOOST_NS old; never with
 * no note or no word.  Any process may ask. */
static void behind(void)
{
	uint64_t word = 0, t;

	CHECK(!dsfs_boost_behind(NULL, mono_ns()));
	CHECK(!dsfs_boost_behind(&word, mono_ns()));
	dsfs_boost_waited(&word, mono_ns());
	t = word;
	CHECK(dsfs_boost_behind(&word, t));
	CHECK(dsfs_boost_behind(&word, t + DSFS_BOOST_NS - 1));
	CHECK(!dsfs_boost_behind(&word, t + DSFS_BOOST_NS));
	/* A note a coarse clock's tick ahead of the clock asked. */
	CHECK(dsfs_boost_behind(&word, t - 4000000));
}

/* Never boosted: it may not, or has no word, or a nice as low already. */
static void no_boost(const uint64_t *word_or_null)
{
	int own = getpriority(PRIO_PROCESS, 0);
	uint64_t word = 0;
	struct dsfs_boost b;

	dsfs_boost_init(&b, word_or_null);
	CHECK(!b.can);
	dsfs_boost_waited(&word, mono_ns());
	if (word_or_null)
		dsfs_boost_waited((uint64_t *)word_or_null, mono_ns());
	dsfs_boost_poll(&b);
	CHECK(!b.on && getpriority(PRIO_PROCESS, 0) == own);
}

static int nice_limit(rlim_t lim)
{
	struct rlimit rl = { lim, lim };

	return setrlimit(RLIMIT_NICE, &rl);
}

/* Root without CAP_SYS_NICE (a container's) and RLIMIT_NICE 0: the kernel
 * would not let it leave SCHED_IDLE, so it never goes there. */
static void root_without_cap(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = { 0 };
	struct sched_param sp = { .sched_priority = 0 };
	uint32_t bit = (uint32_t)1 << (CAP_SYS_NICE % 32);
	static uint64_t word;

	CHECK(nice_limit(0) == 0);
	CHECK(syscall(SYS_capget, &h, d) == 0);
	d[CAP_SYS_NICE / 32].effective &= ~bit;
	d[CAP_SYS_NICE / 32].permitted &= ~bit;
	CHECK(syscall(SYS_capset, &h, d) == 0);
	stays(SCHED_OTHER);
	no_boost(&word);
	/* What it avoids: once idle, the way back is refused. */
	CHECK(sched_setscheduler(0, SCHED_IDLE, &sp) == 0);
	CHECK(sched_setscheduler(0, SCHED_OTHER, &sp) == -1 && errno == EPERM);
}

static void root_cases(void)
{
	struct sched_param sp = { .sched_priority = 0 };

	static uint64_t word;

	CHECK(setpriority(PRIO_PROCESS, 0, 5) == 0);
	round_trip(5);
	boost_cycle(5);
	no_boost(NULL);
	CHECK(setpriority(PRIO_PROCESS, 0, DSFS_BOOST_NICE) == 0);
	no_boost(&word); /* as low already */
	CHECK(setpriority(PRIO_PROCESS, 0, 0) == 0);
	boost_cycle(0);
	CHECK(sched_setscheduler(0, SCHED_BATCH, &sp) == 0);
	no_boost(&word); /* not its policy */
	CHECK(sched_setscheduler(0, SCHED_OTHER, &sp) == 0);
	/* Unprivileged: RLIMIT_NICE 20 allows nice 0 (sched(7)), 0 none.
	 * Raising the limit takes CAP_SYS_RESOURCE, which a container's
	 * root may lack: then only the second. */
	CHECK(setpriority(PRIO_PROCESS, 0, 0) == 0);
	if (nice_limit(20 - DSFS_BOOST_NICE) == 0) {
		/* RLIMIT_NICE 30 allows nice -10: a boost without the
		 * capability. */
		CHECK(setuid(65534) == 0);
		round_trip(0);
		boost_cycle(0);
		CHECK(nice_limit(20) == 0); /* lowering needs no right */
		no_boost(&word);
	} else {
		fprintf(stderr, "unit-bgprio: RLIMIT_NICE cannot be raised here: the unprivileged return is not tried\n");
		CHECK(setuid(65534) == 0);
	}
	CHECK(nice_limit(0) == 0);
	stays(SCHED_OTHER);
	no_boost(&word);
	CHECK(sched_setscheduler(0, SCHED_BATCH, &sp) == 0);
	stays(SCHED_BATCH);
}

/* Run fn in a child: its failures become this process's. */
static void in_child(void (*fn)(void))
{
	int status;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		fn();
		_exit(UNIT_DONE());
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
}

static void user_case(void)
{
	static uint64_t word;
	struct rlimit rl;
	int own = getpriority(PRIO_PROCESS, 0);

	CHECK(getrlimit(RLIMIT_NICE, &rl) == 0);
	if (rl.rlim_cur == RLIM_INFINITY ||
	    20 - (long)rl.rlim_cur <= getpriority(PRIO_PROCESS, 0))
		round_trip(getpriority(PRIO_PROCESS, 0));
	else
		stays(SCHED_OTHER);
	if (own > DSFS_BOOST_NICE && (rl.rlim_cur == RLIM_INFINITY ||
				       20 - (long)rl.rlim_cur <= DSFS_BOOST_NICE))
		boost_cycle(own);
	else
		no_boost(&word);
}

int main(void)
{
	behind();
	in_child(geteuid() == 0 ? root_cases : user_case);
	if (geteuid() == 0)
		in_child(root_without_cap);
	return UNIT_DONE();
}
