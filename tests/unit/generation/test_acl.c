/* SPDX-License-Identifier: BSD-3-Clause */
/* Source ACLs (control/generation/acl.h): the flattened intervals must
 * give, for every source address, the verdict of a naive linear
 * longest-prefix match over the rules (deny by default iff there is an
 * allow list). Checked on random overlapping prefix sets of both
 * families (allow-only, deny-only, mixed; /0, host prefixes) at every
 * prefix's edges and at random addresses, on hand-made nested carve-outs,
 * on hand-written verdicts at the first and last address of allowed
 * ranges inside denied ones and the reverse (IPv4 and IPv6; /0, host
 * prefixes, lengths off the octet and across the IPv6 64-bit halves),
 * and on sharing (mlv_acl_same_input). */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "control/generation/acl.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next64(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static bool bit_match(const uint8_t *a, const uint8_t *p, unsigned len)
{
	for (unsigned b = 0; b < len; b++) {
		unsigned mask = 0x80u >> (b % 8);

		if ((a[b / 8] & mask) != (p[b / 8] & mask))
			return false;
	}
	return true;
}

/* The reference: the longest matching rule decides; a prefix in both
 * lists is not generated. */
static bool naive_allows(const struct mlv_acl_rule *r, uint32_t n,
			 const uint8_t *addr)
{
	int best = -1;
	bool has_allow = false, verdict;

	for (uint32_t i = 0; i < n; i++) {
		has_allow |= r[i].allow;
		if (bit_match(addr, r[i].addr, r[i].len) &&
		    (best < 0 || r[i].len > r[best].len))
			best = (int)i;
	}
	verdict = best >= 0 ? r[best].allow : !has_allow;
	return verdict;
}

static void clear_host_bits(struct mlv_acl_rule *r, unsigned width)
{
	for (unsigned b = r->len; b < width; b++)
		r->addr[b / 8] &= (uint8_t)~(0x80u >> (b % 8));
}

/* n rules drawn around a few bases so they nest and overlap; kind 0:
 * mixed, 1: allow only, 2: deny only, 3: mixed, all under one base and
 * at least half the width long (the index then skips their common
 * leading bits, and most addresses fall outside them). No prefix in both
 * lists. */
static struct mlv_acl_rule *random_rules(uint8_t family, uint32_t n, int kind)
{
	unsigned width = family == 4 ? 32 : 128;
	unsigned bytes = width / 8;
	struct mlv_acl_rule *r = calloc(n, sizeof(*r));
	uint8_t bases[8][16];

	assert_non_null(r);
	for (int b = 0; b < 8; b++)
		for (unsigned i = 0; i < 16; i++)
			bases[b][i] = i < bytes ? (uint8_t)next64() : 0;
	for (uint32_t i = 0; i < n; i++) {
		memcpy(r[i].addr, bases[kind == 3 ? 0 : next64() % 8], 16);
		/* perturb the tail so neighbours differ below some length */
		for (unsigned k = bytes / 2; k < bytes; k++)
			if (next64() % 3 == 0)
				r[i].addr[k] = (uint8_t)next64();
		r[i].len = (uint8_t)(next64() % (width + 1));
		if (kind == 3)
			r[i].len = (uint8_t)(width / 2 + next64() % (width / 2 + 1));
		if (i == 0 && kind != 3)
			r[i].len = 0;         /* a /0 in every set */
		if (i == 1)
			r[i].len = (uint8_t)width;  /* and a host prefix */
		clear_host_bits(&r[i], width);
		r[i].allow = kind == 1 ? true : kind == 2 ? false : next64() & 1;
		/* same prefix already in the other list: use this one's */
		for (uint32_t j = 0; j < i; j++)
			if (r[j].len == r[i].len &&
			    memcmp(r[j].addr, r[i].addr, 16) == 0)
				r[i].allow = r[j].allow;
	}
	return r;
}

/* Addresses at a rule's edges: its first, its last, one before, one after. */
static void edge(uint8_t family, const struct mlv_acl_rule *r, int which,
		 uint8_t out[16])
{
	unsigned width = family == 4 ? 32 : 128, bytes = width / 8;

	memcpy(out, r->addr, 16);
	if (which & 1)   /* last address: host bits set */
		for (unsigned b = r->len; b < width; b++)
			out[b / 8] |= (uint8_t)(0x80u >> (b % 8));
	if (which & 2) { /* step: -1 from the first, +1 from the last */
		if (which & 1) {
			for (unsigned k = bytes; k-- > 0;)
				if (++out[k] != 0)
					break;
		} else {
			for (unsigned k = bytes; k-- > 0;)
				if (out[k]-- != 0)
					break;
		}
	}
}

static void check_set(uint8_t family, uint32_t n, int kind, uint32_t probes)
{
	struct mlv_acl_rule *r = random_rules(family, n, kind);
	unsigned bytes = family == 4 ? 4 : 16;
	struct mlv_acl *acl;
	uint8_t a[16];

	assert_int_equal(mlv_acl_build(family, r, n, &acl), MLV_OK);
	assert_int_equal(acl->family, family);
	for (uint32_t i = 0; i < n; i++)
		for (int w = 0; w < 4; w++) {
			edge(family, &r[i], w, a);
			if (mlv_acl_allows(acl, a) != naive_allows(r, n, a))
				fail_msg("family %u kind %d: rule %u edge %d wrong",
					 family, kind, i, w);
		}
	for (uint32_t i = 0; i < probes; i++) {
		memset(a, 0, sizeof(a));
		/* half near a rule (a random rule's address with a random
		 * tail), half anywhere */
		if (i & 1)
			memcpy(a, r[next64() % n].addr, 16);
		for (unsigned k = (i & 1) ? bytes / 2 : 0; k < bytes; k++)
			a[k] = (uint8_t)next64();
		if (mlv_acl_allows(acl, a) != naive_allows(r, n, a))
			fail_msg("family %u kind %d: random probe %u wrong",
				 family, kind, i);
	}
	assert_true(mlv_acl_same_input(acl, family, r, n));
	mlv_acl_release(acl);
	free(r);
}

static void test_random_v4(void **state)
{
	(void)state;
	for (int kind = 0; kind < 4; kind++) {
		check_set(4, 2000, kind, 8000);
		check_set(4, 40, kind, 5000);
	}
}

static void test_random_v6(void **state)
{
	(void)state;
	for (int kind = 0; kind < 4; kind++) {
		check_set(6, 2000, kind, 8000);
		check_set(6, 40, kind, 5000);
	}
}

/* One prefix nested in another, the two with opposite lists, at every
 * pair of lengths (outer < inner) of both families, the inner one at the
 * outer's start, its end or anywhere inside: each rule's first and last
 * address and the ones just outside them. Small ACLs have few
 * intervals, a 16-bucket index and a long skipped prefix. */
static void check_nested(uint8_t family, unsigned outer, unsigned inner,
			 int where, bool inner_allows)
{
	unsigned width = family == 4 ? 32 : 128;
	struct mlv_acl_rule r[2];
	struct mlv_acl *acl;
	uint8_t a[16];

	memset(r, 0, sizeof(r));
	for (unsigned i = 0; i < width / 8; i++)
		r[0].addr[i] = (uint8_t)next64();
	r[0].len = (uint8_t)outer;
	clear_host_bits(&r[0], width);
	r[0].allow = !inner_allows;
	r[1] = r[0];
	r[1].len = (uint8_t)inner;
	r[1].allow = inner_allows;
	for (unsigned b = outer; b < inner; b++) {
		bool one = where == 1 || (where == 2 && (next64() & 1));

		if (one)
			r[1].addr[b / 8] |= (uint8_t)(0x80u >> (b % 8));
	}
	assert_int_equal(mlv_acl_build(family, r, 2, &acl), MLV_OK);
	for (int i = 0; i < 2; i++)
		for (int w = 0; w < 4; w++) {
			edge(family, &r[i], w, a);
			if (mlv_acl_allows(acl, a) != naive_allows(r, 2, a))
				fail_msg("IPv%u /%u in /%u (%s, at %s): rule %d "
					 "edge %d wrong", family, inner, outer,
					 inner_allows ? "allowed" : "denied",
					 where == 0 ? "start" : where == 1 ?
					 "end" : "random", i, w);
		}
	mlv_acl_release(acl);
}

static void test_nested_every_length(void **state)
{
	(void)state;
	for (uint8_t family = 4; family <= 6; family += 2) {
		unsigned width = family == 4 ? 32 : 128;

		for (unsigned outer = 0; outer < width; outer++)
			for (unsigned inner = outer + 1; inner <= width; inner++)
				for (int where = 0; where < 3; where++) {
					check_nested(family, outer, inner, where,
						     true);
					check_nested(family, outer, inner, where,
						     false);
				}
	}
}

static struct mlv_acl_rule rule(const char *a4, uint8_t len, bool allow)
{
	struct mlv_acl_rule r;
	unsigned x[4];

	memset(&r, 0, sizeof(r));
	assert_int_equal(sscanf(a4, "%u.%u.%u.%u", &x[0], &x[1], &x[2], &x[3]), 4);
	for (int i = 0; i < 4; i++)
		r.addr[i] = (uint8_t)x[i];
	r.len = len;
	r.allow = allow;
	return r;
}

static bool allows4(const struct mlv_acl *acl, const char *a4)
{
	struct mlv_acl_rule r = rule(a4, 32, true);

	return mlv_acl_allows(acl, r.addr);
}

/* deny 10.1.0.0/16, allow 10.1.2.0/24 inside it, deny 10.1.2.16/28
 * inside that; allow 0.0.0.0/0 around everything. */
static void test_carve_outs(void **state)
{
	struct mlv_acl_rule r[] = {
		rule("10.1.2.16", 28, false), rule("10.1.0.0", 16, false),
		rule("0.0.0.0", 0, true), rule("10.1.2.0", 24, true),
		rule("255.255.255.255", 32, false),
	};
	struct mlv_acl *acl;

	(void)state;
	assert_int_equal(mlv_acl_build(4, r, 5, &acl), MLV_OK);
	assert_true(allows4(acl, "0.0.0.0"));
	assert_true(allows4(acl, "10.0.255.255"));
	assert_false(allows4(acl, "10.1.0.0"));
	assert_false(allows4(acl, "10.1.1.255"));
	assert_true(allows4(acl, "10.1.2.0"));
	assert_true(allows4(acl, "10.1.2.15"));
	assert_false(allows4(acl, "10.1.2.16"));
	assert_false(allows4(acl, "10.1.2.31"));
	assert_true(allows4(acl, "10.1.2.32"));
	assert_true(allows4(acl, "10.1.2.255"));
	assert_false(allows4(acl, "10.1.3.0"));
	assert_false(allows4(acl, "10.1.255.255"));
	assert_true(allows4(acl, "10.2.0.0"));
	assert_true(allows4(acl, "255.255.255.254"));
	assert_false(allows4(acl, "255.255.255.255"));
	/* allow, deny, allow, deny, allow, deny, allow, deny */
	assert_int_equal(acl->n, 8);
	mlv_acl_release(acl);
}

/* "ADDRESS/LENGTH" (or a bare address, its host prefix) of either family
 * as a rule; *family (if not NULL) says which. */
static struct mlv_acl_rule rule_text(const char *text, bool allow,
				     uint8_t *family)
{
	struct mlv_acl_rule r;
	char addr[64];
	const char *slash = strchr(text, '/');
	size_t alen = slash ? (size_t)(slash - text) : strlen(text);
	bool v6 = memchr(text, ':', alen) != NULL;

	memset(&r, 0, sizeof(r));
	assert_true(alen < sizeof(addr));
	memcpy(addr, text, alen);
	addr[alen] = '\0';
	assert_int_equal(inet_pton(v6 ? AF_INET6 : AF_INET, addr, r.addr), 1);
	r.len = (uint8_t)(slash ? atoi(slash + 1) : v6 ? 128 : 32);
	r.allow = allow;
	if (family)
		*family = v6 ? 6 : 4;
	return r;
}

/* A hand-written verdict: a source and whether the ACL lets it through
 * (in the nesting tests, allow[1] is the verdict of the reverse nesting). */
struct verdict {
	const char *src;
	bool allow[2];
};

/* Check column col of each verdict against the ACL built from r, and
 * against the naive match too (so that the table cannot drift from the
 * rule it writes out). */
static void check_verdicts(uint8_t family, const struct mlv_acl_rule *r,
			   uint32_t n_rules, const struct verdict *v,
			   uint32_t n_v, int col)
{
	struct mlv_acl *acl;
	uint8_t f;

	assert_int_equal(mlv_acl_build(family, r, n_rules, &acl), MLV_OK);
	for (uint32_t i = 0; i < n_v; i++) {
		struct mlv_acl_rule a = rule_text(v[i].src, true, &f);
		bool got = mlv_acl_allows(acl, a.addr);
		bool naive = naive_allows(r, n_rules, a.addr);

		assert_int_equal(f, family);
		if (got != v[i].allow[col] || naive != v[i].allow[col])
			fail_msg("%s: expected %s, got %s (naive %s)", v[i].src,
				 v[i].allow[col] ? "allowed" : "denied",
				 got ? "allowed" : "denied",
				 naive ? "allowed" : "denied");
	}
	mlv_acl_release(acl);
}

/* Column 0: inner allowed inside a denied outer; column 1: the reverse,
 * inner denied inside an allowed outer. */
static void check_nesting(const char *outer, const char *inner,
			  const struct verdict *v, uint32_t n_v)
{
	struct mlv_acl_rule r[2];
	uint8_t family;

	for (int col = 0; col < 2; col++) {
		r[0] = rule_text(outer, col == 1, &family);
		r[1] = rule_text(inner, col == 0, NULL);
		check_verdicts(family, r, 2, v, n_v, col);
	}
}

#define N_OF(a) (uint32_t)(sizeof(a) / sizeof((a)[0]))

/* An allowed /24 inside a denied /8 and the reverse: the first and last
 * address of each, the ones just inside and just outside each edge, and
 * no match (there is an allow list: denied). */
static void test_nested_edges_v4(void **state)
{
	static const struct verdict v[] = {
		{ "0.0.0.0", { false, false } },
		{ "9.255.255.255", { false, false } },
		{ "10.0.0.0", { false, true } },
		{ "10.1.1.255", { false, true } },
		{ "10.1.2.0", { true, false } },
		{ "10.1.2.1", { true, false } },
		{ "10.1.2.254", { true, false } },
		{ "10.1.2.255", { true, false } },
		{ "10.1.3.0", { false, true } },
		{ "10.255.255.255", { false, true } },
		{ "11.0.0.0", { false, false } },
		{ "255.255.255.255", { false, false } },
	};

	(void)state;
	check_nesting("10.0.0.0/8", "10.1.2.0/24", v, N_OF(v));
}

/* The same in IPv6: an allowed /48 inside a denied /32 and the reverse,
 * with the addresses on both sides of the 64-bit halves' boundary. */
static void test_nested_edges_v6(void **state)
{
	static const struct verdict v[] = {
		{ "::", { false, false } },
		{ "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", { false, false } },
		{ "2001:db8::", { false, true } },
		{ "2001:db8:0:ffff:ffff:ffff:ffff:ffff", { false, true } },
		{ "2001:db8:1::", { true, false } },
		{ "2001:db8:1::1", { true, false } },
		{ "2001:db8:1:0:ffff:ffff:ffff:ffff", { true, false } },
		{ "2001:db8:1:1::", { true, false } },
		{ "2001:db8:1:ffff:ffff:ffff:ffff:fffe", { true, false } },
		{ "2001:db8:1:ffff:ffff:ffff:ffff:ffff", { true, false } },
		{ "2001:db8:2::", { false, true } },
		{ "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", { false, true } },
		{ "2001:db9::", { false, false } },
		{ "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", { false, false } },
	};

	(void)state;
	check_nesting("2001:db8::/32", "2001:db8:1::/48", v, N_OF(v));
}

/* Rules from "allow PREFIX" / "deny PREFIX" lines into r (room for n);
 * returns their family. */
static uint8_t rules_of(const char *const *lines, uint32_t n,
			struct mlv_acl_rule *r)
{
	uint8_t family = 0, f;

	for (uint32_t i = 0; i < n; i++) {
		bool allow = strncmp(lines[i], "allow ", 6) == 0;

		assert_true(allow || strncmp(lines[i], "deny ", 5) == 0);
		r[i] = rule_text(lines[i] + (allow ? 6 : 5), allow, &f);
		assert_true(family == 0 || family == f);
		family = f;
	}
	return family;
}

/* /0 around everything, lengths off the octet (/23, /17; /61, /65, the
 * /65 one bit into the IPv6 low half) and host prefixes at the first and
 * the last address of a range. */
static void test_odd_lengths(void **state)
{
	static const char *const rules4[] = {
		"allow 0.0.0.0/0", "deny 10.1.2.0/23", "allow 10.1.3.255/32",
		"deny 192.168.128.0/17", "allow 192.168.128.0",
		"deny 255.255.255.255/32",
	};
	static const struct verdict v4[] = {
		{ "0.0.0.0", { true } }, { "10.1.1.255", { true } },
		{ "10.1.2.0", { false } }, { "10.1.2.255", { false } },
		{ "10.1.3.0", { false } }, { "10.1.3.254", { false } },
		{ "10.1.3.255", { true } }, { "10.1.4.0", { true } },
		{ "192.168.127.255", { true } }, { "192.168.128.0", { true } },
		{ "192.168.128.1", { false } }, { "192.168.255.255", { false } },
		{ "192.169.0.0", { true } }, { "255.255.255.254", { true } },
		{ "255.255.255.255", { false } },
	};
	static const char *const rules6[] = {
		"deny ::/0", "allow 2001:db8:0:8::/61",
		"deny 2001:db8:0:8:8000::/65", "allow 2001:db8:0:8:8000::",
		"deny 2001:db8:0:f:ffff:ffff:ffff:ffff/128", "allow ::/128",
	};
	static const struct verdict v6[] = {
		{ "::", { true } }, { "::1", { false } },
		{ "2001:db8:0:7:ffff:ffff:ffff:ffff", { false } },
		{ "2001:db8:0:8::", { true } },
		{ "2001:db8:0:8:7fff:ffff:ffff:ffff", { true } },
		{ "2001:db8:0:8:8000::", { true } },
		{ "2001:db8:0:8:8000::1", { false } },
		{ "2001:db8:0:8:ffff:ffff:ffff:ffff", { false } },
		{ "2001:db8:0:9::", { true } },
		{ "2001:db8:0:f:ffff:ffff:ffff:fffe", { true } },
		{ "2001:db8:0:f:ffff:ffff:ffff:ffff", { false } },
		{ "2001:db8:0:10::", { false } },
		{ "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", { false } },
	};
	struct mlv_acl_rule r[N_OF(rules4) + N_OF(rules6)];

	(void)state;
	check_verdicts(rules_of(rules4, N_OF(rules4), r), r, N_OF(rules4),
		       v4, N_OF(v4), 0);
	check_verdicts(rules_of(rules6, N_OF(rules6), r), r, N_OF(rules6),
		       v6, N_OF(v6), 0);
}

/* Deny-only is a blocklist, allow-only an allowlist; a prefix in both
 * lists is denied; a changed input is not the same input. */
static void test_defaults_and_sharing(void **state)
{
	struct mlv_acl_rule deny[] = { rule("192.0.2.0", 24, false) };
	struct mlv_acl_rule allow[] = { rule("192.0.2.0", 24, true) };
	struct mlv_acl_rule both[] = { rule("192.0.2.0", 24, true),
				       rule("192.0.2.0", 24, false) };
	struct mlv_acl_rule moved[] = { rule("192.0.3.0", 24, true) };
	struct mlv_acl *a;

	(void)state;
	assert_int_equal(mlv_acl_build(4, deny, 1, &a), MLV_OK);
	assert_false(allows4(a, "192.0.2.9"));
	assert_true(allows4(a, "192.0.3.9"));
	assert_false(mlv_acl_same_input(a, 4, allow, 1));
	mlv_acl_release(a);
	assert_int_equal(mlv_acl_build(4, allow, 1, &a), MLV_OK);
	assert_true(allows4(a, "192.0.2.9"));
	assert_false(allows4(a, "192.0.3.9"));
	assert_true(mlv_acl_same_input(a, 4, allow, 1));
	assert_false(mlv_acl_same_input(a, 4, moved, 1));
	assert_false(mlv_acl_same_input(a, 6, allow, 1));
	mlv_acl_ref(a);
	assert_int_equal(a->refs, 2);
	mlv_acl_release(a);
	mlv_acl_release(a);
	/* one interval: everything allowed */
	allow[0] = rule("0.0.0.0", 0, true);
	assert_int_equal(mlv_acl_build(4, allow, 1, &a), MLV_OK);
	assert_int_equal(a->n, 1);
	assert_true(allows4(a, "0.0.0.0"));
	assert_true(allows4(a, "255.255.255.255"));
	mlv_acl_release(a);
	allow[0] = rule("192.0.2.0", 24, true);
	assert_int_equal(mlv_acl_build(4, both, 2, &a), MLV_OK);
	assert_false(allows4(a, "192.0.2.9"));
	mlv_acl_release(a);
	assert_int_equal(mlv_acl_build(4, allow, 0, &a), MLV_E_INVAL);
	assert_int_equal(mlv_acl_build(5, allow, 1, &a), MLV_E_INVAL);
	allow[0].len = 33;
	assert_int_equal(mlv_acl_build(4, allow, 1, &a), MLV_E_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_v4),
		cmocka_unit_test(test_random_v6),
		cmocka_unit_test(test_nested_every_length),
		cmocka_unit_test(test_carve_outs),
		cmocka_unit_test(test_nested_edges_v4),
		cmocka_unit_test(test_nested_edges_v6),
		cmocka_unit_test(test_odd_lengths),
		cmocka_unit_test(test_defaults_and_sharing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
