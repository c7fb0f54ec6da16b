// SPDX-License-Identifier: GPL-2.0-or-later
/* unit-pushq: the push's ring, and its `later` queue taking due chunks by
 * next use. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pushq.h"
#include "unit-check.h"

static struct dsfs_push_item item(uint64_t id, uint64_t when, uint64_t due)
{
	struct dsfs_push_item it;

	memset(&it, 0, sizeof(it));
	it.ino = id;
	it.when = when;
	it.due_ns = due;
	it.len = 1;
	return it;
}

/* FIFO order across the wrap, and a full ring refuses. */
static void test_ring(void)
{
	struct dsfs_pushq_ring *r = calloc(1, sizeof(*r));
	struct dsfs_push_item it;
	uint64_t next_in = 0, next_out = 0;
	unsigned round, i;

	for (round = 0; round < 5; round++) {
		for (i = 0; i < DSFS_PUSHQ / 3 + round * 500; i++) {
			it = item(next_in, 0, 0);
			if (!dsfs_pushq_put(r, &it))
				break;
			next_in++;
		}
		for (i = 0; i < DSFS_PUSHQ / 4 && dsfs_pushq_head(r); i++) {
			CHECK(dsfs_pushq_head(r)->ino == next_out);
			dsfs_pushq_pop(r);
			next_out++;
		}
	}
	while (dsfs_pushq_head(r)) {
		it = item(next_in++, 0, 0);
		if (!dsfs_pushq_put(r, &it))
			break;
	}
	CHECK(r->len == DSFS_PUSHQ);
	CHECK(!dsfs_pushq_put(r, &it));
	for (; dsfs_pushq_head(r); next_out++) {
		CHECK(dsfs_pushq_head(r)->ino == next_out);
		dsfs_pushq_pop(r);
	}
	CHECK(next_out == next_in - 1);
	free(r);
}

/* Nothing due: the wait until the first is; nothing queued: 0. */
static void test_wait(void)
{
	struct dsfs_pushq_later *l = calloc(1, sizeof(*l));
	struct dsfs_push_item it = item(1, 5, 1000), out;
	uint64_t wait = 7;

	CHECK(!dsfs_pushq_later_take(l, 0, &out, &wait) && wait == 0);
	CHECK(dsfs_pushq_later_put(l, &it));
	CHECK(!dsfs_pushq_later_take(l, 400, &out, &wait) && wait == 600);
	CHECK(dsfs_pushq_later_take(l, 1000, &out, &wait));
	CHECK(out.ino == 1 && out.when == 5 && wait == 0);
	CHECK(!dsfs_pushq_later_take(l, 5000, &out, &wait) && wait == 0);
	free(l);
}

/*
 * Random batches released as a listing would (due 5 ms after each other,
 * `when` in no order, repeats included), taken at random times: each take
 * returns the least `when` among the items due and not yet taken, only
 * items due, each exactly once.  Checked against a plain array.
 */
static void test_due_by_when(void)
{
	struct dsfs_pushq_later *l = calloc(1, sizeof(*l));
	struct dsfs_push_item *pending = calloc(4 * DSFS_PUSHQ,
						sizeof(*pending));
	struct dsfs_push_item it, out;
	unsigned npend = 0, i, best, step, n;
	uint64_t t = 0, id = 0, wait, taken = 0;

	srandom(42);
	for (step = 0; step < 3000; step++) {
		/* a listing's batch: all due at once */
		n = (unsigned)(random() % 40);
		for (i = 0; i < n; i++) {
			it = item(id, (uint64_t)(random() % 5000),
				  t + 5000000);
			if (!dsfs_pushq_later_put(l, &it))
				break;
			pending[npend++] = it;
			id++;
		}
		t += (uint64_t)(random() % 3000000);
		for (n = (unsigned)(random() % 50); n; n--) {
			best = npend;
			for (i = 0; i < npend; i++)
				if (pending[i].due_ns <= t &&
				    (best == npend ||
				     pending[i].when < pending[best].when))
					best = i;
			if (!dsfs_pushq_later_take(l, t, &out, &wait)) {
				CHECK(best == npend);
				CHECK(npend ? wait > 0 && wait <= 5000000
					    : wait == 0);
				break;
			}
			CHECK(best < npend);
			if (best == npend)
				break;
			CHECK(out.due_ns <= t);
			CHECK(out.when == pending[best].when);
			for (i = 0; i < npend && pending[i].ino != out.ino; i++)
				;
			CHECK(i < npend); /* queued, and not taken before */
			if (i < npend)
				pending[i] = pending[--npend];
			taken++;
		}
	}
	t += 10000000;
	while (dsfs_pushq_later_take(l, t, &out, &wait))
		taken++;
	CHECK(taken == id);
	free(pending);
	free(l);
}

/* More due than the heap holds: the rest wait in the ring, none lost. */
static void test_full(void)
{
	struct dsfs_pushq_later *l = calloc(1, sizeof(*l));
	struct dsfs_push_item it, out;
	uint64_t i, wait, last = 0, n = 0;

	for (i = 0; i < DSFS_PUSHQ; i++) {
		it = item(i, DSFS_PUSHQ - i, 10);
		CHECK(dsfs_pushq_later_put(l, &it));
	}
	CHECK(!dsfs_pushq_later_put(l, &it));
	/* the first take moves all into the heap; refill the ring */
	CHECK(dsfs_pushq_later_take(l, 10, &out, &wait) && out.when == 1);
	for (i = 0; i < DSFS_PUSHQ; i++) {
		it = item(DSFS_PUSHQ + i, 0, 20);
		CHECK(dsfs_pushq_later_put(l, &it));
	}
	/* heap full but one: one more comes in, taken first (when 0) */
	CHECK(dsfs_pushq_later_take(l, 20, &out, &wait) && out.when == 0);
	while (dsfs_pushq_later_take(l, 20, &out, &wait)) {
		n++;
		if (out.when)
			CHECK(out.when >= last);
		last = out.when;
	}
	CHECK(n == 2 * DSFS_PUSHQ - 2);
	free(l);
}

int main(void)
{
	test_ring();
	test_wait();
	test_due_by_when();
	test_full();
	return UNIT_DONE();
}
