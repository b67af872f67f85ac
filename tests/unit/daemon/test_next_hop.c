/* SPDX-License-Identifier: BSD-3-Clause */
/* next_hop: auto (daemon/netlink/next_hop.c, daemon/netlink/rtnl.c): which ports must
 * resolve a next hop, the refusal for ports without a kernel interface,
 * an inactive resolver, and rtnetlink look-ups that need no network of
 * their own (a local address has no next hop; loopback has no
 * neighbours); and which l2dsr backends are resolved and kept across a
 * reload. Resolution on a real link is tested by the daemon-
 * next-hop-auto case in network namespaces. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "control/config/config.h"
#include "daemon/netlink/next_hop.h"
#include "daemon/netlink/rtnl.h"
#include "tests/support/config_load.h"

static struct mlv_config *load(const char *ports, const char *forwarding)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "dataplane:\n  ports:\n%s"
		 "vips:\n"
		 "  - {name: web, address: 192.0.2.10, port: 80, protocol: tcp,"
		 " forwarding: %s, health: {type: none}, backends:"
		 " [{name: b1, address: 10.99.1.11, mac: \"02:00:00:00:01:11\"}]}\n",
		 ports, forwarding);
	return config_load_ok(text, strlen(text));
}

#define AUTO(name, extra) "    - {name: " name ", device: d_" name \
	", address: 10.99.0.1, next_hop: auto" extra "}\n"
#define FIXED(name, extra) "    - {name: " name ", device: d_" name \
	", address: 10.99.0.2, next_hop: \"02:00:00:00:00:01\"" extra "}\n"

static void test_wanted_and_check(void **state)
{
	struct mlv_config *cfg;
	bool wanted[MLV_MAX_PORTS];
	int none[MLV_MAX_PORTS] = {0}, kernel[MLV_MAX_PORTS] = {3, 4};
	char err[512] = "";

	(void)state;
	cfg = load(AUTO("ext", ""), "ipip");
	assert_int_equal(mlv_next_hop_wanted(cfg, wanted), 1);
	assert_true(wanted[0]);
	assert_int_equal(mlv_next_hop_check(cfg, none, err, sizeof(err)),
			 MLV_E_CONFIG);
	assert_non_null(strstr(err, "port ext"));
	assert_non_null(strstr(err, "kernel interface"));
	assert_non_null(strstr(err, "d_ext"));
	assert_int_equal(mlv_next_hop_check(cfg, kernel, err, sizeof(err)),
			 MLV_OK);
	mlv_config_free(cfg);

	/* l2dsr uses backend MACs: no next hop needed anywhere */
	cfg = load(AUTO("ext", ""), "l2dsr");
	assert_int_equal(mlv_next_hop_wanted(cfg, wanted), 0);
	assert_int_equal(mlv_next_hop_check(cfg, none, err, sizeof(err)), MLV_OK);
	mlv_config_free(cfg);

	/* two-arm: only the transmitting port matters */
	cfg = load(AUTO("ext", ", tx_port: int") FIXED("int", ""), "gue");
	assert_int_equal(mlv_next_hop_wanted(cfg, wanted), 0);
	assert_int_equal(mlv_next_hop_check(cfg, none, err, sizeof(err)), MLV_OK);
	mlv_config_free(cfg);
	cfg = load(FIXED("ext", ", tx_port: int") AUTO("int", ""), "gue");
	assert_int_equal(mlv_next_hop_wanted(cfg, wanted), 1);
	assert_false(wanted[0]);
	assert_true(wanted[1]);
	mlv_config_free(cfg);
}

static struct mlv_config *load_text(const char *text)
{

	return config_load_ok(text, strlen(text));
}

#define L2DSR_PORTS \
	"dataplane:\n  ports:\n" \
	"    - {name: in, device: d_in, address: 10.99.0.1, tx_port: out}\n" \
	"    - {name: out, device: net_tap0, address: 10.99.0.2}\n" \
	"vips:\n"
#define L2DSR_VIP(name, port, backends) \
	"  - {name: " name ", address: 192.0.2.10, port: " port ", protocol: tcp," \
	" forwarding: l2dsr, health: {type: none}, backends: [" backends "]}\n"

/* Which l2dsr backends are resolved, on which interface, and that a
 * reload keeps what was already known of an address that stays. */
static void test_l2dsr_backends(void **state)
{
	struct mlv_config *cfg = load_text(L2DSR_PORTS
		L2DSR_VIP("a", "80", "{name: x, address: 10.99.1.12},"
			  " {name: y, address: 10.99.1.11},"
			  " {name: m, address: 10.99.1.13, mac: \"02:00:00:00:01:13\"}")
		L2DSR_VIP("b", "81", "{name: y, address: 10.99.1.11}"));
	struct mlv_config *cfg2 = load_text(L2DSR_PORTS
		L2DSR_VIP("a", "80", "{name: y, address: 10.99.1.11},"
			  " {name: z, address: 10.99.1.14}"));
	static const uint8_t seen[6] = { 2, 0, 0, 0, 1, 0x11 };
	int ifindex[MLV_MAX_PORTS] = {7, 1};   /* "out" is lo */
	struct mlv_next_hops nh;
	struct mlv_ip y, x, z;
	uint8_t mac[6];

	(void)state;
	assert_true(mlv_ip_parse("10.99.1.11", &y));
	assert_true(mlv_ip_parse("10.99.1.12", &x));
	assert_true(mlv_ip_parse("10.99.1.14", &z));
	assert_int_equal(mlv_next_hops_init(&nh, cfg, ifindex), MLV_OK);
	assert_true(nh.active);
	/* distinct addresses without 'mac', on the transmitting port */
	assert_int_equal(nh.n_backends, 2);
	assert_int_equal(nh.backends[0].ifindex, 1);
	assert_int_equal(nh.backends[1].ifindex, 1);
	assert_false(mlv_next_hops_backend_mac(&nh, &y, mac));
	assert_false(mlv_next_hops_all_resolved(&nh));

	/* as if the neighbour table had answered for y */
	for (size_t i = 0; i < nh.n_backends; i++)
		if (mlv_ip_equal(&nh.backends[i].addr, &y)) {
			nh.backends[i].resolved = true;
			memcpy(nh.backends[i].mac, seen, 6);
		}
	assert_true(mlv_next_hops_backend_mac(&nh, &y, mac));
	assert_memory_equal(mac, seen, 6);
	assert_false(mlv_next_hops_backend_mac(&nh, &x, mac));

	/* reload: y stays and keeps its MAC, x leaves, z is new */
	assert_int_equal(mlv_next_hops_reconfigure(&nh, cfg2), MLV_OK);
	assert_int_equal(nh.n_backends, 2);
	memset(mac, 0, sizeof(mac));
	assert_true(mlv_next_hops_backend_mac(&nh, &y, mac));
	assert_memory_equal(mac, seen, 6);
	assert_false(mlv_next_hops_backend_mac(&nh, &z, mac));
	assert_false(mlv_next_hops_all_resolved(&nh));
	mlv_next_hops_free(&nh);
	assert_int_equal(nh.n_backends, 0);
	mlv_config_free(cfg2);
	mlv_config_free(cfg);
}

static void test_inactive(void **state)
{
	struct mlv_config *cfg = load(FIXED("ext", ""), "ipip");
	struct mlv_gen_port_info info[MLV_MAX_PORTS];
	int none[MLV_MAX_PORTS] = {0};
	struct mlv_next_hops nh;

	(void)state;
	memset(info, 0, sizeof(info));
	assert_int_equal(mlv_next_hops_init(&nh, cfg, none), MLV_OK);
	assert_false(nh.active);
	assert_int_equal(mlv_next_hops_fd(&nh), -1);
	assert_false(mlv_next_hops_update(&nh, cfg, info, true));
	assert_true(mlv_next_hops_all_resolved(&nh));
	assert_true(mlv_next_hops_wait(&nh, cfg, info, 10));
	mlv_next_hops_free(&nh);
	mlv_config_free(cfg);
}

static void test_rtnl_local(void **state)
{
	struct mlv_rtnl nl;
	struct mlv_ip lo, via;
	uint8_t mac[6];
	bool valid = true;
	int dev = 0;

	(void)state;
	assert_int_equal(mlv_rtnl_open(&nl), MLV_OK);
	assert_true(mlv_rtnl_monitor_fd(&nl) >= 0);
	assert_true(mlv_ip_parse("127.0.0.1", &lo));
	/* a local address is not sent anywhere: no next hop */
	assert_int_equal(mlv_rtnl_route(&nl, &lo, 0, &via, &dev),
			 MLV_E_NOT_FOUND);
	/* loopback (ifindex 1) has no neighbour table entries */
	assert_int_equal(mlv_rtnl_neigh(&nl, 1, &lo, mac, &valid), MLV_OK);
	assert_false(valid);
	mlv_rtnl_close(&nl);
	mlv_rtnl_close(&nl);   /* idempotent */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wanted_and_check),
		cmocka_unit_test(test_inactive),
		cmocka_unit_test(test_l2dsr_backends),
		cmocka_unit_test(test_rtnl_local),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
