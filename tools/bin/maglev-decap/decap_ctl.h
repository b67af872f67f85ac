/* SPDX-License-Identifier: BSD-3-Clause */
/* The backend decapsulator (dataplane/bpf/decap/xdp_decap.bpf.c) seen from
 * userspace: attach it to an interface or find it there, fill its address,
 * GUE-port and source maps, read its counters, detach it. Used by maglev-decap
 * and the bpf tests.
 *
 * The XDP attachment outlives the process that made it (the kernel keeps
 * the program and its maps while attached), so every command finds the
 * program again through the interface.
 *
 * Threads: one thread at a time per interface. Errors: enum mlv_err with
 * a one-line reason in errbuf (when not NULL). */
#ifndef MLV_DECAP_CTL_H
#define MLV_DECAP_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/base/addr.h"
#include "control/base/error.h"
#include "dataplane/bpf/decap/counters.h"

/* The BPF program name of the decapsulator. */
#define MLV_DECAP_PROG_NAME "mlv_xdp_decap"

/* What the decapsulator accepts. */
struct mlv_decap_config {
	const struct mlv_ip *addrs;     /* this host's tunnel endpoints */
	size_t n_addrs;
	const uint16_t *gue_ports;      /* host order; none = IPIP only */
	size_t n_gue_ports;
	/* outer sources tunnels are accepted from (the load balancers);
	 * none = no tunnel is decapsulated */
	const struct mlv_ip_prefix *sources;
	size_t n_sources;
	/* SYN-ACK MSS clamping (synack_tc.h): the outer path MTU from the
	 * load balancers to this host, MLV_DECAP_PATH_MTU_MIN..MAX; 0 = off
	 * (no SYN recorded, no egress program) */
	uint32_t path_mtu;
	/* second chance off on this host: every second-chance frame is
	 * decapsulated here, nothing handed on (services whose sockets are
	 * not in DEV's namespace, or under a DNATed address) */
	bool second_chance_off;
};

/* The path MTUs SYN-ACK clamping accepts: IPv4's smallest datagram every
 * host takes (RFC 791) up to the largest IP packet. */
#define MLV_DECAP_PATH_MTU_MIN 576
#define MLV_DECAP_PATH_MTU_MAX 65535

/* Fds of an attached decapsulator's maps (close with mlv_decap_maps_close). */
struct mlv_decap_maps {
	uint32_t prog_id;
	uint32_t mode_flags;            /* XDP_FLAGS_DRV_MODE / _SKB_MODE */
	int addrs_fd, ports_fd, sources_fd, stats_fd;
	int syn_mss_fd, mss_cfg_fd;     /* SYN-ACK clamping's */
	int sc_cfg_fd;                  /* second chance's switches */
};

enum mlv_decap_mode {
	MLV_DECAP_MODE_AUTO = 0,        /* driver mode when available */
	MLV_DECAP_MODE_NATIVE,
	MLV_DECAP_MODE_GENERIC,
};

/* Attach to ifindex with cfg, or, if our decapsulator is already
 * attached, replace its configuration in place (no reattach, no packet
 * goes undecapsulated). *updated says which happened. The maps are filled
 * before a new program is attached. With cfg->path_mtu the tc egress
 * program of SYN-ACK clamping is (re)attached too, without it removed; a
 * new XDP attachment whose egress program fails to attach is undone. MLV_E_BUSY if another XDP program is
 * attached; MLV_E_LIMIT for more addresses/ports/sources than the maps
 * hold; MLV_E_INVAL for a bad address family, prefix length or port 0. */
enum mlv_err mlv_decap_attach(int ifindex, enum mlv_decap_mode mode,
			      const struct mlv_decap_config *cfg,
			      int *updated, char *errbuf, size_t errlen);

/* Open the maps of our decapsulator attached to ifindex. MLV_E_NOT_FOUND
 * if nothing is attached; MLV_E_BUSY if another program is; MLV_E_PROTO
 * if ours lacks a map of this version. */
enum mlv_err mlv_decap_open(int ifindex, struct mlv_decap_maps *maps,
			    char *errbuf, size_t errlen);

/* Make the maps hold exactly cfg. The local drain (mlv_decap_set_drain)
 * is the host's state, not configuration: it stays as it was. */
enum mlv_err mlv_decap_configure(const struct mlv_decap_maps *maps,
				 const struct mlv_decap_config *cfg,
				 char *errbuf, size_t errlen);

/* Counters summed over CPUs, indexed by enum mlv_decap_counter. */
enum mlv_err mlv_decap_counters(const struct mlv_decap_maps *maps,
				uint64_t out[MLV_DECAP_CTR__COUNT]);

/* The configured addresses (up to cap, *n set to how many exist) and
 * GUE ports (host order), for status. */
enum mlv_err mlv_decap_read_config(const struct mlv_decap_maps *maps,
				   struct mlv_ip *addrs, size_t cap,
				   size_t *n_addrs, uint16_t *ports,
				   size_t port_cap, size_t *n_ports);

/* The configured sources (up to cap, *n set to how many exist), IPv4
 * first, each family in address then length order. */
enum mlv_err mlv_decap_read_sources(const struct mlv_decap_maps *maps,
				    struct mlv_ip_prefix *out, size_t cap,
				    size_t *n);

/* Name / meaning of counter c ("?" out of range). */
const char *mlv_decap_counter_name(unsigned c);
const char *mlv_decap_counter_help(unsigned c);

void mlv_decap_maps_close(struct mlv_decap_maps *maps);

/* The path MTU SYN-ACK clamping records against (0: off). */
enum mlv_err mlv_decap_read_path_mtu(const struct mlv_decap_maps *maps,
				     uint32_t *path_mtu);

/* Second chance's switches (MLV_DECAP_SC_*,
 * dataplane/bpf/decap/structs.h) as the program reads them. */
enum mlv_err mlv_decap_read_sc(const struct mlv_decap_maps *maps,
			       uint32_t *flags);

/* Local drain on or off: while on, a new connection's SYN that carries
 * second-chance hops is handed on to the next hop even with a listener
 * here; established connections stay. Takes effect with the next
 * packet; kept across a configuration change (attach again). */
enum mlv_err mlv_decap_set_drain(const struct mlv_decap_maps *maps, bool on,
				 char *errbuf, size_t errlen);

/* Detach our decapsulator and its tc egress program from ifindex
 * (another program is left alone: MLV_E_BUSY). *removed is 0 when
 * neither was attached. */
enum mlv_err mlv_decap_detach(int ifindex, int *removed, char *errbuf,
			      size_t errlen);

#endif
