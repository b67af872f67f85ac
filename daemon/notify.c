/* SPDX-License-Identifier: BSD-3-Clause */
#include "daemon/notify.h"

#include <time.h>

#include <systemd/sd-daemon.h>

#include "control/base/log.h"

/* sd_notify returns > 0 when sent, 0 without $NOTIFY_SOCKET, < 0 on error;
 * a failed notification is worth a debug line, never a failure. */
static void sent(int rc, const char *what)
{
	if (rc < 0)
		mlv_debug("sd_notify %s: error %d", what, -rc);
}

void mlv_notify_ready(uint32_t generation, uint32_t n_vips)
{
	sent(sd_notifyf(0, "READY=1\nSTATUS=serving generation %u, %u VIP(s)",
			generation, n_vips), "READY");
}

void mlv_notify_reloading(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	sent(sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading",
			(unsigned long long)now.tv_sec * 1000000ull +
			(unsigned long long)now.tv_nsec / 1000ull),
	     "RELOADING");
}

void mlv_notify_reloaded(uint32_t generation, uint32_t n_vips, bool ok)
{
	sent(sd_notifyf(0, "READY=1\nSTATUS=serving generation %u, %u VIP(s)%s",
			generation, n_vips,
			ok ? "" : "; the last reload was rejected"), "READY");
}

void mlv_notify_draining(uint32_t drain_ms)
{
	sent(sd_notifyf(0, "STOPPING=1\nSTATUS=draining: VIP routes withdrawn, "
			"stopping in %u ms", drain_ms), "STOPPING");
}

void mlv_notify_stopping(void)
{
	sent(sd_notify(0, "STOPPING=1\nSTATUS=stopping"), "STOPPING");
}

uint32_t mlv_notify_watchdog_period_ms(void)
{
	uint64_t usec = 0;

	/* 0 = our pid is not the one $WATCHDOG_PID names, or no watchdog */
	if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0)
		return 0;
	usec /= 2;   /* systemd's advice: ping at half the timeout */
	return usec < 1000 ? 1 : usec / 1000 > UINT32_MAX ? UINT32_MAX :
							  (uint32_t)(usec / 1000);
}

void mlv_notify_watchdog(void)
{
	sent(sd_notify(0, "WATCHDOG=1"), "WATCHDOG");
}
