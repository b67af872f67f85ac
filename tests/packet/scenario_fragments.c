/* SPDX-License-Identifier: BSD-3-Clause */
/* fragments: IPv4 and IPv6 datagrams cut into fragments, sent in order,
 * reversed, first-last and shuffled among each other, every fragment of a
 * datagram expected at the one backend its 3-tuple (source, destination,
 * protocol) hash selects; plus whole packets of the same flows and IPv6
 * atomic fragments, which are balanced by their 5-tuple
 * (docs/flow-hash.md). */
#include <stdio.h>
#include <string.h>

#include "tests/packet/scenario.h"

#define DATAGRAMS_PER_VIP 16
#define FRAG_SIZE         512     /* upper-layer bytes per fragment */
#define DATAGRAM_PAYLOAD  1800    /* -> 4 fragments with the UDP/TCP header */
#define N_FRAGS           4

static const uint32_t orders[][N_FRAGS] = {
	{0, 1, 2, 3},     /* in order */
	{3, 2, 1, 0},     /* reversed: the first fragment arrives last */
	{2, 0, 3, 1},
	{1, 3, 0, 2},
};

/* Swap frames [from, n_frames) into a random order. */
static void shuffle_tail(struct scenario *sc, uint32_t from)
{
	for (uint32_t i = sc->n_frames - 1; i > from; i--) {
		uint32_t j = from + sc_rand(sc, i - from + 1);
		struct sc_frame t = sc->frames[i];

		sc->frames[i] = sc->frames[j];
		sc->frames[j] = t;
	}
}

static void emit_vip(struct scenario *sc, uint16_t v, uint32_t client_base)
{
	const struct sc_vip *vip = &sc->vips[v];

	for (uint32_t d = 0; d < DATAGRAMS_PER_VIP; d++) {
		struct sc_flow fl = sc_flow_to_vip(vip, client_base + d,
						   (uint16_t)(30000 + d));
		struct sc_opts o = {
			.vlan = d % 4 == 1,
			.tos = d % 2 ? 0x28 : 0,
			.ttl = 60,
			.payload_len = DATAGRAM_PAYLOAD,
		};
		char what[64];

		if (vip->family == 6 && d % 3 == 0) {
			/* unfragmentable part: a hop-by-hop header before
			 * the fragment header */
			o.n_v6_ext = 1;
			o.v6_ext[0] = PKT_V6_HOPOPTS;
		}
		if (vip->family == 4 && d % 3 == 1)
			o.v4_opt_len = 8;
		snprintf(what, sizeof(what), "%s datagram %u", vip->name, d);
		sc_emit_fragments(sc, &fl, &o, FRAG_SIZE,
				  orders[d % (sizeof(orders) / sizeof(orders[0]))],
				  N_FRAGS, v, sc_new_group(sc), what);

		if (vip->family == 6 && d % 4 == 2) {
			/* an atomic fragment (offset 0, M clear, RFC 6946) is a
			 * whole datagram: balanced by its 5-tuple */
			static const uint32_t only[1] = {0};
			struct sc_opts a = o;
			struct mlv_flow_key k5 = sc_key(&fl, true);

			a.payload_len = 64;
			snprintf(what, sizeof(what), "%s atomic fragment %u",
				 vip->name, d);
			sc_emit_fragments(sc, &fl, &a, 1024, only, 1, v,
					  sc_new_group(sc), what);
			sc->frames[sc->n_frames - 1].exp.key = k5;
		}

		/* an unfragmented packet of the same 5-tuple */
		struct mlv_flow_key key = sc_key(&fl, true);
		struct sc_opts small = {.payload_len = 100, .df = true,
					.tcp_flags = PKT_TCP_ACK};

		snprintf(what, sizeof(what), "%s whole packet %u", vip->name, d);
		sc_expect_forward(sc_emit(sc, &fl, &small), v, &key,
				  sc_new_group(sc), what);
	}
}

void sc_def_fragments(struct scenario *sc)
{
	struct sc_vip *v;
	uint32_t start;

	sc->check_coverage = true;
	sc->summary = "IPv4/IPv6 fragments, first and later, out of order, "
		      "to one backend per datagram";
	v = sc_add_vip(sc, "frag4-udp", "192.0.2.40", 5000, 17, SC_FWD_GUE);
	sc_add_backend(v, "f4u-1", "10.99.2.1", 100);
	sc_add_backend(v, "f4u-2", "10.99.2.2", 100);
	sc_add_backend(v, "f4u-3", "10.99.2.3", 100);

	v = sc_add_vip(sc, "frag4-tcp", "192.0.2.41", 80, 6, SC_FWD_IPIP);
	sc_add_backend(v, "f4t-1", "10.99.2.11", 100);
	sc_add_backend(v, "f4t-2", "10.99.2.12", 100);
	sc_add_backend(v, "f4t-3", "10.99.2.13", 100);

	v = sc_add_vip(sc, "frag6-udp", "2001:db8::40", 5000, 17, SC_FWD_IPIP);
	sc_add_backend(v, "f6u-1", "fd00:99:2::1", 100);
	sc_add_backend(v, "f6u-2", "fd00:99:2::2", 100);
	sc_add_backend(v, "f6u-3", "fd00:99:2::3", 100);

	v = sc_add_vip(sc, "frag6-gue", "2001:db8::41", 5001, 17, SC_FWD_GUE);
	sc_add_backend(v, "f6g-1", "fd00:99:2::11", 100);
	sc_add_backend(v, "f6g-2", "fd00:99:2::12", 100);

	/* the first half in the orders above, datagram after datagram */
	emit_vip(sc, 0, 0);
	emit_vip(sc, 2, 0);
	/* the second half interleaved with each other */
	start = sc->n_frames;
	emit_vip(sc, 1, 100);
	emit_vip(sc, 3, 100);
	shuffle_tail(sc, start);
}
