/* SPDX-License-Identifier: BSD-3-Clause */
/* The engine's answers to the daemon: a pair's status, whether it is up,
 * a VIP's down count, the totals. Read only. Control thread only. */
#include <string.h>

#include "control/health/health_internal.h"

enum mlv_err mlv_health_get(const struct mlv_health *h, const char *vip,
			    const char *backend, struct mlv_health_status *out)
{
	const struct health_pair *pair;
	const struct health_probe *p;

	if (!h || !vip || !backend || !out)
		return MLV_E_INVAL;
	pair = health_pair_find(h, vip, backend);
	if (!pair)
		return MLV_E_NOT_FOUND;
	p = pair->probe;
	memset(out, 0, sizeof(*out));
	out->type = p->spec.type;
	out->address = p->spec.address;
	out->port = p->spec.port;
	out->via = p->spec.via;
	out->vip = p->spec.vip;
	out->up = p->up;
	out->effective_up = health_pair_effective(h, pair);
	out->vip_all_down = health_vip_all_down(pair->vip);
	out->in_flight = p->phase == PHASE_RUNNING;
	out->successes = p->successes;
	out->failures = p->failures;
	out->checks = p->checks;
	out->transitions = p->transitions;
	out->since_unix_ms = p->since_unix_ms;
	out->has_result = p->has_result;
	out->last_ok = p->last_ok;
	memcpy(out->last_result, p->last_result, sizeof(out->last_result));
	out->shared_by = p->n_pairs;
	return MLV_OK;
}

bool mlv_health_is_up(const struct mlv_health *h, const char *vip,
		      const char *backend)
{
	const struct health_pair *pair;

	if (!h || !vip || !backend)
		return true;
	pair = health_pair_find(h, vip, backend);
	return !pair || health_pair_effective(h, pair);
}

enum mlv_err mlv_health_vip_get(const struct mlv_health *h, const char *vip,
				struct mlv_health_vip_status *out)
{
	const struct health_vip *v;

	if (!h || !vip || !out)
		return MLV_E_INVAL;
	v = health_vip_find(h, vip);
	if (!v)
		return MLV_E_NOT_FOUND;
	out->n_backends = v->n_pairs;
	out->n_down = v->n_down;
	out->all_down = health_vip_all_down(v);
	out->fail_open = out->all_down &&
			 h->opts.all_down == MLV_HEALTH_FAIL_OPEN;
	return MLV_OK;
}

void mlv_health_stats(const struct mlv_health *h, struct mlv_health_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!h)
		return;
	out->n_vips = h->vips.n;
	out->n_pairs = h->pairs.n;
	out->n_probes = h->probes.n;
	out->in_flight = h->in_flight;
	out->waiting = h->n_waiting;
	out->max_in_flight = h->max_in_flight;
	memcpy(out->counters, h->counters, sizeof(out->counters));
}
