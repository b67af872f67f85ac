/* SPDX-License-Identifier: BSD-3-Clause */
/* The /metrics page rendered from a fake daemon: the control-socket
 * fixture's state (a YAML config loaded with mlv_config_load_buffer, a
 * generation from mlv_gen_build, cumulative stats, worker counters and
 * conntrack tables), with values the test sets itself and then reads
 * back out of the text. */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <cmocka.h>

#include <jansson.h>

#include "control/health/health.h"
#include "dataplane/bpf/check_path/counters.h"
#include "control/metrics/expo.h"
#include "control/metrics/render.h"
#include "tests/support/ctl_fixture.h"
#include "dataplane/packet/flow_hash.h"
#include "tests/unit/metrics/test_metrics_util.h"

static const struct mlv_gen_vip *vip_named(const struct mlv_generation *gen,
					   const char *name)
{
	for (uint32_t i = 0; i < gen->n_vips; i++)
		if (strcmp(gen->vips[i].name, name) == 0)
			return &gen->vips[i];
	fail_msg("no VIP %s", name);
	return NULL;
}

static uint32_t backend_ix(const struct mlv_generation *gen, const char *vip,
			   const char *backend)
{
	const struct mlv_gen_vip *v = vip_named(gen, vip);

	for (uint32_t i = 0; i < v->n_backends; i++)
		if (strcmp(v->backends[i].name, backend) == 0)
			return mlv_gen_backend_index(gen, &v->backends[i]);
	fail_msg("no backend %s/%s", vip, backend);
	return 0;
}

static struct mlv_metrics_sources sources(struct ctl_fx *fx)
{
	return (struct mlv_metrics_sources){ .ctl = &fx->st };
}

/* Reload through the fixture (same YAML): a new generation, the old one
 * folded into the totals, as in the daemon. */
static void reload(struct ctl_fx *fx)
{
	struct mlv_plan plan = { 0 };
	struct mlv_diags diags;

	mlv_diags_init(&diags);
	assert_int_equal(fx->st.reload(fx, &(struct mlv_ctl_reload_req){
					 .mode = MLV_CTL_RELOAD_APPLY }, &diags, &plan),
			 MLV_OK);
	mlv_plan_free(&plan);
	mlv_diags_free(&diags);
}

/* ---- the writer ---- */

static void test_escaping(void **state)
{
	const struct mlv_expo_label l[2] = {
		{ "vip", "a\"b\\c\nd" }, { "backend", "plain" },
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	mlv_expo_family(f, "maglevd_x_total", MLV_EXPO_COUNTER,
			"say \"hi\" \\ then\nmore");
	mlv_expo_sample_u64(f, "maglevd_x_total", l, 2, UINT64_MAX);
	mlv_expo_sample_double(f, "maglevd_y", NULL, 0, 0.5);
	mlv_expo_sample_double(f, "maglevd_y", NULL, 0, 1.0 / 0.0);
	mlv_expo_sample_double(f, "maglevd_y", NULL, 0, -1.0 / 0.0);
	mlv_expo_sample_double(f, "maglevd_y", NULL, 0, 0.0 / 0.0);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf,
		"# HELP maglevd_x_total say \"hi\" \\\\ then\\nmore\n"
		"# TYPE maglevd_x_total counter\n"
		"maglevd_x_total{vip=\"a\\\"b\\\\c\\nd\",backend=\"plain\"} "
		"18446744073709551615\n"
		"maglevd_y 0.5\n"
		"maglevd_y +Inf\n"
		"maglevd_y -Inf\n"
		"maglevd_y NaN\n");
	free(buf);
}

/* A histogram series as the format defines it, and the bounds written
 * as the Prometheus client libraries write them. */
static void test_histogram_writer(void **state)
{
	static const char *const le[] = { "0.5", "1" };
	static const uint64_t cumulative[] = { 1, 3 };
	const struct mlv_expo_label l[2] = {
		{ "vip", "a\"b" }, { "backend", "c" },
	};
	char *buf = NULL, bound[MLV_EXPO_BOUND_MAX];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	mlv_expo_family(f, "maglevd_h_seconds", MLV_EXPO_HISTOGRAM, "help");
	mlv_expo_histogram(f, "maglevd_h_seconds", l, 2, le, cumulative, 2, 4,
			   1.25);
	mlv_expo_histogram(f, "maglevd_h_seconds", NULL, 0, le, cumulative, 0,
			   0, 0);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf,
		"# HELP maglevd_h_seconds help\n"
		"# TYPE maglevd_h_seconds histogram\n"
		"maglevd_h_seconds_bucket{vip=\"a\\\"b\",backend=\"c\",le=\"0.5\"} 1\n"
		"maglevd_h_seconds_bucket{vip=\"a\\\"b\",backend=\"c\",le=\"1\"} 3\n"
		"maglevd_h_seconds_bucket{vip=\"a\\\"b\",backend=\"c\",le=\"+Inf\"} 4\n"
		"maglevd_h_seconds_sum{vip=\"a\\\"b\",backend=\"c\"} 1.25\n"
		"maglevd_h_seconds_count{vip=\"a\\\"b\",backend=\"c\"} 4\n"
		"maglevd_h_seconds_bucket{le=\"+Inf\"} 0\n"
		"maglevd_h_seconds_sum 0\n"
		"maglevd_h_seconds_count 0\n");
	tm_check_structure(buf);
	free(buf);

	/* the shortest text that reads back, not %.17g's 0.10000000000000001 */
	mlv_expo_format_bound(bound, sizeof(bound), 500000 / 1e9);
	assert_string_equal(bound, "0.0005");
	mlv_expo_format_bound(bound, sizeof(bound), 0.1);
	assert_string_equal(bound, "0.1");
	mlv_expo_format_bound(bound, sizeof(bound), 2500000000 / 1e9);
	assert_string_equal(bound, "2.5");
	mlv_expo_format_bound(bound, sizeof(bound), 1.0);
	assert_string_equal(bound, "1");
	mlv_expo_format_bound(bound, sizeof(bound), 1.0 / 3.0);
	assert_true(strtod(bound, NULL) == 1.0 / 3.0);
	mlv_expo_format_bound(bound, sizeof(bound), 1.0 / 0.0);
	assert_string_equal(bound, "+Inf");
}

/* The structure check the other tests rely on finds broken histograms
 * (promtool 2.42 lets every one of these through). */
static void test_histogram_structure_check(void **state)
{
	static const char head[] =
		"# HELP maglevd_h_seconds h\n# TYPE maglevd_h_seconds histogram\n";
	static const struct {
		const char *body, *why;
	} bad[] = {
		{ "maglevd_h_seconds_bucket{le=\"1\"} 1\n"
		  "maglevd_h_seconds_sum 1\nmaglevd_h_seconds_count 1\n",
		  "no le=\"+Inf\"" },
		{ "maglevd_h_seconds_bucket{le=\"1\"} 3\n"
		  "maglevd_h_seconds_bucket{le=\"+Inf\"} 2\n"
		  "maglevd_h_seconds_sum 1\nmaglevd_h_seconds_count 2\n",
		  "not cumulative" },
		{ "maglevd_h_seconds_bucket{le=\"2\"} 1\n"
		  "maglevd_h_seconds_bucket{le=\"1\"} 1\n"
		  "maglevd_h_seconds_bucket{le=\"+Inf\"} 2\n"
		  "maglevd_h_seconds_sum 1\nmaglevd_h_seconds_count 2\n",
		  "out of order" },
		{ "maglevd_h_seconds_bucket{le=\"+Inf\"} 2\n"
		  "maglevd_h_seconds_sum 1\nmaglevd_h_seconds_count 3\n",
		  "+Inf bucket 2, _count 3" },
		{ "maglevd_h_seconds_bucket{le=\"+Inf\"} 2\n"
		  "maglevd_h_seconds_count 2\n",
		  "0 _sum and 1 _count" },
		{ "maglevd_h_seconds{le=\"+Inf\"} 2\n",
		  "outside its histogram family" },
	};
	char page[512], why[512];

	(void)state;
	snprintf(page, sizeof(page), "%s"
		 "maglevd_h_seconds_bucket{vip=\"a\",le=\"1\"} 1\n"
		 "maglevd_h_seconds_bucket{vip=\"a\",le=\"+Inf\"} 2\n"
		 "maglevd_h_seconds_sum{vip=\"a\"} 1.5\n"
		 "maglevd_h_seconds_count{vip=\"a\"} 2\n"
		 "maglevd_h_seconds_bucket{vip=\"b\",le=\"1\"} 0\n"
		 "maglevd_h_seconds_bucket{vip=\"b\",le=\"+Inf\"} 0\n"
		 "maglevd_h_seconds_sum{vip=\"b\"} 0\n"
		 "maglevd_h_seconds_count{vip=\"b\"} 0\n", head);
	assert_null(tm_structure_problem(page, why, sizeof(why)));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(page, sizeof(page), "%s%s", head, bad[i].body);
		if (!tm_structure_problem(page, why, sizeof(why)))
			fail_msg("accepted:\n%s", page);
		if (!strstr(why, bad[i].why))
			fail_msg("wanted \"%s\", got \"%s\"", bad[i].why, why);
	}
}

/* ---- counters ---- */

static void test_flow_counters_survive_reload(void **state)
{
	struct ctl_fx fx;
	struct mlv_metrics_sources src;
	uint32_t b;
	char *page;

	(void)state;
	ctl_fx_init(&fx);
	src = sources(&fx);
	b = backend_ix(fx.gen, "web", "web-1");
	fx.gen->backend_ctr[0][b].v[MLV_FLOW_PACKETS] = 11;
	fx.gen->backend_ctr[1][b].v[MLV_FLOW_PACKETS] = 22;
	fx.gen->backend_ctr[1][b].v[MLV_FLOW_BYTES] = 3000;
	fx.gen->backend_ctr[0][b].v[MLV_FLOW_NEW_FLOWS] = 5;
	fx.gen->backend_ctr[0][backend_ix(fx.gen, "dns", "dns-1")]
		.v[MLV_FLOW_PACKETS] = 3;
	fx.gen->backend_ctr[1][backend_ix(fx.gen, "dns", "dns-2")]
		.v[MLV_FLOW_PACKETS] = 4;
	/* tracked connections: the workers' tallies, which outlive it */
	uint32_t uid = fx.gen->all_backends[b].uid;

	fx.tally[0][mlv_tally_slot(uid)].n[MLV_TALLY_ACTIVE] = 2;
	fx.tally[1][mlv_tally_slot(uid)].n[MLV_TALLY_ACTIVE] = 1;
	fx.tally[1][mlv_tally_slot(uid)].n[MLV_TALLY_INACTIVE] = 4;
	/* drops of web's own */
	fx.gen->vip_drops[0][mlv_gen_vip_index(fx.gen,
		mlv_gen_find_vip_named(fx.gen, "web"))].v[MLV_VDROP_NO_BACKEND] = 6;
	reload(&fx);                 /* folds the first generation */
	b = backend_ix(fx.gen, "web", "web-1");
	fx.gen->backend_ctr[1][b].v[MLV_FLOW_PACKETS] = 100;
	fx.gen->vip_drops[1][mlv_gen_vip_index(fx.gen,
		mlv_gen_find_vip_named(fx.gen, "web"))].v[MLV_VDROP_NO_BACKEND] = 1;

	page = tm_render(&src, NULL);
	tm_check_structure(page);
	assert_true(tm_value(page, "maglevd_backend_packets_total"
			     "{vip=\"web\",backend=\"web-1\"}") == 11 + 22 + 100);
	assert_true(tm_value(page, "maglevd_backend_bytes_total"
			     "{vip=\"web\",backend=\"web-1\"}") == 3000);
	assert_true(tm_value(page, "maglevd_backend_new_flows_total"
			     "{vip=\"web\",backend=\"web-1\"}") == 5);
	assert_true(tm_value(page, "maglevd_backend_packets_total"
			     "{vip=\"web\",backend=\"web-2\"}") == 0);
	/* a VIP's counters: its backends', summed across the reload */
	assert_true(tm_value(page, "maglevd_vip_packets_total{vip=\"dns\"}") == 3 + 4);
	assert_true(tm_value(page, "maglevd_vip_packets_total{vip=\"web\"}") == 11 + 22 + 100);
	assert_true(tm_value(page, "maglevd_vip_bytes_total{vip=\"web\"}") == 3000);
	assert_true(tm_value(page, "maglevd_backend_active_connections"
			     "{vip=\"web\",backend=\"web-1\"}") == 2 + 1);
	assert_true(tm_value(page, "maglevd_backend_inactive_connections"
			     "{vip=\"web\",backend=\"web-1\"}") == 4);
	assert_true(tm_value(page, "maglevd_backend_active_connections"
			     "{vip=\"web\",backend=\"web-2\"}") == 0);
	assert_true(tm_value(page, "maglevd_vip_dropped_packets_total"
			     "{vip=\"web\",reason=\"no_backend\"}") == 6 + 1);
	assert_true(tm_value(page, "maglevd_vip_dropped_packets_total"
			     "{vip=\"dns\",reason=\"no_backend\"}") == 0);
	assert_true(tm_value(page, "maglevd_generation") == fx.gen->number);
	assert_true(fx.gen->number >= 2);
	free(page);
	ctl_fx_free(&fx);
}

static void test_worker_counters_and_drops(void **state)
{
	struct ctl_fx fx;
	struct mlv_metrics_sources src;
	char *page;

	(void)state;
	ctl_fx_init(&fx);
	src = sources(&fx);
	fx.ctr[0].ctr[MLV_CTR_RX_PACKETS] = 1000;
	fx.ctr[1].ctr[MLV_CTR_RX_PACKETS] = 2000;
	fx.ctr[1].ctr[MLV_CTR_RX_BYTES] = 64000;
	fx.ctr[0].drop[MLV_DROP_NOT_VIP] = 3;
	fx.ctr[1].drop[MLV_DROP_NOT_VIP] = 4;
	fx.ctr[1].drop[MLV_DROP_TX_FULL] = 9;

	page = tm_render(&src, NULL);
	tm_check_structure(page);
	assert_true(tm_value(page, "maglevd_worker_rx_packets_total{worker=\"0\"}") == 1000);
	assert_true(tm_value(page, "maglevd_worker_rx_packets_total{worker=\"1\"}") == 2000);
	assert_true(tm_value(page, "maglevd_worker_rx_bytes_total{worker=\"1\"}") == 64000);
	assert_true(tm_value(page, "maglevd_dropped_packets_total"
			     "{worker=\"0\",reason=\"not_vip\"}") == 3);
	assert_true(tm_value(page, "maglevd_dropped_packets_total"
			     "{worker=\"1\",reason=\"not_vip\"}") == 4);
	assert_true(tm_value(page, "maglevd_dropped_packets_total"
			     "{worker=\"1\",reason=\"tx_full\"}") == 9);
	assert_true(tm_value(page, "maglevd_dropped_packets_total"
			     "{worker=\"0\",reason=\"tx_full\"}") == 0);
	/* every counter of the X-macro has its family, with a unit where
	 * its own name has none (docs/metrics.md, "Renamed metrics") */
	for (int c = 0; c < MLV_CTR__COUNT; c++) {
		const char *n = mlv_worker_counter_name((enum mlv_worker_counter)c);
		char family[128];

		snprintf(family, sizeof(family), "# TYPE maglevd_worker_%s%s_total counter",
			 strcmp(n, "busy_cycles") == 0 ? "busy_seconds" : n,
			 strcmp(n, "forwarded") == 0 || strcmp(n, "icmp_sent") == 0 ||
			 strcmp(n, "exception") == 0 ? "_packets" : "");
		if (!tm_has(page, family))
			fail_msg("no %s", family);
	}
	assert_false(tm_has(page, "maglevd_worker_forwarded_total"));
	assert_false(tm_has(page, "maglevd_worker_busy_cycles_total"));
	/* busy cycles in seconds, at the TSC rate the daemon reports */
	fx.ctr[1].ctr[MLV_CTR_BUSY_CYCLES] = 3000000000ull;
	fx.st.tsc_hz = 2000000000ull;
	free(page);
	page = tm_render(&src, NULL);
	assert_true(tm_value(page, "maglevd_worker_busy_seconds_total{worker=\"1\"}") == 1.5);
	/* an unknown rate leaves the family out rather than guess */
	fx.st.tsc_hz = 0;
	free(page);
	page = tm_render(&src, NULL);
	assert_false(tm_has(page, "maglevd_worker_busy_seconds_total"));
	/* a missing worker block is skipped, not a crash */
	fx.ctr_ptr[1] = NULL;
	free(page);
	page = tm_render(&src, NULL);
	assert_true(tm_has(page, "maglevd_worker_rx_packets_total{worker=\"0\"}"));
	assert_false(tm_has(page, "maglevd_worker_rx_packets_total{worker=\"1\"}"));
	free(page);
	ctl_fx_free(&fx);
}

static void test_conntrack_occupancy(void **state)
{
	struct ctl_fx fx;
	struct mlv_metrics_sources src;
	char *page;

	(void)state;
	ctl_fx_init(&fx);
	src = sources(&fx);
	for (uint16_t i = 0; i < 10; i++) {
		struct mlv_flow_key k = { .proto = IPPROTO_UDP, .family = 4,
					  .sport = (uint16_t)(1000 + i), .dport = 53 };
		struct mlv_ct_entry *e;
		bool is_new;
		uint32_t h;

		k.src[0] = 10;
		k.dst[0] = 192;
		h = mlv_flow_hash(&k);
		e = mlv_ct_lookup_or_insert(fx.ct[1], &k, h, 1, &is_new);
		assert_true(is_new);
		e->backend_uid = 1;
		mlv_ct_update(fx.ct[1], e, 0, 1);
	}
	page = tm_render(&src, NULL);
	assert_true(tm_value(page, "maglevd_conntrack_entries{worker=\"0\"}") == 0);
	assert_true(tm_value(page, "maglevd_conntrack_entries{worker=\"1\"}") == 10);
	/* the fixture asks for 1024 entries per worker */
	assert_true(tm_value(page, "maglevd_conntrack_entries_limit{worker=\"1\"}") == 1024);
	free(page);
	ctl_fx_free(&fx);
}

/* ---- state gauges ---- */

static double backend_value(const char *page, const char *family,
			    const char *vip, const char *backend)
{
	char series[256];

	snprintf(series, sizeof(series), "%s{vip=\"%s\",backend=\"%s\"}",
		 family, vip, backend);
	return tm_value(page, series);
}

/* Second chance's gauges: only for second_chance VIPs; after a backend
 * joins, the slots that carry their previous owner (as the generation
 * has them) and the window's seconds left. */
static void test_second_chance_gauges(void **state)
{
	static const char head[] =
		"dataplane:\n"
		"  ports:\n"
		"    - {name: ext, device: net_null0, address: 10.99.0.1,\n"
		"       next_hop: \"02:00:00:00:00:fe\"}\n"
		"defaults: {table_size: 1009, health: {type: none}}\n"
		"vips:\n"
		"  - {name: plain, address: 192.0.2.11, port: 80, protocol: tcp,\n"
		"     backends: [{name: p1, address: 10.99.1.31}]}\n"
		"  - name: sc\n    address: 192.0.2.10\n    port: 80\n"
		"    protocol: tcp\n    forwarding: gue\n"
		"    second_chance: {enabled: true, window: 2m}\n"
		"    backends:\n"
		"      - {name: s1, address: 10.99.1.11}\n"
		"      - {name: s2, address: 10.99.1.12}\n";
	char three[1024];
	struct ctl_fx fx;
	struct mlv_metrics_sources src;
	const struct mlv_gen_vip *v = NULL;
	double left, n = 0;
	char *page;

	(void)state;
	ctl_fx_init(&fx);
	fx.reload_yaml = head;
	reload(&fx);
	src = sources(&fx);
	page = tm_render(&src, NULL);
	assert_true(tm_value(page, "maglevd_vip_second_chance_previous_slots{vip=\"sc\"}") == 0);
	assert_true(tm_value(page, "maglevd_vip_second_chance_window_left_seconds{vip=\"sc\"}") == 0);
	assert_false(tm_has(page, "maglevd_vip_second_chance_previous_slots{vip=\"plain\"}"));
	free(page);

	snprintf(three, sizeof(three), "%s%s", head,
		 "      - {name: s3, address: 10.99.1.13}\n");
	fx.reload_yaml = three;
	reload(&fx);
	for (uint32_t i = 0; i < fx.gen->n_vips; i++)
		if (strcmp(fx.gen->vips[i].name, "sc") == 0)
			v = &fx.gen->vips[i];
	assert_non_null(v);
	assert_non_null(v->previous);
	for (uint32_t s = 0; s < v->table_size; s++)
		n += v->previous[s] != MLV_GEN_NO_HOP;
	assert_true(n > 0);
	page = tm_render(&src, NULL);
	tm_check_structure(page);
	assert_true(tm_value(page, "maglevd_vip_second_chance_previous_slots{vip=\"sc\"}") == n);
	left = tm_value(page, "maglevd_vip_second_chance_window_left_seconds{vip=\"sc\"}");
	assert_true(left > 110 && left <= 120);
	free(page);
	ctl_fx_free(&fx);
}

static void test_backend_state(void **state)
{
	static const char *const web[] = { "web-1", "web-2", "web-3", "web-4" };
	struct ctl_fx fx;
	struct mlv_metrics_sources src;
	double sum = 0, s1, s4;
	char *page;

	(void)state;
	ctl_fx_init(&fx);
	src = sources(&fx);
	page = tm_render(&src, NULL);
	tm_check_structure(page);
	/* the fixture's web: web-1 and web-2 weight 100, web-3 drained,
	 * web-4 weight 200, table size 1009 */
	assert_true(tm_value(page, "maglevd_vip_table_slots{vip=\"web\"}") == 1009);
	for (int i = 0; i < 4; i++)
		sum += backend_value(page, "maglevd_backend_slots", "web", web[i]);
	assert_true(sum == 1009);
	assert_true(backend_value(page, "maglevd_backend_slots", "web", "web-3") == 0);
	assert_true(backend_value(page, "maglevd_backend_draining", "web", "web-3") == 1);
	assert_true(backend_value(page, "maglevd_backend_draining", "web", "web-1") == 0);
	assert_true(backend_value(page, "maglevd_backend_up", "web", "web-3") == 1);
	assert_true(backend_value(page, "maglevd_backend_weight", "web", "web-4") == 200);
	s1 = backend_value(page, "maglevd_backend_slots", "web", "web-1");
	s4 = backend_value(page, "maglevd_backend_slots", "web", "web-4");
	assert_true(s4 > 1.9 * s1 && s4 < 2.1 * s1);
	assert_true(tm_value(page, "maglevd_vip_backends{vip=\"web\"}") == 4);
	assert_true(tm_value(page, "maglevd_vip_backends_usable{vip=\"web\"}") == 3);
	assert_true(tm_has(page, "maglevd_vip_info{vip=\"dns\",address=\"2001:db8::10\","
			   "port=\"53\",protocol=\"udp\",forwarding=\"gue\"} 1"));
	assert_true(tm_has(page, "maglevd_backend_info{vip=\"web\",backend=\"web-2\","
			   "address=\"10.99.1.12\"} 1"));
	free(page);

	/* web-2 fails its checks: the next generation leaves it out */
	snprintf(fx.down_vip, sizeof(fx.down_vip), "web");
	snprintf(fx.down_backend, sizeof(fx.down_backend), "web-2");
	reload(&fx);
	page = tm_render(&src, NULL);
	assert_true(backend_value(page, "maglevd_backend_up", "web", "web-2") == 0);
	assert_true(backend_value(page, "maglevd_backend_slots", "web", "web-2") == 0);
	assert_true(backend_value(page, "maglevd_backend_up", "web", "web-1") == 1);
	assert_true(tm_value(page, "maglevd_vip_backends_usable{vip=\"web\"}") == 2);
	sum = 0;
	for (int i = 0; i < 4; i++)
		sum += backend_value(page, "maglevd_backend_slots", "web", web[i]);
	assert_true(sum == 1009);
	free(page);
	ctl_fx_free(&fx);
}

/* ---- reloads, start time, build ---- */

static void test_reloads_and_times(void **state)
{
	struct mlv_metrics_renderer *r;
	struct mlv_metrics_sources src;
	struct timespec t0, t1;
	struct ctl_fx fx;
	double start, ok_time;
	char *page;
	size_t len;

	(void)state;
	clock_gettime(CLOCK_REALTIME, &t0);
	ctl_fx_init(&fx);
	clock_gettime(CLOCK_REALTIME, &t1);
	src = sources(&fx);
	assert_int_equal(mlv_metrics_renderer_create(&r), MLV_OK);

	assert_int_equal(mlv_metrics_render(r, &src, &page, &len), MLV_OK);
	start = tm_value(page, "maglevd_start_time_seconds");
	assert_true(start >= (double)t0.tv_sec - 1 && start <= (double)t1.tv_sec + 1);
	/* no reload yet: the start's load counts as the last success */
	assert_true(tm_value(page, "maglevd_last_reload_success_timestamp_seconds") == start);
	assert_true(tm_value(page, "maglevd_last_reload_successful") == 1);
	assert_true(tm_value(page, "maglevd_reloads_total{result=\"ok\"}") == 0);
	assert_true(tm_value(page, "maglevd_build_info{version=\"" MLV_TEST_VERSION "\"}") == 1);
	free(page);

	mlv_ctl_note_reload(&fx.st, true, 2, NULL);
	mlv_ctl_note_reload(&fx.st, true, 3, NULL);
	mlv_ctl_note_reload(&fx.st, false, 3, "vips[0]: bad");
	assert_int_equal(mlv_metrics_render(r, &src, &page, &len), MLV_OK);
	assert_true(tm_value(page, "maglevd_reloads_total{result=\"ok\"}") == 2);
	assert_true(tm_value(page, "maglevd_reloads_total{result=\"failed\"}") == 1);
	assert_true(tm_value(page, "maglevd_last_reload_successful") == 0);
	ok_time = tm_value(page, "maglevd_last_reload_success_timestamp_seconds");
	assert_true(ok_time >= (double)t0.tv_sec);
	free(page);

	/* enough failures to push every success out of the reload log: the
	 * renderer still knows when the last one was */
	for (int i = 0; i < MLV_CTL_RELOAD_HISTORY; i++)
		mlv_ctl_note_reload(&fx.st, false, 3, "bad");
	assert_int_equal(mlv_metrics_render(r, &src, &page, &len), MLV_OK);
	assert_true(tm_value(page, "maglevd_last_reload_success_timestamp_seconds") == ok_time);
	assert_true(tm_value(page, "maglevd_reloads_total{result=\"failed\"}") ==
		    1 + MLV_CTL_RELOAD_HISTORY);
	/* the start time does not move between scrapes */
	assert_true(tm_value(page, "maglevd_start_time_seconds") == start);
	free(page);
	mlv_metrics_renderer_destroy(r);
	ctl_fx_free(&fx);
}

/* ---- optional sources ---- */

/* The fake interfaces, eth0 unreadable when *ctx says so, or every
 * one of them with fail_all. */
static bool fail_all;

static enum mlv_err fake_steer(void *ctx, uint32_t i, const char **interface,
			       uint64_t out[MLV_STEER_CTR__COUNT])
{
	const bool *fail = ctx;
	enum mlv_err err = tm_fake_steer(NULL, i, interface, out);

	if (err == MLV_OK && (fail_all || (*fail && i == 0)))
		return MLV_E_IO;
	return err;
}

static void test_xdp_steering(void **state)
{
	struct ctl_fx fx;
	struct mlv_metrics_sources src;
	bool fail = false;
	char *page;

	(void)state;
	ctl_fx_init(&fx);
	src = sources(&fx);
	page = tm_render(&src, NULL);
	assert_false(tm_has(page, "# TYPE maglevd_xdp_steer_frames_total"));
	free(page);

	src.steer_counters = fake_steer;
	src.steer_ctx = &fail;
	page = tm_render(&src, NULL);
	tm_check_structure(page);
	assert_true(tm_value(page, "maglevd_xdp_steer_frames_total"
			     "{interface=\"eth0\",outcome=\"redirect_vip\"}") ==
		    1000 + MLV_STEER_CTR_REDIRECT_VIP);
	assert_true(tm_value(page, "maglevd_xdp_steer_frames_total"
			     "{interface=\"eth1\",outcome=\"pass_no_socket\"}") ==
		    2000 + MLV_STEER_CTR_PASS_NO_SOCKET);
	free(page);

	fail = true;                 /* eth0's maps unreadable: eth1 only */
	page = tm_render(&src, NULL);
	tm_check_structure(page);
	assert_false(tm_has(page, "maglevd_xdp_steer_frames_total{interface=\"eth0\""));
	assert_true(tm_has(page, "maglevd_xdp_steer_frames_total{interface=\"eth1\""));
	free(page);

	fail_all = true;             /* none readable: family left out */
	page = tm_render(&src, NULL);
	assert_false(tm_has(page, "# TYPE maglevd_xdp_steer_frames_total"));
	tm_check_structure(page);
	free(page);
	fail_all = false;
	ctl_fx_free(&fx);
}

/* control.metrics_backend_series: false leaves out every family with a
 * backend label, and nothing else. */
static void test_no_backend_series(void **state)
{
	struct mlv_metrics_sources src;
	struct ctl_fx fx;
	char *page;

	(void)state;
	ctl_fx_init(&fx);
	src = sources(&fx);
	assert_true(fx.cfg->metrics_backend_series);    /* the default */
	page = tm_render(&src, NULL);
	assert_true(tm_has(page, "maglevd_backend_up{"));
	assert_true(tm_has(page, "maglevd_backend_packets_total{"));
	free(page);

	fx.cfg->metrics_backend_series = false;
	page = tm_render(&src, NULL);
	tm_check_structure(page);
	assert_null(strstr(page, "backend=\""));
	assert_null(strstr(page, "maglevd_backend_"));
	assert_true(tm_has(page, "maglevd_vip_packets_total{vip=\"web\"}"));
	assert_true(tm_has(page, "maglevd_vip_backends_usable{vip=\"web\"}"));
	assert_true(tm_has(page, "maglevd_worker_rx_packets_total{"));
	free(page);
	ctl_fx_free(&fx);
}

/* NIC counters per port, with the error-like xstats only. */
static void test_ports(void **state)
{
	struct mlv_metrics_sources src;
	struct ctl_fx fx;
	char *page;

	(void)state;
	ctl_fx_init(&fx);
	src = sources(&fx);
	page = tm_render(&src, NULL);
	assert_false(tm_has(page, "# TYPE maglevd_port_rx_packets_total"));
	free(page);

	fx.st.port_stats = tm_fake_ports;
	page = tm_render(&src, NULL);
	tm_check_structure(page);
	assert_true(tm_value(page, "maglevd_port_rx_packets_total{port=\"ext\"}") == 100);
	assert_true(tm_value(page, "maglevd_port_rx_missed_packets_total{port=\"ext\"}") == 7);
	assert_true(tm_value(page, "maglevd_port_tx_bytes_total{port=\"ext\"}") == 6400);
	assert_true(tm_value(page, "maglevd_port_rx_mbuf_allocation_errors_total{port=\"ext\"}") == 0);
	/* a port without counters has no series rather than zeros */
	assert_false(tm_has(page, "maglevd_port_rx_packets_total{port=\"int\"}"));
	assert_true(tm_value(page, "maglevd_port_xstat_errors_total"
			     "{port=\"ext\",xstat=\"rx_missed_errors\"}") == 7);
	assert_true(tm_value(page, "maglevd_port_xstat_errors_total"
			     "{port=\"ext\",xstat=\"rx_q0_errors\"}") == 1);
	assert_false(tm_has(page, "maglevd_port_xstat_errors_total"
			    "{port=\"ext\",xstat=\"rx_good_packets\"}"));
	/* links: the bond's up, int's down; each member's state and
	 * counters under its own device name */
	assert_true(tm_value(page, "maglevd_port_link_up{port=\"ext\"}") == 1);
	assert_true(tm_value(page, "maglevd_port_link_up{port=\"int\"}") == 0);
	assert_true(tm_value(page, "maglevd_port_member_link_up"
			     "{port=\"ext\",member=\"net_af_packet0\"}") == 0);
	assert_true(tm_value(page, "maglevd_port_member_link_up"
			     "{port=\"ext\",member=\"net_af_packet1\"}") == 1);
	assert_true(tm_value(page, "maglevd_port_member_active"
			     "{port=\"ext\",member=\"net_af_packet0\"}") == 0);
	assert_true(tm_value(page, "maglevd_port_member_active"
			     "{port=\"ext\",member=\"net_af_packet1\"}") == 1);
	assert_true(tm_value(page, "maglevd_port_member_packets_total"
			     "{port=\"ext\",member=\"net_af_packet0\",direction=\"rx\"}") == 60);
	assert_true(tm_value(page, "maglevd_port_member_packets_total"
			     "{port=\"ext\",member=\"net_af_packet1\",direction=\"tx\"}") == 30);
	assert_true(tm_value(page, "maglevd_port_member_errors_total"
			     "{port=\"ext\",member=\"net_af_packet0\",direction=\"rx\"}") == 2);
	assert_true(tm_value(page, "maglevd_port_member_errors_total"
			     "{port=\"ext\",member=\"net_af_packet1\",direction=\"tx\"}") == 1);
	assert_false(tm_has(page, "maglevd_port_member_link_up{port=\"int\""));
	free(page);
	ctl_fx_free(&fx);
}

/* A state of its own, since the fixture's VIPs have no checks:
 * tm_checked_config's VIPs, their generation, and an engine that checks
 * them (nothing run yet). */
struct checked_state {
	struct mlv_config *cfg;
	struct mlv_health *h;
	struct mlv_ctl_state st;
	struct mlv_metrics_sources src;
};

static struct mlv_generation *checked_gen;

static const struct mlv_generation *get_checked_gen(void *ctx)
{
	(void)ctx;
	return checked_gen;
}

static void checked_init(struct checked_state *c, uint16_t port)
{
	struct mlv_health_options ho = { .seed = 1 };
	struct mlv_gen_port_info ports[MLV_MAX_PORTS];

	memset(c, 0, sizeof(*c));
	c->cfg = tm_checked_config(port);
	memset(ports, 0, sizeof(ports));
	assert_int_equal(mlv_gen_build(c->cfg, ports, 1, 1, NULL, NULL, NULL,
				       &checked_gen), MLV_OK);
	assert_int_equal(mlv_health_create(&ho, &c->h), MLV_OK);
	assert_int_equal(mlv_health_sync(c->h, c->cfg, NULL), MLV_OK);
	c->st.generation = get_checked_gen;
	c->st.health = c->h;
	/* src points into c: c stays where it is until checked_free */
	c->src.ctl = &c->st;
}

static void checked_free(struct checked_state *c)
{
	mlv_health_destroy(c->h);
	mlv_gen_free(checked_gen);
	checked_gen = NULL;
	mlv_config_free(c->cfg);
}

static void test_health_engine(void **state)
{
	struct mlv_health_stats hs;
	struct checked_state c;
	char *page;

	(void)state;
	/* port 9 (discard): nothing runs in this test anyway */
	checked_init(&c, 9);
	page = tm_render(&c.src, NULL);
	tm_check_structure(page);
	/* a new probe starts up (health.h); nothing has run yet */
	assert_true(tm_value(page, "maglevd_backend_check_up{vip=\"web\",backend=\"web-1\"}") == 1);
	assert_false(tm_has(page, "maglevd_backend_check_up{vip=\"quiet\""));
	assert_true(tm_value(page, "maglevd_vip_all_backends_down{vip=\"web\"}") == 0);
	/* the gauge mirrors the engine's own figure */
	mlv_health_stats(c.h, &hs);
	assert_true(hs.n_probes >= 1);
	assert_true(tm_value(page, "maglevd_health_probes") == hs.n_probes);
	assert_true(tm_value(page, "maglevd_health_checks_ok_total") == 0);
	assert_true(tm_has(page, "# TYPE maglevd_health_transitions_total counter"));
	/* no stats, no workers in this state: those families are left out */
	assert_false(tm_has(page, "maglevd_backend_packets_total"));
	assert_false(tm_has(page, "maglevd_worker_rx_packets_total"));
	assert_false(tm_has(page, "maglevd_conntrack_entries"));
	/* no data-path checks attached: their family is left out */
	assert_false(tm_has(page, "maglevd_health_data_path_packets_total"));
	free(page);
	checked_free(&c);
}

/* mlv_ctl_state.check_path_counters: carried 11, returned 7, dropped 2,
 * once attached (ctx points at whether they are). */
static bool fake_check_path(void *ctx, uint64_t *out)
{
	if (!*(bool *)ctx)
		return false;
	out[MLV_CP_CTR_CARRIED] = 11;
	out[MLV_CP_CTR_RETURNED] = 7;
	out[MLV_CP_CTR_DROPPED] = 2;
	return true;
}

/* The data-path checks' packets, one sample per counter, while the
 * programs are attached; nothing before. */
static void test_check_path_counters(void **state)
{
	struct checked_state c;
	bool attached = false;
	char *page;

	(void)state;
	checked_init(&c, 9);
	c.st.check_path_counters = fake_check_path;
	c.st.ctx = &attached;
	page = tm_render(&c.src, NULL);
	assert_false(tm_has(page, "maglevd_health_data_path_packets_total"));
	free(page);
	attached = true;
	page = tm_render(&c.src, NULL);
	tm_check_structure(page);
	assert_true(tm_has(page, "# TYPE maglevd_health_data_path_packets_total counter"));
	assert_true(tm_value(page, "maglevd_health_data_path_packets_total"
			     "{counter=\"carried\"}") == 11);
	assert_true(tm_value(page, "maglevd_health_data_path_packets_total"
			     "{counter=\"returned\"}") == 7);
	assert_true(tm_value(page, "maglevd_health_data_path_packets_total"
			     "{counter=\"dropped\"}") == 2);
	free(page);
	checked_free(&c);
}

/* The buckets docs/metrics.md promises, in its order. */
static const char *const documented_le[] = {
	"0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1",
	"0.25", "0.5", "1", "2.5", "5", "+Inf",
};

/* One pair's histogram and results on the page, against the engine's own
 * figures and against what a histogram must be. Returns its _count. */
static double assert_pair_histogram(const char *page, struct mlv_health *h,
				    const char *backend,
				    enum mlv_health_result all_are)
{
	const size_t n_le = sizeof(documented_le) / sizeof(documented_le[0]);
	struct mlv_health_durations d;
	struct mlv_health_status st;
	char series[256];
	double v, prev = 0, count, sum, by_result = 0;

	assert_int_equal(mlv_health_check_durations(h, "web", backend, &d),
			 MLV_OK);
	assert_int_equal(mlv_health_get(h, "web", backend, &st), MLV_OK);
	assert_int_equal(n_le, MLV_HEALTH_DURATION_BUCKETS + 1);
	for (size_t k = 0; k < n_le; k++) {
		snprintf(series, sizeof(series),
			 "maglevd_health_check_duration_seconds_bucket"
			 "{vip=\"web\",backend=\"%s\",le=\"%s\"}", backend,
			 documented_le[k]);
		v = tm_value(page, series);
		assert_true(v >= prev);               /* cumulative */
		assert_true(v == (k + 1 < n_le ? d.le[k] : d.count));
		prev = v;
	}
	snprintf(series, sizeof(series), "maglevd_health_check_duration_seconds"
		 "_count{vip=\"web\",backend=\"%s\"}", backend);
	count = tm_value(page, series);
	assert_true(count == prev);                   /* le="+Inf" */
	/* the pair has had one probe: every check it made is in */
	assert_true(count == st.checks);
	assert_true(count >= 3);
	snprintf(series, sizeof(series), "maglevd_health_check_duration_seconds"
		 "_sum{vip=\"web\",backend=\"%s\"}", backend);
	sum = tm_value(page, series);
	assert_true(sum > 0);
	v = sum - (double)d.sum_ns / 1e9;
	assert_true(v <= 1e-12 * sum && -v <= 1e-12 * sum);
	for (int r = 0; r < MLV_HEALTH_RESULT__COUNT; r++) {
		snprintf(series, sizeof(series),
			 "maglevd_health_check_results_total{vip=\"web\","
			 "backend=\"%s\",result=\"%s\"}", backend,
			 mlv_health_result_name((enum mlv_health_result)r));
		v = tm_value(page, series);
		by_result += v;
		assert_true(v == ((enum mlv_health_result)r == all_are ? count
								     : 0));
	}
	assert_true(by_result == count);
	return count;
}

/* Checks that really ran (against a loopback listener, and a refused
 * address), on the page as a histogram per pair and by result. */
static void test_health_check_histogram(void **state)
{
	struct checked_state c;
	uint16_t port;
	int lfd = tm_listen_loopback(&port);
	char *page;

	(void)state;
	checked_init(&c, port);
	/* before any check: the series are there, at zero */
	page = tm_render(&c.src, NULL);
	tm_check_structure(page);
	assert_true(tm_value(page, "maglevd_health_check_duration_seconds_count"
			     "{vip=\"web\",backend=\"web-1\"}") == 0);
	assert_true(tm_value(page, "maglevd_health_check_duration_seconds_bucket"
			     "{vip=\"web\",backend=\"web-1\",le=\"+Inf\"}") == 0);
	free(page);

	tm_health_wait(c.h, "web", "web-1", 3);
	tm_health_wait(c.h, "web", "web-2", 3);
	page = tm_render(&c.src, NULL);
	tm_check_structure(page);
	assert_pair_histogram(page, c.h, "web-1", MLV_HEALTH_RESULT_OK);
	assert_pair_histogram(page, c.h, "web-2", MLV_HEALTH_RESULT_FAILED);
	/* type none runs no check: no series at all */
	assert_false(tm_has(page, "maglevd_health_check_duration_seconds_bucket"
			    "{vip=\"quiet\""));
	assert_false(tm_has(page, "maglevd_health_check_results_total"
			    "{vip=\"quiet\""));
	assert_true(tm_has(page, "# TYPE maglevd_health_check_duration_seconds "
			   "histogram"));
	free(page);
	checked_free(&c);
	close(lfd);
}

/* ---- documentation ---- */

static char *slurp(const char *rel)
{
	char path[512];
	char *text;
	long n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", MLV_SOURCE_ROOT, rel);
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open %s", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	text = malloc((size_t)n + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	text[n] = '\0';
	fclose(f);
	return text;
}


/* Every family a full page has (all sources present) is documented in
 * docs/metrics.md, and every maglevd_ name the Grafana dashboard queries
 * exists on the page; the dashboard is valid JSON. A counter added to an
 * X-macro shows up here until it is documented. */
/* Each series of a page, its name and labels, one per line, sorted. */
static char *series_of(const char *page)
{
	char *out = calloc(1, strlen(page) + 1), *o = out;

	assert_non_null(out);
	for (const char *l = page; *l; ) {
		const char *end = strchr(l, '\n'), *value;

		if (!end)
			end = l + strlen(l);
		if (*l != '#') {
			/* the value follows the last space of the line */
			for (value = end; value > l && value[-1] != ' '; value--)
				;
			memcpy(o, l, (size_t)(value - l));
			o += value - l;
			*o++ = '\n';
		}
		l = *end ? end + 1 : end;
	}
	return out;
}

/* A health flap changes a table (and its fingerprint) but no series: no
 * label carries anything that changes with it. */
static void test_no_series_churn_on_a_flap(void **state)
{
	struct mlv_metrics_sources src;
	struct ctl_fx fx;
	char *before, *after, *page;
	double fp;

	(void)state;
	ctl_fx_init(&fx);
	src = sources(&fx);
	page = tm_render(&src, NULL);
	before = series_of(page);
	fp = tm_value(page, "maglevd_vip_table_fingerprint{vip=\"web\"}");
	free(page);

	snprintf(fx.down_vip, sizeof(fx.down_vip), "web");
	snprintf(fx.down_backend, sizeof(fx.down_backend), "web-2");
	reload(&fx);
	page = tm_render(&src, NULL);
	after = series_of(page);
	/* the table did change ... */
	assert_true(tm_value(page, "maglevd_vip_table_fingerprint{vip=\"web\"}") != fp);
	assert_true(fp >= 0 && fp < 9007199254740992.0);   /* < 2^53 */
	/* ... and the series are the same ones */
	assert_string_equal(before, after);
	free(page);
	free(before);
	free(after);
	ctl_fx_free(&fx);
}

/* The standard process families, read from /proc/self of this test. */
static void test_process_families(void **state)
{
	struct mlv_metrics_sources src;
	struct ctl_fx fx;
	char *page;
	int fd;

	(void)state;
	ctl_fx_init(&fx);
	src = sources(&fx);
	page = tm_render(&src, NULL);
	tm_check_structure(page);
	assert_true(tm_value(page, "process_resident_memory_bytes") > 1 << 20);
	assert_true(tm_value(page, "process_virtual_memory_bytes") >=
		    tm_value(page, "process_resident_memory_bytes"));
	assert_true(tm_value(page, "process_cpu_seconds_total") >= 0);
	assert_true(tm_value(page, "process_max_fds") >= 3);
	assert_true(tm_value(page, "process_start_time_seconds") ==
		    tm_value(page, "maglevd_start_time_seconds"));
	/* one more descriptor open: the count follows */
	{
		double before = tm_value(page, "process_open_fds");

		free(page);
		fd = dup(0);
		assert_true(fd >= 0);
		page = tm_render(&src, NULL);
		assert_true(tm_value(page, "process_open_fds") == before + 1);
		close(fd);
	}
	free(page);
	ctl_fx_free(&fx);
}

/* The announcer's view the daemon would hand over. */
static struct mlv_ctl_announce_vip fake_vips[] = {
	{ .name = "web", .serving = true, .announced = true, .usable = 2,
	  .min_backends = 1 },
	{ .name = "dns", .serving = false, .announced = false, .usable = 0,
	  .min_backends = 1 },
};
static struct mlv_ctl_announce fake_view = {
	.enabled = true, .open = true, .table = 100, .device = "mlv-vips",
	.routes = 1, .announces = 5, .withdraws = 4, .errors = 2,
	.stopping = true, .stop_in_ms = 1500,
	.n_vips = 2, .vips = fake_vips,
};

static const struct mlv_ctl_announce *fake_announce(void *ctx)
{
	(void)ctx;
	return &fake_view;
}

static void test_announce(void **state)
{
	struct mlv_metrics_sources src;
	struct ctl_fx fx;
	char *page;

	(void)state;
	ctl_fx_init(&fx);
	src = sources(&fx);
	page = tm_render(&src, NULL);
	assert_false(tm_has(page, "maglevd_stopping"));   /* no announcer */
	free(page);

	fx.st.announce = fake_announce;
	page = tm_render(&src, NULL);
	tm_check_structure(page);
	assert_true(tm_value(page, "maglevd_stopping") == 1);
	assert_true(tm_value(page, "maglevd_stop_remaining_seconds") == 1.5);
	assert_true(tm_value(page, "maglevd_announce_routes") == 1);
	assert_true(tm_value(page, "maglevd_announce_events_total{event=\"announce\"}") == 5);
	assert_true(tm_value(page, "maglevd_announce_events_total{event=\"withdraw\"}") == 4);
	assert_true(tm_value(page, "maglevd_announce_errors_total") == 2);
	assert_true(tm_value(page, "maglevd_vip_announced{vip=\"web\"}") == 1);
	assert_true(tm_value(page, "maglevd_vip_announced{vip=\"dns\"}") == 0);
	assert_true(tm_value(page, "maglevd_vip_serving{vip=\"web\"}") == 1);
	assert_true(tm_value(page, "maglevd_vip_serving{vip=\"dns\"}") == 0);
	free(page);

	/* announcing off: the stop is still shown, the routes are not */
	fake_view.enabled = false;
	fake_view.stopping = false;
	page = tm_render(&src, NULL);
	tm_check_structure(page);
	assert_true(tm_value(page, "maglevd_stopping") == 0);
	assert_true(tm_value(page, "maglevd_stop_remaining_seconds") == 0);
	assert_false(tm_has(page, "maglevd_announce_routes"));
	assert_false(tm_has(page, "maglevd_vip_announced"));
	free(page);
	fake_view.enabled = true;
	fake_view.stopping = true;
	ctl_fx_free(&fx);
}

/* The family a series name of a query belongs to: the name itself, or
 * a histogram's name before _bucket / _sum / _count. */
static bool page_has_family(const char *page, const char *p, size_t n)
{
	static const char *const parts[] = { "_bucket", "_sum", "_count" };
	char family[160];
	bool found;

	snprintf(family, sizeof(family), "# TYPE %.*s ", (int)n, p);
	found = strstr(page, family) != NULL;
	for (size_t k = 0; !found && k < 3; k++) {
		size_t sn = strlen(parts[k]);

		if (n > sn && strncmp(p + n - sn, parts[k], sn) == 0) {
			snprintf(family, sizeof(family), "# TYPE %.*s histogram\n",
				 (int)(n - sn), p);
			found = strstr(page, family) != NULL;
		}
	}
	return found;
}

/* Every panel of the dashboard (rows aside) queries at least one
 * maglevd metric, and every metric name in a panel's expressions is a
 * family of page. */
static void check_dashboard(const json_t *dash, const char *page)
{
	const json_t *panels = json_object_get(dash, "panels"), *panel;
	size_t i, n_panels = 0;

	assert_true(json_is_array(panels));
	json_array_foreach(panels, i, panel) {
		const char *title = json_string_value(json_object_get(panel, "title"));
		const json_t *targets = json_object_get(panel, "targets"), *t;
		size_t k, names = 0;

		if (strcmp(json_string_value(json_object_get(panel, "type")), "row") == 0)
			continue;
		n_panels++;
		json_array_foreach(targets, k, t) {
			const char *expr = json_string_value(json_object_get(t, "expr"));

			if (!expr)
				fail_msg("panel \"%s\": a target without expr", title);
			for (const char *p = expr; (p = strstr(p, "maglevd_")) != NULL; ) {
				size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");

				/* a name, not the tail of a longer identifier */
				if (p > expr && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) {
					p += n;
					continue;
				}
				if (!page_has_family(page, p, n))
					fail_msg("panel \"%s\" queries %.*s, which maglevd "
						 "does not export", title, (int)n, p);
				names++;
				p += n;
			}
		}
		if (names == 0)
			fail_msg("panel \"%s\" queries no maglevd metric", title);
	}
	assert_true(n_panels > 10);
}

static void test_docs_and_dashboard(void **state)
{
	struct mlv_health_options ho = { .seed = 3 };
	struct mlv_metrics_sources src;
	struct mlv_health *h;
	struct ctl_fx fx;
	char *page, *doc, *dash, name[128];
	json_error_t jerr;
	json_t *j;

	(void)state;
	ctl_fx_init(&fx);
	assert_int_equal(mlv_health_create(&ho, &h), MLV_OK);
	assert_int_equal(mlv_health_sync(h, fx.cfg, NULL), MLV_OK);
	fx.st.health = h;
	fx.st.announce = fake_announce;
	src = (struct mlv_metrics_sources){ .ctl = &fx.st,
					    .steer_counters = tm_fake_steer };
	fx.st.port_stats = tm_fake_ports;
	page = tm_render(&src, NULL);
	doc = slurp("docs/metrics.md");
	for (const char *p = strstr(page, "# TYPE "); p; p = strstr(p + 1, "# TYPE ")) {
		char quoted[140];

		char type[16];
		size_t nl;

		assert_int_equal(sscanf(p, "# TYPE %127s %15s", name, type), 2);
		nl = strlen(name);
		/* Prometheus's naming rules: a counter ends in _total */
		if (strcmp(type, "counter") == 0 &&
		    (nl < 6 || strcmp(name + nl - 6, "_total") != 0))
			fail_msg("counter %s does not end in _total", name);
		snprintf(quoted, sizeof(quoted), "`%s`", name);
		if (!strstr(doc, quoted))
			fail_msg("metric %s is not documented in docs/metrics.md", name);
	}
	dash = slurp("docs/grafana-maglevd.json");
	j = json_loads(dash, 0, &jerr);
	if (!j)
		fail_msg("docs/grafana-maglevd.json: line %d: %s", jerr.line, jerr.text);
	check_dashboard(j, page);
	json_decref(j);
	free(dash);
	free(doc);
	free(page);
	mlv_health_destroy(h);
	ctl_fx_free(&fx);
}

static void test_bad_arguments(void **state)
{
	struct mlv_metrics_renderer *r;
	struct mlv_metrics_sources src = { 0 };
	struct mlv_ctl_state st = { 0 };
	char *text = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(mlv_metrics_renderer_create(NULL), MLV_E_INVAL);
	assert_int_equal(mlv_metrics_renderer_create(&r), MLV_OK);
	assert_int_equal(mlv_metrics_render(r, &src, &text, &len), MLV_E_INVAL);
	assert_int_equal(mlv_metrics_render(r, NULL, &text, &len), MLV_E_INVAL);
	/* an empty state (no generation yet, no workers) still renders */
	src.ctl = &st;
	assert_int_equal(mlv_metrics_render(r, &src, &text, &len), MLV_OK);
	tm_check_structure(text);
	assert_true(tm_has(text, "maglevd_build_info"));
	assert_false(tm_has(text, "maglevd_generation"));
	free(text);
	mlv_metrics_renderer_destroy(r);
	mlv_metrics_renderer_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_second_chance_gauges),
		cmocka_unit_test(test_histogram_writer),
		cmocka_unit_test(test_histogram_structure_check),
		cmocka_unit_test(test_flow_counters_survive_reload),
		cmocka_unit_test(test_worker_counters_and_drops),
		cmocka_unit_test(test_conntrack_occupancy),
		cmocka_unit_test(test_backend_state),
		cmocka_unit_test(test_reloads_and_times),
		cmocka_unit_test(test_xdp_steering),
		cmocka_unit_test(test_ports),
		cmocka_unit_test(test_no_backend_series),
		cmocka_unit_test(test_health_engine),
		cmocka_unit_test(test_check_path_counters),
		cmocka_unit_test(test_health_check_histogram),
		cmocka_unit_test(test_announce),
		cmocka_unit_test(test_process_families),
		cmocka_unit_test(test_no_series_churn_on_a_flap),
		cmocka_unit_test(test_docs_and_dashboard),
		cmocka_unit_test(test_bad_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
