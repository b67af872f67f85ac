/* SPDX-License-Identifier: BSD-3-Clause */
/* storm: the input for the generation-storm test. The feeder (pkt-storm)
 * writes these frames cyclically into the daemon while it reloads between
 * two configurations (vips[] and alt_vips[]) many times. A flow may land
 * on its backend of either configuration (a tracked flow keeps its
 * backend across a reload while that backend stays), so the checker
 * accepts either table's choice and requires exact accounting. */
#include <stdio.h>
#include <string.h>

#include "tests/packet/scenario.h"

/* Three times more flows than the connection table holds, so that flows
 * keep being evicted and re-selected from whichever table is live: both
 * configurations must show up in the output. */
#define STORM_FLOWS 3000
#define STORM_PKTS  2

static void add_vips(struct scenario *sc, bool alt)
{
	struct sc_vip *v;
	struct sc_backend *b;

	v = sc_add_vip(sc, "storm4", "192.0.2.80", 80, 6, SC_FWD_IPIP);
	sc_add_backend(v, "s4-1", "10.99.6.1", 100);
	sc_add_backend(v, "s4-2", "10.99.6.2", 100);
	sc_add_backend(v, "s4-3", "fd00:99:6::3", 100);
	if (alt)
		sc_add_backend(v, "s4-4", "10.99.6.4", 100);

	v = sc_add_vip(sc, "storm6", "2001:db8::80", 53, 17, SC_FWD_GUE);
	sc_add_backend(v, "s6-1", "fd00:99:6::11", 100);
	sc_add_backend(v, "s6-2", "fd00:99:6::12", alt ? 300 : 100);
	b = sc_add_backend(v, "s6-3", "fd00:99:6::13", 100);
	b->drain = alt;

	v = sc_add_vip(sc, "storm-dsr", "192.0.2.81", 443, 6, SC_FWD_L2DSR);
	b = sc_add_backend(v, "sd-1", "10.99.6.21", 100);
	b->has_mac = true;
	sc_mac("02:00:00:06:00:21", b->mac);
	b = sc_add_backend(v, "sd-2", "10.99.6.22", 100);
	b->has_mac = true;
	sc_mac("02:00:00:06:00:22", b->mac);
}

void sc_def_storm(struct scenario *sc)
{
	sc->check_coverage = true;
	sc->expect_evictions = true;
	sc->ct_entries = 1024;
	sc->summary = "frames fed while the daemon reloads between two configs";

	/* config B first, moved aside, then config A in place */
	add_vips(sc, true);
	memcpy(sc->alt_vips, sc->vips, sizeof(sc->vips));
	sc->n_alt_vips = sc->n_vips;
	sc->n_vips = 0;
	memset(sc->vips, 0, sizeof(sc->vips));
	add_vips(sc, false);

	for (uint32_t p = 0; p < STORM_PKTS; p++) {
		for (uint32_t f = 0; f < STORM_FLOWS; f++) {
			uint16_t vi = (uint16_t)(f % sc->n_vips);
			const struct sc_vip *vip = &sc->vips[vi];
			struct sc_flow fl = sc_flow_to_vip(vip, f,
							   (uint16_t)(2000 + f));
			struct mlv_flow_key key = sc_key(&fl, true);
			struct sc_opts o = {
				.payload_len = 8 + sc_rand(sc, 64),
				.tcp_flags = vip->proto == 6 ? PKT_TCP_ACK : 0,
			};

			sc_expect_forward(sc_emit(sc, &fl, &o), vi, &key, 0,
					  "storm flow");
			if (f % 250 == 7) {
				/* some drops so the accounting covers them */
				fl.dport = (uint16_t)(vip->port + 1);
				sc_expect_drop(sc_emit(sc, &fl, &o),
					       MLV_DROP_NOT_VIP, "storm not-vip");
			}
		}
	}
}
