// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Going to the background (see detach.h): fuse_daemonize() lets the
 * command exit 0 as soon as the daemon has forked, before dsfs has set up
 * its cache, I/O engine and plan, and before the kernel's INIT is
 * answered; a failure after that point left nothing mounted and an exit
 * status of 0.  Here the command waits for the daemon to say it is ready
 * to serve, then checks that the mount answers, and exits with the result.
 *
 * The fork comes first, before the daemon sets anything up: memory
 * written before a fork is shared copy-on-write with the command, and
 * every page of it (the cache index, the layout, the inode table) would
 * then take a write fault in the first epoch, one at a time, long after
 * the command exited (a fault costs 16 to 22 us on the development VM).
 * The daemon keeps the terminal until it has mounted, so that what it
 * refuses while setting up is said there.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "detach.h"

#define FUSE_MAGIC 0x65735546 /* statfs f_type of a FUSE mount */

static pid_t daemon_pid;
static volatile sig_atomic_t stopped; /* a signal was passed on */

/* Ctrl-C (or a kill) of the waiting command stops the daemon too, which
 * has left the terminal's session by then: it unmounts and closes the
 * pipe, and the command says so. */
static void pass_on(int sig)
{
	int saved = errno;

	(void)sig;
	stopped = 1;
	kill(daemon_pid, SIGTERM);
	errno = saved;
}

/* A signal was passed on: wait until the daemon has exited (it is the
 * command's child until then), having unmounted if it had mounted. */
static void gone(void)
{
	while (waitpid(daemon_pid, NULL, 0) < 0 && errno == EINTR)
		;
	fprintf(stderr, "dsfs: stopped while starting; nothing is mounted\n");
	_exit(1);
}

/* The kernel refused the filesystem (its INIT failed): the daemon's
 * connection is gone, and it unmounts and exits.  Wait for that, 10 s at
 * most, so that the mount point is as it was when the command returns
 * (seen under load: still mounted as the command exited). */
static void settle(void)
{
	int i;

	for (i = 0; i < 1000; i++) {
		pid_t r = waitpid(daemon_pid, NULL, WNOHANG);

		if (r == daemon_pid || (r < 0 && errno != EINTR))
			return;
		usleep(10000);
	}
}

/* The signals that stop a start: SIGINT, SIGTERM and SIGHUP. */
static void stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
}

/* The command's side: the daemon's word, then the mount itself (a stat
 * waits for INIT; a refused INIT aborts the connection).  The stop
 * signals come in blocked (since before the fork), and are let in once
 * the handlers that pass them on are in place.  Never returns. */
static void wait_ready(int fd, const char *mountpoint, const sigset_t *old)
{
	struct sigaction sa = { .sa_handler = pass_on };
	sigset_t blocked;
	struct statfs sfs;
	struct stat st;
	ssize_t got;
	char c = 1;
	bool bad;
	int err;

	sigemptyset(&sa.sa_mask);
	stop_signals(&blocked);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigprocmask(SIG_SETMASK, old, NULL);
	do
		got = read(fd, &c, 1);
	while (got < 0 && errno == EINTR);
	if (got == 1 && c == 2)
		_exit(1); /* it said why on the terminal */
	if (got != 1 && stopped)
		gone();
	if (got != 1 || c != 0) {
		fprintf(stderr, "dsfs: the daemon stopped while starting; its messages are in the system log\n");
		_exit(1);
	}
	errno = 0;
	bad = stat(mountpoint, &st) < 0 || statfs(mountpoint, &sfs) < 0 ||
	      sfs.f_type != FUSE_MAGIC;
	err = errno;
	/* A signal passed on after the daemon's word stops a daemon that
	 * serves (or has yet to answer INIT): it unmounts.  One that comes
	 * later is not passed on: the mount is up, the command's work done. */
	sigprocmask(SIG_BLOCK, &blocked, NULL);
	if (stopped)
		gone();
	if (bad) {
		fprintf(stderr, "dsfs: MOUNTPOINT %s: the kernel did not take the filesystem (%s); the daemon's messages are in the system log\n",
			mountpoint, err ? strerror(err) : "not mounted");
		settle();
		_exit(1);
	}
	_exit(0);
}

/*
 * The stop signals are blocked across the fork: a Ctrl-C that came before
 * the command had its handlers would kill the command alone, leaving a
 * daemon that has left the session to serve its mount with nobody told
 * (seen when the machine is busy: the daemon mounts and detaches before
 * the command runs again).  Held until the handlers are in, it is passed
 * on.  The daemon takes the mask it had back at once: a signal before its
 * own handlers (which come before the mount) ends it with nothing mounted.
 */
int dsfs_detach_fork(const char *mountpoint, int *ready_fd)
{
	sigset_t stop, old;
	int p[2];
	pid_t pid;

	*ready_fd = -1;
	if (pipe2(p, O_CLOEXEC) < 0) {
		perror("dsfs: pipe");
		return -1;
	}
	stop_signals(&stop);
	sigprocmask(SIG_BLOCK, &stop, &old);
	pid = fork();
	if (pid > 0) {
		close(p[1]);
		daemon_pid = pid;
		wait_ready(p[0], mountpoint, &old);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		perror("dsfs: fork");
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[0]);
	*ready_fd = p[1];
	return 0;
}

static bool attached = true; /* the daemon has the terminal still */

int dsfs_detach(void)
{
	int null;

	if (setsid() < 0 || chdir("/") < 0) {
		perror("dsfs: detaching");
		return -1;
	}
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	attached = false;
	return 0;
}

void dsfs_detach_failed(int *ready_fd)
{
	char c = 2;

	if (*ready_fd < 0)
		return;
	if (attached && write(*ready_fd, &c, 1) != 1) {
		/* The command is gone: nothing waits for the word. */
	}
	close(*ready_fd);
	*ready_fd = -1;
}

void dsfs_detach_ready(int *ready_fd)
{
	char c = 0;

	if (*ready_fd < 0)
		return;
	if (write(*ready_fd, &c, 1) != 1) {
		/* The command is gone (killed): nothing waits for the word. */
	}
	close(*ready_fd);
	*ready_fd = -1;
}
