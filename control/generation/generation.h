/* SPDX-License-Identifier: BSD-3-Clause */
/* Building a generation: everything the workers need to forward packets
 * (its layout and per-packet look-ups: dataplane/view/view.h), built by
 * the control thread from a validated config plus runtime state (health,
 * overrides, port MACs), fully validated, then published with one pointer
 * swap (control/publish/publish.h) and never modified again while
 * workers may see it. Plain C: no DPDK types, so it can be built and
 * tested without EAL.
 *
 * Threads: mlv_gen_build/mlv_gen_free on the control thread only; the
 * look-ups by name are pure reads, any thread holding the generation.
 */
#ifndef MLV_GENERATION_H
#define MLV_GENERATION_H

#include <stdbool.h>
#include <stdint.h>

#include "control/config/config.h"
#include "control/generation/acl.h"
#include "dataplane/view/view.h"

/* The MSS a TCP VIP's SYNs are clamped to (0 = off) for the VIP's
 * mss_clamp setting (config.h, MLV_MSS_CLAMP_*), family and mtu_room:
 * auto is what fits mtu_room behind the IP and TCP headers (mtu_room −
 * 40 for IPv4, − 60 for IPv6); an explicit N is min(N, auto). Pure; any
 * thread. */
uint16_t mlv_gen_mss_clamp(uint16_t setting, uint8_t family, uint16_t mtu_room);


/* Runtime state the control plane layers over the config. */
struct mlv_gen_backend_state {
	bool healthy;                /* false: leaves the table, flows re-selected */
	bool drain_override;         /* drain set at runtime */
	bool has_weight_override;
	uint32_t weight_override;
	bool has_mac;                /* l2dsr: a resolved MAC (neighbour table)
					that replaces the configured one */
	uint8_t mac[6];
	/* With healthy == false: keep the backend's table slots for now
	 * (usable == false, weight unchanged), so the VIP's table and second
	 * choices are reused as they are and its new flows fail over to each
	 * slot's second choice at once; publish a build without it next to
	 * rebalance (instant failover, docs/table-builders.md). */
	bool keep_slots;
};

/* The (VIP, backend) pair a state callback is asked about: its names, and
 * its position in the config being built (cfg->vips[vip_index].backends
 * [backend_index]), so that a callback can keep per-pair state in arrays
 * indexed like the config instead of looking names up 10^5 times a build.
 * The names are authoritative: callers outside a build (the control
 * socket) pass MLV_GEN_PAIR_NO_INDEX for a position they do not know. */
#define MLV_GEN_PAIR_NO_INDEX UINT32_MAX
struct mlv_gen_pair {
	const char *vip;
	const char *backend;
	uint32_t vip_index;
	uint32_t backend_index;
};

/* Called by the builder for each (vip, backend) to get runtime state;
 * NULL callback = all healthy, no overrides. Called on the building
 * thread, in config order of VIPs. */
typedef void (*mlv_gen_state_fn)(const struct mlv_gen_pair *pair,
				 struct mlv_gen_backend_state *out, void *ctx);


/* Build generation `number` for cfg. ports[] describes cfg->ports in
 * order. previous (NULL for the first) carries uids forward: a (VIP,
 * backend) pair present in both keeps its uid, a new one gets a uid never
 * used before; it also lets unchanged VIP tables be shared with it. Returns MLV_OK and *out, or an error
 * with nothing allocated. Control thread.
 *
 * Details (docs/generations.md):
 * - uids are never reused along a chain of generations each built from
 *   the one before (the counter lives in the generation); pass the current
 *   generation as previous on every rebuild.
 * - Backends are ordered by name (strcmp), whatever the config order, so
 *   tables are byte-identical across instances.
 * - Unhealthy: weight 0, not usable (with keep_slots: weight kept, not
 *   usable). `state: down`: weight kept, not usable, never a second
 *   choice. Drain (config state, weight 0 after overrides, or runtime
 *   drain): weight 0, usable. An l2dsr backend with no MAC (neither
 *   configured nor resolved) is treated as unhealthy.
 * - Each VIP's table and second choices come from its configured builder
 *   (control/tables/builder.h).
 * - gen->ports[i].tx_slot is set; a port transmits via itself or its
 *   tx_port. ports[i].mtu/address/address6 left zero/unset fall back to the
 *   config port's values.
 * - VIPs with the same builder, table size, vnodes, max_load and (name,
 *   effective weight, no_second) list share one table, second-choice
 *   array and fingerprint (they are a pure function of them), built once
 *   per build, or taken by reference from previous when it holds one for
 *   that input (whatever VIP it was built for). vip->table and
 *   vip->second are read-only and may point outside gen's allocation;
 *   they stay valid while any generation holding them is alive.
 * - vip->acl is the VIP's source ACL built from its allow / deny lists
 *   (NULL if both are empty), or previous's for the same VIP name when
 *   it was built from the same lists (shared, not rebuilt).
 * - vip->mtu_room is the smallest room over the VIP's transmit ports and
 *   backend address families (conservative for mixed-family backends).
 * - A VIP with quic has a map from its backends' quic_server_ids to them
 *   (mlv_gen_quic_backend), in gen's allocation.
 * - vip->mss_clamp follows the VIP's mss_clamp (mlv_gen_mss_clamp).
 * Errors: MLV_E_INVAL for NULL arguments, duplicate VIP names or
 * (address, port, protocol), two `port: any` VIPs or overlapping port
 * ranges on one address and protocol, duplicate backend names or quic
 * server IDs within a quic VIP, an unknown tx_port,
 * or bad table-builder input; MLV_E_RANGE for n_workers 0 or above
 * MLV_MAX_WORKERS, too many ports/VIPs/backends, or a ring with more than
 * MLV_RING_MAX_POINTS points; MLV_E_CONFIG when a
 * transmitting port has no address of a backend's family or the method
 * cannot carry the VIP's family; MLV_E_LIMIT when uids run out;
 * MLV_E_NOMEM. */
enum mlv_err mlv_gen_build(const struct mlv_config *cfg,
			   const struct mlv_gen_port_info *ports,
			   uint32_t n_workers, uint32_t number,
			   mlv_gen_state_fn state, void *state_ctx,
			   const struct mlv_generation *previous,
			   struct mlv_generation **out);

struct mlv_build_pool;

/* Build options (mlv_gen_build_opt); all zero is mlv_gen_build. */
struct mlv_gen_build_opts {
	/* Defer second choices (docs/generations.md, "Deferred second
	 * choices"): once second_slots_now slots' worth of second choices
	 * were computed in this build, tables built for VIPs that do not read
	 * them at once (no max_load, no backend owning slots while unusable)
	 * are published without them, for builders that can add them later
	 * (Maglev). Their first choices and fingerprints are exact. */
	bool defer_second;
	uint64_t second_slots_now;
	/* Threads that build the new tables (control/tables/build_pool.h); NULL:
	 * the calling thread alone. The generation is the same either way. */
	struct mlv_build_pool *pool;
	/* The workers' tallies, recorded in gen->tallies. */
	const struct mlv_flow_tally_set *tallies;
	/* Asked, on the building thread, before a new uid is handed out;
	 * false skips it. The daemon answers false while the uid's tally
	 * slot (mlv_tally_slot) is used by a uid a live generation holds or
	 * by tracked flows, so that a slot counts one pair at a time. NULL:
	 * every uid is free. */
	bool (*uid_free)(void *ctx, uint32_t uid);
	void *uid_free_ctx;
	/* The time second chance's windows are measured from
	 * (mlv_gen_sc_now_ms); 0: now. */
	uint64_t now_ms;
	/* Second chance's slot history for a VIP the previous generation
	 * does not have (every VIP of a first generation): a VIP holding
	 * only what mlv_gen_sc_build reads (name, table_size, n_backends,
	 * backends' names in strcmp order, table, previous, earlier,
	 * previous_until_ms), or NULL for none. Asked on the building
	 * thread; the VIP must stay valid until the build returns. NULL:
	 * none for any. */
	const struct mlv_gen_vip *(*prior)(void *ctx, const char *vip);
	void *prior_ctx;
};

/* mlv_gen_build with options (NULL: none). Same contract, plus: with
 * defer_second, a backend whose state says keep_slots keeps them only if
 * the table it would keep them in has second choices; otherwise it leaves
 * the table as if keep_slots were false (instant failover needs second
 * choices; without them the table is rebuilt instead). Control thread. */
enum mlv_err mlv_gen_build_opt(const struct mlv_config *cfg,
			       const struct mlv_gen_port_info *ports,
			       uint32_t n_workers, uint32_t number,
			       mlv_gen_state_fn state, void *state_ctx,
			       const struct mlv_generation *previous,
			       const struct mlv_gen_build_opts *opts,
			       struct mlv_generation **out);

/* Compute the deferred second choices of up to max_tables of gen's tables
 * (about as long each as one table's second choices), as new table
 * objects linked from the old ones: gen and its tables do not change, the
 * next mlv_gen_build with gen as previous takes the completed copies.
 * *left receives how many of gen's tables still lack them. Returns MLV_OK
 * or the first error (MLV_E_NOMEM); the tables not done count in *left.
 * Control thread (the links are control-thread state, like the table
 * reference counts). */
enum mlv_err mlv_gen_complete_second(const struct mlv_generation *gen,
				     uint32_t max_tables, uint32_t *left);

/* Bind, in gen's tallies (gen->tallies; nothing without them), each
 * backend's slot to its VIP's uid if the VIP has max_load, else to 0: the
 * VIP counts bounded loads read (dataplane/packet/flow_tally.h; the
 * workers move a backend's flows when its binding changes). Call just
 * before publishing gen: the publish's release store orders these writes
 * before any worker sees gen. Relaxed atomic stores, since workers read
 * the field. Control thread. */
void mlv_gen_tally_bind(const struct mlv_generation *gen);

/* Free a generation no worker can still see, dropping its references to
 * the tables and source ACLs it shares; each goes with the last
 * generation holding it. NULL is a no-op. Control thread only: their
 * reference counts are plain integers (control/generation/vip_tables.h,
 * acl.h). */
void mlv_gen_free(struct mlv_generation *gen);

/* By name; NULL if absent (or gen, vip or name is NULL). The VIP through
 * gen's name index (a binary search); the backend by a walk of vip's.
 * For the control plane; any thread holding gen. */
const struct mlv_gen_vip *mlv_gen_find_vip_named(const struct mlv_generation *gen,
						 const char *name);
const struct mlv_gen_backend *mlv_gen_find_backend_named(
	const struct mlv_gen_vip *vip, const char *name);


#endif
