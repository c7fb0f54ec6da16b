// SPDX-License-Identifier: GPL-2.0-or-later
/* Background priority of a daemon thread (see bgprio.h). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bgprio.h"

void dsfs_bgprio_init(struct dsfs_bgprio *b)
{
	struct sched_param sp;
	struct rlimit rl;
	int policy, nice;

	b->can = b->idle = false;
	if (pthread_getschedparam(pthread_self(), &policy, &sp) ||
	    policy != SCHED_OTHER)
		return;
	errno = 0;
	nice = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
	if (errno)
		return;
	b->can = geteuid() == 0 ||
		 (!getrlimit(RLIMIT_NICE, &rl) &&
		  (rl.rlim_cur == RLIM_INFINITY ||
		   20 - (long)rl.rlim_cur <= nice));
}

void dsfs_bgprio_set(struct dsfs_bgprio *b, bool idle)
{
	struct sched_param sp = { .sched_priority = 0 };

	if (!b->can || idle == b->idle)
		return;
	/* sched_setscheduler keeps the thread's nice for its return. */
	if (!pthread_setschedparam(pthread_self(),
				   idle ? SCHED_IDLE : SCHED_OTHER, &sp))
		b->idle = idle;
	else
		b->can = false;
}
