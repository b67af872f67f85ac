/* SPDX-License-Identifier: BSD-3-Clause */
/* The reload plan and the budget (control/config/plan.c): what a new file
 * changes, counted by name, and which changes the budget refuses. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "control/config/plan.h"
#include "tests/support/config_load.h"

/* A config of VIPs named in vips ("web:b1,b2,b3 dns:d1"); a backend
 * written "b2=drain" is drained, "b2*300" weighs 300. */
static struct mlv_config *cfg_of(const char *vips)
{
	char text[8192], spec[1024];
	size_t used = 0;
	unsigned n = 0;

	used += (size_t)snprintf(text + used, sizeof(text) - used,
		"dataplane:\n"
		"  ports:\n"
		"    - {name: ext, device: net_null0, address: 10.99.0.1, "
		"next_hop: \"02:00:00:00:00:01\"}\n"
		"defaults: {table_size: 251, health: {type: none}}\n"
		"vips:\n");
	snprintf(spec, sizeof(spec), "%s", vips);
	for (char *save = NULL, *v = strtok_r(spec, " ", &save); v;
	     v = strtok_r(NULL, " ", &save), n++) {
		char *colon = strchr(v, ':');
		unsigned b = 0;

		assert_non_null(colon);
		*colon = '\0';
		used += (size_t)snprintf(text + used, sizeof(text) - used,
			"  - name: %s\n    address: 192.0.2.%u\n    port: 80\n"
			"    protocol: tcp\n    backends:\n", v, 10 + n);
		for (char *s2 = NULL, *be = strtok_r(colon + 1, ",", &s2); be;
		     be = strtok_r(NULL, ",", &s2), b++) {
			char *eq = strchr(be, '='), *star = strchr(be, '*');
			const char *state = eq ? eq + 1 : "active";
			unsigned weight = star ? (unsigned)atoi(star + 1) : 100;

			if (eq)
				*eq = '\0';
			if (star)
				*star = '\0';
			used += (size_t)snprintf(text + used, sizeof(text) - used,
				"      - {name: %s, address: 10.99.%u.%u, "
				"weight: %u, state: %s}\n", be, n + 1, b + 11,
				weight, state);
		}
	}
	assert_true(used < sizeof(text));
	return config_load_ok(text, used);
}

static const struct mlv_plan_vip *entry(const struct mlv_plan *p,
					const char *name)
{
	for (uint32_t i = 0; i < p->n; i++)
		if (strcmp(p->vips[i].name, name) == 0)
			return &p->vips[i];
	return NULL;
}

static const struct mlv_reload_budget defaults = { 25, 50, 50 };

static void plan_of(const char *before, const char *after, struct mlv_plan *p)
{
	struct mlv_config *a = cfg_of(before), *b = cfg_of(after);

	assert_int_equal(mlv_plan_make(a, b, p), MLV_OK);
	mlv_config_free(a);
	mlv_config_free(b);
}

static void test_same_file_no_change(void **state)
{
	struct mlv_plan p;
	char why[256] = "", line[256];

	(void)state;
	plan_of("web:b1,b2 dns:d1", "web:b1,b2 dns:d1", &p);
	assert_int_equal(p.n, 0);
	assert_int_equal(p.vips_before, 2);
	assert_int_equal(p.vips_after, 2);
	assert_true(mlv_plan_fits(&p, &defaults, why, sizeof(why)));
	mlv_plan_summary(&p, line, sizeof(line));
	assert_string_equal(line, "no VIP changed");
	mlv_plan_free(&p);
}

static void test_counts_by_name(void **state)
{
	struct mlv_plan p;
	const struct mlv_plan_vip *web, *api, *dns;
	char line[256];

	(void)state;
	plan_of("web:b1,b2,b3,b4 dns:d1",
		"web:b1*200,b2=drain,b3,b5 api:a1,a2=drain", &p);
	assert_int_equal(p.vips_added, 1);
	assert_int_equal(p.vips_removed, 1);
	assert_int_equal(p.vips_changed, 1);
	assert_int_equal(p.n, 3);
	web = entry(&p, "web");
	api = entry(&p, "api");
	dns = entry(&p, "dns");
	assert_non_null(web);
	assert_non_null(api);
	assert_non_null(dns);
	assert_int_equal(web->change, MLV_PLAN_CHANGED);
	assert_int_equal(web->backends_added, 1);        /* b5 */
	assert_int_equal(web->backends_removed, 1);      /* b4 */
	assert_int_equal(web->backends_reweighted, 1);   /* b1 */
	assert_int_equal(web->backends_drained, 1);      /* b2 */
	assert_int_equal(web->usable_before, 4);
	assert_int_equal(web->usable_lost, 2);           /* b2, b4 */
	assert_int_equal(web->usable_after, 3);          /* b1, b3, b5 */
	assert_false(web->other);
	assert_int_equal(api->change, MLV_PLAN_ADDED);
	assert_int_equal(api->backends_added, 2);
	assert_int_equal(api->usable_after, 1);
	assert_int_equal(dns->change, MLV_PLAN_REMOVED);
	assert_int_equal(dns->usable_lost, 1);
	mlv_plan_summary(&p, line, sizeof(line));
	assert_string_equal(web->backends, "+b5 ~b1 drained:b2 -b4");
	assert_string_equal(line, "1 VIP(s) added (api), 1 removed (dns), "
				  "1 changed (web: +b5 ~b1 drained:b2 -b4)");
	mlv_plan_free(&p);
}

/* An address change is a change even with the same backend names. */
static void test_other_settings(void **state)
{
	struct mlv_plan p;

	(void)state;
	/* the second VIP's address depends on its position */
	plan_of("web:b1 dns:d1", "dns:d1 web:b1", &p);
	assert_int_equal(p.vips_changed, 2);
	assert_true(entry(&p, "web")->other);
	assert_int_equal(entry(&p, "web")->usable_lost, 0);
	mlv_plan_free(&p);
}

/* Connections moved, per changed VIP (mlv_gen_plan_moves fills them):
 * at the limit fits, beyond it names the VIP and the numbers; a removed
 * VIP's connections are vips_removed's, not this limit's; a VIP with no
 * tracked connection moves none. */
static void test_connections_moved_budget(void **state)
{
	struct mlv_plan p;
	char why[256] = "";
	struct mlv_plan_vip *a = NULL;

	(void)state;
	plan_of("a:x,y b:x", "a:x", &p);
	for (uint32_t i = 0; i < p.n; i++)
		if (strcmp(p.vips[i].name, "a") == 0)
			a = &p.vips[i];
	assert_non_null(a);
	a->tracked = 10;
	a->tracked_moved = 5;
	assert_true(mlv_plan_moves_fit(&p, &defaults, why, sizeof(why)));
	a->tracked_moved = 6;
	assert_false(mlv_plan_moves_fit(&p, &defaults, why, sizeof(why)));
	assert_string_equal(why, "it re-selects 6 of VIP a's 10 tracked "
			    "connections (60 %), more than "
			    "control.reload_budget.connections_moved (50 %)");
	assert_true(mlv_plan_moves_fit(&p, &(struct mlv_reload_budget){
		25, 50, 60 }, why, sizeof(why)));
	a->tracked = a->tracked_moved = 0;
	assert_true(mlv_plan_moves_fit(&p, &defaults, why, sizeof(why)));
	for (uint32_t i = 0; i < p.n; i++)
		if (strcmp(p.vips[i].name, "b") == 0) {   /* removed */
			p.vips[i].tracked = p.vips[i].tracked_moved = 9;
			assert_int_equal(p.vips[i].change, MLV_PLAN_REMOVED);
		}
	assert_true(mlv_plan_moves_fit(&p, &defaults, why, sizeof(why)));
	mlv_plan_free(&p);
}

static void test_vips_removed_budget(void **state)
{
	struct mlv_plan p;
	char why[256] = "";

	(void)state;
	/* 1 of 4 removed: 25 %, at the limit, fits */
	plan_of("a:x b:x c:x d:x", "a:x b:x c:x", &p);
	assert_true(mlv_plan_fits(&p, &defaults, why, sizeof(why)));
	mlv_plan_free(&p);
	/* 2 of 4: over */
	plan_of("a:x b:x c:x d:x", "a:x b:x", &p);
	assert_false(mlv_plan_fits(&p, &defaults, why, sizeof(why)));
	assert_string_equal(why, "it removes 2 of 4 VIPs (50 %), more than "
				 "control.reload_budget.vips_removed (25 %)");
	assert_true(mlv_plan_fits(&p, &(struct mlv_reload_budget){ 50, 50 },
				  why, sizeof(why)));
	mlv_plan_free(&p);
	/* a truncated file: every VIP gone */
	plan_of("a:x b:x c:x d:x", "a:x", &p);
	assert_false(mlv_plan_fits(&p, &(struct mlv_reload_budget){ 50, 100 },
				   why, sizeof(why)));
	assert_true(mlv_plan_fits(&p, &(struct mlv_reload_budget){ 100, 100 },
				  why, sizeof(why)));
	mlv_plan_free(&p);
}

static void test_backends_lost_budget(void **state)
{
	struct mlv_plan p;
	char why[256] = "";

	(void)state;
	/* half of web's usable backends drained or removed: fits at 50 */
	plan_of("web:b1,b2,b3,b4 dns:d1", "web:b1,b2,b3=drain dns:d1", &p);
	assert_true(mlv_plan_fits(&p, &defaults, why, sizeof(why)));
	mlv_plan_free(&p);
	/* three of four: over, named */
	plan_of("web:b1,b2,b3,b4 dns:d1", "web:b1,b5,b6 dns:d1", &p);
	assert_false(mlv_plan_fits(&p, &defaults, why, sizeof(why)));
	assert_string_equal(why, "it takes 3 of VIP web's 4 usable backends "
				 "away (removed or drained, 75 %), more than "
				 "control.reload_budget.backends_lost (50 %)");
	mlv_plan_free(&p);
	/* a backend already drained or weight 0 is not usable: losing it
	 * costs nothing */
	plan_of("web:b1,b2=drain,b3*0", "web:b1", &p);
	assert_int_equal(entry(&p, "web")->usable_before, 1);
	assert_int_equal(entry(&p, "web")->usable_lost, 0);
	assert_true(mlv_plan_fits(&p, &(struct mlv_reload_budget){ 0, 0 },
				  why, sizeof(why)));
	mlv_plan_free(&p);
}

static void test_summary_caps_names(void **state)
{
	struct mlv_plan p;
	char line[512];

	(void)state;
	plan_of("a:x", "a:x b:x c:x d:x e:x f:x g:x h:x", &p);
	mlv_plan_summary(&p, line, sizeof(line));
	assert_string_equal(line, "7 VIP(s) added (b, c, d, e, f and 2 more), "
				  "0 removed, 0 changed");
	mlv_plan_free(&p);
	/* a VIP's changed backends: 5 named, then counted */
	plan_of("web:b01,b02,b03,b04,b05,b06,b07,b08",
		"web:b09,b10,b11,b12,b13,b14,b15,b16", &p);
	assert_string_equal(p.vips[0].backends,
			    "+b09 +b10 +b11 +b12 +b13 and 11 more");
	mlv_plan_free(&p);
	/* long names: cut at a name, and still counted */
	plan_of("web:b1", "web:b1,"
		"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghi1,"
		"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghi2,"
		"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghi3", &p);
	assert_non_null(strstr(p.vips[0].backends, " and 1 more"));
	assert_true(strlen(p.vips[0].backends) < sizeof(p.vips[0].backends));
	/* a short buffer stays terminated */
	mlv_plan_summary(&p, line, 12);
	assert_int_equal(strlen(line), 11);
	mlv_plan_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_file_no_change),
		cmocka_unit_test(test_counts_by_name),
		cmocka_unit_test(test_other_settings),
		cmocka_unit_test(test_vips_removed_budget),
		cmocka_unit_test(test_connections_moved_budget),
		cmocka_unit_test(test_backends_lost_budget),
		cmocka_unit_test(test_summary_caps_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
