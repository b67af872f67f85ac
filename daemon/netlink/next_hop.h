/* SPDX-License-Identifier: BSD-3-Clause */
/* `next_hop: auto`: the destination MAC of encapsulated packets, taken
 * from the kernel for ports backed by a kernel interface (net_af_xdp or
 * net_af_packet on `iface=`, net_tap), where the host shares the link and
 * keeps a neighbour table for it.
 *
 * Per such port and address family: for each distinct outer destination
 * of that family (the address of a backend of an ipip or gue VIP) the
 * kernel's route via that interface gives the next-hop address (the
 * gateway, or the backend itself when it is on the link); the address
 * most of them share (ties: the lowest) is the family's next hop, since
 * a generation has one next-hop MAC per port and family (next_hop,
 * next_hop6; a warning names any backend the kernel would send
 * elsewhere). Its MAC comes from the neighbour table. A missing entry is resolved by the
 * kernel after an empty UDP datagram to the next hop's discard port;
 * health checks going through the same next hop keep the entry fresh
 * afterwards.
 *
 * Re-resolution: immediately on a neighbour notification for the port's
 * interface (rtnetlink), route lookups again on a route notification or a
 * reload, a retry every MLV_NEXT_HOP_RETRY_MS while unresolved, and a
 * full re-check every MLV_NEXT_HOP_RECHECK_MS. A changed MAC is written to
 * the ports' generation info, and the caller republishes.
 *
 * L2-DSR backends without a configured `mac` are resolved alike, on the
 * link itself (no route look-up: an l2dsr backend is on the link): each
 * distinct address is looked up in the neighbour table of the first
 * transmitting port that has a kernel interface, solicited when missing,
 * and re-checked on the same notifications and timers. The builder's
 * state callback takes the MAC from mlv_next_hops_backend_mac; until it
 * is known the backend is unusable (control/generation/generation.c: no
 * table slots). A MAC that appears or changes makes mlv_next_hops_update
 * return true.
 *
 * Plain C, no DPDK: interface indexes come from the caller.
 * Threads: control thread only.
 */
#ifndef MLV_DAEMON_NEXT_HOP_H
#define MLV_DAEMON_NEXT_HOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/config/config.h"
#include "control/base/error.h"
#include "control/generation/generation.h"
#include "daemon/netlink/rtnl.h"

#define MLV_NEXT_HOP_RETRY_MS    500u
#define MLV_NEXT_HOP_RECHECK_MS  10000u

/* One address family's next hop of a port. */
struct mlv_next_hop_via {
	bool have_via;           /* a route gave a next-hop address */
	struct mlv_ip via;
	bool resolved;           /* mac is the neighbour entry of via */
	uint8_t mac[6];
};

struct mlv_next_hop_port {
	bool wanted;             /* next_hop: auto and ipip/gue leaves here */
	int ifindex;             /* the kernel interface, 0 if none */
	/* [0] IPv4, [1] IPv6: a dual-stack link often has a router per
	 * family; a family no backend uses is not looked up */
	struct mlv_next_hop_via fam[2];
};

/* An l2dsr backend address with no configured MAC. */
struct mlv_next_hop_backend {
	struct mlv_ip addr;
	int ifindex;             /* where it is looked up; 0: no port can */
	bool resolved;
	uint8_t mac[6];
};

struct mlv_next_hops {
	bool active;             /* some port wants resolution: nl is open */
	struct mlv_rtnl nl;
	uint32_t n_ports;
	struct mlv_next_hop_port port[MLV_MAX_PORTS];
	/* l2dsr backends to resolve, sorted by address, distinct */
	size_t n_backends;
	struct mlv_next_hop_backend *backends;
	bool reroute;            /* route lookups due (route change, reload) */
	bool refresh;            /* neighbour look-ups due */
	uint64_t last_check_ms;
};

/* Which ports of cfg must resolve a next hop: next_hop: auto on a port
 * that transmits while some VIP uses ipip or gue. wanted[] is filled for
 * cfg->n_ports ports; returns how many are wanted. */
uint32_t mlv_next_hop_wanted(const struct mlv_config *cfg, bool *wanted);

/* Check that every port of cfg that must resolve its next hop has a
 * kernel interface (ifindex[i] > 0). MLV_E_CONFIG with a sentence naming
 * the port in err otherwise. Pure. */
enum mlv_err mlv_next_hop_check(const struct mlv_config *cfg,
				const int *ifindex, char *err, size_t err_len);

/* Set up for cfg (after mlv_next_hop_check passed), opening rtnetlink if
 * some port has a kernel interface, and list the l2dsr backends to
 * resolve. Returns MLV_OK or MLV_E_IO (errno kept; ENOMEM when the
 * backend list cannot be allocated). */
enum mlv_err mlv_next_hops_init(struct mlv_next_hops *nh,
				const struct mlv_config *cfg,
				const int *ifindex);

/* Release; safe on a zeroed struct (and after a failed init). */
void mlv_next_hops_free(struct mlv_next_hops *nh);

/* A reload changed the config: recompute which ports want a next hop
 * and which l2dsr backends need a MAC (keeping MACs already known for
 * addresses still there), and mark route look-ups due. Returns MLV_OK,
 * or MLV_E_NOMEM (the previous backend list is kept). */
enum mlv_err mlv_next_hops_reconfigure(struct mlv_next_hops *nh,
				       const struct mlv_config *cfg);

/* The resolved MAC of an l2dsr backend address: true and mac filled, or
 * false (not one to resolve, or not resolved yet). Pure look-up. */
bool mlv_next_hops_backend_mac(const struct mlv_next_hops *nh,
			       const struct mlv_ip *addr, uint8_t mac[6]);

/* The rtnetlink notification fd (EPOLLIN), or -1 when inactive. */
int mlv_next_hops_fd(const struct mlv_next_hops *nh);

/* The notification fd is readable: read it and mark what is due. */
void mlv_next_hops_on_notify(struct mlv_next_hops *nh);

/* Do what is due (route look-ups, neighbour look-ups, solicitations of
 * missing entries) for cfg, and copy every wanted port's MAC into
 * info[i].next_hop. force: re-check everything now (the periodic timer).
 * Returns whether some info[i].next_hop or some l2dsr backend's MAC
 * changed (then republish). */
bool mlv_next_hops_update(struct mlv_next_hops *nh,
			  const struct mlv_config *cfg,
			  struct mlv_gen_port_info *info, bool force);

/* Whether every wanted port, and every l2dsr backend that some port can
 * resolve, has a MAC. */
bool mlv_next_hops_all_resolved(const struct mlv_next_hops *nh);

/* Wait (poll on the notification fd, at most timeout_ms) until
 * mlv_next_hops_all_resolved; for start-up, before generation 1, so the first
 * generation does not send to an unresolved next hop. Returns whether all
 * resolved. */
bool mlv_next_hops_wait(struct mlv_next_hops *nh, const struct mlv_config *cfg,
			struct mlv_gen_port_info *info, uint32_t timeout_ms);

#endif
