/* SPDX-License-Identifier: BSD-3-Clause */
/* mlv_ip_prefix_parse / _format (control/base/addr.c): CIDR text in both
 * families, bare addresses as host prefixes, and every way the text can
 * be wrong, each with its reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "control/base/addr.h"

/* text must parse, and format back as want. */
static void parses_as(const char *text, const char *want, uint8_t family,
		      uint8_t len)
{
	struct mlv_ip_prefix p;
	char buf[MLV_IP_PREFIX_STRLEN];

	assert_null(mlv_ip_prefix_parse(text, &p));
	assert_int_equal(p.ip.family, family);
	assert_int_equal(p.len, len);
	assert_string_equal(mlv_ip_prefix_format(&p, buf, sizeof(buf)), want);
}

static void refused(const char *text, const char *why)
{
	struct mlv_ip_prefix p;
	const char *got;

	memset(&p, 0x5a, sizeof(p));
	got = mlv_ip_prefix_parse(text, &p);
	assert_non_null(got);
	assert_string_equal(got, why);
	assert_int_equal(p.len, 0x5a);        /* *out untouched */
}

static void prefixes_of_both_families(void **state)
{
	struct mlv_ip_prefix p;

	(void)state;
	parses_as("10.99.7.0/24", "10.99.7.0/24", MLV_AF_INET, 24);
	parses_as("0.0.0.0/0", "0.0.0.0/0", MLV_AF_INET, 0);
	parses_as("10.99.0.1/32", "10.99.0.1/32", MLV_AF_INET, 32);
	parses_as("fd00:99:1::/48", "fd00:99:1::/48", MLV_AF_INET6, 48);
	parses_as("::/0", "::/0", MLV_AF_INET6, 0);
	parses_as("fd00:99::1/128", "fd00:99::1/128", MLV_AF_INET6, 128);
	/* the last bit inside the prefix may be set */
	parses_as("10.99.7.128/25", "10.99.7.128/25", MLV_AF_INET, 25);
	assert_null(mlv_ip_prefix_parse("10.99.7.0/24", &p));
	assert_int_equal(p.ip.bytes[2], 7);
	assert_int_equal(p.ip.bytes[4], 0);   /* IPv4: the rest zero */
}

static void bare_addresses_are_host_prefixes(void **state)
{
	(void)state;
	parses_as("10.99.0.1", "10.99.0.1/32", MLV_AF_INET, 32);
	parses_as("fd00:99::1", "fd00:99::1/128", MLV_AF_INET6, 128);
}

static void bad_text_is_refused_with_its_reason(void **state)
{
	(void)state;
	refused("", "empty");
	refused("10.99.0.300/32", "not an IPv4/IPv6 address");
	refused("any", "not an IPv4/IPv6 address");
	refused("/24", "not an IPv4/IPv6 address");
	refused("10.99.0.0/33", "prefix length is not 0-32");
	refused("fd00::/129", "prefix length is not 0-128");
	refused("10.99.0.0/", "prefix length is not 0-32");
	refused("10.99.0.0/+8", "prefix length is not 0-32");
	refused("10.99.0.0/ 8", "prefix length is not 0-32");
	refused("10.99.0.0/8x", "prefix length is not 0-32");
	refused("10.99.0.0/99999999999999999999", "prefix length is not 0-32");
	refused("10.99.0.0/24/24", "prefix length is not 0-32");
	refused("10.99.0.1/24", "address bits set past the prefix length");
	refused("10.99.7.128/24", "address bits set past the prefix length");
	refused("fd00:99::1/64", "address bits set past the prefix length");
	refused("0.0.0.1/0", "address bits set past the prefix length");
	refused("fd00:99:1:2:3:4:5:6:7/64", "not an IPv4/IPv6 address");
	refused("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255.1/64",
		"not an IPv4/IPv6 address");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(prefixes_of_both_families),
		cmocka_unit_test(bare_addresses_are_host_prefixes),
		cmocka_unit_test(bad_text_is_refused_with_its_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
