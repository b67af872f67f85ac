/* SPDX-License-Identifier: BSD-3-Clause */
/* The conntrack release hook (mlv_ct_set_release_hook), the tally
 * (mlv_ct_set_tally) and mlv_ct_update's "tracked" result, which bounded
 * loads count flows with: hook and tally must see every tracked flow
 * exactly once when the table lets go of it (removed, swept, reused after
 * expiring, evicted), and never a flow that was not tracked (a claimed
 * entry never updated, the spare that stays out). Flows are aimed at one
 * bucket by passing the same hash; the clock is driven explicitly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane/packet/conntrack.h"

#define T_HANDSHAKE 5000u
#define T_UDP 30000u
#define HASH 0x12345678u

static const struct mlv_ct_params params = {
	.entries = 1024,
	.tcp_timeout_ms = 300000,
	.tcp_handshake_timeout_ms = T_HANDSHAKE,
	.tcp_closing_timeout_ms = 10000,
	.udp_timeout_ms = T_UDP,
	.other_timeout_ms = 2000,
};

/* What the hook saw: backend uids of released flows, in order. */
struct seen {
	uint32_t n;
	uint32_t uid[16];
};

static void on_release(void *ctx, const struct mlv_ct_entry *e)
{
	struct seen *s = ctx;

	assert_true(s->n < 16);
	assert_int_not_equal(e->state, MLV_CT_FREE);
	s->uid[s->n++] = e->backend_uid;
}

static void *alloc(size_t size, void *ctx)
{
	(void)ctx;
	return calloc(1, size);
}

static void release(void *ptr, void *ctx)
{
	(void)ctx;
	free(ptr);
}

static struct mlv_ct *make(struct seen *s)
{
	struct mlv_ct *ct = mlv_ct_create(&params, alloc, release, NULL);

	assert_non_null(ct);
	memset(s, 0, sizeof(*s));
	mlv_ct_set_release_hook(ct, on_release, s);
	return ct;
}

static struct mlv_flow_key flow(uint32_t i, uint8_t proto)
{
	struct mlv_flow_key k;

	memset(&k, 0, sizeof(k));
	k.family = 4;
	k.proto = proto;
	k.src[0] = 10;
	k.src[3] = (uint8_t)i;
	k.dst[0] = 192;
	k.sport = (uint16_t)(1000 + i);
	k.dport = 80;
	return k;
}

/* A new flow with backend uid = its number; returns mlv_ct_update's
 * result. */
static bool start(struct mlv_ct *ct, uint32_t i, uint8_t proto, uint8_t flags,
		  uint32_t now)
{
	struct mlv_flow_key k = flow(i, proto);
	bool fresh;
	struct mlv_ct_entry *e = mlv_ct_lookup_or_insert(ct, &k, HASH, now, &fresh);

	assert_true(fresh);
	e->backend_uid = i;
	return mlv_ct_update(ct, e, flags, now);
}

static void test_remove_and_untracked_claim(void **state)
{
	struct seen s;
	struct mlv_ct *ct = make(&s);
	struct mlv_flow_key k = flow(1, 6);
	struct mlv_ct_entry *e;
	bool fresh;

	(void)state;
	assert_true(start(ct, 1, 6, MLV_TCP_SYN, 0));
	e = mlv_ct_lookup(ct, &k, HASH, 1);
	mlv_ct_remove(ct, e);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.uid[0], 1);
	/* claimed, never updated: not a tracked flow */
	k = flow(2, 6);
	e = mlv_ct_lookup_or_insert(ct, &k, HASH, 2, &fresh);
	mlv_ct_remove(ct, e);
	assert_int_equal(s.n, 1);
	mlv_ct_destroy(ct);
}

static void test_sweep_and_expired_reuse(void **state)
{
	struct seen s;
	struct mlv_ct *ct = make(&s);

	(void)state;
	assert_true(start(ct, 1, 17, 0, 0));
	assert_true(start(ct, 2, 17, 0, 100));
	/* flow 1 expires first and is swept; flow 2 is still live */
	assert_int_equal(mlv_ct_sweep(ct, T_UDP, UINT32_MAX), 1);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.uid[0], 1);
	/* flow 2 expires unswept: flow 3 takes the free way, flow 4 reuses
	 * flow 2's */
	assert_true(start(ct, 3, 17, 0, T_UDP + 200));
	assert_int_equal(s.n, 1);
	assert_true(start(ct, 4, 17, 0, T_UDP + 200));
	assert_int_equal(s.n, 2);
	assert_int_equal(s.uid[1], 2);
	mlv_ct_destroy(ct);
}

static void test_eviction(void **state)
{
	struct seen s;
	struct mlv_ct *ct = make(&s);

	(void)state;
	/* four half-open flows fill the bucket; a fifth evicts the stalest */
	for (uint32_t i = 1; i <= 4; i++)
		assert_true(start(ct, i, 6, MLV_TCP_SYN, i));
	assert_int_equal(s.n, 0);
	assert_true(start(ct, 5, 6, MLV_TCP_SYN, 10));
	assert_int_equal(s.n, 1);
	assert_int_equal(s.uid[0], 1);
	mlv_ct_destroy(ct);
}

static void test_spare(void **state)
{
	struct seen s;
	struct mlv_ct *ct = make(&s);

	(void)state;
	/* four proven (UDP) flows fill the bucket */
	for (uint32_t i = 1; i <= 4; i++)
		assert_true(start(ct, i, 17, 0, i));
	/* a SYN stays out: not tracked, nothing released */
	assert_false(start(ct, 5, 6, MLV_TCP_SYN, 10));
	assert_int_equal(s.n, 0);
	/* a proven newcomer replaces the stalest proven flow */
	assert_true(start(ct, 6, 17, 0, 11));
	assert_int_equal(s.n, 1);
	assert_int_equal(s.uid[0], 1);
	mlv_ct_destroy(ct);
}

/* ---- The tally (mlv_ct_set_tally) ---- */

#define TALLY_GEN 7u
#define TALLY_N 6u

/* A new flow counted the way maglevd's forwarding path counts it: its
 * entry carries generation gen and index idx, and if mlv_ct_update says
 * it is tracked it adds one to counts[idx]. */
static struct mlv_ct_entry *start_counted(struct mlv_ct *ct, uint32_t *counts,
					  uint32_t i, uint8_t proto,
					  uint8_t flags, uint32_t now,
					  uint32_t gen, uint32_t idx)
{
	struct mlv_flow_key k = flow(i, proto);
	bool fresh;
	struct mlv_ct_entry *e = mlv_ct_lookup_or_insert(ct, &k, HASH, now, &fresh);

	assert_true(fresh);
	e->backend_uid = i;
	e->cached_gen = gen;
	e->backend_all_idx = idx;
	if (!mlv_ct_update(ct, e, flags, now))
		return NULL;
	counts[idx]++;
	return e;
}

/* Every way the table lets a tracked flow go counts it off, once. */
static void test_tally_counts_off(void **state)
{
	struct seen s;
	struct mlv_ct *ct = make(&s);
	uint32_t counts[8] = { 0 };
	struct mlv_ct_entry *e;

	(void)state;
	mlv_ct_set_tally(ct, TALLY_GEN, counts, TALLY_N);
	/* removed */
	e = start_counted(ct, counts, 1, 6, MLV_TCP_SYN, 0, TALLY_GEN, 1);
	assert_int_equal(counts[1], 1);
	mlv_ct_remove(ct, e);
	assert_int_equal(counts[1], 0);
	mlv_ct_remove(ct, e);   /* already gone: not twice */
	assert_int_equal(counts[1], 0);
	/* evicted: four half-open flows, a fifth takes the stalest's way */
	for (uint32_t i = 2; i <= 5; i++)
		start_counted(ct, counts, i, 6, MLV_TCP_SYN, i, TALLY_GEN, 2);
	assert_int_equal(counts[2], 4);
	start_counted(ct, counts, 6, 6, MLV_TCP_SYN, 10, TALLY_GEN, 3);
	assert_int_equal(counts[2], 3);
	assert_int_equal(counts[3], 1);
	/* swept after the handshake timeout */
	assert_int_equal(mlv_ct_sweep(ct, 10 + T_HANDSHAKE, UINT32_MAX), 4);
	assert_int_equal(counts[2], 0);
	assert_int_equal(counts[3], 0);
	/* reused after expiring, unswept: flow 8 takes flow 7's way */
	start_counted(ct, counts, 7, 17, 0, 20000, TALLY_GEN, 4);
	for (uint32_t i = 8; i <= 10; i++)
		start_counted(ct, counts, i, 17, 0, 20000 + T_UDP, TALLY_GEN, 5);
	assert_int_equal(counts[4], 0);
	assert_int_equal(counts[5], 3);
	/* the hook saw the same flows */
	assert_int_equal(s.n, 7);
	mlv_ct_destroy(ct);
}

/* What is not counted off: flows of another generation, indexes beyond
 * the tally, flows never tracked (claimed and not updated, the SYN that
 * stays out of a full bucket), nothing below zero, nothing once unset. */
static void test_tally_leaves_alone(void **state)
{
	struct seen s;
	struct mlv_ct *ct = make(&s);
	uint32_t counts[8] = { 0 };
	struct mlv_ct_entry *e;
	struct mlv_flow_key k;
	bool fresh;

	(void)state;
	mlv_ct_set_tally(ct, TALLY_GEN, counts, TALLY_N);
	e = start_counted(ct, counts, 1, 17, 0, 0, TALLY_GEN - 1, 1);
	mlv_ct_remove(ct, e);
	assert_int_equal(counts[1], 1);
	e = start_counted(ct, counts, 2, 17, 0, 0, TALLY_GEN, TALLY_N);
	mlv_ct_remove(ct, e);
	assert_int_equal(counts[TALLY_N], 1);
	e = start_counted(ct, counts, 3, 17, 0, 0, TALLY_GEN, 2);
	counts[2] = 0;
	mlv_ct_remove(ct, e);
	assert_int_equal(counts[2], 0);
	k = flow(4, 6);
	e = mlv_ct_lookup_or_insert(ct, &k, HASH, 1, &fresh);
	e->cached_gen = TALLY_GEN;
	e->backend_all_idx = 3;
	counts[3] = 5;
	mlv_ct_remove(ct, e);
	assert_int_equal(counts[3], 5);
	/* four proven flows fill the bucket; a SYN stays out */
	for (uint32_t i = 5; i <= 8; i++)
		start_counted(ct, counts, i, 17, 0, i, TALLY_GEN, 4);
	assert_null(start_counted(ct, counts, 9, 6, MLV_TCP_SYN, 10, TALLY_GEN, 5));
	assert_int_equal(counts[4], 4);
	assert_int_equal(counts[5], 0);
	/* unset: the proven newcomer evicts, nothing is counted off */
	mlv_ct_set_tally(ct, 0, NULL, 0);
	start_counted(ct, counts, 10, 17, 0, 11, TALLY_GEN, 5);
	assert_int_equal(counts[4], 4);
	assert_int_equal(s.n, 4);   /* the hook still runs */
	mlv_ct_destroy(ct);
}

/* Without a hook nothing is called (and nothing breaks). */
static void test_no_hook(void **state)
{
	struct mlv_ct *ct = mlv_ct_create(&params, alloc, release, NULL);

	(void)state;
	assert_non_null(ct);
	for (uint32_t i = 1; i <= 6; i++)
		start(ct, i, 6, MLV_TCP_SYN, i);
	assert_int_equal(mlv_ct_sweep(ct, 100000, UINT32_MAX), 4);
	mlv_ct_destroy(ct);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remove_and_untracked_claim),
		cmocka_unit_test(test_sweep_and_expired_reuse),
		cmocka_unit_test(test_eviction),
		cmocka_unit_test(test_spare),
		cmocka_unit_test(test_no_hook),
		cmocka_unit_test(test_tally_counts_off),
		cmocka_unit_test(test_tally_leaves_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
