/* SPDX-License-Identifier: BSD-3-Clause */
/* Slot and connection moves between two generations (moves.h). VIPs and
 * backends are matched by name, as the reload plan matches them; the
 * table stores indices into its own VIP's backends, so each side's slot
 * is read as a name. */
#include "control/generation/moves.h"

#include <string.h>

#include "control/tables/maglev.h"

static const struct mlv_gen_vip *vip_named(const struct mlv_generation *gen,
					   const char *name)
{
	for (uint32_t i = 0; gen && i < gen->n_vips; i++)
		if (strcmp(gen->vips[i].name, name) == 0)
			return &gen->vips[i];
	return NULL;
}

static const struct mlv_gen_backend *backend_named(const struct mlv_gen_vip *v,
						   const char *name)
{
	for (uint32_t i = 0; v && i < v->n_backends; i++)
		if (strcmp(v->backends[i].name, name) == 0)
			return &v->backends[i];
	return NULL;
}

static const char *slot_name(const struct mlv_gen_vip *v, uint32_t slot)
{
	uint16_t b = v->table[slot];

	return b == MLV_MAGLEV_NO_BACKEND || b >= v->n_backends ? "" :
	       v->backends[b].name;
}

uint64_t mlv_gen_backend_tracked(const struct mlv_generation *gen,
				 const struct mlv_gen_backend *b)
{
	uint32_t idx = mlv_gen_backend_index(gen, b);
	uint64_t sum = 0;

	/* Each worker writes its own array with plain increments while we
	 * read: a relaxed atomic load gives a whole 32-bit value (never a
	 * torn one) without slowing the writers. */
	for (uint32_t w = 0; w < gen->n_workers; w++)
		sum += __atomic_load_n(&gen->backend_active[w][idx],
				       __ATOMIC_RELAXED);
	return sum;
}

static void vip_moves(const struct mlv_generation *cur,
		      const struct mlv_gen_vip *old,
		      const struct mlv_gen_vip *now, struct mlv_plan_vip *e)
{
	e->table_size = now ? now->table_size : 0;
	e->slots_moved = 0;
	e->tracked = 0;
	e->tracked_moved = 0;
	if (old && now) {
		if (old->table_size != now->table_size)
			e->slots_moved = now->table_size;
		else
			for (uint32_t s = 0; s < now->table_size; s++)
				e->slots_moved += strcmp(slot_name(old, s),
							 slot_name(now, s)) != 0;
	}
	for (uint32_t i = 0; old && i < old->n_backends; i++) {
		const struct mlv_gen_backend *b = &old->backends[i];
		const struct mlv_gen_backend *nb = backend_named(now, b->name);
		uint64_t a = mlv_gen_backend_tracked(cur, b);

		e->tracked += a;
		if (!nb || !nb->usable)
			e->tracked_moved += a;
	}
}

void mlv_gen_plan_moves(const struct mlv_generation *cur,
			const struct mlv_generation *next, struct mlv_plan *plan)
{
	for (uint32_t i = 0; i < plan->n; i++) {
		struct mlv_plan_vip *e = &plan->vips[i];

		vip_moves(cur, vip_named(cur, e->name), vip_named(next, e->name),
			  e);
	}
}
