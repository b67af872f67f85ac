/* SPDX-License-Identifier: BSD-3-Clause OR GPL-2.0-only */
/* Second chance's wire format (docs/second-chance.md, docs/forwarding.md
 * "GUE private data: second-chance hops", version 1): the GUE private
 * data a load balancer writes after the 4-byte GUE header of a VIP with
 * second_chance, and the backend's decapsulator reads. Shared by the
 * workers' encapsulation (dataplane/packet/encap.c) and the BPF program
 * (dataplane/bpf/decap), so only <linux/types.h> types.
 *
 * The GUE header's Hlen counts the private data's 32-bit words; its
 * flags are 0, so every extension word is private data (draft-ietf-
 * intarea-gue 3.3; Linux fou skips it). Layout, all in network order:
 *
 *   byte 0   kind     MLV_SC_KIND ('M')
 *   byte 1   version  MLV_SC_VERSION
 *   byte 2   flags    MLV_SC_F_* (the hop index in bits 2-3); the other
 *            bits are zero
 *   byte 3   hops     valid hop addresses that follow, 0..MLV_SC_MAX_HOPS
 *   4..      MLV_SC_MAX_HOPS addresses of the outer family (4 or 16
 *            bytes each, MLV_SC_F_IPV6 says which), the valid ones first
 *            in order of preference, the rest zero
 */
#ifndef MLV_BPF_SECOND_CHANCE_H
#define MLV_BPF_SECOND_CHANCE_H

#include <linux/types.h>

/* Private data's first byte: maglevd's second-chance hops. */
#define MLV_SC_KIND 0x4D
/* The version this header describes; a receiver passes any other. */
#define MLV_SC_VERSION 1
/* flags: a backend sent the packet on (the load balancer never sets
 * it); MLV_SC_F_AT says to which hop. */
#define MLV_SC_F_REDIRECTED 0x01
/* flags: the hop addresses are IPv6 (the outer header is IPv6). */
#define MLV_SC_F_IPV6 0x02
/* flags, bits 2-3, with MLV_SC_F_REDIRECTED only: the index in the list
 * of the hop the packet was sent to. A backend that does not hold the
 * flow sends it on only to a later hop, so a packet reaches each listed
 * hop at most once and takes at most MLV_SC_MAX_HOPS extra hops: no
 * loop. A redirected block whose index is not below its hop count is
 * malformed. */
#define MLV_SC_F_AT_SHIFT 2
#define MLV_SC_F_AT_MASK 0x0C
/* The flag bits version 1 defines. */
#define MLV_SC_F_ALL (MLV_SC_F_REDIRECTED | MLV_SC_F_IPV6 | MLV_SC_F_AT_MASK)
/* Hop addresses a packet has room for. */
#define MLV_SC_MAX_HOPS 2
_Static_assert(MLV_SC_MAX_HOPS <= (MLV_SC_F_AT_MASK >> MLV_SC_F_AT_SHIFT) + 1,
	       "MLV_SC_F_AT indexes every hop");
/* The fixed part before the addresses. */
#define MLV_SC_HDR_LEN 4
/* The private data's length over IPv4 / IPv6: Hlen 3 / 9. */
#define MLV_SC_LEN4 (MLV_SC_HDR_LEN + MLV_SC_MAX_HOPS * 4)
#define MLV_SC_LEN6 (MLV_SC_HDR_LEN + MLV_SC_MAX_HOPS * 16)

/* The fixed part. */
struct mlv_sc_hdr {
	__u8 kind;      /* MLV_SC_KIND */
	__u8 version;   /* MLV_SC_VERSION */
	__u8 flags;     /* MLV_SC_F_* */
	__u8 hops;      /* valid addresses after this header */
};

#endif
