/* SPDX-License-Identifier: BSD-3-Clause */
/* `promtool check metrics` (Debian package prometheus) on the /metrics
 * page of a fake daemon with every family present: worker counters,
 * drops, conntrack, VIPs and backends with counts, the health engine with
 * checks that have run (so the duration histogram has samples) and XDP
 * steering. A page promtool must reject proves the harness can fail.
 * Exits 77 (skipped) only when promtool is not installed. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "control/health/health.h"
#include "control/metrics/render.h"
#include "tests/support/ctl_fixture.h"
#include "tests/unit/metrics/test_metrics_util.h"

/* Run promtool on text; returns its exit status, *out its output. */
static int promtool(const char *text, char **out)
{
	char path[] = "/tmp/mlv-metrics-XXXXXX", cmd[128];
	size_t cap = 4096, len = 0;
	int fd = mkstemp(path), status;
	FILE *p;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s 2>&1", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	*out = malloc(cap);
	assert_non_null(*out);
	for (;;) {
		size_t n = fread(*out + len, 1, cap - len - 1, p);

		len += n;
		if (n == 0)
			break;
		if (len + 1 == cap) {
			cap *= 2;
			*out = realloc(*out, cap);
			assert_non_null(*out);
		}
	}
	(*out)[len] = '\0';
	status = pclose(p);
	unlink(path);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_full_page_passes(void **state)
{
	struct mlv_health_options ho = { .seed = 7 };
	struct mlv_metrics_sources src;
	struct mlv_config *checked;
	struct mlv_health *h;
	struct ctl_fx fx;
	char *page, *out;
	uint16_t port;
	int lfd = tm_listen_loopback(&port);
	int rc;

	(void)state;
	ctl_fx_init(&fx);
	for (int w = 0; w < FX_WORKERS; w++) {
		for (int c = 0; c < MLV_CTR__COUNT; c++)
			fx.ctr[w].ctr[c] = (uint64_t)(1000 * (w + 1) + c);
		for (int d = 0; d < MLV_DROP__COUNT; d++)
			fx.ctr[w].drop[d] = (uint64_t)(w + d);
		for (uint32_t b = 0; b < fx.gen->n_all_backends; b++)
			for (int c = 0; c < MLV_FLOW__COUNT; c++)
				fx.gen->backend_ctr[w][b].v[c] = 10u * b + (uint64_t)c;
	}
	mlv_ctl_note_reload(&fx.st, true, fx.gen->number, NULL);
	mlv_ctl_note_reload(&fx.st, false, fx.gen->number, "bad: \"quoted\"");
	/* the fixture's VIPs have no checks: the engine checks web-1 and
	 * web-2 of a config with the same names (one answers, one refuses) */
	checked = tm_checked_config(port);
	assert_int_equal(mlv_health_create(&ho, &h), MLV_OK);
	assert_int_equal(mlv_health_sync(h, checked, NULL), MLV_OK);
	tm_health_wait(h, "web", "web-1", 2);
	tm_health_wait(h, "web", "web-2", 2);
	fx.st.health = h;
	src = (struct mlv_metrics_sources){ .ctl = &fx.st,
					    .steer_counters = tm_fake_steer };
	fx.st.port_stats = tm_fake_ports;

	page = tm_render(&src, NULL);
	tm_check_structure(page);
	/* promtool sees histogram samples, not only the family's header */
	assert_true(tm_value(page, "maglevd_health_check_duration_seconds_count"
			     "{vip=\"web\",backend=\"web-2\"}") >= 2);
	assert_true(tm_has(page, "maglevd_health_check_duration_seconds_bucket"
			   "{vip=\"web\",backend=\"web-1\",le=\"0.0005\"}"));
	rc = promtool(page, &out);
	if (rc != 0)
		fail_msg("promtool check metrics failed (%d):\n%s", rc, out);
	free(out);
	free(page);
	mlv_health_destroy(h);
	mlv_config_free(checked);
	close(lfd);
	ctl_fx_free(&fx);
}

/* The check is real: a counter named without _total, a non-base unit (in
 * a gauge and in a histogram) and a missing HELP are each reported. */
static void test_promtool_rejects_bad_pages(void **state)
{
	static const char *const bad[] = {
		"# HELP maglevd_packets packets\n# TYPE maglevd_packets counter\n"
		"maglevd_packets 1\n",
		"# HELP maglevd_latency_milliseconds latency\n"
		"# TYPE maglevd_latency_milliseconds gauge\n"
		"maglevd_latency_milliseconds 3\n",
		"# TYPE maglevd_things gauge\nmaglevd_things 1\n",
		"# HELP maglevd_check_milliseconds latency\n"
		"# TYPE maglevd_check_milliseconds histogram\n"
		"maglevd_check_milliseconds_bucket{le=\"+Inf\"} 1\n"
		"maglevd_check_milliseconds_sum 3\n"
		"maglevd_check_milliseconds_count 1\n",
	};
	char *out;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (promtool(bad[i], &out) == 0)
			fail_msg("promtool accepted:\n%s", bad[i]);
		free(out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_page_passes),
		cmocka_unit_test(test_promtool_rejects_bad_pages),
	};

	if (system("command -v promtool >/dev/null 2>&1") != 0) {
		printf("promtool not found (Debian package prometheus): skipped\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
