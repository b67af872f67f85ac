/* SPDX-License-Identifier: BSD-3-Clause */
/* A worker's transmit buffer for one port: frames wait here until the
 * buffer is full or the burst is done, then leave in one rte_eth_tx_burst
 * on the worker's own TX queue.
 *
 * Why not rte_eth_tx_buffer: every frame must be counted exactly once, as
 * the outcome it was sent for (forwarded, ICMP reply, exception) or, when
 * the queue is full, as a TX_FULL drop. rte_eth_tx_buffer's error
 * callback sees only the unsent mbufs, not what each was sent for, so the
 * outcome of each frame is kept here alongside, and frames are counted
 * when the device has taken them.
 *
 * Owner worker only; inline because it runs per packet.
 */
#ifndef MLV_TX_BUFFER_H
#define MLV_TX_BUFFER_H

#include <stdint.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include "dataplane/packet/counters.h"

#define MLV_TX_BUFFER_SIZE 32

struct mlv_tx_buffer {
	uint16_t port_id;
	uint16_t queue_id;
	uint16_t n;
	uint16_t vlan;          /* a VLAN port's ID: frames leave tagged
				   (mlv_tx_tag); 0: untagged */
	uint8_t vlan_hw;        /* the NIC inserts the tag (TX VLAN offload) */
	/* what each buffered frame was sent for, by bit (frame i: bit i):
	 * ICMP_SENT or EXCEPTION; a frame in neither mask is FORWARDED, the
	 * common case, which so stores nothing but the frame (and the
	 * forwarded frames of a burst arrive together:
	 * mlv_tx_enqueue_forwarded) */
	uint32_t icmp_mask, exc_mask;
	uint64_t fwd_bytes;     /* sum of the forwarded frames' lengths */
	struct rte_mbuf *pkts[MLV_TX_BUFFER_SIZE];
};

_Static_assert(MLV_TX_BUFFER_SIZE <= 32, "a frame's outcome is a bit of 32");

/* Send what is buffered; count sent frames by outcome and the rest as
 * TX_FULL drops (freed). A device may free the mbufs it took inside
 * rte_eth_tx_burst, so the sent frames are counted from what was kept at
 * enqueue minus what the unsent ones, still ours, contribute. */
static inline void mlv_tx_flush(struct mlv_tx_buffer *b,
				struct mlv_worker_counters *c)
{
	uint16_t n = b->n, sent;
	uint32_t n_icmp, n_exc;
	uint64_t t0 = 0;

	if (n == 0)
		return;
	if (MLV_PASS_CYCLES)
		t0 = rte_rdtsc();
	sent = rte_eth_tx_burst(b->port_id, b->queue_id, b->pkts, n);
	if (MLV_PASS_CYCLES)
		c->pass.cycles[MLV_PASS_FLUSH] += rte_rdtsc() - t0;
	if (unlikely(sent < n)) {
		/* frames sent..n-1 stay ours: none of them counts (sent < n
		 * <= 32, so the shift is defined) */
		uint32_t sent_mask = (1u << sent) - 1;
		uint32_t other = b->icmp_mask | b->exc_mask;

		for (uint16_t i = sent; i < n; i++)
			if (!(other >> i & 1))
				b->fwd_bytes -= b->pkts[i]->pkt_len;
		b->icmp_mask &= sent_mask;
		b->exc_mask &= sent_mask;
		c->drop[MLV_DROP_TX_FULL] += (uint64_t)(n - sent);
		rte_pktmbuf_free_bulk(&b->pkts[sent], n - sent);
	}
	n_icmp = (uint32_t)__builtin_popcount(b->icmp_mask);
	n_exc = (uint32_t)__builtin_popcount(b->exc_mask);
	c->ctr[MLV_CTR_FORWARDED] += sent - n_icmp - n_exc;
	c->ctr[MLV_CTR_ICMP_SENT] += n_icmp;
	c->ctr[MLV_CTR_EXCEPTION] += n_exc;
	c->ctr[MLV_CTR_TX_BYTES] += b->fwd_bytes;
	b->n = 0;
	b->icmp_mask = b->exc_mask = 0;
	b->fwd_bytes = 0;
}

/* A frame leaving a VLAN port (b->vlan set): tagged with the port's VLAN
 * (priority 0) unless it carries a tag already (an ICMP reply keeps its
 * request's), by the NIC when it inserts tags, else in the frame (4
 * bytes of headroom). Returns 0, or -1 when the frame has no room for
 * the tag (the caller drops it: it must not leave untagged). */
static inline int mlv_tx_tag(const struct mlv_tx_buffer *b, struct rte_mbuf **m)
{
	const uint8_t *eth = rte_pktmbuf_mtod(*m, const uint8_t *);

	if (eth[12] == 0x81 && eth[13] == 0x00)
		return 0;
	(*m)->vlan_tci = b->vlan;
	if (b->vlan_hw) {
		(*m)->ol_flags |= RTE_MBUF_F_TX_VLAN;
		return 0;
	}
	return rte_vlan_insert(m) == 0 ? 0 : -1;
}

/* Buffer m for sending as outcome (MLV_CTR_FORWARDED, MLV_CTR_ICMP_SENT or
 * MLV_CTR_EXCEPTION); sends at once when the buffer fills up. On a VLAN
 * port m is tagged first (a frame without room for the tag is a
 * NO_HEADROOM drop). */
static inline void mlv_tx_enqueue(struct mlv_tx_buffer *b,
				  struct mlv_worker_counters *c,
				  struct rte_mbuf *m, enum mlv_worker_counter outcome)
{
	uint16_t i = b->n;

	if (unlikely(b->vlan) && mlv_tx_tag(b, &m) != 0) {
		c->drop[MLV_DROP_NO_HEADROOM]++;
		rte_pktmbuf_free(m);
		return;
	}
	b->pkts[i] = m;
	b->n = (uint16_t)(i + 1);
	if (likely(outcome == MLV_CTR_FORWARDED))
		b->fwd_bytes += m->pkt_len;
	else if (outcome == MLV_CTR_ICMP_SENT)
		b->icmp_mask |= 1u << i;
	else
		b->exc_mask |= 1u << i;
	if (unlikely(b->n == MLV_TX_BUFFER_SIZE))
		mlv_tx_flush(b, c);
}

/* Buffer n frames forwarded (n <= MLV_TX_BUFFER_SIZE), bytes their total
 * length, in order after what the buffer holds, which is sent first if
 * they do not all fit. A burst's forwarded frames wait in the worker's
 * own array and come here together: per frame, a store and an add in
 * registers, where mlv_tx_enqueue's loads and stores through the buffer
 * cost 13 instructions (docs/benchmarks.md, "Why the data path is as it
 * is"). */
static inline void mlv_tx_enqueue_forwarded(struct mlv_tx_buffer *b,
					    struct mlv_worker_counters *c,
					    struct rte_mbuf *const *pkts,
					    uint16_t n, uint64_t bytes)
{
	if (unlikely(b->n + n > MLV_TX_BUFFER_SIZE))
		mlv_tx_flush(b, c);
	memcpy(&b->pkts[b->n], pkts, n * sizeof(*pkts));
	b->n = (uint16_t)(b->n + n);
	b->fwd_bytes += bytes;
	if (b->n == MLV_TX_BUFFER_SIZE)
		mlv_tx_flush(b, c);
}

#endif
