/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logging for every dsfs module.  Messages go to stderr until
 * dsfs_log_to_syslog() is called (the daemon does so when it detaches), then
 * to syslog(3) with ident "dsfs".  Thread-safe: each message is one write.
 */
#ifndef DSFS_LOG_H
#define DSFS_LOG_H

#include <stdbool.h>
#include <stdint.h>

enum dsfs_log_level { DSFS_LOG_ERR, DSFS_LOG_WARN, DSFS_LOG_INFO, DSFS_LOG_DEBUG };

/* Debug messages are dropped unless enabled (dsfs -d). */
void dsfs_log_set_debug(bool on);
bool dsfs_log_debug_enabled(void);
/* Switch to syslog; call before any thread that logs is started. */
void dsfs_log_to_syslog(void);
void dsfs_log(enum dsfs_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A rate limit for one kind of message (one per source of floods: read
 * errors, plan changes): at most DSFS_LOG_BURST messages per
 * DSFS_LOG_INTERVAL seconds.  Zero-initialised.  Thread-safe, lock-free.
 */
#define DSFS_LOG_BURST 20
#define DSFS_LOG_INTERVAL 60
struct dsfs_ratelimit {
	uint64_t window;	/* relaxed atomic: second the window began */
	uint32_t count;		/* relaxed atomic: messages in it */
	uint64_t missed;	/* relaxed atomic: suppressed since last */
};
/* true: log now; *missed is how many were suppressed before this one (say
 * so in the message).  false: drop it (it is counted). */
bool dsfs_ratelimit(struct dsfs_ratelimit *rl, uint64_t *missed);

#define dsfs_err(...) dsfs_log(DSFS_LOG_ERR, __VA_ARGS__)
#define dsfs_warn(...) dsfs_log(DSFS_LOG_WARN, __VA_ARGS__)
#define dsfs_info(...) dsfs_log(DSFS_LOG_INFO, __VA_ARGS__)
#define dsfs_debug(...)                                                        \
	do {                                                                   \
		if (dsfs_log_debug_enabled())                                  \
			dsfs_log(DSFS_LOG_DEBUG, __VA_ARGS__);                 \
	} while (0)

#endif
