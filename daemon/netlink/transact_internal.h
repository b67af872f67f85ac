/* SPDX-License-Identifier: BSD-3-Clause */
/* One rtnetlink change and its acknowledgement (or a dump to its end),
 * on a socket of the caller's. Shared by the netlink module's files that
 * change things (announce.c, host_tap.c). Control thread only. */
#ifndef MLV_NETLINK_TRANSACT_INTERNAL_H
#define MLV_NETLINK_TRANSACT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <libmnl/libmnl.h>

/* Send nlh (NLM_F_ACK set by the caller) with the next sequence number
 * of *seq and read its answer, running cb (may be NULL) over every
 * message of it (a dump) until NLMSG_DONE or the ACK. 0, or an errno
 * value (the kernel's refusal, or the socket's error). Answers left
 * queued by an earlier request are read away first. */
int mlv_nl_transact(struct mnl_socket *nl, uint32_t portid, uint32_t *seq,
		    struct nlmsghdr *nlh, mnl_cb_t cb, void *data);

/* Set interface ifindex's MAC (mac, or NULL to leave it) and bring it up
 * (up) through mlv_nl_transact. 0, or an errno value. */
int mlv_nl_link_set(struct mnl_socket *nl, uint32_t portid, uint32_t *seq,
		    int ifindex, const uint8_t *mac, bool up);

#endif
