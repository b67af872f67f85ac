/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the mbuf pool settings (dataplane.mbufs,
 * dataplane.mbuf_size): defaults, ranges, the data-room check against the
 * ports' MTUs at its line:col, and the data room the pools get
 * (control/config/mbuf_size.h).
 *
 * Expected sizes follow the rule docs/config.md states (128 bytes of
 * headroom + MTU + 26 bytes of Ethernet, two VLAN tags and FCS), written
 * out here rather than taken from the implementation's constants. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "control/config/config.h"
#include "control/config/mbuf_size.h"

#include "tests/support/config_fixture.h"

/* documented: headroom and frame overhead around a port's MTU */
#define DOC_HEADROOM 128
#define DOC_OVERHEAD 26
#define DOC_DPDK_DEFAULT 2176

/* A config whose dataplane section carries `extra` (indented keys) and
 * two ports of the given MTUs. */
static void config(char *buf, size_t len, const char *extra, unsigned mtu_a,
		   unsigned mtu_b)
{
	snprintf(buf, len,
		 "dataplane:\n"
		 "%s"
		 "  ports:\n"
		 "    - {name: narrow, device: d0, address: 10.0.0.1, mtu: %u}\n"
		 "    - {name: wide, device: d1, address: 10.0.0.2, mtu: %u}\n"
		 "vips: []\n", extra, mtu_a, mtu_b);
}

/* The config is rejected with an error at needle containing msg. */
static void expect_error_at(const struct load *l, const char *text,
			    const char *needle, const char *msg)
{
	assert_int_equal(l->err, MLV_E_CONFIG);
	assert_null(l->cfg);
	expect_error(l, text, needle, msg);
}

static uint32_t round64(uint32_t n)
{
	return (n + 63) / 64 * 64;
}

static void test_defaults_are_automatic(void **state)
{
	char y[1024];
	struct load l;
	uint32_t want;
	(void)state;

	config(y, sizeof(y), "", 1500, 1500);
	load(&l, y);
	expect_ok(&l);
	assert_int_equal(l.cfg->mbufs, 0);
	assert_int_equal(l.cfg->mbuf_size, 0);
	/* a 1500-byte MTU fits DPDK's default buffer */
	want = DOC_HEADROOM + round64(1500 + DOC_OVERHEAD);
	assert_true(want <= DOC_DPDK_DEFAULT);
	assert_int_equal(mlv_mbuf_size(l.cfg), DOC_DPDK_DEFAULT);
	unload(&l);

	/* jumbo frames: the largest MTU decides, in whole cache lines */
	config(y, sizeof(y), "", 576, 9000);
	load(&l, y);
	expect_ok(&l);
	want = DOC_HEADROOM + round64(9000 + DOC_OVERHEAD);
	assert_true(want > DOC_DPDK_DEFAULT);
	assert_int_equal(mlv_mbuf_size(l.cfg), want);
	unload(&l);
}

static void test_values_accepted(void **state)
{
	char y[1024];
	struct load l;
	(void)state;

	config(y, sizeof(y), "  mbufs: 1048576\n  mbuf_size: 768\n", 576, 576);
	load(&l, y);
	expect_ok(&l);
	assert_int_equal(l.cfg->mbufs, 1048576);
	assert_int_equal(l.cfg->mbuf_size, 768);
	/* a set size is used as it is, below DPDK's default too */
	assert_int_equal(mlv_mbuf_size(l.cfg), 768);
	unload(&l);

	/* 0 written out is the automatic size, whatever the MTU */
	config(y, sizeof(y), "  mbufs: 0\n  mbuf_size: 0\n", 9216, 576);
	load(&l, y);
	expect_ok(&l);
	assert_true(mlv_mbuf_size(l.cfg) >= DOC_HEADROOM + 9216 + DOC_OVERHEAD);
	unload(&l);
}

static void test_size_checked_against_largest_mtu(void **state)
{
	unsigned exact = DOC_HEADROOM + 1500 + DOC_OVERHEAD;
	char extra[64], y[1024], want[128], value[16];
	struct load l;
	(void)state;

	/* exactly the documented minimum for the wide port is enough */
	snprintf(extra, sizeof(extra), "  mbuf_size: %u\n", exact);
	config(y, sizeof(y), extra, 576, 1500);
	load(&l, y);
	expect_ok(&l);
	assert_int_equal(mlv_mbuf_size(l.cfg), exact);
	unload(&l);

	/* one byte less: the error points at the value and names the port
	 * with the largest MTU, not the first one */
	snprintf(extra, sizeof(extra), "  mbuf_size: %u\n", exact - 1);
	config(y, sizeof(y), extra, 576, 1500);
	load(&l, y);
	snprintf(value, sizeof(value), "%u\n", exact - 1);
	expect_error_at(&l, y, value, "port 'wide' (mtu 1500)");
	snprintf(want, sizeof(want), "needs at least %u", exact);
	expect_error_at(&l, y, value, want);
	assert_int_equal(l.d.n_errors, 1);
	unload(&l);
}

static void test_out_of_range_and_types(void **state)
{
	const char *y =
		"dataplane:\n"
		"  mbufs: 16777217\n"
		"  mbuf_size: 65536\n"
		"  ports:\n"
		"    - {name: p, device: d, address: 10.0.0.1}\n"
		"vips: []\n";
	const char *z =
		"dataplane:\n"
		"  mbufs: -1\n"
		"  mbuf_size: \"768\"\n"
		"  ports:\n"
		"    - {name: p, device: d, address: 10.0.0.1}\n"
		"vips: []\n";
	struct load l;
	(void)state;

	load(&l, y);
	expect_error_at(&l, y, "16777217", "between 0 and 16777216");
	expect_error_at(&l, y, "65536", "between 0 and 65535");
	assert_int_equal(l.d.n_errors, 2);
	unload(&l);

	load(&l, z);
	expect_error_at(&l, z, "-1", "'mbufs'");
	expect_error_at(&l, z, "\"768\"", "'mbuf_size' must be an integer");
	assert_int_equal(l.d.n_errors, 2);
	unload(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_are_automatic),
		cmocka_unit_test(test_values_accepted),
		cmocka_unit_test(test_size_checked_against_largest_mtu),
		cmocka_unit_test(test_out_of_range_and_types),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
