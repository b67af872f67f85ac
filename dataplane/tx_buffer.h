/* A worker's transmit buffer for one port: frames wait here until the
 * buffer is full or the burst is done, then leave in one rte_eth_tx_burst
 * on the worker's own TX queue.
 *
 * Why not rte_eth_tx_buffer: every frame must be counted exactly once, as
 * the outcome it was sent for (forwarded, ICMP reply, exception) or, when
 * the queue is full, as a TX_FULL drop. rte_eth_tx_buffer's error
 * callback sees only the unsent mbufs, which it may not even read safely
 * for lengths, so the outcome and length of each frame are kept here
 * alongside, and frames are counted when the device took them.
 *
 * Owner worker only; inline because it runs per packet.
 */
#ifndef MLV_TX_BUFFER_H
#define MLV_TX_BUFFER_H

#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "dataplane/counters.h"

#define MLV_TX_BUFFER_SIZE 32

struct mlv_tx_buffer {
	uint16_t port_id;
	uint16_t queue_id;
	uint16_t n;
	/* per-outcome sums of the buffered frames, so a complete send is
	 * counted without walking the arrays */
	uint16_t n_fwd, n_icmp, n_exc;
	uint64_t fwd_bytes;
	uint8_t outcome[MLV_TX_BUFFER_SIZE];   /* MLV_CTR_FORWARDED/ICMP_SENT/EXCEPTION */
	uint32_t len[MLV_TX_BUFFER_SIZE];      /* pkt_len when buffered */
	struct rte_mbuf *pkts[MLV_TX_BUFFER_SIZE];
};

/* Send what is buffered; count sent frames by outcome and the rest as
 * TX_FULL drops (freed). Lengths were recorded at enqueue because a
 * device may free an mbuf inside rte_eth_tx_burst. */
static inline void mlv_tx_flush(struct mlv_tx_buffer *b,
				struct mlv_worker_counters *c)
{
	uint16_t n = b->n, sent;

	if (n == 0)
		return;
	sent = rte_eth_tx_burst(b->port_id, b->queue_id, b->pkts, n);
	if (likely(sent == n)) {
		c->ctr[MLV_CTR_FORWARDED] += b->n_fwd;
		c->ctr[MLV_CTR_ICMP_SENT] += b->n_icmp;
		c->ctr[MLV_CTR_EXCEPTION] += b->n_exc;
		c->ctr[MLV_CTR_TX_BYTES] += b->fwd_bytes;
	} else {
		for (uint16_t i = 0; i < sent; i++) {
			c->ctr[b->outcome[i]]++;
			if (b->outcome[i] == MLV_CTR_FORWARDED)
				c->ctr[MLV_CTR_TX_BYTES] += b->len[i];
		}
		c->drop[MLV_DROP_TX_FULL] += (uint64_t)(n - sent);
		rte_pktmbuf_free_bulk(&b->pkts[sent], n - sent);
	}
	b->n = 0;
	b->n_fwd = b->n_icmp = b->n_exc = 0;
	b->fwd_bytes = 0;
}

/* Buffer m for sending as outcome (MLV_CTR_FORWARDED, MLV_CTR_ICMP_SENT or
 * MLV_CTR_EXCEPTION); sends at once when the buffer fills up. */
static inline void mlv_tx_enqueue(struct mlv_tx_buffer *b,
				  struct mlv_worker_counters *c,
				  struct rte_mbuf *m, enum mlv_worker_counter outcome)
{
	uint16_t i = b->n;
	uint32_t len = m->pkt_len;

	b->pkts[i] = m;
	b->outcome[i] = (uint8_t)outcome;
	b->len[i] = len;
	b->n = (uint16_t)(i + 1);
	if (outcome == MLV_CTR_FORWARDED) {
		b->n_fwd++;
		b->fwd_bytes += len;
	} else if (outcome == MLV_CTR_ICMP_SENT) {
		b->n_icmp++;
	} else {
		b->n_exc++;
	}
	if (unlikely(b->n == MLV_TX_BUFFER_SIZE))
		mlv_tx_flush(b, c);
}

#endif
