// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * random_split()'s parts (see split.h).  The permutation is torch's
 * randperm(n) from a generator seeded with the split's seed and used for
 * nothing else: the sampler module's torch-random order of epoch 0 with
 * the generator given to the sampler alone (no base seed drawn first).
 * No state of its own: any thread, on values it owns.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "sampler.h"
#include "split.h"

/* Integers above this are refused as lengths: no data set has so many
 * samples, and below it a double holds every integer exactly. */
#define WHOLE_MAX (UINT64_C(1) << 53)

/* One length, s[0..len): a decimal integer, or a decimal fraction strtod
 * reads whole (digits, '.' and an exponent: no sign, hex, inf or nan). */
static int parse_value(const char *s, size_t len, double *v, bool *whole)
{
	char buf[64], *end;
	size_t i, digits = 0;

	if (!len || len >= sizeof(buf) || !(s[0] == '.' || (s[0] >= '0' &&
							     s[0] <= '9')))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	for (i = 0; i < len; i++) {
		bool sign = (buf[i] == '-' || buf[i] == '+') && i &&
			    (buf[i - 1] == 'e' || buf[i - 1] == 'E');

		if (buf[i] >= '0' && buf[i] <= '9')
			digits++;
		else if (!sign && !strchr(".eE", buf[i]))
			return -EINVAL;
	}
	*whole = digits == len;
	if (*whole) {
		uint64_t u;

		if (dsfs_parse_u64(buf, 0, WHOLE_MAX, &u))
			return -EINVAL;
		*v = (double)u;
		return 0;
	}
	errno = 0;
	*v = strtod(buf, &end);
	return *end || errno || !isfinite(*v) ? -EINVAL : 0;
}

int dsfs_split_parse(const char *lengths, const char *seed, const char *part,
		     struct dsfs_split *out, char *why, size_t whylen)
{
	const char *p = lengths, *end;
	uint64_t k = 0;

	memset(out, 0, sizeof(*out));
	out->text = lengths;
	if (!lengths)
		return seed || part ? dsfs_parse_refuse(why, whylen, "%s needs split= (random_split's lengths)",
							seed ? "split_seed=" : "split_part=") : 0;
	if (!seed)
		return dsfs_parse_refuse(why, whylen, "split=%s needs split_seed=S: random_split(ds, lengths, generator=torch.Generator().manual_seed(S)); without a generator it draws from torch's global one, which dsfs cannot know",
					 lengths);
	for (;; p = end + 1) {
		end = strchrnul(p, ':');
		if (out->nparts == DSFS_SPLIT_MAX_PARTS)
			return dsfs_parse_refuse(why, whylen, "split=%s: more than %d parts",
						 lengths, DSFS_SPLIT_MAX_PARTS);
		if (parse_value(p, (size_t)(end - p), &out->value[out->nparts],
				&out->whole[out->nparts]))
			return dsfs_parse_refuse(why, whylen, "split=%s: '%.*s' is not a length (a whole number or a fraction, as given to random_split; parts separated by ':')",
						 lengths, (int)(end - p), p);
		out->nparts++;
		if (!*end)
			break;
	}
	if (dsfs_seed_parse(seed, &out->seed) ||
	    !dsfs_seed_fits(&out->seed, INT64_MIN, UINT64_MAX))
		return dsfs_parse_refuse(why, whylen, "split_seed=%s: torch manual_seed() accepts only -2^63 <= seed < 2^64",
					 seed);
	if (part && dsfs_parse_u64(part, 0, out->nparts - 1, &k))
		return dsfs_parse_refuse(why, whylen, "split_part=%s: give the part the loader reads, from 0 to %u",
					 part, out->nparts - 1);
	out->part = (unsigned)k;
	return 0;
}

/* The sum of the lengths as Python 3.11's sum() makes it: exact while
 * every value so far is whole, then in doubles from left to right.
 * *whole: no fraction among them. */
static double python_sum(const struct dsfs_split *s, bool *whole)
{
	uint64_t exact = 0;
	double sum = 0;
	unsigned i;

	*whole = true;
	for (i = 0; i < s->nparts; i++) {
		if (*whole && s->whole[i]) {
			exact += (uint64_t)s->value[i];
			continue;
		}
		if (*whole)
			sum = (double)exact;
		*whole = false;
		sum += s->value[i];
	}
	return *whole ? (double)exact : sum;
}

/* math.isclose(a, 1) with its default rel_tol of 1e-9. */
static bool close_to_one(double a)
{
	return fabs(a - 1.0) <= 1e-9 * fmax(fabs(a), 1.0);
}

int dsfs_split_lengths(const struct dsfs_split *s, uint64_t n, uint64_t *len,
		       char *why, size_t whylen)
{
	uint64_t total = 0, i, rem;
	bool whole;
	double sum = python_sum(s, &whole);

	if (close_to_one(sum) && sum <= 1.0) {
		/* Fractions (none negative, so none above 1): floor(n * f)
		 * each, the remainder dealt from the first part on. */
		for (i = 0; i < s->nparts; i++) {
			len[i] = (uint64_t)floor((double)n * s->value[i]);
			total += len[i];
		}
		for (rem = total < n ? n - total : 0, i = 0; i < rem; i++)
			len[i % s->nparts]++;
		total += rem;
	} else {
		for (i = 0; i < s->nparts; i++) {
			if (!s->whole[i])
				return dsfs_parse_refuse(why, whylen, "split=%s: fractions that add up to %.17g, not 1; random_split takes fractions adding up to 1, or whole lengths adding up to the data set's %llu samples",
							 s->text, sum,
							 (unsigned long long)n);
			len[i] = (uint64_t)s->value[i];
			total += len[i];
		}
	}
	if (total != n)
		return dsfs_parse_refuse(why, whylen, "split=%s: the lengths add up to %llu, not the data set's %llu samples (random_split raises)",
					 s->text, (unsigned long long)total,
					 (unsigned long long)n);
	return 0;
}

int dsfs_split_indices(const struct dsfs_split *s, uint64_t n, uint32_t **idx,
		       uint64_t *count, char *why, size_t whylen)
{
	struct dsfs_sampler_cfg perm = {
		.kind = DSFS_SAMPLER_TORCH_RANDOM, .seed = s->seed,
		.sampler_generator = true, .world = 1,
	};
	uint64_t len[DSFS_SPLIT_MAX_PARTS], first = 0, got, i;
	uint32_t *order;
	int err = dsfs_split_lengths(s, n, len, why, whylen);

	if (err)
		return err;
	if (n >= DSFS_SAMPLER_TORCH_MAX_N) {
		snprintf(why, whylen, "split=%s: torch's randperm draws otherwise for %llu samples (%u or more): not predicted",
			 s->text, (unsigned long long)n,
			 DSFS_SAMPLER_TORCH_MAX_N);
		return -EFBIG;
	}
	err = dsfs_sampler_order(&perm, n, 0, 0, &order, &got);
	if (err) {
		snprintf(why, whylen, "split=%s: randperm(%llu): %s", s->text,
			 (unsigned long long)n, strerror(-err));
		return err;
	}
	for (i = 0; i < s->part; i++)
		first += len[i];
	/* The part's indices move to the front, in their order. */
	memmove(order, order + first, len[s->part] * sizeof(*order));
	*idx = order;
	*count = len[s->part];
	return 0;
}
