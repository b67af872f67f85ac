/* SPDX-License-Identifier: BSD-3-Clause */
/* Writing a scenario's load-balancer configuration as maglevd YAML
 * (docs/config.md): one net_pcap port reading rx and writing tx, an
 * explicit next-hop MAC, no health checks, a small connection table, and
 * the scenario's VIPs (or its alternative VIP set, for reload storms).
 * Test code; single-threaded. */
#ifndef PKT_CONFIG_YAML_H
#define PKT_CONFIG_YAML_H

#include <stdbool.h>

#include "tests/packet/scenario.h"

struct sc_config_paths {
	const char *rx_pcap;     /* net_pcap rx_pcap= (a file or a FIFO) */
	const char *tx_pcap;     /* net_pcap tx_pcap= */
	const char *socket;      /* control.socket */
};

/* Write the config to path (replaced atomically: written to path.tmp,
 * then renamed, so a daemon watching the file never reads half of it).
 * alt selects sc->alt_vips. Returns 0, or -1 with a message on stderr. */
int sc_write_config(const struct scenario *sc, bool alt,
		    const struct sc_config_paths *paths, const char *path);

#endif
