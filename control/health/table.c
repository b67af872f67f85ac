/* SPDX-License-Identifier: BSD-3-Clause */
/* Chained hash tables for the health engine (pairs, probes, VIPs).
 * Hand-rolled: the control plane has no EAL-free hash map to borrow
 * (rte_hash needs hugepages and fixed-size keys; hsearch is one global
 * table), and intrusive chains let one node live in the table without a
 * separate allocation. The generation's tables (dataplane/view/
 * index.h) are open-addressed on fixed-size keys inside one
 * immutable allocation; these hold string-keyed nodes that come and go
 * with every config, so they are chained. */
#include <stdlib.h>

#include "control/health/health_internal.h"

#define HTABLE_INITIAL_BUCKETS 64u
#define HTABLE_MAX_BUCKETS (1u << 30)

enum mlv_err health_htable_init(struct health_htable *t)
{
	t->buckets = calloc(HTABLE_INITIAL_BUCKETS, sizeof(*t->buckets));
	if (!t->buckets)
		return MLV_E_NOMEM;
	t->mask = HTABLE_INITIAL_BUCKETS - 1;
	t->n = 0;
	return MLV_OK;
}

void health_htable_free(struct health_htable *t)
{
	free(t->buckets);
	t->buckets = NULL;
	t->mask = 0;
	t->n = 0;
}

struct health_hnode *health_htable_bucket(const struct health_htable *t,
					  uint64_t hash)
{
	return t->buckets[hash & t->mask];
}

/* Double the bucket array. On allocation failure keep the old one: the
 * table still works, only with longer chains. */
static void grow(struct health_htable *t)
{
	uint32_t n_old = t->mask + 1;
	uint32_t n_new = n_old * 2;
	struct health_hnode **nb;

	if (n_old >= HTABLE_MAX_BUCKETS)
		return;
	nb = calloc(n_new, sizeof(*nb));
	if (!nb)
		return;
	for (uint32_t i = 0; i < n_old; i++) {
		struct health_hnode *node = t->buckets[i];

		while (node) {
			struct health_hnode *next = node->next;
			uint32_t b = (uint32_t)(node->hash & (n_new - 1));

			node->next = nb[b];
			nb[b] = node;
			node = next;
		}
	}
	free(t->buckets);
	t->buckets = nb;
	t->mask = n_new - 1;
}

enum mlv_err health_htable_insert(struct health_htable *t,
				  struct health_hnode *node)
{
	uint32_t b;

	if (t->n == UINT32_MAX)
		return MLV_E_LIMIT;
	if (t->n >= t->mask + 1)
		grow(t);
	b = (uint32_t)(node->hash & t->mask);
	node->next = t->buckets[b];
	t->buckets[b] = node;
	t->n++;
	return MLV_OK;
}

void health_htable_remove(struct health_htable *t, struct health_hnode *node)
{
	struct health_hnode **link = &t->buckets[node->hash & t->mask];

	while (*link && *link != node)
		link = &(*link)->next;
	if (*link) {
		*link = node->next;
		node->next = NULL;
		t->n--;
	}
}

void health_htable_each(struct health_htable *t,
			void (*fn)(struct health_hnode *node, void *ctx),
			void *ctx)
{
	for (uint32_t i = 0; t->buckets && i <= t->mask; i++) {
		struct health_hnode *node = t->buckets[i];

		while (node) {
			struct health_hnode *next = node->next;

			fn(node, ctx);
			node = next;
		}
	}
}
