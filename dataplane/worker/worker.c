/* SPDX-License-Identifier: BSD-3-Clause */
/* Worker set-up, teardown and the poll loop. */
#include "dataplane/worker/worker.h"

#include <sys/prctl.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "control/base/log.h"
#include "dataplane/worker/port.h"

static void *ct_alloc(size_t size, void *ctx)
{
	return rte_zmalloc_socket("mlv_conntrack", size, RTE_CACHE_LINE_SIZE,
				  (int)(intptr_t)ctx);
}

static void ct_release(void *ptr, void *ctx)
{
	(void)ctx;
	rte_free(ptr);
}

enum mlv_err mlv_worker_create(const struct mlv_worker_params *p,
			       struct mlv_worker **out)
{
	const struct mlv_ports *ps = p->ports;
	unsigned socket;
	struct mlv_worker *w;
	uint64_t tsc_per_ms;

	*out = NULL;
	if (!p->pub || !p->ct || !ps || p->id >= MLV_MAX_WORKERS)
		return MLV_E_INVAL;
	socket = mlv_lcore_socket(p->lcore);
	w = rte_zmalloc_socket("mlv_worker", sizeof(*w), RTE_CACHE_LINE_SIZE,
			       (int)socket);
	if (!w)
		return MLV_E_NOMEM;
	w->ct = mlv_ct_create(p->ct, ct_alloc, ct_release,
			      (void *)(intptr_t)socket);
	if (!w->ct || mlv_flow_tally_create(&w->tally) != MLV_OK) {
		mlv_ct_destroy(w->ct);
		rte_free(w);
		return MLV_E_NOMEM;
	}
	mlv_ct_set_tally(w->ct, w->tally);
	w->pub = p->pub;
	w->id = p->id;
	w->lcore = p->lcore;
	for (uint32_t i = 0; i < ps->n; i++) {
		const struct mlv_port_plan *plan = &ps->plan;

		w->tx[i].port_id = ps->port[i].port_id;
		w->tx[i].queue_id = (uint16_t)p->id;
		w->tx[i].vlan = ps->port[i].vlan;
		w->tx[i].vlan_hw = ps->port[i].vlan_tx_hw;
		if (ps->port[i].lacp)
			w->lacp_tx |= 1u << i;
		if (p->id >= ps->port[i].n_rxq)
			continue;
		if (ps->port[i].shared) {
			/* another VLAN of an earlier port's device: its
			 * frames come through that port's queue */
			struct mlv_rxq *owner = NULL;

			for (uint16_t q = 0; q < w->n_rxq; q++)
				if (w->rxq[q].cfg_idx == ps->port[i].owner)
					owner = &w->rxq[q];
			if (!owner)
				continue;
			owner->vrxq[owner->n_vrxq++] = (uint8_t)w->n_vrxq;
			w->vrxq[w->n_vrxq++] = (struct mlv_rxq){
				.port_id = ps->port[i].port_id,
				.queue_id = (uint16_t)p->id,
				.cfg_idx = (uint16_t)i,
				.exception_to = plan->exception == MLV_PORT_NONE ?
							MLV_PORT_NONE :
						plan->exception == i ? plan->exception_out :
								       plan->exception,
				.vlan = ps->port[i].vlan,
			};
			continue;
		}
		w->rxq[w->n_rxq++] = (struct mlv_rxq){
			.port_id = ps->port[i].port_id,
			.queue_id = (uint16_t)p->id,
			.cfg_idx = (uint16_t)i,
			.vlan = ps->port[i].vlan,
			.exception_to = plan->exception == MLV_PORT_NONE ?
						MLV_PORT_NONE :
					plan->exception == i ? plan->exception_out :
							       plan->exception,
		};
	}
	tsc_per_ms = rte_get_tsc_hz() / 1000;
	w->tsc_per_ms = rte_reciprocal_value_u64(tsc_per_ms ? tsc_per_ms : 1);
	w->tsc_start = rte_rdtsc();
	mlv_idle_init(&w->idle, p->idle == MLV_IDLE_ADAPTIVE,
		      p->idle_max_sleep_us);
	*out = w;
	return MLV_OK;
}

void mlv_worker_destroy(struct mlv_worker *w)
{
	if (!w)
		return;
	mlv_ct_destroy(w->ct);
	mlv_flow_tally_destroy(w->tally);
	rte_free(w);
}

/* The worker's millisecond clock for conntrack; wraps after 49 days,
 * which conntrack's modular comparisons allow. */
static inline uint32_t clock_ms(const struct mlv_worker *w, uint64_t tsc)
{
	return (uint32_t)rte_reciprocal_divide_u64(tsc - w->tsc_start,
						   &w->tsc_per_ms);
}

uint32_t mlv_worker_now_ms(const struct mlv_worker *w)
{
	return clock_ms(w, rte_rdtsc());
}

void mlv_worker_flush(struct mlv_worker *w)
{
	uint32_t dirty = w->tx_dirty;

	while (dirty) {
		unsigned i = (unsigned)__builtin_ctz(dirty);

		dirty &= dirty - 1;
		mlv_tx_flush(&w->tx[i], &w->ctr);
	}
	w->tx_dirty = 0;
}

bool mlv_worker_query_post(struct mlv_worker *w, const struct mlv_flow_key *key,
			   uint32_t hash)
{
	struct mlv_worker_query *q = &w->query;
	uint32_t done = __atomic_load_n(&q->resp_seq, __ATOMIC_ACQUIRE);

	if (done != q->req_seq)
		return false;          /* the worker may be reading key */
	q->key = *key;
	q->hash = hash;
	__atomic_store_n(&q->req_seq, done + 1, __ATOMIC_RELEASE);
	return true;
}

bool mlv_worker_list_post(struct mlv_worker *w, uint32_t first, uint32_t cap)
{
	struct mlv_worker_listing *l = &w->listing;
	uint32_t done = __atomic_load_n(&l->resp_seq, __ATOMIC_ACQUIRE);

	if (done != l->req_seq)
		return false;          /* the worker may be filling the page */
	l->first = first;
	l->cap = cap < MLV_CT_WAYS ? MLV_CT_WAYS :
		 cap > MLV_LIST_MAX ? MLV_LIST_MAX : cap;
	__atomic_store_n(&l->req_seq, done + 1, __ATOMIC_RELEASE);
	return true;
}

const struct mlv_worker_listing *mlv_worker_list_answer(const struct mlv_worker *w)
{
	const struct mlv_worker_listing *l = &w->listing;

	if (__atomic_load_n(&l->resp_seq, __ATOMIC_ACQUIRE) != l->req_seq)
		return NULL;
	return l;
}

void mlv_worker_list_serve(struct mlv_worker *w, uint32_t now_ms)
{
	struct mlv_worker_listing *l = &w->listing;
	uint32_t seq = __atomic_load_n(&l->req_seq, __ATOMIC_ACQUIRE);

	if (likely(seq == l->resp_seq))
		return;
	l->next = mlv_ct_scan(w->ct, l->first, MLV_LIST_BUCKETS, now_ms, l->e,
			      l->cap, &l->n);
	l->now_ms = now_ms;
	__atomic_store_n(&l->resp_seq, seq, __ATOMIC_RELEASE);
}

bool mlv_worker_query_answer(const struct mlv_worker *w,
			     struct mlv_worker_answer *out)
{
	const struct mlv_worker_query *q = &w->query;

	if (__atomic_load_n(&q->resp_seq, __ATOMIC_ACQUIRE) != q->req_seq)
		return false;
	*out = (struct mlv_worker_answer){
		.found = q->found,
		.state = q->state,
		.backend_uid = q->backend_uid,
		.expires_in_ms = q->expires_in_ms,
	};
	return true;
}

void mlv_worker_query_serve(struct mlv_worker *w, uint32_t now_ms)
{
	struct mlv_worker_query *q = &w->query;
	uint32_t seq = __atomic_load_n(&q->req_seq, __ATOMIC_ACQUIRE);
	const struct mlv_ct_entry *e;

	if (likely(seq == q->resp_seq))
		return;
	e = mlv_ct_lookup(w->ct, &q->key, q->hash, now_ms);
	q->found = e != NULL;
	q->state = e ? e->state : MLV_CT_FREE;
	q->backend_uid = e ? e->backend_uid : 0;
	/* modular: the clock wraps (see clock_ms); a live entry expires
	 * after now */
	q->expires_in_ms = e ? e->expires_ms - now_ms : 0;
	__atomic_store_n(&q->resp_seq, seq, __ATOMIC_RELEASE);
}

/* An 802.3ad bond sends its LACP frames from inside its TX burst, which
 * must be called every 100 ms or less even without traffic: an empty
 * burst on each such queue, at every housekeeping round and before every
 * idle sleep (at most idle_max_sleep_us apart). */
static void lacp_kick(struct mlv_worker *w)
{
	uint32_t ports = w->lacp_tx;
	struct rte_mbuf *none[1];

	while (ports) {
		unsigned i = (unsigned)__builtin_ctz(ports);

		ports &= ports - 1;
		(void)rte_eth_tx_burst(w->tx[i].port_id, w->tx[i].queue_id,
				       none, 0);
	}
}

/* Sleep without holding up grace periods: offline while asleep. */
static void idle_sleep(struct mlv_worker *w, uint32_t us)
{
	mlv_publish_offline(w->pub, w->id);
	rte_delay_us_sleep(us);
	mlv_publish_online(w->pub, w->id);
}

int mlv_worker_run(void *arg)
{
	struct mlv_worker *w = arg;
	struct rte_mbuf *pkts[MLV_BURST];
	uint32_t polls = 0;
	enum mlv_err err;

	/* the tally's pages, here, on this worker's node, not on the
	 * packet path */
	mlv_flow_tally_prefault(w->tally);
	err = mlv_publish_worker_register(w->pub, w->id);
	if (err) {
		w->exit_err = err;
		return -1;
	}
	/* Idle sleeps are microseconds; the default 50 us timer slack would
	 * stretch every one of them. */
	if (prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0) != 0)
		mlv_debug("worker %u: cannot lower the timer slack", w->id);
	mlv_debug("worker %u running on lcore %u with %u RX queues", w->id,
		  w->lcore, w->n_rxq);

	for (;;) {
		uint32_t got = 0, sleep_us = 0;

		for (uint16_t q = 0; q < w->n_rxq; q++) {
			const struct mlv_rxq *rxq = &w->rxq[q];
			uint16_t n = rte_eth_rx_burst(rxq->port_id, rxq->queue_id,
						      pkts, MLV_BURST);
			uint64_t t0;

			if (n == 0)
				continue;
			t0 = rte_rdtsc();
			mlv_forward_burst(w, mlv_publish_current(w->pub), rxq,
					  pkts, n, clock_ms(w, t0));
			mlv_worker_flush(w);
			w->ctr.ctr[MLV_CTR_BURSTS]++;
			w->ctr.ctr[MLV_CTR_BUSY_CYCLES] += rte_rdtsc() - t0;
			got += n;
		}
		if (unlikely((++polls & (MLV_HOUSEKEEPING_POLLS - 1)) == 0)) {
			uint32_t now = clock_ms(w, rte_rdtsc());

			mlv_forward_sweep(w, now);
			mlv_worker_query_serve(w, now);
			mlv_worker_list_serve(w, now);
			if (unlikely(w->lacp_tx))
				lacp_kick(w);
		}
		/* No generation pointer is held past this point. */
		mlv_publish_quiescent(w->pub, w->id);

		if (unlikely((polls & (MLV_HOUSEKEEPING_POLLS - 1)) == 0) &&
		    __atomic_load_n(&w->stop, __ATOMIC_RELAXED))
			break;
		switch (mlv_idle_step(&w->idle, got, &sleep_us)) {
		case MLV_IDLE_SPIN:
			break;
		case MLV_IDLE_PAUSE:
			rte_pause();
			break;
		case MLV_IDLE_SLEEP:
			if (unlikely(w->lacp_tx))
				lacp_kick(w);
			idle_sleep(w, sleep_us);
			if (__atomic_load_n(&w->stop, __ATOMIC_RELAXED))
				goto out;
			break;
		}
	}
out:
	mlv_worker_flush(w);
	mlv_publish_worker_unregister(w->pub, w->id);
	if (MLV_PASS_CYCLES) {
		char buf[256];

		mlv_pass_cycles_format(&w->ctr.pass, buf, sizeof(buf));
		mlv_info("worker %u: pass cycles per packet: %s", w->id, buf);
	}
	mlv_debug("worker %u stopped", w->id);
	return 0;
}
