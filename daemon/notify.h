/* SPDX-License-Identifier: BSD-3-Clause */
/* Telling systemd (Type=notify, conf/maglevd.service) where the daemon
 * is: READY=1 once generation 1 and the control socket are up,
 * RELOADING=1 ... READY=1 around every reload, STOPPING=1 on the way out,
 * STATUS= lines, and WATCHDOG=1 keep-alives from the control loop.
 *
 * Without $NOTIFY_SOCKET (not started by systemd, or by a unit of another
 * type) every call is a cheap no-op, so the daemon calls them
 * unconditionally. Uses libsystemd's sd_notify.
 *
 * Threads: control thread only.
 */
#ifndef MLV_DAEMON_NOTIFY_H
#define MLV_DAEMON_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

/* Start-up is done: READY=1 with a STATUS line. */
void mlv_notify_ready(uint32_t generation, uint32_t n_vips);

/* A reload starts: RELOADING=1 and MONOTONIC_USEC=now (systemd >= 253
 * matches the two; older ones ignore the extra field). */
void mlv_notify_reloading(void);

/* A reload ended (accepted or rejected): READY=1 with a STATUS line. */
void mlv_notify_reloaded(uint32_t generation, uint32_t n_vips, bool ok);

/* Shutdown begins: STOPPING=1. */
void mlv_notify_stopping(void);

/* A graceful stop drains first: STOPPING=1 with a STATUS line that says
 * so, and EXTEND_TIMEOUT_USEC is not used: TimeoutStopSec covers it. */
void mlv_notify_draining(uint32_t drain_ms);

/* How often the control loop should send WATCHDOG=1: half of
 * $WATCHDOG_USEC in milliseconds (at least 1), or 0 when systemd does not
 * expect keep-alives from this process. */
uint32_t mlv_notify_watchdog_period_ms(void);

/* WATCHDOG=1. */
void mlv_notify_watchdog(void);

#endif
