/* SPDX-License-Identifier: BSD-3-Clause */
/* The per-packet steps of dp-bench-floor (floor_path.h says what the
 * floor does and leaves out), inline for its burst loop and visible to
 * its unit test (tests/unit/bench/test_floor.c). Owner worker of the
 * floor_path; pure where they take no floor_path. */
#ifndef DPB_FLOOR_PKT_H
#define DPB_FLOOR_PKT_H

#include <string.h>

#include <nmmintrin.h>
#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "tools/bench/dp-bench/floor_path.h"

#if !defined(__SSE4_2__)
#error "dp-bench-floor hashes with the SSE4.2 CRC32 instruction, as maglevd's data plane does (DPDK's -march)"
#endif

/* maglevd's flow hash seed (dataplane/packet/flow_hash.h) */
#define FLOOR_HASH_SEED 0x4D474C56u
/* Ethernet, IPv4 without options, the two ports. */
#define FLOOR_MIN_FRAME (RTE_ETHER_HDR_LEN + 20u + 4u)

/* The key's hash: two CRC32C steps over its words, as maglevd hashes its
 * 40-byte key in five. Pure. */
static inline uint32_t floor_hash(const uint64_t key[2])
{
	return (uint32_t)_mm_crc32_u64(_mm_crc32_u64(FLOOR_HASH_SEED, key[0]),
				       key[1]);
}

/* maglevd's bucket choice: multiply-shift of the hash's high bits, any
 * bucket count without a division. */
static inline struct floor_entry *floor_bucket(const struct floor_path *p,
					       uint32_t hash)
{
	uint32_t b = (uint32_t)(((uint64_t)hash * p->n_buckets) >> 32);

	return &p->entries[(size_t)b * FLOOR_WAYS];
}

/* Check one frame and read its key and IPv4 total length; 1, or 0 if it
 * is to be dropped. The IPv4
 * addresses are contiguous in the header, so the first key word is one
 * load; the second is the ports and the protocol. */
static inline int floor_parse(const struct floor_path *p,
			      const struct rte_mbuf *m, uint64_t key[2],
			      uint16_t *ip_len)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct rte_ether_hdr *eth = (const struct rte_ether_hdr *)d;
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eth + 1);
	uint32_t ports;

	if (unlikely(m->data_len < FLOOR_MIN_FRAME ||
		     eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
		     ip->version_ihl != RTE_IPV4_VHL_DEF ||
		     (ip->fragment_offset &
		      rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG |
				       RTE_IPV4_HDR_OFFSET_MASK)) ||
		     (ip->next_proto_id != IPPROTO_TCP &&
		      ip->next_proto_id != IPPROTO_UDP)))
		return 0;
	*ip_len = rte_be_to_cpu_16(ip->total_length);
	if (unlikely(*ip_len + 20u > p->mtu))
		return 0;
	memcpy(&key[0], &ip->src_addr, 8);
	memcpy(&ports, ip + 1, 4);
	key[1] = ports | (uint64_t)ip->next_proto_id << 32;
	return 1;
}

/* The flow's backend index (into p->tmpl): a hit from its preferred way
 * on, else an insert into the first free way, else into the way the rotor
 * points at (the cheapest replacement policy: no timestamps to keep),
 * counted in *misses. */
static inline uint32_t floor_backend(struct floor_path *p,
				     const uint64_t key[2], uint32_t hash,
				     uint32_t *misses)
{
	struct floor_entry *b = floor_bucket(p, hash), *e;
	uint32_t w = hash & (FLOOR_WAYS - 1), i;

	for (i = 0; i < FLOOR_WAYS; i++) {
		e = &b[(w + i) & (FLOOR_WAYS - 1)];
		if (((e->key[0] ^ key[0]) | (e->key[1] ^ key[1])) == 0)
			return e->backend;
	}
	for (i = 0; i < FLOOR_WAYS; i++) {
		e = &b[(w + i) & (FLOOR_WAYS - 1)];
		if (e->key[1] == 0)
			break;
	}
	if (i == FLOOR_WAYS)
		e = &b[p->rotor++ & (FLOOR_WAYS - 1)];
	e->key[0] = key[0];
	e->key[1] = key[1];
	e->backend = p->lookup[hash % FLOOR_LOOKUP_SIZE];
	(*misses)++;
	return e->backend;
}

/* ipip: the backend's Ethernet and outer IPv4 header in front of the
 * inner packet (whose own Ethernet header the prepend overwrites), with
 * the outer total length and its checksum (RFC 1624: the template's sum
 * plus the one field that changed). 0 if the headroom is too small. */
static inline int floor_encap(const struct floor_tmpl *t, struct rte_mbuf *m,
			      uint16_t ip_len)
{
	uint8_t *hdr = (uint8_t *)rte_pktmbuf_prepend(m, 20);
	struct rte_ipv4_hdr *ip;
	uint16_t len_be;
	uint32_t sum;

	if (unlikely(hdr == NULL))
		return 0;
	memcpy(hdr, t->hdr, FLOOR_ENCAP_LEN);
	ip = (struct rte_ipv4_hdr *)(hdr + RTE_ETHER_HDR_LEN);
	len_be = rte_cpu_to_be_16((uint16_t)(ip_len + 20u));
	ip->total_length = len_be;
	sum = t->raw_sum + len_be;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	ip->hdr_checksum = (uint16_t)~sum;
	return 1;
}

#endif
