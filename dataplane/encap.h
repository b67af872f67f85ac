/* Building the headers a forwarded packet leaves with: IPIP (4in4, 6in6,
 * 4in6), GUE (variant 0, RFC draft-ietf-intarea-gue, as Linux fou "gue"
 * decapsulates) over IPv4 or IPv6, and L2 DSR (MAC rewrite); and the ICMP
 * "fragmentation needed" / ICMPv6 "packet too big" reply sent to a client
 * whose DF packet would not fit after encapsulation.
 *
 * The control plane prepares one template per (backend, transmitting port)
 * in each generation with every constant byte in place; per packet the
 * worker only fills lengths, checksums, DSCP and the GUE source port.
 * Plain C on byte buffers, no DPDK types. Pure: any thread.
 */
#ifndef MLV_ENCAP_H
#define MLV_ENCAP_H

#include <stdint.h>

#include "packet_parse.h"

/* Ethernet 14 + IPv6 40 + UDP 8 + GUE 4 */
#define MLV_ENCAP_MAX_HDR 66
#define MLV_OUTER_TTL 64   /* hop limit of outer headers */

enum mlv_encap_method { MLV_ENCAP_IPIP = 0, MLV_ENCAP_GUE, MLV_ENCAP_L2DSR };

struct mlv_encap_tmpl {
	uint8_t hdr[MLV_ENCAP_MAX_HDR]; /* Ethernet + outer headers, constants set */
	uint8_t len;            /* bytes of hdr written in front of the inner IP packet
				   (14 for L2 DSR: only the Ethernet header) */
	uint8_t method;         /* enum mlv_encap_method */
	uint8_t outer_family;   /* 4 or 6 (L2 DSR: 0) */
	uint8_t inner_family;   /* 4 or 6 */
	uint32_t csum_partial;  /* outer IPv4 header sum of constant fields,
				   or the UDP pseudo-header constant part */
};

struct mlv_encap_params {
	enum mlv_encap_method method;
	uint8_t src_mac[6];      /* the transmitting port's MAC */
	uint8_t dst_mac[6];      /* next hop (IPIP/GUE) or the backend (L2 DSR) */
	uint8_t outer_family;    /* family of src/dst below (IPIP/GUE) */
	uint8_t outer_src[16];   /* the transmitting port's address */
	uint8_t outer_dst[16];   /* the backend's address */
	uint8_t inner_family;    /* the VIP's family */
	uint16_t gue_port;       /* GUE: UDP destination port, host order */
};

/* Fill *t from *p. Returns 0, or -1 if the combination cannot be carried
 * (IPv6 inside IPv4 IPIP). */
int mlv_encap_tmpl_init(struct mlv_encap_tmpl *t,
			const struct mlv_encap_params *p);

/* Write t->len header bytes at out, which is immediately followed by the
 * inner IP packet of inner_l3_len bytes (the caller has already moved the
 * frame start: removed the old Ethernet/VLAN header and prepended room).
 * inner_tos is copied to the outer DSCP (ECN bits too: RFC 6040 normal
 * mode); flow_hash picks the GUE source port. Outer checksums complete. */
void mlv_encap_apply(uint8_t *out, const struct mlv_encap_tmpl *t,
		     uint16_t inner_l3_len, uint8_t inner_tos,
		     uint32_t flow_hash);

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

#endif
