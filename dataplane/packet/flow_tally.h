/* SPDX-License-Identifier: BSD-3-Clause */
/* Tracked flows per (VIP, backend) pair and per VIP, kept by each
 * worker's conntrack table for as long as the flows live, whatever
 * generations come and go: what an operator drains by (IPVS's ActiveConn
 * and InActConn), what bounded loads weigh, what a reload plan says will
 * move.
 *
 * A tally is an array of MLV_TALLY_SLOTS slots per worker, indexed by
 * uid (dataplane/view/view.h: a uid names one VIP, or one
 * backend of one VIP) modulo the slot count. A backend's slot counts its
 * tracked flows by class. The slot of a VIP with max_load counts the
 * tracked flows of all its backends, which bounded loads weigh a
 * backend's flows against: the control thread binds each backend's slot
 * to its VIP's uid when the VIP has max_load, to 0 when not
 * (mlv_gen_tally_bind), so that a new flow of an unbounded VIP pays no
 * VIP count; the worker notes in `counted` which VIP a backend's flows
 * are counted in, and when the binding changes moves them all at the
 * backend's next flow in or out (mlv_ct__tally_rebind), so no count
 * drifts. The conntrack table alone writes the counts (dataplane/packet/
 * conntrack.h): +1 when a flow becomes tracked, a move when its class or
 * backend changes, -1 when the table lets it go. The generation builder
 * never hands out a uid whose slot another live uid, or a flow, still
 * uses (mlv_gen_build_opts.uid_free), so every slot is exact.
 *
 * The array is an anonymous mapping that the worker touches whole before
 * it forwards (mlv_flow_tally_prefault): on its own NUMA node, and no page
 * fault on the packet path.
 *
 * Threads: each worker writes its own tally with plain stores; other
 * threads read it with relaxed atomic loads (mlv_flow_tally_backend,
 * mlv_flow_tally_vip), whole 32-bit values, a moment's snapshot.
 */
#ifndef MLV_FLOW_TALLY_H
#define MLV_FLOW_TALLY_H

#include <stdbool.h>
#include <stdint.h>

#include "control/base/error.h"

/* Slots per tally: the most uids alive at once (VIPs plus backends of
 * the serving and retiring generations, plus removed backends whose
 * flows have not yet left a conntrack table). 16 MiB
 * per worker at 16 bytes a slot. */
#define MLV_TALLY_SLOTS (1u << 20)

/* A flow's class: established TCP, UDP and other flows are active; TCP
 * flows opening or closing are inactive (IPVS's split). */
enum mlv_tally_class {
	MLV_TALLY_ACTIVE = 0,
	MLV_TALLY_INACTIVE = 1,
};

struct mlv_flow_tally {
	uint32_t n[2];      /* a backend's slot: tracked flows by class */
	uint32_t vip_uid;   /* a backend's slot: its VIP's uid if the VIP has
			       max_load, else 0 (the control thread's) */
	union {
		uint32_t vip_flows; /* a VIP's slot: its backends' flows */
		uint32_t counted;   /* a backend's slot: the VIP its flows
				       are counted in now (the worker's) */
	};
};

/* Every worker's tally, for readers on the control thread. */
struct mlv_flow_tally_set {
	uint32_t n_workers;
	struct mlv_flow_tally *const *per_worker;   /* [n_workers], NULL allowed */
};

/* The slot of uid. Pure; any thread. */
static inline uint32_t mlv_tally_slot(uint32_t uid)
{
	return uid & (MLV_TALLY_SLOTS - 1);
}

/* Reserve a zeroed tally. Returns MLV_OK and *out, or MLV_E_NOMEM. Any
 * thread (the control thread, before the worker runs). */
enum mlv_err mlv_flow_tally_create(struct mlv_flow_tally **out);

/* Touch every page of t, so that the packet path never faults one in and
 * the pages are on the caller's NUMA node. The worker's lcore, before it
 * forwards. */
void mlv_flow_tally_prefault(struct mlv_flow_tally *t);

/* Release it; NULL is a no-op. Only once no thread reads or writes it. */
void mlv_flow_tally_destroy(struct mlv_flow_tally *t);

/* A backend's tracked flows summed over set's workers: active[0] and
 * inactive[1] into out[2]. set NULL reads zero. Relaxed loads while the
 * workers write. Any thread. */
void mlv_flow_tally_backend(const struct mlv_flow_tally_set *set, uint32_t uid,
			    uint64_t out[2]);

/* A bounded VIP's tracked flows summed over set's workers (0 for a NULL
 * set, or a VIP without max_load). Until each of its backends has seen a
 * flow come or go since the VIP got max_load, the flows already tracked
 * to that backend are missing from it. Any thread. */
uint64_t mlv_flow_tally_vip(const struct mlv_flow_tally_set *set, uint32_t uid);

/* True when no worker counts anything in uid's slot (no flow tracked to
 * a uid sharing it). Any thread; a reading of a moment, final once no
 * live generation holds a uid of that slot. */
bool mlv_flow_tally_slot_empty(const struct mlv_flow_tally_set *set,
			       uint32_t uid);

#endif
