/* SPDX-License-Identifier: BSD-3-Clause */
/* Second chance's previous owners (docs/second-chance.md, "The window"):
 * for a VIP with second_chance, each slot's owner before the VIP's last
 * table change, kept for second_chance.window after it so that packets
 * carry it as a hop while flows established before the change may still
 * live there.
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

/* vip's previous owners from pv (same name, same table size), or none.
 * Returns MLV_OK or MLV_E_NOMEM; *changed tells whether any slot's owner
 * differs from pv's. */
static enum mlv_err fill_previous(struct mlv_gen_vip *vip,
				  const struct mlv_gen_vip *pv, uint64_t now_ms,
				  uint16_t *map)
{
	bool carry = pv->previous && pv->previous_until_ms > now_ms;
	bool any = false, changed = false;
	uint16_t *prev;

	map_backends(pv, vip, map);
	prev = malloc((size_t)vip->table_size * sizeof(*prev));
	if (!prev)
		return MLV_E_NOMEM;
	for (uint32_t s = 0; s < vip->table_size; s++) {
		uint16_t now = vip->table[s];
		uint16_t was = mapped(map, pv->n_backends, pv->table[s]);
		uint16_t hop = MLV_GEN_NO_HOP;

		if (was != now) {
			changed = true;
			hop = was;
		} else if (carry) {
			hop = mapped(map, pv->n_backends, pv->previous[s]);
		}
		if (hop == now)
			hop = MLV_GEN_NO_HOP;
		any |= hop != MLV_GEN_NO_HOP;
		prev[s] = hop;
	}
	if (!any) {
		free(prev);
		return MLV_OK;
	}
	vip->previous = prev;
	vip->previous_until_ms = changed ? now_ms + vip->sc_window_ms :
				 pv->previous_until_ms;
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

		if (vip->previous &&
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
	return vip->previous && vip->previous_until_ms > now_ms ?
	       vip->previous_until_ms - now_ms : 0;
}

void mlv_gen_sc_free(struct mlv_generation *gen)
{
	for (uint32_t v = 0; gen->vips && v < gen->n_vips; v++)
		free((void *)gen->vips[v].previous);
}
