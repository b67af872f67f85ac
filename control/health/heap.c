/* SPDX-License-Identifier: BSD-3-Clause */
/* The health engine's schedule: a binary min-heap of probes on due_ns,
 * each probe knowing its position so it can be moved or removed in
 * O(log n). One entry per probe: its next start, or its deadline while a
 * check runs. */
#include <stdlib.h>

#include "control/health/health_internal.h"

static void place(struct mlv_health *h, uint32_t i, struct health_probe *p)
{
	h->heap[i] = p;
	p->heap_idx = i;
}

static void sift_up(struct mlv_health *h, uint32_t i)
{
	struct health_probe *p = h->heap[i];

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (h->heap[parent]->due_ns <= p->due_ns)
			break;
		place(h, i, h->heap[parent]);
		i = parent;
	}
	place(h, i, p);
}

static void sift_down(struct mlv_health *h, uint32_t i)
{
	struct health_probe *p = h->heap[i];

	for (;;) {
		uint32_t child = 2 * i + 1;

		if (child >= h->heap_n)
			break;
		if (child + 1 < h->heap_n &&
		    h->heap[child + 1]->due_ns < h->heap[child]->due_ns)
			child++;
		if (p->due_ns <= h->heap[child]->due_ns)
			break;
		place(h, i, h->heap[child]);
		i = child;
	}
	place(h, i, p);
}

enum mlv_err health_heap_set(struct mlv_health *h, struct health_probe *p,
			     uint64_t due_ns)
{
	if (p->heap_idx != UINT32_MAX) {
		uint64_t old = p->due_ns;

		p->due_ns = due_ns;
		if (due_ns < old)
			sift_up(h, p->heap_idx);
		else
			sift_down(h, p->heap_idx);
		return MLV_OK;
	}
	if (h->heap_n == h->heap_cap) {
		uint32_t cap = h->heap_cap ? h->heap_cap * 2 : 256;
		struct health_probe **nh;

		if (cap < h->heap_cap)
			return MLV_E_LIMIT;
		nh = realloc(h->heap, (size_t)cap * sizeof(*nh));
		if (!nh)
			return MLV_E_NOMEM;
		h->heap = nh;
		h->heap_cap = cap;
	}
	p->due_ns = due_ns;
	place(h, h->heap_n++, p);
	sift_up(h, p->heap_idx);
	return MLV_OK;
}

void health_heap_remove(struct mlv_health *h, struct health_probe *p)
{
	uint32_t i = p->heap_idx;
	struct health_probe *last;

	if (i == UINT32_MAX)
		return;
	p->heap_idx = UINT32_MAX;
	last = h->heap[--h->heap_n];
	if (last == p)
		return;
	place(h, i, last);
	/* The moved entry may belong above or below its new position. */
	sift_up(h, i);
	sift_down(h, last->heap_idx);
}
