/* SPDX-License-Identifier: BSD-3-Clause */
/* Bonded ports (`bond:` in a port's config): the bonded device DPDK's
 * bonding driver (net_bonding) builds over the member devices, so that
 * the workers see one port whose queues survive a member's link failure
 * (active-backup) or spread over an LACP aggregate (802.3ad).
 *
 * Threads: control thread only, after rte_eal_init; create before the
 * port is configured, the readers while it runs. The bonding driver
 * watches the members' links itself (an EAL alarm every link_monitor
 * milliseconds for members without link interrupts) and moves the
 * traffic; nothing here is on the packet path.
 */
#ifndef MLV_BOND_H
#define MLV_BOND_H

#include <stdbool.h>
#include <stdint.h>

#include "control/base/error.h"
#include "control/config/config.h"

/* Create pc's bonded device (pc->device) on NUMA socket socket over its
 * members, which must be probed DPDK ports not started yet: the first is
 * the primary; the MAC is pc->bond.mac when given; link monitoring every
 * link_monitor ms. Returns MLV_OK and *port_id, or MLV_E_CONFIG (a member
 * is not a DPDK port, or the driver refuses one: logged with the
 * reason) or MLV_E_DPDK (the driver failed; the members it took are
 * released and the bond freed). */
enum mlv_err mlv_bond_create(const struct mlv_port_config *pc, unsigned socket,
			     uint16_t *port_id);

/* Free a bond mlv_bond_create made, after its port was closed (no-op for
 * a name that is no bond). */
void mlv_bond_free(const char *name);

/* One member's state as the bonding driver and its PMD report it. */
struct mlv_bond_member {
	uint16_t port_id;
	bool up;                 /* its link */
	bool active;             /* carrying traffic: active-backup's member
				    in use, or a member of the 802.3ad
				    aggregate */
};

/* The members of bonded port bond_port, in the order they were added
 * (the config's), at most cap. Returns how many, 0 when bond_port is no
 * bond. A member is up when its driver says so without waiting
 * (rte_eth_link_get_nowait) and, when it is backed by a kernel interface
 * (net_af_packet, net_af_xdp, whose 22.11 drivers always say up), that
 * interface has carrier. */
uint32_t mlv_bond_members(uint16_t bond_port, struct mlv_bond_member *out,
			  uint32_t cap);

/* Active-backup: move the traffic to the first member (config order)
 * whose link is up, when the member in use is not that one: a failover
 * when the member in use went down, the return to the primary when it
 * came back. What the bonding driver does on its own for members whose
 * driver reports link changes, done here for those it cannot see
 * (mlv_bond_members' kernel carrier). Returns true when it moved the
 * traffic. No-op for 802.3ad (LACP decides) and for non-bonds. */
bool mlv_bond_steer(uint16_t bond_port);

#endif
