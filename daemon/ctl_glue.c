/* SPDX-License-Identifier: BSD-3-Clause */
/* The control socket (control/ctl/server.h, docs/control-protocol.md) in
 * the daemon: the state its commands read, and the reload and override
 * callbacks that change the daemon; and the Prometheus endpoint
 * (control/metrics/metrics.h), which reads the same state. */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "daemon/daemon.h"
#include "control/base/log.h"
#include "daemon/notify.h"
#include "daemon/port_stats.h"
#include "control/steering/steering.h"

static const struct mlv_config *st_config(void *ctx)
{
	const struct mlv_daemon *d = ctx;

	return d->cfg;
}

static const struct mlv_generation *st_generation(void *ctx)
{
	const struct mlv_daemon *d = ctx;

	return d->pub ? mlv_publish_current(d->pub) : NULL;
}

/* The socket's `reload`: the same path as SIGHUP; the command records
 * the outcome in the reload history itself. */
static enum mlv_err st_reload(void *ctx, const struct mlv_ctl_reload_req *req,
			      struct mlv_diags *diags, struct mlv_plan *plan)
{
	struct mlv_daemon *d = ctx;
	enum mlv_err err;

	if (req->mode == MLV_CTL_RELOAD_CHECK ||
	    req->mode == MLV_CTL_RELOAD_CHECK_FORCE)
		return mlv_daemon_reload(d, req, diags, plan);
	mlv_notify_reloading();
	mlv_info("reload (control socket%s)",
		 req->mode == MLV_CTL_RELOAD_FORCE ? ", forced" : "");
	err = mlv_daemon_reload(d, req, diags, plan);
	mlv_notify_reloaded(d->generation, d->cfg->n_vips, err == MLV_OK);
	return err;
}

/* The store's override of ov's pair after ov, into *now (old: before).
 * MLV_E_NOT_FOUND with a sentence when there is nothing to undo. */
static enum mlv_err next_override(const struct mlv_daemon *d,
				  const struct mlv_ctl_override *ov,
				  struct mlv_override *old,
				  struct mlv_override *now, char *detail,
				  size_t detail_len)
{
	mlv_overrides_get(&d->overrides, ov->vip, ov->backend, old);
	*now = *old;
	switch (ov->op) {
	case MLV_CTL_OV_DRAIN:
		now->drain = true;
		return MLV_OK;
	case MLV_CTL_OV_UNDRAIN:
		if (!old->drain) {
			/* a config drain (state: drain, weight 0) is not
			 * the socket's to lift: say so rather than reply ok */
			snprintf(detail, detail_len, "it has no runtime drain "
				 "override (state: drain and weight 0 in the "
				 "file are changed in the file)");
			return MLV_E_NOT_FOUND;
		}
		now->drain = false;
		return MLV_OK;
	case MLV_CTL_OV_WEIGHT:
		now->has_weight = true;
		now->weight = ov->weight;
		return MLV_OK;
	case MLV_CTL_OV_WEIGHT_RESET:
		if (!old->has_weight) {
			snprintf(detail, detail_len, "it has no runtime weight "
				 "override");
			return MLV_E_NOT_FOUND;
		}
		now->has_weight = false;
		now->weight = 0;
		return MLV_OK;
	default:
		snprintf(detail, detail_len, "unknown override");
		return MLV_E_INVAL;
	}
}

/* Apply ovs[0..n-1] to the store and publish one generation with them,
 * or change nothing. One pair without anything to undo is skipped
 * (undrain '*' lifts the drains there are); with none left, the first
 * such refusal is the answer. */
static enum mlv_err st_overrides(void *ctx, const struct mlv_ctl_override *ovs,
				 uint32_t n, char *detail, size_t detail_len)
{
	struct mlv_daemon *d = ctx;
	struct mlv_override *old = calloc(n ? n : 1, sizeof(*old));
	bool *applied = calloc(n ? n : 1, sizeof(*applied));
	bool any_change = false, any = false;
	enum mlv_err err = MLV_OK, first_refusal = MLV_OK;
	char why[256] = "";

	if (!old || !applied) {
		free(old);
		free(applied);
		snprintf(detail, detail_len, "%s", mlv_strerror(MLV_E_NOMEM));
		return MLV_E_NOMEM;
	}
	for (uint32_t i = 0; i < n && !err; i++) {
		struct mlv_override now;
		bool changed = false;
		enum mlv_err rc = next_override(d, &ovs[i], &old[i], &now, why,
						sizeof(why));

		if (rc) {
			if (!first_refusal) {
				first_refusal = rc;
				snprintf(detail, detail_len, "%s", why);
			}
			continue;
		}
		err = mlv_overrides_put(&d->overrides, &now, &changed);
		if (err) {
			snprintf(detail, detail_len, "%s", mlv_strerror(err));
			break;
		}
		applied[i] = true;
		any = true;
		any_change |= changed;
	}
	if (!err && !any)
		err = first_refusal;
	if (!err && any_change) {
		err = mlv_daemon_publish(d, d->cfg, MLV_PUBLISH_OVERRIDE);
		if (err)
			snprintf(detail, detail_len, "cannot publish a generation "
				 "with it: %s", mlv_strerror(err));
	}
	if (err) {
		/* the old generation still serves: keep the store in line */
		for (uint32_t i = 0; i < n; i++)
			if (applied[i])
				mlv_overrides_put(&d->overrides, &old[i], NULL);
	} else if (any_change) {
		mlv_daemon_state_save(d);
	}
	free(old);
	free(applied);
	if (err || !any_change)
		return err;
	{
		const struct mlv_generation *gen = mlv_publish_current(d->pub);

		for (uint32_t k = 0; k < n; k++) {
			const struct mlv_gen_vip *v =
				mlv_gen_find_vip_named(gen, ovs[k].vip);

			if (v && v->n_usable == 0)
				mlv_warn("override: VIP %s has no usable "
					 "backend left; its new flows are "
					 "dropped", ovs[k].vip);
		}
	}
	for (uint32_t k = 0; k < n; k++) {
		if (ovs[k].op == MLV_CTL_OV_WEIGHT)
			mlv_info("override: %s/%s weight %u (generation %u)",
				 ovs[k].vip, ovs[k].backend, ovs[k].weight,
				 d->generation);
		else
			mlv_info("override: %s %s/%s (generation %u)",
				 mlv_ctl_override_op_name(ovs[k].op), ovs[k].vip,
				 ovs[k].backend, d->generation);
	}
	return MLV_OK;
}

/* `lookup`: ask every worker through its mailbox (dataplane/worker/worker.h),
 * since RSS may have put the flow on any of them. One question at a
 * time: a mailbox holds one. */
static enum mlv_err st_track_post(void *ctx, const struct mlv_flow_key *key,
				  uint32_t hash, uint64_t *ticket)
{
	struct mlv_daemon *d = ctx;
	struct mlv_worker_answer a;

	if (d->track_outstanding)
		return MLV_E_BUSY;
	/* a given-up question may still be in a mailbox: wait for it */
	for (uint32_t i = 0; i < d->n_workers; i++)
		if (d->workers[i] && !mlv_worker_query_answer(d->workers[i], &a))
			return MLV_E_BUSY;
	for (uint32_t i = 0; i < d->n_workers; i++)
		if (d->workers[i] &&
		    !mlv_worker_query_post(d->workers[i], key, hash))
			return MLV_E_BUSY;   /* not reached: all were idle */
	*ticket = d->track_outstanding = ++d->track_ticket;
	return MLV_OK;
}

static enum mlv_err st_track_poll(void *ctx, uint64_t ticket, bool *done,
				  struct mlv_ctl_tracked *out)
{
	struct mlv_daemon *d = ctx;
	struct mlv_worker_answer a;

	if (ticket == 0 || ticket != d->track_outstanding)
		return MLV_E_INVAL;
	*done = false;
	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; i < d->n_workers; i++) {
		if (!d->workers[i])
			continue;
		if (!mlv_worker_query_answer(d->workers[i], &a))
			return MLV_OK;
		if (a.found && !out->found)
			*out = (struct mlv_ctl_tracked){
				.found = true, .worker = i,
				.backend_uid = a.backend_uid, .state = a.state,
				.expires_in_ms = a.expires_in_ms,
			};
	}
	*done = true;
	d->track_outstanding = 0;
	return MLV_OK;
}

static void st_track_cancel(void *ctx, uint64_t ticket)
{
	struct mlv_daemon *d = ctx;

	if (ticket == d->track_outstanding)
		d->track_outstanding = 0;
}

/* `conns`: a page of worker i's flows through its listing mailbox
 * (dataplane/worker/worker.h). */
_Static_assert(MLV_LIST_PAGE_MAX <= MLV_LIST_MAX,
	       "a conns page fits the worker's listing mailbox");

static enum mlv_err st_list_post(void *ctx, const void *owner,
				 uint32_t worker, uint32_t first, uint32_t cap)
{
	struct mlv_daemon *d = ctx;

	if (worker >= d->n_workers || !d->workers[worker])
		return MLV_E_RANGE;
	if (d->list_owner)
		return MLV_E_BUSY;   /* another listing's page is pending */
	if (!mlv_worker_list_post(d->workers[worker], first, cap))
		return MLV_E_BUSY;   /* a given-up page not yet answered */
	d->list_owner = owner;
	return MLV_OK;
}

static enum mlv_err st_list_poll(void *ctx, const void *owner, uint32_t worker,
				 bool *done, struct mlv_ctl_conn_page *page)
{
	struct mlv_daemon *d = ctx;
	const struct mlv_worker_listing *l;

	if (worker >= d->n_workers || !d->workers[worker])
		return MLV_E_RANGE;
	if (!owner || owner != d->list_owner)
		return MLV_E_INVAL;
	l = mlv_worker_list_answer(d->workers[worker]);
	*done = l != NULL;
	if (!l)
		return MLV_OK;
	d->list_owner = NULL;
	page->n = l->n;
	page->e = l->e;
	page->next = l->next;
	page->now_ms = l->now_ms;
	for (uint8_t s = 0; s < MLV_CT__NSTATES; s++)
		page->timeout_ms[s] = mlv_ct_state_timeout_ms(
			d->workers[worker]->ct, s);
	return MLV_OK;
}

static void st_list_cancel(void *ctx, const void *owner)
{
	struct mlv_daemon *d = ctx;

	if (owner == d->list_owner)
		d->list_owner = NULL;
}

/* A group by name, or by number; "" is 0 (none). Logs and returns
 * MLV_E_CONFIG for a group the system does not have. */
static enum mlv_err group_id(const char *key, const char *name, uint32_t *gid)
{
	struct group gr, *found = NULL;
	char *buf = NULL, *end;
	size_t size = 4096;
	unsigned long n;
	int rc;

	*gid = 0;
	if (!name[0])
		return MLV_OK;
	n = strtoul(name, &end, 10);
	if (*end == '\0' && n <= UINT32_MAX) {
		*gid = (uint32_t)n;
		return MLV_OK;
	}
	/* a group with many members needs more than the first buffer */
	do {
		char *more = realloc(buf, size);

		if (!more) {
			rc = ENOMEM;
			break;
		}
		buf = more;
		rc = getgrnam_r(name, &gr, buf, size, &found);
		size *= 2;
	} while (rc == ERANGE && size <= (1u << 24));
	if (rc == 0 && found)
		*gid = (uint32_t)gr.gr_gid;
	free(buf);
	if (rc != 0 || !found) {
		mlv_err_log("%s: no group \"%s\"%s%s", key, name,
			    rc ? ": " : "", rc ? strerror(rc) : "");
		return MLV_E_CONFIG;
	}
	return MLV_OK;
}

static const mlv_ctl_restart_msg *st_restart_pending(void *ctx, uint32_t *n)
{
	struct mlv_daemon *d = ctx;

	*n = d->n_restart_pending;
	return (const mlv_ctl_restart_msg *)d->restart_pending;
}

static enum mlv_err st_shutdown(void *ctx, bool now, char *detail,
			       size_t detail_len)
{
	(void)detail;
	(void)detail_len;
	/* a second shutdown during the drain changes nothing; --now ends it */
	mlv_daemon_request_stop(ctx, now, false, "shutdown (control socket)");
	return MLV_OK;
}

enum mlv_err mlv_daemon_ctl_open(struct mlv_daemon *d)
{
	struct mlv_ctl_state *st = &d->st;
	char why[512];
	enum mlv_err err;

	memset(st, 0, sizeof(*st));
	st->ctx = d;
	st->config = st_config;
	st->generation = st_generation;
	st->started = d->started;
	st->config_path = d->opts->config_path;
	st->backend_state = mlv_daemon_backend_state;
	st->backend_state_ctx = d;
	st->reload = st_reload;
	st->set_overrides = st_overrides;
	/* the connection tables belong to the workers: lookup asks them */
	st->track_post = st_track_post;
	st->track_poll = st_track_poll;
	st->track_cancel = st_track_cancel;
	st->list_post = st_list_post;
	st->list_poll = st_list_poll;
	st->list_cancel = st_list_cancel;
	st->announce = mlv_daemon_announce_view;
	st->shutdown = st_shutdown;
	st->restart_pending = st_restart_pending;
	uint32_t socket_gid = 0, admin_gid = 0;

	if ((err = group_id("control.socket_group", d->cfg->socket_group,
			    &socket_gid)) ||
	    (err = group_id("control.admin_group", d->cfg->admin_group,
			    &admin_gid)))
		return err;
	err = mlv_ctl_server_create(&(struct mlv_ctl_server_params){
		.path = d->cfg->control_socket,
		.mode = d->cfg->control_socket_mode,
		.handle = mlv_ctl_handle,
		.ctx = st,
		.mutates = mlv_ctl_request_mutates,
		.heavy = mlv_ctl_request_heavy,
		.admin_gid = admin_gid,
		.socket_gid = socket_gid,
	}, &d->ctl, why, sizeof(why));
	if (err) {
		mlv_err_log("control socket: %s", why);
		return err;
	}
	st->server = d->ctl;
	mlv_info("control socket %s (mode %04o)", d->cfg->control_socket,
		 d->cfg->control_socket_mode);
	return MLV_OK;
}

/* mlv_ctl_state.check_path_counters: the data-path checks' programs'
 * counters, once they are attached. */
static bool check_path_counters(void *ctx, uint64_t *out)
{
	const struct mlv_daemon *d = ctx;

	if (!d->check_path)
		return false;
	mlv_check_path_counters(d->check_path, out);
	return true;
}

static uint32_t port_stats(void *ctx, const struct mlv_port_stats **out)
{
	return mlv_daemon_port_stats(ctx, out);
}

void mlv_daemon_ctl_workers(struct mlv_daemon *d)
{
	struct mlv_ctl_state *st = &d->st;

	for (uint32_t i = 0; i < d->n_workers; i++) {
		d->worker_ctr[i] = d->workers[i] ? &d->workers[i]->ctr : NULL;
		d->worker_ct[i] = d->workers[i] ? d->workers[i]->ct : NULL;
		d->worker_tally[i] = d->workers[i] ?
				     mlv_worker_tally(d->workers[i]) : NULL;
	}
	d->tallies.n_workers = d->n_workers;
	d->tallies.per_worker = d->worker_tally;
	st->n_workers = d->n_workers;
	st->worker_ctr = d->worker_ctr;
	st->worker_ct = d->worker_ct;
	st->tsc_hz = rte_get_tsc_hz();
	st->port_stats = port_stats;
	st->stats = d->stats;
	st->health = d->health;
	st->check_path_counters = check_path_counters;
}

/* XDP steering counters for /metrics, per steered interface; an
 * interface whose maps cannot be read is left out. */
static enum mlv_err steer_counters(void *ctx, uint32_t i, const char **interface,
				   uint64_t out[MLV_STEER_CTR__COUNT])
{
	const struct mlv_daemon *d = ctx;

	if (i >= d->steering.n)
		return MLV_E_NOT_FOUND;
	*interface = d->steering.ifs[i].ifname;
	if (!d->steering.ifs[i].h)
		return MLV_E_IO;
	return mlv_xdp_steer_counters(d->steering.ifs[i].h, out);
}

static void metrics_log(void *ctx, const char *line)
{
	(void)ctx;
	mlv_warn("metrics: %s", line);
}

enum mlv_err mlv_daemon_metrics_open(struct mlv_daemon *d)
{
	char why[512];
	enum mlv_err err;

	if (!d->cfg->metrics_listen[0])
		return MLV_OK;
	err = mlv_metrics_create(&(struct mlv_metrics_params){
		.listen = d->cfg->metrics_listen,
		.src = { .ctl = &d->st, .steer_counters = steer_counters,
			 .steer_ctx = d },
		.max_connections = d->cfg->metrics_limits.max_connections,
		.max_per_address = d->cfg->metrics_limits.max_per_address,
		.timeout_ms = d->cfg->metrics_limits.timeout_ms,
		.log = metrics_log,
		.log_ctx = d,
	}, &d->metrics, why, sizeof(why));
	if (err) {
		mlv_err_log("metrics: %s", why);
		return err;
	}
	mlv_info("metrics on http://%s/metrics", d->cfg->metrics_listen);
	return MLV_OK;
}
