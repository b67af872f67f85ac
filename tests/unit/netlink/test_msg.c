/* SPDX-License-Identifier: BSD-3-Clause */
/* mlv_nl_cb_run (daemon/netlink/msg_internal.h): the callback sees the
 * messages that lie whole in the buffer and no other, however long a
 * header says its message is (libmnl 1.0.4 takes 2 GiB and more as
 * fitting and walks out of the buffer). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <linux/rtnetlink.h>

#include "daemon/netlink/msg_internal.h"

static int count(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(*(int *)data)++;
	return MNL_CB_OK;
}

/* Two messages of 20 bytes, then a header claiming len bytes. */
static size_t build(uint8_t *buf, uint32_t len)
{
	struct nlmsghdr h = { .nlmsg_type = RTM_NEWROUTE, .nlmsg_len = 20 };

	memset(buf, 0, 96);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + 20, &h, sizeof(h));
	h.nlmsg_len = len;
	memcpy(buf + 40, &h, sizeof(h));
	return 96;
}

static void test_lengths(void **state)
{
	static const uint32_t lens[] = { 0x7fffffffu, 0x80000000u, 0xf0000000u,
					 0xfffffffdu, 0xffffffffu, 97, 15, 0 };
	uint8_t buf[96];

	(void)state;
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		int n = 0;
		size_t len = build(buf, lens[i]);

		assert_int_equal(mlv_nl_cb_run(buf, len, 0, 0, count, &n),
				 MNL_CB_OK);
		assert_int_equal(n, 2);
	}
}

static void test_whole(void **state)
{
	uint8_t buf[96];
	int n = 0;

	(void)state;
	/* the third fits exactly; an unaligned last one still counts */
	build(buf, 56);
	assert_int_equal(mlv_nl_cb_run(buf, 96, 0, 0, count, &n), MNL_CB_OK);
	assert_int_equal(n, 3);
	n = 0;
	build(buf, 53);
	assert_int_equal(mlv_nl_cb_run(buf, 93, 0, 0, count, &n), MNL_CB_OK);
	assert_int_equal(n, 3);
	n = 0;
	assert_int_equal(mlv_nl_cb_run(buf, 0, 0, 0, count, &n), MNL_CB_OK);
	assert_int_equal(n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
