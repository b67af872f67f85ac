/* SPDX-License-Identifier: BSD-3-Clause */
/* Connection tracking: look-up and insert, the TCP state machine and every
 * timeout (the clock is driven explicitly, never slept on), wraparound of
 * the millisecond clock, eviction policy (expired first, unproven flows
 * first, the stalest goes, SYN floods cannot push out established flows,
 * and the claim against the policy written out plainly on random
 * buckets), the sweep, capacity rounding and an 8M-entry table. Hashes are passed explicitly so tests
 * can aim flows at one bucket. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane/packet/conntrack.h"

#define T_TCP 300000u
#define T_HANDSHAKE 5000u
#define T_CLOSING 10000u
#define T_UDP 30000u
#define T_OTHER 2000u

static const struct mlv_ct_params default_params = {
	.entries = 1024,
	.tcp_timeout_ms = T_TCP,
	.tcp_handshake_timeout_ms = T_HANDSHAKE,
	.tcp_closing_timeout_ms = T_CLOSING,
	.udp_timeout_ms = T_UDP,
	.other_timeout_ms = T_OTHER,
};

/* The allocator the tests give the table: calloc (only 16-byte aligned,
 * which the table must cope with), remembering what it handed out. */
struct test_mem {
	size_t requested;
	void *block;
	int allocs, releases;
	bool fail;
};

static void *test_alloc(size_t size, void *ctx)
{
	struct test_mem *m = ctx;

	m->requested = size;
	m->allocs++;
	if (m->fail)
		return NULL;
	m->block = calloc(1, size);
	return m->block;
}

static void test_release(void *ptr, void *ctx)
{
	struct test_mem *m = ctx;

	assert_ptr_equal(ptr, m->block);
	m->releases++;
	free(ptr);
}

static struct mlv_ct *make_ct(const struct mlv_ct_params *p, struct test_mem *m)
{
	memset(m, 0, sizeof(*m));
	struct mlv_ct *ct = mlv_ct_create(p, test_alloc, test_release, m);

	assert_non_null(ct);
	return ct;
}

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Flow number i: a distinct IPv4 5-tuple. */
static struct mlv_flow_key flow(uint32_t i, uint8_t proto)
{
	struct mlv_flow_key k;

	memset(&k, 0, sizeof(k));
	k.family = 4;
	k.proto = proto;
	k.src[0] = 10;
	memcpy(&k.src[1], &i, 3);
	k.dst[0] = 192;
	k.dst[1] = 0;
	k.dst[2] = 2;
	k.dst[3] = 10;
	k.sport = (uint16_t)(1024 + (i >> 24));
	k.dport = 80;
	return k;
}

/* Insert key and run one packet through the state machine. */
static struct mlv_ct_entry *packet(struct mlv_ct *ct,
				   const struct mlv_flow_key *k, uint32_t hash,
				   uint8_t flags, uint32_t now, bool *is_new)
{
	bool fresh;
	struct mlv_ct_entry *e = mlv_ct_lookup_or_insert(ct, k, hash, now, &fresh);

	assert_non_null(e);
	mlv_ct_update(ct, e, flags, now);
	if (is_new)
		*is_new = fresh;
	return e;
}

static void test_params_rejected(void **state)
{
	(void)state;
	struct test_mem m = {0};
	const char *why = NULL;
	struct mlv_ct_params p;

	assert_int_equal(mlv_ct_check_params(&default_params, &why), MLV_OK);
	assert_int_equal(mlv_ct_check_params(NULL, &why), MLV_E_INVAL);
	assert_non_null(why);

	uint32_t *fields[] = {&p.entries, &p.tcp_timeout_ms,
			      &p.tcp_handshake_timeout_ms,
			      &p.tcp_closing_timeout_ms, &p.udp_timeout_ms,
			      &p.other_timeout_ms};
	uint32_t too_big[] = {MLV_CT_MAX_ENTRIES + 1, MLV_CT_MAX_TIMEOUT_MS + 1,
			      MLV_CT_MAX_TIMEOUT_MS + 1, MLV_CT_MAX_TIMEOUT_MS + 1,
			      MLV_CT_MAX_TIMEOUT_MS + 1, MLV_CT_MAX_TIMEOUT_MS + 1};
	const char *seen[6] = {0};

	for (size_t i = 0; i < 6; i++) {
		uint32_t bad[] = {0, too_big[i]};

		for (size_t j = 0; j < 2; j++) {
			p = default_params;
			*fields[i] = bad[j];
			why = NULL;
			assert_int_equal(mlv_ct_check_params(&p, &why), MLV_E_RANGE);
			assert_non_null(why);
			assert_null(mlv_ct_create(&p, test_alloc, test_release, &m));
		}
		/* each field gets its own message */
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(why, seen[j]);
		seen[i] = why;
	}
	assert_int_equal(m.allocs, 0);   /* rejected before allocating */

	assert_null(mlv_ct_create(&default_params, NULL, test_release, &m));
	assert_null(mlv_ct_create(&default_params, test_alloc, NULL, &m));
	assert_null(mlv_ct_create(NULL, test_alloc, test_release, &m));

	m.fail = true;
	assert_null(mlv_ct_create(&default_params, test_alloc, test_release, &m));
	assert_int_equal(m.allocs, 1);
	mlv_ct_destroy(NULL);   /* a no-op */
}

static void test_capacity_rounding(void **state)
{
	(void)state;
	const uint32_t asks[] = {1, MLV_CT_WAYS - 1, MLV_CT_WAYS, MLV_CT_WAYS + 1,
				 1000, 1000003, MLV_CT_MAX_ENTRIES - 1,
				 MLV_CT_MAX_ENTRIES};

	for (size_t i = 0; i < sizeof(asks) / sizeof(asks[0]); i++) {
		uint32_t cap = mlv_ct_capacity_for(asks[i]);

		assert_true(cap >= asks[i]);
		assert_true(cap - asks[i] < MLV_CT_WAYS);
		assert_int_equal(cap % MLV_CT_WAYS, 0);
	}
	assert_int_equal(mlv_ct_capacity_for(0), 0);
	assert_int_equal(mlv_ct_capacity_for(MLV_CT_MAX_ENTRIES + 1), 0);
	assert_int_equal(mlv_ct_mem_size(0), 0);

	struct test_mem m;
	struct mlv_ct_params p = default_params;

	p.entries = 1001;
	struct mlv_ct *ct = make_ct(&p, &m);

	assert_int_equal(mlv_ct_capacity(ct), mlv_ct_capacity_for(1001));
	assert_int_equal(m.requested, mlv_ct_mem_size(1001));
	assert_int_equal(mlv_ct_occupancy(ct), 0);

	/* every slot of the rounded capacity is usable: fill one bucket
	 * past the requested size's last bucket boundary */
	uint32_t last = mlv_ct_capacity(ct) / MLV_CT_WAYS - 1;
	uint64_t seed = 1;
	uint32_t placed = 0;

	for (uint32_t i = 0; placed < MLV_CT_WAYS; i++) {
		uint32_t h = (uint32_t)splitmix64(&seed);

		if (mlv_ct_bucket_index(ct, h) != last)
			continue;
		struct mlv_flow_key k = flow(i, 17);

		packet(ct, &k, h, 0, 0, NULL);
		placed++;
	}
	assert_int_equal(mlv_ct_occupancy(ct), MLV_CT_WAYS);
	assert_int_equal(mlv_ct_get_stats(ct)->evictions, 0);
	mlv_ct_destroy(ct);
	assert_int_equal(m.releases, 1);
}

static void test_insert_lookup(void **state)
{
	(void)state;
	struct test_mem m;
	struct mlv_ct *ct = make_ct(&default_params, &m);
	enum { N = 300 };
	struct mlv_ct_entry *got[N];
	uint64_t seed = 42;
	uint32_t hashes[N];
	uint8_t *per_bucket = calloc(mlv_ct_capacity(ct) / MLV_CT_WAYS, 1);

	assert_non_null(per_bucket);
	for (uint32_t i = 0; i < N; i++) {
		struct mlv_flow_key k = flow(i, 6);
		bool is_new = false;

		/* random hashes, redrawn where a bucket has one way left:
		 * this test is about finding flows, not evicting them, and
		 * the collision below needs that way */
		do
			hashes[i] = (uint32_t)splitmix64(&seed);
		while (per_bucket[mlv_ct_bucket_index(ct, hashes[i])] ==
		       MLV_CT_WAYS - 1);
		per_bucket[mlv_ct_bucket_index(ct, hashes[i])]++;
		assert_null(mlv_ct_lookup(ct, &k, hashes[i], 0));
		got[i] = mlv_ct_lookup_or_insert(ct, &k, hashes[i], 0, &is_new);
		assert_true(is_new);
		assert_int_equal(got[i]->state, MLV_CT_FREE);
		assert_int_equal(got[i]->backend_uid, 0);
		got[i]->backend_uid = 1000 + i;
		mlv_ct_update(ct, got[i], MLV_TCP_SYN, 0);
	}
	assert_int_equal(mlv_ct_get_stats(ct)->evictions, 0);
	assert_int_equal(mlv_ct_occupancy(ct), N);
	assert_int_equal(mlv_ct_get_stats(ct)->inserts, N);
	for (uint32_t i = 0; i < N; i++) {
		struct mlv_flow_key k = flow(i, 6);
		bool is_new = true;
		struct mlv_ct_entry *e =
			mlv_ct_lookup_or_insert(ct, &k, hashes[i], 1, &is_new);

		assert_false(is_new);
		assert_ptr_equal(e, got[i]);
		assert_int_equal(e->backend_uid, 1000 + i);
		assert_ptr_equal(mlv_ct_lookup(ct, &k, hashes[i], 1), e);
	}
	assert_int_equal(mlv_ct_get_stats(ct)->inserts, N);

	/* other key, same hash (so same bucket and tag): a miss */
	struct mlv_flow_key k0 = flow(0, 6), other = flow(N + 1, 6);

	assert_null(mlv_ct_lookup(ct, &other, hashes[0], 1));

	/* a hash collision: two keys with one hash are tracked apart */
	bool is_new;
	struct mlv_ct_entry *c =
		mlv_ct_lookup_or_insert(ct, &other, hashes[0], 2, &is_new);

	assert_true(is_new);
	assert_ptr_not_equal(c, got[0]);
	c->backend_uid = 7;
	mlv_ct_update(ct, c, MLV_TCP_SYN, 2);
	assert_int_equal(mlv_ct_lookup(ct, &k0, hashes[0], 3)->backend_uid, 1000);
	assert_int_equal(mlv_ct_lookup(ct, &other, hashes[0], 3)->backend_uid, 7);

	/* remove: gone, occupancy drops once, a second remove is ignored */
	uint32_t occ = mlv_ct_occupancy(ct);

	mlv_ct_remove(ct, c);
	assert_null(mlv_ct_lookup(ct, &other, hashes[0], 3));
	assert_int_equal(mlv_ct_occupancy(ct), occ - 1);
	mlv_ct_remove(ct, c);
	mlv_ct_remove(ct, NULL);
	struct mlv_ct_entry foreign = {.state = MLV_CT_TCP_ESTABLISHED};

	mlv_ct_remove(ct, &foreign);
	assert_int_equal(mlv_ct_occupancy(ct), occ - 1);
	assert_int_equal(mlv_ct_get_stats(ct)->removed, 1);
	free(per_bucket);
	mlv_ct_destroy(ct);
}

static void test_new_entry_is_clean(void **state)
{
	(void)state;
	struct test_mem m;
	struct mlv_ct *ct = make_ct(&default_params, &m);
	struct mlv_flow_key a = flow(1, 6), b = flow(2, 6);
	bool is_new;
	struct mlv_ct_entry *e = packet(ct, &a, 99, MLV_TCP_SYN, 0, NULL);

	e->backend_uid = 5;
	e->backend_all_idx = 3;
	e->cached_gen = 9;

	/* a is expired and its slot reused by b: nothing of a remains */
	struct mlv_ct_entry *f =
		mlv_ct_lookup_or_insert(ct, &b, 99, T_HANDSHAKE, &is_new);

	assert_true(is_new);
	assert_ptr_equal(f, e);
	assert_int_equal(f->backend_uid, 0);
	assert_int_equal(f->backend_all_idx, 0);
	assert_int_equal(f->cached_gen, 0);
	assert_int_equal(f->state, MLV_CT_FREE);
	assert_int_equal(mlv_ct_get_stats(ct)->expired_reused, 1);

	/* a claimed entry that never got mlv_ct_update is not a flow: not
	 * found, not counted, nothing to sweep */
	assert_null(mlv_ct_lookup(ct, &b, 99, T_HANDSHAKE));
	assert_int_equal(mlv_ct_occupancy(ct), 0);
	assert_int_equal(mlv_ct_sweep(ct, T_HANDSHAKE + 1, UINT32_MAX), 0);
	assert_int_equal(mlv_ct_occupancy(ct), 0);
	mlv_ct_destroy(ct);
}

static void expect_alive(struct mlv_ct *ct, const struct mlv_flow_key *k,
			 uint32_t hash, uint32_t now, enum mlv_ct_state st)
{
	struct mlv_ct_entry *e = mlv_ct_lookup(ct, k, hash, now);

	assert_non_null(e);
	assert_int_equal(e->state, st);
}

static void test_tcp_states_and_timeouts(void **state)
{
	(void)state;
	struct test_mem m;
	struct mlv_ct *ct = make_ct(&default_params, &m);
	struct mlv_flow_key k = flow(7, 6);
	const uint32_t h = 0x12345678;
	uint32_t t = 1000;
	bool is_new;

	/* SYN: OPENING, lives exactly the handshake timeout */
	packet(ct, &k, h, MLV_TCP_SYN, t, &is_new);
	assert_true(is_new);
	expect_alive(ct, &k, h, t + T_HANDSHAKE - 1, MLV_CT_TCP_OPENING);
	assert_null(mlv_ct_lookup(ct, &k, h, t + T_HANDSHAKE));

	/* a SYN after that is a new flow; retransmitted, then the
	 * handshake's ACK: ESTABLISHED */
	t += T_HANDSHAKE;
	packet(ct, &k, h, MLV_TCP_SYN, t, &is_new);
	assert_true(is_new);
	t += 100;
	packet(ct, &k, h, MLV_TCP_SYN, t, &is_new);
	assert_false(is_new);
	expect_alive(ct, &k, h, t + T_HANDSHAKE - 1, MLV_CT_TCP_OPENING);
	t += 100;
	packet(ct, &k, h, MLV_TCP_ACK, t, &is_new);
	assert_false(is_new);
	expect_alive(ct, &k, h, t + T_TCP - 1, MLV_CT_TCP_ESTABLISHED);
	assert_null(mlv_ct_lookup(ct, &k, h, t + T_TCP));

	/* data refreshes; a stray SYN does not demote an established flow */
	t += T_TCP - 1;
	packet(ct, &k, h, MLV_TCP_ACK | 0x08 /* PSH */, t, &is_new);
	assert_false(is_new);
	packet(ct, &k, h, MLV_TCP_SYN, t, NULL);
	expect_alive(ct, &k, h, t + T_TCP - 1, MLV_CT_TCP_ESTABLISHED);

	/* FIN: CLOSING with the closing timeout; later ACKs keep it closing */
	packet(ct, &k, h, MLV_TCP_FIN | MLV_TCP_ACK, t, NULL);
	expect_alive(ct, &k, h, t + T_CLOSING - 1, MLV_CT_TCP_CLOSING);
	assert_null(mlv_ct_lookup(ct, &k, h, t + T_CLOSING));
	t += 10;
	packet(ct, &k, h, MLV_TCP_ACK, t, &is_new);
	assert_false(is_new);
	expect_alive(ct, &k, h, t + T_CLOSING - 1, MLV_CT_TCP_CLOSING);
	assert_null(mlv_ct_lookup(ct, &k, h, t + T_CLOSING));

	/* a new SYN on the closing tuple starts a new handshake */
	packet(ct, &k, h, MLV_TCP_SYN, t, NULL);
	expect_alive(ct, &k, h, t + T_HANDSHAKE - 1, MLV_CT_TCP_OPENING);

	/* RST from any state closes */
	packet(ct, &k, h, MLV_TCP_ACK, t, NULL);
	packet(ct, &k, h, MLV_TCP_RST, t, NULL);
	expect_alive(ct, &k, h, t + T_CLOSING - 1, MLV_CT_TCP_CLOSING);

	/* a flow first seen mid-stream (moved from another instance) is
	 * established at once; one without flags is only opening */
	struct mlv_flow_key mid = flow(8, 6), bare = flow(9, 6);

	packet(ct, &mid, h + 1, MLV_TCP_ACK, t, &is_new);
	assert_true(is_new);
	expect_alive(ct, &mid, h + 1, t + T_TCP - 1, MLV_CT_TCP_ESTABLISHED);
	packet(ct, &bare, h + 2, 0, t, NULL);
	expect_alive(ct, &bare, h + 2, t + T_HANDSHAKE - 1, MLV_CT_TCP_OPENING);
	mlv_ct_destroy(ct);
}

static void test_udp_and_other(void **state)
{
	(void)state;
	struct test_mem m;
	struct mlv_ct *ct = make_ct(&default_params, &m);
	struct mlv_flow_key u = flow(1, 17);
	const uint32_t h = 0xabcdef01;
	uint32_t t = 0;
	bool is_new;

	/* idle timeout: each datagram extends the flow */
	for (int i = 0; i < 10; i++) {
		packet(ct, &u, h, 0, t, &is_new);
		assert_int_equal(is_new, i == 0);
		t += T_UDP - 1;
		expect_alive(ct, &u, h, t, MLV_CT_UDP);
	}
	assert_null(mlv_ct_lookup(ct, &u, h, t + 1));
	/* after the idle time the next datagram is a new flow */
	packet(ct, &u, h, 0, t + 1, &is_new);
	assert_true(is_new);
	assert_int_equal(mlv_ct_occupancy(ct), 1);

	/* fragments: a 3-tuple key (ports 0), TCP or UDP alike: OTHER */
	struct mlv_flow_key frag = flow(2, 6);

	frag.sport = 0;
	frag.dport = 0;
	packet(ct, &frag, h + 1, 0, t, NULL);
	expect_alive(ct, &frag, h + 1, t + T_OTHER - 1, MLV_CT_OTHER);
	assert_null(mlv_ct_lookup(ct, &frag, h + 1, t + T_OTHER));

	/* a protocol without ports (GRE) */
	struct mlv_flow_key gre = flow(3, 47);

	packet(ct, &gre, h + 2, 0, t, NULL);
	expect_alive(ct, &gre, h + 2, t + T_OTHER - 1, MLV_CT_OTHER);
	mlv_ct_destroy(ct);
}

static void test_clock_wraparound(void **state)
{
	(void)state;
	struct test_mem m;
	struct mlv_ct *ct = make_ct(&default_params, &m);
	struct mlv_flow_key k = flow(1, 6);
	const uint32_t h = 77;
	uint32_t t = UINT32_MAX - 100;   /* the clock wraps in 101 ms */

	packet(ct, &k, h, MLV_TCP_ACK, t, NULL);
	struct mlv_ct_entry *e = mlv_ct_lookup(ct, &k, h, t);

	assert_non_null(e);
	assert_true(e->expires_ms < t);   /* stored past the wrap */
	expect_alive(ct, &k, h, t + 101, MLV_CT_TCP_ESTABLISHED);   /* == 0 */
	expect_alive(ct, &k, h, t + T_TCP - 1, MLV_CT_TCP_ESTABLISHED);
	assert_null(mlv_ct_lookup(ct, &k, h, t + T_TCP));
	assert_null(mlv_ct_lookup(ct, &k, h, t + T_TCP + 12345));

	/* sweeping across the wrap reclaims only what has expired */
	struct mlv_flow_key k2 = flow(2, 6);

	packet(ct, &k2, h + 1, MLV_TCP_SYN, t, NULL);
	assert_int_equal(mlv_ct_sweep(ct, t + T_HANDSHAKE, UINT32_MAX), 1);
	expect_alive(ct, &k, h, t + T_HANDSHAKE, MLV_CT_TCP_ESTABLISHED);
	assert_int_equal(mlv_ct_sweep(ct, t + T_TCP, UINT32_MAX), 1);
	assert_int_equal(mlv_ct_occupancy(ct), 0);
	mlv_ct_destroy(ct);
}

/* Hashes of flows that land in bucket b: drawn at random, kept if they
 * fall in b. */
static uint32_t hash_in_bucket(struct mlv_ct *ct, uint32_t b, uint64_t *seed)
{
	for (;;) {
		uint32_t h = (uint32_t)splitmix64(seed);

		if (mlv_ct_bucket_index(ct, h) == b)
			return h;
	}
}

/* Fill bucket b with WAYS established flows k[0..WAYS-1]; flow i's last
 * packet is at 100 + 10 * rank[i], so the stalest is the one whose rank
 * is 0, whatever its insertion order. */
static void fill_established(struct mlv_ct *ct, uint32_t b, uint64_t *seed,
			     uint32_t first_flow, const uint32_t *rank,
			     struct mlv_flow_key *k, uint32_t *h)
{
	for (uint32_t i = 0; i < MLV_CT_WAYS; i++) {
		h[i] = hash_in_bucket(ct, b, seed);
		k[i] = flow(first_flow + i, 6);
		packet(ct, &k[i], h[i], MLV_TCP_ACK, i, NULL);
	}
	for (uint32_t r = 0; r < MLV_CT_WAYS; r++)
		for (uint32_t i = 0; i < MLV_CT_WAYS; i++)
			if (rank[i] == r)
				packet(ct, &k[i], h[i], MLV_TCP_ACK, 100 + 10 * r, NULL);
}

static uint32_t stalest_of(const uint32_t *rank)
{
	for (uint32_t i = 0; i < MLV_CT_WAYS; i++)
		if (rank[i] == 0)
			return i;
	fail();
	return 0;
}

static void test_evicts_stalest_when_full(void **state)
{
	(void)state;
	struct test_mem m;
	struct mlv_ct *ct = make_ct(&default_params, &m);
	uint64_t seed = 5;
	uint32_t h[MLV_CT_WAYS];
	struct mlv_flow_key k[MLV_CT_WAYS];
	uint32_t rank[MLV_CT_WAYS];

	for (uint32_t i = 0; i < MLV_CT_WAYS; i++)
		rank[i] = (i * 3 + 1) % MLV_CT_WAYS;   /* a shuffle: WAYS is a power of 2 */
	fill_established(ct, 3, &seed, 0, rank, k, h);
	assert_int_equal(mlv_ct_occupancy(ct), MLV_CT_WAYS);

	/* full bucket, nothing expired: a new proven flow (first seen
	 * mid-stream) takes the stalest slot */
	struct mlv_flow_key n = flow(100, 6);
	uint32_t hn = hash_in_bucket(ct, 3, &seed);
	const uint32_t t = 1000;
	uint32_t victim = stalest_of(rank);
	bool is_new;

	packet(ct, &n, hn, MLV_TCP_ACK, t, &is_new);
	assert_true(is_new);
	assert_int_equal(mlv_ct_get_stats(ct)->evictions, 1);
	assert_int_equal(mlv_ct_occupancy(ct), MLV_CT_WAYS);
	expect_alive(ct, &n, hn, t, MLV_CT_TCP_ESTABLISHED);
	for (uint32_t i = 0; i < MLV_CT_WAYS; i++) {
		if (i == victim)
			assert_null(mlv_ct_lookup(ct, &k[i], h[i], t));
		else
			assert_non_null(mlv_ct_lookup(ct, &k[i], h[i], t));
	}

	/* the next stalest goes next, and UDP counts as proven too */
	uint32_t next_victim = 0;

	for (uint32_t i = 0; i < MLV_CT_WAYS; i++)
		if (rank[i] == 1)
			next_victim = i;
	struct mlv_flow_key u = flow(101, 17);
	uint32_t hu = hash_in_bucket(ct, 3, &seed);

	packet(ct, &u, hu, 0, t, NULL);
	assert_int_equal(mlv_ct_get_stats(ct)->evictions, 2);
	assert_null(mlv_ct_lookup(ct, &k[next_victim], h[next_victim], t));
	expect_alive(ct, &u, hu, t, MLV_CT_UDP);
	expect_alive(ct, &n, hn, t, MLV_CT_TCP_ESTABLISHED);
	mlv_ct_destroy(ct);
}

/* Unproven flows go first, even when they expire after every proven one. */
static void test_evicts_unproven_first(void **state)
{
	(void)state;
	struct test_mem m;
	struct mlv_ct *ct = make_ct(&default_params, &m);
	uint64_t seed = 6;
	uint32_t h[MLV_CT_WAYS];
	struct mlv_flow_key k[MLV_CT_WAYS];

	/* WAYS - 1 established at t = 0, then a SYN late in their lives
	 * (expiring after all of them) takes the last free slot */
	for (uint32_t i = 0; i < MLV_CT_WAYS; i++) {
		h[i] = hash_in_bucket(ct, 7, &seed);
		k[i] = flow(i, 6);
	}
	for (uint32_t i = 0; i + 1 < MLV_CT_WAYS; i++)
		packet(ct, &k[i], h[i], MLV_TCP_ACK, 0, NULL);
	const uint32_t late = T_TCP - T_HANDSHAKE / 2;
	const uint32_t o = MLV_CT_WAYS - 1;

	packet(ct, &k[o], h[o], MLV_TCP_SYN, late, NULL);
	expect_alive(ct, &k[o], h[o], late, MLV_CT_TCP_OPENING);
	assert_int_equal(mlv_ct_occupancy(ct), MLV_CT_WAYS);

	/* a new proven flow evicts the half-open one, not a stale
	 * established flow */
	struct mlv_flow_key n = flow(100, 6);
	uint32_t hn = hash_in_bucket(ct, 7, &seed);

	packet(ct, &n, hn, MLV_TCP_ACK, late + 1, NULL);
	assert_int_equal(mlv_ct_get_stats(ct)->evictions, 1);
	assert_null(mlv_ct_lookup(ct, &k[o], h[o], late + 1));
	for (uint32_t i = 0; i + 1 < MLV_CT_WAYS; i++)
		expect_alive(ct, &k[i], h[i], late + 1, MLV_CT_TCP_ESTABLISHED);

	/* and a new SYN evicts another unproven flow before any proven one:
	 * here the bucket has none left, so it stays out (next test) */
	mlv_ct_destroy(ct);
}

/* A SYN into a bucket of proven flows is not tracked; its handshake's
 * ACK then proves it and it evicts the stalest. */
static void test_unproven_newcomer_left_out(void **state)
{
	(void)state;
	struct test_mem m;
	struct mlv_ct *ct = make_ct(&default_params, &m);
	uint64_t seed = 8;
	uint32_t h[MLV_CT_WAYS];
	struct mlv_flow_key k[MLV_CT_WAYS];
	uint32_t rank[MLV_CT_WAYS];

	for (uint32_t i = 0; i < MLV_CT_WAYS; i++)
		rank[i] = MLV_CT_WAYS - 1 - i;
	fill_established(ct, 1, &seed, 0, rank, k, h);

	struct mlv_flow_key n = flow(100, 6);
	uint32_t hn = hash_in_bucket(ct, 1, &seed);
	const uint32_t t = 1000;
	bool is_new;

	/* the SYN (and its retransmission) is handed an entry, like any new
	 * flow, but nothing in the table changes */
	for (int i = 0; i < 2; i++) {
		struct mlv_ct_entry *e =
			mlv_ct_lookup_or_insert(ct, &n, hn, t + i, &is_new);

		assert_true(is_new);
		assert_int_equal(e->state, MLV_CT_FREE);
		e->backend_uid = 42;
		mlv_ct_update(ct, e, MLV_TCP_SYN, t + i);
		assert_null(mlv_ct_lookup(ct, &n, hn, t + i));
	}
	assert_int_equal(mlv_ct_get_stats(ct)->untracked, 2);
	assert_int_equal(mlv_ct_get_stats(ct)->evictions, 0);
	assert_int_equal(mlv_ct_occupancy(ct), MLV_CT_WAYS);
	for (uint32_t i = 0; i < MLV_CT_WAYS; i++)
		expect_alive(ct, &k[i], h[i], t, MLV_CT_TCP_ESTABLISHED);

	/* a new flow whose caller gives up (no backend) changes nothing */
	struct mlv_ct_entry *e = mlv_ct_lookup_or_insert(ct, &n, hn, t, &is_new);

	mlv_ct_remove(ct, e);
	mlv_ct_update(ct, e, MLV_TCP_ACK, t);
	assert_null(mlv_ct_lookup(ct, &n, hn, t));
	assert_int_equal(mlv_ct_occupancy(ct), MLV_CT_WAYS);
	assert_int_equal(mlv_ct_get_stats(ct)->evictions, 0);

	/* the handshake completes: the flow is proven and evicts the
	 * stalest, remembering what the caller set */
	e = mlv_ct_lookup_or_insert(ct, &n, hn, t + 5, &is_new);
	assert_true(is_new);
	e->backend_uid = 42;
	mlv_ct_update(ct, e, MLV_TCP_ACK, t + 5);
	e = mlv_ct_lookup(ct, &n, hn, t + 5);
	assert_non_null(e);
	assert_int_equal(e->state, MLV_CT_TCP_ESTABLISHED);
	assert_int_equal(e->backend_uid, 42);
	assert_int_equal(mlv_ct_get_stats(ct)->evictions, 1);
	uint32_t victim = stalest_of(rank);

	assert_null(mlv_ct_lookup(ct, &k[victim], h[victim], t + 5));
	assert_int_equal(mlv_ct_occupancy(ct), MLV_CT_WAYS);
	mlv_ct_destroy(ct);
}

static void test_expired_reused_before_evicting(void **state)
{
	(void)state;
	struct test_mem m;
	struct mlv_ct *ct = make_ct(&default_params, &m);
	uint64_t seed = 9;
	uint32_t h[MLV_CT_WAYS];
	struct mlv_flow_key k[MLV_CT_WAYS];
	const uint32_t udp = MLV_CT_WAYS / 2;

	/* a full bucket: one UDP flow (short idle timeout), the rest TCP */
	for (uint32_t i = 0; i < MLV_CT_WAYS; i++) {
		h[i] = hash_in_bucket(ct, 0, &seed);
		k[i] = flow(i, i == udp ? 17 : 6);
		packet(ct, &k[i], h[i], i == udp ? 0 : MLV_TCP_ACK, 0, NULL);
	}
	/* the UDP flow has expired; everything else is live but older */
	struct mlv_flow_key n = flow(50, 6);
	uint32_t hn = hash_in_bucket(ct, 0, &seed);
	bool is_new;

	packet(ct, &n, hn, MLV_TCP_SYN, T_UDP, &is_new);
	assert_true(is_new);
	assert_int_equal(mlv_ct_get_stats(ct)->evictions, 0);
	assert_int_equal(mlv_ct_get_stats(ct)->expired_reused, 1);
	assert_int_equal(mlv_ct_occupancy(ct), MLV_CT_WAYS);
	for (uint32_t i = 0; i < MLV_CT_WAYS; i++) {
		if (i == udp)
			assert_null(mlv_ct_lookup(ct, &k[i], h[i], T_UDP));
		else
			assert_non_null(mlv_ct_lookup(ct, &k[i], h[i], T_UDP));
	}
	mlv_ct_destroy(ct);
}

/* A SYN flood far larger than the table: new half-open flows recycle the
 * slots of other half-open flows, or stay out where a bucket is full of
 * established flows, and never push out an established one. */
static void test_syn_flood_spares_established(void **state)
{
	(void)state;
	struct test_mem m;
	struct mlv_ct_params p = default_params;

	p.entries = 64 * MLV_CT_WAYS;
	struct mlv_ct *ct = make_ct(&p, &m);
	uint32_t n_buckets = mlv_ct_capacity(ct) / MLV_CT_WAYS;
	uint32_t *eh = calloc(mlv_ct_capacity(ct), sizeof(*eh));
	uint64_t seed = 11;
	uint32_t t = 0, n_est = 0;

	assert_non_null(eh);
	/* the first half of the buckets: WAYS - 1 established flows each;
	 * the second half: full of established flows */
	for (uint32_t b = 0; b < n_buckets; b++) {
		uint32_t ways = b < n_buckets / 2 ? MLV_CT_WAYS - 1 : MLV_CT_WAYS;

		for (uint32_t w = 0; w < ways; w++, n_est++) {
			struct mlv_flow_key k = flow(n_est, 6);

			eh[n_est] = hash_in_bucket(ct, b, &seed);
			packet(ct, &k, eh[n_est], MLV_TCP_SYN, t, NULL);
			packet(ct, &k, eh[n_est], MLV_TCP_ACK, t, NULL);
		}
	}
	assert_int_equal(mlv_ct_occupancy(ct), n_est);

	/* 100 spoofed SYNs per slot, each a new flow. The flood comes late
	 * in the established flows' lives, so each half-open flow expires
	 * after every established one: expiry alone would pick the
	 * established flows; nothing established expires during it. */
	uint32_t flood = 100 * mlv_ct_capacity(ct);

	t = T_TCP - T_HANDSHAKE / 2;

	for (uint32_t i = 0; i < flood; i++) {
		struct mlv_flow_key k = flow(1000000 + i, 6);
		bool is_new;

		if (i % 1000 == 0)
			t++;   /* ends ~50 ms later, before T_TCP */
		packet(ct, &k, (uint32_t)splitmix64(&seed), MLV_TCP_SYN, t, &is_new);
		assert_true(is_new);
	}
	/* half-open flows recycled each other's slots, or stayed out */
	const struct mlv_ct_stats *st = mlv_ct_get_stats(ct);

	assert_true(st->evictions > 0);
	assert_true(st->untracked > 0);
	assert_int_equal(st->evictions + st->untracked + n_buckets / 2, flood);
	assert_int_equal(mlv_ct_occupancy(ct), mlv_ct_capacity(ct));
	for (uint32_t i = 0; i < n_est; i++) {
		struct mlv_flow_key k = flow(i, 6);

		expect_alive(ct, &k, eh[i], t, MLV_CT_TCP_ESTABLISHED);
	}
	free(eh);
	mlv_ct_destroy(ct);
}

/* The claim's one pass over a bucket (SSE4.1 where built so) against
 * the same computed one way at a time, on random buckets: any state, tags
 * that often match, expiries live, expired, exactly now, beyond the
 * 2^28 ms cap on time left, and half the clock away; the clock near 0
 * and near its wrap. And three buckets whose answer is worked out by
 * hand. */
static void test_bucket_scan(void **state)
{
	(void)state;
	static struct mlv_ct_entry b[MLV_CT_WAYS] __attribute__((aligned(128)));
	static const uint32_t clocks[] = { 0, 5000, 0x7ffffff0u, 0xfffffff0u };
	uint64_t seed = 5;
	uint32_t seen_free = 0, seen_live = 0, seen_capped = 0, seen_tags = 0;
	uint32_t tw, scalar, scalar_tw, least;

	for (uint32_t trial = 0; trial < 40000; trial++) {
		uint32_t now = clocks[trial % 4] + (uint32_t)(splitmix64(&seed) % 4000);
		uint32_t w = (uint32_t)(splitmix64(&seed) % MLV_CT_WAYS);
		uint8_t tag = (uint8_t)(splitmix64(&seed) % 3);

		for (uint32_t j = 0; j < MLV_CT_WAYS; j++) {
			uint64_t r = splitmix64(&seed);
			uint32_t x = (uint32_t)(r >> 32) % 1000000u;
			static const uint32_t offsets[] = {
				1, 0, (uint32_t)-1, 1u << 28, (1u << 28) - 1, 0x80000000u,
			};

			memset(&b[j], (int)(r & 0xff), sizeof(b[j]));
			b[j].tag = (uint8_t)((r >> 8) % 3);
			b[j].state = (uint8_t)((r >> 16) % MLV_CT__NSTATES);
			switch ((r >> 24) % 4) {
			case 0:
				b[j].expires_ms = now + x;   /* live (or now) */
				break;
			case 1:
				b[j].expires_ms = now - x;   /* expired */
				break;
			default:
				b[j].expires_ms = now + offsets[(r >> 28) % 6] + x % 3;
			}
		}
		least = mlv_ct__scan(b, w, tag, now, &tw, &scalar, &scalar_tw);
		assert_int_equal(least, scalar);
		assert_int_equal(tw, scalar_tw);
		seen_free += (least >> 2) == 0;
		seen_live += (least >> 2) != 0;
		seen_capped += ((least >> 2) & ((1u << 28) - 1)) == (1u << 28) - 1;
		seen_tags += tw != 0 && tw != 15;
	}
	assert_true(seen_free > 1000 && seen_live > 1000);
	assert_true(seen_capped > 10 && seen_tags > 1000);

	/* By hand, at now 1000, preferred way 1: way 3 is FREE (distance 2)
	 * and wins over every live flow; tags 7 at ways 0 and 2. */
	memset(b, 0, sizeof(b));
	b[0] = (struct mlv_ct_entry){ .tag = 7, .state = MLV_CT_TCP_OPENING, .expires_ms = 1100 };
	b[1] = (struct mlv_ct_entry){ .tag = 1, .state = MLV_CT_TCP_ESTABLISHED, .expires_ms = 1050 };
	b[2] = (struct mlv_ct_entry){ .tag = 7, .state = MLV_CT_TCP_OPENING, .expires_ms = 1030 };
	b[3] = (struct mlv_ct_entry){ .tag = 9, .state = MLV_CT_FREE, .expires_ms = 5000 };
	least = mlv_ct__scan(b, 1, 7, 1000, &tw, &scalar, &scalar_tw);
	assert_int_equal(least, 2);
	assert_int_equal(tw, 0x5);
	/* way 3 taken: the stalest unproven flow, way 2 (30 ms left, code 1,
	 * distance 1), before the established one with less time left */
	b[3] = (struct mlv_ct_entry){ .tag = 9, .state = MLV_CT_TCP_ESTABLISHED, .expires_ms = 1010 };
	least = mlv_ct__scan(b, 1, 7, 1000, &tw, &scalar, &scalar_tw);
	assert_int_equal(least, (1u << 28 | 30u) << 2 | 1u);
	/* time left beyond the cap ties; the nearer way (way 1 itself) wins */
	for (uint32_t j = 0; j < MLV_CT_WAYS; j++)
		b[j] = (struct mlv_ct_entry){ .state = MLV_CT_TCP_OPENING,
					      .expires_ms = 1000 + (1u << 28) + j };
	least = mlv_ct__scan(b, 1, 7, 1000, &tw, &scalar, &scalar_tw);
	assert_int_equal(least, (1u << 28 | ((1u << 28) - 1)) << 2);
	assert_int_equal(tw, 0);
}

/* The worker's pattern (dataplane/worker/forward.c, pass 3): each frame's probe
 * is read before the frame ahead of it changes the table, and redone
 * when that frame used the same bucket. On a small table (many flows per
 * bucket, evictions, spares), bursts of frames with one clock each, it
 * leaves the table exactly as mlv_ct_lookup_or_insert frame by frame. */
static void test_probe_ahead_matches_sequential(void **state)
{
	(void)state;
	static const uint8_t flags[] = { MLV_TCP_SYN, MLV_TCP_ACK, MLV_TCP_ACK,
					 MLV_TCP_FIN, MLV_TCP_SYN | MLV_TCP_ACK };
	struct mlv_ct_params p = default_params;
	struct test_mem ma, mb;
	struct mlv_ct *a, *b;
	uint64_t seed = 11;
	uint32_t now = 100, redone = 0;
	enum { BURST = 32, FLOWS = 300 };

	p.entries = 64;   /* 16 buckets */
	a = make_ct(&p, &ma);
	b = make_ct(&p, &mb);
	for (uint32_t burst = 0; burst < 400; burst++) {
		struct mlv_flow_key k[BURST];
		uint32_t h[BURST];
		uint8_t f[BURST];
		struct mlv_ct_probe pr[BURST + 1];

		/* now and then a pause past the handshake timeout */
		now += (uint32_t)(splitmix64(&seed) % 8 == 0 ? 6000 : splitmix64(&seed) % 400);
		for (uint32_t i = 0; i < BURST; i++) {
			uint32_t id = (uint32_t)(splitmix64(&seed) % FLOWS);
			uint64_t hs = id * 0x9e3779b97f4a7c15ull;

			k[i] = flow(id, id % 5 == 0 ? 17 : 6);
			h[i] = (uint32_t)(splitmix64(&hs) >> 32);
			f[i] = flags[splitmix64(&seed) % 5];
		}
		mlv_ct_probe(b, &k[0], h[0], now, &pr[0]);
		for (uint32_t i = 0; i < BURST; i++) {
			bool new_a, new_b;
			struct mlv_ct_entry *ea, *eb;

			if (i + 1 < BURST)
				mlv_ct_probe(b, &k[i + 1], h[i + 1], now, &pr[i + 1]);
			ea = mlv_ct_lookup_or_insert(a, &k[i], h[i], now, &new_a);
			if (i > 0 && pr[i].bucket == pr[i - 1].bucket) {
				mlv_ct_probe(b, &k[i], h[i], now, &pr[i]);
				redone++;
			}
			eb = mlv_ct_take(b, &k[i], h[i], now, &pr[i], &new_b);
			assert_int_equal(new_a, new_b);
			assert_int_equal(ea == &a->spare, eb == &b->spare);
			if (ea != &a->spare)
				assert_int_equal(ea - a->entries, eb - b->entries);
			mlv_ct_update(a, ea, f[i], now);
			mlv_ct_update(b, eb, f[i], now);
		}
		assert_memory_equal(a->entries, b->entries,
				    mlv_ct_capacity(a) * sizeof(struct mlv_ct_entry));
		assert_int_equal(mlv_ct_occupancy(a), mlv_ct_occupancy(b));
		assert_memory_equal(mlv_ct_get_stats(a), mlv_ct_get_stats(b),
				    sizeof(struct mlv_ct_stats));
	}
	const struct mlv_ct_stats *st = mlv_ct_get_stats(b);

	assert_true(redone > 100);
	assert_true(st->evictions > 100 && st->untracked > 0 &&
		    st->expired_reused > 10);
	mlv_ct_destroy(a);
	mlv_ct_destroy(b);
}

/* The worker's new-flow path against the general one, on two tables fed
 * the same packets: a takes every flow with mlv_ct_lookup_or_insert, sets
 * the backend fields of a new entry and calls mlv_ct_update; b reads the
 * bucket mlv_ct_prefetch returned with mlv_ct_probe_bucket, then a hit
 * goes to mlv_ct_take and mlv_ct_update, a miss to mlv_ct_insert. TCP
 * with every kind of flags, UDP, port-less (fragment) keys and IPv6, in
 * 16 buckets, so that claims evict, reuse expired slots and meet full
 * buckets of proven flows (the spare). Entries, counts kept through the
 * tally, occupancy and statistics must stay identical. */
/* The tally of uids first .. first + n - 1 (all of VIP uid 7) counts
 * exactly the entries holding a flow (state not FREE), by class. */
static void assert_tally_matches(const struct mlv_ct *ct,
				 const struct mlv_flow_tally *t,
				 uint32_t first, uint32_t n)
{
	uint32_t want[400][2] = { { 0 } };
	uint32_t all = 0;

	assert_true(n <= 400);
	for (uint32_t i = 0; i < mlv_ct_capacity(ct); i++) {
		const struct mlv_ct_entry *e = &ct->entries[i];

		if (e->state == MLV_CT_FREE)
			continue;
		assert_true(e->backend_uid >= first && e->backend_uid < first + n);
		want[e->backend_uid - first][e->state == MLV_CT_TCP_OPENING ||
					     e->state == MLV_CT_TCP_CLOSING]++;
		all++;
	}
	for (uint32_t u = 0; u < n; u++) {
		assert_int_equal(t[first + u].n[0], want[u][0]);
		assert_int_equal(t[first + u].n[1], want[u][1]);
	}
	assert_int_equal(t[7].vip_flows, all);
}

static struct mlv_flow_key mixed_flow(uint32_t id)
{
	struct mlv_flow_key k = flow(id, id % 5 == 0 ? 17 : 6);

	if (id % 7 == 0) {
		k.sport = 0;   /* a fragment's 3-tuple */
		k.dport = 0;
	}
	if (id % 11 == 0) {
		k.family = 6;
		k.src[15] = (uint8_t)id;
		k.dst[15] = 0x10;
	}
	return k;
}

static void test_insert_matches_take_and_update(void **state)
{
	(void)state;
	static const uint8_t flags[] = { MLV_TCP_SYN, MLV_TCP_ACK, MLV_TCP_ACK,
					 MLV_TCP_FIN, MLV_TCP_RST, 0,
					 MLV_TCP_SYN | MLV_TCP_ACK };
	enum { BURST = 32, FLOWS = 300, GEN = 7, BACKENDS = 8 };
	struct mlv_ct_params p = default_params;
	struct test_mem ma, mb;
	struct mlv_ct *a, *b;
	struct mlv_flow_tally *ta = NULL, *tb = NULL;
	uint64_t seed = 23;
	uint32_t now = 100, inserted = 0, hits = 0;

	p.entries = 64;   /* 16 buckets */
	a = make_ct(&p, &ma);
	b = make_ct(&p, &mb);
	b->seed = a->seed;   /* the same IPv6 fingerprints */
	assert_int_equal(mlv_flow_tally_create(&ta), MLV_OK);
	assert_int_equal(mlv_flow_tally_create(&tb), MLV_OK);
	mlv_ct_set_tally(a, ta);
	mlv_ct_set_tally(b, tb);
	for (uint32_t u = 1000; u < 1000 + FLOWS; u++)   /* all of VIP 7 */
		ta[u].vip_uid = tb[u].vip_uid = 7;
	for (uint32_t burst = 0; burst < 400; burst++) {
		now += (uint32_t)(splitmix64(&seed) % 8 == 0 ? 6000 : splitmix64(&seed) % 400);
		for (uint32_t i = 0; i < BURST; i++) {
			uint32_t id = (uint32_t)(splitmix64(&seed) % FLOWS);
			uint64_t hs = id * 0x9e3779b97f4a7c15ull;
			struct mlv_flow_key k = mixed_flow(id);
			uint32_t h = (uint32_t)(splitmix64(&hs) >> 32);
			uint8_t f = flags[splitmix64(&seed) % 7];
			uint32_t uid = 1000 + id, bi = id % BACKENDS;
			struct mlv_ct_probe pr;
			struct mlv_ct_entry *ea, *eb;
			bool new_a, new_b, tracked_a, tracked_b;

			ea = mlv_ct_lookup_or_insert(a, &k, h, now, &new_a);
			if (new_a) {
				ea->backend_uid = uid;
				ea->cached_gen = GEN;
				ea->backend_all_idx = bi;
			}
			tracked_a = mlv_ct_update(a, ea, f, now);
			mlv_ct_probe_bucket(b, mlv_ct_prefetch(b, h), &k, h, now, &pr);
			new_b = pr.hit == NULL;
			assert_int_equal(new_a, new_b);
			if (new_b) {
				tracked_b = mlv_ct_insert(b, &k, h, now, &pr, uid,
							  GEN, bi, f);
				inserted++;
			} else {
				eb = mlv_ct_take(b, &k, h, now, &pr, &new_b);
				assert_false(new_b);
				tracked_b = mlv_ct_update(b, eb, f, now);
				hits++;
			}
			assert_int_equal(tracked_a, tracked_b);
		}
		assert_memory_equal(a->entries, b->entries,
				    mlv_ct_capacity(a) * sizeof(struct mlv_ct_entry));
		assert_tally_matches(a, ta, 1000, FLOWS);
		assert_memory_equal(ta + 1000, tb + 1000,
				    FLOWS * sizeof(struct mlv_flow_tally));
		assert_int_equal(ta[7].vip_flows, tb[7].vip_flows);
		assert_int_equal(mlv_ct_occupancy(a), mlv_ct_occupancy(b));
		assert_memory_equal(mlv_ct_get_stats(a), mlv_ct_get_stats(b),
				    sizeof(struct mlv_ct_stats));
	}
	const struct mlv_ct_stats *st = mlv_ct_get_stats(b);

	assert_true(inserted > 1000 && hits > 1000);
	assert_true(st->evictions > 100 && st->untracked > 0 &&
		    st->expired_reused > 10);
	mlv_ct_destroy(a);
	mlv_ct_destroy(b);
	mlv_flow_tally_destroy(ta);
	mlv_flow_tally_destroy(tb);
}

/* Listing (mlv_ct_scan, mlv_ct_entry_view): pages of whole buckets that
 * together hold every live flow once, none expired or free; an entry
 * reads back its IPv4 key whole, a port-less one without ports, an IPv6
 * one as the client's last four bytes. */
static void test_scan_and_view(void **state)
{
	enum { FLOWS = 300 };
	struct mlv_ct_params p = default_params;
	struct test_mem mem;
	struct mlv_ct *ct;
	struct mlv_ct_entry page[16];
	uint8_t seen[FLOWS] = { 0 };
	uint32_t first = 0, n, pages = 0, total = 0, now = 100;
	bool is_new;

	(void)state;
	p.entries = 4096;   /* no bucket overflows: nothing live is evicted */
	ct = make_ct(&p, &mem);
	for (uint32_t i = 0; i < FLOWS; i++) {
		struct mlv_flow_key k = flow(i, i % 3 == 0 ? 17 : 6);
		uint32_t h = (uint32_t)(i * 2654435761u);
		struct mlv_ct_entry *e = mlv_ct_lookup_or_insert(ct, &k, h, now,
								 &is_new);

		e->backend_uid = 1000 + i;
		/* every tenth never updated (stays FREE), every seventh
		 * expired by the time of the scan */
		if (i % 10 == 9)
			continue;
		mlv_ct_update(ct, e, MLV_TCP_ACK,
			      i % 7 == 6 ? now - T_TCP - 1 : now);
	}
	do {
		first = mlv_ct_scan(ct, first, 5, now, page, 16, &n);
		assert_true(n <= 16);
		for (uint32_t j = 0; j < n; j++) {
			struct mlv_ct_view v;
			uint32_t i = page[j].backend_uid - 1000;
			struct mlv_flow_key k;

			assert_true(i < FLOWS);
			assert_true(i % 10 != 9 && i % 7 != 6);
			seen[i]++;
			k = flow(i, i % 3 == 0 ? 17 : 6);
			mlv_ct_entry_view(&page[j], &v);
			assert_int_equal(v.family, 4);
			assert_int_equal(v.proto, k.proto);
			assert_true(v.ports);
			assert_memory_equal(v.src, k.src, 4);
			assert_memory_equal(v.dst, k.dst, 4);
			assert_int_equal(v.sport, k.sport);
			assert_int_equal(v.dport, k.dport);
		}
		total += n;
		pages++;
	} while (first != 0);
	for (uint32_t i = 0; i < FLOWS; i++)
		assert_int_equal(seen[i], i % 10 != 9 && i % 7 != 6);
	assert_true(pages >= mlv_ct_capacity(ct) / MLV_CT_WAYS / 5);
	assert_true(total > 0);
	/* a cap that leaves no room for a whole bucket copies nothing */
	assert_int_equal(mlv_ct_scan(ct, 1, 5, now, page, 3, &n), 1);
	assert_int_equal(n, 0);
	mlv_ct_destroy(ct);

	/* port-less and IPv6 keys */
	struct mlv_flow_key k = flow(1, 6);
	struct mlv_ct_view v;

	ct = make_ct(&p, &mem);
	k.sport = k.dport = 0;
	mlv_ct_update(ct, mlv_ct_lookup_or_insert(ct, &k, 7, now, &is_new), 0, now);
	assert_int_equal(mlv_ct_scan(ct, 0, UINT32_MAX, now, page, 16, &n), 0);
	assert_int_equal(n, 1);
	mlv_ct_entry_view(&page[0], &v);
	assert_false(v.ports);
	assert_int_equal(v.proto, 6);
	assert_memory_equal(v.src, k.src, 4);
	mlv_ct_destroy(ct);
	ct = make_ct(&p, &mem);
	k = flow(2, 17);
	k.family = 6;
	for (int i = 0; i < 16; i++)
		k.src[i] = (uint8_t)(0x20 + i);
	mlv_ct_update(ct, mlv_ct_lookup_or_insert(ct, &k, 9, now, &is_new), 0, now);
	assert_int_equal(mlv_ct_scan(ct, 0, UINT32_MAX, now, page, 16, &n), 0);
	assert_int_equal(n, 1);
	mlv_ct_entry_view(&page[0], &v);
	assert_int_equal(v.family, 6);
	assert_int_equal(v.proto, 17);
	assert_true(v.ports);
	assert_memory_equal(v.src, &k.src[12], 4);
	mlv_ct_destroy(ct);
}

/* The claim policy, written out plainly, against the table on random
 * buckets: from the new flow's preferred way (the hash's low bits) on,
 * the first free or expired slot; else the stalest of the lowest eviction
 * class (unproven before proven), ties to the earlier way in that order;
 * a SYN never evicts a proven flow (it stays untracked). Few distinct
 * times, so expiry ties are common. */
static bool proven(uint8_t state)
{
	return state == MLV_CT_TCP_ESTABLISHED || state == MLV_CT_UDP ||
	       state == MLV_CT_OTHER;
}

static void test_claim_matches_policy(void **state)
{
	(void)state;
	static const uint8_t tcp_flags[] = { MLV_TCP_SYN, MLV_TCP_ACK,
					     MLV_TCP_FIN };
	uint64_t seed = 77;
	uint32_t seen_free = 0, seen_unproven = 0, seen_proven = 0,
		 seen_untracked = 0;

	for (uint32_t trial = 0; trial < 3000; trial++) {
		struct test_mem m;
		struct mlv_ct *ct = make_ct(&default_params, &m);
		struct mlv_flow_key k[MLV_CT_WAYS];
		uint32_t h[MLV_CT_WAYS];
		struct mlv_ct_entry *slot_of[MLV_CT_WAYS], *base = NULL;
		bool present[MLV_CT_WAYS];
		uint32_t bucket = (uint32_t)(splitmix64(&seed) % 256);

		for (uint32_t i = 0; i < MLV_CT_WAYS; i++) {
			bool udp = splitmix64(&seed) % 4 == 0;
			uint8_t f = tcp_flags[splitmix64(&seed) % 3];

			k[i] = flow(trial * 8 + i, udp ? 17 : 6);
			h[i] = hash_in_bucket(ct, bucket, &seed);
			slot_of[i] = packet(ct, &k[i], h[i], f,
					    (uint32_t)(splitmix64(&seed) % 2), NULL);
			if (base == NULL || slot_of[i] < base)
				base = slot_of[i];
		}
		/* free some ways once all four are taken, so base is the
		 * bucket's first */
		for (uint32_t i = 0; i < MLV_CT_WAYS; i++) {
			present[i] = splitmix64(&seed) % 5 != 0;
			if (!present[i])
				mlv_ct_remove(ct, slot_of[i]);
		}
		/* at 6000 the handshakes (5000 ms) have expired */
		uint32_t now = splitmix64(&seed) % 2 ? 3000 : 6000;
		uint8_t nf = splitmix64(&seed) % 2 ? MLV_TCP_SYN : MLV_TCP_ACK;
		struct mlv_flow_key nk = flow(trial * 8 + 7, 6);
		uint32_t nh = hash_in_bucket(ct, bucket, &seed);
		struct mlv_ct_stats before = *mlv_ct_get_stats(ct);

		/* the reference */
		struct mlv_ct_entry *want = NULL, *victim = NULL;

		for (uint32_t i = 0; i < MLV_CT_WAYS && !want; i++) {
			struct mlv_ct_entry *e =
				&base[(nh + i) & (MLV_CT_WAYS - 1)];
			bool live = e->state != MLV_CT_FREE &&
				    (int32_t)(e->expires_ms - now) > 0;

			if (!live)
				want = e;
			else if (!victim ||
				 proven(e->state) < proven(victim->state) ||
				 (proven(e->state) == proven(victim->state) &&
				  e->expires_ms < victim->expires_ms))
				victim = e;
		}
		bool untracked = !want && proven(victim->state) &&
				 nf == MLV_TCP_SYN;
		bool evicts = !want && !untracked;

		if (want)
			seen_free++;
		else if (untracked)
			seen_untracked++;
		else if (proven(victim->state))
			seen_proven++;
		else
			seen_unproven++;
		if (!want)
			want = victim;

		packet(ct, &nk, nh, nf, now, NULL);
		struct mlv_ct_entry *got = mlv_ct_lookup(ct, &nk, nh, now);
		const struct mlv_ct_stats *after = mlv_ct_get_stats(ct);

		if (untracked) {
			assert_null(got);
			assert_int_equal(after->untracked, before.untracked + 1);
		} else {
			assert_ptr_equal(got, want);
		}
		assert_int_equal(after->evictions, before.evictions + evicts);
		for (uint32_t i = 0; i < MLV_CT_WAYS; i++) {
			bool kept = present[i] &&
				    (int32_t)(slot_of[i]->expires_ms - now) > 0;

			if (!untracked && slot_of[i] == want)
				assert_null(mlv_ct_lookup(ct, &k[i], h[i], now));
			else if (kept)
				assert_ptr_equal(mlv_ct_lookup(ct, &k[i], h[i], now),
						 slot_of[i]);
		}
		mlv_ct_destroy(ct);
	}
	/* every branch of the policy was exercised */
	assert_true(seen_free > 0 && seen_unproven > 0 && seen_proven > 0 &&
		    seen_untracked > 0);
}

static void test_sweep_restores_occupancy(void **state)
{
	(void)state;
	struct test_mem m;
	struct mlv_ct_params p = default_params;

	p.entries = 4096;
	struct mlv_ct *ct = make_ct(&p, &m);
	uint32_t n_buckets = mlv_ct_capacity(ct) / MLV_CT_WAYS;
	enum { N = 1500 };
	uint64_t seed = 3;
	uint32_t h[N];

	/* half short-lived UDP, half established TCP */
	for (uint32_t i = 0; i < N; i++) {
		struct mlv_flow_key k = flow(i, i % 2 ? 17 : 6);

		h[i] = (uint32_t)splitmix64(&seed);
		packet(ct, &k, h[i], i % 2 ? 0 : MLV_TCP_ACK, 0, NULL);
	}
	uint32_t occ = mlv_ct_occupancy(ct);
	uint32_t udp_live = 0;

	for (uint32_t i = 1; i < N; i += 2) {
		struct mlv_flow_key k = flow(i, 17);

		udp_live += mlv_ct_lookup(ct, &k, h[i], 0) != NULL;
	}
	assert_true(udp_live > 0);
	assert_int_equal(occ, N - mlv_ct_get_stats(ct)->evictions);

	/* nothing has expired yet: a full sweep reclaims nothing */
	assert_int_equal(mlv_ct_sweep(ct, T_UDP - 1, n_buckets), 0);
	assert_int_equal(mlv_ct_occupancy(ct), occ);

	/* UDP expired: sweep one bucket at a time; the pieces add up to the
	 * whole, each bucket visited once per lap */
	uint32_t total = 0;

	for (uint32_t b = 0; b < n_buckets; b++)
		total += mlv_ct_sweep(ct, T_UDP, 1);
	assert_int_equal(total, udp_live);
	assert_int_equal(mlv_ct_occupancy(ct), occ - udp_live);
	assert_int_equal(mlv_ct_sweep(ct, T_UDP, n_buckets), 0);
	assert_int_equal(mlv_ct_get_stats(ct)->swept, udp_live);
	for (uint32_t i = 0; i < N; i += 2) {
		struct mlv_flow_key k = flow(i, 6);

		if (mlv_ct_lookup(ct, &k, h[i], T_UDP) == NULL)
			continue;   /* was evicted while filling */
		expect_alive(ct, &k, h[i], T_UDP, MLV_CT_TCP_ESTABLISHED);
	}

	/* everything expired: a lap in uneven chunks empties the table */
	uint32_t left = mlv_ct_occupancy(ct);

	total = 0;
	for (uint32_t done = 0; done < n_buckets; done += 7)
		total += mlv_ct_sweep(ct, T_TCP, 7);
	assert_int_equal(total, left);
	assert_int_equal(mlv_ct_occupancy(ct), 0);
	assert_int_equal(mlv_ct_sweep(ct, T_TCP, n_buckets), 0);
	mlv_ct_destroy(ct);
}

/* Katran's default: 8M entries per worker, 64 bytes each. Created from
 * lazily zeroed calloc memory, so this does not touch 512 MB. */
/* What tells flows apart: every field of an IPv4 5-tuple, and of an IPv6
 * one (kept as a keyed fingerprint), and the family. Each pair shares one
 * hash (so one bucket and one tag) and must be tracked apart. The state
 * machine sees the protocol and the ports through what the table keeps. */
static void test_flow_identity(void **state)
{
	(void)state;
	struct test_mem m;
	struct mlv_ct *ct = make_ct(&default_params, &m);
	struct mlv_flow_key v4 = flow(7, 6), v6;

	memset(&v6, 0, sizeof(v6));
	v6.family = 6;
	v6.proto = 6;
	for (int i = 0; i < 16; i++) {
		v6.src[i] = (uint8_t)(0x20 + i);
		v6.dst[i] = (uint8_t)(0x40 + i);
	}
	v6.sport = 1234;
	v6.dport = 80;

	struct mlv_flow_key other[16];
	uint32_t n = 0;

	for (int f = 0; f < 2; f++) {
		struct mlv_flow_key b = f ? v6 : v4, k;
		int last = f ? 15 : 3;

		k = b; k.src[0] ^= 1; other[n++] = k;
		k = b; k.src[last] ^= 1; other[n++] = k;
		k = b; k.dst[0] ^= 1; other[n++] = k;
		k = b; k.dst[last] ^= 1; other[n++] = k;
		k = b; k.sport++; other[n++] = k;
		k = b; k.dport++; other[n++] = k;
		k = b; k.proto = 17; other[n++] = k;
	}
	/* the same addresses and ports in the other family */
	other[n] = v6;
	other[n].family = 4;
	n++;

	for (uint32_t i = 0; i < n; i++) {
		const struct mlv_flow_key *base = i < 7 ? &v4 : &v6;
		uint32_t hash = (i + 1) << 24 | 0x5a5a;
		struct mlv_ct_entry *a = packet(ct, base, hash, MLV_TCP_ACK, 0, NULL);
		bool is_new = false;
		struct mlv_ct_entry *b = packet(ct, &other[i], hash, MLV_TCP_ACK, 0,
						&is_new);

		assert_true(is_new);
		assert_ptr_not_equal(a, b);
		assert_ptr_equal(mlv_ct_lookup(ct, base, hash, 1), a);
		assert_ptr_equal(mlv_ct_lookup(ct, &other[i], hash, 1), b);
		mlv_ct_remove(ct, a);
		mlv_ct_remove(ct, b);
	}
	assert_int_equal(mlv_ct_occupancy(ct), 0);
	assert_int_equal(mlv_ct_get_stats(ct)->evictions, 0);

	/* states from what the table keeps, in both families */
	struct mlv_flow_key u6 = v6, frag6 = v6, frag4 = v4;

	u6.proto = 17;
	frag6.sport = frag6.dport = 0;
	frag6.proto = 44;
	frag4.sport = frag4.dport = 0;
	assert_int_equal(packet(ct, &v6, 1, MLV_TCP_SYN, 0, NULL)->state,
			 MLV_CT_TCP_OPENING);
	assert_int_equal(packet(ct, &v6, 1, MLV_TCP_ACK, 0, NULL)->state,
			 MLV_CT_TCP_ESTABLISHED);
	assert_int_equal(packet(ct, &v6, 1, MLV_TCP_FIN, 0, NULL)->state,
			 MLV_CT_TCP_CLOSING);
	assert_int_equal(packet(ct, &u6, 2, 0, 0, NULL)->state, MLV_CT_UDP);
	assert_int_equal(packet(ct, &frag6, 3, 0, 0, NULL)->state, MLV_CT_OTHER);
	assert_int_equal(packet(ct, &frag4, 4, 0, 0, NULL)->state, MLV_CT_OTHER);
	assert_int_equal(mlv_ct_occupancy(ct), 4);
	mlv_ct_destroy(ct);
}

static void test_8m_entries(void **state)
{
	(void)state;
	struct test_mem m;
	struct mlv_ct_params p = default_params;
	const uint32_t n = 8u << 20;

	p.entries = n;
	struct mlv_ct *ct = make_ct(&p, &m);

	assert_int_equal(mlv_ct_capacity(ct), n);
	assert_int_equal(m.requested, mlv_ct_mem_size(n));
	/* 32 bytes per entry (256 MiB), a fixed header of a few cache
	 * lines; every bucket two aligned cache lines */
	assert_int_equal(sizeof(struct mlv_ct_entry), 32);
	assert_int_equal(mlv_ct_mem_size(n) - mlv_ct_mem_size(n - MLV_CT_WAYS),
			 32 * MLV_CT_WAYS);
	assert_true(m.requested - (size_t)n * 32 <= 4096);
	for (uint32_t h = 0; h < 64; h++) {
		uint32_t hash = h * 0x9e3779b9u;
		struct mlv_flow_key k = flow(100 + h, 6);
		struct mlv_ct_entry *e = packet(ct, &k, hash, MLV_TCP_ACK, 0, NULL);
		uintptr_t bucket_start = (uintptr_t)(e - (hash & (MLV_CT_WAYS - 1)));

		assert_int_equal(bucket_start % 128, 0);
		mlv_ct_remove(ct, e);
	}

	/* the first and last buckets work */
	struct mlv_flow_key a = flow(1, 6), z = flow(2, 6);

	mlv_ct_prefetch(ct, 0);
	mlv_ct_prefetch(ct, UINT32_MAX);

	packet(ct, &a, 0, MLV_TCP_ACK, 0, NULL);
	packet(ct, &z, UINT32_MAX, MLV_TCP_ACK, 0, NULL);
	assert_int_equal(mlv_ct_bucket_index(ct, 0), 0);
	assert_int_equal(mlv_ct_bucket_index(ct, UINT32_MAX), n / MLV_CT_WAYS - 1);
	assert_non_null(mlv_ct_lookup(ct, &a, 0, 1));
	assert_non_null(mlv_ct_lookup(ct, &z, UINT32_MAX, 1));
	assert_int_equal(mlv_ct_occupancy(ct), 2);
	mlv_ct_destroy(ct);
	assert_int_equal(m.releases, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_params_rejected),
		cmocka_unit_test(test_capacity_rounding),
		cmocka_unit_test(test_insert_lookup),
		cmocka_unit_test(test_new_entry_is_clean),
		cmocka_unit_test(test_tcp_states_and_timeouts),
		cmocka_unit_test(test_udp_and_other),
		cmocka_unit_test(test_clock_wraparound),
		cmocka_unit_test(test_evicts_stalest_when_full),
		cmocka_unit_test(test_evicts_unproven_first),
		cmocka_unit_test(test_unproven_newcomer_left_out),
		cmocka_unit_test(test_expired_reused_before_evicting),
		cmocka_unit_test(test_syn_flood_spares_established),
		cmocka_unit_test(test_claim_matches_policy),
		cmocka_unit_test(test_bucket_scan),
		cmocka_unit_test(test_probe_ahead_matches_sequential),
		cmocka_unit_test(test_insert_matches_take_and_update),
		cmocka_unit_test(test_scan_and_view),
		cmocka_unit_test(test_sweep_restores_occupancy),
		cmocka_unit_test(test_flow_identity),
		cmocka_unit_test(test_8m_entries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
