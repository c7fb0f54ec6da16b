// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Logging sink shared by all modules.  The two settings are written once at
 * start-up, before worker threads exist, and only read afterwards; they are
 * process-wide by nature (stderr and syslog are), hence file-scope.  Rate
 * limits live with their callers (struct dsfs_ratelimit), any thread.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>
#include <time.h>

#include "log.h"

static bool log_syslog;
static bool log_debug;

void dsfs_log_set_debug(bool on)
{
	log_debug = on;
}

bool dsfs_log_debug_enabled(void)
{
	return log_debug;
}

void dsfs_log_to_syslog(void)
{
	openlog("dsfs", LOG_PID, LOG_DAEMON);
	log_syslog = true;
}

/*
 * Copy msg into out (4 * strlen(msg) + 1 bytes) with every control byte
 * written as \xNN: messages quote what users gave (commands, file names),
 * and one message must stay one line that nobody can forge another after.
 */
static void escape(const char *msg, char *out)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p;

	for (p = (const unsigned char *)msg; *p; p++) {
		if (*p >= 0x20 && *p != 0x7f) {
			*out++ = (char)*p;
			continue;
		}
		*out++ = '\\';
		*out++ = 'x';
		*out++ = hex[*p >> 4];
		*out++ = hex[*p & 15];
	}
	*out = '\0';
}

void dsfs_log(enum dsfs_log_level level, const char *fmt, ...)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
	char msg[1024], out[4 * sizeof(msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	escape(msg, out);
	if (log_syslog)
		syslog(prio[level], "%s", out);
	else
		fprintf(stderr, "dsfs: %s\n", out);
}

/*
 * Relaxed atomics: the limit is approximate by design.  Two threads that
 * both see the window expire may both reset it, and a reset may race an
 * increment; either lets a message or two more through, never blocks one
 * that the limit allows, and loses no count of missed ones for long.
 */
bool dsfs_ratelimit(struct dsfs_ratelimit *rl, uint64_t *missed)
{
	struct timespec ts;
	uint64_t now, start;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec + 1; /* + 1: window 0 means none yet */
	start = __atomic_load_n(&rl->window, __ATOMIC_RELAXED);
	if (!start || now - start >= DSFS_LOG_INTERVAL) {
		if (__atomic_compare_exchange_n(&rl->window, &start, now, false,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			__atomic_store_n(&rl->count, 0, __ATOMIC_RELAXED);
	}
	if (__atomic_fetch_add(&rl->count, 1, __ATOMIC_RELAXED) >=
	    DSFS_LOG_BURST) {
		__atomic_add_fetch(&rl->missed, 1, __ATOMIC_RELAXED);
		return false;
	}
	*missed = __atomic_exchange_n(&rl->missed, 0, __ATOMIC_RELAXED);
	return true;
}
