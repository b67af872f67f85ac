/* SPDX-License-Identifier: BSD-3-Clause */
/* Bonded ports in the config (`bond:` of a port): what a valid one
 * loads as, its defaults, and the errors at their line:col: a device
 * that is no bonded device's name, too few or repeated members, a member
 * that is a port or another bond's member, a bonded device without
 * bond:, an unknown mode, a link_monitor out of range. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "control/config/config.h"

#include "tests/support/config_fixture.h"

#define TAIL                                                                 \
	"vips:\n"                                                            \
	"  - {name: web, address: 192.0.2.1, port: 80, protocol: tcp,\n"     \
	"     backends: [{name: b, address: 10.0.0.2}]}\n"

static void test_valid(void **state)
{
	static const char y[] =
		"dataplane:\n"
		"  ports:\n"
		"    - name: ext\n"
		"      device: net_bonding0\n"
		"      address: 10.0.0.1\n"
		"      bond:\n"
		"        members: [\"0000:01:00.0\", \"0000:01:00.1\"]\n"
		"        mode: 802.3ad\n"
		"        mac: \"02:00:00:00:00:aa\"\n"
		"        link_monitor: 20ms\n"
		"    - name: int\n"
		"      device: net_bonding1\n"
		"      address: 10.1.0.1\n"
		"      bond: {members: [net_af_packet0, net_af_packet1, net_af_packet2]}\n"
		"    - {name: plain, device: net_null0, address: 10.2.0.1}\n"
		TAIL;
	const struct mlv_port_config *p;
	struct load l;
	(void)state;

	load(&l, y);
	expect_ok(&l);
	p = mlv_config_port(l.cfg, "ext");
	assert_true(p->bond.enabled);
	assert_int_equal(p->bond.mode, MLV_BOND_8023AD);
	assert_int_equal(p->bond.n_members, 2);
	assert_string_equal(p->bond.members[0], "0000:01:00.0");
	assert_string_equal(p->bond.members[1], "0000:01:00.1");
	assert_true(p->bond.has_mac);
	assert_int_equal(p->bond.mac.bytes[5], 0xaa);
	assert_int_equal(p->bond.link_monitor_ms, 20);
	/* the defaults: active-backup, the first member's MAC, 100 ms */
	p = mlv_config_port(l.cfg, "int");
	assert_true(p->bond.enabled);
	assert_int_equal(p->bond.mode, MLV_BOND_ACTIVE_BACKUP);
	assert_int_equal(p->bond.n_members, 3);
	assert_string_equal(p->bond.members[2], "net_af_packet2");
	assert_false(p->bond.has_mac);
	assert_int_equal(p->bond.link_monitor_ms, 100);
	assert_false(mlv_config_port(l.cfg, "plain")->bond.enabled);
	unload(&l);
}

/* One port "ext" with the given device and bond: text, a port "other"
 * on device net_null0; the error msg at needle. */
static void expect_port_error(const char *device, const char *bond,
			      const char *extra, const char *needle,
			      const char *msg)
{
	char y[1024];
	struct load l;

	snprintf(y, sizeof(y),
		 "dataplane:\n"
		 "  ports:\n"
		 "    - name: ext\n"
		 "      device: %s\n"
		 "      address: 10.0.0.1\n"
		 "%s"
		 "    - {name: other, device: net_null0, address: 10.1.0.1}\n"
		 "%s"
		 TAIL, device, bond, extra);
	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, needle, msg);
	unload(&l);
}

static void test_errors(void **state)
{
	(void)state;
	expect_port_error("net_af_packet9",
			  "      bond: {members: [net_af_packet0, net_af_packet1]}\n",
			  "", "net_af_packet9",
			  "port 'ext' has a bond, so its device is the bonded device maglevd creates: name it net_bonding<something>");
	expect_port_error("net_bonding0",
			  "      bond: {members: [net_af_packet0]}\n", "",
			  "[net_af_packet0]", "a bond needs two members or more, got 1");
	expect_port_error("net_bonding0",
			  "      bond: {members: [net_af_packet0, net_af_packet0]}\n",
			  "", "net_af_packet0]", "bond member 'net_af_packet0' is listed twice");
	expect_port_error("net_bonding0",
			  "      bond: {members: [net_af_packet0, net_bonding7]}\n",
			  "", "net_bonding7", "bond member 'net_bonding7' is a bonded device");
	expect_port_error("net_bonding0",
			  "      bond: {members: [net_af_packet0, net_null0]}\n",
			  "", "{members",
			  "bond member 'net_null0' of port 'ext' is also the device of port 'other'");
	expect_port_error("net_bonding0", "", "", "net_bonding0",
			  "device 'net_bonding0' is a bonded device; describe it with a bond: mapping");
	expect_port_error("net_bonding0",
			  "      bond: {members: [a, b], mode: balance-rr}\n", "",
			  "balance-rr", "invalid mode 'balance-rr' (expected active-backup or 802.3ad)");
	expect_port_error("net_bonding0",
			  "      bond: {members: [a, b], link_monitor: 5ms}\n", "",
			  "5ms", "link_monitor");
	expect_port_error("net_bonding0", "      bond: {mode: 802.3ad}\n", "",
			  "{mode", "members");
	expect_port_error("net_bonding0",
			  "      bond: {members: [a, b, c, d, e, f, g, h, i]}\n", "",
			  "[a, b", "too many entries in 'members' (9; at most 8)");
}

/* A device can be a member of one bond only. */
static void test_member_of_two_bonds(void **state)
{
	static const char y[] =
		"dataplane:\n"
		"  ports:\n"
		"    - {name: a, device: net_bonding0, address: 10.0.0.1,\n"
		"       bond: {members: [m0, m1]}}\n"
		"    - {name: b, device: net_bonding1, address: 10.1.0.1,\n"
		"       bond: {members: [m2, m1]}}\n"
		TAIL;
	struct load l;
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	expect_diag(&l, MLV_DIAG_ERROR, y, "{members", 1,
		    "bond member 'm1' of port 'b' is already a member of port 'a'");
	unload(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_member_of_two_bonds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
