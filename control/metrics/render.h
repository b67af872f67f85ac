/* SPDX-License-Identifier: BSD-3-Clause */
/* The /metrics page: every maglevd metric rendered in the Prometheus text
 * exposition format 0.0.4 from the control thread's own state. The
 * metric list, types and labels are in docs/metrics.md; counter families
 * are generated from the X-macros that define the counters
 * (dataplane/packet/counters.h, control/health/health.h, dataplane/bpf/steer/counters.h),
 * so a counter added there shows up here without an edit.
 *
 * Threads: everything runs on the control thread, the one that owns the
 * generation, the stats totals and the health engine, so nothing is
 * locked. Worker counters and conntrack occupancy are read racily, as
 * everywhere on the control side (dataplane/packet/counters.h): each value is
 * untorn, the page as a whole is not one atomic snapshot.
 */
#ifndef MLV_METRICS_RENDER_H
#define MLV_METRICS_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "control/ctl/commands.h"
#include "control/base/error.h"
#include "control/health/health.h"
#include "dataplane/bpf/steer/counters.h"

/* Where the numbers come from. The daemon fills struct mlv_ctl_state once
 * for the control socket; metrics read the same struct, plus the one
 * source the socket does not need. */
struct mlv_metrics_sources {
	/* Required: generation, cumulative stats, worker counters,
	 * conntrack tables, health engine, start time and the reload log.
	 * Any piece it lacks (NULL callback or pointer, no workers) leaves
	 * its families out. */
	const struct mlv_ctl_state *ctl;
	/* XDP steering counters (AF_XDP deployment), or NULL when maglevd
	 * does not steer: for the i-th steered interface, set *interface to
	 * its name, fill out[] (summed over CPUs) and return MLV_OK; return
	 * MLV_E_NOT_FOUND past the last one; another error leaves that
	 * interface out of this page. The daemon wraps
	 * mlv_xdp_steer_counters (control/steering/steering.h); a callback
	 * keeps this library free of libbpf. */
	enum mlv_err (*steer_counters)(void *ctx, uint32_t i,
				       const char **interface,
				       uint64_t out[MLV_STEER_CTR__COUNT]);
	void *steer_ctx;
};

/* Remembers what a page needs across scrapes: the slots-per-backend
 * counts of the current generation (a full table walk, redone only when
 * the generation changes) and the time of the last successful reload
 * (the reload log keeps only the last MLV_CTL_RELOAD_HISTORY entries). */
struct mlv_metrics_renderer;

/* Returns MLV_OK and *out, or MLV_E_INVAL / MLV_E_NOMEM. Control thread. */
enum mlv_err mlv_metrics_renderer_create(struct mlv_metrics_renderer **out);

/* NULL is a no-op. Control thread. */
void mlv_metrics_renderer_destroy(struct mlv_metrics_renderer *r);

/* Render the whole page. On MLV_OK, *text is a malloc'd, NUL-terminated
 * buffer of *len bytes (the NUL not counted) that the caller frees with
 * free(). MLV_E_INVAL for NULL arguments or src->ctl NULL; MLV_E_NOMEM
 * (nothing allocated) when memory ran out. Control thread. */
enum mlv_err mlv_metrics_render(struct mlv_metrics_renderer *r,
				const struct mlv_metrics_sources *src,
				char **text, size_t *len);

/* The Content-Type of what mlv_metrics_render produces. */
#define MLV_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#endif
