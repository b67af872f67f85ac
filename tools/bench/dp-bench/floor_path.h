/* SPDX-License-Identifier: BSD-3-Clause */
/* The packet path of dp-bench-floor: the least per-packet work any
 * connection-tracking load balancer must do, as a yardstick for maglevd
 * (docs/benchmarks.md, "The floor"). Per packet: check Ethernet type,
 * IPv4 without options, not a fragment, TCP or UDP, room for the ports
 * and the MTU; read the 5-tuple; CRC32 it; look it up in a set-
 * associative table of maglevd's geometry (32-byte entries, 4 ways,
 * dataplane/packet/conntrack.h); on a miss pick backend table[hash % 65537] and
 * insert; prepend an outer IPv4 header from the backend's template (ipip)
 * with the length and an incrementally adjusted checksum, rewriting the
 * Ethernet header; transmit the burst.
 *
 * Left out on purpose, because a load balancer could do without them or
 * maglevd does them for features beyond the minimum: VIP look-up,
 * counters (the PMDs count packets), expiry and connection state,
 * generations, IPv6, VLANs, ICMP. What stays is what dp-bench's IPv4
 * scenarios exercise in maglevd and no balancer can skip.
 *
 * The per-packet steps are in floor_pkt.h, the burst loop in floor_path.c.
 * Plain C over DPDK types; single worker, no locks. */
#ifndef DPB_FLOOR_PATH_H
#define DPB_FLOOR_PATH_H

#include <stdint.h>

#include <rte_ether.h>

/* Maglev's usual prime table size (control/tables/maglev.h uses the same). */
#define FLOOR_LOOKUP_SIZE 65537u
#define FLOOR_MAX_BACKENDS 8u
/* maglevd's bucket: 4 ways, two cache lines. */
#define FLOOR_WAYS 4u
#define FLOOR_BURST 32u
/* Ethernet plus outer IPv4: what ipip puts in front of the inner packet. */
#define FLOOR_ENCAP_LEN (RTE_ETHER_HDR_LEN + 20u)

/* One flow: the IPv4 5-tuple as two words and the backend, padded to
 * maglevd's 32-byte struct mlv_ct_entry, so the table has the same memory
 * footprint and a bucket the same two cache lines. A zeroed entry is
 * free: a real key's second word holds a non-zero protocol. */
struct floor_entry {
	uint64_t key[2];     /* src,dst addresses | ports, protocol */
	uint32_t backend;    /* index into floor_path.tmpl */
	uint8_t pad[12];
} __attribute__((aligned(32)));

_Static_assert(sizeof(struct floor_entry) == 32, "maglevd's entry size");

/* A backend's ipip header: Ethernet (next hop, port address, IPv4) and
 * outer IPv4 with total length 0; raw_sum is the ones'-complement sum of
 * that outer header with its checksum field zero, so a packet's checksum
 * is the complement of raw_sum plus its total length. */
struct floor_tmpl {
	uint8_t hdr[FLOOR_ENCAP_LEN];
	uint32_t raw_sum;
};

struct floor_path {
	struct floor_entry *entries;   /* n_buckets * FLOOR_WAYS, hugepages */
	uint32_t n_buckets;
	uint32_t rotor;                /* the way a full bucket gives up next */
	uint16_t rx_port, tx_port;
	uint16_t mtu;                  /* largest outer IPv4 packet */
	uint8_t lookup[FLOOR_LOOKUP_SIZE];    /* hash % size -> backend */
	struct floor_tmpl tmpl[FLOOR_MAX_BACKENDS];
	/* Written by the worker once per burst (relaxed), read by the main
	 * thread as statistics. */
	uint64_t misses;               /* look-ups that inserted */
	uint64_t drops;                /* failed a check; freed */
	uint64_t unsent;               /* the TX queue refused; freed */
	int stop;                      /* set by the main thread */
};

/* Fill p->tmpl[i] for a backend: Ethernet dst/src, outer IPv4 src/dst in
 * network order. Any thread, before the worker starts. */
void floor_tmpl_init(struct floor_tmpl *t, const struct rte_ether_addr *dst,
		     const struct rte_ether_addr *src, uint32_t ip_src_be,
		     uint32_t ip_dst_be);

/* The forwarding loop: receive from p->rx_port queue 0 in bursts of
 * FLOOR_BURST, forward, transmit to p->tx_port queue 0, until p->stop
 * (read relaxed: it needs no ordering, the main thread only waits for the
 * loop to end). An rte_eal_remote_launch function on one worker lcore;
 * returns 0. */
int floor_run(void *p);

#endif
