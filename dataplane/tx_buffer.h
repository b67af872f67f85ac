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

#include <rte_cycles.h>
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
	struct rte_mbuf *pkts[MLV_TX_BUFFER_SIZE];
};

/* Send what is buffered; count sent frames by outcome and the rest as
 * TX_FULL drops (freed). A device may free the mbufs it took inside
 * rte_eth_tx_burst, so the sent frames are counted from the sums kept at
 * enqueue minus what the unsent ones, still ours, contribute. */
static inline void mlv_tx_flush(struct mlv_tx_buffer *b,
				struct mlv_worker_counters *c)
{
	uint16_t n = b->n, sent;
	uint64_t t0 = 0;

	if (n == 0)
		return;
	if (MLV_PASS_CYCLES)
		t0 = rte_rdtsc();
	sent = rte_eth_tx_burst(b->port_id, b->queue_id, b->pkts, n);
	if (MLV_PASS_CYCLES)
		c->pass.cycles[MLV_PASS_FLUSH] += rte_rdtsc() - t0;
	if (unlikely(sent < n)) {
		for (uint16_t i = sent; i < n; i++) {
			switch (b->outcome[i]) {
			case MLV_CTR_FORWARDED:
				b->n_fwd--;
				b->fwd_bytes -= b->pkts[i]->pkt_len;
				break;
			case MLV_CTR_ICMP_SENT:
				b->n_icmp--;
				break;
			default:
				b->n_exc--;
			}
		}
		c->drop[MLV_DROP_TX_FULL] += (uint64_t)(n - sent);
		rte_pktmbuf_free_bulk(&b->pkts[sent], n - sent);
	}
	c->ctr[MLV_CTR_FORWARDED] += b->n_fwd;
	c->ctr[MLV_CTR_ICMP_SENT] += b->n_icmp;
	c->ctr[MLV_CTR_EXCEPTION] += b->n_exc;
	c->ctr[MLV_CTR_TX_BYTES] += b->fwd_bytes;
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

	b->pkts[i] = m;
	b->outcome[i] = (uint8_t)outcome;
	b->n = (uint16_t)(i + 1);
	if (likely(outcome == MLV_CTR_FORWARDED)) {
		b->n_fwd++;
		b->fwd_bytes += m->pkt_len;
	} else if (outcome == MLV_CTR_ICMP_SENT) {
		b->n_icmp++;
	} else {
		b->n_exc++;
	}
	if (unlikely(b->n == MLV_TX_BUFFER_SIZE))
		mlv_tx_flush(b, c);
}

#endif
