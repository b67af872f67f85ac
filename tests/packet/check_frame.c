/* SPDX-License-Identifier: BSD-3-Clause */
/* Verifying one output frame that carries a client packet to a backend:
 * IPIP / GUE (outer headers checked field by field against
 * docs/forwarding.md) or L2 DSR (MAC rewrite only), the inner packet
 * byte-identical to an input packet, and the backend the one the Maglev
 * table gives that packet's flow key. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/packet/check.h"
#include "tests/packet/csum.h"

#define OUTER_TTL       64        /* docs/forwarding.md: outer TTL/hop limit */
#define GUE_SPORT_BASE  49152     /* GUE source port = BASE + (hash & MASK) */
#define GUE_SPORT_MASK  0x3fff
#define FLOW_LABEL_MASK 0xfffff
#define IPV4_DF         0x4000

static const char *mac_str(const uint8_t *m, char *buf)
{
	sprintf(buf, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3],
		m[4], m[5]);
	return buf;
}

/* The TOS / traffic-class byte of an IP packet. */
static uint8_t ip_tos(const uint8_t *ip)
{
	return (ip[0] >> 4) == 4 ? ip[1] : (uint8_t)(pkt_get16(ip) >> 4);
}

/* Backend of vip (in config A, else config B) with this address or MAC. */
static int find_backend(const struct check_ctx *c, uint16_t vip,
			uint8_t family, const uint8_t *addr, const uint8_t *mac)
{
	const struct sc_vip *sets[2] = {
		&c->sc->vips[vip],
		c->sc->n_alt_vips ? &c->sc->alt_vips[vip] : NULL,
	};

	for (int s = 0; s < 2; s++) {
		if (!sets[s])
			continue;
		for (uint32_t i = 0; i < sets[s]->n_backends; i++) {
			const struct sc_backend *b = &sets[s]->backends[i];

			if (mac ? (b->has_mac && memcmp(b->mac, mac, 6) == 0) :
				  (addr && b->family == family &&
				   memcmp(b->addr, addr, family == 4 ? 4 : 16) == 0))
				return (int)i;
		}
	}
	return -1;
}

static const char *backend_name(const struct check_ctx *c, uint16_t vip, int b)
{
	if (b < 0)
		return "(none)";
	if ((uint32_t)b < c->sc->vips[vip].n_backends)
		return c->sc->vips[vip].backends[b].name;
	if (c->sc->n_alt_vips && (uint32_t)b < c->sc->alt_vips[vip].n_backends)
		return c->sc->alt_vips[vip].backends[b].name;
	return "?";
}

/* The input frame's expectation allows forwarding to backend b of its VIP
 * through method fwd; record it. */
static void record_forward(struct check_ctx *c, uint64_t out_no, int64_t idx,
			   enum sc_fwd fwd, int b, uint32_t inner_len)
{
	const struct sc_frame *fr = &c->sc->frames[idx];
	const struct sc_expect *e = &fr->exp;
	const struct sc_vip *vip;
	int want, want_alt = -2;

	if (e->outcome != SC_FORWARD && e->outcome != SC_MAY_LIMIT) {
		check_fail(c, "output frame %" PRIu64 ": carries input frame %" PRId64
			   " (%s), which must be %s, not forwarded", out_no, idx,
			   e->what, e->outcome == SC_DROP ? "dropped" :
			   "answered with ICMP");
		return;
	}
	vip = &c->sc->vips[e->vip];
	if (vip->fwd != fwd) {
		static const char *const names[] = {"ipip", "gue", "l2dsr"};

		check_fail(c, "output frame %" PRIu64 ": input frame %" PRId64
			   " (%s) left by %s, VIP %s forwards by %s", out_no, idx,
			   e->what, names[fwd], vip->name, names[vip->fwd]);
		return;
	}
	if (b < 0) {
		check_fail(c, "output frame %" PRIu64 ": input frame %" PRId64
			   " (%s) sent to an address/MAC that is no backend of %s",
			   out_no, idx, e->what, vip->name);
		return;
	}
	want = c->want ? c->want[idx] : expect_backend(&c->tabs, e->vip, &e->key);
	if (c->storm)
		want_alt = expect_backend(&c->alt_tabs, e->vip, &e->key);
	if (b != want && b != want_alt) {
		check_fail(c, "output frame %" PRIu64 ": input frame %" PRId64
			   " (%s) went to backend %s, %s %s%s%s",
			   out_no, idx, e->what, backend_name(c, e->vip, b),
			   e->to_backend ? "its QUIC connection ID names" :
			   "the table says",
			   backend_name(c, e->vip, want),
			   c->storm ? " or " : "",
			   c->storm ? backend_name(c, e->vip, want_alt) : "");
	}
	if (c->backend_of[idx] && c->backend_of[idx] != b + 1 && !c->storm)
		check_fail(c, "input frame %" PRId64 " (%s) forwarded to two "
			   "backends", idx, e->what);
	c->backend_of[idx] = (uint8_t)(b + 1);
	if (e->group) {
		if (!c->group_backend[e->group]) {
			c->group_backend[e->group] = (uint8_t)(b + 1);
			c->group_first[e->group] = (uint32_t)idx;
		} else if (c->group_backend[e->group] != b + 1) {
			check_fail(c, "input frame %" PRId64 " (%s) went to %s but "
				   "input frame %u (%s) of the same flow/datagram "
				   "went to %s", idx, e->what,
				   backend_name(c, e->vip, b),
				   c->group_first[e->group],
				   c->sc->frames[c->group_first[e->group]].exp.what,
				   backend_name(c, e->vip,
						c->group_backend[e->group] - 1));
		}
	}
	c->forwarded[idx]++;
	c->n_out_forward++;
	c->out_pkts[e->vip][b]++;
	c->out_bytes[e->vip][b] += inner_len;
}

/* Frame length must be exactly hdr + ip_len (zero padding allowed only up
 * to the Ethernet minimum). */
static bool length_ok(struct check_ctx *c, uint64_t out_no, uint32_t len,
		      uint32_t want)
{
	if (len == want)
		return true;
	if (want < 60 && len == 60)
		return true;
	check_fail(c, "output frame %" PRIu64 ": %u bytes, its headers say %u",
		   out_no, len, want);
	return false;
}

struct outer {
	uint8_t family;
	const uint8_t *ip;
	uint8_t proto;        /* protocol / next header */
	uint8_t tos;
	const uint8_t *src;
	const uint8_t *dst;
	const uint8_t *payload;
	uint32_t payload_len;
	uint32_t flow_label;  /* IPv6 */
};

static bool parse_outer4(struct check_ctx *c, uint64_t n, const uint8_t *d,
			 uint32_t len, struct outer *o)
{
	const uint8_t *ip = d + 14;
	uint32_t tot;

	if (len < 14 + 20) {
		check_fail(c, "output frame %" PRIu64 ": IPv4 outer header cut "
			   "(%u bytes)", n, len);
		return false;
	}
	tot = pkt_get16(ip + 2);
	if (ip[0] != 0x45)
		check_fail(c, "output frame %" PRIu64 ": outer IPv4 version/IHL "
			   "0x%02x, want 0x45", n, ip[0]);
	if (!length_ok(c, n, len, 14 + tot) || tot < 20)
		return false;
	if (!pkt_csum_ok(pkt_csum_add(0, ip, 20)))
		check_fail(c, "output frame %" PRIu64 ": outer IPv4 header "
			   "checksum 0x%04x is wrong", n, pkt_get16(ip + 10));
	if (pkt_get16(ip + 6) != IPV4_DF || pkt_get16(ip + 4) != 0)
		check_fail(c, "output frame %" PRIu64 ": outer IPv4 id/flags "
			   "0x%04x/0x%04x, want 0/DF (docs/forwarding.md)", n,
			   pkt_get16(ip + 4), pkt_get16(ip + 6));
	if (ip[8] != OUTER_TTL)
		check_fail(c, "output frame %" PRIu64 ": outer TTL %u, want %u",
			   n, ip[8], OUTER_TTL);
	o->family = 4;
	o->src = ip + 12;
	o->ip = ip;
	o->proto = ip[9];
	o->tos = ip[1];
	o->dst = ip + 16;
	o->payload = ip + 20;
	o->payload_len = tot - 20;
	return true;
}

static bool parse_outer6(struct check_ctx *c, uint64_t n, const uint8_t *d,
			 uint32_t len, struct outer *o)
{
	const uint8_t *ip = d + 14;
	uint32_t plen, w0;

	if (len < 14 + 40) {
		check_fail(c, "output frame %" PRIu64 ": IPv6 outer header cut "
			   "(%u bytes)", n, len);
		return false;
	}
	w0 = pkt_get32(ip);
	plen = pkt_get16(ip + 4);
	if (w0 >> 28 != 6)
		check_fail(c, "output frame %" PRIu64 ": outer IPv6 version %u",
			   n, w0 >> 28);
	if (!length_ok(c, n, len, 14 + 40 + plen))
		return false;
	if (ip[7] != OUTER_TTL)
		check_fail(c, "output frame %" PRIu64 ": outer hop limit %u, "
			   "want %u", n, ip[7], OUTER_TTL);
	o->family = 6;
	o->src = ip + 8;
	o->ip = ip;
	o->proto = ip[6];
	o->tos = (uint8_t)(w0 >> 20);
	o->flow_label = w0 & FLOW_LABEL_MASK;
	o->dst = ip + 24;
	o->payload = ip + 40;
	o->payload_len = plen;
	return true;
}

/* The outer source a frame of vip with flow hash hash must carry
 * (docs/forwarding.md, "Outer sources"): the port's address, or for an
 * ipip VIP with a source prefix of the outer family the prefix's address
 * with its host bits (the last 32 bits at most) from the hash's low bits. */
static void want_source(const struct scenario *sc, const struct sc_vip *vip,
			uint8_t family, uint32_t hash, uint8_t out[16])
{
	const char *pfx = vip->fwd != SC_FWD_IPIP ? NULL :
			  family == 4 ? vip->ipip_source : vip->ipip_source6;
	uint32_t alen = family == 4 ? 4 : 16, host, mask, last;
	char addr[64];
	const char *slash;
	uint8_t *l;

	memset(out, 0, 16);
	memcpy(out, family == 4 ? sc->port.addr4 : sc->port.addr6, alen);
	if (!pfx)
		return;
	slash = strchr(pfx, '/');
	snprintf(addr, sizeof(addr), "%.*s", (int)(slash - pfx), pfx);
	sc_addr(addr, out);
	host = alen * 8 - (uint32_t)atoi(slash + 1);
	mask = host >= 32 ? 0xFFFFFFFFu : (1u << host) - 1;
	l = out + alen - 4;
	last = ((uint32_t)l[0] << 24 | (uint32_t)l[1] << 16 |
		(uint32_t)l[2] << 8 | l[3]) | (hash & mask);
	l[0] = (uint8_t)(last >> 24);
	l[1] = (uint8_t)(last >> 16);
	l[2] = (uint8_t)(last >> 8);
	l[3] = (uint8_t)last;
}

/* UDP + GUE header checks; on success the inner packet, its length and
 * protocol, the UDP ports and the GUE private data (Hlen words, which a
 * second-chance VIP's frames carry, check_hops). */
static bool parse_gue(struct check_ctx *c, uint64_t n, const struct outer *o,
		      const uint8_t **inner, uint32_t *inner_len,
		      uint8_t *inner_proto, uint16_t *sport, uint16_t *dport,
		      const uint8_t **priv, uint32_t *priv_len)
{
	const uint8_t *u = o->payload;
	uint16_t ulen, ck;

	if (o->payload_len < 8 + 4) {
		check_fail(c, "output frame %" PRIu64 ": UDP+GUE headers cut", n);
		return false;
	}
	ulen = pkt_get16(u + 4);
	ck = pkt_get16(u + 6);
	if (ulen != o->payload_len)
		check_fail(c, "output frame %" PRIu64 ": UDP length %u, outer "
			   "payload %u", n, ulen, o->payload_len);
	if (o->family == 6 && ck == 0)
		check_fail(c, "output frame %" PRIu64 ": UDP checksum 0 over "
			   "IPv6 (RFC 8200 8.1 requires one)", n);
	if (ck != 0) {
		uint32_t s = pkt_csum_pseudo(o->family, o->ip + (o->family == 4 ? 12 : 8),
					     o->dst, o->payload_len, 17);

		if (!pkt_csum_ok(pkt_csum_add(s, u, o->payload_len)))
			check_fail(c, "output frame %" PRIu64 ": UDP checksum "
				   "0x%04x is wrong", n, ck);
	}
	/* GUE variant 0 (draft-ietf-intarea-gue): ver 0, C 0, hlen the
	 * private data's words, then the inner protocol, flags 0 */
	*priv_len = (uint32_t)(u[8] & 0x1f) * 4;
	if ((u[8] & 0xe0) != 0 || pkt_get16(u + 10) != 0)
		check_fail(c, "output frame %" PRIu64 ": GUE header %02x %02x "
			   "%02x %02x, want <hlen> <proto> 00 00", n, u[8], u[9],
			   u[10], u[11]);
	if (o->payload_len < 8 + 4 + *priv_len) {
		check_fail(c, "output frame %" PRIu64 ": GUE private data cut", n);
		return false;
	}
	*inner_proto = u[9];
	*priv = u + 12;
	*inner = u + 12 + *priv_len;
	*inner_len = o->payload_len - 12 - *priv_len;
	*sport = pkt_get16(u);
	*dport = pkt_get16(u + 2);
	return true;
}

/* The GUE private data of a frame of vip to backend b (index in vip):
 * none without second_chance; with it the hop block of docs/forwarding.md,
 * version 1, listing the slot's owner and second choice from the
 * checker's own table (without b, repeats or other families; a fresh
 * daemon has no previous owners). */
static void check_hops(struct check_ctx *c, uint64_t n, const struct sc_frame *fr,
		       const struct sc_vip *vip, int b, const struct outer *o,
		       const uint8_t *priv, uint32_t priv_len)
{
	uint32_t alen = o->family == 4 ? 4 : 16;
	uint8_t want[4 + 2 * 16] = { 0x4D, 1, (uint8_t)(o->family == 6 ? 2 : 0), 0 };
	int first, second, cand[2];

	if (!vip->second_chance) {
		if (priv_len != 0)
			check_fail(c, "output frame %" PRIu64 " (%s): %u bytes of "
				   "GUE private data on a VIP without second_chance",
				   n, fr->exp.what, priv_len);
		return;
	}
	if (priv_len != 4 + 2 * alen) {
		check_fail(c, "output frame %" PRIu64 " (%s): GUE private data of "
			   "%u bytes, want %u (second-chance hops over IPv%u)", n,
			   fr->exp.what, priv_len, 4 + 2 * alen, o->family);
		return;
	}
	expect_choices(&c->tabs, fr->exp.vip, &fr->exp.key, &first, &second);
	cand[0] = first;
	cand[1] = second;
	for (int k = 0; k < 2; k++) {
		const struct sc_backend *h;

		if (cand[k] < 0 || cand[k] == b || (k == 1 && cand[1] == cand[0]))
			continue;
		h = &vip->backends[cand[k]];
		if (h->family != o->family)
			continue;
		memcpy(want + 4 + want[3] * alen, h->addr, alen);
		want[3]++;
	}
	if (memcmp(priv, want, priv_len) != 0) {
		char got_hex[3 * 36 + 1], want_hex[3 * 36 + 1];

		for (uint32_t i = 0; i < priv_len; i++) {
			sprintf(got_hex + 3 * i, "%02x ", priv[i]);
			sprintf(want_hex + 3 * i, "%02x ", want[i]);
		}
		check_fail(c, "output frame %" PRIu64 " (%s): hop block\n  got  %s"
			   "\n  want %s", n, fr->exp.what, got_hex, want_hex);
	}
}

static void check_encap(struct check_ctx *c, uint64_t n, const uint8_t *d,
			uint32_t len)
{
	uint16_t et = pkt_get16(d + 12);
	struct outer o = {0};
	const uint8_t *inner, *priv = NULL;
	uint32_t inner_len, priv_len = 0;
	uint8_t inner_proto;
	uint16_t sport = 0, dport = 0;
	bool gue;
	int64_t idx;
	char a[64], m[20];

	if (memcmp(d + 6, c->sc->port.mac, 6) != 0)
		check_fail(c, "output frame %" PRIu64 ": source MAC %s, want the "
			   "port's %s", n, mac_str(d + 6, m), mac_str(c->sc->port.mac, a));
	if (et == PKT_ETH_IPV4) {
		if (!parse_outer4(c, n, d, len, &o))
			return;
	} else if (et == PKT_ETH_IPV6) {
		if (!parse_outer6(c, n, d, len, &o))
			return;
	} else {
		check_fail(c, "output frame %" PRIu64 ": to the next hop with "
			   "ethertype 0x%04x (no VLAN tag expected)", n, et);
		return;
	}

	gue = o.proto == 17;
	if (gue) {
		if (!parse_gue(c, n, &o, &inner, &inner_len, &inner_proto,
			       &sport, &dport, &priv, &priv_len))
			return;
	} else if (o.proto == 4 || o.proto == 41) {
		inner = o.payload;
		inner_len = o.payload_len;
		inner_proto = o.proto;
	} else {
		check_fail(c, "output frame %" PRIu64 ": outer protocol %u is "
			   "neither IPIP (4/41) nor UDP (GUE)", n, o.proto);
		return;
	}

	idx = frame_index_find(&c->index, inner, inner_len);
	if (idx < 0) {
		check_fail(c, "output frame %" PRIu64 ": inner packet (%u bytes, "
			   "to %s) is not byte-identical to any input packet", n,
			   inner_len, inner_len >= 20 ?
			   check_addr((inner[0] >> 4) == 4 ? 4 : 6,
				      inner + ((inner[0] >> 4) == 4 ? 16 : 24), a,
				      sizeof(a)) : "?");
		return;
	}
	const struct sc_frame *fr = &c->sc->frames[idx];
	const struct sc_vip *vip = &c->sc->vips[fr->exp.vip];
	uint32_t hash = expect_hash(&fr->exp.key);
	uint8_t want_proto = (inner[0] >> 4) == 4 ? 4 : 41;

	if (inner_proto != want_proto)
		check_fail(c, "output frame %" PRIu64 ": %s says inner protocol "
			   "%u for an IPv%u packet", n, gue ? "GUE" : "outer header",
			   inner_proto, inner[0] >> 4);
	if (o.tos != ip_tos(inner))
		check_fail(c, "output frame %" PRIu64 " (%s): outer DSCP/ECN 0x%02x,"
			   " inner 0x%02x (must be copied)", n, fr->exp.what,
			   o.tos, ip_tos(inner));
	if (fr->exp.outcome == SC_FORWARD || fr->exp.outcome == SC_MAY_LIMIT) {
		uint8_t src[16];
		char b[64];

		want_source(c->sc, vip, o.family, hash, src);
		if (memcmp(o.src, src, o.family == 4 ? 4 : 16) != 0)
			check_fail(c, "output frame %" PRIu64 " (%s): outer source "
				   "%s, want %s (%s)", n, fr->exp.what,
				   check_addr(o.family, o.src, a, sizeof(a)),
				   check_addr(o.family, src, b, sizeof(b)),
				   vip->fwd == SC_FWD_IPIP &&
				   (o.family == 4 ? vip->ipip_source : vip->ipip_source6) ?
				   "the source prefix and the flow hash" : "the port's address");
		if (o.family == 6 && o.flow_label != (hash & FLOW_LABEL_MASK))
			check_fail(c, "output frame %" PRIu64 " (%s): flow label "
				   "0x%05x, want the flow hash's low 20 bits 0x%05x",
				   n, fr->exp.what, o.flow_label,
				   hash & FLOW_LABEL_MASK);
		if (gue && dport != vip->gue_port)
			check_fail(c, "output frame %" PRIu64 " (%s): GUE port %u, "
				   "VIP %s has gue_port %u", n, fr->exp.what, dport,
				   vip->name, vip->gue_port);
		if (gue && sport != GUE_SPORT_BASE + (hash & GUE_SPORT_MASK))
			check_fail(c, "output frame %" PRIu64 " (%s): GUE source "
				   "port %u, want %u from the flow hash", n,
				   fr->exp.what, sport,
				   GUE_SPORT_BASE + (hash & GUE_SPORT_MASK));
	}
	if (gue)
		check_hops(c, n, fr, vip,
			   find_backend(c, fr->exp.vip, o.family, o.dst, NULL),
			   &o, priv, priv_len);
	record_forward(c, n, idx, gue ? SC_FWD_GUE : SC_FWD_IPIP,
		       find_backend(c, fr->exp.vip, o.family, o.dst, NULL),
		       inner_len);
}

static void check_l2dsr(struct check_ctx *c, uint64_t n, const uint8_t *d,
			uint32_t len)
{
	uint16_t et = pkt_get16(d + 12);
	const uint8_t *ip = d + 14;
	uint32_t ip_len;
	int64_t idx;
	char a[20], b[20];

	if (memcmp(d + 6, c->sc->port.mac, 6) != 0)
		check_fail(c, "output frame %" PRIu64 ": source MAC %s, want the "
			   "port's %s", n, mac_str(d + 6, a), mac_str(c->sc->port.mac, b));
	if (et == PKT_ETH_IPV4 && len >= 14 + 20) {
		ip_len = pkt_get16(ip + 2);
	} else if (et == PKT_ETH_IPV6 && len >= 14 + 40) {
		ip_len = 40u + pkt_get16(ip + 4);
	} else {
		check_fail(c, "output frame %" PRIu64 ": L2 DSR frame with "
			   "ethertype 0x%04x, %u bytes", n, et, len);
		return;
	}
	if (!length_ok(c, n, len, 14 + ip_len))
		return;
	idx = frame_index_find(&c->index, ip, ip_len);
	if (idx < 0) {
		check_fail(c, "output frame %" PRIu64 ": L2 DSR packet is not "
			   "byte-identical to any input packet", n);
		return;
	}
	record_forward(c, n, idx, SC_FWD_L2DSR,
		       find_backend(c, c->sc->frames[idx].exp.vip, 0, NULL, d),
		       ip_len);
}

static bool is_backend_mac(const struct check_ctx *c, const uint8_t *mac)
{
	for (uint32_t v = 0; v < c->sc->n_vips; v++) {
		const struct sc_vip *sets[2] = {
			&c->sc->vips[v],
			c->sc->n_alt_vips ? &c->sc->alt_vips[v] : NULL,
		};

		for (int s = 0; s < 2; s++)
			for (uint32_t i = 0; sets[s] && i < sets[s]->n_backends; i++)
				if (sets[s]->backends[i].has_mac &&
				    memcmp(sets[s]->backends[i].mac, mac, 6) == 0)
					return true;
	}
	return false;
}

/* A VLAN port's output frame: its tag (802.1Q, priority 0, the port's
 * VLAN) checked, then the frame without it in buf for the checks of
 * untagged frames. Returns its length, or 0 after a failure. */
static uint32_t untag(struct check_ctx *c, uint64_t out_no, const uint8_t *d,
		      uint32_t len, uint8_t *buf, uint32_t cap)
{
	/* forwarded frames leave by the tx_port: the trunk's backend VLAN */
	uint16_t want = c->sc->port.tx_vlan ? c->sc->port.tx_vlan :
					      c->sc->port.vlan;

	if (len < 18 || pkt_get16(d + 12) != 0x8100) {
		check_fail(c, "output frame %" PRIu64 ": left the VLAN %u port "
			   "untagged (ethertype 0x%04x)", out_no, want,
			   len >= 14 ? pkt_get16(d + 12) : 0);
		return 0;
	}
	if (pkt_get16(d + 14) != want) {
		check_fail(c, "output frame %" PRIu64 ": tag 0x%04x, want VLAN "
			   "%u priority 0 (0x%04x)", out_no, pkt_get16(d + 14),
			   want, want);
		return 0;
	}
	if (len - 4 > cap)
		return 0;
	memcpy(buf, d, 12);
	memcpy(buf + 12, d + 16, len - 16);
	return len - 4;
}

void check_output_frame(struct check_ctx *c, uint64_t out_no,
			const uint8_t *data, uint32_t len)
{
	static uint8_t untagged[PKT_FRAME_MAX];
	char m[20];

	c->n_out++;
	if (len < 14) {
		check_fail(c, "output frame %" PRIu64 ": only %u bytes", out_no, len);
		return;
	}
	if (c->sc->port.vlan && (memcmp(data, c->sc->port.next_hop, 6) == 0 ||
				 is_backend_mac(c, data))) {
		/* encapsulated or MAC-rewritten: the port's tag, then the
		 * same bytes as on an untagged port */
		uint32_t n = untag(c, out_no, data, len, untagged, sizeof(untagged));

		if (n == 0)
			return;
		data = untagged;
		len = n;
	}
	if (memcmp(data, c->sc->port.next_hop, 6) == 0)
		check_encap(c, out_no, data, len);
	else if (is_backend_mac(c, data))
		check_l2dsr(c, out_no, data, len);
	else if (!check_icmp_reply(c, out_no, data, len) &&
		 !check_echo_reply(c, out_no, data, len))
		check_fail(c, "output frame %" PRIu64 ": unexpected frame to %s "
			   "(neither the next hop, an L2 DSR backend, an ICMP "
			   "too-big reply nor an echo reply), %u bytes", out_no,
			   mac_str(data, m), len);
}
