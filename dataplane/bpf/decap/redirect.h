/* SPDX-License-Identifier: BSD-3-Clause OR GPL-2.0-only */
/* Second chance, the backend's half (docs/second-chance.md; the wire
 * format: dataplane/bpf/common/second_chance.h). A load balancer that
 * lost a flow's state (a restart, a new instance, a table change) sends
 * its packets to the backend its table names now, and lists in the GUE
 * private data the backends that may hold the connection instead. This
 * backend keeps what it can answer and sends the rest on, along the
 * list:
 *
 *   - second chance off on this host (decap_sc_cfg MLV_DECAP_SC_OFF):
 *     decapsulated (sc_off);
 *   - not TCP (UDP has no connection to look for), an inner fragment,
 *     TCP behind IPv6 extension headers, ICMP other than a frag-needed /
 *     packet-too-big about TCP: decapsulated;
 *   - TCP whose 4-tuple has a socket here (established, request or
 *     time-wait), an ACK that completes a syncookie handshake with a
 *     listener here, a SYN (without ACK) with a listener here unless
 *     the host drains (MLV_DECAP_SC_DRAIN), an ICMP error about a
 *     connection here: decapsulated;
 *   - otherwise (no socket; a SYN with no listener, counted
 *     sc_no_listener, or on a draining host, sc_drained; an ICMP error,
 *     sc_icmp) the packet goes to the first listed hop after the one it
 *     was sent to (from the first, if the load balancer sent it) that
 *     is not one of decap_addrs, with its outer header rewritten in
 *     place and not decapsulated: destination the hop, source still the
 *     load balancer's (the hop's decap_sources accept it), TTL / hop
 *     limit one less, the block marked redirected with the hop's index
 *     (MLV_SC_F_AT), checksums updated incrementally (a UDP checksum of
 *     0, none, stays 0). A packet so reaches each hop at most once, in
 *     list order, and takes at most MLV_SC_MAX_HOPS extra hops. No hop
 *     left, only this host, TTL 1 or no route to the chosen hop (the
 *     next one is not tried: one route lookup per packet at most):
 *     decapsulated here, counted (sc_no_hop, sc_exhausted for a packet
 *     another backend sent, sc_self, sc_ttl, sc_no_route), so the local
 *     stack answers with a reset as it would without second chance.
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

	__u8 at = (sc->flags & MLV_SC_F_AT_MASK) >> MLV_SC_F_AT_SHIFT;

	if (sc->version != MLV_SC_VERSION || (sc->flags & ~MLV_SC_F_ALL) ||
	    !(sc->flags & MLV_SC_F_IPV6) != !v6 || sc->hops > MLV_SC_MAX_HOPS)
		return 0;
	/* a hop index on a packet no backend sent, or past the list */
	if ((sc->flags & MLV_SC_F_REDIRECTED) ? at >= sc->hops : at != 0)
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

/* The inner IPv4 packet at ip: an ICMP frag-needed about a TCP segment
 * this host sent (from the VIP to the client)? f gets the connection's
 * 4-tuple as the client's packets carry it, for the socket lookup. */
static __always_inline int sc_icmp4(struct iphdr *ip, const void *end,
				    struct sc_flow *f)
{
	struct iphdr *q;
	__u8 *icmp;
	__be16 *ports;

	if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_ICMP ||
	    ip->ihl < 5 ||
	    (ip->frag_off & bpf_htons(MLV_IP_MF | MLV_IP_OFFSET)))
		return 0;
	icmp = (void *)ip + ip->ihl * 4;
	q = (void *)(icmp + 8);
	if ((void *)(q + 1) > end || icmp[0] != MLV_ICMP_DEST_UNREACH ||
	    icmp[1] != MLV_ICMP_FRAG_NEEDED || q->version != 4 ||
	    q->ihl < 5 || q->protocol != IPPROTO_TCP ||
	    (q->frag_off & bpf_htons(MLV_IP_OFFSET)))
		return 0;
	ports = (void *)q + q->ihl * 4;
	if ((void *)(ports + 2) > end)
		return 0;
	f->tuple.ipv4.saddr = q->daddr;
	f->tuple.ipv4.daddr = q->saddr;
	f->tuple.ipv4.sport = ports[1];
	f->tuple.ipv4.dport = ports[0];
	f->tuple_len = sizeof(f->tuple.ipv4);
	return 1;
}

/* sc_icmp4 for an inner IPv6 packet: an ICMPv6 packet-too-big right
 * after the fixed header, quoting TCP right after its fixed header. */
static __always_inline int sc_icmp6(struct ipv6hdr *ip6, const void *end,
				    struct sc_flow *f)
{
	__u8 *icmp = (void *)(ip6 + 1);
	struct ipv6hdr *q = (void *)(icmp + 8);
	__be16 *ports = (void *)(q + 1);

	if ((void *)(ports + 2) > end || ip6->nexthdr != IPPROTO_ICMPV6 ||
	    icmp[0] != MLV_ICMPV6_PKT_TOO_BIG || q->version != 6 ||
	    q->nexthdr != IPPROTO_TCP)
		return 0;
	__builtin_memcpy(f->tuple.ipv6.saddr, &q->daddr, 16);
	__builtin_memcpy(f->tuple.ipv6.daddr, &q->saddr, 16);
	f->tuple.ipv6.sport = ports[1];
	f->tuple.ipv6.dport = ports[0];
	f->tuple_len = sizeof(f->tuple.ipv6);
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

/* What this host has for f's 4-tuple, in the receiving device's
 * namespace. */
enum sc_socket {
	SC_SOCK_NONE = 0,       /* nothing */
	SC_SOCK_LISTENER,       /* a listener only */
	SC_SOCK_LISTENER_COOKIE,/* a listener whose syncookie f's ACK carries */
	SC_SOCK_CONN,           /* a socket of the 4-tuple (established,
				   request, time-wait) */
};

/* Look f's 4-tuple up; a listener found is tested for f's syncookie
 * only when cookie is set (an ACK; nothing else completes one). */
static __always_inline enum sc_socket sc_socket_of(struct xdp_md *ctx,
						   struct sc_flow *f,
						   int cookie)
{
	struct bpf_sock *sk;
	enum sc_socket r;

	sk = bpf_skc_lookup_tcp(ctx, &f->tuple, f->tuple_len,
				BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return SC_SOCK_NONE;
	if (sk->state != BPF_TCP_LISTEN)
		r = SC_SOCK_CONN;
	else if (cookie && sc_syncookie(ctx, sk, f))
		r = SC_SOCK_LISTENER_COOKIE;
	else
		r = SC_SOCK_LISTENER;
	bpf_sk_release(sk);
	return r;
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

/* Mark the block redirected to hop index at; the UDP checksum (not 0:
 * none) follows the flags byte. The flags share a 16-bit word with the
 * hop count, at an even offset from the UDP header. */
static __always_inline void sc_mark(struct mlv_sc_hdr *sc, struct udphdr *udp,
				    __u8 at)
{
	__be16 *word = (__be16 *)&sc->flags;
	__be16 old = *word;

	sc->flags = (__u8)((sc->flags & ~MLV_SC_F_AT_MASK) |
			   MLV_SC_F_REDIRECTED | (at << MLV_SC_F_AT_SHIFT));
	if (udp->check)
		udp->check = mlv_udp_csum(mlv_csum_replace16(udp->check, old,
							     *word));
}

/* Outer IPv4: the first of the n hops in slots from index from on that
 * is not this host, in *hop and its index in *at; 0 if none is. */
static __always_inline int sc_pick4(const __be32 *slots, __u8 n, __u8 from,
				    __be32 *hop, __u8 *at)
{
#pragma unroll
	for (__u8 i = 0; i < MLV_SC_MAX_HOPS; i++) {
		if (i < from || i >= n ||
		    decap_is_local(MLV_BPF_FAMILY_V4, &slots[i], 4))
			continue;
		*hop = slots[i];
		*at = i;
		return 1;
	}
	return 0;
}

/* Outer IPv4: send the frame to the first foreign hop of the n listed
 * from index from on, rewritten. Returns the XDP action, or -1 with *ctr
 * set: decapsulate. */
static __always_inline int sc_forward4(struct xdp_md *ctx, __u8 n, __u8 from,
				       __u32 *ctr)
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
	__u8 at = 0;
	long rc;

	if ((void *)(slots + MLV_SC_MAX_HOPS) > end)
		return -1;              /* the plan checked it: not reached */
	if (!sc_pick4(slots, n, from, &hop, &at)) {
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
	sc_mark(sc, udp, at);
	if (rc == BPF_FIB_LKUP_RET_NO_NEIGH)
		return XDP_PASS;
	return sc_send(ctx, data, &fib);
}

/* Outer IPv6: sc_pick4 for 16-byte slots. */
static __always_inline int sc_pick6(const struct in6_addr *slots, __u8 n,
				    __u8 from, struct in6_addr *hop, __u8 *at)
{
#pragma unroll
	for (__u8 i = 0; i < MLV_SC_MAX_HOPS; i++) {
		if (i < from || i >= n ||
		    decap_is_local(MLV_BPF_FAMILY_V6, &slots[i], 16))
			continue;
		__builtin_memcpy(hop, &slots[i], 16);
		*at = i;
		return 1;
	}
	return 0;
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
static __always_inline int sc_forward6(struct xdp_md *ctx, __u8 n, __u8 from,
				       __u32 *ctr)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ipv6hdr *ip6 = data + ETH_HLEN;
	struct udphdr *udp = (void *)(ip6 + 1);
	struct mlv_sc_hdr *sc = data + MLV_SC_OFF6;
	struct in6_addr *slots = (struct in6_addr *)(sc + 1);
	struct bpf_fib_lookup fib = {};
	struct in6_addr hop;
	__u8 at = 0;
	long rc;

	if ((void *)(slots + MLV_SC_MAX_HOPS) > end)
		return -1;              /* the plan checked it: not reached */
	if (!sc_pick6(slots, n, from, &hop, &at)) {
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
	sc_mark(sc, udp, at);
	if (rc == BPF_FIB_LKUP_RET_NO_NEIGH)
		return XDP_PASS;
	return sc_send(ctx, data, &fib);
}

/* decap_sc_cfg's flags (0 when unset). */
static __always_inline __u32 sc_cfg_flags(void)
{
	__u32 zero = 0;
	const struct mlv_decap_sc_cfg *cfg =
		bpf_map_lookup_elem(&decap_sc_cfg, &zero);

	return cfg ? cfg->flags : 0;
}

/* Is the inner packet (inner_proto at c->pos, inner_off bytes into the
 * frame) held here? Returns 1 if so or if it is nothing to hand on; 0
 * if it goes on, with *why the counter that says why beside redirected
 * (MLV_SC_CTR_NONE: a segment of a connection held elsewhere). */
static __always_inline int sc_held_here(struct xdp_md *ctx,
					const struct mlv_cursor *c,
					__u8 inner_proto, __u32 inner_off,
					__u32 flags, __u32 *why)
{
	struct sc_flow f = {};
	enum sc_socket sk;
	int tcp;

	if (inner_proto == MLV_PROTO_IPIP)
		tcp = sc_flow4(c->pos, c->end, inner_off, &f);
	else
		tcp = sc_flow6(c->pos, c->end, inner_off, &f);
	if (!tcp) {
		if (inner_proto == MLV_PROTO_IPIP ?
		    !sc_icmp4(c->pos, c->end, &f) :
		    !sc_icmp6(c->pos, c->end, &f))
			return 1;
		*why = MLV_DECAP_CTR_SC_ICMP;
		return sc_socket_of(ctx, &f, 0) == SC_SOCK_CONN;
	}
	if (f.syn && !f.ack) {
		/* a new connection: where a listener takes it, unless this
		 * host drains */
		sk = sc_socket_of(ctx, &f, 0);
		if (sk == SC_SOCK_CONN ||
		    (sk == SC_SOCK_LISTENER && !(flags & MLV_DECAP_SC_DRAIN)))
			return 1;
		*why = sk == SC_SOCK_NONE ? MLV_DECAP_CTR_SC_NO_LISTENER :
					    MLV_DECAP_CTR_SC_DRAINED;
		return 0;
	}
	sk = sc_socket_of(ctx, &f, 1);
	return sk == SC_SOCK_CONN || sk == SC_SOCK_LISTENER_COOKIE;
}

/* A frame with a valid block (*hdr its fixed part), outer family
 * MLV_BPF_FAMILY_V4/_V6, passed every decapsulation check; its inner
 * packet (inner_proto) starts at c->pos, inner_off bytes into the frame.
 * Returns the XDP action of a frame sent on (rewritten), with *ctr the
 * counter to count beside redirected or MLV_SC_CTR_NONE; or -1:
 * decapsulate it, and count *ctr alongside unless MLV_SC_CTR_NONE. */
static __always_inline int mlv_sc_redirect(struct xdp_md *ctx,
					   const struct mlv_cursor *c,
					   __u8 inner_proto, __u32 inner_off,
					   __u8 family,
					   const struct mlv_sc_hdr *hdr,
					   __u32 *ctr)
{
	__u32 flags = sc_cfg_flags(), why = MLV_SC_CTR_NONE;
	int redirected = hdr->flags & MLV_SC_F_REDIRECTED;
	/* the first index to try: after the hop this packet was sent to */
	__u8 from = redirected ? ((hdr->flags & MLV_SC_F_AT_MASK) >>
				  MLV_SC_F_AT_SHIFT) + 1 : 0;
	int action;

	*ctr = redirected ? MLV_DECAP_CTR_SC_ARRIVED : MLV_SC_CTR_NONE;
	if (flags & MLV_DECAP_SC_OFF) {
		*ctr = MLV_DECAP_CTR_SC_OFF;
		return -1;
	}
	if (sc_held_here(ctx, c, inner_proto, inner_off, flags, &why))
		return -1;
	if (hdr->hops <= from) {
		*ctr = redirected ? MLV_DECAP_CTR_SC_EXHAUSTED :
				    MLV_DECAP_CTR_SC_NO_HOP;
		return -1;
	}
	if (family == MLV_BPF_FAMILY_V4)
		action = sc_forward4(ctx, hdr->hops, from, ctr);
	else
		action = sc_forward6(ctx, hdr->hops, from, ctr);
	if (action >= 0)
		*ctr = why;
	return action;
}

#endif
