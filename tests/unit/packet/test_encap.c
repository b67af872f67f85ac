/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests for encapsulation, ICMP too-big and echo replies: byte-exact
 * output against headers the test writes itself from docs/forwarding.md,
 * every checksum verified with the test's own RFC 1071 routine
 * (tests/support/frames.c), all method x family combinations. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "dataplane/packet/encap.h"
#include "dataplane/packet/flow_hash.h"
#include "tests/support/frames.h"

static const uint8_t PORT_MAC[6] = { 0x02, 0, 0, 0, 0xaa, 0x01 };
static const uint8_t PEER_MAC[6] = { 0x02, 0, 0, 0, 0xbb, 0x02 };
#define GUE_PORT 6080

static void params(struct mlv_encap_params *p, enum mlv_encap_method m,
		   uint8_t outer, uint8_t inner)
{
	memset(p, 0, sizeof(*p));
	p->method = m;
	memcpy(p->src_mac, PORT_MAC, 6);
	memcpy(p->dst_mac, PEER_MAC, 6);
	p->outer_family = outer;
	frame_addr(p->outer_src, outer == 4 ? "10.99.0.1" : "fd00:99::1");
	frame_addr(p->outer_dst, outer == 4 ? "10.99.1.11" : "fd00:99:1::21");
	p->inner_family = inner;
	p->gue_port = GUE_PORT;
}

static uint8_t *put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return p + 2;
}

static uint8_t *put_bytes(uint8_t *p, const void *b, size_t n)
{
	memcpy(p, b, n);
	return p + n;
}

/* The outer headers as docs/forwarding.md lays them out, written field by
 * field. Returns their length. */
/* Second-chance hops of the expected packet: n < 0 for a VIP without
 * second chance. */
struct hops {
	int n;
	const uint8_t *addr[2];
};

static const struct hops NO_HOPS = { .n = -1 };

static uint32_t expected_headers_sc(uint8_t *e, const struct mlv_encap_params *p,
				    const uint8_t *inner, uint16_t inner_len,
				    uint8_t tos, uint32_t hash,
				    const struct hops *h)
{
	bool gue = p->method == MLV_ENCAP_GUE;
	uint32_t alen = p->outer_family == 4 ? 4 : 16;
	uint32_t sc_len = h->n < 0 ? 0 : 4 + 2 * alen;
	uint8_t inner_proto = p->inner_family == 4 ? 4 : 41;
	uint8_t *q = e;

	q = put_bytes(q, PEER_MAC, 6);
	q = put_bytes(q, PORT_MAC, 6);
	if (p->method == MLV_ENCAP_L2DSR) {
		put16(q, p->inner_family == 4 ? 0x0800 : 0x86DD);
		return 14;
	}
	q = put16(q, p->outer_family == 4 ? 0x0800 : 0x86DD);
	uint32_t udp_len = 8 + 4 + sc_len + inner_len;
	uint8_t *ip = q;
	if (p->outer_family == 4) {
		*q++ = 0x45;
		*q++ = tos;
		q = put16(q, 20 + (gue ? udp_len : inner_len));
		q = put16(q, 0);           /* ID */
		q = put16(q, 0x4000);      /* DF */
		*q++ = 64;
		*q++ = gue ? 17 : inner_proto;
		q = put16(q, 0);
		q = put_bytes(q, p->outer_src, 4);
		q = put_bytes(q, p->outer_dst, 4);
		put16(ip + 10, frame_csum(ip, 20, 0));
	} else {
		uint32_t fl = hash & 0xFFFFF;
		*q++ = (uint8_t)(0x60 | tos >> 4);
		*q++ = (uint8_t)((tos & 0x0f) << 4 | fl >> 16);
		*q++ = (uint8_t)(fl >> 8);
		*q++ = (uint8_t)fl;
		q = put16(q, gue ? udp_len : inner_len);
		*q++ = gue ? 17 : inner_proto;
		*q++ = 64;
		q = put_bytes(q, p->outer_src, 16);
		q = put_bytes(q, p->outer_dst, 16);
	}
	if (!gue)
		return (uint32_t)(q - e);

	uint8_t *udp = q;
	q = put16(q, 49152 + hash % 16384);
	q = put16(q, GUE_PORT);
	q = put16(q, udp_len);
	q = put16(q, 0);
	*q++ = (uint8_t)(sc_len / 4);  /* GUE: version 0, C 0, hlen */
	*q++ = inner_proto;
	q = put16(q, 0);               /* flags */
	if (h->n >= 0) {
		/* docs/forwarding.md, "GUE private data: second-chance hops" */
		*q++ = 0x4D;
		*q++ = 1;
		*q++ = p->outer_family == 6 ? 0x02 : 0x00;
		*q++ = (uint8_t)h->n;
		memset(q, 0, 2 * alen);
		for (int k = 0; k < h->n; k++)
			memcpy(q + (uint32_t)k * alen, h->addr[k], alen);
		q += 2 * alen;
	}
	if (p->outer_family == 6) {
		/* checksum over pseudo-header, UDP, GUE, hops and the inner
		 * packet */
		uint8_t *seg = malloc(udp_len);
		assert_non_null(seg);
		memcpy(seg, udp, 12 + sc_len);
		memcpy(seg + 12 + sc_len, inner, inner_len);
		uint16_t c = frame_csum(seg, udp_len,
					frame_pseudo_sum(6, p->outer_src, p->outer_dst,
							 17, udp_len));
		put16(udp + 6, c ? c : 0xFFFF);
		free(seg);
	}
	return (uint32_t)(q - e);
}

static uint32_t expected_headers(uint8_t *e, const struct mlv_encap_params *p,
				 const uint8_t *inner, uint16_t inner_len,
				 uint8_t tos, uint32_t hash)
{
	return expected_headers_sc(e, p, inner, inner_len, tos, hash, &NO_HOPS);
}

/* Encapsulate the inner packet pkt and compare with the expectation. */
static void check_inner(enum mlv_encap_method m, uint8_t outer, uint8_t inner,
			const uint8_t *pkt, uint16_t ilen, uint8_t tos,
			uint32_t hash)
{
	struct mlv_encap_params p;
	struct mlv_encap_tmpl t;

	params(&p, m, outer, inner);
	assert_int_equal(mlv_encap_tmpl_init(&t, &p), 0);

	/* [junk][outer headers][inner]: junk before must stay as it was. */
	uint32_t cap = MLV_ENCAP_MAX_HDR + 8 + ilen;
	uint8_t *buf = malloc(cap);
	assert_non_null(buf);
	memset(buf, 0xA5, cap);
	uint8_t *inner_at = buf + MLV_ENCAP_MAX_HDR + 8;
	memcpy(inner_at, pkt, ilen);
	uint8_t *out = inner_at - t.len;
	mlv_encap_apply(out, &t, ilen, tos, hash);

	uint8_t exp[MLV_ENCAP_MAX_HDR];
	uint32_t elen = expected_headers(exp, &p, pkt, ilen, tos, hash);
	assert_int_equal(t.len, elen);
	assert_memory_equal(out, exp, elen);
	assert_memory_equal(inner_at, pkt, ilen);          /* inner untouched */
	for (uint8_t *b = buf; b < out; b++)
		assert_int_equal(*b, 0xA5);
	if (m != MLV_ENCAP_L2DSR) {
		assert_true(frame_ip_checksums_ok(out + 14, t.len - 14 + ilen));
		assert_int_equal(t.outer_family, outer);
	}
	free(buf);
}

/* A TCP inner packet of payload bytes. */
static void check_one(enum mlv_encap_method m, uint8_t outer, uint8_t inner,
		      uint32_t payload, uint8_t tos, uint32_t hash)
{
	struct frame_spec s;

	frame_spec_init(&s, inner, 6);
	s.tos = tos;
	s.payload_len = payload;
	uint32_t cap = 60 + payload + 64;
	uint8_t *pkt = malloc(cap);
	assert_non_null(pkt);
	uint16_t ilen = (uint16_t)frame_build_ip(pkt, cap, &s);
	assert_true(ilen > 0);
	assert_true(frame_ip_checksums_ok(pkt, ilen));
	check_inner(m, outer, inner, pkt, ilen, tos, hash);
	free(pkt);
}

static void check_method(enum mlv_encap_method m, uint8_t outer, uint8_t inner)
{
	static const uint32_t payloads[] = { 0, 1, 7, 200, 1400, 8900 };
	static const uint8_t tos[] = { 0x00, 0xB8, 0xB9, 0x03, 0xFF };
	static const uint32_t hashes[] = { 0, 0x3FFF, 0xFFFFFFFF, 0x12345678, 0x8000C000 };

	for (size_t i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++)
		for (size_t j = 0; j < sizeof(tos); j++)
			check_one(m, outer, inner, payloads[i], tos[j],
				  hashes[(i + j) % 5]);
}

static void test_ipip(void **state)
{
	(void)state;
	check_method(MLV_ENCAP_IPIP, 4, 4);
	check_method(MLV_ENCAP_IPIP, 6, 6);
	check_method(MLV_ENCAP_IPIP, 6, 4);
}

static void test_gue(void **state)
{
	(void)state;
	check_method(MLV_ENCAP_GUE, 4, 4);
	check_method(MLV_ENCAP_GUE, 4, 6);
	check_method(MLV_ENCAP_GUE, 6, 4);
	check_method(MLV_ENCAP_GUE, 6, 6);
}

/* A UDP checksum that computes to 0 must be sent as 0xFFFF (0 means "no
 * checksum", which IPv6 forbids). The inner packet is an unchecksummed
 * protocol whose first payload word is chosen to make the sum 0. */
static void test_gue6_zero_checksum(void **state)
{
	(void)state;
	struct mlv_encap_params p;
	struct frame_spec s;
	uint8_t pkt[200], exp[MLV_ENCAP_MAX_HDR];
	const uint32_t hash = 0x1234;

	frame_spec_init(&s, 6, 253);
	s.payload_len = 100;
	uint16_t ilen = (uint16_t)frame_build_ip(pkt, sizeof(pkt), &s);
	pkt[40] = pkt[41] = 0;
	params(&p, MLV_ENCAP_GUE, 6, 6);
	expected_headers(exp, &p, pkt, ilen, 0, hash);
	/* With the word at 0 the checksum is c0; adding c0 to the sum
	 * makes it 0xFFFF, whose complement is 0. */
	pkt[40] = exp[60];
	pkt[41] = exp[61];
	expected_headers(exp, &p, pkt, ilen, 0, hash);
	assert_int_equal(exp[60], 0xFF);
	assert_int_equal(exp[61], 0xFF);
	check_inner(MLV_ENCAP_GUE, 6, 6, pkt, ilen, 0, hash);
}

/* Second chance: a GUE template with the hop block, written with 0, 1
 * and 2 hops (mlv_encap_apply_sc) and without them (mlv_encap_apply on
 * the same template: an empty block), byte-exact, the IPv6 UDP checksum
 * covering the block. */
static void check_second_chance(uint8_t outer, uint8_t inner, uint32_t payload,
				uint8_t tos, uint32_t hash, int n_hops)
{
	uint8_t a[2][16], exp[MLV_ENCAP_MAX_HDR], pkt[1600];
	struct mlv_encap_params p;
	struct mlv_encap_tmpl t;
	struct frame_spec s;
	struct hops h = { .n = n_hops < 0 ? 0 : n_hops };

	frame_addr(a[0], outer == 4 ? "10.99.1.12" : "fd00:99:1::22");
	frame_addr(a[1], outer == 4 ? "10.99.1.13" : "fd00:99:1::23");
	h.addr[0] = a[0];
	h.addr[1] = a[1];
	frame_spec_init(&s, inner, 6);
	s.tos = tos;
	s.payload_len = payload;
	uint16_t ilen = (uint16_t)frame_build_ip(pkt, sizeof(pkt), &s);
	assert_true(ilen > 0);

	params(&p, MLV_ENCAP_GUE, outer, inner);
	p.second_chance = true;
	assert_int_equal(mlv_encap_tmpl_init(&t, &p), 0);
	assert_int_equal(t.len, 14 + (outer == 4 ? 20 + 8 + 4 + 12 : 40 + 8 + 4 + 36));
	assert_int_equal(t.len - 14, mlv_encap_overhead(MLV_ENCAP_GUE, outer, true));

	uint8_t buf[MLV_ENCAP_MAX_HDR + 8 + sizeof(pkt)];
	memset(buf, 0xA5, sizeof(buf));
	uint8_t *inner_at = buf + MLV_ENCAP_MAX_HDR + 8;
	memcpy(inner_at, pkt, ilen);
	uint8_t *out = inner_at - t.len;
	if (n_hops < 0) {
		mlv_encap_apply(out, &t, ilen, tos, hash);
	} else {
		const uint8_t *hops[2] = { a[0], a[1] };
		mlv_encap_apply_sc(out, &t, ilen, tos, hash, hops,
				   (uint32_t)n_hops);
	}
	uint32_t elen = expected_headers_sc(exp, &p, pkt, ilen, tos, hash, &h);
	assert_int_equal(t.len, elen);
	assert_memory_equal(out, exp, elen);
	assert_memory_equal(inner_at, pkt, ilen);
	for (uint8_t *b = buf; b < out; b++)
		assert_int_equal(*b, 0xA5);
	assert_true(frame_ip_checksums_ok(out + 14, t.len - 14 + ilen));
}

static void test_gue_second_chance(void **state)
{
	static const uint32_t payloads[] = { 0, 1, 7, 200, 1400 };
	static const uint32_t hashes[] = { 0, 0x3FFF, 0xFFFFFFFF, 0x12345678 };
	(void)state;

	for (uint8_t outer = 4; outer <= 6; outer += 2)
		for (uint8_t inner = 4; inner <= 6; inner += 2)
			for (int n = -1; n <= 2; n++)
				for (size_t i = 0; i < 5; i++)
					check_second_chance(outer, inner,
							    payloads[i],
							    (uint8_t)(0xB8 + n),
							    hashes[(i + (size_t)n + 1) % 4],
							    n);
}

/* The overhead the MTU room subtracts, per method, family and option. */
static void test_overhead(void **state)
{
	(void)state;
	assert_int_equal(mlv_encap_overhead(MLV_ENCAP_IPIP, 4, false), 20);
	assert_int_equal(mlv_encap_overhead(MLV_ENCAP_IPIP, 6, false), 40);
	assert_int_equal(mlv_encap_overhead(MLV_ENCAP_GUE, 4, false), 32);
	assert_int_equal(mlv_encap_overhead(MLV_ENCAP_GUE, 6, false), 52);
	assert_int_equal(mlv_encap_overhead(MLV_ENCAP_GUE, 4, true), 44);
	assert_int_equal(mlv_encap_overhead(MLV_ENCAP_GUE, 6, true), 88);
	assert_int_equal(mlv_encap_overhead(MLV_ENCAP_L2DSR, 0, false), 0);
}

static void test_l2dsr(void **state)
{
	(void)state;
	check_method(MLV_ENCAP_L2DSR, 0, 4);
	check_method(MLV_ENCAP_L2DSR, 0, 6);
}

static void test_template_lengths_and_refusals(void **state)
{
	(void)state;
	static const struct {
		enum mlv_encap_method m;
		uint8_t outer, inner;
		int len;           /* -1: refused */
	} cases[] = {
		{ MLV_ENCAP_IPIP, 4, 4, 34 },
		{ MLV_ENCAP_IPIP, 4, 6, -1 },
		{ MLV_ENCAP_IPIP, 6, 4, 54 },
		{ MLV_ENCAP_IPIP, 6, 6, 54 },
		{ MLV_ENCAP_GUE, 4, 4, 46 },
		{ MLV_ENCAP_GUE, 4, 6, 46 },
		{ MLV_ENCAP_GUE, 6, 4, 66 },
		{ MLV_ENCAP_GUE, 6, 6, 66 },
		{ MLV_ENCAP_L2DSR, 0, 4, 14 },
		{ MLV_ENCAP_L2DSR, 0, 6, 14 },
		{ MLV_ENCAP_IPIP, 5, 4, -1 },
		{ MLV_ENCAP_GUE, 0, 4, -1 },
		{ MLV_ENCAP_IPIP, 4, 0, -1 },
		{ MLV_ENCAP_L2DSR, 0, 5, -1 },
		{ (enum mlv_encap_method)7, 4, 4, -1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mlv_encap_params p;
		struct mlv_encap_tmpl t;
		params(&p, MLV_ENCAP_IPIP, cases[i].outer == 6 ? 6 : 4, cases[i].inner);
		p.method = cases[i].m;
		p.outer_family = cases[i].outer;
		int rc = mlv_encap_tmpl_init(&t, &p);
		if (cases[i].len < 0) {
			assert_int_equal(rc, -1);
		} else {
			assert_int_equal(rc, 0);
			assert_int_equal(t.len, cases[i].len);
			assert_int_equal(t.method, cases[i].m);
			assert_int_equal(t.inner_family, cases[i].inner);
			assert_int_equal(t.outer_family,
					 cases[i].m == MLV_ENCAP_L2DSR ? 0 : cases[i].outer);
		}
	}
}

/* ---- ipip outer sources from a prefix ---------------------------------- */

/* One packet through a template whose outer source is the prefix
 * pfx/len: the expected headers are those of a template with the source
 * want (worked out by the caller), byte for byte, checksums valid. */
static void check_source(uint8_t outer, uint8_t inner, const char *pfx,
			 uint8_t len, uint32_t hash, const char *want)
{
	struct mlv_encap_params p, e;
	struct mlv_encap_tmpl t;
	struct frame_spec s;
	uint8_t pkt[300], exp[MLV_ENCAP_MAX_HDR];
	uint8_t buf[MLV_ENCAP_MAX_HDR + 8 + sizeof(pkt)];

	frame_spec_init(&s, inner, 6);
	s.tos = 0xB8;
	s.payload_len = 100;
	uint16_t ilen = (uint16_t)frame_build_ip(pkt, sizeof(pkt), &s);
	params(&p, MLV_ENCAP_IPIP, outer, inner);
	frame_addr(p.outer_src, pfx);
	p.outer_src_len = len;
	assert_int_equal(mlv_encap_tmpl_init(&t, &p), 0);
	e = p;
	memset(e.outer_src, 0, sizeof(e.outer_src));
	frame_addr(e.outer_src, want);

	memset(buf, 0xA5, sizeof(buf));
	uint8_t *inner_at = buf + MLV_ENCAP_MAX_HDR + 8;
	memcpy(inner_at, pkt, ilen);
	uint8_t *out = inner_at - t.len;
	mlv_encap_apply(out, &t, ilen, 0xB8, hash);
	uint32_t elen = expected_headers(exp, &e, pkt, ilen, 0xB8, hash);
	assert_int_equal(t.len, elen);
	assert_memory_equal(out, exp, elen);
	assert_memory_equal(inner_at, pkt, ilen);
	for (uint8_t *b = buf; b < out; b++)
		assert_int_equal(*b, 0xA5);
	assert_true(frame_ip_checksums_ok(out + 14, t.len - 14 + ilen));
}

/* Hand-worked: the host bits are the flow hash's low bits. */
static void test_ipip_source_prefix(void **state)
{
	(void)state;
	/* /28: hash 0x12345678 & 0xF = 8 -> .16 + 8 */
	check_source(4, 4, "10.77.0.16", 28, 0x12345678, "10.77.0.24");
	check_source(4, 4, "10.77.0.16", 28, 0xFFFFFFFF, "10.77.0.31");
	check_source(4, 4, "10.77.0.16", 28, 0xFFFFFFF0, "10.77.0.16");
	/* /16: the whole last word, 0xABCD -> 171.205 */
	check_source(4, 4, "10.77.0.0", 16, 0x1234ABCD, "10.77.171.205");
	/* /24 with a source word that needs a carry-free add: .255 */
	check_source(4, 4, "192.168.7.0", 24, 0x000001FF, "192.168.7.255");
	/* /32: the prefix's address for every flow */
	check_source(4, 4, "10.77.0.9", 32, 0x12345678, "10.77.0.9");
	/* IPv6 outer, 6in6 and 4in6: /120 takes 8 bits, /96 all 32 */
	check_source(6, 6, "fd00:77::100", 120, 0x123456AB, "fd00:77::1ab");
	check_source(6, 4, "fd00:77::", 96, 0x89ABCDEF, "fd00:77::89ab:cdef");
	check_source(6, 4, "fd00:77::5", 128, 0x89ABCDEF, "fd00:77::5");
	/* no prefix length: the source as is (the port's address) */
	check_source(4, 4, "10.99.0.1", 0, 0x12345678, "10.99.0.1");
}

static void test_ipip_source_refusals(void **state)
{
	struct mlv_encap_params p;
	struct mlv_encap_tmpl t;
	(void)state;

	params(&p, MLV_ENCAP_IPIP, 4, 4);
	frame_addr(p.outer_src, "10.77.0.17");      /* host bits set */
	p.outer_src_len = 28;
	assert_int_equal(mlv_encap_tmpl_init(&t, &p), -1);
	frame_addr(p.outer_src, "10.76.0.0");       /* shorter than /16 */
	p.outer_src_len = 15;
	assert_int_equal(mlv_encap_tmpl_init(&t, &p), -1);
	params(&p, MLV_ENCAP_IPIP, 6, 6);
	frame_addr(p.outer_src, "fd00:77::");       /* shorter than /96 */
	p.outer_src_len = 95;
	assert_int_equal(mlv_encap_tmpl_init(&t, &p), -1);
	/* gue keeps the port's source: the prefix is ipip's */
	params(&p, MLV_ENCAP_GUE, 4, 4);
	p.outer_src_len = 28;
	frame_addr(p.outer_src, "10.77.0.16");
	assert_int_equal(mlv_encap_tmpl_init(&t, &p), 0);
	assert_int_equal(t.src_mask, 0);
}

/* 10,000 flows of clients at random addresses and ports, hashed as the
 * data plane hashes them: every address of a /28 carries within 20 % of
 * an even share. */
static void test_ipip_source_spread(void **state)
{
	struct mlv_encap_params p;
	struct mlv_encap_tmpl t;
	uint32_t count[16] = { 0 };
	uint64_t x = 0x9E3779B97F4A7C15ull;   /* xorshift64 */
	const uint32_t flows = 10000;
	(void)state;

	params(&p, MLV_ENCAP_IPIP, 4, 4);
	frame_addr(p.outer_src, "10.77.0.16");
	p.outer_src_len = 28;
	assert_int_equal(mlv_encap_tmpl_init(&t, &p), 0);
	for (uint32_t i = 0; i < flows; i++) {
		struct mlv_flow_key k;
		uint8_t out[64] = { 0 };

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		memset(&k, 0, sizeof(k));
		memcpy(k.src, &x, 4);
		frame_addr(k.dst, "192.0.2.10");
		k.sport = (uint16_t)(x >> 32);
		k.dport = 0x5000;               /* 80, network order */
		k.proto = 6;
		k.family = 4;
		mlv_encap_apply(out, &t, 40, 0, mlv_flow_hash(&k));
		assert_int_equal(out[14 + 12], 10);
		assert_int_equal(out[14 + 13], 77);
		assert_int_equal(out[14 + 14], 0);
		assert_in_range(out[14 + 15], 16, 31);
		count[out[14 + 15] - 16]++;
	}
	for (int a = 0; a < 16; a++) {
		print_message("10.77.0.%d: %u flows\n", 16 + a, count[a]);
		assert_in_range(count[a], flows / 16 * 8 / 10, flows / 16 * 12 / 10);
	}
}

/* ---- ICMP too big ------------------------------------------------------ */

#define TB_CAP 2048

struct tb_case {
	uint8_t family;
	bool vlan;
	uint32_t payload;
	uint16_t mtu;
};

/* The reply as docs/forwarding.md describes it, built from the original
 * frame orig (olen bytes, IP packet at l3 of ilen bytes). */
static uint32_t expected_reply(uint8_t *e, const uint8_t *orig, uint32_t l3,
			       uint32_t ilen, uint8_t family, uint16_t mtu)
{
	const uint8_t *oip = orig + l3;
	uint32_t hl = family == 4 ? 20 : 40;
	uint32_t maxq = (family == 4 ? 576 : 1280) - hl - 8;
	uint32_t quote = ilen < maxq ? ilen : maxq;
	uint8_t *q = e;

	q = put_bytes(q, orig + 6, 6);
	q = put_bytes(q, orig, 6);
	q = put_bytes(q, orig + 12, l3 - 12);   /* VLAN tag + ethertype as-is */
	uint8_t *ip = q;
	if (family == 4) {
		*q++ = 0x45;
		*q++ = 0xC0;
		q = put16(q, 20 + 8 + quote);
		q = put_bytes(q, oip + 4, 2);       /* the quoted packet's ID */
		q = put16(q, 0);
		*q++ = 64;
		*q++ = 1;
		q = put16(q, 0);
		q = put_bytes(q, oip + 16, 4);
		q = put_bytes(q, oip + 12, 4);
		put16(ip + 10, frame_csum(ip, 20, 0));
		uint8_t *icmp = q;
		*q++ = 3;
		*q++ = 4;
		q = put16(q, 0);
		q = put16(q, 0);
		q = put16(q, mtu);
		q = put_bytes(q, oip, quote);
		put16(icmp + 2, frame_csum(icmp, 8 + quote, 0));
	} else {
		*q++ = 0x6C;                        /* traffic class 0xC0 */
		*q++ = 0;
		*q++ = 0;
		*q++ = 0;
		q = put16(q, 8 + quote);
		*q++ = 58;
		*q++ = 64;
		q = put_bytes(q, oip + 24, 16);
		q = put_bytes(q, oip + 8, 16);
		uint8_t *icmp = q;
		*q++ = 2;
		*q++ = 0;
		q = put16(q, 0);
		q = put16(q, 0);
		q = put16(q, mtu);
		q = put_bytes(q, oip, quote);
		put16(icmp + 2, frame_csum(icmp, 8 + quote,
					   frame_pseudo_sum(6, ip + 8, ip + 24, 58,
							    8 + quote)));
	}
	return (uint32_t)(q - e);
}

static void check_too_big(const struct tb_case *c)
{
	uint8_t buf[TB_CAP], orig[TB_CAP], exp[TB_CAP];
	struct frame_spec s;
	struct mlv_pkt pkt;
	uint32_t l3;

	frame_spec_init(&s, c->family, 6);
	s.vlan = c->vlan;
	s.vlan_tci = 0x0123;
	s.payload_len = c->payload;
	s.ip_opt_len = c->family == 4 && c->payload % 2 ? 8 : 0;
	uint32_t n = frame_build(buf, TB_CAP, &s, &l3, NULL);
	assert_true(n > 0);
	assert_int_equal(mlv_parse(buf, n, &pkt), MLV_PARSE_OK);
	memcpy(orig, buf, n);

	uint32_t elen = expected_reply(exp, orig, l3, pkt.l3_len, c->family, c->mtu);
	/* One byte less room than a reply longer than the frame needs:
	 * refused, the frame untouched. */
	if (elen > n) {
		assert_int_equal(mlv_icmp_too_big(buf, n, elen - 1, &pkt, c->mtu), 0);
		assert_memory_equal(buf, orig, n);
	}
	assert_int_equal(mlv_icmp_too_big(buf, n, elen > n ? elen : n, &pkt, c->mtu),
			 elen);
	assert_memory_equal(buf, exp, elen);
	assert_true(frame_ip_checksums_ok(buf + l3, elen - l3));
	assert_true(elen - l3 <= (c->family == 4 ? 576u : 1280u));

	/* The client's parser sees an ICMP error quoting its own flow. */
	struct mlv_pkt reply;
	assert_int_equal(mlv_parse(buf, elen, &reply), MLV_PARSE_OK);
	assert_true(reply.flags & MLV_PKT_F_ICMP_ERROR);
	assert_memory_equal(reply.key.src, pkt.key.dst, 16);
	assert_memory_equal(reply.key.dst, pkt.key.src, 16);
	assert_int_equal(reply.key.sport, pkt.key.dport);
	assert_int_equal(reply.key.dport, pkt.key.sport);
}

static void test_too_big(void **state)
{
	(void)state;
	static const struct tb_case cases[] = {
		{ 4, false, 1460, 1480 },   /* quote cut at 548 bytes */
		{ 4, true, 1461, 1476 },    /* odd length, options, VLAN */
		{ 4, false, 100, 1400 },    /* whole packet quoted */
		{ 4, false, 508, 1000 },    /* exactly 548: whole, reply 576 */
		{ 6, false, 1440, 1460 },   /* quote cut at 1232 */
		{ 6, true, 1441, 1460 },
		{ 6, false, 10, 1280 },
		{ 6, false, 1172, 1300 },   /* exactly 1232 */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_too_big(&cases[i]);
}

static void expect_no_reply(const struct frame_spec *s)
{
	uint8_t buf[TB_CAP], orig[TB_CAP];
	struct mlv_pkt pkt;

	uint32_t n = frame_build(buf, TB_CAP, s, NULL, NULL);
	assert_true(n > 0);
	assert_int_equal(mlv_parse(buf, n, &pkt), MLV_PARSE_OK);
	memcpy(orig, buf, n);
	assert_int_equal(mlv_icmp_too_big(buf, n, TB_CAP, &pkt, 1400), 0);
	assert_memory_equal(buf, orig, n);
}

static void test_too_big_refusals(void **state)
{
	(void)state;
	struct frame_spec s, inner;
	uint8_t q[256];

	/* Non-unicast sources. */
	static const char *const bad_src[] = {
		"0.0.0.0", "127.0.0.1", "224.0.0.1", "239.1.2.3",
		"240.0.0.1", "255.255.255.255", "::", "::1", "ff02::1",
	};
	for (size_t i = 0; i < sizeof(bad_src) / sizeof(bad_src[0]); i++) {
		uint8_t a[16];
		int fam = frame_addr(a, bad_src[i]);
		frame_spec_init(&s, (uint8_t)fam, 17);
		memcpy(s.src, a, 16);
		expect_no_reply(&s);
	}

	/* An ICMP error (about the VIP's own packet). */
	frame_spec_init(&inner, 4, 6);
	uint32_t il = frame_build_ip(q, sizeof(q), &inner);
	frame_spec_init(&s, 4, 1);
	memcpy(s.dst, inner.src, 16);
	s.icmp_type = 3;
	s.icmp_code = 4;
	s.payload = q;
	s.payload_len = il;
	expect_no_reply(&s);

	/* A non-first IPv4 fragment. */
	frame_spec_init(&s, 4, 17);
	s.mf = true;
	s.frag_offset = 100;
	s.payload_len = 1000;
	expect_no_reply(&s);

	/* ... but the first fragment, an IPv6 later fragment, and an echo
	 * request do get replies. */
	uint8_t buf[TB_CAP];
	struct mlv_pkt pkt;
	s.frag_offset = 0;
	uint32_t n = frame_build(buf, TB_CAP, &s, NULL, NULL);
	assert_int_equal(mlv_parse(buf, n, &pkt), MLV_PARSE_OK);
	assert_true(mlv_icmp_too_big(buf, n, TB_CAP, &pkt, 1400) > 0);
	frame_spec_init(&s, 6, 17);
	s.v6_frag = true;
	s.frag_offset = 100;
	s.payload_len = 1000;
	n = frame_build(buf, TB_CAP, &s, NULL, NULL);
	assert_int_equal(mlv_parse(buf, n, &pkt), MLV_PARSE_OK);
	assert_true(mlv_icmp_too_big(buf, n, TB_CAP, &pkt, 1400) > 0);
	frame_spec_init(&s, 4, 1);
	s.icmp_type = 8;
	s.payload_len = 1400;
	n = frame_build(buf, TB_CAP, &s, NULL, NULL);
	assert_int_equal(mlv_parse(buf, n, &pkt), MLV_PARSE_OK);
	assert_int_equal(mlv_icmp_too_big(buf, n, TB_CAP, &pkt, 1400), 14 + 576);

	/* A pkt that does not describe the buffer. */
	frame_spec_init(&s, 4, 6);
	n = frame_build(buf, TB_CAP, &s, NULL, NULL);
	assert_int_equal(mlv_parse(buf, n, &pkt), MLV_PARSE_OK);
	assert_int_equal(mlv_icmp_too_big(buf, n - 1, TB_CAP, &pkt, 1400), 0);
	assert_int_equal(mlv_icmp_too_big(buf, n, n - 1, &pkt, 1400), 0);
}

/* Echo replies: the reply is answered in place and is a valid echo
 * reply (its byte layout is checked by the packet test "icmp"); no
 * reply, and the frame untouched, for sources that are not one host, a
 * bad checksum, a frame shorter than its headers, and a frame that is
 * not an echo request. */
static void expect_no_echo(uint8_t *buf, uint32_t n, const struct mlv_pkt *pkt)
{
	uint8_t orig[TB_CAP];

	memcpy(orig, buf, n);
	assert_int_equal(mlv_icmp_echo_reply(buf, n, pkt), 0);
	assert_memory_equal(buf, orig, n);
}

static void test_echo_reply(void **state)
{
	(void)state;
	static const char *const bad_src[] = {
		"0.0.0.0", "127.0.0.1", "224.0.0.1", "255.255.255.255", "::",
		"::1", "ff02::1",
	};
	uint8_t buf[TB_CAP], a[16];
	struct frame_spec s;
	struct mlv_pkt pkt;
	uint32_t n;

	for (int fam = 4; fam <= 6; fam += 2) {
		frame_spec_init(&s, (uint8_t)fam, fam == 4 ? 1 : 58);
		s.icmp_type = fam == 4 ? 8 : 128;
		s.payload_len = 100;
		n = frame_build(buf, TB_CAP, &s, NULL, NULL);
		assert_int_equal(mlv_parse(buf, n, &pkt), MLV_PARSE_OK);
		assert_true(pkt.flags & MLV_PKT_F_ICMP_ECHO);
		/* shorter than the IP packet */
		expect_no_echo(buf, pkt.l3_off + pkt.l3_len - 1, &pkt);
		/* a bad checksum */
		buf[pkt.l4_off + 2] ^= 0x40;
		expect_no_echo(buf, n, &pkt);
		buf[pkt.l4_off + 2] ^= 0x40;
		assert_int_equal(mlv_icmp_echo_reply(buf, n, &pkt),
				 pkt.l3_off + pkt.l3_len);
		assert_int_equal(buf[pkt.l4_off], fam == 4 ? 0 : 129);
		assert_true(frame_ip_checksums_ok(buf + pkt.l3_off, pkt.l3_len));
		/* from the VIP to the client */
		assert_memory_equal(buf + pkt.l3_off + (fam == 4 ? 12 : 8),
				    s.dst, fam == 4 ? 4 : 16);
	}
	for (size_t i = 0; i < sizeof(bad_src) / sizeof(bad_src[0]); i++) {
		int fam = frame_addr(a, bad_src[i]);

		frame_spec_init(&s, (uint8_t)fam, fam == 4 ? 1 : 58);
		memcpy(s.src, a, 16);
		s.icmp_type = fam == 4 ? 8 : 128;
		n = frame_build(buf, TB_CAP, &s, NULL, NULL);
		assert_int_equal(mlv_parse(buf, n, &pkt), MLV_PARSE_OK);
		expect_no_echo(buf, n, &pkt);
	}
	/* not an echo request */
	frame_spec_init(&s, 4, 17);
	n = frame_build(buf, TB_CAP, &s, NULL, NULL);
	assert_int_equal(mlv_parse(buf, n, &pkt), MLV_PARSE_OK);
	expect_no_echo(buf, n, &pkt);
}

/* --only PATTERN / --skip PATTERN: the tests whose names match (meson
 * runs the second-chance ones as a test of their own). */
int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--only") == 0)
		cmocka_set_test_filter(argv[2]);
	else if (argc == 3 && strcmp(argv[1], "--skip") == 0)
		cmocka_set_skip_filter(argv[2]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipip),
		cmocka_unit_test(test_gue),
		cmocka_unit_test(test_gue6_zero_checksum),
		cmocka_unit_test(test_gue_second_chance),
		cmocka_unit_test(test_overhead),
		cmocka_unit_test(test_l2dsr),
		cmocka_unit_test(test_template_lengths_and_refusals),
		cmocka_unit_test(test_ipip_source_prefix),
		cmocka_unit_test(test_ipip_source_refusals),
		cmocka_unit_test(test_ipip_source_spread),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_too_big_refusals),
		cmocka_unit_test(test_echo_reply),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
