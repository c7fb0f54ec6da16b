// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A WeightedRandomSampler's weights file (weights.h).  torch 1.13's
 * multinomial with replacement (CPU, one distribution) sums the weights in
 * order in doubles, divides each running sum by the total, and places each
 * draw u in [0, 1) at the first index whose sum is >= u: the sampler then
 * needs only this array (sampler.c).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "weights.h"

static int refuse(char *why, size_t whylen, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	dsfs_parse_oneline(why);
	return err;
}

/* One line's weight (spaces around it allowed, as float() allows them):
 * 0, or -EINVAL when the line is not one finite number >= 0. */
static int weight_of(const char *line, double *w)
{
	char *end;

	errno = 0;
	*w = strtod(line, &end);
	if (end == line)
		return -EINVAL;
	while (*end == ' ' || *end == '\t' || *end == '\r')
		end++;
	if (*end || (errno == ERANGE && isinf(*w)))
		return -EINVAL;
	return isfinite(*w) && *w >= 0 ? 0 : -EINVAL; /* -0.0 is 0 */
}

/* Read the lines of f into c (n at most), summing them: the count read,
 * or -errno with why filled. */
static int64_t read_sums(FILE *f, const char *path, uint64_t n, double *c,
			 char *why, size_t whylen)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	uint64_t i = 0;
	double w, sum = 0;
	int err = 0;

	while (!err && (len = getline(&line, &cap, f)) >= 0) {
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		if (i == n)
			err = refuse(why, whylen, -EINVAL, "weights=%s: more lines than the %llu samples of the data set (line %llu)",
				     path, (unsigned long long)n,
				     (unsigned long long)i + 1);
		else if (strlen(line) != (size_t)len || weight_of(line, &w))
			err = refuse(why, whylen, -EINVAL, "weights=%s: line %llu: \"%.40s\" is not a weight (a finite number >= 0, one a line)",
				     path, (unsigned long long)i + 1, line);
		else
			c[i++] = sum += w;
	}
	if (!err && ferror(f))
		err = refuse(why, whylen, -EIO, "weights=%s: cannot read: %s",
			     path, strerror(EIO));
	free(line);
	return err ? err : (int64_t)i;
}

int dsfs_weights_load(const char *path, uint64_t n, double **cum, char *why,
		      size_t whylen)
{
	FILE *f = fopen(path, "re");
	double *c = NULL, total;
	int64_t got;
	uint64_t i;

	*cum = NULL;
	if (!f)
		return refuse(why, whylen, -errno, "weights=%s: cannot open: %s",
			      path, strerror(errno));
	c = n ? malloc(n * sizeof(*c)) : NULL;
	if (n && !c) {
		fclose(f);
		return refuse(why, whylen, -ENOMEM, "weights=%s: %s", path,
			      strerror(ENOMEM));
	}
	got = read_sums(f, path, n, c, why, whylen);
	fclose(f);
	if (got >= 0 && (uint64_t)got != n)
		got = refuse(why, whylen, -EINVAL, "weights=%s: %lld weights for the %llu samples of the data set: give one a line, in its order",
			     path, (long long)got, (unsigned long long)n);
	total = got > 0 ? c[n - 1] : 0;
	if (got > 0 && !(total > 0 && isfinite(total)))
		got = refuse(why, whylen, -EINVAL, "weights=%s: the weights add up to %g: torch.multinomial needs a finite sum above 0",
			     path, total);
	if (got < 0) {
		free(c);
		return (int)got;
	}
	for (i = 0; i < n; i++)
		c[i] /= total;
	*cum = c;
	return 0;
}
