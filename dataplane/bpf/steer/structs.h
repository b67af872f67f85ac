/* SPDX-License-Identifier: BSD-3-Clause */
/* Map keys and values of the steering program (xdp_steer.bpf.c), shared
 * with control/steering/steering.c which fills the maps. Only <linux/types.h>
 * types, no implicit padding. */
#ifndef MLV_BPF_STEER_STRUCTS_H
#define MLV_BPF_STEER_STRUCTS_H

#include <linux/types.h>

#include "dataplane/bpf/common/addr_key.h"

/* One balanced service: what a packet must be addressed to for maglevd.
 * Matches the data plane's VIP identity (address, port, protocol). */
struct mlv_steer_vip_key {
	__u8 family;    /* MLV_BPF_FAMILY_V4 or _V6 */
	__u8 proto;     /* IPPROTO_TCP or IPPROTO_UDP */
	__be16 port;    /* destination port, network order */
	__u8 addr[16];  /* network order; IPv4 in addr[0..3], rest zero */
};

/* vip_map value. Nothing is needed per VIP yet; the field keeps the value
 * non-empty (hash maps need a value) and leaves room to grow. */
struct mlv_steer_vip_val {
	__u32 flags;    /* reserved, zero */
};

/* vip_addrs value: how many VIPs share the address (for operators
 * reading the map with bpftool) and what else is steered to it. */
struct mlv_steer_addr_val {
	__u32 n_vips;
	__u32 flags;    /* MLV_STEER_ADDR_* */
};

/* steer_cfg's one value: what the whole VIP set holds. */
struct mlv_steer_cfg {
	__u32 flags;    /* MLV_STEER_CFG_* */
};

/* Some VIP takes a range of ports or every port (vip_map holds a port-0
 * key): after an exact miss, try port 0. Without it the host's own
 * TCP/UDP traffic costs one hash look-up, not two. */
#define MLV_STEER_CFG_WILD 1u

/* Echo requests to the address go to maglevd, which answers them (some
 * VIP on it says icmp_echo: reply); without it they go to the kernel. */
#define MLV_STEER_ADDR_ECHO 1u

#endif
