/* SPDX-License-Identifier: BSD-3-Clause */
/* second_chance in the config: off by default, defaults.second_chance
 * inherited by gue TCP VIPs only, its window's bounds, the errors (at
 * their line:col) for a VIP that sets it with another method or
 * protocol, and a reload that only changes it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "control/config/config.h"
#include "control/config/plan.h"

#include "tests/support/config_fixture.h"

#define DP                                                                   \
	"dataplane:\n"                                                       \
	"  ports:\n"                                                         \
	"    - {name: ext, device: net_null0, address: 10.0.0.1, address6: fd00::1}\n"

#define BE "backends: [{name: b, address: 10.0.0.2}]"

static void test_off_by_default(void **state)
{
	const char *y = DP
		"vips:\n"
		"  - {name: t, address: 192.0.2.1, port: 80, protocol: tcp,\n"
		"     forwarding: gue, " BE "}\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_ok(&l);
	assert_false(l.cfg->default_second_chance.enabled);
	assert_int_equal(l.cfg->default_second_chance.window_ms, 300000);
	assert_false(mlv_config_vip(l.cfg, "t")->second_chance.enabled);
	unload(&l);
}

/* defaults.second_chance reaches gue TCP VIPs; ipip, l2dsr and UDP VIPs
 * stay off without an error; a VIP's own map overrides it key by key. */
static void test_inheritance(void **state)
{
	const char *y = DP
		"defaults:\n"
		"  second_chance: {enabled: true, window: 90s}\n"
		"vips:\n"
		"  - {name: gue, address: 192.0.2.1, port: 80, protocol: tcp,\n"
		"     forwarding: gue, " BE "}\n"
		"  - {name: ipip, address: 192.0.2.1, port: 81, protocol: tcp,\n"
		"     forwarding: ipip, " BE "}\n"
		"  - {name: udp, address: 192.0.2.1, port: 53, protocol: udp,\n"
		"     forwarding: gue, " BE "}\n"
		"  - {name: own, address: 192.0.2.1, port: 82, protocol: tcp,\n"
		"     forwarding: gue, second_chance: {window: 10m}, " BE "}\n"
		"  - {name: off, address: 192.0.2.1, port: 83, protocol: tcp,\n"
		"     forwarding: gue, second_chance: {enabled: false}, " BE "}\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_ok(&l);
	assert_true(mlv_config_vip(l.cfg, "gue")->second_chance.enabled);
	assert_int_equal(mlv_config_vip(l.cfg, "gue")->second_chance.window_ms, 90000);
	assert_false(mlv_config_vip(l.cfg, "ipip")->second_chance.enabled);
	assert_false(mlv_config_vip(l.cfg, "udp")->second_chance.enabled);
	assert_true(mlv_config_vip(l.cfg, "own")->second_chance.enabled);
	assert_int_equal(mlv_config_vip(l.cfg, "own")->second_chance.window_ms, 600000);
	assert_false(mlv_config_vip(l.cfg, "off")->second_chance.enabled);
	unload(&l);
}

static void expect_vip_error(const char *vip, const char *msg)
{
	char y[1024];
	struct load l;

	snprintf(y, sizeof(y), DP
		 "vips:\n"
		 "  - {name: v, address: 192.0.2.1, port: 80, %s,\n"
		 "     second_chance: {enabled: true}, " BE "}\n", vip);
	load(&l, y);
	expect_rejected(&l);
	struct mlv_src_pos p = pos_of(y, "second_chance: ", 0);
	p.col += (uint32_t)strlen("second_chance: ");
	if (find_diag(&l, MLV_DIAG_ERROR, p, msg) == NULL) {
		dump(&l);
		fail_msg("no error at %u:%u containing \"%s\"", p.line, p.col, msg);
	}
	unload(&l);
}

static void test_needs_gue_tcp(void **state)
{
	(void)state;
	expect_vip_error("protocol: tcp, forwarding: ipip",
			 "second_chance needs forwarding: gue (VIP 'v' is ipip tcp)");
	expect_vip_error("protocol: tcp, forwarding: l2dsr",
			 "second_chance needs forwarding: gue (VIP 'v' is l2dsr tcp)");
	expect_vip_error("protocol: udp, forwarding: gue",
			 "second_chance needs protocol: tcp (VIP 'v' is gue udp)");
}

static void test_bad_values(void **state)
{
	static const struct { const char *v, *needle, *msg; } cases[] = {
		{ "{window: 500ms}", "500ms", "'window' is" },
		{ "{window: 25h}", "25h", "'window' is" },
		{ "{enabled: maybe}", "maybe", "'enabled'" },
		{ "{windows: 5m}", "windows", "windows" },
		{ "[true]", "[true]", "second_chance" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char y[1024];
		struct load l;

		snprintf(y, sizeof(y), DP "defaults:\n  second_chance: %s\n",
			 cases[i].v);
		load(&l, y);
		expect_rejected(&l);
		expect_error(&l, y, cases[i].needle, cases[i].msg);
		unload(&l);
	}
}

/* A reload that only turns second chance on, or only changes its window,
 * shows the VIP as changed. */
static void test_plan_sees_change(void **state)
{
	static const char *const sc[] = {
		"", "second_chance: {enabled: true}, ",
		"second_chance: {enabled: true, window: 1m}, ",
	};
	struct load l[3];
	struct mlv_plan plan;
	(void)state;

	for (int i = 0; i < 3; i++) {
		char y[1024];

		snprintf(y, sizeof(y), DP
			 "vips:\n"
			 "  - {name: t, address: 192.0.2.1, port: 80, protocol: tcp,\n"
			 "     forwarding: gue, %s" BE "}\n", sc[i]);
		load(&l[i], y);
		expect_ok(&l[i]);
	}
	for (int i = 0; i < 2; i++) {
		assert_int_equal(mlv_plan_make(l[i].cfg, l[i + 1].cfg, &plan), MLV_OK);
		assert_int_equal(plan.vips_changed, 1);
		assert_true(plan.vips[0].other);
		mlv_plan_free(&plan);
	}
	assert_int_equal(mlv_plan_make(l[2].cfg, l[2].cfg, &plan), MLV_OK);
	assert_int_equal(plan.vips_changed, 0);
	mlv_plan_free(&plan);
	for (int i = 0; i < 3; i++)
		unload(&l[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off_by_default),
		cmocka_unit_test(test_inheritance),
		cmocka_unit_test(test_needs_gue_tcp),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_plan_sees_change),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
