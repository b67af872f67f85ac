/* SPDX-License-Identifier: BSD-3-Clause */
/* Port bring-up: configure, queue setup, start, and the reverse. */
#include "dataplane/worker/port.h"

#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "control/config/mbuf_size.h"
#include "control/base/log.h"
#include "dataplane/packet/encap.h"
#include "dataplane/worker/bond.h"
#include "dataplane/worker/worker.h"

/* control/config/mbuf_size.h computes data rooms without DPDK's headers */
_Static_assert(MLV_MBUF_HEADROOM == RTE_PKTMBUF_HEADROOM,
	       "MLV_MBUF_HEADROOM differs from DPDK's headroom");
_Static_assert(MLV_MBUF_DEFAULT_SIZE == RTE_MBUF_DEFAULT_BUF_SIZE,
	       "MLV_MBUF_DEFAULT_SIZE differs from DPDK's default");
_Static_assert(MLV_FRAME_OVERHEAD ==
	       RTE_ETHER_HDR_LEN + 2 * RTE_VLAN_HLEN + RTE_ETHER_CRC_LEN,
	       "MLV_FRAME_OVERHEAD differs from DPDK's header sizes");
/* outer headers are written into the headroom of the received frame */
_Static_assert(RTE_PKTMBUF_HEADROOM >= MLV_ENCAP_MAX_HDR,
	       "the mbuf headroom cannot hold the encapsulation headers");

unsigned mlv_lcore_socket(unsigned lcore)
{
	int s = (int)rte_lcore_to_socket_id(lcore);

	return s < 0 || s >= RTE_MAX_NUMA_NODES ? 0 : (unsigned)s;
}

static void list_ports(char *buf, size_t len)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	size_t used = 0;
	uint16_t pid;

	buf[0] = '\0';
	RTE_ETH_FOREACH_DEV(pid) {
		if (rte_eth_dev_get_name_by_port(pid, name) != 0)
			continue;
		int n = snprintf(buf + used, len - used, "%s%s",
				 used ? ", " : "", name);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
	if (!used)
		snprintf(buf, len, "none");
}

static enum mlv_err find_devices(struct mlv_ports *ps,
				 const struct mlv_config *cfg)
{
	char known[512];

	for (uint32_t i = 0; i < cfg->n_ports; i++) {
		const struct mlv_port_config *pc = &cfg->ports[i];
		uint16_t pid;
		enum mlv_err err;

		if (pc->bond.enabled) {
			/* the bond is maglevd's to make, over its members */
			err = mlv_bond_create(pc, mlv_lcore_socket(rte_get_main_lcore()),
					      &pid);
			if (err)
				return err;
			ps->port[i].bond = true;
			ps->port[i].lacp = pc->bond.mode == MLV_BOND_8023AD;
			/* the config keeps bond names below 64 bytes */
			snprintf(ps->port[i].device, sizeof(ps->port[i].device),
				 "%.*s", (int)sizeof(ps->port[i].device) - 1,
				 pc->device);
			mlv_info("port %s: bond %s (%s) over %u members, "
				 "primary %s, links polled every %u ms",
				 pc->name, pc->device,
				 pc->bond.mode == MLV_BOND_8023AD ? "802.3ad" :
				 "active-backup", pc->bond.n_members,
				 pc->bond.members[0], pc->bond.link_monitor_ms);
		} else if (rte_eth_dev_get_port_by_name(pc->device, &pid) != 0) {
			list_ports(known, sizeof(known));
			mlv_err_log("port %s: device '%s' is not a DPDK port "
				    "(ports found: %s); add it to the EAL "
				    "arguments (e.g. --vdev=...) or fix the PCI "
				    "address", pc->name, pc->device, known);
			return MLV_E_CONFIG;
		}
		for (uint32_t j = 0; j < i; j++) {
			if (ps->port[j].port_id != pid)
				continue;
			/* VLANs of one device (the config allows only
			 * different ones): the first port owns it */
			if (pc->vlan && cfg->ports[j].vlan &&
			    pc->vlan != cfg->ports[j].vlan && !pc->bond.enabled) {
				ps->port[i].shared = true;
				ps->port[i].owner = (uint8_t)(ps->port[j].shared ?
							      ps->port[j].owner : j);
				break;
			}
			mlv_err_log("ports %s and %s name the same device "
				    "'%s'", cfg->ports[j].name, pc->name,
				    pc->device);
			return MLV_E_CONFIG;
		}
		ps->port[i].port_id = pid;
	}
	return MLV_OK;
}

static enum mlv_err create_pools(struct mlv_ports *ps,
				 const struct mlv_config *cfg,
				 const unsigned *lcores, uint32_t n_workers)
{
	uint32_t workers_on[RTE_MAX_NUMA_NODES] = {0};
	uint16_t room = (uint16_t)mlv_mbuf_size(cfg);

	for (uint32_t w = 0; w < n_workers; w++)
		workers_on[mlv_lcore_socket(lcores[w])]++;

	for (unsigned s = 0; s < RTE_MAX_NUMA_NODES; s++) {
		uint32_t rxd = 0, txd = 0, need, n;
		char name[RTE_MEMPOOL_NAMESIZE];

		if (!workers_on[s])
			continue;
		/* A worker's mbufs sit in its RX rings and, after forwarding,
		 * in its TX rings on every port. */
		for (uint32_t p = 0; p < ps->n; p++) {
			rxd += workers_on[s] * MLV_RX_DESC;
			txd += workers_on[s] * MLV_TX_DESC;
		}
		need = mlv_port_plan_mbufs(rxd, txd, workers_on[s], ps->n,
					   MLV_BURST, MLV_MBUF_CACHE,
					   rte_lcore_count());
		if (need == 0) {
			mlv_err_log("socket %u: the queues need more than 2^32 "
				    "mbufs", s);
			return MLV_E_NOMEM;
		}
		/* the operator's size, exactly: rounding it up to 2^k - 1
		 * like the automatic one could double a large pool */
		n = RTE_MAX(need, cfg->mbufs);
		if (cfg->mbufs && cfg->mbufs < need)
			mlv_warn("dataplane.mbufs: %u is less than the %u mbufs "
				 "the queues of socket %u need; using %u",
				 cfg->mbufs, need, s, need);
		snprintf(name, sizeof(name), "mlv_mbufs_%u", s);
		ps->pool[s] = rte_pktmbuf_pool_create(name, n, MLV_MBUF_CACHE,
						      0, room, (int)s);
		if (!ps->pool[s]) {
			mlv_err_log("cannot create a pool of %u mbufs of %u bytes "
				    "on socket %u: %s (are enough hugepages "
				    "free? see also dataplane.mbufs and "
				    "dataplane.mbuf_size)", n, room, s,
				    rte_strerror(rte_errno));
			return MLV_E_NOMEM;
		}
		mlv_info("mbuf pool on socket %u: %u mbufs of %u bytes (%s)", s,
			 n, room, n == cfg->mbufs ? "dataplane.mbufs" :
			 "sized for the queues");
	}
	return MLV_OK;
}

static enum mlv_err configure_port(struct mlv_ports *ps, uint32_t i,
				   const struct mlv_config *cfg,
				   const unsigned *lcores, uint32_t n_workers)
{
	const struct mlv_port_config *pc = &cfg->ports[i];
	struct mlv_port *p = &ps->port[i];
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	uint16_t nb_rxd = MLV_RX_DESC, nb_txd = MLV_TX_DESC;
	int ret;

	ret = rte_eth_dev_info_get(p->port_id, &info);
	if (ret != 0) {
		mlv_err_log("port %s: cannot query device: %s", pc->name,
			    rte_strerror(-ret));
		return MLV_E_DPDK;
	}
	if (info.max_tx_queues < n_workers) {
		mlv_err_log("port %s: device '%s' has %u TX queues but each of "
			    "the %u workers needs its own; lower "
			    "dataplane.workers or give the device more queues",
			    pc->name, pc->device, info.max_tx_queues, n_workers);
		return MLV_E_CONFIG;
	}
	if (info.max_rx_queues == 0) {
		mlv_err_log("port %s: device '%s' has no RX queue", pc->name,
			    pc->device);
		return MLV_E_CONFIG;
	}
	p->n_txq = (uint16_t)n_workers;
	p->n_rxq = (uint16_t)RTE_MIN(n_workers, (uint32_t)info.max_rx_queues);
	if (p->n_rxq < n_workers)
		mlv_warn("port %s: device '%s' has %u RX queues for %u workers; "
			 "workers %u.. receive nothing from it", pc->name,
			 pc->device, p->n_rxq, n_workers, p->n_rxq);

	memset(&conf, 0, sizeof(conf));
	if (p->n_rxq > 1) {
		uint64_t hf = (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) &
			      info.flow_type_rss_offloads;

		if (hf) {
			conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
			conf.rx_adv_conf.rss_conf.rss_hf = hf;
		} else {
			mlv_warn("port %s: device '%s' cannot hash IP/TCP/UDP for "
				 "RSS; how it spreads frames over the %u RX "
				 "queues is up to the device", pc->name,
				 pc->device, p->n_rxq);
		}
	}
	/* A VLAN port: the NIC inserts and strips the tag when it can
	 * (the workers tag in the frame and read in-band tags otherwise). */
	p->vlan = pc->vlan;
	if (pc->vlan && (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_VLAN_INSERT)) {
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_VLAN_INSERT;
		p->vlan_tx_hw = true;
	}
	if (pc->vlan && (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_VLAN_STRIP)) {
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_VLAN_STRIP;
		p->vlan_rx_hw = true;
	}
	if (pc->mtu >= info.min_mtu && pc->mtu <= info.max_mtu)
		conf.rxmode.mtu = pc->mtu;
	else
		mlv_warn("port %s: MTU %u is outside what '%s' allows (%u..%u); "
			 "keeping the device's", pc->name, pc->mtu, pc->device,
			 info.min_mtu, info.max_mtu);
	/* All mbufs of a TX queue come from one pool with refcount 1 when
	 * every worker sits on one socket: the device may then recycle
	 * them in bulk. */
	if ((info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE)) {
		unsigned s0 = mlv_lcore_socket(lcores[0]);
		bool one_socket = true;

		for (uint32_t w = 1; w < n_workers; w++)
			one_socket &= mlv_lcore_socket(lcores[w]) == s0;
		if (one_socket)
			conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	}

	ret = rte_eth_dev_configure(p->port_id, p->n_rxq, p->n_txq, &conf);
	if (ret != 0) {
		mlv_err_log("port %s: cannot configure '%s' with %u RX and %u TX "
			    "queues: %s", pc->name, pc->device, p->n_rxq,
			    p->n_txq, rte_strerror(-ret));
		return MLV_E_DPDK;
	}
	p->configured = true;
	ret = rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &nb_rxd, &nb_txd);
	if (ret != 0) {
		mlv_err_log("port %s: cannot size descriptor rings: %s",
			    pc->name, rte_strerror(-ret));
		return MLV_E_DPDK;
	}
	for (uint16_t q = 0; q < p->n_rxq; q++) {
		unsigned s = mlv_lcore_socket(lcores[q]);
		struct rte_eth_rxconf rxconf = info.default_rxconf;

		ret = rte_eth_rx_queue_setup(p->port_id, q, nb_rxd, s, &rxconf,
					     ps->pool[s]);
		if (ret != 0) {
			p->rxq_failed = true;
			mlv_err_log("port %s: RX queue %u: %s (the pool on socket "
				    "%u holds %u mbufs of %u bytes; a device "
				    "that keeps frames in it, such as net_pcap "
				    "with infinite_rx, may need more: see "
				    "dataplane.mbufs)", pc->name, q,
				    rte_strerror(-ret), s,
				    ps->pool[s]->size,
				    rte_pktmbuf_data_room_size(ps->pool[s]));
			return MLV_E_DPDK;
		}
	}
	for (uint16_t q = 0; q < p->n_txq; q++) {
		struct rte_eth_txconf txconf = info.default_txconf;

		txconf.offloads = conf.txmode.offloads;
		ret = rte_eth_tx_queue_setup(p->port_id, q, nb_txd,
					     mlv_lcore_socket(lcores[q]), &txconf);
		if (ret != 0) {
			mlv_err_log("port %s: TX queue %u: %s", pc->name, q,
				    rte_strerror(-ret));
			return MLV_E_DPDK;
		}
	}
	return MLV_OK;
}

static void fill_info(struct mlv_ports *ps, uint32_t i,
		      const struct mlv_config *cfg)
{
	const struct mlv_port_config *pc = &cfg->ports[i];
	struct mlv_gen_port_info *gi = &ps->info[i];
	struct rte_ether_addr mac;

	memset(gi, 0, sizeof(*gi));
	if (rte_eth_macaddr_get(ps->port[i].port_id, &mac) == 0)
		memcpy(gi->mac, mac.addr_bytes, sizeof(gi->mac));
	/* next_hop: auto is refused by the plan where it would be used; a
	 * port that never transmits encapsulated packets keeps zeros. */
	if (!pc->next_hop_auto) {
		memcpy(gi->next_hop, pc->next_hop.bytes, sizeof(gi->next_hop));
		if (pc->has_next_hop6)
			memcpy(gi->next_hop6, pc->next_hop6.bytes,
			       sizeof(gi->next_hop6));
	}
	gi->mtu = pc->mtu;
	gi->address = pc->address;
	gi->address6 = pc->address6;
}

enum mlv_err mlv_ports_open(struct mlv_ports *ps, const struct mlv_config *cfg,
			    const unsigned *worker_lcores, uint32_t n_workers)
{
	char why[512];
	enum mlv_err err;
	int ret;

	memset(ps, 0, sizeof(*ps));
	err = mlv_port_plan_make(cfg, &ps->plan, why, sizeof(why));
	if (err) {
		mlv_err_log("%s", why);
		return err;
	}
	ps->n = cfg->n_ports;
	if ((err = find_devices(ps, cfg)))
		goto fail;
	if ((err = create_pools(ps, cfg, worker_lcores, n_workers)))
		goto fail;
	for (uint32_t i = 0; i < ps->n; i++) {
		struct mlv_port *p = &ps->port[i];

		if (p->shared) {
			/* its owner's queues and offloads, its own VLAN */
			const struct mlv_port *o = &ps->port[p->owner];

			p->n_rxq = o->n_rxq;
			p->n_txq = o->n_txq;
			p->vlan = cfg->ports[i].vlan;
			p->vlan_tx_hw = o->vlan_tx_hw;
			p->vlan_rx_hw = o->vlan_rx_hw;
			continue;
		}
		if ((err = configure_port(ps, i, cfg, worker_lcores, n_workers)))
			goto fail;
	}
	for (uint32_t i = 0; i < ps->n; i++) {
		const struct mlv_port_config *pc = &cfg->ports[i];
		char mac[RTE_ETHER_ADDR_FMT_SIZE];

		ret = ps->port[i].shared ? 0 :
		      rte_eth_dev_start(ps->port[i].port_id);
		if (ret != 0) {
			mlv_err_log("port %s: cannot start '%s': %s", pc->name,
				    pc->device, rte_strerror(-ret));
			err = MLV_E_DPDK;
			goto fail;
		}
		ps->port[i].started = true;
		fill_info(ps, i, cfg);
		rte_ether_format_addr(mac, sizeof(mac),
				      (const struct rte_ether_addr *)ps->info[i].mac);
		if (pc->vlan)
			mlv_info("port %s: VLAN %u%s%s, tags inserted by the %s, "
				 "read from the %s", pc->name, pc->vlan,
				 ps->port[i].shared ? " of the device of port " : "",
				 ps->port[i].shared ?
					cfg->ports[ps->port[i].owner].name : "",
				 ps->port[i].vlan_tx_hw ? "NIC" : "workers",
				 ps->port[i].vlan_rx_hw ? "NIC" : "frames");
		mlv_info("port %s: device %s (DPDK port %u), MAC %s, %u RX / %u "
			 "TX queues, MTU %u%s%s", pc->name, pc->device,
			 ps->port[i].port_id, mac, ps->port[i].n_rxq,
			 ps->port[i].n_txq, pc->mtu,
			 ps->plan.tx_of[i] != i ? ", transmits via " : "",
			 ps->plan.tx_of[i] != i ?
				cfg->ports[ps->plan.tx_of[i]].name : "");
	}
	return MLV_OK;
fail:
	mlv_ports_close(ps);
	return err;
}

void mlv_ports_close(struct mlv_ports *ps)
{
	for (uint32_t i = 0; i < ps->n; i++) {
		struct mlv_port *p = &ps->port[i];
		int ret;

		if (p->started && !p->shared) {
			ret = rte_eth_dev_stop(p->port_id);
			if (ret != 0)
				mlv_warn("DPDK port %u: stop failed: %s",
					 p->port_id, rte_strerror(-ret));
			p->started = false;
		}
		/* DPDK 22.11's net_pcap with infinite_rx frees a queue's
		 * ring when its setup fails but keeps the pointer, and its
		 * close frees the ring again (a crash). A failed queue setup
		 * ends the daemon, so leaving that device unclosed costs
		 * nothing. */
		if (p->configured && p->rxq_failed) {
			mlv_debug("DPDK port %u: not closed after a failed RX "
				  "queue setup", p->port_id);
			p->configured = false;
			ps->device_left_open = true;
		}
		if (p->configured) {
			ret = rte_eth_dev_close(p->port_id);
			if (ret != 0)
				mlv_warn("DPDK port %u: close failed: %s",
					 p->port_id, rte_strerror(-ret));
			p->configured = false;
		}
		if (p->bond) {
			mlv_bond_free(p->device);
			p->bond = false;
		}
	}
	for (unsigned s = 0; s < RTE_MAX_NUMA_NODES; s++) {
		rte_mempool_free(ps->pool[s]);
		ps->pool[s] = NULL;
	}
	ps->n = 0;
}
