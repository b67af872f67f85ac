/* SPDX-License-Identifier: BSD-3-Clause */
/* Bounded loads' active-flow counts (dataplane/worker/forward.c): when the
 * conntrack table lets a tracked flow go, the flow leaves its backend's
 * count (the table's tally, pointed by the forwarding path at the
 * worker's own row of the generation it holds) and, for a VIP with
 * max_load, its VIP's total (the release hook, installed only for
 * generations with such a VIP); only when the flow was counted in that
 * generation (its entry carries the generation's number), never below
 * zero; mlv_forward_sweep releases the expired entries it reclaims. No
 * EAL: the worker struct is built by hand and the conntrack table lives
 * in plain memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "control/config/config.h"
#include "control/generation/generation.h"
#include "dataplane/packet/conntrack.h"
#include "dataplane/worker/worker.h"
#include "tests/support/config_load.h"

static const char yaml[] =
	"dataplane:\n"
	"  ports:\n"
	"    - {name: ext, device: net_null0, address: 10.99.0.1, "
	"next_hop: \"02:00:00:00:00:fe\"}\n"
	"vips:\n"
	"  - name: a\n"
	"    address: 192.0.2.1\n"
	"    port: 80\n"
	"    protocol: udp\n"
	"    max_load: 1.25\n"
	"    backends:\n"
	"      - {name: a-1, address: 10.99.1.1}\n"
	"      - {name: a-2, address: 10.99.1.2}\n"
	"  - name: b\n"
	"    address: 192.0.2.2\n"
	"    port: 80\n"
	"    protocol: udp\n"
	"    backends:\n"
	"      - {name: b-1, address: 10.99.1.3}\n";

struct fx {
	struct mlv_config *cfg;
	struct mlv_generation *gen;
	struct mlv_worker *w;
};

static void *ct_alloc(size_t size, void *ctx)
{
	(void)ctx;
	return calloc(1, size);
}

static void ct_free(void *p, void *ctx)
{
	(void)ctx;
	free(p);
}

static int setup(void **state)
{
	static const struct mlv_ct_params ctp = {
		.entries = 1024, .tcp_timeout_ms = 300000,
		.tcp_handshake_timeout_ms = 5000, .tcp_closing_timeout_ms = 10000,
		.udp_timeout_ms = 30000, .other_timeout_ms = 30000,
	};
	struct mlv_gen_port_info info = { .mac = { 2, 0, 0, 0, 0, 1 } };
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->cfg = config_load_ok(yaml, sizeof(yaml) - 1);
	assert_int_equal(mlv_gen_build(f->cfg, &info, 2, 7, NULL, NULL, NULL,
				       &f->gen), MLV_OK);
	f->w = calloc(1, sizeof(*f->w));
	assert_non_null(f->w);
	f->w->id = 1;
	f->w->ct = mlv_ct_create(&ctp, ct_alloc, ct_free, NULL);
	assert_non_null(f->w->ct);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	mlv_ct_destroy(f->w->ct);
	free(f->w);
	mlv_gen_free(f->gen);
	mlv_config_free(f->cfg);
	free(f);
	return 0;
}

/* An entry as tracked_backend leaves it for backend b in generation
 * number gen_no. */
static struct mlv_ct_entry entry(const struct mlv_generation *g,
				 const struct mlv_gen_backend *b,
				 uint32_t gen_no)
{
	return (struct mlv_ct_entry){
		.backend_uid = b->uid,
		.backend_all_idx = mlv_gen_backend_index(g, b),
		.cached_gen = gen_no, .state = MLV_CT_UDP,
	};
}

/* A flow for backend b tracked in generation number gen_no, the way
 * tracked_backend leaves it (entry filled, mlv_ct_update, counted). */
static struct mlv_ct_entry *track(struct fx *f, uint32_t i,
				  const struct mlv_gen_backend *b,
				  uint32_t gen_no)
{
	struct mlv_generation *g = f->gen;
	struct mlv_flow_key k = { .family = 4, .proto = 17,
				  .sport = (uint16_t)(2000 + i), .dport = 80 };
	struct mlv_ct_entry want = entry(g, b, gen_no);
	bool fresh;
	struct mlv_ct_entry *e = mlv_ct_lookup_or_insert(f->w->ct, &k,
							 i * 2654435761u, 0,
							 &fresh);

	assert_true(fresh);
	e->backend_uid = want.backend_uid;
	e->backend_all_idx = want.backend_all_idx;
	e->cached_gen = gen_no;
	assert_true(mlv_ct_update(f->w->ct, e, 0, 0));
	return e;
}

static void test_release(void **state)
{
	struct fx *f = *state;
	struct mlv_generation *g = f->gen;
	const struct mlv_gen_backend *a2 = &g->vips[0].backends[1];
	const struct mlv_gen_backend *b1 = &g->vips[1].backends[0];
	uint32_t ia2 = mlv_gen_backend_index(g, a2), ib1 = mlv_gen_backend_index(g, b1);
	struct mlv_ct_entry *e;

	assert_int_equal(g->n_bounded_vips, 1);
	assert_true(a2->vip_bounded);
	assert_false(b1->vip_bounded);
	/* what a burst does first: the table counts off g's row 1 */
	mlv_forward_sweep(f->w, g, 0);
	g->backend_active[1][ia2] = 3;
	g->vip_active[1][0] = 5;
	g->backend_active[0][ia2] = 9;   /* another worker's: untouched */

	e = track(f, 1, a2, g->number);
	mlv_ct_remove(f->w->ct, e);
	assert_int_equal(g->backend_active[1][ia2], 2);
	assert_int_equal(g->vip_active[1][0], 4);
	assert_int_equal(g->backend_active[0][ia2], 9);

	/* counted in another generation: not in this one's counts */
	e = track(f, 2, a2, g->number - 1);
	mlv_ct_remove(f->w->ct, e);
	assert_int_equal(g->backend_active[1][ia2], 2);
	assert_int_equal(g->vip_active[1][0], 4);

	/* the other VIP's backend: that VIP has no max_load, so only the
	 * backend's count moves (no VIP total is kept for it) */
	g->backend_active[1][ib1] = 1;
	g->vip_active[1][1] = 7;
	e = track(f, 3, b1, g->number);
	mlv_ct_remove(f->w->ct, e);
	e = track(f, 4, b1, g->number);
	mlv_ct_remove(f->w->ct, e);   /* never below zero */
	assert_int_equal(g->backend_active[1][ib1], 0);
	assert_int_equal(g->vip_active[1][1], 7);
	assert_int_equal(g->vip_active[1][0], 4);

	/* an index the generation does not have */
	e = track(f, 5, a2, g->number);
	e->backend_all_idx = g->n_all_backends;
	mlv_ct_remove(f->w->ct, e);
	assert_int_equal(g->backend_active[1][ia2], 2);
	assert_int_equal(g->vip_active[1][0], 4);

	/* no generation held: nothing is counted off */
	e = track(f, 6, a2, g->number);
	mlv_forward_sweep(f->w, NULL, 0);
	mlv_ct_remove(f->w->ct, e);
	assert_int_equal(g->backend_active[1][ia2], 2);
	assert_int_equal(g->vip_active[1][0], 4);
}

/* The hook on its own (it runs for bounded VIPs only): the VIP's total
 * moves, never the backend's (the tally's job), and only for flows
 * counted in the generation the worker holds. */
static void test_release_hook(void **state)
{
	struct fx *f = *state;
	struct mlv_generation *g = f->gen;
	const struct mlv_gen_backend *a2 = &g->vips[0].backends[1];
	const struct mlv_gen_backend *b1 = &g->vips[1].backends[0];
	uint32_t ia2 = mlv_gen_backend_index(g, a2);
	struct mlv_ct_entry e;

	f->w->ct_gen = g;
	g->backend_active[1][ia2] = 3;
	g->vip_active[1][0] = 5;
	g->vip_active[1][1] = 7;
	e = entry(g, a2, g->number);
	mlv_forward_ct_released(f->w, &e);
	assert_int_equal(g->vip_active[1][0], 4);
	assert_int_equal(g->backend_active[1][ia2], 3);
	e = entry(g, a2, g->number + 1);
	mlv_forward_ct_released(f->w, &e);
	e = entry(g, b1, g->number);
	mlv_forward_ct_released(f->w, &e);
	e = entry(g, a2, g->number);
	e.backend_all_idx = g->n_all_backends;
	mlv_forward_ct_released(f->w, &e);
	assert_int_equal(g->vip_active[1][0], 4);
	assert_int_equal(g->vip_active[1][1], 7);
	g->vip_active[1][0] = 0;
	e = entry(g, a2, g->number);
	mlv_forward_ct_released(f->w, &e);   /* never below zero */
	assert_int_equal(g->vip_active[1][0], 0);
	f->w->ct_gen = NULL;
	g->vip_active[1][0] = 2;
	mlv_forward_ct_released(f->w, &e);
	assert_int_equal(g->vip_active[1][0], 2);
}

/* Expired entries the sweep reclaims leave the counts. */
static void test_sweep_releases(void **state)
{
	struct fx *f = *state;
	struct mlv_generation *g = f->gen;
	const struct mlv_gen_backend *a1 = &g->vips[0].backends[0];
	uint32_t ia1 = mlv_gen_backend_index(g, a1);

	for (uint32_t i = 0; i < 3; i++) {
		struct mlv_flow_key k = { .family = 4, .proto = 17,
					  .sport = (uint16_t)(1000 + i), .dport = 80 };
		bool fresh;
		struct mlv_ct_entry *e = mlv_ct_lookup_or_insert(f->w->ct, &k,
								 i * 77777u, 0, &fresh);

		assert_true(fresh);
		e->backend_uid = a1->uid;
		e->backend_all_idx = ia1;
		e->cached_gen = g->number;
		assert_true(mlv_ct_update(f->w->ct, e, 0, 0));
		g->backend_active[1][ia1]++;
		g->vip_active[1][0]++;
	}
	/* not yet expired: nothing leaves */
	for (uint32_t n = 0; n < 1024 / MLV_CT_WAYS; n += MLV_SWEEP_BUCKETS)
		mlv_forward_sweep(f->w, g, 1000);
	assert_int_equal(g->backend_active[1][ia1], 3);
	/* a full sweep after the UDP timeout: all three leave */
	for (uint32_t n = 0; n < 1024 / MLV_CT_WAYS; n += MLV_SWEEP_BUCKETS)
		mlv_forward_sweep(f->w, g, 30000);
	assert_int_equal(g->backend_active[1][ia1], 0);
	assert_int_equal(g->vip_active[1][0], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_release, setup, teardown),
		cmocka_unit_test_setup_teardown(test_release_hook, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sweep_releases, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
