/* SPDX-License-Identifier: BSD-3-Clause */
/* A port's NIC counters as JSON (control/ctl/port_stats.h): the link and,
 * for a bonded port, each member, as `stats --ports` and the stats file
 * carry them; a plain port has no "members". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "control/ctl/port_stats.h"

static void test_bonded_port(void **state)
{
	struct mlv_port_stats p = {
		.name = "ext", .device = "net_bonding0", .ok = true,
		.link = MLV_PORT_LINK_UP, .n_members = 2,
		.members = {
			{ .device = "net_af_packet0", .up = false, .active = false,
			  .rx_packets = 11, .tx_packets = 12, .rx_errors = 13,
			  .tx_errors = 14 },
			{ .device = "net_af_packet1", .up = true, .active = true,
			  .rx_packets = 21, .tx_packets = 22, .rx_errors = 0,
			  .tx_errors = 24 },
		},
	};
	json_t *o, *m;
	(void)state;

	p.v[MLV_PORT_CTR_RX_PACKETS] = 32;
	o = mlv_port_stats_json(&p, false);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(o, "link")), "up");
	assert_int_equal(json_integer_value(json_object_get(
		json_object_get(o, "counters"), "rx_packets")), 32);
	m = json_object_get(o, "members");
	assert_int_equal(json_array_size(m), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(m, 0),
							      "device")), "net_af_packet0");
	assert_string_equal(json_string_value(json_object_get(json_array_get(m, 0),
							      "link")), "down");
	assert_true(json_is_false(json_object_get(json_array_get(m, 0), "active")));
	assert_int_equal(json_integer_value(json_object_get(json_array_get(m, 0),
							    "rx_errors")), 13);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(m, 0),
							    "tx_errors")), 14);
	assert_string_equal(json_string_value(json_object_get(json_array_get(m, 1),
							      "link")), "up");
	assert_true(json_is_true(json_object_get(json_array_get(m, 1), "active")));
	assert_int_equal(json_integer_value(json_object_get(json_array_get(m, 1),
							    "tx_packets")), 22);
	json_decref(o);
}

static void test_plain_port(void **state)
{
	struct mlv_port_stats p = { .name = "int", .device = "net_null0",
				    .ok = true, .link = MLV_PORT_LINK_DOWN };
	struct mlv_port_stats q = { .name = "pcap", .device = "net_pcap0" };
	json_t *o;
	(void)state;

	o = mlv_port_stats_json(&p, false);
	assert_string_equal(json_string_value(json_object_get(o, "link")), "down");
	assert_null(json_object_get(o, "members"));
	json_decref(o);
	/* a PMD that reports no link: null, not a guess */
	o = mlv_port_stats_json(&q, false);
	assert_true(json_is_null(json_object_get(o, "link")));
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bonded_port),
		cmocka_unit_test(test_plain_port),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
