/* SPDX-License-Identifier: BSD-3-Clause */
/* Runtime override store (daemon/runtime/overrides.c): put/get/apply, removal of
 * empty overrides, change detection, order independence, pruning against
 * a config. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "control/config/config.h"
#include "daemon/runtime/overrides.h"
#include "tests/support/config_load.h"

static struct mlv_override ov(const char *vip, const char *backend, bool drain,
			      bool has_weight, uint32_t weight)
{
	struct mlv_override o;

	memset(&o, 0, sizeof(o));
	snprintf(o.vip, sizeof(o.vip), "%s", vip);
	snprintf(o.backend, sizeof(o.backend), "%s", backend);
	o.drain = drain;
	o.has_weight = has_weight;
	o.weight = weight;
	return o;
}

static void test_put_get_apply(void **state)
{
	struct mlv_overrides o;
	struct mlv_override got, in;
	struct mlv_gen_backend_state st;
	bool changed;

	(void)state;
	mlv_overrides_init(&o);
	assert_false(mlv_overrides_get(&o, "web", "b1", &got));
	assert_string_equal(got.vip, "web");
	assert_false(got.drain || got.has_weight);

	in = ov("web", "b1", true, false, 0);
	assert_int_equal(mlv_overrides_put(&o, &in, &changed), MLV_OK);
	assert_true(changed);
	assert_int_equal(mlv_overrides_put(&o, &in, &changed), MLV_OK);
	assert_false(changed);          /* same again: nothing to publish */
	assert_true(mlv_overrides_get(&o, "web", "b1", &got));
	assert_true(got.drain);

	/* apply layers only override fields; health is left alone */
	memset(&st, 0, sizeof(st));
	st.healthy = true;
	mlv_overrides_apply(&o, "web", "b1", &st);
	assert_true(st.healthy && st.drain_override && !st.has_weight_override);
	memset(&st, 0, sizeof(st));
	mlv_overrides_apply(&o, "web", "b2", &st);
	assert_false(st.drain_override);
	mlv_overrides_apply(&o, "dns", "b1", &st);
	assert_false(st.drain_override);

	/* a weight on top, then clearing drain keeps the weight */
	in = ov("web", "b1", true, true, 7);
	assert_int_equal(mlv_overrides_put(&o, &in, &changed), MLV_OK);
	assert_true(changed);
	in.drain = false;
	assert_int_equal(mlv_overrides_put(&o, &in, &changed), MLV_OK);
	memset(&st, 0, sizeof(st));
	mlv_overrides_apply(&o, "web", "b1", &st);
	assert_true(!st.drain_override && st.has_weight_override &&
		    st.weight_override == 7);
	/* weight 0 is an override too (no new flows) */
	in.weight = 0;
	assert_int_equal(mlv_overrides_put(&o, &in, &changed), MLV_OK);
	assert_true(changed);
	assert_int_equal(o.n, 1);

	/* neither flag: the entry goes */
	in.has_weight = false;
	assert_int_equal(mlv_overrides_put(&o, &in, &changed), MLV_OK);
	assert_true(changed);
	assert_int_equal(o.n, 0);
	assert_int_equal(mlv_overrides_put(&o, &in, &changed), MLV_OK);
	assert_false(changed);
	mlv_overrides_free(&o);
}

static void test_many_any_order(void **state)
{
	struct mlv_overrides o;
	char vip[16], be[16];

	(void)state;
	mlv_overrides_init(&o);
	/* inserted in a scrambled order, found by binary search */
	for (uint32_t k = 0; k < 200; k++) {
		uint32_t i = (k * 73) % 200;
		struct mlv_override in;

		snprintf(vip, sizeof(vip), "v%u", i % 7);
		snprintf(be, sizeof(be), "b%u", i);
		in = ov(vip, be, i % 2 == 0, i % 3 == 0, i);
		if (!in.drain && !in.has_weight)
			in.drain = true;
		assert_int_equal(mlv_overrides_put(&o, &in, NULL), MLV_OK);
	}
	assert_int_equal(o.n, 200);
	for (uint32_t i = 1; i < o.n; i++) {
		int c = strcmp(o.items[i - 1].vip, o.items[i].vip);

		assert_true(c < 0 || (c == 0 && strcmp(o.items[i - 1].backend,
						       o.items[i].backend) < 0));
	}
	for (uint32_t i = 0; i < 200; i++) {
		struct mlv_gen_backend_state st;

		memset(&st, 0, sizeof(st));
		snprintf(vip, sizeof(vip), "v%u", i % 7);
		snprintf(be, sizeof(be), "b%u", i);
		mlv_overrides_apply(&o, vip, be, &st);
		assert_int_equal(st.has_weight_override, i % 3 == 0);
		if (st.has_weight_override)
			assert_int_equal(st.weight_override, i);
	}
	mlv_overrides_free(&o);
}

static void test_bad_names(void **state)
{
	struct mlv_overrides o;
	struct mlv_override in = ov("web", "b1", true, false, 0);

	(void)state;
	mlv_overrides_init(&o);
	memset(in.backend, 'x', sizeof(in.backend));   /* not terminated */
	assert_int_equal(mlv_overrides_put(&o, &in, NULL), MLV_E_INVAL);
	assert_int_equal(o.n, 0);
	mlv_overrides_free(&o);
}

static const char yaml[] =
"dataplane:\n"
"  ports:\n"
"    - {name: ext, device: net_null0, address: 10.99.0.1,"
" next_hop: \"02:00:00:00:00:01\"}\n"
"vips:\n"
"  - {name: web, address: 192.0.2.10, port: 80, protocol: tcp,"
" health: {type: none}, backends: [{name: b1, address: 10.99.1.1}]}\n";

static void forget(const struct mlv_override *o, void *ctx)
{
	int *n = ctx;

	assert_true(strcmp(o->backend, "b1") != 0 || strcmp(o->vip, "web") != 0);
	(*n)++;
}

static void test_prune(void **state)
{
	struct mlv_overrides o;
	struct mlv_config *cfg = NULL;
	struct mlv_override in;
	int forgotten = 0;

	(void)state;
	cfg = config_load_ok(yaml, strlen(yaml));
	mlv_overrides_init(&o);
	in = ov("web", "b1", true, false, 0);
	mlv_overrides_put(&o, &in, NULL);
	in = ov("web", "b2", true, false, 0);        /* backend gone */
	mlv_overrides_put(&o, &in, NULL);
	in = ov("dns", "b1", false, true, 3);        /* VIP gone */
	mlv_overrides_put(&o, &in, NULL);
	assert_int_equal(mlv_overrides_prune(&o, cfg, forget, &forgotten), 2);
	assert_int_equal(forgotten, 2);
	assert_int_equal(o.n, 1);
	assert_string_equal(o.items[0].backend, "b1");
	assert_int_equal(mlv_overrides_prune(&o, cfg, NULL, NULL), 0);
	mlv_overrides_free(&o);
	mlv_config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get_apply),
		cmocka_unit_test(test_many_any_order),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_prune),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
