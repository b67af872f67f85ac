/* SPDX-License-Identifier: BSD-3-Clause */
/* A port's 802.1Q VLAN (`vlan:`): unset by default, 1..4094 taken, the
 * errors at their line:col for IDs out of range and values that are no
 * integer, and several ports on one device as its VLANs. */
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

static void test_values(void **state)
{
	static const char y[] =
		"dataplane:\n"
		"  ports:\n"
		"    - {name: a, device: d0, address: 10.0.0.1, vlan: 100}\n"
		"    - {name: b, device: d1, address: 10.1.0.1, vlan: 1}\n"
		"    - {name: c, device: d2, address: 10.2.0.1, vlan: 4094}\n"
		"    - {name: u, device: d3, address: 10.3.0.1}\n"
		TAIL;
	struct load l;
	(void)state;

	load(&l, y);
	expect_ok(&l);
	assert_int_equal(mlv_config_port(l.cfg, "a")->vlan, 100);
	assert_int_equal(mlv_config_port(l.cfg, "b")->vlan, 1);
	assert_int_equal(mlv_config_port(l.cfg, "c")->vlan, 4094);
	assert_int_equal(mlv_config_port(l.cfg, "u")->vlan, 0);
	unload(&l);
}

static void expect_vlan_error(const char *value, const char *msg)
{
	char y[512];
	struct load l;

	snprintf(y, sizeof(y),
		 "dataplane:\n"
		 "  ports:\n"
		 "    - {name: a, device: d0, address: 10.0.0.1, vlan: %s}\n"
		 TAIL, value);
	struct mlv_src_pos pos;

	load(&l, y);
	expect_rejected(&l);
	pos = pos_of(y, "vlan: ", 0);
	pos.col += (uint32_t)strlen("vlan: ");
	if (find_diag(&l, MLV_DIAG_ERROR, pos, msg) == NULL) {
		dump(&l);
		fail_msg("no error at %u:%u containing \"%s\"", pos.line,
			 pos.col, msg);
	}
	unload(&l);
}

static void test_errors(void **state)
{
	(void)state;
	expect_vlan_error("0", "'vlan' is 0; it must be between 1 and 4094");
	expect_vlan_error("4095", "'vlan' is 4095; it must be between 1 and 4094");
	expect_vlan_error("ten", "'vlan'");
	expect_vlan_error("[100]", "'vlan' must be");
}

/* One device, several ports: taken as different VLANs of it (a trunk:
 * clients on one, backends on another); refused with one VLAN twice, with
 * a port of it untagged, or on a bond. */
static void test_one_device_several_vlans(void **state)
{
	static const char ok[] =
		"dataplane:\n"
		"  ports:\n"
		"    - {name: a, device: d0, address: 10.0.0.1, vlan: 10, tx_port: b}\n"
		"    - {name: b, device: d0, address: 10.1.0.1, vlan: 20}\n"
		"    - {name: c, device: d0, address: 10.2.0.1, vlan: 30}\n"
		TAIL;
	static const char same[] =
		"dataplane:\n"
		"  ports:\n"
		"    - {name: a, device: d0, address: 10.0.0.1, vlan: 10}\n"
		"    - {name: b, device: d0, address: 10.1.0.1, vlan: 10}\n"
		TAIL;
	static const char untagged[] =
		"dataplane:\n"
		"  ports:\n"
		"    - {name: a, device: d0, address: 10.0.0.1, vlan: 10}\n"
		"    - {name: b, device: d0, address: 10.1.0.1}\n"
		TAIL;
	static const char bond[] =
		"dataplane:\n"
		"  ports:\n"
		"    - {name: a, device: net_bonding0, address: 10.0.0.1, vlan: 10,\n"
		"       bond: {members: [m0, m1]}}\n"
		"    - {name: b, device: net_bonding0, address: 10.1.0.1, vlan: 20,\n"
		"       bond: {members: [m2, m3]}}\n"
		TAIL;
	struct load l;
	(void)state;

	load(&l, ok);
	expect_ok(&l);
	assert_int_equal(mlv_config_port(l.cfg, "a")->vlan, 10);
	assert_int_equal(mlv_config_port(l.cfg, "c")->vlan, 30);
	unload(&l);

	load(&l, same);
	expect_rejected(&l);
	expect_diag(&l, MLV_DIAG_ERROR, same, "10}", 1,
		    "ports 'a' and 'b' are both VLAN 10 of device 'd0'");
	unload(&l);

	load(&l, untagged);
	expect_rejected(&l);
	expect_diag(&l, MLV_DIAG_ERROR, untagged, "d0", 1,
		    "device 'd0' is already used by port 'a' (ports share a device only as different VLANs of it");
	unload(&l);

	load(&l, bond);
	expect_rejected(&l);
	expect_diag(&l, MLV_DIAG_ERROR, bond, "net_bonding0", 1,
		    "device 'net_bonding0' is already used by port 'a'");
	unload(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_one_device_several_vlans),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
