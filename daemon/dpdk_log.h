/* SPDX-License-Identifier: BSD-3-Clause */
/* DPDK's log lines through maglevd's logger (daemon/dpdk_log.c). */
#ifndef MLV_DAEMON_DPDK_LOG_H
#define MLV_DAEMON_DPDK_LOG_H

#include <stdbool.h>

/* Send DPDK's log to maglevd's logger from now on. in_memory: the EAL
 * runs with --in-memory (its hugetlbfs complaint is then harmless).
 * Call once, before rte_eal_init. Returns false if the stream could not
 * be made (DPDK then keeps writing to stderr itself). */
bool mlv_dpdk_log_redirect(bool in_memory);

#endif
