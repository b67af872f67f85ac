/* SPDX-License-Identifier: BSD-3-Clause */
/* The health command: what the health-check engine (control/health/health.h)
 * says about each backend of the current generation. */
#include "control/ctl/commands_internal.h"

#include <string.h>

#include "control/health/health.h"
#include "dataplane/bpf/check_path/counters.h"

/* One (VIP, backend); a pair the engine does not check (no engine entry:
 * the generation came before the sync) has "checked": false. */
static json_t *pair_json(const struct mlv_health *h, const char *vip,
			 const char *backend)
{
	struct mlv_health_status s;
	char addr[MLV_IP_STRLEN];
	json_t *o;

	if (mlv_health_get(h, vip, backend, &s) != MLV_OK)
		return json_pack("{s:s, s:s, s:b}", "vip", vip, "backend", backend,
				 "checked", 0);
	o = json_pack("{s:s, s:s, s:b, s:s, s:s, s:i, s:b, s:b, s:b, s:b,"
		      " s:I, s:I, s:I, s:I, s:I, s:I}",
		      "vip", vip, "backend", backend, "checked", 1,
		      "type", mlv_health_type_name(s.type),
		      "address", mlv_ip_format(&s.address, addr, sizeof(addr)),
		      "port", (int)s.port,
		      "up", s.up, "effective_up", s.effective_up,
		      "vip_all_down", s.vip_all_down, "in_flight", s.in_flight,
		      "successes", (json_int_t)s.successes,
		      "failures", (json_int_t)s.failures,
		      "checks", (json_int_t)s.checks,
		      "transitions", (json_int_t)s.transitions,
		      "since_ms", (json_int_t)s.since_unix_ms,
		      "shared_by", (json_int_t)s.shared_by);
	if (o && (json_object_set_new(o, "via",
				      json_string(mlv_health_via_name(s.via))) ||
		  (s.via == MLV_HEALTH_VIA_DATA_PATH &&
		   json_object_set_new(o, "vip_address", json_string(
				mlv_ip_format(&s.vip, addr, sizeof(addr))))) ||
		  json_object_set_new(o, "last_result", s.has_result ?
				      json_string(s.last_result) : json_null()) ||
		  json_object_set_new(o, "last_ok", s.has_result ?
				      json_boolean(s.last_ok) : json_null()))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The data-path checks' packets (carried, returned, dropped), or null
 * when no check goes through the data path. */
static json_t *data_path_json(const struct mlv_ctl_state *st)
{
	static const char *const names[] = {
#define MLV_CP_NAME(id, name, help) name,
		MLV_CP_COUNTERS(MLV_CP_NAME)
#undef MLV_CP_NAME
	};
	uint64_t v[MLV_CP_CTR__COUNT];
	json_t *o;

	if (!st->check_path_counters ||
	    !st->check_path_counters(st->ctx, v))
		return json_null();
	o = json_object();
	for (int c = 0; o && c < MLV_CP_CTR__COUNT; c++)
		if (json_object_set_new(o, names[c],
					json_integer((json_int_t)v[c]))) {
			json_decref(o);
			return NULL;
		}
	return o;
}

static json_t *engine_json(const struct mlv_health *h)
{
	struct mlv_health_stats s;
	json_t *ctr = json_object();

	mlv_health_stats(h, &s);
	for (int i = 0; ctr && i < MLV_HEALTH_CTR__COUNT; i++)
		if (json_object_set_new(ctr,
				mlv_health_counter_name((enum mlv_health_counter)i),
				json_integer((json_int_t)s.counters[i]))) {
			json_decref(ctr);
			ctr = NULL;
		}
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
			 "vips", (json_int_t)s.n_vips,
			 "pairs", (json_int_t)s.n_pairs,
			 "probes", (json_int_t)s.n_probes,
			 "in_flight", (json_int_t)s.in_flight,
			 "waiting", (json_int_t)s.waiting,
			 "max_in_flight", (json_int_t)s.max_in_flight,
			 "counters", ctr);
}

json_t *mlv_ctl_cmd_health(struct mlv_ctl_state *st, const json_t *args)
{
	const struct mlv_generation *gen = mlv_ctl_gen(st);
	const char *only = mlv_ctl_arg_str(args, "vip");
	json_t *backends, *vips;

	if (!st->health)
		return mlv_ctl_fail("health checks not available");
	if (!gen)
		return mlv_ctl_fail("no generation available yet");
	if (only && !mlv_gen_find_vip_named(gen, only))
		return mlv_ctl_fail("no VIP named \"%s\"", only);
	backends = json_array();
	vips = json_array();
	for (uint32_t i = 0; backends && vips && i < gen->n_vips; i++) {
		const struct mlv_gen_vip *v = &gen->vips[i];
		struct mlv_health_vip_status vs;

		if (only && strcmp(only, v->name) != 0)
			continue;
		if (mlv_health_vip_get(st->health, v->name, &vs) != MLV_OK)
			memset(&vs, 0, sizeof(vs));
		if (json_array_append_new(vips, json_pack(
				"{s:s, s:I, s:I, s:b, s:b}", "vip", v->name,
				"checked", (json_int_t)vs.n_backends,
				"down", (json_int_t)vs.n_down,
				"all_down", vs.all_down,
				"fail_open", vs.fail_open)))
			goto oom;
		for (uint32_t j = 0; j < v->n_backends; j++)
			if (json_array_append_new(backends, pair_json(
					st->health, v->name, v->backends[j].name)))
				goto oom;
	}
	if (!backends || !vips)
		goto oom;
	return json_pack("{s:b, s:I, s:o, s:o, s:o, s:o}", "ok", 1,
			 "generation", (json_int_t)gen->number,
			 "engine", engine_json(st->health),
			 "data_path", data_path_json(st),
			 "vips", vips, "backends", backends);
oom:
	json_decref(backends);
	json_decref(vips);
	return NULL;
}
