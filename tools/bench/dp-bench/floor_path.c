/* SPDX-License-Identifier: BSD-3-Clause */
/* dp-bench-floor's packet path (see floor_path.h for what it does and
 * leaves out). Two passes over each burst, the discipline of a good DPDK
 * application: the first checks and hashes every frame and prefetches
 * its bucket (the data of the frame four places ahead prefetched in the
 * same loop); the second, by which time the buckets are on their way,
 * looks up, inserts and encapsulates. maglevd needs a third pass between
 * the two because its parser stores the key piece by piece (store
 * forwarding); here the key stays in registers, so hashing joins the
 * first pass. */
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "tools/bench/dp-bench/floor_path.h"
#include "tools/bench/dp-bench/floor_pkt.h"

/* maglevd's MLV_PREFETCH_AHEAD. */
#define PREFETCH_AHEAD 4u

void floor_tmpl_init(struct floor_tmpl *t, const struct rte_ether_addr *dst,
		     const struct rte_ether_addr *src, uint32_t ip_src_be,
		     uint32_t ip_dst_be)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)t->hdr;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);

	memset(t, 0, sizeof(*t));
	eth->dst_addr = *dst;
	eth->src_addr = *src;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_IPIP;
	ip->src_addr = ip_src_be;
	ip->dst_addr = ip_dst_be;
	t->raw_sum = rte_raw_cksum(ip, sizeof(*ip));
}

static inline void forward_burst(struct floor_path *p, struct rte_mbuf **pkts,
				 uint16_t n)
{
	uint64_t key[FLOOR_BURST][2];
	uint32_t hash[FLOOR_BURST];
	uint16_t ip_len[FLOOR_BURST];
	uint8_t ok[FLOOR_BURST];
	struct rte_mbuf *out[FLOOR_BURST], *drop[FLOOR_BURST];
	uint32_t n_out = 0, n_drop = 0, misses = 0, i;
	uint16_t sent;

	for (i = 0; i < n && i < PREFETCH_AHEAD; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	for (i = 0; i < n; i++) {
		if (i + PREFETCH_AHEAD < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + PREFETCH_AHEAD],
						       void *));
		ok[i] = (uint8_t)floor_parse(p, pkts[i], key[i], &ip_len[i]);
		if (unlikely(!ok[i]))
			continue;
		hash[i] = floor_hash(key[i]);
		/* The whole bucket: maglevd measured it cheaper than the
		 * preferred way's line alone (docs/conntrack.md).
		 * rte_prefetch0 is an asm volatile, which GCC 12 keeps (it
		 * deletes a loop of bare __builtin_prefetch calls: see
		 * mlv_ct__prefetch_line in dataplane/packet/conntrack.h). */
		const char *b = (const char *)floor_bucket(p, hash[i]);

		rte_prefetch0(b);
		rte_prefetch0(b + RTE_CACHE_LINE_SIZE);
	}
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		if (likely(ok[i])) {
			uint32_t be = floor_backend(p, key[i], hash[i], &misses);

			if (likely(floor_encap(&p->tmpl[be], m, ip_len[i]))) {
				out[n_out++] = m;
				continue;
			}
		}
		drop[n_drop++] = m;
	}
	sent = rte_eth_tx_burst(p->tx_port, 0, out, (uint16_t)n_out);
	if (unlikely(sent < n_out)) {
		rte_pktmbuf_free_bulk(out + sent, n_out - sent);
		__atomic_store_n(&p->unsent, p->unsent + (n_out - sent),
				 __ATOMIC_RELAXED);
	}
	if (unlikely(n_drop)) {
		rte_pktmbuf_free_bulk(drop, n_drop);
		__atomic_store_n(&p->drops, p->drops + n_drop, __ATOMIC_RELAXED);
	}
	if (misses)
		__atomic_store_n(&p->misses, p->misses + misses,
				 __ATOMIC_RELAXED);
}

int floor_run(void *arg)
{
	struct floor_path *p = arg;
	struct rte_mbuf *pkts[FLOOR_BURST];

	while (!__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) {
		uint16_t n = rte_eth_rx_burst(p->rx_port, 0, pkts, FLOOR_BURST);

		if (n)
			forward_burst(p, pkts, n);
	}
	return 0;
}
