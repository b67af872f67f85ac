/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the table-build settings (control.build_threads,
 * control.build_cpus): defaults, ranges, CPU-list errors at their
 * line:col, and the CPU-list parser and formatter (control/config/cpu_list.h)
 * against lists written out by hand. */
#define _GNU_SOURCE /* cpu_set_t */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "control/config/config.h"
#include "control/config/cpu_list.h"

#include "tests/support/config_fixture.h"

/* A minimal config whose control section carries `control` (indented
 * keys, or "" for none). */
static void config(char *buf, size_t len, const char *control)
{
	snprintf(buf, len,
		 "dataplane:\n"
		 "  ports:\n"
		 "    - {name: p, device: d, address: 10.0.0.1}\n"
		 "%s%s"
		 "vips: []\n", control[0] ? "control:\n" : "", control);
}

static void test_defaults(void **state)
{
	char y[512];
	struct load l;
	(void)state;

	config(y, sizeof(y), "");
	load(&l, y);
	expect_ok(&l);
	/* documented: one thread, the control thread's own CPUs */
	assert_int_equal(l.cfg->build_threads, 1);
	assert_string_equal(l.cfg->build_cpus, "");
	unload(&l);
}

static void test_values_accepted(void **state)
{
	char y[512];
	struct load l;
	(void)state;

	config(y, sizeof(y), "  build_threads: 64\n  build_cpus: \"0-1,4\"\n");
	load(&l, y);
	expect_ok(&l);
	assert_int_equal(l.cfg->build_threads, 64);
	assert_string_equal(l.cfg->build_cpus, "0-1,4");
	unload(&l);

	config(y, sizeof(y), "  build_threads: 2\n  build_cpus: 3\n");
	load(&l, y);
	expect_ok(&l);
	assert_int_equal(l.cfg->build_threads, 2);
	assert_string_equal(l.cfg->build_cpus, "3");
	unload(&l);
}

static void test_threads_out_of_range(void **state)
{
	const char *zero = "  build_threads: 0\n";
	const char *many = "  build_threads: 65\n";
	char y[512];
	struct load l;
	(void)state;

	config(y, sizeof(y), zero);
	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "0\n", "between 1 and 64");
	unload(&l);

	config(y, sizeof(y), many);
	load(&l, y);
	expect_rejected(&l);
	expect_error(&l, y, "65", "between 1 and 64");
	unload(&l);
}

/* Each bad list is rejected with an error at the value's line:col. */
static void test_bad_cpu_lists(void **state)
{
	static const struct {
		const char *value;   /* as written in the YAML */
		const char *msg;
	} bad[] = {
		{ "\"1-0\"", "must go up" },
		{ "\"0,,1\"", "like \"0-1,4\"" },
		{ "\"0-\"", "like \"0-1,4\"" },
		{ "\"x\"", "like \"0-1,4\"" },
		{ "\"0-1 2\"", "like \"0-1,4\"" },
		{ "\"1024\"", "too large" },
		{ "\"0-99999999999\"", "too large" },
		{ "\"\"", "build_cpus" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char keys[128], y[512];
		struct load l;

		snprintf(keys, sizeof(keys), "  build_threads: 2\n  build_cpus: %s\n",
			 bad[i].value);
		config(y, sizeof(y), keys);
		load(&l, y);
		expect_rejected(&l);
		expect_error(&l, y, bad[i].value, bad[i].msg);
		assert_int_equal(l.d.n_errors, 1);
		unload(&l);
	}
}

static void test_parse_and_format(void **state)
{
	static const struct {
		const char *text;
		unsigned cpus[6];    /* the CPUs in the set, ending at ~0u */
		const char *canonical;
	} ok[] = {
		{ "0", { 0, ~0u }, "0" },
		{ "0-1,4", { 0, 1, 4, ~0u }, "0-1,4" },
		{ " 4 , 0 - 1 ", { 0, 1, 4, ~0u }, "0-1,4" },
		{ "3,2,1", { 1, 2, 3, ~0u }, "1-3" },
		{ "1023", { 1023, ~0u }, "1023" },
		{ "5-5,7", { 5, 7, ~0u }, "5,7" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cpu_set_t set, want;
		char buf[64];

		CPU_ZERO(&want);
		for (size_t k = 0; ok[i].cpus[k] != ~0u; k++)
			CPU_SET(ok[i].cpus[k], &want);
		assert_int_equal(mlv_cpu_list_parse(ok[i].text, &set, NULL, 0),
				 MLV_OK);
		assert_true(CPU_EQUAL(&set, &want));
		assert_string_equal(mlv_cpu_list_format(&set, buf, sizeof(buf)),
				    ok[i].canonical);
	}
}

static void test_format_truncates_safely(void **state)
{
	cpu_set_t set;
	char buf[6];
	(void)state;

	assert_int_equal(mlv_cpu_list_parse("0,2,4,6,8,10", &set, NULL, 0),
			 MLV_OK);
	mlv_cpu_list_format(&set, buf, sizeof(buf));
	/* whole items only, and always terminated */
	assert_string_equal(buf, "0,2,4");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values_accepted),
		cmocka_unit_test(test_threads_out_of_range),
		cmocka_unit_test(test_bad_cpu_lists),
		cmocka_unit_test(test_parse_and_format),
		cmocka_unit_test(test_format_truncates_safely),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
