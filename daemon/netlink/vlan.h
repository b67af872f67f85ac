/* SPDX-License-Identifier: BSD-3-Clause */
/* A VLAN port's kernel interface (`vlan:` on a port backed by a kernel
 * interface, net_af_xdp or net_af_packet on `iface=`): the driver names
 * the trunk (eth0), while the VLAN's addresses, routes and neighbours
 * live on its VLAN interface (eth0.100, kind "vlan", VLAN ID 100, link
 * eth0). `next_hop: auto` resolves through that one.
 *
 * Threads: control thread only (the struct mlv_rtnl's).
 */
#ifndef MLV_DAEMON_NETLINK_VLAN_H
#define MLV_DAEMON_NETLINK_VLAN_H

#include <stdbool.h>
#include <stdint.h>

#include <libmnl/libmnl.h>

#include "control/base/error.h"
#include "daemon/netlink/rtnl.h"

/* Whether nlh, an RTM_NEWLINK message, describes a VLAN interface (link
 * kind "vlan" with an IFLA_VLAN_ID, and an IFLA_LINK parent); then its
 * *ifindex, *parent and *vid. Reads only inside nlh->nlmsg_len. Pure; any
 * thread. */
bool mlv_nl_link_vlan(const struct nlmsghdr *nlh, int *ifindex, int *parent,
		      uint16_t *vid);

/* The VLAN interface with VLAN ID vid on interface parent, from a dump
 * of the kernel's links: MLV_OK and *child; MLV_E_NOT_FOUND when there is
 * none; MLV_E_IO on a netlink error. */
enum mlv_err mlv_rtnl_vlan_child(struct mlv_rtnl *nl, int parent, uint16_t vid,
				 int *child);

#endif
