/* SPDX-License-Identifier: BSD-3-Clause */
#include "tests/packet/scenario.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what)
{
	fprintf(stderr, "scenario: %s\n", what);
	exit(2);
}

void sc_free(struct scenario *sc)
{
	for (uint32_t i = 0; i < sc->n_frames; i++)
		free(sc->frames[i].data);
	free(sc->frames);
	sc->frames = NULL;
	sc->n_frames = sc->cap_frames = 0;
}

uint8_t sc_addr(const char *text, uint8_t out[16])
{
	memset(out, 0, 16);
	if (inet_pton(AF_INET, text, out) == 1)
		return 4;
	if (inet_pton(AF_INET6, text, out) == 1)
		return 6;
	fprintf(stderr, "scenario: bad address literal %s\n", text);
	exit(2);
}

void sc_mac(const char *text, uint8_t out[6])
{
	unsigned int b[6];

	if (sscanf(text, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5]) != 6)
		die("bad MAC literal");
	for (int i = 0; i < 6; i++)
		out[i] = (uint8_t)b[i];
}

struct sc_vip *sc_add_vip(struct scenario *sc, const char *name,
			  const char *addr, uint16_t port, uint8_t proto,
			  enum sc_fwd fwd)
{
	struct sc_vip *v;

	if (sc->n_vips == SC_MAX_VIPS)
		die("too many VIPs");
	v = &sc->vips[sc->n_vips++];
	memset(v, 0, sizeof(*v));
	snprintf(v->name, sizeof(v->name), "%s", name);
	v->family = sc_addr(addr, v->addr);
	v->port = port;
	v->proto = proto;
	v->fwd = fwd;
	v->gue_port = fwd == SC_FWD_GUE ? 6080 : 0;
	v->table_size = 65537;
	return v;
}

struct sc_backend *sc_add_backend(struct sc_vip *vip, const char *name,
				  const char *addr, uint32_t weight)
{
	struct sc_backend *b;

	if (vip->n_backends == SC_MAX_BACKENDS)
		die("too many backends");
	b = &vip->backends[vip->n_backends++];
	memset(b, 0, sizeof(*b));
	snprintf(b->name, sizeof(b->name), "%s", name);
	b->family = sc_addr(addr, b->addr);
	b->weight = weight;
	return b;
}

uint16_t sc_vip_index(const struct scenario *sc, const struct sc_vip *vip)
{
	return (uint16_t)(vip - sc->vips);
}

static uint16_t encap_overhead(enum sc_fwd fwd, uint8_t outer_family)
{
	uint16_t ip = outer_family == 6 ? 40 : 20;

	switch (fwd) {
	case SC_FWD_IPIP:  return ip;
	case SC_FWD_GUE:   return (uint16_t)(ip + 8 + 4);   /* UDP + GUE */
	case SC_FWD_L2DSR: return 0;
	}
	return 0;
}

uint16_t sc_mtu_room(const struct scenario *sc, const struct sc_vip *vip)
{
	uint16_t worst = 0;

	for (uint32_t i = 0; i < vip->n_backends; i++) {
		uint16_t o = encap_overhead(vip->fwd, vip->backends[i].family);

		if (o > worst)
			worst = o;
	}
	return (uint16_t)(sc->port.mtu - worst);
}

uint32_t sc_rand(struct scenario *sc, uint32_t n)
{
	/* xorshift64*: deterministic across runs and machines */
	uint64_t x = sc->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	sc->rng = x;
	return (uint32_t)(((x * 0x2545f4914f6cdd1dull) >> 32) * n >> 32);
}

uint32_t sc_new_group(struct scenario *sc)
{
	return sc->next_group++;
}

void sc_client_addr(uint8_t family, uint32_t n, uint8_t out[16])
{
	memset(out, 0, 16);
	if (family == 4) {
		out[0] = 198;
		out[1] = 18;
		out[2] = (uint8_t)(n >> 8);
		out[3] = (uint8_t)(n + 1);
	} else {
		sc_addr("2001:db8:c1::", out);
		out[12] = (uint8_t)(n >> 24);
		out[13] = (uint8_t)(n >> 16);
		out[14] = (uint8_t)(n >> 8);
		out[15] = (uint8_t)(n + 1);
	}
}

struct sc_flow sc_flow_to_vip(const struct sc_vip *vip, uint32_t client,
			      uint16_t sport)
{
	struct sc_flow f;

	memset(&f, 0, sizeof(f));
	f.family = vip->family;
	sc_client_addr(vip->family, client, f.src);
	memcpy(f.dst, vip->addr, 16);
	f.sport = sport;
	f.dport = vip->port;
	f.proto = vip->proto;
	return f;
}

struct mlv_flow_key sc_key(const struct sc_flow *f, bool with_ports)
{
	struct mlv_flow_key k;

	memset(&k, 0, sizeof(k));
	memcpy(k.src, f->src, f->family == 4 ? 4 : 16);
	memcpy(k.dst, f->dst, f->family == 4 ? 4 : 16);
	if (with_ports) {
		k.sport = htons(f->sport);
		k.dport = htons(f->dport);
	}
	k.proto = f->proto;
	k.family = f->family;
	return k;
}

static struct sc_frame *append(struct scenario *sc, const uint8_t *data,
			       uint32_t len, uint16_t l3_off, uint16_t l3_len)
{
	struct sc_frame *fr;

	if (sc->n_frames == sc->cap_frames) {
		uint32_t cap = sc->cap_frames ? sc->cap_frames * 2 : 256;
		struct sc_frame *n = realloc(sc->frames, cap * sizeof(*n));

		if (!n)
			die("out of memory");
		sc->frames = n;
		sc->cap_frames = cap;
	}
	fr = &sc->frames[sc->n_frames++];
	memset(fr, 0, sizeof(*fr));
	fr->data = malloc(len ? len : 1);
	if (!fr->data)
		die("out of memory");
	memcpy(fr->data, data, len);
	fr->len = len;
	fr->l3_off = l3_off;
	fr->l3_len = l3_len;
	return fr;
}

struct sc_frame *sc_emit_raw(struct scenario *sc, const uint8_t *data,
			     uint32_t len)
{
	return append(sc, data, len, 0, 0);
}

static void fill_l2l3(const struct scenario *sc, const struct sc_flow *f,
		      const struct sc_opts *o, uint32_t id, struct pkt_l2 *l2,
		      struct pkt_l3 *l3)
{
	memset(l2, 0, sizeof(*l2));
	memcpy(l2->dst, sc->port.mac, 6);
	sc_mac("02:00:00:c1:00:01", l2->src);
	l2->vlan = o->vlan;
	l2->vlan_tci = o->vlan_tci ? o->vlan_tci : 0x0064;   /* VLAN 100 */

	memset(l3, 0, sizeof(*l3));
	l3->family = f->family;
	memcpy(l3->src, f->src, 16);
	memcpy(l3->dst, f->dst, 16);
	l3->tos = o->tos;
	l3->ttl = o->ttl ? o->ttl : 64;
	l3->df = o->df;
	l3->ip_id = (uint16_t)id;
	l3->frag_id = id;
	l3->v4_opt_len = o->v4_opt_len;
	l3->n_v6_ext = o->n_v6_ext;
	memcpy(l3->v6_ext, o->v6_ext, sizeof(l3->v6_ext));
}

struct sc_frame *sc_emit(struct scenario *sc, const struct sc_flow *f,
			 const struct sc_opts *o)
{
	static uint8_t payload[PKT_FRAME_MAX], seg[PKT_FRAME_MAX],
		ip[PKT_FRAME_MAX], frame[PKT_FRAME_MAX];
	uint32_t id = sc->next_id++;
	uint32_t plen = o->payload_len < 8 ? 8 : o->payload_len;
	struct pkt_l2 l2;
	struct pkt_l3 l3;
	struct pkt_l4 l4 = {
		.proto = f->proto, .sport = f->sport, .dport = f->dport,
		.tcp_flags = o->tcp_flags,
		.tcp_opts = o->tcp_opts, .tcp_opts_len = o->tcp_opts_len,
	};
	uint32_t seg_len, ip_len, len;
	uint16_t l3_off;

	if (plen > PKT_FRAME_MAX - 200)
		die("payload too large");
	fill_l2l3(sc, f, o, id, &l2, &l3);
	pkt_fill_payload(payload, plen, id);
	seg_len = pkt_build_l4(seg, &l3, &l4, payload, plen);
	ip_len = pkt_build_ip(ip, &l3, f->proto, seg, seg_len, NULL);
	len = pkt_build_eth(frame, &l2, f->family == 4 ? PKT_ETH_IPV4 : PKT_ETH_IPV6,
			    ip, ip_len, &l3_off);
	return append(sc, frame, len, l3_off, (uint16_t)ip_len);
}

struct sc_frame *sc_emit_payload(struct scenario *sc, const struct sc_flow *f,
				 const struct sc_opts *o, const uint8_t *payload,
				 uint32_t len)
{
	static uint8_t seg[PKT_FRAME_MAX], ip[PKT_FRAME_MAX],
		frame[PKT_FRAME_MAX];
	uint32_t id = sc->next_id++;
	struct pkt_l2 l2;
	struct pkt_l3 l3;
	struct pkt_l4 l4 = {
		.proto = f->proto, .sport = f->sport, .dport = f->dport,
		.tcp_flags = o->tcp_flags,
	};
	uint32_t seg_len, ip_len, n;
	uint16_t l3_off;

	if (len > PKT_FRAME_MAX - 200)
		die("payload too large");
	fill_l2l3(sc, f, o, id, &l2, &l3);
	seg_len = pkt_build_l4(seg, &l3, &l4, payload, len);
	ip_len = pkt_build_ip(ip, &l3, f->proto, seg, seg_len, NULL);
	n = pkt_build_eth(frame, &l2, f->family == 4 ? PKT_ETH_IPV4 : PKT_ETH_IPV6,
			  ip, ip_len, &l3_off);
	return append(sc, frame, n, l3_off, (uint16_t)ip_len);
}

void sc_emit_fragments(struct scenario *sc, const struct sc_flow *f,
		       const struct sc_opts *o, uint32_t frag_size,
		       const uint32_t *order, uint32_t n_order,
		       uint16_t vip, uint32_t group, const char *what)
{
	static uint8_t payload[PKT_FRAME_MAX], seg[PKT_FRAME_MAX],
		ip[PKT_FRAME_MAX], frame[PKT_FRAME_MAX];
	uint32_t id = sc->next_id++;
	uint32_t plen = o->payload_len < 8 ? 8 : o->payload_len;
	struct pkt_l2 l2;
	struct pkt_l3 l3;
	struct pkt_l4 l4 = {
		.proto = f->proto, .sport = f->sport, .dport = f->dport,
		.tcp_flags = o->tcp_flags,
		.tcp_opts = o->tcp_opts, .tcp_opts_len = o->tcp_opts_len,
	};
	struct mlv_flow_key key = sc_key(f, false);
	uint32_t seg_len, n_frags;

	if (frag_size == 0 || frag_size % 8 || plen > PKT_FRAME_MAX - 200)
		die("bad fragment size");
	fill_l2l3(sc, f, o, id, &l2, &l3);
	l3.df = false;
	pkt_fill_payload(payload, plen, id);
	seg_len = pkt_build_l4(seg, &l3, &l4, payload, plen);
	n_frags = (seg_len + frag_size - 1) / frag_size;
	if (n_order != n_frags)
		die("fragment order does not cover every fragment");

	for (uint32_t i = 0; i < n_order; i++) {
		uint32_t k = order[i];
		uint32_t off = k * frag_size;
		uint32_t chunk = seg_len - off < frag_size ? seg_len - off : frag_size;
		struct pkt_frag fg = {
			.is_fragment = true,
			.offset = (uint16_t)off,
			.more = k + 1 < n_frags,
		};
		uint32_t ip_len = pkt_build_ip(ip, &l3, f->proto, seg + off,
					       chunk, &fg);
		uint16_t l3_off;
		uint32_t len = pkt_build_eth(frame, &l2,
			f->family == 4 ? PKT_ETH_IPV4 : PKT_ETH_IPV6, ip, ip_len,
			&l3_off);
		struct sc_frame *fr = append(sc, frame, len, l3_off,
					     (uint16_t)ip_len);
		char w[64];

		snprintf(w, sizeof(w), "%s frag %u/%u", what, k + 1, n_frags);
		sc_expect_forward(fr, vip, &key, group, w);
	}
}

void sc_expect_forward(struct sc_frame *fr, uint16_t vip,
		       const struct mlv_flow_key *key, uint32_t group,
		       const char *what)
{
	fr->exp.outcome = SC_FORWARD;
	fr->exp.vip = vip;
	fr->exp.key = *key;
	fr->exp.group = group;
	snprintf(fr->exp.what, sizeof(fr->exp.what), "%s", what);
}

void sc_expect_drop(struct sc_frame *fr, enum mlv_drop_reason reason,
		    const char *what)
{
	fr->exp.outcome = SC_DROP;
	fr->exp.drop = reason;
	snprintf(fr->exp.what, sizeof(fr->exp.what), "%s", what);
}

void sc_expect_icmp(struct sc_frame *fr, uint16_t vip, uint16_t mtu,
		    const char *what)
{
	fr->exp.outcome = SC_ICMP_TOO_BIG;
	fr->exp.vip = vip;
	fr->exp.icmp_mtu = mtu;
	snprintf(fr->exp.what, sizeof(fr->exp.what), "%s", what);
}

void sc_expect_may_limit(struct sc_frame *fr, uint16_t vip,
			 const struct mlv_flow_key *key, uint32_t group,
			 const char *what)
{
	sc_expect_forward(fr, vip, key, group, what);
	fr->exp.outcome = SC_MAY_LIMIT;
}

void sc_expect_echo_reply(struct sc_frame *fr, uint16_t vip, const char *what)
{
	fr->exp.outcome = SC_ICMP_ECHO_REPLY;
	fr->exp.vip = vip;
	snprintf(fr->exp.what, sizeof(fr->exp.what), "%s", what);
}
