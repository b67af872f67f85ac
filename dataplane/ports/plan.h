/* SPDX-License-Identifier: BSD-3-Clause */
/* Which port transmits what, decided from the config before any device is
 * touched: the transmit port of each port (one-arm: itself; two-arm: its
 * tx_port), the exception port, and whether a port's next hop can be
 * used. Also the mbuf pool size for a set of queues. Plain C, no DPDK, so
 * the rules are unit-tested without EAL. Control thread only.
 */
#ifndef MLV_PORT_PLAN_H
#define MLV_PORT_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/config/config.h"
#include "control/base/error.h"

#define MLV_PORT_NONE UINT16_MAX

struct mlv_port_plan {
	uint32_t n_ports;
	/* config index of the port that transmits packets arriving on port
	 * i (i itself unless tx_port is set) */
	uint16_t tx_of[MLV_MAX_PORTS];
	/* true if some port's packets leave by port i */
	bool transmits[MLV_MAX_PORTS];
	/* the exception port (non-VIP traffic), or MLV_PORT_NONE */
	uint16_t exception;
	/* where non-VIP frames that arrive on the exception port itself go
	 * (the kernel's traffic out to the wire): the first other port that
	 * is not an exception port, or MLV_PORT_NONE */
	uint16_t exception_out;
	/* next_hop: auto on a port that transmits while some VIP uses ipip
	 * or gue: its next-hop MAC must come from the kernel's neighbour
	 * table (daemon/netlink/next_hop.h), so the port needs a kernel interface */
	bool auto_next_hop[MLV_MAX_PORTS];
};

/* Fill *plan from cfg. Returns MLV_OK, or MLV_E_CONFIG with a one-line
 * reason in err (errlen bytes) for: no ports or too many, an unknown
 * tx_port, more than one exception port. */
enum mlv_err mlv_port_plan_make(const struct mlv_config *cfg,
				struct mlv_port_plan *plan,
				char *err, size_t errlen);

/* Mbufs a pool must hold so that no queue ever starves: every RX and TX
 * descriptor of every queue, each worker's receive burst and transmit
 * buffers, and each lcore's mempool cache. Rounded up to 2^k - 1 (the
 * size DPDK's ring-backed pools use best). Returns 0 on overflow. */
uint32_t mlv_port_plan_mbufs(uint32_t n_rx_desc_total,
			     uint32_t n_tx_desc_total, uint32_t n_workers,
			     uint32_t n_ports, uint32_t burst,
			     uint32_t cache_size, uint32_t n_lcores);

#endif
