/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target for the packet core: parse any byte string; when it
 * parses, check the result's invariants, hash it with every flow-hash
 * implementation, encapsulate it with every template that can carry it,
 * and turn it into an ICMP too-big reply. libFuzzer hands over an
 * exact-size heap buffer and the build adds ASan + UBSan, so any read or
 * write out of bounds aborts. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/packet/encap.h"
#include "dataplane/packet/flow_hash.h"
#include "dataplane/packet/parse.h"
#include "dataplane/packet/quic.h"
#include "tests/fuzz/fuzz_check.h"

static struct mlv_encap_tmpl tmpls[10];
static unsigned n_tmpls;

static void init_templates(void)
{
	static const struct { enum mlv_encap_method m; uint8_t outer, inner; } c[] = {
		{ MLV_ENCAP_IPIP, 4, 4 }, { MLV_ENCAP_IPIP, 6, 6 },
		{ MLV_ENCAP_IPIP, 6, 4 }, { MLV_ENCAP_GUE, 4, 4 },
		{ MLV_ENCAP_GUE, 4, 6 }, { MLV_ENCAP_GUE, 6, 4 },
		{ MLV_ENCAP_GUE, 6, 6 }, { MLV_ENCAP_L2DSR, 0, 4 },
		{ MLV_ENCAP_L2DSR, 0, 6 },
	};
	for (unsigned i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct mlv_encap_params p;
		memset(&p, 0, sizeof(p));
		p.method = c[i].m;
		p.outer_family = c[i].outer;
		p.inner_family = c[i].inner;
		memset(p.outer_src, 0x0a, 16);
		memset(p.outer_dst, 0x0b, 16);
		p.src_mac[0] = 2;
		p.dst_mac[0] = 2;
		p.gue_port = 6080;
		CHECK(mlv_encap_tmpl_init(&tmpls[n_tmpls], &p) == 0);
		n_tmpls++;
	}
}

static void check_pkt(const struct mlv_pkt *p, size_t size)
{
	uint32_t end = (uint32_t)p->l3_off + p->l3_len;
	CHECK(p->l3_off == 14 || p->l3_off == 18);
	CHECK(end <= size);
	CHECK(p->key.family == 4 || p->key.family == 6);
	CHECK(p->l4_off >= p->l3_off + (p->key.family == 4 ? 20 : 40));
	CHECK(p->l4_off <= end);
	CHECK(p->key.pad[0] == 0 && p->key.pad[1] == 0);
	if (p->flags & (MLV_PKT_F_FRAGMENT | MLV_PKT_F_ICMP_ECHO))
		CHECK(p->key.sport == 0 && p->key.dport == 0);
	if (!(p->flags & (MLV_PKT_F_FRAGMENT | MLV_PKT_F_ICMP_ECHO |
			  MLV_PKT_F_ICMP_ERROR))) {
		CHECK(p->l4_proto == 6 || p->l4_proto == 17);
		CHECK(p->l4_off + (p->l4_proto == 6 ? 20u : 8u) <= end);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (n_tmpls == 0)
		init_templates();
	if (size > UINT32_MAX / 2)
		return 0;

	struct mlv_pkt p;
	enum mlv_parse_verdict v = mlv_parse(data, (uint32_t)size, &p);
	CHECK((unsigned)v < MLV_PARSE__COUNT);
	CHECK(mlv_parse_verdict_name(v) != NULL);

	/* The data plane's inline parser: the same verdict and the same
	 * bytes, whatever *out held before. */
	struct mlv_pkt fast;
	memset(&fast, 0xA5, sizeof(fast));
	CHECK(mlv_parse_fast(data, (uint32_t)size, &fast) == v);
	CHECK(memcmp(&fast, &p, sizeof(p)) == 0);

	if (v != MLV_PARSE_OK)
		return 0;
	check_pkt(&p, size);

	/* The QUIC server ID as a QUIC VIP reads it: within the frame. */
	uint32_t qlen, qid = 0;
	const uint8_t *q = mlv_quic_udp_payload(data, &p, &qlen);
	if (q) {
		CHECK(q >= data && q + qlen <= data + size);
		if (mlv_quic_server_id(q, qlen, &qid) == MLV_QUIC_ID)
			CHECK(qid >= 1 && qid <= MLV_QUIC_SERVER_ID_MAX);
	}

	unsigned n_impl;
	const struct mlv_flow_hash_ops *const *impl = mlv_flow_hash_impls(&n_impl);
	uint32_t hash = mlv_flow_hash(&p.key);
	for (unsigned i = 0; i < n_impl; i++)
		CHECK(impl[i]->hash(&p.key) == hash);

	/* Encapsulate into an exact-size scratch buffer; the inner packet
	 * must come out unchanged. */
	uint32_t room = MLV_ENCAP_MAX_HDR + p.l3_len;
	uint8_t *scratch = malloc(room);
	CHECK(scratch != NULL);
	const uint8_t *inner = data + p.l3_off;
	for (unsigned i = 0; i < n_tmpls; i++) {
		const struct mlv_encap_tmpl *t = &tmpls[i];
		if (t->inner_family != p.key.family)
			continue;
		memcpy(scratch + MLV_ENCAP_MAX_HDR, inner, p.l3_len);
		mlv_encap_apply(scratch + MLV_ENCAP_MAX_HDR - t->len, t,
				p.l3_len, p.tos, hash);
		CHECK(memcmp(scratch + MLV_ENCAP_MAX_HDR, inner, p.l3_len) == 0);
	}
	free(scratch);

	/* The too-big reply, in place, in an exact-size buffer of a few
	 * capacities around the frame length. */
	static const int32_t extra[] = { 0, 1, 47, 48, 200 };
	for (unsigned i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		uint32_t cap = (uint32_t)size + (uint32_t)extra[i];
		uint8_t *buf = malloc(cap ? cap : 1);
		CHECK(buf != NULL);
		memcpy(buf, data, size);
		uint32_t r = mlv_icmp_too_big(buf, (uint32_t)size, cap, &p, 1280);
		CHECK(r <= cap);
		CHECK(r == 0 || r >= p.l3_off + (p.key.family == 4 ? 28u : 48u));
		if (r) {
			struct mlv_pkt reply;
			enum mlv_parse_verdict rv = mlv_parse(buf, r, &reply);
			CHECK(rv != MLV_PARSE_TRUNCATED && rv != MLV_PARSE_BAD_IPV4 &&
			      rv != MLV_PARSE_BAD_IPV6);
		}
		free(buf);
	}
	return 0;
}
