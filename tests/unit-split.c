// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * unit-split: random_split()'s options and lengths (prefetch/split.c):
 * what is refused, the lengths of fractions (floors, the remainder dealt
 * from the first part, Python's sum at the edge of 1) and of whole
 * numbers, and the parts' indices, which cover the data set once.  The
 * orders themselves are t-print-plan's, against torch.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "split.h"
#include "unit-check.h"

static char why[512];

static int parse(const char *lengths, const char *seed, const char *part,
		 struct dsfs_split *s)
{
	why[0] = '\0';
	return dsfs_split_parse(lengths, seed, part, s, why, sizeof(why));
}

/* The lengths of split=spec over n samples equal want[] (NULL: refused,
 * with `refusal` in the message). */
static void lengths_are(const char *spec, uint64_t n, const uint64_t *want,
			const char *refusal)
{
	uint64_t len[DSFS_SPLIT_MAX_PARTS];
	struct dsfs_split s;
	unsigned i;
	int err;

	CHECK(parse(spec, "1", NULL, &s) == 0);
	err = dsfs_split_lengths(&s, n, len, why, sizeof(why));
	if (!want) {
		CHECK(err == -EINVAL && strstr(why, refusal));
		return;
	}
	CHECK(err == 0);
	for (i = 0; !err && i < s.nparts; i++)
		CHECK(len[i] == want[i]);
}

static void test_parse(void)
{
	struct dsfs_split s;

	CHECK(parse(NULL, NULL, NULL, &s) == 0 && s.nparts == 0);
	CHECK(parse("0.8:0.2", "-5", "1", &s) == 0 && s.nparts == 2 &&
	      s.part == 1 && !s.whole[0] && s.value[1] == 0.2);
	CHECK(parse("45000:.5e1", "0", NULL, &s) == 0 && s.whole[0] &&
	      s.value[0] == 45000 && !s.whole[1] && s.value[1] == 5);
	CHECK(parse("0.8:0.2", NULL, NULL, &s) == -EINVAL &&
	      strstr(why, "needs split_seed="));
	CHECK(parse(NULL, "1", NULL, &s) == -EINVAL &&
	      strstr(why, "split_seed= needs split="));
	CHECK(parse("1:-1", "1", NULL, &s) == -EINVAL && strstr(why, "'-1'"));
	CHECK(parse("1::1", "1", NULL, &s) == -EINVAL && strstr(why, "''"));
	CHECK(parse("nan:1", "1", NULL, &s) == -EINVAL);
	CHECK(parse("0x10:1", "1", NULL, &s) == -EINVAL);
	CHECK(parse("1e999:1", "1", NULL, &s) == -EINVAL);
	CHECK(parse("9007199254740993:1", "1", NULL, &s) == -EINVAL);
	CHECK(parse("1:1", "18446744073709551616", NULL, &s) == -EINVAL &&
	      strstr(why, "split_seed="));
	CHECK(parse("1:1", "1", "2", &s) == -EINVAL &&
	      strstr(why, "from 0 to 1"));
}

static void test_lengths(void)
{
	lengths_are("0.8:0.2", 51, (const uint64_t[]){ 41, 10 }, NULL);
	lengths_are("0.7:0.2:0.1", 10, (const uint64_t[]){ 7, 2, 1 }, NULL);
	/* floor(3.33) three times, the remainder 1 to the first */
	lengths_are("0.333:0.333:0.334", 10, (const uint64_t[]){ 4, 3, 3 },
		    NULL);
	/* whole numbers adding up to 1 are fractions */
	lengths_are("0:1", 7, (const uint64_t[]){ 0, 7 }, NULL);
	lengths_are("1:0.0", 7, (const uint64_t[]){ 7, 0 }, NULL);
	lengths_are("5:2", 7, (const uint64_t[]){ 5, 2 }, NULL);
	lengths_are("5:3", 7, NULL, "add up to 8, not the data set's 7");
	lengths_are("3.5:3.5", 7, NULL, "fractions that add up to 7, not 1");
	/* twenty 0.05: 1.0000000000000002 in Python 3.11, refused */
	lengths_are("0.05:0.05:0.05:0.05:0.05:0.05:0.05:0.05:0.05:0.05:"
		    "0.05:0.05:0.05:0.05:0.05:0.05:0.05:0.05:0.05:0.05",
		    100, NULL, "1.0000000000000002");
}

static void test_indices(void)
{
	uint64_t count[3], total = 0, i;
	uint32_t *idx[3];
	struct dsfs_split s;
	char seen[1000] = { 0 };
	unsigned k;
	char part[2] = "0";

	for (k = 0; k < 3; k++) {
		part[0] = (char)('0' + k);
		CHECK(parse("0.5:0.3:0.2", "7", part, &s) == 0);
		CHECK(dsfs_split_indices(&s, 1000, &idx[k], &count[k], why,
					 sizeof(why)) == 0);
		total += count[k];
		for (i = 0; i < count[k]; i++)
			seen[idx[k][i]]++;
	}
	CHECK(count[0] == 500 && count[1] == 300 && count[2] == 200);
	CHECK(total == 1000);
	for (i = 0; i < 1000; i++)
		CHECK(seen[i] == 1);
	for (k = 0; k < 3; k++)
		free(idx[k]);
}

int main(void)
{
	test_parse();
	test_lengths();
	test_indices();
	return UNIT_DONE();
}
