/* SPDX-License-Identifier: BSD-3-Clause */
/* Restart-only settings on reload (daemon/runtime/restart_only.c): changes are
 * reported, and the running values are kept. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "control/config/config.h"
#include "daemon/runtime/restart_only.h"
#include "tests/support/config_load.h"

static struct mlv_config *load_control(uint32_t workers, const char *device,
				       uint32_t entries, uint32_t vip_port,
				       const char *control)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "dataplane:\n"
		 "  eal_args: [--in-memory, --no-pci]\n"
		 "  workers: %u\n"
		 "  ports:\n"
		 "    - {name: ext, device: %s, address: 10.99.0.1, "
		 "next_hop: \"02:00:00:00:00:01\"}\n"
		 "  conntrack: {entries_per_worker: %u}\n"
		 "%s"
		 "vips:\n"
		 "  - name: web\n"
		 "    address: 192.0.2.10\n"
		 "    port: %u\n"
		 "    protocol: tcp\n"
		 "    health: {type: none}\n"
		 "    backends:\n"
		 "      - {name: b1, address: 10.99.1.11}\n",
		 workers, device, entries, control, vip_port);
	return config_load_ok(text, strlen(text));
}

static struct mlv_config *load(uint32_t workers, const char *device,
			       uint32_t entries, uint32_t vip_port)
{
	return load_control(workers, device, entries, vip_port, "");
}

struct seen {
	int n;
	char last[512];
};

static void collect(const char *message, void *ctx)
{
	struct seen *s = ctx;

	s->n++;
	snprintf(s->last, sizeof(s->last), "%s", message);
}

static void test_same_dataplane_no_changes(void **state)
{
	struct mlv_config *a = load(1, "net_null0", 4096, 80);
	struct mlv_config *b = load(1, "net_null0", 4096, 8080);   /* VIP only */
	struct seen s = { 0 };

	(void)state;
	assert_int_equal(mlv_restart_only_changes(a, b, collect, &s), 0);
	assert_int_equal(s.n, 0);
	mlv_config_free(a);
	mlv_config_free(b);
}

static void test_each_change_reported(void **state)
{
	struct mlv_config *a = load(1, "net_null0", 4096, 80);
	struct mlv_config *b = load(2, "net_null1", 8192, 80);
	struct seen s = { 0 };

	(void)state;
	assert_int_equal(mlv_restart_only_changes(a, b, collect, &s), 3);
	assert_int_equal(s.n, 3);
	assert_non_null(strstr(s.last, "conntrack"));
	mlv_config_free(a);
	mlv_config_free(b);
}

/* A bond's members, mode, MAC and link_monitor are restart-only: each
 * change is reported once (the ports), the same bond none. */
static void test_bond_changes_reported(void **state)
{
	static const char *const bonds[] = {
		"net_bonding0, bond: {members: [m0, m1]}",
		"net_bonding0, bond: {members: [m0, m2]}",
		"net_bonding0, bond: {members: [m1, m0]}",
		"net_bonding0, bond: {members: [m0, m1], mode: 802.3ad}",
		"net_bonding0, bond: {members: [m0, m1], mac: \"02:00:00:00:00:09\"}",
		"net_bonding0, bond: {members: [m0, m1], link_monitor: 200ms}",
	};
	struct mlv_config *a = load(1, bonds[0], 4096, 80);
	struct mlv_config *same = load(1, bonds[0], 4096, 8080);

	(void)state;
	assert_true(a->ports[0].bond.enabled);
	assert_int_equal(mlv_restart_only_changes(a, same, NULL, NULL), 0);
	for (size_t i = 1; i < sizeof(bonds) / sizeof(bonds[0]); i++) {
		struct mlv_config *b = load(1, bonds[i], 4096, 80);
		struct seen s = { 0 };

		assert_int_equal(mlv_restart_only_changes(a, b, collect, &s), 1);
		assert_non_null(strstr(s.last, "port"));
		mlv_config_free(b);
	}
	mlv_config_free(a);
	mlv_config_free(same);
}

static void test_keep_running_values(void **state)
{
	struct mlv_config *running = load(1, "net_null0", 4096, 80);
	struct mlv_config *next = load(2, "net_null1", 8192, 8080);

	(void)state;
	mlv_restart_only_keep(running, next);
	/* next now runs with the old data plane and its own VIPs */
	assert_int_equal(next->workers, 1);
	assert_string_equal(next->ports[0].device, "net_null0");
	assert_int_equal(next->conntrack.entries_per_worker, 4096);
	assert_int_equal(next->vips[0].port, 8080);
	assert_int_equal(mlv_restart_only_changes(running, next, NULL, NULL), 3);
	/* and a second swap restores both (a rejected reload) */
	mlv_restart_only_keep(running, next);
	assert_int_equal(running->workers, 1);
	assert_string_equal(running->ports[0].device, "net_null0");
	assert_int_equal(next->workers, 2);
	mlv_config_free(running);
	mlv_config_free(next);
}

static void test_control_section(void **state)
{
	struct mlv_config *running = load_control(1, "net_null0", 4096, 80,
		"control: {socket: /run/a.sock, socket_mode: \"0600\", "
		"metrics_listen: \"127.0.0.1:9001\"}\n");
	struct mlv_config *next = load_control(1, "net_null0", 4096, 80,
		"control: {socket: /run/b.sock, socket_mode: \"0660\", "
		"metrics_listen: \"\", metrics_timeout: 2s, "
		"metrics_backend_series: false}\n");
	struct seen s = { 0 };

	(void)state;
	assert_int_equal(mlv_restart_only_changes(running, next, collect, &s), 5);
	assert_non_null(strstr(s.last, "timeout 5000 -> 2000 ms"));
	mlv_restart_only_keep(running, next);
	/* the sockets in use stay what the daemon runs */
	assert_string_equal(next->control_socket, "/run/a.sock");
	assert_int_equal(next->control_socket_mode, 0600);
	assert_string_equal(next->metrics_listen, "127.0.0.1:9001");
	assert_int_equal(next->metrics_limits.timeout_ms, 5000);
	assert_true(next->metrics_backend_series);
	assert_false(running->metrics_backend_series);
	assert_string_equal(running->control_socket, "/run/b.sock");
	assert_int_equal(mlv_restart_only_changes(next, next, NULL, NULL), 0);
	mlv_config_free(running);
	mlv_config_free(next);
}

/* The groups, the state file and the reload budget are fixed at start:
 * a file that loosens its own budget still meets the running one. */
static void test_groups_state_budget(void **state)
{
	struct mlv_config *running = load_control(1, "net_null0", 4096, 80,
		"control: {admin_group: root, state_file: /run/a.state, "
		"reload_budget: {vips_removed: 25}}\n");
	struct mlv_config *next = load_control(1, "net_null0", 4096, 80,
		"control: {admin_group: \"0\", state_file: /run/b.state, "
		"reload_budget: {vips_removed: 100, backends_lost: 100}}\n");
	struct seen s = { 0 };

	(void)state;
	assert_int_equal(mlv_restart_only_changes(running, next, collect, &s), 3);
	assert_non_null(strstr(s.last, "control.reload_budget: vips_removed 25 "
				       "-> 100, backends_lost 50 -> 100"));
	mlv_restart_only_keep(running, next);
	assert_string_equal(next->admin_group, "root");
	assert_string_equal(next->state_file, "/run/a.state");
	assert_int_equal(next->reload_budget.max_vips_removed_pct, 25);
	assert_int_equal(next->reload_budget.max_backends_lost_pct, 50);
	assert_int_equal(running->reload_budget.max_vips_removed_pct, 100);
	assert_int_equal(mlv_restart_only_changes(next, next, NULL, NULL), 0);
	mlv_config_free(running);
	mlv_config_free(next);
}

/* The table build threads start once: a reload that changes them warns
 * and keeps the running ones. */
static void test_build_threads(void **state)
{
	struct mlv_config *running = load_control(1, "net_null0", 4096, 80, "");
	struct mlv_config *next = load_control(1, "net_null0", 4096, 80,
		"control: {build_threads: 2, build_cpus: \"0-1\"}\n");
	struct seen s = { 0 };

	(void)state;
	assert_int_equal(mlv_restart_only_changes(running, next, collect, &s), 2);
	assert_non_null(strstr(s.last, "control.build_cpus"));
	mlv_restart_only_keep(running, next);
	assert_int_equal(next->build_threads, 1);
	assert_string_equal(next->build_cpus, "");
	assert_int_equal(running->build_threads, 2);
	assert_int_equal(mlv_restart_only_changes(next, next, NULL, NULL), 0);
	mlv_config_free(running);
	mlv_config_free(next);
}

/* The pools are created at start: a reload that resizes them warns and
 * keeps the running sizes. */
static void test_pool_settings(void **state)
{
	/* load_control's text follows the conntrack line: these stay in the
	 * dataplane mapping */
	struct mlv_config *running = load_control(1, "net_null0", 4096, 80, "");
	struct mlv_config *next = load_control(1, "net_null0", 4096, 80,
		"  mbufs: 100000\n  mbuf_size: 4096\n");
	struct seen s = { 0 };

	(void)state;
	assert_int_equal(next->mbufs, 100000);
	assert_int_equal(mlv_restart_only_changes(running, next, collect, &s), 2);
	assert_non_null(strstr(s.last, "dataplane.mbuf_size: 0 -> 4096"));
	mlv_restart_only_keep(running, next);
	assert_int_equal(next->mbufs, 0);
	assert_int_equal(next->mbuf_size, 0);
	assert_int_equal(running->mbufs, 100000);
	assert_int_equal(mlv_restart_only_changes(next, next, NULL, NULL), 0);
	mlv_config_free(running);
	mlv_config_free(next);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_dataplane_no_changes),
		cmocka_unit_test(test_each_change_reported),
		cmocka_unit_test(test_bond_changes_reported),
		cmocka_unit_test(test_keep_running_values),
		cmocka_unit_test(test_control_section),
		cmocka_unit_test(test_groups_state_budget),
		cmocka_unit_test(test_build_threads),
		cmocka_unit_test(test_pool_settings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
