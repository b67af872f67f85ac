/* SPDX-License-Identifier: BSD-3-Clause */
/* The check-path programs' maps. BPF side only; their records are in
 * structs.h. */
#ifndef MLV_BPF_CHECK_PATH_MAPS_H
#define MLV_BPF_CHECK_PATH_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "dataplane/bpf/check_path/counters.h"
#include "dataplane/bpf/check_path/structs.h"

/* Data-path checks in flight at once, at most: the health engine's
 * largest max_in_flight (16384), with room to spare. */
#define MLV_CP_MAX_CHECKS 32768

/* Outgoing check packets: which connections to carry, and how. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MLV_CP_MAX_CHECKS);
	__type(key, struct mlv_cp_out_key);
	__type(value, struct mlv_cp_out);
} cp_out SEC(".maps");

/* Replies: which sources to give back their backend's address. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MLV_CP_MAX_CHECKS);
	__type(key, struct mlv_cp_in_key);
	__type(value, struct mlv_cp_in);
} cp_in SEC(".maps");

/* One per-CPU counter per outcome (counters.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MLV_CP_CTR__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} cp_counters SEC(".maps");

#endif
