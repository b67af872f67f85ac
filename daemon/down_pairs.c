/* SPDX-License-Identifier: BSD-3-Clause */
/* The (VIP, backend) pairs a batch of health results just took down
 * (struct mlv_daemon.just_down): daemon/health_glue.c fills the set,
 * daemon/generations.c reads it while it builds the failover generation
 * in which those backends keep their slots (docs/table-builders.md,
 * "Second choices and failover"). Apart from both, so that neither calls
 * into the other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/daemon.h"
#include "control/base/log.h"

static int cmp_pair(const void *a, const void *b)
{
	const struct mlv_pair_name *x = a, *y = b;
	int c = strcmp(x->vip, y->vip);

	return c ? c : strcmp(x->backend, y->backend);
}

void mlv_daemon_note_down(struct mlv_daemon *d,
			  const struct mlv_health_pair *pairs, uint32_t n)
{
	struct mlv_pair_set *set = &d->just_down;

	if (set->n + n > set->cap) {
		uint32_t cap = set->n + n;
		struct mlv_pair_name *grown;

		cap = cap < 64 ? 64 : cap + cap / 2;
		grown = realloc(set->items, (size_t)cap * sizeof(*grown));
		if (!grown) {
			mlv_warn("health: out of memory for the failover "
				 "generation; rebuilding directly");
			return;
		}
		set->items = grown;
		set->cap = cap;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct mlv_pair_name *p = &set->items[set->n++];

		snprintf(p->vip, sizeof(p->vip), "%s", pairs[i].vip);
		snprintf(p->backend, sizeof(p->backend), "%s", pairs[i].backend);
	}
}

void mlv_daemon_just_down_sort(struct mlv_daemon *d)
{
	qsort(d->just_down.items, d->just_down.n,
	      sizeof(d->just_down.items[0]), cmp_pair);
}

bool mlv_daemon_just_down(const struct mlv_daemon *d, const char *vip,
			  const char *backend)
{
	struct mlv_pair_name key;

	snprintf(key.vip, sizeof(key.vip), "%s", vip);
	snprintf(key.backend, sizeof(key.backend), "%s", backend);
	return bsearch(&key, d->just_down.items, d->just_down.n,
		       sizeof(key), cmp_pair) != NULL;
}

void mlv_daemon_health_free(struct mlv_daemon *d)
{
	free(d->just_down.items);
	memset(&d->just_down, 0, sizeof(d->just_down));
}
