/* SPDX-License-Identifier: BSD-3-Clause */
#include "control/publish/publish.h"

#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

enum mlv_err mlv_publish_create(uint32_t n_workers,
				const struct mlv_publish_hooks *hooks,
				struct mlv_publisher **out)
{
	struct mlv_publisher *pub = NULL;
	size_t qsbr_size;
	enum mlv_err err = MLV_E_NOMEM;

	if (!out)
		return MLV_E_INVAL;
	*out = NULL;
	if (n_workers == 0 || n_workers > MLV_MAX_WORKERS)
		return MLV_E_RANGE;

	/* Plain aligned memory, not rte_zmalloc: the QSBR variable is just
	 * counters, and this keeps the publisher usable without EAL. */
	pub = aligned_alloc(RTE_CACHE_LINE_SIZE,
			    RTE_ALIGN_CEIL(sizeof(*pub), RTE_CACHE_LINE_SIZE));
	if (!pub)
		goto fail;
	memset(pub, 0, sizeof(*pub));
	qsbr_size = rte_rcu_qsbr_get_memsize(n_workers);
	if (qsbr_size == 1) { /* its error value */
		err = MLV_E_DPDK;
		goto fail;
	}
	pub->qsbr = aligned_alloc(RTE_CACHE_LINE_SIZE,
				  RTE_ALIGN_CEIL(qsbr_size, RTE_CACHE_LINE_SIZE));
	if (!pub->qsbr)
		goto fail;
	if (rte_rcu_qsbr_init(pub->qsbr, n_workers) != 0) {
		err = MLV_E_DPDK;
		goto fail;
	}
	pub->n_workers = n_workers;
	if (hooks)
		pub->hooks = *hooks;
	*out = pub;
	return MLV_OK;
fail:
	if (pub)
		free(pub->qsbr);
	free(pub);
	return err;
}

static void free_generation(struct mlv_publisher *pub, struct mlv_generation *gen)
{
	if (pub->hooks.on_free)
		pub->hooks.on_free(gen, pub->hooks.ctx);
	mlv_gen_free(gen);
}

void mlv_publish_destroy(struct mlv_publisher *pub)
{
	struct mlv_generation *gen, *next;

	if (!pub)
		return;
	for (gen = pub->pending_head; gen; gen = next) {
		next = gen->retire_next;
		free_generation(pub, gen);
	}
	if (pub->current)
		free_generation(pub, pub->current);
	free(pub->qsbr);
	free(pub);
}

enum mlv_err mlv_publish_worker_register(struct mlv_publisher *pub,
					 uint32_t worker)
{
	if (!pub || worker >= pub->n_workers)
		return MLV_E_INVAL;
	if (rte_rcu_qsbr_thread_register(pub->qsbr, worker) != 0)
		return MLV_E_DPDK;
	rte_rcu_qsbr_thread_online(pub->qsbr, worker);
	return MLV_OK;
}

void mlv_publish_worker_unregister(struct mlv_publisher *pub, uint32_t worker)
{
	if (!pub || worker >= pub->n_workers)
		return;
	rte_rcu_qsbr_thread_offline(pub->qsbr, worker);
	rte_rcu_qsbr_thread_unregister(pub->qsbr, worker);
}

enum mlv_err mlv_publish(struct mlv_publisher *pub, struct mlv_generation *gen)
{
	struct mlv_generation *old;
	enum mlv_err err;

	if (!pub || !gen || gen == pub->current)
		return MLV_E_INVAL;
	if (pub->hooks.on_publish) {
		err = pub->hooks.on_publish(gen, pub->hooks.ctx);
		if (err)
			return err;
	}

	/* Only this thread stores `current`, so a release exchange is all the
	 * ordering needed: it publishes the generation's contents with the
	 * pointer. */
	old = __atomic_exchange_n(&pub->current, gen, __ATOMIC_RELEASE);
	if (!old)
		return MLV_OK;

	/* The token is taken after the swap (rte_rcu_qsbr_start is a release
	 * increment), so a worker that reports it has reloaded `current` and
	 * can no longer hold old. */
	old->retire_token = rte_rcu_qsbr_start(pub->qsbr);
	old->retire_next = NULL;
	if (pub->pending_tail)
		pub->pending_tail->retire_next = old;
	else
		pub->pending_head = old;
	pub->pending_tail = old;
	pub->n_pending++;
	return MLV_OK;
}

uint32_t mlv_publish_reclaim(struct mlv_publisher *pub)
{
	uint32_t freed = 0;

	while (pub->pending_head &&
	       rte_rcu_qsbr_check(pub->qsbr, pub->pending_head->retire_token,
				  false) == 1) {
		struct mlv_generation *gen = pub->pending_head;

		pub->pending_head = gen->retire_next;
		if (!pub->pending_head)
			pub->pending_tail = NULL;
		pub->n_pending--;
		free_generation(pub, gen);
		freed++;
	}
	return freed;
}

uint32_t mlv_publish_wait(struct mlv_publisher *pub)
{
	/* A new token covers every queued one: once all online workers have
	 * reported it, every queued generation is past its grace period. */
	if (!pub->pending_head)
		return 0;
	rte_rcu_qsbr_synchronize(pub->qsbr, RTE_QSBR_THRID_INVALID);
	return mlv_publish_reclaim(pub);
}

uint32_t mlv_publish_pending(const struct mlv_publisher *pub)
{
	return pub->n_pending;
}
