/* SPDX-License-Identifier: BSD-3-Clause */
/* vlan: the port is VLAN 100 of its device (`vlan: 100`). Frames tagged
 * 100 are balanced and every frame they become leaves tagged 100, byte
 * for byte as on an untagged port otherwise: ipip (4in4, 4in6), gue over
 * IPv4 and IPv6, l2dsr, TCP and UDP, IPv4 options and IPv6 extension
 * headers behind the tag. Untagged frames and VLAN 200's, to the same
 * VIPs, are counted wrong_vlan drops, as is a tagged frame to no VIP of
 * another VLAN; VLAN 100 with a non-zero priority is VLAN 100.
 *
 * vlan_trunk: the same traffic on a trunk: the port "p0" is VLAN 100 of
 * the device (the clients' side), "p1" VLAN 200 of the same device (the
 * backends' side) and p0's tx_port: frames tagged 100 leave tagged 200,
 * and so do p1's own (tagged 200, through the queue p0 polls); untagged
 * frames and VLAN 300's are counted wrong_vlan drops. */
#include <stdio.h>

#include "tests/packet/scenario.h"

#define FLOWS_PER_VIP 12
#define PKTS_PER_FLOW 3

static void emit_vip(struct scenario *sc, uint16_t v, uint32_t client,
		     uint16_t vid)
{
	const struct sc_vip *vip = &sc->vips[v];

	for (uint32_t f = 0; f < FLOWS_PER_VIP; f++) {
		struct sc_flow fl = sc_flow_to_vip(vip, client + f,
						   (uint16_t)(21000 + 17 * f + v));
		struct mlv_flow_key key = sc_key(&fl, true);
		uint32_t group = sc_new_group(sc);

		for (uint32_t p = 0; p < PKTS_PER_FLOW; p++) {
			struct sc_opts o = {
				.vlan = true,
				/* priority bits are not the VID */
				.vlan_tci = (uint16_t)(vid | (p == 2 ? 0xA000 : 0)),
				.tos = (uint8_t)(p * 0x28),
				.payload_len = 16 + sc_rand(sc, 400),
				.tcp_flags = vip->proto == 6 ?
					(p == 0 ? PKT_TCP_SYN : PKT_TCP_ACK) : 0,
				.v4_opt_len = vip->family == 4 && f % 3 == 1 ? 8 : 0,
				.n_v6_ext = vip->family == 6 && f % 3 == 2 ? 1 : 0,
				.v6_ext = { PKT_V6_DSTOPTS },
			};
			char what[64];

			snprintf(what, sizeof(what), "%s flow %u pkt %u, VLAN %u",
				 vip->name, f, p, vid);
			sc_expect_forward(sc_emit(sc, &fl, &o), v, &key, group, what);
		}
	}
}

/* Frames of other VLANs (other_vid), or none, to the VIPs: wrong_vlan. */
static void emit_wrong(struct scenario *sc, uint32_t client, uint16_t other_vid)
{
	for (uint16_t v = 0; v < sc->n_vips; v++) {
		const struct sc_vip *vip = &sc->vips[v];
		struct sc_flow fl = sc_flow_to_vip(vip, client + v, 40000);
		struct sc_opts untagged = {
			.payload_len = 32,
			.tcp_flags = vip->proto == 6 ? PKT_TCP_SYN : 0,
		};
		struct sc_opts other = untagged;
		char what[64];

		other.vlan = true;
		other.vlan_tci = other_vid;
		snprintf(what, sizeof(what), "%s, untagged", vip->name);
		sc_expect_drop(sc_emit(sc, &fl, &untagged), MLV_DROP_WRONG_VLAN, what);
		snprintf(what, sizeof(what), "%s, VLAN %u", vip->name, other_vid);
		sc_expect_drop(sc_emit(sc, &fl, &other), MLV_DROP_WRONG_VLAN, what);
	}
	/* not to a VIP, on another VLAN: its VLAN decides first */
	{
		struct sc_flow fl = sc_flow_to_vip(&sc->vips[0], client + 50, 40001);
		struct sc_opts o = { .vlan = true, .vlan_tci = 101,
				     .payload_len = 8, .tcp_flags = PKT_TCP_SYN };

		fl.dst[3] ^= 0x55;
		sc_expect_drop(sc_emit(sc, &fl, &o), MLV_DROP_WRONG_VLAN,
			       "no VIP, VLAN 101");
	}
}

static void vips(struct scenario *sc)
{
	struct sc_vip *v;
	struct sc_backend *b;

	v = sc_add_vip(sc, "web4", "192.0.2.10", 80, 6, SC_FWD_IPIP);
	sc_add_backend(v, "web-1", "10.99.1.11", 100);
	sc_add_backend(v, "web-2", "fd00:99:1::12", 100);    /* 4in6 */
	v = sc_add_vip(sc, "dns4", "192.0.2.20", 53, 17, SC_FWD_GUE);
	sc_add_backend(v, "dns-1", "10.99.1.21", 100);
	sc_add_backend(v, "dns-2", "10.99.1.22", 100);
	v = sc_add_vip(sc, "web6", "2001:db8::10", 80, 6, SC_FWD_GUE);
	sc_add_backend(v, "w6-1", "fd00:99:1::31", 100);
	sc_add_backend(v, "w6-2", "10.99.1.32", 100);        /* 6 over 4 */
	v = sc_add_vip(sc, "tls6", "2001:db8::30", 443, 6, SC_FWD_L2DSR);
	b = sc_add_backend(v, "tls-1", "fd00:99:1::41", 100);
	b->has_mac = true;
	sc_mac("02:00:00:01:00:41", b->mac);
	b = sc_add_backend(v, "tls-2", "fd00:99:1::42", 100);
	b->has_mac = true;
	sc_mac("02:00:00:01:00:42", b->mac);

}

void sc_def_vlan(struct scenario *sc)
{
	sc->check_coverage = true;
	sc->port.vlan = 100;
	sc->summary = "a VLAN port (vlan: 100): tagged in, tagged out for ipip, "
		      "gue and l2dsr; untagged and other VLANs dropped";
	vips(sc);
	for (uint16_t i = 0; i < sc->n_vips; i++)
		emit_vip(sc, i, 100u * i, 100);
	emit_wrong(sc, 900, 200);
}

void sc_def_vlan_trunk(struct scenario *sc)
{
	sc->check_coverage = true;
	sc->port.vlan = 100;
	sc->port.tx_vlan = 200;
	sc->summary = "a trunk: clients on VLAN 100 (p0), backends on VLAN 200 "
		      "(p1, p0's tx_port) of one device; untagged and VLAN 300 "
		      "dropped";
	vips(sc);
	for (uint16_t i = 0; i < sc->n_vips; i++)
		emit_vip(sc, i, 100u * i, 100);
	/* p1's own frames (VLAN 200) are p1's: balanced, out by p1 */
	emit_vip(sc, 0, 600, 200);
	emit_vip(sc, 2, 700, 200);
	emit_wrong(sc, 900, 300);
}
