/* SPDX-License-Identifier: BSD-3-Clause */
/* mss_clamp in the config: auto by default on TCP VIPs, off on UDP ones,
 * defaults.mss_clamp inherited by TCP VIPs only, the values it takes and
 * the errors (at their line:col) for bad values and UDP VIPs. */
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

static void test_defaults(void **state)
{
	const char *y = DP
		"vips:\n"
		"  - {name: t, address: 192.0.2.1, port: 80, protocol: tcp, " BE "}\n"
		"  - {name: u, address: 192.0.2.1, port: 53, protocol: udp, " BE "}\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_ok(&l);
	assert_int_equal(l.cfg->default_mss_clamp, MLV_MSS_CLAMP_AUTO);
	assert_int_equal(mlv_config_vip(l.cfg, "t")->mss_clamp, MLV_MSS_CLAMP_AUTO);
	assert_int_equal(mlv_config_vip(l.cfg, "u")->mss_clamp, MLV_MSS_CLAMP_OFF);
	unload(&l);
}

static void test_values_and_inheritance(void **state)
{
	const char *y = DP
		"defaults:\n"
		"  mss_clamp: 1300\n"
		"vips:\n"
		"  - {name: inherit, address: 192.0.2.1, port: 80, protocol: tcp, " BE "}\n"
		"  - {name: udp, address: 192.0.2.1, port: 53, protocol: udp, " BE "}\n"
		"  - {name: off, address: 192.0.2.1, port: 81, protocol: tcp,\n"
		"     mss_clamp: off, " BE "}\n"
		"  - {name: auto, address: 2001:db8::1, port: 80, protocol: tcp,\n"
		"     mss_clamp: auto, backends: [{name: b, address: fd00::2}]}\n"
		"  - {name: low, address: 192.0.2.1, port: 82, protocol: tcp,\n"
		"     mss_clamp: 536, " BE "}\n"
		"  - {name: high, address: 192.0.2.1, port: 83, protocol: tcp,\n"
		"     mss_clamp: 65495, " BE "}\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_ok(&l);
	assert_int_equal(l.cfg->default_mss_clamp, 1300);
	assert_int_equal(mlv_config_vip(l.cfg, "inherit")->mss_clamp, 1300);
	assert_int_equal(mlv_config_vip(l.cfg, "udp")->mss_clamp, MLV_MSS_CLAMP_OFF);
	assert_int_equal(mlv_config_vip(l.cfg, "off")->mss_clamp, MLV_MSS_CLAMP_OFF);
	assert_int_equal(mlv_config_vip(l.cfg, "auto")->mss_clamp, MLV_MSS_CLAMP_AUTO);
	assert_int_equal(mlv_config_vip(l.cfg, "low")->mss_clamp, 536);
	assert_int_equal(mlv_config_vip(l.cfg, "high")->mss_clamp, 65495);
	unload(&l);

	load(&l, DP "defaults: {mss_clamp: off}\n"
		 "vips:\n"
		 "  - {name: t, address: 192.0.2.1, port: 80, protocol: tcp, " BE "}\n");
	expect_ok(&l);
	assert_int_equal(mlv_config_vip(l.cfg, "t")->mss_clamp, MLV_MSS_CLAMP_OFF);
	unload(&l);
}

/* An error at the value of the (only) VIP-level "mss_clamp: " in y. */
static void expect_at_value(const struct load *l, const char *y,
			    const char *msg)
{
	struct mlv_src_pos p = pos_of(y, "     mss_clamp: ", 0);

	p.col += (uint32_t)strlen("     mss_clamp: ");
	if (find_diag(l, MLV_DIAG_ERROR, p, msg) == NULL) {
		dump(l);
		fail_msg("no error at %u:%u containing \"%s\"", p.line, p.col,
			 msg);
	}
}

static void expect_vip_error(const char *value, const char *msg)
{
	char y[1024];
	struct load l;

	snprintf(y, sizeof(y), DP
		 "vips:\n"
		 "  - {name: t, address: 192.0.2.1, port: 80, protocol: tcp,\n"
		 "     mss_clamp: %s, " BE "}\n", value);
	load(&l, y);
	expect_rejected(&l);
	expect_at_value(&l, y, msg);
	unload(&l);
}

static void test_bad_values(void **state)
{
	(void)state;
	expect_vip_error("535", "'mss_clamp' is 535; it must be between 536 and 65495");
	expect_vip_error("65496", "'mss_clamp' is 65496; it must be between 536 and 65495");
	expect_vip_error("-1", "it must be between 536 and 65495");
	expect_vip_error("0", "it must be between 536 and 65495");
	expect_vip_error("yes", "'mss_clamp' must be auto, off or an MSS in bytes (536..65495), got 'yes'");
	expect_vip_error("\"1200\"", "must be auto, off or an MSS in bytes");
	expect_vip_error("0x500", "must be auto, off or an MSS in bytes");
	expect_vip_error("[1200]", "'mss_clamp' must be auto, off or an integer, got a list");
}

static void test_defaults_bad_value(void **state)
{
	const char *y = DP "defaults:\n  mss_clamp: 100\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "100", "'mss_clamp' is 100; it must be between 536 and 65495");
	unload(&l);
}

/* A UDP VIP has no SYNs: setting it there, even to off, is an error at
 * the value; defaults.mss_clamp does not reach it. */
static void test_udp_vip(void **state)
{
	static const char *const values[] = { "auto", "off", "1200" };
	(void)state;

	for (size_t i = 0; i < 3; i++) {
		char y[1024];
		struct load l;

		snprintf(y, sizeof(y), DP
			 "defaults: {mss_clamp: 1300}\n"
			 "vips:\n"
			 "  - {name: dns, address: 192.0.2.1, port: 53, protocol: udp,\n"
			 "     mss_clamp: %s, " BE "}\n", values[i]);
		load(&l, y);
		expect_rejected(&l);
		expect_at_value(&l, y, "mss_clamp is only used with protocol: tcp (VIP 'dns' is udp)");
		unload(&l);
	}
}

/* A reload that only changes mss_clamp shows the VIP as changed. */
static void test_plan_sees_change(void **state)
{
	const char *a = DP
		"vips:\n"
		"  - {name: t, address: 192.0.2.1, port: 80, protocol: tcp, " BE "}\n";
	const char *b = DP
		"vips:\n"
		"  - {name: t, address: 192.0.2.1, port: 80, protocol: tcp,\n"
		"     mss_clamp: 1200, " BE "}\n";
	struct load la, lb;
	struct mlv_plan plan;
	(void)state;

	load(&la, a);
	load(&lb, b);
	expect_ok(&la);
	expect_ok(&lb);
	assert_int_equal(mlv_plan_make(la.cfg, lb.cfg, &plan), MLV_OK);
	assert_int_equal(plan.vips_changed, 1);
	assert_int_equal(plan.n, 1);
	assert_int_equal(plan.vips[0].change, MLV_PLAN_CHANGED);
	assert_true(plan.vips[0].other);
	mlv_plan_free(&plan);
	assert_int_equal(mlv_plan_make(la.cfg, la.cfg, &plan), MLV_OK);
	assert_int_equal(plan.vips_changed, 0);
	mlv_plan_free(&plan);
	unload(&la);
	unload(&lb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values_and_inheritance),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_defaults_bad_value),
		cmocka_unit_test(test_udp_vip),
		cmocka_unit_test(test_plan_sees_change),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
