/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernel's routing and neighbour tables over rtnetlink (libmnl), for
 * `next_hop: auto`: which address the kernel would send a packet for a
 * destination to (RTM_GETROUTE), that address's MAC (RTM_GETNEIGH), a way
 * to make the kernel resolve a missing entry, and a notification socket
 * that says when neighbours or routes change.
 *
 * Requests go over their own non-blocking socket; the kernel answers
 * RTM_GETROUTE / RTM_GETNEIGH requests synchronously while it handles the
 * send, so a reply is always queued when recv runs and nothing waits.
 *
 * Threads: one thread per struct mlv_rtnl (the control thread).
 */
#ifndef MLV_DAEMON_RTNL_H
#define MLV_DAEMON_RTNL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/base/addr.h"
#include "control/base/error.h"

struct mnl_socket;

struct mlv_rtnl {
	struct mnl_socket *req;      /* requests and their replies */
	struct mnl_socket *mon;      /* RTMGRP_NEIGH and route groups */
	uint32_t req_portid;
	uint32_t seq;
};

/* Open both sockets. MLV_E_IO (errno kept) on failure, nothing open. */
enum mlv_err mlv_rtnl_open(struct mlv_rtnl *nl);
/* Open the request socket only (route and neighbour look-ups, no
 * notifications). MLV_E_IO (errno kept) on failure, nothing open. */
enum mlv_err mlv_rtnl_open_requests(struct mlv_rtnl *nl);
/* Close; safe on a zeroed struct. */
void mlv_rtnl_close(struct mlv_rtnl *nl);

/* The notification socket's fd, for epoll (EPOLLIN). */
int mlv_rtnl_monitor_fd(const struct mlv_rtnl *nl);

/* What the pending notifications were about. */
struct mlv_rtnl_changes {
	bool neigh;      /* a neighbour entry changed on a wanted interface */
	bool route;      /* some route changed (any interface: a route via
			    another device can change our choice too) */
};

/* Read every pending notification (non-blocking). wanted(ifindex, ctx)
 * filters neighbour events by interface. A lost-notification overflow
 * reports both kinds. */
void mlv_rtnl_monitor_read(struct mlv_rtnl *nl,
			   bool (*wanted)(int ifindex, void *ctx), void *ctx,
			   struct mlv_rtnl_changes *out);

/* The kernel's route toward dst leaving by interface oif (0: any).
 * *via is the gateway (RTA_GATEWAY, or RTA_VIA of another family), or
 * dst itself for an on-link destination; *dev the route's interface.
 * MLV_E_NOT_FOUND: no route (unreachable, prohibit, a local address, a
 * route through another interface than oif); MLV_E_IO otherwise. */
enum mlv_err mlv_rtnl_route(struct mlv_rtnl *nl, const struct mlv_ip *dst,
			    int oif, struct mlv_ip *via, int *dev);

/* The neighbour entry of addr on ifindex. Returns MLV_OK with *valid and
 * mac[] when the entry has a link-layer address in a usable state
 * (reachable, stale, delay, probe, permanent, noarp); MLV_OK with *valid
 * false when the entry is missing, incomplete or failed. MLV_E_IO on a
 * netlink error. */
enum mlv_err mlv_rtnl_neigh(struct mlv_rtnl *nl, int ifindex,
			    const struct mlv_ip *addr, uint8_t mac[6],
			    bool *valid);

/* Make the kernel resolve addr on ifindex: one empty UDP datagram to
 * addr's discard port (9), sent from a socket bound to the interface. The
 * kernel queues it behind an ARP request / neighbour solicitation.
 * Callers only ever pass configured next hops and backends. */
enum mlv_err mlv_rtnl_solicit(int ifindex, const struct mlv_ip *addr);

#endif
