/* SPDX-License-Identifier: BSD-3-Clause */
/* Second chance's slot history (docs/second-chance.md, "Hops"): for a
 * VIP with second_chance, the last MLV_GEN_SC_HISTORY backends that owned
 * each slot before its owner now, carried from generation to generation
 * for as long as they are configured and the table keeps its size, so
 * that packets name them as hops for the whole life of the flows that
 * live there; and the window after each table change, during which a
 * connection no entry tracks goes to the previous owner first.
 *
 * The arrays are per VIP (two VIPs sharing a table need not share a
 * history), allocated here and freed with the generation. Control
 * thread. */
#include "control/generation/second_chance.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "control/tables/maglev.h"

_Static_assert(MLV_GEN_NO_HOP == MLV_MAGLEV_NO_BACKEND,
	       "the view's no-hop value is the table builders' no-backend");

uint64_t mlv_gen_sc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Index in vip->backends of pv's backend i (by name), or MLV_GEN_NO_HOP
 * when vip has no backend of that name. Both lists are in strcmp order;
 * map[] is filled for all of pv's backends by one merge walk. */
static void map_backends(const struct mlv_gen_vip *pv,
			 const struct mlv_gen_vip *vip, uint16_t *map)
{
	uint32_t j = 0;

	for (uint32_t i = 0; i < pv->n_backends; i++) {
		int c = 1;

		while (j < vip->n_backends &&
		       (c = strcmp(vip->backends[j].name,
				   pv->backends[i].name)) < 0)
			j++;
		map[i] = j < vip->n_backends && c == 0 ? (uint16_t)j :
			 (uint16_t)MLV_GEN_NO_HOP;
	}
}

static uint16_t mapped(const uint16_t *map, uint32_t n, uint16_t old)
{
	return old < n ? map[old] : (uint16_t)MLV_GEN_NO_HOP;
}

/* Append hop to list (n of MLV_GEN_SC_HISTORY) unless it is no
 * backend, the owner now, or already there. */
static void remember(uint16_t *list, uint32_t *n, uint16_t hop, uint16_t now)
{
	if (*n == MLV_GEN_SC_HISTORY || hop == MLV_GEN_NO_HOP || hop == now)
		return;
	for (uint32_t k = 0; k < *n; k++)
		if (list[k] == hop)
			return;
	list[(*n)++] = hop;
}

/* vip's slot history from pv (same name, same table size), or none.
 * Returns MLV_OK or MLV_E_NOMEM. */
static enum mlv_err fill_previous(struct mlv_gen_vip *vip,
				  const struct mlv_gen_vip *pv, uint64_t now_ms,
				  uint16_t *map)
{
	bool any = false, changed = false;
	uint16_t *prev, *earl;

	map_backends(pv, vip, map);
	prev = malloc((size_t)vip->table_size * sizeof(*prev));
	earl = malloc((size_t)vip->table_size * sizeof(*earl));
	if (!prev || !earl) {
		free(prev);
		free(earl);
		return MLV_E_NOMEM;
	}
	for (uint32_t s = 0; s < vip->table_size; s++) {
		uint16_t now = vip->table[s];
		uint16_t was = mapped(map, pv->n_backends, pv->table[s]);
		uint16_t list[MLV_GEN_SC_HISTORY];
		uint32_t n = 0;

		/* the owner it had, then the history it had: most recent
		 * first, the owner now and removed backends left out */
		changed |= was != now;
		remember(list, &n, was, now);
		if (pv->previous)
			remember(list, &n, mapped(map, pv->n_backends,
						  pv->previous[s]), now);
		if (pv->earlier)
			remember(list, &n, mapped(map, pv->n_backends,
						  pv->earlier[s]), now);
		prev[s] = n > 0 ? list[0] : (uint16_t)MLV_GEN_NO_HOP;
		earl[s] = n > 1 ? list[1] : (uint16_t)MLV_GEN_NO_HOP;
		any |= n > 0;
	}
	if (!any) {
		free(prev);
		free(earl);
		return MLV_OK;
	}
	vip->previous = prev;
	vip->earlier = earl;
	vip->previous_until_ms = changed ? now_ms + vip->sc_window_ms :
				 pv->previous_until_ms;
	vip->window_open = vip->previous_until_ms > now_ms;
	return MLV_OK;
}

enum mlv_err mlv_gen_sc_build(struct mlv_generation *gen,
			      const struct mlv_gen_vip *const *prev_of,
			      uint64_t now_ms)
{
	struct mlv_gen_vip *vips = (struct mlv_gen_vip *)gen->vips;
	uint32_t most = 0;
	uint16_t *map;
	enum mlv_err err = MLV_OK;

	for (uint32_t v = 0; v < gen->n_vips; v++)
		if (vips[v].second_chance && prev_of[v] &&
		    prev_of[v]->n_backends > most)
			most = prev_of[v]->n_backends;
	map = malloc((most ? most : 1) * sizeof(*map));
	if (!map)
		return MLV_E_NOMEM;
	for (uint32_t v = 0; v < gen->n_vips && !err; v++) {
		struct mlv_gen_vip *vip = &vips[v];
		const struct mlv_gen_vip *pv = prev_of[v];

		if (!vip->second_chance || !pv || !pv->table ||
		    pv->table_size != vip->table_size || !vip->table)
			continue;
		err = fill_previous(vip, pv, now_ms, map);
	}
	free(map);
	return err;
}

uint64_t mlv_gen_sc_expiry(const struct mlv_generation *gen)
{
	uint64_t first = 0;

	for (uint32_t v = 0; gen && v < gen->n_vips; v++) {
		const struct mlv_gen_vip *vip = &gen->vips[v];

		if (vip->previous && vip->window_open &&
		    (first == 0 || vip->previous_until_ms < first))
			first = vip->previous_until_ms;
	}
	return first;
}

uint32_t mlv_gen_sc_previous_slots(const struct mlv_gen_vip *vip)
{
	uint32_t n = 0;

	for (uint32_t s = 0; vip->previous && s < vip->table_size; s++)
		n += vip->previous[s] != MLV_GEN_NO_HOP;
	return n;
}

uint64_t mlv_gen_sc_window_left_ms(const struct mlv_gen_vip *vip,
				   uint64_t now_ms)
{
	return vip->previous && vip->window_open &&
	       vip->previous_until_ms > now_ms ?
	       vip->previous_until_ms - now_ms : 0;
}

void mlv_gen_sc_free(struct mlv_generation *gen)
{
	for (uint32_t v = 0; gen->vips && v < gen->n_vips; v++) {
		free((void *)gen->vips[v].previous);
		free((void *)gen->vips[v].earlier);
	}
}
