/* SPDX-License-Identifier: BSD-3-Clause */
/* New-flow rate limits (new_flows_per_second): one token bucket per VIP
 * and worker, so that a flood of new flows to one VIP is cut to its rate
 * before it can claim conntrack entries (and evict other VIPs' flows) or
 * take the worker's time. Established flows never reach a bucket. Plain
 * C, no DPDK types.
 *
 * Units: a bucket holds "flow-milliseconds per worker": one new flow costs
 * 1000 x n_workers of them, and every millisecond adds `rate` (the VIP's
 * new flows per second), so each worker admits rate / n_workers flows a
 * second, exactly, in integers. The workers' share of a VIP's flows is
 * RSS's, which spreads flows evenly across workers.
 *
 * Threads: a bucket is written only by its worker (mlv_flow_bucket_take);
 * the control thread initialises it before the generation holding it is
 * published and may read it racily afterwards (aligned 64-bit loads do
 * not tear on x86-64 or arm64) to carry its level into the next
 * generation. */
#ifndef MLV_PACKET_FLOW_LIMIT_H
#define MLV_PACKET_FLOW_LIMIT_H

#include <stdbool.h>
#include <stdint.h>

/* Refill at most this long a gap: beyond it the bucket is full anyway
 * for every rate (and the product cannot overflow). */
#define MLV_FLOW_BUCKET_MAX_GAP_MS 60000u

/* One VIP's bucket on one worker. */
struct mlv_flow_bucket {
	uint64_t tokens;   /* flow-milliseconds left */
	uint32_t last_ms;  /* the worker's clock at the last take */
	uint32_t pad;
};

/* A VIP's limit as the workers use it; rate 0 = no limit. */
struct mlv_flow_limit {
	uint32_t rate;     /* new flows per second, the whole VIP */
	uint64_t cost;     /* tokens one flow takes: 1000 x n_workers */
	uint64_t cap;      /* a full bucket: the per-worker burst x cost */
};

/* Take one new flow's tokens from b at now_ms (the worker's millisecond
 * clock): true if the flow is admitted, false if it is over the rate.
 * Refills by the time since the last take first. Worker thread that owns
 * b. */
static inline bool mlv_flow_bucket_take(struct mlv_flow_bucket *b,
					const struct mlv_flow_limit *l,
					uint32_t now_ms)
{
	uint32_t gap = now_ms - b->last_ms;
	uint64_t t;

	if (gap > MLV_FLOW_BUCKET_MAX_GAP_MS)
		gap = MLV_FLOW_BUCKET_MAX_GAP_MS;
	t = b->tokens + (uint64_t)gap * l->rate;
	if (t > l->cap)
		t = l->cap;
	b->last_ms = now_ms;
	if (t < l->cost) {
		b->tokens = t;
		return false;
	}
	b->tokens = t - l->cost;
	return true;
}

/* The limit for rate new flows a second with burst flows at once (0: a
 * tenth of a second's worth), split across n_workers: each worker's
 * bucket holds ceil(burst / n_workers) flows, at least one. rate 0 gives
 * no limit. Pure; any thread. */
static inline struct mlv_flow_limit mlv_flow_limit_make(uint32_t rate,
							 uint32_t burst,
							 uint32_t n_workers)
{
	struct mlv_flow_limit l = { 0, 0, 0 };
	uint64_t per_worker;

	if (rate == 0 || n_workers == 0)
		return l;
	if (burst == 0)
		burst = (rate + 9) / 10;
	/* burst >= 1 here, so this is at least 1 */
	per_worker = ((uint64_t)burst + n_workers - 1) / n_workers;
	l.rate = rate;
	l.cost = 1000ull * n_workers;
	l.cap = per_worker * l.cost;
	return l;
}

#endif
