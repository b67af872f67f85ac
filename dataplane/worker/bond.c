/* SPDX-License-Identifier: BSD-3-Clause */
/* Bonded ports: see bond.h. DPDK 22.11's bonding API calls the members
 * "slaves"; maglevd's config, logs and metrics say members. */
#include "dataplane/worker/bond.h"

#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_eth_bond.h>
#include <rte_eth_bond_8023ad.h>
#include <rte_ethdev.h>

#include "control/base/log.h"

/* The bonding API's results: some calls return -errno, others -1 for
 * any refusal, which is no errno. */
static const char *why(int ret)
{
	return ret < -1 ? rte_strerror(-ret) : "refused by the bonding driver";
}

static uint8_t driver_mode(enum mlv_bond_mode m)
{
	return m == MLV_BOND_8023AD ? BONDING_MODE_8023AD
				    : BONDING_MODE_ACTIVE_BACKUP;
}

enum mlv_err mlv_bond_create(const struct mlv_port_config *pc, unsigned socket,
			     uint16_t *port_id)
{
	const struct mlv_bond_config *b = &pc->bond;
	uint16_t member[MLV_BOND_MAX_MEMBERS];
	enum mlv_err err = MLV_E_DPDK;
	int bond, ret;

	for (uint32_t i = 0; i < b->n_members; i++) {
		if (rte_eth_dev_get_port_by_name(b->members[i], &member[i]) != 0) {
			mlv_err_log("port %s: bond member '%s' is not a DPDK "
				    "port; add it to the EAL arguments (e.g. "
				    "--vdev=...) or fix the PCI address",
				    pc->name, b->members[i]);
			return MLV_E_CONFIG;
		}
	}
	bond = rte_eth_bond_create(pc->device, driver_mode(b->mode),
				   (uint8_t)socket);
	if (bond < 0) {
		mlv_err_log("port %s: cannot create the bonded device '%s': %s",
			    pc->name, pc->device, why(bond));
		return MLV_E_DPDK;
	}
	for (uint32_t i = 0; i < b->n_members; i++) {
		ret = rte_eth_bond_slave_add((uint16_t)bond, member[i]);
		if (ret != 0) {
			mlv_err_log("port %s: bond member '%s' refused by the "
				    "bonding driver: %s (a member must be a "
				    "port of its own, not started, with the "
				    "queues and offloads of the others)",
				    pc->name, b->members[i], why(ret));
			err = MLV_E_CONFIG;
			goto fail;
		}
	}
	if (b->mode == MLV_BOND_ACTIVE_BACKUP &&
	    (ret = rte_eth_bond_primary_set((uint16_t)bond, member[0])) != 0) {
		mlv_err_log("port %s: bond primary '%s': %s", pc->name,
			    b->members[0], why(ret));
		goto fail;
	}
	if (b->has_mac &&
	    (ret = rte_eth_bond_mac_address_set(
		     (uint16_t)bond,
		     (struct rte_ether_addr *)(uintptr_t)b->mac.bytes)) != 0) {
		mlv_err_log("port %s: bond MAC: %s", pc->name, why(ret));
		goto fail;
	}
	ret = rte_eth_bond_link_monitoring_set((uint16_t)bond, b->link_monitor_ms);
	if (ret != 0) {
		mlv_err_log("port %s: bond link monitoring every %u ms: %s",
			    pc->name, b->link_monitor_ms, why(ret));
		goto fail;
	}
	*port_id = (uint16_t)bond;
	return MLV_OK;
fail:
	/* the driver frees no bond that still has members */
	for (uint32_t i = 0; i < b->n_members; i++)
		(void)rte_eth_bond_slave_remove((uint16_t)bond, member[i]);
	if (rte_eth_bond_free(pc->device) != 0)
		mlv_warn("port %s: the half-made bond '%s' could not be freed",
			 pc->name, pc->device);
	return err;
}

void mlv_bond_free(const char *name)
{
	/* The close released the port; this removes the virtual device
	 * rte_eth_bond_create added to the bus (with nothing left to free
	 * the driver's remove succeeds). */
	int ret = rte_eth_bond_free(name);

	if (ret != 0)
		mlv_debug("bond %s: free: %s", name, rte_strerror(-ret));
}

/* Whether member port_id's kernel interface has carrier (IFF_RUNNING),
 * for members backed by one (net_af_packet, net_af_xdp): DPDK 22.11's
 * drivers for them report their link up whatever the interface does, so
 * the bonding driver alone would never fail over from them. A member
 * without a kernel interface (a PCI NIC's PMD reports its own link):
 * true. */
static bool kernel_carrier(uint16_t port_id)
{
	static int fd = -1;
	struct rte_eth_dev_info info;
	struct ifreq ifr;

	if (rte_eth_dev_info_get(port_id, &info) != 0 || info.if_index == 0)
		return true;
	memset(&ifr, 0, sizeof(ifr));
	if (!if_indextoname(info.if_index, ifr.ifr_name))
		return false;      /* the interface is gone */
	if (fd < 0)
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) != 0)
		return true;       /* cannot tell: the driver's word stands */
	return (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING);
}

uint32_t mlv_bond_members(uint16_t bond_port, struct mlv_bond_member *out,
			  uint32_t cap)
{
	uint16_t all[RTE_MAX_ETHPORTS], active[RTE_MAX_ETHPORTS];
	int n = rte_eth_bond_slaves_get(bond_port, all, RTE_MAX_ETHPORTS);
	int n_active = rte_eth_bond_active_slaves_get(bond_port, active,
						      RTE_MAX_ETHPORTS);
	/* active-backup: the member in use (the driver's current primary) */
	int current = rte_eth_bond_primary_get(bond_port);
	bool backup = rte_eth_bond_mode_get(bond_port) == BONDING_MODE_ACTIVE_BACKUP;
	uint32_t k = 0;

	if (n <= 0)
		return 0;
	for (int i = 0; i < n && k < cap; i++, k++) {
		struct rte_eth_link link;
		bool listed = false;

		memset(&out[k], 0, sizeof(out[k]));
		out[k].port_id = all[i];
		out[k].up = rte_eth_link_get_nowait(all[i], &link) == 0 &&
			    link.link_status == RTE_ETH_LINK_UP &&
			    kernel_carrier(all[i]);
		for (int j = 0; j < n_active; j++)
			listed |= active[j] == all[i];
		if (backup) {
			out[k].active = listed && current >= 0 &&
					(uint16_t)current == all[i];
		} else {
			/* 802.3ad: in the aggregate once LACP lets it
			 * distribute, not merely with its link up */
			struct rte_eth_bond_8023ad_slave_info li;

			out[k].active = listed &&
				rte_eth_bond_8023ad_slave_info(bond_port, all[i],
							       &li) == 0 &&
				(li.actor_state & STATE_DISTRIBUTING);
		}
	}
	return k;
}

bool mlv_bond_steer(uint16_t bond_port)
{
	struct mlv_bond_member m[MLV_BOND_MAX_MEMBERS];
	struct rte_ether_addr mac;
	uint32_t n;
	int current, ret;

	if (rte_eth_bond_mode_get(bond_port) != BONDING_MODE_ACTIVE_BACKUP)
		return false;
	n = mlv_bond_members(bond_port, m, MLV_BOND_MAX_MEMBERS);
	current = rte_eth_bond_primary_get(bond_port);
	for (uint32_t k = 0; k < n; k++) {
		if (!m[k].up)
			continue;
		/* the first member up in the config's order: the primary
		 * whenever its link is up, as the driver itself does */
		if (current >= 0 && (uint16_t)current == m[k].port_id)
			return false;
		ret = rte_eth_bond_primary_set(bond_port, m[k].port_id);
		if (ret != 0) {
			mlv_warn("bond port %u: cannot move the traffic to "
				 "member port %u: %s", bond_port, m[k].port_id,
				 why(ret));
			return false;
		}
		/* The new member in use takes the bond's MAC (and the old
		 * one its own back), as on the driver's own failover: the
		 * MAC set while started runs the driver's member update. */
		if (rte_eth_macaddr_get(bond_port, &mac) != 0 ||
		    (ret = rte_eth_bond_mac_address_set(bond_port, &mac)) != 0)
			mlv_warn("bond port %u: member port %u carries the "
				 "traffic but keeps its own MAC", bond_port,
				 m[k].port_id);
		return true;
	}
	return false;      /* none up: nothing better to move to */
}
