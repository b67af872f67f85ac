/* SPDX-License-Identifier: BSD-3-Clause */
/* Opening the configured DPDK ports for the workers.
 *
 * Each config port's `device` is looked up among the probed DPDK ports.
 * Every worker gets its own RX queue on each port (RSS over IP/TCP/UDP
 * when there are several, limited to what the device can hash) and its
 * own TX queue on each port, so workers never share a queue and never
 * lock. Mbufs come from one pool per NUMA socket that has workers, sized
 * for every descriptor, burst and cache that can hold one, or larger if
 * dataplane.mbufs says so (a device may keep frames of its own in the
 * pool: net_pcap with infinite_rx holds its whole file there); their
 * data room is control/config/mbuf_size.h's.
 *
 * Threads: control thread only, after rte_eal_init and before the workers
 * start (open) or after they stopped (close).
 */
#ifndef MLV_PORT_H
#define MLV_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mempool.h>

#include "control/config/config.h"
#include "control/base/error.h"
#include "dataplane/view/view.h"
#include "dataplane/ports/plan.h"

#define MLV_RX_DESC 1024
#define MLV_TX_DESC 1024
#define MLV_MBUF_CACHE 256

struct mlv_port {
	uint16_t port_id;        /* DPDK port */
	uint16_t n_rxq;          /* queues 0..n_rxq-1: worker i reads queue i */
	uint16_t n_txq;          /* one per worker: worker i writes queue i */
	bool configured;         /* rte_eth_dev_configure succeeded: close it */
	bool rxq_failed;         /* an RX queue setup failed: never close it */
	bool started;            /* rte_eth_dev_start succeeded: stop it */
	bool bond;               /* a bonded device maglevd created (`bond:`):
				    freed after its close */
	bool lacp;               /* ... in 802.3ad mode: its TX queues must be
				    called every 100 ms or less, traffic or
				    not, for LACP's frames to leave */
	char device[64];         /* its DPDK name (RTE_ETH_NAME_MAX_LEN) */
	uint16_t vlan;           /* the config's vlan (0: untagged) */
	bool shared;             /* another VLAN of port `owner`'s device: that
				    port configures, starts, polls and closes
				    it; this one has its own VLAN, TX buffers
				    and tx_port */
	uint8_t owner;
	bool vlan_tx_hw;         /* the NIC inserts the tag on transmit */
	bool vlan_rx_hw;         /* the NIC strips it on receive */
};

struct mlv_ports {
	uint32_t n;                                  /* = cfg->n_ports */
	struct mlv_port port[MLV_MAX_PORTS];         /* in config order */
	struct mlv_port_plan plan;
	/* MACs, next hops, MTUs, outer addresses for the generation builder */
	struct mlv_gen_port_info info[MLV_MAX_PORTS];
	struct rte_mempool *pool[RTE_MAX_NUMA_NODES];
	/* mlv_ports_close left a device open because closing it would
	 * crash (see there). rte_eal_cleanup closes every device, so the
	 * caller must skip it; the process is about to exit anyway. Kept
	 * across close; reset by open. */
	bool device_left_open;
};

/* The NUMA socket a worker lcore's memory should come from (0 when the
 * lcore has no known socket). Any thread. */
unsigned mlv_lcore_socket(unsigned lcore);

/* Plan, configure and start every port of cfg for n_workers workers on
 * worker_lcores[0..n_workers-1]. On failure logs why (naming the port and
 * the DPDK error), closes whatever it had opened and returns MLV_E_CONFIG
 * (a config that cannot work with these devices: unknown device, too few
 * TX queues, next_hop: auto where it is needed), MLV_E_NOMEM (mbuf pool)
 * or MLV_E_DPDK. Control thread. */
enum mlv_err mlv_ports_open(struct mlv_ports *ps, const struct mlv_config *cfg,
			    const unsigned *worker_lcores, uint32_t n_workers);

/* Stop and close every port that was opened (a net_pcap tx file is
 * complete afterwards), then free the pools. Workers must have stopped.
 * Safe on a partly opened or zeroed set. A device whose RX queue setup
 * failed is not closed; ps->device_left_open then says so. Control
 * thread. */
void mlv_ports_close(struct mlv_ports *ps);

#endif
