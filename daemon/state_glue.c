/* SPDX-License-Identifier: BSD-3-Clause */
/* The runtime overrides' state file in the daemon (daemon/runtime/
 * state_file.h, docs/operations.md): read once at start, written after
 * every change of the overrides, whether the control socket or a reload
 * made it. Apart from both callers, so that neither calls the other. */
#include "daemon/daemon.h"
#include "control/base/log.h"

static void forget_kept(const struct mlv_override *ov, void *ctx)
{
	(void)ctx;
	mlv_warn("state file: override of %s/%s dropped: not in the "
		 "configuration", ov->vip, ov->backend);
}

void mlv_daemon_state_load(struct mlv_daemon *d)
{
	char why[256];
	uint32_t dropped;

	if (mlv_state_file_path(d->cfg->state_file, d->cfg->control_socket,
				d->state_path, sizeof(d->state_path))) {
		mlv_err_log("state file: control.state_file or control.socket "
			    "too long; overrides are not kept across restarts");
		d->state_path[0] = '\0';
		return;
	}
	if (mlv_state_file_load(d->state_path, &d->overrides, why,
				sizeof(why)) != MLV_OK) {
		mlv_err_log("state file: %s; starting without its overrides "
			    "(the next change replaces it)", why);
		return;
	}
	dropped = mlv_overrides_prune(&d->overrides, d->cfg, forget_kept, NULL);
	if (d->overrides.n)
		mlv_info("state file %s: %u runtime override(s) restored",
			 d->state_path, d->overrides.n);
	if (dropped)
		mlv_daemon_state_save(d);
}

void mlv_daemon_state_save(struct mlv_daemon *d)
{
	char why[256];

	if (!d->state_path[0])
		return;
	if (mlv_state_file_save(d->state_path, &d->overrides, why,
				sizeof(why)) != MLV_OK)
		mlv_err_log("state file: %s; the overrides apply but are not "
			    "kept across a restart", why);
}
