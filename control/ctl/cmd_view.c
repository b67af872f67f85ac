/* SPDX-License-Identifier: BSD-3-Clause */
/* Read-only views over the current generation and the counters: the
 * vips, backends and stats commands. */
#include "control/ctl/commands_internal.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "control/health/health.h"

/* ---- vips ---- */

/* The VIP's cumulative drops by reason (MLV_VIP_DROP_REASONS), as
 * {reason: count}; *total receives their sum. NULL on OOM. */
static json_t *vip_drops_json(const struct mlv_ctl_state *st,
			      const struct mlv_generation *gen,
			      const struct mlv_gen_vip *v, uint64_t *total)
{
	struct mlv_vip_drops d;
	json_t *o = json_object();

	mlv_stats_vip_drops(st->stats, gen, v, &d);
	*total = 0;
	for (int r = 0; o && r < MLV_VDROP__COUNT; r++) {
		*total += d.v[r];
		if (json_object_set_new(o, mlv_drop_reason_name(
				mlv_vip_drop_reason((enum mlv_vip_drop)r)),
				json_integer((json_int_t)d.v[r]))) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

/* Where the running config's checks of VIP name go: "direct",
 * "data_path", or "none" (no checks, or a VIP the config lacks). */
/* The config of the generation's VIP i named name: cfg->vips[i] when the
 * generation is the config's (the builder keeps the order), else found
 * by name; NULL when none. */
static const struct mlv_vip_config *vip_config(const struct mlv_ctl_state *st,
					       uint32_t i, const char *name)
{
	const struct mlv_config *cfg = mlv_ctl_config(st);

	if (!cfg)
		return NULL;
	if (i < cfg->n_vips && strcmp(cfg->vips[i].name, name) == 0)
		return &cfg->vips[i];
	for (uint32_t k = 0; k < cfg->n_vips; k++)
		if (strcmp(cfg->vips[k].name, name) == 0)
			return &cfg->vips[k];
	return NULL;
}

static const char *health_via(const struct mlv_vip_config *vc)
{
	if (!vc || vc->health.type == MLV_HEALTH_NONE)
		return "none";
	return mlv_health_via_name(vc->health.via);
}

/* The VIP's ipip_source (six: ipip_source6) as JSON: its prefix, or null
 * when its outer sources are the ports' addresses. */
static json_t *ipip_source(const struct mlv_vip_config *vc, bool six)
{
	const struct mlv_ip_prefix *p = !vc ? NULL :
					six ? &vc->ipip_source6 : &vc->ipip_source;
	char buf[MLV_IP_PREFIX_STRLEN];

	if (!p || p->ip.family == MLV_AF_NONE)
		return json_null();
	return json_string(mlv_ip_prefix_format(p, buf, sizeof(buf)));
}

static json_t *vip_json(const struct mlv_ctl_state *st,
			const struct mlv_generation *gen,
			const struct mlv_gen_vip *v)
{
	const struct mlv_vip_config *vc =
		vip_config(st, (uint32_t)(v - gen->vips), v->name);
	char addr[MLV_IP_STRLEN], ports[16];
	json_t *o = json_pack("{s:s, s:s, s:i, s:s, s:s, s:s, s:s, s:I, s:o, s:I, s:I}",
			      "name", v->name,
			      "address", mlv_ctl_vip_addr(v, addr, sizeof(addr)),
			      "port", (int)ntohs(v->port_be),
			      "ports", mlv_vip_port_format(ntohs(v->port_be),
							   v->port_last, ports,
							   sizeof(ports)),
			      "hash", mlv_hash_fields_name(v->hash_fields),
			      "protocol", mlv_proto_name(v->protocol),
			      "forwarding", mlv_forwarding_name(v->forwarding),
			      "table_size", (json_int_t)v->table_size,
			      "fingerprint", mlv_ctl_fingerprint(v->fingerprint),
			      "backends", (json_int_t)v->n_backends,
			      "usable_backends", (json_int_t)v->n_usable);

	/* the prefixes of its source ACL (allow and deny), 0: none; and
	 * what its other features do in this generation */
	if (o && (json_object_set_new(o, "acl_prefixes", json_integer(
			  v->acl ? (json_int_t)v->acl->n_rules : 0)) ||
		  json_object_set_new(o, "mss_clamp",
				      json_integer(v->mss_clamp)) ||
		  json_object_set_new(o, "new_flows_per_second",
				      json_integer(v->flow_limit.rate)) ||
		  json_object_set_new(o, "quic", json_boolean(v->quic)) ||
		  json_object_set_new(o, "echo_reply",
				      json_boolean(v->echo_reply)) ||
		  json_object_set_new(o, "second_chance",
				      json_boolean(v->second_chance)) ||
		  json_object_set_new(o, "health_via",
				      json_string(health_via(vc))) ||
		  json_object_set_new(o, "ipip_source",
				      ipip_source(vc, false)) ||
		  json_object_set_new(o, "ipip_source6",
				      ipip_source(vc, true)))) {
		json_decref(o);
		return NULL;
	}
	if (o && st->stats) {
		struct mlv_flow_counters c;
		uint64_t total;

		mlv_stats_vip(st->stats, gen, v, &c);
		if (!mlv_ctl_set_flow_counters(o, &c) ||
		    json_object_set_new(o, "drops",
					vip_drops_json(st, gen, v, &total))) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

json_t *mlv_ctl_cmd_vips(struct mlv_ctl_state *st, const json_t *args)
{
	const struct mlv_generation *gen = mlv_ctl_gen(st);
	json_t *arr;

	(void)args;
	if (!gen)
		return mlv_ctl_fail("no generation available yet");
	arr = json_array();
	for (uint32_t i = 0; arr && i < gen->n_vips; i++)
		if (json_array_append_new(arr, vip_json(st, gen, &gen->vips[i]))) {
			json_decref(arr);
			arr = NULL;
		}
	return json_pack("{s:b, s:I, s:o}", "ok", 1,
			 "generation", (json_int_t)gen->number, "vips", arr);
}

/* ---- backends ---- */

static json_t *override_json(const struct mlv_gen_backend_state *s)
{
	if (!s->drain_override && !s->has_weight_override)
		return json_null();
	return json_pack("{s:b, s:o}", "drain", s->drain_override,
			 "weight", s->has_weight_override ?
			 json_integer(s->weight_override) : json_null());
}

static json_t *backend_json(const struct mlv_ctl_state *st,
			    const struct mlv_generation *gen,
			    const struct mlv_gen_vip *v,
			    const struct mlv_gen_backend *b, uint32_t slots)
{
	struct mlv_gen_backend_state s;
	char addr[MLV_IP_STRLEN];
	json_t *o;

	uint64_t flows[2];

	mlv_ctl_backend_state(st, v->name, b->name, &s);
	mlv_gen_backend_flows(gen, b, flows);
	o = json_pack("{s:s, s:s, s:s, s:I, s:s, s:b, s:o, s:I, s:I, s:I}",
		      "vip", v->name, "name", b->name,
		      "address", mlv_ip_format(&b->address, addr, sizeof(addr)),
		      "weight", (json_int_t)b->weight,
		      "state", mlv_ctl_backend_state_name(b),
		      "healthy", s.healthy,
		      "override", override_json(&s),
		      "slots", (json_int_t)slots,
		      "active_connections", (json_int_t)flows[MLV_TALLY_ACTIVE],
		      "inactive_connections", (json_int_t)flows[MLV_TALLY_INACTIVE]);
	/* the server ID a quic VIP routes to it by, if any */
	if (o && v->quic && b->quic_server_id &&
	    json_object_set_new(o, "quic_server_id",
				json_integer(b->quic_server_id))) {
		json_decref(o);
		return NULL;
	}
	if (o && st->stats) {
		struct mlv_flow_counters c;

		mlv_stats_backend(st->stats, gen, b, &c);
		if (!mlv_ctl_set_flow_counters(o, &c)) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

/* The backends dump in steps: i the VIP, j its next backend; priv the
 * VIP's slot counts (NULL before its first backend); only the VIP asked
 * for, or every one (i over all VIPs). */
struct backends_dump {
	const struct mlv_gen_vip *only;
	uint32_t *slots;
};

static int backends_step(struct mlv_ctl_steps *s)
{
	struct backends_dump *d = s->priv;
	const struct mlv_generation *gen = s->gen;
	uint32_t budget = MLV_CTL_STEP_OBJECTS;

	for (; s->i < gen->n_vips; s->i++, s->j = 0) {
		const struct mlv_gen_vip *v = &gen->vips[s->i];

		if (d->only && d->only != v)
			continue;
		if (!d->slots && !(d->slots = mlv_ctl_count_slots(v)))
			return -1;
		for (; s->j < v->n_backends; s->j++) {
			if (budget-- == 0)
				return 0;
			if (mlv_ctl_text_add(&s->text, backend_json(s->st, gen, v,
					&v->backends[s->j], d->slots[s->j])))
				return -1;
		}
		free(d->slots);
		d->slots = NULL;
	}
	return 1;
}

static json_t *backends_finish(struct mlv_ctl_steps *s)
{
	return json_pack("{s:b, s:I}", "ok", 1,
			 "generation", (json_int_t)s->generation);
}

static void backends_release(struct mlv_ctl_steps *s)
{
	struct backends_dump *d = s->priv;

	free(d->slots);
	free(d);
}

static const struct mlv_ctl_steps_kind backends_dump_kind = {
	.key = "backends", .step = backends_step, .finish = backends_finish,
	.release = backends_release,
};

json_t *mlv_ctl_cmd_backends(struct mlv_ctl_state *st, const json_t *args)
{
	const struct mlv_generation *gen = mlv_ctl_gen(st);
	const char *only = mlv_ctl_arg_str(args, "vip");
	const struct mlv_gen_vip *vip = NULL;
	struct backends_dump *d;

	if (!gen)
		return mlv_ctl_fail("no generation available yet");
	if (only && !(vip = mlv_gen_find_vip_named(gen, only)))
		return mlv_ctl_fail("no VIP named \"%s\"", only);
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->only = vip;
	return mlv_ctl_run_steps(st, &backends_dump_kind, d, 0);
}

/* ---- stats ---- */

static json_t *counters_json(const struct mlv_worker_counters *c)
{
	json_t *o = json_object();

	for (int i = 0; o && i < MLV_CTR__COUNT; i++)
		if (json_object_set_new(o, mlv_worker_counter_name((enum mlv_worker_counter)i),
					json_integer((json_int_t)c->ctr[i]))) {
			json_decref(o);
			o = NULL;
		}
	return o;
}

static json_t *drops_json(const struct mlv_worker_counters *c)
{
	json_t *o = json_object();
	uint64_t total = 0;

	for (int i = 0; o && i < MLV_DROP__COUNT; i++) {
		total += c->drop[i];
		if (json_object_set_new(o, mlv_drop_reason_name((enum mlv_drop_reason)i),
					json_integer((json_int_t)c->drop[i]))) {
			json_decref(o);
			o = NULL;
		}
	}
	if (o && json_object_set_new(o, "total", json_integer((json_int_t)total))) {
		json_decref(o);
		o = NULL;
	}
	return o;
}

static json_t *conntrack_json(const struct mlv_ct *const *cts, uint32_t n)
{
	uint64_t occ = 0, cap = 0, ins = 0, ev = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (!cts[i])
			continue;
		occ += mlv_ct_occupancy(cts[i]);
		cap += mlv_ct_capacity(cts[i]);
		ins += mlv_ct_get_stats(cts[i])->inserts;
		ev += mlv_ct_get_stats(cts[i])->evictions;
	}
	return json_pack("{s:I, s:I, s:I, s:I}", "occupancy", (json_int_t)occ,
			 "capacity", (json_int_t)cap, "inserts", (json_int_t)ins,
			 "evictions", (json_int_t)ev);
}

static json_t *per_worker_json(const struct mlv_ctl_state *st)
{
	json_t *arr = json_array();

	for (uint32_t i = 0; arr && i < st->n_workers; i++) {
		const struct mlv_worker_counters *c = st->worker_ctr[i];
		json_t *o;

		if (!c)
			continue;
		o = json_pack("{s:I, s:o, s:o}", "worker", (json_int_t)i,
			      "counters", counters_json(c), "drops", drops_json(c));
		if (o && st->worker_ct && st->worker_ct[i] &&
		    json_object_set_new(o, "conntrack",
					conntrack_json(&st->worker_ct[i], 1))) {
			json_decref(o);
			o = NULL;
		}
		if (json_array_append_new(arr, o)) {
			json_decref(arr);
			arr = NULL;
		}
	}
	return arr;
}

/* {VIP name: {reason: count}} for every VIP with a drop of its own. */
static json_t *vip_drops_all_json(const struct mlv_ctl_state *st)
{
	const struct mlv_generation *gen = mlv_ctl_gen(st);
	json_t *all = json_object();

	for (uint32_t i = 0; all && gen && st->stats && i < gen->n_vips; i++) {
		uint64_t total;
		json_t *o = vip_drops_json(st, gen, &gen->vips[i], &total);

		if (o && total == 0) {
			json_decref(o);
			continue;
		}
		if (json_object_set_new(all, gen->vips[i].name, o)) {
			json_decref(all);
			return NULL;
		}
	}
	return all;
}

json_t *mlv_ctl_cmd_stats(struct mlv_ctl_state *st, const json_t *args)
{
	struct mlv_worker_counters sum;
	struct timespec now;
	json_t *reply;

	if (!st->worker_ctr || st->n_workers == 0)
		return mlv_ctl_fail("worker counters not available");
	mlv_stats_workers(st->worker_ctr, st->n_workers, &sum);
	clock_gettime(CLOCK_MONOTONIC, &now);
	/* time_ns lets clients turn two replies into rates */
	reply = json_pack("{s:b, s:I, s:I, s:o, s:o}", "ok", 1,
			  "time_ns", (json_int_t)now.tv_sec * 1000000000 + now.tv_nsec,
			  "workers", (json_int_t)st->n_workers,
			  "counters", counters_json(&sum),
			  "drops", drops_json(&sum));
	if (reply && json_object_set_new(reply, "rates", mlv_ctl_rates_json(st)))
		goto fail;
	if (reply && json_object_set_new(reply, "vip_drops",
					 vip_drops_all_json(st)))
		goto fail;
	if (reply && st->worker_ct &&
	    json_object_set_new(reply, "conntrack",
				conntrack_json(st->worker_ct, st->n_workers)))
		goto fail;
	if (reply && st->port_stats) {
		const struct mlv_port_stats *ps = NULL;
		uint32_t n = st->port_stats(st->ctx, &ps);

		if (json_object_set_new(reply, "ports", mlv_port_stats_array(
				ps, n, mlv_ctl_arg_flag(args, "ports"))))
			goto fail;
	}
	if (reply && mlv_ctl_arg_flag(args, "per_worker") &&
	    json_object_set_new(reply, "per_worker", per_worker_json(st)))
		goto fail;
	return reply;
fail:
	json_decref(reply);
	return NULL;
}
