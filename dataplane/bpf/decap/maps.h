/* SPDX-License-Identifier: BSD-3-Clause */
/* The decapsulator's maps. tools/bin/maglev-decap finds them by name on the
 * attached program (BPF object names are at most 15 characters). BPF
 * side only. */
#ifndef MLV_BPF_DECAP_MAPS_H
#define MLV_BPF_DECAP_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "dataplane/bpf/common/consts.h"
#include "dataplane/bpf/decap/counters.h"
#include "dataplane/bpf/decap/structs.h"

/* This host's addresses: only tunnels addressed to one are decapsulated. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MLV_DECAP_MAX_ADDRS);
	__type(key, struct mlv_bpf_addr_key);
	__type(value, struct mlv_decap_addr_val);
} decap_addrs SEC(".maps");

/* UDP destination ports that carry GUE (maglevd's per-VIP gue_port). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MLV_DECAP_MAX_GUE_PORTS);
	__type(key, struct mlv_decap_port_key);
	__type(value, struct mlv_decap_port_val);
} decap_gue_ports SEC(".maps");

/* Outer source prefixes tunnels are accepted from: the load balancers.
 * A tunnel from any other source passes untouched, so whoever can reach
 * this host cannot have packets with a source address of their choosing
 * delivered as if a load balancer had forwarded them. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, MLV_DECAP_MAX_SOURCES);
	__uint(map_flags, BPF_F_NO_PREALLOC);  /* the trie requires it */
	__type(key, struct mlv_decap_src_key);
	__type(value, struct mlv_decap_src_val);
} decap_sources SEC(".maps");

/* Frames per outcome (enum mlv_decap_counter), per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MLV_DECAP_CTR__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} decap_stats SEC(".maps");

/* Count one frame under ctr in decap_stats. */
static __always_inline void decap_count(__u32 ctr)
{
	__u64 *n = bpf_map_lookup_elem(&decap_stats, &ctr);

	if (n)
		*n += 1;
}

/* Is addr (len bytes, len a constant at every call site so the copy is
 * inlined) one of this host's decap_addrs of its family? */
static __always_inline int decap_is_local(__u8 family, const void *addr,
					  __u32 len)
{
	struct mlv_bpf_addr_key key = {};

	key.family = family;
	__builtin_memcpy(key.addr, addr, len);
	return bpf_map_lookup_elem(&decap_addrs, &key) != NULL;
}

/* SYN-ACK MSS clamping (dataplane/bpf/decap/synack.h): the handshakes
 * whose SYN this program decapsulated, with the MSS that fits the tunnel
 * it came through. Written by the XDP program, read by the tc egress
 * program; LRU so a SYN-ACK that never comes costs nothing lasting. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MLV_DECAP_MAX_SYN_FLOWS);
	__type(key, struct mlv_decap_flow_key);
	__type(value, struct mlv_decap_flow_val);
} decap_syn_mss SEC(".maps");

/* The path MTU SYNs are recorded against (one entry; 0: clamping off). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mlv_decap_mss_cfg);
} decap_mss_cfg SEC(".maps");

/* Second chance's switches on this host (one entry, key 0; struct
 * mlv_decap_sc_cfg): off, local drain. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mlv_decap_sc_cfg);
} decap_sc_cfg SEC(".maps");

#endif
