/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Sampler helpers shared by the tracker's unit tests (unit-tracker,
 * unit-ranks): a configuration and one epoch's order, checked. */
#ifndef DSFS_UNIT_PLAN_H
#define DSFS_UNIT_PLAN_H

#include <stdint.h>
#include <string.h>

#include "sampler.h"
#include "unit-check.h"

static inline void unit_cfg(struct dsfs_sampler_cfg *c, enum dsfs_sampler kind,
			    int64_t seed, uint32_t world)
{
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	dsfs_seed_from_i64(seed, &c->seed);
	c->world = world;
}

/* Epoch `epoch`'s order of rank `rank` over n samples (malloc'd). */
static inline uint32_t *unit_order(const struct dsfs_sampler_cfg *c,
				   uint64_t n, uint64_t epoch, uint32_t rank,
				   uint64_t *count)
{
	uint32_t *o = NULL;

	CHECK(dsfs_sampler_order(c, n, epoch, rank, &o, count) == 0);
	return o;
}

#endif
