/* SPDX-License-Identifier: BSD-3-Clause */
/* The new-flow token bucket (dataplane/packet/flow_limit.h) against the
 * contract docs/forwarding.md states: under constant demand above the
 * rate, each of W workers admits rate / W flows a second, at most
 * ceil(burst / W) at once, so that over any window of T seconds a worker
 * admits at most (rate / W) T + ceil(burst / W); a long quiet spell
 * fills the bucket and no more; the clock may wrap. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "dataplane/packet/flow_limit.h"

static void test_make(void **state)
{
	struct mlv_flow_limit l;

	(void)state;
	l = mlv_flow_limit_make(0, 100, 4);
	assert_int_equal(l.rate, 0);
	l = mlv_flow_limit_make(1000, 0, 1);      /* burst: a tenth of a second */
	assert_int_equal(l.cap / l.cost, 100);
	l = mlv_flow_limit_make(1000, 10, 4);     /* ceil(10 / 4) */
	assert_int_equal(l.cost, 4000);
	assert_int_equal(l.cap / l.cost, 3);
	l = mlv_flow_limit_make(1, 1, 64);        /* at least one per worker */
	assert_int_equal(l.cap / l.cost, 1);
}

/* Offer `per_ms` new flows every millisecond for `ms` milliseconds from
 * `start`; returns how many were admitted. */
static uint64_t offer(struct mlv_flow_bucket *b, const struct mlv_flow_limit *l,
		      uint32_t start, uint32_t ms, uint32_t per_ms)
{
	uint64_t admitted = 0;

	for (uint32_t t = 0; t < ms; t++)
		for (uint32_t k = 0; k < per_ms; k++)
			admitted += mlv_flow_bucket_take(b, l, start + t);
	return admitted;
}

static void test_rate_under_flood(void **state)
{
	static const struct { uint32_t rate, burst, workers; } cases[] = {
		{ 1000, 0, 1 }, { 1000, 10, 2 }, { 5000, 500, 4 },
		{ 7, 3, 1 }, { 100000, 0, 8 }, { 333, 50, 3 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mlv_flow_limit l = mlv_flow_limit_make(
			cases[i].rate, cases[i].burst, cases[i].workers);
		struct mlv_flow_bucket b = { .tokens = l.cap, .last_ms = 100 };
		uint64_t burst_w = l.cap / l.cost;
		/* 2 s of demand at ten times the worker's share (at least
		 * one a millisecond) */
		uint32_t per_ms = cases[i].rate / cases[i].workers / 100 + 1;
		uint64_t got = offer(&b, &l, 100, 2000, per_ms);
		/* the first millisecond adds nothing: 1999 ms of refill */
		uint64_t want_max = (uint64_t)cases[i].rate * 1999 /
				    (1000ull * cases[i].workers) + burst_w;
		uint64_t want_min = want_max - 1 > burst_w ? want_max - 1 : 0;

		if (per_ms * 2000ull < want_max)
			want_min = want_max = per_ms * 2000ull;
		assert_true(got <= want_max);
		assert_true(got >= want_min);
	}
}

static void test_quiet_fills_to_the_burst_only(void **state)
{
	struct mlv_flow_limit l = mlv_flow_limit_make(1000, 20, 1);
	struct mlv_flow_bucket b = { .tokens = 0, .last_ms = 0 };

	(void)state;
	/* an hour's quiet, and a clock that wrapped meanwhile */
	b.last_ms = UINT32_MAX - 5;
	assert_int_equal(offer(&b, &l, 3600000u, 1, 100), 20);
	assert_int_equal(offer(&b, &l, 3600000u, 1, 100), 0);
	/* across the wrap: 6 ms of refill */
	b.last_ms = UINT32_MAX - 5;
	b.tokens = 0;
	assert_int_equal(offer(&b, &l, 0, 1, 100), 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_make),
		cmocka_unit_test(test_rate_under_flood),
		cmocka_unit_test(test_quiet_fills_to_the_burst_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
