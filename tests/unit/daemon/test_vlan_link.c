/* SPDX-License-Identifier: BSD-3-Clause */
/* A VLAN port's VLAN interface (daemon/netlink/vlan.h): RTM_NEWLINK
 * messages built here attribute by attribute, as the kernel writes them
 * for `ip link add link eth0 name eth0.100 type vlan id 100`, read as a
 * VLAN interface with its parent and VID; other kinds, a missing parent
 * or VID, and cut messages are not; and a dump of this namespace's links
 * finds no VLAN interface on lo. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "daemon/netlink/vlan.h"

/* An RTM_NEWLINK for ifindex with the given parts (kind NULL: no
 * IFLA_LINKINFO; parent 0: no IFLA_LINK; vid < 0: no IFLA_VLAN_ID). */
static struct nlmsghdr *link_msg(char *buf, int ifindex, int parent,
				 const char *kind, int vid)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = RTM_NEWLINK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_index = ifindex;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, "eth0.100");
	if (parent)
		mnl_attr_put_u32(nlh, IFLA_LINK, (uint32_t)parent);
	if (kind) {
		struct nlattr *info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);

		mnl_attr_put_strz(nlh, IFLA_INFO_KIND, kind);
		if (vid >= 0) {
			struct nlattr *data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);

			mnl_attr_put_u16(nlh, IFLA_VLAN_ID, (uint16_t)vid);
			mnl_attr_nest_end(nlh, data);
		}
		mnl_attr_nest_end(nlh, info);
	}
	return nlh;
}

static void test_vlan_link(void **state)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int ifindex = -1, parent = -1;
	uint16_t vid = 0;
	(void)state;

	assert_true(mlv_nl_link_vlan(link_msg(buf, 7, 3, "vlan", 100),
				     &ifindex, &parent, &vid));
	assert_int_equal(ifindex, 7);
	assert_int_equal(parent, 3);
	assert_int_equal(vid, 100);
	assert_true(mlv_nl_link_vlan(link_msg(buf, 9, 2, "vlan", 4094),
				     &ifindex, &parent, &vid));
	assert_int_equal(vid, 4094);
}

static void test_not_vlan(void **state)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int ifindex = -1, parent = -1;
	uint16_t vid = 0;
	struct nlmsghdr *nlh;
	(void)state;

	assert_false(mlv_nl_link_vlan(link_msg(buf, 7, 3, "veth", 100),
				      &ifindex, &parent, &vid));
	assert_false(mlv_nl_link_vlan(link_msg(buf, 7, 0, "vlan", 100),
				      &ifindex, &parent, &vid));
	assert_false(mlv_nl_link_vlan(link_msg(buf, 7, 3, "vlan", -1),
				      &ifindex, &parent, &vid));
	assert_false(mlv_nl_link_vlan(link_msg(buf, 7, 3, NULL, -1),
				      &ifindex, &parent, &vid));
	assert_false(mlv_nl_link_vlan(link_msg(buf, 0, 3, "vlan", 100),
				      &ifindex, &parent, &vid));
	/* another message type */
	nlh = link_msg(buf, 7, 3, "vlan", 100);
	nlh->nlmsg_type = RTM_DELLINK;
	assert_false(mlv_nl_link_vlan(nlh, &ifindex, &parent, &vid));
	/* cut before the VID: every shorter length is no VLAN, and nothing
	 * past the length is read (ASan builds check the reads) */
	nlh = link_msg(buf, 7, 3, "vlan", 100);
	for (uint32_t len = nlh->nlmsg_len - 1; len >= sizeof(*nlh); len--) {
		char cut[MNL_SOCKET_BUFFER_SIZE];
		struct nlmsghdr *c;

		memcpy(cut, nlh, len);
		c = (struct nlmsghdr *)cut;
		c->nlmsg_len = len;
		assert_false(mlv_nl_link_vlan(c, &ifindex, &parent, &vid));
	}
	assert_int_equal(ifindex, -1);   /* untouched by the refusals */
}

/* A live dump: lo has no VLAN interface. */
static void test_dump_finds_none(void **state)
{
	struct mlv_rtnl nl = { 0 };
	int child = -1;
	(void)state;

	assert_int_equal(mlv_rtnl_open_requests(&nl), MLV_OK);
	assert_int_equal(mlv_rtnl_vlan_child(&nl, 1, 100, &child),
			 MLV_E_NOT_FOUND);
	assert_int_equal(child, -1);
	mlv_rtnl_close(&nl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vlan_link),
		cmocka_unit_test(test_not_vlan),
		cmocka_unit_test(test_dump_finds_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
