/* SPDX-License-Identifier: BSD-3-Clause */
/* flows: thousands of concurrent flows with several packets each, their
 * packets randomly interleaved (in order within a flow), through a
 * connection table much smaller than the flow count so that entries are
 * evicted and flows re-selected. Every packet of a flow must reach the
 * same backend; the flows' spread over backends must follow the weights
 * (checked statistically by the checker); drained and weight-0 backends
 * must receive nothing. */
#include <stdio.h>
#include <stdlib.h>

#include "tests/packet/scenario.h"

#define TCP_FLOWS      2000
#define TCP_PKTS       4
#define UDP_FLOWS      1200
#define UDP_PKTS       3

struct pending {
	uint16_t vip;
	uint32_t flow;
	uint32_t group;
	uint8_t next;
	uint8_t total;
};

static void emit_next(struct scenario *sc, struct pending *p)
{
	const struct sc_vip *vip = &sc->vips[p->vip];
	struct sc_flow fl = sc_flow_to_vip(vip, p->flow,
					   (uint16_t)(1024 + p->flow * 7 % 60000));
	struct mlv_flow_key key = sc_key(&fl, true);
	static const uint8_t tcp_seq[TCP_PKTS] = {
		PKT_TCP_SYN, PKT_TCP_ACK, PKT_TCP_ACK | PKT_TCP_PSH,
		PKT_TCP_ACK | PKT_TCP_FIN,
	};
	struct sc_opts o = {
		.payload_len = 16 + sc_rand(sc, 200),
		.tcp_flags = vip->proto == 6 ? tcp_seq[p->next % TCP_PKTS] : 0,
		.df = true,
		.vlan = p->flow % 5 == 0,
	};
	char what[64];

	snprintf(what, sizeof(what), "%s flow %u pkt %u", vip->name, p->flow,
		 p->next);
	sc_expect_forward(sc_emit(sc, &fl, &o), p->vip, &key, p->group, what);
	p->next++;
}

void sc_def_flows(struct scenario *sc)
{
	struct sc_vip *v;
	struct sc_backend *b;
	uint32_t n = TCP_FLOWS + UDP_FLOWS, active = n;
	struct pending *q = calloc(n, sizeof(*q));

	if (!q) {
		fprintf(stderr, "scenario: out of memory\n");
		exit(2);
	}
	sc->check_coverage = true;
	sc->expect_evictions = true;
	sc->summary = "2000 TCP + 1200 UDP flows interleaved, weights 1:2:3:4 and "
		      "1:1:2, drained and weight-0 backends, small conntrack";
	sc->check_distribution = true;
	sc->ct_entries = 1024;

	v = sc_add_vip(sc, "dist4", "192.0.2.70", 80, 6, SC_FWD_IPIP);
	sc_add_backend(v, "w-100", "10.99.5.1", 100);
	sc_add_backend(v, "w-200", "10.99.5.2", 200);
	sc_add_backend(v, "w-300", "10.99.5.3", 300);
	sc_add_backend(v, "w-400", "10.99.5.4", 400);
	b = sc_add_backend(v, "w-drain", "10.99.5.5", 300);
	b->drain = true;

	v = sc_add_vip(sc, "dist6", "2001:db8::70", 443, 17, SC_FWD_GUE);
	sc_add_backend(v, "u-a", "fd00:99:5::1", 10);
	sc_add_backend(v, "u-b", "fd00:99:5::2", 10);
	sc_add_backend(v, "u-c", "fd00:99:5::3", 20);
	sc_add_backend(v, "u-zero", "fd00:99:5::4", 0);

	for (uint32_t i = 0; i < n; i++) {
		bool tcp = i < TCP_FLOWS;

		q[i].vip = tcp ? 0 : 1;
		q[i].flow = tcp ? i : i - TCP_FLOWS;
		q[i].group = sc_new_group(sc);
		q[i].total = tcp ? TCP_PKTS : UDP_PKTS;
	}
	while (active) {
		uint32_t k = sc_rand(sc, active);

		emit_next(sc, &q[k]);
		if (q[k].next == q[k].total)
			q[k] = q[--active];
	}
	free(q);
}
