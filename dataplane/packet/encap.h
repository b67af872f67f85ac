/* SPDX-License-Identifier: BSD-3-Clause */
/* Building the headers a forwarded packet leaves with: IPIP (4in4, 6in6,
 * 4in6), GUE (variant 0, RFC draft-ietf-intarea-gue, as Linux fou "gue"
 * decapsulates) over IPv4 or IPv6, and L2 DSR (MAC rewrite); and the ICMP
 * "fragmentation needed" / ICMPv6 "packet too big" reply sent to a client
 * whose DF packet would not fit after encapsulation.
 *
 * The control plane prepares one template per (backend, transmitting port)
 * in each generation with every constant byte in place; per packet the
 * worker only fills lengths, checksums, DSCP, the GUE source port and,
 * with a source prefix, the outer source's host bits.
 * Plain C on byte buffers, no DPDK types. Pure: any thread.
 */
#ifndef MLV_ENCAP_H
#define MLV_ENCAP_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "control/base/visibility.h"
#include "dataplane/bpf/common/second_chance.h"
#include "dataplane/packet/parse.h"

/* Ethernet 14 + IPv6 40 + UDP 8 + GUE 4 + second-chance hops 36 */
#define MLV_ENCAP_MAX_HDR 102
#define MLV_OUTER_TTL 64   /* hop limit of outer headers */

enum mlv_encap_method { MLV_ENCAP_IPIP = 0, MLV_ENCAP_GUE, MLV_ENCAP_L2DSR };

/* The byte layout a template writes, so that mlv_encap_apply picks its
 * code without testing method and families per packet: the layouts of fixed length are written inline
 * with fixed-size moves, the IPv6 ones (and a failed template) out of
 * line. */
enum mlv_encap_layout {
	MLV_ENCAP_LAYOUT_OTHER = 0, /* outer IPv6 (ipip, gue), or no template */
	MLV_ENCAP_LAYOUT_IPIP4,     /* Ethernet + IPv4: 34 bytes */
	MLV_ENCAP_LAYOUT_GUE4,      /* Ethernet + IPv4 + UDP + GUE: 46 bytes */
	MLV_ENCAP_LAYOUT_L2DSR,     /* Ethernet: 14 bytes */
	MLV_ENCAP_LAYOUT_IPIP4_SRC, /* IPIP4 with the source's host bits
				       from the flow hash */
};

/* One cache line for every layout the workers write inline (their
 * headers end by byte 60 of the struct), whatever the template's index:
 * the fields first, then the header, 64-byte aligned. */
struct mlv_encap_tmpl {
	uint32_t csum_partial;  /* outer IPv4 header sum of constant fields,
				   or the UDP pseudo-header constant part
				   (second chance: without the hop block) */
	uint32_t src_mask;      /* ipip with a source prefix: its host bits
				   (the last 32 bits of the source, host
				   order), taken from the flow hash; 0: the
				   source is the template's */
	uint8_t len;            /* bytes of hdr written in front of the inner IP packet
				   (14 for L2 DSR: only the Ethernet header) */
	uint8_t method;         /* enum mlv_encap_method */
	uint8_t outer_family;   /* 4 or 6 (L2 DSR: 0) */
	uint8_t inner_family;   /* 4 or 6 */
	uint8_t layout;         /* enum mlv_encap_layout */
	uint8_t sc_off;         /* second chance: offset in hdr of the GUE
				   private data (struct mlv_sc_hdr and its
				   hop slots); 0: the VIP has none */
	uint8_t hdr[MLV_ENCAP_MAX_HDR]; /* Ethernet + outer headers, constants set */
} __attribute__((aligned(64)));

struct mlv_encap_params {
	enum mlv_encap_method method;
	uint8_t src_mac[6];      /* the transmitting port's MAC */
	uint8_t dst_mac[6];      /* next hop (IPIP/GUE) or the backend (L2 DSR) */
	uint8_t outer_family;    /* family of src/dst below (IPIP/GUE) */
	uint8_t outer_src[16];   /* the transmitting port's address, or a
				    source prefix's first address */
	uint8_t outer_src_len;   /* ipip: the prefix length of outer_src,
				    at least /16 (IPv4) or /96 (IPv6): the
				    host bits come from the flow hash; 0 or
				    the full length: outer_src as is */
	uint8_t outer_dst[16];   /* the backend's address */
	uint8_t inner_family;    /* the VIP's family */
	uint16_t gue_port;       /* GUE: UDP destination port, host order */
	bool second_chance;      /* GUE: room for the hops after the GUE
				    header (dataplane/bpf/common/second_chance.h) */
};

/* Fill *t from *p. Returns 0, or -1 if the combination cannot be carried
 * (IPv6 inside IPv4 IPIP). */
int mlv_encap_tmpl_init(struct mlv_encap_tmpl *t,
			const struct mlv_encap_params *p);

/* Write t->len header bytes at out, which is immediately followed by the
 * inner IP packet of inner_l3_len bytes (the caller has already moved the
 * frame start: removed the old Ethernet/VLAN header and prepended room).
 * inner_tos is copied to the outer DSCP (ECN bits too: RFC 6040 normal
 * mode); flow_hash picks the GUE source port, the IPv6 flow label and the
 * host bits of a source prefix (flow_hash & src_mask, so the same flow
 * has the same outer source on every instance). Outer checksums
 * complete. */
static inline void mlv_encap_apply(uint8_t *out,
				   const struct mlv_encap_tmpl *t,
				   uint16_t inner_l3_len, uint8_t inner_tos,
				   uint32_t flow_hash);

/* mlv_encap_apply for a template with sc_off set (a second-chance VIP's):
 * also writes the private data's n_hops (at most MLV_SC_MAX_HOPS) hop
 * addresses, hops[k] the first 4 (outer IPv4) or 16 (IPv6) bytes of
 * each, in order; the remaining slots stay zero. Out of line: only
 * second-chance VIPs pay for it. Pure; any thread. */
void mlv_encap_apply_sc(uint8_t *out, const struct mlv_encap_tmpl *t,
			uint16_t inner_l3_len, uint8_t inner_tos,
			uint32_t flow_hash, const uint8_t *const *hops,
			uint32_t n_hops);

/* The bytes a template's outer headers add for a method and outer
 * family (4 or 6), with second chance's hop block or without: what the
 * MTU room subtracts. Pure; any thread. */
uint16_t mlv_encap_overhead(enum mlv_encap_method method, uint8_t outer_family,
			    bool second_chance);

/* Turn the received frame into an ICMP frag-needed (v4) / packet-too-big
 * (v6) reply to its sender, in place: buf holds the frame (len bytes,
 * parsed as *pkt) and has room for cap bytes starting at buf. The reply
 * quotes as much of the original IP packet as the minimum MTU allows (576
 * for IPv4, 1280 for IPv6), reports mtu as the next-hop MTU, comes from
 * src_ip (the VIP the client addressed: the original destination) and
 * swaps the Ethernet addresses. Returns the reply frame length written at
 * buf, or 0 if no reply can be built (the caller counts a drop). */
uint32_t mlv_icmp_too_big(uint8_t *buf, uint32_t len, uint32_t cap,
			  const struct mlv_pkt *pkt, uint16_t mtu);

/* Turn a received ICMP echo request (pkt->flags has MLV_PKT_F_ICMP_ECHO)
 * into the echo reply to its sender, in place: from the address it was
 * sent to (the VIP), TTL / hop limit 64, the request's identifier,
 * sequence number and data, the Ethernet addresses swapped (any VLAN tag
 * kept). IPv4 options and IPv6 extension headers are not echoed. Returns
 * the reply frame length written at buf (never longer than the request),
 * or 0 when no reply is sent: a fragment, a bad checksum, a source that is
 * not one host, or headers beyond len. Pure; any thread. */
uint32_t mlv_icmp_echo_reply(uint8_t *buf, uint32_t len,
			     const struct mlv_pkt *pkt);

/* ---- Implementation of the inline fast path. Internal. ----
 * Inline because the out-of-line, length-generic version (kept for outer
 * IPv6) costs 67 instructions per ipip packet, a tenth of the worker's
 * per-packet work, most of it the variable-length copy and the layout
 * tests (docs/benchmarks.md, "Why the data path is as it is"). */

/* mlv_encap_apply for MLV_ENCAP_LAYOUT_OTHER. */
MLV_HIDDEN
void mlv_encap__apply_other(uint8_t *out, const struct mlv_encap_tmpl *t,
			    uint16_t inner_l3_len, uint8_t inner_tos,
			    uint32_t flow_hash);

enum {
	MLV_ENCAP__OFF_IP4 = 14,    /* outer IPv4 header in the template */
	MLV_ENCAP__OFF_UDP4 = 34,   /* its UDP header (gue) */
	MLV_ENCAP__GUE_SPORT_BASE = 49152,   /* IANA dynamic ports ... */
	MLV_ENCAP__GUE_SPORT_MASK = 0x3FFF,  /* ... 49152-65535 */
};

static inline void mlv_encap__put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Fold a 32-bit one's-complement accumulator to 16 bits. */
static inline uint16_t mlv_encap__fold32(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* The outer IPv4 header's variable words: TOS, total length, checksum
 * (the complement of the template's constant sum plus both). */
static inline void mlv_encap__ipv4_fill(uint8_t *ip, uint32_t csum_partial,
					uint32_t tot, uint8_t tos)
{
	ip[1] = tos;
	mlv_encap__put16(ip + 2, tot);
	mlv_encap__put16(ip + 10,
			 (uint16_t)~mlv_encap__fold32(csum_partial + tos + tot));
}

static inline void mlv_encap_apply(uint8_t *out,
				   const struct mlv_encap_tmpl *t,
				   uint16_t inner_l3_len, uint8_t inner_tos,
				   uint32_t flow_hash)
{
	uint8_t *ip = out + MLV_ENCAP__OFF_IP4;

	/* Fixed-size, possibly overlapping moves of the template; none
	 * writes at or past out + t->len, where the inner packet starts.
	 * Compares rather than a switch: its jump table costs 7 instructions
	 * a packet, two compares 2-4. */
	if (t->layout == MLV_ENCAP_LAYOUT_IPIP4) {
		memcpy(out, t->hdr, 16);
		memcpy(out + 16, t->hdr + 16, 16);
		memcpy(out + 18, t->hdr + 18, 16);
		mlv_encap__ipv4_fill(ip, t->csum_partial, 20u + inner_l3_len,
				     inner_tos);
	} else if (t->layout == MLV_ENCAP_LAYOUT_GUE4) {
		uint8_t *udp = out + MLV_ENCAP__OFF_UDP4;
		uint32_t udp_len = 8u + 4u + inner_l3_len;

		memcpy(out, t->hdr, 16);
		memcpy(out + 16, t->hdr + 16, 16);
		memcpy(out + 30, t->hdr + 30, 16);
		mlv_encap__ipv4_fill(ip, t->csum_partial, 20u + udp_len,
				     inner_tos);
		mlv_encap__put16(udp, MLV_ENCAP__GUE_SPORT_BASE +
					      (flow_hash & MLV_ENCAP__GUE_SPORT_MASK));
		mlv_encap__put16(udp + 4, udp_len);
		/* UDP checksum 0: see mlv_encap__apply_other */
	} else if (t->layout == MLV_ENCAP_LAYOUT_L2DSR) {
		memcpy(out, t->hdr, 8);
		memcpy(out + 6, t->hdr + 6, 8);
	} else if (t->layout == MLV_ENCAP_LAYOUT_IPIP4_SRC) {
		/* The host bits sit in the source's last word (a prefix of
		 * /16 or longer), zero in the template: adding them to that
		 * word and to the checksum's sum carries nowhere. */
		uint32_t host = flow_hash & t->src_mask;

		memcpy(out, t->hdr, 16);
		memcpy(out + 16, t->hdr + 16, 16);
		memcpy(out + 18, t->hdr + 18, 16);
		mlv_encap__put16(ip + 14, (uint32_t)ip[14] << 8 | ip[15] | host);
		mlv_encap__ipv4_fill(ip, t->csum_partial + host,
				     20u + inner_l3_len, inner_tos);
	} else {
		mlv_encap__apply_other(out, t, inner_l3_len, inner_tos, flow_hash);
	}
}

#endif
