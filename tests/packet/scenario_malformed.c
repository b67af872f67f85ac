/* SPDX-License-Identifier: BSD-3-Clause */
/* malformed: every class of frame the data plane must refuse, each
 * expected under its own drop reason (dataplane/packet/counters.h), with a valid
 * packet after each one so the run also shows that garbage does not
 * disturb forwarding. */
#include <stdio.h>
#include <string.h>

#include "tests/packet/scenario.h"

/* A valid packet of a fresh flow to vip, expected forwarded. */
static void valid(struct scenario *sc, uint16_t v)
{
	const struct sc_vip *vip = &sc->vips[v];
	struct sc_flow fl = sc_flow_to_vip(vip, 200 + sc->n_frames,
					   (uint16_t)(50000 + sc->n_frames));
	struct mlv_flow_key key = sc_key(&fl, true);
	struct sc_opts o = {
		.payload_len = 40,
		.tcp_flags = vip->proto == 6 ? PKT_TCP_SYN : 0,
	};

	sc_expect_forward(sc_emit(sc, &fl, &o), v, &key, 0, "valid in between");
}

/* A packet to vip (or to its address with another protocol/port) that the
 * caller corrupts; payload_len bytes of payload. */
static struct sc_frame *base(struct scenario *sc, uint16_t v, uint8_t proto,
			     uint32_t payload_len)
{
	const struct sc_vip *vip = &sc->vips[v];
	struct sc_flow fl = sc_flow_to_vip(vip, 300 + sc->n_frames, 51000);
	struct sc_opts o = {.payload_len = payload_len, .tcp_flags = PKT_TCP_ACK};

	fl.proto = proto;
	return sc_emit(sc, &fl, &o);
}

static void drop(struct scenario *sc, struct sc_frame *fr,
		 enum mlv_drop_reason r, const char *what, uint16_t v_after)
{
	sc_expect_drop(fr, r, what);
	valid(sc, v_after);
}

static void emit_raw_ethertype(struct scenario *sc, uint16_t type, bool vlan,
			       const char *what)
{
	uint8_t f[60] = {0};
	uint32_t off = 12;

	memset(f, 0xff, 6);
	sc_mac("02:00:00:c1:00:01", f + 6);
	if (vlan) {
		pkt_put16(f + off, PKT_ETH_VLAN);
		pkt_put16(f + off + 2, 0x0064);
		off += 4;
	}
	pkt_put16(f + off, type);
	if (type == PKT_ETH_ARP) {
		/* who-has 10.99.0.1 tell 10.99.0.254 */
		static const uint8_t arp[] = {
			0, 1, 8, 0, 6, 4, 0, 1,
			2, 0, 0, 0xc1, 0, 1, 10, 99, 0, 254,
			0, 0, 0, 0, 0, 0, 10, 99, 0, 1,
		};
		memcpy(f + off + 2, arp, sizeof(arp));
	}
	sc_expect_drop(sc_emit_raw(sc, f, sizeof(f)), MLV_DROP_NOT_IP, what);
}

static void emit_not_ip(struct scenario *sc)
{
	emit_raw_ethertype(sc, PKT_ETH_ARP, false, "ARP request");
	valid(sc, 0);
	emit_raw_ethertype(sc, PKT_ETH_ARP, true, "VLAN-tagged ARP request");
	valid(sc, 2);
	emit_raw_ethertype(sc, 0x88cc, false, "LLDP");
	valid(sc, 1);
}

static void emit_truncated(struct scenario *sc)
{
	struct sc_frame *fr;

	fr = base(sc, 0, 6, 100);
	fr->len = 10;
	drop(sc, fr, MLV_DROP_TRUNCATED, "10-byte frame", 0);

	fr = base(sc, 0, 6, 100);
	pkt_put16(fr->data + 12, PKT_ETH_VLAN);
	fr->len = 16;
	drop(sc, fr, MLV_DROP_TRUNCATED, "802.1Q tag cut short", 0);

	fr = base(sc, 0, 6, 100);
	fr->len = 14 + 12;
	drop(sc, fr, MLV_DROP_TRUNCATED, "12 bytes of IPv4 header", 0);

	fr = base(sc, 2, 6, 100);
	fr->len = 14 + 30;
	drop(sc, fr, MLV_DROP_TRUNCATED, "30 bytes of IPv6 header", 2);
}

static void emit_bad_ipv4(struct scenario *sc)
{
	struct sc_frame *fr;
	uint8_t *ip;

	fr = base(sc, 0, 6, 100);
	ip = fr->data + fr->l3_off;
	ip[0] = 0x44;
	pkt_ipv4_fix_csum(ip, 20);
	drop(sc, fr, MLV_DROP_BAD_IPV4, "IPv4 IHL 4", 0);

	fr = base(sc, 0, 6, 100);
	ip = fr->data + fr->l3_off;
	ip[0] = 0x65;
	pkt_ipv4_fix_csum(ip, 20);
	drop(sc, fr, MLV_DROP_BAD_IPV4, "version 6 in an IPv4 ethertype", 0);

	fr = base(sc, 0, 6, 100);
	ip = fr->data + fr->l3_off;
	pkt_put16(ip + 2, (uint16_t)(fr->l3_len + 20));
	pkt_ipv4_fix_csum(ip, 20);
	drop(sc, fr, MLV_DROP_BAD_IPV4, "IPv4 total length beyond the frame", 0);

	fr = base(sc, 0, 6, 100);
	ip = fr->data + fr->l3_off;
	pkt_put16(ip + 2, 16);
	pkt_ipv4_fix_csum(ip, 20);
	drop(sc, fr, MLV_DROP_BAD_IPV4, "IPv4 total length below the header", 0);

	fr = base(sc, 0, 6, 100);
	ip = fr->data + fr->l3_off;
	ip[0] = 0x4f;    /* 60-byte header, options would overrun total length */
	pkt_put16(ip + 2, 40);
	pkt_ipv4_fix_csum(ip, 20);
	drop(sc, fr, MLV_DROP_BAD_IPV4, "IPv4 IHL 15 beyond total length 40", 1);
}

static void emit_bad_ipv6(struct scenario *sc)
{
	struct sc_frame *fr;
	uint8_t *ip;

	fr = base(sc, 2, 6, 100);
	ip = fr->data + fr->l3_off;
	ip[0] = (uint8_t)(0x40 | (ip[0] & 0x0f));
	drop(sc, fr, MLV_DROP_BAD_IPV6, "version 4 in an IPv6 ethertype", 2);

	fr = base(sc, 2, 6, 100);
	ip = fr->data + fr->l3_off;
	pkt_put16(ip + 4, (uint16_t)(pkt_get16(ip + 4) + 8));
	drop(sc, fr, MLV_DROP_BAD_IPV6, "IPv6 payload length beyond the frame", 2);

	/* a destination-options header claiming 64 bytes in a 30-byte payload */
	{
		const struct sc_vip *vip = &sc->vips[2];
		struct sc_flow fl = sc_flow_to_vip(vip, 400, 52000);
		struct sc_opts o = {.payload_len = 8, .tcp_flags = PKT_TCP_ACK,
				    .n_v6_ext = 1, .v6_ext = {PKT_V6_DSTOPTS}};

		fr = sc_emit(sc, &fl, &o);
		fr->data[fr->l3_off + 40 + 1] = 7;
		drop(sc, fr, MLV_DROP_BAD_IPV6,
		     "IPv6 extension header beyond the packet", 2);

		/* hop-by-hop must come first (RFC 8200 4.1) */
		o.n_v6_ext = 2;
		o.v6_ext[0] = PKT_V6_DSTOPTS;
		o.v6_ext[1] = PKT_V6_HOPOPTS;
		drop(sc, sc_emit(sc, &fl, &o), MLV_DROP_BAD_IPV6,
		     "IPv6 hop-by-hop header not first", 2);
	}
}

static void emit_bad_l4(struct scenario *sc)
{
	struct sc_frame *fr;
	uint8_t *l4;

	fr = base(sc, 0, 6, 100);
	l4 = fr->data + fr->l3_off + 20;
	l4[12] = 4 << 4;
	drop(sc, fr, MLV_DROP_BAD_L4, "TCP data offset 4", 0);

	fr = base(sc, 0, 6, 8);
	l4 = fr->data + fr->l3_off + 20;
	l4[12] = 15 << 4;     /* 60 bytes of header in a 28-byte segment */
	drop(sc, fr, MLV_DROP_BAD_L4, "TCP data offset beyond the packet", 0);

	fr = base(sc, 2, 6, 100);
	l4 = fr->data + fr->l3_off + 40;
	l4[12] = 2 << 4;
	drop(sc, fr, MLV_DROP_BAD_L4, "IPv6 TCP data offset 2", 2);

	/* the IP packet ends inside the TCP header */
	fr = base(sc, 0, 6, 100);
	{
		uint8_t *ip = fr->data + fr->l3_off;

		pkt_put16(ip + 2, 20 + 12);
		pkt_ipv4_fix_csum(ip, 20);
	}
	drop(sc, fr, MLV_DROP_BAD_L4, "12-byte TCP header", 0);

	fr = base(sc, 1, 17, 100);
	l4 = fr->data + fr->l3_off + 20;
	pkt_put16(l4 + 4, 4);
	drop(sc, fr, MLV_DROP_BAD_L4, "UDP length 4", 1);

	fr = base(sc, 1, 17, 100);
	l4 = fr->data + fr->l3_off + 20;
	pkt_put16(l4 + 4, 8 + 100 + 1);
	drop(sc, fr, MLV_DROP_BAD_L4, "UDP length beyond the packet", 1);
}

static void emit_unsupported(struct scenario *sc)
{
	const struct sc_vip *v4 = &sc->vips[0], *v6 = &sc->vips[2];
	static uint8_t l4[256], ip[512], frame[600];
	struct pkt_l2 l2 = {0};
	uint8_t payload[32];
	uint16_t l3_off;
	static const struct {
		uint8_t family, proto, type, code;
		bool more_frags;
		const char *what;
	} cases[] = {
		{4, 132, 0, 0, false, "SCTP to a VIP address"},
		{4, 47, 0, 0, false, "GRE to a VIP address"},
		{6, 132, 0, 0, false, "IPv6 SCTP to a VIP address"},
		{4, 1, 13, 0, false, "ICMP timestamp request to a VIP"},
		{4, 1, 3, 3, false, "ICMP port unreachable to a VIP"},
		{6, 58, 135, 0, false, "ICMPv6 neighbour solicitation"},
		{6, 58, 129, 0, false, "ICMPv6 echo reply to a VIP"},
		{4, 1, 8, 0, true, "first fragment of an ICMP echo"},
	};

	memcpy(l2.dst, sc->port.mac, 6);
	sc_mac("02:00:00:c1:00:01", l2.src);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct sc_vip *vip = cases[i].family == 4 ? v4 : v6;
		struct pkt_l3 l3 = {.family = vip->family, .ttl = 64,
				    .ip_id = (uint16_t)(7000 + i)};
		struct pkt_l4 h = {.proto = cases[i].proto,
				   .icmp_type = cases[i].type,
				   .icmp_code = cases[i].code};
		struct pkt_frag fg = {.is_fragment = cases[i].more_frags,
				      .more = true};
		uint32_t len;

		sc_client_addr(vip->family, 500 + (uint32_t)i, l3.src);
		memcpy(l3.dst, vip->addr, 16);
		pkt_fill_payload(payload, sizeof(payload), sc->next_id++);
		len = pkt_build_l4(l4, &l3, &h, payload, sizeof(payload));
		len = pkt_build_ip(ip, &l3, h.proto, l4, len, &fg);
		len = pkt_build_eth(frame, &l2,
				    vip->family == 4 ? PKT_ETH_IPV4 : PKT_ETH_IPV6,
				    ip, len, &l3_off);
		drop(sc, sc_emit_raw(sc, frame, len), MLV_DROP_UNSUPPORTED,
		     cases[i].what, vip->family == 4 ? 0 : 2);
	}
}

static void emit_not_vip(struct scenario *sc)
{
	const struct sc_vip *v4 = &sc->vips[0], *v6 = &sc->vips[2];
	struct sc_opts o = {.payload_len = 20, .tcp_flags = PKT_TCP_SYN};
	struct sc_flow fl;

	fl = sc_flow_to_vip(v4, 600, 53000);
	sc_addr("192.0.2.99", fl.dst);
	drop(sc, sc_emit(sc, &fl, &o), MLV_DROP_NOT_VIP, "TCP to a non-VIP", 0);

	fl = sc_flow_to_vip(v4, 601, 53001);
	fl.proto = 17;
	drop(sc, sc_emit(sc, &fl, &o), MLV_DROP_NOT_VIP,
	     "UDP to a TCP-only VIP", 0);

	fl = sc_flow_to_vip(v4, 602, 53002);
	fl.dport = 8080;
	drop(sc, sc_emit(sc, &fl, &o), MLV_DROP_NOT_VIP,
	     "TCP to a VIP address, other port", 0);

	fl = sc_flow_to_vip(v6, 603, 53003);
	sc_addr("2001:db8::99", fl.dst);
	drop(sc, sc_emit(sc, &fl, &o), MLV_DROP_NOT_VIP,
	     "IPv6 TCP to a non-VIP", 2);
}

void sc_def_malformed(struct scenario *sc)
{
	struct sc_vip *v;

	sc->summary = "non-IP, truncated, bad IPv4/IPv6/L4 headers, unsupported "
		      "protocols, non-VIP traffic: each under its drop reason";
	v = sc_add_vip(sc, "m4", "192.0.2.60", 80, 6, SC_FWD_IPIP);
	sc_add_backend(v, "m4-1", "10.99.4.1", 100);
	sc_add_backend(v, "m4-2", "10.99.4.2", 100);
	v = sc_add_vip(sc, "m4u", "192.0.2.61", 53, 17, SC_FWD_IPIP);
	sc_add_backend(v, "m4u-1", "10.99.4.11", 100);
	v = sc_add_vip(sc, "m6", "2001:db8::60", 80, 6, SC_FWD_IPIP);
	sc_add_backend(v, "m6-1", "fd00:99:4::1", 100);
	sc_add_backend(v, "m6-2", "fd00:99:4::2", 100);

	emit_not_ip(sc);
	emit_truncated(sc);
	emit_bad_ipv4(sc);
	emit_bad_ipv6(sc);
	emit_bad_l4(sc);
	emit_unsupported(sc);
	emit_not_vip(sc);
}
