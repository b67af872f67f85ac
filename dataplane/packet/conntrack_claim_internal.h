/* SPDX-License-Identifier: BSD-3-Clause */
/* The conntrack table's insert path, inline for the worker's burst loop:
 * the one pass over a bucket that finds a flow beyond its preferred way
 * and ranks the slot a new flow would claim (mlv_ct__probe_rest), and the
 * claim itself (mlv_ct__claim). Inline because out of line, the two calls
 * per new flow cost more than their bodies (inline: 688.5 instructions
 * per new flow against 737.1, 7 % fewer own cycles; docs/benchmarks.md,
 * "Why the data path is as it is"). Internal to conntrack.h, which
 * includes it where the table's types and inline helpers are defined;
 * owner worker only, like the rest of the table. */
#ifndef MLV_CONNTRACK_CLAIM_H
#define MLV_CONNTRACK_CLAIM_H

#include "control/base/visibility.h"

#ifndef MLV_CONNTRACK_H
#error "include conntrack.h, not conntrack_claim_internal.h"
#endif

#if defined(__SSE4_1__)
#include <smmintrin.h>
#endif

/* Out of line and cold in conntrack.c: calls ct's release hook on e. */
MLV_HIDDEN
void mlv_ct__call_release_hook(struct mlv_ct *ct, const struct mlv_ct_entry *e);

/* Out of line in conntrack.c: the rare claim of a bucket full of proven
 * flows (the spare; see mlv_ct_update). */
MLV_HIDDEN
struct mlv_ct_entry *mlv_ct__claim_spare(struct mlv_ct *ct,
					 struct mlv_ct_entry *victim,
					 const struct mlv_flow_key *key,
					 uint32_t hash, uint32_t now_ms);

/* Write key's flow (tag tag) and state into e's first 16 bytes. */
static inline void mlv_ct__write_flow(const struct mlv_ct *ct,
				      struct mlv_ct_entry *e,
				      const struct mlv_flow_key *key, uint8_t tag,
				      enum mlv_ct_state state)
{
	struct mlv_ct__flow f;

	mlv_ct__flow_of(ct, key, &f);

	uint64_t hi = (f.hi & MLV_CT__HI_MASK) | (uint64_t)tag << 48 |
		      (uint64_t)state << 56;

	memcpy(e->flow, &f.lo, 8);
	memcpy(e->flow + 8, &hi, 8);   /* the flow's last bytes, tag, state */
}

/* Write key's flow (tag tag) into e as a slot just claimed: FREE and
 * expired. */
static inline void mlv_ct__set_flow(const struct mlv_ct *ct,
				    struct mlv_ct_entry *e,
				    const struct mlv_flow_key *key, uint8_t tag,
				    uint32_t now_ms)
{
	mlv_ct__write_flow(ct, e, key, tag, MLV_CT_FREE);
	e->expires_ms = now_ms;        /* expired until mlv_ct_update */
	e->backend_uid = 0;
	e->cached_gen = 0;
	e->backend_all_idx = 0;
}

/* An entry holding a tracked flow is let go: its tally, then the hook. */
static inline void mlv_ct__released(struct mlv_ct *ct,
				    const struct mlv_ct_entry *e)
{
	if (e->state == MLV_CT_FREE)   /* no flow, or one never tracked */
		return;
	if (ct->tally)
		mlv_ct__tally_off(ct->tally, e->backend_uid, e->state);
	if (__builtin_expect(ct->on_release != NULL, 0))
		mlv_ct__call_release_hook(ct, e);
}

/* Eviction order when a bucket is full of live flows: flows that have not
 * proved themselves (handshake not completed, or closing) go before
 * established TCP, UDP and fragment flows (proven), so a flood of SYNs
 * recycles its own entries instead of flushing established ones; and an
 * unproven newcomer never displaces a proven flow at all (see
 * mlv_ct__update_spare). Each state's claim code, two bits per state in
 * one constant: 0 for FREE (no flow), 1 unproven, 2 proven. One shift
 * and mask, evaluated for every way of a full bucket. */
#define MLV_CT_CODE_UNPROVEN 1u
#define MLV_CT_CODE_PROVEN 2u
#define MLV_CT_CLAIM_CODES                                          \
	((MLV_CT_CODE_UNPROVEN << 2 * MLV_CT_TCP_OPENING) |          \
	 (MLV_CT_CODE_PROVEN << 2 * MLV_CT_TCP_ESTABLISHED) |        \
	 (MLV_CT_CODE_UNPROVEN << 2 * MLV_CT_TCP_CLOSING) |          \
	 (MLV_CT_CODE_PROVEN << 2 * MLV_CT_UDP) |                    \
	 (MLV_CT_CODE_PROVEN << 2 * MLV_CT_OTHER))

_Static_assert(MLV_CT__NSTATES <= 16, "claim codes fit 32 bits");

static inline uint32_t mlv_ct__claim_code(uint8_t state)
{
	return (MLV_CT_CLAIM_CODES >> (2 * (state & 15u))) & 3u;
}

/* The claim's key for a way, lower first, in 32 bits: the way's distance
 * from the preferred way in the two low bits (distinct keys, ties to the
 * nearer way), above them 0 for a way without a live flow (state FREE: a
 * slot claimed but never updated, or removed, or swept; or expired: time
 * left, expires - now, is in 1 .. 2^31 - 1 for a live entry, every
 * expiry lying within 2^31 ms of now), else its claim code above its
 * time left. Time left is capped at 2^28 - 1 ms
 * (74 hours: above the configuration's longest timeout, one day), so
 * that code, time and distance fit one 32-bit lane. */
#define MLV_CT_LEFT_CAP ((1u << 28) - 1)

static inline uint32_t mlv_ct__way_key(const struct mlv_ct_entry *e,
				       uint32_t dist, uint32_t now_ms)
{
	uint32_t left = e->expires_ms - now_ms;
	uint32_t code = mlv_ct__claim_code(e->state);

	if (code == 0 || (int32_t)left <= 0)
		return dist;
	left = left < MLV_CT_LEFT_CAP ? left : MLV_CT_LEFT_CAP;
	return (code << 28 | left) << 2 | dist;
}

/* What one pass over a bucket finds for a flow that its preferred way w
 * does not hold. */
struct mlv_ct__bucket_scan {
	uint32_t tag_ways;   /* bit j: way j's tag is the flow's */
	uint32_t least;      /* the least way key: the way a claim takes */
};

#if defined(__SSE4_1__)
/* The four ways side by side: their tags against the flow's, and their
 * claim keys (each entry's bytes 12..19, the flow's last two bytes, tag,
 * state and expiry, are one 8-byte load), without a branch on the data:
 * 697.9 instructions per new flow against 742.7 one way at a time
 * (callgrind; docs/benchmarks.md, "Why the data path is as it is"). */
static inline struct mlv_ct__bucket_scan
mlv_ct__scan_bucket(const struct mlv_ct_entry *b, uint32_t w, uint8_t tag,
		    uint32_t now_ms)
{
	_Static_assert(offsetof(struct mlv_ct_entry, tag) == 14 &&
		       offsetof(struct mlv_ct_entry, state) == 15 &&
		       offsetof(struct mlv_ct_entry, expires_ms) == 16,
		       "tag, state and expiry are bytes 14..19 of an entry");
	/* each state's claim code, by state (pshufb's table) */
#define CODE_OF(s) ((MLV_CT_CLAIM_CODES >> (2 * (s))) & 3)
	static const uint8_t codes[16] __attribute__((aligned(16))) = {
		CODE_OF(0), CODE_OF(1), CODE_OF(2), CODE_OF(3), CODE_OF(4),
		CODE_OF(5), CODE_OF(6), CODE_OF(7), CODE_OF(8), CODE_OF(9),
		CODE_OF(10), CODE_OF(11), CODE_OF(12), CODE_OF(13),
		CODE_OF(14), CODE_OF(15),
	};
#undef CODE_OF
	/* way j's distance from the preferred way w, (j - w) mod 4, by w */
	static const uint32_t dist[MLV_CT_WAYS][4] __attribute__((aligned(16))) = {
		{0, 1, 2, 3}, {3, 0, 1, 2}, {2, 3, 0, 1}, {1, 2, 3, 0},
	};
	uint64_t q[MLV_CT_WAYS];

	for (uint32_t j = 0; j < MLV_CT_WAYS; j++)
		memcpy(&q[j], (const uint8_t *)&b[j] + 12, 8);

	__m128 w01 = _mm_castsi128_ps(_mm_set_epi64x((long long)q[1], (long long)q[0]));
	__m128 w23 = _mm_castsi128_ps(_mm_set_epi64x((long long)q[3], (long long)q[2]));
	/* lane j: way j's flow bytes 12, 13, tag, state; and its expiry */
	__m128i low = _mm_castps_si128(_mm_shuffle_ps(w01, w23, _MM_SHUFFLE(2, 0, 2, 0)));
	__m128i expires = _mm_castps_si128(_mm_shuffle_ps(w01, w23, _MM_SHUFFLE(3, 1, 3, 1)));
	__m128i zero = _mm_setzero_si128();
	__m128i tags = _mm_and_si128(_mm_srli_epi32(low, 16), _mm_set1_epi32(0xff));
	__m128i left = _mm_sub_epi32(expires, _mm_set1_epi32((int)now_ms));
	/* the state is each lane's top byte; shifted down, the three bytes
	 * above it are zero, which pshufb maps to FREE's code, 0 */
	__m128i code = _mm_shuffle_epi8(_mm_load_si128((const __m128i *)codes),
					_mm_srli_epi32(low, 24));
	__m128i is_live = _mm_and_si128(_mm_cmpgt_epi32(left, zero),
					_mm_cmpgt_epi32(code, zero));
	__m128i key = _mm_or_si128(_mm_slli_epi32(code, 28),
				   _mm_min_epu32(left, _mm_set1_epi32(MLV_CT_LEFT_CAP)));
	struct mlv_ct__bucket_scan s;

	s.tag_ways = (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(
		_mm_cmpeq_epi32(tags, _mm_set1_epi32(tag))));
	key = _mm_and_si128(key, is_live);
	key = _mm_or_si128(_mm_slli_epi32(key, 2),
			   _mm_load_si128((const __m128i *)dist[w]));
	key = _mm_min_epu32(key, _mm_shuffle_epi32(key, _MM_SHUFFLE(1, 0, 3, 2)));
	key = _mm_min_epu32(key, _mm_shuffle_epi32(key, _MM_SHUFFLE(2, 3, 0, 1)));
	s.least = (uint32_t)_mm_cvtsi128_si32(key);
	return s;
}
#endif

/* The same, one way at a time: where SSE4.1 is missing, and for the
 * tests (mlv_ct__scan). */
static inline struct mlv_ct__bucket_scan
mlv_ct__scan_bucket_scalar(const struct mlv_ct_entry *b, uint32_t w, uint8_t tag,
			   uint32_t now_ms)
{
	struct mlv_ct__bucket_scan s = { .tag_ways = 0, .least = UINT32_MAX };

	for (uint32_t i = 0; i < MLV_CT_WAYS; i++) {
		uint32_t j = (w + i) & (MLV_CT_WAYS - 1);
		uint32_t k = mlv_ct__way_key(&b[j], i, now_ms);

		s.tag_ways |= (uint32_t)(b[j].tag == tag) << j;
		s.least = k < s.least ? k : s.least;
	}
	return s;
}

#if !defined(__SSE4_1__)
#define mlv_ct__scan_bucket mlv_ct__scan_bucket_scalar
#endif

/* The slow path of mlv_ct_probe, for everything but a hit in the flow's
 * preferred way: the other ways, and the slot a claim would take (free,
 * then expired, then the stalest unproven flow, else the spare). */
static inline void mlv_ct__probe_rest(const struct mlv_ct *ct,
				      const struct mlv_flow_key *key,
				      uint32_t hash, uint32_t now_ms,
				      struct mlv_ct_probe *pr)
{
	struct mlv_ct_entry *b = pr->bucket;
	uint32_t w = mlv_ct__first_way(hash);
	uint8_t tag = mlv_ct__tag(hash);
	struct mlv_ct__bucket_scan s = mlv_ct__scan_bucket(b, w, tag, now_ms);
	/* the preferred way was checked inline */
	uint32_t others = s.tag_ways & ~(1u << w);

	while (__builtin_expect(others != 0, 0)) {
		struct mlv_ct_entry *e = &b[__builtin_ctz(others)];

		others &= others - 1;
		if (mlv_ct__holds(ct, e, key, tag, now_ms)) {
			pr->hit = e;
			return;
		}
	}
	pr->hit = NULL;
	pr->least = s.least;
}

/* The slot the probe chose in the flow's bucket, emptied for the flow: the
 * first free or expired slot from the flow's preferred way on, else the
 * first of the stalest lowest-class flows, i.e. the way of the least
 * mlv_ct__way_key (mlv_ct__scan_bucket), whose flow is let go; or NULL
 * when that flow is proven (the spare's case: *victim is its way). The
 * four keys are compared with no branch: in a full bucket of flows with
 * unrelated expiries which way is stalest is a coin toss that a branch
 * would mispredict about once per claim. */
static inline struct mlv_ct_entry *
mlv_ct__vacate(struct mlv_ct *ct, uint32_t hash, const struct mlv_ct_probe *pr,
	       struct mlv_ct_entry **victim)
{
	uint32_t w = mlv_ct__first_way(hash);
	struct mlv_ct_entry *slot =
		&pr->bucket[(w + (pr->least & 3)) & (MLV_CT_WAYS - 1)];
	uint32_t code = pr->least >> 30;

	if (code == 0) {
		if (slot->state != MLV_CT_FREE)
			ct->stats.expired_reused++;
	} else if (__builtin_expect(code == MLV_CT_CODE_PROVEN, 0)) {
		*victim = slot;
		return NULL;
	} else {
		ct->stats.evictions++;
	}
	ct->stats.inserts++;
	if (slot->state != MLV_CT_FREE) {   /* its flow leaves the table */
		mlv_ct__released(ct, slot);
		ct->occupancy--;
	}
	return slot;
}

/* Claim the slot the probe chose (mlv_ct__vacate) for key's flow: FREE
 * and expired until mlv_ct_update. */
static inline struct mlv_ct_entry *
mlv_ct__claim(struct mlv_ct *ct, const struct mlv_flow_key *key, uint32_t hash,
	      uint32_t now_ms, const struct mlv_ct_probe *pr)
{
	struct mlv_ct_entry *victim = NULL;
	struct mlv_ct_entry *slot = mlv_ct__vacate(ct, hash, pr, &victim);

	if (__builtin_expect(slot == NULL, 0))
		return mlv_ct__claim_spare(ct, victim, key, hash, now_ms);
	mlv_ct__set_flow(ct, slot, key, mlv_ct__tag(hash), now_ms);
	return slot;
}

#endif
