/* SPDX-License-Identifier: BSD-3-Clause */
/* A map from an IP packet's bytes to the input frame that carried it, so
 * that the checker can find the input of every output frame by content
 * (the inner packet must be byte-identical) instead of relying on output
 * order. Open addressing over FNV-1a hashes; entries compare full bytes.
 * Test code; single-threaded. */
#ifndef PKT_FRAME_INDEX_H
#define PKT_FRAME_INDEX_H

#include <stdint.h>

#include "tests/packet/scenario.h"

struct frame_index {
	const struct scenario *sc;
	/* Set before building to index expect_ip[i] instead of frame i's
	 * own IP packet (same length) where it is not NULL: the packet a
	 * rewriting data path must deliver. */
	uint8_t *const *expect_ip;
	uint32_t mask;
	uint32_t *slot;          /* frame number + 1; 0 = empty */
};

/* Index the IP packets of every input frame with l3_len > 0. Returns 0,
 * or -1 if two inputs carry the same IP packet (a generator bug: matches
 * would be ambiguous) or memory ran out; prints why. */
int frame_index_build(struct frame_index *ix, const struct scenario *sc);
void frame_index_free(struct frame_index *ix);

/* The input frame whose IP packet is exactly ip[0..len-1], or -1. */
int64_t frame_index_find(const struct frame_index *ix, const uint8_t *ip,
			 uint32_t len);

#endif
