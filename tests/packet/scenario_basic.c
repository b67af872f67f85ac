/* SPDX-License-Identifier: BSD-3-Clause */
/* basic4 / basic6: every forwarding method for IPv4 and IPv6 VIPs, TCP and
 * UDP, with VLAN tags, IPv4 options, IPv6 extension headers, DSCP/ECN
 * values and TTLs varied per packet; IPv4 VIPs with IPv6 backends (4in6)
 * and GUE carrying each family over the other; ipip VIPs whose outer
 * sources come from prefixes (ipip_source, ipip_source6). */
#include <stdio.h>

#include "tests/packet/scenario.h"

#define FLOWS_PER_VIP   24
#define PKTS_PER_FLOW   4

/* DSCP/ECN values cycled over packets: BE, EF, AF11+ECT(0), CS1+CE. */
static const uint8_t tos_cycle[] = {0x00, 0xb8, 0x2a, 0x23};

static uint8_t tcp_flags_for(uint32_t pkt)
{
	static const uint8_t seq[PKTS_PER_FLOW] = {
		PKT_TCP_SYN, PKT_TCP_ACK, PKT_TCP_PSH | PKT_TCP_ACK,
		PKT_TCP_FIN | PKT_TCP_ACK,
	};
	return seq[pkt % PKTS_PER_FLOW];
}

/* Varied header shapes for packet p of flow f. */
static void vary_opts(struct scenario *sc, const struct sc_vip *vip,
		      uint32_t f, uint32_t p, struct sc_opts *o)
{
	o->vlan = (f + p) % 3 == 0;
	o->tos = tos_cycle[(f + p) % sizeof(tos_cycle)];
	o->ttl = (uint8_t)(2 + sc_rand(sc, 250));
	o->df = (f % 2) == 0;
	o->tcp_flags = vip->proto == 6 ? tcp_flags_for(p) : 0;
	o->payload_len = 8 + sc_rand(sc, 600);
	if (vip->family == 4) {
		static const uint8_t opt_lens[] = {0, 0, 4, 8, 40};

		o->v4_opt_len = opt_lens[(f * 7 + p) % sizeof(opt_lens)];
	} else {
		static const uint8_t chains[][3] = {
			{0, 0, 0},
			{PKT_V6_HOPOPTS, 0, 0},
			{PKT_V6_ROUTING, 0, 0},
			{PKT_V6_DSTOPTS, 0, 0},
			{PKT_V6_HOPOPTS, PKT_V6_ROUTING, PKT_V6_DSTOPTS},
			{PKT_V6_HOPOPTS, PKT_V6_DSTOPTS, 0},
		};
		static const uint8_t chain_len[] = {0, 1, 1, 1, 3, 2};
		uint32_t c = (f * 5 + p) % 6;

		o->n_v6_ext = chain_len[c];
		for (uint32_t i = 0; i < o->n_v6_ext; i++)
			o->v6_ext[i] = chains[c][i];
	}
}

/* FLOWS_PER_VIP flows to each VIP, their packets interleaved round-robin
 * across all flows of all VIPs, in flow order within a flow. */
static void emit_flows(struct scenario *sc, uint32_t client_base)
{
	uint32_t groups[SC_MAX_VIPS][FLOWS_PER_VIP];

	for (uint32_t v = 0; v < sc->n_vips; v++)
		for (uint32_t f = 0; f < FLOWS_PER_VIP; f++)
			groups[v][f] = sc_new_group(sc);

	for (uint32_t p = 0; p < PKTS_PER_FLOW; p++) {
		for (uint32_t f = 0; f < FLOWS_PER_VIP; f++) {
			for (uint32_t v = 0; v < sc->n_vips; v++) {
				const struct sc_vip *vip = &sc->vips[v];
				struct sc_flow fl = sc_flow_to_vip(vip,
					client_base + f, (uint16_t)(20000 + 37 * f + v));
				struct mlv_flow_key key = sc_key(&fl, true);
				struct sc_opts o = {0};
				struct sc_frame *fr;
				char what[64];

				vary_opts(sc, vip, f, p, &o);
				fr = sc_emit(sc, &fl, &o);
				snprintf(what, sizeof(what), "%s flow %u pkt %u",
					 vip->name, f, p);
				sc_expect_forward(fr, (uint16_t)v, &key,
						  groups[v][f], what);
			}
		}
	}
}

/* A few packets that match no VIP, so the accounting check covers a mix. */
static void emit_not_vip(struct scenario *sc, const struct sc_vip *vip)
{
	struct sc_flow fl = sc_flow_to_vip(vip, 900, 40000);
	struct sc_opts o = {.payload_len = 32, .tcp_flags = PKT_TCP_SYN};

	fl.dport = (uint16_t)(vip->port + 1);
	sc_expect_drop(sc_emit(sc, &fl, &o), MLV_DROP_NOT_VIP,
		       "VIP address, other port");
	fl.dport = vip->port;
	fl.dst[vip->family == 4 ? 3 : 15] ^= 0x55;
	sc_expect_drop(sc_emit(sc, &fl, &o), MLV_DROP_NOT_VIP,
		       "address that is no VIP");
}

void sc_def_basic4(struct scenario *sc)
{
	struct sc_vip *v;
	struct sc_backend *b;

	sc->check_coverage = true;
	sc->summary = "IPv4 VIPs: ipip (4in4, 4in6), gue over v4 and v6, l2dsr; "
		      "TCP/UDP; VLAN; IPv4 options";
	v = sc_add_vip(sc, "web4", "192.0.2.10", 80, 6, SC_FWD_IPIP);
	sc_add_backend(v, "web-1", "10.99.1.11", 100);
	sc_add_backend(v, "web-2", "10.99.1.12", 100);
	sc_add_backend(v, "web-3", "fd00:99:1::13", 100);   /* 4in6 */

	v = sc_add_vip(sc, "web4-udp", "192.0.2.10", 80, 17, SC_FWD_IPIP);
	sc_add_backend(v, "quic-1", "10.99.1.51", 100);
	sc_add_backend(v, "quic-2", "10.99.1.52", 100);

	v = sc_add_vip(sc, "dns4", "192.0.2.20", 53, 17, SC_FWD_GUE);
	sc_add_backend(v, "dns-1", "10.99.1.21", 100);
	sc_add_backend(v, "dns-2", "10.99.1.22", 100);

	v = sc_add_vip(sc, "dns4-over6", "192.0.2.21", 5353, 17, SC_FWD_GUE);
	v->gue_port = 6081;
	sc_add_backend(v, "mdns-1", "fd00:99:1::31", 100);
	sc_add_backend(v, "mdns-2", "fd00:99:1::32", 100);

	/* ipip with outer sources from prefixes, 4in4 and 4in6 */
	v = sc_add_vip(sc, "web4-src", "192.0.2.11", 80, 6, SC_FWD_IPIP);
	v->ipip_source = "10.77.0.16/28";
	v->ipip_source6 = "fd00:77::100/120";
	sc_add_backend(v, "src-1", "10.99.1.71", 100);
	sc_add_backend(v, "src-2", "10.99.1.72", 100);
	sc_add_backend(v, "src-3", "fd00:99:1::73", 100);

	v = sc_add_vip(sc, "tls4", "192.0.2.30", 443, 6, SC_FWD_L2DSR);
	b = sc_add_backend(v, "tls-1", "10.99.1.41", 100);
	b->has_mac = true;
	sc_mac("02:00:00:01:00:41", b->mac);
	b = sc_add_backend(v, "tls-2", "10.99.1.42", 100);
	b->has_mac = true;
	sc_mac("02:00:00:01:00:42", b->mac);

	emit_flows(sc, 0);
	emit_not_vip(sc, &sc->vips[0]);
}

void sc_def_basic6(struct scenario *sc)
{
	struct sc_vip *v;
	struct sc_backend *b;

	sc->check_coverage = true;
	sc->summary = "IPv6 VIPs: ipip (6in6), gue over v6 and v4, l2dsr; "
		      "TCP/UDP; VLAN; extension headers";
	v = sc_add_vip(sc, "web6", "2001:db8::10", 80, 6, SC_FWD_IPIP);
	sc_add_backend(v, "web-1", "fd00:99:1::11", 100);
	sc_add_backend(v, "web-2", "fd00:99:1::12", 100);
	sc_add_backend(v, "web-3", "fd00:99:1::13", 100);

	v = sc_add_vip(sc, "dns6", "2001:db8::53", 53, 17, SC_FWD_GUE);
	sc_add_backend(v, "dns-1", "fd00:99:1::21", 100);
	sc_add_backend(v, "dns-2", "fd00:99:1::22", 100);

	v = sc_add_vip(sc, "dns6-over4", "2001:db8::54", 53, 17, SC_FWD_GUE);
	sc_add_backend(v, "dns4-1", "10.99.1.61", 100);
	sc_add_backend(v, "dns4-2", "10.99.1.62", 100);

	/* ipip with outer sources from a /96: the last 32 bits vary */
	v = sc_add_vip(sc, "web6-src", "2001:db8::11", 80, 6, SC_FWD_IPIP);
	v->ipip_source6 = "fd00:77:6::/96";
	sc_add_backend(v, "src-1", "fd00:99:1::71", 100);
	sc_add_backend(v, "src-2", "fd00:99:1::72", 100);

	v = sc_add_vip(sc, "tls6", "2001:db8::30", 443, 6, SC_FWD_L2DSR);
	b = sc_add_backend(v, "tls-1", "fd00:99:1::41", 100);
	b->has_mac = true;
	sc_mac("02:00:00:01:00:41", b->mac);
	b = sc_add_backend(v, "tls-2", "fd00:99:1::42", 100);
	b->has_mac = true;
	sc_mac("02:00:00:01:00:42", b->mac);

	emit_flows(sc, 0);
	emit_not_vip(sc, &sc->vips[0]);
}
