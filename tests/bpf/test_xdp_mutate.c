/* SPDX-License-Identifier: BSD-3-Clause */
/* The parsers of both XDP programs (dataplane/bpf/steer/xdp_steer.bpf.c,
 * dataplane/bpf/decap/xdp_decap.bpf.c) under thousands of mutated frames
 * through BPF_PROG_TEST_RUN.
 *
 * Valid seed frames cover every path each program parses; each is cut at
 * every length, and mutated at random (bit flips, interesting byte
 * values, header-length fields out of range, cuts at header boundaries
 * and at random lengths, junk appended) from a fixed-seed PRNG. For every
 * frame:
 *  - the run succeeds (the kernel refuses only frames shorter than an
 *    Ethernet header, and then no counter moves);
 *  - the action is one the program returns (steer: PASS, REDIRECT;
 *    decap: PASS, DROP; decap's ABORTED never happens);
 *  - exactly one outcome counter moves, by one: both programs count
 *    every outcome, so those counters also sum to the frames run; of
 *    the decapsulator's other counters at most one moves (second
 *    chance's reason for not sending a frame on), besides sc_carried
 *    for a frame with a valid second-chance block;
 *  - the counters are the ones an independent reference classifier
 *    below expects (written from the programs' documented rules, byte
 *    offsets and no shared code), so a frame counted under the wrong
 *    reason, or decapsulated or redirected when it must not be, fails;
 *  - a frame passed untouched comes out byte for byte as it went in; a
 *    decapsulated one is the inner packet behind the outer frame's MAC
 *    addresses, with the outer CE mark carried over.
 * A failure prints the PRNG seed, the program, the iteration and a hex
 * dump of the frame. MLV_BPF_MUTATE_SEED sets the seed (decimal or 0x
 * hex) and MLV_BPF_MUTATE_ITERS the mutated frames per program, to
 * reproduce a failure or search longer.
 *
 * Runs in a private network namespace, each program attached to lo in
 * turn (generic XDP). The namespace has no sockets and no routes, so a
 * second-chance frame the decapsulator would send on finds no route to
 * its hop (sc_no_route) and is decapsulated. Needs root (exits 77,
 * skipped, without). */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <netinet/in.h>

#include "control/steering/steering.h"
#include "control/xdp/attached.h"
#include "tests/bpf/bpf_test_env.h"
#include "tests/bpf/decap_test_config.h"
#include "tests/support/frames.h"
#include "tools/bin/maglev-decap/decap_ctl.h"

#define FRAME_CAP 2048
#define MAX_SEEDS 48
#define MAX_FIELDS 64
#define MAX_CUTS 64
#define MAX_CTRS 32
#define DEFAULT_SEED 0x6d6c7662706675ULL
#define DEFAULT_ITERS 100000u
/* 1 in NO_SOCKET_EVERY steering frames runs with xsks_map empty */
#define NO_SOCKET_EVERY 8u

/* ---- PRNG: xorshift64*, one stream per (seed, program, iteration) ---- */

static uint64_t base_seed;
static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

static uint32_t below(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

/* splitmix64 of the triple: iteration i of a program can be replayed
 * without the ones before it */
static void rng_at(unsigned prog, uint64_t iter)
{
	uint64_t z = base_seed ^ ((uint64_t)prog << 56) ^
		     (iter * 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	rng = (z ^ (z >> 31)) | 1;
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : dflt;
}

/* ---- seeds: a frame plus where its headers and length fields are ---- */

enum field_kind { F_LO4, F_HI4, F_U8, F_BE16 };

struct field {
	uint32_t off;
	enum field_kind kind;
};

struct seed {
	char name[48];
	uint8_t b[FRAME_CAP];
	uint32_t len;
	uint32_t cuts[MAX_CUTS];          /* header boundaries */
	unsigned n_cuts;
	struct field fields[MAX_FIELDS];  /* lengths, versions, next headers */
	unsigned n_fields;
};

static struct seed seeds[MAX_SEEDS];
static unsigned n_seeds;

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void cut_at(struct seed *s, uint32_t off)
{
	if (s->n_cuts < MAX_CUTS && off <= s->len)
		s->cuts[s->n_cuts++] = off;
}

static void field_at(struct seed *s, uint32_t off, enum field_kind k)
{
	if (s->n_fields < MAX_FIELDS && off < s->len)
		s->fields[s->n_fields++] = (struct field){ off, k };
}

static int is_gue_port(uint16_t port)
{
	return port == GUE_PORT || port == GUE_PORT2;
}

/* GUE private data at off, hlen bytes: a second-chance block's fixed
 * part (kind, version, flags, hops) and the bytes of its address slots
 * are fields; its end and each slot's a cut. */
static void describe_private(struct seed *s, uint32_t off, uint32_t hlen)
{
	for (uint32_t i = 0; i < 4; i++)
		field_at(s, off + i, F_U8);
	if (s->b[off] != 0x4d)
		return;
	for (uint32_t i = 4; i < hlen; i += 4) {
		field_at(s, off + i, F_U8);
		field_at(s, off + i + 3, F_U8);
		cut_at(s, off + i);
	}
	cut_at(s, off + hlen);
}

/* Record the headers of the (valid) IP packet at off: cuts after each,
 * and the fields a mutation sets out of range. Follows IPIP and GUE to
 * the inner packet. */
static void describe_ip(struct seed *s, uint32_t off, unsigned depth)
{
	const uint8_t *p = s->b + off;
	uint32_t l4;
	uint8_t proto;

	if (depth > 3 || off + 20 > s->len)
		return;
	cut_at(s, off);
	field_at(s, off, F_HI4);                 /* version */
	field_at(s, off + 1, F_U8);              /* TOS / traffic class */
	if (p[0] >> 4 == 4) {
		field_at(s, off, F_LO4);         /* IHL */
		field_at(s, off + 2, F_BE16);    /* total length */
		field_at(s, off + 6, F_BE16);    /* flags, fragment offset */
		field_at(s, off + 9, F_U8);      /* protocol */
		cut_at(s, off + 20);
		l4 = off + (p[0] & 15u) * 4;
		proto = p[9];
		if (be16(p + 6) & 0x3fff)
			return;
	} else {
		field_at(s, off + 4, F_BE16);    /* payload length */
		field_at(s, off + 6, F_U8);      /* next header */
		cut_at(s, off + 40);
		l4 = off + 40;
		proto = p[6];
		while (l4 + 8 <= s->len &&
		       (proto == 0 || proto == 43 || proto == 60 ||
			proto == 44)) {
			field_at(s, l4, F_U8);
			if (proto == 44) {
				field_at(s, l4 + 2, F_BE16);
				if (be16(s->b + l4 + 2) & 0xfff9)
					return;
				proto = s->b[l4];
				l4 += 8;
			} else {
				field_at(s, l4 + 1, F_U8);
				proto = s->b[l4];
				l4 += (s->b[l4 + 1] + 1u) * 8;
			}
			cut_at(s, l4);
		}
	}
	cut_at(s, l4);
	switch (proto) {
	case 4:
	case 41:
		describe_ip(s, l4, depth + 1);
		break;
	case 6:
		field_at(s, l4 + 2, F_BE16);     /* destination port */
		field_at(s, l4 + 12, F_HI4);     /* data offset */
		cut_at(s, l4 + 4);
		cut_at(s, l4 + 20);
		break;
	case 17:
		field_at(s, l4 + 2, F_BE16);
		field_at(s, l4 + 4, F_BE16);     /* UDP length */
		cut_at(s, l4 + 4);
		cut_at(s, l4 + 8);
		if (l4 + 12 <= s->len && is_gue_port(be16(s->b + l4 + 2))) {
			uint32_t hlen = (s->b[l4 + 8] & 31u) * 4;

			field_at(s, l4 + 8, F_U8);   /* version, C, Hlen */
			field_at(s, l4 + 8, F_LO4);  /* Hlen's low bits */
			field_at(s, l4 + 9, F_U8);   /* proto */
			field_at(s, l4 + 10, F_BE16); /* flags */
			cut_at(s, l4 + 12);
			if (hlen)
				describe_private(s, l4 + 12, hlen);
			describe_ip(s, l4 + 12 + hlen, depth + 1);
		}
		break;
	case 1:
	case 58:
		field_at(s, l4, F_U8);           /* type */
		field_at(s, l4 + 1, F_U8);       /* code */
		cut_at(s, l4 + 4);
		break;
	default:
		break;
	}
}

static void add_seed(const char *name, const uint8_t *frame, uint32_t len)
{
	struct seed *s;
	uint32_t l3 = 14;

	assert_true(n_seeds < MAX_SEEDS);
	assert_true(len > 0 && len <= FRAME_CAP);
	s = &seeds[n_seeds++];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	memcpy(s->b, frame, len);
	s->len = len;
	cut_at(s, 0);
	cut_at(s, 12);
	cut_at(s, 14);
	cut_at(s, len);
	field_at(s, 12, F_BE16);                 /* ethertype */
	if (len >= 18 && be16(frame + 12) == 0x8100) {
		field_at(s, 16, F_BE16);
		cut_at(s, 18);
		l3 = 18;
	}
	if (be16(frame + l3 - 2) == 0x0800 || be16(frame + l3 - 2) == 0x86dd)
		describe_ip(s, l3, 0);
}

static void add_spec(const char *name, const struct frame_spec *sp)
{
	uint8_t buf[FRAME_CAP];
	uint32_t len = frame_build(buf, sizeof(buf), sp, NULL, NULL);

	assert_true(len > 0);
	add_seed(name, buf, len);
}

/* An IP packet from family src to dst carrying payload (IPIP when proto
 * is 4 or 41, GUE when proto is 17 and dport a GUE port). */
static uint32_t ip_packet(uint8_t *buf, uint8_t family, uint8_t proto,
			  const char *src, const char *dst, uint16_t dport,
			  uint8_t tos, const uint8_t *payload,
			  uint32_t payload_len)
{
	struct frame_spec s;
	uint32_t len;

	frame_spec_init(&s, family, proto);
	frame_addr(s.src, src);
	frame_addr(s.dst, dst);
	s.dport = dport;
	s.tos = tos;
	s.payload = payload;
	s.payload_len = payload_len;
	len = frame_build_ip(buf, FRAME_CAP, &s);
	assert_true(len > 0);
	return len;
}

/* ---- running one frame ---- */

struct outcome {
	int rc;                  /* 0 or -errno of the refused run */
	int action;
	uint32_t out_len;
	int ctr;                 /* the one outcome counter that moved, or -1 */
	int extra;               /* another counter that moved, or -1 */
	bool tally;              /* the program's tally counter moved */
	uint8_t out[FRAME_CAP];
};

struct prog {
	const char *name;
	unsigned id;             /* PRNG stream */
	int fd;
	unsigned n_ctr;
	unsigned n_outcomes;     /* counters [0, n_outcomes): one per frame */
	int tally;               /* a counter that moves beside the others
				    (decap: sc_carried), checked apart; -1 */
	void (*read)(uint64_t *out);
	const char *(*ctr_name)(unsigned c);
	/* per-frame checks beyond the common ones */
	void (*check)(const uint8_t *in, uint32_t len,
		      const struct outcome *o);
	uint64_t frames, refused;
	uint64_t by_ctr[MAX_CTRS];
};

/* What is running, for the failure report. */
static struct {
	const struct prog *prog;
	uint64_t iter;           /* UINT64_MAX: not a random mutation */
	const char *what;
	const uint8_t *frame;
	uint32_t len;
} cur;

static void hexdump(const uint8_t *p, uint32_t len)
{
	for (uint32_t i = 0; i < len; i += 16) {
		fprintf(stderr, "  %04x:", i);
		for (uint32_t j = i; j < i + 16 && j < len; j++)
			fprintf(stderr, " %02x", p[j]);
		fputc('\n', stderr);
	}
}

static void report_frame(void)
{
	fprintf(stderr, "FAILED frame: program %s, seed 0x%" PRIx64 ", ",
		cur.prog ? cur.prog->name : "?", base_seed);
	if (cur.iter == UINT64_MAX)
		fprintf(stderr, "fixed case (%s)", cur.what);
	else
		fprintf(stderr, "iteration %" PRIu64 " (from %s)", cur.iter,
			cur.what);
	fprintf(stderr, ", %u bytes:\n", cur.len);
	hexdump(cur.frame, cur.len);
}

#define CHECK(cond, ...)                                                  \
	do {                                                              \
		if (!(cond)) {                                            \
			report_frame();                                   \
			fail_msg(__VA_ARGS__);                            \
		}                                                         \
	} while (0)

static void run_frame(struct prog *p, const uint8_t *in, uint32_t len,
		      struct outcome *o)
{
	uint64_t before[MAX_CTRS], after[MAX_CTRS];
	unsigned moved = 0, extras = 0;

	cur.frame = in;
	cur.len = len;
	p->read(before);
	o->rc = bpf_test_try_run_xdp(p->fd, in, len, o->out, sizeof(o->out),
				     &o->out_len, &o->action);
	p->read(after);
	o->ctr = o->extra = -1;
	o->tally = false;
	for (unsigned i = 0; i < p->n_ctr; i++) {
		uint64_t d = after[i] - before[i];

		CHECK(d <= 1, "%s moved by %" PRIu64, p->ctr_name(i), d);
		if (d && (int)i == p->tally) {
			o->tally = true;
		} else if (d && i < p->n_outcomes) {
			moved++;
			o->ctr = (int)i;
		} else if (d) {
			extras++;
			o->extra = (int)i;
		}
	}
	if (o->rc) {
		/* the kernel's lower bound for an XDP test frame */
		CHECK(len < 14 && o->rc == -EINVAL,
		      "BPF_PROG_TEST_RUN refused %u bytes: %s", len,
		      strerror(-o->rc));
		CHECK(moved + extras == 0, "a refused run moved %s",
		      p->ctr_name((unsigned)(o->ctr >= 0 ? o->ctr : o->extra)));
		p->refused++;
		return;
	}
	CHECK(moved == 1, "%u outcome counters moved (one expected)", moved);
	CHECK(extras <= 1, "%u other counters moved (at most one expected)",
	      extras);
	CHECK(o->out_len <= sizeof(o->out) && o->out_len <= len,
	      "data_out of %u bytes from %u", o->out_len, len);
	p->frames++;
	p->by_ctr[o->ctr]++;
	if (o->extra >= 0)
		p->by_ctr[o->extra]++;
	p->check(in, len, o);
}

static void expect_untouched(const uint8_t *in, uint32_t len,
			     const struct outcome *o)
{
	CHECK(o->action == XDP_PASS, "action %d, not XDP_PASS", o->action);
	CHECK(o->out_len == len && !memcmp(o->out, in, len),
	      "passed frame changed (%u bytes out)", o->out_len);
}

/* ---- mutation ---- */

static const uint8_t interesting8[] = {
	0, 1, 0x7f, 0x80, 0xff, 4, 5, 6, 17, 41, 43, 44, 58, 60, 0x45, 0x60,
};

static uint32_t mutate_field(uint8_t *f, uint32_t len, const struct field *fl)
{
	uint8_t *p = f + fl->off;
	uint32_t v;

	switch (fl->kind) {
	case F_LO4:
	case F_HI4: {
		static const uint8_t nib[] = { 0, 1, 4, 5, 6, 15 };
		uint8_t old = fl->kind == F_LO4 ? *p & 15 : *p >> 4;
		uint8_t n = below(3) ? nib[below(sizeof(nib))] :
			    (uint8_t)((old + (below(2) ? 1 : 15)) & 15);

		*p = fl->kind == F_LO4 ? (uint8_t)((*p & 0xf0) | n) :
			(uint8_t)((*p & 0x0f) | n << 4);
		break;
	}
	case F_U8:
		*p = below(2) ? interesting8[below(sizeof(interesting8))] :
			(uint8_t)(*p + (below(2) ? 1 : 0xff));
		break;
	case F_BE16:
		if (fl->off + 2 > len)
			break;
		switch (below(6)) {
		case 0: v = 0; break;
		case 1: v = 0xffff; break;
		case 2: v = below(2) ? 0x7fff : 0x8000; break;
		case 3: v = be16(p) + (below(2) ? 1u : 0xffffu); break;
		case 4: v = len - fl->off + below(5) - 2; break;
		default: v = (uint32_t)rnd(); break;
		}
		put16(p, v);
		break;
	}
	return len;
}

/* IPv4 header checksum of the outer header redone, so that mutations
 * behind it reach the decapsulator's later checks. */
static void refresh_ipv4_csum(uint8_t *f, uint32_t len)
{
	uint32_t hl;
	uint16_t c;

	if (len < 34 || be16(f + 12) != 0x0800)
		return;
	hl = (f[14] & 15u) * 4;
	if (hl < 20 || 14 + hl > len)
		return;
	f[24] = f[25] = 0;
	c = frame_csum(f + 14, hl, 0);
	put16(f + 24, c);
}

/* One to three mutations of seed s into f; returns the new length. */
static uint32_t mutate(uint8_t *f, const struct seed *s)
{
	uint32_t len = s->len;
	unsigned n = 1 + below(3);

	memcpy(f, s->b, len);
	for (unsigned k = 0; k < n; k++) {
		switch (below(8)) {
		case 0:                              /* bit flips */
			for (unsigned b = 1 + below(4); b && len; b--)
				f[below(len)] ^= (uint8_t)(1u << below(8));
			break;
		case 1:                              /* an interesting byte */
			if (len)
				f[below(len)] =
					interesting8[below(sizeof(interesting8))];
			break;
		case 2:
		case 3:                              /* a header field */
			if (s->n_fields) {
				const struct field *fl =
					&s->fields[below(s->n_fields)];

				if (fl->off < len)
					len = mutate_field(f, len, fl);
			}
			break;
		case 4: {                            /* cut at a boundary */
			uint32_t c = s->cuts[below(s->n_cuts)] + below(3);

			c = c ? c - 1 : 0;
			if (c < len)
				len = c;
			break;
		}
		case 5:                              /* cut anywhere */
			len = below(8) ? below(len + 1) : below(15);
			break;
		case 6: {                            /* junk appended */
			uint32_t add = 1 + below(64);
			int zero = below(2);

			for (uint32_t i = 0; i < add && len < FRAME_CAP; i++)
				f[len++] = zero ? 0 : (uint8_t)rnd();
			break;
		}
		default:                             /* a random byte */
			if (len)
				f[below(len)] = (uint8_t)rnd();
			break;
		}
	}
	if (below(2))
		refresh_ipv4_csum(f, len);
	return len;
}

/* Every seed cut at every length, then iters random mutations. */
static void run_campaign(struct prog *p, uint64_t iters)
{
	uint64_t sum_before[MAX_CTRS], sum_after[MAX_CTRS], total = 0;
	static struct outcome o;
	static uint8_t f[FRAME_CAP];
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	p->read(sum_before);
	cur.prog = p;
	cur.iter = UINT64_MAX;
	for (unsigned i = 0; i < n_seeds; i++) {
		cur.what = seeds[i].name;
		for (uint32_t len = 0; len <= seeds[i].len; len++)
			run_frame(p, seeds[i].b, len, &o);
	}
	for (uint64_t it = 0; it < iters; it++) {
		const struct seed *s;
		uint32_t len;

		rng_at(p->id, it);
		s = &seeds[below(n_seeds)];
		len = mutate(f, s);
		cur.iter = it;
		cur.what = s->name;
		run_frame(p, f, len, &o);
	}
	p->read(sum_after);
	for (unsigned i = 0; i < p->n_outcomes; i++)
		total += sum_after[i] - sum_before[i];
	/* every outcome is counted: those counters sum to the frames run */
	assert_int_equal(total, p->frames);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "%s: seed 0x%" PRIx64 ", %u seeds, %" PRIu64
		" frames run (%" PRIu64 " mutated), %" PRIu64
		" refused (< 14 bytes), %.2f s\n", p->name, base_seed, n_seeds,
		p->frames, iters, p->refused,
		(double)(t1.tv_sec - t0.tv_sec) +
		(double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	for (unsigned i = 0; i < p->n_ctr; i++)
		fprintf(stderr, "  %-24s %" PRIu64 "\n", p->ctr_name(i),
			p->by_ctr[i]);
}

/* ======================= the steering program ======================= */

static struct mlv_xdp_steer *steer;
static struct bpf_test_xsk *xsk;
static int steer_has_socket;

struct steer_vip {
	uint8_t family, proto;
	uint16_t port;
	const char *addr;
	int echo;               /* icmp_echo: reply */
};

static const struct steer_vip steer_vips[] = {
	{ 4, IPPROTO_TCP, 80, "192.0.2.10", 0 },
	{ 6, IPPROTO_UDP, 53, "2001:db8::10", 1 },
	{ 6, IPPROTO_TCP, 443, "2001:db8::10", 0 },
	{ 4, IPPROTO_UDP, 53, "192.0.2.20", 1 },
};
#define N_STEER_VIPS (sizeof(steer_vips) / sizeof(steer_vips[0]))

static int addr_equal(uint8_t family, const uint8_t *a, const char *text)
{
	uint8_t want[16];

	return frame_addr(want, text) == family &&
	       !memcmp(a, want, family == 4 ? 4 : 16);
}

static int steer_vip_address(uint8_t family, const uint8_t *a)
{
	for (unsigned i = 0; i < N_STEER_VIPS; i++)
		if (steer_vips[i].family == family &&
		    addr_equal(family, a, steer_vips[i].addr))
			return 1;
	return 0;
}

/* Some VIP on the address answers pings. */
static int steer_echo_address(uint8_t family, const uint8_t *a)
{
	for (unsigned i = 0; i < N_STEER_VIPS; i++)
		if (steer_vips[i].family == family && steer_vips[i].echo &&
		    addr_equal(family, a, steer_vips[i].addr))
			return 1;
	return 0;
}

static int steer_vip(uint8_t family, uint8_t proto, uint16_t port,
		     const uint8_t *a)
{
	for (unsigned i = 0; i < N_STEER_VIPS; i++)
		if (steer_vips[i].family == family &&
		    steer_vips[i].proto == proto &&
		    steer_vips[i].port == port &&
		    addr_equal(family, a, steer_vips[i].addr))
			return 1;
	return 0;
}

static unsigned steer_frag(uint8_t family, const uint8_t *dst)
{
	return steer_vip_address(family, dst) ? MLV_STEER_CTR_REDIRECT_FRAGMENT
					       : MLV_STEER_CTR_PASS_NOT_VIP;
}

/* The reference: the counter the steering program's rules give f, as if
 * a socket were bound (xdp_steer.bpf.c's header comment). IPv6
 * extension headers: at most eight, as the data plane's parser. */
static unsigned steer_expect(const uint8_t *f, uint32_t len)
{
	uint32_t l3 = 14, l4;
	uint16_t type;
	uint8_t family, proto;
	const uint8_t *dst;

	if (len < 14)
		return MLV_STEER_CTR_PASS_MALFORMED;
	type = be16(f + 12);
	if (type == 0x8100) {
		if (len < 18)
			return MLV_STEER_CTR_PASS_MALFORMED;
		type = be16(f + 16);
		l3 = 18;
	}
	if (type == 0x0800) {
		if (len < l3 + 20 || f[l3] >> 4 != 4 || (f[l3] & 15) < 5)
			return MLV_STEER_CTR_PASS_MALFORMED;
		family = 4;
		dst = f + l3 + 16;
		if (be16(f + l3 + 6) & 0x3fff)
			return steer_frag(family, dst);
		proto = f[l3 + 9];
		l4 = l3 + (f[l3] & 15u) * 4;
	} else if (type == 0x86dd) {
		unsigned n_ext = 0;

		if (len < l3 + 40 || f[l3] >> 4 != 6)
			return MLV_STEER_CTR_PASS_MALFORMED;
		family = 6;
		dst = f + l3 + 24;
		proto = f[l3 + 6];
		l4 = l3 + 40;
		while (proto == 0 || proto == 43 || proto == 60 ||
		       proto == 44) {
			uint32_t hl = proto == 44 ? 8 : 2;

			if (n_ext++ == 8 || l4 + hl > len)
				return MLV_STEER_CTR_PASS_MALFORMED;
			if (proto == 44 && (be16(f + l4 + 2) & 0xfff9))
				return steer_frag(family, dst);
			hl = proto == 44 ? 8 : (f[l4 + 1] + 1u) * 8;
			proto = f[l4];
			l4 += hl;
		}
	} else {
		return MLV_STEER_CTR_PASS_NOT_IP;
	}
	if (proto == IPPROTO_TCP || proto == IPPROTO_UDP) {
		if (l4 + 4 > len)
			return MLV_STEER_CTR_PASS_MALFORMED;
		return steer_vip(family, proto, be16(f + l4 + 2), dst) ?
			MLV_STEER_CTR_REDIRECT_VIP : MLV_STEER_CTR_PASS_NOT_VIP;
	}
	if ((family == 4 && proto == IPPROTO_ICMP) ||
	    (family == 6 && proto == IPPROTO_ICMPV6)) {
		int too_big;

		if (l4 + 4 > len)
			return MLV_STEER_CTR_PASS_MALFORMED;
		too_big = family == 4 ? f[l4] == 3 && f[l4 + 1] == 4 :
			  f[l4] == 2;
		int echo = f[l4] == (family == 4 ? 8 : 128) && f[l4 + 1] == 0;

		if (too_big && steer_vip_address(family, dst))
			return MLV_STEER_CTR_REDIRECT_ICMP;
		if (echo && steer_echo_address(family, dst))
			return MLV_STEER_CTR_REDIRECT_ECHO;
	}
	return MLV_STEER_CTR_PASS_NOT_VIP;
}

static int steer_is_redirect(unsigned c)
{
	return c == MLV_STEER_CTR_REDIRECT_VIP ||
	       c == MLV_STEER_CTR_REDIRECT_FRAGMENT ||
	       c == MLV_STEER_CTR_REDIRECT_ICMP ||
	       c == MLV_STEER_CTR_REDIRECT_ECHO;
}

/* Steering never rewrites a frame: whatever the verdict, data_out is
 * data_in. A redirect is XDP_REDIRECT only with a socket on the queue. */
static void steer_check(const uint8_t *in, uint32_t len,
			const struct outcome *o)
{
	unsigned want = steer_expect(in, len);

	if (!steer_has_socket && steer_is_redirect(want))
		want = MLV_STEER_CTR_PASS_NO_SOCKET;
	CHECK(o->ctr == (int)want, "counted %s, expected %s",
	      mlv_xdp_steer_counter_name((unsigned)o->ctr),
	      mlv_xdp_steer_counter_name(want));
	CHECK(o->action == (steer_is_redirect(want) ? XDP_REDIRECT : XDP_PASS),
	      "action %d for %s", o->action, mlv_xdp_steer_counter_name(want));
	CHECK(o->out_len == len && !memcmp(o->out, in, len),
	      "steered frame changed (%u bytes out)", o->out_len);
}

static void steer_read(uint64_t *out)
{
	assert_int_equal(mlv_xdp_steer_counters(steer, out), MLV_OK);
}

static void steer_socket(int on)
{
	__u32 q = 0;
	int fd = bpf_test_xsk_fd(xsk);
	int map = mlv_xdp_steer_xsks_map_fd(steer);

	if (on)
		assert_int_equal(bpf_map_update_elem(map, &q, &fd, BPF_ANY), 0);
	else
		assert_int_equal(bpf_map_delete_elem(map, &q), 0);
	steer_has_socket = on;
}

/* A steering seed: frame_spec_init(family, proto) to dst (NULL: the
 * default VIP address) and dport, then these changes. */
struct steer_seed {
	const char *name;
	uint8_t family, proto;
	const char *dst;
	uint16_t dport;
	uint8_t icmp_type, icmp_code;
	bool vlan, frag, mf;
	uint16_t frag_offset;
	uint8_t ip_opt_len, tcp_opt_len;
	uint32_t payload_len;
	const char *ext;    /* IPv6 extension headers: 'h'op, 'r'outing, 'd'est */
};

static const struct steer_seed steer_seed_list[] = {
	{ "tcp4 vip", 4, IPPROTO_TCP, NULL, 80 },
	{ "tcp4 vip, IP and TCP options", 4, IPPROTO_TCP, NULL, 80,
	  .ip_opt_len = 8, .tcp_opt_len = 12 },
	{ "tcp4 vip, VLAN", 4, IPPROTO_TCP, NULL, 80, .vlan = true },
	{ "tcp4 not vip, VLAN", 4, IPPROTO_TCP, NULL, 22, .vlan = true },
	{ "udp4 vip", 4, IPPROTO_UDP, "192.0.2.20", 53, .payload_len = 30 },
	{ "udp4 first fragment", 4, IPPROTO_UDP, "192.0.2.20", 53,
	  .frag = true, .mf = true, .payload_len = 30 },
	{ "udp4 last fragment", 4, IPPROTO_UDP, "192.0.2.20", 53,
	  .frag = true, .frag_offset = 100, .payload_len = 30 },
	{ "icmp4 frag needed", 4, IPPROTO_ICMP, NULL, 0, 3, 4,
	  .payload_len = 28 },
	{ "icmp4 echo", 4, IPPROTO_ICMP, NULL, 0, 8, 0, .payload_len = 28 },
	{ "icmp4 echo, answered", 4, IPPROTO_ICMP, "192.0.2.20", 0, 8, 0,
	  .payload_len = 28 },
	{ "gre4", 4, 47, NULL, 0, .payload_len = 8 },
	{ "udp6 vip", 6, IPPROTO_UDP, NULL, 53 },
	{ "udp6 vip, VLAN", 6, IPPROTO_UDP, NULL, 53, .vlan = true },
	{ "tcp6 vip", 6, IPPROTO_TCP, NULL, 443 },
	{ "udp6 vip, 3 extension headers", 6, IPPROTO_UDP, NULL, 53,
	  .ext = "hRd" },
	{ "udp6 vip, 8 extension headers", 6, IPPROTO_UDP, NULL, 53,
	  .ext = "dddddddd" },
	{ "udp6 vip, atomic fragment", 6, IPPROTO_UDP, NULL, 53,
	  .frag = true },
	{ "udp6 first fragment", 6, IPPROTO_UDP, NULL, 53, .frag = true,
	  .mf = true, .payload_len = 16 },
	{ "udp6 last fragment after hop-by-hop", 6, IPPROTO_UDP, NULL, 53,
	  .frag = true, .frag_offset = 10, .payload_len = 16, .ext = "h" },
	{ "icmp6 packet too big", 6, IPPROTO_ICMPV6, NULL, 0, 2, 0,
	  .payload_len = 48 },
	{ "icmp6 neighbour solicitation", 6, IPPROTO_ICMPV6, NULL, 0, 135, 0,
	  .payload_len = 48 },
	{ "icmp6 echo, answered", 6, IPPROTO_ICMPV6, NULL, 0, 128, 0,
	  .payload_len = 48 },
};

static void steer_seeds(void)
{
	static const uint8_t arp[42] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1,
		0x08, 0x06, 0, 1, 0x08, 0x00, 6, 4, 0, 1,
		2, 0, 0, 0, 0, 1, 198, 51, 100, 1,
		0, 0, 0, 0, 0, 0, 192, 0, 2, 10,
	};

	n_seeds = 0;
	add_seed("arp", arp, sizeof(arp));
	for (size_t i = 0; i < sizeof(steer_seed_list) /
			       sizeof(steer_seed_list[0]); i++) {
		const struct steer_seed *d = &steer_seed_list[i];
		struct frame_spec s;

		frame_spec_init(&s, d->family, d->proto);
		if (d->dst)
			frame_addr(s.dst, d->dst);
		s.dport = d->dport;
		s.icmp_type = d->icmp_type;
		s.icmp_code = d->icmp_code;
		s.vlan = d->vlan;
		s.vlan_tci = 100;
		s.ip_opt_len = d->ip_opt_len;
		s.tcp_opt_len = d->tcp_opt_len;
		s.payload_len = d->payload_len;
		if (d->frag) {       /* IPv4: DF off; IPv6: a fragment header */
			s.df = false;
			s.v6_frag = d->family == 6;
			s.mf = d->mf;
			s.frag_offset = d->frag_offset;
		}
		/* lower case: one 8-byte unit; upper case: three */
		for (const char *e = d->ext; e && *e; e++) {
			s.ext[s.n_ext] = *e == 'h' || *e == 'H' ? 0 :
					 *e == 'r' || *e == 'R' ? 43 : 60;
			s.ext_units[s.n_ext++] = *e >= 'a' ? 0 : 2;
		}
		add_spec(d->name, &s);
	}
}

static struct prog steer_prog = {
	.name = "xdp_steer", .id = 1, .n_ctr = MLV_STEER_CTR__COUNT,
	.n_outcomes = MLV_STEER_CTR__COUNT, .tally = -1,
	.read = steer_read, .ctr_name = mlv_xdp_steer_counter_name,
	.check = steer_check,
};

static int steer_attach(void **state)
{
	struct mlv_xdp_vip v[N_STEER_VIPS];
	struct mlv_xdp_attached att;
	char why[256] = "";

	assert_int_equal(mlv_xdp_steer_attach("lo", MLV_XDP_MODE_AUTO, &steer,
					      why, sizeof(why)), MLV_OK);
	assert_int_equal(mlv_xdp_attached_query((int)if_nametoindex("lo"),
						&att, NULL, 0), MLV_OK);
	steer_prog.fd = bpf_prog_get_fd_by_id(att.prog_id);
	assert_true(steer_prog.fd >= 0);
	for (unsigned i = 0; i < N_STEER_VIPS; i++) {
		memset(&v[i], 0, sizeof(v[i]));
		v[i].port = steer_vips[i].port;
		v[i].protocol = steer_vips[i].proto;
		v[i].echo_reply = steer_vips[i].echo;
		assert_true(mlv_ip_parse(steer_vips[i].addr, &v[i].address));
	}
	assert_int_equal(mlv_xdp_steer_sync(steer, v, N_STEER_VIPS, NULL),
			 MLV_OK);
	xsk = bpf_test_xsk_open("lo");
	steer_socket(1);
	(void)state;
	return 0;
}

static int steer_detach(void **state)
{
	(void)state;
	close(steer_prog.fd);
	mlv_xdp_steer_close(steer);   /* detaches */
	bpf_test_xsk_close(xsk);
	steer = NULL;
	xsk = NULL;
	return 0;
}

static void steer_mutated_frames(void **state)
{
	uint64_t iters = env_u64("MLV_BPF_MUTATE_ITERS", DEFAULT_ITERS);
	struct prog nosock;

	(void)state;
	steer_seeds();
	run_campaign(&steer_prog, iters);
	/* the same rules with no socket on the queue: nothing redirected */
	steer_socket(0);
	nosock = steer_prog;
	nosock.name = "xdp_steer (no socket)";
	nosock.id = 2;
	nosock.frames = nosock.refused = 0;
	memset(nosock.by_ctr, 0, sizeof(nosock.by_ctr));
	run_campaign(&nosock, iters / NO_SOCKET_EVERY);
}

/* ====================== the decapsulator ====================== */

static struct mlv_decap_maps maps = { .addrs_fd = -1, .ports_fd = -1,
				      .sources_fd = -1, .stats_fd = -1 };
static int lo_index;

/* decap_sources as decap_attach configures them: text, then parsed */
static const char *const decap_source_text[4] = { LB_SRC4, LB_SRC6,
						  LB_NET4, LB_NET6 };
static struct mlv_ip_prefix decap_sources[4];

/* Is the address a (family 4 or 6) inside p? Bit by bit, as the
 * program's trie matches. */
static int in_prefix(uint8_t family, const uint8_t *a,
		     const struct mlv_ip_prefix *p)
{
	if ((p->ip.family == MLV_AF_INET ? 4 : 6) != family)
		return 0;
	for (unsigned i = 0; i < p->len; i++) {
		unsigned m = 0x80u >> (i % 8);

		if ((a[i / 8] & m) != (p->ip.bytes[i / 8] & m))
			return 0;
	}
	return 1;
}

static int decap_source(uint8_t family, const uint8_t *a)
{
	for (unsigned i = 0; i < 4; i++)
		if (in_prefix(family, a, &decap_sources[i]))
			return 1;
	return 0;
}

/* What the reference expects of a frame: the counter, and for a tunnel
 * it undoes, where the inner packet starts and the ECN marks. */
struct decap_want {
	unsigned ctr;
	int extra;               /* the other counter expected, or -1 */
	uint32_t inner;          /* offset of the inner IP header */
	uint8_t inner_version;
	uint8_t outer_ecn;
	bool carried;            /* sc_carried: a valid block, decapsulated */
};

/* What GUE private data is to second chance. */
enum sc_kind { SC_NONE, SC_VALID, SC_MALFORMED };

/* The GUE part of decap_expect: UDP at l4, frame of len bytes; *hlen
 * set to the private data's bytes. */
static unsigned decap_expect_gue(const uint8_t *f, uint32_t len, uint32_t l4,
				 uint8_t *inner_proto, uint32_t *hlen)
{
	if (l4 + 8 > len)
		return MLV_DECAP_CTR_PASS_MALFORMED;
	if (!is_gue_port(be16(f + l4 + 2)))
		return MLV_DECAP_CTR_PASS_NOT_TUNNEL;
	if (l4 + 12 > len)
		return MLV_DECAP_CTR_PASS_MALFORMED;
	/* version 0, C 0; then the inner protocol */
	if ((f[l4 + 8] & 0xe0) || (f[l4 + 9] != 4 && f[l4 + 9] != 41))
		return MLV_DECAP_CTR_PASS_UNSUPPORTED;
	*hlen = (f[l4 + 8] & 31u) * 4;
	/* flags announce extension fields */
	if (*hlen && (f[l4 + 10] || f[l4 + 11]))
		return MLV_DECAP_CTR_PASS_UNSUPPORTED;
	if (l4 + 12 + *hlen > len)
		return MLV_DECAP_CTR_PASS_MALFORMED;
	*inner_proto = f[l4 + 9];
	return MLV_DECAP_CTR_DECAP_GUE;
}

/* The private data at b (hlen bytes, 4 or more) under an outer header
 * of family: second_chance.h's version 1 block, byte by byte. */
static enum sc_kind sc_block(const uint8_t *b, uint32_t hlen, uint8_t family)
{
	uint32_t alen = family == 4 ? 4 : 16;

	if (b[0] != 0x4d)
		return SC_NONE;
	/* flags: redirected 1, IPv6 2, the hop index in bits 2-3, which
	 * only a redirected block may carry and must be below the count */
	if (b[1] != 1 || (b[2] & ~15u) || !(b[2] & 2) != (family == 4) ||
	    b[3] > 2 || hlen != 4 + 2 * alen)
		return SC_MALFORMED;
	if ((b[2] & 1) ? (b[2] >> 2 & 3u) >= b[3] : (b[2] >> 2 & 3u) != 0)
		return SC_MALFORMED;
	for (uint32_t i = b[3] * alen; i < 2 * alen; i++)
		if (b[4 + i])
			return SC_MALFORMED;
	return SC_VALID;
}

/* Is the inner packet (version 4 or 6) at ip, ending at end, one the
 * program would hand on when no socket exists: TCP (a SYN too: nothing
 * listens), or an ICMP frag-needed / packet-too-big quoting TCP? */
static bool sc_would_hand_on(const uint8_t *ip, uint8_t version,
			     const uint8_t *end)
{
	const uint8_t *l4, *q;

	if (version == 4) {
		if ((ip[0] & 15) < 5 || (be16(ip + 6) & 0x3fff))
			return false;
		l4 = ip + (ip[0] & 15u) * 4;
		if (ip[9] == IPPROTO_TCP)
			return l4 + 20 <= end && l4[12] >> 4 >= 5;
		if (ip[9] != IPPROTO_ICMP)
			return false;
		q = l4 + 8;
		return q + 20 <= end && l4[0] == 3 && l4[1] == 4 &&
		       q[0] >> 4 == 4 && (q[0] & 15) >= 5 &&
		       q[9] == IPPROTO_TCP && !(be16(q + 6) & 0x1fff) &&
		       q + (q[0] & 15u) * 4 + 4 <= end;
	}
	l4 = ip + 40;
	if (ip[6] == IPPROTO_TCP)
		return l4 + 20 <= end && l4[12] >> 4 >= 5;
	q = l4 + 8;
	return ip[6] == IPPROTO_ICMPV6 && q + 44 <= end && l4[0] == 2 &&
	       q[0] >> 4 == 6 && q[6] == IPPROTO_TCP;
}

/* The counter that goes with decapsulating a frame with a valid block
 * at b whose inner packet (version 4 or 6) is at ip, the frame ending
 * at end; -1 for none. Nothing routes in this namespace, no socket
 * exists and second chance is on, not draining, so every frame the
 * program would send on is decapsulated for want of a route. */
static int sc_expect(const uint8_t *f, const uint8_t *b, uint8_t family,
		     const uint8_t *ip, uint8_t version, const uint8_t *end)
{
	uint32_t alen = family == 4 ? 4 : 16;
	bool redirected = b[2] & 1;
	/* the first hop to try: after the one a backend sent it to */
	unsigned k = redirected ? (b[2] >> 2 & 3u) + 1 : 0;

	if (!sc_would_hand_on(ip, version, end))
		return redirected ? MLV_DECAP_CTR_SC_ARRIVED : -1;
	if (b[3] <= k)
		return redirected ? MLV_DECAP_CTR_SC_EXHAUSTED :
				    MLV_DECAP_CTR_SC_NO_HOP;
	for (; k < b[3]; k++)
		if (!addr_equal(family, b + 4 + k * alen,
				family == 4 ? LOCAL4 : LOCAL6))
			break;
	if (k == b[3])
		return MLV_DECAP_CTR_SC_SELF;
	if (f[14 + (family == 4 ? 8 : 7)] <= 1)       /* TTL, hop limit */
		return MLV_DECAP_CTR_SC_TTL;
	return MLV_DECAP_CTR_SC_NO_ROUTE;
}

/* The reference: the decapsulator's rules (xdp_decap.bpf.c's header
 * comment and counter meanings). A frame with several faults is counted
 * under the first found, in the program's order: not IP; an outer header
 * cut short or of another version; not a tunnel protocol; not local; a
 * fragment; options or extension headers; bad length or checksum; the
 * GUE checks; an unknown source; the inner header; ECN. Then, for a
 * second-chance block, the counter that goes with the decapsulation. */
static struct decap_want decap_expect(const uint8_t *f, uint32_t len)
{
	struct decap_want w = { MLV_DECAP_CTR_PASS_MALFORMED, -1, 0, 0, 0 };
	const struct decap_want not_ip = { MLV_DECAP_CTR_PASS_NOT_IP, -1 };
	const struct decap_want malformed = { MLV_DECAP_CTR_PASS_MALFORMED,
					      -1 };
	const uint8_t *ip = f + 14, *src;
	uint8_t family, proto, inner_proto = 0;
	enum sc_kind sc = SC_NONE;
	uint32_t l4, hlen = 0;
	uint16_t type;

	if (len < 14)
		return not_ip;
	type = be16(f + 12);
	if (type != 0x0800 && type != 0x86dd)
		return not_ip;
	if (type == 0x0800) {
		if (len < 34 || ip[0] >> 4 != 4 || (ip[0] & 15) < 5)
			return w;
		family = 4;
		proto = ip[9];
		src = ip + 12;
		if (proto != 4 && proto != 41 && proto != IPPROTO_UDP)
			w.ctr = MLV_DECAP_CTR_PASS_NOT_TUNNEL;
		else if (!addr_equal(4, ip + 16, LOCAL4))
			w.ctr = MLV_DECAP_CTR_PASS_NOT_LOCAL;
		else if (be16(ip + 6) & 0x3fff)
			w.ctr = MLV_DECAP_CTR_PASS_FRAGMENT;
		else if ((ip[0] & 15) != 5)
			w.ctr = MLV_DECAP_CTR_PASS_UNSUPPORTED;
		else if (be16(ip + 2) < 20 || be16(ip + 2) > len - 14 ||
			 frame_csum(ip, 20, 0) != 0)
			w.ctr = MLV_DECAP_CTR_PASS_MALFORMED;
		else
			w.ctr = 0;
		w.outer_ecn = ip[1] & 3;
		l4 = 34;
	} else {
		if (len < 54 || ip[0] >> 4 != 6)
			return w;
		family = 6;
		proto = ip[6];
		src = ip + 8;
		if (proto != 4 && proto != 41 && proto != IPPROTO_UDP &&
		    proto != 0 && proto != 43 && proto != 60 && proto != 44)
			w.ctr = MLV_DECAP_CTR_PASS_NOT_TUNNEL;
		else if (!addr_equal(6, ip + 24, LOCAL6))
			w.ctr = MLV_DECAP_CTR_PASS_NOT_LOCAL;
		else if (proto == 44)
			w.ctr = MLV_DECAP_CTR_PASS_FRAGMENT;
		else if (proto == 0 || proto == 43 || proto == 60)
			w.ctr = MLV_DECAP_CTR_PASS_UNSUPPORTED;
		else if (be16(ip + 4) == 0 || 40u + be16(ip + 4) > len - 14)
			w.ctr = MLV_DECAP_CTR_PASS_MALFORMED;
		else
			w.ctr = 0;
		w.outer_ecn = (ip[1] >> 4) & 3;
		l4 = 54;
	}
	if (w.ctr)
		return w;
	if (proto == IPPROTO_UDP) {
		w.ctr = decap_expect_gue(f, len, l4, &inner_proto, &hlen);
		if (hlen)
			sc = sc_block(f + l4 + 12, hlen, family);
		l4 += 12 + hlen;
	} else {
		inner_proto = proto;
		w.ctr = MLV_DECAP_CTR_DECAP_IPIP;
	}
	if (w.ctr != MLV_DECAP_CTR_DECAP_IPIP && w.ctr != MLV_DECAP_CTR_DECAP_GUE)
		return w;
	if (!decap_source(family, src))
		return (struct decap_want){ MLV_DECAP_CTR_PASS_UNKNOWN_SRC, -1 };
	w.inner = l4;
	w.inner_version = inner_proto == 4 ? 4 : 6;
	if (len < l4 + (w.inner_version == 4 ? 20u : 40u) ||
	    f[l4] >> 4 != w.inner_version)
		return malformed;
	if (w.outer_ecn == 3 && ((w.inner_version == 4 ? f[l4 + 1] :
				  f[l4 + 1] >> 4) & 3) == 0) {
		w.ctr = MLV_DECAP_CTR_DROP_ECN;
		return w;
	}
	if (sc == SC_MALFORMED)
		w.extra = MLV_DECAP_CTR_SC_MALFORMED;
	else if (sc == SC_VALID)
		w.extra = sc_expect(f, f + l4 - hlen, family, f + l4,
				    w.inner_version, f + len);
	w.carried = sc == SC_VALID;
	return w;
}

/* A decapsulated frame: the outer MACs, the inner family's ethertype,
 * the inner packet; under an outer CE mark the inner ECN field is CE
 * and an inner IPv4 header checksum still verifies if it did. */
static void check_decapsulated(const uint8_t *in, uint32_t len,
			       const struct outcome *o,
			       const struct decap_want *w)
{
	const uint8_t *inner = in + w->inner, *out = o->out + 14;
	uint32_t ilen = len - w->inner;
	unsigned ecn;

	CHECK(o->out_len == 14 + ilen, "decapsulated to %u bytes, want %u",
	      o->out_len, 14 + ilen);
	CHECK(!memcmp(o->out, in, 12), "MAC addresses changed");
	CHECK(be16(o->out + 12) == (w->inner_version == 4 ? 0x0800 : 0x86dd),
	      "ethertype %04x for inner IPv%u", be16(o->out + 12),
	      w->inner_version);
	if (w->outer_ecn != 3) {
		CHECK(!memcmp(out, inner, ilen), "inner packet changed");
		return;
	}
	/* the ECN field: TOS bits 0-1, traffic class bits 4-5 of byte 1 */
	ecn = w->inner_version == 4 ? 0x03 : 0x30;
	CHECK(out[0] == inner[0] && (out[1] & ~ecn) == (inner[1] & ~ecn) &&
	      (out[1] & ecn) == ecn, "outer CE not carried to the inner header");
	if (w->inner_version == 4) {
		uint32_t hl = (inner[0] & 15u) * 4;

		CHECK(!memcmp(out + 2, inner + 2, 8) &&
		      !memcmp(out + 12, inner + 12, ilen - 12),
		      "inner IPv4 packet changed beyond TOS and checksum");
		CHECK(hl < 20 || hl > ilen || frame_csum(inner, hl, 0) != 0 ||
		      frame_csum(out, hl, 0) == 0,
		      "inner IPv4 checksum broken by the CE mark");
	} else {
		CHECK(!memcmp(out + 2, inner + 2, ilen - 2),
		      "inner IPv6 packet changed beyond the traffic class");
	}
}

static void decap_check(const uint8_t *in, uint32_t len,
			const struct outcome *o)
{
	struct decap_want w = decap_expect(in, len);

	CHECK(o->ctr == (int)w.ctr, "counted %s, expected %s",
	      mlv_decap_counter_name((unsigned)o->ctr),
	      mlv_decap_counter_name(w.ctr));
	CHECK(o->extra == w.extra, "also counted %s, expected %s",
	      o->extra < 0 ? "nothing" :
	      mlv_decap_counter_name((unsigned)o->extra),
	      w.extra < 0 ? "nothing" :
	      mlv_decap_counter_name((unsigned)w.extra));
	CHECK(o->tally == w.carried, "sc_carried %s, expected %s",
	      o->tally ? "moved" : "did not move",
	      w.carried ? "to move" : "not to");
	switch (w.ctr) {
	case MLV_DECAP_CTR_DECAP_IPIP:
	case MLV_DECAP_CTR_DECAP_GUE:
		CHECK(o->action == XDP_PASS, "action %d after decapsulation",
		      o->action);
		check_decapsulated(in, len, o, &w);
		break;
	case MLV_DECAP_CTR_DROP_ECN:
		CHECK(o->action == XDP_DROP, "action %d, not XDP_DROP",
		      o->action);
		break;
	default:
		expect_untouched(in, len, o);
		break;
	}
}

static void decap_read(uint64_t *out)
{
	assert_int_equal(mlv_decap_counters(&maps, out), MLV_OK);
}

static struct prog decap_prog = {
	.name = "xdp_decap", .id = 3, .n_ctr = MLV_DECAP_CTR__COUNT,
	.n_outcomes = MLV_DECAP_CTR__OUTCOMES,
	.tally = MLV_DECAP_CTR_SC_CARRIED,
	.read = decap_read, .ctr_name = mlv_decap_counter_name,
	.check = decap_check,
};

/* An Ethernet frame of the outer family around ip (ethertype from its
 * version nibble), into buf. */
static uint32_t eth_frame(uint8_t *buf, const uint8_t *ip, uint32_t ip_len)
{
	static const uint8_t macs[12] = { 2, 0, 0, 0, 1, 0x11,
					  2, 0, 0, 0, 0x99, 1 };

	memcpy(buf, macs, 12);
	put16(buf + 12, ip[0] >> 4 == 4 ? 0x0800 : 0x86dd);
	memcpy(buf + 14, ip, ip_len);
	return 14 + ip_len;
}

/* A UDP datagram from a client inside, of the given family and TOS. */
static uint32_t client_packet(uint8_t *buf, uint8_t family, uint8_t tos)
{
	static const uint8_t payload[40] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	return ip_packet(buf, family, IPPROTO_UDP,
			 family == 4 ? "198.51.100.1" : "2001:db8:1::1",
			 family == 4 ? "192.0.2.10" : "2001:db8::10", 53, tos,
			 payload, sizeof(payload));
}

/* ip wrapped by a load balancer (outer family, IPIP or GUE on port). */
static uint32_t wrap(uint8_t *buf, uint8_t outer, int gue, uint16_t port,
		     uint8_t tos, const uint8_t *ip, uint32_t ip_len)
{
	uint8_t pl[FRAME_CAP];
	const char *src = outer == 4 ? LB_SRC4 : LB_SRC6;
	const char *dst = outer == 4 ? LOCAL4 : LOCAL6;
	uint8_t inner_proto = ip[0] >> 4 == 4 ? 4 : 41;

	if (!gue)
		return ip_packet(buf, outer, inner_proto, src, dst, 0, tos, ip,
				 ip_len);
	memset(pl, 0, 4);
	pl[1] = inner_proto;
	memcpy(pl + 4, ip, ip_len);
	return ip_packet(buf, outer, IPPROTO_UDP, src, dst, port, tos, pl,
			 ip_len + 4);
}

static void add_tunnel(uint8_t outer, int gue, uint8_t inner,
		       uint8_t outer_tos, uint8_t inner_tos)
{
	uint8_t a[FRAME_CAP], b[FRAME_CAP], f[FRAME_CAP];
	char name[48];
	uint32_t n = client_packet(a, inner, inner_tos);

	n = wrap(b, outer, gue, GUE_PORT, outer_tos, a, n);
	snprintf(name, sizeof(name), "%s %uin%u, ECN %u over %u",
		 gue ? "gue" : "ipip", inner, outer, outer_tos & 3,
		 inner_tos & 3);
	add_seed(name, f, eth_frame(f, b, n));
}

/* A TCP segment from a client inside, with flags. */
static uint32_t client_tcp(uint8_t *buf, uint8_t family, uint8_t flags)
{
	struct frame_spec s;
	uint32_t len;

	frame_spec_init(&s, family, IPPROTO_TCP);
	s.tcp_flags = flags;
	s.payload_len = 16;
	len = frame_build_ip(buf, FRAME_CAP, &s);
	assert_true(len > 0);
	return len;
}

/* An ICMP frag-needed (IPv4) / packet-too-big (IPv6) from a router to
 * the VIP, quoting the VIP's TCP segment to the client. */
static uint32_t too_big_about_tcp(uint8_t *buf, uint8_t family)
{
	struct frame_spec q, s;
	uint8_t quoted[128];
	uint32_t qlen, len;

	frame_spec_init(&q, family, IPPROTO_TCP);
	memcpy(s.src, q.src, 16);       /* swap: the VIP's segment */
	memcpy(q.src, q.dst, 16);
	memcpy(q.dst, s.src, 16);
	q.sport = 80;
	q.dport = 40000;
	qlen = frame_build_ip(quoted, sizeof(quoted), &q);
	assert_true(qlen > 0);
	frame_spec_init(&s, family, family == 4 ? IPPROTO_ICMP :
						  IPPROTO_ICMPV6);
	memcpy(s.dst, q.src, 16);
	frame_addr(s.src, family == 4 ? "203.0.113.1" : "2001:db8:ffff::1");
	s.icmp_type = family == 4 ? 3 : 2;
	s.icmp_code = family == 4 ? 4 : 0;
	s.icmp_rest = 1400;
	s.payload = quoted;
	s.payload_len = qlen;
	len = frame_build_ip(buf, FRAME_CAP, &s);
	assert_true(len > 0);
	return len;
}

/* A second-chance seed: GUE from the load balancer over outer with the
 * block (flags besides MLV_SC_F_IPV6, n hops, the slots' text; NULL:
 * zero), around ip (proto IPPROTO_ICMP: too_big_about_tcp's, for either
 * inner family). version 0: 1; ttl 0: 64. */
struct sc_seed {
	const char *name;
	uint8_t outer, inner, proto, tcp_flags;
	uint8_t flags, n;
	const char *hop[2];
	uint8_t version, ttl;
};

static void add_sc_tunnel(const struct sc_seed *d)
{
	uint8_t a[FRAME_CAP], pl[FRAME_CAP], b[FRAME_CAP], f[FRAME_CAP];
	uint32_t alen = d->outer == 4 ? 4 : 16, blen = 4 + 2 * alen, n, len;
	uint8_t addr[16];

	n = d->proto == IPPROTO_TCP ? client_tcp(a, d->inner, d->tcp_flags) :
	    d->proto == IPPROTO_ICMP ? too_big_about_tcp(a, d->inner) :
	    client_packet(a, d->inner, 0);
	memset(pl, 0, 4 + blen);
	pl[0] = (uint8_t)(blen / 4);
	pl[1] = d->inner == 4 ? 4 : 41;
	pl[4] = 0x4d;
	pl[5] = d->version ? d->version : 1;
	pl[6] = (uint8_t)(d->flags | (d->outer == 6 ? 2 : 0));
	pl[7] = d->n;
	for (unsigned i = 0; i < 2; i++)
		if (d->hop[i]) {
			frame_addr(addr, d->hop[i]);
			memcpy(pl + 8 + i * alen, addr, alen);
		}
	memcpy(pl + 4 + blen, a, n);
	n = ip_packet(b, d->outer, IPPROTO_UDP,
		      d->outer == 4 ? LB_SRC4 : LB_SRC6,
		      d->outer == 4 ? LOCAL4 : LOCAL6, GUE_PORT, 0, pl,
		      4 + blen + n);
	len = eth_frame(f, b, n);
	if (d->ttl) {
		f[14 + (d->outer == 4 ? 8 : 7)] = d->ttl;
		refresh_ipv4_csum(f, len);
	}
	add_seed(d->name, f, len);
}

/* Blocks of every verdict: sent on (here: no route), this host only,
 * no hop, TTL 1, redirected (to the last hop, to one with a later hop,
 * past the list), SYN, ICMP too-big, UDP, malformed. */
static const struct sc_seed sc_seed_list[] = {
	{ "sc4 tcp ack, one hop", 4, 4, IPPROTO_TCP, 0x10, 0, 1,
	  { "10.77.0.2" } },
	{ "sc6 tcp ack, this host then a hop", 6, 6, IPPROTO_TCP, 0x10, 0, 2,
	  { LOCAL6, "fd00:77::2" } },
	{ "sc4 6in4 tcp, this host twice", 4, 6, IPPROTO_TCP, 0x11, 0, 2,
	  { LOCAL4, LOCAL4 } },
	{ "sc6 4in6 tcp, no hop", 6, 4, IPPROTO_TCP, 0x04, 0, 0 },
	{ "sc4 tcp, redirected", 4, 4, IPPROTO_TCP, 0x10, 1, 1,
	  { "10.77.0.2" } },
	{ "sc6 tcp, redirected to the first of two", 6, 6, IPPROTO_TCP, 0x10,
	  1, 2, { "fd00:77::2", "fd00:78::2" } },
	{ "sc4 tcp, redirected to the second of two", 4, 4, IPPROTO_TCP,
	  0x10, 1 | 1 << 2, 2, { "10.77.0.2", "10.78.0.2" } },
	{ "sc4 tcp, hop index past the list", 4, 4, IPPROTO_TCP, 0x10,
	  1 | 1 << 2, 1, { "10.77.0.2" } },
	{ "sc4 icmp too-big", 4, 4, IPPROTO_ICMP, 0, 0, 1, { "10.77.0.2" } },
	{ "sc6 icmpv6 too-big", 6, 6, IPPROTO_ICMP, 0, 0, 2,
	  { "fd00:77::2", "fd00:78::2" } },
	{ "sc6 tcp syn", 6, 6, IPPROTO_TCP, 0x02, 0, 1, { "fd00:77::2" } },
	{ "sc4 udp", 4, 4, IPPROTO_UDP, 0, 0, 1, { "10.77.0.2" } },
	{ "sc4 tcp ack, ttl 1", 4, 4, IPPROTO_TCP, 0x10, 0, 1,
	  { "10.77.0.2" }, 0, 1 },
	{ "sc4 version 2", 4, 4, IPPROTO_TCP, 0x10, 0, 1, { "10.77.0.2" },
	  2 },
	{ "sc6 unused slot set", 6, 4, IPPROTO_TCP, 0x10, 0, 1,
	  { "fd00:77::2", "fd00:77::3" } },
};

/* A spec for IPIP from the default load balancer to this host over
 * the outer family, carrying the IPv4 packet ip. */
static void ipip_spec(struct frame_spec *s, uint8_t outer, const uint8_t *ip,
		      uint32_t ip_len)
{
	frame_spec_init(s, outer, 4);
	frame_addr(s->src, outer == 4 ? LB_SRC4 : LB_SRC6);
	frame_addr(s->dst, outer == 4 ? LOCAL4 : LOCAL6);
	s->payload = ip;
	s->payload_len = ip_len;
}

static void decap_seeds(void)
{
	uint8_t a[FRAME_CAP], b[FRAME_CAP], f[FRAME_CAP];
	struct frame_spec s;
	uint32_t n;

	n_seeds = 0;
	/* a load balancer's tunnels: IPIP and GUE, every family pair, and
	 * for each outer family the ECN cases of RFC 6040 4.2: CE over ECT
	 * (carried inside) and CE over not-ECT (dropped) */
	for (uint8_t outer = 4; outer <= 6; outer += 2)
		for (int gue = 0; gue <= 1; gue++)
			for (uint8_t inner = 4; inner <= 6; inner += 2)
				add_tunnel(outer, gue, inner, 0, 0);
	for (uint8_t outer = 4; outer <= 6; outer += 2) {
		add_tunnel(outer, outer == 6, 10 - outer, 3, 2);
		add_tunnel(outer, outer == 4, outer, 3, 0);
	}

	/* nested: a tunnel inside a tunnel is undone once */
	n = client_packet(a, 4, 0);
	n = wrap(b, 6, 0, 0, 0, a, n);
	n = wrap(a, 4, 1, GUE_PORT2, 0, b, n);
	add_seed("nested: 4in6 IPIP in GUE over IPv4", f, eth_frame(f, a, n));
	n = client_packet(a, 6, 0);
	n = wrap(b, 4, 1, GUE_PORT, 0, a, n);
	n = wrap(a, 6, 0, 0, 0, b, n);
	add_seed("nested: 6in4 GUE in IPIP over IPv6", f, eth_frame(f, a, n));

	/* from an unlisted source, and from a listed prefix */
	n = client_packet(a, 4, 0);
	n = ip_packet(b, 4, 4, "10.98.7.200", LOCAL4, 0, 0, a, n);
	add_seed("ipip 4in4 from a listed prefix", f, eth_frame(f, b, n));
	n = client_packet(a, 6, 0);
	n = ip_packet(b, 6, 41, "fd00:99::2", LOCAL6, 0, 0, a, n);
	add_seed("ipip 6in6 from an unknown source", f, eth_frame(f, b, n));

	/* outer headers the decapsulator leaves alone */
	n = client_packet(a, 4, 0);
	ipip_spec(&s, 4, a, n);
	s.ip_opt_len = 4;
	add_spec("ipip 4in4, outer IPv4 options", &s);
	s.ip_opt_len = 0;
	s.df = false;
	s.mf = true;
	add_spec("ipip 4in4, outer first fragment", &s);
	s.vlan = true;
	s.mf = false;
	add_spec("ipip 4in4, VLAN tag", &s);
	ipip_spec(&s, 6, a, n);
	s.n_ext = 1;
	s.ext[0] = 60;
	add_spec("ipip 4in6 behind destination options", &s);
	s.n_ext = 0;
	s.v6_frag = true;
	add_spec("ipip 4in6 behind an atomic fragment header", &s);

	/* GUE on another port, GUE with extension fields */
	n = client_packet(a, 4, 0);
	n = wrap(b, 4, 1, 6082, 0, a, n);
	add_seed("gue on another port", f, eth_frame(f, b, n));
	n = client_packet(a, 6, 0);
	n = wrap(b, 6, 1, GUE_PORT, 0, a, n);
	b[40 + 8] = 0x01;                        /* Hlen 1 */
	add_seed("gue with Hlen 1", f, eth_frame(f, b, n));

	/* GUE private data: second chance's, and someone else's */
	for (size_t i = 0; i < sizeof(sc_seed_list) / sizeof(sc_seed_list[0]);
	     i++)
		add_sc_tunnel(&sc_seed_list[i]);
	n = client_tcp(a, 4, 0x10);
	memset(b, 0, 12);
	b[0] = 0x03;                             /* Hlen 3, kind 'X' */
	b[1] = 4;
	b[4] = 'X';
	memcpy(b + 16, a, n);
	n = ip_packet(a, 4, IPPROTO_UDP, LB_SRC4, LOCAL4, GUE_PORT, 0, b,
		      16 + n);
	add_seed("gue4 with someone else's private data", f,
		 eth_frame(f, a, n));

	/* ordinary traffic to this host */
	frame_spec_init(&s, 4, IPPROTO_TCP);
	frame_addr(s.dst, LOCAL4);
	s.dport = 22;
	add_spec("tcp4 to this host", &s);
	frame_spec_init(&s, 6, IPPROTO_UDP);
	frame_addr(s.dst, LOCAL6);
	s.dport = GUE_PORT;
	s.payload_len = 12;
	add_spec("udp6 to the GUE port, not GUE", &s);
	frame_spec_init(&s, 6, IPPROTO_ICMPV6);
	frame_addr(s.dst, LOCAL6);
	s.icmp_type = 128;
	add_spec("icmp6 echo to this host", &s);
}

static int decap_attach(void **state)
{
	static const uint16_t ports[2] = { GUE_PORT, GUE_PORT2 };
	static struct mlv_ip addrs[2];
	const struct mlv_decap_config cfg = {
		.addrs = addrs, .n_addrs = 2,
		.gue_ports = ports, .n_gue_ports = 2,
		.sources = decap_sources, .n_sources = 4,
	};
	char why[256] = "";
	int updated = -1;

	assert_true(mlv_ip_parse(LOCAL4, &addrs[0]));
	assert_true(mlv_ip_parse(LOCAL6, &addrs[1]));
	for (unsigned i = 0; i < 4; i++)
		assert_null(mlv_ip_prefix_parse(decap_source_text[i],
						&decap_sources[i]));
	lo_index = (int)if_nametoindex("lo");
	assert_int_equal(mlv_decap_attach(lo_index, MLV_DECAP_MODE_AUTO, &cfg,
					  &updated, why, sizeof(why)), MLV_OK);
	assert_int_equal(mlv_decap_open(lo_index, &maps, why, sizeof(why)),
			 MLV_OK);
	decap_prog.fd = bpf_prog_get_fd_by_id(maps.prog_id);
	assert_true(decap_prog.fd >= 0);
	(void)state;
	return 0;
}

static int decap_detach(void **state)
{
	int removed = 0;

	(void)state;
	close(decap_prog.fd);
	mlv_decap_maps_close(&maps);
	assert_int_equal(mlv_decap_detach(lo_index, &removed, NULL, 0), MLV_OK);
	assert_int_equal(removed, 1);
	return 0;
}

static void decap_mutated_frames(void **state)
{
	(void)state;
	decap_seeds();
	run_campaign(&decap_prog,
		     env_u64("MLV_BPF_MUTATE_ITERS", DEFAULT_ITERS));
}

static int group_setup(void **state)
{
	(void)state;
	base_seed = env_u64("MLV_BPF_MUTATE_SEED", DEFAULT_SEED);
	fprintf(stderr, "MLV_BPF_MUTATE_SEED=0x%" PRIx64 "\n", base_seed);
	bpf_test_private_netns();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(steer_mutated_frames,
						steer_attach, steer_detach),
		cmocka_unit_test_setup_teardown(decap_mutated_frames,
						decap_attach, decap_detach),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
