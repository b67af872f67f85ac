/* SPDX-License-Identifier: BSD-3-Clause */
#include "daemon/netlink/rtnl.h"

#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>

#include "daemon/netlink/addr_internal.h"
#include "daemon/netlink/msg_internal.h"

/* Neighbour states whose link-layer address can be used as is. */
#define NUD_USABLE (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | \
		    NUD_PERMANENT | NUD_NOARP)

enum mlv_err mlv_rtnl_open_requests(struct mlv_rtnl *nl)
{
	memset(nl, 0, sizeof(*nl));
	nl->req = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (!nl->req || mnl_socket_bind(nl->req, 0, MNL_SOCKET_AUTOPID) < 0) {
		int saved = errno;

		mlv_rtnl_close(nl);
		errno = saved;
		return MLV_E_IO;
	}
	nl->req_portid = mnl_socket_get_portid(nl->req);
	nl->seq = (uint32_t)time(NULL);
	return MLV_OK;
}

enum mlv_err mlv_rtnl_open(struct mlv_rtnl *nl)
{
	if (mlv_rtnl_open_requests(nl))
		return MLV_E_IO;
	nl->mon = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (!nl->mon ||
	    mnl_socket_bind(nl->mon, RTMGRP_NEIGH | RTMGRP_IPV4_ROUTE |
			    RTMGRP_IPV6_ROUTE, MNL_SOCKET_AUTOPID) < 0) {
		int saved = errno;

		mlv_rtnl_close(nl);
		errno = saved;
		return MLV_E_IO;
	}
	return MLV_OK;
}

void mlv_rtnl_close(struct mlv_rtnl *nl)
{
	if (nl->req)
		mnl_socket_close(nl->req);
	if (nl->mon)
		mnl_socket_close(nl->mon);
	nl->req = NULL;
	nl->mon = NULL;
}

int mlv_rtnl_monitor_fd(const struct mlv_rtnl *nl)
{
	return nl->mon ? mnl_socket_get_fd(nl->mon) : -1;
}

struct monitor_ctx {
	bool (*wanted)(int ifindex, void *ctx);
	void *ctx;
	struct mlv_rtnl_changes *out;
};

static int on_notification(const struct nlmsghdr *nlh, void *data)
{
	struct monitor_ctx *m = data;

	switch (nlh->nlmsg_type) {
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH: {
		const struct ndmsg *nd = mnl_nlmsg_get_payload(nlh);

		/* one cut short names no interface: it may be any */
		if (!m->wanted || !mlv_nl_has_header(nlh, sizeof(*nd)) ||
		    m->wanted(nd->ndm_ifindex, m->ctx))
			m->out->neigh = true;
		break;
	}
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		m->out->route = true;
		break;
	default:
		break;
	}
	return MNL_CB_OK;
}

void mlv_rtnl_monitor_read(struct mlv_rtnl *nl,
			   bool (*wanted)(int ifindex, void *ctx), void *ctx,
			   struct mlv_rtnl_changes *out)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct monitor_ctx m = { wanted, ctx, out };
	ssize_t n;

	memset(out, 0, sizeof(*out));
	for (;;) {
		n = mnl_socket_recvfrom(nl->mon, buf, sizeof(buf));
		if (n < 0) {
			if (errno == ENOBUFS) {
				/* the kernel dropped notifications */
				out->neigh = out->route = true;
				continue;
			}
			break;   /* EAGAIN: all read */
		}
		if (n == 0)
			break;
		mlv_nl_cb_run(buf, (size_t)n, 0, 0, on_notification, &m);
	}
}

/* Send nlh and run cb over the reply. Returns MLV_OK, MLV_E_NOT_FOUND for
 * the kernel's ENOENT/ENETUNREACH/EHOSTUNREACH, MLV_E_IO otherwise. */
static enum mlv_err request(struct mlv_rtnl *nl, struct nlmsghdr *nlh,
			    mnl_cb_t cb, void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	ssize_t n;
	int rc;

	nlh->nlmsg_seq = ++nl->seq;
	if (mnl_socket_sendto(nl->req, nlh, nlh->nlmsg_len) < 0)
		return MLV_E_IO;
	/* a get without NLM_F_DUMP is answered by one message: the object
	 * or an NLMSG_ERROR */
	n = mnl_socket_recvfrom(nl->req, buf, sizeof(buf));
	if (n < 0)
		return MLV_E_IO;
	rc = mlv_nl_cb_run(buf, (size_t)n, nlh->nlmsg_seq, nl->req_portid, cb,
			   data);
	if (rc == MNL_CB_ERROR) {
		if (errno == ENOENT || errno == ENETUNREACH ||
		    errno == EHOSTUNREACH || errno == ESRCH ||
		    errno == EINVAL || errno == ENODEV)
			return MLV_E_NOT_FOUND;
		return MLV_E_IO;
	}
	return MLV_OK;
}

struct route_reply {
	const struct mlv_ip *dst;
	struct mlv_ip *via;
	int dev;
	uint8_t type;
	bool seen;
	bool have_via;
};

static int route_attr(const struct nlattr *a, void *data)
{
	struct route_reply *r = data;
	uint16_t len = mnl_attr_get_payload_len(a);

	switch (mnl_attr_get_type(a)) {
	case RTA_OIF:
		if (len >= sizeof(uint32_t))
			r->dev = (int)mnl_attr_get_u32(a);
		break;
	case RTA_GATEWAY:
		if (len == mlv_nl_alen(r->dst)) {
			memset(r->via, 0, sizeof(*r->via));
			r->via->family = r->dst->family;
			memcpy(r->via->bytes, mnl_attr_get_payload(a), len);
			r->have_via = true;
		}
		break;
	case RTA_VIA: {
		/* a gateway of the other family (IPv4 routes via IPv6) */
		const struct rtvia *v = mnl_attr_get_payload(a);

		if (len >= sizeof(*v) + 4 && v->rtvia_family == AF_INET) {
			memset(r->via, 0, sizeof(*r->via));
			r->via->family = MLV_AF_INET;
			memcpy(r->via->bytes, v->rtvia_addr, 4);
			r->have_via = true;
		} else if (len >= sizeof(*v) + 16 && v->rtvia_family == AF_INET6) {
			memset(r->via, 0, sizeof(*r->via));
			r->via->family = MLV_AF_INET6;
			memcpy(r->via->bytes, v->rtvia_addr, 16);
			r->have_via = true;
		}
		break;
	}
	default:
		break;
	}
	return MNL_CB_OK;
}

static int on_route(const struct nlmsghdr *nlh, void *data)
{
	struct route_reply *r = data;
	const struct rtmsg *rt = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_type != RTM_NEWROUTE ||
	    !mlv_nl_has_header(nlh, sizeof(*rt)))
		return MNL_CB_OK;
	r->seen = true;
	r->type = rt->rtm_type;
	return mlv_nl_attr_parse(nlh, sizeof(*rt), route_attr, r);
}

enum mlv_err mlv_rtnl_route(struct mlv_rtnl *nl, const struct mlv_ip *dst,
			    int oif, struct mlv_ip *via, int *dev)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct route_reply r = { .dst = dst, .via = via };
	struct rtmsg *rt;
	enum mlv_err rc;

	nlh->nlmsg_type = RTM_GETROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	rt = mnl_nlmsg_put_extra_header(nlh, sizeof(*rt));
	rt->rtm_family = (uint8_t)mlv_nl_af(dst);
	rt->rtm_dst_len = (uint8_t)(mlv_nl_alen(dst) * 8);
	mnl_attr_put(nlh, RTA_DST, mlv_nl_alen(dst), dst->bytes);
	if (oif > 0)
		mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)oif);
	rc = request(nl, nlh, on_route, &r);
	if (rc)
		return rc;
	if (!r.seen || r.type != RTN_UNICAST || (oif > 0 && r.dev != oif))
		return MLV_E_NOT_FOUND;
	if (!r.have_via)
		*via = *dst;   /* on-link: the destination is the next hop */
	*dev = r.dev;
	return MLV_OK;
}

struct neigh_reply {
	uint8_t *mac;
	bool valid;
	bool have_mac;
	uint16_t state;
};

static int neigh_attr(const struct nlattr *a, void *data)
{
	struct neigh_reply *r = data;

	if (mnl_attr_get_type(a) == NDA_LLADDR &&
	    mnl_attr_get_payload_len(a) == 6) {
		memcpy(r->mac, mnl_attr_get_payload(a), 6);
		r->have_mac = true;
	}
	return MNL_CB_OK;
}

static int on_neigh(const struct nlmsghdr *nlh, void *data)
{
	struct neigh_reply *r = data;
	const struct ndmsg *nd = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_type != RTM_NEWNEIGH ||
	    !mlv_nl_has_header(nlh, sizeof(*nd)))
		return MNL_CB_OK;
	r->state = nd->ndm_state;
	return mlv_nl_attr_parse(nlh, sizeof(*nd), neigh_attr, r);
}

enum mlv_err mlv_rtnl_neigh(struct mlv_rtnl *nl, int ifindex,
			    const struct mlv_ip *addr, uint8_t mac[6],
			    bool *valid)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct neigh_reply r = { .mac = mac };
	struct ndmsg *nd;
	enum mlv_err rc;

	*valid = false;
	nlh->nlmsg_type = RTM_GETNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nd = mnl_nlmsg_put_extra_header(nlh, sizeof(*nd));
	nd->ndm_family = (uint8_t)mlv_nl_af(addr);
	nd->ndm_ifindex = ifindex;
	mnl_attr_put(nlh, NDA_DST, mlv_nl_alen(addr), addr->bytes);
	rc = request(nl, nlh, on_neigh, &r);
	if (rc == MLV_E_NOT_FOUND)
		return MLV_OK;   /* no entry at all */
	if (rc)
		return rc;
	*valid = r.have_mac && (r.state & NUD_USABLE);
	return MLV_OK;
}

enum mlv_err mlv_rtnl_solicit(int ifindex, const struct mlv_ip *addr)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	char ifname[IF_NAMESIZE];
	int fd, saved;
	enum mlv_err rc = MLV_OK;

	memset(&ss, 0, sizeof(ss));
	if (addr->family == MLV_AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(9);
		memcpy(&s6->sin6_addr, addr->bytes, 16);
		s6->sin6_scope_id = (uint32_t)ifindex;   /* link-local gateways */
		sl = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(9);
		memcpy(&s4->sin_addr, addr->bytes, 4);
		sl = sizeof(*s4);
	}
	if (!if_indextoname((unsigned)ifindex, ifname))
		return MLV_E_NOT_FOUND;
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return MLV_E_IO;
	/* bound to the port's interface, so the kernel resolves the address
	 * there and not on whatever interface its routes prefer */
	if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname,
		       (socklen_t)strlen(ifname) + 1) != 0 ||
	    sendto(fd, "", 0, 0, (struct sockaddr *)&ss, sl) < 0) {
		/* EAGAIN: the neighbour queue is full, i.e. resolving already */
		if (errno != EAGAIN)
			rc = MLV_E_IO;
	}
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}
