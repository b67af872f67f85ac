/* SPDX-License-Identifier: BSD-3-Clause */
/* maglevd's command line (daemon/options/options.c) and the EAL argument vector
 * built from it and the config (daemon/options/eal_args.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "control/config/config.h"
#include "daemon/options/eal_args.h"
#include "daemon/options/options.h"

/* Parse a NULL-terminated list; errors go to a scratch stream whose text
 * the caller may inspect. */
static enum mlv_err parse(struct mlv_options *o, char *err_text, size_t len,
			  ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;
	FILE *err = fmemopen(err_text, len, "w");
	enum mlv_err r;

	assert_non_null(err);
	memset(err_text, 0, len);
	argv[argc++] = "maglevd";
	va_start(ap, len);
	for (char *a; (a = va_arg(ap, char *)) != NULL;)
		argv[argc++] = a;
	va_end(ap);
	argv[argc] = NULL;
	r = mlv_options_parse(argc, argv, o, err);
	fclose(err);
	return r;
}

static void test_run_defaults(void **state)
{
	struct mlv_options o;
	char e[256];

	(void)state;
	assert_int_equal(parse(&o, e, sizeof(e), "-c", "lb.yaml", NULL), MLV_OK);
	assert_int_equal(o.mode, MLV_MODE_RUN);
	assert_string_equal(o.config_path, "lb.yaml");
	assert_int_equal(o.log_level, MLV_LOG_INFO);
	assert_null(o.stats_file);
	assert_int_equal(o.stats_interval_ms, MLV_STATS_INTERVAL_DEFAULT_MS);
	assert_false(o.has_eal_override);
	assert_true(o.watch_config);
}

static void test_all_options(void **state)
{
	struct mlv_options o;
	char e[256];

	(void)state;
	assert_int_equal(parse(&o, e, sizeof(e), "--config", "a.yaml",
			       "--log-level", "debug", "--stats-file", "/tmp/s.json",
			       "--stats-interval", "50", "--no-watch-config",
			       NULL), MLV_OK);
	assert_string_equal(o.config_path, "a.yaml");
	assert_false(o.watch_config);
	assert_int_equal(o.log_level, MLV_LOG_DEBUG);
	assert_string_equal(o.stats_file, "/tmp/s.json");
	assert_int_equal(o.stats_interval_ms, 50);
	assert_int_equal(o.log_format, MLV_LOG_FORMAT_TEXT);
	assert_int_equal(parse(&o, e, sizeof(e), "-c", "a.yaml",
			       "--log-format", "json", NULL), MLV_OK);
	assert_int_equal(o.log_format, MLV_LOG_FORMAT_JSON);
}

static void test_eal_override(void **state)
{
	struct mlv_options o;
	char e[256];

	(void)state;
	assert_int_equal(parse(&o, e, sizeof(e), "-c", "a.yaml", "--",
			       "--no-pci", "-l", "0-1", NULL), MLV_OK);
	assert_true(o.has_eal_override);
	assert_int_equal(o.n_eal_override, 3);
	assert_string_equal(o.eal_override[0], "--no-pci");
	assert_string_equal(o.eal_override[2], "0-1");

	/* "--" with nothing after it is still an (empty) override */
	assert_int_equal(parse(&o, e, sizeof(e), "-c", "a.yaml", "--", NULL),
			 MLV_OK);
	assert_true(o.has_eal_override);
	assert_int_equal(o.n_eal_override, 0);
}

static void test_modes(void **state)
{
	struct mlv_options o;
	char e[256];

	(void)state;
	assert_int_equal(parse(&o, e, sizeof(e), "--check-config", "x.yaml", NULL),
			 MLV_OK);
	assert_int_equal(o.mode, MLV_MODE_CHECK_CONFIG);
	assert_string_equal(o.config_path, "x.yaml");
	assert_int_equal(parse(&o, e, sizeof(e), "--version", NULL), MLV_OK);
	assert_int_equal(o.mode, MLV_MODE_VERSION);
	assert_int_equal(parse(&o, e, sizeof(e), "--help", "-c", "a", NULL), MLV_OK);
	assert_int_equal(o.mode, MLV_MODE_HELP);
}

/* Without -c the default file is the configuration, and it is marked as
 * such (the daemon then says in one line when it is missing). */
static void test_default_config(void **state)
{
	struct mlv_options o;
	char e[256];

	(void)state;
	assert_int_equal(parse(&o, e, sizeof(e), NULL), MLV_OK);
	assert_int_equal(o.mode, MLV_MODE_RUN);
	assert_string_equal(o.config_path, mlv_options_default_config);
	assert_non_null(strstr(o.config_path, "/maglevd/maglevd.yaml"));
	assert_true(o.config_path[0] == '/');
	assert_true(o.config_is_default);
	assert_int_equal(parse(&o, e, sizeof(e), "-c", "lb.yaml", NULL), MLV_OK);
	assert_false(o.config_is_default);
	assert_int_equal(parse(&o, e, sizeof(e), "--check-config", "x.yaml",
			       NULL), MLV_OK);
	assert_false(o.config_is_default);
}

static void test_bad_usage(void **state)
{
	struct mlv_options o;
	char e[256];

	(void)state;
	assert_int_equal(parse(&o, e, sizeof(e), "-c", "a", "--log-level",
			       "loud", NULL), MLV_E_INVAL);
	assert_non_null(strstr(e, "loud"));
	assert_int_equal(parse(&o, e, sizeof(e), "-c", "a", "--log-format",
			       "xml", NULL), MLV_E_INVAL);
	assert_non_null(strstr(e, "--log-format: 'xml'"));
	assert_int_equal(parse(&o, e, sizeof(e), "-c", "a", "--stats-interval",
			       "5", NULL), MLV_E_INVAL);
	assert_int_equal(parse(&o, e, sizeof(e), "-c", "a", "--stats-interval",
			       "-100", NULL), MLV_E_INVAL);
	assert_int_equal(parse(&o, e, sizeof(e), "-c", "a", "--stats-interval",
			       "12x", NULL), MLV_E_INVAL);
	assert_int_equal(parse(&o, e, sizeof(e), "-c", "a", "--frobnicate", NULL),
			 MLV_E_INVAL);
	assert_non_null(strstr(e, "--frobnicate"));
	assert_int_equal(parse(&o, e, sizeof(e), "-c", "a", "stray", NULL),
			 MLV_E_INVAL);
	assert_non_null(strstr(e, "stray"));
	assert_int_equal(parse(&o, e, sizeof(e), "-c", NULL), MLV_E_INVAL);
	assert_int_equal(parse(&o, e, sizeof(e), "-c", "a", "--stats-file", "",
			       NULL), MLV_E_INVAL);
}

static int find(const struct mlv_eal_args *a, const char *s)
{
	for (int i = 0; i < a->argc; i++)
		if (strcmp(a->argv[i], s) == 0)
			return i;
	return -1;
}

static void test_eal_default_lcores(void **state)
{
	char *args[] = { "--in-memory", "--no-pci", "--vdev=net_null0" };
	struct mlv_eal_args a;
	int l;

	(void)state;
	assert_int_equal(mlv_eal_args_build("maglevd", args, 3, 2, MLV_LOG_INFO,
					    &a), MLV_OK);
	assert_string_equal(a.argv[0], "maglevd");
	assert_string_equal(a.argv[1], "--in-memory");
	assert_string_equal(a.argv[3], "--vdev=net_null0");
	l = find(&a, "-l");
	assert_true(l > 0);
	/* main lcore 0 + workers 1..2 */
	assert_string_equal(a.argv[l + 1], "0-2");
	assert_true(find(&a, "--log-level=6") > 0);
	assert_null(a.argv[a.argc]);
	mlv_eal_args_free(&a);
}

static void test_eal_operator_lcores_kept(void **state)
{
	char *with_l[] = { "-l", "2,3" };
	char *with_lcores[] = { "--lcores=(0-1)@0" };
	char *with_mask[] = { "-c0x3" };
	char *with_log[] = { "--log-level=3" };
	struct mlv_eal_args a;

	(void)state;
	assert_true(mlv_eal_args_have_lcores(with_l, 2));
	assert_true(mlv_eal_args_have_lcores(with_lcores, 1));
	assert_true(mlv_eal_args_have_lcores(with_mask, 1));
	assert_false(mlv_eal_args_have_lcores(with_log, 1));

	assert_int_equal(mlv_eal_args_build("maglevd", with_l, 2, 1,
					    MLV_LOG_DEBUG, &a), MLV_OK);
	assert_int_equal(find(&a, "-l"), 1);          /* only the operator's */
	assert_int_equal(find(&a, "0-1"), -1);
	assert_true(find(&a, "--log-level=8") > 0);
	mlv_eal_args_free(&a);

	/* an operator's --log-level wins over ours */
	assert_int_equal(mlv_eal_args_build("maglevd", with_log, 1, 1,
					    MLV_LOG_ERROR, &a), MLV_OK);
	assert_int_equal(find(&a, "--log-level=4"), -1);
	assert_int_equal(find(&a, "--log-level=3"), 1);
	mlv_eal_args_free(&a);
}

static void test_eal_single_process(void **state)
{
	char *shared[] = { "--file-prefix=lb1", "--no-pci", "--vdev=net_null0" };
	char *in_memory[] = { "--no-pci", "--in-memory" };
	char *no_shconf[] = { "--no-shconf", "--in-memory" };
	char *no_huge[] = { "-m", "512", "--no-huge" };
	char *lookalike[] = { "--in-memory=1", "--no-huge-unlink" };

	(void)state;
	assert_null(mlv_eal_args_single_process(shared, 3));
	assert_null(mlv_eal_args_single_process(NULL, 0));
	assert_string_equal(mlv_eal_args_single_process(in_memory, 2),
			    "--in-memory");
	/* the first one found */
	assert_string_equal(mlv_eal_args_single_process(no_shconf, 2),
			    "--no-shconf");
	assert_string_equal(mlv_eal_args_single_process(no_huge, 3),
			    "--no-huge");
	assert_null(mlv_eal_args_single_process(lookalike, 2));
}

static void test_eal_bad_workers(void **state)
{
	struct mlv_eal_args a;

	(void)state;
	assert_int_equal(mlv_eal_args_build("maglevd", NULL, 0, 0, MLV_LOG_INFO,
					    &a), MLV_E_RANGE);
	assert_int_equal(mlv_eal_args_build("maglevd", NULL, 0,
					    MLV_MAX_WORKERS + 1, MLV_LOG_INFO,
					    &a), MLV_E_RANGE);
}

/* maglevd's own lcore choice (0..workers) needs CPUs 0..workers; named
 * lcores are DPDK's to check. */
static void test_eal_cpus(void **state)
{
	char *plain[] = { "--in-memory" };
	char *named[] = { "--in-memory", "--lcores=0@0,1@1,2@1" };
	bool two[] = { true, true }, gap[] = { true, false, true, true };
	char why[512] = "";

	(void)state;
	assert_int_equal(mlv_eal_args_check_cpus(plain, 1, 1, two, 2, why,
						 sizeof(why)), MLV_OK);
	assert_int_equal(mlv_eal_args_check_cpus(plain, 1, 2, two, 2, why,
						 sizeof(why)), MLV_E_CONFIG);
	assert_non_null(strstr(why, "dataplane.workers: 2 workers need CPUs 0-2"));
	assert_non_null(strstr(why, "may run on CPUs 0-1 only"));
	/* a hole in the set: CPU 1 is missing */
	assert_int_equal(mlv_eal_args_check_cpus(plain, 1, 2, gap, 4, why,
						 sizeof(why)), MLV_E_CONFIG);
	assert_non_null(strstr(why, "CPUs 0,2-3 only"));
	assert_int_equal(mlv_eal_args_check_cpus(named, 2, 2, two, 2, why,
						 sizeof(why)), MLV_OK);
	/* this process's own set: one worker per CPU beyond the first fits */
	assert_int_equal(mlv_eal_args_check_cpus(plain, 1, 1000, NULL, 0, why,
						 sizeof(why)), MLV_E_CONFIG);
	assert_non_null(strstr(why, "sched_getaffinity"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_defaults),
		cmocka_unit_test(test_all_options),
		cmocka_unit_test(test_eal_override),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_default_config),
		cmocka_unit_test(test_bad_usage),
		cmocka_unit_test(test_eal_default_lcores),
		cmocka_unit_test(test_eal_operator_lcores_kept),
		cmocka_unit_test(test_eal_single_process),
		cmocka_unit_test(test_eal_bad_workers),
		cmocka_unit_test(test_eal_cpus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
