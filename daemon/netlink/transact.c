/* SPDX-License-Identifier: BSD-3-Clause */
/* rtnetlink requests with an acknowledgement (transact_internal.h). */
#include "daemon/netlink/transact_internal.h"

#include <errno.h>
#include <net/if.h>
#include <sys/socket.h>

#include <linux/rtnetlink.h>

#include "daemon/netlink/msg_internal.h"

int mlv_nl_transact(struct mnl_socket *nl, uint32_t portid, uint32_t *seq,
		    struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int rc;

	/* An answer that came after its request timed out is still queued:
	 * read it away, or it would be taken for this request's (a wrong
	 * sequence number) and leave this one's for the next. */
	while (recv(mnl_socket_get_fd(nl), buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	nlh->nlmsg_seq = ++*seq;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return errno;
	do {
		ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof(buf));

		if (n < 0)
			return errno;
		rc = mlv_nl_cb_run(buf, (size_t)n, nlh->nlmsg_seq, portid, cb,
				   data);
		if (rc == MNL_CB_ERROR)
			return errno ? errno : EIO;
	} while (rc > MNL_CB_STOP);
	return 0;
}

int mlv_nl_link_set(struct mnl_socket *nl, uint32_t portid, uint32_t *seq,
		    int ifindex, const uint8_t *mac, bool up)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	if (up) {
		ifi->ifi_flags = IFF_UP;
		ifi->ifi_change = IFF_UP;
	}
	if (mac)
		mnl_attr_put(nlh, IFLA_ADDRESS, 6, mac);
	return mlv_nl_transact(nl, portid, seq, nlh, NULL, NULL);
}
