/* SPDX-License-Identifier: BSD-3-Clause */
/* The steering program's maps. Names are part of the contract: DPDK's
 * net_af_xdp PMD looks up "xsks_map" by name in an xdp_prog= object, and
 * control/steering/steering.c finds the others by name on an attached program
 * (BPF object names are at most 15 characters). BPF side only. */
#ifndef MLV_BPF_STEER_MAPS_H
#define MLV_BPF_STEER_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "dataplane/bpf/common/consts.h"
#include "dataplane/bpf/steer/counters.h"
#include "dataplane/bpf/steer/structs.h"

/* AF_XDP sockets by RX queue index; filled by the net_af_xdp PMD. */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, MLV_STEER_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

/* The VIPs (family, address, port, protocol) maglevd balances; the
 * control plane makes it equal to the config on every reload. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MLV_STEER_MAX_VIPS);
	__type(key, struct mlv_steer_vip_key);
	__type(value, struct mlv_steer_vip_val);
} vip_map SEC(".maps");

/* Every address some VIP uses: fragments and ICMP too-big carry no
 * usable port, so they are steered by address alone. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MLV_STEER_MAX_VIP_ADDRS);
	__type(key, struct mlv_bpf_addr_key);
	__type(value, struct mlv_steer_addr_val);
} vip_addrs SEC(".maps");

/* One entry (key 0): flags of the whole VIP set (struct mlv_steer_cfg);
 * zero until the first sync. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mlv_steer_cfg);
} steer_cfg SEC(".maps");

/* Frames per outcome (enum mlv_steer_counter), per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MLV_STEER_CTR__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} steer_stats SEC(".maps");

#endif
