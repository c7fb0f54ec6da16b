/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logging for every dsfs module.  Messages go to stderr until
 * dsfs_log_to_syslog() is called (the daemon does so when it detaches), then
 * to syslog(3) with ident "dsfs".  Thread-safe: each message is one write.
 */
#ifndef DSFS_LOG_H
#define DSFS_LOG_H

#include <stdbool.h>

enum dsfs_log_level { DSFS_LOG_ERR, DSFS_LOG_WARN, DSFS_LOG_INFO, DSFS_LOG_DEBUG };

/* Debug messages are dropped unless enabled (dsfs -d). */
void dsfs_log_set_debug(bool on);
bool dsfs_log_debug_enabled(void);
/* Switch to syslog; call before any thread that logs is started. */
void dsfs_log_to_syslog(void);
void dsfs_log(enum dsfs_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define dsfs_err(...) dsfs_log(DSFS_LOG_ERR, __VA_ARGS__)
#define dsfs_warn(...) dsfs_log(DSFS_LOG_WARN, __VA_ARGS__)
#define dsfs_info(...) dsfs_log(DSFS_LOG_INFO, __VA_ARGS__)
#define dsfs_debug(...)                                                        \
	do {                                                                   \
		if (dsfs_log_debug_enabled())                                  \
			dsfs_log(DSFS_LOG_DEBUG, __VA_ARGS__);                 \
	} while (0)

#endif
