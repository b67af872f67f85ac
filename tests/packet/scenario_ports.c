/* SPDX-License-Identifier: BSD-3-Clause */
/* ports: a VIP of one port, a range and an `any` VIP on one address, each
 * port class to its VIP (one port > range > any); a range on an address
 * without `any`, whose other ports are not_vip drops.
 *
 * affinity: hash fields (docs/flow-hash.md, "Hash fields"). `source`: all
 * flows of a client (many source ports; with a range VIP, many
 * destination ports too) are one group that must reach one backend, and
 * over many clients the groups follow the weights (the checker's
 * binomial bound); IPv6 with source_prefix6 64: hosts of one /64 are one
 * group. `3tuple`: a client's source ports share a backend. Fragmented
 * datagrams of a client, and ICMP too-big errors about flows of it the
 * daemon never saw, join its group: they must reach the backend of its
 * whole packets. The checker computes each expected slot from the
 * key reduced to the VIP's fields (expect.c), not from the daemon's. */
#include <stdio.h>
#include <string.h>

#include "tests/packet/scenario.h"

#define FLOWS_PER_PORT 6

static void emit_to_port(struct scenario *sc, uint16_t v, const char *dst,
			 uint16_t dport, uint8_t proto, uint16_t exp_vip,
			 bool drop)
{
	const struct sc_vip *vip = &sc->vips[v];

	for (uint32_t i = 0; i < FLOWS_PER_PORT; i++) {
		struct sc_flow fl = sc_flow_to_vip(vip, sc_rand(sc, 60000),
						   (uint16_t)(1024 + sc_rand(sc, 60000)));
		struct sc_opts o = {
			.payload_len = 40 + sc_rand(sc, 100), .df = true,
			.tcp_flags = proto == 6 ? PKT_TCP_SYN : 0,
			.vlan = i % 3 == 1,
		};
		struct mlv_flow_key key;
		struct sc_frame *fr;
		char what[64];

		fl.family = sc_addr(dst, fl.dst);
		fl.dport = dport;
		fl.proto = proto;
		key = sc_key(&fl, true);
		fr = sc_emit(sc, &fl, &o);
		snprintf(what, sizeof(what), "%s port %u/%s flow %u", dst, dport,
			 proto == 6 ? "tcp" : "udp", i);
		if (drop)
			sc_expect_drop(fr, MLV_DROP_NOT_VIP, what);
		else
			sc_expect_forward(fr, exp_vip, &key, sc_new_group(sc),
					  what);
	}
}

void sc_def_ports(struct scenario *sc)
{
	static const uint16_t range_ports[] = { 8000, 8001, 8049, 8051, 8099, 8100 };
	static const uint16_t any_ports[] = { 1, 22, 7999, 8101, 65535 };
	static const uint16_t urange_ports[] = { 5000, 5005, 5010 };
	static const uint16_t any6_ports[] = { 52, 54, 65535 };
	struct sc_vip *v;

	sc->check_coverage = true;
	sc->summary = "one port, a range and any on one address, each port "
		      "class to its VIP; a range alone: its other ports not_vip";
	v = sc_add_vip(sc, "one", "192.0.2.90", 8050, 6, SC_FWD_IPIP);
	sc_add_backend(v, "one-1", "10.99.9.1", 100);
	sc_add_backend(v, "one-2", "10.99.9.2", 100);
	v = sc_add_vip(sc, "range", "192.0.2.90", 8000, 6, SC_FWD_GUE);
	v->port_last = 8100;
	sc_add_backend(v, "range-1", "10.99.9.11", 100);
	sc_add_backend(v, "range-2", "10.99.9.12", 100);
	sc_add_backend(v, "range-3", "10.99.9.13", 100);
	v = sc_add_vip(sc, "any", "192.0.2.90", 0, 6, SC_FWD_IPIP);
	v->port_last = 65535;
	sc_add_backend(v, "any-1", "10.99.9.21", 100);
	sc_add_backend(v, "any-2", "10.99.9.22", 100);
	v = sc_add_vip(sc, "urange", "192.0.2.91", 5000, 17, SC_FWD_IPIP);
	v->port_last = 5010;
	sc_add_backend(v, "urange-1", "10.99.9.31", 100);
	sc_add_backend(v, "urange-2", "10.99.9.32", 100);
	v = sc_add_vip(sc, "any6", "2001:db8::90", 0, 17, SC_FWD_GUE);
	v->port_last = 65535;
	sc_add_backend(v, "any6-1", "fd00:99:9::1", 100);
	sc_add_backend(v, "any6-2", "fd00:99:9::2", 100);
	v = sc_add_vip(sc, "one6", "2001:db8::90", 53, 17, SC_FWD_IPIP);
	sc_add_backend(v, "one6-1", "fd00:99:9::11", 100);
	sc_add_backend(v, "one6-2", "fd00:99:9::12", 100);

	emit_to_port(sc, 0, "192.0.2.90", 8050, 6, 0, false);
	for (size_t i = 0; i < sizeof(range_ports) / sizeof(range_ports[0]); i++)
		emit_to_port(sc, 1, "192.0.2.90", range_ports[i], 6, 1, false);
	for (size_t i = 0; i < sizeof(any_ports) / sizeof(any_ports[0]); i++)
		emit_to_port(sc, 2, "192.0.2.90", any_ports[i], 6, 2, false);
	for (size_t i = 0; i < sizeof(urange_ports) / sizeof(urange_ports[0]); i++)
		emit_to_port(sc, 3, "192.0.2.91", urange_ports[i], 17, 3, false);
	/* beside the range, no VIP: counted not_vip */
	emit_to_port(sc, 3, "192.0.2.91", 4999, 17, 0, true);
	emit_to_port(sc, 3, "192.0.2.91", 5011, 17, 0, true);
	emit_to_port(sc, 3, "192.0.2.91", 5005, 6, 0, true);   /* TCP: none */
	emit_to_port(sc, 0, "192.0.2.90", 8050, 17, 0, true);  /* UDP: none */
	for (size_t i = 0; i < sizeof(any6_ports) / sizeof(any6_ports[0]); i++)
		emit_to_port(sc, 4, "2001:db8::90", any6_ports[i], 17, 4, false);
	emit_to_port(sc, 5, "2001:db8::90", 53, 17, 5, false);
}

/* ---- affinity ---- */

#define SRC4_CLIENTS  400
#define SRC6_PREFIXES 300
#define T3_CLIENTS    300
#define SRCR_CLIENTS  200
#define FRAG_SIZE     512
#define FRAG_PAYLOAD  1800    /* 4 fragments */

static const uint32_t frag_order[4] = { 2, 0, 3, 1 };

/* flows flows of client address src (family of vip) to vip, from random
 * source ports (to random ports of a range VIP), all in group. */
static void client_flows(struct scenario *sc, uint16_t v,
			 const uint8_t src[16], uint32_t flows, uint32_t group,
			 const char *who)
{
	const struct sc_vip *vip = &sc->vips[v];

	for (uint32_t i = 0; i < flows; i++) {
		struct sc_flow fl = sc_flow_to_vip(vip, 0,
						   (uint16_t)(1024 + sc_rand(sc, 64000)));
		struct sc_opts o = {
			.payload_len = 20 + sc_rand(sc, 80), .df = true,
			.tcp_flags = vip->proto == 6 ? PKT_TCP_SYN : 0,
		};
		struct mlv_flow_key key;
		char what[96];

		memcpy(fl.src, src, 16);
		if (vip->port_last)
			fl.dport = (uint16_t)(vip->port +
				sc_rand(sc, (uint32_t)(vip->port_last - vip->port) + 1));
		key = sc_key(&fl, true);
		snprintf(what, sizeof(what), "%.32s %.32s flow %u", vip->name, who, i);
		sc_expect_forward(sc_emit(sc, &fl, &o), v, &key, group, what);
	}
}

/* An ICMP too-big about a flow of src the daemon has not seen (so not
 * tracked), in group: under source or 3tuple the quoted flow's reduced
 * key is the client's, so the table sends it to the client's backend. */
static void client_icmp_error(struct scenario *sc, uint16_t v,
			      const uint8_t src[16], uint32_t group,
			      const char *who)
{
	const struct sc_vip *vip = &sc->vips[v];
	struct sc_flow fl = sc_flow_to_vip(vip, 0,
					   (uint16_t)(1024 + sc_rand(sc, 64000)));
	struct mlv_flow_key key;
	char what[64];

	memcpy(fl.src, src, 16);
	key = sc_key(&fl, true);
	snprintf(what, sizeof(what), "%s %s too-big", vip->name, who);
	sc_expect_forward(sc_emit_icmp_error(sc, vip, &fl, 1280, false), v,
			  &key, group, what);
}

/* A fragmented datagram from src to vip in group: the client's
 * backend. */
static void client_fragments(struct scenario *sc, uint16_t v,
			     const uint8_t src[16], uint32_t group,
			     const char *who)
{
	const struct sc_vip *vip = &sc->vips[v];
	struct sc_flow fl = sc_flow_to_vip(vip, 0,
					   (uint16_t)(1024 + sc_rand(sc, 64000)));
	struct sc_opts o = { .payload_len = FRAG_PAYLOAD, .ttl = 60 };
	char what[96];

	memcpy(fl.src, src, 16);
	snprintf(what, sizeof(what), "%.32s %.32s datagram", vip->name, who);
	sc_emit_fragments(sc, &fl, &o, FRAG_SIZE, frag_order, 4, v, group,
			  what);
}

void sc_def_affinity(struct scenario *sc)
{
	struct sc_vip *v;
	uint8_t src[16];
	char who[32];

	sc->check_coverage = true;
	sc->check_distribution = true;
	sc->ct_entries = 32768;
	sc->summary = "hash: source and 3tuple: a client's flows (and "
		      "fragments) to one backend, clients spread by weight; "
		      "source_prefix6 64";
	v = sc_add_vip(sc, "src4", "192.0.2.95", 443, 6, SC_FWD_IPIP);
	v->hash = 2;
	sc_add_backend(v, "s4-100", "10.99.8.1", 100);
	sc_add_backend(v, "s4-200", "10.99.8.2", 200);
	sc_add_backend(v, "s4-300", "10.99.8.3", 300);
	v = sc_add_vip(sc, "src6", "2001:db8::95", 443, 6, SC_FWD_GUE);
	v->hash = 2;
	v->prefix6 = 64;
	sc_add_backend(v, "s6-a", "fd00:99:8::1", 100);
	sc_add_backend(v, "s6-b", "fd00:99:8::2", 100);
	sc_add_backend(v, "s6-c", "fd00:99:8::3", 200);
	v = sc_add_vip(sc, "t3", "192.0.2.96", 8080, 17, SC_FWD_IPIP);
	v->hash = 1;
	sc_add_backend(v, "t3-1", "10.99.8.11", 100);
	sc_add_backend(v, "t3-2", "10.99.8.12", 100);
	v = sc_add_vip(sc, "srcr", "192.0.2.97", 7000, 6, SC_FWD_IPIP);
	v->port_last = 7999;
	v->hash = 2;
	sc_add_backend(v, "sr-1", "10.99.8.21", 100);
	sc_add_backend(v, "sr-2", "10.99.8.22", 300);

	for (uint32_t c = 0; c < SRC4_CLIENTS; c++) {
		uint32_t g = sc_new_group(sc);

		sc_client_addr(4, c, src);
		snprintf(who, sizeof(who), "client %u", c);
		client_flows(sc, 0, src, 4, g, who);
		if (c % 10 == 0)
			client_fragments(sc, 0, src, g, who);
		if (c % 10 == 5)
			client_icmp_error(sc, 0, src, g, who);
	}
	for (uint32_t p = 0; p < SRC6_PREFIXES; p++) {
		uint32_t g = sc_new_group(sc);

		/* three hosts of 2001:db8:c6:<p>::/64 */
		for (uint32_t h = 0; h < 3; h++) {
			sc_addr("2001:db8:c6::", src);
			src[6] = (uint8_t)(p >> 8);
			src[7] = (uint8_t)p;
			for (uint32_t b = 8; b < 16; b++)
				src[b] = (uint8_t)sc_rand(sc, 256);
			snprintf(who, sizeof(who), "/64 %u host %u", p, h);
			client_flows(sc, 1, src, 2, g, who);
			if (p % 10 == 0 && h == 1)
				client_fragments(sc, 1, src, g, who);
			if (p % 10 == 5 && h == 2)
				client_icmp_error(sc, 1, src, g, who);
		}
	}
	for (uint32_t c = 0; c < T3_CLIENTS; c++) {
		uint32_t g = sc_new_group(sc);

		sc_client_addr(4, 1000 + c, src);
		snprintf(who, sizeof(who), "client %u", c);
		client_flows(sc, 2, src, 3, g, who);
		if (c % 10 == 0)
			client_fragments(sc, 2, src, g, who);
		if (c % 10 == 5)
			client_icmp_error(sc, 2, src, g, who);
	}
	for (uint32_t c = 0; c < SRCR_CLIENTS; c++) {
		uint32_t g = sc_new_group(sc);

		sc_client_addr(4, 2000 + c, src);
		snprintf(who, sizeof(who), "client %u", c);
		client_flows(sc, 3, src, 3, g, who);
	}
}
