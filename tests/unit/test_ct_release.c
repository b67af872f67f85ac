/* The conntrack release hook (mlv_ct_set_release_hook) and
 * mlv_ct_update's "tracked" result, which bounded loads count flows with:
 * the hook must see every tracked flow exactly once when the table lets
 * go of it (removed, swept, reused after expiring, evicted), and never a
 * flow that was not tracked (a claimed entry never updated, the spare that
 * stays out). Flows are aimed at one bucket by passing the same hash; the
 * clock is driven explicitly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conntrack.h"

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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
