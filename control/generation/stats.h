/* SPDX-License-Identifier: BSD-3-Clause */
/* Cumulative per-VIP and per-backend counters that survive generations.
 *
 * Workers count into the per-worker backend rows of the generation they
 * are using (gen->backend_ctr). A VIP has no rows of its own: its counts
 * in a generation are the sum of its backends' rows there (every
 * forwarded packet is counted on exactly one backend of its VIP), which
 * saves the data plane a counter row (three increments) per packet. The
 * rows die with their generation, so a reader must see: counts folded
 * from freed generations (exact: nobody writes them after the grace
 * period) + the live counts of every generation workers may still write
 * (the current one and those waiting for reclaim). Counters are keyed by uid, which follows a VIP /
 * backend across generations (control/generation/generation.h), so a reload never
 * resets them and the sums never go backwards.
 *
 * Wiring: mlv_stats_track as the publisher's on_publish hook and
 * mlv_stats_fold as its on_free hook (control/publish/publish.h). Tracking
 * reserves the totals entries up front, so folding never allocates and
 * cannot lose counts. Totals of a uid that no tracked generation holds any
 * more (a removed VIP or backend; a re-added one gets a new uid) are
 * dropped when its last generation is folded, so memory follows the live
 * configuration, not its history.
 *
 * Threads: everything here runs on the control thread. Live counters are
 * read while workers write them with plain stores (64-bit aligned loads do
 * not tear on x86-64/arm64; dataplane/packet/counters.h), so a reading is a
 * moment's snapshot, not an atomic one across counters. Plain C.
 */
#ifndef MLV_STATS_H
#define MLV_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "control/base/error.h"
#include "control/generation/generation.h"
#include "dataplane/packet/counters.h"

struct mlv_stats;

/* Returns MLV_OK and an empty *out, or MLV_E_NOMEM / MLV_E_INVAL. */
enum mlv_err mlv_stats_create(struct mlv_stats **out);

/* Free the totals; tracked generations are not touched. NULL ignored. */
void mlv_stats_destroy(struct mlv_stats *stats);

/* Start treating gen's counters as live (the on_publish hook; ctx is the
 * struct mlv_stats). Idempotent. Returns MLV_OK, or MLV_E_NOMEM with
 * nothing changed (the publish is then refused, so no count can be lost).
 */
enum mlv_err mlv_stats_track(struct mlv_generation *gen, void *ctx);

/* Add gen's final per-worker counters into the totals and stop tracking
 * it (the on_free hook; ctx is the struct mlv_stats). Only after gen's
 * grace period, when no worker writes it any more. */
void mlv_stats_fold(struct mlv_generation *gen, void *ctx);

/* Cumulative counters of vip (a VIP of gen): folded totals for its uid +
 * live counters of every tracked generation holding that uid, and of gen
 * itself if it is not tracked; in each generation, the sum of the VIP's
 * backends there (so backends removed since still count). Costs
 * O(backends x workers) per generation. Control thread. */
void mlv_stats_vip(const struct mlv_stats *stats,
		   const struct mlv_generation *gen,
		   const struct mlv_gen_vip *vip,
		   struct mlv_flow_counters *out);

/* The VIP's cumulative drops by the reasons that belong to a VIP
 * (MLV_VIP_DROP_REASONS): folded totals + live rows of every tracked
 * generation holding its uid (and of gen if untracked). stats may be
 * NULL (gen's live rows only). Control thread. */
void mlv_stats_vip_drops(const struct mlv_stats *stats,
			 const struct mlv_generation *gen,
			 const struct mlv_gen_vip *vip, struct mlv_vip_drops *out);

/* The same for backend (a backend of gen). */
void mlv_stats_backend(const struct mlv_stats *stats,
		       const struct mlv_generation *gen,
		       const struct mlv_gen_backend *backend,
		       struct mlv_flow_counters *out);

/* Sum of the workers' global counters and drops into *out. per_worker[i]
 * is worker i's block (NULL entries are skipped). Any thread; racy reads
 * as above. */
void mlv_stats_workers(const struct mlv_worker_counters *const *per_worker,
		       uint32_t n_workers, struct mlv_worker_counters *out);

/* True while a tracked generation holds uid (a VIP's or a backend's):
 * its totals entry lives exactly that long. O(1). Control thread. */
bool mlv_stats_holds_uid(const struct mlv_stats *stats, uint32_t uid);

/* Generations currently tracked (for tests and status). */
uint32_t mlv_stats_tracked(const struct mlv_stats *stats);

#endif
