/* SPDX-License-Identifier: BSD-3-Clause */
/* A map from nonzero 32-bit keys (uids, QUIC server IDs) to indices,
 * built once into caller memory and read-only afterwards: the
 * generation's uid maps (index.h) and each QUIC VIP's server-ID
 * map (view.h). Linear-probing open addressing with a power-of-two
 * slot count (mlv_gen_index_slots), at most half full. Look-ups are pure
 * reads: any thread. */
#ifndef MLV_VIEW_UID_MAP_H
#define MLV_VIEW_UID_MAP_H

#include <stdbool.h>
#include <stdint.h>

#define MLV_GEN_INDEX_NONE UINT32_MAX

/* uid 0 marks an empty slot: uids start at 1. */
struct mlv_gen_uid_slot {
	uint32_t uid;
	uint32_t index;
};

struct mlv_gen_uid_map {
	struct mlv_gen_uid_slot *slots;
	uint32_t mask;
};

/* uid map. insert returns false on a duplicate uid or uid 0. */
void mlv_gen_uid_map_init(struct mlv_gen_uid_map *m,
			  struct mlv_gen_uid_slot *slots, uint32_t n_slots);
bool mlv_gen_uid_map_insert(struct mlv_gen_uid_map *m, uint32_t uid,
			    uint32_t index);
uint32_t mlv_gen_uid_map_find(const struct mlv_gen_uid_map *m, uint32_t uid);

#endif
