/* SPDX-License-Identifier: BSD-3-Clause */
/* Port planning (dataplane/ports/plan.c): transmit ports, the exception
 * port, which ports resolve next_hop: auto, and mbuf pool sizing. Configs come
 * through the real loader. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "control/config/config.h"
#include "dataplane/ports/plan.h"
#include "tests/support/config_load.h"

/* ports_yaml: the list under dataplane.ports; forwarding: of the VIP. */
static struct mlv_config *load(const char *ports_yaml, const char *forwarding)
{
	char text[4096];

	snprintf(text, sizeof(text),
		 "dataplane:\n"
		 "  workers: 1\n"
		 "  ports:\n%s"
		 "vips:\n"
		 "  - name: web\n"
		 "    address: 192.0.2.10\n"
		 "    port: 80\n"
		 "    protocol: tcp\n"
		 "    forwarding: %s\n"
		 "    health: {type: none}\n"
		 "    backends:\n"
		 "      - {name: b1, address: 10.99.1.11, mac: \"02:00:00:00:01:11\"}\n",
		 ports_yaml, forwarding);
	return config_load_ok(text, strlen(text));
}

#define PORT(name, extra) \
	"    - {name: " name ", device: dev_" name ", address: 10.99.0.1, " \
	"next_hop: \"02:00:00:00:00:01\"" extra "}\n"

static void test_one_arm(void **state)
{
	struct mlv_config *cfg = load(PORT("a", "") PORT("b", ""), "ipip");
	struct mlv_port_plan plan;
	char why[256];

	(void)state;
	assert_int_equal(mlv_port_plan_make(cfg, &plan, why, sizeof(why)), MLV_OK);
	assert_int_equal(plan.n_ports, 2);
	assert_int_equal(plan.tx_of[0], 0);
	assert_int_equal(plan.tx_of[1], 1);
	assert_true(plan.transmits[0] && plan.transmits[1]);
	assert_int_equal(plan.exception, MLV_PORT_NONE);
	mlv_config_free(cfg);
}

static void test_two_arm(void **state)
{
	struct mlv_config *cfg =
		load(PORT("ext", ", tx_port: int") PORT("int", ""), "ipip");
	struct mlv_port_plan plan;
	char why[256];

	(void)state;
	assert_int_equal(mlv_port_plan_make(cfg, &plan, why, sizeof(why)), MLV_OK);
	assert_int_equal(plan.tx_of[0], 1);
	assert_int_equal(plan.tx_of[1], 1);
	assert_false(plan.transmits[0]);
	assert_true(plan.transmits[1]);
	mlv_config_free(cfg);
}

static void test_exception_port(void **state)
{
	struct mlv_config *cfg =
		load(PORT("kern", ", exception: true") PORT("ext", ""), "ipip");
	struct mlv_port_plan plan;
	char why[256];

	(void)state;
	assert_int_equal(mlv_port_plan_make(cfg, &plan, why, sizeof(why)), MLV_OK);
	assert_int_equal(plan.exception, 0);
	/* the kernel's own frames leave by the first other port */
	assert_int_equal(plan.exception_out, 1);
	mlv_config_free(cfg);
}

/* The loader already refuses two exception ports; the plan does not rely
 * on that (a model built some other way gets the same answer). */
static void test_two_exception_ports_refused(void **state)
{
	struct mlv_config *cfg = load(PORT("a", ", exception: true")
				      PORT("b", ""), "ipip");
	struct mlv_port_plan plan;
	char why[256];

	(void)state;
	cfg->ports[1].exception = true;
	assert_int_equal(mlv_port_plan_make(cfg, &plan, why, sizeof(why)),
			 MLV_E_CONFIG);
	assert_non_null(strstr(why, "exception"));
	mlv_config_free(cfg);
}

#define AUTO_PORT(name, extra) \
	"    - {name: " name ", device: dev_" name ", address: 10.99.0.1, " \
	"next_hop: auto" extra "}\n"

static void test_next_hop_auto(void **state)
{
	struct mlv_port_plan plan;
	struct mlv_config *cfg;
	char why[512];

	(void)state;
	/* to be resolved where ipip/gue packets leave ... */
	cfg = load(AUTO_PORT("ext", ""), "gue");
	assert_int_equal(mlv_port_plan_make(cfg, &plan, why, sizeof(why)), MLV_OK);
	assert_true(plan.auto_next_hop[0]);
	mlv_config_free(cfg);

	/* ... not when only L2 DSR VIPs exist (they use backend MACs) */
	cfg = load(AUTO_PORT("ext", ""), "l2dsr");
	assert_int_equal(mlv_port_plan_make(cfg, &plan, why, sizeof(why)), MLV_OK);
	assert_false(plan.auto_next_hop[0]);
	mlv_config_free(cfg);

	/* ... nor on a port that never transmits (two-arm receive side),
	 * nor on one with a fixed MAC */
	cfg = load(AUTO_PORT("ext", ", tx_port: int") PORT("int", ""), "ipip");
	assert_int_equal(mlv_port_plan_make(cfg, &plan, why, sizeof(why)), MLV_OK);
	assert_false(plan.auto_next_hop[0]);
	assert_false(plan.auto_next_hop[1]);
	mlv_config_free(cfg);

	/* the transmitting side of a two-arm pair with auto is resolved */
	cfg = load(PORT("ext", ", tx_port: int") AUTO_PORT("int", ""), "ipip");
	assert_int_equal(mlv_port_plan_make(cfg, &plan, why, sizeof(why)), MLV_OK);
	assert_false(plan.auto_next_hop[0]);
	assert_true(plan.auto_next_hop[1]);
	mlv_config_free(cfg);
}

static void test_mbufs(void **state)
{
	uint32_t n;

	(void)state;
	/* 2 ports x 1 worker: 2048 rx + 2048 tx + 32 x 3 + 256 x 2 = 4704 */
	n = mlv_port_plan_mbufs(2048, 2048, 1, 2, 32, 256, 2);
	assert_int_equal(n, 8191);
	/* exactly 2^k - 1 needed stays 2^k - 1 */
	assert_int_equal(mlv_port_plan_mbufs(4095, 0, 0, 0, 32, 0, 0), 4095);
	assert_int_equal(mlv_port_plan_mbufs(4096, 0, 0, 0, 32, 0, 0), 8191);
	assert_int_equal(mlv_port_plan_mbufs(UINT32_MAX, UINT32_MAX, 0, 0, 0, 0, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_arm),
		cmocka_unit_test(test_two_arm),
		cmocka_unit_test(test_exception_port),
		cmocka_unit_test(test_two_exception_ports_refused),
		cmocka_unit_test(test_next_hop_auto),
		cmocka_unit_test(test_mbufs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
