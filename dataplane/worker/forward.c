/* SPDX-License-Identifier: BSD-3-Clause */
/* The per-burst packet path: parse, find the VIP, pick the backend
 * (conntrack, then the VIP's lookup table: first or second choice),
 * encapsulate, buffer for transmit.
 * Design notes: docs/architecture.md ("The packet path (per burst)").
 *
 * Three passes over the burst: the first parses every frame (prefetching
 * the data of the frame MLV_PREFETCH_AHEAD places ahead); the second finds
 * each frame's VIP, hashes its flow and prefetches the flow's conntrack
 * bucket; the third does the look-ups, whose buckets have had a whole
 * pass to arrive in cache, and forwards. Every frame leaves through
 * exactly one counter: a transmit outcome (counted by the TX buffer when
 * the device took it) or a drop reason.
 */
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "control/tables/maglev.h"
#include "dataplane/packet/encap.h"
#include "dataplane/packet/flow_hash.h"
#include "dataplane/packet/mss.h"
#include "dataplane/packet/parse.h"
#include "dataplane/packet/quic.h"
#include "dataplane/ports/plan.h"
#include "dataplane/view/view.h"
#include "dataplane/worker/worker.h"

static inline bool memo_holds(const struct mlv_vip_memo_entry *m,
			      const uint64_t dst[2], uint32_t ppf)
{
	return ((dst[0] ^ m->dst[0]) | (dst[1] ^ m->dst[1]) |
		(ppf ^ m->port_proto_family)) == 0;
}

static inline const struct mlv_gen_vip *
find_vip(struct mlv_vip_memo *memo, const struct mlv_generation *gen,
	 const struct mlv_flow_key *key)
{
	struct mlv_vip_memo_entry *m;
	uint64_t dst[2];
	uint32_t ppf;

	memcpy(dst, key->dst, sizeof(dst));
	memcpy(&ppf, &key->dport, sizeof(ppf));
	if (likely(memo_holds(&memo->e[0], dst, ppf)))
		return memo->e[0].vip;
	if (memo_holds(&memo->e[1], dst, ppf))
		return memo->e[1].vip;
	m = &memo->e[memo->next];
	memo->next ^= 1;
	m->vip = mlv_gen_find_vip(gen, key, false);
	m->dst[0] = dst[0];
	m->dst[1] = dst[1];
	m->port_proto_family = ppf;
	return m->vip;
}

_Static_assert(offsetof(struct mlv_flow_key, proto) ==
		       offsetof(struct mlv_flow_key, dport) + 2 &&
	       offsetof(struct mlv_flow_key, family) ==
		       offsetof(struct mlv_flow_key, dport) + 3,
	       "dport, proto, family are contiguous");

/* The hash that chooses the slot of a VIP whose hash fields are not the
 * 5-tuple. Out of line: 5tuple VIPs never call it. */
static __rte_noinline uint32_t fields_hash(const struct mlv_gen_vip *v,
					   const struct mlv_pkt *p,
					   uint32_t hash)
{
	return mlv_gen_slot_hash(v, &p->key,
				 (p->flags & MLV_PKT_F_FRAGMENT) != 0, hash);
}

/* Parser verdict -> the drop reason of the same name. Built from the
 * parser's X-macro, so a verdict without a same-named drop reason does not
 * compile. OK maps to an out-of-range value and is never used. */
#define MLV_DROP_OK MLV_DROP__COUNT
static const uint8_t verdict_drop[MLV_PARSE__COUNT] = {
#define VERDICT_DROP(name, text) [MLV_PARSE_##name] = MLV_DROP_##name,
	MLV_PARSE_VERDICTS(VERDICT_DROP)
#undef VERDICT_DROP
};
#undef MLV_DROP_OK

/* Frames dropped in this burst, freed together at the end. */
struct drops {
	uint16_t n;
	struct rte_mbuf *m[MLV_BURST];
};

static inline void drop(struct mlv_worker *w, struct drops *d,
			struct rte_mbuf *m, enum mlv_drop_reason reason)
{
	w->ctr.drop[reason]++;
	d->m[d->n++] = m;
}

/* A frame addressed to VIP v dropped for a reason that belongs to a VIP
 * (MLV_VIP_DROP_REASONS): counted with the worker's drops and in v's row
 * of gen's vip_drops. Only on drop paths. */
static inline void drop_for_vip(struct mlv_worker *w, struct drops *d,
				struct rte_mbuf *m,
				const struct mlv_generation *gen,
				const struct mlv_gen_vip *v,
				enum mlv_drop_reason reason, enum mlv_vip_drop vd)
{
	gen->vip_drops[w->id][mlv_gen_vip_index(gen, v)].v[vd]++;
	drop(w, d, m, reason);
}

/* drop_for_vip by the reason's name, so that the two enums cannot
 * disagree. */
#define DROP_FOR_VIP(w, d, m, gen, v, NAME) \
	drop_for_vip(w, d, m, gen, v, MLV_DROP_##NAME, MLV_VDROP_##NAME)

static inline void enqueue(struct mlv_worker *w, uint16_t port,
			   struct rte_mbuf *m, enum mlv_worker_counter outcome)
{
	w->tx_dirty |= 1u << port;
	mlv_tx_enqueue(&w->tx[port], &w->ctr, m, outcome);
}

/* Not for a VIP (or not IP, or a protocol we do not balance): to the
 * exception port when there is one, else a drop under `reason`. */
static inline void not_for_us(struct mlv_worker *w, struct drops *d,
			      const struct mlv_rxq *rxq, struct rte_mbuf *m,
			      enum mlv_drop_reason reason)
{
	if (rxq->exception_to == MLV_PORT_NONE) {
		drop(w, d, m, reason);
		return;
	}
	/* a VLAN port's frames reach the host untagged: its TAP is the
	 * VLAN's interface (and its frames get the tag on the way out) */
	if (unlikely(rxq->vlan) && !(m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED))
		(void)rte_vlan_strip(m);
	enqueue(w, rxq->exception_to, m, MLV_CTR_EXCEPTION);
}

/* Slot's second choice if it can take the flow, else NULL. */
static inline const struct mlv_gen_backend *
second_choice(const struct mlv_gen_vip *vip, uint32_t slot)
{
	uint16_t s = vip->second[slot];
	const struct mlv_gen_backend *b;

	if (s == MLV_MAGLEV_NO_BACKEND)
		return NULL;
	b = &vip->backends[s];
	return b->usable ? b : NULL;
}

/* The flow's slot in the VIP's table: its hash modulo the table size. */
static inline uint32_t table_slot(const struct mlv_gen_vip *vip, uint32_t hash)
{
	return mlv_fastmod(hash, vip->table_mod_m, vip->table_size);
}

/* The table's choice for a flow in slot: the slot's owner, or its second
 * choice when the owner is down but keeps its slots (state: down, or a
 * failover generation: instant failover). NULL if neither can take the
 * flow. */
static inline const struct mlv_gen_backend *
from_table(const struct mlv_gen_vip *vip, uint32_t slot)
{
	uint16_t f = vip->table[slot];

	if (unlikely(f == MLV_MAGLEV_NO_BACKEND))
		return NULL;
	if (likely(vip->backends[f].usable))
		return &vip->backends[f];
	return second_choice(vip, slot);
}

/* Bounded loads: would one more flow put b above its share of this
 * worker's tracked flows for the VIP? The bound is Mirrokni et al.'s
 * capacity ceil(c (m + 1) w_b / W), m the VIP's tracked flows, c =
 * max_load; counts being integers, count + 1 > ceil(x) is count >= x.
 * The counts are the worker's tally (dataplane/packet/flow_tally.h),
 * which the conntrack table keeps across generations. */
static inline bool over_bound(const struct mlv_worker *w,
			      const struct mlv_gen_vip *vip,
			      const struct mlv_gen_backend *b)
{
	const struct mlv_flow_tally *t = &w->tally[mlv_tally_slot(b->uid)];
	uint32_t tracked = t->n[MLV_TALLY_ACTIVE] + t->n[MLV_TALLY_INACTIVE];
	uint32_t total = w->tally[mlv_tally_slot(vip->uid)].vip_flows;

	return (double)tracked >= b->load_bound * ((double)total + 1);
}

/* Where a new (or re-selected) flow goes: from_table plus bounded loads,
 * counting why a second choice was taken. */
static inline const struct mlv_gen_backend *
choose(struct mlv_worker *w, const struct mlv_gen_vip *vip, uint32_t slot)
{
	uint16_t f = vip->table[slot];
	const struct mlv_gen_backend *b, *alt;

	if (unlikely(f == MLV_MAGLEV_NO_BACKEND))
		return NULL;
	b = &vip->backends[f];
	if (likely(b->usable)) {
		if (likely(vip->max_load == 0) || !over_bound(w, vip, b))
			return b;
		alt = second_choice(vip, slot);
		if (!alt)
			return b;   /* nowhere else to go: the bound is soft */
		w->ctr.ctr[MLV_CTR_SECOND_LOADED]++;
		return alt;
	}
	alt = second_choice(vip, slot);
	w->ctr.ctr[MLV_CTR_SECOND_DOWN] += alt != NULL;
	return alt;
}

void mlv_forward_sweep(struct mlv_worker *w, uint32_t now_ms)
{
	uint32_t buckets = mlv_ct_capacity(w->ct) / MLV_CT_WAYS;
	/* the buckets due since the last catch-up, at one table a period */
	uint64_t due = (uint64_t)buckets * (now_ms - w->sweep_ms) /
		       MLV_SWEEP_PERIOD_MS;

	if (due <= MLV_SWEEP_BUCKETS) {
		mlv_ct_sweep(w->ct, now_ms, MLV_SWEEP_BUCKETS);
		return;
	}
	mlv_ct_sweep(w->ct, now_ms, due < buckets ? (uint32_t)due : buckets);
	w->sweep_ms = now_ms;
}

/* The backend a conntrack entry remembers, if it is still in the VIP and
 * usable in gen; NULL if the flow must be re-selected. */
static inline const struct mlv_gen_backend *
remembered(const struct mlv_generation *gen, const struct mlv_gen_vip *vip,
	   const struct mlv_ct_entry *e)
{
	const struct mlv_gen_backend *b;

	if (likely(e->cached_gen == gen->number))
		return &gen->all_backends[e->backend_all_idx];
	b = mlv_gen_find_backend(gen, vip, e->backend_uid);
	return b && b->usable ? b : NULL;
}

/* What tracked_backend did with the flow's conntrack entry. */
enum flow_outcome {
	FLOW_TRACKED = 0,   /* an entry already held it */
	FLOW_NEW = 1,       /* an entry was made (counts as a new flow) */
	FLOW_LIMITED = 2,   /* none: the VIP's new-flow rate is used up */
};

/* Whether the VIP's new-flow limit admits one more new flow on this
 * worker now (always, for a VIP without one). */
static inline bool flow_admitted(const struct mlv_worker *w,
				 const struct mlv_generation *gen,
				 const struct mlv_gen_vip *vip, uint32_t now_ms)
{
	if (likely(!(vip->features & MLV_VIP_F_LIMIT)))
		return true;
	return mlv_flow_bucket_take(&gen->flow_buckets[w->id][vip->flow_bucket],
				    &vip->flow_limit, now_ms);
}

/* Whether p, missing the connection table, opens a flow: anything but a
 * TCP segment without SYN (or with SYN and ACK), which belongs to a
 * connection opened before this instance tracked it (a restart, an ECMP
 * change, an expired or evicted entry). */
static inline bool opens_flow(const struct mlv_pkt *p)
{
	return p->key.proto != IPPROTO_TCP || (p->flags & MLV_PKT_F_FRAGMENT) ||
	       (p->tcp_flags & (MLV_TCP_SYN | MLV_TCP_ACK)) == MLV_TCP_SYN;
}

/* A miss over the VIP's new-flow rate: a flow opening is refused
 * (*outcome FLOW_LIMITED, NULL); a TCP segment of a connection this
 * instance does not track goes to the backend the table gives it, with
 * no entry (the limit keeps the table, not live connections, from a
 * flood). Out of line: only limited VIPs over their rate come here. */
static __rte_noinline const struct mlv_gen_backend *
over_rate(struct mlv_worker *w, const struct mlv_gen_vip *vip,
	  const struct mlv_pkt *p, uint32_t slot, uint8_t *outcome)
{
	const struct mlv_gen_backend *b;

	if (opens_flow(p)) {
		*outcome = FLOW_LIMITED;
		return NULL;
	}
	*outcome = FLOW_TRACKED;
	b = from_table(vip, slot);
	w->ctr.ctr[MLV_CTR_LIMIT_UNTRACKED] += b != NULL;
	return b;
}

/* A flow the table does not hold: the table's choice (choose), which an
 * entry claimed for it then remembers; NULL if no backend can take it,
 * and then nothing is claimed (no tracked flow is evicted for a frame
 * that is dropped). Over the VIP's new-flow rate (checked before choose,
 * so that its counts are of flows that go somewhere): over_rate, and no
 * entry either way. A path of its own, so that the entry is written
 * once, whole, with its state machine folded to the first state
 * (mlv_ct_insert). */
static inline const struct mlv_gen_backend *
new_flow_backend(struct mlv_worker *w, const struct mlv_generation *gen,
		 const struct mlv_gen_vip *vip, const struct mlv_pkt *p,
		 uint32_t hash, uint32_t slot, uint32_t now_ms,
		 const struct mlv_ct_probe *probe, uint8_t *outcome,
		 uint32_t *bi_out)
{
	const struct mlv_gen_backend *b;
	uint32_t bi;

	if (unlikely(!flow_admitted(w, gen, vip, now_ms))) {
		b = over_rate(w, vip, p, slot, outcome);
		if (b)
			*bi_out = mlv_gen_backend_index(gen, b);
		return b;
	}
	b = NULL;
	/* second chance: a connection that did not start here goes where
	 * it most likely lives (out of the common path: one flag test) */
	if (unlikely(vip->features & MLV_VIP_F_HOLDERS) && !opens_flow(p))
		b = mlv_gen_likely_holder(vip, slot);
	if (likely(!b))
		b = choose(w, vip, slot);
	if (unlikely(!b)) {
		*outcome = FLOW_TRACKED;
		return NULL;
	}
	*outcome = FLOW_NEW;
	w->ctr.ctr[MLV_CTR_CT_NEW]++;
	bi = mlv_gen_backend_index(gen, b);
	*bi_out = bi;
	mlv_ct_insert(w->ct, &p->key, hash, now_ms, probe, b->uid,
		      gen->number, bi, p->tcp_flags);
	return b;
}

/* The backend for a balanced (non-ICMP-error) packet: the tracked one, or
 * a new choice (choose) that the entry then remembers. NULL: no backend
 * (a tracked flow's entry is released; a new flow claims none), or a new
 * flow over the VIP's rate. *outcome: enum flow_outcome. *bi: the
 * backend's index in gen->all_backends (for its counters), which a flow
 * already seen in gen has in its entry: no look-up for it. The tally of
 * tracked flows is the conntrack table's (mlv_ct_set_tally): a flow
 * counts on its backend from its first packet to its release, across
 * generations, and moves with mlv_ct_rebind when it is re-selected. */
static inline const struct mlv_gen_backend *
tracked_backend(struct mlv_worker *w, const struct mlv_generation *gen,
		const struct mlv_gen_vip *vip, const struct mlv_pkt *p,
		uint32_t hash, uint32_t slot, uint32_t now_ms,
		const struct mlv_ct_probe *probe, uint8_t *outcome,
		uint32_t *bi_out)
{
	struct mlv_ct_entry *e = probe->hit;
	const struct mlv_gen_backend *b;
	uint32_t bi;

	if (unlikely(e == NULL))
		return new_flow_backend(w, gen, vip, p, hash, slot, now_ms, probe,
					outcome, bi_out);
	*outcome = FLOW_TRACKED;
	if (likely(e->cached_gen == gen->number)) {
		/* the entry holds b's index in gen */
		bi = e->backend_all_idx;
		*bi_out = bi;
		mlv_ct_update(w->ct, e, p->tcp_flags, now_ms);
		return &gen->all_backends[bi];
	}
	/* the flow's first packet in gen */
	b = remembered(gen, vip, e);
	if (unlikely(!b)) {
		w->ctr.ctr[MLV_CTR_CT_RESELECTED]++;
		b = choose(w, vip, slot);
		if (unlikely(!b)) {
			mlv_ct_remove(w->ct, e);
			return NULL;
		}
		mlv_ct_rebind(w->ct, e, b->uid);
	}
	e->cached_gen = gen->number;
	bi = mlv_gen_backend_index(gen, b);
	e->backend_all_idx = bi;
	*bi_out = bi;
	mlv_ct_update(w->ct, e, p->tcp_flags, now_ms);
	return b;
}

/* ICMP frag-needed / packet-too-big about a VIP flow: to the backend of
 * the embedded flow, which this worker may be tracking (looked up, never
 * inserted: an error is not a flow), else the table's choice. */
static inline const struct mlv_gen_backend *
icmp_error_backend(struct mlv_worker *w, const struct mlv_generation *gen,
		   const struct mlv_gen_vip *vip, const struct mlv_pkt *p,
		   uint32_t hash, uint32_t slot, uint32_t now_ms)
{
	const struct mlv_ct_entry *e =
		mlv_ct_lookup(w->ct, &p->key, hash, now_ms);
	const struct mlv_gen_backend *b = e ? remembered(gen, vip, e) : NULL;

	return b ? b : from_table(vip, slot);
}

/* QUIC connection-ID routing (docs/forwarding.md): the backend of quic
 * VIP v whose server ID the destination connection ID of p, a
 * short-header packet, carries, if that backend is usable; else NULL,
 * and p goes the usual way (conntrack, the table). Counts which. No
 * conntrack entry is made or read for a routed packet: a client that
 * migrated arrives with a 5-tuple no entry knows, and its connection ID
 * already says where it goes. Out of line: only quic VIPs come here. */
static __rte_noinline const struct mlv_gen_backend *
quic_backend(struct mlv_worker *w, const struct mlv_gen_vip *v,
	     const struct rte_mbuf *m, const struct mlv_pkt *p)
{
	const struct mlv_gen_backend *b;
	const uint8_t *q;
	uint32_t len, id;

	/* within the first segment: the parser read p from it alone */
	q = mlv_quic_udp_payload(rte_pktmbuf_mtod(m, const uint8_t *), p, &len);
	if (q == NULL)
		return NULL;
	switch (mlv_quic_server_id(q, len, &id)) {
	case MLV_QUIC_ID:
		break;
	case MLV_QUIC_NO_ID:
		w->ctr.ctr[MLV_CTR_QUIC_NO_ID]++;
		return NULL;
	default:
		return NULL;   /* a long header: the client chose the ID */
	}
	b = mlv_gen_quic_backend(v, id);
	if (b == NULL || !b->usable) {
		w->ctr.ctr[MLV_CTR_QUIC_UNKNOWN_ID]++;
		return NULL;
	}
	w->ctr.ctr[MLV_CTR_QUIC_ROUTED]++;
	return b;
}

/* Replace the frame's L2 header (and any Ethernet padding after the IP
 * packet) by hdr_len bytes of room for the template; returns where they
 * start, or NULL without enough headroom. A single-segment frame (the
 * rule: ports are set up so frames fit one mbuf) just moves its data
 * offset and lengths; rte_pktmbuf_adj/trim/prepend, which walk and check
 * the segment chain, handle the rest. */
static inline uint8_t *replace_l2(struct rte_mbuf *m, const struct mlv_pkt *p,
				  uint16_t hdr_len)
{
	if (likely(m->nb_segs == 1)) {
		uint32_t off = (uint32_t)m->data_off + p->l3_off;

		if (unlikely(off < hdr_len))
			return NULL;
		m->data_off = (uint16_t)(off - hdr_len);
		m->data_len = (uint16_t)(p->l3_len + hdr_len);
		m->pkt_len = m->data_len;
		return rte_pktmbuf_mtod(m, uint8_t *);
	}
	rte_pktmbuf_adj(m, p->l3_off);
	if (m->pkt_len > p->l3_len)
		rte_pktmbuf_trim(m, (uint16_t)(m->pkt_len - p->l3_len));
	return (uint8_t *)rte_pktmbuf_prepend(m, hdr_len);
}

/* Answer a DF packet to v that will not fit after encapsulation with
 * ICMP frag-needed / packet-too-big, in place, back out the port it came
 * in. */
static inline void too_big(struct mlv_worker *w, struct drops *d,
			   const struct mlv_rxq *rxq,
			   const struct mlv_generation *gen,
			   const struct mlv_gen_vip *v, struct rte_mbuf *m,
			   const struct mlv_pkt *p)
{
	uint8_t *buf = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t len;

	if ((p->flags & (MLV_PKT_F_DF | MLV_PKT_F_ICMP_ERROR)) != MLV_PKT_F_DF) {
		DROP_FOR_VIP(w, d, m, gen, v, TOO_BIG);
		return;
	}
	len = mlv_icmp_too_big(buf, m->data_len,
			       (uint32_t)m->data_len + rte_pktmbuf_tailroom(m),
			       p, v->mtu_room);
	if (len == 0) {
		DROP_FOR_VIP(w, d, m, gen, v, TOO_BIG);
		return;
	}
	if (unlikely(m->nb_segs > 1)) {
		/* the reply lives in the first segment */
		rte_pktmbuf_free(m->next);
		m->next = NULL;
		m->nb_segs = 1;
	}
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	enqueue(w, rxq->cfg_idx, m, MLV_CTR_ICMP_SENT);
}

/* An echo request to v's address: answered in place, back out the port
 * it came in, when v says so (echo_reply: icmp_echo: reply and a backend
 * that takes new flows); else a drop. */
static inline void echo(struct mlv_worker *w, struct drops *d,
			const struct mlv_rxq *rxq,
			const struct mlv_generation *gen,
			const struct mlv_gen_vip *v, struct rte_mbuf *m,
			const struct mlv_pkt *p)
{
	uint32_t len;

	if (!v->echo_reply || m->nb_segs > 1) {
		DROP_FOR_VIP(w, d, m, gen, v, ICMP_ECHO);
		return;
	}
	len = mlv_icmp_echo_reply(rte_pktmbuf_mtod(m, uint8_t *), m->data_len, p);
	if (len == 0) {
		DROP_FOR_VIP(w, d, m, gen, v, ICMP_ECHO);
		return;
	}
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	w->ctr.ctr[MLV_CTR_ECHO_REPLIES]++;
	enqueue(w, rxq->cfg_idx, m, MLV_CTR_ICMP_SENT);
}

/* A SYN or SYN-ACK to a VIP with MSS clamping: its MSS option lowered
 * to v->mss_clamp (docs/forwarding.md, "MSS clamping"). The parser
 * checked that the TCP header lies within l3_len in the first segment.
 * Out of the per-frame loop: only SYNs come here. */
static __rte_noinline void clamp_mss(struct mlv_worker *w, struct rte_mbuf *m,
				     const struct mlv_pkt *p,
				     const struct mlv_gen_vip *v)
{
	uint8_t *tcp = rte_pktmbuf_mtod_offset(m, uint8_t *, p->l4_off);
	uint32_t room = (uint32_t)p->l3_off + p->l3_len - p->l4_off;

	if (mlv_mss_clamp(tcp, room, v->mss_clamp))
		w->ctr.ctr[MLV_CTR_MSS_CLAMPED]++;
}

/* Whether v's source ACL denies p: per packet, not per new flow, so that
 * a reload that adds a deny cuts the flows it already carries
 * (docs/forwarding.md, "Source ACLs"). Only for VIPs with an ACL, from
 * out-of-line paths (before_conntrack, untracked_frame); they pay its
 * search (docs/benchmarks.md). */
static inline bool acl_denies(const struct mlv_gen_vip *v,
			      const struct mlv_pkt *p)
{
	return !mlv_acl_allows(v->acl, p->key.src);
}

/* What pass 3 does with a frame after the features it checks before the
 * conntrack look-up (before_conntrack). */
enum before_ct {
	BEFORE_CT_GO_ON,    /* the usual way: conntrack, the table */
	BEFORE_CT_DROPPED,  /* denied by the VIP's ACL, and counted */
	BEFORE_CT_ROUTED,   /* to *b by its QUIC connection ID */
};

/* The features of v that act before the conntrack look-up, in order: the
 * source ACL (before anything else about the VIP, so a denied client is
 * never even answered with ICMP too-big), then QUIC routing of a packet
 * that fits (a too-big one goes on to too_big). Out of line: only VIPs
 * with MLV_VIP_F_BEFORE_CT come here, the others pay one test. */
static __rte_noinline enum before_ct
before_conntrack(struct mlv_worker *w, struct drops *d,
		 const struct mlv_generation *gen, const struct mlv_gen_vip *v,
		 struct rte_mbuf *m, const struct mlv_pkt *p,
		 const struct mlv_gen_backend **b)
{
	if (v->acl != NULL && acl_denies(v, p)) {
		DROP_FOR_VIP(w, d, m, gen, v, ACL_DENIED);
		return BEFORE_CT_DROPPED;
	}
	if (v->quic && p->l3_len <= v->mtu_room &&
	    (*b = quic_backend(w, v, m, p)) != NULL)
		return BEFORE_CT_ROUTED;
	return BEFORE_CT_GO_ON;
}

/* Measurement builds (pass_cycles.h): the TSC cycles since `since` to
 * pass p; returns now. Nothing in other builds. */
static inline uint64_t pass_mark(struct mlv_worker *w, enum mlv_pass p,
				 uint64_t since)
{
	uint64_t now;

	if (!MLV_PASS_CYCLES)
		return 0;
	now = rte_rdtsc();
	w->ctr.pass.cycles[p] += now - since;
	return now;
}

/* A frame pass 3 does not track (probe_ahead left it no bucket): one for
 * no VIP, an ICMP echo request, or an ICMP error about a VIP's flow.
 * Returns the backend to forward an ICMP error to; else NULL, and the
 * frame has been passed on or dropped. Out of the per-frame loop: rare. */
static __rte_noinline const struct mlv_gen_backend *
untracked_frame(struct mlv_worker *w, struct drops *d, const struct mlv_rxq *rxq,
		const struct mlv_generation *gen, struct rte_mbuf *m,
		const struct mlv_pkt *p, const struct mlv_gen_vip *v,
		uint8_t verdict, uint32_t hash, uint32_t slot, uint32_t now_ms)
{
	const struct mlv_gen_backend *b;

	if (v == NULL) {
		switch (verdict) {
		case MLV_PARSE_OK:
			not_for_us(w, d, rxq, m, MLV_DROP_NOT_VIP);
			break;
		case MLV_PARSE_NOT_IP:
		case MLV_PARSE_UNSUPPORTED:
			/* the host's own traffic (ARP, ND, ping, routing
			 * protocols): the kernel's business */
			not_for_us(w, d, rxq, m,
				   (enum mlv_drop_reason)verdict_drop[verdict]);
			break;
		default:
			drop(w, d, m, (enum mlv_drop_reason)verdict_drop[verdict]);
		}
		return NULL;
	}
	if (unlikely(v->acl != NULL) && acl_denies(v, p)) {
		/* an echo's or an error's source: the client's (for an
		 * error, the quoted flow's), docs/forwarding.md */
		DROP_FOR_VIP(w, d, m, gen, v, ACL_DENIED);
		return NULL;
	}
	if (p->flags & MLV_PKT_F_ICMP_ECHO) {
		echo(w, d, rxq, gen, v, m, p);
		return NULL;
	}
	if (p->l3_len > v->mtu_room) {
		too_big(w, d, rxq, gen, v, m, p);
		return NULL;
	}
	b = icmp_error_backend(w, gen, v, p, hash, slot, now_ms);
	if (!b)
		DROP_FOR_VIP(w, d, m, gen, v, NO_BACKEND);
	return b;
}

/* Parse m into *pkt and *verdict; returns its length (for RX_BYTES).
 * Only the first segment: ports are set up so that a frame fits one mbuf
 * (dataplane/worker/port.c); a chained frame's headers beyond its first segment
 * count as truncated. */
static inline uint32_t parse_one(const struct rte_mbuf *m, struct mlv_pkt *pkt,
				 uint8_t *verdict)
{
	*verdict = (uint8_t)mlv_parse_fast(rte_pktmbuf_mtod(m, const uint8_t *),
					   m->data_len, pkt);
	return m->pkt_len;
}

/* Probe frame i's conntrack bucket (pass 2 left it in pr->bucket; see
 * mlv_forward_burst), or mark it unprobed when the frame will not be tracked
 * (or is the one after the burst's last: vip[n] is NULL). A frame the table does not hold will read its
 * slot in the VIP's table (choose), which in a 128 KiB table is an L1
 * miss: prefetched here, one frame ahead, rather than for every frame in
 * pass 2, where established flows, which never read it, would pay for
 * the line (own cycles per packet 4 % lower on est-64B-ipip, 6 % on
 * new-64B-ipip: docs/benchmarks.md, "Why the data path is as it is"). */
static inline void probe_ahead(struct mlv_worker *w, const struct mlv_pkt *pkt,
			       const struct mlv_gen_vip *const *vip,
			       const uint32_t *hash, const uint32_t *slot,
			       uint32_t now_ms, uint16_t i,
			       struct mlv_ct_probe *pr)
{
	if (likely(vip[i] != NULL &&
		   !(pkt[i].flags & (MLV_PKT_F_ICMP_ERROR | MLV_PKT_F_ICMP_ECHO)))) {
		mlv_ct_probe_bucket(w->ct, pr->bucket, &pkt[i].key, hash[i],
				    now_ms, pr);
		if (pr->hit == NULL)
			rte_prefetch0(&vip[i]->table[slot[i]]);
	} else
		pr->bucket = NULL;
}

/* Pass 1: parse every frame into pkt[] and verdict[], its headers
 * prefetched MLV_PREFETCH_AHEAD frames ahead. */
static __rte_always_inline void
parse_pass(struct mlv_worker *w, struct rte_mbuf **pkts, uint16_t n,
	   struct mlv_pkt *pkt, uint8_t *verdict)
{
	uint64_t rx_bytes = 0;
	uint16_t i;

	for (i = 0; i < n && i < MLV_PREFETCH_AHEAD; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	/* In two loops, so that no frame tests whether there is one to
	 * prefetch. */
	for (i = 0; i + MLV_PREFETCH_AHEAD < n; i++) {
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i + MLV_PREFETCH_AHEAD], void *));
		rx_bytes += parse_one(pkts[i], &pkt[i], &verdict[i]);
	}
	for (; i < n; i++)
		rx_bytes += parse_one(pkts[i], &pkt[i], &verdict[i]);
	w->ctr.ctr[MLV_CTR_RX_BYTES] += rx_bytes;
}

/* Before any generation is published no VIP exists: every frame is the
 * host's or a drop. */
static __rte_noinline void
no_generation(struct mlv_worker *w, struct drops *d, const struct mlv_rxq *rxq,
	      struct rte_mbuf **pkts, const uint8_t *verdict, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++)
		not_for_us(w, d, rxq, pkts[i],
			   verdict[i] == MLV_PARSE_OK ? MLV_DROP_NOT_VIP
			   : (enum mlv_drop_reason)verdict_drop[verdict[i]]);
}

/* Pass 2: find each frame's VIP, hash its flow, prefetch its conntrack
 * bucket (into probe[i]) and choose its slot in the VIP's table. A
 * separate pass so the keys the parser just wrote piece by piece have
 * left the store buffer before they are read as whole words (no
 * store-forwarding stalls). vip[n] is set to NULL. */
static __rte_always_inline void
vip_pass(struct mlv_worker *w, const struct mlv_generation *gen, uint16_t n,
	 const struct mlv_pkt *pkt, const uint8_t *verdict,
	 const struct mlv_gen_vip **vip, uint32_t *hash, uint32_t *slot,
	 struct mlv_ct_probe *probe)
{
	if (unlikely(w->vip_memo.gen != gen->number))
		mlv_vip_memo_reset(&w->vip_memo, gen->number);
	for (uint16_t i = 0; i < n; i++) {
		const struct mlv_pkt *p = &pkt[i];

		vip[i] = NULL;
		if (unlikely(verdict[i] != MLV_PARSE_OK))
			continue;
		if (likely(!(p->flags & (MLV_PKT_F_ICMP_ECHO | MLV_PKT_F_FRAGMENT))))
			vip[i] = find_vip(&w->vip_memo, gen, &p->key);
		else if (p->flags & MLV_PKT_F_FRAGMENT)
			vip[i] = mlv_gen_find_vip(gen, &p->key, true);
		else
			vip[i] = mlv_gen_find_echo_vip(gen, &p->key);
		if (likely(vip[i] != NULL)) {
			const struct mlv_gen_vip *v = vip[i];

			hash[i] = mlv_flow_hash_inline(&p->key);
			probe[i].bucket = mlv_ct_prefetch(w->ct, hash[i]);
			/* conntrack and encapsulation keep the whole key's
			 * hash; hash: 3tuple/source choose the slot from
			 * fewer fields (docs/flow-hash.md) */
			slot[i] = table_slot(v, likely(v->hash_fields == MLV_HASH_5TUPLE) ?
					     hash[i] : fields_hash(v, p, hash[i]));
		}
	}
	vip[n] = NULL;   /* the frame after the last: nothing to probe */
}

/* Pass 3: choose each frame's backend, encapsulate the frame with the
 * backend's template for the TX port, and hand the forwarded frames to
 * that port's TX buffer in one call. */
static __rte_always_inline void
forward_pass(struct mlv_worker *w, struct drops *d, const struct mlv_rxq *rxq,
	     const struct mlv_generation *gen, struct rte_mbuf **pkts,
	     uint16_t n, const struct mlv_pkt *pkt, const uint8_t *verdict,
	     const struct mlv_gen_vip *const *vip, const uint32_t *hash,
	     const uint32_t *slot, struct mlv_ct_probe *probe, uint32_t now_ms)
{
	uint16_t tx_slot = gen->ports[rxq->cfg_idx].tx_slot;
	uint16_t tx_port = gen->tx_ports[tx_slot];
	struct mlv_flow_counters *be_ctr = gen->backend_ctr[w->id];
	/* this burst's forwarded frames, for its TX buffer at the end */
	struct rte_mbuf *fwd[MLV_BURST];
	uint16_t n_fwd = 0;
	uint64_t fwd_bytes = 0;
	/* a VLAN port's frames are tagged: one test a frame, held in a
	 * register for the burst */
	const bool tag = w->tx[tx_port].vlan != 0;

	/* Once for the burst rather than per forwarded frame (enqueue). */
	w->tx_dirty |= 1u << tx_port;
	probe_ahead(w, pkt, vip, hash, slot, now_ms, 0, &probe[0]);
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct mlv_pkt *p = &pkt[i];
		const struct mlv_gen_vip *v = vip[i];
		const struct mlv_gen_backend *b;
		const struct mlv_encap_tmpl *t;
		uint8_t outcome = FLOW_TRACKED;
		uint32_t bi;
		uint8_t *hdr;

		probe_ahead(w, pkt, vip, hash, slot, now_ms, i + 1, &probe[i + 1]);
		if (likely(probe[i].bucket != NULL)) {
			/* a VIP's flow, not ICMP (probe_ahead) */
			if (unlikely(v->features & MLV_VIP_F_BEFORE_CT)) {
				enum before_ct r = before_conntrack(w, d, gen, v,
								    m, p, &b);

				if (r == BEFORE_CT_DROPPED)
					continue;
				if (r == BEFORE_CT_ROUTED) {
					bi = mlv_gen_backend_index(gen, b);
					goto forward;
				}
			}
			if (unlikely(p->l3_len > v->mtu_room)) {
				too_big(w, d, rxq, gen, v, m, p);
				continue;
			}
			if (unlikely(probe[i].bucket == probe[i - 1].bucket))
				mlv_ct_probe_bucket(w->ct, probe[i].bucket,
						    &p->key, hash[i], now_ms,
						    &probe[i]);
			b = tracked_backend(w, gen, v, p, hash[i], slot[i], now_ms,
					    &probe[i], &outcome, &bi);
			if (unlikely(!b)) {
				if (outcome == FLOW_LIMITED)
					DROP_FOR_VIP(w, d, m, gen, v, NEW_FLOW_LIMIT);
				else
					DROP_FOR_VIP(w, d, m, gen, v, NO_BACKEND);
				continue;
			}
			/* 0 for non-TCP, non-SYN and unclamped VIPs: one
			 * test (fragments and ICMP carry no tcp_flags) */
			if (unlikely(p->tcp_flags & v->mss_syn_mask) &&
			    mlv_tcp_has_options(rte_pktmbuf_mtod_offset(
				    m, const uint8_t *, p->l4_off)))
				clamp_mss(w, m, p, v);
		} else {
			b = untracked_frame(w, d, rxq, gen, m, p, v, verdict[i],
					    hash[i], slot[i], now_ms);
			if (b == NULL)
				continue;
			bi = mlv_gen_backend_index(gen, b);
		}
forward:
		t = &b->encap[tx_slot];
		hdr = replace_l2(m, p, t->len);
		if (unlikely(!hdr)) {
			DROP_FOR_VIP(w, d, m, gen, v, NO_HEADROOM);
			continue;
		}
		if (unlikely(t->sc_off != 0)) {
			const struct mlv_gen_backend *h[MLV_SC_MAX_HOPS];
			const uint8_t *hops[MLV_SC_MAX_HOPS];
			uint32_t n_hops = mlv_gen_sc_hops(v, slot[i], b, h);

			for (uint32_t k = 0; k < n_hops; k++)
				hops[k] = h[k]->address.bytes;
			mlv_encap_apply_sc(hdr, t, p->l3_len, p->tos, hash[i],
					   hops, n_hops);
		} else {
			mlv_encap_apply(hdr, t, p->l3_len, p->tos, hash[i]);
		}
		/* Only the backend's row: b is always one of v->backends
		 * (tracked_backend, icmp_error_backend, quic_backend), so
		 * v's counts are the sum of its backends' rows
		 * (control/generation/stats.c). */
		if (unlikely(tag)) {
			/* a VLAN port: the tag, in the frame or by the NIC */
			uint32_t before = m->pkt_len;

			if (mlv_tx_tag(&w->tx[tx_port], &m) != 0) {
				DROP_FOR_VIP(w, d, m, gen, v, NO_HEADROOM);
				continue;
			}
			fwd_bytes += m->pkt_len - before;
		}
		be_ctr[bi].v[MLV_FLOW_PACKETS]++;
		be_ctr[bi].v[MLV_FLOW_BYTES] += p->l3_len;
		be_ctr[bi].v[MLV_FLOW_NEW_FLOWS] += outcome;   /* 0 or 1 here */
		fwd[n_fwd++] = m;
		fwd_bytes += (uint32_t)p->l3_len + t->len;   /* m->pkt_len */
	}
	mlv_tx_enqueue_forwarded(&w->tx[tx_port], &w->ctr, fwd, n_fwd, fwd_bytes);
}

/* One port's frames of a burst (a VLAN port's: those of its VLAN) through
 * the three passes. One copy, called once a burst from mlv_forward_burst
 * or once a VLAN port's group from vlan_burst: a second copy inlined into
 * vlan_burst costs new flows 7 % of their cycles (dp-bench --against,
 * new-64B-ipip own cycles 1.076), one call a burst nothing measurable. */
static __rte_noinline void
burst(struct mlv_worker *w, const struct mlv_generation *gen,
      const struct mlv_rxq *rxq, struct rte_mbuf **pkts, uint16_t n,
      uint32_t now_ms)
{
	struct mlv_pkt pkt[MLV_BURST];
	const struct mlv_gen_vip *vip[MLV_BURST + 1];   /* vip[n]: NULL */
	uint32_t hash[MLV_BURST];
	uint32_t slot[MLV_BURST];   /* in the VIP's table */
	uint8_t verdict[MLV_BURST];
	/* Each tracked frame's conntrack probe: the bucket from pass 2, the
	 * rest read one frame ahead of its use in pass 3, so that the
	 * bucket's look-up and the choice of the slot to claim run beside
	 * the frame before it (14 % more Mpps on new-64B-ipip:
	 * docs/benchmarks.md, "Why the data path is as it is"). A probe is
	 * redone when the frame before it used the same bucket; probe[-1],
	 * a sentinel whose bucket no frame has, stands before the first. */
	struct mlv_ct_probe probes[MLV_BURST + 2];
	struct mlv_ct_probe *probe = probes + 1;
	/* Separate locals, not one struct: only d and pkt reach the out-of-
	 * line functions, so the compiler keeps the rest out of their way. */
	struct drops d;
	uint64_t tsc = 0, flushed = 0;   /* pass_cycles.h */

	if (MLV_PASS_CYCLES) {
		tsc = rte_rdtsc();
		w->ctr.pass.packets += n;
	}
	d.n = 0;
	probes[0].bucket = NULL;

	parse_pass(w, pkts, n, pkt, verdict);
	tsc = pass_mark(w, MLV_PASS_PARSE, tsc);
	if (unlikely(!gen)) {
		no_generation(w, &d, rxq, pkts, verdict, n);
	} else {
		vip_pass(w, gen, n, pkt, verdict, vip, hash, slot, probe);
		tsc = pass_mark(w, MLV_PASS_VIP, tsc);
		if (MLV_PASS_CYCLES)
			flushed = w->ctr.pass.cycles[MLV_PASS_FLUSH];
		forward_pass(w, &d, rxq, gen, pkts, n, pkt, verdict, vip, hash,
			     slot, probe, now_ms);
		/* the TX flushes inside count as their own pass */
		if (MLV_PASS_CYCLES)
			pass_mark(w, MLV_PASS_BACKEND,
				  tsc + (w->ctr.pass.cycles[MLV_PASS_FLUSH] -
					 flushed));
	}
	if (d.n)
		rte_pktmbuf_free_bulk(d.m, d.n);
}

/* A VLAN port's burst: each frame to the port of its VLAN (the queue's
 * own, or another VLAN port of the same device: rxq->vrxq), in order,
 * each port's frames as one burst of that port; untagged frames and
 * VLANs of no port are counted WRONG_VLAN drops. Out of line: only VLAN
 * ports come here, once a burst. */
static __rte_noinline void
vlan_burst(struct mlv_worker *w, const struct mlv_generation *gen,
	   const struct mlv_rxq *rxq, struct rte_mbuf **pkts, uint16_t n,
	   uint32_t now_ms)
{
	struct rte_mbuf *grp[MLV_MAX_PORTS][MLV_BURST];
	uint16_t cnt[MLV_MAX_PORTS] = { 0 };
	const struct mlv_rxq *port[MLV_MAX_PORTS];
	uint32_t n_port = 1u + rxq->n_vrxq;
	struct drops d;

	d.n = 0;
	port[0] = rxq;
	for (uint32_t k = 1; k < n_port; k++)
		port[k] = &w->vrxq[rxq->vrxq[k - 1]];
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const uint8_t *eth = rte_pktmbuf_mtod(m, const uint8_t *);
		uint16_t vid = 0;
		uint32_t k = 0;

		if (m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED)
			vid = m->vlan_tci & 0x0FFF;
		else if (m->data_len >= 18 && eth[12] == 0x81 && eth[13] == 0x00)
			vid = (uint16_t)((eth[14] & 0x0F) << 8 | eth[15]);
		while (k < n_port && port[k]->vlan != vid)
			k++;
		if (k < n_port && vid != 0) {
			grp[k][cnt[k]++] = m;
		} else {
			/* received all the same: burst() counts the rest */
			w->ctr.ctr[MLV_CTR_RX_BYTES] += m->pkt_len;
			drop(w, &d, m, MLV_DROP_WRONG_VLAN);
		}
	}
	for (uint32_t k = 0; k < n_port; k++)
		if (cnt[k])
			burst(w, gen, port[k], grp[k], cnt[k], now_ms);
	if (d.n)
		rte_pktmbuf_free_bulk(d.m, d.n);
}

void mlv_forward_burst(struct mlv_worker *w, const struct mlv_generation *gen,
		       const struct mlv_rxq *rxq, struct rte_mbuf **pkts,
		       uint16_t n, uint32_t now_ms)
{
	w->ctr.ctr[MLV_CTR_RX_PACKETS] += n;
	if (unlikely(rxq->vlan)) {
		vlan_burst(w, gen, rxq, pkts, n, now_ms);
		return;
	}
	burst(w, gen, rxq, pkts, n, now_ms);
}
