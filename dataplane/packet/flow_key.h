/* SPDX-License-Identifier: BSD-3-Clause */
/* The flow key: the canonical byte layout of a 5-tuple, hashed by
 * mlv_flow_hash and stored in connection tracking. Plain C. */
#ifndef MLV_FLOW_KEY_H
#define MLV_FLOW_KEY_H

#include <stdint.h>

/* 40 bytes, no implicit padding. IPv4 addresses use src[0..3]/dst[0..3]
 * and leave the rest zero, so one layout serves both families and two keys
 * compare with memcmp. Ports are zero for fragments (3-tuple hashing) and
 * for protocols without ports. */
struct mlv_flow_key {
	uint8_t src[16];
	uint8_t dst[16];
	uint16_t sport;     /* network byte order */
	uint16_t dport;     /* network byte order */
	uint8_t proto;      /* IPPROTO_TCP / IPPROTO_UDP / ... */
	uint8_t family;     /* 4 or 6 */
	uint8_t pad[2];     /* always zero */
};

_Static_assert(sizeof(struct mlv_flow_key) == 40, "flow key layout");

#endif
