/* SPDX-License-Identifier: BSD-3-Clause */
/* Control-socket dispatch and the commands about the daemon itself:
 * help, status, reload and the runtime overrides (drain, undrain,
 * weight). The views of VIPs, backends and counters are in
 * cmd_view.c; tables, lookup and whatif in cmd_table.c. */
#define _GNU_SOURCE   /* open_memstream */
#include "control/ctl/commands_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control/health/health.h"
#include "control/tables/maglev.h"

#ifndef MLV_VERSION
#define MLV_VERSION "unknown"
#endif

typedef json_t *(*cmd_fn)(struct mlv_ctl_state *st, const json_t *args);

static const cmd_fn handlers[MLV_CTL_CMD__COUNT] = {
#define HANDLER(id, name, help) [MLV_CTL_CMD_##id] = mlv_ctl_cmd_##name,
	MLV_CTL_COMMANDS(HANDLER)
#undef HANDLER
};

static const char *const override_names[MLV_CTL_OV__COUNT] = {
#define OV_NAME(id, name) [MLV_CTL_OV_##id] = name,
	MLV_CTL_OVERRIDE_OPS(OV_NAME)
#undef OV_NAME
};

const char *mlv_ctl_override_op_name(enum mlv_ctl_override_op op)
{
	return (unsigned)op < MLV_CTL_OV__COUNT ? override_names[op] : "unknown";
}

json_t *mlv_ctl_handle(const json_t *request,
		       const struct mlv_ctl_peer *peer, void *ctx,
		       struct mlv_ctl_deferred *defer)
{
	struct mlv_ctl_state *st = ctx;
	const struct mlv_ctl_cmd_spec *cmd;
	const char *name;
	const json_t *args;
	const char *key;
	json_t *v, *reply;
	char err[256];

	if (!json_is_object(request))
		return mlv_ctl_fail("a request must be a JSON object");
	json_object_foreach((json_t *)request, key, v) {
		if (strcmp(key, "command") && strcmp(key, "args") && strcmp(key, "id"))
			return mlv_ctl_fail("unknown request field \"%s\" "
					    "(expected command, args, id)", key);
	}
	name = json_string_value(json_object_get(request, "command"));
	if (!name)
		return mlv_ctl_fail("\"command\" must be a string; try \"help\"");
	cmd = mlv_ctl_cmd_find(name);
	if (!cmd)
		return mlv_ctl_fail("unknown command \"%s\"; try \"help\"", name);
	args = json_object_get(request, "args");
	if (json_is_null(args))
		args = NULL;
	if (!mlv_ctl_args_check(cmd, args, err, sizeof(err)))
		return mlv_ctl_fail("%s", err);
	st->defer = defer;
	st->peer = peer;
	reply = handlers[cmd->id](st, args);
	st->defer = NULL;
	st->peer = NULL;
	return reply;
}

void mlv_ctl_note_reload(struct mlv_ctl_state *st, bool ok,
			 uint32_t generation, const char *summary)
{
	struct mlv_ctl_reload_log *log = &st->reloads;
	struct mlv_ctl_reload_entry *e = &log->entries[log->next];
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	e->time = (int64_t)now.tv_sec;
	e->ok = ok;
	e->generation = generation;
	snprintf(e->summary, sizeof(e->summary), "%s", summary ? summary : "");
	log->next = (log->next + 1) % MLV_CTL_RELOAD_HISTORY;
	if (log->n < MLV_CTL_RELOAD_HISTORY)
		log->n++;
	if (ok)
		log->n_ok++;
	else
		log->n_failed++;
}

/* ---- help ---- */

static json_t *arg_json(const struct mlv_ctl_arg_spec *a)
{
	static const char *const type_names[] = {
		[MLV_CTL_ARG_STRING] = "string",
		[MLV_CTL_ARG_UINT] = "integer",
		[MLV_CTL_ARG_FLAG] = "boolean",
	};
	json_t *o = json_pack("{s:s, s:s, s:b, s:s}", "name", a->name,
			      "type", type_names[a->type], "required", a->required,
			      "help", a->help);

	if (o && a->type == MLV_CTL_ARG_UINT &&
	    json_object_set_new(o, "max", json_integer((json_int_t)a->max)))
		goto fail;
	if (o && a->choices) {
		json_t *ch = json_array();

		if (json_object_set_new(o, "choices", ch))
			goto fail;
		for (int i = 0; a->choices[i]; i++)
			if (json_array_append_new(ch, json_string(a->choices[i])))
				goto fail;
	}
	return o;
fail:
	json_decref(o);
	return NULL;
}

json_t *mlv_ctl_cmd_help(struct mlv_ctl_state *st, const json_t *args)
{
	json_t *cmds = json_array();
	char syn[256];

	(void)st;
	(void)args;
	for (int i = 0; cmds && i < MLV_CTL_CMD__COUNT; i++) {
		const struct mlv_ctl_cmd_spec *c = &mlv_ctl_cmd_specs[i];
		json_t *a = json_array();

		for (uint32_t j = 0; a && j < c->n_args; j++)
			if (json_array_append_new(a, arg_json(&c->args[j]))) {
				json_decref(a);
				a = NULL;
			}
		if (json_array_append_new(cmds, json_pack("{s:s, s:s, s:s, s:o}",
				"name", c->name,
				"synopsis", mlv_ctl_synopsis(c, syn, sizeof(syn)),
				"help", c->help, "args", a))) {
			json_decref(cmds);
			cmds = NULL;
		}
	}
	return json_pack("{s:b, s:o}", "ok", 1, "commands", cmds);
}

/* ---- status ---- */

static json_t *ip_or_null(const struct mlv_ip *ip)
{
	char text[MLV_IP_STRLEN];

	if (ip->family == MLV_AF_NONE)
		return json_null();
	return json_string(mlv_ip_format(ip, text, sizeof(text)));
}

static json_t *mac_json(const uint8_t bytes[6])
{
	struct mlv_mac mac;
	char text[MLV_MAC_STRLEN];

	memcpy(mac.bytes, bytes, 6);
	return json_string(mlv_mac_format(&mac, text, sizeof(text)));
}

static json_t *ports_json(const struct mlv_config *cfg,
			  const struct mlv_generation *gen)
{
	json_t *arr = json_array();

	for (uint32_t i = 0; arr && cfg && i < cfg->n_ports; i++) {
		const struct mlv_port_config *p = &cfg->ports[i];
		json_t *o = json_pack("{s:s, s:s, s:o, s:o, s:i, s:s?, s:b, s:o}",
				      "name", p->name, "device", p->device,
				      "address", ip_or_null(&p->address),
				      "address6", ip_or_null(&p->address6),
				      "mtu", (int)p->mtu,
				      "tx_port", p->tx_port[0] ? p->tx_port : NULL,
				      "exception", p->exception,
				      "vlan", p->vlan ? json_integer(p->vlan) :
							json_null());

		if (o && gen && i < gen->n_ports &&
		    (json_object_set_new(o, "mac", mac_json(gen->ports[i].mac)) ||
		     json_object_set_new(o, "next_hop",
					 mac_json(gen->ports[i].next_hop)) ||
		     json_object_set_new(o, "next_hop6",
					 mac_json(mlv_gen_port_next_hop(
						 &gen->ports[i], MLV_AF_INET6))))) {
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

/* Backends with a runtime override, and those health checks took out. */
static bool overrides_json(const struct mlv_ctl_state *st,
			   const struct mlv_generation *gen,
			   json_t **overrides, json_t **down)
{
	*overrides = json_array();
	*down = json_array();
	if (!*overrides || !*down)
		return false;
	for (uint32_t i = 0; gen && i < gen->n_vips; i++) {
		const struct mlv_gen_vip *v = &gen->vips[i];

		for (uint32_t j = 0; j < v->n_backends; j++) {
			const struct mlv_gen_backend *b = &v->backends[j];
			struct mlv_gen_backend_state s;

			mlv_ctl_backend_state(st, v->name, b->name, &s);
			if ((s.drain_override || s.has_weight_override) &&
			    json_array_append_new(*overrides, json_pack(
					"{s:s, s:s, s:b, s:o}", "vip", v->name,
					"backend", b->name, "drain", s.drain_override,
					"weight", s.has_weight_override ?
					json_integer(s.weight_override) : json_null())))
				return false;
			if (!s.healthy &&
			    json_array_append_new(*down, json_pack("{s:s, s:s}",
					"vip", v->name, "backend", b->name)))
				return false;
		}
	}
	return true;
}

/* VIPs whose every checked backend is down, and whether they fail open
 * (keep the configured table) or closed (docs/health.md). */
static json_t *all_down_json(const struct mlv_ctl_state *st,
			     const struct mlv_generation *gen)
{
	json_t *arr = json_array();

	for (uint32_t i = 0; arr && st->health && gen && i < gen->n_vips; i++) {
		struct mlv_health_vip_status vs;

		if (mlv_health_vip_get(st->health, gen->vips[i].name, &vs) != MLV_OK ||
		    !vs.all_down)
			continue;
		if (json_array_append_new(arr, json_pack("{s:s, s:b}", "vip",
				gen->vips[i].name, "fail_open", vs.fail_open))) {
			json_decref(arr);
			arr = NULL;
		}
	}
	return arr;
}

static json_t *reloads_json(const struct mlv_ctl_reload_log *log)
{
	json_t *last = json_array();

	/* newest first */
	for (uint32_t k = 0; last && k < log->n; k++) {
		uint32_t i = (log->next + MLV_CTL_RELOAD_HISTORY - 1 - k) %
			     MLV_CTL_RELOAD_HISTORY;
		const struct mlv_ctl_reload_entry *e = &log->entries[i];

		if (json_array_append_new(last, json_pack("{s:I, s:b, s:I, s:s?}",
				"time", (json_int_t)e->time, "ok", e->ok,
				"generation", (json_int_t)e->generation,
				"error", e->summary[0] ? e->summary : NULL))) {
			json_decref(last);
			last = NULL;
		}
	}
	return json_pack("{s:I, s:I, s:o}", "ok", (json_int_t)log->n_ok,
			 "failed", (json_int_t)log->n_failed, "last", last);
}

static json_t *server_json(const struct mlv_ctl_server *srv)
{
	struct mlv_ctl_server_stats s;

	if (!srv)
		return json_null();
	mlv_ctl_server_get_stats(srv, &s);
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I,"
			 " s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			 "clients", (json_int_t)s.clients,
			 "pending", (json_int_t)s.pending,
			 "accepted", (json_int_t)s.accepted,
			 "refused_full", (json_int_t)s.refused_full,
			 "requests", (json_int_t)s.requests,
			 "bad_requests", (json_int_t)s.bad_requests,
			 "oversized", (json_int_t)s.oversized,
			 "reply_too_large", (json_int_t)s.reply_too_large,
			 "stalled", (json_int_t)s.stalled,
			 "disconnects", (json_int_t)s.disconnects,
			 "half_requests", (json_int_t)s.half_requests,
			 "deferred", (json_int_t)s.deferred,
			 "refused_level", (json_int_t)s.refused_level,
			 "reply_over_budget", (json_int_t)s.reply_over_budget,
			 "shed", (json_int_t)s.shed,
			 "heavy_waits", (json_int_t)s.heavy_waits,
			 "idle_closed", (json_int_t)s.idle_closed,
			 "out_bytes", (json_int_t)s.out_bytes);
}

/* The announcer's view: null when the daemon has none. */
static json_t *announce_json(const struct mlv_ctl_state *st)
{
	const struct mlv_ctl_announce *a = st->announce ?
					   st->announce(st->ctx) : NULL;
	json_t *vips, *obj;

	if (!a)
		return json_null();
	vips = json_array();
	for (uint32_t i = 0; vips && i < a->n_vips; i++) {
		const struct mlv_ctl_announce_vip *v = &a->vips[i];

		if (json_array_append_new(vips, json_pack(
			    "{s:s, s:b, s:b, s:I, s:I}", "name", v->name,
			    "serving", v->serving, "announced", v->announced,
			    "usable", (json_int_t)v->usable,
			    "min_backends", (json_int_t)v->min_backends))) {
			json_decref(vips);
			return NULL;
		}
	}
	if (!vips)
		return NULL;
	obj = json_pack("{s:b, s:b, s:I, s:s, s:I, s:I, s:I, s:I, s:s?, s:b,"
			" s:o, s:o}",
			"enabled", a->enabled, "open", a->open,
			"table", (json_int_t)a->table, "device", a->device,
			"routes", (json_int_t)a->routes,
			"announces", (json_int_t)a->announces,
			"withdraws", (json_int_t)a->withdraws,
			"errors", (json_int_t)a->errors,
			"last_error", a->last_error[0] ? a->last_error : NULL,
			"stopping", a->stopping,
			"stop_in_ms", a->stopping ?
			json_integer((json_int_t)a->stop_in_ms) : json_null(),
			"vips", vips);
	return obj;
}

static json_t *restart_pending_json(const struct mlv_ctl_state *st)
{
	uint32_t n = 0;
	const mlv_ctl_restart_msg *msgs = st->restart_pending ?
				  st->restart_pending(st->ctx, &n) : NULL;
	json_t *list = json_array();

	for (uint32_t i = 0; list && msgs && i < n; i++)
		if (json_array_append_new(list, json_string(msgs[i]))) {
			json_decref(list);
			return NULL;
		}
	return list;
}

json_t *mlv_ctl_cmd_status(struct mlv_ctl_state *st, const json_t *args)
{
	const struct mlv_generation *gen = mlv_ctl_gen(st);
	const struct mlv_config *cfg = mlv_ctl_config(st);
	const char *path = st->config_path ? st->config_path :
			   cfg ? cfg->path : NULL;
	json_t *overrides = NULL, *down = NULL;
	struct timespec now;
	double uptime = 0;

	(void)args;
	if (st->started.tv_sec || st->started.tv_nsec) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		uptime = (double)(now.tv_sec - st->started.tv_sec) +
			 (double)(now.tv_nsec - st->started.tv_nsec) / 1e9;
	}
	if (!overrides_json(st, gen, &overrides, &down)) {
		json_decref(overrides);
		json_decref(down);
		return NULL;
	}
	return json_pack("{s:b, s:s, s:i, s:f, s:o, s:s?, s:I, s:o, s:I, s:I,"
			 " s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			 "ok", 1,
			 "version", MLV_VERSION,
			 "pid", (int)getpid(),
			 "uptime_s", uptime,
			 "generation", gen ? json_integer(gen->number) : json_null(),
			 "config", path,
			 "workers", (json_int_t)st->n_workers,
			 "ports", ports_json(cfg, gen),
			 "vips", (json_int_t)(gen ? gen->n_vips : 0),
			 "backends", (json_int_t)(gen ? gen->n_all_backends : 0),
			 "overrides", overrides,
			 "down", down,
			 "all_down", all_down_json(st, gen),
			 "reloads", reloads_json(&st->reloads),
			 "control", server_json(st->server),
			 "announce", announce_json(st),
			 "restart_pending", restart_pending_json(st));
}

/* ---- privilege levels ---- */

bool mlv_ctl_request_mutates(const json_t *request)
{
	const json_t *name = json_object_get(request, "command");
	const json_t *args = json_object_get(request, "args");
	const struct mlv_ctl_cmd_spec *cmd =
		json_is_string(name) ? mlv_ctl_cmd_find(json_string_value(name)) :
		NULL;

	if (!cmd)
		return false;   /* refused anyway, as unknown */
	switch (cmd->id) {
	case MLV_CTL_CMD_RELOAD:
		/* a dry run of the configured file reads and plans: the read
		 * level's. One of another file makes the daemon (root) open,
		 * search (include:) and build what the caller names: the
		 * admin level's, like a reload. */
		return !mlv_ctl_arg_flag(args, "dry_run") ||
		       json_object_get(args, "file") != NULL;
	case MLV_CTL_CMD_DRAIN:
	case MLV_CTL_CMD_UNDRAIN:
	case MLV_CTL_CMD_SHUTDOWN:
		return true;
	case MLV_CTL_CMD_WEIGHT:
		return json_object_get(args, "weight") != NULL ||
		       mlv_ctl_arg_flag(args, "reset");
	default:
		return false;
	}
}

bool mlv_ctl_request_heavy(const json_t *request)
{
	const json_t *name = json_object_get(request, "command");
	const struct mlv_ctl_cmd_spec *cmd =
		json_is_string(name) ? mlv_ctl_cmd_find(json_string_value(name)) :
		NULL;

	if (!cmd)
		return false;
	switch (cmd->id) {
	case MLV_CTL_CMD_VIPS:
	case MLV_CTL_CMD_BACKENDS:
	case MLV_CTL_CMD_TABLE:
	case MLV_CTL_CMD_CONNS:
	case MLV_CTL_CMD_WHATIF:
	case MLV_CTL_CMD_HEALTH:
		return true;
	default:
		return false;
	}
}

/* ---- shutdown ---- */

json_t *mlv_ctl_cmd_shutdown(struct mlv_ctl_state *st, const json_t *args)
{
	bool now = mlv_ctl_arg_flag(args, "now");
	const struct mlv_ctl_announce *a;
	char detail[200] = "";

	if (!st->shutdown)
		return mlv_ctl_fail("shutdown not available");
	if (st->shutdown(st->ctx, now, detail, sizeof(detail)) != MLV_OK)
		return mlv_ctl_fail("%s", detail[0] ? detail : "cannot stop");
	a = st->announce ? st->announce(st->ctx) : NULL;
	return json_pack("{s:b, s:b, s:o}", "ok", 1, "now",
			 now || !a || !a->stopping,
			 "stop_in_ms", a && a->stopping && !now ?
			 json_integer((json_int_t)a->stop_in_ms) : json_null());
}

/* ---- reload ---- */

/* Each diagnostic as the line mlv_diags_print writes for it. */
static bool diag_lines(const struct mlv_diags *d, json_t *errors,
		       json_t *warnings)
{
	for (uint32_t i = 0; i < d->n; i++) {
		struct mlv_diags one = { .file = d->file,
					 .fragments = d->fragments,
					 .n_fragments = d->n_fragments,
					 .n = 1, .cap = 1,
					 .items = &d->items[i] };
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		if (!f)
			return false;
		mlv_diags_print(&one, f);
		if (fclose(f) != 0) {
			free(text);
			return false;
		}
		if (len && text[len - 1] == '\n')
			text[--len] = '\0';
		json_t *into = d->items[i].level == MLV_DIAG_WARNING ? warnings : errors;
		int rc = json_array_append_new(into, json_string(text));

		free(text);
		if (rc)
			return false;
	}
	return true;
}

static const char *const plan_change_names[] = {
	[MLV_PLAN_SAME] = "same", [MLV_PLAN_ADDED] = "added",
	[MLV_PLAN_REMOVED] = "removed", [MLV_PLAN_CHANGED] = "changed",
};

/* The reply's "plan": what the new file changes, VIP by VIP. NULL when
 * memory ran out. */
static json_t *plan_json(const struct mlv_plan *plan)
{
	json_t *vips = json_array();

	for (uint32_t i = 0; vips && i < plan->n; i++) {
		const struct mlv_plan_vip *e = &plan->vips[i];

		if (json_array_append_new(vips, json_pack(
			"{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, "
			"s:I, s:I, s:f, s:I, s:I, s:I, s:b}",
			"name", e->name, "change", plan_change_names[e->change],
			"backends", e->backends,
			"backends_added", (json_int_t)e->backends_added,
			"backends_removed", (json_int_t)e->backends_removed,
			"backends_reweighted", (json_int_t)e->backends_reweighted,
			"backends_drained", (json_int_t)e->backends_drained,
			"usable_before", (json_int_t)e->usable_before,
			"usable_lost", (json_int_t)e->usable_lost,
			"usable_after", (json_int_t)e->usable_after,
			"other_settings", e->other,
			"table_size", (json_int_t)e->table_size,
			"slots_moved", (json_int_t)e->slots_moved,
			"fraction_moved", e->table_size ?
			(double)e->slots_moved / e->table_size : 0.0,
			"tracked", (json_int_t)e->tracked,
			"tracked_moved", (json_int_t)e->tracked_moved,
			"tracked_at_risk", (json_int_t)e->tracked_at_risk,
			"second_chance", e->second_chance))) {
			json_decref(vips);
			return NULL;
		}
	}
	if (!vips)
		return NULL;
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:o}",
			 "vips_before", (json_int_t)plan->vips_before,
			 "vips_after", (json_int_t)plan->vips_after,
			 "vips_added", (json_int_t)plan->vips_added,
			 "vips_removed", (json_int_t)plan->vips_removed,
			 "vips_changed", (json_int_t)plan->vips_changed,
			 "vips", vips);
}

static enum mlv_ctl_reload_mode reload_mode(const json_t *args)
{
	bool force = mlv_ctl_arg_flag(args, "force");

	if (mlv_ctl_arg_flag(args, "dry_run"))
		return force ? MLV_CTL_RELOAD_CHECK_FORCE : MLV_CTL_RELOAD_CHECK;
	return force ? MLV_CTL_RELOAD_FORCE : MLV_CTL_RELOAD_APPLY;
}

json_t *mlv_ctl_cmd_reload(struct mlv_ctl_state *st, const json_t *args)
{
	json_t *errors = json_array(), *warnings = json_array(), *reply = NULL;
	json_t *plan_j = NULL;
	const struct mlv_ctl_reload_req req = {
		.mode = reload_mode(args),
		.file = json_string_value(json_object_get(args, "file")),
		/* no peer (a caller without a server): the daemon itself */
		.uid = st->peer ? st->peer->uid : 0,
	};
	bool dry_run = req.mode == MLV_CTL_RELOAD_CHECK ||
		       req.mode == MLV_CTL_RELOAD_CHECK_FORCE;
	const struct mlv_generation *gen;
	struct mlv_plan plan = { 0 };
	struct mlv_diags diags;
	enum mlv_err rc;
	char summary[200];

	if (!st->reload) {
		json_decref(errors);
		json_decref(warnings);
		return mlv_ctl_fail("reload not available");
	}
	if (req.file && (!dry_run || req.file[0] != '/')) {
		json_decref(errors);
		json_decref(warnings);
		return mlv_ctl_fail("reload: %s", !dry_run ?
				    "a file other than the configured one is "
				    "only planned (dry_run); to apply it, put "
				    "it in place of the configured file and "
				    "reload" :
				    "file must be an absolute path (the "
				    "daemon's directory is not the caller's)");
	}
	mlv_diags_init(&diags);
	rc = st->reload(st->ctx, &req, &diags, &plan);
	gen = mlv_ctl_gen(st);
	if (!errors || !warnings || !diag_lines(&diags, errors, warnings))
		goto out;
	plan_j = plan.vips ? plan_json(&plan) : json_null();
	if (!plan_j)
		goto out;
	if (rc == MLV_OK) {
		if (!dry_run)
			mlv_ctl_note_reload(st, true, gen ? gen->number : 0, NULL);
		reply = json_pack("{s:b, s:b, s:o, s:O, s:O}", "ok", 1,
				  "applied", !dry_run, "generation",
				  gen ? json_integer(gen->number) : json_null(),
				  "warnings", warnings, "plan", plan_j);
	} else {
		snprintf(summary, sizeof(summary), "%s",
			 json_array_size(errors) ?
			 json_string_value(json_array_get(errors, 0)) :
			 mlv_strerror(rc));
		if (!dry_run)
			mlv_ctl_note_reload(st, false, gen ? gen->number : 0,
					    summary);
		reply = json_pack("{s:b, s:s+, s:b, s:o, s:O, s:O, s:O}", "ok", 0,
				  "error", dry_run ? "reload would fail: " :
				  "reload failed, the running configuration"
				  " is unchanged: ", mlv_strerror(rc),
				  "applied", 0, "generation",
				  gen ? json_integer(gen->number) : json_null(),
				  "errors", errors, "warnings", warnings,
				  "plan", plan_j);
	}
out:
	json_decref(plan_j);
	json_decref(errors);
	json_decref(warnings);
	mlv_plan_free(&plan);
	mlv_diags_free(&diags);
	return reply;
}

/* ---- overrides ---- */

/* The warnings of an override reply: every VIP it touched (the n names
 * in vips) left with no usable backend. NULL when memory ran out. */
static json_t *no_usable_warnings(const struct mlv_generation *gen,
				  const char (*vips)[MLV_NAME_MAX], uint32_t n)
{
	json_t *warnings = json_array();

	for (uint32_t k = 0; warnings && k < n; k++) {
		const struct mlv_gen_vip *v = mlv_gen_find_vip_named(gen, vips[k]);

		if (v && v->n_usable == 0 &&
		    json_array_append_new(warnings, json_sprintf(
			    "VIP %s has no usable backend left: its new flows "
			    "are dropped (counted as no_backend)", v->name))) {
			json_decref(warnings);
			warnings = NULL;
		}
	}
	return warnings;
}

/* VIP v's backend that `drain '*' WHAT` means: the one named what, or,
 * by_address, the one at that address (the first, if several are). */
static const struct mlv_gen_backend *
backend_for_all(const struct mlv_gen_vip *v, const char *what, bool by_address,
		const struct mlv_ip *address)
{
	if (!by_address)
		return mlv_gen_find_backend_named(v, what);
	for (uint32_t i = 0; i < v->n_backends; i++)
		if (mlv_ip_equal(&v->backends[i].address, address))
			return &v->backends[i];
	return NULL;
}

/* `drain '*' BACKEND` and friends: the override on every VIP that has
 * the backend, in one generation. BACKEND is a name; when no VIP has a
 * backend of that name and it is an IP address, the backends at that
 * address, whatever their names. */
static json_t *apply_override_all(struct mlv_ctl_state *st, const char *what,
				  enum mlv_ctl_override_op op, uint32_t weight)
{
	const struct mlv_generation *gen = mlv_ctl_gen(st);
	struct mlv_ctl_override *ovs = NULL;
	char (*names)[MLV_NAME_MAX] = NULL, (*bnames)[MLV_NAME_MAX] = NULL;
	json_t *vips = NULL, *backends = NULL, *reply = NULL, *warnings;
	char detail[256] = "";
	struct mlv_ip address;
	bool by_address = false;
	uint32_t n = 0;
	enum mlv_err rc;

	if (!gen)
		return mlv_ctl_fail("no generation available yet");
	ovs = calloc(gen->n_vips ? gen->n_vips : 1, sizeof(*ovs));
	names = calloc(gen->n_vips ? gen->n_vips : 1, sizeof(*names));
	bnames = calloc(gen->n_vips ? gen->n_vips : 1, sizeof(*bnames));
	vips = json_array();
	backends = json_array();
	if (!ovs || !names || !bnames || !vips || !backends)
		goto out;
	by_address = mlv_ip_parse(what, &address);
	for (uint32_t i = 0; by_address && i < gen->n_vips; i++)
		if (mlv_gen_find_backend_named(&gen->vips[i], what))
			by_address = false;   /* a name wins over an address */
	/* names outlive the callback's publish: copied first */
	for (uint32_t i = 0; i < gen->n_vips; i++) {
		const struct mlv_gen_backend *b =
			backend_for_all(&gen->vips[i], what, by_address, &address);

		if (!b)
			continue;
		memcpy(names[n], gen->vips[i].name, MLV_NAME_MAX);
		memcpy(bnames[n], b->name, MLV_NAME_MAX);
		ovs[n] = (struct mlv_ctl_override){ .op = op, .vip = names[n],
						    .backend = bnames[n],
						    .weight = weight };
		if (json_array_append_new(vips, json_string(names[n])) ||
		    json_array_append_new(backends, json_string(bnames[n])))
			goto out;
		n++;
	}
	if (n == 0) {
		reply = by_address ?
			mlv_ctl_fail("no VIP has a backend at %s", what) :
			mlv_ctl_fail("no VIP has a backend named \"%s\"", what);
		goto out;
	}
	rc = st->set_overrides(st->ctx, ovs, n, detail, sizeof(detail));
	if (rc != MLV_OK) {
		reply = mlv_ctl_fail("%s */%s failed: %s",
				     mlv_ctl_override_op_name(op), what,
				     detail[0] ? detail : mlv_strerror(rc));
		goto out;
	}
	gen = mlv_ctl_gen(st);
	warnings = no_usable_warnings(gen, (const char (*)[MLV_NAME_MAX])names,
				      n);
	if (warnings)
		reply = json_pack("{s:b, s:s, s:O, s:s, s:O, s:s, s:s, s:o, s:o}",
				  "ok", 1, "vip", "*", "vips", vips,
				  "backend", what, "backends", backends,
				  "matched", by_address ? "address" : "name",
				  "applied", mlv_ctl_override_op_name(op),
				  "generation", gen ? json_integer(gen->number) :
				  json_null(), "warnings", warnings);
out:
	json_decref(vips);
	json_decref(backends);
	free(ovs);
	free(names);
	free(bnames);
	return reply;
}

/* Apply the override after checking its VIP and backend exist ('*': every
 * VIP that has the backend); reply with the generation now current. */
static json_t *apply_override(struct mlv_ctl_state *st, const json_t *args,
			      enum mlv_ctl_override_op op, uint32_t weight)
{
	const struct mlv_generation *gen;
	const struct mlv_gen_vip *vip;
	json_t *reply = NULL;
	char detail[256] = "";
	enum mlv_err rc;

	if (!st->set_overrides)
		return mlv_ctl_fail("runtime overrides not available");
	const char *vip_arg = mlv_ctl_arg_str(args, "vip");

	if (vip_arg && strcmp(vip_arg, "*") == 0)
		return apply_override_all(st, mlv_ctl_arg_str(args, "backend"),
					  op, weight);
	vip = mlv_ctl_need_vip(st, args, &gen, &reply);
	if (!vip)
		return reply;
	const char *backend = mlv_ctl_arg_str(args, "backend");

	if (!mlv_gen_find_backend_named(vip, backend))
		return mlv_ctl_fail("VIP \"%s\" has no backend \"%s\"", vip->name,
				    backend);
	struct mlv_ctl_override ov = { .op = op, .vip = vip->name,
				       .backend = backend, .weight = weight };
	/* names outlive the callback's publish: copy them first, since the
	 * old generation (which holds vip->name) may be retired by it */
	char vip_name[MLV_NAME_MAX];

	snprintf(vip_name, sizeof(vip_name), "%s", vip->name);
	ov.vip = vip_name;
	rc = st->set_overrides(st->ctx, &ov, 1, detail, sizeof(detail));
	if (rc != MLV_OK)
		return mlv_ctl_fail("%s %s/%s failed: %s", mlv_ctl_override_op_name(op),
				    vip_name, backend,
				    detail[0] ? detail : mlv_strerror(rc));
	gen = mlv_ctl_gen(st);
	/* an override that leaves the VIP nothing to send new flows to is
	 * allowed (it may be the intent) but said */
	json_t *warnings = no_usable_warnings(
		gen, (const char (*)[MLV_NAME_MAX])&vip_name, 1);

	if (!warnings)
		return NULL;
	return json_pack("{s:b, s:s, s:s, s:s, s:o, s:o}", "ok", 1,
			 "vip", vip_name, "backend", backend,
			 "applied", mlv_ctl_override_op_name(op),
			 "generation", gen ? json_integer(gen->number) : json_null(),
			 "warnings", warnings);
}

json_t *mlv_ctl_cmd_drain(struct mlv_ctl_state *st, const json_t *args)
{
	return apply_override(st, args, MLV_CTL_OV_DRAIN, 0);
}

json_t *mlv_ctl_cmd_undrain(struct mlv_ctl_state *st, const json_t *args)
{
	return apply_override(st, args, MLV_CTL_OV_UNDRAIN, 0);
}

/* Without a weight: the configured, overridden and effective weights. */
static json_t *show_weight(struct mlv_ctl_state *st, const json_t *args)
{
	const struct mlv_generation *gen;
	const struct mlv_gen_vip *vip;
	const struct mlv_gen_backend *b;
	const struct mlv_config *cfg = mlv_ctl_config(st);
	const struct mlv_vip_config *vc;
	json_t *reply = NULL, *configured = json_null();
	struct mlv_gen_backend_state s;

	vip = mlv_ctl_need_vip(st, args, &gen, &reply);
	if (!vip)
		return reply;
	b = mlv_gen_find_backend_named(vip, mlv_ctl_arg_str(args, "backend"));
	if (!b)
		return mlv_ctl_fail("VIP \"%s\" has no backend \"%s\"", vip->name,
				    mlv_ctl_arg_str(args, "backend"));
	vc = cfg ? mlv_config_vip(cfg, vip->name) : NULL;
	for (uint32_t i = 0; vc && i < vc->n_backends; i++)
		if (strcmp(vc->backends[i].name, b->name) == 0)
			configured = json_integer(vc->backends[i].weight);
	mlv_ctl_backend_state(st, vip->name, b->name, &s);
	return json_pack("{s:b, s:s, s:s, s:o, s:o, s:I, s:s}", "ok", 1,
			 "vip", vip->name, "backend", b->name,
			 "configured", configured,
			 "override", s.has_weight_override ?
			 json_integer(s.weight_override) : json_null(),
			 "weight", (json_int_t)b->weight,
			 "state", mlv_ctl_backend_state_name(b));
}

json_t *mlv_ctl_cmd_weight(struct mlv_ctl_state *st, const json_t *args)
{
	bool reset = mlv_ctl_arg_flag(args, "reset");
	uint64_t w;
	bool has_w = mlv_ctl_arg_uint(args, "weight", &w);

	if (reset && has_w)
		return mlv_ctl_fail("give a weight or --reset, not both");
	if (reset)
		return apply_override(st, args, MLV_CTL_OV_WEIGHT_RESET, 0);
	if (has_w)
		return apply_override(st, args, MLV_CTL_OV_WEIGHT, (uint32_t)w);
	return show_weight(st, args);
}
