/* SPDX-License-Identifier: BSD-3-Clause */
/* Second chance's windows in the daemon (docs/second-chance.md, "The
 * window"): a generation carries each second-chance VIP's previous slot
 * owners until the VIP's window ends; the control loop wakes then and
 * publishes a generation without them, so that packets stop naming
 * backends the flows have had time to leave. */
#include "daemon/daemon.h"
#include "control/base/log.h"
#include "control/generation/second_chance.h"

/* Delay before a failed rebuild is tried again. */
#define MLV_SC_RETRY_MS 1000u

int mlv_daemon_sc_wait_ms(const struct mlv_daemon *d)
{
	uint64_t due = mlv_gen_sc_expiry(mlv_publish_current(d->pub));
	uint64_t now = mlv_gen_sc_now_ms();

	if (due == 0)
		return -1;
	if (d->sc_retry_ms > due)
		due = d->sc_retry_ms;
	if (due <= now)
		return 0;
	return due - now > 60000 ? 60000 : (int)(due - now);
}

void mlv_daemon_sc_step(struct mlv_daemon *d)
{
	enum mlv_err err;

	if (d->stop_now || mlv_daemon_sc_wait_ms(d) != 0)
		return;
	err = mlv_daemon_publish(d, d->cfg, MLV_PUBLISH_SC_WINDOW);
	if (err) {
		mlv_warn("second chance: the window ended but no generation "
			 "could be built without it: %s; trying again in %u ms",
			 mlv_strerror(err), MLV_SC_RETRY_MS);
		d->sc_retry_ms = mlv_gen_sc_now_ms() + MLV_SC_RETRY_MS;
	}
}
