/* SPDX-License-Identifier: BSD-3-Clause */
#include "daemon/netlink/announce.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/if_tun.h>
#include <linux/rtnetlink.h>

#include "daemon/netlink/addr_internal.h"
#include "daemon/netlink/msg_internal.h"
#include "daemon/netlink/transact_internal.h"

/* A route change or a dump answer is queued while the kernel handles the
 * request; this bounds a recv that should never wait. */
#define ANNOUNCE_RECV_TIMEOUT_MS 1000

/* Most stale routes removed at start in one pass. */
#define ANNOUNCE_MAX_STALE 4096

int mlv_announce_cmp(const struct mlv_ip *x, const struct mlv_ip *y)
{
	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	return memcmp(x->bytes, y->bytes, sizeof(x->bytes));
}

static int cmp_ip(const void *x, const void *y)
{
	return mlv_announce_cmp(x, y);
}

void mlv_announce_init(struct mlv_announce *a)
{
	memset(a, 0, sizeof(*a));
	a->tun_fd = -1;
}

bool mlv_announce_is_open(const struct mlv_announce *a)
{
	return a->tun_fd >= 0 && a->nl != NULL;
}

static void note_error(struct mlv_announce *a, const char *what,
		       const struct mlv_ip *ip, int err)
{
	char addr[MLV_IP_STRLEN] = "";

	if (ip)
		mlv_ip_format(ip, addr, sizeof(addr));
	snprintf(a->last_error, sizeof(a->last_error), "%s%s%s (table %u): %s",
		 what, ip ? " " : "", addr, a->table, strerror(err));
	a->errors++;
}

/* Add ip's route on our device, or delete ip's route of our protocol in
 * our table (any device: a stale one may point elsewhere). */
static int route_change(struct mlv_announce *a, const struct mlv_ip *ip,
			bool add)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtmsg *rtm;

	nlh->nlmsg_type = add ? RTM_NEWROUTE : RTM_DELROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK |
			   (add ? NLM_F_CREATE | NLM_F_REPLACE : 0);
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = (uint8_t)mlv_nl_af(ip);
	rtm->rtm_dst_len = (uint8_t)(mlv_nl_alen(ip) * 8);
	rtm->rtm_table = a->table < 256 ? (uint8_t)a->table : RT_TABLE_UNSPEC;
	rtm->rtm_protocol = MLV_RTPROT_MAGLEVD;
	/* a delete matches any scope (a stale route may have another) */
	rtm->rtm_scope = add ? RT_SCOPE_LINK : RT_SCOPE_NOWHERE;
	rtm->rtm_type = RTN_UNICAST;
	mnl_attr_put_u32(nlh, RTA_TABLE, a->table);
	mnl_attr_put(nlh, RTA_DST, mlv_nl_alen(ip), ip->bytes);
	if (add)
		mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)a->ifindex);
	return mlv_nl_transact(a->nl, a->portid, &a->seq, nlh, NULL, NULL);
}

/* ---- stale routes: a dump of our protocol's routes in our table ---- */

struct stale {
	struct mlv_ip ip[ANNOUNCE_MAX_STALE];
	uint32_t n;
	uint32_t table;
};

struct route_attrs {
	const struct nlattr *dst;
	uint32_t table;
};

static int route_attr(const struct nlattr *at, void *data)
{
	struct route_attrs *r = data;

	switch (mnl_attr_get_type(at)) {
	case RTA_DST:
		r->dst = at;
		break;
	case RTA_TABLE:
		if (mnl_attr_validate(at, MNL_TYPE_U32) >= 0)
			r->table = mnl_attr_get_u32(at);
		break;
	default:
		break;
	}
	return MNL_CB_OK;
}

static int on_route(const struct nlmsghdr *nlh, void *data)
{
	struct stale *s = data;
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	struct route_attrs r = { 0 };
	struct mlv_ip ip = { 0 };
	size_t alen;

	if (!mlv_nl_has_header(nlh, sizeof(*rtm)) ||
	    rtm->rtm_protocol != MLV_RTPROT_MAGLEVD ||
	    (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6))
		return MNL_CB_OK;
	r.table = rtm->rtm_table;
	alen = rtm->rtm_family == AF_INET6 ? 16 : 4;
	mlv_nl_attr_parse(nlh, sizeof(*rtm), route_attr, &r);
	if (r.table != s->table || !r.dst || rtm->rtm_dst_len != alen * 8 ||
	    mnl_attr_get_payload_len(r.dst) != alen ||
	    s->n == ANNOUNCE_MAX_STALE)
		return MNL_CB_OK;
	ip.family = rtm->rtm_family == AF_INET6 ? MLV_AF_INET6 : MLV_AF_INET;
	memcpy(ip.bytes, mnl_attr_get_payload(r.dst), alen);
	s->ip[s->n++] = ip;
	return MNL_CB_OK;
}

/* Delete routes of our protocol in a->table. Returns 0 or an errno. */
static int remove_stale(struct mlv_announce *a)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtmsg *rtm;
	struct stale *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return ENOMEM;
	s->table = a->table;
	nlh->nlmsg_type = RTM_GETROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = AF_UNSPEC;
	err = mlv_nl_transact(a->nl, a->portid, &a->seq, nlh, on_route, s);
	for (uint32_t i = 0; !err && i < s->n; i++) {
		/* a route of a device that is gone may already have gone */
		int e = route_change(a, &s->ip[i], false);

		if (e && e != ESRCH && e != ENOENT)
			err = e;
	}
	free(s);
	return err;
}

/* ---- the device ---- */

static int set_up(struct mlv_announce *a)
{
	return mlv_nl_link_set(a->nl, a->portid, &a->seq, a->ifindex, NULL,
			       true);
}

static int open_tun(struct mlv_announce *a, const char *ifname)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	memcpy(ifr.ifr_name, ifname, strlen(ifname));
	a->tun_fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (a->tun_fd < 0)
		return errno;
	/* An existing device is refused rather than taken over: EBUSY when
	 * another process holds it; a persistent one (not ours to own) is
	 * refused below. */
	if (if_nametoindex(ifname) != 0)
		return EEXIST;
	if (ioctl(a->tun_fd, TUNSETIFF, &ifr) < 0)
		return errno;
	snprintf(a->ifname, sizeof(a->ifname), "%s", ifr.ifr_name);
	a->ifindex = (int)if_nametoindex(a->ifname);
	return a->ifindex > 0 ? 0 : errno;
}

enum mlv_err mlv_announce_open(struct mlv_announce *a, const char *ifname,
			       uint32_t table, char *why, size_t why_len)
{
	struct timeval tv = { ANNOUNCE_RECV_TIMEOUT_MS / 1000,
			      (ANNOUNCE_RECV_TIMEOUT_MS % 1000) * 1000 };
	size_t len = ifname ? strlen(ifname) : 0;
	int err;

	if (a->tun_fd >= 0 || a->nl) {
		snprintf(why, why_len, "announce: already open");
		return MLV_E_INVAL;
	}
	if (len == 0 || len >= MLV_ANNOUNCE_IFNAME_MAX || table == 0) {
		snprintf(why, why_len, "announce: device name must be 1..%d "
			 "bytes and the table non-zero",
			 MLV_ANNOUNCE_IFNAME_MAX - 1);
		return MLV_E_INVAL;
	}
	a->table = table;
	err = open_tun(a, ifname);
	if (err) {
		snprintf(why, why_len, "announce: device %s: %s%s", ifname,
			 strerror(err), err == EEXIST || err == EBUSY ?
			 " (another instance, or a device left by hand: each "
			 "instance needs its own announce.device)" : "");
		goto fail;
	}
	a->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!a->nl || mnl_socket_bind(a->nl, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    setsockopt(mnl_socket_get_fd(a->nl), SOL_SOCKET, SO_RCVTIMEO, &tv,
		       sizeof(tv)) < 0) {
		err = errno;
		snprintf(why, why_len, "announce: netlink socket: %s",
			 strerror(err));
		goto fail;
	}
	a->portid = mnl_socket_get_portid(a->nl);
	a->seq = (uint32_t)time(NULL);
	err = set_up(a);
	if (err) {
		snprintf(why, why_len, "announce: bringing %s up: %s", a->ifname,
			 strerror(err));
		goto fail;
	}
	err = remove_stale(a);
	if (err) {
		snprintf(why, why_len, "announce: routes of protocol %d in table "
			 "%u: %s", MLV_RTPROT_MAGLEVD, table, strerror(err));
		goto fail;
	}
	return MLV_OK;
fail:
	mlv_announce_close(a);
	errno = err;
	return MLV_E_IO;
}

bool mlv_announce_has(const struct mlv_announce *a, const struct mlv_ip *ip)
{
	return a->n_routes > 0 &&
	       bsearch(ip, a->routes, a->n_routes, sizeof(*ip), cmp_ip) != NULL;
}

enum mlv_err mlv_announce_set(struct mlv_announce *a, const struct mlv_ip *want,
			      uint32_t n)
{
	struct mlv_ip *next = NULL;
	uint32_t n_next = 0, i = 0, j = 0;
	enum mlv_err result = MLV_OK;

	if (!mlv_announce_is_open(a))
		return MLV_E_INVAL;
	if (n > 0) {
		next = malloc((size_t)n * sizeof(*next));
		if (!next)
			return MLV_E_NOMEM;
		memcpy(next, want, (size_t)n * sizeof(*next));
		qsort(next, n, sizeof(*next), cmp_ip);
		for (uint32_t k = 0; k < n; k++)
			if (n_next == 0 || mlv_announce_cmp(&next[n_next - 1],
							    &next[k]) != 0)
				next[n_next++] = next[k];
	}
	/* Walk both sorted lists: withdraw what is only installed, add what
	 * is only wanted. Installed routes the kernel refuses to delete stay
	 * in the list, wanted ones it refuses to add stay out: the next call
	 * tries again. */
	struct mlv_ip *keep = malloc(((size_t)a->n_routes + n_next + 1) *
				     sizeof(*keep));
	uint32_t n_keep = 0;

	if (!keep) {
		free(next);
		return MLV_E_NOMEM;
	}
	while (i < a->n_routes || j < n_next) {
		int c = i == a->n_routes ? 1 : j == n_next ? -1 :
			mlv_announce_cmp(&a->routes[i], &next[j]);
		int err;

		if (c == 0) {
			keep[n_keep++] = a->routes[i++];
			j++;
		} else if (c < 0) {
			err = route_change(a, &a->routes[i], false);
			if (err && err != ESRCH && err != ENOENT) {
				note_error(a, "withdrawing", &a->routes[i], err);
				keep[n_keep++] = a->routes[i];
				result = MLV_E_IO;
			} else {
				a->withdraws++;
			}
			i++;
		} else {
			err = route_change(a, &next[j], true);
			if (err) {
				note_error(a, "announcing", &next[j], err);
				result = MLV_E_IO;
			} else {
				keep[n_keep++] = next[j];
				a->announces++;
			}
			j++;
		}
	}
	free(next);
	free(a->routes);
	a->routes = keep;
	a->n_routes = n_keep;
	return result;
}

enum mlv_err mlv_announce_reassert(struct mlv_announce *a)
{
	enum mlv_err result = MLV_OK;
	int err;

	if (!mlv_announce_is_open(a))
		return MLV_E_INVAL;
	err = set_up(a);
	if (err) {
		note_error(a, "bringing the device up", NULL, err);
		return MLV_E_IO;
	}
	for (uint32_t i = 0; i < a->n_routes; i++) {
		err = route_change(a, &a->routes[i], true);
		if (err) {
			note_error(a, "announcing", &a->routes[i], err);
			result = MLV_E_IO;
		}
	}
	return result;
}

void mlv_announce_withdraw_all(struct mlv_announce *a)
{
	if (mlv_announce_is_open(a))
		(void)mlv_announce_set(a, NULL, 0);
}

void mlv_announce_close(struct mlv_announce *a)
{
	mlv_announce_withdraw_all(a);
	if (a->nl)
		mnl_socket_close(a->nl);
	a->nl = NULL;
	/* closing the descriptor deletes the device and any route left on
	 * it */
	if (a->tun_fd >= 0)
		close(a->tun_fd);
	a->tun_fd = -1;
	a->ifindex = 0;
	free(a->routes);
	a->routes = NULL;
	a->n_routes = 0;
}
