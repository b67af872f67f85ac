/* SPDX-License-Identifier: BSD-3-Clause */
/* The Internet checksum (RFC 1071) for the packet tests, written here on
 * purpose instead of reusing dataplane/packet/encap.c or DPDK's rte_ip helpers:
 * the checker must verify the daemon's checksums with code that shares
 * nothing with the code under test. Pure functions; any thread. */
#ifndef PKT_CSUM_H
#define PKT_CSUM_H

#include <stddef.h>
#include <stdint.h>

/* One's-complement sum of len bytes at data (big-endian 16-bit words, an
 * odd last byte padded with zero), added to sum. Not folded. */
uint32_t pkt_csum_add(uint32_t sum, const void *data, size_t len);

/* Fold a sum to 16 bits and complement it: the value to store in a
 * checksum field (host byte order). */
uint16_t pkt_csum_finish(uint32_t sum);

/* Sum of the TCP/UDP/ICMPv6 pseudo-header for family 4 or 6 (addresses in
 * network byte order, 4 or 16 bytes), upper-layer length and protocol. */
uint32_t pkt_csum_pseudo(int family, const uint8_t *src, const uint8_t *dst,
			 uint32_t l4_len, uint8_t proto);

/* True if the data (with its checksum field in place) sums to 0xffff, the
 * RFC 1071 verification rule. */
int pkt_csum_ok(uint32_t sum_including_field);

#endif
