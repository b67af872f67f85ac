/* SPDX-License-Identifier: BSD-3-Clause OR GPL-2.0-only */
/* Second chance, the backend's half (docs/second-chance.md; the wire
 * format: dataplane/bpf/common/second_chance.h). A load balancer that
 * lost a flow's state (a restart, a new instance, a table change) sends
 * its packets to the backend its table names now, and lists in the GUE
 * private data the backends that may hold the connection instead. This
 * backend keeps what it can answer and sends the rest on, once:
 *
 *   - a block already marked redirected is the end of its one extra
 *     hop: decapsulated here whatever it is (sc_arrived);
 *   - not TCP (UDP has no connection to look for), an inner fragment,
 *     TCP behind IPv6 extension headers, a SYN (SYN without ACK: a new
 *     connection starts where the load balancer chose): decapsulated;
 *   - TCP whose 4-tuple has a socket here (established, request or
 *     time-wait), or an ACK that completes a syncookie handshake with a
 *     listener here: decapsulated;
 *   - otherwise (no socket, or only a listener) the packet goes to the
 *     first listed hop that is not one of decap_addrs, with its outer
 *     header rewritten in place and not decapsulated: destination the
 *     hop, source still the load balancer's (the hop's decap_sources
 *     accept it), TTL / hop limit one less, the block marked redirected
 *     so the hop never sends it further, checksums updated
 *     incrementally (a UDP checksum of 0, none, stays 0). No hop, only
 *     this host, TTL 1 or no route to the chosen hop (the next one is
 *     not tried: one route lookup per packet at most): decapsulated
 *     here, counted (sc_no_hop, sc_self, sc_ttl, sc_no_route), so the
 *     local stack answers with a reset as it would without second
 *     chance.
 *
 * The route is bpf_fib_lookup's in the device's namespace, which needs
 * forwarding enabled on the receiving device (the kernel's rule for
 * forwarded packets); the MTU check is the route's. Sent with XDP_TX
 * when the route leaves through the receiving device, else
 * bpf_redirect. A route whose neighbour is not resolved yet (backends
 * rarely talk to each other) hands the rewritten frame to the stack,
 * which forwards it and resolves the neighbour for the packets after
 * it; it decrements the TTL itself then.
 *
 * Included by xdp_decap.bpf.c. */
#ifndef MLV_BPF_DECAP_REDIRECT_H
#define MLV_BPF_DECAP_REDIRECT_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "dataplane/bpf/common/consts.h"
#include "dataplane/bpf/common/csum.h"
#include "dataplane/bpf/common/parse.h"
#include "dataplane/bpf/common/second_chance.h"
#include "dataplane/bpf/decap/maps.h"

/* The block's frame offsets are constant: a frame that gets this far is
 * untagged, its IPv4 header has no options, its IPv6 header no extension
 * headers. The offset over outer IPv4: */
#define MLV_SC_OFF4 (ETH_HLEN + 20 + 8 + MLV_GUE_HLEN)
/* The block's frame offset over outer IPv6. */
#define MLV_SC_OFF6 (ETH_HLEN + 40 + 8 + MLV_GUE_HLEN)
/* The longest TCP header (data offset 15 words), for the syncookie
 * check's copy. */
#define MLV_SC_TCP_MAX_HDR 60
/* No second-chance counter goes with the decapsulation. */
#define MLV_SC_CTR_NONE MLV_DECAP_CTR__COUNT

/* What GUE private data is to second chance. */
enum mlv_sc_block {
	MLV_SC_BLOCK_NONE = 0,  /* someone else's private data: skipped */
	MLV_SC_BLOCK_VALID,     /* ours, version 1, as the load balancer writes */
	MLV_SC_BLOCK_MALFORMED, /* ours, but not so: decapsulated, counted */
};

/* The addr slots (MLV_SC_MAX_HOPS of alen bytes, a constant at each
 * call site) past the first hops are zero. */
static __always_inline int sc_unused_zero(const __u8 *slots, __u32 alen,
					  __u8 hops)
{
	__u8 any = 0;

#pragma unroll
	for (__u32 i = 0; i < MLV_SC_MAX_HOPS * alen; i++)
		if (i >= hops * alen)
			any |= slots[i];
	return any == 0;
}

/* The block's fixed part and slots against the outer family: len is
 * the family's block length and the slots fit the frame (checked here
 * again for the verifier; the caller has checked the whole private
 * data). */
static __always_inline int sc_block_ok(const struct mlv_sc_hdr *sc,
				       __u32 len, const void *end, int v6)
{
	const __u8 *slots = (const __u8 *)(sc + 1);

	if (sc->version != MLV_SC_VERSION || (sc->flags & ~MLV_SC_F_ALL) ||
	    !(sc->flags & MLV_SC_F_IPV6) != !v6 || sc->hops > MLV_SC_MAX_HOPS)
		return 0;
	if (v6)
		return len == MLV_SC_LEN6 &&
		       (void *)(slots + MLV_SC_LEN6 - MLV_SC_HDR_LEN) <= end &&
		       sc_unused_zero(slots, 16, sc->hops);
	return len == MLV_SC_LEN4 &&
	       (void *)(slots + MLV_SC_LEN4 - MLV_SC_HDR_LEN) <= end &&
	       sc_unused_zero(slots, 4, sc->hops);
}

/* The GUE private data at block (len bytes, 4 or more, inside the frame)
 * of a frame whose outer family is MLV_BPF_FAMILY_V4/_V6: ours, and
 * valid? A valid block's fixed part is copied to *hdr. */
static __always_inline enum mlv_sc_block
mlv_sc_block_check(const __u8 *block, __u32 len, const void *end,
		   __u8 family, struct mlv_sc_hdr *hdr)
{
	const struct mlv_sc_hdr *sc = (const void *)block;

	if ((void *)(sc + 1) > end || sc->kind != MLV_SC_KIND)
		return MLV_SC_BLOCK_NONE;
	if (!sc_block_ok(sc, len, end, family == MLV_BPF_FAMILY_V6))
		return MLV_SC_BLOCK_MALFORMED;
	*hdr = *sc;
	return MLV_SC_BLOCK_VALID;
}

/* The inner TCP flow a socket lookup is made for. */
struct sc_flow {
	struct bpf_sock_tuple tuple;
	__u32 tuple_len;        /* sizeof tuple.ipv4 or tuple.ipv6 */
	__u32 ip_off;           /* frame offsets of the inner IP header */
	__u32 ip_len;           /* and its fixed length (20 / 40) */
	__u32 tcp_off;          /* of the TCP header */
	__u32 tcp_len;          /* and its length with options */
	__u8 syn, ack, rst;
};

/* The inner IPv4 packet at ip (its fixed header checked by check_inner),
 * ip_off bytes into the frame: TCP, not a fragment, the header whole? */
static __always_inline int sc_flow4(struct iphdr *ip, const void *end,
				    __u32 ip_off, struct sc_flow *f)
{
	struct tcphdr *tcp;

	if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_TCP ||
	    ip->ihl < 5 ||
	    (ip->frag_off & bpf_htons(MLV_IP_MF | MLV_IP_OFFSET)))
		return 0;
	tcp = (void *)ip + ip->ihl * 4;
	if ((void *)(tcp + 1) > end || tcp->doff < 5)
		return 0;
	f->tuple.ipv4.saddr = ip->saddr;
	f->tuple.ipv4.daddr = ip->daddr;
	f->tuple.ipv4.sport = tcp->source;
	f->tuple.ipv4.dport = tcp->dest;
	f->tuple_len = sizeof(f->tuple.ipv4);
	f->ip_off = ip_off;
	f->ip_len = sizeof(*ip);
	f->tcp_off = ip_off + ip->ihl * 4;
	f->tcp_len = tcp->doff * 4;
	f->syn = tcp->syn;
	f->ack = tcp->ack;
	f->rst = tcp->rst;
	return 1;
}

/* The same for an inner IPv6 packet: TCP right after the fixed header
 * (extension headers count as not TCP). */
static __always_inline int sc_flow6(struct ipv6hdr *ip6, const void *end,
				    __u32 ip_off, struct sc_flow *f)
{
	struct tcphdr *tcp = (void *)(ip6 + 1);

	if ((void *)(tcp + 1) > end || ip6->nexthdr != IPPROTO_TCP ||
	    tcp->doff < 5)
		return 0;
	__builtin_memcpy(f->tuple.ipv6.saddr, &ip6->saddr, 16);
	__builtin_memcpy(f->tuple.ipv6.daddr, &ip6->daddr, 16);
	f->tuple.ipv6.sport = tcp->source;
	f->tuple.ipv6.dport = tcp->dest;
	f->tuple_len = sizeof(f->tuple.ipv6);
	f->ip_off = ip_off;
	f->ip_len = sizeof(*ip6);
	f->tcp_off = ip_off + sizeof(*ip6);
	f->tcp_len = tcp->doff * 4;
	f->syn = tcp->syn;
	f->ack = tcp->ack;
	f->rst = tcp->rst;
	return 1;
}

/* Does the ACK of f complete a syncookie handshake with the listener
 * sk? The helper takes the headers from copies: the TCP header's
 * length varies with its options, which a packet pointer could not show
 * the verifier. */
static __always_inline int sc_syncookie(struct xdp_md *ctx,
					struct bpf_sock *sk,
					const struct sc_flow *f)
{
	__u8 iph[sizeof(struct ipv6hdr)] = {};
	__u8 th[MLV_SC_TCP_MAX_HDR] = {};
	__u32 ip_len = f->ip_len, tcp_len = f->tcp_len;

	/* what the kernel's cookie check takes: ACK, neither SYN nor RST */
	if (!f->ack || f->syn || f->rst)
		return 0;
	if (ip_len < sizeof(struct iphdr) || ip_len > sizeof(iph) ||
	    tcp_len < sizeof(struct tcphdr) || tcp_len > sizeof(th) ||
	    bpf_xdp_load_bytes(ctx, f->ip_off, iph, ip_len) ||
	    bpf_xdp_load_bytes(ctx, f->tcp_off, th, tcp_len))
		return 0;
	return bpf_tcp_check_syncookie(sk, iph, ip_len, (void *)th,
				       tcp_len) == 0;
}

/* Is f's connection this host's: any socket of its 4-tuple but a
 * listener, or a listener whose syncookie the ACK carries? Looked up in
 * the receiving device's namespace. */
static __always_inline int sc_flow_here(struct xdp_md *ctx,
					struct sc_flow *f)
{
	struct bpf_sock *sk;
	int here;

	sk = bpf_skc_lookup_tcp(ctx, &f->tuple, f->tuple_len,
				BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return 0;
	here = sk->state != BPF_TCP_LISTEN || sc_syncookie(ctx, sk, f);
	bpf_sk_release(sk);
	return here;
}

/* The frame leaves for the fib result's next hop: its MACs, then
 * XDP_TX back out of the receiving device or a redirect to another. */
static __always_inline int sc_send(struct xdp_md *ctx, struct ethhdr *eth,
				   const struct bpf_fib_lookup *fib)
{
	__builtin_memcpy(eth->h_dest, fib->dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, fib->smac, ETH_ALEN);
	if (fib->ifindex == ctx->ingress_ifindex)
		return XDP_TX;
	return (int)bpf_redirect(fib->ifindex, 0);
}

/* Mark the block redirected; the UDP checksum (not 0: none) follows
 * the flags byte. The flags share a 16-bit word with the hop count, at
 * an even offset from the UDP header. */
static __always_inline void sc_mark(struct mlv_sc_hdr *sc, struct udphdr *udp)
{
	__be16 *word = (__be16 *)&sc->flags;
	__be16 old = *word;

	sc->flags |= MLV_SC_F_REDIRECTED;
	if (udp->check)
		udp->check = mlv_udp_csum(mlv_csum_replace16(udp->check, old,
							     *word));
}

_Static_assert(MLV_SC_MAX_HOPS == 2, "sc_pick4/6 try two slots");

/* Outer IPv4: the first hop of the n in slots that is not this host, in
 * *hop; 0 if none is. */
static __always_inline int sc_pick4(const __be32 *slots, __u8 n, __be32 *hop)
{
	if (n >= 1 && !decap_is_local(MLV_BPF_FAMILY_V4, &slots[0], 4))
		*hop = slots[0];
	else if (n >= 2 && !decap_is_local(MLV_BPF_FAMILY_V4, &slots[1], 4))
		*hop = slots[1];
	else
		return 0;
	return 1;
}

/* Outer IPv4: send the frame to the first foreign hop of the n listed,
 * rewritten. Returns the XDP action, or -1 with *ctr set: decapsulate. */
static __always_inline int sc_forward4(struct xdp_md *ctx, __u8 n, __u32 *ctr)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct iphdr *ip = data + ETH_HLEN;
	struct udphdr *udp = (void *)(ip + 1);
	struct mlv_sc_hdr *sc = data + MLV_SC_OFF4;
	__be32 *slots = (__be32 *)(sc + 1);
	struct bpf_fib_lookup fib = {};
	__be16 *ttl_word = (__be16 *)&ip->ttl;
	__be16 old_ttl;
	__be32 hop;
	long rc;

	if ((void *)(slots + MLV_SC_MAX_HOPS) > end)
		return -1;              /* the plan checked it: not reached */
	if (!sc_pick4(slots, n, &hop)) {
		*ctr = MLV_DECAP_CTR_SC_SELF;
		return -1;
	}
	if (ip->ttl <= 1) {
		*ctr = MLV_DECAP_CTR_SC_TTL;
		return -1;
	}
	fib.family = MLV_BPF_AF_INET;
	fib.tos = ip->tos;
	fib.l4_protocol = IPPROTO_UDP;
	fib.sport = udp->source;
	fib.dport = udp->dest;
	fib.tot_len = bpf_ntohs(ip->tot_len);
	fib.ifindex = ctx->ingress_ifindex;
	fib.ipv4_src = ip->saddr;
	fib.ipv4_dst = hop;
	rc = bpf_fib_lookup(ctx, &fib, sizeof(fib), 0);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS && rc != BPF_FIB_LKUP_RET_NO_NEIGH) {
		*ctr = MLV_DECAP_CTR_SC_NO_ROUTE;
		return -1;
	}

	/* no neighbour yet: the stack forwards it (and resolves the hop,
	 * so the next packets go out here), decrementing the TTL itself */
	if (rc == BPF_FIB_LKUP_RET_SUCCESS) {
		old_ttl = *ttl_word;
		ip->ttl--;
		ip->check = mlv_csum_replace16(ip->check, old_ttl, *ttl_word);
	}
	ip->check = mlv_csum_replace32(ip->check, ip->daddr, hop);
	/* the pseudo-header's destination; 0 (the load balancer's
	 * choice over IPv4) stays 0 */
	if (udp->check)
		udp->check = mlv_udp_csum(mlv_csum_replace32(udp->check,
							     ip->daddr, hop));
	ip->daddr = hop;
	sc_mark(sc, udp);
	if (rc == BPF_FIB_LKUP_RET_NO_NEIGH)
		return XDP_PASS;
	return sc_send(ctx, data, &fib);
}

/* Outer IPv6: sc_pick4 for 16-byte slots. */
static __always_inline int sc_pick6(const struct in6_addr *slots, __u8 n,
				    struct in6_addr *hop)
{
	if (n >= 1 && !decap_is_local(MLV_BPF_FAMILY_V6, &slots[0], 16))
		__builtin_memcpy(hop, &slots[0], 16);
	else if (n >= 2 && !decap_is_local(MLV_BPF_FAMILY_V6, &slots[1], 16))
		__builtin_memcpy(hop, &slots[1], 16);
	else
		return 0;
	return 1;
}

/* The UDP checksum after the outer IPv6 destination (in its
 * pseudo-header) became hop. */
static __always_inline __sum16 sc_csum_daddr6(__sum16 check,
					      const struct in6_addr *old,
					      const struct in6_addr *hop)
{
#pragma unroll
	for (int i = 0; i < 4; i++)
		check = mlv_csum_replace32(check, old->in6_u.u6_addr32[i],
					   hop->in6_u.u6_addr32[i]);
	return mlv_udp_csum(check);
}

/* sc_forward4 over outer IPv6 (no header checksum; the UDP checksum
 * covers the destination). */
static __always_inline int sc_forward6(struct xdp_md *ctx, __u8 n, __u32 *ctr)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ipv6hdr *ip6 = data + ETH_HLEN;
	struct udphdr *udp = (void *)(ip6 + 1);
	struct mlv_sc_hdr *sc = data + MLV_SC_OFF6;
	struct in6_addr *slots = (struct in6_addr *)(sc + 1);
	struct bpf_fib_lookup fib = {};
	struct in6_addr hop;
	long rc;

	if ((void *)(slots + MLV_SC_MAX_HOPS) > end)
		return -1;              /* the plan checked it: not reached */
	if (!sc_pick6(slots, n, &hop)) {
		*ctr = MLV_DECAP_CTR_SC_SELF;
		return -1;
	}
	if (ip6->hop_limit <= 1) {
		*ctr = MLV_DECAP_CTR_SC_TTL;
		return -1;
	}
	fib.family = MLV_BPF_AF_INET6;
	fib.flowinfo = *(__be32 *)ip6 & bpf_htonl(MLV_IP6_FLOWINFO_MASK);
	fib.l4_protocol = IPPROTO_UDP;
	fib.sport = udp->source;
	fib.dport = udp->dest;
	fib.tot_len = sizeof(*ip6) + bpf_ntohs(ip6->payload_len);
	fib.ifindex = ctx->ingress_ifindex;
	__builtin_memcpy(fib.ipv6_src, &ip6->saddr, 16);
	__builtin_memcpy(fib.ipv6_dst, &hop, 16);
	rc = bpf_fib_lookup(ctx, &fib, sizeof(fib), 0);
	if (rc != BPF_FIB_LKUP_RET_SUCCESS && rc != BPF_FIB_LKUP_RET_NO_NEIGH) {
		*ctr = MLV_DECAP_CTR_SC_NO_ROUTE;
		return -1;
	}

	/* no neighbour yet: as sc_forward4 */
	if (rc == BPF_FIB_LKUP_RET_SUCCESS)
		ip6->hop_limit--;
	if (udp->check)
		udp->check = sc_csum_daddr6(udp->check, &ip6->daddr, &hop);
	__builtin_memcpy(&ip6->daddr, &hop, 16);
	sc_mark(sc, udp);
	if (rc == BPF_FIB_LKUP_RET_NO_NEIGH)
		return XDP_PASS;
	return sc_send(ctx, data, &fib);
}

/* A frame with a valid block (*hdr its fixed part), outer family
 * MLV_BPF_FAMILY_V4/_V6, passed every decapsulation check; its inner
 * packet (inner_proto) starts at c->pos, inner_off bytes into the frame.
 * Returns the XDP action of a frame sent on (rewritten), or -1:
 * decapsulate it, and count *ctr alongside unless MLV_SC_CTR_NONE. */
static __always_inline int mlv_sc_redirect(struct xdp_md *ctx,
					   const struct mlv_cursor *c,
					   __u8 inner_proto, __u32 inner_off,
					   __u8 family,
					   const struct mlv_sc_hdr *hdr,
					   __u32 *ctr)
{
	struct sc_flow f = {};
	int tcp;

	*ctr = MLV_SC_CTR_NONE;
	if (hdr->flags & MLV_SC_F_REDIRECTED) {
		*ctr = MLV_DECAP_CTR_SC_ARRIVED;
		return -1;
	}
	if (inner_proto == MLV_PROTO_IPIP)
		tcp = sc_flow4(c->pos, c->end, inner_off, &f);
	else
		tcp = sc_flow6(c->pos, c->end, inner_off, &f);
	if (!tcp || (f.syn && !f.ack) || sc_flow_here(ctx, &f))
		return -1;
	if (hdr->hops == 0) {
		*ctr = MLV_DECAP_CTR_SC_NO_HOP;
		return -1;
	}
	if (family == MLV_BPF_FAMILY_V4)
		return sc_forward4(ctx, hdr->hops, ctr);
	return sc_forward6(ctx, hdr->hops, ctr);
}

#endif
