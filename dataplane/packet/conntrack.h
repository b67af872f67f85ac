/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-worker connection tracking: a fixed-size, set-associative table of
 * 32-byte entries. One table belongs to one worker and is never shared, so
 * nothing here is atomic or locked. No allocation after mlv_ct_create; the
 * cost of a look-up is bounded by one bucket.
 *
 * Timeouts follow state: a TCP flow that has not completed its handshake
 * expires after handshake_timeout (a SYN flood cannot flush established
 * flows), FIN/RST shorten it to closing_timeout, UDP flows have an idle
 * timeout. Inserting into a full bucket reuses an expired entry if there
 * is one, else evicts the stalest entry, preferring not-yet-established
 * ones. A flow that has not proved itself (a SYN) never evicts one that
 * has (established TCP, UDP, fragments): when only those are left in its
 * bucket it is forwarded untracked, and tracked from its next packet on
 * (the handshake's ACK) if that proves it. Plain C.
 *
 * Why hand-rolled instead of rte_hash: rte_hash has no per-entry expiry
 * and no way to evict the stalest entry when full (an add into a full
 * table fails with -ENOSPC, so the caller would need a second structure,
 * e.g. an LRU list, plus a delete), and a miss followed by an add walks
 * the buckets twice (look-up, then add). rte_hash also keeps keys in a
 * separate key store, so a hit reads the signature bucket and then the
 * key slot: two cache lines. Here an entry holds the flow, expiry and
 * backend in 32 bytes, a whole 4-way bucket is two cache lines, and a
 * miss claims its slot in the same pass over the bucket. Measured side
 * by side by tools/bench/ct-bench (figures in docs/benchmarks.md; design in
 * docs/conntrack.md).
 */
#ifndef MLV_CONNTRACK_H
#define MLV_CONNTRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "control/base/visibility.h"
#include "control/base/error.h"
#include "dataplane/packet/flow_key.h"
#include "dataplane/packet/flow_tally.h"

enum mlv_ct_state {
	MLV_CT_FREE = 0,
	MLV_CT_TCP_OPENING,      /* SYN seen / handshake not completed */
	MLV_CT_TCP_ESTABLISHED,  /* an ACK without SYN seen */
	MLV_CT_TCP_CLOSING,      /* FIN or RST seen */
	MLV_CT_UDP,
	MLV_CT_OTHER,            /* fragments and other 3-tuple flows */
	MLV_CT__NSTATES
};

/* One tracked flow, 32 bytes. What a flow remembers is its backend, by
 * the uid the control plane gives each (VIP, backend) for the process
 * lifetime; the cached index saves a look-up while the generation has not
 * changed. The flow itself is kept in 14 bytes: an IPv4 5-tuple as it is,
 * an IPv6 one (37 bytes) as a 64-bit XXH3 fingerprint keyed by a
 * per-table random seed plus the client address's last four bytes, with
 * the protocol and whether it has ports. Two IPv6 flows that share a
 * bucket, a tag and those four bytes are taken for one another with
 * probability 2^-64, and the seed keeps senders from choosing colliding
 * tuples. Half a cache line per entry: docs/conntrack.md. */
struct mlv_ct_entry {
	uint8_t flow[14];          /* conntrack-internal (mlv_ct__flow_of) */
	uint8_t tag;               /* conntrack-internal: hash bits, a cheap
				      reject before the flow is compared */
	uint8_t state;             /* enum mlv_ct_state; FREE: no tracked
				      flow (a slot just claimed by
				      mlv_ct_lookup_or_insert is FREE until
				      mlv_ct_update). Callers never write it. */
	uint32_t expires_ms;       /* in the worker's clock (see now_ms) */
	uint32_t backend_uid;
	uint32_t cached_gen;       /* generation number backend_all_idx
				      belongs to */
	uint32_t backend_all_idx;  /* the backend's index in that generation's
				      all_backends: where the worker finds the
				      backend while the generation lasts (set
				      by the caller); the tally counts the flow
				      by backend_uid */
};

_Static_assert(sizeof(struct mlv_ct_entry) == 32, "two entries per cache line");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "the flow's last six bytes are read as the low bits of a word");

/* Entries per bucket: 4 x 32 B = 128 B, two cache lines. Measured
 * against 8 ways with tools/bench/ct-bench (docs/conntrack.md): hits, misses
 * and inserts all cost about half, because the cost is the bucket's
 * memory traffic (it is prefetched whole). The price is earlier eviction
 * when buckets overflow (about 4 % of flows at half load, against 1 %
 * with 8 ways), so size the table at twice the flows expected. */
#define MLV_CT_WAYS 4u
/* Largest table: 2^28 entries (8 GiB), so every count fits in 32 bits
 * with room for rounding. 8M entries per worker (Katran's default) is
 * 256 MiB. */
#define MLV_CT_MAX_ENTRIES (1u << 28)
/* Longest timeout. Expiry times are compared modulo 2^32 ms, which is
 * unambiguous while every expiry lies within 2^31 ms (~24.8 days) of now;
 * capping timeouts at 2^30 ms (~12.4 days) leaves the sweep half of that
 * window to reclaim expired entries. */
#define MLV_CT_MAX_TIMEOUT_MS (1u << 30)

/* TCP flags as mlv_pkt.tcp_flags carries them. */
#define MLV_TCP_FIN 0x01
#define MLV_TCP_SYN 0x02
#define MLV_TCP_RST 0x04
#define MLV_TCP_ACK 0x10

struct mlv_ct_params {
	uint32_t entries;                 /* rounded up to a multiple of the bucket size */
	uint32_t tcp_timeout_ms;
	uint32_t tcp_handshake_timeout_ms;
	uint32_t tcp_closing_timeout_ms;
	uint32_t udp_timeout_ms;
	uint32_t other_timeout_ms;
};

struct mlv_ct_stats {
	uint64_t inserts;
	uint64_t evictions;     /* live entries overwritten because a bucket was full */
	uint64_t expired_reused;
	uint64_t swept;         /* expired entries reclaimed by mlv_ct_sweep */
	uint64_t removed;       /* entries dropped by mlv_ct_remove */
	uint64_t untracked;     /* unproven new flows left out: their bucket
				   held only live established/UDP/other flows */
};

struct mlv_ct;

/* Check p: entries in 1..MLV_CT_MAX_ENTRIES, every timeout in
 * 1..MLV_CT_MAX_TIMEOUT_MS. Returns MLV_OK, or MLV_E_INVAL (p NULL) /
 * MLV_E_RANGE with *detail (if detail is non-NULL) set to a static
 * sentence naming the bad field. Any thread. */
enum mlv_err mlv_ct_check_params(const struct mlv_ct_params *p,
				 const char **detail);

/* Entries a table created with `entries` holds (entries rounded up to a
 * multiple of MLV_CT_WAYS), or 0 when entries is out of range. Any
 * thread. */
uint32_t mlv_ct_capacity_for(uint32_t entries);

/* Bytes mlv_ct_create asks alloc for: 32 per entry plus a fixed header
 * of a few cache lines. 0 when entries is out of range. Any thread. */
size_t mlv_ct_mem_size(uint32_t entries);

/* Memory for the table comes from alloc (e.g. rte_zmalloc_socket wrapped,
 * or aligned_alloc in tests); it must return zeroed memory, ideally
 * 128-byte aligned (other alignments work: the table aligns its buckets
 * inside the block, which has 128 bytes of slack for that). Each table
 * draws a random seed for its IPv6 fingerprints (getrandom). The table is built
 * without touching the entries, so lazily zeroed memory (calloc, mmap)
 * costs nothing until used. Returns NULL on allocation failure or bad
 * params (mlv_ct_check_params says which). Control thread, before the
 * worker starts. */
struct mlv_ct *mlv_ct_create(const struct mlv_ct_params *p,
			     void *(*alloc)(size_t size, void *ctx),
			     void (*release)(void *ptr, void *ctx), void *ctx);
/* Give the memory back through release. NULL is a no-op. Control
 * thread, after the worker stopped. */
void mlv_ct_destroy(struct mlv_ct *ct);

/* Prefetch the bucket for hash (its two cache lines); call a few
 * packets ahead, e.g. for the whole
 * burst before the first look-up. The whole bucket rather than the one
 * line a hit usually needs: measured (docs/conntrack.md), a look-up that
 * finds its flow elsewhere in the bucket, a miss, an insert and an
 * eviction all read the other lines, and the stall on those costs more
 * than the bandwidth of fetching them early. Returns the bucket, for
 * mlv_ct_probe_bucket. Owner worker. */
static inline struct mlv_ct_entry *mlv_ct_prefetch(const struct mlv_ct *ct,
						   uint32_t hash);

/* Find the live entry for key, or claim one for it. *is_new says which;
 * a new entry has state FREE and the key/hash set, and the caller fills
 * the backend then calls mlv_ct_update, with no other call on this table
 * in between. Never fails: a full bucket evicts. now_ms is the worker's
 * millisecond clock (wraps; comparisons are modular). A new entry not
 * followed by mlv_ct_update is already expired (expires_ms == now_ms), so
 * it is reused or swept like any other; the caller may also mlv_ct_remove
 * it.
 *
 * When the bucket holds only live proven flows, the new entry is a
 * per-table spare outside the table: mlv_ct_update then either moves the
 * flow into the bucket, evicting the stalest, if the packet proves it
 * (any state but OPENING), or leaves it untracked. Either way the caller
 * must not use a new entry after mlv_ct_update. Owner worker only. */
static inline struct mlv_ct_entry *
mlv_ct_lookup_or_insert(struct mlv_ct *ct, const struct mlv_flow_key *key,
			uint32_t hash, uint32_t now_ms, bool *is_new);

/* mlv_ct_lookup_or_insert in two steps, so that a worker can read a
 * flow's bucket one packet ahead of changing it: mlv_ct_probe reads the
 * bucket and decides (the live entry holding the flow, or the slot a
 * claim would take) into *pr, and changes nothing; mlv_ct_take, called
 * with the same key, hash and now_ms, acts on that decision. A probe
 * stays valid until the table changes in its bucket: between the two,
 * other calls may change only other buckets (pr->bucket is the probed
 * one; compare it with another probe's to tell). Owner worker only:
 * plain loads and stores, no ordering. */
struct mlv_ct_probe {
	struct mlv_ct_entry *bucket;
	struct mlv_ct_entry *hit;   /* the live entry of the flow, or NULL */
	uint32_t least;             /* on a miss: the claim's key (conntrack.c) */
};

static inline void mlv_ct_probe(const struct mlv_ct *ct,
				const struct mlv_flow_key *key, uint32_t hash,
				uint32_t now_ms, struct mlv_ct_probe *pr);

/* mlv_ct_probe given the flow's bucket, as mlv_ct_prefetch(ct, hash)
 * returned it: a worker that prefetched the bucket a pass earlier keeps
 * the pointer rather than computing it again. Owner worker only, plain
 * loads and stores, like mlv_ct_probe. */
static inline void mlv_ct_probe_bucket(const struct mlv_ct *ct,
				       struct mlv_ct_entry *bucket,
				       const struct mlv_flow_key *key,
				       uint32_t hash, uint32_t now_ms,
				       struct mlv_ct_probe *pr);

/* The entry for the probed flow, as mlv_ct_lookup_or_insert returns it
 * (the same contract after it). */
static inline struct mlv_ct_entry *
mlv_ct_take(struct mlv_ct *ct, const struct mlv_flow_key *key, uint32_t hash,
	    uint32_t now_ms, const struct mlv_ct_probe *pr, bool *is_new);

/* Find without inserting; NULL if absent or expired. Owner worker, or the
 * control thread while the worker is stopped (tests, tools). */
static inline struct mlv_ct_entry *
mlv_ct_lookup(const struct mlv_ct *ct, const struct mlv_flow_key *key,
	      uint32_t hash, uint32_t now_ms);

/* The state a flow whose entry is in `state` moves to on a packet with
 * tcp_flags (ignored unless key is a TCP 5-tuple):
 *   TCP (ports set): FIN or RST -> CLOSING; in CLOSING, a SYN without ACK
 *   starts over (OPENING: the tuple is reused), anything else stays
 *   CLOSING; SYN -> OPENING (ESTABLISHED stays ESTABLISHED); ACK without
 *   SYN -> ESTABLISHED; no flags keep the state (FREE -> OPENING).
 *   UDP (ports set) -> UDP. Anything else, including fragments (ports 0,
 *   3-tuple keys) -> OTHER.
 * Pure; any thread. */
static inline enum mlv_ct_state
mlv_ct_next_state(const struct mlv_flow_key *key, enum mlv_ct_state state,
		  uint8_t tcp_flags);

/* Advance the entry's state machine for a packet with tcp_flags (0 for
 * non-TCP) and set its expiry to now_ms + the new state's timeout. For
 * the spare entry of a full bucket (see mlv_ct_lookup_or_insert), decide
 * whether the flow enters the table. Returns true if the flow is tracked
 * (false only when the spare stayed out). Owner worker. */
static inline bool mlv_ct_update(struct mlv_ct *ct, struct mlv_ct_entry *e,
				 uint8_t tcp_flags, uint32_t now_ms);

/* mlv_ct_take for a probe that found no entry (pr->hit NULL), the
 * backend fields set, then mlv_ct_update, in one call that writes the
 * entry once, whole, knowing it new (its state machine folds to the
 * flow's first state). For a worker that picks the backend before it
 * claims (so that a frame no backend can take evicts nothing). Returns
 * as mlv_ct_update. Owner worker. */
static inline bool mlv_ct_insert(struct mlv_ct *ct,
				 const struct mlv_flow_key *key, uint32_t hash,
				 uint32_t now_ms, const struct mlv_ct_probe *pr,
				 uint32_t backend_uid, uint32_t cached_gen,
				 uint32_t backend_all_idx, uint8_t tcp_flags);

/* The tracked flow in e now goes to backend_uid: its count in the tally
 * moves there. For a flow re-selected because its backend left or
 * stopped taking flows. Owner worker. */
static inline void mlv_ct_rebind(struct mlv_ct *ct, struct mlv_ct_entry *e,
				 uint32_t backend_uid);

/* The tally the table keeps its tracked flows in (flow_tally.h), by
 * backend uid and class, and by VIP: a flow counts from the moment it is
 * tracked (mlv_ct_insert, or mlv_ct_update of a claimed slot) until the
 * table lets it go (evicted, reused after expiring, swept, removed:
 * where the release hook below runs), moving class when its state does
 * and backend on mlv_ct_rebind. In the table rather than in a hook
 * because an indirect call per eviction costs a new flow in a full table
 * 18 instructions more (callgrind; docs/benchmarks.md, "Why the data
 * path is as it is"). NULL unsets it. Control thread before the worker
 * starts (the tally then outlives the table's use of it). */
static inline void mlv_ct_set_tally(struct mlv_ct *ct,
				    struct mlv_flow_tally *tally);

/* Called with an entry that held a tracked flow (one mlv_ct_update made
 * live, state != FREE) just before the table lets go of it: evicted,
 * reused or swept after expiring, or removed. The entry is still intact
 * (backend, cached generation) and must not be modified. For callers that
 * keep per-backend counts of tracked flows (bounded loads). */
typedef void (*mlv_ct_release_fn)(void *ctx, const struct mlv_ct_entry *e);

/* Install (or, with fn NULL, remove) the release hook; it runs on the
 * owner worker inside mlv_ct_lookup_or_insert, mlv_ct_update,
 * mlv_ct_remove and mlv_ct_sweep. Control thread before the worker
 * starts, or the owner worker. */
void mlv_ct_set_release_hook(struct mlv_ct *ct, mlv_ct_release_fn fn,
			     void *ctx);

/* Drop the entry (the caller saw it is unusable and re-selects later).
 * A NULL, already-free or foreign entry is ignored. Owner worker. */
void mlv_ct_remove(struct mlv_ct *ct, struct mlv_ct_entry *e);

/* Reclaim expired entries in up to n_buckets buckets, continuing where the
 * previous call stopped, so occupancy stays exact without a full scan.
 * Returns the number reclaimed. The whole table must be swept at least
 * once every 2^30 ms (see MLV_CT_MAX_TIMEOUT_MS); in practice the worker
 * sweeps it every few seconds. Owner worker, between bursts. */
uint32_t mlv_ct_sweep(struct mlv_ct *ct, uint32_t now_ms, uint32_t n_buckets);

/* What an entry keeps of its flow's key, for listings (maglevctl conns):
 * an IPv4 flow whole; an IPv6 flow as a keyed fingerprint, of which only
 * the protocol and the client address's last four bytes can be read
 * back (the 32-byte entry's price, docs/conntrack.md). */
struct mlv_ct_view {
	uint8_t family;      /* 4 or 6 */
	uint8_t proto;
	bool ports;          /* false: a 3-tuple key (fragments, ICMP) */
	uint8_t src[4];      /* IPv4: the client; IPv6: its last 4 bytes */
	uint8_t dst[4];      /* IPv4: the VIP's address */
	uint16_t sport;      /* IPv4 with ports, network byte order */
	uint16_t dport;
};

/* Read e's flow back (e must hold one: state not FREE). Pure; any
 * thread holding a copy of the entry. */
void mlv_ct_entry_view(const struct mlv_ct_entry *e, struct mlv_ct_view *v);

/* Copy the entries holding a live flow (state not FREE, not expired at
 * now_ms) of buckets first .. first + max_buckets - 1 into out, whole
 * buckets only, stopping before a bucket whose flows might not fit in
 * cap; *n receives how many were copied. Returns the next bucket to
 * scan, or 0 once the last bucket was scanned (a listing pages through
 * the table with it). Owner worker: a bounded pause (max_buckets
 * buckets read). */
uint32_t mlv_ct_scan(const struct mlv_ct *ct, uint32_t first,
		     uint32_t max_buckets, uint32_t now_ms,
		     struct mlv_ct_entry *out, uint32_t cap, uint32_t *n);

/* The idle timeout of a flow in state (0 for FREE). Any thread. */
uint32_t mlv_ct_state_timeout_ms(const struct mlv_ct *ct, uint8_t state);

/* Entries in use (live or not yet swept), capacity, and counters. Owner
 * worker; other threads may read them racily as statistics. */
uint32_t mlv_ct_occupancy(const struct mlv_ct *ct);
uint32_t mlv_ct_capacity(const struct mlv_ct *ct);
const struct mlv_ct_stats *mlv_ct_get_stats(const struct mlv_ct *ct);

/* ---- Saving and restoring a table across a restart (daemon/runtime/
 * flow_state.h). A flow's bucket follows from its hash and the table's
 * size, and an IPv6 flow's fingerprint from the table's seed, so a
 * table of the same capacity with the same seed takes the entries back
 * where they were, without the flows' keys. ---- */

/* A tracked flow as a table lends it out to be saved. */
struct mlv_ct_saved {
	struct mlv_ct_entry entry;  /* as in the table; on restore its
				       backend_uid is the uid to count it
				       under, cached_gen and backend_all_idx
				       are ignored (reset to none) */
	uint32_t slot;              /* where it was: bucket x MLV_CT_WAYS +
				       way, 0 .. capacity - 1 */
	uint32_t left_ms;           /* until it expires, 1 ..
				       MLV_CT_MAX_TIMEOUT_MS */
};

/* The seed of ct's IPv6 fingerprints. Any thread. */
uint64_t mlv_ct_seed(const struct mlv_ct *ct);

/* Give ct the seed of a saved table, so that the saved IPv6 entries
 * match their flows again. MLV_E_BUSY if ct already tracks a flow (its
 * fingerprints would stop matching). Control thread before the worker
 * starts, or the owner worker before its first packet. */
enum mlv_err mlv_ct_set_seed(struct mlv_ct *ct, uint64_t seed);

/* mlv_ct_scan for saving: the live flows of buckets first ..
 * first + max_buckets - 1 into out as mlv_ct_saved (slot and time left
 * at now_ms), whole buckets only; returns the next bucket, or 0 after the
 * last. Owner worker, or the control thread after the worker stopped. */
uint32_t mlv_ct_export(const struct mlv_ct *ct, uint32_t first,
		       uint32_t max_buckets, uint32_t now_ms,
		       struct mlv_ct_saved *out, uint32_t cap, uint32_t *n);

/* Put a saved flow back: into its saved way if that is free or expired,
 * else another free or expired way of its bucket (never over a live
 * flow; the saved way is the one its look-ups try first), in its saved
 * state, expiring at now_ms + s->left_ms
 * (at most the state's timeout here), counted in the tally under
 * s->entry.backend_uid. Returns false, changing nothing, when the
 * bucket has no room, s->slot is past the table or the state is not a
 * tracked one. The table must have the saved table's capacity and seed
 * for the flow to be found. Owner worker, or the control thread before
 * the worker starts. */
bool mlv_ct_restore(struct mlv_ct *ct, const struct mlv_ct_saved *s,
		    uint32_t now_ms);

/* Which bucket (0 .. capacity / MLV_CT_WAYS - 1) flows with this hash
 * share; for tests and tools that need to fill one bucket on purpose.
 * Pure; any thread. */
uint32_t mlv_ct_bucket_index(const struct mlv_ct *ct, uint32_t hash);

/* ---- Implementation of the inline hot path. Internal: callers use only
 * the functions above, never these fields. ---- */

struct mlv_ct {
	struct mlv_ct_entry *entries;   /* n_buckets * MLV_CT_WAYS, each bucket
					   128-byte aligned (two lines) */
	uint32_t n_buckets;
	uint32_t occupancy;
	uint32_t timeout_ms[MLV_CT__NSTATES];   /* by enum mlv_ct_state */
	uint32_t sweep_cursor;                  /* next bucket mlv_ct_sweep visits */
	struct mlv_ct_entry *pending_victim;    /* the slot spare would take */
	struct mlv_ct_stats stats;
	struct mlv_ct_entry spare;              /* see mlv_ct_lookup_or_insert */
	void *block;                            /* what alloc returned */
	void (*release)(void *ptr, void *ctx);
	void *ctx;
	mlv_ct_release_fn on_release;           /* see mlv_ct_set_release_hook */
	void *on_release_ctx;
	uint64_t seed;                          /* keys IPv6 fingerprints */
	struct mlv_flow_tally *tally;           /* see mlv_ct_set_tally */
};

/* States whose flows count as inactive in the tally (flow_tally.h). */
#define MLV_CT__INACTIVE_STATES \
	((1u << MLV_CT_TCP_OPENING) | (1u << MLV_CT_TCP_CLOSING))

static inline uint32_t mlv_ct__class(uint8_t state)
{
	return (MLV_CT__INACTIVE_STATES >> (state & 15u)) & 1u;
}

/* The VIP b's flows count in is not the one the control thread binds it
 * to now (its VIP got or lost max_load): move all of b's flows from the
 * old VIP's count to the new one's, so that neither drifts. Rare: once
 * per backend and change. */
MLV_HIDDEN
void mlv_ct__tally_rebind(struct mlv_flow_tally *t, struct mlv_flow_tally *b,
			  uint32_t vip);

/* b's VIP as bound now (flow_tally.h): its flows are counted there. One
 * compare of two fields in b's line; the move is out of line. */
static inline uint32_t mlv_ct__tally_vip(struct mlv_flow_tally *t,
					 struct mlv_flow_tally *b)
{
	uint32_t vip = __atomic_load_n(&b->vip_uid, __ATOMIC_RELAXED);

	if (__builtin_expect(vip != b->counted, 0))
		mlv_ct__tally_rebind(t, b, vip);
	return vip;
}

/* A flow in state tracked to uid enters the tally. */
static inline void mlv_ct__tally_on(struct mlv_flow_tally *t, uint32_t uid,
				    uint8_t state)
{
	struct mlv_flow_tally *b = &t[mlv_tally_slot(uid)];
	uint32_t vip = mlv_ct__tally_vip(t, b);

	b->n[mlv_ct__class(state)]++;
	if (vip != 0)
		t[mlv_tally_slot(vip)].vip_flows++;
}

/* ... and leaves it (never below zero). */
static inline void mlv_ct__tally_off(struct mlv_flow_tally *t, uint32_t uid,
				     uint8_t state)
{
	struct mlv_flow_tally *b = &t[mlv_tally_slot(uid)];
	uint32_t vip = mlv_ct__tally_vip(t, b);
	uint32_t *c = &b->n[mlv_ct__class(state)];

	*c -= *c > 0;
	if (vip != 0) {
		uint32_t *v = &t[mlv_tally_slot(vip)].vip_flows;

		*v -= *v > 0;
		/* the last flow gone: counted in no VIP, so that an empty
		 * slot reads all zero (mlv_flow_tally_slot_empty) */
		if ((b->n[MLV_TALLY_ACTIVE] | b->n[MLV_TALLY_INACTIVE]) == 0)
			b->counted = 0;
	}
}

/* Internal, for tests: one pass over bucket b for a flow with tag whose
 * preferred way is w, at now_ms (see conntrack_claim_internal.h): returns the
 * least claim key and sets *tag_ways (bit j: way j's tag is tag) as the
 * table computes them; *scalar_least and *scalar_tag_ways receive the same
 * computed one way at a time, which must be equal. Any thread; reads b
 * only. */
MLV_HIDDEN
uint32_t mlv_ct__scan(const struct mlv_ct_entry *b, uint32_t w, uint8_t tag,
		      uint32_t now_ms, uint32_t *tag_ways, uint32_t *scalar_least,
		      uint32_t *scalar_tag_ways);

/* mlv_ct_update for the spare: enter the table (true) or stay out. */
MLV_HIDDEN
bool mlv_ct__update_spare(struct mlv_ct *ct, uint8_t tcp_flags,
			  uint32_t now_ms);

/* True while expires_ms is after now_ms, modulo 2^32. */
static inline bool mlv_ct__live(uint32_t expires_ms, uint32_t now_ms)
{
	return (int32_t)(expires_ms - now_ms) > 0;
}

/* The bucket: multiply-shift range reduction of the hash's high bits, so
 * any bucket count works without a division. */
static inline struct mlv_ct_entry *mlv_ct__bucket(const struct mlv_ct *ct,
						  uint32_t hash)
{
	uint32_t b = (uint32_t)(((uint64_t)hash * ct->n_buckets) >> 32);

	return &ct->entries[(size_t)b * MLV_CT_WAYS];
}

/* Each flow prefers one way of its bucket (the hash's low bits); inserts
 * take the first usable slot from there and look-ups scan from there, so
 * until a bucket fills up a hit compares one entry. */
static inline uint32_t mlv_ct__first_way(uint32_t hash)
{
	return hash & (MLV_CT_WAYS - 1);
}

/* A flow as the table keys it: the 14 bytes of mlv_ct_entry.flow, lo
 * the first eight, hi the last six in its low 48 bits (bits 32-39 the
 * protocol, 40-47 the kind: family, and MLV_CT__NO_PORTS). IPv4: lo the
 * addresses, hi's low 32 bits the ports. IPv6: lo the fingerprint, hi's
 * low 32 bits the client address's last four bytes. */
struct mlv_ct__flow {
	uint64_t lo, hi;
};

#define MLV_CT__HI_MASK 0xffffffffffffull
#define MLV_CT__NO_PORTS 0x80u   /* in the kind: a 3-tuple (fragments, ICMP) */

/* The IPv6 (non-IPv4) case of mlv_ct__flow_of: out of line, with XXH3. */
MLV_HIDDEN
void mlv_ct__flow_of6(const struct mlv_ct *ct, const struct mlv_flow_key *k,
		      struct mlv_ct__flow *f);

static inline void mlv_ct__flow_of(const struct mlv_ct *ct,
				   const struct mlv_flow_key *k,
				   struct mlv_ct__flow *f)
{
	if (__builtin_expect(k->family == 4, 1)) {
		uint32_t src, dst, ports;

		memcpy(&src, k->src, 4);
		memcpy(&dst, k->dst, 4);
		memcpy(&ports, &k->sport, 4);
		f->lo = (uint64_t)dst << 32 | src;
		f->hi = ports | (uint64_t)k->proto << 32 |
			(uint64_t)(4u | (ports == 0 ? MLV_CT__NO_PORTS : 0)) << 40;
	} else {
		mlv_ct__flow_of6(ct, k, f);
	}
}

/* Which hash bits the tag holds (the bucket takes the high bits, the
 * preferred way the low two). */
static inline uint8_t mlv_ct__tag(uint32_t hash)
{
	return (uint8_t)(hash >> 8);
}

/* e holds the live flow key (whose tag is tag). The flow is built only
 * when the tag matches: a new flow's look-up (no tag matches, but for
 * one way in 64) never builds it. */
static inline bool mlv_ct__holds(const struct mlv_ct *ct,
				 const struct mlv_ct_entry *e,
				 const struct mlv_flow_key *key, uint8_t tag,
				 uint32_t now_ms)
{
	struct mlv_ct__flow f;
	uint64_t lo, hi;

	if (e->tag != tag)
		return false;
	mlv_ct__flow_of(ct, key, &f);
	memcpy(&lo, e->flow, 8);
	memcpy(&hi, e->flow + 8, 8);
	return ((lo ^ f.lo) | ((hi ^ f.hi) & MLV_CT__HI_MASK)) == 0 &&
	       e->state != MLV_CT_FREE && mlv_ct__live(e->expires_ms, now_ms);
}

static inline struct mlv_ct_entry *mlv_ct__find(const struct mlv_ct *ct,
						const struct mlv_flow_key *key,
						uint32_t hash, uint32_t now_ms)
{
	struct mlv_ct_entry *b = mlv_ct__bucket(ct, hash);
	uint32_t w = mlv_ct__first_way(hash);

	for (uint32_t i = 0; i < MLV_CT_WAYS; i++) {
		struct mlv_ct_entry *e = &b[(w + i) & (MLV_CT_WAYS - 1)];

		if (mlv_ct__holds(ct, e, key, mlv_ct__tag(hash), now_ms))
			return e;
	}
	return NULL;
}

/* A prefetch the compiler keeps. GCC 12 treats __builtin_prefetch as
 * free of side effects and deletes a loop, or an inlined function, made
 * only of prefetches (here the bucket would never be prefetched); the
 * empty volatile asm is a side effect it must keep, and costs nothing. */
static inline void mlv_ct__prefetch_line(const void *p)
{
	__builtin_prefetch(p);
	__asm__ __volatile__("" : : "r"(p));
}

static inline struct mlv_ct_entry *mlv_ct_prefetch(const struct mlv_ct *ct,
						   uint32_t hash)
{
	struct mlv_ct_entry *b = mlv_ct__bucket(ct, hash);

	mlv_ct__prefetch_line(b);
	mlv_ct__prefetch_line((const char *)b + 64);
	return b;
}

/* The slow paths of mlv_ct_probe (mlv_ct__probe_rest: everything but a
 * hit in the flow's preferred way) and mlv_ct_take (mlv_ct__claim), inline
 * too; they need the helpers above. */
#include "dataplane/packet/conntrack_claim_internal.h"

/* Inline: only the preferred way, where almost every hit is found until
 * the bucket fills up. The rest (other ways, and the slot a claim would
 * take) is mlv_ct__probe_rest. */
static inline void mlv_ct_probe_bucket(const struct mlv_ct *ct,
				       struct mlv_ct_entry *b,
				       const struct mlv_flow_key *key,
				       uint32_t hash, uint32_t now_ms,
				       struct mlv_ct_probe *pr)
{
	struct mlv_ct_entry *e = &b[mlv_ct__first_way(hash)];

	pr->bucket = b;
	if (__builtin_expect(mlv_ct__holds(ct, e, key, mlv_ct__tag(hash), now_ms),
			     1)) {
		pr->hit = e;
		return;
	}
	mlv_ct__probe_rest(ct, key, hash, now_ms, pr);
}

static inline void mlv_ct_probe(const struct mlv_ct *ct,
				const struct mlv_flow_key *key, uint32_t hash,
				uint32_t now_ms, struct mlv_ct_probe *pr)
{
	mlv_ct_probe_bucket(ct, mlv_ct__bucket(ct, hash), key, hash, now_ms, pr);
}

static inline struct mlv_ct_entry *
mlv_ct_take(struct mlv_ct *ct, const struct mlv_flow_key *key, uint32_t hash,
	    uint32_t now_ms, const struct mlv_ct_probe *pr, bool *is_new)
{
	*is_new = pr->hit == NULL;
	if (__builtin_expect(pr->hit != NULL, 1))
		return pr->hit;
	return mlv_ct__claim(ct, key, hash, now_ms, pr);
}

static inline struct mlv_ct_entry *
mlv_ct_lookup_or_insert(struct mlv_ct *ct, const struct mlv_flow_key *key,
			uint32_t hash, uint32_t now_ms, bool *is_new)
{
	struct mlv_ct_probe pr;

	mlv_ct_probe(ct, key, hash, now_ms, &pr);
	return mlv_ct_take(ct, key, hash, now_ms, &pr, is_new);
}

static inline struct mlv_ct_entry *
mlv_ct_lookup(const struct mlv_ct *ct, const struct mlv_flow_key *key,
	      uint32_t hash, uint32_t now_ms)
{
	return mlv_ct__find(ct, key, hash, now_ms);
}

static inline void mlv_ct_set_tally(struct mlv_ct *ct,
				    struct mlv_flow_tally *tally)
{
	ct->tally = tally;
}

static inline void mlv_ct_rebind(struct mlv_ct *ct, struct mlv_ct_entry *e,
				 uint32_t backend_uid)
{
	if (ct->tally && e->state != MLV_CT_FREE) {
		mlv_ct__tally_off(ct->tally, e->backend_uid, e->state);
		mlv_ct__tally_on(ct->tally, backend_uid, e->state);
	}
	e->backend_uid = backend_uid;
}

/* mlv_ct_update's rare case: the state changes. A claimed slot's flow
 * enters the table and the tally; a tracked one may change class. */
static inline void mlv_ct__state_changed(struct mlv_ct *ct,
					 const struct mlv_ct_entry *e,
					 uint8_t old, uint8_t s)
{
	if (old == MLV_CT_FREE) {
		ct->occupancy++;   /* a new flow enters */
		if (ct->tally)
			mlv_ct__tally_on(ct->tally, e->backend_uid, s);
	} else if (ct->tally && mlv_ct__class(old) != mlv_ct__class(s)) {
		/* the same backend, the same VIP: only the class moves */
		struct mlv_flow_tally *b =
			&ct->tally[mlv_tally_slot(e->backend_uid)];
		uint32_t *from = &b->n[mlv_ct__class(old)];

		*from -= *from > 0;
		b->n[mlv_ct__class(s)]++;
	}
}

/* mlv_ct_next_state on what the table keeps of a flow: whether it has
 * ports, and its protocol. */
static inline enum mlv_ct_state
mlv_ct__next(bool no_ports, uint8_t proto, enum mlv_ct_state state,
	     uint8_t tcp_flags)
{
	if (no_ports)
		return MLV_CT_OTHER;
	if (proto == 17 /* IPPROTO_UDP */)
		return MLV_CT_UDP;
	if (proto != 6 /* IPPROTO_TCP */)
		return MLV_CT_OTHER;

	bool syn_only = (tcp_flags & (MLV_TCP_SYN | MLV_TCP_ACK)) == MLV_TCP_SYN;

	if (tcp_flags & (MLV_TCP_FIN | MLV_TCP_RST))
		return MLV_CT_TCP_CLOSING;
	if (state == MLV_CT_TCP_CLOSING)
		return syn_only ? MLV_CT_TCP_OPENING : MLV_CT_TCP_CLOSING;
	if (tcp_flags & MLV_TCP_SYN)
		return state == MLV_CT_TCP_ESTABLISHED ? MLV_CT_TCP_ESTABLISHED
						       : MLV_CT_TCP_OPENING;
	if (tcp_flags & MLV_TCP_ACK)
		return MLV_CT_TCP_ESTABLISHED;
	return state == MLV_CT_FREE ? MLV_CT_TCP_OPENING : state;
}

static inline enum mlv_ct_state
mlv_ct_next_state(const struct mlv_flow_key *key, enum mlv_ct_state state,
		  uint8_t tcp_flags)
{
	return mlv_ct__next((key->sport | key->dport) == 0, key->proto, state,
			    tcp_flags);
}

/* The next state of the flow in e (see mlv_ct__flow) from state. */
static inline enum mlv_ct_state
mlv_ct__next_from(const struct mlv_ct_entry *e, enum mlv_ct_state state,
		  uint8_t tcp_flags)
{
	uint64_t hi;

	memcpy(&hi, e->flow + 8, 8);
	return mlv_ct__next((hi >> 40) & MLV_CT__NO_PORTS, (uint8_t)(hi >> 32),
			    state, tcp_flags);
}

static inline bool mlv_ct_update(struct mlv_ct *ct, struct mlv_ct_entry *e,
				 uint8_t tcp_flags, uint32_t now_ms)
{
	if (__builtin_expect(e == &ct->spare, 0))
		return mlv_ct__update_spare(ct, tcp_flags, now_ms);

	uint8_t old = e->state;
	enum mlv_ct_state s =
		mlv_ct__next_from(e, (enum mlv_ct_state)old, tcp_flags);

	if (__builtin_expect(old != s, 0))
		mlv_ct__state_changed(ct, e, old, (uint8_t)s);
	e->state = (uint8_t)s;
	e->expires_ms = now_ms + ct->timeout_ms[s];
	return true;
}

static inline bool mlv_ct_insert(struct mlv_ct *ct,
				 const struct mlv_flow_key *key, uint32_t hash,
				 uint32_t now_ms, const struct mlv_ct_probe *pr,
				 uint32_t backend_uid, uint32_t cached_gen,
				 uint32_t backend_all_idx, uint8_t tcp_flags)
{
	struct mlv_ct_entry *victim = NULL;
	struct mlv_ct_entry *e = mlv_ct__vacate(ct, hash, pr, &victim);
	enum mlv_ct_state s;

	if (__builtin_expect(e == NULL, 0)) {
		e = mlv_ct__claim_spare(ct, victim, key, hash, now_ms);
		e->backend_uid = backend_uid;
		e->cached_gen = cached_gen;
		e->backend_all_idx = backend_all_idx;
		return mlv_ct__update_spare(ct, tcp_flags, now_ms);
	}
	s = mlv_ct_next_state(key, MLV_CT_FREE, tcp_flags);
	mlv_ct__write_flow(ct, e, key, mlv_ct__tag(hash), s);
	e->expires_ms = now_ms + ct->timeout_ms[s];
	e->backend_uid = backend_uid;
	e->cached_gen = cached_gen;
	e->backend_all_idx = backend_all_idx;
	ct->occupancy++;
	if (ct->tally)
		mlv_ct__tally_on(ct->tally, backend_uid, (uint8_t)s);
	return true;
}

#endif
