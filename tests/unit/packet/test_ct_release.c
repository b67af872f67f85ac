/* SPDX-License-Identifier: BSD-3-Clause */
/* The conntrack release hook (mlv_ct_set_release_hook), the tally
 * (mlv_ct_set_tally, flow_tally.h) and mlv_ct_update's "tracked" result:
 * hook and tally must see every tracked flow
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

#define VIP_A 3u
#define VIP_B 4u

/* A flow tracked the way the table's callers start one: claimed, its
 * backend set (with the backend's VIP bound in the tally as the control
 * thread binds it, mlv_gen_tally_bind), then updated; NULL if it stayed
 * out. */
static struct mlv_ct_entry *start_tallied(struct mlv_ct *ct,
					  struct mlv_flow_tally *t, uint32_t i,
					  uint8_t proto, uint8_t flags,
					  uint32_t now, uint32_t uid,
					  uint32_t vip)
{
	struct mlv_flow_key k = flow(i, proto);
	bool fresh;
	struct mlv_ct_entry *e = mlv_ct_lookup_or_insert(ct, &k, HASH, now, &fresh);

	assert_true(fresh);
	t[mlv_tally_slot(uid)].vip_uid = vip;
	e->backend_uid = uid;
	return mlv_ct_update(ct, e, flags, now) ? e : NULL;
}

static uint32_t active(const struct mlv_flow_tally *t, uint32_t uid)
{
	return t[mlv_tally_slot(uid)].n[MLV_TALLY_ACTIVE];
}

static uint32_t inactive(const struct mlv_flow_tally *t, uint32_t uid)
{
	return t[mlv_tally_slot(uid)].n[MLV_TALLY_INACTIVE];
}

static uint32_t vip_flows(const struct mlv_flow_tally *t, uint32_t vip)
{
	return t[mlv_tally_slot(vip)].vip_flows;
}

static struct mlv_flow_tally *make_tally(struct mlv_ct *ct)
{
	struct mlv_flow_tally *t = NULL;

	assert_int_equal(mlv_flow_tally_create(&t), MLV_OK);
	mlv_ct_set_tally(ct, t);
	return t;
}

/* A flow counts in its class and its VIP from the moment it is tracked,
 * changes class with its state, moves with mlv_ct_rebind, and every way
 * the table lets it go counts it off, once. */
static void test_tally_follows_flows(void **state)
{
	struct seen s;
	struct mlv_ct *ct = make(&s);
	struct mlv_flow_tally *t = make_tally(ct);
	struct mlv_flow_key k = flow(1, 6);
	struct mlv_ct_entry *e;

	(void)state;
	e = start_tallied(ct, t, 1, 6, MLV_TCP_SYN, 0, 10, VIP_A);
	assert_int_equal(inactive(t, 10), 1);       /* opening */
	assert_int_equal(active(t, 10), 0);
	assert_int_equal(vip_flows(t, VIP_A), 1);
	mlv_ct_update(ct, mlv_ct_lookup(ct, &k, HASH, 1), MLV_TCP_ACK, 1);
	assert_int_equal(inactive(t, 10), 0);       /* established */
	assert_int_equal(active(t, 10), 1);
	mlv_ct_update(ct, e, MLV_TCP_ACK, 2);       /* no change */
	assert_int_equal(active(t, 10), 1);
	assert_int_equal(vip_flows(t, VIP_A), 1);
	/* re-selected to another backend of another VIP */
	t[mlv_tally_slot(11)].vip_uid = VIP_B;   /* as the control thread binds it */
	mlv_ct_rebind(ct, e, 11);
	assert_int_equal(e->backend_uid, 11);
	assert_int_equal(active(t, 10), 0);
	assert_int_equal(active(t, 11), 1);
	assert_int_equal(vip_flows(t, VIP_A), 0);
	assert_int_equal(vip_flows(t, VIP_B), 1);
	mlv_ct_update(ct, e, MLV_TCP_FIN, 3);       /* closing */
	assert_int_equal(active(t, 11), 0);
	assert_int_equal(inactive(t, 11), 1);
	mlv_ct_remove(ct, e);
	assert_int_equal(inactive(t, 11), 0);
	assert_int_equal(vip_flows(t, VIP_B), 0);
	mlv_ct_remove(ct, e);   /* already gone: not twice */
	assert_int_equal(vip_flows(t, VIP_B), 0);
	/* evicted: four half-open flows, a fifth takes the stalest's way */
	for (uint32_t i = 2; i <= 5; i++)
		start_tallied(ct, t, i, 6, MLV_TCP_SYN, i, 20, VIP_A);
	assert_int_equal(inactive(t, 20), 4);
	start_tallied(ct, t, 6, 6, MLV_TCP_SYN, 10, 21, VIP_A);
	assert_int_equal(inactive(t, 20), 3);
	assert_int_equal(inactive(t, 21), 1);
	assert_int_equal(vip_flows(t, VIP_A), 4);
	/* swept after the handshake timeout */
	assert_int_equal(mlv_ct_sweep(ct, 10 + T_HANDSHAKE, UINT32_MAX), 4);
	assert_int_equal(inactive(t, 20) + inactive(t, 21), 0);
	assert_int_equal(vip_flows(t, VIP_A), 0);
	/* reused after expiring, unswept: flow 8 takes flow 7's way */
	start_tallied(ct, t, 7, 17, 0, 20000, 30, VIP_B);
	for (uint32_t i = 8; i <= 10; i++)
		start_tallied(ct, t, i, 17, 0, 20000 + T_UDP, 31, VIP_B);
	assert_int_equal(active(t, 30), 0);
	assert_int_equal(active(t, 31), 3);
	assert_int_equal(vip_flows(t, VIP_B), 3);
	/* the hook saw the same flows */
	assert_int_equal(s.n, 7);
	mlv_ct_destroy(ct);
	mlv_flow_tally_destroy(t);
}

/* What is not counted: a claim never updated, the unproven spare that
 * stays out of a full bucket, nothing below zero, nothing once unset;
 * the proven spare that enters counts, its victim leaves. */
static void test_tally_leaves_alone(void **state)
{
	struct seen s;
	struct mlv_ct *ct = make(&s);
	struct mlv_flow_tally *t = make_tally(ct);
	struct mlv_ct_entry *e;
	struct mlv_flow_key k;
	bool fresh;

	(void)state;
	k = flow(4, 6);
	e = mlv_ct_lookup_or_insert(ct, &k, HASH, 1, &fresh);
	e->backend_uid = 40;
	t[mlv_tally_slot(40)].vip_uid = VIP_A;
	mlv_ct_remove(ct, e);
	assert_int_equal(inactive(t, 40) + active(t, 40), 0);
	assert_int_equal(vip_flows(t, VIP_A), 0);
	e = start_tallied(ct, t, 3, 17, 0, 0, 41, VIP_A);
	t[mlv_tally_slot(41)].n[MLV_TALLY_ACTIVE] = 0;
	t[mlv_tally_slot(VIP_A)].vip_flows = 0;
	mlv_ct_remove(ct, e);   /* never below zero */
	assert_int_equal(active(t, 41), 0);
	assert_int_equal(vip_flows(t, VIP_A), 0);
	/* four proven flows fill the bucket; a SYN stays out */
	for (uint32_t i = 5; i <= 8; i++)
		start_tallied(ct, t, i, 17, 0, i, 42, VIP_A);
	assert_null(start_tallied(ct, t, 9, 6, MLV_TCP_SYN, 10, 43, VIP_A));
	assert_int_equal(active(t, 42), 4);
	assert_int_equal(inactive(t, 43), 0);
	assert_int_equal(vip_flows(t, VIP_A), 4);
	/* a proven newcomer evicts the stalest proven flow */
	assert_non_null(start_tallied(ct, t, 10, 17, 0, 11, 43, VIP_A));
	assert_int_equal(active(t, 42), 3);
	assert_int_equal(active(t, 43), 1);
	assert_int_equal(vip_flows(t, VIP_A), 4);
	/* unset: the next newcomer evicts, nothing is counted */
	mlv_ct_set_tally(ct, NULL);
	start_tallied(ct, t, 11, 17, 0, 12, 44, VIP_A);
	assert_int_equal(active(t, 42), 3);
	assert_int_equal(active(t, 44), 0);
	assert_int_equal(s.n, 3);   /* the hook still runs */
	mlv_ct_destroy(ct);
	mlv_flow_tally_destroy(t);
}

/* A backend bound to no VIP (its VIP has no max_load: vip_uid 0) counts
 * its flows and touches no VIP count, slot 0's included. */
static void test_tally_unbound_vip(void **state)
{
	struct seen s;
	struct mlv_ct *ct = make(&s);
	struct mlv_flow_tally *t = make_tally(ct);
	struct mlv_ct_entry *e;

	(void)state;
	t[0].vip_flows = 5;
	e = start_tallied(ct, t, 1, 17, 0, 0, 50, 0);
	assert_int_equal(active(t, 50), 1);
	assert_int_equal(t[0].vip_flows, 5);
	mlv_ct_remove(ct, e);
	assert_int_equal(active(t, 50), 0);
	assert_int_equal(t[0].vip_flows, 5);
	mlv_ct_destroy(ct);
	mlv_flow_tally_destroy(t);
}

/* The binding changes (the VIP gets or loses max_load, or the slot is
 * bound to another VIP): at the backend's next flow in or out, all its
 * flows move from the old VIP's count to the new one's, so neither
 * drifts; and the last flow gone leaves the slot all zero. */
static void test_tally_rebinds(void **state)
{
	struct seen s;
	struct mlv_ct *ct = make(&s);
	struct mlv_flow_tally *t = make_tally(ct);
	struct mlv_ct_entry *e[3];

	(void)state;
	for (uint32_t i = 0; i < 3; i++)   /* three flows, VIP unbound */
		e[i] = start_tallied(ct, t, i + 1, 17, 0, 0, 60, 0);
	assert_int_equal(active(t, 60), 3);
	assert_int_equal(vip_flows(t, VIP_A), 0);
	/* bound to VIP_A (it got max_load): the next flow brings all */
	t[mlv_tally_slot(60)].vip_uid = VIP_A;
	mlv_ct_remove(ct, e[0]);
	assert_int_equal(active(t, 60), 2);
	assert_int_equal(vip_flows(t, VIP_A), 2);
	/* bound to VIP_B instead: moved, not copied */
	t[mlv_tally_slot(60)].vip_uid = VIP_B;
	start_tallied(ct, t, 4, 17, 0, 0, 60, VIP_B);
	assert_int_equal(vip_flows(t, VIP_A), 0);
	assert_int_equal(vip_flows(t, VIP_B), 3);
	/* unbound (max_load removed): the VIP's count gives them back */
	t[mlv_tally_slot(60)].vip_uid = 0;
	mlv_ct_remove(ct, e[1]);
	assert_int_equal(vip_flows(t, VIP_B), 0);
	assert_int_equal(active(t, 60), 2);
	/* bound again, then every flow leaves: the slot reads zero */
	t[mlv_tally_slot(60)].vip_uid = VIP_A;
	mlv_ct_remove(ct, e[2]);
	assert_int_equal(vip_flows(t, VIP_A), 1);
	{
		struct mlv_flow_key k = flow(4, 17);

		mlv_ct_remove(ct, mlv_ct_lookup(ct, &k, HASH, 0));
	}
	assert_int_equal(active(t, 60), 0);
	assert_int_equal(vip_flows(t, VIP_A), 0);
	assert_int_equal(t[mlv_tally_slot(60)].counted, 0);
	mlv_ct_destroy(ct);
	mlv_flow_tally_destroy(t);
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
		cmocka_unit_test(test_tally_follows_flows),
		cmocka_unit_test(test_tally_leaves_alone),
		cmocka_unit_test(test_tally_unbound_vip),
		cmocka_unit_test(test_tally_rebinds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
