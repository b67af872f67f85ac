/* SPDX-License-Identifier: BSD-3-Clause */
/* Data-plane counters, each defined once. The enum, the names, the JSON and
 * the Prometheus output are all generated from these lists.
 *
 * Every received frame lands in exactly one of: a forwarding outcome
 * (MLV_CTR_FORWARDED, MLV_CTR_ICMP_SENT, MLV_CTR_EXCEPTION) or a drop
 * reason. Workers own their counter blocks and write them with plain
 * stores; the control thread reads them racily and sums across workers
 * (64-bit aligned loads do not tear on x86-64 or arm64). */
#ifndef MLV_COUNTERS_H
#define MLV_COUNTERS_H

#include <stdint.h>

#include "dataplane/packet/pass_cycles.h"

/* Per-worker global counters: X(name, help) */
#define MLV_WORKER_COUNTERS(X)                                               \
	X(RX_PACKETS,       "frames received")                               \
	X(RX_BYTES,         "bytes received")                                \
	X(FORWARDED,        "frames forwarded to a backend")                 \
	X(TX_BYTES,         "bytes transmitted to backends")                 \
	X(ICMP_SENT,        "ICMP replies sent to clients: too-big and echo") \
	X(EXCEPTION,        "non-VIP frames passed to the exception port")   \
	X(CT_NEW,           "connection-tracking entries created")            \
	X(CT_EVICTED,       "live entries evicted from a full bucket")        \
	X(CT_RESELECTED,    "tracked flows whose backend left and were re-selected") \
	X(SECOND_DOWN,      "new flows sent to their slot's second choice because the first is down") \
	X(SECOND_LOADED,    "new flows sent to their slot's second choice because the first is above max_load") \
	X(QUIC_ROUTED,      "QUIC short-header packets sent to the backend their connection ID's server ID names (then forwarded, or no_headroom/tx_full)") \
	X(QUIC_UNKNOWN_ID,  "QUIC short-header packets whose server ID no usable backend of the VIP has, balanced by the flow hash") \
	X(QUIC_NO_ID,       "QUIC short-header packets whose connection ID carries no server ID, balanced by the flow hash") \
	X(MSS_CLAMPED,      "TCP SYNs and SYN-ACKs whose MSS option was lowered (mss_clamp)") \
	X(BURSTS,           "non-empty receive bursts")                       \
	X(BUSY_CYCLES,      "TSC cycles spent on non-empty bursts")         \
	X(LIMIT_UNTRACKED,  "TCP segments without SYN of connections not tracked here, over their VIP's new-flow rate: sent by the table without an entry") \
	X(ECHO_REPLIES,     "ICMP echo replies built for requests to a VIP (then in icmp_sent, or tx_full)")

/* Drop reasons: X(name, help). The parser's verdicts come first, with the
 * same names (see parse.h). */
#define MLV_DROP_REASONS(X)                                                  \
	X(NOT_IP,           "not IPv4/IPv6 and no exception port")           \
	X(TRUNCATED,        "frame shorter than its headers")                \
	X(BAD_IPV4,         "bad IPv4 header")                               \
	X(BAD_IPV6,         "bad IPv6 header")                               \
	X(BAD_L4,           "bad TCP/UDP/ICMP header")                       \
	X(UNSUPPORTED,      "L4 protocol or ICMP type not balanced")         \
	X(NOT_VIP,          "destination is not a VIP and no exception port") \
	X(NO_BACKEND,       "VIP has no usable backend")                     \
	X(TOO_BIG,          "too big after encapsulation, DF clear or no reply possible") \
	X(NO_HEADROOM,      "no mbuf headroom for the outer headers")        \
	X(ICMP_ECHO,        "ICMP echo to a VIP not answered (icmp_echo: drop, no backend, bad request)") \
	X(NEW_FLOW_LIMIT,   "new flow over its VIP's new_flows_per_second")  \
	X(ACL_DENIED,       "source address denied by the VIP's ACL")        \
	X(TX_FULL,          "transmit queue full")                           \
	X(WRONG_VLAN,       "untagged or another VLAN's frame on a VLAN port")

enum mlv_worker_counter {
#define MLV_CTR_ENUM(name, help) MLV_CTR_##name,
	MLV_WORKER_COUNTERS(MLV_CTR_ENUM)
#undef MLV_CTR_ENUM
	MLV_CTR__COUNT
};

enum mlv_drop_reason {
#define MLV_DROP_ENUM(name, help) MLV_DROP_##name,
	MLV_DROP_REASONS(MLV_DROP_ENUM)
#undef MLV_DROP_ENUM
	MLV_DROP__COUNT
};

/* Per VIP and per backend, per worker: X(name, help) */
#define MLV_FLOW_COUNTERS(X)                                                 \
	X(PACKETS,   "packets forwarded")                                    \
	X(BYTES,     "bytes forwarded (inner IP packet)")                    \
	X(NEW_FLOWS, "new connection-tracking entries")

enum mlv_flow_counter {
#define MLV_FLOW_ENUM(name, help) MLV_FLOW_##name,
	MLV_FLOW_COUNTERS(MLV_FLOW_ENUM)
#undef MLV_FLOW_ENUM
	MLV_FLOW__COUNT
};

/* The drop reasons that belong to a VIP (the frame was addressed to it),
 * counted per VIP too, so that an operator sees which VIP drops and why:
 * X(name), each a drop reason's name. Their VIP rows live in the
 * generation (dataplane/view/view.h, vip_drops). */
#define MLV_VIP_DROP_REASONS(X)                                              \
	X(NO_BACKEND)                                                        \
	X(TOO_BIG)                                                           \
	X(NO_HEADROOM)                                                       \
	X(ICMP_ECHO)                                                         \
	X(NEW_FLOW_LIMIT)                                                    \
	X(ACL_DENIED)

enum mlv_vip_drop {
#define MLV_VDROP_ENUM(name) MLV_VDROP_##name,
	MLV_VIP_DROP_REASONS(MLV_VDROP_ENUM)
#undef MLV_VDROP_ENUM
	MLV_VDROP__COUNT
};

/* One VIP's drops on one worker. */
struct mlv_vip_drops {
	uint64_t v[MLV_VDROP__COUNT];
};

/* The drop reason a VIP drop counts as (and its name: the reason's). */
enum mlv_drop_reason mlv_vip_drop_reason(enum mlv_vip_drop d);

/* One worker's global counters; one cache-line-aligned block per worker. */
struct mlv_worker_counters {
	uint64_t ctr[MLV_CTR__COUNT];
	uint64_t drop[MLV_DROP__COUNT];
	struct mlv_pass_cycles pass;   /* measurement builds only */
} __attribute__((aligned(64)));

struct mlv_flow_counters {
	uint64_t v[MLV_FLOW__COUNT];
};

/* Lower-case names ("rx_packets", "not_vip", ...) for JSON and metrics. */
const char *mlv_worker_counter_name(enum mlv_worker_counter c);
const char *mlv_drop_reason_name(enum mlv_drop_reason r);
const char *mlv_flow_counter_name(enum mlv_flow_counter c);
const char *mlv_worker_counter_help(enum mlv_worker_counter c);
const char *mlv_drop_reason_help(enum mlv_drop_reason r);
const char *mlv_flow_counter_help(enum mlv_flow_counter c);

#endif
