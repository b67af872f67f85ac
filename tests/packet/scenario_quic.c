/* SPDX-License-Identifier: BSD-3-Clause */
/* quic: QUIC connection-ID routing (docs/forwarding.md, "QUIC
 * connection-ID routing"). Two quic VIPs (IPv4 ipip, IPv6 gue) whose
 * backends have server IDs, and a UDP VIP without quic:
 * - long-header packets (Initial, Handshake) are balanced by the flow
 *   hash;
 * - a short-header packet whose connection ID carries a backend's server
 *   ID (v1 and v2 layouts) reaches that backend from a client whose
 *   5-tuple the table gives to another one, and so does the same
 *   connection after the client migrated (new address and port), and a
 *   draining backend still gets its connections;
 * - an ID no backend has, or the ID of a backend that is down, is
 *   balanced by the hash and counted (quic_unknown_id); a connection ID
 *   without an ID (version bits 00 or 11, ID 0, fewer than 8 bytes) too
 *   (quic_no_id);
 * - a payload whose fixed bit is clear, an empty payload, the fragments
 *   of a datagram (whose first bytes would name a backend: see qf) and
 *   a short header to the VIP without quic are balanced by the hash and
 *   not counted.
 * The QUIC headers are written here from RFC 9000 17.2/17.3 and the
 * layouts in docs/forwarding.md, not with the daemon's encoder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/packet/expect.h"
#include "tests/packet/scenario.h"

#define ID_QA   300u        /* v1 */
#define ID_QB   0x123456u   /* needs v2 */
#define ID_QC   5u          /* both layouts */
#define ID_QD   77u         /* drained */
#define ID_QE   99u         /* down: not usable */
/* The v1 ID of the generator's usual payload ("MLVT" + id: first byte
 * 'M' is a short header, 'L' 'V' 'T' a v1 connection ID): qf has it, so
 * that a fragment the daemon wrongly parsed would go to qf. */
#define ID_QF   ((0x4Cu & 0x3F) << 10 | 0x56u << 2 | 0x54u >> 6)
#define ID_R1   0xABCDEFu   /* v2 */
#define ID_R2   2u          /* v1 */

struct qctx {
	struct scenario *sc;
	struct expect_tables tabs;
	uint32_t next_client;
	uint16_t next_port;
	uint32_t serial;    /* makes every payload unique (IPv6 has no IP id) */
};

static void die(const char *what)
{
	fprintf(stderr, "scenario quic: %s\n", what);
	exit(2);
}

/* A connection ID of 8 bytes: version bits, the ID, the rest the
 * server's own (arbitrary, from the scenario's generator). */
static void cid_v1(struct scenario *sc, uint8_t cid[8], uint32_t id)
{
	for (int i = 0; i < 8; i++)
		cid[i] = (uint8_t)sc_rand(sc, 256);
	/* 01 | ID bits 15..10 ; ID bits 9..2 ; ID bits 1..0 | 6 free bits */
	cid[0] = (uint8_t)(0x40 | ((id >> 10) & 0x3F));
	cid[1] = (uint8_t)(id >> 2);
	cid[2] = (uint8_t)(((id & 3) << 6) | (cid[2] & 0x3F));
}

static void cid_v2(struct scenario *sc, uint8_t cid[8], uint32_t id)
{
	for (int i = 0; i < 8; i++)
		cid[i] = (uint8_t)sc_rand(sc, 256);
	/* 10 | 6 free bits ; ID bits 23..0 big-endian */
	cid[0] = (uint8_t)(0x80 | (cid[0] & 0x3F));
	cid[1] = (uint8_t)(id >> 16);
	cid[2] = (uint8_t)(id >> 8);
	cid[3] = (uint8_t)id;
}

/* A 1-RTT packet: header form 0, fixed bit 1, spin 0, reserved 00, key
 * phase 0, packet-number length 2 (01); the connection ID; a 2-byte
 * packet number and protected bytes ending in a serial. */
static uint32_t short_header(struct qctx *q, uint8_t *out, const uint8_t cid[8])
{
	uint32_t n = 0;

	out[n++] = 0x41;
	memcpy(out + n, cid, 8);
	n += 8;
	out[n++] = 0x00;
	out[n++] = (uint8_t)q->serial;
	for (int i = 0; i < 20; i++)
		out[n++] = (uint8_t)sc_rand(q->sc, 256);
	q->serial++;
	memcpy(out + n, &q->serial, 4);
	return n + 4;
}

/* A long-header packet of type (0 Initial, 2 Handshake), QUIC version 1,
 * whose destination connection ID is dcid (for an Initial, the client's
 * random choice). */
static uint32_t long_header(struct qctx *q, uint8_t *out, uint8_t type,
			    const uint8_t dcid[8])
{
	uint32_t n = 0;

	out[n++] = (uint8_t)(0xC0 | type << 4 | 0x01);
	out[n++] = 0;
	out[n++] = 0;
	out[n++] = 0;
	out[n++] = 1;
	out[n++] = 8;
	memcpy(out + n, dcid, 8);
	n += 8;
	out[n++] = 8;
	for (int i = 0; i < 8; i++)
		out[n++] = (uint8_t)sc_rand(q->sc, 256);
	if (type == 0)
		out[n++] = 0;          /* token length */
	out[n++] = 0x40;           /* length (2-byte varint): 34 */
	out[n++] = 34;
	for (int i = 0; i < 30; i++)
		out[n++] = (uint8_t)sc_rand(q->sc, 256);
	q->serial++;
	memcpy(out + n, &q->serial, 4);
	return n + 4;
}

/* A fresh flow from a new client address and port to vip. */
static struct sc_flow new_flow(struct qctx *q, const struct sc_vip *vip)
{
	struct sc_flow f = sc_flow_to_vip(vip, q->next_client++, q->next_port);

	q->next_port = (uint16_t)(q->next_port + 7);
	return f;
}

/* A fresh flow to vip that the table does not give to backend `not`
 * (neither the slot's owner nor its second choice). */
static struct sc_flow flow_away_from(struct qctx *q, uint16_t vip, int not)
{
	for (int tries = 0; tries < 1000; tries++) {
		struct sc_flow f = new_flow(q, &q->sc->vips[vip]);
		struct mlv_flow_key k = sc_key(&f, true);
		int first, second;

		expect_choices(&q->tabs, vip, &k, &first, &second);
		if (first != not && second != not)
			return f;
	}
	die("no client hashes away from the backend");
	return new_flow(q, &q->sc->vips[vip]);
}

static struct sc_frame *emit(struct qctx *q, const struct sc_flow *f,
			     const uint8_t *payload, uint32_t len)
{
	struct sc_opts o = { .df = true };

	return sc_emit_payload(q->sc, f, &o, payload, len);
}

/* Expected by the table (the flow's own group), counted in `quic`. */
static void by_hash(struct qctx *q, struct sc_frame *fr, uint16_t vip,
		    const struct sc_flow *f, enum sc_quic quic, const char *what)
{
	struct mlv_flow_key k = sc_key(f, true);

	sc_expect_forward(fr, vip, &k, sc_new_group(q->sc), what);
	fr->exp.quic = (uint8_t)quic;
}

/* Expected at backend b whatever the hash, counted as routed. */
static void routed(struct sc_frame *fr, uint16_t vip, const struct sc_flow *f,
		   int b, uint32_t group, const char *what)
{
	struct mlv_flow_key k = sc_key(f, true);

	sc_expect_forward(fr, vip, &k, group, what);
	fr->exp.to_backend = (uint8_t)(b + 1);
	fr->exp.quic = SC_QUIC_ROUTED;
}

/* A connection to backend b of vip whose connection ID is cid: two
 * packets from one client the table sends elsewhere, then two after it
 * migrated to another address and port (also sent elsewhere). */
static void connection(struct qctx *q, uint16_t vip, int b,
		       const uint8_t cid[8], const char *name)
{
	uint8_t pkt[128];
	uint32_t group = sc_new_group(q->sc);
	struct sc_flow before = flow_away_from(q, vip, b);
	struct sc_flow after = flow_away_from(q, vip, b);
	char what[64];

	for (int i = 0; i < 2; i++) {
		snprintf(what, sizeof(what), "%s pkt %d", name, i);
		routed(emit(q, &before, pkt, short_header(q, pkt, cid)), vip,
		       &before, b, group, what);
	}
	for (int i = 0; i < 2; i++) {
		snprintf(what, sizeof(what), "%s migrated pkt %d", name, i);
		routed(emit(q, &after, pkt, short_header(q, pkt, cid)), vip,
		       &after, b, group, what);
	}
}

/* A short header with cid from a fresh client: by the hash, counted. */
static void hashed_short(struct qctx *q, uint16_t vip, const uint8_t cid[8],
			 enum sc_quic quic, const char *what)
{
	uint8_t pkt[128];
	struct sc_flow f = new_flow(q, &q->sc->vips[vip]);

	by_hash(q, emit(q, &f, pkt, short_header(q, pkt, cid)), vip, &f, quic,
		what);
}

static void handshakes(struct qctx *q, uint16_t vip, uint32_t n)
{
	uint8_t pkt[128], dcid[8];

	for (uint32_t i = 0; i < n; i++) {
		struct sc_flow f = new_flow(q, &q->sc->vips[vip]);
		char what[64];

		/* an Initial's DCID is the client's random choice, here one
		 * that would even name a backend */
		cid_v1(q->sc, dcid, ID_QA);
		snprintf(what, sizeof(what), "initial %u", i);
		by_hash(q, emit(q, &f, pkt, long_header(q, pkt, 0, dcid)), vip,
			&f, SC_QUIC_NONE, what);
		cid_v2(q->sc, dcid, ID_R1);
		snprintf(what, sizeof(what), "handshake %u", i);
		by_hash(q, emit(q, &f, pkt, long_header(q, pkt, 2, dcid)), vip,
			&f, SC_QUIC_NONE, what);
		/* the same flow twice: one group, as conntrack keeps it */
		q->sc->frames[q->sc->n_frames - 1].exp.group =
			q->sc->frames[q->sc->n_frames - 2].exp.group;
	}
}

void sc_def_quic(struct scenario *sc)
{
	struct qctx q = { .sc = sc, .next_client = 1, .next_port = 20000 };
	struct sc_vip *v4, *v6, *plain;
	struct sc_backend *b;
	uint8_t cid[8], pkt[128];
	struct sc_flow f;

	sc->summary = "QUIC connection-ID routing: v1/v2 server IDs, migrated "
		      "clients, unknown and missing IDs, long headers, a VIP "
		      "without quic";
	sc->ct_entries = 65536;

	v4 = sc_add_vip(sc, "quic4", "192.0.2.90", 443, 17, SC_FWD_IPIP);
	v4->quic = true;
	sc_add_backend(v4, "qa", "10.99.9.1", 100)->quic_server_id = ID_QA;
	sc_add_backend(v4, "qb", "10.99.9.2", 100)->quic_server_id = ID_QB;
	sc_add_backend(v4, "qc", "10.99.9.3", 100)->quic_server_id = ID_QC;
	b = sc_add_backend(v4, "qd", "10.99.9.4", 100);
	b->quic_server_id = ID_QD;
	b->drain = true;
	b = sc_add_backend(v4, "qe", "10.99.9.5", 100);
	b->quic_server_id = ID_QE;
	b->down = true;
	sc_add_backend(v4, "qf", "10.99.9.6", 100)->quic_server_id = ID_QF;
	sc_add_backend(v4, "qg", "10.99.9.7", 100);   /* no ID: hashed only */

	v6 = sc_add_vip(sc, "quic6", "2001:db8::90", 443, 17, SC_FWD_GUE);
	v6->quic = true;
	sc_add_backend(v6, "r1", "fd00:99:9::1", 100)->quic_server_id = ID_R1;
	sc_add_backend(v6, "r2", "fd00:99:9::2", 100)->quic_server_id = ID_R2;
	sc_add_backend(v6, "r3", "fd00:99:9::3", 100);

	/* no quic: its backends' IDs are ignored (a config warning) */
	plain = sc_add_vip(sc, "plain", "192.0.2.91", 443, 17, SC_FWD_IPIP);
	sc_add_backend(plain, "pa", "10.99.9.11", 100)->quic_server_id = ID_QA;
	sc_add_backend(plain, "pb", "10.99.9.12", 100);
	sc_add_backend(plain, "pc", "10.99.9.13", 100);

	if (expect_build(&q.tabs, sc->vips, sc->n_vips) != 0)
		die("cannot build the tables");

	/* Handshakes: by the hash. */
	handshakes(&q, 0, 6);
	handshakes(&q, 1, 4);

	/* Connections routed by ID (backends[] in the order added). */
	cid_v1(sc, cid, ID_QA);
	connection(&q, 0, 0, cid, "qa v1");
	cid_v2(sc, cid, ID_QB);
	connection(&q, 0, 1, cid, "qb v2");
	cid_v1(sc, cid, ID_QC);
	connection(&q, 0, 2, cid, "qc v1");
	cid_v2(sc, cid, ID_QC);
	connection(&q, 0, 2, cid, "qc v2");
	cid_v1(sc, cid, ID_QD);
	connection(&q, 0, 3, cid, "qd drained v1");
	cid_v2(sc, cid, ID_R1);
	connection(&q, 1, 0, cid, "r1 v2");
	cid_v1(sc, cid, ID_R2);
	connection(&q, 1, 1, cid, "r2 v1");

	/* IDs no usable backend has: hashed, counted as unknown. */
	cid_v1(sc, cid, 4242);
	hashed_short(&q, 0, cid, SC_QUIC_UNKNOWN_ID, "unknown v1 id");
	cid_v2(sc, cid, 0xFFFF00);
	hashed_short(&q, 0, cid, SC_QUIC_UNKNOWN_ID, "unknown v2 id");
	cid_v1(sc, cid, ID_QB & 0xFFFF);   /* qb's low bits in v1: not qb */
	hashed_short(&q, 0, cid, SC_QUIC_UNKNOWN_ID, "v1 id of qb's low bits");
	cid_v1(sc, cid, ID_QE);
	hashed_short(&q, 0, cid, SC_QUIC_UNKNOWN_ID, "id of a down backend");
	cid_v2(sc, cid, ID_QA);            /* qa is quic4's, not quic6's */
	hashed_short(&q, 1, cid, SC_QUIC_UNKNOWN_ID, "another VIP's id");

	/* No ID: hashed, counted as such. */
	cid_v1(sc, cid, ID_QA);
	cid[0] &= 0x3F;                     /* version 00 */
	hashed_short(&q, 0, cid, SC_QUIC_NO_ID, "cid version 00");
	cid[0] |= 0xC0;                     /* version 11 */
	hashed_short(&q, 0, cid, SC_QUIC_NO_ID, "cid version 11");
	cid_v1(sc, cid, 0);
	hashed_short(&q, 1, cid, SC_QUIC_NO_ID, "v1 id 0");
	cid_v2(sc, cid, ID_QA);
	pkt[0] = 0x41;
	memcpy(pkt + 1, cid, 8);
	f = new_flow(&q, v4);
	by_hash(&q, emit(&q, &f, pkt, 8), 0, &f, SC_QUIC_NO_ID,
		"short header, 7-byte cid");
	f = new_flow(&q, v4);
	by_hash(&q, emit(&q, &f, pkt, 1), 0, &f, SC_QUIC_NO_ID,
		"short header, no cid");

	/* Not QUIC short headers: hashed, not counted. */
	cid_v1(sc, cid, ID_QA);
	short_header(&q, pkt, cid);
	pkt[0] = 0x01;                      /* fixed bit clear */
	f = flow_away_from(&q, 0, 0);
	by_hash(&q, emit(&q, &f, pkt, 32), 0, &f, SC_QUIC_NONE,
		"fixed bit clear");
	f = new_flow(&q, v4);
	by_hash(&q, emit(&q, &f, pkt, 0), 0, &f, SC_QUIC_NONE, "empty payload");
	{
		/* the first fragment starts "MLVT": a v1 ID qf has */
		static const uint32_t order[] = { 0, 1 };
		struct sc_opts o = { .payload_len = 120 };
		struct mlv_flow_key k;

		int first, second;

		do {   /* a datagram the table does not give to qf */
			f = new_flow(&q, v4);
			k = sc_key(&f, false);
			expect_choices(&q.tabs, 0, &k, &first, &second);
		} while (first == 5 || second == 5);
		sc_emit_fragments(sc, &f, &o, 64, order, 2, 0, sc_new_group(sc),
				  "fragmented datagram");
	}
	/* to the VIP without quic: pa's ID is not routed */
	cid_v1(sc, cid, ID_QA);
	f = flow_away_from(&q, 2, 0);
	by_hash(&q, emit(&q, &f, pkt, short_header(&q, pkt, cid)), 2, &f,
		SC_QUIC_NONE, "short header to a VIP without quic");

	expect_free(&q.tabs);
}
