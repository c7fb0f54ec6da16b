// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Logging sink shared by all modules.  The two settings are written once at
 * start-up, before worker threads exist, and only read afterwards; they are
 * process-wide by nature (stderr and syslog are), hence file-scope.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>

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

void dsfs_log(enum dsfs_log_level level, const char *fmt, ...)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (log_syslog)
		syslog(prio[level], "%s", msg);
	else
		fprintf(stderr, "dsfs: %s\n", msg);
}
