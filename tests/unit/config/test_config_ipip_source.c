/* SPDX-License-Identifier: BSD-3-Clause */
/* ipip_source / ipip_source6 in the config: unset by default,
 * defaults.* inherited by ipip VIPs only, the prefixes they take, and the
 * errors (at their line:col) for other families, short prefixes, host
 * bits and VIPs not forwarded with ipip; a reload that only changes one
 * shows the VIP as changed. */
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

#define BE "backends: [{name: b, address: 10.0.0.2}]"

/* The prefix text of p ("" when unset). */
static const char *text(const struct mlv_ip_prefix *p, char *buf, size_t len)
{
	if (p->ip.family == MLV_AF_NONE) {
		buf[0] = '\0';
		return buf;
	}
	return mlv_ip_prefix_format(p, buf, len);
}

static void test_unset_by_default(void **state)
{
	const char *y = DP
		"vips:\n"
		"  - {name: t, address: 192.0.2.1, port: 80, protocol: tcp, " BE "}\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_ok(&l);
	assert_int_equal(mlv_config_vip(l.cfg, "t")->ipip_source.ip.family, MLV_AF_NONE);
	assert_int_equal(mlv_config_vip(l.cfg, "t")->ipip_source6.ip.family, MLV_AF_NONE);
	unload(&l);
}

static void test_values_and_inheritance(void **state)
{
	const char *y = DP
		"defaults:\n"
		"  ipip_source: 10.77.0.16/28\n"
		"  ipip_source6: \"fd00:77::/120\"\n"
		"vips:\n"
		"  - {name: inherit, address: 192.0.2.1, port: 80, protocol: tcp, " BE "}\n"
		"  - {name: own, address: 192.0.2.1, port: 81, protocol: tcp,\n"
		"     ipip_source: 10.78.0.0/16, ipip_source6: \"fd00:78::9/128\", " BE "}\n"
		"  - {name: one, address: 192.0.2.1, port: 82, protocol: tcp,\n"
		"     ipip_source: 10.79.0.5/32, " BE "}\n"
		"  - {name: gue, address: 192.0.2.1, port: 83, protocol: tcp,\n"
		"     forwarding: gue, " BE "}\n"
		"  - {name: dsr, address: 192.0.2.1, port: 84, protocol: tcp,\n"
		"     forwarding: l2dsr, backends: [{name: b, address: 10.0.0.2,\n"
		"     mac: \"02:00:00:00:00:02\"}]}\n";
	struct load l;
	char a[64];
	(void)state;

	load(&l, y);
	expect_ok(&l);
	assert_string_equal(text(&mlv_config_vip(l.cfg, "inherit")->ipip_source, a, sizeof(a)),
			    "10.77.0.16/28");
	assert_string_equal(text(&mlv_config_vip(l.cfg, "inherit")->ipip_source6, a, sizeof(a)),
			    "fd00:77::/120");
	assert_string_equal(text(&mlv_config_vip(l.cfg, "own")->ipip_source, a, sizeof(a)),
			    "10.78.0.0/16");
	assert_string_equal(text(&mlv_config_vip(l.cfg, "own")->ipip_source6, a, sizeof(a)),
			    "fd00:78::9/128");
	assert_string_equal(text(&mlv_config_vip(l.cfg, "one")->ipip_source, a, sizeof(a)),
			    "10.79.0.5/32");
	/* the defaults reach ipip VIPs only */
	assert_string_equal(text(&mlv_config_vip(l.cfg, "gue")->ipip_source, a, sizeof(a)), "");
	assert_string_equal(text(&mlv_config_vip(l.cfg, "gue")->ipip_source6, a, sizeof(a)), "");
	assert_string_equal(text(&mlv_config_vip(l.cfg, "dsr")->ipip_source, a, sizeof(a)), "");
	unload(&l);
}

/* An error at the value of the (only) VIP-level "key: " in y. */
static void expect_at_value(const struct load *l, const char *y,
			    const char *key, const char *msg)
{
	char needle[64];
	struct mlv_src_pos p;

	snprintf(needle, sizeof(needle), "     %s: ", key);
	p = pos_of(y, needle, 0);
	p.col += (uint32_t)strlen(needle);
	if (find_diag(l, MLV_DIAG_ERROR, p, msg) == NULL) {
		dump(l);
		fail_msg("no error at %u:%u containing \"%s\"", p.line, p.col,
			 msg);
	}
}

static void expect_vip_error(const char *key, const char *value, const char *msg)
{
	char y[1024];
	struct load l;

	snprintf(y, sizeof(y), DP
		 "vips:\n"
		 "  - {name: t, address: 192.0.2.1, port: 80, protocol: tcp,\n"
		 "     %s: %s, " BE "}\n", key, value);
	load(&l, y);
	expect_rejected(&l);
	expect_at_value(&l, y, key, msg);
	unload(&l);
}

static void test_bad_values(void **state)
{
	(void)state;
	expect_vip_error("ipip_source", "10.77.0.17/28",
			 "'10.77.0.17/28' for 'ipip_source' has address bits set past "
			 "its length: write 10.77.0.16/28");
	expect_vip_error("ipip_source", "10.76.0.0/15",
			 "'ipip_source' 10.76.0.0/15 holds more addresses than a flow "
			 "hash spreads over: use /16 to /32");
	expect_vip_error("ipip_source", "\"fd00:77::/120\"",
			 "'ipip_source' must be an IPv4 prefix, got fd00:77::/120");
	expect_vip_error("ipip_source6", "10.77.0.0/28",
			 "'ipip_source6' must be an IPv6 prefix, got 10.77.0.0/28");
	expect_vip_error("ipip_source6", "\"fd00:77::/95\"",
			 "use /96 to /128");
	expect_vip_error("ipip_source", "10.77.0.0/33", "is not a CIDR prefix");
	expect_vip_error("ipip_source", "yes", "is not a CIDR prefix");
	expect_vip_error("ipip_source", "[10.77.0.0/28]",
			 "'ipip_source' must be a CIDR prefix, got a list");
}

static void test_defaults_bad_value(void **state)
{
	const char *y = DP "defaults:\n  ipip_source: 10.77.0.1/24\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "10.77.0.1/24", "write 10.77.0.0/24");
	unload(&l);
}

/* gue and l2dsr VIPs: setting either is an error at the value. */
static void test_not_ipip(void **state)
{
	char y[1024];
	struct load l;
	(void)state;

	snprintf(y, sizeof(y), DP
		 "vips:\n"
		 "  - {name: g, address: 192.0.2.1, port: 80, protocol: tcp,\n"
		 "     forwarding: gue,\n"
		 "     ipip_source: 10.77.0.16/28, " BE "}\n");
	load(&l, y);
	expect_rejected(&l);
	expect_at_value(&l, y, "ipip_source",
			"ipip_source is only used with forwarding: ipip (VIP 'g' is gue)");
	unload(&l);
	snprintf(y, sizeof(y), DP
		 "vips:\n"
		 "  - {name: d, address: 192.0.2.1, port: 80, protocol: tcp,\n"
		 "     forwarding: l2dsr,\n"
		 "     ipip_source6: \"fd00::/96\", backends: [{name: b,\n"
		 "     address: 10.0.0.2, mac: \"02:00:00:00:00:02\"}]}\n");
	load(&l, y);
	expect_rejected(&l);
	expect_at_value(&l, y, "ipip_source6",
			"ipip_source6 is only used with forwarding: ipip (VIP 'd' is l2dsr)");
	unload(&l);
}

/* A reload that only changes ipip_source shows the VIP as changed. */
static void test_plan_sees_change(void **state)
{
	const char *a = DP
		"vips:\n"
		"  - {name: t, address: 192.0.2.1, port: 80, protocol: tcp, " BE "}\n";
	const char *b = DP
		"vips:\n"
		"  - {name: t, address: 192.0.2.1, port: 80, protocol: tcp,\n"
		"     ipip_source: 10.77.0.16/28, " BE "}\n";
	struct load la, lb;
	struct mlv_plan plan;
	(void)state;

	load(&la, a);
	load(&lb, b);
	expect_ok(&la);
	expect_ok(&lb);
	assert_int_equal(mlv_plan_make(la.cfg, lb.cfg, &plan), MLV_OK);
	assert_int_equal(plan.vips_changed, 1);
	assert_int_equal(plan.vips[0].change, MLV_PLAN_CHANGED);
	assert_true(plan.vips[0].other);
	mlv_plan_free(&plan);
	assert_int_equal(mlv_plan_make(lb.cfg, lb.cfg, &plan), MLV_OK);
	assert_int_equal(plan.vips_changed, 0);
	mlv_plan_free(&plan);
	unload(&la);
	unload(&lb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unset_by_default),
		cmocka_unit_test(test_values_and_inheritance),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_defaults_bad_value),
		cmocka_unit_test(test_not_ipip),
		cmocka_unit_test(test_plan_sees_change),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
