/* SPDX-License-Identifier: BSD-3-Clause */
#include "control/generation/port_map_internal.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "control/generation/generation.h"

void mlv_gen_port_maps_init(struct mlv_gen_port_maps *m,
			    struct mlv_gen_vip_slot *slots, uint32_t n_slots,
			    struct mlv_gen_wild *wild, uint32_t (*top)[256],
			    uint16_t (*leaf)[256])
{
	memset(m, 0, sizeof(*m));
	mlv_gen_vip_index_init(&m->index, slots, n_slots);
	m->wild = wild;
	m->top = top;
	m->leaf = leaf;
}

static bool is_wild(const struct mlv_gen_vip *v)
{
	return v->port_last != ntohs(v->port_be);
}

static bool is_any(const struct mlv_gen_vip *v)
{
	return v->port_be == 0 && v->port_last == 65535;
}

/* full[65536] (each port's VIP) as top-level entries and leaves. */
static enum mlv_err compress(struct mlv_gen_port_maps *m, const uint16_t *full,
			     uint32_t max_leaves)
{
	uint32_t *top = m->top[m->n_maps++];

	for (uint32_t c = 0; c < 256; c++) {
		const uint16_t *blk = &full[c * 256];
		bool uniform = true;

		for (uint32_t i = 1; i < 256 && uniform; i++)
			uniform = blk[i] == blk[0];
		if (uniform) {
			top[c] = blk[0];
			continue;
		}
		/* Only a block a range starts or ends inside differs within:
		 * two per range, which is what the caller made room for. */
		if (m->n_leaves >= max_leaves)
			return MLV_E_INVAL;
		memcpy(m->leaf[m->n_leaves], blk, 256 * sizeof(*blk));
		top[c] = MLV_PORT_MAP_LEAF + m->n_leaves++;
	}
	return MLV_OK;
}

enum mlv_err mlv_gen_port_maps_build(struct mlv_gen_port_maps *m,
				     const struct mlv_gen_vip *vips, uint32_t n)
{
	uint32_t *entry_of = NULL, *count = NULL, *order = NULL;
	uint16_t *full = NULL;
	uint32_t n_ranges = 0;
	enum mlv_err err = MLV_OK;

	entry_of = malloc((n ? n : 1) * sizeof(*entry_of));
	if (!entry_of)
		return MLV_E_NOMEM;
	/* One entry per (address, protocol) with a range or `any` VIP. */
	for (uint32_t v = 0; v < n; v++) {
		const struct mlv_gen_vip *vip = &vips[v];
		struct mlv_gen_vip_key key = {
			.proto = vip->protocol, .family = vip->family,
		};
		struct mlv_gen_vip_slot *s;
		struct mlv_gen_wild *w;

		entry_of[v] = MLV_GEN_INDEX_NONE;
		if (!is_wild(vip))
			continue;
		memcpy(key.addr, vip->address, sizeof(key.addr));
		s = mlv_gen_vip_index_probe(&m->index, &key);
		if (s->key.family == 0) {
			s->key = key;
			s->vip = m->n_wild;
			m->wild[m->n_wild++] = (struct mlv_gen_wild){
				MLV_GEN_INDEX_NONE, MLV_GEN_INDEX_NONE };
		}
		entry_of[v] = s->vip;
		w = &m->wild[s->vip];
		if (is_any(vip)) {
			if (w->any_vip != MLV_GEN_INDEX_NONE) {
				err = MLV_E_INVAL;   /* two `any` VIPs */
				goto out;
			}
			w->any_vip = v;
		} else {
			n_ranges++;
		}
	}
	if (n_ranges == 0)
		goto out;
	/* The ranges in entry order (a counting sort), so that each map is
	 * filled once. */
	count = calloc(m->n_wild + 1, sizeof(*count));
	order = malloc(n_ranges * sizeof(*order));
	full = malloc(65536 * sizeof(*full));
	if (!count || !order || !full) {
		err = MLV_E_NOMEM;
		goto out;
	}
	for (uint32_t v = 0; v < n; v++)
		if (entry_of[v] != MLV_GEN_INDEX_NONE && !is_any(&vips[v]))
			count[entry_of[v] + 1]++;
	for (uint32_t e = 0; e < m->n_wild; e++)
		count[e + 1] += count[e];
	for (uint32_t v = 0; v < n; v++)
		if (entry_of[v] != MLV_GEN_INDEX_NONE && !is_any(&vips[v]))
			order[count[entry_of[v]]++] = v;
	/* count[e] is now where entry e + 1's ranges start */
	for (uint32_t e = 0, i = 0; e < m->n_wild; e++) {
		struct mlv_gen_wild *w = &m->wild[e];
		uint16_t base = w->any_vip == MLV_GEN_INDEX_NONE ?
				MLV_PORT_MAP_NONE : (uint16_t)w->any_vip;

		if (i == count[e])
			continue;   /* `any` alone: no map */
		for (uint32_t p = 0; p < 65536; p++)
			full[p] = base;
		for (; i < count[e]; i++) {
			const struct mlv_gen_vip *vip = &vips[order[i]];

			for (uint32_t p = ntohs(vip->port_be); p <= vip->port_last; p++) {
				if (full[p] != base) {
					err = MLV_E_INVAL;   /* overlapping ranges */
					goto out;
				}
				full[p] = (uint16_t)order[i];
			}
		}
		w->map = m->n_maps;
		err = compress(m, full, MLV_PORT_MAP_LEAVES(n_ranges));
		if (err)
			goto out;
	}
out:
	free(full);
	free(order);
	free(count);
	free(entry_of);
	return err;
}
