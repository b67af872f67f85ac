/* SPDX-License-Identifier: BSD-3-Clause */
/* second_chance: GUE TCP VIPs with second_chance (docs/second-chance.md)
 * over IPv4 and IPv6 outer headers, with maglev, rendezvous and ring
 * tables, beside a GUE VIP without it. Every forwarded frame of a
 * second-chance VIP must carry the hop block of docs/forwarding.md
 * ("GUE private data: second-chance hops") with the hops the checker
 * works out from its own tables (check_frame.c): a fresh daemon has no
 * previous owners, so a new flow to its slot's owner lists the second
 * choice; frames of the VIP without it carry no private data. */
#include <stdio.h>

#include "control/tables/builder.h"
#include "tests/packet/scenario.h"

#define FLOWS_PER_VIP 40

static const uint8_t flags_seq[] = {
	PKT_TCP_SYN, PKT_TCP_ACK, PKT_TCP_PSH | PKT_TCP_ACK,
	PKT_TCP_FIN | PKT_TCP_ACK,
};

static void emit_flows(struct scenario *sc)
{
	for (uint32_t v = 0; v < sc->n_vips; v++) {
		const struct sc_vip *vip = &sc->vips[v];

		for (uint32_t f = 0; f < FLOWS_PER_VIP; f++) {
			struct sc_flow fl = sc_flow_to_vip(vip, 10 + f,
				(uint16_t)(21000 + 53 * f + v));
			struct mlv_flow_key key = sc_key(&fl, true);
			uint32_t group = sc_new_group(sc);

			for (uint32_t p = 0; p < sizeof(flags_seq); p++) {
				struct sc_opts o = {
					.tcp_flags = flags_seq[p],
					.payload_len = 16 + sc_rand(sc, 900),
					.tos = (uint8_t)(p * 0x2c),
					.df = true,
				};
				struct sc_frame *fr = sc_emit(sc, &fl, &o);
				char what[64];

				snprintf(what, sizeof(what), "%s flow %u pkt %u",
					 vip->name, f, p);
				sc_expect_forward(fr, (uint16_t)v, &key, group,
						  what);
			}
		}
	}
}

void sc_def_second_chance(struct scenario *sc)
{
	struct sc_vip *v;

	sc->summary = "second chance: GUE hop blocks over IPv4 and IPv6, "
		      "maglev, rendezvous and ring tables, and a GUE VIP "
		      "without them";
	v = sc_add_vip(sc, "sc4", "192.0.2.10", 80, 6, SC_FWD_GUE);
	v->second_chance = true;
	sc_add_backend(v, "a-1", "10.99.1.11", 100);
	sc_add_backend(v, "a-2", "10.99.1.12", 100);
	sc_add_backend(v, "a-3", "10.99.1.13", 200);
	sc_add_backend(v, "a-4", "10.99.1.14", 100);

	v = sc_add_vip(sc, "sc6", "2001:db8::10", 443, 6, SC_FWD_GUE);
	v->second_chance = true;
	v->table = MLV_TABLE_RENDEZVOUS;
	sc_add_backend(v, "b-1", "fd00:99:1::21", 100);
	sc_add_backend(v, "b-2", "fd00:99:1::22", 100);
	sc_add_backend(v, "b-3", "fd00:99:1::23", 100);

	/* an IPv4 VIP over IPv6 backends, ring table */
	v = sc_add_vip(sc, "sc4over6", "192.0.2.20", 8443, 6, SC_FWD_GUE);
	v->second_chance = true;
	v->table = MLV_TABLE_RING;
	sc_add_backend(v, "c-1", "fd00:99:1::31", 100);
	sc_add_backend(v, "c-2", "fd00:99:1::32", 100);

	/* one backend: no second choice, an empty hop list */
	v = sc_add_vip(sc, "sc-one", "192.0.2.30", 80, 6, SC_FWD_GUE);
	v->second_chance = true;
	sc_add_backend(v, "d-1", "10.99.1.41", 100);

	v = sc_add_vip(sc, "plain", "192.0.2.40", 80, 6, SC_FWD_GUE);
	sc_add_backend(v, "e-1", "10.99.1.51", 100);
	sc_add_backend(v, "e-2", "10.99.1.52", 100);

	emit_flows(sc);
}
