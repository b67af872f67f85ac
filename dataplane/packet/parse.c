/* SPDX-License-Identifier: BSD-3-Clause */
/* The packet parser (see parse.h).
 *
 * Why hand-written rather than rte_net_get_ptype(): this code must run
 * without DPDK (tools, unit tests, the fuzzer), must classify every
 * malformation under a counter of its own, and must build the flow key of
 * an ICMP error from the packet it quotes, none of which DPDK offers.
 *
 * Bounds discipline: every offset is a uint32_t that is only ever advanced
 * after checking `end - off >= need`, where end is the end of the IP
 * packet as its header states and was itself checked against the frame
 * length. No subtraction can wrap because off <= end holds throughout.
 *
 * The fast path (untagged IPv4, IHL 5, not a fragment, TCP or UDP) runs
 * straight through mlv_parse -> parse_ipv4 -> parse_l4 with every error
 * test marked unlikely. The data plane parses that case inline with
 * mlv_parse_fast (parse.h), which repeats its checks: a change to
 * them here must be made there too (the parser tests compare the two on
 * every frame they build).
 */
#include "dataplane/packet/parse.h"

#include <ctype.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

enum {
	ETH_HLEN = 14,
	VLAN_HLEN = 4,
	ETHERTYPE_IPV4 = 0x0800,
	ETHERTYPE_IPV6 = 0x86DD,
	ETHERTYPE_VLAN = 0x8100,
	IPV4_MIN_HLEN = 20,
	IPV6_HLEN = 40,
	TCP_MIN_HLEN = 20,
	UDP_HLEN = 8,
	ICMP_HLEN = 8,          /* type, code, checksum, 4 bytes rest-of-header */
	L4_PORTS_LEN = 8,       /* what an ICMP error must quote past the IP header */
	PROTO_HOPOPTS = 0,
	PROTO_ICMP = 1,
	PROTO_TCP = 6,
	PROTO_UDP = 17,
	PROTO_ROUTING = 43,
	PROTO_FRAGMENT = 44,
	PROTO_ICMPV6 = 58,
	PROTO_DSTOPTS = 60,
	ICMP_DEST_UNREACH = 3,
	ICMP_FRAG_NEEDED = 4,   /* code of ICMP_DEST_UNREACH */
	ICMP_ECHO = 8,
	ICMPV6_PKT_TOO_BIG = 2,
	ICMPV6_ECHO_REQUEST = 128,
	IPV4_DF = 0x4000,
	IPV4_MF_OFFSET = 0x3fff,   /* MF flag + fragment offset */
	IPV4_OFFSET = 0x1fff,
	IPV6_FRAG_OFFSET = 0xfff8, /* in the fragment header's second word */
	IPV6_FRAG_OFFSET_M = 0xfff9,
	/* l3_len is a uint16_t: an IPv6 payload whose IP packet would not fit
	 * it (payload length > 65495) is refused. Such packets only exist
	 * with LRO/GRO, which the data plane leaves off. */
	IPV6_MAX_PAYLOAD = 0xffff - IPV6_HLEN,
};

/* At most this many IPv6 extension headers are walked (RFC 8504 lets a
 * node bound the chain it processes; real traffic has zero to two), so a
 * crafted chain of tiny headers cannot make one packet expensive. */
#define MLV_IPV6_MAX_EXT_HDRS 8

_Static_assert(__builtin_offsetof(struct mlv_flow_key, dport) ==
	       __builtin_offsetof(struct mlv_flow_key, sport) + 2,
	       "ports are copied together from the L4 header");

static inline uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline bool is_tcp_or_udp(uint8_t proto)
{
	return proto == PROTO_TCP || proto == PROTO_UDP;
}

/* ICMP / ICMPv6 message at l4 of an IP packet ending at end. */
static enum mlv_parse_verdict parse_icmp(const uint8_t *f, uint32_t l4,
					 uint32_t end, struct mlv_pkt *o);

/* TCP/UDP header at l4, IP packet ends at end (l4 <= end). */
static inline enum mlv_parse_verdict parse_l4(const uint8_t *f, uint32_t l4,
					      uint32_t end, uint8_t proto,
					      struct mlv_pkt *o)
{
	const uint8_t *h = f + l4;
	uint32_t room = end - l4;

	if (likely(proto == PROTO_TCP)) {
		if (unlikely(room < TCP_MIN_HLEN))
			return MLV_PARSE_BAD_L4;
		uint32_t doff = (uint32_t)(h[12] >> 4) * 4;
		if (unlikely(doff < TCP_MIN_HLEN || doff > room))
			return MLV_PARSE_BAD_L4;
		memcpy(&o->key.sport, h, 4);
		o->tcp_flags = h[13];
		return MLV_PARSE_OK;
	}
	if (likely(proto == PROTO_UDP)) {
		if (unlikely(room < UDP_HLEN))
			return MLV_PARSE_BAD_L4;
		uint32_t ulen = rd16(h + 4);
		/* Shorter than the IP payload is legal (the rest is padding);
		 * zero (IPv6 jumbograms) is not supported. */
		if (unlikely(ulen < UDP_HLEN || ulen > room))
			return MLV_PARSE_BAD_L4;
		memcpy(&o->key.sport, h, 4);
		return MLV_PARSE_OK;
	}
	if (proto == PROTO_ICMP || proto == PROTO_ICMPV6)
		return parse_icmp(f, l4, end, o);
	return MLV_PARSE_UNSUPPORTED;
}

/* State of an IPv6 extension-header walk. */
struct v6_walk {
	uint32_t off;      /* offset of the header of type nh */
	uint8_t nh;        /* type of the header at off */
	bool has_frag;     /* a fragment header was passed */
	uint16_t frag;     /* its offset/M word */
};

/* Skip hop-by-hop, routing and destination-options headers and atomic
 * fragment headers (RFC 6946: offset 0, M clear, a whole datagram) until
 * an upper-layer header, or until the fragment header of a real fragment,
 * whose next-header value becomes w->nh: what follows it in later
 * fragments is payload, so every fragment is classified by that value.
 * Returns OK or `bad`. */
static enum mlv_parse_verdict v6_skip_ext(const uint8_t *f, uint32_t end,
					  struct v6_walk *w,
					  enum mlv_parse_verdict bad)
{
	for (unsigned i = 0;; i++) {
		uint32_t hlen;

		switch (w->nh) {
		case PROTO_HOPOPTS:
			/* RFC 8200 4.1: only directly after the IPv6 header. */
			if (i != 0)
				return bad;
			/* fall through */
		case PROTO_ROUTING:
		case PROTO_DSTOPTS:
			if (i >= MLV_IPV6_MAX_EXT_HDRS || end - w->off < 8)
				return bad;
			hlen = ((uint32_t)f[w->off + 1] + 1) * 8;
			if (hlen > end - w->off)
				return bad;
			w->nh = f[w->off];
			w->off += hlen;
			break;
		case PROTO_FRAGMENT:
			if (i >= MLV_IPV6_MAX_EXT_HDRS || w->has_frag ||
			    end - w->off < 8)
				return bad;
			w->has_frag = true;
			w->frag = rd16(f + w->off + 2);
			w->nh = f[w->off];
			w->off += 8;
			if (w->frag & IPV6_FRAG_OFFSET_M)
				return MLV_PARSE_OK;
			break;
		default:
			return MLV_PARSE_OK;
		}
	}
}

/* The IPv4 packet quoted by an ICMP "fragmentation needed" at off: what a
 * VIP sent to a client. The key becomes that flow reversed, as the
 * client's own packets carry it. */
static enum mlv_parse_verdict parse_quoted_ipv4(const uint8_t *f, uint32_t off,
						uint32_t end, struct mlv_pkt *o)
{
	const uint8_t *ip = f + off;

	if (end - off < IPV4_MIN_HLEN || ip[0] >> 4 != 4)
		return MLV_PARSE_BAD_L4;
	uint32_t hl = (uint32_t)(ip[0] & 0x0f) * 4;
	/* The quoted total length is not checked: the quote is truncated. */
	if (hl < IPV4_MIN_HLEN || end - off < hl + L4_PORTS_LEN)
		return MLV_PARSE_BAD_L4;
	/* A non-first fragment quotes no ports to build a key from. */
	if (!is_tcp_or_udp(ip[9]) || (rd16(ip + 6) & IPV4_OFFSET))
		return MLV_PARSE_UNSUPPORTED;
	const uint8_t *l4 = ip + hl;
	memcpy(o->key.src, ip + 16, 4);
	memcpy(o->key.dst, ip + 12, 4);
	memcpy(&o->key.sport, l4 + 2, 2);
	memcpy(&o->key.dport, l4, 2);
	o->key.proto = ip[9];
	o->flags |= MLV_PKT_F_ICMP_ERROR;
	return MLV_PARSE_OK;
}

/* The IPv6 packet quoted by an ICMPv6 "packet too big" at off. */
static enum mlv_parse_verdict parse_quoted_ipv6(const uint8_t *f, uint32_t off,
						uint32_t end, struct mlv_pkt *o)
{
	const uint8_t *ip = f + off;

	if (end - off < IPV6_HLEN || ip[0] >> 4 != 6)
		return MLV_PARSE_BAD_L4;
	struct v6_walk w = { .off = off + IPV6_HLEN, .nh = ip[6] };
	enum mlv_parse_verdict v = v6_skip_ext(f, end, &w, MLV_PARSE_BAD_L4);
	if (v != MLV_PARSE_OK)
		return v;
	if (!is_tcp_or_udp(w.nh) ||
	    (w.has_frag && (w.frag & IPV6_FRAG_OFFSET)))
		return MLV_PARSE_UNSUPPORTED;
	if (end - w.off < L4_PORTS_LEN)
		return MLV_PARSE_BAD_L4;
	const uint8_t *l4 = f + w.off;
	memcpy(o->key.src, ip + 24, 16);
	memcpy(o->key.dst, ip + 8, 16);
	memcpy(&o->key.sport, l4 + 2, 2);
	memcpy(&o->key.dport, l4, 2);
	o->key.proto = w.nh;
	o->flags |= MLV_PKT_F_ICMP_ERROR;
	return MLV_PARSE_OK;
}

static enum mlv_parse_verdict parse_icmp(const uint8_t *f, uint32_t l4,
					 uint32_t end, struct mlv_pkt *o)
{
	if (end - l4 < ICMP_HLEN)
		return MLV_PARSE_BAD_L4;
	uint8_t type = f[l4], code = f[l4 + 1];

	if (o->key.family == 4) {
		if (o->l4_proto != PROTO_ICMP)
			return MLV_PARSE_UNSUPPORTED;  /* ICMPv6 over IPv4 */
		if (type == ICMP_ECHO && code == 0) {
			o->flags |= MLV_PKT_F_ICMP_ECHO;
			return MLV_PARSE_OK;
		}
		if (type == ICMP_DEST_UNREACH && code == ICMP_FRAG_NEEDED)
			return parse_quoted_ipv4(f, l4 + ICMP_HLEN, end, o);
		return MLV_PARSE_UNSUPPORTED;
	}
	if (o->l4_proto != PROTO_ICMPV6)
		return MLV_PARSE_UNSUPPORTED;          /* ICMPv4 over IPv6 */
	if (type == ICMPV6_ECHO_REQUEST && code == 0) {
		o->flags |= MLV_PKT_F_ICMP_ECHO;
		return MLV_PARSE_OK;
	}
	/* RFC 4443 3.2: the code is ignored by receivers. */
	if (type == ICMPV6_PKT_TOO_BIG)
		return parse_quoted_ipv6(f, l4 + ICMP_HLEN, end, o);
	return MLV_PARSE_UNSUPPORTED;
}

/* Fragments carry ports only in the first one, so every fragment is keyed
 * by the 3-tuple (ports stay 0) and reaches the same backend. Only TCP and
 * UDP fragments are balanced: VIPs are TCP or UDP services, and a later
 * ICMP fragment cannot be told from any other. */
static inline enum mlv_parse_verdict fragment(struct mlv_pkt *o, bool first,
					      uint8_t proto)
{
	o->flags |= MLV_PKT_F_FRAGMENT | (first ? MLV_PKT_F_FRAG_FIRST : 0);
	return is_tcp_or_udp(proto) ? MLV_PARSE_OK : MLV_PARSE_UNSUPPORTED;
}

static inline enum mlv_parse_verdict parse_ipv4(const uint8_t *f, uint32_t len,
						uint32_t l3, struct mlv_pkt *o)
{
	const uint8_t *ip = f + l3;

	if (unlikely(len - l3 < IPV4_MIN_HLEN))
		return MLV_PARSE_TRUNCATED;
	uint32_t hl = (uint32_t)(ip[0] & 0x0f) * 4;
	uint32_t tot = rd16(ip + 2);
	/* tot >= hl also guarantees the options lie inside the frame. */
	if (unlikely(ip[0] >> 4 != 4 || hl < IPV4_MIN_HLEN || tot < hl ||
		     tot > len - l3))
		return MLV_PARSE_BAD_IPV4;

	uint16_t frag = rd16(ip + 6);
	uint8_t proto = ip[9];
	o->key.family = 4;
	o->key.proto = proto;
	o->l4_proto = proto;
	memcpy(o->key.src, ip + 12, 4);
	memcpy(o->key.dst, ip + 16, 4);
	o->l3_len = (uint16_t)tot;
	o->l4_off = (uint16_t)(l3 + hl);
	o->tos = ip[1];
	o->ttl = ip[8];
	o->flags |= (uint8_t)((frag & IPV4_DF) >> 11);
	_Static_assert((IPV4_DF >> 11) == MLV_PKT_F_DF, "DF bit shift");

	if (unlikely(frag & IPV4_MF_OFFSET))
		return fragment(o, (frag & IPV4_OFFSET) == 0, proto);
	return parse_l4(f, l3 + hl, l3 + tot, proto, o);
}

static enum mlv_parse_verdict parse_ipv6(const uint8_t *f, uint32_t len,
					 uint32_t l3, struct mlv_pkt *o)
{
	const uint8_t *ip = f + l3;

	if (unlikely(len - l3 < IPV6_HLEN))
		return MLV_PARSE_TRUNCATED;
	uint32_t plen = rd16(ip + 4);
	if (unlikely(ip[0] >> 4 != 6 || plen > len - l3 - IPV6_HLEN ||
		     plen > IPV6_MAX_PAYLOAD))
		return MLV_PARSE_BAD_IPV6;

	o->key.family = 6;
	memcpy(o->key.src, ip + 8, 16);
	memcpy(o->key.dst, ip + 24, 16);
	o->l3_len = (uint16_t)(IPV6_HLEN + plen);
	o->tos = (uint8_t)(rd16(ip) >> 4);
	o->ttl = ip[7];
	o->flags |= MLV_PKT_F_DF;   /* IPv6 routers never fragment */

	uint32_t end = l3 + IPV6_HLEN + plen;
	struct v6_walk w = { .off = l3 + IPV6_HLEN, .nh = ip[6] };
	if (unlikely(!is_tcp_or_udp(w.nh))) {
		enum mlv_parse_verdict v =
			v6_skip_ext(f, end, &w, MLV_PARSE_BAD_IPV6);
		if (v != MLV_PARSE_OK)
			return v;
	}
	o->key.proto = w.nh;
	o->l4_proto = w.nh;
	o->l4_off = (uint16_t)w.off;
	if (unlikely(w.has_frag && (w.frag & IPV6_FRAG_OFFSET_M)))
		return fragment(o, (w.frag & IPV6_FRAG_OFFSET) == 0, w.nh);
	return parse_l4(f, w.off, end, w.nh, o);
}

enum mlv_parse_verdict mlv_parse(const uint8_t *frame, uint32_t len,
				 struct mlv_pkt *out)
{
	memset(out, 0, sizeof(*out));
	if (unlikely(len < ETH_HLEN))
		return MLV_PARSE_TRUNCATED;

	uint32_t l3 = ETH_HLEN;
	uint16_t type = rd16(frame + 12);
	if (unlikely(type == ETHERTYPE_VLAN)) {
		if (len < ETH_HLEN + VLAN_HLEN)
			return MLV_PARSE_TRUNCATED;
		type = rd16(frame + ETH_HLEN + 2);
		l3 += VLAN_HLEN;
		out->flags = MLV_PKT_F_VLAN;
	}
	out->l3_off = (uint16_t)l3;
	if (likely(type == ETHERTYPE_IPV4))
		return parse_ipv4(frame, len, l3, out);
	if (type == ETHERTYPE_IPV6)
		return parse_ipv6(frame, len, l3, out);
	return MLV_PARSE_NOT_IP;
}

/* Counter names are the X-macro names lower-cased once, so the list in
 * parse.h stays the only place a verdict is named. */
#define VERDICT_NAME_MAX 24
static char verdict_names[MLV_PARSE__COUNT][VERDICT_NAME_MAX];
static pthread_once_t verdict_names_once = PTHREAD_ONCE_INIT;

static void verdict_names_init(void)
{
	static const char *const upper[] = {
#define MLV_PARSE_UPPER(name, text) #name,
		MLV_PARSE_VERDICTS(MLV_PARSE_UPPER)
#undef MLV_PARSE_UPPER
	};
	for (unsigned i = 0; i < MLV_PARSE__COUNT; i++) {
		unsigned j = 0;
		for (; upper[i][j] && j + 1 < VERDICT_NAME_MAX; j++)
			verdict_names[i][j] = (char)tolower((unsigned char)upper[i][j]);
		verdict_names[i][j] = '\0';
	}
}

const char *mlv_parse_verdict_name(enum mlv_parse_verdict v)
{
	if ((unsigned)v >= MLV_PARSE__COUNT)
		return "unknown";
	pthread_once(&verdict_names_once, verdict_names_init);
	return verdict_names[v];
}
