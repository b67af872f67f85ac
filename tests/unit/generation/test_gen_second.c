/* SPDX-License-Identifier: BSD-3-Clause */
/* Deferred second choices (docs/generations.md, "Deferred second
 * choices"): mlv_gen_build_opt publishing tables with first choices only,
 * mlv_gen_complete_second and the next build taking the completed copies,
 * the VIPs that never defer, and failover on a table without second
 * choices (control/generation/generation.c, control/generation/vip_tables.c).
 *
 * Expected tables come from mlv_table_build on the (name, weight,
 * no_second) sets the documents say a VIP's table is built from. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "control/config/config.h"
#include "control/generation/vip_tables.h"
#include "control/generation/generation.h"
#include "control/tables/builder.h"
#include "tests/support/config_load.h"

#define M 1009
#define NONE MLV_MAGLEV_NO_BACKEND

/* Four VIPs with different backend sets: a and b plain, c with max_load,
 * d with a backend `state: down` (both read second choices at once). */
static const char yaml[] =
	"dataplane:\n"
	"  ports:\n"
	"    - {name: ext, device: net_null0, address: 10.99.0.1, "
	"next_hop: \"02:00:00:00:00:fe\"}\n"
	"defaults: {table_size: 1009}\n"
	"vips:\n"
	"  - name: a\n    address: 192.0.2.1\n    port: 80\n    protocol: tcp\n"
	"    backends:\n"
	"      - {name: s-1, address: 10.99.1.1}\n"
	"      - {name: s-2, address: 10.99.1.2, weight: 300}\n"
	"      - {name: s-3, address: 10.99.1.3}\n"
	"      - {name: s-4, address: 10.99.1.4}\n"
	"  - name: b\n    address: 192.0.2.2\n    port: 80\n    protocol: tcp\n"
	"    backends:\n"
	"      - {name: s-1, address: 10.99.1.1}\n"
	"      - {name: s-5, address: 10.99.1.5}\n"
	"      - {name: s-6, address: 10.99.1.6}\n"
	"  - name: c\n    address: 192.0.2.3\n    port: 80\n    protocol: tcp\n"
	"    max_load: 1.5\n"
	"    backends:\n"
	"      - {name: s-1, address: 10.99.1.1}\n"
	"      - {name: s-7, address: 10.99.1.7}\n"
	"      - {name: s-8, address: 10.99.1.8}\n"
	"  - name: d\n    address: 192.0.2.4\n    port: 80\n    protocol: tcp\n"
	"    backends:\n"
	"      - {name: s-1, address: 10.99.1.1}\n"
	"      - {name: s-2, address: 10.99.1.2, state: down}\n"
	"      - {name: s-9, address: 10.99.1.9}\n";

static const struct mlv_gen_build_opts defer_all = {
	.defer_second = true, .second_slots_now = 0,
};

static struct mlv_config *load_ok(void)
{
	struct mlv_config *cfg = NULL;

	cfg = config_load_ok(yaml, strlen(yaml));
	assert_non_null(cfg);
	return cfg;
}

static struct mlv_generation *gen_of(const struct mlv_config *cfg,
				     const struct mlv_generation *prev,
				     mlv_gen_state_fn state, void *ctx,
				     const struct mlv_gen_build_opts *opts)
{
	struct mlv_gen_port_info info = { .mac = { 2, 0, 0, 0, 0, 1 },
					  .next_hop = { 2, 0, 0, 0, 0, 0xfe } };
	struct mlv_generation *g = NULL;

	assert_int_equal(mlv_gen_build_opt(cfg, &info, 1,
					   prev ? prev->number + 1 : 1, state,
					   ctx, prev, opts, &g), MLV_OK);
	return g;
}

static const struct mlv_gen_vip *vip_named(const struct mlv_generation *g,
					   const char *name)
{
	for (uint32_t v = 0; v < g->n_vips; v++)
		if (strcmp(g->vips[v].name, name) == 0)
			return &g->vips[v];
	fail_msg("no VIP %s", name);
	return NULL;
}

/* The table the VIP's backends (name order, as the generation keeps
 * them) give with their weights and no_second as published. */
struct expected {
	uint16_t first[M], second[M];
	uint64_t fingerprint;
};

static void expect_of(const struct mlv_gen_vip *v, struct expected *e)
{
	struct mlv_table_backend be[8];
	struct mlv_table_spec spec = { .kind = MLV_TABLE_MAGLEV, .size = M };

	assert_true(v->n_backends <= 8);
	for (uint32_t b = 0; b < v->n_backends; b++)
		be[b] = (struct mlv_table_backend){ v->backends[b].name,
						    v->backends[b].weight,
						    v->backends[b].no_second };
	assert_int_equal(mlv_table_build(&spec, be, v->n_backends, e->first,
					 e->second, &e->fingerprint), MLV_OK);
}

static bool all_none(const uint16_t *second)
{
	for (uint32_t j = 0; j < M; j++)
		if (second[j] != NONE)
			return false;
	return true;
}

/* Deferred: exact first choices and fingerprint, every second choice
 * "none"; completed: a new table object with the same first choices and
 * fingerprint plus the second choices, taken by the next build, while the
 * published one stays as it was. */
static void test_deferred_then_completed(void **state)
{
	struct mlv_config *cfg = load_ok();
	struct mlv_generation *g1, *g2;
	struct expected *e = malloc(sizeof(*e));
	const char *names[] = { "a", "b", "c", "d" };
	uint16_t *g1_first_a = malloc(M * 2);
	uint32_t left = 0;

	(void)state;
	assert_non_null(e);
	assert_non_null(g1_first_a);
	g1 = gen_of(cfg, NULL, NULL, NULL, &defer_all);
	assert_int_equal(g1->n_tables_built, 4);
	assert_int_equal(g1->n_tables_no_second, 2);
	for (uint32_t k = 0; k < 4; k++) {
		const struct mlv_gen_vip *v = vip_named(g1, names[k]);

		expect_of(v, e);
		assert_memory_equal(v->table, e->first, M * 2);
		assert_true(v->fingerprint == e->fingerprint);
		if (k < 2)   /* a, b: deferred */
			assert_true(all_none(v->second));
		else         /* c (max_load), d (state: down): now */
			assert_memory_equal(v->second, e->second, M * 2);
	}
	memcpy(g1_first_a, vip_named(g1, "a")->table, M * 2);

	/* one table per call, then none left */
	assert_int_equal(mlv_gen_complete_second(g1, 1, &left), MLV_OK);
	assert_int_equal(left, 1);
	assert_int_equal(mlv_gen_complete_second(g1, 1, &left), MLV_OK);
	assert_int_equal(left, 0);
	assert_int_equal(mlv_gen_complete_second(g1, 1, &left), MLV_OK);
	assert_int_equal(left, 0);
	/* published tables are not changed in place */
	assert_true(all_none(vip_named(g1, "a")->second));

	g2 = gen_of(cfg, g1, NULL, NULL, &defer_all);
	assert_int_equal(g2->n_tables_reused, 4);
	assert_int_equal(g2->n_tables_built, 0);
	assert_int_equal(g2->n_tables_no_second, 0);
	for (uint32_t k = 0; k < 4; k++) {
		const struct mlv_gen_vip *v1 = vip_named(g1, names[k]);
		const struct mlv_gen_vip *v2 = vip_named(g2, names[k]);

		expect_of(v2, e);
		assert_memory_equal(v2->table, e->first, M * 2);
		assert_memory_equal(v2->second, e->second, M * 2);
		assert_true(v2->fingerprint == v1->fingerprint);
		if (k < 2)
			assert_ptr_not_equal(v2->table, v1->table);
		else
			assert_ptr_equal(v2->table, v1->table);
	}
	assert_memory_equal(vip_named(g2, "a")->table, g1_first_a, M * 2);
	/* the old generation goes first, as after a publish: the completed
	 * copies stay with g2 */
	mlv_gen_free(g1);
	expect_of(vip_named(g2, "a"), e);
	assert_memory_equal(vip_named(g2, "a")->second, e->second, M * 2);
	mlv_gen_free(g2);
	mlv_config_free(cfg);
	free(g1_first_a);
	free(e);
}

/* Without defer_second nothing is deferred; with a budget, the tables
 * built before it is spent get their second choices in the build. */
static void test_defer_budget(void **state)
{
	struct mlv_config *cfg = load_ok();
	struct mlv_gen_build_opts one_table = {
		.defer_second = true, .second_slots_now = M,
	};
	struct mlv_generation *g;

	(void)state;
	g = gen_of(cfg, NULL, NULL, NULL, NULL);
	assert_int_equal(g->n_tables_no_second, 0);
	mlv_gen_free(g);
	/* a (first in config order) is built with them, then b defers */
	g = gen_of(cfg, NULL, NULL, NULL, &one_table);
	assert_int_equal(g->n_tables_no_second, 1);
	assert_false(all_none(vip_named(g, "a")->second));
	assert_true(all_none(vip_named(g, "b")->second));
	mlv_gen_free(g);
	mlv_config_free(cfg);
}

/* s-1 (in every VIP) failed; keep_slots asks for a failover build. */
static void s1_down_keep(const struct mlv_gen_pair *pair,
			 struct mlv_gen_backend_state *out, void *ctx)
{
	(void)ctx;
	if (strcmp(pair->backend, "s-1") == 0) {
		out->healthy = false;
		out->keep_slots = true;
	}
}

/* Failover needs second choices: on a table without them the failed
 * backend leaves the table at once (a rebuild); on a completed one it
 * keeps its slots and the table is reused. */
static void test_failover_without_second(void **state)
{
	struct mlv_config *cfg = load_ok();
	struct mlv_generation *g1, *g2, *g3;
	struct expected *e = malloc(sizeof(*e));
	uint32_t left;

	(void)state;
	assert_non_null(e);
	g1 = gen_of(cfg, NULL, NULL, NULL, &defer_all);
	g2 = gen_of(cfg, g1, s1_down_keep, NULL, &defer_all);
	for (uint32_t k = 0; k < 2; k++) {
		const struct mlv_gen_vip *v = vip_named(g2, k ? "b" : "a");

		/* s-1 is the first name: index 0 */
		assert_string_equal(v->backends[0].name, "s-1");
		assert_false(v->backends[0].usable);
		assert_int_equal(v->backends[0].weight, 0);
		expect_of(v, e);
		assert_memory_equal(v->table, e->first, M * 2);
		for (uint32_t j = 0; j < M; j++)
			assert_int_not_equal(v->table[j], 0);
	}
	/* c and d had their second choices: instant failover as before */
	for (uint32_t k = 0; k < 2; k++) {
		const struct mlv_gen_vip *v1 = vip_named(g1, k ? "d" : "c");
		const struct mlv_gen_vip *v2 = vip_named(g2, k ? "d" : "c");

		assert_int_equal(v2->backends[0].weight, 100);
		assert_false(v2->backends[0].usable);
		assert_ptr_equal(v2->table, v1->table);
	}
	assert_int_equal(g2->n_tables_reused, 2);
	mlv_gen_free(g2);

	/* completed first: every table reused, s-1 keeps its slots */
	assert_int_equal(mlv_gen_complete_second(g1, 100, &left), MLV_OK);
	assert_int_equal(left, 0);
	g3 = gen_of(cfg, g1, s1_down_keep, NULL, &defer_all);
	assert_int_equal(g3->n_tables_reused, 4);
	for (uint32_t v = 0; v < g3->n_vips; v++) {
		const struct mlv_gen_vip *vip = &g3->vips[v];

		/* the tables of the healthy set, second choices included */
		assert_int_equal(vip->backends[0].weight, 100);
		expect_of(vip, e);
		assert_memory_equal(vip->table, e->first, M * 2);
		assert_memory_equal(vip->second, e->second, M * 2);
	}
	mlv_gen_free(g1);
	mlv_gen_free(g3);
	mlv_config_free(cfg);
	free(e);
}

/* The table index itself: a VIP that reads second choices at once never
 * gets a table without them; the one it had is completed into a new
 * object (built), linked for the builds after. */
static void test_tables_complete_on_acquire(void **state)
{
	struct mlv_table_backend be[3] = {
		{ "x-1", 1, false }, { "x-2", 1, false }, { "x-3", 2, false },
	};
	struct mlv_gen_table_input in = {
		.spec = { .kind = MLV_TABLE_MAGLEV, .size = M },
		.backends = be, .n = 3, .defer_second = true,
	};
	struct mlv_gen_table *held1[1], *held2[2];
	const struct mlv_gen_table *t1, *t2, *found;
	enum mlv_gen_table_source src;
	struct mlv_gen_tables t;
	struct expected *e = malloc(sizeof(*e));

	(void)state;
	assert_non_null(e);
	assert_int_equal(mlv_table_build(&in.spec, be, 3, e->first, e->second,
					 &e->fingerprint), MLV_OK);
	assert_int_equal(mlv_gen_tables_begin(&t, held1, 1, NULL, 0), MLV_OK);
	assert_int_equal(mlv_gen_tables_acquire(&t, &in, &t1, &src), MLV_OK);
	assert_int_equal(src, MLV_GEN_TABLE_BUILT);
	assert_int_equal(mlv_gen_tables_run(&t), MLV_OK);
	assert_false(t1->has_second);
	assert_true(all_none(t1->second));
	mlv_gen_tables_end(&t);

	in.second_now = true;
	assert_int_equal(mlv_gen_tables_begin(&t, held2, 2, held1, 1), MLV_OK);
	assert_int_equal(mlv_gen_tables_find(&t, &in, &found), MLV_OK);
	assert_ptr_equal(found, t1);
	assert_int_equal(mlv_gen_tables_acquire(&t, &in, &t2, &src), MLV_OK);
	assert_int_equal(src, MLV_GEN_TABLE_BUILT);
	assert_ptr_not_equal(t2, t1);
	assert_true(t2->has_second);
	assert_ptr_equal(t1->with_second, t2);
	assert_memory_equal(t2->first, e->first, M * 2);
	assert_memory_equal(t2->second, e->second, M * 2);
	assert_true(t2->fingerprint == e->fingerprint);
	assert_true(all_none(t1->second));
	/* a second VIP with the same input shares the completed one */
	assert_int_equal(mlv_gen_tables_acquire(&t, &in, &found, &src), MLV_OK);
	assert_ptr_equal(found, t2);
	assert_int_equal(src, MLV_GEN_TABLE_SHARED);
	mlv_gen_tables_end(&t);
	assert_int_equal(t.n_held, 1);

	mlv_gen_tables_release(held1, 1);   /* t1 and its link to t2 */
	assert_int_equal(t2->refs, 1);
	mlv_gen_tables_release(held2, t.n_held);
	mlv_gen_tables_pool_drain();
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deferred_then_completed),
		cmocka_unit_test(test_defer_budget),
		cmocka_unit_test(test_failover_without_second),
		cmocka_unit_test(test_tables_complete_on_acquire),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	mlv_gen_tables_pool_drain();
	return rc;
}
