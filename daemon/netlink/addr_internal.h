/* SPDX-License-Identifier: BSD-3-Clause */
/* An mlv_ip as rtnetlink wants it: the socket family and the address
 * length. Shared by the netlink module's files. */
#ifndef MLV_NETLINK_ADDR_INTERNAL_H
#define MLV_NETLINK_ADDR_INTERNAL_H

#include <stddef.h>
#include <sys/socket.h>

#include "control/base/addr.h"

static inline int mlv_nl_af(const struct mlv_ip *ip)
{
	return ip->family == MLV_AF_INET6 ? AF_INET6 : AF_INET;
}

static inline size_t mlv_nl_alen(const struct mlv_ip *ip)
{
	return ip->family == MLV_AF_INET6 ? 16 : 4;
}

#endif
