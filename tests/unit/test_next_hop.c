/* next_hop: auto (daemon/next_hop.c, daemon/rtnl.c): which ports must
 * resolve a next hop, the refusal for ports without a kernel interface,
 * an inactive resolver, and rtnetlink look-ups that need no network of
 * their own (a local address has no next hop; loopback has no
 * neighbours). Resolution on a real link is tested by the daemon-
 * next-hop-auto case in network namespaces. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "control/config.h"
#include "daemon/next_hop.h"
#include "daemon/rtnl.h"

static struct mlv_config *load(const char *ports, const char *forwarding)
{
	char text[2048];
	struct mlv_config *cfg = NULL;
	struct mlv_diags diags;

	snprintf(text, sizeof(text),
		 "dataplane:\n  ports:\n%s"
		 "vips:\n"
		 "  - {name: web, address: 192.0.2.10, port: 80, protocol: tcp,"
		 " forwarding: %s, health: {type: none}, backends:"
		 " [{name: b1, address: 10.99.1.11, mac: \"02:00:00:00:01:11\"}]}\n",
		 ports, forwarding);
	mlv_diags_init(&diags);
	if (mlv_config_load_buffer("t.yaml", text, strlen(text), &cfg, &diags))
		mlv_diags_print(&diags, stderr);
	mlv_diags_free(&diags);
	assert_non_null(cfg);
	return cfg;
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
		cmocka_unit_test(test_rtnl_local),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
