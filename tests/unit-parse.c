// SPDX-License-Identifier: GPL-2.0-or-later
/* unit-parse: option value parsers accept exactly the documented forms. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "parse.h"
#include "unit-check.h"

static void test_u64(void)
{
	uint64_t v = 0;

	CHECK(dsfs_parse_u64("0", 0, 10, &v) == 0 && v == 0);
	CHECK(dsfs_parse_u64("10", 0, 10, &v) == 0 && v == 10);
	CHECK(dsfs_parse_u64("11", 0, 10, &v) == -ERANGE);
	CHECK(dsfs_parse_u64("0", 1, 10, &v) == -ERANGE);
	CHECK(dsfs_parse_u64("18446744073709551615", 0, UINT64_MAX, &v) == 0 &&
	      v == UINT64_MAX);
	CHECK(dsfs_parse_u64("18446744073709551616", 0, UINT64_MAX, &v) == -ERANGE);
	CHECK(dsfs_parse_u64("", 0, 10, &v) == -EINVAL);
	CHECK(dsfs_parse_u64("-1", 0, 10, &v) == -EINVAL);
	CHECK(dsfs_parse_u64("+1", 0, 10, &v) == -EINVAL);
	CHECK(dsfs_parse_u64(" 1", 0, 10, &v) == -EINVAL);
	CHECK(dsfs_parse_u64("1x", 0, 10, &v) == -EINVAL);
	CHECK(dsfs_parse_u64("0x10", 0, 100, &v) == -EINVAL);
}

static void test_seconds(void)
{
	double d = -1;

	CHECK(dsfs_parse_seconds("0", 10, &d) == 0 && d == 0);
	CHECK(dsfs_parse_seconds("0.5", 10, &d) == 0 && d == 0.5);
	CHECK(dsfs_parse_seconds("86400", 1e9, &d) == 0 && d == 86400);
	CHECK(dsfs_parse_seconds("11", 10, &d) == -ERANGE);
	CHECK(dsfs_parse_seconds("1e3", 1e9, &d) == -EINVAL);
	CHECK(dsfs_parse_seconds("0x10", 1e9, &d) == -EINVAL);
	CHECK(dsfs_parse_seconds("1.5.5", 1e9, &d) == -EINVAL);
	CHECK(dsfs_parse_seconds("1000000001", 1e9, &d) == -ERANGE);
	CHECK(dsfs_parse_seconds("-1", 10, &d) == -EINVAL);
	CHECK(dsfs_parse_seconds("", 10, &d) == -EINVAL);
	CHECK(dsfs_parse_seconds("1s", 10, &d) == -EINVAL);
	CHECK(dsfs_parse_seconds("nan", 10, &d) == -EINVAL);
	CHECK(dsfs_parse_seconds("inf", 10, &d) == -EINVAL);
}

static void test_size(void)
{
	uint64_t v = 0;

	CHECK(dsfs_parse_size("4096", 0, &v) == 0 && v == 4096);
	CHECK(dsfs_parse_size("4K", 0, &v) == 0 && v == 4096);
	CHECK(dsfs_parse_size("4k", 0, &v) == 0 && v == 4096);
	CHECK(dsfs_parse_size("2M", 0, &v) == 0 && v == 2u << 20);
	CHECK(dsfs_parse_size("3G", 0, &v) == 0 && v == 3ull << 30);
	CHECK(dsfs_parse_size("1T", 0, &v) == 0 && v == 1ull << 40);
	CHECK(dsfs_parse_size("1GiB", 0, &v) == 0 && v == 1ull << 30);
	CHECK(dsfs_parse_size("1GB", 0, &v) == 0 && v == 1ull << 30);
	CHECK(dsfs_parse_size("40%", 1000, &v) == 0 && v == 400);
	CHECK(dsfs_parse_size("100%", 1000, &v) == 0 && v == 1000);
	CHECK(dsfs_parse_size("101%", 1000, &v) == -ERANGE);
	CHECK(dsfs_parse_size("40%", 0, &v) == -EINVAL);
	CHECK(dsfs_parse_size("12Q", 0, &v) == -EINVAL);
	CHECK(dsfs_parse_size("12KQ", 0, &v) == -EINVAL);
	CHECK(dsfs_parse_size("K", 0, &v) == -EINVAL);
	CHECK(dsfs_parse_size("", 0, &v) == -EINVAL);
	CHECK(dsfs_parse_size("-1G", 0, &v) == -EINVAL);
	CHECK(dsfs_parse_size("17179869184G", 0, &v) == -ERANGE);
	CHECK(dsfs_parse_size("99999999999999999999", 0, &v) == -ERANGE);
}

/* tidy(in), by one of the two tidiers, is want. */
static void check_with(void (*tidy)(char *), const char *in,
		       const char *want)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%s", in);
	tidy(buf);
	if (strcmp(buf, want))
		fprintf(stderr, "tidy(\"%s\") = \"%s\", want \"%s\"\n", in, buf,
			want);
	CHECK(!strcmp(buf, want));
}

static void check_tidy(const char *in, const char *want)
{
	check_with(dsfs_parse_tidy_path, in, want);
}

static void check_tidy_paths(const char *in, const char *want)
{
	check_with(dsfs_parse_tidy_paths, in, want);
}

static void test_tidy_path(void)
{
	check_tidy("", "");
	check_tidy("train", "train");
	check_tidy("train/", "train");
	check_tidy("./train", "train");
	check_tidy("./train//", "train");
	check_tidy("a//b/./c/.", "a/b/c");
	check_tidy(".", ".");
	check_tidy("./", ".");
	check_tidy(".//./", ".");
	check_tidy("..//x/", "../x");
	check_tidy("a/../b", "a/../b");
	check_tidy(".hidden/..x", ".hidden/..x");
	check_tidy("/", "/");
	check_tidy("//abs//p/", "/abs/p");
	check_tidy_paths("", "");
	check_tidy_paths("./train/", "train");
	check_tidy_paths("./train/:extra//x/:./", "train:extra/x:.");
	check_tidy_paths("a::/b/", "a::/b");
	check_tidy_paths(":", ":");
	check_tidy_paths("a:", "a:");
	check_tidy_paths("..//x:a/../b", "../x:a/../b");
}

int main(void)
{
	test_u64();
	test_tidy_path();
	test_seconds();
	test_size();
	return UNIT_DONE();
}
