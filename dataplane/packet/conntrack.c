/* SPDX-License-Identifier: BSD-3-Clause */
/* Connection tracking: creation, the spare (a claim in a bucket full of
 * proven flows), removal and the incremental sweep. Look-up and claim
 * are inline in conntrack.h and conntrack_claim_internal.h.
 * Design and measurements: docs/conntrack.md. */
#include "dataplane/packet/conntrack.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <sys/random.h>
/* Inline: the 40-byte key's length is then known where XXH3 picks its
 * path, and no call goes through the shared library's PLT. */
#define XXH_INLINE_ALL
#include <xxhash.h>

/* The table header sits in front of the entries in the same block,
 * padded to whole buckets so that each bucket is two aligned cache lines
 * (a bucket across three lines would cost a third prefetch). */
#define MLV_CT_ALIGN (MLV_CT_WAYS * sizeof(struct mlv_ct_entry))
#define MLV_CT_HEADER_SIZE \
	((sizeof(struct mlv_ct) + MLV_CT_ALIGN - 1) & ~(size_t)(MLV_CT_ALIGN - 1))

_Static_assert(MLV_CT_WAYS * sizeof(struct mlv_ct_entry) == 128,
	       "a bucket is two cache lines");

enum mlv_err mlv_ct_check_params(const struct mlv_ct_params *p,
				 const char **detail)
{
	static const struct {
		size_t offset;
		const char *what;
	} timeouts[] = {
		{offsetof(struct mlv_ct_params, tcp_timeout_ms),
		 "tcp timeout must be between 1 ms and 2^30 ms"},
		{offsetof(struct mlv_ct_params, tcp_handshake_timeout_ms),
		 "tcp handshake timeout must be between 1 ms and 2^30 ms"},
		{offsetof(struct mlv_ct_params, tcp_closing_timeout_ms),
		 "tcp closing timeout must be between 1 ms and 2^30 ms"},
		{offsetof(struct mlv_ct_params, udp_timeout_ms),
		 "udp timeout must be between 1 ms and 2^30 ms"},
		{offsetof(struct mlv_ct_params, other_timeout_ms),
		 "other (fragment) timeout must be between 1 ms and 2^30 ms"},
	};
	const char *unused;

	if (detail == NULL)
		detail = &unused;
	*detail = NULL;
	if (p == NULL) {
		*detail = "no conntrack parameters";
		return MLV_E_INVAL;
	}
	if (p->entries == 0 || p->entries > MLV_CT_MAX_ENTRIES) {
		*detail = "entries must be between 1 and 2^28";
		return MLV_E_RANGE;
	}
	for (size_t i = 0; i < sizeof(timeouts) / sizeof(timeouts[0]); i++) {
		uint32_t t;

		memcpy(&t, (const char *)p + timeouts[i].offset, sizeof(t));
		if (t == 0 || t > MLV_CT_MAX_TIMEOUT_MS) {
			*detail = timeouts[i].what;
			return MLV_E_RANGE;
		}
	}
	return MLV_OK;
}

uint32_t mlv_ct_capacity_for(uint32_t entries)
{
	if (entries == 0 || entries > MLV_CT_MAX_ENTRIES)
		return 0;
	return (entries + MLV_CT_WAYS - 1) / MLV_CT_WAYS * MLV_CT_WAYS;
}

size_t mlv_ct_mem_size(uint32_t entries)
{
	uint32_t cap = mlv_ct_capacity_for(entries);

	if (cap == 0)
		return 0;
	/* header + slack to align a block that is not bucket-aligned */
	return MLV_CT_HEADER_SIZE + MLV_CT_ALIGN +
	       (size_t)cap * sizeof(struct mlv_ct_entry);
}

/* A secret per table, so that no sender can choose IPv6 tuples whose
 * fingerprints collide. The kernel's entropy, else (never seen) whatever
 * varies: the time and the table's address. */
static uint64_t fingerprint_seed(const struct mlv_ct *ct)
{
	uint64_t seed;
	struct timespec ts;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == (ssize_t)sizeof(seed))
		return seed;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return XXH3_64bits_withSeed(&ts, sizeof(ts), (uint64_t)(uintptr_t)ct);
}

/* An IPv6 flow: XXH3-64 of the whole key under the table's seed, then
 * the client address's last four bytes as they are (where clients of one
 * network differ), protocol and kind. XXH3-64 rather than -128: half the
 * instructions (the 128-bit hash costs 143 a packet, callgrind), and two
 * flows must still share bucket, tag and those four bytes before the 64
 * bits are even compared. */
void mlv_ct__flow_of6(const struct mlv_ct *ct, const struct mlv_flow_key *k,
		      struct mlv_ct__flow *f)
{
	uint32_t kind = k->family | ((k->sport | k->dport) == 0 ? MLV_CT__NO_PORTS : 0);
	uint32_t src_tail;

	memcpy(&src_tail, &k->src[12], 4);
	f->lo = XXH3_64bits_withSeed(k, sizeof(*k), ct->seed);
	f->hi = src_tail | (uint64_t)k->proto << 32 | (uint64_t)(kind & 0xffu) << 40;
}

struct mlv_ct *mlv_ct_create(const struct mlv_ct_params *p,
			     void *(*alloc)(size_t size, void *ctx),
			     void (*release)(void *ptr, void *ctx), void *ctx)
{
	if (mlv_ct_check_params(p, NULL) != MLV_OK || alloc == NULL ||
	    release == NULL)
		return NULL;

	uint32_t cap = mlv_ct_capacity_for(p->entries);
	void *block = alloc(mlv_ct_mem_size(p->entries), ctx);

	if (block == NULL)
		return NULL;

	uintptr_t base = ((uintptr_t)block + MLV_CT_ALIGN - 1) &
			 ~(uintptr_t)(MLV_CT_ALIGN - 1);
	struct mlv_ct *ct = (struct mlv_ct *)base;

	/* The entries are left alone: zeroed memory is a table of free slots
	 * (state FREE), and not touching it keeps lazily zeroed pages
	 * unmapped until flows arrive. */
	ct->entries = (struct mlv_ct_entry *)(base + MLV_CT_HEADER_SIZE);
	ct->n_buckets = cap / MLV_CT_WAYS;
	ct->occupancy = 0;
	ct->timeout_ms[MLV_CT_FREE] = 0;   /* never a result of mlv_ct_update */
	ct->timeout_ms[MLV_CT_TCP_OPENING] = p->tcp_handshake_timeout_ms;
	ct->timeout_ms[MLV_CT_TCP_ESTABLISHED] = p->tcp_timeout_ms;
	ct->timeout_ms[MLV_CT_TCP_CLOSING] = p->tcp_closing_timeout_ms;
	ct->timeout_ms[MLV_CT_UDP] = p->udp_timeout_ms;
	ct->timeout_ms[MLV_CT_OTHER] = p->other_timeout_ms;
	ct->sweep_cursor = 0;
	ct->pending_victim = NULL;
	memset(&ct->stats, 0, sizeof(ct->stats));
	memset(&ct->spare, 0, sizeof(ct->spare));
	ct->block = block;
	ct->release = release;
	ct->ctx = ctx;
	ct->on_release = NULL;
	ct->on_release_ctx = NULL;
	mlv_ct_set_tally(ct, NULL);
	ct->seed = fingerprint_seed(ct);
	return ct;
}

void mlv_ct_set_release_hook(struct mlv_ct *ct, mlv_ct_release_fn fn,
			     void *ctx)
{
	ct->on_release = fn;
	ct->on_release_ctx = ctx;
}

/* Out of line, so that a claim without a hook (maglevd's usual case:
 * only bounded VIPs need one) saves no registers for the call. */
__attribute__((noinline, cold)) void
mlv_ct__call_release_hook(struct mlv_ct *ct, const struct mlv_ct_entry *e)
{
	ct->on_release(ct->on_release_ctx, e);
}

void mlv_ct_destroy(struct mlv_ct *ct)
{
	if (ct == NULL)
		return;
	ct->release(ct->block, ct->ctx);
}

uint32_t mlv_ct__scan(const struct mlv_ct_entry *b, uint32_t w, uint8_t tag,
		      uint32_t now_ms, uint32_t *tag_ways, uint32_t *scalar_least,
		      uint32_t *scalar_tag_ways)
{
	struct mlv_ct__bucket_scan s = mlv_ct__scan_bucket(b, w, tag, now_ms);
	struct mlv_ct__bucket_scan r = mlv_ct__scan_bucket_scalar(b, w, tag, now_ms);

	*tag_ways = s.tag_ways;
	*scalar_least = r.least;
	*scalar_tag_ways = r.tag_ways;
	return s.least;
}

static inline bool proven_state(enum mlv_ct_state s)
{
	return mlv_ct__claim_code((uint8_t)s) == MLV_CT_CODE_PROVEN;
}

/* The rare claim (a bucket full of proven flows), kept out of line so
 * the common one stays short. */
__attribute__((noinline)) struct mlv_ct_entry *
mlv_ct__claim_spare(struct mlv_ct *ct, struct mlv_ct_entry *victim,
		    const struct mlv_flow_key *key, uint32_t hash,
		    uint32_t now_ms)
{
	/* Only proven flows left: whether the newcomer may evict one
	 * depends on the packet, which mlv_ct_update sees. */
	ct->pending_victim = victim;
	mlv_ct__set_flow(ct, &ct->spare, key, mlv_ct__tag(hash), now_ms);
	return &ct->spare;
}

bool mlv_ct__update_spare(struct mlv_ct *ct, uint8_t tcp_flags,
			  uint32_t now_ms)
{
	struct mlv_ct_entry *v = ct->pending_victim;
	enum mlv_ct_state s;

	if (v == NULL)
		return false;   /* updated twice, or removed: nothing pending */
	ct->pending_victim = NULL;
	s = mlv_ct__next_from(&ct->spare, (enum mlv_ct_state)ct->spare.state,
			      tcp_flags);
	if (!proven_state(s)) {
		/* An unproven flow (a SYN) does not push out a proven one;
		 * the packet goes to the table's choice untracked. */
		ct->stats.untracked++;
		return false;
	}
	mlv_ct__released(ct, v);
	*v = ct->spare;
	v->state = (uint8_t)s;
	v->expires_ms = now_ms + ct->timeout_ms[s];
	if (ct->tally)
		mlv_ct__tally_on(ct->tally, v->backend_uid, (uint8_t)s);
	ct->stats.evictions++;
	ct->stats.inserts++;
	return true;
}

void mlv_ct_remove(struct mlv_ct *ct, struct mlv_ct_entry *e)
{
	if (ct == NULL || e == NULL)
		return;
	if (e == &ct->spare) {
		ct->pending_victim = NULL;   /* the flow stays out */
		return;
	}
	if (e < ct->entries ||
	    e >= ct->entries + (size_t)ct->n_buckets * MLV_CT_WAYS ||
	    e->state == MLV_CT_FREE)   /* foreign, or no tracked flow */
		return;
	mlv_ct__released(ct, e);
	e->state = MLV_CT_FREE;
	ct->occupancy--;
	ct->stats.removed++;
}

uint32_t mlv_ct_sweep(struct mlv_ct *ct, uint32_t now_ms, uint32_t n_buckets)
{
	uint32_t reclaimed = 0;
	uint32_t cursor = ct->sweep_cursor;

	if (ct->occupancy == 0)
		return 0;   /* idle worker: nothing to visit */
	if (n_buckets > ct->n_buckets)
		n_buckets = ct->n_buckets;
	for (uint32_t n = 0; n < n_buckets; n++) {
		struct mlv_ct_entry *b = &ct->entries[(size_t)cursor * MLV_CT_WAYS];

		for (uint32_t i = 0; i < MLV_CT_WAYS; i++) {
			if (b[i].state != MLV_CT_FREE &&
			    !mlv_ct__live(b[i].expires_ms, now_ms)) {
				mlv_ct__released(ct, &b[i]);
				b[i].state = MLV_CT_FREE;
				reclaimed++;
			}
		}
		if (++cursor == ct->n_buckets)
			cursor = 0;
	}
	ct->sweep_cursor = cursor;
	ct->occupancy -= reclaimed;
	ct->stats.swept += reclaimed;
	return reclaimed;
}

void mlv_ct__tally_rebind(struct mlv_flow_tally *t, struct mlv_flow_tally *b,
			  uint32_t vip)
{
	uint32_t flows = b->n[MLV_TALLY_ACTIVE] + b->n[MLV_TALLY_INACTIVE];

	if (b->counted != 0) {
		uint32_t *old = &t[mlv_tally_slot(b->counted)].vip_flows;

		*old -= *old < flows ? *old : flows;
	}
	if (vip != 0)
		t[mlv_tally_slot(vip)].vip_flows += flows;
	b->counted = vip;
}

void mlv_ct_entry_view(const struct mlv_ct_entry *e, struct mlv_ct_view *v)
{
	uint8_t kind = e->flow[13];

	memset(v, 0, sizeof(*v));
	v->family = kind & 0x7fu;
	v->proto = e->flow[12];
	v->ports = !(kind & MLV_CT__NO_PORTS);
	if (v->family == 4) {
		memcpy(v->src, e->flow, 4);
		memcpy(v->dst, e->flow + 4, 4);
		memcpy(&v->sport, e->flow + 8, 2);
		memcpy(&v->dport, e->flow + 10, 2);
	} else {
		memcpy(v->src, e->flow + 8, 4);
	}
}

uint32_t mlv_ct_scan(const struct mlv_ct *ct, uint32_t first,
		     uint32_t max_buckets, uint32_t now_ms,
		     struct mlv_ct_entry *out, uint32_t cap, uint32_t *n)
{
	uint32_t b = first;

	*n = 0;
	for (; b < ct->n_buckets && b - first < max_buckets; b++) {
		const struct mlv_ct_entry *bucket =
			&ct->entries[(size_t)b * MLV_CT_WAYS];

		if (*n + MLV_CT_WAYS > cap)
			break;
		for (uint32_t w = 0; w < MLV_CT_WAYS; w++)
			if (bucket[w].state != MLV_CT_FREE &&
			    mlv_ct__live(bucket[w].expires_ms, now_ms))
				out[(*n)++] = bucket[w];
	}
	return b >= ct->n_buckets ? 0 : b;
}

uint32_t mlv_ct_state_timeout_ms(const struct mlv_ct *ct, uint8_t state)
{
	return state < MLV_CT__NSTATES ? ct->timeout_ms[state] : 0;
}

uint32_t mlv_ct_occupancy(const struct mlv_ct *ct)
{
	return ct->occupancy;
}

uint32_t mlv_ct_capacity(const struct mlv_ct *ct)
{
	return ct->n_buckets * MLV_CT_WAYS;
}

const struct mlv_ct_stats *mlv_ct_get_stats(const struct mlv_ct *ct)
{
	return &ct->stats;
}

uint32_t mlv_ct_bucket_index(const struct mlv_ct *ct, uint32_t hash)
{
	return (uint32_t)(mlv_ct__bucket(ct, hash) - ct->entries) / MLV_CT_WAYS;
}
