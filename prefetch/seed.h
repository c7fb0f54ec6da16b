/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Seeds as the user wrote them: any integer up to DSFS_SEED_BITS bits, held
 * exactly (sign and magnitude), because Python's random.seed() uses every bit
 * of an arbitrarily large int and seed + epoch must carry exactly.  Each
 * library then takes what it needs (low 32 bits, two's complement, |seed|...):
 * see sampler.h.
 *
 * Pure functions on caller-owned values: any thread.  Costs: parse
 * O(digits * words), add O(words) plus O(words^2) to refresh the text.
 */
#ifndef DSFS_SEED_H
#define DSFS_SEED_H

#include <stdbool.h>
#include <stdint.h>

#define DSFS_SEED_BITS 4096
#define DSFS_SEED_WORDS (DSFS_SEED_BITS / 32)
/* 2^4096 has 1234 decimal digits; plus '-' and NUL. */
#define DSFS_SEED_TEXT_MAX 1240

struct dsfs_seed {
	bool negative;	 /* never set for zero */
	uint32_t nwords; /* words in use, no high zero word; 0 for zero */
	uint32_t w[DSFS_SEED_WORDS]; /* |seed|, least significant word first */
	char text[DSFS_SEED_TEXT_MAX]; /* canonical decimal form, for messages */
};

/*
 * Decimal integer with an optional leading '-': no '+', spaces, '_' or other
 * characters (-EINVAL, also for "" and "-").  Leading zeros are accepted, as
 * Python's int() accepts them; `text` is then the canonical form ("007" ->
 * "7", "-0" -> "0").  A magnitude of 2^DSFS_SEED_BITS or more: -ERANGE.
 */
int dsfs_seed_parse(const char *s, struct dsfs_seed *out);

/* The seed of a small value, for callers and tests. */
void dsfs_seed_from_i64(int64_t v, struct dsfs_seed *out);

/*
 * out = s + k, exactly (out may be s).  -ERANGE when the result's magnitude
 * reaches 2^DSFS_SEED_BITS; out is then unchanged.
 */
int dsfs_seed_add(const struct dsfs_seed *s, int64_t k, struct dsfs_seed *out);

/* Whether min <= s <= max. */
bool dsfs_seed_fits(const struct dsfs_seed *s, int64_t min, uint64_t max);

/* Low 32 bits of the seed in two's complement (what torch's MT19937 gets). */
uint32_t dsfs_seed_low32(const struct dsfs_seed *s);

#endif
