/* SPDX-License-Identifier: BSD-3-Clause */
/* A generation: everything the workers need to forward packets, built by
 * the control thread from a validated config plus runtime state (health,
 * overrides, port MACs), fully validated, then published with one pointer
 * swap (control/publish/publish.h) and never modified again while workers may see
 * it. Plain C: no DPDK types, so it can be built and tested without EAL.
 *
 * Threads: mlv_gen_build/mlv_gen_free on the control thread only. The
 * look-up functions are pure reads and may be called by any thread holding
 * the generation (workers between RCU quiescent states).
 */
#ifndef MLV_GENERATION_H
#define MLV_GENERATION_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "control/config/config.h"
#include "control/generation/acl.h"
#include "control/generation/uid_map.h"
#include "dataplane/packet/counters.h"
#include "dataplane/packet/encap.h"
#include "dataplane/packet/flow_fields.h"
#include "dataplane/packet/flow_key.h"
#include "dataplane/packet/flow_limit.h"
#include "dataplane/packet/flow_tally.h"

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
				      /* source ACL (control/generation/acl.h),
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
	char name[MLV_NAME_MAX];
};

/* mlv_gen_vip.features: the features whose per-packet work is out of
 * line. */
#define MLV_VIP_F_ACL    0x01   /* acl != NULL */
#define MLV_VIP_F_QUIC   0x02   /* quic */
#define MLV_VIP_F_LIMIT  0x04   /* flow_limit.rate != 0 */
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

/* The MSS a TCP VIP's SYNs are clamped to (0 = off) for the VIP's
 * mss_clamp setting (config.h, MLV_MSS_CLAMP_*), family and mtu_room:
 * auto is what fits mtu_room behind the IP and TCP headers (mtu_room −
 * 40 for IPv4, − 60 for IPv6); an explicit N is min(N, auto). Pure; any
 * thread. */
uint16_t mlv_gen_mss_clamp(uint16_t setting, uint8_t family, uint16_t mtu_room);

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
	void *priv;                  /* builder-owned look-up structures */
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

/* By name; NULL if absent (or gen, vip or name is NULL). The VIP through
 * gen's name index (a binary search); the backend by a walk of vip's.
 * For the control plane; any thread holding gen. */
const struct mlv_gen_vip *mlv_gen_find_vip_named(const struct mlv_generation *gen,
						 const char *name);
const struct mlv_gen_backend *mlv_gen_find_backend_named(
	const struct mlv_gen_vip *vip, const char *name);

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
