/* SPDX-License-Identifier: BSD-3-Clause */
/* `maglev-decap attach` options (tools/bin/maglev-decap/attach_args.c):
 * --from is required, its CIDR lists and "any", and the reason given for
 * each refusal. Pure argument work: no root, no interface. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tools/bin/maglev-decap/attach_args.h"

static struct mlv_decap_attach_args args;
static char why[512];

/* Parse the NULL-terminated words after "attach". */
static enum mlv_err parse(const char *first, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;
	const char *w;

	argv[argc++] = (char *)"attach";
	va_start(ap, first);
	for (w = first; w; w = va_arg(ap, const char *))
		argv[argc++] = (char *)w;
	va_end(ap);
	argv[argc] = NULL;
	why[0] = '\0';
	return mlv_decap_parse_attach(argc, argv, &args, why, sizeof(why));
}

static void source_is(size_t i, const char *want)
{
	char buf[MLV_IP_PREFIX_STRLEN];

	assert_true(i < args.n_sources);
	assert_string_equal(mlv_ip_prefix_format(&args.sources[i], buf,
						 sizeof(buf)), want);
}

static void attach_without_from_is_refused(void **state)
{
	(void)state;
	assert_int_equal(parse("eth0", NULL), MLV_E_INVAL);
	assert_non_null(strstr(why, "needs --from"));
	assert_non_null(strstr(why, "inject packets with any source"));
	assert_non_null(strstr(why, "--from any"));
	assert_non_null(strstr(why, "eth0"));
	/* other options do not stand in for it */
	assert_int_equal(parse("eth0", "--address", "10.99.0.11",
			       "--gue-port", "6080", NULL), MLV_E_INVAL);
	assert_non_null(strstr(why, "needs --from"));
}

static void from_lists_and_repeats(void **state)
{
	struct mlv_decap_config cfg;

	(void)state;
	assert_int_equal(parse("eth0", "--from", "10.99.0.1,fd00:99::/64",
			       "--gue-port", "6080", "--from=10.98.7.0/24",
			       "--address", "10.99.0.11", "--mode", "native",
			       NULL), MLV_OK);
	assert_string_equal(args.dev, "eth0");
	assert_int_equal(args.mode, MLV_DECAP_MODE_NATIVE);
	assert_int_equal(args.n_sources, 3);
	source_is(0, "10.99.0.1/32");
	source_is(1, "fd00:99::/64");
	source_is(2, "10.98.7.0/24");
	mlv_decap_args_config(&args, 1500, &cfg);
	assert_ptr_equal(cfg.sources, args.sources);
	assert_int_equal(cfg.n_sources, 3);
	assert_int_equal(cfg.n_addrs, 1);
	assert_int_equal(cfg.n_gue_ports, 1);
	assert_int_equal(cfg.gue_ports[0], 6080);
	/* options may follow the interface too */
	assert_int_equal(parse("--from", "10.99.0.2", "eth1", NULL), MLV_OK);
	assert_string_equal(args.dev, "eth1");
	assert_int_equal(args.n_sources, 1);     /* nothing left from before */
	assert_int_equal(args.n_addrs, 0);
	assert_int_equal(args.mode, MLV_DECAP_MODE_AUTO);
}

static void from_any_is_every_source_of_both_families(void **state)
{
	(void)state;
	assert_int_equal(parse("eth0", "--from", "any", NULL), MLV_OK);
	assert_int_equal(args.n_sources, 2);
	source_is(0, "0.0.0.0/0");
	source_is(1, "::/0");
	assert_int_equal(parse("eth0", "--from", "10.99.0.1,any", NULL),
			 MLV_OK);
	assert_int_equal(args.n_sources, 3);
	source_is(1, "0.0.0.0/0");
}

static void bad_from_names_the_bad_entry(void **state)
{
	(void)state;
	assert_int_equal(parse("eth0", "--from", "10.99.0.1,10.99.0.300/32",
			       NULL), MLV_E_INVAL);
	assert_non_null(strstr(why, "--from 10.99.0.300/32: not an IPv4/IPv6 "
			       "address"));
	assert_int_equal(parse("eth0", "--from", "10.99.0.1/24", NULL),
			 MLV_E_INVAL);
	assert_non_null(strstr(why, "--from 10.99.0.1/24: address bits set "
			       "past the prefix length"));
	assert_int_equal(parse("eth0", "--from", "fd00::/200", NULL),
			 MLV_E_INVAL);
	assert_non_null(strstr(why, "--from fd00::/200: prefix length is not "
			       "0-128"));
	assert_int_equal(parse("eth0", "--from", "10.99.0.1,", NULL),
			 MLV_E_INVAL);
	assert_non_null(strstr(why, "--from 10.99.0.1,: an empty entry"));
	assert_int_equal(parse("eth0", "--from", "", NULL), MLV_E_INVAL);
	assert_non_null(strstr(why, "an empty entry"));
	assert_int_equal(parse("eth0", "--from", "ANY", NULL), MLV_E_INVAL);
	assert_non_null(strstr(why, "--from ANY: not an IPv4/IPv6 address"));
	assert_int_equal(parse("eth0", "--from", NULL), MLV_E_INVAL);
	assert_string_equal(why, "--from needs a value");
}

static void too_many_sources_are_refused(void **state)
{
	char list[MLV_DECAP_ARGS_MAX_SOURCES * 16];
	size_t off = 0;

	(void)state;
	for (unsigned i = 0; i < MLV_DECAP_ARGS_MAX_SOURCES - 1; i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off,
					"10.%u.%u.0/24,", i >> 8, i & 0xff);
	list[off - 1] = '\0';
	assert_int_equal(parse("eth0", "--from", list, NULL), MLV_OK);
	assert_int_equal(args.n_sources, MLV_DECAP_ARGS_MAX_SOURCES - 1);
	/* "any" is two entries: one place left is not enough */
	assert_int_equal(parse("eth0", "--from", list, "--from", "any", NULL),
			 MLV_E_LIMIT);
	assert_non_null(strstr(why, "at most 256 sources"));
	assert_int_equal(parse("eth0", "--from", list, "--from", "10.255.0.1",
			       NULL), MLV_OK);
	assert_int_equal(parse("eth0", "--from", list, "--from",
			       "10.255.0.1,10.255.0.2", NULL), MLV_E_LIMIT);
}

static void other_usage_errors(void **state)
{
	(void)state;
	assert_int_equal(parse("--from", "any", NULL), MLV_E_INVAL);
	assert_string_equal(why, "attach takes one interface, 0 given");
	assert_int_equal(parse("eth0", "eth1", "--from", "any", NULL),
			 MLV_E_INVAL);
	assert_string_equal(why, "attach takes one interface, 2 given");
	assert_int_equal(parse("eth0", "--from", "any", "--mode", "fast",
			       NULL), MLV_E_INVAL);
	assert_non_null(strstr(why, "--mode fast"));
	assert_int_equal(parse("eth0", "--from", "any", "--gue-port", "0",
			       NULL), MLV_E_INVAL);
	assert_non_null(strstr(why, "--gue-port 0"));
	assert_int_equal(parse("eth0", "--from", "any", "--address",
			       "10.99.0.0/24", NULL), MLV_E_INVAL);
	assert_non_null(strstr(why, "--address 10.99.0.0/24"));
	assert_int_equal(parse("eth0", "--frm", "any", NULL), MLV_E_INVAL);
	assert_string_equal(why, "unknown option --frm");
	assert_int_equal(parse("eth0", "-x", NULL), MLV_E_INVAL);
	assert_string_equal(why, "unknown option -x");
	assert_int_equal(parse("eth0", "--help", NULL), MLV_OK);
	assert_true(args.help);
}

/* SYN-ACK clamping: on with DEV's MTU by default, --path-mtu overrides
 * it, --mss-clamp off turns it off; bad values say what is wanted. */
static void mss_clamp_and_path_mtu(void **state)
{
	struct mlv_decap_config cfg;

	(void)state;
	assert_int_equal(parse("eth0", "--from", "any", NULL), MLV_OK);
	mlv_decap_args_config(&args, 9000, &cfg);
	assert_int_equal(cfg.path_mtu, 9000);
	assert_int_equal(parse("eth0", "--from", "any", "--mss-clamp", "auto",
			       "--path-mtu", "1400", NULL), MLV_OK);
	mlv_decap_args_config(&args, 9000, &cfg);
	assert_int_equal(cfg.path_mtu, 1400);
	assert_int_equal(parse("eth0", "--from", "any", "--mss-clamp", "off",
			       NULL), MLV_OK);
	mlv_decap_args_config(&args, 9000, &cfg);
	assert_int_equal(cfg.path_mtu, 0);

	assert_int_equal(parse("eth0", "--from", "any", "--mss-clamp", "1400",
			       NULL), MLV_E_INVAL);
	assert_non_null(strstr(why, "--mss-clamp 1400: auto or off"));
	assert_int_equal(parse("eth0", "--from", "any", "--path-mtu", "575",
			       NULL), MLV_E_INVAL);
	assert_non_null(strstr(why, "--path-mtu 575: not an MTU (576-65535)"));
	assert_int_equal(parse("eth0", "--from", "any", "--path-mtu", "65536",
			       NULL), MLV_E_INVAL);
	assert_int_equal(parse("eth0", "--from", "any", "--path-mtu", "-1500",
			       NULL), MLV_E_INVAL);
	assert_int_equal(parse("eth0", "--from", "any", "--path-mtu", "1400",
			       "--mss-clamp", "off", NULL), MLV_E_INVAL);
	assert_non_null(strstr(why, "--mss-clamp off"));
}

/* Second chance: on by default, --second-chance off turns it off here;
 * other values say what is wanted. */
static void second_chance_switch(void **state)
{
	struct mlv_decap_config cfg;

	(void)state;
	assert_int_equal(parse("eth0", "--from", "any", NULL), MLV_OK);
	mlv_decap_args_config(&args, 1500, &cfg);
	assert_false(cfg.second_chance_off);
	assert_int_equal(parse("eth0", "--from", "any", "--second-chance",
			       "off", NULL), MLV_OK);
	mlv_decap_args_config(&args, 1500, &cfg);
	assert_true(cfg.second_chance_off);
	assert_int_equal(parse("eth0", "--second-chance", "off",
			       "--second-chance", "on", "--from", "any", NULL),
			 MLV_OK);
	mlv_decap_args_config(&args, 1500, &cfg);
	assert_false(cfg.second_chance_off);
	assert_int_equal(parse("eth0", "--from", "any", "--second-chance",
			       "no", NULL), MLV_E_INVAL);
	assert_string_equal(why, "--second-chance no: on or off");
	assert_int_equal(parse("eth0", "--from", "any", "--second-chance",
			       NULL), MLV_E_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(attach_without_from_is_refused),
		cmocka_unit_test(from_lists_and_repeats),
		cmocka_unit_test(from_any_is_every_source_of_both_families),
		cmocka_unit_test(bad_from_names_the_bad_entry),
		cmocka_unit_test(too_many_sources_are_refused),
		cmocka_unit_test(other_usage_errors),
		cmocka_unit_test(mss_clamp_and_path_mtu),
		cmocka_unit_test(second_chance_switch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
