/* SPDX-License-Identifier: BSD-3-Clause */
/* The immutable look-up tables inside a generation: VIP by (family,
 * address, port, protocol) and object by uid. The generation builder
 * (control/generation/generation.c) fills them; the workers read them
 * (dataplane/view/view.h).
 *
 * Why hand-rolled instead of rte_hash: a generation is built once, never
 * modified, and freed as a whole, so each table is sized exactly for its
 * contents when the generation is built (load factor <= 1/2, one probe in
 * the common case), lives in the generation's single allocation, needs no
 * EAL, no hugepage memory and no globally unique tailq name per
 * generation, and can be unit-tested without DPDK.
 *
 * maglevd has two other hand-rolled tables, kept apart because their
 * needs differ: the cumulative stats (control/generation/stats.c) map
 * uids to counters that grow and are deleted while the daemon runs
 * (backward-shift deletion, rehash on growth); the health engine
 * (control/health/table.c) chains nodes it owns elsewhere under string
 * keys. This one is neither: fixed at build time, read-only afterwards,
 * and inside memory the workers read.
 *
 * Both are linear-probing open-addressing tables with a power-of-two slot
 * count. The caller supplies zeroed slot memory of the size the *_slots()
 * functions return. Look-ups are pure reads: any thread.
 */
#ifndef MLV_VIEW_INDEX_H
#define MLV_VIEW_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/base/hash.h"
#include "dataplane/view/uid_map.h"


/* 20 bytes, no padding: compared with memcmp. family 0 marks an empty slot. */
struct mlv_gen_vip_key {
	uint8_t addr[16];     /* IPv4 in addr[0..3], rest zero */
	uint16_t port_be;     /* 0 in the any-port table */
	uint8_t proto;
	uint8_t family;       /* 4 or 6 */
};
_Static_assert(sizeof(struct mlv_gen_vip_key) == 20, "vip key layout");

struct mlv_gen_vip_slot {
	struct mlv_gen_vip_key key;
	uint32_t vip;         /* index in gen->vips */
};

struct mlv_gen_vip_index {
	struct mlv_gen_vip_slot *slots;
	uint32_t mask;        /* slot count - 1 */
};

/* Slot count for n entries: a power of two >= 2n (at least 2). */
uint32_t mlv_gen_index_slots(uint32_t n);

/* VIP index. insert returns false if key is already present (slot left
 * unchanged); the table must have a free slot. */
void mlv_gen_vip_index_init(struct mlv_gen_vip_index *t,
			    struct mlv_gen_vip_slot *slots, uint32_t n_slots);
/* The slot holding key, or the empty slot where it would go. */
struct mlv_gen_vip_slot *mlv_gen_vip_index_probe(
	const struct mlv_gen_vip_index *t, const struct mlv_gen_vip_key *key);
/* Index stored for key, or MLV_GEN_INDEX_NONE. */
uint32_t mlv_gen_vip_index_find(const struct mlv_gen_vip_index *t,
				const struct mlv_gen_vip_key *key);

#endif
