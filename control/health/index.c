/* SPDX-License-Identifier: BSD-3-Clause */
/* The health engine's config-order index: mlv_health_is_up_at answers a
 * generation build's 10^5 pair questions by array position instead of
 * hashing two names and walking a bucket each time (docs/health.md,
 * "Look-ups by position"). Control thread only. */
#include <stdlib.h>
#include <string.h>

#include "control/health/health_internal.h"

void health_index_clear(struct mlv_health *h)
{
	free(h->index.first);
	free(h->index.pairs);
	h->index = (struct health_index){ 0 };
}

void health_index_begin(struct mlv_health *h, const struct mlv_config *cfg)
{
	struct health_index *x = &h->index;
	uint32_t total = 0;

	health_index_clear(h);
	if (cfg->n_vips == 0)
		return;
	x->first = malloc(((size_t)cfg->n_vips + 1) * sizeof(*x->first));
	for (uint32_t v = 0; x->first && v < cfg->n_vips; v++) {
		x->first[v] = total;
		total += cfg->vips[v].n_backends;
	}
	x->pairs = calloc(total ? total : 1, sizeof(*x->pairs));
	if (!x->first || !x->pairs) {
		health_index_clear(h);
		return;
	}
	x->first[cfg->n_vips] = total;
	x->n_vips = cfg->n_vips;
}

void health_index_set(struct mlv_health *h, uint32_t v, uint32_t i,
		      struct health_pair *pair)
{
	struct health_index *x = &h->index;

	if (v < x->n_vips && i < x->first[v + 1] - x->first[v])
		x->pairs[x->first[v] + i] = pair;
}

bool mlv_health_is_up_at(const struct mlv_health *h, uint32_t vip_index,
			 uint32_t backend_index, const char *vip,
			 const char *backend)
{
	const struct health_index *x;
	const struct health_pair *pair;

	if (!h || !vip || !backend)
		return true;
	x = &h->index;
	/* The position is only a hint: the names decide, so a position from
	 * another config (a build before its sync) costs the look-up by
	 * name, never a wrong answer. */
	if (vip_index < x->n_vips &&
	    backend_index < x->first[vip_index + 1] - x->first[vip_index]) {
		pair = x->pairs[x->first[vip_index] + backend_index];
		if (pair && strcmp(pair->backend, backend) == 0 &&
		    strcmp(pair->vip->name, vip) == 0)
			return health_pair_effective(h, pair);
	}
	return mlv_health_is_up(h, vip, backend);
}
