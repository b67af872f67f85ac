/* SPDX-License-Identifier: BSD-3-Clause */
/* Table builders in the config and in generations: the `table`,
 * `max_load` and `vnodes` keys and `state: down` (control/config*.c),
 * and how mlv_gen_build uses them (control/generation/generation.c): the VIP's
 * builder, second choices, reuse, backends down with their slots kept,
 * bounded-load shares and the active-flow arrays; and `maglevctl whatif`
 * building with the VIP's builder (control/ctl/cmd_table.c).
 *
 * Expected tables are built here with mlv_table_build from the
 * (name, weight) sets the documents say the generation must use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "control/config/config.h"
#include "control/ctl/commands_internal.h"
#include "control/generation/generation.h"
#include "control/tables/builder.h"
#include "tests/support/config_load.h"

#define HEAD \
	"dataplane:\n" \
	"  ports:\n" \
	"    - {name: ext, device: net_null0, address: 10.99.0.1, " \
	"next_hop: \"02:00:00:00:00:fe\"}\n"

/* ---- config ---- */

static struct mlv_config *load(const char *yaml, struct mlv_diags *diags)
{
	struct mlv_config *cfg = NULL;

	mlv_diags_init(diags);
	mlv_config_load_buffer("t.yaml", yaml, strlen(yaml), &cfg, diags);
	return cfg;
}

static struct mlv_config *load_ok(const char *yaml)
{
	return config_load_ok(yaml, strlen(yaml));
}

/* The config is refused with an error at line:col containing text. */
static void expect_error(const char *yaml, uint32_t line, const char *text)
{
	struct mlv_diags diags;
	struct mlv_config *cfg = load(yaml, &diags);
	bool found = false;

	assert_null(cfg);
	for (uint32_t i = 0; i < diags.n; i++)
		if (diags.items[i].level == MLV_DIAG_ERROR &&
		    diags.items[i].pos.line == line &&
		    strstr(diags.items[i].message, text))
			found = true;
	if (!found) {
		mlv_diags_print(&diags, stderr);
		fail_msg("no error at line %u containing \"%s\"", line, text);
	}
	mlv_diags_free(&diags);
}

static void test_config_keys(void **state)
{
	struct mlv_config *cfg;

	(void)state;
	cfg = load_ok(HEAD
		"defaults: {table: rendezvous, max_load: 1.5, vnodes: 20}\n"
		"vips:\n"
		"  - {name: a, address: 192.0.2.1, port: 80, protocol: tcp}\n"
		"  - {name: b, address: 192.0.2.2, port: 80, protocol: tcp,\n"
		"     table: ring, max_load: 0, vnodes: 7}\n"
		"  - name: c\n"
		"    address: 192.0.2.3\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    table: maglev\n"
		"    max_load: 1.25\n"
		"    backends:\n"
		"      - {name: c-1, address: 10.99.1.1, state: down}\n");
	assert_int_equal(cfg->vips[0].table, MLV_TABLE_RENDEZVOUS);
	assert_true(cfg->vips[0].max_load == 1.5);
	assert_int_equal(cfg->vips[0].vnodes, 20);
	assert_int_equal(cfg->vips[1].table, MLV_TABLE_RING);
	assert_true(cfg->vips[1].max_load == 0);
	assert_int_equal(cfg->vips[1].vnodes, 7);
	assert_int_equal(cfg->vips[2].table, MLV_TABLE_MAGLEV);
	assert_true(cfg->vips[2].max_load == 1.25);
	assert_int_equal(cfg->vips[2].backends[0].state, MLV_BACKEND_DOWN);
	mlv_config_free(cfg);

	/* built-in defaults */
	cfg = load_ok(HEAD "vips:\n"
		      "  - {name: a, address: 192.0.2.1, port: 80, protocol: tcp}\n");
	assert_int_equal(cfg->vips[0].table, MLV_TABLE_MAGLEV);
	assert_true(cfg->vips[0].max_load == 0);
	assert_int_equal(cfg->vips[0].vnodes, MLV_RING_DEFAULT_VNODES);
	mlv_config_free(cfg);
}

#define VIP1 "vips:\n  - {name: a, address: 192.0.2.1, port: 80, protocol: tcp, "

static void test_config_errors(void **state)
{
	(void)state;
	/* HEAD is 3 lines, "vips:" line 4, the VIP line 5 */
	expect_error(HEAD VIP1 "table: hashring}\n", 5,
		     "expected maglev, rendezvous or ring");
	expect_error(HEAD VIP1 "max_load: 0.5}\n", 5, "0 (off) or between 1 and 100");
	expect_error(HEAD VIP1 "max_load: 100.5}\n", 5, "0 (off) or between 1 and 100");
	expect_error(HEAD VIP1 "max_load: \"1.25\"}\n", 5, "must be a number");
	expect_error(HEAD VIP1 "max_load: 1e3}\n", 5, "must be a number");
	expect_error(HEAD VIP1 "max_load: 1.}\n", 5, "must be a number");
	expect_error(HEAD VIP1 "max_load: -1.5}\n", 5, "must be a number");
	expect_error(HEAD VIP1 "max_load: .5}\n", 5, "must be a number");
	expect_error(HEAD VIP1 "table: ring, vnodes: 0}\n", 5, "between 1 and 1000");
	expect_error(HEAD VIP1 "vnodes: 5}\n", 5,
		     "vnodes is only used with table: ring");
	expect_error(HEAD "defaults: {max_load: 0.9}\n"
		     "vips: []\n", 4, "0 (off) or between 1 and 100");
	expect_error(HEAD VIP1 "table: ring, vnodes: 1000,\n"
		     "     backends: [{name: x, address: 10.99.1.1, weight: 5000}]}\n",
		     5, "would have 5000000 points");
	expect_error(HEAD VIP1 "backends: [{name: x, address: 10.99.1.1, "
		     "state: off}]}\n", 5, "expected active, drain or down");
}

/* ---- generations ---- */

static struct mlv_generation *gen_of(struct mlv_config *cfg,
				     const struct mlv_generation *prev,
				     mlv_gen_state_fn state, void *ctx)
{
	struct mlv_gen_port_info info = { .mac = { 2, 0, 0, 0, 0, 1 },
					  .next_hop = { 2, 0, 0, 0, 0, 0xfe } };
	struct mlv_generation *g = NULL;

	assert_int_equal(mlv_gen_build(cfg, &info, 2,
				       prev ? prev->number + 1 : 1, state, ctx,
				       prev, &g), MLV_OK);
	return g;
}

/* One VIP "a" with backends a-1 (100), a-2 (100), a-3 (200), a-4 (drain)
 * and extra YAML for the VIP (table, max_load, ...) and for a-2. */
static struct mlv_config *one_vip(const char *vip_extra, const char *a2_extra)
{
	char yaml[2048];

	snprintf(yaml, sizeof(yaml), HEAD
		 "vips:\n"
		 "  - name: a\n"
		 "    address: 192.0.2.1\n"
		 "    port: 80\n"
		 "    protocol: tcp\n"
		 "    table_size: 1009\n"
		 "%s"
		 "    backends:\n"
		 "      - {name: a-3, address: 10.99.1.3, weight: 200}\n"
		 "      - {name: a-1, address: 10.99.1.1}\n"
		 "      - {name: a-2, address: 10.99.1.2%s}\n"
		 "      - {name: a-4, address: 10.99.1.4, state: drain}\n",
		 vip_extra, a2_extra);
	return load_ok(yaml);
}

/* The table the generation must hold: the builder over the VIP's
 * backends in name order with the given weights and no_second flags. */
static void expect_table(const struct mlv_gen_vip *v, enum mlv_table_kind kind,
			 uint32_t vnodes, const uint32_t *weights,
			 const bool *no_second)
{
	static const char *const names[] = { "a-1", "a-2", "a-3", "a-4" };
	struct mlv_table_backend be[4];
	struct mlv_table_spec spec = { kind, 1009, vnodes };
	uint16_t first[1009], second[1009];
	uint64_t fp;

	for (uint32_t i = 0; i < 4; i++)
		be[i] = (struct mlv_table_backend){ names[i], weights[i],
						    no_second[i] };
	assert_int_equal(mlv_table_build(&spec, be, 4, first, second, &fp), MLV_OK);
	assert_int_equal(v->table_kind, kind);
	assert_memory_equal(v->table, first, sizeof(first));
	assert_memory_equal(v->second, second, sizeof(second));
	assert_true(v->fingerprint == fp);
}

static const uint32_t active_weights[] = { 100, 100, 200, 0 };
static const bool none_down[] = { false, false, false, false };

static void test_gen_uses_builder(void **state)
{
	static const char *const extra[] = {
		"    table: maglev\n", "    table: rendezvous\n",
		"    table: ring\n    vnodes: 3\n",
	};

	(void)state;
	for (uint32_t k = 0; k < 3; k++) {
		struct mlv_config *cfg = one_vip(extra[k], "");
		struct mlv_generation *g = gen_of(cfg, NULL, NULL, NULL);

		expect_table(&g->vips[0], (enum mlv_table_kind)k, 3,
			     active_weights, none_down);
		mlv_gen_free(g);
		mlv_config_free(cfg);
	}
}

/* A rebuild reuses a VIP's tables only while every table input is the
 * same: builder, vnodes (rings), max_load, weights, down flags. */
static void test_gen_reuse(void **state)
{
	static const struct {
		const char *vip_extra, *a2_extra;
		bool reused;
	} next[] = {
		{ "    table: ring\n    vnodes: 3\n", "", true },
		{ "    table: rendezvous\n", "", false },
		{ "    table: ring\n    vnodes: 4\n", "", false },
		{ "    table: ring\n    vnodes: 3\n    max_load: 1.5\n", "", false },
		{ "    table: ring\n    vnodes: 3\n", ", weight: 150", false },
		{ "    table: ring\n    vnodes: 3\n", ", state: down", false },
	};
	struct mlv_config *base = one_vip("    table: ring\n    vnodes: 3\n", "");
	struct mlv_generation *g1 = gen_of(base, NULL, NULL, NULL);

	(void)state;
	assert_int_equal(g1->n_tables_reused, 0);
	for (uint32_t i = 0; i < sizeof(next) / sizeof(next[0]); i++) {
		struct mlv_config *cfg = one_vip(next[i].vip_extra,
						 next[i].a2_extra);
		struct mlv_generation *g2 = gen_of(cfg, g1, NULL, NULL);

		if (g2->n_tables_reused != (next[i].reused ? 1u : 0u))
			fail_msg("case %u: reused %u", i, g2->n_tables_reused);
		mlv_gen_free(g2);
		mlv_config_free(cfg);
	}
	mlv_gen_free(g1);
	mlv_config_free(base);

	/* vnodes (e.g. from defaults.vnodes) do not matter to Maglev */
	{
		struct mlv_config *c1 = one_vip("    table: maglev\n", "");
		struct mlv_config *c2 = one_vip("    table: maglev\n", "");
		struct mlv_generation *m1, *m2;

		c1->vips[0].vnodes = 3;
		m1 = gen_of(c1, NULL, NULL, NULL);
		m2 = gen_of(c2, m1, NULL, NULL);

		assert_int_equal(m2->n_tables_reused, 1);
		mlv_gen_free(m1);
		mlv_gen_free(m2);
		mlv_config_free(c1);
		mlv_config_free(c2);
	}
}

/* state: down keeps the backend's slots (first choices as if it were
 * active), never makes it a second choice, and it takes no new flows. */
static void test_gen_state_down(void **state)
{
	static const bool a2_down[] = { false, true, false, false };

	(void)state;
	for (uint32_t k = 0; k < 3; k++) {
		char extra[64];
		struct mlv_config *cfg;
		struct mlv_generation *g;
		const struct mlv_gen_vip *v;
		const struct mlv_gen_backend *a2;

		snprintf(extra, sizeof(extra), "    table: %s\n    max_load: 2\n",
			 mlv_table_kind_name((enum mlv_table_kind)k));
		cfg = one_vip(extra, ", state: down");
		g = gen_of(cfg, NULL, NULL, NULL);
		v = &g->vips[0];
		a2 = &v->backends[1];
		assert_string_equal(a2->name, "a-2");
		assert_false(a2->usable);
		assert_false(a2->draining);
		assert_true(a2->no_second);
		assert_int_equal(a2->weight, 100);
		assert_true(a2->load_bound == 0);
		assert_int_equal(v->n_usable, 2);   /* a-1, a-3 */
		expect_table(v, (enum mlv_table_kind)k, MLV_RING_DEFAULT_VNODES,
			     active_weights, a2_down);
		mlv_gen_free(g);
		mlv_config_free(cfg);
	}
}

/* keep_slots: an unhealthy backend keeps its slots, so the previous
 * tables are reused as they are (instant failover); without it the
 * backend leaves the table. */
static void down_keep(const struct mlv_gen_pair *pair,
		      struct mlv_gen_backend_state *out, void *ctx)
{
	const bool *keep = ctx;

	if (strcmp(pair->backend, "a-3") == 0) {
		out->healthy = false;
		out->keep_slots = *keep;
	}
}

static void test_gen_keep_slots(void **state)
{
	struct mlv_config *cfg = one_vip("    table: rendezvous\n", "");
	struct mlv_generation *g1 = gen_of(cfg, NULL, NULL, NULL), *g2, *g3;
	static const uint32_t a3_gone[] = { 100, 100, 0, 0 };
	bool keep = true;

	(void)state;
	g2 = gen_of(cfg, g1, down_keep, &keep);
	assert_int_equal(g2->n_tables_reused, 1);
	assert_false(g2->vips[0].backends[2].usable);
	assert_int_equal(g2->vips[0].backends[2].weight, 200);
	assert_int_equal(g2->vips[0].n_usable, 2);
	assert_memory_equal(g2->vips[0].table, g1->vips[0].table, 1009 * 2);
	assert_memory_equal(g2->vips[0].second, g1->vips[0].second, 1009 * 2);

	keep = false;
	g3 = gen_of(cfg, g2, down_keep, &keep);
	assert_int_equal(g3->n_tables_reused, 0);
	assert_int_equal(g3->vips[0].backends[2].weight, 0);
	expect_table(&g3->vips[0], MLV_TABLE_RENDEZVOUS, 0, a3_gone, none_down);
	mlv_gen_free(g1);
	mlv_gen_free(g2);
	mlv_gen_free(g3);
	mlv_config_free(cfg);
}

/* Bounded-load shares: max_load x weight / sum of the weights that take
 * new flows; zero for draining backends and VIPs without max_load. */
static void test_gen_load_bounds(void **state)
{
	struct mlv_config *cfg = one_vip("    max_load: 1.25\n", "");
	struct mlv_config *off = one_vip("", "");
	struct mlv_generation *g = gen_of(cfg, NULL, NULL, NULL);
	struct mlv_generation *h = gen_of(off, NULL, NULL, NULL);
	const struct mlv_gen_vip *v = &g->vips[0];

	(void)state;
	assert_true(v->max_load == 1.25);
	assert_true(v->backends[0].load_bound == 1.25 * 100 / 400);
	assert_true(v->backends[1].load_bound == 1.25 * 100 / 400);
	assert_true(v->backends[2].load_bound == 1.25 * 200 / 400);
	assert_true(v->backends[3].load_bound == 0);   /* draining */
	for (uint32_t b = 0; b < 4; b++) {
		assert_int_equal(v->backends[b].vip_index, 0);
		assert_true(h->vips[0].backends[b].load_bound == 0);
	}
	mlv_gen_free(g);
	mlv_gen_free(h);
	mlv_config_free(cfg);
	mlv_config_free(off);
}

/* uid_free: the builder asks before it hands out a new uid and skips the
 * ones refused (their tally slots are busy); carried uids are not asked
 * about; with every uid refused the build fails with MLV_E_LIMIT. */
struct uid_asks {
	uint32_t n, asked[16];
	uint32_t refuse_below;   /* refuse uids below this */
	bool refuse_all;
};

static bool uid_free_cb(void *ctx, uint32_t uid)
{
	struct uid_asks *a = ctx;

	if (a->n < 16)
		a->asked[a->n] = uid;
	a->n++;
	return !a->refuse_all && uid >= a->refuse_below;
}

static void test_gen_uid_free(void **state)
{
	struct mlv_config *cfg = one_vip("", "");
	struct mlv_gen_port_info info = { .mac = { 2, 0, 0, 0, 0, 1 },
					  .next_hop = { 2, 0, 0, 0, 0, 0xfe } };
	struct uid_asks a = { .refuse_below = 4 };
	struct mlv_gen_build_opts opts = { .uid_free = uid_free_cb,
					   .uid_free_ctx = &a };
	struct mlv_generation *g = NULL, *h = NULL;

	(void)state;
	assert_int_equal(mlv_gen_build_opt(cfg, &info, 1, 1, NULL, NULL, NULL,
					   &opts, &g), MLV_OK);
	/* uids 1..3 refused: the VIP gets 4, its four backends 5..8 */
	assert_int_equal(a.n, 8);
	assert_int_equal(a.asked[0], 1);
	assert_int_equal(g->vips[0].uid, 4);
	for (uint32_t b = 0; b < 4; b++)
		assert_int_equal(g->vips[0].backends[b].uid, 5 + b);
	/* a rebuild carries every uid: nothing asked, nothing new */
	a.n = 0;
	a.refuse_all = true;
	assert_int_equal(mlv_gen_build_opt(cfg, &info, 1, 2, NULL, NULL, g,
					   &opts, &h), MLV_OK);
	assert_int_equal(a.n, 0);
	assert_int_equal(h->vips[0].backends[3].uid, 8);
	mlv_gen_free(h);
	h = NULL;
	/* a new VIP while every uid is refused: the build fails whole */
	mlv_gen_free(g);
	g = NULL;
	assert_int_equal(mlv_gen_build_opt(cfg, &info, 1, 1, NULL, NULL, NULL,
					   &opts, &g), MLV_E_LIMIT);
	assert_null(g);
	assert_true(a.n >= 65536);
	mlv_config_free(cfg);
}

/* ---- maglevctl whatif builds with the VIP's own builder ---- */

static const struct mlv_generation *whatif_gen;

static const struct mlv_generation *current_gen(void *ctx)
{
	(void)ctx;
	return whatif_gen;
}

static json_t *whatif(const char *action, const char *backend)
{
	struct mlv_ctl_state st = { .generation = current_gen };
	json_t *args = json_pack("{s:s, s:s, s:s}", "vip", "a", "action",
				 action, "backend", backend);
	json_t *reply;

	assert_non_null(args);
	reply = mlv_ctl_cmd_whatif(&st, args);
	json_decref(args);
	assert_non_null(reply);
	assert_true(json_is_true(json_object_get(reply, "ok")));
	return reply;
}

static json_int_t int_of(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

/* Rendezvous and ring move exactly the changed backend's slots; Maglev
 * moves more: so whatif must have built with the VIP's builder. */
static void test_whatif_uses_builder(void **state)
{
	static const char *const extra[] = {
		"    table: maglev\n", "    table: rendezvous\n",
		"    table: ring\n",
	};

	(void)state;
	for (uint32_t k = 0; k < 3; k++) {
		struct mlv_config *cfg = one_vip(extra[k], "");
		struct mlv_generation *g = gen_of(cfg, NULL, NULL, NULL);
		json_t *rm, *add;

		whatif_gen = g;
		rm = whatif("remove", "a-1");
		add = whatif("add", "a-9");
		assert_string_equal(json_string_value(json_object_get(rm, "table")),
				    mlv_table_kind_name((enum mlv_table_kind)k));
		assert_true(int_of(rm, "backend_slots") > 0);
		assert_true(int_of(add, "backend_slots") > 0);
		if (k == MLV_TABLE_MAGLEV) {
			assert_true(int_of(rm, "slots_moved") > int_of(rm, "backend_slots"));
			assert_true(int_of(add, "slots_moved") > int_of(add, "backend_slots"));
		} else {
			assert_int_equal(int_of(rm, "slots_moved"), int_of(rm, "backend_slots"));
			assert_int_equal(int_of(add, "slots_moved"), int_of(add, "backend_slots"));
		}
		json_decref(rm);
		json_decref(add);
		mlv_gen_free(g);
		mlv_config_free(cfg);
	}
	whatif_gen = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_keys),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_gen_uses_builder),
		cmocka_unit_test(test_gen_reuse),
		cmocka_unit_test(test_gen_state_down),
		cmocka_unit_test(test_gen_keep_slots),
		cmocka_unit_test(test_gen_load_bounds),
		cmocka_unit_test(test_gen_uid_free),
		cmocka_unit_test(test_whatif_uses_builder),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
