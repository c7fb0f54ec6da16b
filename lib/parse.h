/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Strict parsers for option values.  Each returns 0 or -EINVAL/-ERANGE and
 * never accepts trailing garbage, signs where none are allowed, or empty
 * strings.  Pure functions: any thread may call them.
 */
#ifndef DSFS_PARSE_H
#define DSFS_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* Decimal unsigned integer in [min, max]. */
int dsfs_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Seconds as a non-negative decimal ("1", "0.5", "86400"), at most max. */
int dsfs_parse_seconds(const char *s, double max, double *out);

/*
 * A byte size: digits with an optional unit K, M, G or T (powers of 1024,
 * optionally followed by "iB" or "B"), or a percentage "N%" of total (pass
 * total = 0 to refuse percentages).  Overflow gives -ERANGE.
 */
int dsfs_parse_size(const char *s, uint64_t total, uint64_t *out);

/*
 * Replaces each control byte of s (below 0x20, and 0x7f) with '?', so that
 * a message quoting what a user typed stays one line.  O(length).
 */
void dsfs_parse_oneline(char *s);

/*
 * A refusal of a value the user gave: the message fmt, ... into why
 * (whylen bytes), made one line as dsfs_parse_oneline() makes it.
 * Returns -EINVAL, for `return dsfs_parse_refuse(why, whylen, ...)`.
 */
int dsfs_parse_refuse(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Writes a relative or absolute path in its plain form, in place: no empty
 * or "." components, no trailing slash ("./train//" -> "train", "./" ->
 * "."); ".." is kept for the caller to judge.  An empty s stays empty.
 */
void dsfs_parse_tidy_path(char *s);
/* The same for each of the ':'-separated paths in s (an empty one stays
 * empty). */
void dsfs_parse_tidy_paths(char *s);

#endif
