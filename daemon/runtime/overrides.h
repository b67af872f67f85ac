/* SPDX-License-Identifier: BSD-3-Clause */
/* Runtime overrides set over the control socket: drain and weight per
 * (VIP name, backend name). They are layered over the YAML each time a
 * generation is built (daemon/generations.c), so they survive reloads;
 * an override whose VIP or backend a new config no longer has is
 * forgotten (mlv_overrides_prune), and `undrain` / `weight --reset`
 * clear them. Semantics: docs/control-protocol.md ("Overrides and
 * reloads").
 *
 * Kept as an array sorted by (VIP, backend): overrides are few (set by
 * hand), while the generation builder asks about every backend of every
 * VIP, so a binary search per question, and nothing when the store is
 * empty, is the cheap side to optimise. Plain C, no DPDK.
 *
 * Threads: control thread only.
 */
#ifndef MLV_DAEMON_OVERRIDES_H
#define MLV_DAEMON_OVERRIDES_H

#include <stdbool.h>
#include <stdint.h>

#include "control/config/config.h"
#include "control/base/error.h"
#include "control/generation/generation.h"

struct mlv_override {
	char vip[MLV_NAME_MAX];
	char backend[MLV_NAME_MAX];
	bool drain;              /* no new flows */
	bool has_weight;
	uint32_t weight;         /* replaces the configured weight */
};

struct mlv_overrides {
	uint32_t n, cap;
	struct mlv_override *items;  /* sorted by (vip, backend) */
};

/* An empty store; mlv_overrides_free releases it. */
void mlv_overrides_init(struct mlv_overrides *o);
void mlv_overrides_free(struct mlv_overrides *o);

/* Copy the override of (vip, backend) to *out (names filled in, no flag
 * set if there is none). Returns whether there is one. */
bool mlv_overrides_get(const struct mlv_overrides *o, const char *vip,
		       const char *backend, struct mlv_override *out);

/* Make the override of (ov->vip, ov->backend) equal *ov: one with neither
 * drain nor a weight is removed. *changed (may be NULL) says whether the
 * store differs afterwards. Returns MLV_OK, MLV_E_INVAL for a name that
 * does not fit MLV_NAME_MAX, MLV_E_NOMEM (store unchanged). */
enum mlv_err mlv_overrides_put(struct mlv_overrides *o,
			       const struct mlv_override *ov, bool *changed);

/* Layer the override of (vip, backend), if any, onto *out: drain_override,
 * has_weight_override and weight_override. Other fields are left alone. */
void mlv_overrides_apply(const struct mlv_overrides *o, const char *vip,
			 const char *backend, struct mlv_gen_backend_state *out);

/* Forget overrides whose VIP, or backend within that VIP, cfg does not
 * have. Returns how many were dropped; each is reported to forget (may be
 * NULL) before it goes. */
uint32_t mlv_overrides_prune(struct mlv_overrides *o,
			     const struct mlv_config *cfg,
			     void (*forget)(const struct mlv_override *ov,
					    void *ctx),
			     void *ctx);

#endif
