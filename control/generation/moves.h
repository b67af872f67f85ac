/* SPDX-License-Identifier: BSD-3-Clause */
/* What publishing one generation after another moves, VIP by VIP: the
 * table slots whose backend changes, and the tracked connections that
 * conntrack re-selects. Fills the reload plan (control/config/plan.h)
 * from the generation a reload built and the one serving.
 *
 * Threads: the control thread (it owns both generations); the tracked
 * counts are the workers' live counters, read racily. */
#ifndef MLV_GENERATION_MOVES_H
#define MLV_GENERATION_MOVES_H

#include "control/config/plan.h"
#include "control/generation/generation.h"

/* Tracked connections of b: the workers' tallies (gen->tallies) for b's
 * uid summed, active (established TCP, UDP, other) into out[0] and
 * inactive (TCP opening or closing) into out[1]. A flow counts on its
 * backend from its first packet until conntrack lets it go, whatever
 * generations were published meanwhile. Read while the workers change
 * them: each worker's count is whole, the sum is not a snapshot. Zero
 * without tallies. Any thread holding gen. */
void mlv_gen_backend_flows(const struct mlv_generation *gen,
			   const struct mlv_gen_backend *b, uint64_t out[2]);

/* Both classes of mlv_gen_backend_flows added. */
uint64_t mlv_gen_backend_tracked(const struct mlv_generation *gen,
				 const struct mlv_gen_backend *b);

/* A bounded VIP's tracked connections (mlv_flow_tally_vip); zero for a
 * VIP without max_load or without tallies. Any thread holding gen. */
uint64_t mlv_gen_vip_tracked(const struct mlv_generation *gen,
			     const struct mlv_gen_vip *vip);

/* The tracked connections of old's backends that stay but whose slot
 * changes owner: safe while they stay on this instance (conntrack keeps
 * them), at risk if they move to another, which sends them to the new
 * owner. Per backend b of old not in leaves (leaves[i]: re-selected
 * anyway; NULL: none), its tracked connections times the share of its
 * slots in old whose owner changes (kept[s] == 0); all of them for a
 * backend that owns no slot in old (drained, or at weight 0). An
 * estimate: a backend's connections are spread over its slots as the
 * flow hash spreads them. Any thread holding gen; kept has
 * old->table_size entries. */
uint64_t mlv_gen_tracked_at_risk(const struct mlv_generation *gen,
				 const struct mlv_gen_vip *old,
				 const uint8_t *kept, const bool *leaves);

/* For every VIP of plan: slots_moved (slots of next's table whose backend,
 * by name, differs from the same slot of cur's; all of them when the
 * table size changed), tracked (cur's tracked connections of the VIP) and
 * tracked_moved (those on backends that leave next or stop being usable
 * there, so conntrack re-selects them; all of them for a removed VIP),
 * tracked_at_risk (mlv_gen_tracked_at_risk: the others whose slot changes
 * owner) and second_chance (next's VIP has it, so those reach their
 * backends from another instance too).
 * A VIP in neither generation gets zeros. MLV_OK, or MLV_E_NOMEM (the
 * plan's moves then partly filled). */
enum mlv_err mlv_gen_plan_moves(const struct mlv_generation *cur,
				const struct mlv_generation *next,
				struct mlv_plan *plan);

#endif
