/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the config model: the example config, defaults, every
 * error class at its line:col, hostile inputs, durations, addresses and
 * MACs, and that docs/config.md documents every key of the schema.
 *
 * Expected positions are computed from the fixture text (where the
 * offending token is), never copied from the loader's output. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <netinet/in.h>

#include "control/config/config.h"
#include "control/config/diags.h"
#include "control/config/schema_internal.h"
#include "control/health/health.h"
#include "control/tables/maglev.h"

#ifndef MLV_SOURCE_ROOT
#error "MLV_SOURCE_ROOT must name the source tree"
#endif

#include "tests/support/config_fixture.h"

/* ---- helpers ---- */

static bool any_message(const struct load *l, const char *msg)
{
	uint32_t i;

	for (i = 0; i < l->d.n; i++)
		if (strstr(l->d.items[i].message, msg) != NULL)
			return true;
	return false;
}

static struct mlv_ip ip(const char *text)
{
	struct mlv_ip a;

	assert_true(mlv_ip_parse(text, &a));
	return a;
}

static char *read_source_file(const char *rel)
{
	char path[512];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", MLV_SOURCE_ROOT, rel);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* A valid dataplane section with IPv4 and IPv6 outer addresses. */
/* One port with next_hop nh and more keys (", key: value"). */
#define DP_NH(nh, more)                                                      \
	"dataplane:\n"                                                       \
	"  ports:\n"                                                         \
	"    - {name: ext, device: net_null0, address: 10.0.0.1, "          \
	"address6: fd00::1, next_hop: \"" nh "\"" more "}\n"

#define DP                                                                   \
	"dataplane:\n"                                                       \
	"  ports:\n"                                                         \
	"    - {name: ext, device: net_null0, address: 10.0.0.1, address6: fd00::1}\n"

/* ---- valid configs ---- */

static void test_example_config_loads(void **state)
{
	char path[512];
	struct load l;
	const struct mlv_vip_config *web, *dns;
	struct mlv_mac mac;
	struct mlv_ip a;
	(void)state;

	snprintf(path, sizeof(path), "%s/conf/maglevd.yaml", MLV_SOURCE_ROOT);
	mlv_diags_init(&l.d);
	l.err = mlv_config_load(path, &l.cfg, &l.d);
	expect_ok(&l);
	assert_int_equal(l.d.n, 0);   /* not even a warning */
	assert_string_equal(l.cfg->path, path);

	assert_int_equal(l.cfg->n_eal_args, 3);
	assert_string_equal(l.cfg->eal_args[2], "--vdev=net_af_xdp0,iface=lb0");
	assert_int_equal(l.cfg->n_ports, 1);
	assert_string_equal(l.cfg->ports[0].device, "net_af_xdp0");
	a = ip("10.99.0.1");
	assert_true(mlv_ip_equal(&l.cfg->ports[0].address, &a));
	a = ip("fd00:99::1");
	assert_true(mlv_ip_equal(&l.cfg->ports[0].address6, &a));
	assert_true(l.cfg->ports[0].next_hop_auto);
	assert_int_equal(l.cfg->control_socket_mode, 0660);
	assert_int_equal(l.cfg->conntrack.tcp_timeout_ms, 300000);
	assert_int_equal(l.cfg->default_health.type, MLV_HEALTH_TCP);

	assert_int_equal(l.cfg->n_vips, 2);
	web = mlv_config_vip(l.cfg, "web");
	dns = mlv_config_vip(l.cfg, "dns");
	assert_non_null(web);
	assert_non_null(dns);
	assert_null(mlv_config_vip(l.cfg, "nope"));
	assert_ptr_equal(mlv_config_port(l.cfg, "ext"), &l.cfg->ports[0]);
	assert_null(mlv_config_port(l.cfg, "int"));

	/* web's health overrides type/port/path; the rest is inherited. */
	assert_int_equal(web->protocol, IPPROTO_TCP);
	assert_int_equal(web->health.type, MLV_HEALTH_HTTP);
	assert_int_equal(web->health.port, 8080);
	assert_string_equal(web->health.path, "/healthz");
	assert_int_equal(web->health.interval_ms, 1000);
	assert_int_equal(web->health.timeout_ms, 500);
	assert_int_equal(web->health.rise, 2);
	assert_int_equal(web->health.fall, 3);
	assert_int_equal(web->n_backends, 3);
	assert_string_equal(web->backends[2].name, "web-3");
	assert_int_equal(web->backends[2].weight, 50);
	assert_int_equal(web->backends[2].state, MLV_BACKEND_DRAIN);

	assert_int_equal(dns->protocol, IPPROTO_UDP);
	assert_int_equal(dns->forwarding, MLV_FWD_GUE);
	assert_int_equal(dns->gue_port, 6080);
	assert_int_equal(dns->health.type, MLV_HEALTH_NONE);
	assert_true(dns->backends[0].has_mac);
	assert_true(mlv_mac_parse("02:00:00:00:01:21", &mac));
	assert_memory_equal(&dns->backends[0].mac, &mac, sizeof(mac));
	assert_string_equal(mlv_forwarding_name(dns->forwarding), "gue");
	unload(&l);
}

static void test_minimal_example_loads(void **state)
{
	char path[512];
	struct load l;
	(void)state;

	snprintf(path, sizeof(path), "%s/conf/examples/minimal.yaml", MLV_SOURCE_ROOT);
	mlv_diags_init(&l.d);
	l.err = mlv_config_load(path, &l.cfg, &l.d);
	expect_ok(&l);
	assert_int_equal(l.d.n, 0);
	assert_false(l.cfg->ports[0].next_hop_auto);
	assert_string_equal(l.cfg->metrics_listen, "");
	assert_int_equal(l.cfg->vips[0].n_backends, 2);
	unload(&l);
}

static void test_defaults_applied(void **state)
{
	const char *y =
		"dataplane:\n"
		"  ports:\n"
		"    - {name: p0, device: net_null0, address: 10.0.0.1}\n"
		"vips:\n"
		"  - name: v\n"
		"    address: 192.0.2.1\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    backends:\n"
		"      - {name: b, address: 10.0.0.2}\n";
	struct load l;
	const struct mlv_config *c;
	const struct mlv_vip_config *v;
	(void)state;

	load(&l, y);
	expect_ok(&l);
	c = l.cfg;
	/* The defaults docs/config.md promises. */
	assert_int_equal(c->n_eal_args, 0);
	assert_int_equal(c->workers, 1);
	assert_int_equal(c->idle, MLV_IDLE_ADAPTIVE);
	assert_int_equal(c->idle_max_sleep_us, 100);
	assert_int_equal(c->conntrack.entries_per_worker, 1048576);
	assert_int_equal(c->conntrack.tcp_timeout_ms, 300000);
	assert_int_equal(c->conntrack.tcp_handshake_timeout_ms, 5000);
	assert_int_equal(c->conntrack.tcp_closing_timeout_ms, 10000);
	assert_int_equal(c->conntrack.udp_timeout_ms, 30000);
	assert_int_equal(c->ports[0].mtu, 1500);
	assert_true(c->ports[0].next_hop_auto);
	assert_false(c->ports[0].exception);
	assert_string_equal(c->ports[0].tx_port, "");
	assert_int_equal(c->ports[0].address6.family, MLV_AF_NONE);
	assert_string_equal(c->control_socket, "/run/maglevd/maglevd.sock");
	assert_int_equal(c->control_socket_mode, 0660);
	assert_string_equal(c->metrics_listen, "127.0.0.1:9478");
	assert_int_equal(c->metrics_limits.timeout_ms, 5000);
	assert_int_equal(c->metrics_limits.max_connections, 4096);
	assert_int_equal(c->metrics_limits.max_per_address, 2048);
	assert_int_equal(c->default_table_size, MLV_MAGLEV_DEFAULT_SIZE);
	assert_int_equal(c->default_forwarding, MLV_FWD_IPIP);
	assert_int_equal(c->default_health.type, MLV_HEALTH_NONE);
	assert_int_equal(c->default_health.interval_ms, 1000);
	assert_int_equal(c->default_health.timeout_ms, 500);
	assert_int_equal(c->default_health.rise, 2);
	assert_int_equal(c->default_health.fall, 3);
	assert_int_equal(c->default_health.expect_status, 200);
	assert_int_equal(c->default_health.port, 0);
	assert_string_equal(c->default_health.path, "/");
	assert_string_equal(c->default_health.host, "");

	v = &c->vips[0];
	assert_int_equal(v->forwarding, MLV_FWD_IPIP);
	assert_int_equal(v->table_size, 65537);
	assert_int_equal(v->gue_port, 6080);
	assert_memory_equal(&v->health, &c->default_health, sizeof(v->health));
	assert_int_equal(v->backends[0].weight, 100);
	assert_int_equal(v->backends[0].state, MLV_BACKEND_ACTIVE);
	assert_false(v->backends[0].has_mac);
	/* Positions point at the item in the file. */
	assert_int_equal(v->pos.line, pos_of(y, "name: v", 0).line);
	assert_int_equal(v->pos.col, pos_of(y, "name: v", 0).col);
	assert_int_equal(v->backends[0].pos.line, pos_of(y, "{name: b", 0).line);
	unload(&l);
}

static void test_defaults_section_inherited(void **state)
{
	const char *y = DP
		"defaults:\n"
		"  table_size: 251\n"
		"  forwarding: gue\n"
		"  health: {type: tcp, interval: 2s, timeout: 1s, rise: 5}\n"
		"vips:\n"
		"  - {name: a, address: 192.0.2.1, port: 80, protocol: tcp,\n"
		"     health: {type: http, path: /x}}\n"
		"  - {name: b, address: 192.0.2.1, port: 80, protocol: udp,\n"
		"     forwarding: ipip, table_size: 65537}\n";
	struct load l;
	const struct mlv_vip_config *a, *b;
	(void)state;

	load(&l, y);
	expect_ok(&l);
	a = mlv_config_vip(l.cfg, "a");
	b = mlv_config_vip(l.cfg, "b");
	assert_int_equal(a->forwarding, MLV_FWD_GUE);
	assert_int_equal(a->table_size, 251);
	assert_int_equal(a->health.type, MLV_HEALTH_HTTP);
	assert_string_equal(a->health.path, "/x");
	assert_int_equal(a->health.interval_ms, 2000);
	assert_int_equal(a->health.timeout_ms, 1000);
	assert_int_equal(a->health.rise, 5);
	assert_int_equal(a->health.fall, 3);
	assert_int_equal(b->forwarding, MLV_FWD_IPIP);
	assert_int_equal(b->table_size, 65537);
	assert_int_equal(b->health.type, MLV_HEALTH_TCP);
	unload(&l);
}

static void test_backends_sorted_by_name(void **state)
{
	const char *y = DP
		"vips:\n"
		"  - name: v\n"
		"    address: 192.0.2.1\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    backends:\n"
		"      - {name: b2, address: 10.0.0.12}\n"
		"      - {name: a, address: 10.0.0.10, weight: 7}\n"
		"      - {name: b10, address: 10.0.0.11}\n"
		"      - {name: B, address: 10.0.0.13}\n";
	struct load l;
	const struct mlv_vip_config *v;
	struct mlv_ip a10 = ip("10.0.0.10");
	uint32_t i;
	(void)state;

	load(&l, y);
	expect_ok(&l);
	v = &l.cfg->vips[0];
	assert_int_equal(v->n_backends, 4);
	for (i = 1; i < v->n_backends; i++)
		assert_true(strcmp(v->backends[i - 1].name, v->backends[i].name) < 0);
	/* Each backend moved whole: "a" keeps its own address, weight, pos. */
	for (i = 0; i < v->n_backends; i++) {
		if (strcmp(v->backends[i].name, "a") != 0)
			continue;
		assert_true(mlv_ip_equal(&v->backends[i].address, &a10));
		assert_int_equal(v->backends[i].weight, 7);
		assert_int_equal(v->backends[i].pos.line,
				 pos_of(y, "{name: a,", 0).line);
	}
	unload(&l);
}

static void test_two_arm_and_families_accepted(void **state)
{
	const char *y =
		"dataplane:\n"
		"  ports:\n"
		"    - {name: ext, device: d0, tx_port: int, next_hop: \"02:00:00:00:00:09\"}\n"
		"    - {name: int, device: d1, address: 10.0.0.1, address6: fd00::1, exception: true}\n"
		"vips:\n"
		"  - name: four-in-six\n"           /* IPv4 VIP, IPv6 backend: ipip */
		"    address: 192.0.2.1\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    backends: [{name: b, address: fd00::2}]\n"
		"  - name: six-over-gue\n"          /* gue carries IPv6 to IPv4 */
		"    address: 2001:db8::1\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    forwarding: gue\n"
		"    gue_port: 7000\n"
		"    backends: [{name: b, address: 10.0.0.2}]\n"
		"  - name: dsr\n"
		"    address: 2001:db8::2\n"
		"    port: 53\n"
		"    protocol: udp\n"
		"    forwarding: l2dsr\n"
		"    backends: [{name: b, address: 10.0.0.3, mac: 02-00-00-00-00-0A}]\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_ok(&l);
	assert_false(l.cfg->ports[0].next_hop_auto);
	assert_int_equal(l.cfg->ports[0].next_hop.bytes[5], 9);
	assert_string_equal(l.cfg->ports[0].tx_port, "int");
	assert_true(l.cfg->ports[1].exception);
	assert_int_equal(l.cfg->vips[1].gue_port, 7000);
	assert_int_equal(l.cfg->vips[2].backends[0].mac.bytes[5], 0x0a);
	unload(&l);
}

/* ---- error classes ---- */

static void test_unknown_keys(void **state)
{
	const char *y = DP
		"  wrokers: 2\n"
		"vips:\n"
		"  - name: v\n"
		"    address: 192.0.2.1\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    backnds: []\n"
		"    zzzzzz: 1\n";
	struct load l;
	const struct mlv_diag *d;
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "wrokers", "unknown key 'wrokers' (did you mean 'workers'?)");
	expect_error(&l, y, "backnds", "unknown key 'backnds' (did you mean 'backends'?)");
	d = find_diag(&l, MLV_DIAG_ERROR, pos_of(y, "zzzzzz", 0), "unknown key 'zzzzzz'");
	assert_non_null(d);
	assert_null(strstr(d->message, "did you mean"));
	assert_int_equal(l.d.n_errors, 3);
	unload(&l);
}

/* A typo in a required key is one error, the "did you mean", not also a
 * missing key before it; a required key missing with no typo near it is
 * still reported. */
static void test_typo_in_required_key(void **state)
{
	const char *y = DP
		"vips:\n"
		"  - name: v\n"
		"    adress: 192.0.2.1\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    backends: []\n"
		"  - name: w\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    backends: []\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "adress", "unknown key 'adress' (did you mean 'address'?)");
	expect_error(&l, y, "name: w", "missing required key 'address' in a VIP");
	for (size_t i = 0; i < l.d.n; i++)
		if (strstr(l.d.items[i].message, "missing required key") &&
		    l.d.items[i].pos.line == pos_of(y, "name: v", 0).line)
			fail_msg("also reported missing: %s",
				 l.d.items[i].message);
	assert_int_equal(l.d.n_errors, 2);
	unload(&l);
}

static void test_wrong_types(void **state)
{
	const char *y =
		"dataplane:\n"
		"  workers: [1]\n"
		"  idle: {x: 1}\n"
		"  eal_args: [--in-memory, {a: b}]\n"
		"  conntrack: 5\n"
		"  ports:\n"
		"    - {name: p, device: d, address: 10.0.0.1, exception: yes, mtu: \"1500\"}\n"
		"control: [a]\n"
		"vips:\n"
		"  - just-a-string\n"
		"  - {name: v, address: 192.0.2.1, port: 80, protocol: tcp, backends: {a: 1}}\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "[1]", "'workers' must be an integer, got a list");
	expect_error(&l, y, "{a: b}", "each entry of 'eal_args' must be a string");
	expect_error(&l, y, "5\n", "'conntrack' must be a mapping, got a scalar");
	expect_error(&l, y, "yes", "'exception' must be true or false");
	expect_error(&l, y, "\"1500\"", "'mtu' must be an integer, not a quoted string");
	expect_error(&l, y, "[a]", "'control' must be a mapping, got a list");
	expect_error(&l, y, "just-a-string", "each VIP in 'vips' must be a mapping");
	expect_error(&l, y, "{a: 1}", "'backends' must be a list, got a mapping");
	expect_error(&l, y, "{x: 1}", "'idle' must be poll or adaptive, got a mapping");
	assert_int_equal(l.d.n_errors, 9);
	unload(&l);
}

/* new_flows_per_second / new_flows_burst: inherited from defaults,
 * overridden per VIP, and a burst without a rate is an error at the
 * burst. */
static void test_new_flow_limits(void **state)
{
	const char *ok = DP
		"defaults: {new_flows_per_second: 500, new_flows_burst: 40}\n"
		"vips:\n"
		"  - {name: a, address: 192.0.2.1, port: 80, protocol: tcp}\n"
		"  - {name: b, address: 192.0.2.2, port: 80, protocol: tcp,\n"
		"     new_flows_per_second: 0}\n"
		"  - {name: c, address: 192.0.2.3, port: 80, protocol: tcp,\n"
		"     new_flows_per_second: 100000000, new_flows_burst: 7}\n";
	const char *bad = DP
		"vips:\n"
		"  - {name: a, address: 192.0.2.1, port: 80, protocol: tcp,\n"
		"     new_flows_burst: 77}\n"
		"  - {name: b, address: 192.0.2.2, port: 80, protocol: tcp,\n"
		"     new_flows_per_second: 100000001}\n";
	struct load l;

	(void)state;
	load(&l, ok);
	expect_ok(&l);
	assert_int_equal(l.cfg->vips[0].new_flows_per_second, 500);
	assert_int_equal(l.cfg->vips[0].new_flows_burst, 40);
	assert_int_equal(l.cfg->vips[1].new_flows_per_second, 0);
	assert_int_equal(l.cfg->vips[2].new_flows_per_second, 100000000);
	assert_int_equal(l.cfg->vips[2].new_flows_burst, 7);
	unload(&l);

	load(&l, bad);
	expect_rejected(&l);
	expect_error(&l, bad, "77", "new_flows_burst limits nothing without "
		     "new_flows_per_second (VIP 'a' has no rate)");
	expect_error(&l, bad, "100000001", "between 0 and 100000000");
	unload(&l);
}

static void test_out_of_range(void **state)
{
	const char *y =
		"dataplane:\n"
		"  workers: 65\n"
		"  idle_max_sleep_us: 100001\n"
		"  conntrack: {entries_per_worker: 1023}\n"
		"  ports:\n"
		"    - {name: p, device: d, address: 10.0.0.1, mtu: 575}\n"
		"    - {name: q, device: e, mtu: 9217}\n"
		"defaults:\n"
		"  health: {rise: 0, fall: 101, expect: 600}\n"
		"vips:\n"
		"  - name: v\n"
		"    address: 192.0.2.1\n"
		"    port: 0\n"
		"    protocol: tcp\n"
		"    backends:\n"
		"      - {name: b, address: 10.0.0.2, weight: 1000001}\n"
		"      - {name: c, address: 10.0.0.3, weight: -1}\n"
		"      - {name: d, address: 10.0.0.4, weight: 99999999999999999999999}\n"
		"      - {name: e, address: 10.0.0.5, weight: +5}\n";
	struct load l;
	(void)state;

	assert_int_equal(MLV_MAX_WORKERS, 64);   /* the fixture's 65 */
	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "65", "'workers' is 65; it must be between 1 and 64");
	expect_error(&l, y, "100001", "between 0 and 100000");
	expect_error(&l, y, "1023", "between 1024 and 16777216");
	expect_error(&l, y, "575", "between 576 and 9216");
	expect_error(&l, y, "9217", "between 576 and 9216");
	expect_error(&l, y, "0,", "'rise' is 0; it must be between 1 and 100");
	expect_error(&l, y, "101", "'fall' is 101");
	expect_error(&l, y, "600", "between 100 and 599");
	expect_error(&l, y, "0\n", "'port' must be a port 1..65535, a range such as 8000-8100, or any; got '0'");
	expect_error(&l, y, "1000001", "between 0 and 1000000");
	expect_error(&l, y, "-1", "'weight' is -1");
	expect_error(&l, y, "9999999", "'weight' is 9999");
	expect_error(&l, y, "+5", "'weight' must be an integer, got '+5'");
	/* q transmits for itself and has no IPv4 address */
	expect_error(&l, y, "10.0.0.2", "port 'q' has no IPv4 'address'");
	assert_int_equal(l.d.n_errors, 14);
	unload(&l);
}

/* next_hop6: a MAC beside a MAC next_hop; with auto it is an error
 * (the kernel gives each family's). */
static void test_next_hop6(void **state)
{
	const char *ok =
		DP_NH("02:00:00:00:00:04", ", next_hop6: \"02:00:00:00:00:06\"")
		"vips: []\n";
	const char *bad =
		DP_NH("auto", ", next_hop6: \"02:00:00:00:00:06\"") "vips: []\n";
	struct load l;
	(void)state;

	load(&l, ok);
	expect_ok(&l);
	assert_true(l.cfg->ports[0].has_next_hop6);
	assert_int_equal(l.cfg->ports[0].next_hop6.bytes[5], 6);
	unload(&l);
	load(&l, bad);
	expect_rejected(&l);
	expect_error(&l, bad, "\"02:00:00:00:00:06", "next_hop6 is for a port whose "
		     "next_hop is a MAC");
	unload(&l);
}

/* host_tap adds the host TAP as the exception port after the ports,
 * transmitting by the port it serves; where it cannot work it is an
 * error at its place. */
static void test_host_tap(void **state)
{
	const char *ok =
		"dataplane:\n"
		"  ports:\n"
		"    - {name: nic, device: \"0000:03:00.0\", address: 10.0.0.1, "
		"next_hop: auto, host_tap: true, host_prefix: 22}\n"
		"vips: []\n";
	const char *second =
		"dataplane:\n"
		"  ports:\n"
		"    - {name: a, device: d0, address: 10.0.0.1, next_hop: \"02:00:00:00:00:01\"}\n"
		"    - {name: b, device: d1, address: 10.0.0.2, next_hop: \"02:00:00:00:00:01\", host_tap: true}\n"
		"vips: []\n";
	const char *both =
		"dataplane:\n"
		"  ports:\n"
		"    - {name: a, device: d0, address: 10.0.0.1, next_hop: \"02:00:00:00:00:01\", host_tap: true}\n"
		"    - {name: k, device: net_tap0, address: 10.0.0.2, next_hop: \"02:00:00:00:00:01\", exception: true}\n"
		"vips: []\n";
	const char *longname =
		"dataplane:\n"
		"  ports:\n"
		"    - {name: a-very-long-name, device: d0, address: 10.0.0.1, next_hop: \"02:00:00:00:00:01\", host_tap: true}\n"
		"vips: []\n";
	const struct mlv_port_config *host;
	struct load l;
	(void)state;

	load(&l, ok);
	expect_ok(&l);
	assert_int_equal(l.cfg->n_ports, 2);
	host = &l.cfg->ports[1];
	assert_string_equal(host->name, "nic-host");
	assert_string_equal(host->device, MLV_HOST_TAP_DEVICE);
	assert_string_equal(host->tx_port, "nic");
	assert_string_equal(host->host_for, "nic");
	assert_true(host->exception);
	assert_int_equal(l.cfg->ports[0].host_prefix, 22);
	assert_int_equal(l.cfg->ports[0].host_prefix6, 64);
	unload(&l);

	load(&l, second);
	expect_rejected(&l);
	expect_error(&l, second, "true}", "host_tap is for the first port only");
	unload(&l);
	load(&l, both);
	expect_rejected(&l);
	expect_error(&l, both, "true}\n    - {name: k", "and 'k' already is one");
	unload(&l);
	load(&l, longname);
	expect_rejected(&l);
	expect_error(&l, longname, "a-very-long-name", "longer than 15 bytes");
	unload(&l);
}

static void test_bad_addresses_macs(void **state)
{
	const char *y =
		"dataplane:\n"
		"  ports:\n"
		"    - name: p\n"
		"      device: d\n"
		"      address: fd00::1\n"
		"      address6: 10.0.0.1\n"
		"      next_hop: zz:00:00:00:00:01\n"
		"    - {name: q, device: e, address: 10.0.0.256, next_hop: \"01:00:5e:00:00:01\"}\n"
		"vips:\n"
		"  - name: v\n"
		"    address: 224.0.0.1\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    forwarding: l2dsr\n"
		"    backends:\n"
		"      - {name: a, address: 10.0.0.2, mac: \"02:00:00:00:01\"}\n"
		"      - {name: b, address: 10.0.0.3, mac: \"00:00:00:00:00:00\"}\n"
		"      - {name: c, address: 0.0.0.0, mac: \"02:00:00:00:00:03\"}\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "fd00::1", "'address' must be an IPv4 address");
	expect_error(&l, y, "10.0.0.1\n", "'address6' must be an IPv6 address");
	expect_error(&l, y, "zz:", "invalid MAC address 'zz:00:00:00:00:01'");
	expect_error(&l, y, "10.0.0.256", "invalid IP address '10.0.0.256'");
	expect_error(&l, y, "\"01:00:5e", "must be a unicast MAC address");
	expect_error(&l, y, "224.0.0.1", "VIP address must be a unicast address");
	expect_error(&l, y, "\"02:00:00:00:01\"", "invalid MAC address");
	expect_error(&l, y, "\"00:00:00:00:00:00\"", "must be a unicast MAC address");
	expect_error(&l, y, "0.0.0.0", "must be a unicast address");
	unload(&l);
}

static void test_bad_durations(void **state)
{
	const char *y = DP
		"  conntrack:\n"
		"    tcp_timeout: 1.5s\n"
		"    udp_timeout: -5s\n"
		"    tcp_handshake_timeout: 10\n"
		"    tcp_closing_timeout: 5000000h\n"
		"defaults:\n"
		"  health: {interval: 50ms, timeout: 1 s}\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "1.5s", "invalid duration '1.5s' for 'tcp_timeout'");
	expect_error(&l, y, "-5s", "invalid duration '-5s'");
	expect_error(&l, y, "10\n", "invalid duration '10'");
	expect_error(&l, y, "5000000h", "invalid duration '5000000h'");
	expect_error(&l, y, "50ms", "'interval' is 50ms; it must be between 100ms and 1h");
	expect_error(&l, y, "1 s", "invalid duration '1 s'");
	assert_int_equal(l.d.n_errors, 6);
	unload(&l);
}

static void test_duplicates(void **state)
{
	const char *y =
		"dataplane:\n"
		"  ports:\n"
		"    - {name: ext, device: d0, address: 10.0.0.1}\n"
		"    - {name: ext, device: d1}\n"
		"    - {name: other, device: d0}\n"
		"  workers: 1\n"
		"  workers: 2\n"
		"vips:\n"
		"  - name: web\n"
		"    address: 192.0.2.10\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    backends:\n"
		"      - {name: one, address: 10.0.0.2}\n"
		"      - {name: two, address: 10.0.0.3}\n"
		"      - {name: one, address: 10.0.0.4}\n"
		"  - name: web2\n"
		"    address: 192.0.2.10\n"     /* same service as web */
		"    port: 80\n"
		"    protocol: tcp\n"
		"  - name: web\n"              /* same name, other service */
		"    address: 192.0.2.11\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"  - name: web-udp\n"          /* same address+port, udp: fine */
		"    address: 192.0.2.10\n"
		"    port: 80\n"
		"    protocol: udp\n";
	struct load l;
	char msg[64];
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	snprintf(msg, sizeof(msg), "duplicate port name 'ext' (first at line %u)",
		 pos_of(y, "{name: ext", 0).line);
	expect_diag(&l, MLV_DIAG_ERROR, y, "ext", 1, msg);
	expect_diag(&l, MLV_DIAG_ERROR, y, "d0}", 0, "device 'd0' is already used by port 'ext'");
	expect_diag(&l, MLV_DIAG_ERROR, y, "workers", 1, "duplicate key 'workers'");
	snprintf(msg, sizeof(msg), "duplicate backend name 'one' in VIP 'web' (first at line %u)",
		 pos_of(y, "{name: one", 0).line);
	expect_diag(&l, MLV_DIAG_ERROR, y, "one", 1, msg);
	expect_diag(&l, MLV_DIAG_ERROR, y, "192.0.2.10", 1,
		    "VIP 'web2' duplicates VIP 'web'");
	snprintf(msg, sizeof(msg), "duplicate VIP name 'web' (first at line %u)",
		 pos_of(y, "name: web\n", 0).line);
	expect_diag(&l, MLV_DIAG_ERROR, y, "web\n", 1, msg);
	expect_error(&l, y, "10.0.0.2", "port 'ext' has no IPv4 'address'");
	assert_int_equal(l.d.n_errors, 7);
	unload(&l);
}

static void test_tx_port_and_exception(void **state)
{
	const char *y =
		"dataplane:\n"
		"  ports:\n"
		"    - {name: a, device: d0, address: 10.0.0.1, tx_port: nosuch, exception: true}\n"
		"    - {name: b, device: d1, tx_port: b, exception: true}\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "nosuch", "tx_port 'nosuch' is not the name of a port");
	expect_diag(&l, MLV_DIAG_ERROR, y, "b,", 1, "names itself as tx_port");
	expect_diag(&l, MLV_DIAG_ERROR, y, "true", 1, "only one port can be the exception port");
	assert_int_equal(l.d.n_errors, 3);
	unload(&l);
}

static void test_address_families(void **state)
{
	const char *y =
		"dataplane:\n"
		"  ports:\n"
		"    - {name: v4only, device: d0, address: 10.0.0.1}\n"
		"vips:\n"
		"  - name: six\n"
		"    address: 2001:db8::1\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    forwarding: ipip\n"
		"    backends: [{name: b4, address: 10.0.0.2}]\n"
		"  - name: four\n"
		"    address: 192.0.2.1\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    forwarding: gue\n"
		"    backends: [{name: b6, address: fd00::9}]\n"
		"  - name: dsr\n"
		"    address: 192.0.2.2\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    forwarding: l2dsr\n"
		"    backends: [{name: nomac, address: 10.0.0.3}]\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "10.0.0.2", "ipip cannot carry IPv6 VIP 'six' to IPv4 backend 'b4'");
	expect_error(&l, y, "fd00::9", "backend 'b6' is IPv6 but port 'v4only' has no IPv6 'address6'");
	/* d0 has no kernel interface, so nothing could resolve the MAC */
	expect_error(&l, y, "{name: nomac", "l2dsr backend 'nomac' has no 'mac'");
	assert_true(any_message(&l, "(port 'v4only' is device 'd0')"));
	assert_int_equal(l.d.n_errors, 3);
	unload(&l);
}

/* udp and dns checks; a UDP VIP checked over TCP on its own port warns. */
static void test_udp_and_dns_checks(void **state)
{
	const char *y = DP
		"defaults: {health: {type: tcp}}\n"
		"vips:\n"
		"  - {name: echo, address: 192.0.2.1, port: 7, protocol: udp,\n"
		"     health: {type: udp, send: ping, receive: ping},\n"
		"     backends: [{name: b1, address: 10.0.0.11}]}\n"
		"  - {name: dns, address: 192.0.2.1, port: 53, protocol: udp,\n"
		"     health: {type: dns, query: example.com},\n"
		"     backends: [{name: b1, address: 10.0.0.11}]}\n"
		"  - {name: blind, address: 192.0.2.2, port: 7, protocol: udp,\n"
		"     backends: [{name: b1, address: 10.0.0.11}]}\n"
		"  - {name: web, address: 192.0.2.2, port: 8, protocol: udp,\n"
		"     health: {type: http, port: 80},\n"
		"     backends: [{name: b1, address: 10.0.0.11}]}\n"
		"  - {name: own, address: 192.0.2.3, port: 9, protocol: udp,\n"
		"     health: {type: tcp, port: 9},\n"
		"     backends: [{name: b1, address: 10.0.0.11}]}\n";
	const char *bad = DP
		"vips:\n"
		"  - {name: dns, address: 192.0.2.1, port: 53, protocol: udp,\n"
		"     health: {type: dns},\n"
		"     backends: [{name: b1, address: 10.0.0.11}]}\n";
	struct load l;
	char why[256];
	(void)state;

	load(&l, y);
	expect_ok(&l);
	assert_int_equal(l.cfg->vips[0].health.type, MLV_HEALTH_UDP);
	assert_string_equal(l.cfg->vips[0].health.send, "ping");
	assert_string_equal(l.cfg->vips[0].health.receive, "ping");
	assert_int_equal(l.cfg->vips[1].health.type, MLV_HEALTH_DNS);
	assert_string_equal(l.cfg->vips[1].health.query, "example.com");
	/* blind inherits tcp on its own UDP port 7; web checks port 80 */
	expect_diag(&l, MLV_DIAG_WARNING, y, "{name: blind", 0,
		    "VIP 'blind' is UDP but its health check is tcp on the VIP's own port 7 (from defaults.health)");
	/* own names its own port 9 as health.port: the same TCP service
	 * it does not have, warned at its health */
	expect_diag(&l, MLV_DIAG_WARNING, y, "{type: tcp, port: 9}", 0,
		    "VIP 'own' is UDP but its health check is tcp on the VIP's own port 9:");
	assert_int_equal(l.d.n, 2);
	assert_int_equal(mlv_health_check_config(l.cfg, why, sizeof(why)), MLV_OK);
	unload(&l);

	load(&l, bad);
	expect_ok(&l);   /* the model takes it; the health engine refuses */
	assert_int_not_equal(mlv_health_check_config(l.cfg, why, sizeof(why)),
			     MLV_OK);
	assert_non_null(strstr(why, "health query must be a DNS name"));
	unload(&l);
}

/* A VIP without a backends key drops its traffic like one with
 * `backends: []`, and says so the same way. */
static void test_missing_backends_warns(void **state)
{
	const char *y = DP
		"vips:\n"
		"  - {name: a, address: 192.0.2.1, port: 80, protocol: tcp}\n"
		"  - {name: b, address: 192.0.2.2, port: 80, protocol: tcp, backends: []}\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_ok(&l);
	expect_diag(&l, MLV_DIAG_WARNING, y, "{name: a", 0,
		    "VIP 'a' has no backends (no 'backends' key); its traffic will be dropped");
	expect_diag(&l, MLV_DIAG_WARNING, y, "[]", 0,
		    "VIP 'b' has no backends; its traffic will be dropped");
	unload(&l);
}

/* What the generation build refuses at start-up is refused here, naming
 * the port: every transmitting port needs an address of each backend
 * family (a VIP's traffic may arrive on any port), once per family. */
static void test_every_tx_port_has_the_family(void **state)
{
	const char *second = DP
		"    - {name: int, device: net_null1, address: 10.0.0.2}\n"
		"vips:\n"
		"  - name: web6\n"
		"    address: 2001:db8::1\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    backends: [{name: a, address: fd00::11}, {name: b, address: fd00::12}]\n";
	const char *two_arm =
		"dataplane:\n"
		"  ports:\n"
		"    - {name: ext, device: d0, address: 10.0.0.1, address6: fd00::1, tx_port: int}\n"
		"    - {name: int, device: d1, address: 10.0.1.1}\n"
		"vips:\n"
		"  - {name: web6, address: 2001:db8::1, port: 80, protocol: tcp,\n"
		"     backends: [{name: a, address: fd00::11}]}\n";
	struct load l;
	(void)state;

	load(&l, second);
	expect_rejected(&l);
	expect_error(&l, second, "fd00::11", "backend 'a' is IPv6 but port 'int' has no IPv6 'address6' to send ipip packets from");
	assert_int_equal(l.d.n_errors, 1);
	unload(&l);

	load(&l, two_arm);
	expect_rejected(&l);
	expect_error(&l, two_arm, "fd00::11", "port 'int', the tx_port of port 'ext', has no IPv6 'address6'");
	unload(&l);
}

/* Without 'mac' an l2dsr backend is resolved from the neighbour table of
 * the transmitting port's kernel interface; a port that only receives
 * (its traffic leaves by tx_port) does not count. */
static void test_l2dsr_mac_from_kernel(void **state)
{
	const char *ok =
		"dataplane:\n"
		"  eal_args: [--vdev, \"net_af_packet0,iface=veth0\"]\n"
		"  ports:\n"
		"    - {name: in, device: d0, address: 10.0.0.1, tx_port: out}\n"
		"    - {name: out, device: net_af_packet0, address: 10.0.0.2}\n"
		"vips:\n"
		"  - {name: dsr, address: 192.0.2.2, port: 80, protocol: tcp, forwarding: l2dsr,\n"
		"     backends: [{name: nomac, address: 10.0.0.3}]}\n";
	const char *bad =
		"dataplane:\n"
		"  eal_args: [\"--vdev=net_af_xdp0,iface=veth0\", \"--vdev=net_af_xdp1\"]\n"
		"  ports:\n"
		"    - {name: in, device: net_af_xdp0, address: 10.0.0.1, tx_port: out}\n"
		"    - {name: out, device: net_af_xdp1, address: 10.0.0.2}\n"
		"vips:\n"
		"  - {name: dsr, address: 192.0.2.2, port: 80, protocol: tcp, forwarding: l2dsr,\n"
		"     backends: [{name: nomac, address: 10.0.0.3},\n"
		"                {name: withmac, address: 10.0.0.4, mac: \"02:00:00:00:00:04\"}]}\n";
	struct load l;
	(void)state;

	load(&l, ok);
	expect_ok(&l);
	assert_false(l.cfg->vips[0].backends[0].has_mac);
	unload(&l);

	load(&l, bad);
	expect_rejected(&l);
	expect_error(&l, bad, "{name: nomac", "l2dsr backend 'nomac' has no 'mac'");
	assert_true(any_message(&l, "(port 'out' is device 'net_af_xdp1')"));
	assert_int_equal(l.d.n_errors, 1);
	unload(&l);
}

static void test_table_size(void **state)
{
	const char *y = DP
		"defaults:\n"
		"  table_size: 65536\n"
		"vips:\n"
		"  - {name: a, address: 192.0.2.1, port: 1, protocol: tcp, table_size: 250}\n"
		"  - {name: b, address: 192.0.2.1, port: 2, protocol: tcp, table_size: 5000012}\n"
		"  - {name: c, address: 192.0.2.1, port: 3, protocol: tcp, table_size: 4294967296}\n";
	struct load l;
	(void)state;

	/* 2^16 is even; 65521 and 65537 are the primes around it. */
	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "65536", "65536 is not prime; the nearest primes are 65521 and 65537");
	expect_error(&l, y, "250", "'table_size' is 250; it must be between 251 and 5000011");
	expect_error(&l, y, "5000012", "between 251 and 5000011");
	expect_error(&l, y, "4294967296", "between 251 and 5000011");
	assert_int_equal(l.d.n_errors, 4);
	unload(&l);
}

static void test_backend_count_warning(void **state)
{
	/* 251 slots: balance is promised up to 251/100 = 2 backends. */
	const char *y = DP
		"vips:\n"
		"  - name: three\n"
		"    address: 192.0.2.1\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    table_size: 251\n"
		"    backends:\n"
		"      - {name: a, address: 10.0.0.2}\n"
		"      - {name: b, address: 10.0.0.3}\n"
		"      - {name: c, address: 10.0.0.4}\n"
		"  - name: two\n"
		"    address: 192.0.2.1\n"
		"    port: 81\n"
		"    protocol: tcp\n"
		"    table_size: 251\n"
		"    backends:\n"
		"      - {name: a, address: 10.0.0.2}\n"
		"      - {name: b, address: 10.0.0.3}\n"
		"  - name: none\n"
		"    address: 192.0.2.1\n"
		"    port: 82\n"
		"    protocol: tcp\n"
		"    backends: []\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_ok(&l);   /* warnings do not fail the load */
	expect_diag(&l, MLV_DIAG_WARNING, y, "251", 0, "VIP 'three' has 3 backends for 251 table slots");
	expect_diag(&l, MLV_DIAG_WARNING, y, "[]", 0, "VIP 'none' has no backends");
	assert_int_equal(l.d.n, 2);
	unload(&l);
}

/* n backends in one flow list: "{name: bN, address: 10.x.y.z}" */
static char *many_backends_yaml(uint32_t n)
{
	size_t cap = 512 + (size_t)n * 48, used;
	char *y = malloc(cap);
	uint32_t i;

	assert_non_null(y);
	used = (size_t)snprintf(y, cap, DP
				"vips:\n"
				"  - name: big\n"
				"    address: 192.0.2.1\n"
				"    port: 80\n"
				"    protocol: tcp\n"
				"    table_size: 5000011\n"
				"    backends: [");
	for (i = 0; i < n; i++)
		used += (size_t)snprintf(y + used, cap - used,
					 "%s{name: b%u, address: 10.%u.%u.%u}",
					 i ? "," : "", i, i >> 14,
					 (i >> 7) & 127, (i & 127) + 1);
	snprintf(y + used, cap - used, "]\n");
	return y;
}

static void test_backend_limit(void **state)
{
	char *y;
	struct load l;
	(void)state;

	y = many_backends_yaml(MLV_MAGLEV_MAX_BACKENDS + 1);
	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "[{name: b0,", "too many backends in 'backends' (65536; at most 65535)");
	unload(&l);
	free(y);

	y = many_backends_yaml(MLV_MAGLEV_MAX_BACKENDS);
	load(&l, y);
	expect_ok(&l);
	assert_int_equal(l.cfg->vips[0].n_backends, MLV_MAGLEV_MAX_BACKENDS);
	unload(&l);
	free(y);
}

static void test_missing_required(void **state)
{
	const char *y =
		"dataplane:\n"
		"  ports:\n"
		"    - {name: p}\n"
		"vips:\n"
		"  - backends:\n"
		"      - {name: b}\n";
	const char *no_ports = "dataplane:\n  workers: 1\n";
	const char *empty_ports = "dataplane:\n  ports: []\n";
	const char *no_dataplane = "vips: []\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "{name: p}", "missing required key 'device' in a port");
	expect_error(&l, y, "backends", "missing required key 'name' in a VIP");
	expect_error(&l, y, "backends", "missing required key 'address' in a VIP");
	expect_error(&l, y, "backends", "missing required key 'port' in a VIP");
	expect_error(&l, y, "backends", "missing required key 'protocol' in a VIP");
	expect_error(&l, y, "{name: b}", "missing required key 'address' in a backend");
	assert_int_equal(l.d.n_errors, 6);
	unload(&l);

	load(&l, no_ports);
	expect_rejected(&l);
	expect_error(&l, no_ports, "workers", "missing required key 'ports' in dataplane");
	unload(&l);

	load(&l, empty_ports);
	expect_rejected(&l);
	expect_error(&l, empty_ports, "[]", "at least one port is required");
	unload(&l);

	load(&l, no_dataplane);
	expect_rejected(&l);
	expect_error(&l, no_dataplane, "vips", "missing required key 'dataplane'");
	unload(&l);
}

static void test_health_rules(void **state)
{
	const char *y = DP
		"defaults:\n"
		"  health: {type: tcp, interval: 1s, timeout: 800ms}\n"
		"vips:\n"
		"  - name: a\n"
		"    address: 192.0.2.1\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    health: {interval: 500ms}\n"     /* inherited 800ms timeout */
		"  - name: b\n"
		"    address: 192.0.2.1\n"
		"    port: 81\n"
		"    protocol: tcp\n"
		"    health: {type: http, timeout: 2s, path: healthz, type2: x}\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "500ms", "health timeout (800ms) must be shorter than the interval (500ms)");
	expect_error(&l, y, "2s", "health timeout (2s) must be shorter than the interval (1s)");
	expect_error(&l, y, "healthz", "health path 'healthz' must start with '/'");
	expect_error(&l, y, "type2", "unknown key 'type2' (did you mean 'type'?)");
	assert_int_equal(l.d.n_errors, 4);
	unload(&l);
}

static void test_gue_port_only_with_gue(void **state)
{
	const char *y = DP
		"vips:\n"
		"  - {name: a, address: 192.0.2.1, port: 80, protocol: tcp, gue_port: 7000}\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "7000", "gue_port is only used with forwarding: gue");
	unload(&l);
}

static void test_announce_section(void **state)
{
	const char *off = DP
		"vips:\n"
		"  - {name: a, address: 192.0.2.1, port: 80, protocol: tcp,\n"
		"     backends: [{name: b1, address: 10.0.0.11}]}\n";
	const char *on = DP
		"announce: {table: 100, drain_time: 5s, device: mlv-test}\n"
		"defaults: {announce: {min_backends: 2}}\n"
		"vips:\n"
		"  - name: a\n"
		"    address: 192.0.2.1\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    backends: [{name: b1, address: 10.0.0.11}, {name: b2, address: 10.0.0.12}]\n"
		"  - name: b\n"
		"    address: 2001:db8::1\n"
		"    port: 80\n"
		"    protocol: tcp\n"
		"    announce: {min_backends: 3}\n"
		"    backends: [{name: b1, address: 2001:db8::11}]\n";
	const char *bad = DP
		"announce: {table: 254, drain_time: 11m, device: \"a b\"}\n"
		"vips:\n"
		"  - {name: a, address: 192.0.2.1, port: 80, protocol: tcp,\n"
		"     announce: {min_backends: 70000}}\n";
	struct load l;
	(void)state;

	/* off by default; every VIP inherits min_backends 1 */
	load(&l, off);
	expect_ok(&l);
	assert_int_equal(l.cfg->announce_table, 0);
	assert_int_equal(l.cfg->announce_drain_ms, 2000);
	assert_string_equal(l.cfg->announce_device, "maglevd-vips");
	assert_int_equal(l.cfg->vips[0].min_backends, 1);
	assert_int_equal(l.d.n, 0);   /* no warning while announcing is off */
	unload(&l);

	load(&l, on);
	expect_ok(&l);
	assert_int_equal(l.cfg->announce_table, 100);
	assert_int_equal(l.cfg->announce_drain_ms, 5000);
	assert_string_equal(l.cfg->announce_device, "mlv-test");
	assert_int_equal(l.cfg->vips[0].min_backends, 2);
	assert_int_equal(l.cfg->vips[1].min_backends, 3);
	/* b can never have 3 usable backends: said where it is set */
	expect_diag(&l, MLV_DIAG_WARNING, on, "{min_backends: 3}", 0,
		    "VIP 'b' is never announced");
	unload(&l);

	load(&l, bad);
	expect_rejected(&l);
	expect_error(&l, bad, "254", "announce.table 254 is the kernel's 'main' table");
	expect_error(&l, bad, "11m", "drain_time");
	expect_error(&l, bad, "\"a b\"", "device");
	expect_error(&l, bad, "70000", "min_backends");
	unload(&l);
}

#define TEN "0123456789"

static void test_control_section(void **state)
{
	const char *bad =
		DP
		"control:\n"
		"  socket: /tmp/" TEN TEN TEN TEN TEN TEN TEN TEN TEN TEN TEN "\n"
		"  socket_mode: \"0666\"\n"
		"  metrics_listen: ::1:9478\n";
	const char *bad2 = DP
		"control: {socket_mode: \"0999\", metrics_listen: \"127.0.0.1:0\"}\n";
	const char *good = DP
		"control: {socket: /tmp/m.sock, socket_mode: 0640, metrics_listen: \"[::1]:9100\"}\n";
	const char *off = DP "control: {metrics_listen: \"\"}\n";
	const char *limits = DP
		"control: {metrics_timeout: 2s, metrics_max_connections: 16, "
		"metrics_max_connections_per_address: 16}\n";
	const char *bad_limits = DP
		"control: {metrics_timeout: 500ms, metrics_max_connections: 4, "
		"metrics_max_connections_per_address: 5}\n";
	struct load l;
	(void)state;

	load(&l, bad);
	expect_rejected(&l);
	expect_error(&l, bad, "/tmp/0123", "'socket' is too long (115 bytes; at most 107)");
	expect_error(&l, bad, "\"0666\"", "world-writable");
	expect_error(&l, bad, "::1:9478", "invalid metrics_listen '::1:9478'");
	unload(&l);

	load(&l, bad2);
	expect_rejected(&l);
	expect_error(&l, bad2, "\"0999\"", "invalid socket_mode '0999'");
	expect_error(&l, bad2, "\"127.0.0.1:0\"", "invalid metrics_listen");
	unload(&l);

	load(&l, good);
	expect_ok(&l);
	assert_string_equal(l.cfg->control_socket, "/tmp/m.sock");
	assert_int_equal(l.cfg->control_socket_mode, 0640);
	assert_string_equal(l.cfg->metrics_listen, "[::1]:9100");
	unload(&l);

	load(&l, off);
	expect_ok(&l);
	assert_string_equal(l.cfg->metrics_listen, "");
	unload(&l);

	load(&l, limits);
	expect_ok(&l);
	assert_int_equal(l.cfg->metrics_limits.timeout_ms, 2000);
	assert_int_equal(l.cfg->metrics_limits.max_connections, 16);
	assert_int_equal(l.cfg->metrics_limits.max_per_address, 16);
	unload(&l);

	load(&l, bad_limits);
	expect_rejected(&l);
	expect_error(&l, bad_limits, "500ms", "metrics_timeout");
	expect_error(&l, bad_limits, "5}",
		     "control.metrics_max_connections_per_address 5 is above "
		     "control.metrics_max_connections 4");
	unload(&l);
}

static void test_many_errors_collected_in_order(void **state)
{
	const char *y =
		"dataplane:\n"
		"  workers: 0\n"
		"  ports:\n"
		"    - {name: p, device: d, address: 10.0.0.1, mtu: 99}\n"
		"control: {socket_mode: \"0777\"}\n"
		"defaults: {forwarding: ipop}\n"
		"vips:\n"
		"  - {name: v, address: 192.0.2.1, port: 80, protocol: sctp}\n";
	struct load l;
	uint32_t i;
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	assert_int_equal(l.d.n_errors, 5);
	expect_error(&l, y, "0\n", "'workers' is 0");
	expect_error(&l, y, "99", "'mtu' is 99");
	expect_error(&l, y, "\"0777\"", "world-writable");
	expect_error(&l, y, "ipop", "invalid forwarding 'ipop' (expected ipip, gue or l2dsr)");
	expect_error(&l, y, "sctp", "invalid protocol 'sctp' (expected tcp or udp)");
	for (i = 1; i < l.d.n; i++)   /* reported in file order */
		assert_true(l.d.items[i - 1].pos.line < l.d.items[i].pos.line ||
			    (l.d.items[i - 1].pos.line == l.d.items[i].pos.line &&
			     l.d.items[i - 1].pos.col <= l.d.items[i].pos.col));
	unload(&l);
}

static void test_diags_print_format(void **state)
{
	const char *y = DP
		"  workers: 0\n"
		"vips:\n"
		"  - {name: v, address: 192.0.2.1, port: 80, protocol: tcp, table_size: 251,\n"
		"     backends: [{name: a, address: 10.0.0.2}, {name: b, address: 10.0.0.3},\n"
		"                {name: c, address: 10.0.0.4}]}\n";
	struct mlv_src_pos e = pos_of(y, "0\n", 0), w = pos_of(y, "251", 0);
	char expected[512], *out = NULL;
	size_t len = 0;
	struct load l;
	FILE *f;
	(void)state;

	load(&l, y);
	expect_rejected(&l);
	assert_int_equal(l.d.n, 2);
	f = open_memstream(&out, &len);
	assert_non_null(f);
	mlv_diags_print(&l.d, f);
	fclose(f);
	snprintf(expected, sizeof(expected),
		 "t.yaml:%u:%u: error: %s\n"
		 "t.yaml:%u:%u: warning: %s\n",
		 e.line, e.col, "'workers' is 0; it must be between 1 and 64",
		 w.line, w.col, l.d.items[1].message);
	assert_string_equal(out, expected);
	assert_non_null(strstr(l.d.items[1].message, "3 backends"));
	free(out);
	unload(&l);
}

/* ---- hostile input ---- */

static void test_alias_bomb(void **state)
{
	/* "Billion laughs": 9^9 x's if aliases were expanded. */
	char y[2048];
	size_t used;
	const char *names = "abcdefghi";
	int i, j;
	struct load l;
	(void)state;

	used = (size_t)snprintf(y, sizeof(y), "a: &a [x,x,x,x,x,x,x,x,x]\n");
	for (i = 1; i < 9; i++) {
		used += (size_t)snprintf(y + used, sizeof(y) - used, "%c: &%c [",
					 names[i], names[i]);
		for (j = 0; j < 9; j++)
			used += (size_t)snprintf(y + used, sizeof(y) - used, "%s*%c",
						 j ? "," : "", names[i - 1]);
		used += (size_t)snprintf(y + used, sizeof(y) - used, "]\n");
	}
	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "&a", "YAML anchors (&a) are not supported");
	expect_error(&l, y, "*a", "YAML aliases (*a) are not supported");
	expect_error(&l, y, "*h", "YAML aliases (*h) are not supported");
	/* 9 anchors + 72 aliases + 9 unknown keys + missing dataplane. */
	assert_int_equal(l.d.n_errors, 91);
	unload(&l);

	/* An alias where a config value belongs is refused, not followed. */
	{
		const char *y2 = DP "defaults:\n  table_size: &s 251\n"
				 "vips: [{name: v, address: 192.0.2.1, port: 80, protocol: tcp, table_size: *s}]\n";

		load(&l, y2);
		expect_rejected(&l);
		expect_error(&l, y2, "&s", "anchors");
		expect_error(&l, y2, "*s", "aliases");
		assert_int_equal(l.d.n_errors, 2);
		unload(&l);
	}
}

static void test_size_cap(void **state)
{
	size_t len = (size_t)MLV_CONFIG_MAX_FILE_BYTES + 1;
	char *big = malloc(len);
	struct load l;
	(void)state;

	assert_non_null(big);
	memset(big, '#', len);   /* would be one long comment */
	load_len(&l, big, len);
	expect_rejected(&l);
	assert_int_equal(l.d.n, 1);
	assert_int_equal(l.d.items[0].pos.line, 0);
	assert_non_null(strstr(l.d.items[0].message, "too large"));
	unload(&l);
	free(big);
}

static void test_binary_and_encoding(void **state)
{
	char bin[256];
	const char *bad_utf8 = DP "vips: [{name: \"caf\xc3\x28\"}]\n";
	const char nul[] = "dataplane:\n  work\0ers: 1\n";
	const char *utf16 = "\xff\xfe" "d\0a\0";
	struct mlv_src_pos p;
	struct load l;
	int i;
	(void)state;

	for (i = 0; i < 256; i++)
		bin[i] = (char)(255 - i);
	load_len(&l, bin, sizeof(bin));
	expect_rejected(&l);
	assert_true(any_message(&l, "invalid YAML"));
	unload(&l);

	load(&l, bad_utf8);
	expect_rejected(&l);
	/* libyaml points at the octet that breaks the sequence: the '('
	 * that follows the lead byte 0xc3. */
	expect_diag(&l, MLV_DIAG_ERROR, bad_utf8, "(", 0,
		    "invalid trailing UTF-8 octet (byte 0x28)");
	assert_int_equal(l.d.n, 1);
	unload(&l);

	load_len(&l, nul, sizeof(nul) - 1);
	expect_rejected(&l);
	assert_int_equal(l.d.n, 1);
	assert_non_null(strstr(l.d.items[0].message, "invalid YAML"));
	/* The NUL sits right after "work" (strstr stops at it). */
	p = pos_of(nul, "work", 0);
	assert_int_equal(l.d.items[0].pos.line, p.line);
	assert_int_equal(l.d.items[0].pos.col, p.col + 4);
	unload(&l);

	load_len(&l, utf16, 6);   /* UTF-16 is not accepted as a config */
	expect_rejected(&l);
	unload(&l);
}

static void test_empty_and_non_mapping(void **state)
{
	static const char *const empties[] = {
		"", "   \n\n", "# only a comment\n", "---\n", "~\n", "null",
	};
	static const char *const not_maps[] = { "- a\n- b\n", "hello\n", "[1, 2]\n" };
	struct load l;
	size_t i;
	(void)state;

	for (i = 0; i < sizeof(empties) / sizeof(empties[0]); i++) {
		load(&l, empties[i]);
		expect_rejected(&l);
		assert_int_equal(l.d.n, 1);
		assert_string_equal(l.d.items[0].message, "the configuration is empty");
		unload(&l);
	}
	for (i = 0; i < sizeof(not_maps) / sizeof(not_maps[0]); i++) {
		load(&l, not_maps[i]);
		expect_rejected(&l);
		assert_int_equal(l.d.n, 1);
		assert_int_equal(l.d.items[0].pos.line, 1);
		assert_int_equal(l.d.items[0].pos.col, 1);
		assert_non_null(strstr(l.d.items[0].message, "the top level must be a mapping"));
		unload(&l);
	}
	/* NULL data with length 0 is an empty config too. */
	load_len(&l, NULL, 0);
	expect_rejected(&l);
	unload(&l);
}

static void test_deep_nesting(void **state)
{
	size_t depth = 100000, i;
	char *y = malloc(2 * depth + 2);
	char *m;
	struct load l;
	size_t used = 0;
	(void)state;

	assert_non_null(y);
	for (i = 0; i < depth; i++)
		y[i] = '[';
	for (i = 0; i < depth; i++)
		y[depth + i] = ']';
	y[2 * depth] = '\n';
	y[2 * depth + 1] = '\0';
	load(&l, y);
	expect_rejected(&l);
	assert_int_equal(l.d.n, 1);
	assert_int_equal(l.d.items[0].pos.line, 1);
	/* The first bracket past the limit. */
	assert_int_equal(l.d.items[0].pos.col, 33);
	assert_non_null(strstr(l.d.items[0].message, "nested deeper than 32"));
	unload(&l);
	free(y);

	/* Block mappings nest the same way. */
	m = malloc(64 * 64);
	assert_non_null(m);
	for (i = 0; i < 40; i++)
		used += (size_t)snprintf(m + used, 64 * 64 - used, "%*sk:\n", (int)(2 * i), "");
	load(&l, m);
	expect_rejected(&l);
	assert_true(any_message(&l, "nested deeper"));
	unload(&l);
	free(m);
}

static void test_yaml_syntax_and_structure(void **state)
{
	const char *unclosed = DP "vips: [\n";
	const char *two_docs = DP "---\nvips: []\n";
	const char *tags = DP "defaults: {forwarding: !!binary aXBpcA==}\n"
			   "control: {socket: !!str /tmp/x.sock}\n";
	const char *nul_escape = DP "vips: [{name: \"a\\0b\", address: 192.0.2.1, port: 80, protocol: tcp}]\n";
	const char *complex_key = DP "? [a, b]\n: 1\n";
	const char *newline = DP "vips: [{name: \"a\\nb\", address: 192.0.2.1, port: 80, protocol: tcp}]\n";
	struct load l;
	(void)state;

	load(&l, unclosed);
	expect_rejected(&l);
	assert_true(any_message(&l, "invalid YAML"));
	/* libyaml notices at the end of the input. */
	assert_int_equal(l.d.items[0].pos.line, pos_of(unclosed, "vips", 0).line + 1);
	unload(&l);

	load(&l, two_docs);
	expect_rejected(&l);
	expect_error(&l, two_docs, "---", "only one YAML document");
	unload(&l);

	load(&l, tags);
	expect_rejected(&l);
	expect_error(&l, tags, "!!binary", "YAML tag '!!binary' is not supported");
	assert_int_equal(l.d.n_errors, 1);   /* !!str is fine */
	unload(&l);

	load(&l, nul_escape);
	expect_rejected(&l);
	expect_error(&l, nul_escape, "\"a\\0b\"", "'name' contains a NUL character");
	unload(&l);

	load(&l, complex_key);
	expect_rejected(&l);
	expect_error(&l, complex_key, "[a, b]", "mapping keys must be scalars");
	unload(&l);

	/* File text quoted in a message cannot break its one-line format. */
	load(&l, newline);
	expect_rejected(&l);
	expect_error(&l, newline, "\"a\\nb\"", "invalid name 'a?b'");
	unload(&l);
}

static void test_diag_cap(void **state)
{
	uint32_t n = 3000, i;
	size_t cap = (size_t)n * 16 + 256, used;
	char *y = malloc(cap);
	struct load l;
	(void)state;

	assert_non_null(y);
	used = (size_t)snprintf(y, cap, DP);
	for (i = 0; i < n; i++)
		used += (size_t)snprintf(y + used, cap - used, "k%u: 1\n", i);
	load(&l, y);
	expect_rejected(&l);
	assert_int_equal(l.d.n_errors, n);
	assert_int_equal(l.d.n, MLV_DIAGS_MAX);
	assert_non_null(strstr(l.d.items[MLV_DIAGS_MAX - 1].message, "too many diagnostics"));
	/* The ones kept are the first in the file. */
	expect_error(&l, y, "k0:", "unknown key 'k0'");
	unload(&l);
	free(y);
}

/* ---- fragments (include:) ---- */

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* The diagnostic whose message has `needle`, or NULL. */
static const struct mlv_diag *diag_with(const struct mlv_diags *d,
					const char *needle)
{
	for (uint32_t i = 0; i < d->n; i++)
		if (strstr(d->items[i].message, needle))
			return &d->items[i];
	return NULL;
}

#define FRAG_VIP(name, port)                                                \
	"vips:\n"                                                            \
	"  - name: " name "\n"                                               \
	"    address: 192.0.2.10\n"                                          \
	"    port: " port "\n"                                               \
	"    protocol: tcp\n"                                                \
	"    backends:\n"                                                    \
	"      - {name: b1, address: 10.0.1.1}\n"

static void test_include_fragments(void **state)
{
	char dir[] = "/tmp/mlv-include-XXXXXX", path[600], sub[512];
	const struct mlv_diag *e;
	struct load l;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/none.d", dir);
	assert_int_equal(mkdir(sub, 0755), 0);   /* empty: matches nothing */
	snprintf(sub, sizeof(sub), "%s/vips.d", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(path, sizeof(path), "%s/main.yaml", dir);
	put(dir, "main.yaml", DP "include: [vips.d/*.yaml, none.d/*.yaml]\n"
	    "vips:\n"
	    "  - name: web\n    address: 192.0.2.1\n    port: 80\n"
	    "    protocol: tcp\n    backends: [{name: w1, address: 10.0.0.9}]\n");
	put(sub, "a.yaml", FRAG_VIP("api", "443"));
	put(sub, "b.yaml", FRAG_VIP("dns", "53"));
	put(sub, "skip.txt", "not: yaml: at all");

	/* the union, in order: the main file's VIPs, then a.yaml's, b.yaml's */
	mlv_diags_init(&l.d);
	l.err = mlv_config_load(path, &l.cfg, &l.d);
	expect_ok(&l);
	assert_int_equal(l.cfg->n_vips, 3);
	assert_string_equal(l.cfg->vips[0].name, "web");
	assert_string_equal(l.cfg->vips[1].name, "api");
	assert_string_equal(l.cfg->vips[2].name, "dns");
	assert_int_equal(l.cfg->n_includes, 2);
	assert_int_equal(l.d.n_fragments, 2);
	assert_non_null(strstr(mlv_diags_file(&l.d, 2), "vips.d/b.yaml"));
	assert_int_equal(l.cfg->vips[2].pos.file, 2);
	unload(&l);

	/* an error in the second fragment names it, with its line */
	put(sub, "b.yaml", FRAG_VIP("dns", "70000"));
	mlv_diags_init(&l.d);
	l.err = mlv_config_load(path, &l.cfg, &l.d);
	assert_int_equal(l.err, MLV_E_CONFIG);
	e = diag_with(&l.d, "port");
	assert_non_null(e);
	assert_int_equal(e->pos.line, 4);
	assert_non_null(strstr(mlv_diags_file(&l.d, e->pos.file), "vips.d/b.yaml"));
	{
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		mlv_diags_print(&l.d, f);
		fclose(f);
		assert_non_null(strstr(text, "/vips.d/b.yaml:4:11: error:"));
		free(text);
	}
	unload(&l);

	/* the same VIP in two fragments: both places named */
	put(sub, "b.yaml", FRAG_VIP("api", "8443"));
	mlv_diags_init(&l.d);
	l.err = mlv_config_load(path, &l.cfg, &l.d);
	assert_int_equal(l.err, MLV_E_CONFIG);
	e = diag_with(&l.d, "duplicate VIP name 'api'");
	assert_non_null(e);
	assert_non_null(strstr(mlv_diags_file(&l.d, e->pos.file), "b.yaml"));
	assert_non_null(strstr(e->message, "vips.d/a.yaml:2"));
	unload(&l);

	/* a fragment holds only vips:, and only regular files are read */
	put(sub, "b.yaml", "control: {}\n" FRAG_VIP("dns", "53"));
	mlv_diags_init(&l.d);
	l.err = mlv_config_load(path, &l.cfg, &l.d);
	assert_int_equal(l.err, MLV_E_CONFIG);
	e = diag_with(&l.d, "a fragment holds only vips:; 'control'");
	assert_non_null(e);
	assert_int_equal(e->pos.line, 1);
	unload(&l);
	snprintf(path, sizeof(path), "%s/b.yaml", sub);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0600), 0);
	snprintf(path, sizeof(path), "%s/main.yaml", dir);
	mlv_diags_init(&l.d);
	l.err = mlv_config_load(path, &l.cfg, &l.d);   /* must not block */
	assert_int_equal(l.err, MLV_E_CONFIG);
	assert_non_null(diag_with(&l.d, "not a regular file"));
	unload(&l);

	/* a missing directory or a missing plain file is a mistake */
	put(dir, "main.yaml", DP "include: [gone.d/*.yaml, vips.d/x.yaml]\n"
	    "vips: []\n");
	mlv_diags_init(&l.d);
	l.err = mlv_config_load(path, &l.cfg, &l.d);
	assert_int_equal(l.err, MLV_E_CONFIG);
	assert_non_null(diag_with(&l.d, "cannot list"));
	assert_non_null(diag_with(&l.d, "x.yaml: no such file"));
	unload(&l);
	/* `vips:` left empty in the main file takes the fragments' VIPs; the
	 * main file matched by its own pattern is not read as a fragment */
	put(dir, "main.yaml", DP "include: ['*.yaml', vips.d/a.yaml]\nvips:\n");
	mlv_diags_init(&l.d);
	l.err = mlv_config_load(path, &l.cfg, &l.d);
	expect_ok(&l);
	assert_int_equal(l.cfg->n_vips, 1);
	assert_string_equal(l.cfg->vips[0].name, "api");
	unload(&l);

	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

static void set_owner(const char *dir, const char *name, uid_t uid,
		      mode_t mode)
{
	char path[600];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fchown(fd, uid, (gid_t)-1), 0);
	assert_int_equal(fchmod(fd, mode), 0);
	assert_int_equal(close(fd), 0);
}

/* A load for a user reads the main file and its fragments only where the
 * user could: files it owns, files anyone may read; root reads all. */
static void test_load_for_user(void **state)
{
	char dir[] = "/tmp/mlv-loadfor-XXXXXX", path[600], sub[512];
	const struct mlv_diag *e;
	struct load l;

	(void)state;
	if (geteuid() != 0)
		skip();              /* giving files away needs root */
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/vips.d", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(path, sizeof(path), "%s/main.yaml", dir);
	put(dir, "main.yaml", DP "include: [vips.d/*.yaml]\nvips:\n");
	put(sub, "a.yaml", FRAG_VIP("api", "443"));

	/* the user's own files, private to it: read */
	set_owner(dir, "main.yaml", 4242, 0600);
	set_owner(sub, "a.yaml", 4242, 0600);
	mlv_diags_init(&l.d);
	l.err = mlv_config_load_for(path, 4242, &l.cfg, &l.d);
	expect_ok(&l);
	assert_int_equal(l.cfg->n_vips, 1);
	unload(&l);

	/* someone else's private main file: refused, naming both uids */
	mlv_diags_init(&l.d);
	l.err = mlv_config_load_for(path, 4343, &l.cfg, &l.d);
	assert_int_equal(l.err, MLV_E_PERM);
	assert_null(l.cfg);
	e = diag_with(&l.d, "not read for uid 4343: the file belongs to uid 4242");
	assert_non_null(e);
	mlv_diags_free(&l.d);

	/* ... but root, and the daemon's own load, read it */
	mlv_diags_init(&l.d);
	l.err = mlv_config_load_for(path, 0, &l.cfg, &l.d);
	expect_ok(&l);
	unload(&l);

	/* a main file anyone may read, with a private fragment of another
	 * user: the fragment is refused where it is included */
	set_owner(dir, "main.yaml", 0, 0644);
	mlv_diags_init(&l.d);
	l.err = mlv_config_load_for(path, 4343, &l.cfg, &l.d);
	assert_int_equal(l.err, MLV_E_CONFIG);
	e = diag_with(&l.d, "a.yaml: not read for uid 4343");
	assert_non_null(e);
	assert_int_equal(e->pos.line, 4);     /* the include: line */
	unload(&l);

	/* the fragment made readable by others: read */
	set_owner(sub, "a.yaml", 4242, 0604);
	mlv_diags_init(&l.d);
	l.err = mlv_config_load_for(path, 4343, &l.cfg, &l.d);
	expect_ok(&l);
	unload(&l);

	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

static void test_load_file_errors(void **state)
{
	struct mlv_config *cfg = (struct mlv_config *)1;
	struct mlv_diags d;
	(void)state;

	mlv_diags_init(&d);
	assert_int_equal(mlv_config_load("/nonexistent/maglevd.yaml", &cfg, &d), MLV_E_IO);
	assert_null(cfg);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.file, "/nonexistent/maglevd.yaml");
	mlv_diags_free(&d);
}

/* ---- value parsers ---- */

static void test_durations(void **state)
{
	static const struct {
		const char *text;
		uint32_t ms;
	} good[] = {
		{ "0ms", 0 }, { "500ms", 500 }, { "1s", 1000 }, { "5m", 300000 },
		{ "1h", 3600000 }, { "4294967295ms", 4294967295u },
		{ "1193h", 1193u * 3600000u }, { "007s", 7000 },
	};
	static const char *const bad[] = {
		"", "1", "ms", "s", "-1s", "+1s", "1.5s", "1 s", " 1s", "1s ",
		"1sec", "1S", "1d", "1m30s", "4294967296ms", "1194h",
		"99999999999999999999s", "0x10s",
	};
	uint32_t ms;
	size_t i;
	(void)state;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ms = 1;
		assert_true(mlv_parse_duration_ms(good[i].text, &ms));
		assert_int_equal(ms, good[i].ms);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (mlv_parse_duration_ms(bad[i], &ms))
			fail_msg("accepted duration '%s'", bad[i]);
	}
	assert_false(mlv_parse_duration_ms(NULL, &ms));
}

static void test_ip_addresses(void **state)
{
	static const char *const bad[] = {
		"", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1.2.3.4 ",
		" 1.2.3.4", "::g", "1:2:3:4:5:6:7:8:9", "localhost", "1.2.3.4/24",
	};
	struct mlv_ip a, b;
	char buf[MLV_IP_STRLEN];
	size_t i;
	(void)state;

	assert_true(mlv_ip_parse("192.0.2.10", &a));
	assert_int_equal(a.family, MLV_AF_INET);
	assert_int_equal(a.bytes[0], 192);
	assert_int_equal(a.bytes[3], 10);
	for (i = 4; i < 16; i++)
		assert_int_equal(a.bytes[i], 0);
	assert_string_equal(mlv_ip_format(&a, buf, sizeof(buf)), "192.0.2.10");

	assert_true(mlv_ip_parse("2001:DB8:0:0::53", &b));
	assert_int_equal(b.family, MLV_AF_INET6);
	assert_int_equal(b.bytes[0], 0x20);
	assert_int_equal(b.bytes[15], 0x53);
	assert_string_equal(mlv_ip_format(&b, buf, sizeof(buf)), "2001:db8::53");
	assert_false(mlv_ip_equal(&a, &b));
	assert_true(mlv_ip_parse("2001:db8::53", &a));
	assert_true(mlv_ip_equal(&a, &b));
	assert_true(mlv_ip_parse("::ffff:192.0.2.1", &a));
	assert_int_equal(a.family, MLV_AF_INET6);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&a, 0x5a, sizeof(a));
		if (mlv_ip_parse(bad[i], &a))
			fail_msg("accepted IP '%s'", bad[i]);
		assert_int_equal(a.family, 0x5a);   /* untouched on failure */
	}
	assert_false(mlv_ip_parse(NULL, &a));
}

static void test_mac_addresses(void **state)
{
	static const char *const bad[] = {
		"", "02:00:00:00:01", "02:00:00:00:01:21:", "02:00:00:00:01:2",
		"0g:00:00:00:01:21", "02:00-00:00:01:21", "2:0:0:0:1:21",
		"02.00.00.00.01.21", "0200.0000.0121", "02:00:00:00:01:21 ",
	};
	struct mlv_mac m;
	char buf[MLV_MAC_STRLEN];
	size_t i;
	(void)state;

	assert_true(mlv_mac_parse("02:00:00:00:01:21", &m));
	assert_int_equal(m.bytes[0], 0x02);
	assert_int_equal(m.bytes[5], 0x21);
	assert_true(mlv_mac_parse("AA-bb-CC-dd-EE-ff", &m));
	assert_int_equal(m.bytes[0], 0xaa);
	assert_int_equal(m.bytes[5], 0xff);
	assert_string_equal(mlv_mac_format(&m, buf, sizeof(buf)), "aa:bb:cc:dd:ee:ff");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (mlv_mac_parse(bad[i], &m))
			fail_msg("accepted MAC '%s'", bad[i]);
}

/* ---- docs/config.md documents the schema ---- */

struct doc_check {
	const char *doc;
	unsigned missing;
};

/* The table row "| `path` | ... |" of docs/config.md, as a copy. */
static char *doc_row(const char *doc, const char *path)
{
	char head[300];
	const char *row, *end;
	char *copy;

	snprintf(head, sizeof(head), "\n| `%s` |", path);
	row = strstr(doc, head);
	if (row == NULL)
		return NULL;
	row++;
	end = strchr(row, '\n');
	copy = strndup(row, end ? (size_t)(end - row) : strlen(row));
	assert_non_null(copy);
	return copy;
}

static void doc_expect(struct doc_check *dc, const char *path, const char *row,
		       const char *what)
{
	if (row == NULL || strstr(row, what) == NULL) {
		fprintf(stderr, "docs/config.md: row `%s` lacks \"%s\"\n", path, what);
		dc->missing++;
	}
}

static void check_doc_map(struct doc_check *dc, const struct mlv_cfg_map *map,
			  const char *prefix, bool restart_only, bool *health_done);

static void check_doc_key(struct doc_check *dc, const struct mlv_cfg_key *k,
			  const char *path, bool restart_only, bool *health_done)
{
	char *row = doc_row(dc->doc, path);
	char want[96], a[32], b[32];

	if (row == NULL) {
		fprintf(stderr, "docs/config.md: no row for `%s`\n", path);
		dc->missing++;
		return;
	}
	doc_expect(dc, path, row, restart_only ? "| restart-only |" : "| reloadable |");
	if (k->required) {
		doc_expect(dc, path, row, "| required |");
	} else if (k->def != NULL) {
		snprintf(want, sizeof(want), "| `%s` |", k->def);
		doc_expect(dc, path, row, want);
	} else if (k->doc_default != NULL && k->type != MLV_CT_MAP) {
		doc_expect(dc, path, row, k->doc_default);
	}
	if (k->type == MLV_CT_UINT) {
		snprintf(want, sizeof(want), "| %lld..%lld", (long long)k->min,
			 (long long)k->max);
		doc_expect(dc, path, row, want);
	} else if (k->type == MLV_CT_DURATION) {
		snprintf(want, sizeof(want), "| %s..%s |",
			 mlv_cfg_format_duration((uint32_t)k->min, a, sizeof(a)),
			 mlv_cfg_format_duration((uint32_t)k->max, b, sizeof(b)));
		doc_expect(dc, path, row, want);
	} else if (k->type == MLV_CT_MSS_CLAMP) {
		snprintf(want, sizeof(want), "| %lld..%lld |", (long long)k->min,
			 (long long)k->max);
		doc_expect(dc, path, row, want);
		doc_expect(dc, path, row, "`auto` \\| `off` \\| integer");
	} else if (k->type == MLV_CT_TABLE_SIZE) {
		snprintf(want, sizeof(want), "| %u..%u |", MLV_MAGLEV_MIN_SIZE,
			 MLV_MAGLEV_MAX_SIZE);
		doc_expect(dc, path, row, want);
	} else if (k->type == MLV_CT_ENUM) {
		const struct mlv_cfg_enum *e;

		for (e = k->sub; e->name != NULL; e++) {
			snprintf(want, sizeof(want), "`%s`", e->name);
			doc_expect(dc, path, row, want);
		}
	}
	free(row);
	if (k->type == MLV_CT_MAP) {
		const struct mlv_cfg_map *sub = k->sub;

		if (sub->doc_name != NULL && !*health_done) {
			*health_done = true;
			check_doc_map(dc, sub, sub->doc_name, restart_only, health_done);
		}
	} else if (k->type == MLV_CT_LIST) {
		const struct mlv_cfg_list *l = k->sub;
		char prefix[272];

		snprintf(prefix, sizeof(prefix), "%s[]", path);
		check_doc_map(dc, l->elem, prefix, restart_only, health_done);
	}
}

static void check_doc_map(struct doc_check *dc, const struct mlv_cfg_map *map,
			  const char *prefix, bool restart_only, bool *health_done)
{
	unsigned i;

	for (i = 0; i < map->n_keys; i++) {
		const struct mlv_cfg_key *k = &map->keys[i];
		bool restart = restart_only || k->restart_only;
		char path[256];

		snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "",
			 k->name);
		/* Sections are headings, not rows; shared maps get a row. */
		if (k->type == MLV_CT_MAP && ((const struct mlv_cfg_map *)k->sub)->doc_name == NULL)
			check_doc_map(dc, k->sub, map == &mlv_cfg_root ? k->name : path,
				      restart, health_done);
		else
			check_doc_key(dc, k, path, restart, health_done);
	}
}

static void test_docs_cover_schema(void **state)
{
	struct doc_check dc = { read_source_file("docs/config.md"), 0 };
	bool health_done = false;
	(void)state;

	check_doc_map(&dc, &mlv_cfg_root, "", false, &health_done);
	assert_true(health_done);
	assert_int_equal(dc.missing, 0);
	free((char *)dc.doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example_config_loads),
		cmocka_unit_test(test_minimal_example_loads),
		cmocka_unit_test(test_defaults_applied),
		cmocka_unit_test(test_defaults_section_inherited),
		cmocka_unit_test(test_backends_sorted_by_name),
		cmocka_unit_test(test_two_arm_and_families_accepted),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_typo_in_required_key),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_out_of_range),
		cmocka_unit_test(test_new_flow_limits),
		cmocka_unit_test(test_next_hop6),
		cmocka_unit_test(test_host_tap),
		cmocka_unit_test(test_bad_addresses_macs),
		cmocka_unit_test(test_bad_durations),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_tx_port_and_exception),
		cmocka_unit_test(test_address_families),
		cmocka_unit_test(test_every_tx_port_has_the_family),
		cmocka_unit_test(test_missing_backends_warns),
		cmocka_unit_test(test_udp_and_dns_checks),
		cmocka_unit_test(test_l2dsr_mac_from_kernel),
		cmocka_unit_test(test_table_size),
		cmocka_unit_test(test_backend_count_warning),
		cmocka_unit_test(test_backend_limit),
		cmocka_unit_test(test_missing_required),
		cmocka_unit_test(test_health_rules),
		cmocka_unit_test(test_gue_port_only_with_gue),
		cmocka_unit_test(test_control_section),
		cmocka_unit_test(test_announce_section),
		cmocka_unit_test(test_many_errors_collected_in_order),
		cmocka_unit_test(test_diags_print_format),
		cmocka_unit_test(test_alias_bomb),
		cmocka_unit_test(test_size_cap),
		cmocka_unit_test(test_binary_and_encoding),
		cmocka_unit_test(test_empty_and_non_mapping),
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_yaml_syntax_and_structure),
		cmocka_unit_test(test_diag_cap),
		cmocka_unit_test(test_load_file_errors),
		cmocka_unit_test(test_include_fragments),
		cmocka_unit_test(test_load_for_user),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_ip_addresses),
		cmocka_unit_test(test_mac_addresses),
		cmocka_unit_test(test_docs_cover_schema),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
