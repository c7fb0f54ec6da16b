// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz-opts: the option parsers against hostile strings.
 *
 * Input: "CMD[\0BASE]".  CMD goes through dsfs_opts_parse_plan_cmd() (the
 * control channel's parser: libfuse's fuse_opt_parse() over dsfs's option
 * table, escapes included) and, when accepted, dsfs_plan_cfg_parse();
 * BASE, when present, is parsed the same way and CMD merged over it with
 * dsfs_plan_opts_merge(), as a plan change does.  Every value of CMD split
 * naively at ',' and '=' also goes to each parser of lib/parse.c and to
 * dsfs_seed_parse().
 *
 * Invariants:
 *  - a refusal has a one-line, NUL-terminated reason;
 *  - an accepted plan means what its strings say, checked by reference
 *    parsers written here (epoch, world, rank, ranks, dataset: its
 *    ":"-separated directories, none empty, absolute or with "..");
 *  - dsfs_plan_cfg_string() round-trips: its string, parsed again as a
 *    command, gives the same plan and the same string (ctl.c's same_plan()
 *    and the mount's saved options rely on it);
 *  - dsfs_parse_u64/size/seconds and dsfs_seed_parse accept exactly what
 *    parse.h and seed.h promise, with the value a reference computes.
 *
 * fs/opts.c is compiled into this harness (the #include below): dsfs's
 * option table and the command parser live there, in fs/, which builds
 * only the daemon, and the code under test includes libfuse's fuse_opt, so
 * the harness links libfuse as the daemon does.
 */
#include "opts.c"

#include <ctype.h>

#include "fuzz.h"
#include "seed.h"

#define WHY 512

static void check_why(const char *why)
{
	FUZZ_CHECK(why[0], "a refusal without a reason");
	FUZZ_CHECK(strnlen(why, WHY) < WHY && !strchr(why, '\n'),
		   "reason not one line: %s", why);
}

/* Reference of dsfs_parse_u64: 0, -EINVAL (not all digits), -ERANGE. */
static int ref_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned __int128 v = 0;
	size_t i;

	for (i = 0; isdigit((unsigned char)s[i]); i++) {
		if (v <= UINT64_MAX)
			v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (!i || s[i])
		return -EINVAL;
	if (v > UINT64_MAX || v < min || v > max)
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

/* Reference of dsfs_parse_size (parse.h's contract). */
static int ref_size(const char *s, uint64_t total, uint64_t *out)
{
	static const char units[] = "KMGT";
	unsigned __int128 v = 0;
	const char *u, *p;
	unsigned shift = 0;
	size_t i;

	for (i = 0; isdigit((unsigned char)s[i]); i++) {
		if (v <= UINT64_MAX)
			v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (!i)
		return -EINVAL;
	u = s + i;
	if (!strcmp(u, "%")) {
		if (!total)
			return -EINVAL;
		if (v > 100)
			return -ERANGE;
		*out = (uint64_t)((unsigned __int128)total * v / 100);
		return 0;
	}
	if (*u) {
		p = strchr(units, toupper((unsigned char)*u));
		if (!p || (u[1] && strcmp(u + 1, "B") && strcmp(u + 1, "iB")))
			return -EINVAL;
		shift = 10 * (unsigned)(p - units + 1);
	}
	if ((v << shift) > UINT64_MAX)
		return -ERANGE;
	*out = (uint64_t)(v << shift);
	return 0;
}

/* Compares a parser's answer with the reference's. */
static void same(const char *what, const char *s, int err, uint64_t v,
		 int ref, uint64_t rv)
{
	FUZZ_CHECK(!err == !ref, "%s('%s'): %d, reference %d", what, s, err,
		   ref);
	FUZZ_CHECK(err || v == rv, "%s('%s'): %llu, reference %llu", what, s,
		   (unsigned long long)v, (unsigned long long)rv);
	/* "out of range" only for digits alone, which overflow */
	FUZZ_CHECK(ref != -ERANGE || err == -ERANGE, "%s('%s'): %d, not -ERANGE",
		   what, s, err);
}

static void check_seed(const char *s)
{
	struct dsfs_seed seed;
	const char *d = s + (s[0] == '-');
	size_t digits, i;
	uint32_t low = 0;
	char want[DSFS_SEED_TEXT_MAX + 2];
	int err = dsfs_seed_parse(s, &seed);

	if (!*d || d[strspn(d, "0123456789")]) {
		FUZZ_CHECK(err == -EINVAL, "seed '%s' accepted", s);
		return;
	}
	d += strspn(d, "0");
	digits = strlen(d);
	if (digits > 1234) { /* 2^4096 has 1234 digits */
		FUZZ_CHECK(err == -ERANGE, "seed of %zu digits: %d", digits, err);
		return;
	}
	if (digits == 1234 && err)
		return; /* near 2^4096: not worth a bignum compare here */
	FUZZ_CHECK(!err, "seed '%s' refused: %d", s, err);
	snprintf(want, sizeof(want), "%s%s", s[0] == '-' && *d ? "-" : "",
		 *d ? d : "0");
	FUZZ_CHECK(!strcmp(seed.text, want), "seed text %s, want %s", seed.text,
		   want);
	for (i = 0; i < digits; i++)
		low = low * 10 + (uint32_t)(d[i] - '0');
	if (s[0] == '-')
		low = 0 - low;
	FUZZ_CHECK(dsfs_seed_low32(&seed) == low, "seed %s: low32 %u, want %u",
		   s, dsfs_seed_low32(&seed), low);
}

/* Every parser of lib/parse.c (and the seed's) on one value. */
static void check_value(const char *s)
{
	static const uint64_t totals[] = { 0, 1, 4096, UINT64_C(1) << 40,
					   UINT64_MAX };
	uint64_t v = 0, rv = 0;
	double secs = -1;
	size_t i;
	int err, ref;

	err = dsfs_parse_u64(s, 0, UINT64_MAX, &v);
	ref = ref_u64(s, 0, UINT64_MAX, &rv);
	same("u64", s, err, v, ref, rv);
	err = dsfs_parse_u64(s, 1, 4096, &v);
	ref = ref_u64(s, 1, 4096, &rv);
	same("u64[1,4096]", s, err, v, ref, rv);
	for (i = 0; i < sizeof(totals) / sizeof(totals[0]); i++) {
		err = dsfs_parse_size(s, totals[i], &v);
		ref = ref_size(s, totals[i], &rv);
		same("size", s, err, v, ref, rv);
	}
	err = dsfs_parse_seconds(s, 1e9, &secs);
	if (!err)
		FUZZ_CHECK(isdigit((unsigned char)s[0]) &&
				   !s[strspn(s, "0123456789.")] &&
				   strchr(s, '.') == strrchr(s, '.') &&
				   secs >= 0 && secs <= 1e9,
			   "seconds('%s') = %g", s, secs);
	else if (s[0] && !s[strspn(s, "0123456789")] && strlen(s) < 10)
		FUZZ_CHECK(0, "seconds('%s') refused: %d", s, err);
	check_seed(s);
}

/* The naive split: each "key=value" (or bare value) between commas. */
static void check_values(const char *cmd)
{
	char *copy = strdup(cmd), *item, *save = NULL, *eq;

	FUZZ_CHECK(copy, "out of memory");
	for (item = strtok_r(copy, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		eq = strchr(item, '=');
		check_value(eq ? eq + 1 : item);
	}
	free(copy);
}

/* What an accepted plan must mean, from its strings alone. */
static void check_cfg(const struct dsfs_plan_opts *o,
		      const struct dsfs_plan_cfg *c)
{
	uint64_t a = 0, b = 0, w = 1;
	const char *d = o->dataset ? o->dataset : ".", *dash;
	char *first;

	if (c->sampler.kind == DSFS_SAMPLER_NONE) { /* no plan: nothing else */
		FUZZ_CHECK(!o->seed && !o->epoch && !o->layout && !o->dataset &&
				   !o->list && !o->world && !o->rank &&
				   !o->ranks && !o->drop_last &&
				   !o->persistent_workers,
			   "plan options without a plan");
		return;
	}
	FUZZ_CHECK(!strcmp(c->dataset, d), "dataset %s", c->dataset);
	/* ':' separates directories, none empty or absolute */
	FUZZ_CHECK(d[0] && d[0] != '/' && !strstr(d, "::") &&
			   !strstr(d, ":/") && d[strlen(d) - 1] != ':',
		   "dataset '%s' accepted", d);
	for (dash = d; (dash = strstr(dash, "..")); dash += 2)
		FUZZ_CHECK(!((dash == d || dash[-1] == '/' || dash[-1] == ':') &&
			     (!dash[2] || dash[2] == '/' || dash[2] == ':')),
			   "dataset '%s' with .. accepted", d);
	for (dash = d, a = 1; (dash = strchr(dash, ':')); dash++)
		a++;
	FUZZ_CHECK(c->ndatasets == a && a <= DSFS_PLAN_DATASETS_MAX &&
			   !strcmp(c->dir, a > 1 ? "." : d),
		   "dataset '%s': %u directories, paths below %s", d,
		   c->ndatasets, c->dir);
	a = 0;
	FUZZ_CHECK(c->epoch_auto == (!o->epoch || !strcmp(o->epoch, "auto")),
		   "epoch %s", o->epoch);
	if (!c->epoch_auto)
		FUZZ_CHECK(!ref_u64(o->epoch, 0, 1u << 30, &a) && a == c->epoch,
			   "epoch=%s gave %llu", o->epoch,
			   (unsigned long long)c->epoch);
	if (c->sampler.kind != DSFS_SAMPLER_TORCH_DISTRIBUTED) {
		FUZZ_CHECK(c->sampler.world == 1 && !c->rank_first &&
				   !c->rank_last,
			   "ranks without distribution");
		return;
	}
	FUZZ_CHECK(o->world && !ref_u64(o->world, 1, 1u << 20, &w) &&
			   w == c->sampler.world,
		   "world=%s gave %u", o->world, c->sampler.world);
	a = 0, b = w - 1;
	if (o->rank) {
		FUZZ_CHECK(!ref_u64(o->rank, 0, w - 1, &a), "rank=%s", o->rank);
		b = a;
	} else if (o->ranks && (dash = strchr(o->ranks, '-'))) {
		first = strndup(o->ranks, (size_t)(dash - o->ranks));
		FUZZ_CHECK(first, "out of memory");
		FUZZ_CHECK(!ref_u64(first, 0, w - 1, &a) &&
				   !ref_u64(dash + 1, a, w - 1, &b),
			   "ranks=%s accepted", o->ranks);
		free(first);
	} else if (o->ranks) {
		FUZZ_CHECK(!ref_u64(o->ranks, 0, w - 1, &a), "ranks=%s", o->ranks);
		b = a;
	}
	FUZZ_CHECK(c->rank_first == a && c->rank_last == b,
		   "rank(s)=%s gave %u-%u, want %llu-%llu",
		   o->rank ? o->rank : o->ranks, c->rank_first, c->rank_last,
		   (unsigned long long)a, (unsigned long long)b);
}

/* The plan's string parses back to the same plan, and the same string. */
static void check_round_trip(const struct dsfs_plan_cfg *c)
{
	struct dsfs_plan_opts o2;
	struct dsfs_plan_cfg c2;
	char why[WHY];
	char *s1 = dsfs_plan_cfg_string(c), *s2;

	FUZZ_CHECK(s1, "out of memory");
	FUZZ_CHECK(!dsfs_opts_parse_plan_cmd(s1, &o2, why, sizeof(why)),
		   "'%s' refused: %s", s1, why);
	FUZZ_CHECK(!dsfs_plan_cfg_parse(&o2, &c2, why, sizeof(why)),
		   "'%s' refused: %s", s1, why);
	s2 = dsfs_plan_cfg_string(&c2);
	FUZZ_CHECK(s2 && !strcmp(s1, s2), "'%s' came back as '%s'", s1, s2);
	free(s1);
	free(s2);
	dsfs_plan_opts_free(&o2);
}

/* Parses cmd as a command, then as a plan.  0 with *o (to free), or -1. */
static int parse(const char *cmd, struct dsfs_plan_opts *o)
{
	struct dsfs_plan_cfg c;
	char why[WHY];

	if (dsfs_opts_parse_plan_cmd(cmd, o, why, sizeof(why))) {
		check_why(why);
		return -1;
	}
	if (dsfs_plan_cfg_parse(o, &c, why, sizeof(why))) {
		check_why(why);
	} else {
		check_cfg(o, &c);
		check_round_trip(&c);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = malloc(size + 2), *base;
	struct dsfs_plan_opts o, b, m;
	struct dsfs_plan_cfg c;
	char why[WHY];

	if (!in)
		return 0;
	memcpy(in, data, size);
	in[size] = in[size + 1] = '\0';
	base = in + strlen(in) + 1; /* "" when there is no NUL */
	check_values(in);
	if (!parse(in, &o)) {
		if (*base && !parse(base, &b)) {
			FUZZ_CHECK(!dsfs_plan_opts_merge(&m, &b, &o), "merge");
			if (!dsfs_plan_cfg_parse(&m, &c, why, sizeof(why))) {
				check_cfg(&m, &c);
				check_round_trip(&c);
			}
			dsfs_plan_opts_free(&m);
			dsfs_plan_opts_free(&b);
		}
		dsfs_plan_opts_free(&o);
	}
	free(in);
	return 0;
}
