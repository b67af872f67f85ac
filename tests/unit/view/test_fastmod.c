/* SPDX-License-Identifier: BSD-3-Clause */
/* mlv_fastmod (dataplane/view/view.h): the data plane's slot = hash mod
 * table_size without a division must equal the % it stands for on every
 * input, or flows would move to other backends. Checked against % on the
 * edges of both operands and on pseudo-random pairs, and on every prime
 * table size of the configuration's range around the default. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "control/tables/maglev.h"
#include "dataplane/view/view.h"

/* xorshift32: a reproducible stream of 32-bit operands. */
static uint32_t next_rand(uint32_t *s)
{
	uint32_t x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*s = x;
	return x;
}

/* Every dividend that sits on an edge for d: 0, around d and its
 * multiples, and the top of the 32-bit range. */
static void check_edges(uint32_t d)
{
	uint64_t m = mlv_fastmod_m(d);
	const uint32_t fixed[] = { 0, 1, 2, UINT32_MAX, UINT32_MAX - 1,
				   UINT32_MAX / 2, UINT32_MAX / 2 + 1 };

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		assert_int_equal(mlv_fastmod(fixed[i], m, d), fixed[i] % d);
	for (int64_t delta = -1; delta <= 1; delta++) {
		uint64_t a = (uint64_t)d + (uint64_t)delta;
		uint64_t top = (uint64_t)(UINT32_MAX / d) * d + (uint64_t)delta;

		if (a <= UINT32_MAX)
			assert_int_equal(mlv_fastmod((uint32_t)a, m, d),
					 (uint32_t)a % d);
		if (top <= UINT32_MAX)
			assert_int_equal(mlv_fastmod((uint32_t)top, m, d),
					 (uint32_t)top % d);
	}
}

static void test_edge_divisors(void **state)
{
	const uint32_t divisors[] = {
		1, 2, 3, 5, 7, 10, 251, 65535, 65536, 65537, 655373,
		(1u << 23) - 1, 0x7fffffffu, 0x80000000u, 0x80000001u,
		UINT32_MAX - 1, UINT32_MAX,
	};

	(void)state;
	for (size_t i = 0; i < sizeof(divisors) / sizeof(divisors[0]); i++)
		check_edges(divisors[i]);
}

static void test_random_pairs(void **state)
{
	uint32_t s = 0x9e3779b9u;

	(void)state;
	for (int i = 0; i < 2000000; i++) {
		uint32_t d = next_rand(&s);
		uint32_t a = next_rand(&s);

		/* a third of the divisors small, as table sizes are */
		if (i % 3 == 0)
			d = (d >> 9) | 1;
		if (d == 0)
			d = 1;
		assert_int_equal(mlv_fastmod(a, mlv_fastmod_m(d), d), a % d);
	}
}

/* The sizes a VIP's table may have: every prime from the smallest table
 * up past the default, each against a stream of hashes. */
static void test_table_sizes(void **state)
{
	uint32_t s = 12345;
	unsigned checked = 0;

	(void)state;
	for (uint32_t d = MLV_MAGLEV_MIN_SIZE; d <= 70000; d++) {
		if (mlv_maglev_check_size(d) != MLV_OK)
			continue;
		check_edges(d);
		for (int i = 0; i < 64; i++) {
			uint32_t a = next_rand(&s);

			assert_int_equal(mlv_fastmod(a, mlv_fastmod_m(d), d),
					 a % d);
		}
		checked++;
	}
	assert_true(checked > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edge_divisors),
		cmocka_unit_test(test_random_pairs),
		cmocka_unit_test(test_table_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
