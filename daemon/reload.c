/* SPDX-License-Identifier: BSD-3-Clause */
/* Reloads (SIGHUP, config file change, the control socket's `reload`):
 * parse -> validate -> build -> publish, all or nothing, then bring the
 * health checks, steering maps and next hops in line with what was
 * published. */
#include <stdio.h>
#include <string.h>

#include "control/config/diags.h"
#include "control/config/plan.h"
#include "control/generation/moves.h"
#include "daemon/daemon.h"
#include "control/base/log.h"
#include "daemon/notify.h"
#include "daemon/runtime/restart_only.h"

void mlv_daemon_log_diags(const struct mlv_diags *diags)
{
	for (uint32_t i = 0; i < diags->n; i++) {
		const struct mlv_diag *it = &diags->items[i];
		const char *file = mlv_diags_file(diags, it->pos.file);
		enum mlv_log_level level = it->level == MLV_DIAG_WARNING ?
						   MLV_LOG_WARNING : MLV_LOG_ERROR;

		if (it->pos.line)
			mlv_log(level, "%s:%u:%u: %s", file, it->pos.line,
				it->pos.col, it->message);
		else
			mlv_log(level, "%s: %s", file, it->message);
	}
}

static const struct mlv_src_pos no_pos;

/* restart-only changes become warnings in the reload's diagnostics, and
 * status lists them once the reload is accepted */
struct restart_report {
	struct mlv_diags *diags;
	mlv_ctl_restart_msg msgs[MLV_CTL_RESTART_PENDING_MAX];
	uint32_t n;
};

static void warn_restart(const char *message, void *ctx)
{
	struct restart_report *r = ctx;

	mlv_diag_add(r->diags, MLV_DIAG_WARNING, no_pos,
		     "%s; this needs a restart, the running value stays",
		     message);
	if (r->n < MLV_CTL_RESTART_PENDING_MAX)
		snprintf(r->msgs[r->n++], sizeof(r->msgs[0]), "%s", message);
}

static void forget_override(const struct mlv_override *ov, void *ctx)
{
	(void)ctx;
	mlv_info("override of %s/%s forgotten: the backend left the "
		 "configuration", ov->vip, ov->backend);
}

/* Checks beyond the config loader's, against what this daemon runs:
 * health specs the engine accepts, next hops it can resolve. An error is
 * added to diags. */
static enum mlv_err check_next(struct mlv_daemon *d,
			       const struct mlv_config *next,
			       struct mlv_diags *diags)
{
	char why[512];

	if (mlv_health_check_config(next, why, sizeof(why)) != MLV_OK) {
		mlv_diag_add(diags, MLV_DIAG_ERROR, no_pos, "health: %s", why);
		return MLV_E_CONFIG;
	}
	if (mlv_next_hop_check(next, d->port_ifindex, why, sizeof(why))) {
		mlv_diag_add(diags, MLV_DIAG_ERROR, no_pos, "%s", why);
		return MLV_E_CONFIG;
	}
	return MLV_OK;
}

/* A budget check's verdict: fits, beyond it but forced (logged), or
 * refused with the limit in the diagnostics. */
static enum mlv_err budget_verdict(bool fits, const char *why, bool forced,
				   struct mlv_diags *diags)
{
	if (fits)
		return MLV_OK;
	if (forced) {
		mlv_warn("reload: beyond the budget, forced: %s", why);
		return MLV_OK;
	}
	mlv_diag_add(diags, MLV_DIAG_ERROR, no_pos,
		     "refused: %s; check the file, then `maglevctl reload "
		     "--force` if it is meant", why);
	return MLV_E_LIMIT;
}

static enum mlv_err judge_plan(const struct mlv_reload_budget *budget,
			       const struct mlv_plan *plan, bool forced,
			       struct mlv_diags *diags)
{
	char why[256];
	bool fits = mlv_plan_fits(plan, budget, why, sizeof(why));

	return budget_verdict(fits, why, forced, diags);
}

/* Build the next generation, fill the plan's slot and connection moves
 * from it, then publish it (or, for a dry run, discard it). */
static enum mlv_err build_next(struct mlv_daemon *d,
			       const struct mlv_config *next,
			       struct mlv_plan *plan, bool dry_run, bool forced,
			       struct mlv_diags *diags)
{
	struct mlv_daemon_built built;
	enum mlv_err err;
	char why[256];

	err = mlv_daemon_build(d, next, MLV_PUBLISH_RELOAD, &built);
	if (err) {
		mlv_diag_add(diags, MLV_DIAG_ERROR, no_pos, "maglevd cannot "
			     "build its tables and forwarding state from this "
			     "configuration: %s", mlv_strerror(err));
		return err;
	}
	err = mlv_gen_plan_moves(mlv_publish_current(d->pub), built.gen, plan);
	/* the connections it moves are known only now, built */
	if (!err)
		err = budget_verdict(mlv_plan_moves_fit(plan, &next->reload_budget,
							why, sizeof(why)),
				     why, forced, diags);
	if (err || dry_run) {
		mlv_daemon_build_discard(&built);
		return err;
	}
	return mlv_daemon_publish_built(d, &built, MLV_PUBLISH_RELOAD);
}

enum mlv_err mlv_daemon_reload(struct mlv_daemon *d,
			       const struct mlv_ctl_reload_req *req,
			       struct mlv_diags *diags, struct mlv_plan *plan)
{
	const char *path = req->file ? req->file : d->opts->config_path;
	bool forced = req->mode == MLV_CTL_RELOAD_FORCE ||
		      req->mode == MLV_CTL_RELOAD_CHECK_FORCE;
	bool dry_run = req->mode == MLV_CTL_RELOAD_CHECK ||
		       req->mode == MLV_CTL_RELOAD_CHECK_FORCE;
	struct mlv_config *next = NULL;
	struct restart_report restart = { .diags = diags };
	struct mlv_plan own = { 0 };
	char summary[1400];
	bool changed = false;
	enum mlv_err err;

	if (!plan)
		plan = &own;
	if (req->file && !dry_run)
		return MLV_E_INVAL;   /* only the configured file is applied */
	mlv_info("reload: loading %s%s", path, dry_run ? " (dry run)" : "");
	err = req->file ? mlv_config_load_for(path, req->uid, &next, diags) :
			  mlv_config_load(path, &next, diags);
	if (!err) {
		/* the ports and the rest of the restart-only part stay as
		 * they run; the checks below see what would really run */
		mlv_restart_only_changes(d->cfg, next, warn_restart, &restart);
		mlv_restart_only_keep(d->cfg, next);
		err = check_next(d, next, diags);
		if (!err)
			err = mlv_plan_make(d->cfg, next, plan);
		if (!err)
			err = judge_plan(&next->reload_budget, plan, forced,
					 diags);
		if (!err)
			err = build_next(d, next, plan, dry_run, forced, diags);
		if (err || dry_run)
			mlv_restart_only_keep(d->cfg, next);   /* give them back */
	}
	mlv_daemon_log_diags(diags);
	if (err || dry_run) {
		mlv_config_free(next);
		mlv_plan_free(&own);
		if (dry_run) {
			mlv_info("reload (dry run): %s", err ? mlv_strerror(err) :
				 "would be published");
			return err;
		}
		d->reloads_failed++;
		mlv_err_log("reload rejected: %s; generation %u keeps serving",
			    mlv_strerror(err), d->generation);
		return err;
	}
	mlv_plan_summary(plan, summary, sizeof(summary));
	mlv_plan_free(&own);
	mlv_config_free(d->cfg);
	d->cfg = next;
	d->reloads_ok++;
	memcpy(d->restart_pending, restart.msgs, sizeof(restart.msgs));
	d->n_restart_pending = restart.n;
	if (mlv_overrides_prune(&d->overrides, d->cfg, forget_override, NULL))
		mlv_daemon_state_save(d);

	/* Health: new pairs started as up in the generation just built;
	 * pairs whose check changed may now answer differently. */
	err = mlv_health_sync(d->health, d->cfg, &changed);
	if (err)
		mlv_err_log("reload: health checks not updated: %s",
			    err == MLV_E_INVAL ? mlv_health_error(d->health) :
			    mlv_strerror(err));
	if (mlv_next_hops_reconfigure(&d->next_hops, d->cfg))
		mlv_err_log("reload: l2dsr backend MACs not updated: %s",
			    mlv_strerror(MLV_E_NOMEM));
	changed |= mlv_next_hops_update(&d->next_hops, d->cfg, d->ports.info,
					false);
	if (changed)
		mlv_daemon_publish(d, d->cfg, MLV_PUBLISH_RELOAD);
	mlv_steering_sync(&d->steering, d->cfg);
	mlv_info("reload: generation %u published, %u VIP(s): %s",
		 d->generation, d->cfg->n_vips, summary);
	return MLV_OK;
}

/* The first error line, as the socket's reload command records it
 * (truncated to the history's line length). */
static void first_error(const struct mlv_diags *diags, enum mlv_err err,
			char *out, size_t len)
{
	int n = -1;

	for (uint32_t i = 0; i < diags->n && n < 0; i++) {
		const struct mlv_diag *it = &diags->items[i];
		const char *file = mlv_diags_file(diags, it->pos.file);

		if (it->level != MLV_DIAG_ERROR)
			continue;
		if (it->pos.line)
			n = snprintf(out, len, "%s:%u:%u: error: %s", file,
				     it->pos.line, it->pos.col, it->message);
		else
			n = snprintf(out, len, "%s: error: %s", file, it->message);
	}
	if (n < 0)
		snprintf(out, len, "%s", mlv_strerror(err));
}

void mlv_daemon_reload_from(struct mlv_daemon *d, const char *what)
{
	struct mlv_diags diags;
	char summary[200] = "";
	enum mlv_err err;

	mlv_notify_reloading();
	mlv_info("reload (%s)", what);
	mlv_diags_init(&diags);
	err = mlv_daemon_reload(d, &(struct mlv_ctl_reload_req){
					.mode = MLV_CTL_RELOAD_APPLY },
				&diags, NULL);
	if (err)
		first_error(&diags, err, summary, sizeof(summary));
	mlv_diags_free(&diags);
	mlv_ctl_note_reload(&d->st, err == MLV_OK, d->generation, summary);
	mlv_notify_reloaded(d->generation, d->cfg->n_vips, err == MLV_OK);
}
