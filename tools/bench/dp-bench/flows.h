/* SPDX-License-Identifier: BSD-3-Clause */
/* The flows of a dp-bench input: flow number -> 5-tuple, deterministic so
 * the same options always write the same file. Clients are spread over
 * their address range by a bijection, so distinct flow numbers give
 * distinct tuples (no duplicates to skew the conntrack hit rate) while
 * neighbouring numbers do not sit in neighbouring addresses. Pure
 * functions; any thread. */
#ifndef DPB_FLOWS_H
#define DPB_FLOWS_H

#include <stdint.h>

/* Largest flow count: the IPv4 clients are 10.x.y.z, 2^24 addresses, and
 * one flow per client keeps every tuple unique by its source address;
 * the all-zero host part (10.0.0.0) is left out. */
#define DPB_MAX_FLOWS ((1u << 24) - 1)

/* The VIPs the generated traffic is addressed to; the driver's maglevd
 * configuration must use the same (dp-bench.sh). */
#define DPB_VIP4      "192.0.2.10"
#define DPB_VIP6      "2001:db8::10"
#define DPB_VIP_PORT  80

struct dpb_flow {
	uint8_t family;        /* 4 or 6 */
	uint8_t src[16];       /* network order; IPv4 in the first 4 bytes */
	uint8_t dst[16];
	uint16_t sport;        /* host order */
	uint16_t dport;
};

/* Address families of a file. */
enum dpb_family_mix {
	DPB_FAMILY_V4,
	DPB_FAMILY_V6,
	DPB_FAMILY_MIXED,      /* even flow numbers IPv4, odd IPv6 */
};

/* Fill *f for flow number i (< DPB_MAX_FLOWS) of a file with family mix
 * mix. */
void dpb_flow_make(uint32_t i, enum dpb_family_mix mix, struct dpb_flow *f);

#endif
