/* SPDX-License-Identifier: BSD-3-Clause */
/* acl: source ACLs (docs/forwarding.md, "Source ACLs").
 *  - acl4 and acl6: about 10,000 allow and deny prefixes each, nested and
 *    overlapping (a prefix is often drawn inside an earlier one, longer),
 *    plus hand-made carve-outs: deny a /16 (/40), allow a /24 (/56)
 *    inside it, deny a /28 (/60) inside that. With an allow list, a
 *    source no prefix matches is denied.
 *  - block4: a deny-only list (a blocklist): no match is allowed.
 *  - open4: no ACL, on the same instance: every source passes.
 *  - edge4, edge6, hole4: small ACLs (a few intervals under a 16-bucket
 *    index): allowed ranges inside a deny and denied ones inside an
 *    allow, aligned and not, at the start and the end of the enclosing
 *    prefix, host prefixes, a /0; a flow from the first and the last
 *    address of every rule, the addresses just inside those and the ones
 *    just outside.
 *  - nest4, nest6: an allowed prefix inside a denied one and nothing else
 *    (deny 10/8, allow 10.1.2.0/24; deny 2001:db8::/32, allow
 *    2001:db8:1::/48); nest4r, nest6r: the reverse nesting, with a /17,
 *    /61 and /65 (one bit into the IPv6 low half) inside, a host prefix
 *    at a range's last address and a ::/0; their edges as edge4's.
 * Flows of two packets from sources inside random prefixes, at the
 * carve-outs' edges and anywhere; per ACL VIP, one fragmented datagram
 * from an allowed and one from a denied source, an ICMP error about an
 * allowed and about a denied client's flow (forwarded with the flow /
 * dropped), a too-big DF packet of each (answered / dropped, not
 * answered) and an echo from the denied one. Each frame's outcome comes
 * from a naive linear longest-prefix match over the VIP's rules here
 * (forward with the flow's key, or an acl_denied drop), independently
 * of the daemon's interval search. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/packet/scenario.h"

#define ACL_PREFIXES 10000
#define BLOCK_PREFIXES 200
#define FLOWS_PER_VIP 240
#define PKTS_PER_FLOW 2

static struct sc_acl_rule rules4[ACL_PREFIXES];
static struct sc_acl_rule rules6[ACL_PREFIXES];
static struct sc_acl_rule block4[BLOCK_PREFIXES];

static void die(const char *what)
{
	fprintf(stderr, "scenario acl: %s\n", what);
	exit(2);
}

static void clear_host_bits(uint8_t *a, unsigned len, unsigned width)
{
	for (unsigned b = len; b < width; b++)
		a[b / 8] &= (uint8_t)~(0x80u >> (b % 8));
}

/* Random bits from bit `from` on (bits before it kept). */
static void randomize_from(struct scenario *sc, uint8_t *a, unsigned from,
			   unsigned width)
{
	for (unsigned b = from; b < width; b++) {
		uint8_t m = (uint8_t)(0x80u >> (b % 8));

		if (sc_rand(sc, 2))
			a[b / 8] |= m;
		else
			a[b / 8] &= (uint8_t)~m;
	}
}

static bool matches(const uint8_t *a, const struct sc_acl_rule *r)
{
	for (unsigned b = 0; b < r->len; b++) {
		uint8_t m = (uint8_t)(0x80u >> (b % 8));

		if ((a[b / 8] & m) != (r->addr[b / 8] & m))
			return false;
	}
	return true;
}

/* The spec: the longest matching prefix decides; none: denied iff the
 * VIP has an allow list. */
static bool naive_allows(const struct sc_vip *v, const uint8_t *src)
{
	int best = -1;
	bool has_allow = false;

	for (uint32_t i = 0; i < v->n_acl; i++) {
		has_allow |= v->acl[i].allow;
		if (matches(src, &v->acl[i]) &&
		    (best < 0 || v->acl[i].len > v->acl[best].len))
			best = (int)i;
	}
	return best >= 0 ? v->acl[best].allow : !has_allow;
}

/* the rules cmp_rule_idx sorts indices of (single-threaded test code) */
static const struct sc_acl_rule *sorting;

static int cmp_rule_idx(const void *x, const void *y)
{
	const struct sc_acl_rule *r = sorting;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	int c = memcmp(r[a].addr, r[b].addr, 16);

	if (c)
		return c;
	if (r[a].len != r[b].len)
		return r[a].len < r[b].len ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Every prefix distinct (a repeat would only be a warning, but the
 * scenario promises 10,000 prefixes): a repeat drawn by chance becomes a
 * host prefix of its own in a range nothing else draws from (10/8,
 * 2001:db8:d000::/36). */
static void replace_repeats(struct sc_acl_rule *r, uint32_t n, uint8_t family)
{
	uint32_t *idx = malloc(n * sizeof(*idx)), fresh = 0;

	if (!idx)
		die("out of memory");
	for (uint32_t i = 0; i < n; i++)
		idx[i] = i;
	sorting = r;
	qsort(idx, n, sizeof(*idx), cmp_rule_idx);
	for (uint32_t i = 1, kept = idx[0]; i < n; i++) {
		struct sc_acl_rule *x = &r[idx[i]];

		if (x->len != r[kept].len ||
		    memcmp(x->addr, r[kept].addr, 16) != 0) {
			kept = idx[i];
			continue;
		}
		fresh++;
		sc_addr(family == 4 ? "10.0.0.0" : "2001:db8:d000::", x->addr);
		x->addr[family == 4 ? 2 : 14] = (uint8_t)(fresh >> 8);
		x->addr[family == 4 ? 3 : 15] = (uint8_t)fresh;
		x->len = family == 4 ? 32 : 128;
	}
	free(idx);
}

/* n rules under base/base_len: a third nested in an earlier rule (longer,
 * same leading bits), the rest fresh, of length min_len..width; the
 * first `fixed` slots are given. */
static void make_rules(struct scenario *sc, struct sc_acl_rule *r, uint32_t n,
		       uint32_t fixed, uint8_t family, const char *base,
		       unsigned base_len, unsigned min_len)
{
	unsigned width = family == 4 ? 32 : 128;
	uint8_t b[16];

	sc_addr(base, b);
	for (uint32_t i = fixed; i < n; i++) {
		struct sc_acl_rule *x = &r[i];

		const struct sc_acl_rule *p =
			i > fixed ? &r[fixed + sc_rand(sc, i - fixed)] : NULL;

		if (p && p->len < width && sc_rand(sc, 3) == 0) {
			memcpy(x->addr, p->addr, 16);
			x->len = (uint8_t)(p->len + 1 + sc_rand(sc, width - p->len));
			randomize_from(sc, x->addr, p->len, width);
		} else {
			memcpy(x->addr, b, 16);
			x->len = (uint8_t)(min_len + sc_rand(sc, width - min_len + 1));
			randomize_from(sc, x->addr, base_len, width);
		}
		clear_host_bits(x->addr, x->len, width);
		x->allow = sc_rand(sc, 2) != 0;
	}
	replace_repeats(r, n, family);
}

static void set_rule(struct sc_acl_rule *r, const char *addr, uint8_t len,
		     bool allow)
{
	memset(r, 0, sizeof(*r));
	sc_addr(addr, r->addr);
	r->len = len;
	r->allow = allow;
}

struct tally {
	uint32_t allowed, denied;
};

/* One flow of PKTS_PER_FLOW packets from src to vip v, each expected by
 * the naive match. */
static void emit_flow(struct scenario *sc, uint16_t v, const uint8_t *src,
		      uint16_t sport, const char *why, struct tally *t)
{
	const struct sc_vip *vip = &sc->vips[v];
	struct sc_flow fl = sc_flow_to_vip(vip, 0, sport);
	bool allow = vip->n_acl == 0 || naive_allows(vip, src);
	uint32_t group = allow ? sc_new_group(sc) : 0;
	struct mlv_flow_key key;

	memcpy(fl.src, src, 16);
	key = sc_key(&fl, true);
	for (uint32_t p = 0; p < PKTS_PER_FLOW; p++) {
		struct sc_opts o = {0};
		struct sc_frame *fr;
		char what[96];

		o.tcp_flags = p == 0 ? PKT_TCP_SYN : PKT_TCP_ACK;
		o.payload_len = 16 + sc_rand(sc, 200);
		o.vlan = (sport + p) % 4 == 0;
		o.df = true;
		fr = sc_emit(sc, &fl, &o);
		snprintf(what, sizeof(what), "%.32s %.32s sport %u pkt %u", vip->name,
			 why, sport, p);
		if (allow)
			sc_expect_forward(fr, v, &key, group, what);
		else
			sc_expect_drop(fr, MLV_DROP_ACL_DENIED, what);
	}
	if (allow)
		t->allowed++;
	else
		t->denied++;
}

/* A datagram in three fragments from src: all forwarded (3-tuple key)
 * or all denied. */
static void emit_fragmented(struct scenario *sc, uint16_t v, const uint8_t *src,
			    uint16_t sport, struct tally *t)
{
	static const uint32_t order[3] = {2, 0, 1};
	const struct sc_vip *vip = &sc->vips[v];
	struct sc_flow fl = sc_flow_to_vip(vip, 0, sport);
	bool allow = naive_allows(vip, src);
	struct sc_opts o = {0};
	uint32_t first = sc->n_frames;
	char what[64];

	memcpy(fl.src, src, 16);
	o.payload_len = 1000;      /* + 20 bytes of TCP: 3 fragments of 400 */
	o.tcp_flags = PKT_TCP_ACK;
	snprintf(what, sizeof(what), "%s fragment (%s)", vip->name,
		 allow ? "allowed" : "denied");
	sc_emit_fragments(sc, &fl, &o, 400, order, 3, v,
			  allow ? sc_new_group(sc) : 0, what);
	for (uint32_t i = first; !allow && i < sc->n_frames; i++)
		sc_expect_drop(&sc->frames[i], MLV_DROP_ACL_DENIED, what);
	if (allow)
		t->allowed++;
	else
		t->denied++;
}

/* An ICMP echo request from src to the VIP's address. */
static struct sc_frame *emit_echo(struct scenario *sc, const struct sc_vip *vip,
				  const uint8_t *src)
{
	static uint8_t icmp[128], ip[256], frame[300];
	struct pkt_l3 l3 = {.family = vip->family, .ttl = 64};
	struct pkt_l4 echo = {
		.proto = vip->family == 4 ? 1 : 58,
		.icmp_type = vip->family == 4 ? 8 : 128,
		.icmp_rest = 0x12340001,
	};
	struct pkt_l2 l2 = {0};
	uint8_t payload[56];
	uint32_t len;
	uint16_t l3_off;

	memcpy(l3.src, src, 16);
	memcpy(l3.dst, vip->addr, 16);
	pkt_fill_payload(payload, sizeof(payload), sc->next_id++);
	len = pkt_build_l4(icmp, &l3, &echo, payload, sizeof(payload));
	len = pkt_build_ip(ip, &l3, echo.proto, icmp, len, NULL);
	memcpy(l2.dst, sc->port.mac, 6);
	sc_mac("02:00:00:c1:00:01", l2.src);
	len = pkt_build_eth(frame, &l2, vip->family == 4 ? PKT_ETH_IPV4 : PKT_ETH_IPV6,
			    ip, len, &l3_off);
	return sc_emit_raw(sc, frame, len);
}

/* ICMP and too-big frames of an allowed and of a denied client of ACL
 * VIP v: the ACL judges an ICMP error by the quoted flow's client (the
 * router that sends it is allowed here either way), an echo by its
 * source, and comes before the too-big answer. */
static void emit_icmp_cases(struct scenario *sc, uint16_t v,
			    const char *allowed, const char *denied)
{
	const struct sc_vip *vip = &sc->vips[v];
	uint16_t room = sc_mtu_room(sc, vip);
	uint32_t fit = room - (vip->family == 4 ? 20u : 40u) - 20u;
	uint8_t src[16];
	char what[96];   /* a VIP name and a phrase; sc_expect_* keep 63 */

	for (int d = 0; d < 2; d++) {
		struct sc_flow fl = sc_flow_to_vip(vip, 0, (uint16_t)(31000 + d));
		struct sc_opts o = {
			.payload_len = 200, .df = true, .tcp_flags = PKT_TCP_ACK,
		};
		struct mlv_flow_key key;
		uint32_t group;

		sc_addr(d ? denied : allowed, fl.src);
		if (naive_allows(vip, fl.src) != (d == 0))
			die("an ICMP case's client has the wrong verdict");
		key = sc_key(&fl, true);
		group = d ? 0 : sc_new_group(sc);
		snprintf(what, sizeof(what), "%s %s client data", vip->name,
			 d ? "denied" : "allowed");
		if (d)
			sc_expect_drop(sc_emit(sc, &fl, &o), MLV_DROP_ACL_DENIED, what);
		else
			sc_expect_forward(sc_emit(sc, &fl, &o), v, &key, group, what);
		snprintf(what, sizeof(what), "%s ICMP error about a%s client",
			 vip->name, d ? " denied" : "n allowed");
		if (d)
			sc_expect_drop(sc_emit_icmp_error(sc, vip, &fl, 1280, false),
				       MLV_DROP_ACL_DENIED, what);
		else
			sc_expect_forward(sc_emit_icmp_error(sc, vip, &fl, 1280, false), v, &key,
					  group, what);
		o.payload_len = fit + 1;
		snprintf(what, sizeof(what), "%s %s client, DF, too big",
			 vip->name, d ? "denied" : "allowed");
		if (d)
			sc_expect_drop(sc_emit(sc, &fl, &o), MLV_DROP_ACL_DENIED, what);
		else
			sc_expect_icmp(sc_emit(sc, &fl, &o), v, room, what);
	}
	sc_addr(denied, src);
	snprintf(what, sizeof(what), "%s echo from a denied client", vip->name);
	sc_expect_drop(emit_echo(sc, vip, src), MLV_DROP_ACL_DENIED, what);
}

/* Sources for flow k of an ACL VIP: inside a random rule, at the
 * carve-outs (edges), or anywhere in the rules' space or outside it. */
static void pick_source(struct scenario *sc, const struct sc_vip *vip,
			uint32_t k, const char *const *edges, uint32_t n_edges,
			const char *space, unsigned space_len, uint8_t *src,
			const char **why)
{
	unsigned width = vip->family == 4 ? 32 : 128;

	memset(src, 0, 16);
	switch (k % 5) {
	case 0:
	case 1: {
		const struct sc_acl_rule *r = &vip->acl[sc_rand(sc, vip->n_acl)];

		memcpy(src, r->addr, 16);
		randomize_from(sc, src, r->len, width);
		*why = "inside a prefix";
		break;
	}
	case 2:
		sc_addr(edges[(k / 5) % n_edges], src);
		*why = "carve-out";
		break;
	case 3:
		sc_addr(space, src);
		randomize_from(sc, src, space_len, width);
		*why = "in the rules' space";
		break;
	default:
		sc_client_addr(vip->family, k, src);
		*why = "outside every prefix";
		break;
	}
}

/* Small ACLs, where the direct index has 16 buckets over a few
 * intervals and skips most of the address: an allowed range inside a
 * deny and a denied one inside an allow, aligned and not (/23, /17;
 * /61, /65), ending where the enclosing prefix ends, host prefixes at the
 * first and last address of an enclosing one, and a /0 of each family. */
static struct sc_acl_rule edge4[7], edge6[7], hole4[5];
static struct sc_acl_rule nest4[2], nest6[2], nest4r[4], nest6r[6];

static void small_rules(void)
{
	/* deny 10/8; allow inside it at its start, its end, a /23 and a /32 */
	set_rule(&edge4[0], "10.0.0.0", 8, false);
	set_rule(&edge4[1], "10.1.2.0", 24, true);
	set_rule(&edge4[2], "10.0.0.0", 23, true);
	set_rule(&edge4[3], "10.255.255.0", 24, true);
	set_rule(&edge4[4], "10.1.2.128", 25, false);
	set_rule(&edge4[5], "10.7.7.7", 32, true);
	set_rule(&edge4[6], "10.255.255.255", 32, false);
	set_rule(&edge6[0], "2001:db8:e000::", 36, false);
	set_rule(&edge6[1], "2001:db8:e001:200::", 56, true);
	set_rule(&edge6[2], "2001:db8:e000::", 61, true);
	set_rule(&edge6[3], "2001:db8:efff:ffff::", 64, true);
	set_rule(&edge6[4], "2001:db8:e001:280::", 57, false);
	set_rule(&edge6[5], "2001:db8:e007::7", 128, true);
	set_rule(&edge6[6], "2001:db8:efff:ffff:ffff:ffff:ffff:ffff", 128, false);
	/* a blocklist with holes: deny inside the whole space (/0 allow) */
	set_rule(&hole4[0], "0.0.0.0", 0, true);
	set_rule(&hole4[1], "10.1.2.0", 23, false);
	set_rule(&hole4[2], "10.1.2.0", 32, true);
	set_rule(&hole4[3], "10.1.3.255", 32, true);
	set_rule(&hole4[4], "255.255.255.0", 24, false);
	/* an allow inside a deny, alone, and the reverse */
	set_rule(&nest4[0], "10.0.0.0", 8, false);
	set_rule(&nest4[1], "10.1.2.0", 24, true);
	set_rule(&nest6[0], "2001:db8::", 32, false);
	set_rule(&nest6[1], "2001:db8:1::", 48, true);
	set_rule(&nest4r[0], "10.0.0.0", 8, true);
	set_rule(&nest4r[1], "10.1.2.0", 24, false);
	set_rule(&nest4r[2], "10.64.0.0", 17, false);
	set_rule(&nest4r[3], "10.64.127.255", 32, true);
	set_rule(&nest6r[0], "::", 0, false);
	set_rule(&nest6r[1], "2001:db8::", 32, true);
	set_rule(&nest6r[2], "2001:db8:1::", 48, false);
	set_rule(&nest6r[3], "2001:db8:1:8::", 61, true);
	set_rule(&nest6r[4], "2001:db8:2:0:8000::", 65, false);
	set_rule(&nest6r[5], "2001:db8:2:0:ffff:ffff:ffff:ffff", 128, true);
}

#define RULES(a) (a), (uint32_t)(sizeof(a) / sizeof((a)[0]))

/* The small ACLs' VIPs, from VIP SMALL_FIRST on, each with one backend. */
static const struct small_vip {
	const char *name, *addr, *backend, *backend_addr;
	const struct sc_acl_rule *acl;
	uint32_t n_acl;
} small_vips[] = {
	{ "edge4", "192.0.2.40", "e4-1", "10.99.1.41", RULES(edge4) },
	{ "edge6", "2001:db8::40", "e6-1", "fd00:99:1::41", RULES(edge6) },
	{ "hole4", "192.0.2.50", "h4-1", "10.99.1.51", RULES(hole4) },
	{ "nest4", "192.0.2.60", "n4-1", "10.99.1.61", RULES(nest4) },
	{ "nest6", "2001:db8::60", "n6-1", "fd00:99:1::61", RULES(nest6) },
	{ "nest4r", "192.0.2.70", "r4-1", "10.99.1.71", RULES(nest4r) },
	{ "nest6r", "2001:db8::70", "r6-1", "fd00:99:1::71", RULES(nest6r) },
};

#define SMALL_FIRST 4
#define N_SMALL (uint32_t)(sizeof(small_vips) / sizeof(small_vips[0]))

/* address a + d (d = -1 or +1), wrapping within the family's width */
static void addr_step(uint8_t *a, unsigned bytes, int d)
{
	for (int i = (int)bytes - 1; i >= 0; i--) {
		int x = a[i] + d;

		a[i] = (uint8_t)x;
		if (x >= 0 && x <= 255)
			break;
	}
}

/* Flows from the first and last address of every rule of VIP v, the
 * addresses just inside them and the ones just outside. */
static void emit_rule_edges(struct scenario *sc, uint16_t v, uint16_t sport,
			    struct tally *t)
{
	const struct sc_vip *vip = &sc->vips[v];
	unsigned width = vip->family == 4 ? 32 : 128;

	for (uint32_t i = 0; i < vip->n_acl; i++) {
		const struct sc_acl_rule *r = &vip->acl[i];
		uint8_t first[16], last[16], a[16];

		memcpy(first, r->addr, 16);
		memcpy(last, r->addr, 16);
		for (unsigned b = r->len; b < width; b++)
			last[b / 8] |= (uint8_t)(0x80u >> (b % 8));
		static const char *const what[6] = {
			"a rule's first", "before a rule", "after a rule's first",
			"a rule's last", "after a rule", "before a rule's last",
		};

		for (int e = 0; e < 6; e++) {
			memcpy(a, e < 3 ? first : last, 16);
			if (e % 3 != 0)   /* 1, 5: one down; 2, 4: one up */
				addr_step(a, width / 8, e == 1 || e == 5 ? -1 : 1);
			emit_flow(sc, v, a, sport++, what[e], t);
		}
	}
}

void sc_def_acl(struct scenario *sc)
{
	static const char *const edges4[] = {
		"172.20.0.1", "172.20.4.255", "172.20.5.0", "172.20.5.15",
		"172.20.5.16", "172.20.5.31", "172.20.5.32", "172.20.5.255",
		"172.20.6.0", "172.20.255.255", "172.21.0.0", "172.19.255.255",
	};
	static const char *const edges6[] = {
		"2001:db8:ca00::1", "2001:db8:ca00:4ff:ffff:ffff:ffff:ffff",
		"2001:db8:ca00:500::", "2001:db8:ca00:50f:ffff:ffff:ffff:ffff",
		"2001:db8:ca00:510::", "2001:db8:ca00:51f:ffff:ffff:ffff:ffff",
		"2001:db8:ca00:520::", "2001:db8:ca00:5ff:ffff:ffff:ffff:ffff",
		"2001:db8:ca00:600::", "2001:db8:caff:ffff::1",
		"2001:db8:cb00::", "2001:db8:c9ff:ffff:ffff:ffff:ffff:ffff",
	};
	struct tally t[4] = {{0}}, te[N_SMALL] = {{0}};
	struct sc_vip *v;
	uint8_t src[16];
	const char *why;

	sc->summary = "source ACLs: 10,000 nested allow/deny prefixes per "
		      "family, carve-outs, a blocklist, a VIP without ACL";

	/* carve-outs first, then random prefixes that avoid 172.16/12 and
	 * 2001:db8:c000::/34 (they are drawn under 100.64/10, 2001:db8::/34) */
	set_rule(&rules4[0], "172.20.0.0", 16, false);
	set_rule(&rules4[1], "172.20.5.0", 24, true);
	set_rule(&rules4[2], "172.20.5.16", 28, false);
	make_rules(sc, rules4, ACL_PREFIXES, 3, 4, "100.64.0.0", 10, 12);
	set_rule(&rules6[0], "2001:db8:ca00::", 40, false);
	set_rule(&rules6[1], "2001:db8:ca00:500::", 56, true);
	set_rule(&rules6[2], "2001:db8:ca00:510::", 60, false);
	make_rules(sc, rules6, ACL_PREFIXES, 3, 6, "2001:db8::", 34, 36);
	make_rules(sc, block4, BLOCK_PREFIXES, 0, 4, "100.64.0.0", 10, 14);
	for (uint32_t i = 0; i < BLOCK_PREFIXES; i++)
		block4[i].allow = false;

	v = sc_add_vip(sc, "acl4", "192.0.2.10", 80, 6, SC_FWD_IPIP);
	v->n_acl = ACL_PREFIXES;
	v->acl = rules4;
	sc_add_backend(v, "a4-1", "10.99.1.11", 100);
	sc_add_backend(v, "a4-2", "10.99.1.12", 100);
	v = sc_add_vip(sc, "acl6", "2001:db8::10", 80, 6, SC_FWD_IPIP);
	v->n_acl = ACL_PREFIXES;
	v->acl = rules6;
	sc_add_backend(v, "a6-1", "fd00:99:1::11", 100);
	sc_add_backend(v, "a6-2", "fd00:99:1::12", 100);
	v = sc_add_vip(sc, "block4", "192.0.2.20", 443, 6, SC_FWD_IPIP);
	v->n_acl = BLOCK_PREFIXES;
	v->acl = block4;
	sc_add_backend(v, "b4-1", "10.99.1.21", 100);
	sc_add_backend(v, "b4-2", "10.99.1.22", 100);
	v = sc_add_vip(sc, "open4", "192.0.2.30", 80, 6, SC_FWD_IPIP);
	sc_add_backend(v, "o4-1", "10.99.1.31", 100);
	sc_add_backend(v, "o4-2", "10.99.1.32", 100);
	small_rules();
	for (uint32_t i = 0; i < N_SMALL; i++) {
		const struct small_vip *sv = &small_vips[i];

		v = sc_add_vip(sc, sv->name, sv->addr, 80, 6, SC_FWD_IPIP);
		v->n_acl = sv->n_acl;
		v->acl = sv->acl;
		sc_add_backend(v, sv->backend, sv->backend_addr, 100);
	}

	for (uint32_t k = 0; k < FLOWS_PER_VIP; k++) {
		uint16_t sport = (uint16_t)(20000 + k);

		pick_source(sc, &sc->vips[0], k, edges4, 12, "100.64.0.0", 10,
			    src, &why);
		emit_flow(sc, 0, src, sport, why, &t[0]);
		/* the same source to the VIP without ACL: always passes */
		emit_flow(sc, 3, src, sport, why, &t[3]);
		pick_source(sc, &sc->vips[1], k, edges6, 12, "2001:db8::", 34,
			    src, &why);
		emit_flow(sc, 1, src, sport, why, &t[1]);
		pick_source(sc, &sc->vips[2], k, edges4, 12, "100.64.0.0", 10,
			    src, &why);
		emit_flow(sc, 2, src, sport, why, &t[2]);
	}
	/* a fragmented datagram from an allowed and from a denied source */
	sc_addr("172.20.5.40", src);
	emit_fragmented(sc, 0, src, 30000, &t[0]);
	sc_addr("172.20.5.20", src);
	emit_fragmented(sc, 0, src, 30001, &t[0]);
	sc_addr("2001:db8:ca00:520::7", src);
	emit_fragmented(sc, 1, src, 30000, &t[1]);
	sc_addr("2001:db8:ca00:515::7", src);
	emit_fragmented(sc, 1, src, 30001, &t[1]);

	for (uint16_t e = 0; e < N_SMALL; e++)
		emit_rule_edges(sc, SMALL_FIRST + e, 32000, &te[e]);

	emit_icmp_cases(sc, 0, "172.20.5.40", "172.20.5.20");
	emit_icmp_cases(sc, 1, "2001:db8:ca00:520::7", "2001:db8:ca00:515::7");

	/* the scenario must exercise both verdicts on every ACL VIP */
	for (int i = 0; i < 3; i++)
		if (t[i].allowed < FLOWS_PER_VIP / 10 ||
		    t[i].denied < FLOWS_PER_VIP / 10) {
			fprintf(stderr, "scenario acl: VIP %d: %u allowed, %u "
				"denied\n", i, t[i].allowed, t[i].denied);
			die("too one-sided");
		}
	if (t[3].denied != 0)
		die("a VIP without ACL denied a flow");
	for (uint32_t i = 0; i < N_SMALL; i++)
		if (te[i].allowed < 4 || te[i].denied < 4)
			die("the edges of a small ACL are too one-sided");
}
