/* SPDX-License-Identifier: BSD-3-Clause */
/* The ports' NIC counters (control/ctl/port_stats.h) read from DPDK:
 * rte_eth_stats_get and the extended statistics, on the control thread
 * only (the `stats` command, /metrics and the stats file all run there),
 * never by a worker. A port no longer started keeps its last reading, so
 * the final stats file shows the counters read just before the ports
 * closed (mlv_daemon_close_ports reads them then).
 */
#ifndef MLV_DAEMON_PORT_STATS_H
#define MLV_DAEMON_PORT_STATS_H

#include <stdint.h>

#include "control/ctl/port_stats.h"

struct mlv_daemon;

/* Read every started port now; returns the number of ports and *out (valid until
 * the next call). A port whose PMD gives no counters has ok false.
 * Control thread. */
uint32_t mlv_daemon_port_stats(struct mlv_daemon *d,
			       const struct mlv_port_stats **out);

/* Log what changed since the last call in each started port's link and,
 * for a bonded port, its members' links and which carry the traffic (a
 * failover), at info (up) or warning (down) level; the first call logs a
 * bond's starting state. Cheap: link states without waiting. Control
 * thread, periodically. */
void mlv_daemon_watch_links(struct mlv_daemon *d);

/* Free what the readings hold. */
void mlv_daemon_port_stats_free(struct mlv_daemon *d);

#endif
