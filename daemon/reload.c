/* SIGHUP: parse -> validate -> build -> publish, all or nothing. */
#include <stdio.h>

#include "daemon/daemon.h"
#include "daemon/log.h"
#include "daemon/restart_only.h"

void mlv_daemon_log_diags(const struct mlv_diags *diags)
{
	const char *file = diags->file ? diags->file : "<config>";

	for (uint32_t i = 0; i < diags->n; i++) {
		const struct mlv_diag *it = &diags->items[i];
		enum mlv_log_level level = it->level == MLV_DIAG_WARNING ?
						   MLV_LOG_WARNING : MLV_LOG_ERROR;

		if (it->pos.line)
			mlv_log(level, "%s:%u:%u: %s", file, it->pos.line,
				it->pos.col, it->message);
		else
			mlv_log(level, "%s: %s", file, it->message);
	}
}

static void warn_restart(const char *message, void *ctx)
{
	(void)ctx;
	mlv_warn("reload: %s; this needs a restart, the running value stays",
		 message);
}

void mlv_daemon_reload(struct mlv_daemon *d)
{
	const char *path = d->opts->config_path;
	struct mlv_config *next = NULL;
	struct mlv_diags diags;
	enum mlv_err err;

	mlv_diags_init(&diags);
	mlv_info("reload: loading %s", path);
	err = mlv_config_load(path, &next, &diags);
	mlv_daemon_log_diags(&diags);
	mlv_diags_free(&diags);
	if (err) {
		d->reloads_failed++;
		mlv_err_log("reload rejected: %s; generation %u keeps serving",
			    mlv_strerror(err), d->generation);
		return;
	}
	mlv_restart_only_changes(d->cfg, next, warn_restart, NULL);
	mlv_restart_only_keep(d->cfg, next);
	err = mlv_daemon_publish(d, next);
	if (err) {
		mlv_restart_only_keep(d->cfg, next);   /* give them back */
		mlv_config_free(next);
		d->reloads_failed++;
		mlv_err_log("reload rejected: generation %u keeps serving",
			    d->generation);
		return;
	}
	mlv_config_free(d->cfg);
	d->cfg = next;
	d->reloads_ok++;
	mlv_info("reload: generation %u published, %u VIP(s)", d->generation,
		 next->n_vips);
}
