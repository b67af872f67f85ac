/* SPDX-License-Identifier: BSD-3-Clause */
/* ratelimit: a flood of new UDP flows to a VIP with new_flows_per_second,
 * fed in real time (pkt-pace) at 2.5 times its rate for two seconds,
 * while established flows of that VIP and of an unlimited TCP VIP keep
 * sending. The flood is cut to the rate within the feeder's timing slack
 * (check_rate.c); every packet of the established flows passes, and each
 * admitted new flow reaches the backend its key selects. */
#include <stdio.h>

#include "tests/packet/scenario.h"

#define RATE          200       /* new flows a second */
#define BURST         20
#define ESTABLISHED   10        /* flows per VIP set up before the flood */
#define FLOOD_START   100       /* ms */
#define FLOOD_MS      2000
#define FLOOD_EVERY   2         /* ms between new flows: 500/s */
#define KEEP_EVERY    20        /* ms between established flows' rounds */

/* One packet of flow number n of vip (client n, source port 5000), at t. */
static void emit_flow_packet(struct scenario *sc, uint16_t v, uint32_t client,
			     uint32_t group, uint32_t t, bool first, bool may_limit)
{
	const struct sc_vip *vip = &sc->vips[v];
	struct sc_flow fl = sc_flow_to_vip(vip, client, 5000);
	struct mlv_flow_key key = sc_key(&fl, true);
	struct sc_opts o = {
		.payload_len = 32,
		.df = true,
		.tcp_flags = vip->proto == 6 ? (first ? PKT_TCP_SYN : PKT_TCP_ACK) : 0,
	};
	struct sc_frame *fr = sc_emit(sc, &fl, &o);
	char what[64];

	snprintf(what, sizeof(what), "%s client %u at %u ms", vip->name, client, t);
	if (may_limit)
		sc_expect_may_limit(fr, v, &key, group, what);
	else
		sc_expect_forward(fr, v, &key, group, what);
	fr->at_ms = t;
}

void sc_def_ratelimit(struct scenario *sc)
{
	struct sc_vip *v;
	uint32_t groups[2][ESTABLISHED];

	sc->summary = "a new-flow flood cut to the VIP's rate in real time; "
		      "established flows untouched";
	sc->paced = true;
	sc->ct_entries = 4096;
	v = sc_add_vip(sc, "lim", "192.0.2.80", 53, 17, SC_FWD_IPIP);
	v->new_flows_per_second = RATE;
	v->new_flows_burst = BURST;
	sc_add_backend(v, "lim-1", "10.99.8.1", 100);
	sc_add_backend(v, "lim-2", "10.99.8.2", 100);
	sc->rate_vip = 0;
	v = sc_add_vip(sc, "free", "192.0.2.81", 80, 6, SC_FWD_IPIP);
	sc_add_backend(v, "free-1", "10.99.8.11", 100);
	sc_add_backend(v, "free-2", "10.99.8.12", 100);

	/* the established flows: within the burst */
	for (uint16_t vi = 0; vi < 2; vi++)
		for (uint32_t f = 0; f < ESTABLISHED; f++) {
			groups[vi][f] = sc_new_group(sc);
			emit_flow_packet(sc, vi, 1 + f, groups[vi][f], 0, true,
					 false);
		}
	for (uint32_t t = 0; t < FLOOD_MS; t += FLOOD_EVERY) {
		uint32_t at = FLOOD_START + t;

		emit_flow_packet(sc, 0, 1000 + t / FLOOD_EVERY, sc_new_group(sc),
				 at, true, true);
		if (t % KEEP_EVERY)
			continue;
		for (uint16_t vi = 0; vi < 2; vi++)
			for (uint32_t f = 0; f < ESTABLISHED; f++)
				emit_flow_packet(sc, vi, 1 + f, groups[vi][f], at,
						 false, false);
	}
}
