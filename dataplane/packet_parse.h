/* The packet parser: Ethernet (+ one 802.1Q tag), IPv4 (options allowed),
 * IPv6 (hop-by-hop, routing and destination-options headers skipped,
 * fragment header understood), TCP/UDP ports, and the ICMP errors that
 * carry path-MTU information. Every bound is checked against the frame
 * length. Plain C, no DPDK types: shared by workers, tools, tests and the
 * fuzzer. Pure and re-entrant: any thread. */
#ifndef MLV_PACKET_PARSE_H
#define MLV_PACKET_PARSE_H

#include <stdint.h>

#include "flow_key.h"

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

/* Name of a verdict as used in counters ("ok", "not_ip", "truncated", ...). */
const char *mlv_parse_verdict_name(enum mlv_parse_verdict v);

#endif
