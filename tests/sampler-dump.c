// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sampler-dump: print the order dsfs predicts for a loader, for the golden
 * test (t-sampler-golden.sh) and for people checking a configuration.
 *
 *   sampler-dump KIND SEED N EPOCH [--world W] [--rank R] [--drop-last]
 *                [--persistent] [--sampler-generator] [--num-samples K]
 *                [--replacement] [--subset] [--weights FILE]
 *                [--seeded-once] [--inplace] [--cut-epochs C]
 *       prints the indices, space separated, on one line; exit 1 with a
 *       message on stderr when the sampler refuses, 2 on a usage error.
 *   sampler-dump --batch
 *       reads one query (the same arguments) per stdin line and prints one
 *       line per query: the indices, or "error: MESSAGE", flushed after
 *       each answer so that a caller may send the next query in turn.
 *
 * Single-threaded.  Cost: that of dsfs_sampler_order() plus the printing.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "sampler.h"
#include "weights.h"

#define MAX_ARGS 16

struct query {
	struct dsfs_sampler_cfg cfg;
	uint64_t n;
	uint64_t epoch;
	uint32_t rank;
	const char *weights;	/* --weights FILE (weights.h), or NULL */
};

static int usage_error(char *why, size_t len, const char *what, const char *arg)
{
	snprintf(why, len, "%s: %s", arg ? arg : "(missing)", what);
	return -EINVAL;
}

static int parse_u32(const char *s, uint32_t *out)
{
	uint64_t v = 0;
	int ret = dsfs_parse_u64(s, 0, UINT32_MAX, &v);

	*out = (uint32_t)v;
	return ret;
}

/* Options after KIND SEED N EPOCH. */
static int parse_options(int argc, char **argv, struct query *q, char *why,
			 size_t len)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--drop-last")) {
			q->cfg.drop_last = true;
		} else if (!strcmp(argv[i], "--persistent")) {
			q->cfg.persistent_workers = true;
		} else if (!strcmp(argv[i], "--replacement")) {
			q->cfg.replacement = true;
		} else if (!strcmp(argv[i], "--subset")) {
			q->cfg.subset = true;
		} else if (!strcmp(argv[i], "--sampler-generator")) {
			q->cfg.sampler_generator = true;
		} else if (!strcmp(argv[i], "--seeded-once")) {
			q->cfg.seeded_once = true;
		} else if (!strcmp(argv[i], "--inplace")) {
			q->cfg.inplace = true;
		} else if (!strcmp(argv[i], "--num-samples") && i + 1 < argc) {
			if (dsfs_parse_u64(argv[++i], 1, UINT64_MAX,
					   &q->cfg.num_samples))
				return usage_error(why, len,
						   "bad --num-samples",
						   argv[i]);
		} else if (!strcmp(argv[i], "--cut-epochs") && i + 1 < argc) {
			if (dsfs_parse_u64(argv[++i], 0, UINT64_MAX,
					   &q->cfg.cut_epochs))
				return usage_error(why, len, "bad --cut-epochs",
						   argv[i]);
		} else if (!strcmp(argv[i], "--weights") && i + 1 < argc) {
			q->weights = argv[++i];
		} else if (!strcmp(argv[i], "--world") && i + 1 < argc) {
			if (parse_u32(argv[++i], &q->cfg.world))
				return usage_error(why, len, "bad --world",
						   argv[i]);
		} else if (!strcmp(argv[i], "--rank") && i + 1 < argc) {
			if (parse_u32(argv[++i], &q->rank))
				return usage_error(why, len, "bad --rank",
						   argv[i]);
		} else {
			return usage_error(why, len, "unknown option", argv[i]);
		}
	}
	return 0;
}

static int parse_query(int argc, char **argv, struct query *q, char *why,
		       size_t len)
{
	int ret;

	memset(q, 0, sizeof(*q));
	q->cfg.world = 1;
	if (argc < 4)
		return usage_error(why, len, "expected KIND SEED N EPOCH",
				   NULL);
	if (dsfs_sampler_from_name(argv[0], &q->cfg.kind))
		return usage_error(why, len, "unknown sampler", argv[0]);
	ret = dsfs_seed_parse(argv[1], &q->cfg.seed);
	if (ret)
		return usage_error(why, len,
				   ret == -ERANGE ? "seed too large" :
						    "bad seed",
				   argv[1]);
	if (dsfs_parse_u64(argv[2], 0, UINT64_MAX, &q->n))
		return usage_error(why, len, "bad N", argv[2]);
	if (dsfs_parse_u64(argv[3], 0, UINT64_MAX, &q->epoch))
		return usage_error(why, len, "bad EPOCH", argv[3]);
	return parse_options(argc - 4, argv + 4, q, why, len);
}

/* The indices, space separated, one line; formatted by hand for speed. */
static void print_order(FILE *out, const uint32_t *order, uint64_t count)
{
	char buf[16], *p;
	uint64_t i;

	for (i = 0; i < count; i++) {
		uint32_t v = order[i];

		p = buf + sizeof(buf);
		do
			*--p = (char)('0' + v % 10);
		while (v /= 10);
		if (i)
			*--p = ' ';
		fwrite(p, 1, (size_t)(buf + sizeof(buf) - p), out);
	}
	fputc('\n', out);
}

/* Check and compute the query; 0, or -errno with a message in why. */
static int run_query(const struct query *q, FILE *out, char *why, size_t len)
{
	uint32_t *order;
	struct dsfs_sampler_cfg cfg = q->cfg;
	double *weights = NULL;
	uint64_t count;
	int ret;

	ret = dsfs_sampler_check_epoch(&cfg, q->epoch, why, len);
	if (!ret && q->weights)
		ret = dsfs_weights_load(q->weights, q->n, &weights, why, len);
	if (ret)
		return ret;
	cfg.weights = weights;
	ret = dsfs_sampler_order(&cfg, q->n, q->epoch, q->rank, &order,
				 &count);
	free(weights);
	if (ret) {
		snprintf(why, len, "%s: %s", dsfs_sampler_name(q->cfg.kind),
			 strerror(-ret));
		return ret;
	}
	print_order(out, order, count);
	free(order);
	return 0;
}

static int run_batch(void)
{
	char *line = NULL, *argv[MAX_ARGS], *save, why[256];
	size_t cap = 0;
	struct query q;

	while (getline(&line, &cap, stdin) > 0) {
		int argc = 0;
		char *tok = strtok_r(line, " \t\n", &save);

		for (; tok && argc < MAX_ARGS;
		     tok = strtok_r(NULL, " \t\n", &save))
			argv[argc++] = tok;
		if (!argc)
			continue; /* blank line: no answer */
		if (tok)
			printf("error: more than %d arguments\n", MAX_ARGS);
		else if (parse_query(argc, argv, &q, why, sizeof(why)) ||
			 run_query(&q, stdout, why, sizeof(why)))
			printf("error: %s\n", why);
		if (fflush(stdout))
			break; /* one answer per query: callers may talk in turn */
	}
	free(line);
	return fflush(stdout) || ferror(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
	char why[256];
	struct query q;

	if (argc == 2 && !strcmp(argv[1], "--batch"))
		return run_batch();
	if (parse_query(argc - 1, argv + 1, &q, why, sizeof(why))) {
		fprintf(stderr,
			"sampler-dump: %s\nusage: sampler-dump KIND SEED N EPOCH [--world W] [--rank R] [--drop-last] [--persistent]\n       sampler-dump --batch\n",
			why);
		return 2;
	}
	if (run_query(&q, stdout, why, sizeof(why))) {
		fprintf(stderr, "sampler-dump: %s\n", why);
		return 1;
	}
	return fflush(stdout) ? 1 : 0;
}
