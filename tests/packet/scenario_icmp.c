/* SPDX-License-Identifier: BSD-3-Clause */
/* icmp: path-MTU discovery in both directions.
 *  - ICMP fragmentation-needed / ICMPv6 packet-too-big sent by a router to
 *    a VIP, quoting a packet the VIP (through a backend) sent to a client:
 *    forwarded to the backend that owns the quoted flow, i.e. the same
 *    backend as the client's own packets of that flow (same group, key =
 *    the quoted flow reversed).
 *  - Client packets that fit exactly after encapsulation (forwarded) and
 *    one byte more: with DF (always for IPv6) answered with an ICMP
 *    too-big reporting the room left; IPv4 without DF dropped as too_big.
 *  - ICMP echo requests to a VIP: answered where the VIP says
 *    icmp_echo: reply and has a usable backend, else icmp_echo drops. */
#include <stdio.h>
#include <string.h>

#include "tests/packet/scenario.h"

#define FLOWS_PER_VIP 6

/* An ICMP error from a router on the path to the client, about a packet
 * of flow f (client -> VIP) travelling back (VIP -> client) (scenario.h). */
struct sc_frame *sc_emit_icmp_error(struct scenario *sc,
				    const struct sc_vip *vip,
				    const struct sc_flow *f, uint16_t mtu,
				    bool vlan)
{
	static uint8_t payload[64], seg[128], quoted[256], icmp[512],
		ip[1024], frame[1200];
	uint32_t id = sc->next_id++;
	struct pkt_l3 back = {
		.family = f->family, .tos = 0, .ttl = 63, .df = true,
		.ip_id = (uint16_t)id,
	};
	struct pkt_l4 back4 = {
		.proto = f->proto, .sport = f->dport, .dport = f->sport,
		.tcp_flags = PKT_TCP_ACK | PKT_TCP_PSH,
	};
	struct pkt_l3 outer = {
		.family = f->family, .ttl = 250, .ip_id = (uint16_t)(id ^ 0x5a5a),
	};
	struct pkt_l4 err = {
		.proto = f->family == 4 ? 1 : 58,
		.icmp_type = f->family == 4 ? 3 : 2,
		.icmp_code = f->family == 4 ? 4 : 0,
		.icmp_rest = mtu,            /* v4: unused(16) | MTU(16) */
	};
	struct pkt_l2 l2 = {.vlan = vlan, .vlan_tci = 0x0064};
	uint32_t seg_len, q_len, icmp_len, ip_len, len;
	uint16_t l3_off;

	memcpy(back.src, f->dst, 16);
	memcpy(back.dst, f->src, 16);
	pkt_fill_payload(payload, 32, id);
	seg_len = pkt_build_l4(seg, &back, &back4, payload, 32);
	q_len = pkt_build_ip(quoted, &back, f->proto, seg, seg_len, NULL);
	/* routers quote the IP header and at least 8 bytes (RFC 792); this
	 * one quotes the header, the L4 header and 8 payload bytes */
	q_len -= 32 - 8;

	/* the router: first address of the client's /24 or /64 */
	memcpy(outer.src, f->src, 16);
	outer.src[f->family == 4 ? 3 : 15] = 254;
	memcpy(outer.dst, vip->addr, 16);
	icmp_len = pkt_build_l4(icmp, &outer, &err, quoted, q_len);
	ip_len = pkt_build_ip(ip, &outer, err.proto, icmp, icmp_len, NULL);
	memcpy(l2.dst, sc->port.mac, 6);
	sc_mac("02:00:00:c1:00:fe", l2.src);
	len = pkt_build_eth(frame, &l2, f->family == 4 ? PKT_ETH_IPV4 : PKT_ETH_IPV6,
			    ip, ip_len, &l3_off);
	struct sc_frame *fr = sc_emit_raw(sc, frame, len);

	fr->l3_off = l3_off;
	fr->l3_len = (uint16_t)ip_len;
	return fr;
}

static void emit_pmtu_errors(struct scenario *sc, uint16_t v)
{
	const struct sc_vip *vip = &sc->vips[v];

	for (uint32_t i = 0; i < FLOWS_PER_VIP; i++) {
		struct sc_flow fl = sc_flow_to_vip(vip, 10 + i,
						   (uint16_t)(41000 + 11 * i));
		struct mlv_flow_key key = sc_key(&fl, true);
		uint32_t group = sc_new_group(sc);
		struct sc_opts o = {
			.payload_len = 200, .df = true,
			.tcp_flags = vip->proto == 6 ? PKT_TCP_ACK : 0,
		};
		char what[64];

		snprintf(what, sizeof(what), "%s flow %u data", vip->name, i);
		sc_expect_forward(sc_emit(sc, &fl, &o), v, &key, group, what);
		snprintf(what, sizeof(what), "%s flow %u %s", vip->name, i,
			 vip->family == 4 ? "frag-needed" : "packet-too-big");
		sc_expect_forward(sc_emit_icmp_error(sc, vip, &fl, 1280, i % 2),
				  v, &key, group, what);
	}
}

/* Packets of exactly the room after encapsulation, and one byte more. */
static void emit_too_big(struct scenario *sc, uint16_t v)
{
	const struct sc_vip *vip = &sc->vips[v];
	uint16_t room = sc_mtu_room(sc, vip);
	uint32_t ip_hdr = vip->family == 4 ? 20 : 40;
	uint32_t l4_hdr = vip->proto == 6 ? 20 : 8;
	uint32_t fit_payload = room - ip_hdr - l4_hdr;

	for (uint32_t i = 0; i < 3; i++) {
		struct sc_flow fl = sc_flow_to_vip(vip, 50 + i,
						   (uint16_t)(42000 + i));
		struct mlv_flow_key key = sc_key(&fl, true);
		struct sc_opts o = {
			.payload_len = fit_payload, .df = true, .tos = 0x48,
			.tcp_flags = vip->proto == 6 ? PKT_TCP_ACK : 0,
			.vlan = i == 1,
		};
		char what[64];

		snprintf(what, sizeof(what), "%s exactly %u bytes", vip->name, room);
		sc_expect_forward(sc_emit(sc, &fl, &o), v, &key, 0, what);

		o.payload_len = fit_payload + 1;
		snprintf(what, sizeof(what), "%s DF %u bytes", vip->name, room + 1);
		sc_expect_icmp(sc_emit(sc, &fl, &o), v, room, what);

		if (vip->family == 4) {
			o.df = false;
			snprintf(what, sizeof(what), "%s no DF %u bytes",
				 vip->name, room + 1);
			sc_expect_drop(sc_emit(sc, &fl, &o), MLV_DROP_TOO_BIG, what);
		}
	}
}

/* How an echo request is built and what must come of it. */
struct echo_case {
	bool vlan;
	uint8_t v4_opt_len;      /* IPv4 options the reply does not echo */
	uint8_t n_v6_ext;        /* a hop-by-hop header the reply drops */
	bool bad_csum;
	uint32_t data_len;
	uint8_t tos;
	bool df;
};

/* One echo request from client 70 to vip, expected answered when the
 * VIP answers pings (and the request is well formed), else an icmp_echo
 * drop. */
static void emit_echo_case(struct scenario *sc, const struct sc_vip *vip,
			   const struct echo_case *e, bool answered,
			   const char *what)
{
	struct sc_flow fl = sc_flow_to_vip(vip, 70, 0);
	static uint8_t icmp[1600], ip[1700], frame[1800];
	struct pkt_l3 l3 = {
		.family = vip->family, .ttl = 61, .tos = e->tos, .df = e->df,
		.ip_id = (uint16_t)(0x4000 + sc->next_id),
		.v4_opt_len = e->v4_opt_len, .n_v6_ext = e->n_v6_ext,
	};
	struct pkt_l4 echo = {
		.proto = vip->family == 4 ? 1 : 58,
		.icmp_type = vip->family == 4 ? 8 : 128,
		.icmp_rest = 0x12340000u | (sc->next_id & 0xffff),
	};
	struct pkt_l2 l2 = { .vlan = e->vlan, .vlan_tci = 7 };
	uint8_t payload[1400];
	uint32_t len, data_len = e->data_len ? e->data_len : 56;
	uint16_t l3_off;

	if (e->n_v6_ext)
		l3.v6_ext[0] = PKT_V6_HOPOPTS;
	memcpy(l3.src, fl.src, 16);
	memcpy(l3.dst, vip->addr, 16);
	pkt_fill_payload(payload, data_len, sc->next_id++);
	len = pkt_build_l4(icmp, &l3, &echo, payload, data_len);
	if (e->bad_csum)
		icmp[3] ^= 0x01;
	len = pkt_build_ip(ip, &l3, echo.proto, icmp, len, NULL);
	memcpy(l2.dst, sc->port.mac, 6);
	sc_mac("02:00:00:c1:00:01", l2.src);
	len = pkt_build_eth(frame, &l2, vip->family == 4 ? PKT_ETH_IPV4 : PKT_ETH_IPV6,
			    ip, len, &l3_off);
	struct sc_frame *fr = sc_emit_raw(sc, frame, len);
	if (answered && !e->bad_csum)
		sc_expect_echo_reply(fr, sc_vip_index(sc, vip), what);
	else
		sc_expect_drop(fr, MLV_DROP_ICMP_ECHO, what);
}

static void emit_echo(struct scenario *sc, const struct sc_vip *vip)
{
	static const struct echo_case plain = { 0 };

	emit_echo_case(sc, vip, &plain, vip->echo_reply,
		       vip->family == 4 ? "echo request to VIP" :
					  "echo6 request to VIP");
}

/* Requests to VIPs that answer pings, in the shapes the reply must
 * handle: VLAN tag kept, IPv4 options and IPv6 extension headers not
 * echoed, DSCP kept, a bad checksum not answered. */
static void emit_answered_echoes(struct scenario *sc, const struct sc_vip *vip)
{
	const struct echo_case cases[] = {
		{ .data_len = 56 },
		{ .vlan = true, .tos = 0xb8, .df = true, .data_len = 1000 },
		{ .v4_opt_len = 8, .n_v6_ext = 1, .data_len = 8 },
		{ .bad_csum = true },
	};
	char what[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(what, sizeof(what), "%s echo case %zu", vip->name, i);
		emit_echo_case(sc, vip, &cases[i], true, what);
	}
}

void sc_def_icmp(struct scenario *sc)
{
	struct sc_vip *v;

	sc->summary = "ICMP frag-needed/packet-too-big to VIPs follow their flow; "
		      "too-big packets answered or dropped; echo counted";
	v = sc_add_vip(sc, "pmtu4", "192.0.2.50", 80, 6, SC_FWD_IPIP);
	sc_add_backend(v, "p4-1", "10.99.3.1", 100);
	sc_add_backend(v, "p4-2", "10.99.3.2", 100);
	sc_add_backend(v, "p4-3", "10.99.3.3", 100);

	v = sc_add_vip(sc, "pmtu4-gue", "192.0.2.51", 53, 17, SC_FWD_GUE);
	sc_add_backend(v, "p4g-1", "10.99.3.11", 100);
	sc_add_backend(v, "p4g-2", "10.99.3.12", 100);

	v = sc_add_vip(sc, "pmtu4-gue6", "192.0.2.52", 80, 6, SC_FWD_GUE);
	sc_add_backend(v, "p4g6-1", "fd00:99:3::21", 100);
	sc_add_backend(v, "p4g6-2", "fd00:99:3::22", 100);

	v = sc_add_vip(sc, "pmtu6", "2001:db8::50", 80, 6, SC_FWD_IPIP);
	sc_add_backend(v, "p6-1", "fd00:99:3::1", 100);
	sc_add_backend(v, "p6-2", "fd00:99:3::2", 100);
	sc_add_backend(v, "p6-3", "fd00:99:3::3", 100);

	v = sc_add_vip(sc, "pmtu6-gue", "2001:db8::51", 53, 17, SC_FWD_GUE);
	sc_add_backend(v, "p6g-1", "fd00:99:3::11", 100);
	sc_add_backend(v, "p6g-2", "fd00:99:3::12", 100);

	for (uint16_t i = 0; i < sc->n_vips; i++)
		emit_pmtu_errors(sc, i);
	for (uint16_t i = 0; i < sc->n_vips; i++)
		emit_too_big(sc, i);
	emit_echo(sc, &sc->vips[0]);
	emit_echo(sc, &sc->vips[3]);

	/* Pings answered: on a UDP VIP's address, and on an IPv6 address
	 * whose TCP VIP answers for it; not on an address whose only VIP
	 * has no backend that takes new flows. */
	v = sc_add_vip(sc, "ping4", "192.0.2.53", 53, 17, SC_FWD_IPIP);
	v->echo_reply = true;
	sc_add_backend(v, "pg4-1", "10.99.3.31", 100);
	emit_answered_echoes(sc, v);
	v = sc_add_vip(sc, "ping6", "2001:db8::53", 443, 6, SC_FWD_IPIP);
	v->echo_reply = true;
	sc_add_backend(v, "pg6-1", "fd00:99:3::31", 100);
	emit_answered_echoes(sc, v);
	v = sc_add_vip(sc, "ping4-down", "192.0.2.54", 80, 6, SC_FWD_IPIP);
	v->echo_reply = true;
	sc_add_backend(v, "pgd-1", "10.99.3.41", 100)->down = true;
	emit_echo_case(sc, v, &(struct echo_case){ 0 }, false,
		       "echo request to a VIP with no usable backend");
}
