/* SPDX-License-Identifier: BSD-3-Clause */
/* A generation as the workers read it: its layout (VIPs, backends,
 * tables, encapsulation templates, counter rows) and the look-ups a
 * packet needs (the VIP of a flow key, a backend by uid, a QUIC server
 * ID, the slot hash). This is the contract between the planes: the
 * control plane builds and validates a generation
 * (control/generation/generation.h), control/publish hands it over, and
 * dataplane/worker reads it through this header alone, so a packet's path
 * calls nothing in control/. Plain C: no DPDK types, so it can be built
 * and tested without EAL.
 *
 * Threads: a generation is never modified while workers may see it; every
 * function here is a pure read that any thread holding the generation
 * (workers between RCU quiescent states) may call.
 */
#ifndef MLV_VIEW_H
#define MLV_VIEW_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "control/config/config.h"
#include "dataplane/packet/counters.h"
#include "dataplane/packet/encap.h"
#include "dataplane/packet/flow_fields.h"
#include "dataplane/packet/flow_key.h"
#include "dataplane/packet/flow_limit.h"
#include "dataplane/packet/flow_tally.h"
#include "dataplane/view/acl.h"
#include "dataplane/view/index.h"
#include "dataplane/view/port_map.h"
#include "dataplane/view/uid_map.h"

/* The look-up indices of a generation, in its allocation. */
struct mlv_gen_lookup {
	struct mlv_gen_vip_index exact;      /* (family, address, port, proto) */
	struct mlv_gen_vip_index any_port;   /* port 0 -> lowest-port VIP */
	struct mlv_gen_port_maps port_maps;  /* range and `any` VIPs */
	struct mlv_gen_uid_map vip_uids;     /* -> index in vips */
	struct mlv_gen_uid_map backend_uids; /* -> index in all_backends */
};

/* One backend of one VIP, as the workers see it. */
struct mlv_gen_backend {
	uint32_t uid;        /* stable for (VIP name, backend name) for the
				process lifetime; what conntrack remembers */
	uint16_t index;      /* position in vip->backends (name order) */
	bool usable;         /* present and healthy: tracked flows may keep
				it (a draining backend is usable) */
	bool draining;       /* owns no slots; keeps its established flows */
	bool no_second;      /* never a second choice (state: down) */
	bool vip_bounded;    /* its VIP has max_load: the data plane keeps
				the VIP's vip_active total (see there) */
	struct mlv_ip address;
	uint32_t weight;     /* effective weight (after overrides/health):
				its share of the table. A backend that is
				down but keeps its slots has weight > 0
				and usable == false. */
	uint32_t vip_index;  /* its VIP in gen->vips */
	uint32_t all_index;  /* its position in gen->all_backends: per
				packet, a load instead of a pointer
				difference divided by this struct's size */
	/* Bounded loads: the most active flows it may hold before a new
	 * flow goes to the second choice, as a fraction of the VIP's total
	 * (+1): max_load x weight / (sum of usable weights). 0 if the VIP
	 * has no max_load or the backend takes no new flows. */
	double load_bound;
	const struct mlv_encap_tmpl *encap; /* [gen->n_tx] one per transmit slot */
	uint32_t quic_server_id; /* its VIP's QUIC routing: 0 = none */
	char name[MLV_NAME_MAX];
	/* its weight were it not draining (its weight when not draining):
	 * the undrained table's input; control plane only, after what the
	 * packet path reads */
	uint32_t undrained_weight;
};

struct mlv_gen_vip {
	uint32_t uid;                 /* stable for the VIP name */
	uint8_t family;               /* 4 or 6 */
	uint8_t protocol;
	uint16_t port_be;             /* network byte order, as in flow keys;
					 a range's first port; 0 for `any` */
	uint8_t address[16];
	uint16_t port_last;           /* host order: a range's last port;
					 ntohs(port_be) for one port;
					 65535 for `any` */
	uint8_t hash_fields;          /* enum mlv_hash_fields: which key
					 fields choose the slot */
	enum mlv_forwarding forwarding;
	uint32_t table_size;
	uint64_t table_mod_m;         /* mlv_fastmod_m(table_size): slot = hash
					 mod table_size without a division */
	const uint16_t *table;        /* table_size slots, MLV_MAGLEV_NO_BACKEND if none */
	const uint16_t *second;       /* each slot's second choice (never the
					 slot's first, never no_second), or
					 MLV_MAGLEV_NO_BACKEND */
	uint64_t fingerprint;
	enum mlv_table_kind table_kind;
	uint32_t vnodes;              /* ring: points per unit of weight */
	double max_load;              /* bounded loads; 0 = off */
	uint32_t n_backends;
	const struct mlv_gen_backend *backends;
	uint32_t n_usable;            /* backends that can take new flows */
	/* Read by pass 3 for every packet, together: one 16-byte block, on
	 * one cache line whatever the VIP's index (the assertion below). A
	 * VIP that uses none of the features pays a NULL test and two byte
	 * tests here. */
	const struct mlv_acl *acl __attribute__((aligned(16)));
				      /* source ACL (dataplane/view/acl.h),
					 NULL without one; may be shared with
					 other generations (reference counted
					 on the control thread) */
	uint16_t mtu_room;            /* largest inner IP packet that fits the
					 transmit port MTU after encapsulation */
	uint8_t mss_syn_mask;         /* MLV_TCP_SYN (0x02) when mss_clamp is
					 on, else 0: the workers' one test per
					 packet is tcp_flags & mss_syn_mask */
	uint8_t features;             /* MLV_VIP_F_*: what the VIP uses, so
					 that one test per packet passes a VIP
					 that uses none */
	bool quic;                    /* QUIC connection-ID routing */
	/* Echo requests to the address are answered (mlv_gen_find_echo_vip
	 * finds this VIP for them): some VIP on the address says
	 * icmp_echo: reply and has a backend that takes new flows. Set on
	 * that one VIP only. */
	bool echo_reply;
	uint16_t mss_clamp;           /* TCP: SYNs' MSS options above it are
					 lowered to it; 0 = off */
	/* new_flows_per_second (dataplane/packet/flow_limit.h); rate 0: no
	 * limit. Its buckets are gen->flow_buckets[w][flow_bucket]. */
	struct mlv_flow_limit flow_limit;
	uint32_t flow_bucket;
	/* quic: server ID -> index in backends, a uid map (uid_map.h) of
	 * quic_mask + 1 slots; NULL otherwise. */
	uint32_t quic_mask;
	const struct mlv_gen_uid_slot *quic_ids;
	uint64_t src_mask6[2];        /* hash: source, the IPv6 source bits
					 kept (mlv_flow_src_mask6) */
	/* Second chance (docs/second-chance.md): the VIP's templates carry
	 * a hop block (mlv_encap_tmpl.sc_off), filled per packet by
	 * mlv_gen_sc_hops. previous / earlier: each slot's history, the
	 * last two backends that owned it before its owner now, most
	 * recent first, as indices in backends (MLV_GEN_NO_HOP: none, or
	 * no longer a backend; never the owner now, never twice). They
	 * last as long as the backends are configured and the table keeps
	 * its size, whatever the time, so a flow keeps its hop for its
	 * whole life; NULL when no slot has one. */
	const uint16_t *previous;
	const uint16_t *earlier;
	/* undrained: with a draining backend, each slot's owner in the table
	 * the VIP would have if no backend drained (their configured
	 * weights), so the flows of a drained backend's former slots list
	 * it on every instance, whatever its history; NULL without one. A
	 * function of the config and the runtime state only. */
	const uint16_t *undrained;
	/* The window: until previous_until_ms (CLOCK_MONOTONIC ms; control
	 * plane only) after the VIP's last table change, a connection no
	 * entry tracks most likely started before the change, so it goes
	 * to the slot's previous owner first (mlv_gen_likely_holder);
	 * window_open says so to the workers. */
	uint64_t previous_until_ms;
	uint32_t sc_window_ms;        /* second_chance.window */
	bool second_chance;
	bool window_open;
	char name[MLV_NAME_MAX];
};

/* mlv_gen_vip.features: the features whose per-packet work is out of
 * line. */
#define MLV_VIP_F_ACL    0x01   /* acl != NULL */
#define MLV_VIP_F_QUIC   0x02   /* quic */
#define MLV_VIP_F_LIMIT  0x04   /* flow_limit.rate != 0 */
/* second chance with previous owners or an undrained table: a TCP
 * segment of a connection no entry tracks goes to the backend most
 * likely to hold it (mlv_gen_likely_holder) */
#define MLV_VIP_F_HOLDERS 0x08
/* the ones pass 3 looks at before the conntrack look-up */
#define MLV_VIP_F_BEFORE_CT (MLV_VIP_F_ACL | MLV_VIP_F_QUIC)

/* The per-packet block (acl .. echo_reply) in one 16-byte block of a VIP
 * whose size is a multiple of 16: on one cache line whatever the VIP's
 * index. */
_Static_assert(offsetof(struct mlv_gen_vip, acl) % 16 == 0 &&
		       offsetof(struct mlv_gen_vip, echo_reply) -
		       offsetof(struct mlv_gen_vip, acl) < 16 &&
	       sizeof(struct mlv_gen_vip) % 16 == 0,
	       "the per-packet fields share a 16-byte block");

/* Whether vip takes one port (not a range, not `any`). Pure; any
 * thread. */
static inline bool mlv_gen_vip_one_port(const struct mlv_gen_vip *vip)
{
	return vip->port_last == ntohs(vip->port_be);
}

/* What the daemon knows about the ports when it builds a generation:
 * constant after start except next-hop MACs, which may be re-resolved. */
struct mlv_gen_port_info {
	uint8_t mac[6];              /* the DPDK port's own MAC */
	uint8_t next_hop[6];         /* where encapsulated packets go */
	uint8_t next_hop6[6];        /* where IPv6 ones go if not there;
					zeros: next_hop too */
	uint16_t mtu;
	struct mlv_ip address;       /* outer source, IPv4 */
	struct mlv_ip address6;      /* outer source, IPv6 */
	uint16_t tx_slot;            /* transmit slot used by traffic arriving here */
};

/* The next-hop MAC of encapsulated packets of an outer family (MLV_AF_*)
 * leaving by port p: next_hop6 for IPv6 when set, next_hop otherwise.
 * Pure; any thread. */
static inline const uint8_t *
mlv_gen_port_next_hop(const struct mlv_gen_port_info *p, uint8_t family)
{
	static const uint8_t zero[6];

	if (family == MLV_AF_INET6 && memcmp(p->next_hop6, zero, 6) != 0)
		return p->next_hop6;
	return p->next_hop;
}

struct mlv_generation {
	uint32_t number;             /* increases by one per publish */
	uint32_t n_vips;
	const struct mlv_gen_vip *vips;
	uint32_t n_all_backends;     /* every VIP's backends, contiguous: */
	const struct mlv_gen_backend *all_backends; /* vip->backends points in here */
	uint32_t n_tx;               /* transmit slots (distinct tx ports) */
	uint32_t n_ports;
	struct mlv_gen_port_info ports[MLV_MAX_PORTS];
	uint32_t n_workers;
	/* Counters this generation's packets are counted in, per worker:
	 * backend_ctr[w][backend - all_backends]. There is no per-VIP row:
	 * every forwarded packet is counted on one backend of its VIP, so a
	 * VIP's counts are the sum of its backends' rows (control/generation/stats.h),
	 * and workers save a row of increments per packet. */
	struct mlv_flow_counters **backend_ctr;
	/* Drops of frames addressed to a VIP, per worker and VIP, by the
	 * reasons that belong to a VIP: vip_drops[w][vip - vips]
	 * (dataplane/packet/counters.h, MLV_VIP_DROP_REASONS). Folded across
	 * generations like the backend rows (control/generation/stats.h). */
	struct mlv_vip_drops **vip_drops;
	/* The new-flow token buckets of the VIPs with a limit, per worker:
	 * flow_buckets[w][vip->flow_bucket]. Written by worker w only; set
	 * up by the builder (carried over from the previous generation). */
	struct mlv_flow_bucket **flow_buckets;
	/* The workers' tallies of tracked flows by uid (dataplane/packet/
	 * flow_tally.h), which outlive generations: for the control plane's
	 * readers (mlv_gen_backend_flows). NULL when the builder was given
	 * none (tests, tools): every count reads zero. Workers use their own
	 * tally, never this. */
	const struct mlv_flow_tally_set *tallies;
	/* Its look-up indices (VIP by address, port and protocol; VIP and
	 * backend by uid), in its allocation, built with it. */
	const struct mlv_gen_lookup *lookup;
	void *priv;                  /* the builder's own (control/generation) */
	/* How each VIP got its table (they add up to n_vips), for logs and
	 * tests. A table input is (builder, size, vnodes, max_load, and the
	 * (name, effective weight, no_second) list), control/generation/vip_tables.h.
	 * reused: `previous` held a table for the same input, now shared
	 * with it. built: the first VIP with an input `previous` had no
	 * table for. shared: a later VIP with such an input, sharing the
	 * table built for the first. n_vips - n_tables_reused VIPs changed
	 * since `previous`; n_tables_built tables were built for them. */
	uint32_t n_tables_reused;
	uint32_t n_tables_built;
	uint32_t n_tables_shared;
	/* Tables it holds whose second choices were deferred (all "none"
	 * until mlv_gen_complete_second and a later build replace them). */
	uint32_t n_tables_no_second;
	/* Config port index transmitting for each slot: [n_tx]. */
	uint16_t tx_ports[MLV_MAX_PORTS];
	/* Owned by control/publish/publish.c while the generation waits for its grace
	 * period; never read by workers. */
	uint64_t retire_token;
	struct mlv_generation *retire_next;
};

/* The VIP matching (dst, dport, proto, family) of key, or NULL: a VIP of
 * that one port, else a range holding dport, else the address's `any`
 * VIP (docs/forwarding.md, "Finding the VIP"). For fragments (key ports
 * 0) pass any_port = true: the address's `any` VIP, else the VIP with
 * the lowest (first) port on that address and protocol matches. Any
 * thread holding gen. */
const struct mlv_gen_vip *mlv_gen_find_vip(const struct mlv_generation *gen,
					   const struct mlv_flow_key *key,
					   bool any_port);

/* The VIP that answers for an ICMP echo request to key->dst: any VIP on
 * that address, whatever its protocol and port (the echo key carries the
 * ICMP protocol, which no VIP balances): the TCP VIP with the lowest port,
 * else the UDP one; NULL if the address has none. Its echo_reply says
 * whether the request is answered. Any thread holding gen. */
const struct mlv_gen_vip *mlv_gen_find_echo_vip(const struct mlv_generation *gen,
						const struct mlv_flow_key *key);
/* The hash that chooses key's slot in vip's table: full_hash (the hash
 * of the whole key) for a 5tuple VIP, else the hash of the key reduced
 * to the VIP's hash fields (dataplane/packet/flow_fields.h); fragment:
 * the key is a fragment's (ports 0). Pure; any thread. */
uint32_t mlv_gen_slot_hash(const struct mlv_gen_vip *vip,
			   const struct mlv_flow_key *key, bool fragment,
			   uint32_t full_hash);

/* The backend with uid in vip, or NULL if it is no longer there. */
const struct mlv_gen_backend *mlv_gen_find_backend(
	const struct mlv_generation *gen, const struct mlv_gen_vip *vip,
	uint32_t uid);

/* The VIP / backend with this uid anywhere in gen, or NULL. Backend uids
 * are unique within a generation (one per VIP and backend name pair).
 * For the control plane (stats folding); any thread holding gen. */
const struct mlv_gen_vip *mlv_gen_find_vip_uid(const struct mlv_generation *gen,
					       uint32_t uid);
const struct mlv_gen_backend *mlv_gen_find_backend_uid(
	const struct mlv_generation *gen, uint32_t uid);


/* a mod d without a division (Lemire, Kaser, Kurz, "Faster remainder by
 * direct computation", 2019): with m = mlv_fastmod_m(d), the low 64 bits
 * of m * a are the fraction a / d in 0.64 fixed point, and multiplying
 * that by d keeps the remainder in the high 64 bits. Exact for every
 * 32-bit a and d >= 1 (d = 1 gives m = 0 and so 0). Two multiplications
 * instead of a 32-bit divide on the new-flow path (choose/from_table in
 * dataplane/worker/forward.c), which picks the same slot as plain % would.
 * Pure; any thread. */
static inline uint64_t mlv_fastmod_m(uint32_t d)
{
	return UINT64_C(0xFFFFFFFFFFFFFFFF) / d + 1;
}

static inline uint32_t mlv_fastmod(uint32_t a, uint64_t m, uint32_t d)
{
	uint64_t frac = m * a;

	return (uint32_t)(((unsigned __int128)frac * d) >> 64);
}

/* The backend of quic VIP vip whose quic_server_id is id, or NULL (id 0
 * is never one). Whether it is usable is the caller's question. Pure;
 * any thread holding the generation. */
static inline const struct mlv_gen_backend *
mlv_gen_quic_backend(const struct mlv_gen_vip *vip, uint32_t id)
{
	const struct mlv_gen_uid_map m = {
		(struct mlv_gen_uid_slot *)vip->quic_ids, vip->quic_mask,
	};
	uint32_t i;

	if (vip->quic_ids == NULL)
		return NULL;
	i = mlv_gen_uid_map_find(&m, id);   /* MLV_GEN_INDEX_NONE for id 0 */
	return i == MLV_GEN_INDEX_NONE ? NULL : &vip->backends[i];
}

/* No backend in a uint16_t slot array (table, second, previous): the
 * table builders' MLV_MAGLEV_NO_BACKEND, which control/generation checks
 * is this value. */
#define MLV_GEN_NO_HOP 0xFFFFu

/* Second chance's hops for a packet of slot going to backend b of vip:
 * up to MLV_SC_MAX_HOPS other backends of vip where the flow may live,
 * most likely first: the slot's previous owner, its owner, its earlier
 * owner, the draining backend that would own it undrained
 * (vip->undrained), its second choice; never b, never twice, never a
 * backend that is not usable (a down backend's flows are re-selected, a
 * drained one's are not), only backends of b's address family. Fills
 * hops[] and returns how many.
 * Pure; any thread holding the generation. */
static inline uint32_t mlv_gen_sc_hops(const struct mlv_gen_vip *vip,
				       uint32_t slot,
				       const struct mlv_gen_backend *b,
				       const struct mlv_gen_backend **hops)
{
	uint16_t u = vip->undrained ? vip->undrained[slot] : MLV_GEN_NO_HOP;
	uint16_t cand[5] = {
		vip->previous ? vip->previous[slot] : MLV_GEN_NO_HOP,
		vip->table[slot],
		vip->earlier ? vip->earlier[slot] : MLV_GEN_NO_HOP,
		u != MLV_GEN_NO_HOP && vip->backends[u].draining ?
			u : MLV_GEN_NO_HOP,
		vip->second[slot],
	};
	uint32_t n = 0;

	for (uint32_t c = 0; c < 5 && n < MLV_SC_MAX_HOPS; c++) {
		const struct mlv_gen_backend *h;
		bool dup = false;

		if (cand[c] == MLV_GEN_NO_HOP || cand[c] == b->index)
			continue;
		h = &vip->backends[cand[c]];
		for (uint32_t k = 0; k < n; k++)
			dup |= hops[k] == h;
		if (dup || !h->usable || h->address.family != b->address.family)
			continue;
		hops[n++] = h;
	}
	return n;
}

/* Where a TCP connection of slot that this instance does not track most
 * likely lives, for a vip with MLV_VIP_F_HOLDERS: a connection that
 * moved here from another instance, or whose entry expired, started
 * before the slot's last change more often than after it while the
 * window is open. The slot's previous owner (while vip->window_open),
 * else the draining backend that would own it undrained, if usable; NULL
 * otherwise (the table's choice then, whose packets list the previous
 * owners as hops). Tracked there, the connection keeps its backend
 * directly, and its packets list the owner as a hop.
 * Pure; any thread holding the generation. */
static inline const struct mlv_gen_backend *
mlv_gen_likely_holder(const struct mlv_gen_vip *vip, uint32_t slot)
{
	uint16_t h = vip->previous && vip->window_open ?
		     vip->previous[slot] : MLV_GEN_NO_HOP;

	if (h == MLV_GEN_NO_HOP && vip->undrained) {
		h = vip->undrained[slot];
		if (h != MLV_GEN_NO_HOP && !vip->backends[h].draining)
			h = MLV_GEN_NO_HOP;
	}
	if (h == MLV_GEN_NO_HOP || !vip->backends[h].usable)
		return NULL;
	return &vip->backends[h];
}

/* The backend a new flow of slot goes to, bounded loads aside: the
 * slot's owner if usable, else its usable second choice, else NULL (what
 * the workers choose). Pure; any thread holding the generation. */
static inline const struct mlv_gen_backend *
mlv_gen_new_flow_backend(const struct mlv_gen_vip *vip, uint32_t slot)
{
	uint16_t f = vip->table[slot], s = vip->second[slot];

	if (f != MLV_GEN_NO_HOP && vip->backends[f].usable)
		return &vip->backends[f];
	if (s != MLV_GEN_NO_HOP && vip->backends[s].usable)
		return &vip->backends[s];
	return NULL;
}

/* Index of backend in gen->all_backends (for counters). */
static inline uint32_t mlv_gen_backend_index(const struct mlv_generation *gen,
					     const struct mlv_gen_backend *b)
{
	(void)gen;
	return b->all_index;
}

/* Index of vip in gen->vips (for per-VIP arrays: vip_active). */
static inline uint32_t mlv_gen_vip_index(const struct mlv_generation *gen,
					 const struct mlv_gen_vip *vip)
{
	return (uint32_t)(vip - gen->vips);
}

#endif
