/* SPDX-License-Identifier: BSD-3-Clause */
/* The packet parser: Ethernet (+ one 802.1Q tag), IPv4 (options allowed),
 * IPv6 (hop-by-hop, routing and destination-options headers skipped,
 * fragment header understood), TCP/UDP ports, and the ICMP errors that
 * carry path-MTU information. Every bound is checked against the frame
 * length. Plain C, no DPDK types: shared by workers, tools, tests and the
 * fuzzer. Pure and re-entrant: any thread. */
#ifndef MLV_PACKET_PARSE_H
#define MLV_PACKET_PARSE_H

#include <stdint.h>
#include <string.h>

#include "dataplane/packet/flow_key.h"

/* The verdicts. OK is 0; every other value is a reason the frame cannot be
 * load-balanced, and the data plane counts it under the same name. */
#define MLV_PARSE_VERDICTS(X)                                          \
	X(OK,              "parsed")                                   \
	X(NOT_IP,          "not IPv4/IPv6 (ARP, LLDP, ...)")           \
	X(TRUNCATED,       "frame shorter than its headers")           \
	X(BAD_IPV4,        "bad IPv4 header (version, IHL, length)")   \
	X(BAD_IPV6,        "bad IPv6 header (version, length, ext hdrs)") \
	X(BAD_L4,          "bad TCP/UDP/ICMP header")                  \
	X(UNSUPPORTED,     "L4 protocol or ICMP type not balanced")

enum mlv_parse_verdict {
#define MLV_PARSE_ENUM(name, text) MLV_PARSE_##name,
	MLV_PARSE_VERDICTS(MLV_PARSE_ENUM)
#undef MLV_PARSE_ENUM
	MLV_PARSE__COUNT
};

/* flags */
#define MLV_PKT_F_VLAN       0x01  /* carried one 802.1Q tag */
#define MLV_PKT_F_FRAGMENT   0x02  /* part of a fragmented datagram: key ports are 0 */
#define MLV_PKT_F_FRAG_FIRST 0x04  /* ... and it is the first fragment */
#define MLV_PKT_F_DF         0x08  /* IPv4 don't-fragment set (always set for IPv6) */
#define MLV_PKT_F_ICMP_ERROR 0x10  /* ICMP frag-needed / packet-too-big: key is the
				      embedded flow reversed (client -> VIP) */
#define MLV_PKT_F_ICMP_ECHO  0x20  /* ICMP/ICMPv6 echo request: key ports 0 */

struct mlv_pkt {
	struct mlv_flow_key key;
	uint16_t l3_off;     /* offset of the IP header in the frame */
	uint16_t l4_off;     /* offset of the L4 header (after IPv6 ext headers) */
	uint16_t l3_len;     /* length of the IP packet (header + payload), from
				the IP header; the frame may carry padding after */
	uint8_t flags;       /* MLV_PKT_F_* */
	uint8_t tcp_flags;   /* TCP only: FIN 0x01 SYN 0x02 RST 0x04 ACK 0x10 */
	uint8_t ttl;         /* IPv4 TTL / IPv6 hop limit */
	uint8_t tos;         /* IPv4 TOS / IPv6 traffic class (DSCP + ECN) */
	uint8_t l4_proto;    /* protocol of the frame's own L4 header (ICMP for
				ICMP errors, where key.proto is the inner one) */
	uint8_t pad;
};

/* Parse frame[0..len-1]. Fills *out on MLV_PARSE_OK (and partially on
 * other verdicts). Never reads outside the frame. */
enum mlv_parse_verdict mlv_parse(const uint8_t *frame, uint32_t len,
				 struct mlv_pkt *out);

/* mlv_parse for the per-packet path: the same verdict and the same *out
 * for every input, with the common frames (untagged IPv4 without options,
 * not a fragment, TCP or UDP; untagged IPv6 whose first next header is
 * TCP or UDP) parsed inline and everything else passed to mlv_parse.
 * Inline because a call, with its register saves and the zeroing of *out
 * before it is filled, costs as much as the parsing (inline: 39
 * instructions a frame fewer, 12.5 % more Mpps; docs/benchmarks.md, "Why
 * the data path is as it is"). Pure; any thread. */
static inline enum mlv_parse_verdict
mlv_parse_fast(const uint8_t *frame, uint32_t len, struct mlv_pkt *out);

/* Name of a verdict as used in counters ("ok", "not_ip", "truncated", ...). */
const char *mlv_parse_verdict_name(enum mlv_parse_verdict v);

/* ---- Implementation of the inline fast path. Internal. ---- */

/* The L4 header's own length field for TCP (data offset) or UDP
 * (length), which mlv_parse checks against the IP payload. */
static inline uint32_t mlv_parse__l4_need(const uint8_t *l4, uint8_t proto)
{
	return proto == 6 ? (uint32_t)(l4[12] >> 4) * 4
			  : (uint32_t)l4[4] << 8 | l4[5];
}

/* IPv6 without extension headers, TCP or UDP: mlv_parse_fast's second
 * case (mixed traffic alternates the two). Not inlined: inline, it would
 * cost the IPv4 case 4 instructions a packet in the worker's parse loop. */
static __attribute__((noinline, unused)) enum mlv_parse_verdict
mlv_parse__fast6(const uint8_t *frame, uint32_t len, struct mlv_pkt *out)
{
	enum { ETH = 14, IP6 = 40, TCP = 20, UDP = 8, MAX_PAYLOAD = 0xffff - IP6 };
	const uint8_t *ip = frame + ETH;
	const uint8_t *l4 = ip + IP6;
	uint32_t plen = (uint32_t)ip[4] << 8 | ip[5];
	uint8_t proto = ip[6];
	uint32_t need;

	/* mlv_parse's checks: the payload length within the frame and
	 * within a uint16_t l3_len, the L4 header within the payload. */
	need = mlv_parse__l4_need(l4, proto);
	if (__builtin_expect(plen > len - ETH - IP6 || plen > MAX_PAYLOAD ||
			     need < (proto == 6 ? TCP : UDP) || need > plen, 0))
		return mlv_parse(frame, len, out);

	memcpy(out->key.src, ip + 8, 16);
	memcpy(out->key.dst, ip + 24, 16);
	memcpy(&out->key.sport, l4, 4);
	out->key.proto = proto;
	out->key.family = 6;
	out->key.pad[0] = out->key.pad[1] = 0;
	out->l3_off = ETH;
	out->l4_off = ETH + IP6;
	out->l3_len = (uint16_t)(IP6 + plen);
	out->flags = MLV_PKT_F_DF;   /* IPv6 routers never fragment */
	out->tcp_flags = proto == 6 ? l4[13] : 0;
	out->ttl = ip[7];
	out->tos = (uint8_t)((ip[0] << 4) | (ip[1] >> 4));
	out->l4_proto = proto;
	out->pad = 0;
	return MLV_PARSE_OK;
}

static inline enum mlv_parse_verdict
mlv_parse_fast(const uint8_t *frame, uint32_t len, struct mlv_pkt *out)
{
	enum { ETH = 14, IP4 = 20, IP6 = 40, TCP = 20, UDP = 8 };
	const uint8_t *ip = frame + ETH;
	const uint8_t *l4 = ip + IP4;
	uint32_t type_vhl;   /* frame bytes 12..15: Ethernet type, IPv4 version and IHL, TOS */
	uint16_t tot_be, frag;

	/* Ethernet type IPv4, version 4 with IHL 5, room for a TCP header
	 * (the shortest UDP frame is padded to 60 bytes anyway). Else
	 * IPv6 whose next header is TCP or UDP, with room for a TCP
	 * header. Anything else, and every error, is mlv_parse's. Header
	 * fields are read as words where that saves instructions (the type
	 * and version test, the fragment test, the total length: 3 fewer
	 * per frame, docs/benchmarks.md, "Why the data path is as it is"). */
	_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
		       "header words are read little-endian");
	if (__builtin_expect(len < ETH + IP4 + TCP, 0))
		return mlv_parse(frame, len, out);
	memcpy(&type_vhl, frame + 12, 4);
	if (__builtin_expect((type_vhl & 0xffffff) != 0x450008, 0)) {
		if (len >= ETH + IP6 + TCP && frame[12] == 0x86 &&
		    frame[13] == 0xDD && (ip[0] >> 4) == 6 &&
		    (ip[6] == 6 || ip[6] == 17))
			return mlv_parse__fast6(frame, len, out);
		return mlv_parse(frame, len, out);
	}

	memcpy(&tot_be, ip + 2, 2);
	memcpy(&frag, ip + 6, 2);   /* flags and fragment offset */

	uint32_t tot = __builtin_bswap16(tot_be);
	uint32_t room = tot - IP4;   /* wraps when tot < 20: caught below */
	uint8_t proto = ip[9];
	uint32_t need;

	if (proto != 6 && proto != 17)
		return mlv_parse(frame, len, out);
	need = mlv_parse__l4_need(l4, proto);
	/* mlv_parse's checks: the IP total length within the frame, not a
	 * fragment (MF clear, offset 0), the L4 header within the IP
	 * packet. */
	if (__builtin_expect(tot < IP4 || tot > len - ETH ||
			     (frag & 0xff3f) != 0 ||   /* MF, offset */
			     need < (proto == 6 ? TCP : UDP) || need > room, 0))
		return mlv_parse(frame, len, out);

	memset(&out->key, 0, sizeof(out->key));
	memcpy(out->key.src, ip + 12, 4);
	memcpy(out->key.dst, ip + 16, 4);
	memcpy(&out->key.sport, l4, 4);
	out->key.proto = proto;
	out->key.family = 4;
	out->l3_off = ETH;
	out->l4_off = ETH + IP4;
	out->l3_len = (uint16_t)tot;
	_Static_assert(MLV_PKT_F_DF == 0x40 >> 3, "DF bit shift");
	out->flags = (uint8_t)((ip[6] & 0x40) >> 3);   /* DF */
	out->tcp_flags = proto == 6 ? l4[13] : 0;
	out->ttl = ip[8];
	out->tos = ip[1];
	out->l4_proto = proto;
	out->pad = 0;
	return MLV_PARSE_OK;
}

#endif
