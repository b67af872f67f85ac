/* SPDX-License-Identifier: BSD-3-Clause OR GPL-2.0-only */
/* Health checks through the data path (docs/health.md, "Checks through
 * the data path"): two tc programs on the interfaces maglevd's host
 * reaches its backends by.
 *
 * mlv_check_out (egress): a TCP packet of a data-path check (cp_out:
 * destination backend and port, source port the check socket's) is
 * re-addressed to the VIP and sent as the data plane sends the VIP's
 * packets (dataplane/packet/encap.c, docs/forwarding.md):
 *   - ipip: behind an outer IPv4 (protocol 4) or IPv6 (next header 41)
 *     header to the backend, TTL 64, from the packet's own source or,
 *     when the VIP has an ipip_source (ipip_source6) prefix (has_src),
 *     from that prefix with its host bits (at most the last 32) taken
 *     from maglevd's flow hash of the re-addressed packet
 *     (docs/flow-hash.md; its key: the packet's source, the VIP, its
 *     ports, TCP), so the check's connection gets the outer source the
 *     data plane would give that flow;
 *   - gue:  behind outer IP, UDP to gue_port from the check's source
 *     port and a bare 4-byte GUE header (variant 0, proto 4 or 41); the
 *     UDP checksum is 0 over IPv4, as the data plane's, and over IPv6
 *     computed without reading the payload (below);
 *   - l2dsr: only the destination MAC, when the config names one; the
 *     kernel already addressed the frame to the backend's.
 * A check packet that cannot be re-addressed or encapsulated is dropped:
 * sent bare to a backend that has the VIP, it would pass the check
 * without the data path.
 *
 * mlv_check_in (ingress): the backend answers from the VIP straight to
 * this host (the data plane's return path: direct server return); a TCP
 * packet from a VIP address and port to a check socket's port (cp_in)
 * gets the backend's address as its source, so the kernel hands it to
 * the socket that connected to the backend.
 *
 * Every other packet passes untouched (TC_ACT_OK). Addresses change with
 * bpf_l3/l4_csum_replace (BPF_F_PSEUDO_HDR), which keep the TCP checksum
 * right whether the kernel already filled it in or leaves it to the
 * device (CHECKSUM_PARTIAL). */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "dataplane/bpf/check_path/maps.h"
#include "dataplane/bpf/common/csum.h"

#define CP_ETH_HLEN 14
#define CP_IP4_HLEN 20
#define CP_IP6_HLEN 40
#define CP_UDP_HLEN 8
#define CP_GUE_HLEN 4
#define CP_OUTER_TTL 64     /* the data plane's outer TTL / hop limit */
#define CP_IP4_DF 0x4000
#define CP_FLOW_HASH_SEED 0x4D474C56u   /* docs/flow-hash.md */
#define CP_CRC32C_POLY 0x82F63B78u      /* reflected */

/* A TCP packet's addresses and where its parts start. */
struct cp_tcp {
	__u8 family;          /* 4 or 6 */
	__u8 inner_proto;     /* IPPROTO_IPIP or IPPROTO_IPV6 */
	__u32 l4;             /* offset of the TCP header */
	__u32 addr_src;       /* offset of the source address */
	__u32 addr_dst;       /* offset of the destination address */
	__u32 src[4];
	__u32 dst[4];
	__be16 sport, dport;
};

static __always_inline void count(__u32 c)
{
	__u64 *v = bpf_map_lookup_elem(&cp_counters, &c);

	if (v)
		*v += 1;
}

/* The TCP packet in skb (Ethernet, IPv4 without fragments or IPv6 with
 * TCP as its first header): 0 and *t, or -1 for anything else. */
static __always_inline int parse_tcp(struct __sk_buff *skb, struct cp_tcp *t)
{
	__be16 ports[2];

	if (skb->protocol == bpf_htons(ETH_P_IP)) {
		struct iphdr ip;

		if (bpf_skb_load_bytes(skb, CP_ETH_HLEN, &ip, sizeof(ip)) ||
		    ip.version != 4 || ip.ihl < 5 || ip.protocol != IPPROTO_TCP ||
		    (ip.frag_off & bpf_htons(0x3fff)))
			return -1;
		t->family = 4;
		t->inner_proto = IPPROTO_IPIP;
		t->l4 = CP_ETH_HLEN + ip.ihl * 4u;
		t->addr_src = CP_ETH_HLEN + 12;
		t->addr_dst = CP_ETH_HLEN + 16;
		t->src[0] = ip.saddr;
		t->dst[0] = ip.daddr;
	} else if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr ip6;

		if (bpf_skb_load_bytes(skb, CP_ETH_HLEN, &ip6, sizeof(ip6)) ||
		    ip6.version != 6 || ip6.nexthdr != IPPROTO_TCP)
			return -1;
		t->family = 6;
		t->inner_proto = IPPROTO_IPV6;
		t->l4 = CP_ETH_HLEN + CP_IP6_HLEN;
		t->addr_src = CP_ETH_HLEN + 8;
		t->addr_dst = CP_ETH_HLEN + 24;
		__builtin_memcpy(t->src, &ip6.saddr, 16);
		__builtin_memcpy(t->dst, &ip6.daddr, 16);
	} else {
		return -1;
	}
	if (bpf_skb_load_bytes(skb, t->l4, ports, sizeof(ports)))
		return -1;
	t->sport = ports[0];
	t->dport = ports[1];
	return 0;
}

/* Write addr (16 bytes, IPv4 in the first 4) at off, the address that
 * was old, keeping the IPv4 header checksum and the TCP checksum (its
 * pseudo-header) right. 0, or a negative error. */
static __always_inline int set_addr(struct __sk_buff *skb,
				    const struct cp_tcp *t, __u32 off,
				    const __u32 *old, const __u8 *addr)
{
	__u32 new[4];
	__u32 tcp_csum = t->l4 + 16;

	__builtin_memcpy(new, addr, 16);
	if (t->family == 4) {
		if (bpf_l4_csum_replace(skb, tcp_csum, old[0], new[0],
					BPF_F_PSEUDO_HDR | 4) ||
		    bpf_l3_csum_replace(skb, CP_ETH_HLEN + 10, old[0], new[0], 4))
			return -1;
		return bpf_skb_store_bytes(skb, off, new, 4, 0);
	}
	__s64 diff = bpf_csum_diff((__be32 *)old, 16, (__be32 *)new, 16, 0);

	if (diff < 0 ||
	    bpf_l4_csum_replace(skb, tcp_csum, 0, (__u32)diff, BPF_F_PSEUDO_HDR))
		return -1;
	return bpf_skb_store_bytes(skb, off, new, 16, 0);
}

/* len bytes of p into the CRC32C register c, bit by bit: check packets
 * are few, and no table or instruction is needed. */
static __always_inline __u32 crc32c(__u32 c, const __u8 *p, int len)
{
#pragma unroll
	for (int i = 0; i < len; i++) {
		c ^= p[i];
#pragma unroll
		for (int b = 0; b < 8; b++) {
			__u32 low = c & 1;

			/* Hidden from the compiler, which would make
			 * -(c & 1) & POLY of the product: the verifier
			 * splits its state on each such 0-or-all-ones
			 * mask, 2^320 paths. */
			asm volatile("" : "+r"(low));
			c = (c >> 1) ^ (low * CP_CRC32C_POLY);
		}
	}
	return c;
}

/* maglevd's flow key (struct mlv_flow_key, dataplane/packet/flow_key.h):
 * 40 bytes, no implicit padding. */
struct cp_flow_key {
	__u8 src[16];
	__u8 dst[16];
	__be16 sport, dport;
	__u8 proto, family, pad[2];
};

/* maglevd's flow hash of key (docs/flow-hash.md): its 40 bytes fed in
 * memory order, then murmur3's fmix32. A global function, so that the
 * verifier walks its 320 CRC steps once, not once for every path that
 * reaches it. */
__attribute__((noinline)) __u32 mlv_cp_flow_hash(const struct cp_flow_key *key)
{
	__u32 h;

	if (!key)
		return 0;
	h = crc32c(CP_FLOW_HASH_SEED, (const __u8 *)key, sizeof(*key));
	h ^= h >> 16;
	h *= 0x85EBCA6Bu;
	h ^= h >> 13;
	h *= 0xC2B2AE35u;
	h ^= h >> 16;
	return h;
}

/* The outer source of check packet t (16 bytes, IPv4 in the first 4):
 * the packet's own, or o's prefix with the flow hash in its host bits,
 * as the data plane fills them (dataplane/packet/encap.h): the last 32
 * bits of the address, read big-endian, OR (hash & mask). */
static __always_inline void outer_source(const struct cp_tcp *t,
					 const struct mlv_cp_out *o,
					 __u32 src[4])
{
	__u32 bits = t->family == 4 ? 32 : 128, host, mask, w;
	struct cp_flow_key key = { 0 };

	__builtin_memcpy(src, t->src, 16);
	if (o->method != MLV_CP_IPIP || !o->has_src || o->src_len > bits)
		return;
	__builtin_memcpy(src, o->src_prefix, 16);
	host = bits - o->src_len;
	if (!host)
		return;
	mask = host >= 32 ? 0xffffffffu : (1u << host) - 1;
	/* the key of the packet as re-addressed: the data plane's key of a
	 * client's packet to the VIP */
	__builtin_memcpy(key.src, t->src, 16);
	__builtin_memcpy(key.dst, o->vip, 16);
	key.sport = t->sport;
	key.dport = t->dport;
	key.proto = IPPROTO_TCP;
	key.family = t->family;
	w = t->family == 4 ? 0 : 3;
	src[w] = bpf_htonl(bpf_ntohl(src[w]) | (mlv_cp_flow_hash(&key) & mask));
}

static __always_inline __u32 sum16(const void *p, int len)
{
	const __u16 *w = p;
	__u32 s = 0;

#pragma unroll
	for (int i = 0; i < len / 2; i++)
		s += w[i];
	return s;
}

/* IPv4 outer header (and UDP + GUE for gue) in front of the inner packet
 * of inner_len bytes. */
static __always_inline int encap4(struct __sk_buff *skb, const struct cp_tcp *t,
				  const struct mlv_cp_out *o, const __u32 *src,
				  __u32 inner_len)
{
	struct {
		struct iphdr ip;
		struct udphdr udp;
		__u8 gue[CP_GUE_HLEN];
	} h = { 0 };
	int gue = o->method == MLV_CP_GUE;
	__u32 room = CP_IP4_HLEN + (gue ? CP_UDP_HLEN + CP_GUE_HLEN : 0);

	h.ip.version = 4;
	h.ip.ihl = 5;
	h.ip.tot_len = bpf_htons((__u16)(inner_len + room));
	h.ip.frag_off = bpf_htons(CP_IP4_DF);
	h.ip.ttl = CP_OUTER_TTL;
	h.ip.protocol = gue ? IPPROTO_UDP : IPPROTO_IPIP;
	h.ip.saddr = src[0];
	h.ip.daddr = t->dst[0];          /* the backend */
	h.ip.check = (__sum16)~mlv_csum_fold(sum16(&h.ip, CP_IP4_HLEN));
	if (bpf_skb_adjust_room(skb, (__s32)room, BPF_ADJ_ROOM_MAC,
				BPF_F_ADJ_ROOM_ENCAP_L3_IPV4 |
				(gue ? BPF_F_ADJ_ROOM_ENCAP_L4_UDP : 0)))
		return -1;
	if (!gue)
		return bpf_skb_store_bytes(skb, CP_ETH_HLEN, &h, CP_IP4_HLEN, 0);
	h.udp.source = t->sport;
	h.udp.dest = o->gue_port;
	h.udp.len = bpf_htons((__u16)(inner_len + CP_UDP_HLEN + CP_GUE_HLEN));
	h.gue[1] = t->inner_proto;
	return bpf_skb_store_bytes(skb, CP_ETH_HLEN, &h, sizeof(h), 0);
}

/* The outer UDP checksum of a GUE packet over IPv6 without summing the
 * TCP segment: once the inner TCP checksum is right (now, or after the
 * device fills it in), the segment sums to the complement of the inner
 * pseudo-header's sum, which the headers give (local checksum offload,
 * the kernel's Documentation/networking/checksum-offloads.rst). */
static __always_inline __u16 gue6_csum(const struct ipv6hdr *outer,
				       const void *udp_gue,
				       const struct ipv6hdr *inner,
				       __u32 udp_len, __u32 tcp_len)
{
	__u32 s, pseudo;

	pseudo = sum16(&inner->saddr, 32) + bpf_htons((__u16)tcp_len) +
		 bpf_htons(IPPROTO_TCP);
	s = sum16(&outer->saddr, 32) + bpf_htons((__u16)udp_len) +
	    bpf_htons(IPPROTO_UDP) + sum16(udp_gue, CP_UDP_HLEN + CP_GUE_HLEN) +
	    sum16(inner, CP_IP6_HLEN) + (__u16)~mlv_csum_fold(pseudo);
	s = (__u16)~mlv_csum_fold(s);
	return s ? (__u16)s : 0xffff;   /* 0 would mean "none" */
}

static __always_inline int encap6(struct __sk_buff *skb, const struct cp_tcp *t,
				  const struct mlv_cp_out *o, const __u32 *src,
				  __u32 inner_len)
{
	struct {
		struct ipv6hdr ip;
		struct udphdr udp;
		__u8 gue[CP_GUE_HLEN];
	} h = { 0 };
	struct ipv6hdr inner;
	int gue = o->method == MLV_CP_GUE;
	__u32 room = CP_IP6_HLEN + (gue ? CP_UDP_HLEN + CP_GUE_HLEN : 0);

	h.ip.version = 6;
	h.ip.payload_len = bpf_htons((__u16)(inner_len + room - CP_IP6_HLEN));
	h.ip.nexthdr = gue ? IPPROTO_UDP : IPPROTO_IPV6;
	h.ip.hop_limit = CP_OUTER_TTL;
	__builtin_memcpy(&h.ip.saddr, src, 16);
	__builtin_memcpy(&h.ip.daddr, t->dst, 16);   /* the backend */
	if (gue) {
		/* the inner header as it now is (destination the VIP) */
		if (bpf_skb_load_bytes(skb, CP_ETH_HLEN, &inner, sizeof(inner)))
			return -1;
		h.udp.source = t->sport;
		h.udp.dest = o->gue_port;
		h.udp.len = bpf_htons((__u16)(inner_len + CP_UDP_HLEN +
					      CP_GUE_HLEN));
		h.gue[1] = t->inner_proto;
		h.udp.check = gue6_csum(&h.ip, &h.udp, &inner,
					inner_len + CP_UDP_HLEN + CP_GUE_HLEN,
					inner_len - CP_IP6_HLEN);
	}
	if (bpf_skb_adjust_room(skb, (__s32)room, BPF_ADJ_ROOM_MAC,
				BPF_F_ADJ_ROOM_ENCAP_L3_IPV6 |
				(gue ? BPF_F_ADJ_ROOM_ENCAP_L4_UDP : 0)))
		return -1;
	if (!gue)
		return bpf_skb_store_bytes(skb, CP_ETH_HLEN, &h, CP_IP6_HLEN, 0);
	return bpf_skb_store_bytes(skb, CP_ETH_HLEN, &h, sizeof(h), 0);
}

SEC("tc")
int mlv_check_out(struct __sk_buff *skb)
{
	struct mlv_cp_out_key k = { 0 };
	const struct mlv_cp_out *found;
	struct mlv_cp_out o;
	struct cp_tcp t = { 0 };
	__u32 inner_len, src[4];
	int err;

	if (parse_tcp(skb, &t))
		return TC_ACT_OK;
	__builtin_memcpy(k.backend, t.dst, 16);
	k.port = t.dport;
	k.local_port = t.sport;
	k.family = t.family;
	found = bpf_map_lookup_elem(&cp_out, &k);
	if (!found)
		return TC_ACT_OK;
	o = *found;
	if (set_addr(skb, &t, t.addr_dst, t.dst, o.vip))
		goto drop;
	if (o.method == MLV_CP_L2DSR) {
		if (o.has_mac && bpf_skb_store_bytes(skb, 0, o.mac, 6, 0))
			goto drop;
		count(MLV_CP_CTR_CARRIED);
		return TC_ACT_OK;
	}
	outer_source(&t, &o, src);
	inner_len = skb->len - CP_ETH_HLEN;
	err = t.family == 4 ? encap4(skb, &t, &o, src, inner_len)
			    : encap6(skb, &t, &o, src, inner_len);
	if (err)
		goto drop;
	count(MLV_CP_CTR_CARRIED);
	return TC_ACT_OK;
drop:
	count(MLV_CP_CTR_DROPPED);
	return TC_ACT_SHOT;
}

SEC("tc")
int mlv_check_in(struct __sk_buff *skb)
{
	struct mlv_cp_in_key k = { 0 };
	const struct mlv_cp_in *found;
	struct mlv_cp_in in;
	struct cp_tcp t = { 0 };

	if (parse_tcp(skb, &t))
		return TC_ACT_OK;
	__builtin_memcpy(k.vip, t.src, 16);
	k.port = t.sport;
	k.local_port = t.dport;
	k.family = t.family;
	found = bpf_map_lookup_elem(&cp_in, &k);
	if (!found)
		return TC_ACT_OK;
	in = *found;
	if (set_addr(skb, &t, t.addr_src, t.src, in.backend)) {
		count(MLV_CP_CTR_DROPPED);
		return TC_ACT_SHOT;
	}
	count(MLV_CP_CTR_RETURNED);
	return TC_ACT_OK;
}

char _license[] SEC("license") = "Dual BSD/GPL";
