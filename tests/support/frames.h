/* SPDX-License-Identifier: BSD-3-Clause */
/* Test helper: builds Ethernet frames (IPv4/IPv6, options, extension
 * headers, fragments, TCP/UDP/ICMP) byte by byte from a description, with
 * every checksum filled by its own RFC 1071 routine. Written independently
 * of dataplane/ so tests compare the packet core against it. Used by the
 * unit tests, the fuzz corpus generator and the packet-test generator.
 * Pure functions: any thread. */
#ifndef MLV_TEST_FRAMES_H
#define MLV_TEST_FRAMES_H

#include <stdbool.h>
#include <stdint.h>

#define FRAME_MAX_EXT 10

struct frame_spec {
	uint8_t family;            /* 4 or 6 */
	uint8_t proto;             /* L4: 6 TCP, 17 UDP, 1 ICMP, 58 ICMPv6, other */
	uint8_t src_mac[6], dst_mac[6];
	bool vlan;
	uint16_t vlan_tci;
	uint8_t src[16], dst[16];  /* IPv4 uses the first 4 bytes */
	uint16_t sport, dport;     /* host order */
	uint8_t tcp_flags;
	uint8_t tcp_opt_len;       /* bytes of TCP options (NOPs), multiple of 4 */
	uint8_t tos;               /* IPv4 TOS / IPv6 traffic class */
	uint8_t ttl;
	/* IPv4 */
	uint8_t ip_opt_len;        /* bytes of options (NOPs), multiple of 4, <= 40 */
	bool df;
	bool mf;                   /* more fragments (IPv6 too, with v6_frag) */
	uint16_t frag_offset;      /* in 8-byte units (IPv6 too, with v6_frag) */
	uint16_t ip_id;
	/* IPv6 */
	uint32_t flow_label;
	uint8_t n_ext;             /* extension headers before any fragment header */
	uint8_t ext[FRAME_MAX_EXT];       /* 0 hop-by-hop, 43 routing, 60 dest opts */
	uint8_t ext_units[FRAME_MAX_EXT]; /* Hdr Ext Len: (units+1)*8 bytes */
	bool v6_frag;              /* add a fragment header after ext[] */
	uint32_t frag_id;
	/* ICMP / ICMPv6 */
	uint8_t icmp_type, icmp_code;
	uint32_t icmp_rest;        /* bytes 4..7 of the ICMP header (MTU, id/seq) */
	/* L4 payload: payload_len bytes from payload, or a counting pattern
	 * when payload is NULL */
	const uint8_t *payload;
	uint32_t payload_len;
	uint32_t eth_pad;          /* zero bytes after the IP packet */
};

/* Defaults: MACs 02:00:00:00:00:01 -> 02:00:00:00:00:02, client
 * 198.51.100.1 / 2001:db8:1::1 port 40000 -> VIP 192.0.2.10 /
 * 2001:db8::10 port 80, TTL 64, DF set, TCP flags ACK, empty payload. */
void frame_spec_init(struct frame_spec *s, uint8_t family, uint8_t proto);

/* Parse an address in text form into out[16] (rest zeroed); returns the
 * family (4/6). Aborts on bad text: a test bug. */
int frame_addr(uint8_t out[16], const char *text);

/* Build the IP packet (no Ethernet) at buf; returns its length, or 0 if
 * it does not fit cap. */
uint32_t frame_build_ip(uint8_t *buf, uint32_t cap, const struct frame_spec *s);

/* Build Ethernet (+VLAN) + IP packet + eth_pad; returns the frame length
 * or 0 if it does not fit cap. Fills *l3_off / *l4_off when not NULL. */
uint32_t frame_build(uint8_t *buf, uint32_t cap, const struct frame_spec *s,
		     uint32_t *l3_off, uint32_t *l4_off);

/* RFC 1071 Internet checksum (complemented one's-complement sum) of n
 * bytes plus an initial sum. Over data whose checksum field is zero it
 * gives the value to store; over data with a correct checksum, 0. */
uint16_t frame_csum(const uint8_t *p, uint32_t n, uint32_t initial);

/* The one's-complement sum of an IPv4/IPv6 pseudo-header (RFC 768 / RFC
 * 8200 8.1) as an initial value for frame_csum. */
uint32_t frame_pseudo_sum(int family, const uint8_t *src, const uint8_t *dst,
			  uint8_t proto, uint32_t l4_len);

/* Checks every checksum of the IP packet at ip (IPv4 header, and the
 * TCP/UDP/ICMP/ICMPv6 checksum when the L4 segment is whole): true if all
 * verify. UDP over IPv4 with checksum 0 passes (none sent). */
bool frame_ip_checksums_ok(const uint8_t *ip, uint32_t len);

#endif
