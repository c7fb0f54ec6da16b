// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Option value parsers (see parse.h).  No state; callable from any thread.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

/* Digits only, then strtoull; rejects "", "+1", "-1", " 1", "1x". */
static int parse_digits(const char *s, const char **end, uint64_t *out)
{
	char *e;

	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &e, 10);
	if (errno == ERANGE)
		return -ERANGE;
	*end = e;
	return 0;
}

int dsfs_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *end;
	uint64_t v;
	int err = parse_digits(s, &end, &v);

	if (err)
		return err;
	if (*end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int dsfs_parse_seconds(const char *s, double max, double *out)
{
	char *e;
	double v;

	/* Plain decimals only: strtod alone would take "0x1p3" or "1e3". */
	if (!isdigit((unsigned char)s[0]) || s[strspn(s, "0123456789.")])
		return -EINVAL;
	errno = 0;
	v = strtod(s, &e);
	if (*e || e == s)
		return -EINVAL;
	if (errno == ERANGE || !isfinite(v) || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

static int unit_shift(const char *u, unsigned *shift)
{
	static const char units[] = "KMGT";
	const char *p;

	if (!*u) {
		*shift = 0;
		return 0;
	}
	p = strchr(units, toupper((unsigned char)u[0]));
	if (!p || !u[0])
		return -EINVAL;
	if (u[1] && strcmp(u + 1, "B") && strcmp(u + 1, "iB"))
		return -EINVAL;
	*shift = 10 * (unsigned)(p - units + 1);
	return 0;
}

int dsfs_parse_size(const char *s, uint64_t total, uint64_t *out)
{
	const char *end;
	unsigned shift;
	uint64_t v;
	int err = parse_digits(s, &end, &v);

	if (err)
		return err;
	if (end[0] == '%' && !end[1]) {
		if (!total)
			return -EINVAL;
		if (v > 100)
			return -ERANGE;
		/* floor(total * v / 100) exactly, without overflow: a
		   double would round, and overflow near 2^64. */
		*out = total / 100 * v + total % 100 * v / 100;
		return 0;
	}
	err = unit_shift(end, &shift);
	if (err)
		return err;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = v << shift;
	return 0;
}

void dsfs_parse_oneline(char *s)
{
	for (; *s; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
	}
}

int dsfs_parse_refuse(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	if (whylen)
		dsfs_parse_oneline(why);
	return -EINVAL;
}

void dsfs_parse_tidy_path(char *s)
{
	char *out = s;
	const char *p = s;
	bool absolute = *s == '/';

	if (!*s)
		return;
	if (absolute)
		*out++ = *p++;
	while (*p) {
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);

		if (n && !(n == 1 && *p == '.')) {
			if (out > s + absolute)
				*out++ = '/';
			memmove(out, p, n);
			out += n;
		}
		p = *end ? end + 1 : end;
	}
	if (out == s)
		*out++ = '.';
	*out = '\0';
}

void dsfs_parse_tidy_paths(char *s)
{
	char *out = s, *p = s, *end;
	size_t n;
	bool last;

	for (;; p = end + 1) {
		end = strchrnul(p, ':');
		last = !*end;
		*end = '\0';
		dsfs_parse_tidy_path(p); /* in place: never longer */
		n = strlen(p);
		memmove(out, p, n);
		out += n;
		if (last)
			break;
		*out++ = ':';
	}
	*out = '\0';
}
