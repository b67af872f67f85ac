/* SPDX-License-Identifier: BSD-3-Clause */
/* The VIPs of more than one port (a range "A-B" or `any`) as the workers
 * find them: a wild index (address, port 0, protocol) -> {any VIP, port
 * map}, and per map top[port >> 8] -> a VIP or a leaf of 256 ports. The
 * build and the memory it costs: control/generation/port_map_internal.h.
 * Look-ups are pure reads: any thread.
 */
#ifndef MLV_VIEW_PORT_MAP_H
#define MLV_VIEW_PORT_MAP_H

#include <stdint.h>

#include "dataplane/view/index.h"

/* A top entry below this is a VIP index (MLV_PORT_MAP_NONE: none); from
 * it on, MLV_PORT_MAP_LEAF + leaf index. VIP indices are < 65535
 * (MLV_MAX_VIPS), so 16 bits hold one in a leaf. */
#define MLV_PORT_MAP_NONE 0xFFFFu
#define MLV_PORT_MAP_LEAF 0x10000u

struct mlv_gen_wild {
	uint32_t any_vip;    /* the `any` VIP, or MLV_GEN_INDEX_NONE */
	uint32_t map;        /* its port map, or MLV_GEN_INDEX_NONE */
};

struct mlv_gen_port_maps {
	struct mlv_gen_vip_index index;   /* port 0 keys -> wild[] */
	struct mlv_gen_wild *wild;
	uint32_t (*top)[256];
	uint16_t (*leaf)[256];
	uint32_t n_wild, n_maps, n_leaves;
};

/* The VIP index for (key's address, protocol, family) and port (host
 * order) among the range and `any` VIPs, or MLV_GEN_INDEX_NONE. key's
 * port_be must be 0. Pure; any thread. */
static inline uint32_t mlv_gen_port_maps_find(const struct mlv_gen_port_maps *m,
					      const struct mlv_gen_vip_key *key,
					      uint16_t port)
{
	uint32_t w, t;

	if (m->n_wild == 0)
		return MLV_GEN_INDEX_NONE;
	w = mlv_gen_vip_index_find(&m->index, key);
	if (w == MLV_GEN_INDEX_NONE)
		return MLV_GEN_INDEX_NONE;
	if (m->wild[w].map == MLV_GEN_INDEX_NONE)
		return m->wild[w].any_vip;
	t = m->top[m->wild[w].map][port >> 8];
	if (t >= MLV_PORT_MAP_LEAF)
		t = m->leaf[t - MLV_PORT_MAP_LEAF][port & 255];
	return t == MLV_PORT_MAP_NONE ? MLV_GEN_INDEX_NONE : t;
}

#endif
