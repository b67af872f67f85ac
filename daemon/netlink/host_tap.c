/* SPDX-License-Identifier: BSD-3-Clause */
/* Setting up the host TAP's interface (host_tap.h). */
#include "daemon/netlink/host_tap.h"

#include <errno.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>

#include "daemon/netlink/addr_internal.h"
#include "daemon/netlink/transact_internal.h"

struct conn {
	struct mnl_socket *nl;
	uint32_t portid;
	uint32_t seq;
};

static int addr_add(struct conn *c, int ifindex, const struct mlv_ip *ip,
		    uint32_t prefix)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifaddrmsg *ifa;

	nlh->nlmsg_type = RTM_NEWADDR;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE |
			   NLM_F_REPLACE;
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = (uint8_t)mlv_nl_af(ip);
	ifa->ifa_prefixlen = (uint8_t)prefix;
	ifa->ifa_index = (uint32_t)ifindex;
	ifa->ifa_scope = RT_SCOPE_UNIVERSE;
	mnl_attr_put(nlh, IFA_LOCAL, mlv_nl_alen(ip), ip->bytes);
	mnl_attr_put(nlh, IFA_ADDRESS, mlv_nl_alen(ip), ip->bytes);
	if (ip->family == MLV_AF_INET6) {
		ifa->ifa_flags = IFA_F_NODAD;
		mnl_attr_put_u32(nlh, IFA_FLAGS, IFA_F_NODAD);
	}
	return mlv_nl_transact(c->nl, c->portid, &c->seq, nlh, NULL, NULL);
}

enum mlv_err mlv_host_tap_setup(const char *ifname, const uint8_t mac[6],
				const struct mlv_ip *addr4, uint32_t prefix4,
				const struct mlv_ip *addr6, uint32_t prefix6,
				char *why, size_t why_len)
{
	struct conn c = { .seq = (uint32_t)time(NULL) };
	int ifindex = (int)if_nametoindex(ifname), err = 0;
	const char *step = "rtnetlink";
	char a[MLV_IP_STRLEN] = "";

	if (ifindex <= 0) {
		snprintf(why, why_len, "host TAP %s: no such interface: %s",
			 ifname, strerror(errno));
		return MLV_E_NOT_FOUND;
	}
	c.nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!c.nl || mnl_socket_bind(c.nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = errno;
		goto out;
	}
	c.portid = mnl_socket_get_portid(c.nl);
	/* the MAC first: the kernel must not answer ARP with the random
	 * one the TAP was made with */
	step = "MAC";
	if ((err = mlv_nl_link_set(c.nl, c.portid, &c.seq, ifindex, mac,
				   false)))
		goto out;
	step = "address";
	if (addr4->family != MLV_AF_NONE &&
	    (err = addr_add(&c, ifindex, addr4, prefix4))) {
		mlv_ip_format(addr4, a, sizeof(a));
		goto out;
	}
	if (addr6->family != MLV_AF_NONE &&
	    (err = addr_add(&c, ifindex, addr6, prefix6))) {
		mlv_ip_format(addr6, a, sizeof(a));
		goto out;
	}
	step = "up";
	err = mlv_nl_link_set(c.nl, c.portid, &c.seq, ifindex, NULL, true);
out:
	if (c.nl)
		mnl_socket_close(c.nl);
	if (!err)
		return MLV_OK;
	snprintf(why, why_len, "host TAP %s: cannot set its %s%s%s: %s", ifname,
		 step, a[0] ? " " : "", a, strerror(err));
	return MLV_E_IO;
}
