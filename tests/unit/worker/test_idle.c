/* SPDX-License-Identifier: BSD-3-Clause */
/* The adaptive idle policy (dataplane/worker/idle.h), stepped without a clock. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "dataplane/worker/idle.h"

static void test_poll_never_backs_off(void **state)
{
	struct mlv_idle s;
	uint32_t us = 0;

	(void)state;
	mlv_idle_init(&s, false, 100);
	for (int i = 0; i < 100000; i++)
		assert_int_equal(mlv_idle_step(&s, 0, &us), MLV_IDLE_SPIN);
}

static void test_adaptive_backoff_sequence(void **state)
{
	struct mlv_idle s;
	uint32_t us = 0, prev = 0;
	uint32_t i;

	(void)state;
	mlv_idle_init(&s, true, 100);
	for (i = 1; i <= MLV_IDLE_PAUSE_AFTER; i++)
		assert_int_equal(mlv_idle_step(&s, 0, &us), MLV_IDLE_SPIN);
	for (; i <= MLV_IDLE_SLEEP_AFTER; i++)
		assert_int_equal(mlv_idle_step(&s, 0, &us), MLV_IDLE_PAUSE);
	/* sleeps grow and never exceed the cap */
	for (int k = 0; k < 20; k++) {
		assert_int_equal(mlv_idle_step(&s, 0, &us), MLV_IDLE_SLEEP);
		assert_true(us >= 1 && us <= 100);
		assert_true(us >= prev);
		prev = us;
	}
	assert_int_equal(us, 100);
}

static void test_packet_resets(void **state)
{
	struct mlv_idle s;
	uint32_t us = 0;

	(void)state;
	mlv_idle_init(&s, true, 50);
	for (uint32_t i = 0; i < MLV_IDLE_SLEEP_AFTER + 10; i++)
		mlv_idle_step(&s, 0, &us);
	assert_int_equal(mlv_idle_step(&s, 0, &us), MLV_IDLE_SLEEP);
	/* one packet: straight back to full polling ... */
	assert_int_equal(mlv_idle_step(&s, 1, &us), MLV_IDLE_SPIN);
	for (uint32_t i = 0; i < MLV_IDLE_PAUSE_AFTER; i++)
		assert_int_equal(mlv_idle_step(&s, 0, &us), MLV_IDLE_SPIN);
	/* ... and the next quiet spell starts from the shortest sleep */
	for (uint32_t i = MLV_IDLE_PAUSE_AFTER; i < MLV_IDLE_SLEEP_AFTER; i++)
		mlv_idle_step(&s, 0, &us);
	assert_int_equal(mlv_idle_step(&s, 0, &us), MLV_IDLE_SLEEP);
	assert_int_equal(us, 1);
}

static void test_zero_cap_is_one_microsecond(void **state)
{
	struct mlv_idle s;
	uint32_t us = 0;

	(void)state;
	mlv_idle_init(&s, true, 0);
	for (uint32_t i = 0; i < MLV_IDLE_SLEEP_AFTER; i++)
		mlv_idle_step(&s, 0, &us);
	for (int k = 0; k < 5; k++) {
		assert_int_equal(mlv_idle_step(&s, 0, &us), MLV_IDLE_SLEEP);
		assert_int_equal(us, 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_poll_never_backs_off),
		cmocka_unit_test(test_adaptive_backoff_sequence),
		cmocka_unit_test(test_packet_resets),
		cmocka_unit_test(test_zero_cap_is_one_microsecond),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
