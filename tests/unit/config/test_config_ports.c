/* SPDX-License-Identifier: BSD-3-Clause */
/* VIP ports and hash fields in the config: one port, a range, `any`;
 * duplicates and overlapping ranges named with the other VIP's position;
 * health.port required beside a range; hash and source_prefix6 with
 * their default and errors at line:col. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tests/support/config_fixture.h"

#define DP                                                                   \
	"dataplane:\n"                                                       \
	"  ports:\n"                                                         \
	"    - {name: ext, device: d0, address: 10.99.0.1,"                  \
	" address6: 'fd00:99::1', next_hop: '02:00:00:00:00:01'}\n"

#define BE "    backends: [{name: b1, address: 10.99.1.1}]\n"

static void ports_ranges_and_any_load(void **state)
{
	static const char y[] = DP
		"defaults:\n"
		"  hash: source\n"
		"vips:\n"
		"  - {name: one, address: 192.0.2.10, port: 8050, protocol: tcp}\n"
		"  - {name: range, address: 192.0.2.10, port: 8000-8100, protocol: tcp,\n"
		"     hash: 3tuple, health: {type: tcp, port: 8000}}\n"
		"  - {name: all, address: 192.0.2.10, port: any, protocol: tcp, hash: 5tuple}\n"
		"  - {name: six, address: '2001:db8::10', port: any, protocol: udp,\n"
		"     source_prefix6: 64}\n";
	struct load l;

	(void)state;
	load(&l, y);
	expect_ok(&l);
	assert_int_equal(l.cfg->n_vips, 4);
	assert_int_equal(l.cfg->vips[0].port, 8050);
	assert_int_equal(l.cfg->vips[0].port_last, 8050);
	assert_int_equal(l.cfg->vips[0].hash, MLV_HASH_SOURCE);
	assert_int_equal(l.cfg->vips[0].source_prefix6, 128);
	assert_int_equal(l.cfg->vips[1].port, 8000);
	assert_int_equal(l.cfg->vips[1].port_last, 8100);
	assert_int_equal(l.cfg->vips[1].hash, MLV_HASH_3TUPLE);
	assert_true(mlv_vip_port_any(&l.cfg->vips[2]));
	assert_int_equal(l.cfg->vips[2].hash, MLV_HASH_5TUPLE);
	assert_int_equal(l.cfg->vips[3].source_prefix6, 64);
	assert_int_equal(l.cfg->default_hash, MLV_HASH_SOURCE);
	unload(&l);
}

static void default_hash_is_5tuple(void **state)
{
	static const char y[] = DP
		"vips:\n"
		"  - {name: one, address: 192.0.2.10, port: 80, protocol: tcp}\n";
	struct load l;

	(void)state;
	load(&l, y);
	expect_ok(&l);
	assert_int_equal(l.cfg->vips[0].hash, MLV_HASH_5TUPLE);
	unload(&l);
}

static void bad_ports_at_line_col(void **state)
{
	static const char y[] = DP
		"vips:\n"
		"  - {name: a, address: 192.0.2.1, port: 8100-8000, protocol: tcp}\n"
		"  - {name: b, address: 192.0.2.2, port: 0-5, protocol: tcp}\n"
		"  - {name: c, address: 192.0.2.3, port: 70000, protocol: tcp}\n"
		"  - {name: d, address: 192.0.2.4, port: all, protocol: tcp}\n"
		"  - {name: e, address: 192.0.2.5, port: 5-5, protocol: tcp}\n"
		"  - {name: f, address: 192.0.2.6, port: '80', protocol: tcp}\n"
		"  - {name: g, address: 192.0.2.7, port: 1-65536, protocol: tcp}\n"
		"  - {name: h, address: 192.0.2.8, port: 80, protocol: tcp, hash: ports}\n"
		"  - {name: i, address: 192.0.2.9, port: 80, protocol: tcp, source_prefix6: 64}\n"
		"  - {name: j, address: 192.0.2.11, port: 80, protocol: tcp, hash: source,\n"
		"     source_prefix6: 129}\n";
	struct load l;

	(void)state;
	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "8100-8000", "'port' range '8100-8000' must start below its end");
	expect_error(&l, y, "0-5", "'port' range '0-5' must be two ports 1..65535");
	expect_error(&l, y, "70000", "'port' must be a port 1..65535, a range such as 8000-8100, or any; got '70000'");
	expect_error(&l, y, "all", "got 'all'");
	expect_error(&l, y, "5-5", "(for one port write 5)");
	expect_error(&l, y, "'80'", "got '80'");
	expect_error(&l, y, "1-65536", "must be two ports");
	expect_error(&l, y, "ports}", "invalid hash 'ports' (expected 5tuple, 3tuple or source)");
	expect_error(&l, y, "64}", "source_prefix6 is only used with hash: source (VIP 'i' uses 5tuple)");
	expect_error(&l, y, "129", "'source_prefix6' is 129; it must be between 0 and 128");
	assert_int_equal(l.d.n_errors, 10);
	unload(&l);
}

static void overlaps_and_duplicates_name_the_other(void **state)
{
	static const char y[] = DP
		"vips:\n"
		"  - {name: r1, address: 192.0.2.10, port: 8000-8100, protocol: tcp}\n"
		"  - {name: r2, address: 192.0.2.10, port: 8100-8200, protocol: tcp}\n"
		"  - {name: r3, address: 192.0.2.10, port: 7000-9000, protocol: tcp}\n"
		"  - {name: r4, address: 192.0.2.10, port: 8000-8100, protocol: udp}\n"
		"  - {name: a1, address: 192.0.2.10, port: any, protocol: tcp}\n"
		"  - {name: a2, address: 192.0.2.10, port: any, protocol: tcp}\n"
		"  - {name: p1, address: 192.0.2.10, port: 8050, protocol: tcp}\n"
		"  - {name: r5, address: 192.0.2.10, port: 9001-9002, protocol: tcp}\n";
	struct load l;
	char msg[160];

	(void)state;
	load(&l, y);
	expect_rejected(&l);
	/* sorted by first port: r3 (7000-9000) comes first, so r1 and r2
	 * overlap it and each other is reported against the widest */
	snprintf(msg, sizeof(msg),
		 "VIP 'r1' overlaps VIP 'r3' (line %u): 192.0.2.10 port 8000-8100/tcp and port 7000-9000",
		 pos_of(y, "{name: r3", 0).line);
	expect_error(&l, y, "8000-8100", msg);
	snprintf(msg, sizeof(msg), "VIP 'r2' overlaps VIP 'r3' (line %u)",
		 pos_of(y, "{name: r3", 0).line);
	expect_error(&l, y, "8100-8200", msg);
	snprintf(msg, sizeof(msg), "VIP 'a2' duplicates VIP 'a1' (line %u): both are 192.0.2.10 port any/tcp",
		 pos_of(y, "{name: a1", 0).line);
	expect_diag(&l, MLV_DIAG_ERROR, y, "192.0.2.10", 5, msg);
	/* p1 inside r1 and r5 beside r3 are fine; r4 is another protocol */
	assert_int_equal(l.d.n_errors, 3);
	unload(&l);
}

static void wild_port_needs_health_port(void **state)
{
	static const char y[] = DP
		"defaults:\n"
		"  health: {type: tcp}\n"
		"vips:\n"
		"  - {name: r1, address: 192.0.2.10, port: 8000-8100, protocol: tcp}\n"
		"  - {name: a1, address: 192.0.2.11, port: any, protocol: tcp,\n"
		"     health: {interval: 2s}}\n"
		"  - {name: ok, address: 192.0.2.12, port: any, protocol: tcp,\n"
		"     health: {port: 22}}\n"
		"  - {name: none, address: 192.0.2.13, port: any, protocol: tcp,\n"
		"     health: {type: none}}\n";
	struct load l;

	(void)state;
	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "8000-8100",
		     "VIP 'r1' has port 8000-8100 and a health check (from defaults.health) without health.port");
	expect_error(&l, y, "{interval",
		     "VIP 'a1' has port any and a health check without health.port");
	assert_int_equal(l.d.n_errors, 2);
	unload(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ports_ranges_and_any_load),
		cmocka_unit_test(default_hash_is_5tuple),
		cmocka_unit_test(bad_ports_at_line_col),
		cmocka_unit_test(overlaps_and_duplicates_name_the_other),
		cmocka_unit_test(wild_port_needs_health_port),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
