/* SPDX-License-Identifier: BSD-3-Clause */
/* The worker's tally of tracked flows (dataplane/packet/flow_tally.h) as
 * the control plane reads it through a generation (mlv_gen_backend_flows,
 * mlv_gen_vip_tracked): per backend uid and class, per VIP, for every
 * worker, whatever generation the reader holds; mlv_forward_sweep
 * releases the expired entries it reclaims. No EAL: the worker struct is
 * built by hand and the conntrack table lives in plain memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "control/config/config.h"
#include "control/generation/generation.h"
#include "control/generation/moves.h"
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
	struct mlv_flow_tally *tally[2];   /* worker 0's and worker 1's */
	struct mlv_flow_tally_set set;
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

	struct mlv_gen_build_opts opts = { .defer_second = false };

	assert_non_null(f);
	assert_int_equal(mlv_flow_tally_create(&f->tally[0]), MLV_OK);
	assert_int_equal(mlv_flow_tally_create(&f->tally[1]), MLV_OK);
	f->set.n_workers = 2;
	f->set.per_worker = f->tally;
	opts.tallies = &f->set;
	f->cfg = config_load_ok(yaml, sizeof(yaml) - 1);
	assert_int_equal(mlv_gen_build_opt(f->cfg, &info, 2, 7, NULL, NULL, NULL,
					   &opts, &f->gen), MLV_OK);
	mlv_gen_tally_bind(f->gen);   /* as the daemon does at publish */
	f->w = calloc(1, sizeof(*f->w));
	assert_non_null(f->w);
	f->w->id = 1;
	f->w->tally = f->tally[1];
	f->w->ct = mlv_ct_create(&ctp, ct_alloc, ct_free, NULL);
	assert_non_null(f->w->ct);
	mlv_ct_set_tally(f->w->ct, f->w->tally);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	mlv_ct_destroy(f->w->ct);
	mlv_flow_tally_destroy(f->tally[0]);
	mlv_flow_tally_destroy(f->tally[1]);
	free(f->w);
	mlv_gen_free(f->gen);
	mlv_config_free(f->cfg);
	free(f);
	return 0;
}

/* A flow for backend b of vip tracked the way the forwarding path
 * tracks a new one (mlv_ct_insert), with TCP flags or UDP. */
static struct mlv_ct_entry *track(struct fx *f, uint32_t i, uint8_t proto,
				  uint8_t flags, const struct mlv_gen_vip *vip,
				  const struct mlv_gen_backend *b, uint32_t now)
{
	struct mlv_flow_key k = { .family = 4, .proto = proto,
				  .sport = (uint16_t)(2000 + i), .dport = 80 };
	uint32_t h = i * 2654435761u;
	struct mlv_ct_probe pr = { .hit = NULL };

	mlv_ct_probe(f->w->ct, &k, h, now, &pr);
	assert_null(pr.hit);
	(void)vip;
	assert_true(mlv_ct_insert(f->w->ct, &k, h, now, &pr, b->uid,
				  f->gen->number,
				  mlv_gen_backend_index(f->gen, b), flags));
	return mlv_ct_lookup(f->w->ct, &k, h, now);
}

static void assert_flows(const struct mlv_generation *g,
			 const struct mlv_gen_backend *b, uint64_t act,
			 uint64_t inact)
{
	uint64_t n[2];

	mlv_gen_backend_flows(g, b, n);
	assert_int_equal(n[0], act);
	assert_int_equal(n[1], inact);
	assert_int_equal(mlv_gen_backend_tracked(g, b), act + inact);
}

/* Counts by class and VIP, summed over the workers, as the control
 * plane reads them. */
static void test_counts_read_through_generation(void **state)
{
	struct fx *f = *state;
	struct mlv_generation *g = f->gen;
	const struct mlv_gen_vip *a = &g->vips[0], *b = &g->vips[1];
	const struct mlv_gen_backend *a1 = &a->backends[0], *a2 = &a->backends[1];
	const struct mlv_gen_backend *b1 = &b->backends[0];
	struct mlv_ct_entry *e;

	assert_ptr_equal(g->tallies, &f->set);
	/* bound at publish: a bounded VIP's backends name it, others 0 */
	for (int w = 0; w < 2; w++) {
		assert_int_equal(f->tally[w][mlv_tally_slot(a1->uid)].vip_uid, a->uid);
		assert_int_equal(f->tally[w][mlv_tally_slot(a2->uid)].vip_uid, a->uid);
		assert_int_equal(f->tally[w][mlv_tally_slot(b1->uid)].vip_uid, 0);
	}
	e = track(f, 1, 6, MLV_TCP_SYN, a, a1, 0);
	track(f, 2, 17, 0, a, a2, 0);
	track(f, 3, 17, 0, b, b1, 0);
	assert_flows(g, a1, 0, 1);
	assert_flows(g, a2, 1, 0);
	assert_int_equal(mlv_gen_vip_tracked(g, a), 2);
	assert_int_equal(mlv_gen_vip_tracked(g, b), 0);   /* no max_load */
	/* another worker's flows add up */
	f->tally[0][mlv_tally_slot(a2->uid)].n[MLV_TALLY_ACTIVE] = 4;
	f->tally[0][mlv_tally_slot(a->uid)].vip_flows = 4;
	assert_flows(g, a2, 5, 0);
	assert_int_equal(mlv_gen_vip_tracked(g, a), 6);
	/* the handshake completes; then the flow closes and is removed */
	mlv_ct_update(f->w->ct, e, MLV_TCP_ACK, 1);
	assert_flows(g, a1, 1, 0);
	mlv_ct_update(f->w->ct, e, MLV_TCP_FIN | MLV_TCP_ACK, 2);
	assert_flows(g, a1, 0, 1);
	mlv_ct_remove(f->w->ct, e);
	assert_flows(g, a1, 0, 0);
	assert_int_equal(mlv_gen_vip_tracked(g, a), 5);
	/* a flow re-selected to the other VIP's backend moves with it */
	e = track(f, 4, 17, 0, a, a1, 3);
	mlv_ct_rebind(f->w->ct, e, b1->uid);
	assert_flows(g, a1, 0, 0);
	assert_flows(g, b1, 2, 0);
	assert_int_equal(mlv_gen_vip_tracked(g, a), 5);
	assert_int_equal(mlv_gen_vip_tracked(g, b), 0);
}

/* Expired entries the sweep reclaims leave the counts. */
static void test_sweep_releases(void **state)
{
	struct fx *f = *state;
	struct mlv_generation *g = f->gen;
	const struct mlv_gen_vip *a = &g->vips[0];
	const struct mlv_gen_backend *a1 = &a->backends[0];

	for (uint32_t i = 0; i < 3; i++)
		track(f, 10 + i, 17, 0, a, a1, 0);
	assert_flows(g, a1, 3, 0);
	/* not yet expired: nothing leaves */
	for (uint32_t n = 0; n < 1024 / MLV_CT_WAYS; n += MLV_SWEEP_BUCKETS)
		mlv_forward_sweep(f->w, 1000);
	assert_flows(g, a1, 3, 0);
	/* a full sweep after the UDP timeout: all three leave */
	for (uint32_t n = 0; n < 1024 / MLV_CT_WAYS; n += MLV_SWEEP_BUCKETS)
		mlv_forward_sweep(f->w, 30000);
	assert_flows(g, a1, 0, 0);
	assert_int_equal(mlv_gen_vip_tracked(g, a), 0);
}

/* A generation built without tallies reads zero. */
static void test_no_tallies_read_zero(void **state)
{
	struct fx *f = *state;
	struct mlv_gen_port_info info = { .mac = { 2, 0, 0, 0, 0, 1 } };
	struct mlv_generation *g = NULL;

	track(f, 20, 17, 0, &f->gen->vips[0], &f->gen->vips[0].backends[0], 0);
	assert_int_equal(mlv_gen_build(f->cfg, &info, 2, 8, NULL, NULL, f->gen,
				       &g), MLV_OK);
	assert_null(g->tallies);
	assert_flows(g, &g->vips[0].backends[0], 0, 0);
	assert_int_equal(mlv_gen_vip_tracked(g, &g->vips[0]), 0);
	mlv_gen_free(g);
}

/* a-2 down (by health), or a-1 and a-2 down */
static void state_down(const struct mlv_gen_pair *pair,
		       struct mlv_gen_backend_state *out, void *ctx)
{
	const char *const *down = ctx;

	out->healthy = true;
	for (; *down; down++)
		if (strcmp(pair->backend, *down) == 0)
			out->healthy = false;
}

/* The plan's moved connections are the ones this change re-selects: a
 * backend's flows count when it stops being usable, not when it was
 * down already (its flows move because of that, not of this change). */
static void test_moves_count_only_this_change(void **state)
{
	static const char *const a2_down[] = { "a-2", NULL };
	static const char *const both_down[] = { "a-1", "a-2", NULL };
	struct fx *f = *state;
	struct mlv_gen_port_info info = { .mac = { 2, 0, 0, 0, 0, 1 } };
	struct mlv_gen_build_opts opts = { .tallies = &f->set };
	struct mlv_plan_vip entry = { .name = "a" };
	struct mlv_plan plan = { .n = 1, .vips = &entry };
	struct mlv_generation *old = NULL, *same = NULL, *worse = NULL;
	const struct mlv_gen_vip *a = &f->gen->vips[0];

	/* one flow on a-1, three on a-2 */
	track(f, 30, 17, 0, a, &a->backends[0], 0);
	for (uint32_t i = 31; i < 34; i++)
		track(f, i, 17, 0, a, &a->backends[1], 0);
	assert_int_equal(mlv_gen_build_opt(f->cfg, &info, 2, 8, state_down,
					   (void *)a2_down, f->gen, &opts,
					   &old), MLV_OK);
	assert_int_equal(mlv_gen_build_opt(f->cfg, &info, 2, 9, state_down,
					   (void *)a2_down, old, &opts,
					   &same), MLV_OK);
	assert_int_equal(mlv_gen_build_opt(f->cfg, &info, 2, 10, state_down,
					   (void *)both_down, old, &opts,
					   &worse), MLV_OK);
	/* a-2 was down and stays down: nothing moves by this change */
	assert_int_equal(mlv_gen_plan_moves(old, same, &plan), MLV_OK);
	assert_int_equal(entry.tracked, 4);
	assert_int_equal(entry.tracked_moved, 0);
	/* and no slot changes owner: a-1's flow is at no risk either */
	assert_int_equal(entry.tracked_at_risk, 0);
	assert_false(entry.second_chance);
	/* a-1 goes down with it: a-1's flow moves */
	assert_int_equal(mlv_gen_plan_moves(old, worse, &plan), MLV_OK);
	assert_int_equal(entry.tracked_moved, 1);
	/* from the serving generation where both were up: all four */
	assert_int_equal(mlv_gen_plan_moves(f->gen, worse, &plan), MLV_OK);
	assert_int_equal(entry.tracked_moved, 4);
	mlv_gen_free(old);
	mlv_gen_free(same);
	mlv_gen_free(worse);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_counts_read_through_generation,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_sweep_releases, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_tallies_read_zero, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_moves_count_only_this_change,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
