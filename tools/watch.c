// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dsfs-stats --watch SECONDS: rates over each interval, like `juicefs
 * stats` or `iostat -x SECONDS`.  On a terminal the screen is redrawn in
 * place (the rates, then the table); otherwise a header and then one line
 * per interval, flushed, for logs and pipes.  SIGINT and SIGTERM end it
 * with status 0: they are blocked and awaited with sigtimedwait() between
 * samples, so no handler and no shared flag are needed.  Single-threaded.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dsfs-stats.h"

#define CLEAR_HOME "\033[H\033[2J"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The growth of a counter over the interval (a counter that restarted,
 * as plan.* do when the plan changes, counts from 0). */
static double delta(const struct dsfs_snap *cur, const struct dsfs_snap *prev,
		    const char *key)
{
	double c = dsfs_snap_num(cur, key), p = dsfs_snap_num(prev, key);

	return c >= p ? c - p : c;
}

static void header(void)
{
	printf("%8s  %8s  %9s  %12s  %6s  %8s  %10s  %8s  %5s  %s\n", "time",
	       "reads/s", "read MB/s", "backing MB/s", "hit%", "stalls/s",
	       "lead files", "lead MiB", "epoch", "position");
}

/* One line: rates of cur over prev (dt seconds apart); "-" without prev. */
static void line(const struct dsfs_snap *cur, const struct dsfs_snap *prev,
		 double dt)
{
	char clock[16], hit[16] = "-", epoch[24] = "-", pos[48] = "-";
	double rb = prev ? delta(cur, prev, "read_bytes") : 0;
	time_t t = time(NULL);
	struct tm tm;

	strftime(clock, sizeof(clock), "%H:%M:%S", localtime_r(&t, &tm));
	if (rb > 0)
		snprintf(hit, sizeof(hit), "%.1f",
			 100.0 * delta(cur, prev, "hit_bytes") / rb);
	if (dsfs_snap_get(cur, "plan.epoch")) {
		snprintf(epoch, sizeof(epoch), "%.0f",
			 dsfs_snap_num(cur, "plan.epoch"));
		snprintf(pos, sizeof(pos), "%.0f/%.0f",
			 dsfs_snap_num(cur, "plan.position"),
			 dsfs_snap_num(cur, "plan.length"));
	}
	if (!prev || dt <= 0) {
		printf("%8s  %8s  %9s  %12s  %6s  %8s", clock, "-", "-", "-",
		       "-", "-");
	} else {
		printf("%8s  %8.1f  %9.1f  %12.1f  %6s  %8.1f", clock,
		       delta(cur, prev, "reads") / dt, rb / dt / 1e6,
		       delta(cur, prev, "backing_read_bytes") / dt / 1e6, hit,
		       delta(cur, prev, "stalls") / dt);
	}
	printf("  %10.0f  %8.1f  %5s  %s\n",
	       dsfs_snap_num(cur, "plan.lead_items"),
	       dsfs_snap_num(cur, "plan.lead_bytes") / (1 << 20), epoch, pos);
}

static void draw(const char *mnt, double interval, const struct dsfs_snap *cur,
		 const struct dsfs_snap *prev, double dt, bool tty)
{
	if (tty) {
		printf(CLEAR_HOME
		       "dsfs-stats %s: rates over %g s; Ctrl-C to quit\n\n",
		       mnt, interval);
		header();
	}
	line(cur, prev, dt);
	if (tty) {
		printf("\n");
		dsfs_render_table(cur, mnt);
	}
	fflush(stdout);
}

/* Wait until monotonic time `until` or a signal of set: the signal, or 0. */
static int wait_until(const sigset_t *set, double until)
{
	struct timespec ts;
	double left;
	int sig;

	for (;;) {
		left = until - now();
		if (left <= 0)
			return 0;
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		sig = sigtimedwait(set, NULL, &ts);
		if (sig > 0)
			return sig;
		if (errno == EAGAIN)
			return 0;
		/* EINTR: another signal (SIGCONT after a stop); wait on */
	}
}

static int fetch_or_say(const char *mnt, struct dsfs_snap *s)
{
	char why[512];
	int err;

	dsfs_snap_free(s);
	err = dsfs_snap_fetch(mnt, DSFS_STATS_XATTR, s);
	if (err)
		fprintf(stderr, "dsfs-stats: %s: %s\n", mnt,
			dsfs_snap_why(mnt, err, why, sizeof(why)));
	return err;
}

int dsfs_watch(const char *mnt, double interval)
{
	struct dsfs_snap a = { 0 }, b = { 0 }, *cur = &a, *prev = &b, *tmp;
	bool tty = isatty(STDOUT_FILENO);
	double t_prev, t_cur, next;
	sigset_t set;
	int rc = 1;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (fetch_or_say(mnt, prev))
		goto out;
	t_prev = next = now();
	if (tty)
		draw(mnt, interval, prev, NULL, 0, true);
	else
		header();
	fflush(stdout);
	for (;;) {
		next += interval;
		if (wait_until(&set, next)) {
			rc = 0;
			break;
		}
		if (fetch_or_say(mnt, cur))
			break;
		t_cur = now();
		draw(mnt, interval, cur, prev, t_cur - t_prev, tty);
		tmp = prev;
		prev = cur;
		cur = tmp;
		t_prev = t_cur;
		if (next < t_prev - interval)
			next = t_prev; /* fell behind (stopped): no burst */
	}
out:
	dsfs_snap_free(&a);
	dsfs_snap_free(&b);
	return rc;
}
