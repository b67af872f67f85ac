/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target for what daemon/netlink reads from the kernel: route
 * and neighbour replies (rtnl.c), notifications, and the answers to the
 * announcer's route changes and its stale-route dump (announce.c).
 *
 * The kernel is faked: this program defines libmnl's socket functions
 * itself (the executable's definitions win over libmnl's), so a request
 * goes nowhere and each recv returns the next reply of the input; the
 * parsing (libmnl's mnl_cb_run and mnl_attr_parse, then our callbacks)
 * is the real one. The announcer's tun device is faked by wrapping
 * open, ioctl and if_nametoindex at link time (-Wl,--wrap). No socket is
 * opened but one local socket pair; no root is needed. The part of the
 * caller's receive buffer past what a recv returned is poisoned for ASan
 * until the call that read it returns, so a parser that reads past the
 * reply (a field of a message cut short) is caught, not fed stale bytes.
 *
 * Input: byte 0 picks the operation (low two bits: route, neighbour,
 * notifications, the announcer) and, with bit 7, has each reply's
 * sequence number and port id set to the request's (so the fuzzer need
 * not guess them); byte 1 the address family (odd: IPv6); byte 2 the
 * interface (or the number of routes to announce); 16 bytes of address;
 * then replies, each a 16-bit little-endian length and that many bytes
 * (length 0xffff: a recv that fails with ENOBUFS, the kernel's "lost
 * notifications"). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sanitizer/asan_interface.h>

#include <libmnl/libmnl.h>
#include <linux/if_tun.h>

#include "daemon/netlink/announce.h"
#include "daemon/netlink/rtnl.h"
#include "daemon/netlink/vlan.h"
#include "tests/fuzz/fuzz_check.h"

#define HEADER 19
#define PORTID 4242u
#define FAKE_IFINDEX 7

/* ---- the fake kernel ---- */

static struct {
	const uint8_t *p;       /* the replies not read yet */
	size_t left;
	bool fix_up;
	uint32_t seq;           /* of the last request */
	int pair[2];            /* what mnl_socket_get_fd returns */
	bool tun_named;         /* TUNSETIFF was done */
	void *poisoned;         /* the unread tail of the last recv's buffer */
	size_t poisoned_len;
} k;

static void unpoison(void)
{
	if (k.poisoned)
		ASAN_UNPOISON_MEMORY_REGION(k.poisoned, k.poisoned_len);
	k.poisoned = NULL;
}

/* Any non-NULL pointer stands for a socket; nothing dereferences it. */
static char fake_socket;

struct mnl_socket *mnl_socket_open2(int bus, int flags)
{
	(void)bus;
	(void)flags;
	return (struct mnl_socket *)&fake_socket;
}

int mnl_socket_bind(struct mnl_socket *nl, unsigned int groups, pid_t pid)
{
	(void)nl;
	(void)groups;
	(void)pid;
	return 0;
}

int mnl_socket_close(struct mnl_socket *nl)
{
	CHECK(nl == (struct mnl_socket *)&fake_socket);
	return 0;
}

int mnl_socket_get_fd(const struct mnl_socket *nl)
{
	(void)nl;
	return k.pair[0];
}

unsigned int mnl_socket_get_portid(const struct mnl_socket *nl)
{
	(void)nl;
	return PORTID;
}

ssize_t mnl_socket_sendto(const struct mnl_socket *nl, const void *req,
			  size_t siz)
{
	const struct nlmsghdr *h = req;

	(void)nl;
	CHECK(siz >= sizeof(*h) && h->nlmsg_len == siz);
	k.seq = h->nlmsg_seq;
	return (ssize_t)siz;
}

/* Set the sequence number and port of each whole message in buf. */
static void fix_up(uint8_t *buf, size_t len)
{
	while (len >= sizeof(struct nlmsghdr)) {
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		size_t step = ((size_t)h->nlmsg_len + 3) & ~(size_t)3;

		h->nlmsg_seq = k.seq;
		h->nlmsg_pid = PORTID;
		if (h->nlmsg_len < sizeof(*h) || step > len)
			break;
		buf += step;
		len -= step;
	}
}

ssize_t mnl_socket_recvfrom(const struct mnl_socket *nl, void *buf,
			    size_t siz)
{
	size_t len;

	(void)nl;
	unpoison();
	if (k.left < 2) {
		errno = EAGAIN;
		return -1;
	}
	len = (size_t)k.p[0] | (size_t)k.p[1] << 8;
	k.p += 2;
	k.left -= 2;
	if (len == 0xffff) {
		errno = ENOBUFS;
		return -1;
	}
	if (len > k.left)
		len = k.left;
	if (len > siz)
		len = siz;
	memcpy(buf, k.p, len);
	k.p += len;
	k.left -= len;
	if (k.fix_up)
		fix_up(buf, len);
	k.poisoned = (char *)buf + len;
	k.poisoned_len = siz - len;
	ASAN_POISON_MEMORY_REGION(k.poisoned, k.poisoned_len);
	return (ssize_t)len;
}

/* The tun device: open gives a descriptor of /dev/null, TUNSETIFF
 * succeeds, and the device exists once it was named. */
int __real_open(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...);
int __real_ioctl(int fd, unsigned long req, ...);
int __wrap_ioctl(int fd, unsigned long req, ...);
unsigned int __wrap_if_nametoindex(const char *name);

int __wrap_open(const char *path, int flags, ...)
{
	va_list ap;
	int mode = 0;

	if (strcmp(path, "/dev/net/tun") == 0)
		return __real_open("/dev/null", O_RDWR | O_CLOEXEC);
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, int);
		va_end(ap);
	}
	return __real_open(path, flags, mode);
}

int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (req != TUNSETIFF)
		return __real_ioctl(fd, req, arg);
	k.tun_named = true;
	return 0;
}

unsigned int __wrap_if_nametoindex(const char *name)
{
	(void)name;
	return k.tun_named ? FAKE_IFINDEX : 0;
}

/* ---- the operations ---- */

static void read_ip(const uint8_t *h, struct mlv_ip *ip, uint32_t salt)
{
	memset(ip, 0, sizeof(*ip));
	ip->family = h[1] & 1 ? MLV_AF_INET6 : MLV_AF_INET;
	memcpy(ip->bytes, h + 3, 16);
	ip->bytes[ip->family == MLV_AF_INET6 ? 15 : 3] ^= (uint8_t)salt;
}

static void route(struct mlv_rtnl *nl, const uint8_t *h)
{
	struct mlv_ip dst, via;
	int dev = -1, oif = h[2] & 3;

	read_ip(h, &dst, 0);
	memset(&via, 0xee, sizeof(via));
	enum mlv_err rc = mlv_rtnl_route(nl, &dst, oif, &via, &dev);

	unpoison();
	if (rc == MLV_OK) {
		CHECK(via.family == MLV_AF_INET || via.family == MLV_AF_INET6);
		CHECK(oif == 0 || dev == oif);
	}
}

static void neigh(struct mlv_rtnl *nl, const uint8_t *h)
{
	struct mlv_ip addr;
	uint8_t mac[6];
	bool valid = true;

	read_ip(h, &addr, 0);
	enum mlv_err rc = mlv_rtnl_neigh(nl, h[2], &addr, mac, &valid);

	unpoison();
	if (rc != MLV_OK)
		CHECK(!valid);
}

/* A VLAN port's VLAN interface: a link dump, every message read. */
static void vlan(struct mlv_rtnl *nl, const uint8_t *h)
{
	int child = -1;
	enum mlv_err rc = mlv_rtnl_vlan_child(nl, 1 + (h[2] & 3),
					      (uint16_t)(1 + h[1]), &child);

	unpoison();
	CHECK(rc != MLV_OK || child > 0);
}

static bool wanted(int ifindex, void *ctx)
{
	return ifindex == *(const int *)ctx;
}

static void monitor(struct mlv_rtnl *nl, const uint8_t *h)
{
	struct mlv_rtnl_changes ch;
	int want = h[2];

	mlv_rtnl_monitor_read(nl, wanted, &want, &ch);
	unpoison();
	/* read to the end, or to an empty read (the socket closed) */
	CHECK(k.left < 2 || k.p[-2] == 0);
}

static void announce(const uint8_t *h)
{
	struct mlv_ip want[8];
	uint32_t n = h[2] % 8;
	struct mlv_announce a;
	char why[256];

	for (uint32_t i = 0; i < n; i++)
		read_ip(h, &want[i], i / 2);   /* some twice */
	mlv_announce_init(&a);
	k.tun_named = false;
	enum mlv_err rc = mlv_announce_open(&a, "mlvfuzz0", 100, why,
					    sizeof(why));

	unpoison();
	if (rc != MLV_OK) {
		CHECK(!mlv_announce_is_open(&a) && a.routes == NULL);
		return;
	}
	CHECK(a.ifindex == FAKE_IFINDEX);
	(void)mlv_announce_set(&a, want, n);
	unpoison();
	CHECK(a.n_routes <= n);
	for (uint32_t i = 1; i < a.n_routes; i++)
		CHECK(mlv_announce_cmp(&a.routes[i - 1], &a.routes[i]) < 0);
	for (uint32_t i = 0; i < a.n_routes; i++)
		CHECK(mlv_announce_has(&a, &a.routes[i]));
	(void)mlv_announce_reassert(&a);
	unpoison();
	mlv_announce_close(&a);
	unpoison();
	CHECK(a.tun_fd == -1 && a.nl == NULL && a.routes == NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mlv_rtnl nl = {
		.req = (struct mnl_socket *)&fake_socket,
		.mon = (struct mnl_socket *)&fake_socket,
		.req_portid = PORTID,
	};

	if (size < HEADER)
		return 0;
	if (k.pair[0] == 0)
		CHECK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK |
				 SOCK_CLOEXEC, 0, k.pair) == 0);
	k.p = data + HEADER;
	k.left = size - HEADER;
	k.fix_up = data[0] & 0x80;
	k.seq = 0;
	switch (data[0] & 3) {
	case 0:
		route(&nl, data);
		break;
	case 1:
		if ((data[0] & 0x40) && (data[1] & 0x80))
			vlan(&nl, data);
		else
			neigh(&nl, data);
		break;
	case 2:
		monitor(&nl, data);
		break;
	default:
		announce(data);
		break;
	}
	return 0;
}
