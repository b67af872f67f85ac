/* SPDX-License-Identifier: BSD-3-Clause */
/* Slot and connection moves between two generations (moves.h). VIPs and
 * backends are matched by name, as the reload plan matches them. Each
 * table stores indices into its own VIP's backends, so the old VIP's
 * indices are mapped once to the new VIP's and the slots compared as
 * integers. */
#include "control/generation/moves.h"

#include <stdbool.h>
#include <stdlib.h>

#include "control/tables/maglev.h"

void mlv_gen_backend_flows(const struct mlv_generation *gen,
			   const struct mlv_gen_backend *b, uint64_t out[2])
{
	mlv_flow_tally_backend(gen->tallies, b->uid, out);
}

uint64_t mlv_gen_backend_tracked(const struct mlv_generation *gen,
				 const struct mlv_gen_backend *b)
{
	uint64_t n[2];

	mlv_gen_backend_flows(gen, b, n);
	return n[0] + n[1];
}

uint64_t mlv_gen_vip_tracked(const struct mlv_generation *gen,
			     const struct mlv_gen_vip *vip)
{
	return mlv_flow_tally_vip(gen->tallies, vip->uid);
}

/* Slots of now's table whose backend differs from old's same slot (by
 * name), given to_now[i]: now's index of old's backend i, or
 * MLV_MAGLEV_NO_BACKEND if now lacks it. */
static uint32_t slots_moved(const struct mlv_gen_vip *old,
			    const struct mlv_gen_vip *now,
			    const uint16_t *to_now)
{
	uint32_t moved = 0;

	for (uint32_t s = 0; s < now->table_size; s++) {
		uint16_t b = old->table[s];
		uint16_t was = b < old->n_backends ? to_now[b] :
			       MLV_MAGLEV_NO_BACKEND;

		moved += was != now->table[s];
	}
	return moved;
}

uint64_t mlv_gen_tracked_at_risk(const struct mlv_generation *gen,
				 const struct mlv_gen_vip *old,
				 const uint8_t *kept, const bool *leaves)
{
	uint32_t *owned = calloc((size_t)old->n_backends + 1, sizeof(*owned));
	uint32_t *stays = calloc((size_t)old->n_backends + 1, sizeof(*stays));
	uint64_t risk = 0;

	if (!owned || !stays) {
		free(owned);
		free(stays);
		return 0;
	}
	for (uint32_t s = 0; s < old->table_size; s++) {
		uint16_t b = old->table[s];

		if (b >= old->n_backends)
			continue;
		owned[b]++;
		stays[b] += kept[s] != 0;
	}
	for (uint32_t i = 0; i < old->n_backends; i++) {
		uint64_t a;

		if (leaves && leaves[i])
			continue;
		a = mlv_gen_backend_tracked(gen, &old->backends[i]);
		risk += owned[i] ? (a * (owned[i] - stays[i]) + owned[i] / 2) /
				   owned[i] : a;
	}
	free(owned);
	free(stays);
	return risk;
}

static enum mlv_err vip_moves(const struct mlv_generation *cur,
			      const struct mlv_gen_vip *old,
			      const struct mlv_gen_vip *now,
			      struct mlv_plan_vip *e)
{
	uint16_t *to_now = NULL;
	uint8_t *kept = NULL;
	bool *leaves = NULL;

	e->table_size = now ? now->table_size : 0;
	e->slots_moved = 0;
	e->tracked = 0;
	e->tracked_moved = 0;
	e->tracked_at_risk = 0;
	e->second_chance = now && now->second_chance;
	if (!old)
		return MLV_OK;
	leaves = calloc((size_t)old->n_backends + 1, sizeof(*leaves));
	kept = calloc((size_t)old->table_size + 1, sizeof(*kept));
	if (!leaves || !kept) {
		free(leaves);
		free(kept);
		return MLV_E_NOMEM;
	}
	if (now && old->table_size == now->table_size) {
		to_now = malloc(((size_t)old->n_backends + 1) * sizeof(*to_now));
		if (!to_now) {
			free(leaves);
			free(kept);
			return MLV_E_NOMEM;
		}
	}
	for (uint32_t i = 0; i < old->n_backends; i++) {
		const struct mlv_gen_backend *b = &old->backends[i];
		const struct mlv_gen_backend *nb =
			mlv_gen_find_backend_named(now, b->name);
		uint64_t a = mlv_gen_backend_tracked(cur, b);

		if (to_now)
			to_now[i] = nb ? nb->index : MLV_MAGLEV_NO_BACKEND;
		e->tracked += a;
		/* moved by this change: the backend leaves, or stops being
		 * usable; one already unusable (down by health) had its
		 * flows re-selected by that, not by this change */
		if (b->usable && (!nb || !nb->usable))
			e->tracked_moved += a;
		/* re-selected (now or by health before): not at risk of a
		 * move, already moved */
		leaves[i] = !b->usable || !nb || !nb->usable;
	}
	/* a new size rehashes every flow: all slots move */
	if (now)
		e->slots_moved = to_now ? slots_moved(old, now, to_now) :
				 now->table_size;
	for (uint32_t s = 0; to_now && s < old->table_size; s++) {
		uint16_t b = old->table[s];

		kept[s] = b < old->n_backends && to_now[b] == now->table[s];
	}
	if (now)
		e->tracked_at_risk = mlv_gen_tracked_at_risk(cur, old, kept,
							     leaves);
	free(to_now);
	free(kept);
	free(leaves);
	return MLV_OK;
}

enum mlv_err mlv_gen_plan_moves(const struct mlv_generation *cur,
				const struct mlv_generation *next,
				struct mlv_plan *plan)
{
	enum mlv_err err = MLV_OK;

	for (uint32_t i = 0; !err && i < plan->n; i++) {
		struct mlv_plan_vip *e = &plan->vips[i];

		err = vip_moves(cur, mlv_gen_find_vip_named(cur, e->name),
				mlv_gen_find_vip_named(next, e->name), e);
	}
	return err;
}
