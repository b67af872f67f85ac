/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the QUIC routing keys (vips[].quic,
 * vips[].backends[].quic_server_id): defaults, values in the model,
 * range, quic on a TCP VIP, duplicate server IDs (the error at the
 * second, naming the first's line), and the warnings. Expected
 * positions come from the fixture text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "control/config/config.h"
#include "control/config/plan.h"
#include "tests/support/config_fixture.h"

#define DP                                                                   \
	"dataplane:\n"                                                       \
	"  ports:\n"                                                         \
	"    - {name: ext, device: net_null0, address: 10.0.0.1, address6: fd00::1}\n"

static const struct mlv_backend_config *backend(const struct mlv_vip_config *v,
						const char *name)
{
	const struct mlv_backend_config *b = mlv_config_backend(v, name);

	assert_non_null(b);
	return b;
}

static void test_defaults_and_values(void **state)
{
	const char *y = DP
		"vips:\n"
		"  - name: q\n"
		"    address: 192.0.2.1\n"
		"    port: 443\n"
		"    protocol: udp\n"
		"    quic: true\n"
		"    backends:\n"
		"      - {name: b1, address: 10.0.0.11, quic_server_id: 1}\n"
		"      - {name: b2, address: 10.0.0.12, quic_server_id: 16777215}\n"
		"      - {name: b3, address: 10.0.0.13}\n"
		"  - name: plain\n"
		"    address: 192.0.2.1\n"
		"    port: 53\n"
		"    protocol: udp\n"
		"    backends: [{name: b1, address: 10.0.0.11}]\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_ok(&l);
	assert_int_equal(l.d.n, 0);   /* no warning either */
	assert_true(l.cfg->vips[0].quic);
	assert_false(l.cfg->vips[1].quic);
	assert_int_equal(backend(&l.cfg->vips[0], "b1")->quic_server_id, 1);
	assert_int_equal(backend(&l.cfg->vips[0], "b2")->quic_server_id, 16777215);
	assert_int_equal(backend(&l.cfg->vips[0], "b3")->quic_server_id, 0);
	assert_int_equal(backend(&l.cfg->vips[1], "b1")->quic_server_id, 0);
	unload(&l);
}

static void test_quic_on_tcp(void **state)
{
	const char *y = DP
		"vips:\n"
		"  - {name: t, address: 192.0.2.1, port: 443, protocol: tcp, quic: true,\n"
		"     backends: [{name: b1, address: 10.0.0.11, quic_server_id: 3}]}\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "true", "quic is only for UDP VIPs (VIP 't' is tcp)");
	assert_int_equal(l.d.n_errors, 1);
	unload(&l);
}

static void test_duplicate_ids(void **state)
{
	const char *y = DP
		"vips:\n"
		"  - name: q\n"
		"    address: 192.0.2.1\n"
		"    port: 443\n"
		"    protocol: udp\n"
		"    quic: true\n"
		"    backends:\n"
		"      - {name: zz, address: 10.0.0.11, quic_server_id: 700}\n"
		"      - {name: aa, address: 10.0.0.12, quic_server_id: 9}\n"
		"      - {name: mm, address: 10.0.0.13, quic_server_id: 700}\n"
		"  - name: other\n"
		"    address: 192.0.2.2\n"
		"    port: 443\n"
		"    protocol: udp\n"
		"    quic: true\n"
		"    backends:\n"   /* the same IDs in another VIP: fine */
		"      - {name: zz, address: 10.0.0.11, quic_server_id: 700}\n"
		"      - {name: aa, address: 10.0.0.12, quic_server_id: 9}\n";
	struct load l;
	struct mlv_src_pos first = pos_of(y, "700", 0);
	char msg[160];
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	snprintf(msg, sizeof(msg),
		 "quic_server_id 700 of backend 'mm' in VIP 'q' is already "
		 "backend 'zz''s (at line %u)", first.line);
	expect_diag(&l, MLV_DIAG_ERROR, y, "700", 1, msg);
	assert_int_equal(l.d.n_errors, 1);
	unload(&l);
}

static void test_range(void **state)
{
	const char *y = DP
		"vips:\n"
		"  - {name: q, address: 192.0.2.1, port: 443, protocol: udp, quic: true,\n"
		"     backends: [{name: b1, address: 10.0.0.11, quic_server_id: 0},\n"
		"                {name: b2, address: 10.0.0.12, quic_server_id: 16777216},\n"
		"                {name: b3, address: 10.0.0.13, quic_server_id: x7}]}\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "0}", "between 1 and 16777215");
	expect_error(&l, y, "16777216", "between 1 and 16777215");
	expect_error(&l, y, "x7", "must be an integer");
	unload(&l);
}

static void test_warnings(void **state)
{
	const char *y = DP
		"vips:\n"
		"  - {name: p, address: 192.0.2.1, port: 443, protocol: udp,\n"
		"     backends: [{name: b1, address: 10.0.0.11, quic_server_id: 5}]}\n"
		"  - {name: q, address: 192.0.2.2, port: 443, protocol: udp, quic: true,\n"
		"     backends: [{name: b1, address: 10.0.0.11}]}\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_ok(&l);
	expect_diag(&l, MLV_DIAG_WARNING, y, "5}", 0,
		    "quic_server_id of backend 'b1' is ignored: VIP 'p' does "
		    "not have quic: true");
	expect_diag(&l, MLV_DIAG_WARNING, y, "true", 0,
		    "VIP 'q' has quic: true but no backend has a quic_server_id");
	assert_int_equal(l.d.n, 2);
	unload(&l);
}

/* A reload that turns quic on, or changes a server ID, changes the VIP
 * (the reload plan's log line and budget see it). */
static void test_reload_plan(void **state)
{
	static const char *const texts[] = {
		DP "vips:\n"
		"  - {name: q, address: 192.0.2.1, port: 443, protocol: udp,\n"
		"     backends: [{name: b1, address: 10.0.0.11}]}\n",
		DP "vips:\n"
		"  - {name: q, address: 192.0.2.1, port: 443, protocol: udp, quic: true,\n"
		"     backends: [{name: b1, address: 10.0.0.11, quic_server_id: 4}]}\n",
		DP "vips:\n"
		"  - {name: q, address: 192.0.2.1, port: 443, protocol: udp, quic: true,\n"
		"     backends: [{name: b1, address: 10.0.0.11, quic_server_id: 5}]}\n",
	};
	struct load l[3];
	struct mlv_plan p;
	(void)state;

	for (int i = 0; i < 3; i++) {
		load(&l[i], texts[i]);
		expect_ok(&l[i]);
	}
	for (int i = 0; i < 2; i++) {
		assert_int_equal(mlv_plan_make(l[i].cfg, l[i + 1].cfg, &p), MLV_OK);
		assert_int_equal(p.vips_changed, 1);
		assert_int_equal(p.n, 1);
		assert_true(p.vips[0].other);
		mlv_plan_free(&p);
	}
	assert_int_equal(mlv_plan_make(l[2].cfg, l[2].cfg, &p), MLV_OK);
	assert_int_equal(p.vips_changed, 0);
	mlv_plan_free(&p);
	for (int i = 0; i < 3; i++)
		unload(&l[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_and_values),
		cmocka_unit_test(test_quic_on_tcp),
		cmocka_unit_test(test_duplicate_ids),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_warnings),
		cmocka_unit_test(test_reload_plan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
