/* SPDX-License-Identifier: BSD-3-Clause */
/* Hash fields: which parts of the flow key choose a VIP's Maglev slot
 * (docs/flow-hash.md, "Hash fields"). Connection tracking, the GUE
 * source port and the IPv6 flow label always use the hash of the whole
 * key; only the slot of a VIP whose fields are not 5tuple comes from the
 * hash of the key masked here. Plain C, pure: any thread (the workers,
 * maglevctl lookup, the packet tests' checker). */
#ifndef MLV_FLOW_FIELDS_H
#define MLV_FLOW_FIELDS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "dataplane/packet/flow_key.h"

enum mlv_hash_fields {
	MLV_HASH_5TUPLE = 0,  /* the whole key */
	MLV_HASH_3TUPLE,      /* source port zero */
	MLV_HASH_SOURCE,      /* both ports zero, IPv6 source masked */
};

/* "5tuple", "3tuple" or "source", as the config writes them. Pure. */
static inline const char *mlv_hash_fields_name(enum mlv_hash_fields f)
{
	return f == MLV_HASH_SOURCE ? "source" :
	       f == MLV_HASH_3TUPLE ? "3tuple" : "5tuple";
}

/* The source mask of an IPv6 prefix length 0..128 as two 64-bit words in
 * key memory order (mlv_flow_key_fields); IPv4 keys ignore it. Pure. */
static inline void mlv_flow_src_mask6(uint32_t prefix, uint64_t mask[2])
{
	uint8_t b[16];

	for (uint32_t i = 0; i < 16; i++) {
		uint32_t bits = prefix > 8 * i ? prefix - 8 * i : 0;

		b[i] = bits >= 8 ? 0xff : (uint8_t)(0xff00u >> bits);
	}
	memcpy(mask, b, 16);
}

/* *key reduced to fields: 3tuple zeroes sport; source zeroes both ports
 * and, for IPv6, ANDs the source with mask6 (mlv_flow_src_mask6). A
 * fragment's key has ports 0 already; under 3tuple frag_dport_be (the
 * VIP's port if it has one port, else 0) takes the place of the
 * destination port the later fragments do not carry. Pure. */
static inline void mlv_flow_key_fields(struct mlv_flow_key *key,
				       enum mlv_hash_fields fields,
				       const uint64_t mask6[2],
				       bool fragment, uint16_t frag_dport_be)
{
	key->sport = 0;
	if (fields == MLV_HASH_SOURCE) {
		key->dport = 0;
		if (key->family == 6) {
			uint64_t s[2];

			memcpy(s, key->src, 16);
			s[0] &= mask6[0];
			s[1] &= mask6[1];
			memcpy(key->src, s, 16);
		}
	} else if (fragment) {
		key->dport = frag_dport_be;
	}
}

#endif
