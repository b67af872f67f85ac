/* SPDX-License-Identifier: BSD-3-Clause */
/* mlv_nl_cb_run (daemon/netlink/msg_internal.h): the callback sees the
 * messages that lie whole in the buffer and no other, however long a
 * header says its message is (libmnl 1.0.4 takes 2 GiB and more as
 * fitting and walks out of the buffer). mlv_nl_attr_parse: the walk of
 * a message's attributes ends at its nlmsg_len, not at its aligned tail
 * (libmnl's mnl_attr_parse lets an attribute end up to 3 bytes past an
 * unaligned message). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
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

static int count_attr(const struct nlattr *a, void *data)
{
	(void)a;
	(*(int *)data)++;
	return MNL_CB_OK;
}

/* A route message: header, rtmsg (12 bytes), a 4-byte attribute at
 * offset 28, then a 12-byte one at 32 that ends at 44. The message is
 * msg_len bytes long and is the last thing in a buffer of exactly that
 * size, so a sanitizer build sees any read past it. Returns the number
 * of attributes the walk handed to its callback. */
static int attrs_seen(uint32_t msg_len)
{
	uint8_t whole[48] = { 0 };
	struct nlmsghdr h = { .nlmsg_type = RTM_NEWROUTE, .nlmsg_len = msg_len };
	struct nlattr a1 = { .nla_len = 4, .nla_type = RTA_UNSPEC };
	struct nlattr a2 = { .nla_len = 12, .nla_type = RTA_DST };
	uint8_t *buf;
	int n = 0;

	memcpy(whole, &h, sizeof(h));
	memcpy(whole + 28, &a1, sizeof(a1));
	memcpy(whole + 32, &a2, sizeof(a2));
	memset(whole + 36, 0xab, 8);
	buf = malloc(msg_len);
	assert_non_null(buf);
	memcpy(buf, whole, msg_len);
	assert_int_equal(mlv_nl_attr_parse((const struct nlmsghdr *)buf, 12,
					   count_attr, &n), MNL_CB_OK);
	free(buf);
	return n;
}

static void test_attrs_end_at_message(void **state)
{
	(void)state;
	/* hand-counted from the layout above */
	assert_int_equal(attrs_seen(48), 2);   /* padding after both */
	assert_int_equal(attrs_seen(44), 2);   /* ends exactly at the end */
	/* unaligned lengths whose aligned tail (44) covers the second
	 * attribute: libmnl's own walk hands it over, 1 to 3 bytes past the
	 * message's end */
	assert_int_equal(attrs_seen(43), 1);
	assert_int_equal(attrs_seen(42), 1);
	assert_int_equal(attrs_seen(41), 1);
	assert_int_equal(attrs_seen(33), 1);   /* the second's header cut */
	assert_int_equal(attrs_seen(32), 1);
	assert_int_equal(attrs_seen(31), 0);   /* the first cut short */
	assert_int_equal(attrs_seen(28), 0);   /* fixed headers alone */
	assert_int_equal(attrs_seen(26), 0);   /* rtmsg cut short */
	assert_int_equal(attrs_seen(16), 0);   /* no payload at all */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_whole),
		cmocka_unit_test(test_attrs_end_at_message),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
