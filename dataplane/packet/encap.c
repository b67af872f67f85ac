/* SPDX-License-Identifier: BSD-3-Clause */
/* Outer headers, ICMP too-big replies and echo replies (see encap.h;
 * the byte layouts, and the reasons for each constant, are in
 * docs/forwarding.md).
 *
 * Why not rte_ipv4_cksum()/rte_ipv6_udptcp_cksum(): this file has no DPDK
 * types so that tools, tests and the fuzzer share it, and the per-packet
 * IPv4 checksum here is incremental from a template constant, which is
 * cheaper than any full-header routine.
 */
#include "dataplane/packet/encap.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

enum {
	ETH_HLEN = 14,
	ETH_ALEN = 6,
	ETHERTYPE_IPV4 = 0x0800,
	ETHERTYPE_IPV6 = 0x86DD,
	IPV4_HLEN = 20,
	IPV6_HLEN = 40,
	UDP_HLEN = 8,
	GUE_HLEN = 4,
	ICMP_HLEN = 8,
	PROTO_IPIP = 4,        /* IPv4 payload */
	PROTO_UDP = 17,
	PROTO_IPV6 = 41,       /* IPv6 payload */
	PROTO_ICMP = 1,
	PROTO_ICMPV6 = 58,
	IPV4_DF = 0x4000,
	IPV6_FLOW_LABEL_MASK = 0xFFFFF,
	/* ICMP errors: the reply's IP packet stays within the minimum MTU
	 * every host must accept (RFC 1122 3.2.2 / RFC 4443 2.4(c)). */
	ICMP4_REPLY_MAX = 576,
	ICMP6_REPLY_MAX = 1280,
	ICMP4_DEST_UNREACH = 3,
	ICMP4_FRAG_NEEDED = 4,
	ICMP6_PKT_TOO_BIG = 2,
	/* DSCP CS6 (network control), ECN not-ECT: the class Linux gives
	 * ICMPv4 errors, used for both families. */
	ICMP_REPLY_TOS = 0xC0,
	ICMP_REPLY_TTL = 64,
};

/* Template offsets (Ethernet header first). */
enum {
	OFF_IP = ETH_HLEN,
	OFF_UDP6 = ETH_HLEN + IPV6_HLEN,
};

_Static_assert(ETH_HLEN + IPV6_HLEN + UDP_HLEN + GUE_HLEN + MLV_SC_LEN6 ==
		       MLV_ENCAP_MAX_HDR,
	       "largest template is Ethernet + IPv6 + UDP + GUE + hops");
_Static_assert(offsetof(struct mlv_encap_tmpl, hdr) + ETH_HLEN + IPV4_HLEN +
		       UDP_HLEN + GUE_HLEN <= 64,
	       "the inline layouts' bytes share the template's cache line");
_Static_assert((int)MLV_ENCAP__OFF_IP4 == (int)ETH_HLEN &&
		       (int)MLV_ENCAP__OFF_UDP4 == (int)(ETH_HLEN + IPV4_HLEN),
	       "the inline layouts of encap.h match these offsets");

static inline void wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* One's-complement sum of p[0..n) as big-endian 16-bit words (an odd last
 * byte is the high byte of a word), folded to 16 bits, not inverted.
 * Adds native 32-bit words into 64-bit accumulators (no carry to track
 * below 2^32 words) and swaps at the end: RFC 1071 2(B), the sum is
 * byte-order independent. */
static uint16_t sum16(const uint8_t *p, uint32_t n)
{
	uint64_t a = 0, b = 0;

	for (; n >= 16; p += 16, n -= 16) {
		uint32_t w[4];
		memcpy(w, p, 16);
		a += (uint64_t)w[0] + w[2];
		b += (uint64_t)w[1] + w[3];
	}
	uint8_t tail[16] = { 0 };
	memcpy(tail, p, n);
	uint32_t w[4];
	memcpy(w, tail, 16);
	a += (uint64_t)w[0] + w[2] + b + w[1] + w[3];

	a = (a & 0xffffffff) + (a >> 32);
	a = (a & 0xffffffff) + (a >> 32);
	uint16_t native = mlv_encap__fold32((uint32_t)(a & 0xffff) + (uint32_t)(a >> 16));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (uint16_t)(native << 8 | native >> 8);
#else
	return native;
#endif
}

static uint32_t sum_words(const uint8_t *p, uint32_t n_words)
{
	uint32_t s = 0;
	for (uint32_t i = 0; i < n_words; i++)
		s += (uint32_t)p[2 * i] << 8 | p[2 * i + 1];
	return s;
}

static void put_eth(uint8_t *h, const uint8_t dst[6], const uint8_t src[6],
		    uint16_t type)
{
	memcpy(h, dst, ETH_ALEN);
	memcpy(h + ETH_ALEN, src, ETH_ALEN);
	mlv_encap__put16(h + 2 * ETH_ALEN, type);
}

/* IPv4 outer header without TOS, total length and checksum; returns the
 * sum of its constant words for the per-packet incremental checksum. */
static uint32_t put_ipv4(uint8_t *ip, uint8_t proto, const uint8_t src[4],
			 const uint8_t dst[4])
{
	ip[0] = 0x45;
	/* Identification 0 with DF set: RFC 6864 4.1, the ID of an atomic
	 * datagram carries no meaning, so no per-packet counter is kept. */
	mlv_encap__put16(ip + 6, IPV4_DF);
	ip[8] = MLV_OUTER_TTL;
	ip[9] = proto;
	memcpy(ip + 12, src, 4);
	memcpy(ip + 16, dst, 4);
	return sum_words(ip, IPV4_HLEN / 2);
}

static void put_ipv6(uint8_t *ip, uint8_t next_header, const uint8_t src[16],
		     const uint8_t dst[16])
{
	ip[0] = 0x60;
	ip[6] = next_header;
	ip[7] = MLV_OUTER_TTL;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
}

int mlv_encap_tmpl_init(struct mlv_encap_tmpl *t,
			const struct mlv_encap_params *p)
{
	memset(t, 0, sizeof(*t));
	if (p->inner_family != 4 && p->inner_family != 6)
		return -1;
	uint16_t inner_type = p->inner_family == 4 ? ETHERTYPE_IPV4 : ETHERTYPE_IPV6;
	uint8_t inner_proto = p->inner_family == 4 ? PROTO_IPIP : PROTO_IPV6;

	t->method = (uint8_t)p->method;
	t->inner_family = p->inner_family;

	if (p->method == MLV_ENCAP_L2DSR) {
		put_eth(t->hdr, p->dst_mac, p->src_mac, inner_type);
		t->len = ETH_HLEN;
		t->layout = MLV_ENCAP_LAYOUT_L2DSR;
		return 0;
	}
	if (p->method != MLV_ENCAP_IPIP && p->method != MLV_ENCAP_GUE)
		return -1;
	if (p->outer_family != 4 && p->outer_family != 6)
		return -1;
	/* 6in4 is not offered: the config refuses IPv6 VIPs with IPv4
	 * backends over ipip, and Linux would need a sit device for it. */
	if (p->method == MLV_ENCAP_IPIP && p->outer_family == 4 &&
	    p->inner_family == 6)
		return -1;

	bool gue = p->method == MLV_ENCAP_GUE;
	uint8_t *ip = t->hdr + OFF_IP;
	t->outer_family = p->outer_family;

	if (p->outer_family == 4) {
		put_eth(t->hdr, p->dst_mac, p->src_mac, ETHERTYPE_IPV4);
		t->csum_partial = put_ipv4(ip, gue ? PROTO_UDP : inner_proto,
					   p->outer_src, p->outer_dst);
		t->len = ETH_HLEN + IPV4_HLEN;
	} else {
		put_eth(t->hdr, p->dst_mac, p->src_mac, ETHERTYPE_IPV6);
		put_ipv6(ip, gue ? PROTO_UDP : inner_proto, p->outer_src,
			 p->outer_dst);
		t->len = ETH_HLEN + IPV6_HLEN;
	}
	if (!gue) {
		uint32_t bits = p->outer_family == 4 ? 32 : 128;
		uint32_t most = p->outer_family == 4 ? 16 : 32;   /* host bits */
		uint32_t host, mask;

		if (p->outer_family == 4)
			t->layout = MLV_ENCAP_LAYOUT_IPIP4;
		if (p->outer_src_len == 0 || p->outer_src_len >= bits)
			return 0;
		host = bits - p->outer_src_len;
		mask = (uint32_t)(((uint64_t)1 << host) - 1);
		if (host > most ||
		    ((uint32_t)p->outer_src[bits / 8 - 4] << 24 |
		     (uint32_t)p->outer_src[bits / 8 - 3] << 16 |
		     (uint32_t)p->outer_src[bits / 8 - 2] << 8 |
		     p->outer_src[bits / 8 - 1]) & mask)
			return -1;   /* too short, or host bits set */
		t->src_mask = mask;
		if (p->outer_family == 4)
			t->layout = MLV_ENCAP_LAYOUT_IPIP4_SRC;
		return 0;
	}

	uint8_t *udp = t->hdr + t->len;
	uint8_t *guehdr = udp + UDP_HLEN;
	uint32_t sc_len = !p->second_chance ? 0 :
			  p->outer_family == 4 ? MLV_SC_LEN4 : MLV_SC_LEN6;
	mlv_encap__put16(udp + 2, p->gue_port);
	/* GUE variant 0: version 0, C 0, Hlen the private data's words,
	 * then the inner protocol, no flags: every extension word is
	 * private data (docs/forwarding.md). */
	guehdr[0] = (uint8_t)(sc_len / 4);
	guehdr[1] = inner_proto;
	t->len = (uint8_t)(t->len + UDP_HLEN + GUE_HLEN + sc_len);
	if (sc_len) {
		struct mlv_sc_hdr *sc = (void *)(guehdr + GUE_HLEN);

		sc->kind = MLV_SC_KIND;
		sc->version = MLV_SC_VERSION;
		sc->flags = p->outer_family == 6 ? MLV_SC_F_IPV6 : 0;
		t->sc_off = (uint8_t)(guehdr + GUE_HLEN - t->hdr);
	} else if (p->outer_family == 4) {
		t->layout = MLV_ENCAP_LAYOUT_GUE4;
	}
	if (p->outer_family == 6) {
		/* The UDP checksum's constant part: pseudo-header addresses
		 * and next header, the destination port and the GUE header.
		 * Length, source port, the hop block and the payload are
		 * added per packet. */
		t->csum_partial = sum_words(ip + 8, 32 / 2) + PROTO_UDP +
				  p->gue_port + sum_words(guehdr, GUE_HLEN / 2);
	}
	return 0;
}

uint16_t mlv_encap_overhead(enum mlv_encap_method method, uint8_t outer_family,
			    bool second_chance)
{
	uint16_t ip = outer_family == 6 ? IPV6_HLEN : IPV4_HLEN;

	switch (method) {
	case MLV_ENCAP_IPIP:
		return ip;
	case MLV_ENCAP_GUE:
		return (uint16_t)(ip + UDP_HLEN + GUE_HLEN +
				  (!second_chance ? 0 :
				   outer_family == 6 ? MLV_SC_LEN6 : MLV_SC_LEN4));
	case MLV_ENCAP_L2DSR:
	default:
		return 0;
	}
}

/* Copy an outer-IPv6 template (54 or 66 bytes) with 16-byte moves, the
 * last one overlapping: a libc memcpy call of variable length costs more
 * than the rest of the work. Never writes past out + len, where the inner
 * packet starts. A failed template (len 0) copies nothing. */
static inline void copy_hdr(uint8_t *out, const uint8_t *src, uint32_t len)
{
	if (len < 16) {
		memcpy(out, src, len);
		return;
	}
	for (uint32_t i = 0; i + 16 <= len; i += 16)
		memcpy(out + i, src + i, 16);
	memcpy(out + len - 16, src + len - 16, 16);
}

void mlv_encap_apply_sc(uint8_t *out, const struct mlv_encap_tmpl *t,
			uint16_t inner_l3_len, uint8_t inner_tos,
			uint32_t flow_hash, const uint8_t *const *hops,
			uint32_t n_hops)
{
	uint32_t alen = t->outer_family == 6 ? 16 : 4;
	uint32_t sc_len = MLV_SC_HDR_LEN + MLV_SC_MAX_HOPS * alen;
	uint32_t udp_len = UDP_HLEN + GUE_HLEN + sc_len + (uint32_t)inner_l3_len;
	uint32_t sport = MLV_ENCAP__GUE_SPORT_BASE +
			 (flow_hash & MLV_ENCAP__GUE_SPORT_MASK);
	uint8_t *sc = out + t->sc_off;
	uint8_t *ip = out + OFF_IP;
	uint8_t *udp;

	copy_hdr(out, t->hdr, t->len);
	if (n_hops > MLV_SC_MAX_HOPS)
		n_hops = MLV_SC_MAX_HOPS;
	for (uint32_t k = 0; k < n_hops; k++)
		memcpy(sc + MLV_SC_HDR_LEN + k * alen, hops[k], alen);
	sc[3] = (uint8_t)n_hops;
	if (t->outer_family == 4) {
		udp = out + MLV_ENCAP__OFF_UDP4;
		mlv_encap__ipv4_fill(ip, t->csum_partial, IPV4_HLEN + udp_len,
				     inner_tos);
		mlv_encap__put16(udp, sport);
		mlv_encap__put16(udp + 4, udp_len);
		return;   /* UDP checksum 0: see mlv_encap__apply_other */
	}
	udp = out + OFF_UDP6;
	wr32(ip, 0x60000000u | (uint32_t)inner_tos << 20 |
		 (flow_hash & IPV6_FLOW_LABEL_MASK));
	mlv_encap__put16(ip + 4, udp_len);
	mlv_encap__put16(udp, sport);
	mlv_encap__put16(udp + 4, udp_len);
	uint32_t sum = t->csum_partial + 2 * udp_len + sport + sum16(sc, sc_len) +
		       sum16(out + t->len, inner_l3_len);
	uint16_t c = (uint16_t)~mlv_encap__fold32(sum);
	mlv_encap__put16(udp + 6, c ? c : 0xFFFF);
}

void mlv_encap__apply_other(uint8_t *out, const struct mlv_encap_tmpl *t,
			    uint16_t inner_l3_len, uint8_t inner_tos,
			    uint32_t flow_hash)
{
	if (t->sc_off) {
		/* a second-chance template written without its hops */
		mlv_encap_apply_sc(out, t, inner_l3_len, inner_tos, flow_hash,
				   NULL, 0);
		return;
	}
	copy_hdr(out, t->hdr, t->len);
	if (t->outer_family != 6)
		return;   /* a failed template: nothing to fill */

	uint8_t *ip = out + OFF_IP;
	bool gue = t->method == MLV_ENCAP_GUE;
	uint32_t udp_len = UDP_HLEN + GUE_HLEN + (uint32_t)inner_l3_len;
	uint32_t sport = MLV_ENCAP__GUE_SPORT_BASE +
			 (flow_hash & MLV_ENCAP__GUE_SPORT_MASK);

	/* Flow label from the flow hash (RFC 6437 3): stable per flow, so
	 * ECMP on the way to the backend keeps a flow on one path. */
	wr32(ip, 0x60000000u | (uint32_t)inner_tos << 20 |
		 (flow_hash & IPV6_FLOW_LABEL_MASK));
	if (t->src_mask) {
		/* a source prefix: its host bits (zero in the template) from
		 * the flow hash, for the backends' NICs that hash outer
		 * addresses only */
		uint8_t *last = ip + 8 + 12;

		wr32(last, ((uint32_t)last[0] << 24 | (uint32_t)last[1] << 16 |
			    (uint32_t)last[2] << 8 | last[3]) |
			   (flow_hash & t->src_mask));
	}
	mlv_encap__put16(ip + 4, gue ? udp_len : inner_l3_len);
	if (gue) {
		uint8_t *udp = out + OFF_UDP6;
		mlv_encap__put16(udp, sport);
		mlv_encap__put16(udp + 4, udp_len);
		/* Mandatory for UDP over IPv6 (RFC 8200 8.1). The length is
		 * in the pseudo-header and in the UDP header: counted twice.
		 * Over IPv4 it stays 0 (RFC 768: none computed): the inner
		 * packet carries its own, and summing every payload byte
		 * would cost more than the rest of the forwarding path.
		 * Linux fou accepts it. */
		uint32_t s = t->csum_partial + 2 * udp_len + sport +
			     sum16(out + t->len, inner_l3_len);
		uint16_t c = (uint16_t)~mlv_encap__fold32(s);
		mlv_encap__put16(udp + 6, c ? c : 0xFFFF);  /* 0 would mean "none" */
	}
}

/* The one's-complement sum of an ICMPv6 message of len bytes at icmp
 * with its pseudo-header (RFC 4443 2.3: source, destination, length,
 * next header 58), not folded: what its checksum field covers. */
static uint32_t icmp6_sum(const uint8_t *src, const uint8_t *dst,
			  const uint8_t *icmp, uint32_t len)
{
	return (uint32_t)sum16(src, 16) + sum16(dst, 16) + len + PROTO_ICMPV6 +
	       sum16(icmp, len);
}

/* A reply's Ethernet header: the request's with the MACs swapped, any
 * VLAN tag kept (the reply belongs on the client's VLAN). */
static void back_the_way_it_came(uint8_t *buf)
{
	uint8_t mac[ETH_ALEN];

	memcpy(mac, buf, ETH_ALEN);
	memcpy(buf, buf + ETH_ALEN, ETH_ALEN);
	memcpy(buf + ETH_ALEN, mac, ETH_ALEN);
}

/* RFC 1122 3.2.2 / RFC 4443 2.4(e): no ICMP error to a source that does
 * not name one host. */
static bool unicast_source(const struct mlv_pkt *pkt)
{
	const uint8_t *s = pkt->key.src;

	if (pkt->key.family == 4) {
		/* 0/8 this-network, 127/8 loopback, 224/4 multicast, 240/4
		 * reserved and the limited broadcast. */
		return s[0] != 0 && s[0] != 127 && s[0] < 224;
	}
	static const uint8_t zero[15];
	if (s[0] == 0xff)
		return false;                          /* multicast */
	return memcmp(s, zero, 15) != 0 || s[15] > 1;  /* :: and ::1 */
}

uint32_t mlv_icmp_too_big(uint8_t *buf, uint32_t len, uint32_t cap,
			  const struct mlv_pkt *pkt, uint16_t mtu)
{
	uint32_t l3 = pkt->l3_off;
	uint32_t l3_len = pkt->l3_len;
	bool v4 = pkt->key.family == 4;

	if ((!v4 && pkt->key.family != 6) || l3 < ETH_HLEN ||
	    l3 + l3_len > len || len > cap)
		return 0;
	/* Never an error about an error (RFC 1122 3.2.2, RFC 4443 2.4(e)). */
	if (pkt->flags & MLV_PKT_F_ICMP_ERROR)
		return 0;
	/* RFC 1122 3.2.2: none for an IPv4 fragment other than the first. */
	if (v4 && (pkt->flags & (MLV_PKT_F_FRAGMENT | MLV_PKT_F_FRAG_FIRST)) ==
		  MLV_PKT_F_FRAGMENT)
		return 0;
	if (!unicast_source(pkt))
		return 0;

	uint32_t ip_hlen = v4 ? IPV4_HLEN : IPV6_HLEN;
	uint32_t room = (v4 ? ICMP4_REPLY_MAX : ICMP6_REPLY_MAX) - ip_hlen - ICMP_HLEN;
	uint32_t quote = l3_len < room ? l3_len : room;
	uint32_t total = l3 + ip_hlen + ICMP_HLEN + quote;
	if (total > cap || l3_len < ip_hlen)
		return 0;

	uint8_t *ip = buf + l3;
	uint8_t *icmp = ip + ip_hlen;
	uint8_t client[16], vip[16], id[2];
	uint32_t alen = v4 ? 4 : 16;
	memcpy(client, ip + (v4 ? 12 : 8), alen);
	memcpy(vip, ip + (v4 ? 16 : 24), alen);
	memcpy(id, ip + 4, 2);

	memmove(icmp + ICMP_HLEN, ip, quote);
	memset(ip, 0, ip_hlen + ICMP_HLEN);

	uint32_t icmp_len = ICMP_HLEN + quote;
	if (v4) {
		ip[0] = 0x45;
		ip[1] = ICMP_REPLY_TOS;
		mlv_encap__put16(ip + 2, IPV4_HLEN + icmp_len);
		/* DF clear, so a link below 576 bytes may still fragment
		 * it; the quoted packet's ID keeps replies distinct. */
		memcpy(ip + 4, id, 2);
		ip[8] = ICMP_REPLY_TTL;
		ip[9] = PROTO_ICMP;
		memcpy(ip + 12, vip, 4);
		memcpy(ip + 16, client, 4);
		mlv_encap__put16(ip + 10, (uint16_t)~sum16(ip, IPV4_HLEN));

		icmp[0] = ICMP4_DEST_UNREACH;
		icmp[1] = ICMP4_FRAG_NEEDED;
		mlv_encap__put16(icmp + 6, mtu);   /* RFC 1191 next-hop MTU */
		mlv_encap__put16(icmp + 2, (uint16_t)~sum16(icmp, icmp_len));
	} else {
		wr32(ip, 0x60000000u | (uint32_t)ICMP_REPLY_TOS << 20);
		mlv_encap__put16(ip + 4, icmp_len);
		ip[6] = PROTO_ICMPV6;
		ip[7] = ICMP_REPLY_TTL;
		memcpy(ip + 8, vip, 16);
		memcpy(ip + 24, client, 16);

		icmp[0] = ICMP6_PKT_TOO_BIG;
		wr32(icmp + 4, mtu);
		mlv_encap__put16(icmp + 2, (uint16_t)~mlv_encap__fold32(
				 icmp6_sum(ip + 8, ip + 24, icmp, icmp_len)));
	}

	back_the_way_it_came(buf);
	return total;
}

uint32_t mlv_icmp_echo_reply(uint8_t *buf, uint32_t len,
			     const struct mlv_pkt *pkt)
{
	uint32_t l3 = pkt->l3_off, l4 = pkt->l4_off;
	bool v4 = pkt->key.family == 4;
	uint32_t ip_hlen = v4 ? IPV4_HLEN : IPV6_HLEN;

	if (!(pkt->flags & MLV_PKT_F_ICMP_ECHO) ||
	    (pkt->flags & MLV_PKT_F_FRAGMENT) || (!v4 && pkt->key.family != 6) ||
	    l3 < ETH_HLEN || l4 < l3 + ip_hlen || l3 + pkt->l3_len > len ||
	    l4 + ICMP_HLEN > l3 + pkt->l3_len)
		return 0;
	if (!unicast_source(pkt))
		return 0;

	uint8_t *ip = buf + l3;
	uint8_t *icmp = buf + l4;
	uint32_t icmp_len = l3 + pkt->l3_len - l4;
	uint32_t s;

	/* A request with a bad checksum is not answered (RFC 792, RFC 4443
	 * 2.4: the kernel drops it too). The sum covers the pseudo-header
	 * of the final destination, which is the VIP: key.dst. */
	if (v4) {
		s = sum16(icmp, icmp_len);
	} else {
		s = icmp6_sum(pkt->key.src, pkt->key.dst, icmp, icmp_len);
	}
	if (mlv_encap__fold32(s) != 0xFFFF)
		return 0;

	/* The reply carries a bare IP header: IPv4 options and IPv6
	 * extension headers of the request (a routing header, say) are
	 * not echoed back. */
	if (l4 != l3 + ip_hlen) {
		memmove(ip + ip_hlen, icmp, icmp_len);
		icmp = ip + ip_hlen;
	}
	if (v4) {
		ip[0] = 0x45;
		/* TOS and ID as the request's (Linux keeps the TOS); DF kept,
		 * no fragment offset (the request was not a fragment). */
		mlv_encap__put16(ip + 2, IPV4_HLEN + icmp_len);
		ip[6] &= 0x40;
		ip[7] = 0;
		ip[8] = ICMP_REPLY_TTL;
		ip[9] = PROTO_ICMP;
		memcpy(ip + 12, pkt->key.dst, 4);
		memcpy(ip + 16, pkt->key.src, 4);
		ip[10] = ip[11] = 0;
		mlv_encap__put16(ip + 10, (uint16_t)~sum16(ip, IPV4_HLEN));
		icmp[0] = 0;   /* echo reply */
		icmp[2] = icmp[3] = 0;
		mlv_encap__put16(icmp + 2, (uint16_t)~sum16(icmp, icmp_len));
	} else {
		/* traffic class kept, flow label cleared */
		wr32(ip, 0x60000000u | (uint32_t)pkt->tos << 20);
		mlv_encap__put16(ip + 4, icmp_len);
		ip[6] = PROTO_ICMPV6;
		ip[7] = ICMP_REPLY_TTL;
		memcpy(ip + 8, pkt->key.dst, 16);
		memcpy(ip + 24, pkt->key.src, 16);
		icmp[0] = 129;   /* echo reply */
		icmp[2] = icmp[3] = 0;
		s = icmp6_sum(ip + 8, ip + 24, icmp, icmp_len);
		mlv_encap__put16(icmp + 2, (uint16_t)~mlv_encap__fold32(s));
	}

	back_the_way_it_came(buf);
	return l3 + ip_hlen + icmp_len;
}
