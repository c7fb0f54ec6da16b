// SPDX-License-Identifier: GPL-2.0-or-later
/* The push thread's queues (the contract is in pushq.h). */
#include "config.h"

#include <stddef.h>

#include "pushq.h"

bool dsfs_pushq_put(struct dsfs_pushq_ring *r, const struct dsfs_push_item *it)
{
	if (r->len == DSFS_PUSHQ)
		return false;
	r->q[(r->head + r->len++) % DSFS_PUSHQ] = *it;
	return true;
}

struct dsfs_push_item *dsfs_pushq_head(struct dsfs_pushq_ring *r)
{
	return r->len ? &r->q[r->head] : NULL;
}

void dsfs_pushq_pop(struct dsfs_pushq_ring *r)
{
	r->head = (r->head + 1) % DSFS_PUSHQ;
	r->len--;
}

bool dsfs_pushq_later_put(struct dsfs_pushq_later *l,
			  const struct dsfs_push_item *it)
{
	return dsfs_pushq_put(&l->wait, it);
}

/* Sift it up from the heap's new last slot; the heap has room. */
static void heap_put(struct dsfs_pushq_later *l,
		     const struct dsfs_push_item *it)
{
	struct dsfs_push_item *q = l->due.q;
	unsigned i, up;

	for (i = l->due.len++; i; i = up) {
		up = (i - 1) / 2;
		if (q[up].when <= it->when)
			break;
		q[i] = q[up];
	}
	q[i] = *it;
}

/* Take the top into *it; the heap must not be empty. */
static void heap_pop(struct dsfs_pushq_later *l, struct dsfs_push_item *it)
{
	struct dsfs_push_item *q = l->due.q;
	const struct dsfs_push_item *last;
	unsigned i = 0, c;

	*it = q[0];
	last = &q[--l->due.len];
	for (;;) {
		c = 2 * i + 1;
		if (c >= l->due.len)
			break;
		if (c + 1 < l->due.len && q[c + 1].when < q[c].when)
			c++;
		if (last->when <= q[c].when)
			break;
		q[i] = q[c];
		i = c;
	}
	q[i] = *last;
}

bool dsfs_pushq_later_take(struct dsfs_pushq_later *l, uint64_t now_ns,
			   struct dsfs_push_item *it, uint64_t *wait_ns)
{
	struct dsfs_push_item *h;

	*wait_ns = 0;
	while ((h = dsfs_pushq_head(&l->wait)) && h->due_ns <= now_ns &&
	       l->due.len < DSFS_PUSHQ) {
		heap_put(l, h);
		dsfs_pushq_pop(&l->wait);
	}
	if (l->due.len) {
		heap_pop(l, it);
		return true;
	}
	if (h)
		*wait_ns = h->due_ns - now_ns;
	return false;
}
