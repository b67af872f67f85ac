/* SPDX-License-Identifier: BSD-3-Clause */
/* Building test frames byte by byte: Ethernet (optionally one 802.1Q tag),
 * IPv4 (with options) or IPv6 (with extension headers), fragments, and
 * TCP/UDP/ICMP/ICMPv6 with correct checksums. Written for the packet tests
 * independently of dataplane/, so generator bugs and parser bugs cannot
 * cancel out. Pure functions on caller buffers; any thread. */
#ifndef PKT_FRAME_H
#define PKT_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#define PKT_FRAME_MAX 9600       /* largest frame a test builds */
#define PKT_ETH_MIN   60         /* frames shorter than this are zero-padded */

#define PKT_ETH_IPV4  0x0800
#define PKT_ETH_IPV6  0x86dd
#define PKT_ETH_ARP   0x0806
#define PKT_ETH_VLAN  0x8100

#define PKT_TCP_FIN 0x01
#define PKT_TCP_SYN 0x02
#define PKT_TCP_RST 0x04
#define PKT_TCP_PSH 0x08
#define PKT_TCP_ACK 0x10

/* Link layer. */
struct pkt_l2 {
	uint8_t dst[6];
	uint8_t src[6];
	bool vlan;              /* add one 802.1Q tag */
	uint16_t vlan_tci;
};

/* IPv6 extension headers the builder can insert before the L4 header. */
enum pkt_v6_ext {
	PKT_V6_HOPOPTS = 0,     /* 8 bytes, PadN */
	PKT_V6_ROUTING = 43,    /* 24 bytes, segment routing, segments left 0 */
	PKT_V6_DSTOPTS = 60,    /* 16 bytes, PadN */
};

/* Network layer. */
struct pkt_l3 {
	uint8_t family;         /* 4 or 6 */
	uint8_t src[16];        /* IPv4 in the first 4 bytes */
	uint8_t dst[16];
	uint8_t tos;            /* IPv4 TOS / IPv6 traffic class */
	uint8_t ttl;            /* TTL / hop limit */
	bool df;                /* IPv4 only */
	uint16_t ip_id;         /* IPv4 identification */
	uint32_t frag_id;       /* IPv6 fragment identification */
	uint8_t v4_opt_len;     /* IPv4 option bytes, multiple of 4, <= 40 */
	uint8_t n_v6_ext;       /* IPv6 extension headers, in order */
	uint8_t v6_ext[4];      /* enum pkt_v6_ext values */
};

/* Transport layer. For ICMP/ICMPv6 the "ports" are unused and rest is the
 * 4 bytes after type/code/checksum (e.g. the MTU of a too-big error). */
struct pkt_l4 {
	uint8_t proto;          /* 6 TCP, 17 UDP, 1 ICMP, 58 ICMPv6, others raw */
	uint16_t sport;
	uint16_t dport;
	uint8_t tcp_flags;
	const uint8_t *tcp_opts;  /* TCP options after the 20-byte header */
	uint8_t tcp_opts_len;     /* a multiple of 4, at most 40 */
	uint8_t icmp_type;
	uint8_t icmp_code;
	uint32_t icmp_rest;
};

/* A fragment of a datagram: offset in bytes (multiple of 8) into the
 * upper-layer data and whether more fragments follow. */
struct pkt_frag {
	bool is_fragment;
	uint16_t offset;
	bool more;
};

/* Deterministic payload: an 8-byte tag ("MLVT" + id) then bytes derived
 * from id, so that every generated packet is unique. */
void pkt_fill_payload(uint8_t *buf, uint32_t len, uint32_t id);

/* Write the L4 segment (header + payload) for l4 at out and return its
 * length; the checksum covers the whole segment (and the pseudo-header of
 * l3 where the protocol has one). Raw protocols get payload only. */
uint32_t pkt_build_l4(uint8_t *out, const struct pkt_l3 *l3,
		      const struct pkt_l4 *l4, const uint8_t *payload,
		      uint32_t payload_len);

/* Write an IP packet carrying data (an L4 segment, or a slice of one when
 * frag->is_fragment) with upper-layer protocol proto. Returns its length.
 * frag may be NULL. */
uint32_t pkt_build_ip(uint8_t *out, const struct pkt_l3 *l3, uint8_t proto,
		      const uint8_t *data, uint32_t data_len,
		      const struct pkt_frag *frag);

/* Put an Ethernet header (and tag) with ethertype in front of an IP packet:
 * out receives the frame, zero-padded to PKT_ETH_MIN. Returns the frame
 * length; *l3_off receives the offset of the IP packet. */
uint32_t pkt_build_eth(uint8_t *out, const struct pkt_l2 *l2,
		       uint16_t ethertype, const uint8_t *ip, uint32_t ip_len,
		       uint16_t *l3_off);

/* Recompute the IPv4 header checksum of the header at ip (IHL from the
 * header itself, bounded to hdr_room bytes), after a test corrupted a
 * field other than the checksum. */
void pkt_ipv4_fix_csum(uint8_t *ip, uint32_t hdr_room);

/* Read/write big-endian integers. */
static inline uint16_t pkt_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}
static inline uint32_t pkt_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}
static inline void pkt_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}
static inline void pkt_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

#endif
