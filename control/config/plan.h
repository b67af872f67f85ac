/* SPDX-License-Identifier: BSD-3-Clause */
/* What a new configuration changes against the running one, and whether
 * that fits the disruption budget (control.reload_budget,
 * docs/operations.md "The reload plan and the budget"). Computed from the
 * two config models alone: VIPs added, removed and changed; per VIP the
 * backends added, removed, re-weighted and drained, and how many of its
 * usable backends the change takes away. A backend is usable in a config
 * when its weight is above 0 and its state is active.
 *
 * Threads: any; no shared state.
 */
#ifndef MLV_CONFIG_PLAN_H
#define MLV_CONFIG_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/config/config.h"

enum mlv_plan_vip_change {
	MLV_PLAN_SAME = 0,
	MLV_PLAN_ADDED,
	MLV_PLAN_REMOVED,
	MLV_PLAN_CHANGED,
};

struct mlv_plan_vip {
	char name[MLV_NAME_MAX];
	enum mlv_plan_vip_change change;
	uint32_t backends_added;
	uint32_t backends_removed;
	uint32_t backends_reweighted;
	uint32_t backends_drained;     /* usable before, drained in the file now */
	uint32_t usable_before;
	uint32_t usable_lost;          /* usable before, removed or drained now */
	uint32_t usable_after;
	char backends[160];            /* the changed backends by name: "+new
					  -gone ~reweighted drained:name", at
					  most 5, then "and N more" */
	bool other;                    /* a setting besides the backends changed
					  (table, size, forwarding, health ...) */
	/* From the generations, once the new one is built
	 * (control/generation/moves.h); zero before. */
	uint32_t table_size;           /* the new table's slots (0: removed) */
	uint32_t slots_moved;          /* of those, the ones whose backend changes */
	uint64_t tracked;              /* tracked connections now (approximate) */
	uint64_t tracked_moved;        /* of those, the ones re-selected */
	uint64_t tracked_at_risk;      /* the others whose slot changes owner:
					  kept here, at risk if they move to
					  another instance (an estimate) */
	bool second_chance;            /* the new VIP hands those on */
};

struct mlv_plan {
	uint32_t vips_before;
	uint32_t vips_after;
	uint32_t vips_added;
	uint32_t vips_removed;
	uint32_t vips_changed;
	uint32_t n;                    /* entries: every VIP of either config
					  that is not MLV_PLAN_SAME */
	struct mlv_plan_vip *vips;
};

/* The plan of going from running to next, two configs from the loader.
 * MLV_OK or MLV_E_NOMEM (*plan then empty). mlv_plan_free releases it. */
enum mlv_err mlv_plan_make(const struct mlv_config *running,
			   const struct mlv_config *next, struct mlv_plan *plan);
void mlv_plan_free(struct mlv_plan *plan);

/* Whether plan's connection moves (filled by mlv_gen_plan_moves once the
 * next generation is built) fit budget: no changed VIP re-selects more
 * than max_connections_moved_pct of its tracked connections (a removed
 * VIP is the vips_removed limit's). False with the VIP and the numbers in
 * why. */
bool mlv_plan_moves_fit(const struct mlv_plan *plan,
			const struct mlv_reload_budget *budget, char *why,
			size_t why_len);

/* Whether plan fits budget (the running config's control.reload_budget).
 * False with the limit exceeded and by how much in why. */
bool mlv_plan_fits(const struct mlv_plan *plan,
		   const struct mlv_reload_budget *budget, char *why,
		   size_t why_len);

/* One line for the log: "1 VIP(s) added (api), 1 removed (old), 1 changed
 * (web: +b5 -b4 ~b1 drained:b2)", names capped with "and N more". */
void mlv_plan_summary(const struct mlv_plan *plan, char *buf, size_t len);

#endif
