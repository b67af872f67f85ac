/* SPDX-License-Identifier: BSD-3-Clause OR GPL-2.0-only */
/* Backend-side decapsulation of maglevd's forwarding formats, for hosts
 * whose kernels lack the ipip/ip6_tunnel/fou modules (docs/deployment.md,
 * tools/bin/maglev-decap).
 *
 * A frame whose outer destination is one of this host's addresses
 * (decap_addrs), whose outer source is in a load balancer prefix
 * (decap_sources), and that carries
 *   - IPIP: IPv4 protocol / IPv6 next header 4 (IPv4 inside) or 41 (IPv6
 *     inside): 4in4, 6in4, 4in6, 6in6; or
 *   - GUE variant 0 (draft-ietf-intarea-gue) over UDP to a port in
 *     decap_gue_ports, proto 4 or 41, with a bare 4-byte header or with
 *     Hlen words of private data after it (flags 0: no extension
 *     fields), which are skipped,
 * loses its outer headers and goes up the stack as the inner packet, with
 * the Ethernet type set to the inner family and the MAC addresses kept.
 * Exactly the formats of docs/forwarding.md (dataplane/packet/encap.c).
 *
 * Private data that is maglevd's second-chance block
 * (dataplane/bpf/common/second_chance.h) is read first: a TCP packet of
 * a connection this host does not hold (a SYN nothing here listens for,
 * an ICMP too-big about such a connection) is sent on, still
 * encapsulated, to the next hop the block lists (redirect.h). A block that is not what
 * version 1 writes is only counted (sc_malformed) and the frame
 * decapsulated, as private data nobody reads would be.
 *
 * Everything else passes untouched, including tunnels from any other
 * source (undoing those would let anyone who reaches this host choose
 * the source address the stack sees), and tunnel packets this program
 * cannot undo faithfully (outer fragments, IPv4 options, IPv6 extension
 * headers, GUE control messages, GUE flags announcing extension fields):
 * the kernel gets them as they arrived. Outer checksums: the IPv4 header
 * checksum is verified (once the outer header is gone nothing else
 * would); the outer UDP checksum is not (summing the payload here would
 * cost a pass over every packet, and the inner packet's own TCP/UDP
 * checksum, which the stack verifies after decapsulation, covers the
 * same bytes).
 *
 * ECN (RFC 6040 4.2, as the Linux tunnel drivers do): an outer CE mark is
 * copied to an ECT inner packet; CE over a not-ECT inner packet is
 * dropped, since the inner transport could not react to it.
 * Untagged Ethernet only: a VLAN-tagged frame passes untouched.
 *
 * TCP SYNs it decapsulates are recorded for the tc egress program of
 * SYN-ACK MSS clamping, which lives in this object too (synack.h).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "dataplane/bpf/decap/maps.h"
#include "dataplane/bpf/common/csum.h"
#include "dataplane/bpf/common/parse.h"
#include "dataplane/bpf/decap/redirect.h"
#include "dataplane/bpf/decap/synack.h"

/* What the checks decided for a tunnel packet that can be undone. */
struct decap_plan {
	__u32 outer_len;    /* bytes from the end of Ethernet to the inner packet */
	__u32 counter;      /* MLV_DECAP_CTR_DECAP_IPIP or _GUE */
	__u32 sc_ctr;       /* counted too when decapsulated; MLV_SC_CTR_NONE */
	__u8 inner_proto;   /* MLV_PROTO_IPIP (IPv4) or MLV_PROTO_IPV6 */
	__u8 outer_ecn;
	__u8 family;        /* the outer MLV_BPF_FAMILY_V4 or _V6 */
	__u8 sc;            /* enum mlv_sc_block of the GUE private data */
	struct mlv_sc_hdr sc_hdr;   /* a valid block's fixed part */
};

static __always_inline int count(__u32 ctr, int action)
{
	decap_count(ctr);
	return action;
}

/* Is addr (len bytes) inside a decap_sources prefix of its family? */
static __always_inline int allowed_source(__u8 family, const void *addr,
					  __u32 len)
{
	struct mlv_decap_src_key key = {};

	key.prefixlen = MLV_DECAP_SRC_FAMILY_BITS + 8 * len;
	key.family = family;
	__builtin_memcpy(key.addr, addr, len);
	return bpf_map_lookup_elem(&decap_sources, &key) != NULL;
}

static __always_inline int is_decap(__u32 verdict)
{
	return verdict == MLV_DECAP_CTR_DECAP_IPIP ||
	       verdict == MLV_DECAP_CTR_DECAP_GUE;
}

static __always_inline int is_ipip(__u8 proto)
{
	return proto == MLV_PROTO_IPIP || proto == MLV_PROTO_IPV6;
}

/* GUE private data at block, len bytes (1 to 31 words) inside the
 * frame: second chance's block, or someone else's to skip. */
static __always_inline void plan_private(const __u8 *block, __u32 len,
					 const void *end, struct decap_plan *p)
{
	p->sc = mlv_sc_block_check(block, len, end, p->family, &p->sc_hdr);
	if (p->sc == MLV_SC_BLOCK_MALFORMED)
		p->sc_ctr = MLV_DECAP_CTR_SC_MALFORMED;
}

/* The UDP + GUE headers at c->pos: a GUE data message to a configured
 * port? Fills the plan's inner protocol and counter, and what private
 * data it carries. */
static __always_inline __u32 plan_gue(struct mlv_cursor *c,
				      struct decap_plan *p)
{
	struct udphdr *udp = c->pos;
	struct mlv_decap_port_key port = {};
	__u32 hlen;
	__u8 *gue;

	if ((void *)(udp + 1) > c->end)
		return MLV_DECAP_CTR_PASS_MALFORMED;
	port.port = udp->dest;
	if (!bpf_map_lookup_elem(&decap_gue_ports, &port))
		return MLV_DECAP_CTR_PASS_NOT_TUNNEL;
	gue = (__u8 *)(udp + 1);
	if ((void *)(gue + MLV_GUE_HLEN) > c->end)
		return MLV_DECAP_CTR_PASS_MALFORMED;
	if ((gue[0] & MLV_GUE_VER_C_MASK) || !is_ipip(gue[1]))
		return MLV_DECAP_CTR_PASS_UNSUPPORTED;
	hlen = (gue[0] & MLV_GUE_HLEN_MASK) * 4;
	/* flags announce extension fields, which come before any private
	 * data and which this program does not parse */
	if (hlen && (gue[2] || gue[3]))
		return MLV_DECAP_CTR_PASS_UNSUPPORTED;
	if ((void *)(gue + MLV_GUE_HLEN + hlen) > c->end)
		return MLV_DECAP_CTR_PASS_MALFORMED;
	if (hlen)
		plan_private(gue + MLV_GUE_HLEN, hlen, c->end, p);
	p->inner_proto = gue[1];
	p->outer_len += sizeof(*udp) + MLV_GUE_HLEN + hlen;
	c->pos = gue + MLV_GUE_HLEN + hlen;
	p->counter = MLV_DECAP_CTR_DECAP_GUE;
	return p->counter;
}

/* ip_room: frame bytes from the outer IPv4 header on. The source is
 * checked last, once the frame is known to be a tunnel this program would
 * undo, so the counter of unknown sources counts only those. */
static __always_inline __u32 plan_ipv4(struct mlv_cursor *c, __u32 ip_room,
				       struct decap_plan *p)
{
	struct iphdr *ip = c->pos;
	__u32 tot_len, verdict;

	if ((void *)(ip + 1) > c->end)
		return MLV_DECAP_CTR_PASS_MALFORMED;
	if (ip->version != 4 || ip->ihl < 5)
		return MLV_DECAP_CTR_PASS_MALFORMED;
	if (!is_ipip(ip->protocol) && ip->protocol != IPPROTO_UDP)
		return MLV_DECAP_CTR_PASS_NOT_TUNNEL;
	if (!decap_is_local(MLV_BPF_FAMILY_V4, &ip->daddr, 4))
		return MLV_DECAP_CTR_PASS_NOT_LOCAL;
	if (ip->frag_off & bpf_htons(MLV_IP_MF | MLV_IP_OFFSET))
		return MLV_DECAP_CTR_PASS_FRAGMENT;
	if (ip->ihl != 5)
		return MLV_DECAP_CTR_PASS_UNSUPPORTED;
	tot_len = bpf_ntohs(ip->tot_len);
	if (tot_len < sizeof(*ip) || tot_len > ip_room ||
	    !mlv_ipv4_hdr_csum_ok(ip))
		return MLV_DECAP_CTR_PASS_MALFORMED;

	p->outer_len = sizeof(*ip);
	p->outer_ecn = ip->tos & MLV_ECN_MASK;
	p->family = MLV_BPF_FAMILY_V4;
	c->pos = ip + 1;
	if (ip->protocol == IPPROTO_UDP) {
		verdict = plan_gue(c, p);
	} else {
		p->inner_proto = ip->protocol;
		p->counter = verdict = MLV_DECAP_CTR_DECAP_IPIP;
	}
	if (is_decap(verdict) &&
	    !allowed_source(MLV_BPF_FAMILY_V4, &ip->saddr, 4))
		return MLV_DECAP_CTR_PASS_UNKNOWN_SRC;
	return verdict;
}

static __always_inline __u32 plan_ipv6(struct mlv_cursor *c, __u32 ip_room,
				       struct decap_plan *p)
{
	struct ipv6hdr *ip6 = c->pos;
	__u32 verdict;
	__u8 nh;

	if ((void *)(ip6 + 1) > c->end)
		return MLV_DECAP_CTR_PASS_MALFORMED;
	if (ip6->version != 6)
		return MLV_DECAP_CTR_PASS_MALFORMED;
	nh = ip6->nexthdr;
	if (!is_ipip(nh) && nh != IPPROTO_UDP && nh != MLV_NEXTHDR_HOP &&
	    nh != MLV_NEXTHDR_ROUTING && nh != MLV_NEXTHDR_DEST &&
	    nh != MLV_NEXTHDR_FRAGMENT)
		return MLV_DECAP_CTR_PASS_NOT_TUNNEL;
	if (!decap_is_local(MLV_BPF_FAMILY_V6, &ip6->daddr, 16))
		return MLV_DECAP_CTR_PASS_NOT_LOCAL;
	if (nh == MLV_NEXTHDR_FRAGMENT)
		return MLV_DECAP_CTR_PASS_FRAGMENT;
	if (!is_ipip(nh) && nh != IPPROTO_UDP)
		return MLV_DECAP_CTR_PASS_UNSUPPORTED;
	/* payload length 0 means a jumbogram, which needs a hop-by-hop
	 * header, so it is malformed here too */
	if (ip6->payload_len == 0 ||
	    sizeof(*ip6) + bpf_ntohs(ip6->payload_len) > ip_room)
		return MLV_DECAP_CTR_PASS_MALFORMED;

	p->outer_len = sizeof(*ip6);
	p->outer_ecn = (ip6->flow_lbl[0] >> 4) & MLV_ECN_MASK;
	p->family = MLV_BPF_FAMILY_V6;
	c->pos = ip6 + 1;
	if (nh == IPPROTO_UDP) {
		verdict = plan_gue(c, p);
	} else {
		p->inner_proto = nh;
		p->counter = verdict = MLV_DECAP_CTR_DECAP_IPIP;
	}
	if (is_decap(verdict) &&
	    !allowed_source(MLV_BPF_FAMILY_V6, &ip6->saddr, 16))
		return MLV_DECAP_CTR_PASS_UNKNOWN_SRC;
	return verdict;
}

/* The inner header must be what the outer header announced, and be
 * whole, before anything is changed. Returns 0 or a pass/drop counter. */
static __always_inline __u32 check_inner(const struct mlv_cursor *c,
					 const struct decap_plan *p)
{
	__u8 *inner = c->pos;
	__u8 ecn;

	if (p->inner_proto == MLV_PROTO_IPIP) {
		struct iphdr *ip = c->pos;

		if ((void *)(ip + 1) > c->end || ip->version != 4)
			return MLV_DECAP_CTR_PASS_MALFORMED;
		ecn = ip->tos & MLV_ECN_MASK;
	} else {
		struct ipv6hdr *ip6 = c->pos;

		if ((void *)(ip6 + 1) > c->end || ip6->version != 6)
			return MLV_DECAP_CTR_PASS_MALFORMED;
		ecn = (inner[1] >> 4) & MLV_ECN_MASK;
	}
	if (p->outer_ecn == MLV_ECN_CE && ecn == MLV_ECN_NOT_ECT)
		return MLV_DECAP_CTR_DROP_ECN;
	return 0;
}

/* Outer CE onto the (ECT or CE) inner header at c->pos. */
static __always_inline void propagate_ce(struct mlv_cursor *c, __u8 inner_proto)
{
	if (inner_proto == MLV_PROTO_IPIP) {
		struct iphdr *ip = c->pos;
		__be16 *first_word = c->pos;
		__be16 old;

		if ((void *)(ip + 1) > c->end)
			return;
		old = *first_word;
		ip->tos |= MLV_ECN_CE;
		ip->check = mlv_csum_replace16(ip->check, old, *first_word);
	} else {
		struct ipv6hdr *ip6 = c->pos;

		if ((void *)(ip6 + 1) > c->end)
			return;
		/* the traffic class's low (ECN) bits are bits 4-5 of byte 1 */
		ip6->flow_lbl[0] |= MLV_ECN_CE << 4;
	}
}

SEC("xdp")
int mlv_xdp_decap(struct xdp_md *ctx)
{
	struct mlv_cursor c = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};
	__u32 frame_len = ctx->data_end - ctx->data;
	struct decap_plan plan = { .sc_ctr = MLV_SC_CTR_NONE };
	unsigned char macs[2 * ETH_ALEN];
	struct ethhdr *eth;
	__be16 proto;
	__u32 verdict;
	int action;

	if (mlv_parse_eth(&c, &proto, 0))
		return count(MLV_DECAP_CTR_PASS_NOT_IP, XDP_PASS);
	if (proto == bpf_htons(ETH_P_IP))
		verdict = plan_ipv4(&c, frame_len - ETH_HLEN, &plan);
	else if (proto == bpf_htons(ETH_P_IPV6))
		verdict = plan_ipv6(&c, frame_len - ETH_HLEN, &plan);
	else
		return count(MLV_DECAP_CTR_PASS_NOT_IP, XDP_PASS);
	if (!is_decap(verdict))
		return count(verdict, XDP_PASS);

	verdict = check_inner(&c, &plan);
	if (verdict == MLV_DECAP_CTR_DROP_ECN)
		return count(verdict, XDP_DROP);
	if (verdict)
		return count(verdict, XDP_PASS);
	if (plan.sc == MLV_SC_BLOCK_VALID) {
		decap_count(MLV_DECAP_CTR_SC_CARRIED);
		action = mlv_sc_redirect(ctx, &c, plan.inner_proto,
					 ETH_HLEN + plan.outer_len, plan.family,
					 &plan.sc_hdr, &plan.sc_ctr);
		if (action >= 0) {
			if (plan.sc_ctr != MLV_SC_CTR_NONE)
				decap_count(plan.sc_ctr);
			return count(MLV_DECAP_CTR_REDIRECTED, action);
		}
	}
	mlv_synack_record(&c, plan.inner_proto, plan.outer_len);

	/* Keep the MAC addresses, then move the frame start to just before
	 * the inner packet and write the Ethernet header there. */
	eth = (void *)(long)ctx->data;
	if ((void *)(eth + 1) > (void *)(long)ctx->data_end)
		return count(MLV_DECAP_CTR_ABORTED, XDP_ABORTED);
	__builtin_memcpy(macs, eth, sizeof(macs));
	if (bpf_xdp_adjust_head(ctx, (int)plan.outer_len))
		return count(MLV_DECAP_CTR_ABORTED, XDP_ABORTED);

	c.pos = (void *)(long)ctx->data;
	c.end = (void *)(long)ctx->data_end;
	eth = c.pos;
	if ((void *)(eth + 1) > c.end)
		return count(MLV_DECAP_CTR_ABORTED, XDP_ABORTED);
	__builtin_memcpy(eth, macs, sizeof(macs));
	eth->h_proto = plan.inner_proto == MLV_PROTO_IPIP ?
		bpf_htons(ETH_P_IP) : bpf_htons(ETH_P_IPV6);
	c.pos = eth + 1;
	if (plan.outer_ecn == MLV_ECN_CE)
		propagate_ce(&c, plan.inner_proto);
	if (plan.sc_ctr != MLV_SC_CTR_NONE)
		decap_count(plan.sc_ctr);
	return count(plan.counter, XDP_PASS);
}

char _license[] SEC("license") = "Dual BSD/GPL";
