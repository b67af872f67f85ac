/* SPDX-License-Identifier: BSD-3-Clause OR GPL-2.0-only */
/* maglevd's XDP steering program for AF_XDP mode (docs/deployment.md).
 *
 * Runs on the kernel interface maglevd shares with the host. A frame for
 * maglevd goes to the AF_XDP socket of its RX queue (the net_af_xdp PMD
 * reads it); everything else goes to the kernel untouched: ARP and NDP,
 * SSH, health-check replies, traffic to the host's own addresses.
 *
 * For maglevd:
 *  - TCP/UDP whose (destination address, protocol, destination port) is a
 *    VIP in vip_map, or whose (address, protocol, port 0) is: a VIP of a
 *    port range or of every port there;
 *  - IPv4/IPv6 fragments (first or later; atomic IPv6 fragments are
 *    parsed through) whose destination is a VIP address in vip_addrs:
 *    later fragments carry no port, and maglevd keeps every fragment of
 *    a datagram together by a 3-tuple hash;
 *  - ICMP frag-needed / ICMPv6 packet-too-big to a VIP address, which
 *    maglevd forwards to the backend owning the quoted flow;
 *  - ICMP/ICMPv6 echo requests to a VIP address that answers pings
 *    (MLV_STEER_ADDR_ECHO in vip_addrs: icmp_echo: reply).
 * A truncated or unparseable frame is passed, not dropped: the steering
 * program only decides "maglevd's or not", and the kernel is better
 * placed to judge (and count) what it cannot parse.
 *
 * This object is given to DPDK as --vdev=net_af_xdp0,...,xdp_prog=PATH.
 * The PMD (DPDK 22.11, drivers/net/af_xdp) loads the object's first
 * program — so this file holds exactly one — looks up the XSKMAP named
 * "xsks_map" and stores the socket of queue q at key q.
 */
#include <linux/bpf.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "dataplane/bpf/common/parse.h"
#include "dataplane/bpf/steer/maps.h"

/* The first bytes of TCP and UDP headers alike. */
struct l4_ports {
	__be16 source;
	__be16 dest;
};

static __always_inline int count(__u32 ctr, int action)
{
	__u64 *n = bpf_map_lookup_elem(&steer_stats, &ctr);

	if (n)
		*n += 1;
	return action;
}

static __always_inline int is_redirect(__u32 verdict)
{
	return verdict == MLV_STEER_CTR_REDIRECT_VIP ||
	       verdict == MLV_STEER_CTR_REDIRECT_FRAGMENT ||
	       verdict == MLV_STEER_CTR_REDIRECT_ICMP ||
	       verdict == MLV_STEER_CTR_REDIRECT_ECHO;
}

/* len is a constant at every call site, so the copy is inlined. */
static __always_inline struct mlv_steer_addr_val *
vip_address_val(__u8 family, const void *addr, __u32 len)
{
	struct mlv_bpf_addr_key key = {};

	key.family = family;
	__builtin_memcpy(key.addr, addr, len);
	return bpf_map_lookup_elem(&vip_addrs, &key);
}

static __always_inline int vip_address(__u8 family, const void *addr,
				       __u32 len)
{
	return vip_address_val(family, addr, len) != NULL;
}

/* An echo request to addr: maglevd's when the address answers pings. */
static __always_inline int echo_address(__u8 family, const void *addr,
					__u32 len)
{
	struct mlv_steer_addr_val *v = vip_address_val(family, addr, len);

	return v && (v->flags & MLV_STEER_ADDR_ECHO);
}

/* verdict for a TCP/UDP header at c->pos addressed to addr */
static __always_inline __u32 steer_ports(struct mlv_cursor *c, __u8 family,
					 __u8 proto, const void *addr,
					 __u32 len)
{
	struct l4_ports *ports = c->pos;
	struct mlv_steer_vip_key key = {};
	struct mlv_steer_cfg *cfg;
	__u32 zero = 0;

	if ((void *)(ports + 1) > c->end)
		return MLV_STEER_CTR_PASS_MALFORMED;
	key.family = family;
	key.proto = proto;
	key.port = ports->dest;
	__builtin_memcpy(key.addr, addr, len);
	if (bpf_map_lookup_elem(&vip_map, &key))
		return MLV_STEER_CTR_REDIRECT_VIP;
	/* port 0: the address has a VIP of a port range or of every port
	 * (`port: any`) for this protocol; maglevd picks the VIP or counts
	 * the frame not_vip. Only when some VIP is such a VIP (an array
	 * look-up, which the verifier inlines). */
	cfg = bpf_map_lookup_elem(&steer_cfg, &zero);
	if (!cfg || !(cfg->flags & MLV_STEER_CFG_WILD))
		return MLV_STEER_CTR_PASS_NOT_VIP;
	key.port = 0;
	return bpf_map_lookup_elem(&vip_map, &key) ?
		MLV_STEER_CTR_REDIRECT_VIP : MLV_STEER_CTR_PASS_NOT_VIP;
}

static __always_inline __u32 steer_ipv4(struct mlv_cursor *c)
{
	struct iphdr *ip = c->pos;

	if ((void *)(ip + 1) > c->end)
		return MLV_STEER_CTR_PASS_MALFORMED;
	if (ip->version != 4 || ip->ihl < 5)
		return MLV_STEER_CTR_PASS_MALFORMED;
	if (ip->frag_off & bpf_htons(MLV_IP_MF | MLV_IP_OFFSET))
		return vip_address(MLV_BPF_FAMILY_V4, &ip->daddr, 4) ?
			MLV_STEER_CTR_REDIRECT_FRAGMENT :
			MLV_STEER_CTR_PASS_NOT_VIP;
	c->pos = (void *)ip + ip->ihl * 4;

	if (ip->protocol == IPPROTO_TCP || ip->protocol == IPPROTO_UDP)
		return steer_ports(c, MLV_BPF_FAMILY_V4, ip->protocol,
				   &ip->daddr, 4);
	if (ip->protocol == IPPROTO_ICMP) {
		struct mlv_icmp_hdr *icmp = c->pos;

		if ((void *)(icmp + 1) > c->end)
			return MLV_STEER_CTR_PASS_MALFORMED;
		if (icmp->type == MLV_ICMP_DEST_UNREACH &&
		    icmp->code == MLV_ICMP_FRAG_NEEDED &&
		    vip_address(MLV_BPF_FAMILY_V4, &ip->daddr, 4))
			return MLV_STEER_CTR_REDIRECT_ICMP;
		if (icmp->type == MLV_ICMP_ECHO_REQUEST && icmp->code == 0 &&
		    echo_address(MLV_BPF_FAMILY_V4, &ip->daddr, 4))
			return MLV_STEER_CTR_REDIRECT_ECHO;
	}
	return MLV_STEER_CTR_PASS_NOT_VIP;
}

static __always_inline __u32 steer_ipv6(struct mlv_cursor *c)
{
	struct ipv6hdr *ip6 = c->pos;
	__u8 nexthdr;

	if ((void *)(ip6 + 1) > c->end)
		return MLV_STEER_CTR_PASS_MALFORMED;
	if (ip6->version != 6)
		return MLV_STEER_CTR_PASS_MALFORMED;
	nexthdr = ip6->nexthdr;
	c->pos = ip6 + 1;

	switch (mlv_ip6_skip_ext(c, &nexthdr)) {
	case MLV_IP6_L4:
		break;
	case MLV_IP6_FRAGMENT:
		return vip_address(MLV_BPF_FAMILY_V6, &ip6->daddr, 16) ?
			MLV_STEER_CTR_REDIRECT_FRAGMENT :
			MLV_STEER_CTR_PASS_NOT_VIP;
	default:
		return MLV_STEER_CTR_PASS_MALFORMED;
	}

	if (nexthdr == IPPROTO_TCP || nexthdr == IPPROTO_UDP)
		return steer_ports(c, MLV_BPF_FAMILY_V6, nexthdr,
				   &ip6->daddr, 16);
	if (nexthdr == IPPROTO_ICMPV6) {
		struct mlv_icmp_hdr *icmp6 = c->pos;

		if ((void *)(icmp6 + 1) > c->end)
			return MLV_STEER_CTR_PASS_MALFORMED;
		if (icmp6->type == MLV_ICMPV6_PKT_TOO_BIG &&
		    vip_address(MLV_BPF_FAMILY_V6, &ip6->daddr, 16))
			return MLV_STEER_CTR_REDIRECT_ICMP;
		if (icmp6->type == MLV_ICMPV6_ECHO_REQUEST && icmp6->code == 0 &&
		    echo_address(MLV_BPF_FAMILY_V6, &ip6->daddr, 16))
			return MLV_STEER_CTR_REDIRECT_ECHO;
	}
	return MLV_STEER_CTR_PASS_NOT_VIP;
}

SEC("xdp")
int mlv_xdp_steer(struct xdp_md *ctx)
{
	struct mlv_cursor c = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};
	__be16 proto;
	__u32 verdict;
	int action;

	if (mlv_parse_eth(&c, &proto, 1))
		verdict = MLV_STEER_CTR_PASS_MALFORMED;
	else if (proto == bpf_htons(ETH_P_IP))
		verdict = steer_ipv4(&c);
	else if (proto == bpf_htons(ETH_P_IPV6))
		verdict = steer_ipv6(&c);
	else
		verdict = MLV_STEER_CTR_PASS_NOT_IP;

	if (!is_redirect(verdict))
		return count(verdict, XDP_PASS);
	/* No socket bound on this queue (queue_count smaller than the
	 * interface's queues, or maglevd not running): the flags argument
	 * makes the helper return XDP_PASS, so the kernel still gets it. */
	action = bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
	return count(action == XDP_REDIRECT ? verdict :
		     MLV_STEER_CTR_PASS_NO_SOCKET, action);
}

char _license[] SEC("license") = "Dual BSD/GPL";
