/* SPDX-License-Identifier: BSD-3-Clause */
/* Publishing generations to the workers, and reclaiming old ones with
 * quiescent-state-based RCU (rte_rcu_qsbr).
 *
 * The control thread owns the publisher. It makes a new generation visible
 * with one release store of the `current` pointer; workers load `current`
 * with acquire at the top of each poll loop iteration, use it for the whole
 * burst, and report a quiescent state at the end of the iteration, after
 * which they hold no generation pointer. A replaced generation is queued
 * with an RCU token; once every online worker has reported a quiescent
 * state after that token, no worker can still see it, and
 * mlv_publish_reclaim() frees it (calling the free hook first, so its
 * counters can be folded into totals: control/generation/stats.h).
 *
 * The queue is an intrusive FIFO through the generations themselves
 * (retire_token/retire_next), with tokens from rte_rcu_qsbr_start() and
 * non-blocking rte_rcu_qsbr_check(), instead of rte_rcu_qsbr_dq: the defer
 * queue is an rte_ring (EAL memory, a fixed capacity chosen up front, an
 * experimental API in DPDK 22.11), whereas the FIFO never fills, needs no
 * allocation when publishing and works without rte_eal_init, so the
 * publisher is unit-tested without EAL. Tokens increase monotonically, so
 * the FIFO is also in grace-period order: reclaim stops at the first
 * generation whose grace period has not ended.
 *
 * Worker ids are 0 .. n_workers-1 (the worker index, not the lcore id).
 * See docs/generations.md.
 */
#ifndef MLV_PUBLISH_H
#define MLV_PUBLISH_H

#include <stdint.h>

#include <rte_rcu_qsbr.h>

#include "control/base/error.h"
#include "control/generation/generation.h"

struct mlv_publish_hooks {
	/* Called by mlv_publish() with gen before it becomes visible; a
	 * non-OK return aborts the publish (nothing changes). May be NULL. */
	enum mlv_err (*on_publish)(struct mlv_generation *gen, void *ctx);
	/* Called with each generation right before it is freed, after its
	 * grace period: no worker writes its counters any more. May be NULL. */
	void (*on_free)(struct mlv_generation *gen, void *ctx);
	void *ctx;
};

struct mlv_publisher {
	/* Read by workers every loop: kept apart from control-only fields so
	 * queue updates do not invalidate the workers' cache line. */
	struct mlv_generation *current;
	struct rte_rcu_qsbr *qsbr;
	uint32_t n_workers;

	/* Control thread only. */
	struct mlv_generation *pending_head __rte_cache_aligned;
	struct mlv_generation *pending_tail;
	uint32_t n_pending;
	struct mlv_publish_hooks hooks;
} __rte_cache_aligned;

/* Create a publisher for n_workers (1 .. MLV_MAX_WORKERS) readers, with
 * no current generation. hooks may be NULL; it is copied. Returns MLV_OK
 * and *out, MLV_E_INVAL/MLV_E_RANGE on bad arguments, MLV_E_NOMEM.
 * Control thread, before the workers start. */
enum mlv_err mlv_publish_create(uint32_t n_workers,
				const struct mlv_publish_hooks *hooks,
				struct mlv_publisher **out);

/* Free the current generation and every pending one (each through the
 * free hook), then the publisher. Every worker must have stopped or gone
 * offline first: nothing waits here. NULL is ignored. Control thread. */
void mlv_publish_destroy(struct mlv_publisher *pub);

/* ---- worker side ---- */

/* Register worker as a reader and put it online: from now on reclaim
 * waits for its quiescent reports. Returns MLV_E_INVAL if worker >=
 * n_workers, MLV_E_DPDK if rte_rcu_qsbr refuses. The worker's own thread,
 * before its first mlv_publish_current(). */
enum mlv_err mlv_publish_worker_register(struct mlv_publisher *pub,
					 uint32_t worker);

/* Put worker offline and unregister it; reclaim stops waiting for it. The
 * worker must hold no generation pointer. The worker's own thread, on
 * exit. */
void mlv_publish_worker_unregister(struct mlv_publisher *pub, uint32_t worker);

/* The current generation, or NULL before the first publish. Acquire load:
 * everything the control thread wrote into the generation before
 * publishing it is visible. The pointer stays valid until the caller's
 * next mlv_publish_quiescent() or offline. Registered, online workers
 * (other threads holding no RCU registration may call it only if they
 * otherwise keep the generation alive, e.g. the control thread itself). */
static inline const struct mlv_generation *
mlv_publish_current(const struct mlv_publisher *pub)
{
	return __atomic_load_n(&pub->current, __ATOMIC_ACQUIRE);
}

/* Report that worker holds no generation pointer any more: once per poll
 * loop iteration, after the burst. Release store of the RCU counter:
 * every read of a generation before this call happens-before its free.
 * Costs a load and, only when a publish happened, a store. The worker's
 * own thread. */
static inline void mlv_publish_quiescent(struct mlv_publisher *pub,
					 uint32_t worker)
{
	rte_rcu_qsbr_quiescent(pub->qsbr, worker);
}

/* Stop / resume taking part in grace periods, e.g. around a long idle
 * sleep so reclaim need not wait for the sleeper. While offline the worker
 * must hold no generation pointer; after online it must re-read
 * mlv_publish_current(). The worker's own thread. */
static inline void mlv_publish_offline(struct mlv_publisher *pub,
				       uint32_t worker)
{
	rte_rcu_qsbr_thread_offline(pub->qsbr, worker);
}

static inline void mlv_publish_online(struct mlv_publisher *pub,
				      uint32_t worker)
{
	rte_rcu_qsbr_thread_online(pub->qsbr, worker);
}

/* ---- control side ---- */

/* Make gen the current generation (after the on_publish hook accepted
 * it). Release store: every write to gen before this call is visible to a
 * worker that loads it. The replaced generation, if any, is queued for
 * reclaim with a fresh RCU token; the publisher owns gen from now on.
 * Never blocks, never allocates. gen->number is the caller's business.
 * Returns MLV_OK, MLV_E_INVAL for NULL or the current generation, or the
 * hook's error (then the caller still owns gen). Control thread. */
enum mlv_err mlv_publish(struct mlv_publisher *pub, struct mlv_generation *gen);

/* Free, oldest first, every queued generation whose grace period has
 * ended; stops at the first that has not. Never blocks. Returns how many
 * were freed. Control thread, e.g. once per event-loop iteration. */
uint32_t mlv_publish_reclaim(struct mlv_publisher *pub);

/* Wait until every online worker has passed a quiescent state, then
 * reclaim everything queued. Blocks (spins) for as long as an online
 * worker does not report: for shutdown and tests. Returns how many were
 * freed. Control thread; never from a registered worker. */
uint32_t mlv_publish_wait(struct mlv_publisher *pub);

/* Generations queued and not yet freed. Control thread. */
uint32_t mlv_publish_pending(const struct mlv_publisher *pub);

#endif
