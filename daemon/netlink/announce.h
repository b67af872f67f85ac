/* SPDX-License-Identifier: BSD-3-Clause */
/* VIP routes for a routing daemon (docs/scale-out.md): one /32 or /128
 * unicast route per VIP this instance serves, in a kernel routing table
 * of the operator's, for BIRD or FRR to export over BGP. maglevd never
 * speaks BGP itself.
 *
 * The routes point at a TUN device this process creates and holds open
 * (not persistent): when the process ends, however it ends (SIGKILL, a
 * crash), the kernel closes the descriptor, deletes the device, and every
 * route on it with the device. No route outlives the process that serves
 * it, so no dead instance stays announced. Routes carry their own
 * protocol number, MLV_RTPROT_MAGLEVD, so a routing daemon can select
 * them and stale ones are found at start.
 *
 * Requests go over a netlink socket of their own; the kernel handles a
 * route change while it handles the send, so each ACK is read at once and
 * nothing waits.
 *
 * Threads: one thread per struct mlv_announce (the control thread).
 */
#ifndef MLV_DAEMON_ANNOUNCE_H
#define MLV_DAEMON_ANNOUNCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/base/addr.h"
#include "control/base/error.h"

/* The rtm_protocol of maglevd's routes (`ip route show proto 250`). Linux
 * leaves 0..4 to itself and names a few others (rtnetlink.h, iproute2's
 * rt_protos); 250 is free in both. */
#define MLV_RTPROT_MAGLEVD 250

/* Interface names: IFNAMSIZ with its NUL. */
#define MLV_ANNOUNCE_IFNAME_MAX 16

struct mnl_socket;

struct mlv_announce {
	int tun_fd;                 /* owns the device; -1: closed */
	int ifindex;
	char ifname[MLV_ANNOUNCE_IFNAME_MAX];
	uint32_t table;
	struct mnl_socket *nl;
	uint32_t portid;
	uint32_t seq;
	struct mlv_ip *routes;      /* installed, sorted (mlv_announce_cmp) */
	uint32_t n_routes;
	uint64_t announces;         /* routes added */
	uint64_t withdraws;         /* routes deleted */
	uint64_t errors;            /* route changes the kernel refused */
	char last_error[160];       /* "" until the first error */
};

/* A closed announcer (tun_fd -1, nothing installed, counters zero): a
 * valid argument to every function. Call once; open and close keep the
 * counters, so they add up over reopenings. */
void mlv_announce_init(struct mlv_announce *a);

/* On a closed announcer: create and bring up the TUN device ifname (it
 * must not exist), open the netlink socket, and delete routes of protocol MLV_RTPROT_MAGLEVD left in
 * table (by an instance that did not close its device, or by hand).
 * table is 1..UINT32_MAX. On failure returns MLV_E_IO (errno kept) or
 * MLV_E_INVAL with a sentence in why, and leaves *a closed. */
enum mlv_err mlv_announce_open(struct mlv_announce *a, const char *ifname,
			       uint32_t table, char *why, size_t why_len);

/* Whether *a is open. */
bool mlv_announce_is_open(const struct mlv_announce *a);

/* Make the installed routes exactly want[0..n-1] (any order, duplicates
 * allowed): delete the others, add the missing. A change the kernel
 * refuses is counted in errors, described in last_error and retried by
 * the next call; the others still happen. Returns MLV_OK, or the last
 * error (MLV_E_IO) when some change failed, or MLV_E_NOMEM (nothing
 * changed). A closed announcer returns MLV_E_INVAL. */
enum mlv_err mlv_announce_set(struct mlv_announce *a, const struct mlv_ip *want,
			      uint32_t n);

/* Bring the device up and add every installed route again (a replace: a
 * route still there is unchanged), against a device set down or routes
 * flushed behind maglevd's back. MLV_OK, or MLV_E_IO when the kernel
 * refused something (counted and described as by mlv_announce_set). */
enum mlv_err mlv_announce_reassert(struct mlv_announce *a);

/* Whether ip is installed. */
bool mlv_announce_has(const struct mlv_announce *a, const struct mlv_ip *ip);

/* Delete every installed route (mlv_announce_set with nothing). */
void mlv_announce_withdraw_all(struct mlv_announce *a);

/* Withdraw everything, close the socket and the device. Safe on a closed
 * announcer. */
void mlv_announce_close(struct mlv_announce *a);

/* The order routes are kept in: family, then address bytes. */
int mlv_announce_cmp(const struct mlv_ip *x, const struct mlv_ip *y);

#endif
