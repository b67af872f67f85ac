/* SPDX-License-Identifier: BSD-3-Clause */
/* Settings that a reload cannot change (the `dataplane` section: EAL
 * arguments, workers, idle policy, ports, conntrack, mbuf pools; and
 * the `control` section: the control socket and the metrics listener):
 * they shape threads, queues, memory and sockets fixed at start. A
 * reload that changes them warns that a restart is needed and keeps
 * running with the values in force.
 * Plain C. Control thread.
 */
#ifndef MLV_RESTART_ONLY_H
#define MLV_RESTART_ONLY_H

#include <stdint.h>

#include "control/config/config.h"

/* Call report(message, ctx) once per restart-only difference between the
 * running config and next ("dataplane.workers: 1 -> 2"). Returns how many
 * there were. */
uint32_t mlv_restart_only_changes(const struct mlv_config *running,
				  const struct mlv_config *next,
				  void (*report)(const char *message, void *ctx),
				  void *ctx);

/* Make next carry the running restart-only settings (and running carry
 * next's, so freeing running frees what next brought). After this, next
 * describes what will actually run. */
void mlv_restart_only_keep(struct mlv_config *running, struct mlv_config *next);

#endif
