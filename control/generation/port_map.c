/* SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE   /* qsort_r */
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

static bool is_any(const struct mlv_gen_vip *v)
{
	return v->port_be == 0 && v->port_last == 65535;
}

/* Ranges of one map (indices into vips), by first port. */
static int cmp_first_port(const void *a, const void *b, void *vips)
{
	const struct mlv_gen_vip *v = vips;
	uint16_t x = ntohs(v[*(const uint32_t *)a].port_be);
	uint16_t y = ntohs(v[*(const uint32_t *)b].port_be);

	return (x > y) - (x < y);
}

/* One map: the top entries of (address, protocol) whose ranges are the
 * VIPs ranges[0..n) (any order) and whose other ports go to base (its
 * `any` VIP or MLV_PORT_MAP_NONE). A 256-port block inside one range, or
 * in none, is a top entry; a block a range starts or ends inside gets a
 * leaf: at most two per range, which is what the caller made room for.
 * O(256 + n log n + 256 x leaves), whatever the ports the ranges cover.
 * MLV_E_INVAL if two ranges overlap. */
static enum mlv_err build_map(struct mlv_gen_port_maps *m,
			      const struct mlv_gen_vip *vips, uint32_t *ranges,
			      uint32_t n, uint16_t base, uint32_t max_leaves)
{
	uint32_t *top = m->top[m->n_maps++];

	qsort_r(ranges, n, sizeof(*ranges), cmp_first_port, (void *)vips);
	for (uint32_t c = 0; c < 256; c++)
		top[c] = base;
	for (uint32_t i = 0; i < n; i++) {
		const struct mlv_gen_vip *vip = &vips[ranges[i]];
		uint32_t lo = ntohs(vip->port_be), hi = vip->port_last;

		if (i > 0 && lo <= vips[ranges[i - 1]].port_last)
			return MLV_E_INVAL;   /* overlapping ranges */
		for (uint32_t c = lo >> 8; c <= hi >> 8; c++) {
			uint32_t from = c << 8 > lo ? c << 8 : lo;
			uint32_t to = (c << 8) + 255 < hi ? (c << 8) + 255 : hi;
			uint16_t *leaf;

			if (from == c << 8 && to == (c << 8) + 255) {
				top[c] = ranges[i];   /* the whole block */
				continue;
			}
			if (top[c] < MLV_PORT_MAP_LEAF) {
				if (m->n_leaves >= max_leaves)
					return MLV_E_INVAL;
				leaf = m->leaf[m->n_leaves];
				for (uint32_t p = 0; p < 256; p++)
					leaf[p] = (uint16_t)top[c];
				top[c] = MLV_PORT_MAP_LEAF + m->n_leaves++;
			}
			leaf = m->leaf[top[c] - MLV_PORT_MAP_LEAF];
			for (uint32_t p = from; p <= to; p++)
				leaf[p & 255] = (uint16_t)ranges[i];
		}
	}
	return MLV_OK;
}

enum mlv_err mlv_gen_port_maps_build(struct mlv_gen_port_maps *m,
				     const struct mlv_gen_vip *vips, uint32_t n)
{
	uint32_t *entry_of = NULL, *count = NULL, *order = NULL;
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
		if (mlv_gen_vip_one_port(vip))
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
	if (!count || !order) {
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
		w->map = m->n_maps;
		err = build_map(m, vips, &order[i], count[e] - i, base,
				MLV_PORT_MAP_LEAVES(n_ranges));
		if (err)
			goto out;
		i = count[e];
	}
out:
	free(order);
	free(count);
	free(entry_of);
	return err;
}
