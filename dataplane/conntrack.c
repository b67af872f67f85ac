/* Connection tracking: creation, the insert/evict slow path, removal and
 * the incremental sweep. The look-up hot path is inline in conntrack.h.
 * Design and measurements: docs/conntrack.md. */
#include "conntrack.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <sys/random.h>
#if defined(__SSE4_1__)
#include <smmintrin.h>
#endif
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
 * instructions (the 128-bit hash cost 143 a packet, callgrind), and two
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

/* Write key's flow (tag tag) into e as a slot just claimed: FREE and
 * expired. */
static inline void set_flow(const struct mlv_ct *ct, struct mlv_ct_entry *e,
			    const struct mlv_flow_key *key, uint8_t tag,
			    uint32_t now_ms)
{
	struct mlv_ct__flow f;

	mlv_ct__flow_of(ct, key, &f);

	uint64_t hi = (f.hi & MLV_CT__HI_MASK) | (uint64_t)tag << 48 |
		      (uint64_t)MLV_CT_FREE << 56;

	memcpy(e->flow, &f.lo, 8);
	memcpy(e->flow + 8, &hi, 8);   /* the flow's last bytes, tag, state */
	e->expires_ms = now_ms;        /* expired until mlv_ct_update */
	e->backend_uid = 0;
	e->cached_gen = 0;
	e->backend_all_idx = 0;
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
	mlv_ct_set_tally(ct, 0, NULL, 0);
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
static __attribute__((noinline, cold)) void
call_release_hook(struct mlv_ct *ct, const struct mlv_ct_entry *e)
{
	ct->on_release(ct->on_release_ctx, e);
}

/* An entry holding a tracked flow is let go: its tally, then the hook. */
static inline void released(struct mlv_ct *ct, const struct mlv_ct_entry *e)
{
	if (e->state == MLV_CT_FREE)   /* no flow, or one never tracked */
		return;
	if (e->cached_gen == ct->tally_gen && e->backend_all_idx < ct->tally_n) {
		uint32_t *c = &ct->tally[e->backend_all_idx];

		*c -= *c > 0;
	}
	if (__builtin_expect(ct->on_release != NULL, 0))
		call_release_hook(ct, e);
}

void mlv_ct_destroy(struct mlv_ct *ct)
{
	if (ct == NULL)
		return;
	ct->release(ct->block, ct->ctx);
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

static inline uint32_t claim_code(uint8_t state)
{
	return (MLV_CT_CLAIM_CODES >> (2 * (state & 15u))) & 3u;
}

static inline bool proven_state(enum mlv_ct_state s)
{
	return claim_code((uint8_t)s) == MLV_CT_CODE_PROVEN;
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

static inline uint32_t way_key(const struct mlv_ct_entry *e, uint32_t dist,
			       uint32_t now_ms)
{
	uint32_t left = e->expires_ms - now_ms;
	uint32_t code = claim_code(e->state);

	if (code == 0 || (int32_t)left <= 0)
		return dist;
	left = left < MLV_CT_LEFT_CAP ? left : MLV_CT_LEFT_CAP;
	return (code << 28 | left) << 2 | dist;
}

/* What one pass over a bucket finds for a flow that its preferred way w
 * does not hold. */
struct bucket_scan {
	uint32_t tag_ways;   /* bit j: way j's tag is the flow's */
	uint32_t least;      /* the least way_key: the way a claim takes */
};

#if defined(__SSE4_1__)
/* The four ways side by side: their tags against the flow's, and their
 * claim keys (each entry's bytes 12..19, the flow's last two bytes, tag,
 * state and expiry, are one 8-byte load). About 40 instructions, where
 * one way at a time took 25 for the tags and 70 for the keys
 * (callgrind; docs/benchmarks.md, "New-flow round 6"). */
static inline struct bucket_scan scan_bucket(const struct mlv_ct_entry *b,
					     uint32_t w, uint8_t tag,
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
	struct bucket_scan s;

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
static inline struct bucket_scan scan_bucket_scalar(const struct mlv_ct_entry *b,
						    uint32_t w, uint8_t tag,
						    uint32_t now_ms)
{
	struct bucket_scan s = { .tag_ways = 0, .least = UINT32_MAX };

	for (uint32_t i = 0; i < MLV_CT_WAYS; i++) {
		uint32_t j = (w + i) & (MLV_CT_WAYS - 1);
		uint32_t k = way_key(&b[j], i, now_ms);

		s.tag_ways |= (uint32_t)(b[j].tag == tag) << j;
		s.least = k < s.least ? k : s.least;
	}
	return s;
}

#if !defined(__SSE4_1__)
#define scan_bucket scan_bucket_scalar
#endif

uint32_t mlv_ct__scan(const struct mlv_ct_entry *b, uint32_t w, uint8_t tag,
		      uint32_t now_ms, uint32_t *tag_ways, uint32_t *scalar_least,
		      uint32_t *scalar_tag_ways)
{
	struct bucket_scan s = scan_bucket(b, w, tag, now_ms);
	struct bucket_scan r = scan_bucket_scalar(b, w, tag, now_ms);

	*tag_ways = s.tag_ways;
	*scalar_least = r.least;
	*scalar_tag_ways = r.tag_ways;
	return s.least;
}

/* The rare claim (a bucket full of proven flows), kept out of line so
 * the common one stays short. */
static __attribute__((noinline)) struct mlv_ct_entry *
claim_spare(struct mlv_ct *ct, struct mlv_ct_entry *victim,
	    const struct mlv_flow_key *key, uint32_t hash, uint32_t now_ms)
{
	/* Only proven flows left: whether the newcomer may evict one
	 * depends on the packet, which mlv_ct_update sees. */
	ct->pending_victim = victim;
	set_flow(ct, &ct->spare, key, mlv_ct__tag(hash), now_ms);
	return &ct->spare;
}

void mlv_ct__probe_rest(const struct mlv_ct *ct, const struct mlv_flow_key *key,
			uint32_t hash, uint32_t now_ms, struct mlv_ct_probe *pr)
{
	struct mlv_ct_entry *b = pr->bucket;
	uint32_t w = mlv_ct__first_way(hash);
	uint8_t tag = mlv_ct__tag(hash);
	struct bucket_scan s = scan_bucket(b, w, tag, now_ms);
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

/* Claim the slot the probe chose in the flow's bucket: the first free or
 * expired slot from the flow's preferred way on, else the first of the
 * stalest lowest-class flows, i.e. the way of the least way_key
 * (scan_bucket). The four keys were compared with no branch: in a full
 * bucket of flows with unrelated expiries which way is stalest is a coin
 * toss that a branch would mispredict about once per claim. */
struct mlv_ct_entry *mlv_ct__claim(struct mlv_ct *ct,
				   const struct mlv_flow_key *key,
				   uint32_t hash, uint32_t now_ms,
				   const struct mlv_ct_probe *pr)
{
	uint32_t w = mlv_ct__first_way(hash);
	struct mlv_ct_entry *slot =
		&pr->bucket[(w + (pr->least & 3)) & (MLV_CT_WAYS - 1)];
	uint32_t code = pr->least >> 30;

	if (code == 0) {
		if (slot->state != MLV_CT_FREE)
			ct->stats.expired_reused++;
	} else if (__builtin_expect(code == MLV_CT_CODE_PROVEN, 0)) {
		return claim_spare(ct, slot, key, hash, now_ms);
	} else {
		ct->stats.evictions++;
	}
	ct->stats.inserts++;
	if (slot->state != MLV_CT_FREE) {   /* its flow leaves the table */
		released(ct, slot);
		ct->occupancy--;
	}
	set_flow(ct, slot, key, mlv_ct__tag(hash), now_ms);
	return slot;
}

bool mlv_ct__update_spare(struct mlv_ct *ct, uint8_t tcp_flags,
			  uint32_t now_ms)
{
	struct mlv_ct_entry *v = ct->pending_victim;
	enum mlv_ct_state s;

	if (v == NULL)
		return false;   /* updated twice, or removed: nothing pending */
	ct->pending_victim = NULL;
	s = mlv_ct__next_of(&ct->spare, tcp_flags);
	if (!proven_state(s)) {
		/* An unproven flow (a SYN) does not push out a proven one;
		 * the packet goes to the table's choice untracked. */
		ct->stats.untracked++;
		return false;
	}
	released(ct, v);
	*v = ct->spare;
	v->state = (uint8_t)s;
	v->expires_ms = now_ms + ct->timeout_ms[s];
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
	released(ct, e);
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
				released(ct, &b[i]);
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
