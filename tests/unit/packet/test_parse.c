/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests for the packet parser: well-formed frames of every kind the
 * data plane balances, every malformation at its boundary, truncation at
 * every length, and random mutation. Frames come from tests/support/frames.c
 * and are parsed from exact-size heap copies, so an over-read is an
 * AddressSanitizer error in the sanitizer build. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/packet/parse.h"
#include "tests/support/frames.h"

#define BUF_CAP 4096

static enum mlv_parse_verdict parse_copy(const uint8_t *f, uint32_t len,
					 struct mlv_pkt *p)
{
	uint8_t *copy = malloc(len ? len : 1);
	assert_non_null(copy);
	memcpy(copy, f, len);
	enum mlv_parse_verdict v = mlv_parse(copy, len, p);
	/* The data plane's inline variant agrees on every input the tests
	 * make, whatever *out held before (filled differently here). */
	struct mlv_pkt fast, slow;
	memset(&fast, 0xAA, sizeof(fast));
	memset(&slow, 0x55, sizeof(slow));
	assert_int_equal(mlv_parse_fast(copy, len, &fast), v);
	assert_int_equal(mlv_parse(copy, len, &slow), v);
	assert_memory_equal(&fast, &slow, sizeof(fast));
	free(copy);
	return v;
}

static uint32_t build(uint8_t *buf, const struct frame_spec *s)
{
	uint32_t n = frame_build(buf, BUF_CAP, s, NULL, NULL);
	assert_true(n > 0);
	return n;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Invariants every OK result must satisfy, whatever the input. */
static void check_ok_invariants(const struct mlv_pkt *p, uint32_t len)
{
	static const uint8_t zero[12];

	assert_true(p->l3_off == 14 || p->l3_off == 18);
	assert_true((uint32_t)p->l3_off + p->l3_len <= len);
	assert_true(p->key.family == 4 || p->key.family == 6);
	assert_int_equal(p->key.pad[0] | p->key.pad[1], 0);
	uint32_t end = (uint32_t)p->l3_off + p->l3_len;
	assert_true(p->l4_off >= p->l3_off + (p->key.family == 4 ? 20 : 40));
	assert_true(p->l4_off <= end);
	if (p->key.family == 4) {
		assert_memory_equal(p->key.src + 4, zero, 12);
		assert_memory_equal(p->key.dst + 4, zero, 12);
	}
	if (p->flags & (MLV_PKT_F_FRAGMENT | MLV_PKT_F_ICMP_ECHO))
		assert_int_equal(p->key.sport | p->key.dport, 0);
	if (p->flags & (MLV_PKT_F_FRAGMENT | MLV_PKT_F_ICMP_ERROR |
			MLV_PKT_F_ICMP_ECHO))
		return;
	if (p->l4_proto == 6)
		assert_true(p->l4_off + 20u <= end);
	else if (p->l4_proto == 17)
		assert_true(p->l4_off + 8u <= end);
	else
		fail_msg("OK for L4 protocol %u", p->l4_proto);
}

static void test_ipv4_tcp(void **state)
{
	(void)state;
	uint8_t buf[BUF_CAP];
	struct frame_spec s;
	struct mlv_pkt p;

	frame_spec_init(&s, 4, 6);
	s.tos = 0xB9;
	s.ttl = 17;
	s.tcp_flags = 0x02;
	s.payload_len = 10;
	uint32_t n = build(buf, &s);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);

	uint8_t src[16] = { 198, 51, 100, 1 }, dst[16] = { 192, 0, 2, 10 };
	assert_memory_equal(p.key.src, src, 16);
	assert_memory_equal(p.key.dst, dst, 16);
	assert_int_equal(p.key.sport, htons(40000));
	assert_int_equal(p.key.dport, htons(80));
	assert_int_equal(p.key.proto, 6);
	assert_int_equal(p.key.family, 4);
	assert_int_equal(p.l3_off, 14);
	assert_int_equal(p.l4_off, 34);
	assert_int_equal(p.l3_len, 20 + 20 + 10);
	assert_int_equal(p.ttl, 17);
	assert_int_equal(p.tos, 0xB9);
	assert_int_equal(p.tcp_flags, 0x02);
	assert_int_equal(p.l4_proto, 6);
	assert_int_equal(p.flags, MLV_PKT_F_DF);

	s.df = false;
	s.tcp_flags = 0x11;
	n = build(buf, &s);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);
	assert_int_equal(p.flags, 0);
	assert_int_equal(p.tcp_flags, 0x11);
	check_ok_invariants(&p, n);
}

static void test_ipv4_udp_with_padding(void **state)
{
	(void)state;
	uint8_t buf[BUF_CAP];
	struct frame_spec s;
	struct mlv_pkt p;

	frame_spec_init(&s, 4, 17);
	s.sport = 5353;
	s.dport = 53;
	s.payload_len = 3;
	s.eth_pad = 15;       /* short frames are padded to 60 bytes */
	uint32_t n = build(buf, &s);
	assert_int_equal(n, 60);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);
	assert_int_equal(p.l3_len, 20 + 8 + 3);
	assert_int_equal(p.key.sport, htons(5353));
	assert_int_equal(p.key.dport, htons(53));
	assert_int_equal(p.key.proto, 17);
	assert_int_equal(p.tcp_flags, 0);
	check_ok_invariants(&p, n);
}

static void test_vlan(void **state)
{
	(void)state;
	uint8_t buf[BUF_CAP];
	struct frame_spec s;
	struct mlv_pkt p;

	for (uint8_t fam = 4; fam <= 6; fam += 2) {
		frame_spec_init(&s, fam, 6);
		s.vlan = true;
		s.vlan_tci = 0x2064;
		uint32_t n = build(buf, &s);
		assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);
		assert_int_equal(p.l3_off, 18);
		assert_int_equal(p.l4_off, fam == 4 ? 38 : 58);
		assert_true(p.flags & MLV_PKT_F_VLAN);
		assert_int_equal(p.key.dport, htons(80));
		check_ok_invariants(&p, n);
	}
	/* A second tag (QinQ) is not parsed: not IP. */
	frame_spec_init(&s, 4, 6);
	s.vlan = true;
	uint32_t n = build(buf, &s);
	put16(buf + 16, 0x8100);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_NOT_IP);
	put16(buf + 12, 0x88A8);
	put16(buf + 16, 0x0800);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_NOT_IP);
	/* ARP */
	put16(buf + 12, 0x0806);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_NOT_IP);
}

static void test_ipv4_options(void **state)
{
	(void)state;
	uint8_t buf[BUF_CAP];
	struct frame_spec s;
	struct mlv_pkt p;

	for (uint8_t opt = 0; opt <= 40; opt += 4) {
		frame_spec_init(&s, 4, opt % 8 ? 17 : 6);
		s.ip_opt_len = opt;
		s.payload_len = 5;
		uint32_t n = build(buf, &s);
		assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);
		assert_int_equal(p.l4_off, 14 + 20 + opt);
		assert_int_equal(p.key.sport, htons(40000));
		assert_int_equal(p.key.dport, htons(80));
		check_ok_invariants(&p, n);
	}
}

static void test_ipv6_tcp_udp(void **state)
{
	(void)state;
	uint8_t buf[BUF_CAP];
	struct frame_spec s;
	struct mlv_pkt p;

	frame_spec_init(&s, 6, 6);
	s.tos = 0x2D;
	s.flow_label = 0xABCDE;
	s.ttl = 3;
	s.tcp_flags = 0x04;
	uint32_t n = build(buf, &s);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);
	uint8_t src[16], dst[16];
	frame_addr(src, "2001:db8:1::1");
	frame_addr(dst, "2001:db8::10");
	assert_memory_equal(p.key.src, src, 16);
	assert_memory_equal(p.key.dst, dst, 16);
	assert_int_equal(p.key.family, 6);
	assert_int_equal(p.key.proto, 6);
	assert_int_equal(p.l4_off, 54);
	assert_int_equal(p.l3_len, 60);
	assert_int_equal(p.tos, 0x2D);
	assert_int_equal(p.ttl, 3);
	assert_int_equal(p.tcp_flags, 0x04);
	assert_int_equal(p.flags, MLV_PKT_F_DF);

	frame_spec_init(&s, 6, 17);
	s.payload_len = 100;
	n = build(buf, &s);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);
	assert_int_equal(p.key.proto, 17);
	assert_int_equal(p.l3_len, 148);
	check_ok_invariants(&p, n);
}

static void test_ipv6_ext_headers(void **state)
{
	(void)state;
	static const struct {
		uint8_t n;
		uint8_t type[4];
		uint8_t units[4];
	} chains[] = {
		{ 1, { 0 }, { 0 } },
		{ 1, { 60 }, { 3 } },
		{ 1, { 43 }, { 1 } },
		{ 2, { 0, 60 }, { 0, 0 } },
		{ 3, { 0, 43, 60 }, { 1, 2, 0 } },
		{ 3, { 60, 43, 60 }, { 0, 0, 5 } },
	};
	uint8_t buf[BUF_CAP];
	struct frame_spec s;
	struct mlv_pkt p;

	for (size_t c = 0; c < sizeof(chains) / sizeof(chains[0]); c++) {
		frame_spec_init(&s, 6, c % 2 ? 17 : 6);
		s.n_ext = chains[c].n;
		uint32_t ext = 0;
		for (unsigned i = 0; i < s.n_ext; i++) {
			s.ext[i] = chains[c].type[i];
			s.ext_units[i] = chains[c].units[i];
			ext += (s.ext_units[i] + 1u) * 8;
		}
		uint32_t n = build(buf, &s);
		assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);
		assert_int_equal(p.l4_off, 54 + ext);
		assert_int_equal(p.key.proto, s.proto);
		assert_int_equal(p.l4_proto, s.proto);
		assert_int_equal(p.key.dport, htons(80));
		check_ok_invariants(&p, n);
	}
}

static void test_ipv6_ext_header_limits(void **state)
{
	(void)state;
	uint8_t buf[BUF_CAP];
	struct frame_spec s;
	struct mlv_pkt p;

	/* Eight headers are walked, a ninth is refused. */
	frame_spec_init(&s, 6, 6);
	s.n_ext = 8;
	for (unsigned i = 0; i < 8; i++)
		s.ext[i] = i % 2 ? 43 : 60;
	uint32_t n = build(buf, &s);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);
	assert_int_equal(p.l4_off, 54 + 64);
	s.n_ext = 9;
	s.ext[8] = 60;
	n = build(buf, &s);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_IPV6);

	/* Hop-by-hop anywhere but first. */
	frame_spec_init(&s, 6, 6);
	s.n_ext = 2;
	s.ext[0] = 60;
	s.ext[1] = 0;
	n = build(buf, &s);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_IPV6);

	/* A header whose length runs past the payload, at the boundary:
	 * the destination-options header is the last thing in the packet
	 * before 20 bytes of TCP, so it may grow by 2 units (16 bytes)
	 * and still fit, then TCP is missing (BAD_L4); 3 units do not. */
	frame_spec_init(&s, 6, 6);
	s.n_ext = 1;
	s.ext[0] = 60;
	n = build(buf, &s);
	buf[54 + 1] = 2;
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_L4);
	buf[54 + 1] = 3;
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_IPV6);
	/* An extension header cut short by the payload length. */
	buf[54 + 1] = 0;
	put16(buf + 18, 7);
	assert_int_equal(parse_copy(buf, 14 + 40 + 7, &p), MLV_PARSE_BAD_IPV6);
	put16(buf + 18, 8);
	assert_int_equal(parse_copy(buf, 14 + 40 + 8, &p), MLV_PARSE_BAD_L4);

	/* Two fragment headers. */
	frame_spec_init(&s, 6, 17);
	s.n_ext = 1;
	s.ext[0] = 44;
	s.v6_frag = true;
	s.mf = true;
	n = build(buf, &s);
	buf[54 + 1] = 0;        /* the first one atomic: offset 0, M 0 */
	buf[54 + 2] = 0;
	buf[54 + 3] = 0;
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_IPV6);
}

static void test_ipv6_large_payload(void **state)
{
	(void)state;
	const uint32_t cap = 70000;
	uint8_t *buf = calloc(1, cap);
	struct frame_spec s;
	struct mlv_pkt p;

	assert_non_null(buf);
	frame_spec_init(&s, 6, 17);
	s.payload_len = 65495 - 8;     /* IP packet of exactly 65535 bytes */
	uint32_t n = frame_build(buf, cap, &s, NULL, NULL);
	assert_int_equal(n, 14 + 65535);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);
	assert_int_equal(p.l3_len, 65535);
	/* One more byte cannot be described by l3_len: refused. */
	put16(buf + 18, 65496);
	assert_int_equal(parse_copy(buf, n + 1, &p), MLV_PARSE_BAD_IPV6);
	free(buf);
}

static void check_fragments(uint8_t family, uint8_t proto)
{
	uint8_t buf[BUF_CAP];
	struct frame_spec s;
	struct mlv_pkt whole, p[3];
	static const struct { bool mf; uint16_t off; } parts[3] = {
		{ true, 0 }, { true, 185 }, { false, 370 },
	};

	frame_spec_init(&s, family, proto);
	s.payload_len = 64;
	uint32_t n = build(buf, &s);
	assert_int_equal(parse_copy(buf, n, &whole), MLV_PARSE_OK);

	for (int i = 0; i < 3; i++) {
		s.v6_frag = family == 6;
		s.mf = parts[i].mf;
		s.frag_offset = parts[i].off;
		s.frag_id = 77;
		n = build(buf, &s);
		assert_int_equal(parse_copy(buf, n, &p[i]), MLV_PARSE_OK);
		assert_true(p[i].flags & MLV_PKT_F_FRAGMENT);
		assert_int_equal(!!(p[i].flags & MLV_PKT_F_FRAG_FIRST), i == 0);
		assert_int_equal(p[i].key.sport, 0);
		assert_int_equal(p[i].key.dport, 0);
		assert_int_equal(p[i].key.proto, proto);
		assert_int_equal(p[i].tcp_flags, 0);
		assert_int_equal(p[i].l4_off, 14 + (family == 4 ? 20 : 48));
		check_ok_invariants(&p[i], n);
	}
	/* All fragments share one key: the whole datagram's, ports zeroed. */
	struct mlv_flow_key k3 = whole.key;
	k3.sport = k3.dport = 0;
	for (int i = 0; i < 3; i++)
		assert_memory_equal(&p[i].key, &k3, sizeof(k3));
}

static void test_fragments(void **state)
{
	(void)state;
	check_fragments(4, 6);
	check_fragments(4, 17);
	check_fragments(6, 6);
	check_fragments(6, 17);

	uint8_t buf[BUF_CAP];
	struct frame_spec s;
	struct mlv_pkt p;

	/* Fragments of protocols that are not balanced. */
	for (uint8_t fam = 4; fam <= 6; fam += 2) {
		frame_spec_init(&s, fam, fam == 4 ? 1 : 58);
		s.icmp_type = fam == 4 ? 8 : 128;
		s.v6_frag = fam == 6;
		s.mf = true;
		uint32_t n = build(buf, &s);
		assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_UNSUPPORTED);
		s.proto = 47;
		n = build(buf, &s);
		assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_UNSUPPORTED);
	}

	/* An IPv6 atomic fragment (offset 0, M clear) is a whole datagram:
	 * 5-tuple, like the flow's other packets. */
	frame_spec_init(&s, 6, 6);
	s.v6_frag = true;
	uint32_t n = build(buf, &s);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);
	assert_false(p.flags & MLV_PKT_F_FRAGMENT);
	assert_int_equal(p.key.dport, htons(80));
	assert_int_equal(p.l4_off, 14 + 48);

	/* Extension headers before the fragment header are walked. */
	s.n_ext = 2;
	s.ext[0] = 0;
	s.ext[1] = 60;
	s.mf = true;
	n = build(buf, &s);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);
	assert_true(p.flags & MLV_PKT_F_FRAG_FIRST);
	assert_int_equal(p.key.proto, 6);
	assert_int_equal(p.l4_off, 14 + 40 + 16 + 8);
}

/* An ICMP error from a router, quoting the VIP's reply to the client;
 * qlen bytes of the quoted packet are included. */
static uint32_t build_icmp_error(uint8_t *buf, uint8_t family,
				 const struct frame_spec *reply, uint32_t qlen)
{
	uint8_t inner[BUF_CAP];
	struct frame_spec s;

	uint32_t ilen = frame_build_ip(inner, sizeof(inner), reply);
	assert_true(ilen >= qlen);
	frame_spec_init(&s, family, family == 4 ? 1 : 58);
	frame_addr(s.src, family == 4 ? "203.0.113.1" : "2001:db8:ff::1");
	memcpy(s.dst, reply->src, 16);
	s.icmp_type = family == 4 ? 3 : 2;
	s.icmp_code = family == 4 ? 4 : 0;
	s.icmp_rest = 1400;
	s.payload = inner;
	s.payload_len = qlen;
	return build(buf, &s);
}

/* The VIP -> client packet matching a client -> VIP spec. */
static void reverse(struct frame_spec *r, const struct frame_spec *c)
{
	*r = *c;
	memcpy(r->src, c->dst, 16);
	memcpy(r->dst, c->src, 16);
	r->sport = c->dport;
	r->dport = c->sport;
	r->payload_len = 1400;
}

static void check_icmp_error(uint8_t family, uint8_t proto)
{
	uint8_t buf[BUF_CAP];
	struct frame_spec c, r;
	struct mlv_pkt client, p;

	frame_spec_init(&c, family, proto);
	uint32_t n = build(buf, &c);
	assert_int_equal(parse_copy(buf, n, &client), MLV_PARSE_OK);
	reverse(&r, &c);
	uint32_t hl = family == 4 ? 20 : 40;

	n = build_icmp_error(buf, family, &r, hl + 8);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);
	assert_true(p.flags & MLV_PKT_F_ICMP_ERROR);
	assert_memory_equal(&p.key, &client.key, sizeof(p.key));
	assert_int_equal(p.l4_proto, family == 4 ? 1 : 58);
	assert_int_equal(p.l4_off, 14 + hl);
	check_ok_invariants(&p, n);

	/* The quote must reach the ports: one byte short is malformed. */
	n = build_icmp_error(buf, family, &r, hl + 7);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_L4);

	/* A longer quote gives the same key. */
	n = build_icmp_error(buf, family, &r, 500);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);
	assert_memory_equal(&p.key, &client.key, sizeof(p.key));
}

static void test_icmp_errors(void **state)
{
	(void)state;
	check_icmp_error(4, 6);
	check_icmp_error(4, 17);
	check_icmp_error(6, 6);
	check_icmp_error(6, 17);

	uint8_t buf[BUF_CAP];
	struct frame_spec c, r;
	struct mlv_pkt client, p;
	uint32_t n;

	/* Quoted IPv4 with options, and IPv6 with a destination-options
	 * header: the ports are found after them. */
	frame_spec_init(&c, 4, 6);
	n = build(buf, &c);
	assert_int_equal(parse_copy(buf, n, &client), MLV_PARSE_OK);
	reverse(&r, &c);
	r.ip_opt_len = 12;
	n = build_icmp_error(buf, 4, &r, 40);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);
	assert_memory_equal(&p.key, &client.key, sizeof(p.key));
	n = build_icmp_error(buf, 4, &r, 39);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_L4);

	frame_spec_init(&c, 6, 17);
	n = build(buf, &c);
	assert_int_equal(parse_copy(buf, n, &client), MLV_PARSE_OK);
	reverse(&r, &c);
	r.n_ext = 1;
	r.ext[0] = 60;
	n = build_icmp_error(buf, 6, &r, 40 + 8 + 8);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);
	assert_memory_equal(&p.key, &client.key, sizeof(p.key));

	/* Quoted packet of another protocol, non-first fragment, wrong
	 * version, bad IHL. */
	frame_spec_init(&c, 4, 6);
	reverse(&r, &c);
	r.proto = 1;
	n = build_icmp_error(buf, 4, &r, 28);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_UNSUPPORTED);
	reverse(&r, &c);
	r.mf = true;
	r.frag_offset = 100;
	n = build_icmp_error(buf, 4, &r, 28);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_UNSUPPORTED);
	reverse(&r, &c);
	n = build_icmp_error(buf, 4, &r, 28);
	buf[14 + 20 + 8] = 0x65;      /* version 6 */
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_L4);
	buf[14 + 20 + 8] = 0x44;      /* IHL 4 */
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_L4);

	frame_spec_init(&c, 6, 6);
	reverse(&r, &c);
	r.v6_frag = true;
	r.frag_offset = 10;
	n = build_icmp_error(buf, 6, &r, 48 + 8);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_UNSUPPORTED);

	/* Other ICMP types and codes are not balanced. */
	reverse(&r, &c);
	n = build_icmp_error(buf, 6, &r, 48);
	buf[14 + 40] = 1;             /* ICMPv6 destination unreachable */
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_UNSUPPORTED);
	frame_spec_init(&c, 4, 6);
	reverse(&r, &c);
	n = build_icmp_error(buf, 4, &r, 28);
	buf[14 + 21] = 3;             /* port unreachable */
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_UNSUPPORTED);
}

static void test_icmp_echo_and_others(void **state)
{
	(void)state;
	uint8_t buf[BUF_CAP];
	struct frame_spec s;
	struct mlv_pkt p;

	for (uint8_t fam = 4; fam <= 6; fam += 2) {
		uint8_t proto = fam == 4 ? 1 : 58;
		frame_spec_init(&s, fam, proto);
		s.icmp_type = fam == 4 ? 8 : 128;
		s.icmp_rest = 0x00010002;
		s.payload_len = 56;
		uint32_t n = build(buf, &s);
		assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);
		assert_true(p.flags & MLV_PKT_F_ICMP_ECHO);
		assert_int_equal(p.key.proto, proto);
		assert_int_equal(p.l4_proto, proto);
		assert_int_equal(p.key.sport | p.key.dport, 0);
		check_ok_invariants(&p, n);

		/* Echo reply, neighbour solicitation / redirect: no. */
		s.icmp_type = fam == 4 ? 0 : 135;
		n = build(buf, &s);
		assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_UNSUPPORTED);
		s.icmp_type = fam == 4 ? 5 : 129;
		n = build(buf, &s);
		assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_UNSUPPORTED);

		/* The other family's ICMP number is just an unknown protocol. */
		s.proto = fam == 4 ? 58 : 1;
		s.icmp_type = fam == 4 ? 128 : 8;
		n = build(buf, &s);
		assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_UNSUPPORTED);

		/* An ICMP header shorter than 8 bytes. */
		frame_spec_init(&s, fam, proto);
		s.icmp_type = fam == 4 ? 8 : 128;
		n = build(buf, &s);
		uint32_t l3 = 14, hl = fam == 4 ? 20 : 40;
		if (fam == 4)
			put16(buf + l3 + 2, (uint16_t)(hl + 7));
		else
			put16(buf + l3 + 4, 7);
		assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_L4);
	}

	/* Protocols other than TCP, UDP, ICMP. */
	frame_spec_init(&s, 4, 132);
	s.payload_len = 40;
	uint32_t n = build(buf, &s);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_UNSUPPORTED);
	frame_spec_init(&s, 6, 59);     /* no next header */
	n = build(buf, &s);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_UNSUPPORTED);
}

static void test_bad_ipv4(void **state)
{
	(void)state;
	uint8_t buf[BUF_CAP];
	struct frame_spec s;
	struct mlv_pkt p;

	frame_spec_init(&s, 4, 6);
	uint32_t n = build(buf, &s);     /* 14 + 20 + 20 */
	assert_int_equal(n, 54);

	assert_int_equal(parse_copy(buf, 13, &p), MLV_PARSE_TRUNCATED);
	assert_int_equal(parse_copy(buf, 14 + 19, &p), MLV_PARSE_TRUNCATED);

	buf[14] = 0x44;                  /* IHL 4 */
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_IPV4);
	buf[14] = 0x55;                  /* version 5 */
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_IPV4);
	buf[14] = 0x65;                  /* version 6 */
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_IPV4);
	buf[14] = 0x45;
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);

	/* Total length: the frame's exact size is fine, one more is not. */
	put16(buf + 16, 41);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_IPV4);
	put16(buf + 16, 40);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);

	/* Total length below the header length (IHL 6 = 24 bytes). */
	s.ip_opt_len = 4;
	n = build(buf, &s);
	put16(buf + 16, 23);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_IPV4);
	put16(buf + 16, 24);             /* header fits, TCP does not */
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_L4);
	/* IHL 15 with a 20-byte frame tail: options beyond the frame. */
	buf[14] = 0x4F;
	put16(buf + 16, 44);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_IPV4);
}

static void test_bad_ipv6(void **state)
{
	(void)state;
	uint8_t buf[BUF_CAP];
	struct frame_spec s;
	struct mlv_pkt p;

	frame_spec_init(&s, 6, 17);
	s.payload_len = 4;
	uint32_t n = build(buf, &s);
	assert_int_equal(n, 14 + 40 + 12);

	assert_int_equal(parse_copy(buf, 14 + 39, &p), MLV_PARSE_TRUNCATED);
	buf[14] = 0x40;
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_IPV6);
	buf[14] = 0x70;
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_IPV6);
	buf[14] = 0x60;
	put16(buf + 18, 13);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_IPV6);
	put16(buf + 18, 12);
	assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);
}

static void test_bad_l4(void **state)
{
	(void)state;
	uint8_t buf[BUF_CAP];
	struct frame_spec s;
	struct mlv_pkt p;

	for (uint8_t fam = 4; fam <= 6; fam += 2) {
		uint32_t l4 = 14 + (fam == 4 ? 20 : 40);
		uint8_t *tot = buf + 14 + (fam == 4 ? 2 : 4);
		uint32_t iphl = fam == 4 ? 20 : 0;   /* counted in the length field */

		/* TCP data offset: 4 too small, 5 fine; 6 needs 4 more bytes. */
		frame_spec_init(&s, fam, 6);
		s.payload_len = 3;
		uint32_t n = build(buf, &s);
		buf[l4 + 12] = 0x40;
		assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_L4);
		buf[l4 + 12] = 0x50;
		assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);
		buf[l4 + 12] = 0x60;
		assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_L4);
		s.payload_len = 4;
		n = build(buf, &s);
		buf[l4 + 12] = 0x60;
		assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);
		assert_int_equal(p.key.sport, htons(40000));
		/* 19 bytes of TCP header. */
		put16(tot, (uint16_t)(iphl + 19));
		assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_L4);

		/* UDP length: 7 too small, beyond the payload too big,
		 * shorter than the payload allowed. */
		frame_spec_init(&s, fam, 17);
		s.payload_len = 10;
		n = build(buf, &s);
		put16(buf + l4 + 4, 7);
		assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_L4);
		put16(buf + l4 + 4, 19);
		assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_L4);
		put16(buf + l4 + 4, 18);
		assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);
		put16(buf + l4 + 4, 8);
		assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_OK);
		put16(tot, (uint16_t)(iphl + 7));
		assert_int_equal(parse_copy(buf, n, &p), MLV_PARSE_BAD_L4);
	}
}

/* The verdict a frame cut at `cut` bytes must get: the parser checks the
 * fixed IP header against the frame (TRUNCATED) and the IP length field
 * against the frame (BAD_IPV4/6); a cut past the IP packet only removes
 * padding. */
static enum mlv_parse_verdict expected_cut_verdict(const struct mlv_pkt *whole,
						   uint32_t cut)
{
	uint32_t l3 = whole->l3_off;
	uint32_t hl = whole->key.family == 4 ? 20 : 40;
	if (cut < l3 + hl)
		return MLV_PARSE_TRUNCATED;
	if (cut < l3 + whole->l3_len)
		return whole->key.family == 4 ? MLV_PARSE_BAD_IPV4 : MLV_PARSE_BAD_IPV6;
	return MLV_PARSE_OK;
}

static void sweep(const uint8_t *frame, uint32_t n)
{
	struct mlv_pkt whole, p;

	assert_int_equal(parse_copy(frame, n, &whole), MLV_PARSE_OK);
	for (uint32_t cut = 0; cut < n; cut++) {
		enum mlv_parse_verdict v = parse_copy(frame, cut, &p);
		assert_int_equal(v, expected_cut_verdict(&whole, cut));
		if (v == MLV_PARSE_OK) {
			check_ok_invariants(&p, cut);
			assert_memory_equal(&p, &whole, sizeof(p));
		}
	}
}

static void test_truncation_sweep(void **state)
{
	(void)state;
	uint8_t buf[BUF_CAP];
	struct frame_spec s, r;

	frame_spec_init(&s, 4, 6);
	s.payload_len = 9;
	sweep(buf, build(buf, &s));

	frame_spec_init(&s, 4, 17);
	s.ip_opt_len = 8;
	s.vlan = true;
	s.eth_pad = 6;
	sweep(buf, build(buf, &s));

	frame_spec_init(&s, 6, 6);
	s.vlan = true;
	s.tcp_opt_len = 12;
	s.n_ext = 3;
	s.ext[0] = 0;
	s.ext[1] = 43;
	s.ext[2] = 60;
	s.ext_units[1] = 2;
	sweep(buf, build(buf, &s));

	frame_spec_init(&s, 6, 17);
	s.v6_frag = true;
	s.mf = true;
	s.payload_len = 30;
	sweep(buf, build(buf, &s));

	frame_spec_init(&s, 4, 6);
	s.mf = true;
	s.frag_offset = 3;
	s.payload_len = 24;
	sweep(buf, build(buf, &s));

	for (uint8_t fam = 4; fam <= 6; fam += 2) {
		frame_spec_init(&s, fam, 6);
		reverse(&r, &s);
		sweep(buf, build_icmp_error(buf, fam, &r, 100));

		frame_spec_init(&s, fam, fam == 4 ? 1 : 58);
		s.icmp_type = fam == 4 ? 8 : 128;
		s.payload_len = 20;
		sweep(buf, build(buf, &s));
	}
}

/* xorshift32: a fixed sequence, so failures reproduce. */
static uint32_t rnd(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static void test_random_mutation(void **state)
{
	(void)state;
	uint8_t seeds[7][BUF_CAP];
	uint32_t lens[7];
	struct frame_spec s, r;
	uint32_t x = 0x12345678;
	unsigned n_ok = 0;

	frame_spec_init(&s, 4, 6);
	s.ip_opt_len = 4;
	lens[0] = build(seeds[0], &s);
	frame_spec_init(&s, 6, 17);
	s.n_ext = 2;
	s.ext[0] = 0;
	s.ext[1] = 60;
	lens[1] = build(seeds[1], &s);
	frame_spec_init(&s, 6, 6);
	s.v6_frag = true;
	s.mf = true;
	s.vlan = true;
	lens[2] = build(seeds[2], &s);
	frame_spec_init(&s, 4, 17);
	reverse(&r, &s);
	lens[3] = build_icmp_error(seeds[3], 4, &r, 60);
	frame_spec_init(&s, 6, 6);
	reverse(&r, &s);
	r.n_ext = 1;
	r.ext[0] = 43;
	lens[4] = build_icmp_error(seeds[4], 6, &r, 80);
	frame_spec_init(&s, 4, 17);
	s.mf = true;
	lens[5] = build(seeds[5], &s);
	/* the data plane's inline case (mlv_parse_fast): plain IPv4 TCP */
	frame_spec_init(&s, 4, 6);
	lens[6] = build(seeds[6], &s);

	for (unsigned it = 0; it < 200000; it++) {
		unsigned k = rnd(&x) % 7;
		uint8_t f[BUF_CAP];
		uint32_t n = lens[k];
		memcpy(f, seeds[k], n);
		unsigned flips = 1 + rnd(&x) % 4;
		for (unsigned i = 0; i < flips; i++) {
			/* Favour the header bytes, where the decisions are. */
			uint32_t pos = rnd(&x) % (n < 120 ? n : 120);
			f[pos] = (rnd(&x) & 1) ? (uint8_t)rnd(&x) : (uint8_t)(f[pos] ^ (1u << (rnd(&x) % 8)));
		}
		if (rnd(&x) % 4 == 0)
			n = rnd(&x) % (n + 1);
		struct mlv_pkt p;
		enum mlv_parse_verdict v = parse_copy(f, n, &p);
		assert_true((unsigned)v < MLV_PARSE__COUNT);
		if (v == MLV_PARSE_OK) {
			check_ok_invariants(&p, n);
			n_ok++;
		}
	}
	/* Enough mutants stayed valid for the invariants to have been run. */
	assert_true(n_ok > 1000);
}

static void test_verdict_names(void **state)
{
	(void)state;
	assert_string_equal(mlv_parse_verdict_name(MLV_PARSE_OK), "ok");
	assert_string_equal(mlv_parse_verdict_name(MLV_PARSE_NOT_IP), "not_ip");
	assert_string_equal(mlv_parse_verdict_name(MLV_PARSE_TRUNCATED), "truncated");
	assert_string_equal(mlv_parse_verdict_name(MLV_PARSE_BAD_IPV4), "bad_ipv4");
	assert_string_equal(mlv_parse_verdict_name(MLV_PARSE_BAD_IPV6), "bad_ipv6");
	assert_string_equal(mlv_parse_verdict_name(MLV_PARSE_BAD_L4), "bad_l4");
	assert_string_equal(mlv_parse_verdict_name(MLV_PARSE_UNSUPPORTED), "unsupported");
	assert_string_equal(mlv_parse_verdict_name(MLV_PARSE__COUNT), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4_tcp),
		cmocka_unit_test(test_ipv4_udp_with_padding),
		cmocka_unit_test(test_vlan),
		cmocka_unit_test(test_ipv4_options),
		cmocka_unit_test(test_ipv6_tcp_udp),
		cmocka_unit_test(test_ipv6_ext_headers),
		cmocka_unit_test(test_ipv6_ext_header_limits),
		cmocka_unit_test(test_ipv6_large_payload),
		cmocka_unit_test(test_fragments),
		cmocka_unit_test(test_icmp_errors),
		cmocka_unit_test(test_icmp_echo_and_others),
		cmocka_unit_test(test_bad_ipv4),
		cmocka_unit_test(test_bad_ipv6),
		cmocka_unit_test(test_bad_l4),
		cmocka_unit_test(test_truncation_sweep),
		cmocka_unit_test(test_random_mutation),
		cmocka_unit_test(test_verdict_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
