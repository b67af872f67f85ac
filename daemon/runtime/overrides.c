/* SPDX-License-Identifier: BSD-3-Clause */
#include "daemon/runtime/overrides.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mlv_overrides_init(struct mlv_overrides *o)
{
	memset(o, 0, sizeof(*o));
}

void mlv_overrides_free(struct mlv_overrides *o)
{
	free(o->items);
	memset(o, 0, sizeof(*o));
}

static int cmp_key(const char *vip, const char *backend,
		   const struct mlv_override *it)
{
	int c = strcmp(vip, it->vip);

	return c ? c : strcmp(backend, it->backend);
}

/* Index of (vip, backend), or where it would be inserted (*found false). */
static uint32_t find(const struct mlv_overrides *o, const char *vip,
		     const char *backend, bool *found)
{
	uint32_t lo = 0, hi = o->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = cmp_key(vip, backend, &o->items[mid]);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	*found = false;
	return lo;
}

bool mlv_overrides_get(const struct mlv_overrides *o, const char *vip,
		       const char *backend, struct mlv_override *out)
{
	bool found;
	uint32_t i = find(o, vip, backend, &found);

	if (found) {
		*out = o->items[i];
		return true;
	}
	memset(out, 0, sizeof(*out));
	snprintf(out->vip, sizeof(out->vip), "%s", vip);
	snprintf(out->backend, sizeof(out->backend), "%s", backend);
	return false;
}

static bool same(const struct mlv_override *a, const struct mlv_override *b)
{
	return a->drain == b->drain && a->has_weight == b->has_weight &&
	       (!a->has_weight || a->weight == b->weight);
}

enum mlv_err mlv_overrides_put(struct mlv_overrides *o,
			       const struct mlv_override *ov, bool *changed)
{
	bool found, empty = !ov->drain && !ov->has_weight;
	uint32_t i;

	if (changed)
		*changed = false;
	if (strnlen(ov->vip, MLV_NAME_MAX) == MLV_NAME_MAX ||
	    strnlen(ov->backend, MLV_NAME_MAX) == MLV_NAME_MAX)
		return MLV_E_INVAL;
	i = find(o, ov->vip, ov->backend, &found);
	if (found) {
		if (empty) {
			memmove(&o->items[i], &o->items[i + 1],
				(o->n - i - 1) * sizeof(o->items[0]));
			o->n--;
			if (changed)
				*changed = true;
		} else if (!same(&o->items[i], ov)) {
			o->items[i] = *ov;
			if (changed)
				*changed = true;
		}
		return MLV_OK;
	}
	if (empty)
		return MLV_OK;
	if (o->n == o->cap) {
		uint32_t cap = o->cap ? o->cap * 2 : 8;
		struct mlv_override *grown = realloc(o->items,
						     cap * sizeof(*grown));

		if (!grown)
			return MLV_E_NOMEM;
		o->items = grown;
		o->cap = cap;
	}
	memmove(&o->items[i + 1], &o->items[i], (o->n - i) * sizeof(o->items[0]));
	o->items[i] = *ov;
	o->n++;
	if (changed)
		*changed = true;
	return MLV_OK;
}

void mlv_overrides_apply(const struct mlv_overrides *o, const char *vip,
			 const char *backend, struct mlv_gen_backend_state *out)
{
	bool found;
	uint32_t i;

	if (o->n == 0)
		return;
	i = find(o, vip, backend, &found);
	if (!found)
		return;
	out->drain_override = o->items[i].drain;
	out->has_weight_override = o->items[i].has_weight;
	out->weight_override = o->items[i].weight;
}

static bool config_has(const struct mlv_config *cfg, const char *vip,
		       const char *backend)
{
	const struct mlv_vip_config *vc = mlv_config_vip(cfg, vip);

	for (uint32_t i = 0; vc && i < vc->n_backends; i++)
		if (strcmp(vc->backends[i].name, backend) == 0)
			return true;
	return false;
}

uint32_t mlv_overrides_prune(struct mlv_overrides *o,
			     const struct mlv_config *cfg,
			     void (*forget)(const struct mlv_override *ov,
					    void *ctx),
			     void *ctx)
{
	uint32_t kept = 0, dropped = 0;

	for (uint32_t i = 0; i < o->n; i++) {
		if (config_has(cfg, o->items[i].vip, o->items[i].backend)) {
			o->items[kept++] = o->items[i];
			continue;
		}
		if (forget)
			forget(&o->items[i], ctx);
		dropped++;
	}
	o->n = kept;
	return dropped;
}
