/* SPDX-License-Identifier: BSD-3-Clause */
/* QUIC connection-ID routing: the server ID a QUIC server put in the
 * connection IDs it chose, read from the destination connection ID of a
 * short-header (1-RTT) packet. The layouts are a wire format between
 * maglevd and the QUIC servers behind it, documented in
 * docs/forwarding.md ("QUIC connection-ID routing"); the v1 and v2
 * layouts are the ones Katran reads, so servers written for Katran work
 * unchanged. Plain C, no DPDK types: shared by the workers, the unit
 * tests and the fuzzer. Pure and re-entrant: any thread. */
#ifndef MLV_PACKET_QUIC_H
#define MLV_PACKET_QUIC_H

#include <stdint.h>

/* dataplane/packet/parse.h; declared only, so that the config (which
 * reads the ID limits) does not take in the parser's inline fast path */
struct mlv_pkt;

/* RFC 9000 17.2 / 17.3: the first byte's header-form bit (set: long
 * header) and fixed bit (set in every QUIC v1 packet). */
#define MLV_QUIC_LONG_HEADER  0x80
#define MLV_QUIC_FIXED_BIT    0x40
/* The shortest connection ID a server routed by ID may choose: a
 * short header does not carry the length, so the parser reads this many
 * bytes and needs the server never to choose fewer. */
#define MLV_QUIC_CID_MIN      8
/* Connection-ID versions: the top two bits of its first byte. */
#define MLV_QUIC_CID_V1       1   /* 16-bit server ID */
#define MLV_QUIC_CID_V2       2   /* 24-bit server ID */
#define MLV_QUIC_SERVER_ID_MAX_V1 0xFFFFu
#define MLV_QUIC_SERVER_ID_MAX    0xFFFFFFu   /* v2: the largest ID */

enum mlv_quic_verdict {
	/* Not a short header: a long header (handshake: the client chose
	 * the connection ID), the fixed bit clear (not QUIC v1), or an
	 * empty payload. Balanced by the flow hash, not counted. */
	MLV_QUIC_NOT_SHORT = 0,
	/* A short header whose connection ID carries no server ID: too
	 * short for MLV_QUIC_CID_MIN bytes, a version other than v1/v2,
	 * or server ID 0. */
	MLV_QUIC_NO_ID,
	/* A short header with a server ID (in *server_id). */
	MLV_QUIC_ID,
};

/* Read the server ID of the QUIC packet that starts at payload (the UDP
 * payload, len bytes). Never reads outside payload[0..len-1]. *server_id
 * is written only for MLV_QUIC_ID, and then is 1..MLV_QUIC_SERVER_ID_MAX.
 * Pure; any thread. */
enum mlv_quic_verdict mlv_quic_server_id(const uint8_t *payload,
					 uint32_t len, uint32_t *server_id);

/* The UDP payload of the packet p that mlv_parse* parsed from frame:
 * where it starts, and in *len its length by the UDP header's length
 * field (which the parser checked lies within the IP packet, so the
 * payload lies within the frame). NULL for anything but a whole UDP
 * datagram (a fragment, an ICMP error, TCP). Pure; any thread. */
const uint8_t *mlv_quic_udp_payload(const uint8_t *frame,
				    const struct mlv_pkt *p, uint32_t *len);

/* Write a connection ID of version (MLV_QUIC_CID_V1 or _V2) carrying
 * server_id into cid[0..MLV_QUIC_CID_MIN-1], keeping the other bits of
 * cid (the server's own). Returns 0, or -1 if server_id does not fit the
 * version (0 never does). For tests and for QUIC servers' authors: the
 * encoder of the format mlv_quic_server_id decodes. Pure; any thread. */
int mlv_quic_cid_encode(uint8_t *cid, unsigned version, uint32_t server_id);

#endif
