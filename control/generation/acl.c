/* SPDX-License-Identifier: BSD-3-Clause */
/* Building a source ACL (acl.h): prefixes to sorted disjoint intervals.
 *
 * Prefixes are either nested or disjoint, so sorted by start (and the
 * enclosing one first when two start together) they form a forest that
 * one sweep with a stack walks: entering a prefix starts an interval with
 * its verdict, leaving it resumes the verdict of the prefix around it (or
 * the default). Every address is then in the interval of the most
 * specific prefix covering it: longest-prefix match, decided once per
 * build instead of per packet. */
#include "control/generation/acl.h"

#include <stdlib.h>

typedef unsigned __int128 u128;

#define U128_MAX (~(u128)0)

struct span {
	u128 start, end;   /* inclusive */
	uint8_t len;
	bool allow;
};

static u128 rule_value(uint8_t family, const uint8_t *a)
{
	u128 v = 0;
	unsigned bytes = family == 4 ? 4 : 16;

	for (unsigned i = 0; i < bytes; i++)
		v = (v << 8) | a[i];
	return v;
}

/* The span of a rule in its family's address space (0 .. 2^32-1 or
 * 0 .. 2^128-1), host bits cleared. */
static struct span rule_span(uint8_t family, const struct mlv_acl_rule *r)
{
	unsigned width = family == 4 ? 32 : 128;
	unsigned host = width - r->len;
	u128 top = family == 4 ? (u128)UINT32_MAX : U128_MAX;
	u128 hostmask = host == 128 ? U128_MAX : (((u128)1 << host) - 1);
	struct span s;

	s.start = rule_value(family, r->addr) & ~hostmask & top;
	s.end = s.start | (hostmask & top);
	s.len = r->len;
	s.allow = r->allow;
	return s;
}

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	/* same prefix in both lists: deny first, so that it is kept */
	return (int)x->allow - (int)y->allow;
}

/* Sorted, distinct spans of the input; NULL on allocation failure. */
static struct span *canonical(uint8_t family, const struct mlv_acl_rule *rules,
			      uint32_t n, uint32_t *n_out)
{
	struct span *s = malloc((size_t)n * sizeof(*s));
	uint32_t k = 0;

	if (!s)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		s[i] = rule_span(family, &rules[i]);
	qsort(s, n, sizeof(*s), cmp_span);
	for (uint32_t i = 0; i < n; i++)
		if (k == 0 || s[i].start != s[k - 1].start || s[i].len != s[k - 1].len)
			s[k++] = s[i];
	*n_out = k;
	return s;
}

struct out {
	u128 *start;
	uint8_t *allow;
	uint32_t n;
};

/* Intervals come in non-decreasing start order; one at the same start as
 * the last replaces its verdict (a more specific prefix, or a prefix
 * that begins where an enclosed one ended). */
static void emit(struct out *o, u128 start, bool allow)
{
	if (o->n > 0 && o->start[o->n - 1] == start) {
		o->allow[o->n - 1] = allow;
		return;
	}
	o->start[o->n] = start;
	o->allow[o->n] = allow;
	o->n++;
}

static bool valid_rules(uint8_t family, const struct mlv_acl_rule *rules,
			uint32_t n)
{
	if ((family != 4 && family != 6) || n == 0 || !rules)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (rules[i].len > (family == 4 ? 32 : 128))
			return false;
	return true;
}

/* Index bits for m intervals: about two buckets per interval, 4 to
 * MLV_ACL_INDEX_BITS. */
static unsigned index_bits(uint32_t m)
{
	unsigned bits = 4;

	while (bits < MLV_ACL_INDEX_BITS && ((uint64_t)1 << bits) < 2 * (uint64_t)m)
		bits++;
	return bits;
}

static unsigned clz128(u128 v)
{
	uint64_t hi = (uint64_t)(v >> 64), lo = (uint64_t)v;

	if (hi)
		return (unsigned)__builtin_clzll(hi);
	return lo ? 64 + (unsigned)__builtin_clzll(lo) : 128;
}

/* The direct index of acl over its m starts (start[0] = 0), into first
 * (2^bits + 1 entries): skip, the mask and base of the boundaries'
 * common prefix, and for each bucket the interval its first address is
 * in (the last, a sentinel: the last interval). */
static void build_index(struct mlv_acl *acl, const u128 *start, unsigned bits,
			uint32_t *first)
{
	unsigned width = acl->family == 4 ? 32 : 128;
	uint32_t m = acl->n, nb = 1u << bits, i = 0;
	unsigned common = width;
	u128 mask = 0, base = 0;

	if (m >= 2)
		common = clz128(start[1] ^ start[m - 1]) - (128 - width);
	acl->skip = (uint8_t)(common < width - bits ? common : width - bits);
	acl->bits = (uint8_t)bits;
	if (acl->skip)
		mask = (~(u128)0 << (128 - acl->skip)) >> (128 - width);
	if (m >= 2)
		base = start[1] & mask;
	for (uint32_t b = 0; b < nb; b++) {
		u128 at = base | ((u128)b << (width - acl->skip - bits));

		while (i + 1 < m && start[i + 1] <= at)
			i++;
		first[b] = i;
	}
	first[nb] = m - 1;
	acl->first = first;
	if (acl->family == 4) {
		acl->mask4 = (uint32_t)mask;
		acl->base4 = (uint32_t)base;
	} else {
		acl->mask6 = mask;
		acl->base6 = base;
	}
}

enum mlv_err mlv_acl_build(uint8_t family, const struct mlv_acl_rule *rules,
			   uint32_t n, struct mlv_acl **out)
{
	uint32_t stack[129], depth = 0, n_sp = 0, m = 0;
	struct out o = { 0 };
	struct span *sp;
	struct mlv_acl *acl = NULL;
	struct mlv_acl_rule *kept;
	bool has_allow = false, def;
	size_t elem, off_start, off_first, off_rules, total;
	unsigned bits;
	enum mlv_err err = MLV_E_NOMEM;

	if (!out)
		return MLV_E_INVAL;
	*out = NULL;
	if (!valid_rules(family, rules, n))
		return MLV_E_INVAL;
	if (n > MLV_ACL_MAX_PREFIXES)
		return MLV_E_RANGE;
	for (uint32_t i = 0; i < n; i++)
		has_allow |= rules[i].allow;
	def = !has_allow;
	sp = canonical(family, rules, n, &n_sp);
	if (!sp)
		return MLV_E_NOMEM;
	/* at most 2 boundaries per prefix, plus address 0 */
	o.start = malloc((2 * (size_t)n_sp + 1) * sizeof(*o.start));
	o.allow = malloc(2 * (size_t)n_sp + 1);
	if (!o.start || !o.allow)
		goto done;

	emit(&o, 0, def);
	for (uint32_t i = 0; i < n_sp; i++) {
		while (depth > 0 && sp[stack[depth - 1]].end < sp[i].start) {
			u128 resume = sp[stack[--depth]].end + 1;

			emit(&o, resume, depth ? sp[stack[depth - 1]].allow : def);
		}
		emit(&o, sp[i].start, sp[i].allow);
		stack[depth++] = i;   /* nested at most 129 deep: /0 .. /128 */
	}
	while (depth > 0) {
		const struct span *t = &sp[stack[--depth]];

		if (t->end != (family == 4 ? (u128)UINT32_MAX : U128_MAX))
			emit(&o, t->end + 1,
			     depth ? sp[stack[depth - 1]].allow : def);
	}
	/* merge neighbours with the same verdict: verdicts then alternate */
	for (uint32_t i = 0; i < o.n; i++)
		if (m == 0 || o.allow[i] != o.allow[m - 1]) {
			o.start[m] = o.start[i];
			o.allow[m] = o.allow[i];
			m++;
		}

	bits = index_bits(m);
	elem = family == 4 ? sizeof(uint32_t) : sizeof(u128);
	off_start = (sizeof(*acl) + 63) & ~(size_t)63;
	off_first = (off_start + (size_t)m * elem + 63) & ~(size_t)63;
	off_rules = (off_first + (((size_t)1 << bits) + 1) * sizeof(uint32_t) +
		     15) & ~(size_t)15;
	total = (off_rules + (size_t)n * sizeof(*kept) + 63) & ~(size_t)63;
	acl = aligned_alloc(64, total);
	if (!acl)
		goto done;
	memset(acl, 0, sizeof(*acl));
	acl->family = family;
	acl->first_allow = o.allow[0];
	acl->n = m;
	if (family == 4) {
		uint32_t *s4 = (uint32_t *)(void *)((char *)acl + off_start);

		for (uint32_t i = 0; i < m; i++)
			s4[i] = (uint32_t)o.start[i];
		acl->start4 = s4;
	} else {
		u128 *s6 = (u128 *)(void *)((char *)acl + off_start);

		memcpy(s6, o.start, (size_t)m * sizeof(u128));
		acl->start6 = s6;
	}
	build_index(acl, o.start, bits,
		    (uint32_t *)(void *)((char *)acl + off_first));
	kept = (struct mlv_acl_rule *)(void *)((char *)acl + off_rules);
	memcpy(kept, rules, (size_t)n * sizeof(*kept));
	acl->rules = kept;
	acl->n_rules = n;
	acl->refs = 1;
	*out = acl;
	err = MLV_OK;
done:
	free(o.start);
	free(o.allow);
	free(sp);
	return err;
}

bool mlv_acl_same_input(const struct mlv_acl *acl, uint8_t family,
			const struct mlv_acl_rule *rules, uint32_t n)
{
	return acl && rules && acl->family == family && acl->n_rules == n &&
	       memcmp(acl->rules, rules, (size_t)n * sizeof(*rules)) == 0;
}

void mlv_acl_ref(struct mlv_acl *acl)
{
	if (acl)
		acl->refs++;
}

void mlv_acl_release(struct mlv_acl *acl)
{
	if (acl && --acl->refs == 0)
		free(acl);
}

enum mlv_err mlv_acl_for_vip(const struct mlv_vip_config *vc,
			     const struct mlv_acl *prev, struct mlv_acl **out)
{
	uint32_t n = vc->n_allow + vc->n_deny, k = 0;
	uint8_t family = vc->address.family;   /* MLV_AF_INET is 4, _INET6 6 */
	struct mlv_acl_rule *r;
	enum mlv_err err;

	*out = NULL;
	if (n == 0)
		return MLV_OK;
	r = malloc((size_t)n * sizeof(*r));
	if (!r)
		return MLV_E_NOMEM;
	for (int l = 0; l < 2; l++) {
		const struct mlv_acl_prefix_config *list = l ? vc->deny : vc->allow;
		uint32_t cnt = l ? vc->n_deny : vc->n_allow;

		for (uint32_t i = 0; i < cnt; i++, k++) {
			memcpy(r[k].addr, list[i].prefix.ip.bytes, 16);
			r[k].len = list[i].prefix.len;
			r[k].allow = l == 0;
		}
	}
	if (prev && mlv_acl_same_input(prev, family, r, n)) {
		*out = (struct mlv_acl *)prev;   /* control thread owns refs */
		mlv_acl_ref(*out);
		err = MLV_OK;
	} else {
		err = mlv_acl_build(family, r, n, out);
	}
	free(r);
	return err;
}
