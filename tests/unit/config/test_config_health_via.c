/* SPDX-License-Identifier: BSD-3-Clause */
/* health.via in the config: direct by default, data_path inherited from
 * defaults.health key by key, refused (at its line:col) for udp and dns
 * checks and for a backend of the other family than its VIP's, and a
 * reload that only changes it shows the VIP as changed. */
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

static void test_direct_by_default(void **state)
{
	const char *y = DP
		"vips:\n"
		"  - {name: t, address: 192.0.2.1, port: 80, protocol: tcp,\n"
		"     health: {type: http}, " BE "}\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_ok(&l);
	assert_int_equal(l.cfg->default_health.via, MLV_HEALTH_VIA_DIRECT);
	assert_int_equal(mlv_config_vip(l.cfg, "t")->health.via,
			 MLV_HEALTH_VIA_DIRECT);
	unload(&l);
}

/* defaults.health.via reaches every VIP whose check is tcp or http, and
 * falls back to direct, without an error, where a VIP's own map makes the
 * check udp or dns; a VIP's map overrides it. */
static void test_inheritance(void **state)
{
	const char *y = DP
		"defaults:\n"
		"  health: {type: http, via: data_path, path: /healthz}\n"
		"vips:\n"
		"  - {name: http, address: 192.0.2.1, port: 80, protocol: tcp,\n"
		"     forwarding: gue, " BE "}\n"
		"  - {name: tcp, address: 192.0.2.1, port: 81, protocol: tcp,\n"
		"     health: {type: tcp}, " BE "}\n"
		"  - {name: udp, address: 192.0.2.1, port: 53, protocol: udp,\n"
		"     health: {type: udp}, " BE "}\n"
		"  - {name: own, address: 192.0.2.1, port: 82, protocol: tcp,\n"
		"     health: {via: direct}, " BE "}\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_ok(&l);
	assert_int_equal(mlv_config_vip(l.cfg, "http")->health.via,
			 MLV_HEALTH_VIA_DATA_PATH);
	assert_string_equal(mlv_config_vip(l.cfg, "http")->health.path,
			    "/healthz");
	assert_int_equal(mlv_config_vip(l.cfg, "tcp")->health.via,
			 MLV_HEALTH_VIA_DATA_PATH);
	assert_int_equal(mlv_config_vip(l.cfg, "udp")->health.via,
			 MLV_HEALTH_VIA_DIRECT);
	assert_int_equal(mlv_config_vip(l.cfg, "own")->health.via,
			 MLV_HEALTH_VIA_DIRECT);
	assert_int_equal(mlv_config_vip(l.cfg, "own")->health.type,
			 MLV_HEALTH_HTTP);
	unload(&l);
}

/* A UDP VIP that inherits a tcp or http check through the data path is
 * warned, never silent: on its own port (no health.port) as a TCP
 * service it does not have; on another port of its address as a check
 * of something else than the VIP, shared with VIPs checked the same
 * way. Its own udp check is not warned. */
static void test_udp_inherits_data_path(void **state)
{
	const char *own_port = DP
		"defaults:\n"
		"  health: {type: http, via: data_path, path: /healthz}\n"
		"vips:\n"
		"  - {name: dns, address: 192.0.2.1, port: 53, protocol: udp,\n"
		"     forwarding: gue, " BE "}\n";
	const char *other_port = DP
		"defaults:\n"
		"  health: {type: http, port: 8080, via: data_path}\n"
		"vips:\n"
		"  - {name: dns, address: 192.0.2.1, port: 53, protocol: udp,\n"
		"     forwarding: gue, " BE "}\n"
		"  - {name: ok, address: 192.0.2.1, port: 54, protocol: udp,\n"
		"     health: {type: udp}, " BE "}\n";
	struct load l;
	(void)state;

	load(&l, own_port);
	expect_ok(&l);
	expect_diag(&l, MLV_DIAG_WARNING, own_port, "{name: dns", 0,
		    "VIP 'dns' is UDP but its health check is http on the "
		    "VIP's own port 53 through the data path (from "
		    "defaults.health)");
	assert_int_equal(l.d.n, 1);
	unload(&l);

	load(&l, other_port);
	expect_ok(&l);
	expect_diag(&l, MLV_DIAG_WARNING, other_port, "{name: dns", 0,
		    "VIP 'dns' is UDP but inherits defaults.health: a http "
		    "check through the data path to port 8080");
	assert_int_equal(l.d.n, 1);
	unload(&l);
}

static void test_datagram_checks_refused(void **state)
{
	static const struct { const char *type, *msg; } cases[] = {
		{ "udp", "health via: data_path needs type tcp or http (this check is udp): "
			 "remove via (a udp check goes straight to the backend)" },
		{ "dns, query: example.org", "health via: data_path needs type tcp or http (this check is dns): "
			 "remove via (a dns check goes straight to the backend)" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char y[1024];
		struct load l;
		struct mlv_src_pos p;

		snprintf(y, sizeof(y), DP
			 "vips:\n"
			 "  - {name: v, address: 192.0.2.1, port: 53, protocol: udp,\n"
			 "     health: {type: %s, via: data_path}, " BE "}\n",
			 cases[i].type);
		load(&l, y);
		expect_rejected(&l);
		p = pos_of(y, "via: ", 0);
		p.col += (uint32_t)strlen("via: ");   /* the value's place */
		if (find_diag(&l, MLV_DIAG_ERROR, p, cases[i].msg) == NULL) {
			dump(&l);
			fail_msg("no error at %u:%u containing \"%s\"", p.line,
				 p.col, cases[i].msg);
		}
		unload(&l);
	}
}

/* The probe is re-addressed from the backend to the VIP, so both must be
 * of one family; the error points at the backend's address. */
static void test_family_mismatch(void **state)
{
	const char *y = DP
		"vips:\n"
		"  - {name: v, address: 192.0.2.1, port: 80, protocol: tcp,\n"
		"     forwarding: gue, health: {type: tcp, via: data_path},\n"
		"     backends: [{name: ok, address: 10.0.0.2},\n"
		"                {name: six, address: \"fd00::2\"}]}\n";
	struct load l;
	struct mlv_src_pos p;
	const char *msg = "backend 'six' of VIP 'v' is IPv6 and the VIP IPv4: "
			  "health via: data_path needs both of one family";
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	p = pos_of(y, "\"fd00::2\"", 0);
	if (find_diag(&l, MLV_DIAG_ERROR, p, msg) == NULL) {
		dump(&l);
		fail_msg("no error at %u:%u containing \"%s\"", p.line, p.col,
			 msg);
	}
	unload(&l);
}

static void test_bad_value(void **state)
{
	const char *y = DP "defaults:\n  health: {type: tcp, via: tunnel}\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "tunnel", "invalid via 'tunnel' (expected direct or data_path)");
	unload(&l);
}

/* A reload that only switches a VIP's check to the data path changes it. */
static void test_plan_sees_change(void **state)
{
	static const char *const via[] = { "direct", "data_path" };
	struct load l[2];
	struct mlv_plan plan;
	(void)state;

	for (int i = 0; i < 2; i++) {
		char y[1024];

		snprintf(y, sizeof(y), DP
			 "vips:\n"
			 "  - {name: t, address: 192.0.2.1, port: 80, protocol: tcp,\n"
			 "     health: {type: tcp, via: %s}, " BE "}\n", via[i]);
		load(&l[i], y);
		expect_ok(&l[i]);
	}
	assert_int_equal(mlv_plan_make(l[0].cfg, l[1].cfg, &plan), MLV_OK);
	assert_int_equal(plan.vips_changed, 1);
	mlv_plan_free(&plan);
	for (int i = 0; i < 2; i++)
		unload(&l[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_direct_by_default),
		cmocka_unit_test(test_inheritance),
		cmocka_unit_test(test_udp_inherits_data_path),
		cmocka_unit_test(test_datagram_checks_refused),
		cmocka_unit_test(test_family_mismatch),
		cmocka_unit_test(test_bad_value),
		cmocka_unit_test(test_plan_sees_change),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
