/* SPDX-License-Identifier: BSD-3-Clause */
/* Map keys and values of the decapsulator (xdp_decap.bpf.c), shared with
 * tools/bin/maglev-decap which fills the maps. Only <linux/types.h> types. */
#ifndef MLV_BPF_DECAP_STRUCTS_H
#define MLV_BPF_DECAP_STRUCTS_H

#include <linux/types.h>

#include "dataplane/bpf/common/addr_key.h"

/* decap_addrs value: presence is what matters. */
struct mlv_decap_addr_val {
	__u32 flags;    /* reserved, zero */
};

/* decap_gue_ports key: a UDP destination port that carries GUE. */
struct mlv_decap_port_key {
	__be16 port;    /* network order */
};

/* decap_gue_ports value: presence is what matters. */
struct mlv_decap_port_val {
	__u32 flags;    /* reserved, zero */
};

/* decap_sources key: a BPF_MAP_TYPE_LPM_TRIE key (the prefix length
 * first, as the kernel wants it) over the family tag and the address.
 * One trie for both families rather than one per family: one map to
 * fill, find by name and read back, and one lookup in the program. The
 * family tag is the first MLV_DECAP_SRC_FAMILY_BITS bits of every stored
 * prefix, so an IPv4 prefix, even 0.0.0.0/0, never matches an IPv6
 * source, nor the other way round. */
struct mlv_decap_src_key {
	__u32 prefixlen;  /* MLV_DECAP_SRC_FAMILY_BITS + the address prefix */
	__u8 family;      /* MLV_BPF_FAMILY_V4 or _V6 */
	__u8 addr[16];    /* network order; IPv4 in addr[0..3]; bits past the
			   * prefix zero */
	__u8 pad[3];      /* never part of a prefix; zero */
};

/* The bits of a decap_sources key's family tag. */
#define MLV_DECAP_SRC_FAMILY_BITS 8

/* decap_sources value: presence is what matters. */
struct mlv_decap_src_val {
	__u32 flags;    /* reserved, zero */
};

/* decap_syn_mss: how many handshakes in flight it remembers (an LRU map:
 * the oldest entry gives way when full). */
#define MLV_DECAP_MAX_SYN_FLOWS 65536

/* decap_syn_mss key: a TCP flow as the decapsulated SYN carried it,
 * client -> VIP. The egress program looks a SYN-ACK up reversed. */
struct mlv_decap_flow_key {
	__u8 family;      /* MLV_BPF_FAMILY_V4 or _V6 */
	__u8 proto;       /* IPPROTO_TCP */
	__be16 sport;     /* the client's port */
	__be16 dport;     /* the VIP's port */
	__u8 pad[2];      /* zero */
	__u8 saddr[16];   /* the client; IPv4 in [0..3], rest zero */
	__u8 daddr[16];   /* the VIP; IPv4 in [0..3], rest zero */
};

/* decap_syn_mss value: the largest MSS whose segments, encapsulated the
 * way the SYN was, fit the path MTU. */
struct mlv_decap_flow_val {
	__u32 mss;        /* host order */
};

/* decap_mss_cfg value (its one entry, key 0): the outer path MTU between
 * the load balancers and this host that SYNs are recorded against. */
struct mlv_decap_mss_cfg {
	__u32 path_mtu;   /* bytes; 0: SYN-ACK clamping off, nothing recorded */
};

/* decap_sc_cfg value (its one entry, key 0): what second chance does on
 * this host (dataplane/bpf/decap/redirect.h). All zero: hand on what is
 * not here, serve new connections. */
struct mlv_decap_sc_cfg {
	__u32 flags;      /* MLV_DECAP_SC_* */
};

/* decap_sc_cfg: hand nothing on; every second-chance frame is
 * decapsulated here as if it had no hops (for services whose sockets
 * are not where the program looks: another namespace, a DNAT). */
#define MLV_DECAP_SC_OFF 0x1
/* decap_sc_cfg: local drain; new connections (a SYN without a socket of
 * its own here) are handed on to the next hop even with a listener
 * here; established ones stay. */
#define MLV_DECAP_SC_DRAIN 0x2
/* The flags this version defines. */
#define MLV_DECAP_SC_ALL (MLV_DECAP_SC_OFF | MLV_DECAP_SC_DRAIN)

#endif
