/* SPDX-License-Identifier: BSD-3-Clause */
/* tables: the other table builders, second-choice failover and bounded
 * loads (docs/table-builders.md).
 *
 * - "bounded": rendezvous, max_load 1.25, four equal backends, and flows
 *   picked so that half of them hash to slots owned by b-1 (a hot spot).
 *   Once b-1 holds 1.25 x its share of the placed flows, its new flows
 *   must go to their slots' second choices; flows already on b-1 stay.
 * - "ring-down": ring (vnodes 5) with a backend in `state: down`: it keeps
 *   its slots, its flows go to each slot's second choice; and a drained
 *   backend that gets nothing.
 * - "maglev-down": the same with Maglev's second choices.
 *
 * The checker replays every placement in input order (check_choice.c) and
 * compares each output frame with it, and the daemon's second_down and
 * second_loaded counters with the replay's. The connection table is large
 * and flows are short-lived in wall time, so no flow is evicted or
 * expires: a flow placed once is never placed again. */
#include <stdio.h>
#include <stdlib.h>

#include "control/tables/builder.h"
#include "tests/packet/expect.h"
#include "tests/packet/scenario.h"

#define BOUNDED_FLOWS  800   /* half on b-1's slots */
#define BOUNDED_PKTS   2
#define RING_FLOWS     300
#define MAGLEV_FLOWS   200
#define TCP_PKTS       3

struct pending {
	uint16_t vip;
	uint32_t client;
	uint16_t sport;
	uint32_t group;
	uint8_t next;
	uint8_t total;
};

static void emit_next(struct scenario *sc, struct pending *p)
{
	const struct sc_vip *vip = &sc->vips[p->vip];
	struct sc_flow fl = sc_flow_to_vip(vip, p->client, p->sport);
	struct mlv_flow_key key = sc_key(&fl, true);
	static const uint8_t tcp_seq[TCP_PKTS] = {
		PKT_TCP_SYN, PKT_TCP_ACK, PKT_TCP_ACK | PKT_TCP_PSH,
	};
	struct sc_opts o = {
		.payload_len = 32 + sc_rand(sc, 100),
		.tcp_flags = vip->proto == 6 ? tcp_seq[p->next % TCP_PKTS] : 0,
	};
	char what[64];

	snprintf(what, sizeof(what), "%s client %u pkt %u", vip->name,
		 p->client, p->next);
	sc_expect_forward(sc_emit(sc, &fl, &o), p->vip, &key, p->group, what);
	p->next++;
}

/* Flows of VIP v: `hot` of them whose slot belongs to backend `owner`
 * (-1: no selection), then the rest from any slot. */
static uint32_t pick_flows(struct scenario *sc, const struct expect_tables *t,
			   uint16_t v, uint32_t n, uint32_t hot, int owner,
			   uint8_t pkts, struct pending *out)
{
	const struct sc_vip *vip = &sc->vips[v];
	uint32_t got = 0, got_hot = 0;

	for (uint32_t client = 0; got < n; client++) {
		uint16_t sport = (uint16_t)(20000 + client % 40000);
		struct sc_flow fl = sc_flow_to_vip(vip, client, sport);
		struct mlv_flow_key key = sc_key(&fl, true);
		int first, second;
		bool is_hot;

		if (client > 1000000) {
			fprintf(stderr, "scenario tables: cannot find flows\n");
			exit(2);
		}
		expect_choices(t, v, &key, &first, &second);
		is_hot = owner >= 0 && first == owner;
		if (owner >= 0 && (is_hot ? got_hot == hot : got - got_hot == n - hot))
			continue;
		got_hot += is_hot;
		out[got++] = (struct pending){
			.vip = v, .client = client, .sport = sport,
			.group = sc_new_group(sc), .total = pkts,
		};
	}
	return got;
}

void sc_def_tables(struct scenario *sc)
{
	uint32_t n = BOUNDED_FLOWS + RING_FLOWS + MAGLEV_FLOWS, active = 0;
	struct pending *q = calloc(n, sizeof(*q));
	struct expect_tables tabs;
	struct sc_vip *v;
	struct sc_backend *b;

	if (!q) {
		fprintf(stderr, "scenario: out of memory\n");
		exit(2);
	}
	sc->summary = "rendezvous with max_load 1.25 and a hot backend; ring "
		      "and maglev with a backend down (second-choice failover)";
	sc->check_coverage = true;
	/* 16384 buckets for 1300 flows: no bucket overflows, so no flow is
	 * evicted and placed twice */
	sc->ct_entries = 65536;

	v = sc_add_vip(sc, "bounded", "192.0.2.80", 53, 17, SC_FWD_IPIP);
	v->table = MLV_TABLE_RENDEZVOUS;
	v->max_load = 1.25;
	sc_add_backend(v, "b-1", "10.99.8.1", 100);
	sc_add_backend(v, "b-2", "10.99.8.2", 100);
	sc_add_backend(v, "b-3", "10.99.8.3", 100);
	sc_add_backend(v, "b-4", "10.99.8.4", 100);

	v = sc_add_vip(sc, "ring-down", "2001:db8::80", 443, 6, SC_FWD_GUE);
	v->table = MLV_TABLE_RING;
	v->vnodes = 5;
	sc_add_backend(v, "r-1", "fd00:99:8::1", 100);
	sc_add_backend(v, "r-2", "fd00:99:8::2", 100);
	b = sc_add_backend(v, "r-down", "fd00:99:8::3", 200);
	b->down = true;
	sc_add_backend(v, "r-3", "fd00:99:8::4", 50);
	b = sc_add_backend(v, "r-drain", "fd00:99:8::5", 100);
	b->drain = true;

	v = sc_add_vip(sc, "maglev-down", "192.0.2.81", 80, 6, SC_FWD_IPIP);
	sc_add_backend(v, "m-1", "10.99.9.1", 100);
	sc_add_backend(v, "m-2", "10.99.9.2", 100);
	b = sc_add_backend(v, "m-down", "10.99.9.3", 100);
	b->down = true;
	sc_add_backend(v, "m-3", "10.99.9.4", 100);

	if (expect_build(&tabs, sc->vips, sc->n_vips))
		exit(2);
	active += pick_flows(sc, &tabs, 0, BOUNDED_FLOWS, BOUNDED_FLOWS / 2, 0,
			     BOUNDED_PKTS, &q[active]);
	active += pick_flows(sc, &tabs, 1, RING_FLOWS, 0, -1, TCP_PKTS, &q[active]);
	active += pick_flows(sc, &tabs, 2, MAGLEV_FLOWS, 0, -1, TCP_PKTS,
			     &q[active]);
	expect_free(&tabs);

	/* interleave the flows' packets at random, in order within a flow */
	while (active) {
		uint32_t k = sc_rand(sc, active);

		emit_next(sc, &q[k]);
		if (q[k].next == q[k].total)
			q[k] = q[--active];
	}
	free(q);
}
