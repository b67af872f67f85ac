/* SPDX-License-Identifier: BSD-3-Clause */
/* What the checker expects, computed independently of the daemon's
 * run-time state: each VIP's table and second choices built here from the
 * scenario's backends with the VIP's builder (mlv_table_build: the
 * documented algorithms; drained backends get weight 0, down backends
 * keep their weight but are never a second choice), and the backend a
 * flow key selects (table[mlv_flow_hash(key) % M], docs/flow-hash.md; the
 * slot's second choice when the first is down). Test code;
 * single-threaded. */
#ifndef PKT_EXPECT_H
#define PKT_EXPECT_H

#include <stdint.h>

#include "tests/packet/scenario.h"

struct expect_table {
	uint32_t size;
	uint16_t *slots;          /* index into the VIP's backends[] */
	uint16_t *second;         /* each slot's second choice */
	uint64_t fingerprint;
	bool down[SC_MAX_BACKENDS];
	/* The VIP's hash fields (docs/flow-hash.md, "Hash fields"). */
	uint8_t hash;             /* 0 5tuple, 1 3tuple, 2 source */
	uint8_t prefix6;          /* source: IPv6 source bits kept */
	uint16_t one_port;        /* the VIP's port if it has one, else 0 */
};

struct expect_tables {
	uint32_t n;
	struct expect_table t[SC_MAX_VIPS];
};

/* Build the tables of vips[0..n-1]. Returns 0, or -1 with a message. */
int expect_build(struct expect_tables *out, const struct sc_vip *vips,
		 uint32_t n);
void expect_free(struct expect_tables *t);

/* The flow hash of key (as the data plane computes it). */
uint32_t expect_hash(const struct mlv_flow_key *key);

/* The hash that picks key's slot in VIP vip's table: the flow hash of
 * key reduced to the VIP's hash fields, as docs/flow-hash.md states them
 * (written here from the document, not from the data plane's code). */
uint32_t expect_slot_hash(const struct expect_tables *t, uint16_t vip,
			  const struct mlv_flow_key *key);

/* Backend index in vips[vip].backends for key, or -1 if the slot is
 * empty (no backend can take flows): the slot's owner, or its second
 * choice when the owner is down (-1 if that is down too). */
int expect_backend(const struct expect_tables *t, uint16_t vip,
		   const struct mlv_flow_key *key);

/* The slot's owner and second choice for key, -1 for none. */
void expect_choices(const struct expect_tables *t, uint16_t vip,
		    const struct mlv_flow_key *key, int *first, int *second);

#endif
