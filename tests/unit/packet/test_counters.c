/* SPDX-License-Identifier: BSD-3-Clause */
/* Counter names generated at compile time from the X-macros: checked
 * against a run-time lower-casing of the same macro lists. */
#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "dataplane/packet/counters.h"

static void lower(const char *in, char *out, size_t len)
{
	size_t i = 0;

	for (; in[i] && i + 1 < len; i++)
		out[i] = (char)tolower((unsigned char)in[i]);
	out[i] = '\0';
}

struct expect {
	const char *upper;
	const char *help;
};

#define EXPECT(name, help) { #name, help },
static const struct expect worker_expect[] = { MLV_WORKER_COUNTERS(EXPECT) };
static const struct expect drop_expect[] = { MLV_DROP_REASONS(EXPECT) };
static const struct expect flow_expect[] = { MLV_FLOW_COUNTERS(EXPECT) };
#undef EXPECT

static void check(const struct expect *e, int n, const char *(*name)(int),
		  const char *(*help)(int))
{
	char want[64];

	for (int i = 0; i < n; i++) {
		lower(e[i].upper, want, sizeof(want));
		assert_string_equal(name(i), want);
		assert_string_equal(help(i), e[i].help);
		for (int j = 0; j < i; j++)
			assert_string_not_equal(name(i), name(j));
	}
	/* Out of range: a fixed string, not a crash. */
	assert_string_equal(name(n), "unknown");
	assert_string_equal(name(-1), "unknown");
	assert_string_equal(help(n + 7), "unknown");
}

/* Adapters from the enum-typed functions to one shape. */
static const char *wn(int i) { return mlv_worker_counter_name((enum mlv_worker_counter)i); }
static const char *wh(int i) { return mlv_worker_counter_help((enum mlv_worker_counter)i); }
static const char *dn(int i) { return mlv_drop_reason_name((enum mlv_drop_reason)i); }
static const char *dh(int i) { return mlv_drop_reason_help((enum mlv_drop_reason)i); }
static const char *fn(int i) { return mlv_flow_counter_name((enum mlv_flow_counter)i); }
static const char *fh(int i) { return mlv_flow_counter_help((enum mlv_flow_counter)i); }

static void test_worker_counter_names(void **state)
{
	(void)state;
	assert_int_equal(sizeof(worker_expect) / sizeof(worker_expect[0]), MLV_CTR__COUNT);
	check(worker_expect, MLV_CTR__COUNT, wn, wh);
	assert_string_equal(mlv_worker_counter_name(MLV_CTR_RX_PACKETS), "rx_packets");
}

static void test_drop_reason_names(void **state)
{
	(void)state;
	check(drop_expect, MLV_DROP__COUNT, dn, dh);
	assert_string_equal(mlv_drop_reason_name(MLV_DROP_NOT_VIP), "not_vip");
}

static void test_flow_counter_names(void **state)
{
	(void)state;
	check(flow_expect, MLV_FLOW__COUNT, fn, fh);
	assert_string_equal(mlv_flow_counter_name(MLV_FLOW_NEW_FLOWS), "new_flows");
}

/* The measurement builds' per-pass line (dataplane/packet/pass_cycles.h): per
 * packet figures, own = every pass but the flush, and own over flush;
 * nothing before any packet; a short buffer truncated, never overrun. */
static void test_pass_cycles_format(void **state)
{
	struct mlv_pass_cycles pc = { .packets = 0 };
	char buf[160], small[12];

	(void)state;
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(mlv_pass_cycles_format(&pc, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");

	pc.cycles[MLV_PASS_PARSE] = 110;
	pc.cycles[MLV_PASS_VIP] = 120;
	pc.cycles[MLV_PASS_BACKEND] = 405;
	pc.cycles[MLV_PASS_FLUSH] = 160;
	pc.packets = 10;
	mlv_pass_cycles_format(&pc, buf, sizeof(buf));
	assert_string_equal(buf, "parse 11.0 vip 12.0 backend 40.5 flush 16.0 "
				 "own 63.5 own/flush 3.97");

	memset(small, 'x', sizeof(small));
	assert_true(mlv_pass_cycles_format(&pc, small, sizeof(small) - 1) >
		    (int)sizeof(small));
	assert_int_equal(strlen(small), sizeof(small) - 2);
	assert_int_equal(small[sizeof(small) - 1], 'x');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worker_counter_names),
		cmocka_unit_test(test_drop_reason_names),
		cmocka_unit_test(test_flow_counter_names),
		cmocka_unit_test(test_pass_cycles_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
