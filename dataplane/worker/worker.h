/* SPDX-License-Identifier: BSD-3-Clause */
/* A data-plane worker: one per worker lcore. It polls its own RX queue on
 * every port, forwards each burst (dataplane/worker/forward.c), transmits on its
 * own TX queue of the chosen port, reports an RCU quiescent state once per
 * poll loop, and every MLV_HOUSEKEEPING_POLLS loops checks for stop,
 * sweeps a few conntrack buckets and answers the control thread's
 * conntrack question (struct mlv_worker_query). No locks, syscalls, allocation or
 * logging per packet; the only syscalls are the adaptive idle sleeps.
 *
 * Threads: create/destroy and request_stop on the control thread;
 * mlv_worker_run on the worker's lcore. The control thread reads the
 * counters and conntrack statistics racily (see dataplane/packet/counters.h).
 */
#ifndef MLV_WORKER_H
#define MLV_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_reciprocal.h>

#include "control/config/config.h"
#include "control/base/error.h"
#include "control/publish/publish.h"
#include "dataplane/packet/conntrack.h"
#include "dataplane/packet/counters.h"
#include "dataplane/worker/idle.h"
#include "dataplane/worker/tx_buffer.h"

#define MLV_BURST 32
/* Packets ahead of the one being parsed whose data is prefetched. */
#define MLV_PREFETCH_AHEAD 4
/* Poll loops between stop checks and conntrack sweeps (a power of two). */
#define MLV_HOUSEKEEPING_POLLS 64u
/* Conntrack buckets swept per housekeeping round at least. */
#define MLV_SWEEP_BUCKETS 4u
/* The whole conntrack table is swept at least once per this period
 * (while housekeeping runs), so that an expired flow leaves the tally,
 * which operators drain by, within about a second of its timeout, however
 * large the table and however idle the worker. */
#define MLV_SWEEP_PERIOD_MS 1000u

/* One RX queue this worker polls. */
struct mlv_rxq {
	uint16_t port_id;        /* DPDK port */
	uint16_t queue_id;
	uint16_t cfg_idx;        /* config port index (gen->ports[]) */
	/* where non-VIP frames from this port go: a config port index (the
	 * exception port, or for frames from the exception port itself the
	 * port toward the wire), or MLV_PORT_NONE to drop them */
	uint16_t exception_to;
	uint16_t vlan;           /* the port's VLAN: only its frames are
				    taken (vlan_burst); 0: any */
	/* the other VLAN ports of this queue's device (struct mlv_port
	 * shared): their frames arrive here and go on as theirs, through
	 * w->vrxq[vrxq[k]] */
	uint8_t n_vrxq;
	uint8_t vrxq[MLV_MAX_PORTS - 1];
};

/* The control thread's question to one worker: does your conntrack
 * table hold this flow? A single-slot mailbox, because conntrack belongs
 * to its worker and reading it from another thread could see a torn
 * entry. Protocol (sequence numbers only grow):
 *   control: only while resp_seq == req_seq (idle), write key and hash,
 *            then release-store req_seq = resp_seq + 1;
 *   worker:  every housekeeping round, acquire-load req_seq; if it
 *            differs from resp_seq, look the key up, write the answer,
 *            then release-store resp_seq = req_seq;
 *   control: acquire-load resp_seq; once it equals req_seq the answer is
 *            complete and stays put until the next post.
 * Request and answer sit on separate cache lines so the worker's idle
 * check reads a line the control thread writes only when it asks. */
struct mlv_worker_query {
	uint32_t req_seq;          /* written by the control thread */
	uint32_t hash;             /* mlv_flow_hash(&key) */
	struct mlv_flow_key key;

	uint32_t resp_seq __rte_cache_aligned;   /* written by the worker */
	bool found;
	uint8_t state;             /* enum mlv_ct_state, when found */
	uint32_t backend_uid;      /* when found */
	uint32_t expires_in_ms;    /* when found */
};

/* The control thread's listing request (maglevctl conns): one page of
 * the worker's live flows, from bucket `first` on, copied by the worker
 * in its housekeeping step. Bounded: MLV_LIST_BUCKETS buckets scanned
 * (a pause of tens of microseconds) and MLV_LIST_MAX flows per page. */
#define MLV_LIST_MAX 128u   /* >= MLV_LIST_PAGE_MAX (control/ctl/commands.h) */
#define MLV_LIST_BUCKETS 1024u

struct mlv_worker_listing {
	uint32_t req_seq;          /* written by the control thread */
	uint32_t first;            /* bucket the page starts at */
	uint32_t cap;              /* at most this many flows (4 .. MLV_LIST_MAX) */

	uint32_t resp_seq __rte_cache_aligned;   /* written by the worker */
	uint32_t n;                /* flows in e */
	uint32_t next;             /* next page's first bucket; 0: done */
	uint32_t now_ms;           /* the worker's clock when it copied */
	struct mlv_ct_entry e[MLV_LIST_MAX];
};

/* A worker's answer as the control thread copies it out. */
struct mlv_worker_answer {
	bool found;
	uint8_t state;
	uint32_t backend_uid;
	uint32_t expires_in_ms;
};

/* A two-entry memo of the worker's last VIP look-ups (dataplane/worker/forward.c):
 * frames mostly go to the same few VIPs, and comparing 20 key bytes is far
 * cheaper than hashing them and probing the generation's index. Two
 * entries, replaced in turn, so that traffic alternating between two
 * VIPs (an IPv4 and an IPv6 service on one host, say) keeps hitting: one
 * entry would miss on every frame of dp-bench's est-mixed-ipip, an index
 * probe each (89 instructions). Kept across bursts while the generation
 * stays the same (reset every burst, it would cost that probe once per
 * burst of up to 32 frames), by number: numbers are never reused,
 * pointers to freed generations may be. Exact (port-specific) look-ups
 * only. */
struct mlv_vip_memo_entry {
	uint64_t dst[2];
	uint32_t port_proto_family;   /* dport, proto, family: key bytes 34..37;
					 0 = empty (a parsed key's family is
					 4 or 6) */
	const struct mlv_gen_vip *vip;
};

struct mlv_vip_memo {
	struct mlv_vip_memo_entry e[2];
	uint32_t next;                /* the entry a miss replaces */
	uint32_t gen;                 /* the generation number the entries
					 belong to */
};

/* Forget every entry: the memo now serves generation number gen. */
static inline void mlv_vip_memo_reset(struct mlv_vip_memo *m, uint32_t gen)
{
	m->e[0].port_proto_family = 0;
	m->e[1].port_proto_family = 0;
	m->next = 0;
	m->gen = gen;
}

struct mlv_worker {
	/* Written per burst by this worker only. */
	struct mlv_worker_counters ctr;

	/* Read-only after create. */
	struct mlv_publisher *pub __rte_cache_aligned;
	struct mlv_ct *ct;
	uint32_t id;             /* 0 .. n_workers-1: counters, RCU, queues */
	unsigned lcore;
	uint16_t n_rxq;
	struct mlv_rxq rxq[MLV_MAX_PORTS];
	/* VLAN ports sharing a polled queue's device: not polled */
	uint16_t n_vrxq;
	struct mlv_rxq vrxq[MLV_MAX_PORTS];
	uint64_t tsc_start;      /* the millisecond clock counts from here */
	struct rte_reciprocal_u64 tsc_per_ms;

	/* Worker state. */
	struct mlv_idle idle;
	/* Tracked flows by backend and VIP (dataplane/packet/flow_tally.h),
	 * kept by ct; read per new flow by bounded loads, and by the control
	 * thread (mlv_worker_tally). */
	struct mlv_flow_tally *tally;
	uint32_t sweep_ms;       /* when the sweep last caught up with
				    MLV_SWEEP_PERIOD_MS (mlv_forward_sweep) */
	uint32_t tx_dirty;       /* bit i: tx[i] holds packets */
	uint32_t lacp_tx;        /* bit i: tx[i] is an 802.3ad bond's queue */
	struct mlv_vip_memo vip_memo;   /* created empty (zeroed) */
	struct mlv_tx_buffer tx[MLV_MAX_PORTS];   /* by config port index */

	/* The control thread's conntrack question (mlv_worker_query_post). */
	struct mlv_worker_query query __rte_cache_aligned;
	/* ... and its listing request (mlv_worker_list_post). */
	struct mlv_worker_listing listing __rte_cache_aligned;

	/* Written by the control thread (request_stop), read every
	 * MLV_HOUSEKEEPING_POLLS loops with a relaxed atomic load. */
	uint32_t stop __rte_cache_aligned;
	/* Set by the worker before returning: why it stopped early. */
	enum mlv_err exit_err;
};

struct mlv_ports;

struct mlv_worker_params {
	uint32_t id;
	unsigned lcore;
	struct mlv_publisher *pub;
	const struct mlv_ct_params *ct;
	const struct mlv_ports *ports;
	enum mlv_idle_policy idle;
	uint32_t idle_max_sleep_us;
};

/* Allocate a worker and its conntrack table on the lcore's NUMA socket
 * (rte_zmalloc_socket) and wire it to its queues. Returns MLV_OK and
 * *out, MLV_E_INVAL on bad params, MLV_E_NOMEM. Control thread, after the
 * ports are open. */
enum mlv_err mlv_worker_create(const struct mlv_worker_params *p,
			       struct mlv_worker **out);

/* Free the worker and its conntrack. Only after it stopped (or never ran).
 * NULL is a no-op. Control thread. */
void mlv_worker_destroy(struct mlv_worker *w);

/* The worker loop, an lcore_function_t for rte_eal_remote_launch (arg is
 * the struct mlv_worker). Registers with the publisher, runs until
 * mlv_worker_request_stop, flushes, unregisters. Returns 0, or -1 with
 * w->exit_err set if it could not start. The worker's lcore. */
int mlv_worker_run(void *arg);

/* Ask the worker to stop; it notices within MLV_HOUSEKEEPING_POLLS poll
 * loops (plus one idle sleep). Relaxed store: the worker needs no other
 * data from the control thread to stop. Control thread. */
static inline void mlv_worker_request_stop(struct mlv_worker *w)
{
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELAXED);
}

/* Ask the worker whether it tracks key (hash = mlv_flow_hash(key)).
 * Returns false, posting nothing, while its previous question is still
 * unanswered. Release ordering publishes the key before the sequence
 * number. Control thread. */
bool mlv_worker_query_post(struct mlv_worker *w, const struct mlv_flow_key *key,
			   uint32_t hash);

/* The answer to the last question posted: true and *out once the worker
 * answered it (acquire ordering: the answer is complete), false while it
 * has not (or if nothing was ever posted: then *out is all zero and true
 * is returned). Control thread. */
bool mlv_worker_query_answer(const struct mlv_worker *w,
			     struct mlv_worker_answer *out);

/* Ask the worker for the page of at most cap (clamped to 4 ..
 * MLV_LIST_MAX) of its live flows that starts at bucket first (0: the
 * table's start). Returns false, posting nothing, while the previous
 * request is unanswered. Release ordering. Control thread. */
bool mlv_worker_list_post(struct mlv_worker *w, uint32_t first, uint32_t cap);

/* The answer to the last listing request: the page (valid until the next
 * post), or NULL while the worker has not answered (acquire ordering: a
 * page returned is complete). Control thread. */
const struct mlv_worker_listing *mlv_worker_list_answer(const struct mlv_worker *w);

/* Answer a pending question, if any: one mlv_ct_lookup. Called from the
 * housekeeping step of the poll loop. The worker's lcore (tests call it
 * directly on a worker that never runs). */
void mlv_worker_query_serve(struct mlv_worker *w, uint32_t now_ms);

/* The worker's millisecond clock now, as its conntrack table reads it
 * (the TSC since the worker was created). Any thread on this host: the
 * TSC is invariant and synchronised across cores. */
uint32_t mlv_worker_now_ms(const struct mlv_worker *w);

/* Answer a pending listing request, if any: one mlv_ct_scan. Called from
 * the housekeeping step. The worker's lcore (tests call it directly). */
void mlv_worker_list_serve(struct mlv_worker *w, uint32_t now_ms);

/* Process one received burst with generation gen (which may be NULL
 * before the first publish: everything is dropped as not for a VIP).
 * Every frame ends up transmitted (buffered in w->tx) or freed and
 * counted as a drop. dataplane/worker/forward.c. The worker's lcore (tests call
 * it directly with a worker that never runs). */
void mlv_forward_burst(struct mlv_worker *w, const struct mlv_generation *gen,
		       const struct mlv_rxq *rxq, struct rte_mbuf **pkts,
		       uint16_t n, uint32_t now_ms);

/* Transmit everything buffered. The worker's lcore. */
void mlv_worker_flush(struct mlv_worker *w);

/* Reclaim expired conntrack entries (mlv_ct_sweep); they leave the
 * tally. MLV_SWEEP_BUCKETS buckets, or more when that would not cover the
 * table within MLV_SWEEP_PERIOD_MS of calls at this pace.
 * dataplane/worker/forward.c. The worker's lcore. */
void mlv_forward_sweep(struct mlv_worker *w, uint32_t now_ms);

/* The worker's tally of tracked flows, for the control thread's readers
 * (relaxed loads, flow_tally.h). Valid until mlv_worker_destroy. Any
 * thread. */
static inline struct mlv_flow_tally *mlv_worker_tally(const struct mlv_worker *w)
{
	return w->tally;
}

#endif
