/* SPDX-License-Identifier: BSD-3-Clause */
/* A VIP's source ACL in the config (control/config/acl.c): the lists load
 * in both families, every wrong entry is an error at its own
 * file:line:col (host bits set naming the canonical prefix, the other
 * family, a prefix in both lists, not a prefix), a repeat is a warning,
 * and two VIPs' ACLs compare equal whatever the order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "control/config/plan.h"
#include "tests/support/config_fixture.h"

#define DP                                                                   \
	"dataplane:\n"                                                       \
	"  ports:\n"                                                         \
	"    - {name: ext, device: net_null0, address: 10.0.0.1, address6: fd00::1}\n" \
	"defaults: {health: {type: none}}\n"

static void test_lists_load(void **state)
{
	const char *y = DP
		"vips:\n"
		"  - name: web\n"
		"    address: 192.0.2.10\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    allow: [10.0.0.0/8, 192.168.1.7]\n"
		"    deny:\n"
		"      - 10.1.0.0/16\n"
		"      - 0.0.0.0/0\n"
		"    backends: [{name: a, address: 10.0.0.2}]\n"
		"  - name: web6\n"
		"    address: 2001:db8::10\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    deny: [\"2001:db8:bad::/48\", \"::/0\"]\n"
		"    backends: [{name: a, address: fd00::2}]\n"
		"  - name: open\n"
		"    address: 192.0.2.11\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    allow: []\n"
		"    backends: [{name: a, address: 10.0.0.2}]\n";
	struct load l;
	char buf[MLV_IP_PREFIX_STRLEN];
	const struct mlv_vip_config *v;
	(void)state;

	load(&l, y);
	expect_ok(&l);
	v = &l.cfg->vips[0];
	assert_int_equal(v->n_allow, 2);
	assert_int_equal(v->n_deny, 2);
	assert_string_equal(mlv_ip_prefix_format(&v->allow[0].prefix, buf,
						 sizeof(buf)), "10.0.0.0/8");
	assert_string_equal(mlv_ip_prefix_format(&v->allow[1].prefix, buf,
						 sizeof(buf)), "192.168.1.7/32");
	assert_string_equal(mlv_ip_prefix_format(&v->deny[1].prefix, buf,
						 sizeof(buf)), "0.0.0.0/0");
	assert_int_equal(v->deny[0].pos.line, pos_of(y, "10.1.0.0/16", 0).line);
	v = &l.cfg->vips[1];
	assert_int_equal(v->n_allow, 0);
	assert_int_equal(v->n_deny, 2);
	assert_int_equal(v->deny[0].prefix.len, 48);
	assert_int_equal(v->deny[0].prefix.ip.family, MLV_AF_INET6);
	assert_int_equal(l.cfg->vips[2].n_allow + l.cfg->vips[2].n_deny, 0);
	assert_int_equal(l.d.n, 0);
	unload(&l);
}

static void test_bad_entries(void **state)
{
	const char *y = DP
		"vips:\n"
		"  - name: web\n"
		"    address: 192.0.2.10\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    allow: [10.0.0.1/8, 2001:db8::/32, 10.9.0.0/33, nonsense, "
		"{a: b}, 172.16.0.0/12]\n"
		"    deny: [10.2.0.0/16, 172.16.0.0/12, 10.2.0.0/16]\n"
		"    backends: [{name: a, address: 10.0.0.2}]\n"
		"  - name: six\n"
		"    address: 2001:db8::1\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    deny: [\"2001:db8::1/32\", 192.0.2.0/24]\n"
		"    backends: [{name: a, address: 10.0.0.2}]\n"
		"  - name: notalist\n"
		"    address: 192.0.2.12\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    allow: 10.0.0.0/8\n";
	struct load l;
	char msg[128];
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "10.0.0.1/8", "write 10.0.0.0/8");
	expect_error(&l, y, "2001:db8::/32", "is IPv6 but VIP 'web' is IPv4");
	expect_error(&l, y, "10.9.0.0/33", "prefix length is not 0-32");
	expect_error(&l, y, "nonsense", "not a CIDR prefix");
	expect_error(&l, y, "{a: b}", "must be a CIDR prefix, got a mapping");
	snprintf(msg, sizeof(msg), "172.16.0.0/12 is in both 'allow' (line %u) "
		 "and 'deny' of VIP 'web'", pos_of(y, "172.16.0.0/12", 0).line);
	expect_diag(&l, MLV_DIAG_ERROR, y, "172.16.0.0/12", 1, msg);
	expect_diag(&l, MLV_DIAG_WARNING, y, "10.2.0.0/16", 1,
		    "10.2.0.0/16 is listed twice in 'deny' of VIP 'web'");
	expect_error(&l, y, "\"2001:db8::1/32\"", "write 2001:db8::/32");
	expect_error(&l, y, "192.0.2.0/24", "is IPv4 but VIP 'six' is IPv6");
	expect_error(&l, y, "10.0.0.0/8\n", "'allow' must be a list of CIDR prefixes");
	unload(&l);
}

static struct mlv_config *two_vips(const char *acl_a, const char *acl_b)
{
	char y[2048];

	snprintf(y, sizeof(y), DP
		 "vips:\n"
		 "  - {name: a, address: 192.0.2.10, port: 80, protocol: tcp%s}\n"
		 "  - {name: b, address: 192.0.2.11, port: 80, protocol: tcp%s}\n",
		 acl_a, acl_b);
	return config_load_ok(y, strlen(y));
}

static void expect_equal(const char *a, const char *b, bool want)
{
	struct mlv_config *cfg = two_vips(a, b);

	if (mlv_vip_acl_equal(&cfg->vips[0], &cfg->vips[1]) != want ||
	    mlv_vip_acl_equal(&cfg->vips[1], &cfg->vips[0]) != want)
		fail_msg("ACLs '%s' and '%s' should%s be equal", a, b,
			 want ? "" : " not");
	mlv_config_free(cfg);
}

static void test_equal(void **state)
{
	(void)state;
	expect_equal("", "", true);
	expect_equal("", ", allow: []", true);
	expect_equal(", allow: [10.0.0.0/8, 10.1.0.0/16]",
		     ", allow: [10.1.0.0/16, 10.0.0.0/8]", true);
	expect_equal(", allow: [10.0.0.0/8, 10.0.0.0/8]",
		     ", allow: [10.0.0.0/8]", true);
	expect_equal(", allow: [10.0.0.0/8]", ", deny: [10.0.0.0/8]", false);
	expect_equal(", allow: [10.0.0.0/8]", ", allow: [10.0.0.0/9]", false);
	expect_equal(", allow: [10.0.0.0/8]", "", false);
	expect_equal(", allow: [10.0.0.0/8], deny: [10.1.0.0/16]",
		     ", allow: [10.0.0.0/8]", false);
}

/* A reload that changes only a VIP's ACL changes the VIP (the plan lists
 * it, with its other settings); one that reorders it does not. */
static void test_plan_sees_acl_changes(void **state)
{
	struct mlv_config *a = two_vips(", deny: [10.0.0.0/8, 10.1.0.0/16]", "");
	struct mlv_config *b = two_vips(", deny: [10.0.0.0/8]", "");
	struct mlv_config *c = two_vips(", deny: [10.1.0.0/16, 10.0.0.0/8]", "");
	struct mlv_plan plan;

	(void)state;
	assert_int_equal(mlv_plan_make(a, b, &plan), MLV_OK);
	assert_int_equal(plan.vips_changed, 1);
	assert_int_equal(plan.n, 1);
	assert_string_equal(plan.vips[0].name, "a");
	assert_true(plan.vips[0].other);
	mlv_plan_free(&plan);
	assert_int_equal(mlv_plan_make(a, c, &plan), MLV_OK);
	assert_int_equal(plan.vips_changed, 0);
	mlv_plan_free(&plan);
	mlv_config_free(a);
	mlv_config_free(b);
	mlv_config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lists_load),
		cmocka_unit_test(test_bad_entries),
		cmocka_unit_test(test_equal),
		cmocka_unit_test(test_plan_sees_acl_changes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
