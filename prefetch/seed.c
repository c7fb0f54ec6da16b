// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Exact integer seeds (see seed.h): a small sign-magnitude bignum with just
 * the operations seeds need: parse, add an int64, compare, print.
 * Pure functions on caller-owned values: any thread, no locks.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "seed.h"

static void trim(struct dsfs_seed *s)
{
	while (s->nwords && !s->w[s->nwords - 1])
		s->nwords--;
	if (!s->nwords)
		s->negative = false;
}

/* |s| = |s| * mul + add; -ERANGE (s garbled) on overflow of the top word. */
static int mag_muladd(struct dsfs_seed *s, uint32_t mul, uint32_t add)
{
	uint64_t carry = add;
	uint32_t i;

	for (i = 0; i < s->nwords; i++) {
		carry += (uint64_t)s->w[i] * mul;
		s->w[i] = (uint32_t)carry;
		carry >>= 32;
	}
	if (carry) {
		if (s->nwords == DSFS_SEED_WORDS)
			return -ERANGE;
		s->w[s->nwords++] = (uint32_t)carry;
	}
	return 0;
}

/* The canonical decimal text: divide a copy of |s| by 10^9 until zero. O(w^2). */
static void set_text(struct dsfs_seed *s)
{
	uint32_t q[DSFS_SEED_WORDS], rems[DSFS_SEED_TEXT_MAX / 9 + 1];
	uint32_t n = s->nwords, nr = 0, i;
	char *p = s->text;

	memcpy(q, s->w, n * sizeof(q[0]));
	do {
		uint64_t r = 0;

		for (i = n; i-- > 0;) {
			r = (r << 32) | q[i];
			q[i] = (uint32_t)(r / 1000000000U);
			r %= 1000000000U;
		}
		rems[nr++] = (uint32_t)r;
		while (n && !q[n - 1])
			n--;
	} while (n);
	if (s->negative)
		*p++ = '-';
	p += sprintf(p, "%u", rems[--nr]);
	while (nr)
		p += sprintf(p, "%09u", rems[--nr]);
}

int dsfs_seed_parse(const char *s, struct dsfs_seed *out)
{
	struct dsfs_seed v = { .negative = false };
	const char *p = s;

	if (*p == '-') {
		v.negative = true;
		p++;
	}
	if (!*p)
		return -EINVAL;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
	}
	for (p = s + v.negative; *p; p++) {
		if (mag_muladd(&v, 10, (uint32_t)(*p - '0')))
			return -ERANGE;
	}
	trim(&v);
	set_text(&v);
	*out = v;
	return 0;
}

void dsfs_seed_from_i64(int64_t v, struct dsfs_seed *out)
{
	uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	memset(out, 0, sizeof(*out));
	out->negative = v < 0;
	out->w[0] = (uint32_t)m;
	out->w[1] = (uint32_t)(m >> 32);
	out->nwords = 2;
	trim(out);
	set_text(out);
}

/* |s| as a uint64, or false when it needs more than 64 bits. */
static bool mag_u64(const struct dsfs_seed *s, uint64_t *m)
{
	if (s->nwords > 2)
		return false;
	*m = (s->nwords > 0 ? s->w[0] : 0) |
	     (s->nwords > 1 ? (uint64_t)s->w[1] << 32 : 0);
	return true;
}

bool dsfs_seed_fits(const struct dsfs_seed *s, int64_t min, uint64_t max)
{
	uint64_t m;

	if (!mag_u64(s, &m))
		return false;
	if (s->negative)
		return min < 0 && m <= 0 - (uint64_t)min;
	return m <= max && (min <= 0 || m >= (uint64_t)min);
}

uint32_t dsfs_seed_low32(const struct dsfs_seed *s)
{
	uint32_t lo = s->nwords ? s->w[0] : 0;

	return s->negative ? 0 - lo : lo;
}

/* |a| += m.  -ERANGE on overflow. */
static int mag_add(struct dsfs_seed *a, uint64_t m)
{
	uint64_t carry = 0;
	uint32_t i;

	for (i = 0; i < DSFS_SEED_WORDS && (m || carry); i++) {
		carry += (uint64_t)(i < a->nwords ? a->w[i] : 0) + (uint32_t)m;
		m >>= 32;
		a->w[i] = (uint32_t)carry;
		carry >>= 32;
		if (i >= a->nwords)
			a->nwords = i + 1;
	}
	return m || carry ? -ERANGE : 0;
}

/* |a| = |a| - m when |a| >= m, else |a| = m - |a| and the sign flips. */
static void mag_sub(struct dsfs_seed *a, uint64_t m)
{
	uint64_t am;
	int64_t borrow = 0;
	uint32_t i;

	if (mag_u64(a, &am) && am < m) {
		a->w[0] = (uint32_t)(m - am);
		a->w[1] = (uint32_t)((m - am) >> 32);
		a->nwords = 2;
		a->negative = !a->negative;
		return;
	}
	for (i = 0; i < a->nwords && (m || borrow); i++) {
		int64_t d = (int64_t)a->w[i] - (int64_t)(uint32_t)m - borrow;

		m >>= 32;
		borrow = d < 0;
		a->w[i] = (uint32_t)(d + (borrow ? (int64_t)1 << 32 : 0));
	}
}

int dsfs_seed_add(const struct dsfs_seed *s, int64_t k, struct dsfs_seed *out)
{
	struct dsfs_seed v;
	uint64_t m = k < 0 ? 0 - (uint64_t)k : (uint64_t)k;

	memcpy(&v, s, sizeof(v));
	if (!v.nwords)
		v.negative = k < 0;
	if (v.negative == (k < 0)) {
		if (mag_add(&v, m))
			return -ERANGE;
	} else {
		mag_sub(&v, m);
	}
	trim(&v);
	set_text(&v);
	memcpy(out, &v, sizeof(v));
	return 0;
}
