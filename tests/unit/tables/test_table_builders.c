/* SPDX-License-Identifier: BSD-3-Clause */
/* The table builders (control/tables/builder.h): rendezvous, ring and the
 * Maglev adapter with its second choices.
 *
 * Expected values come from outside the builders: brute-force versions of
 * the rules in docs/table-builders.md written here from the document
 * (their own SipHash keys, fmix64, scores and ring walk), mlv_maglev_build
 * for Maglev's first choices, and the properties the algorithms promise
 * (minimal disruption, shares proportional to weights within bounds that
 * follow from the sample sizes). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "control/tables/maglev.h"
#include "control/base/siphash.h"
#include "control/tables/builder.h"
#include "tests/support/fleet.h"

#define NONE MLV_MAGLEV_NO_BACKEND

static const enum mlv_table_kind all_kinds[] = {
	MLV_TABLE_MAGLEV, MLV_TABLE_RENDEZVOUS, MLV_TABLE_RING,
};
#define N_KINDS (sizeof(all_kinds) / sizeof(all_kinds[0]))

/* ---- fixtures ---- */

/* n backends named "<prefix><i>", weight 100, in index order. */
FLEET_DECLARE(struct mlv_table_backend, 100)

struct table {
	uint16_t *first, *second;
	uint64_t fp;
	uint32_t m;
};

static struct table build(enum mlv_table_kind kind, uint32_t m, uint32_t vnodes,
			  const struct mlv_table_backend *be, uint32_t n)
{
	struct mlv_table_spec spec = { kind, m, vnodes };
	struct table t = { malloc(m * sizeof(uint16_t)),
			   malloc(m * sizeof(uint16_t)), 0, m };

	assert_non_null(t.first);
	assert_non_null(t.second);
	assert_int_equal(mlv_table_build(&spec, be, n, t.first, t.second, &t.fp),
			 MLV_OK);
	return t;
}

static void table_free(struct table *t)
{
	free(t->first);
	free(t->second);
}

/* ---- independent versions of the documented hashes ---- */

static uint64_t fmix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

static uint64_t sip(const char *key16, const char *name)
{
	struct mlv_siphash_key k;

	memcpy(k.bytes, key16, 16);
	return mlv_siphash24(&k, name, strlen(name));
}

/* a beats b for one slot (docs/table-builders.md, "Rendezvous"). */
static bool hrw_beats(const struct mlv_table_backend *be, const uint64_t *h,
		      uint64_t fj, uint32_t a, uint32_t b)
{
	uint64_t ua = fmix(h[a] ^ fj) >> 12, ub = fmix(h[b] ^ fj) >> 12;

	if (be[a].weight == be[b].weight) {
		if (ua != ub)
			return ua > ub;
	} else {
		double sa = -log(((double)ua + 0.5) / 4503599627370496.0) / be[a].weight;
		double sb = -log(((double)ub + 0.5) / 4503599627370496.0) / be[b].weight;

		if (sa != sb)
			return sa < sb;
	}
	return strcmp(be[a].name, be[b].name) < 0;
}

static void hrw_reference(const struct mlv_table_backend *be, uint32_t n,
			  uint32_t m, uint16_t *first, uint16_t *second)
{
	uint64_t *h = malloc(n * sizeof(*h));

	assert_non_null(h);
	for (uint32_t i = 0; i < n; i++)
		h[i] = sip("maglevd-r1-key-0", be[i].name);
	for (uint32_t j = 0; j < m; j++) {
		uint64_t fj = fmix(j);
		uint32_t f = NONE, s = NONE;

		for (uint32_t i = 0; i < n; i++)
			if (be[i].weight > 0 &&
			    (f == NONE || hrw_beats(be, h, fj, i, f)))
				f = i;
		for (uint32_t i = 0; i < n; i++)
			if (be[i].weight > 0 && !be[i].no_second && i != f &&
			    (s == NONE || hrw_beats(be, h, fj, i, s)))
				s = i;
		first[j] = (uint16_t)f;
		second[j] = (uint16_t)s;
	}
	free(h);
}

struct ref_point {
	uint64_t pos;
	uint32_t owner;
};

static int ref_point_cmp(const void *a, const void *b)
{
	const struct ref_point *x = a, *y = b;

	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* docs/table-builders.md, "Ring" (positions are distinct at these sizes,
 * so the tie rules do not come into play). */
static void ring_reference(const struct mlv_table_backend *be, uint32_t n,
			   uint32_t m, uint32_t vnodes, uint16_t *first,
			   uint16_t *second)
{
	uint32_t np = 0, total = 0;
	struct ref_point *pt;
	uint64_t hs = sip("maglevd-k1-key-0", "");

	for (uint32_t i = 0; i < n; i++)
		total += be[i].weight * vnodes;
	pt = malloc(total * sizeof(*pt));
	assert_non_null(pt);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t h = sip("maglevd-k1-key-0", be[i].name);

		for (uint32_t k = 0; k < be[i].weight * vnodes; k++)
			pt[np++] = (struct ref_point){ fmix(h ^ fmix(k)), i };
	}
	qsort(pt, np, sizeof(*pt), ref_point_cmp);
	for (uint32_t j = 0; j < m; j++) {
		uint64_t q = fmix(hs ^ fmix(j));
		uint32_t p = 0;

		while (p < np && pt[p].pos < q)
			p++;
		p %= np;
		first[j] = (uint16_t)pt[p].owner;
		second[j] = NONE;
		for (uint32_t k = 1; k < np; k++) {
			uint32_t o = pt[(p + k) % np].owner;

			if (o != pt[p].owner && !be[o].no_second) {
				second[j] = (uint16_t)o;
				break;
			}
		}
	}
	free(pt);
}

/* docs/table-builders.md, "Maglev second choices": among eligible
 * backends other than the owner, the smallest (step + 1) / weight at
 * which its permutation reaches the slot; ties by name. */
static void maglev_second_reference(const struct mlv_table_backend *be,
				    uint32_t n, uint32_t m,
				    const uint16_t *first, uint16_t *second)
{
	uint32_t *step = malloc((size_t)n * m * sizeof(*step));

	assert_non_null(step);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t off, skip, pos;

		assert_int_equal(mlv_maglev_name_perm(be[i].name, m, &off, &skip),
				 MLV_OK);
		pos = off;
		for (uint32_t r = 0; r < m; r++) {
			step[(size_t)i * m + pos] = r;
			pos = (pos + skip) % m;
		}
	}
	for (uint32_t j = 0; j < m; j++) {
		uint32_t s = NONE;

		for (uint32_t i = 0; i < n; i++) {
			uint64_t ti, ts;

			if (be[i].weight == 0 || be[i].no_second || i == first[j])
				continue;
			if (s == NONE) {
				s = i;
				continue;
			}
			ti = (uint64_t)(step[(size_t)i * m + j] + 1) * be[s].weight;
			ts = (uint64_t)(step[(size_t)s * m + j] + 1) * be[i].weight;
			if (ti < ts || (ti == ts && strcmp(be[i].name, be[s].name) < 0))
				s = i;
		}
		second[j] = (uint16_t)s;
	}
	free(step);
}

/* A small mixed fleet: several weights (some equal), one weight 0, one
 * that is never a second choice. */
static struct fleet mixed_fleet(void)
{
	static const uint32_t w[] = { 3, 1, 2, 3, 0, 5, 1, 2 };
	struct fleet f = fleet_new(8, "mix-");

	for (uint32_t i = 0; i < f.n; i++)
		f.be[i].weight = w[i];
	f.be[6].no_second = true;
	return f;
}

static void test_rendezvous_matches_reference(void **state)
{
	struct fleet f = mixed_fleet();
	uint32_t m = 1009;
	uint16_t *rf = malloc(m * 2), *rs = malloc(m * 2);
	struct table t;

	(void)state;
	assert_non_null(rf);
	assert_non_null(rs);
	t = build(MLV_TABLE_RENDEZVOUS, m, 0, f.be, f.n);
	hrw_reference(f.be, f.n, m, rf, rs);
	assert_memory_equal(t.first, rf, m * 2);
	assert_memory_equal(t.second, rs, m * 2);
	table_free(&t);
	/* equal weights: the logarithm is skipped, the order must not change */
	for (uint32_t i = 0; i < f.n; i++)
		f.be[i].weight = 7;
	t = build(MLV_TABLE_RENDEZVOUS, m, 0, f.be, f.n);
	hrw_reference(f.be, f.n, m, rf, rs);
	assert_memory_equal(t.first, rf, m * 2);
	assert_memory_equal(t.second, rs, m * 2);
	table_free(&t);
	free(rf);
	free(rs);
	fleet_free(&f);
}

static void test_ring_matches_reference(void **state)
{
	struct fleet f = mixed_fleet();
	uint32_t m = 1009;
	uint16_t *rf = malloc(m * 2), *rs = malloc(m * 2);

	(void)state;
	assert_non_null(rf);
	assert_non_null(rs);
	for (uint32_t vnodes = 1; vnodes <= 40; vnodes *= 40) {
		struct table t = build(MLV_TABLE_RING, m, vnodes, f.be, f.n);

		ring_reference(f.be, f.n, m, vnodes, rf, rs);
		assert_memory_equal(t.first, rf, m * 2);
		assert_memory_equal(t.second, rs, m * 2);
		table_free(&t);
	}
	free(rf);
	free(rs);
	fleet_free(&f);
}

static void test_maglev_first_and_second(void **state)
{
	struct fleet f = mixed_fleet();
	struct mlv_maglev_backend mb[8];
	uint32_t sizes[] = { 251, 1009 };

	(void)state;
	for (uint32_t i = 0; i < f.n; i++)
		mb[i] = (struct mlv_maglev_backend){ f.be[i].name, f.be[i].weight };
	for (uint32_t round = 0; round < 2; round++) {
		for (uint32_t k = 0; k < 2; k++) {
			uint32_t m = sizes[k];
			uint16_t *mf = malloc(m * 2), *rs = malloc(m * 2);
			uint64_t mfp;
			struct table t = build(MLV_TABLE_MAGLEV, m, 0, f.be, f.n);

			assert_non_null(mf);
			assert_non_null(rs);
			assert_int_equal(mlv_maglev_build(mb, f.n, m, mf, &mfp), MLV_OK);
			assert_memory_equal(t.first, mf, m * 2);
			assert_true(t.fp == mfp);
			maglev_second_reference(f.be, f.n, m, t.first, rs);
			assert_memory_equal(t.second, rs, m * 2);
			table_free(&t);
			free(mf);
			free(rs);
		}
		/* again with equal weights (every lane turns every round) */
		for (uint32_t i = 0; i < f.n; i++)
			f.be[i].weight = mb[i].weight = 1;
	}
	fleet_free(&f);
}

/* The walk behind Maglev's second choices takes short cuts (an equal-
 * weights path, windows, an end game that settles the last slots
 * directly): on random sets, sizes, weights (equal or not, some 0) and
 * no_second flags it must give the brute-force rule's answer, and
 * mlv_table_build_second (the deferred path) the same bytes. */
static void test_maglev_second_random(void **state)
{
	static const uint32_t sizes[] = { 251, 1009, 4099 };
	uint32_t seed = 12345;

	(void)state;
	for (uint32_t round = 0; round < 60; round++) {
		uint32_t m = sizes[round % 3];
		struct mlv_table_spec spec = { MLV_TABLE_MAGLEV, m, 0 };
		uint32_t n, w;
		struct fleet f;
		struct table t;
		uint16_t *rs = malloc(m * 2), *late = malloc(m * 2);
		char prefix[16];

		assert_non_null(rs);
		assert_non_null(late);
		seed = seed * 1103515245u + 12345u;
		n = 2 + (seed >> 16) % 40;
		snprintf(prefix, sizeof(prefix), "r%u-", round);
		f = fleet_new(n, prefix);
		w = 1 + (seed >> 8) % 7;
		for (uint32_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			/* even rounds: equal weights; odd: 0..5 */
			f.be[i].weight = round % 2 ? (seed >> 16) % 6 : w;
			f.be[i].no_second = (seed >> 8) % 8 == 0;
		}
		t = build(MLV_TABLE_MAGLEV, m, 0, f.be, n);
		maglev_second_reference(f.be, n, m, t.first, rs);
		assert_memory_equal(t.second, rs, m * 2);
		assert_int_equal(mlv_table_build_second(&spec, f.be, n, t.first,
							late), MLV_OK);
		assert_memory_equal(late, t.second, m * 2);
		table_free(&t);
		fleet_free(&f);
		free(rs);
		free(late);
	}
}

/* Only builders that can add second choices later offer it. */
static void test_second_separable(void **state)
{
	struct fleet f = fleet_new(3, "sep-");
	struct mlv_table_spec spec = { MLV_TABLE_RENDEZVOUS, 251, 10 };
	uint16_t first[251], second[251];

	(void)state;
	assert_true(mlv_table_second_separable(MLV_TABLE_MAGLEV));
	assert_false(mlv_table_second_separable(MLV_TABLE_RENDEZVOUS));
	assert_false(mlv_table_second_separable(MLV_TABLE_RING));
	assert_false(mlv_table_second_separable(MLV_TABLE__COUNT));
	assert_int_equal(mlv_table_build(&spec, f.be, 3, first, NULL, NULL),
			 MLV_OK);
	assert_int_equal(mlv_table_build_second(&spec, f.be, 3, first, second),
			 MLV_E_INVAL);
	spec.kind = MLV_TABLE_MAGLEV;
	assert_int_equal(mlv_table_build_second(&spec, f.be, 3, first, NULL),
			 MLV_E_INVAL);
	assert_int_equal(mlv_table_build_second(NULL, f.be, 3, first, second),
			 MLV_E_INVAL);
	fleet_free(&f);
}

/* ---- minimal disruption ---- */

/* Backends [0, n) without `gone`, same names and weights. */
static struct mlv_table_backend *without(const struct fleet *f, uint32_t gone)
{
	struct mlv_table_backend *be = malloc(f->n * sizeof(*be));

	assert_non_null(be);
	for (uint32_t i = 0, k = 0; i < f->n; i++)
		if (i != gone)
			be[k++] = f->be[i];
	return be;
}

/* Removing backend `gone` moves exactly its slots, each to the slot's old
 * second choice; adding it back moves slots only to it. */
static void check_minimal_disruption(enum mlv_table_kind kind, uint32_t vnodes)
{
	struct fleet f = fleet_new(20, "md-");
	uint32_t m = 65537;
	struct table all;

	f.be[3].weight = 50;
	f.be[11].weight = 300;
	all = build(kind, m, vnodes, f.be, f.n);
	for (uint32_t gone = 0; gone < f.n; gone += 5) {
		struct mlv_table_backend *rest = without(&f, gone);
		struct table less = build(kind, m, vnodes, rest, f.n - 1);
		uint32_t own = 0;

		for (uint32_t j = 0; j < m; j++) {
			/* map the smaller table's indices back to f's */
			uint32_t after = less.first[j] >= gone ? less.first[j] + 1u
							       : less.first[j];

			if (all.first[j] == gone) {
				own++;
				assert_int_equal(after, all.second[j]);
			} else {
				assert_int_equal(after, all.first[j]);
			}
		}
		assert_true(own > 0);
		table_free(&less);
		free(rest);
	}
	/* adding: build without one, then with it: changes only go to it */
	{
		struct mlv_table_backend *rest = without(&f, 7);
		struct table less = build(kind, m, vnodes, rest, f.n - 1);
		uint32_t gained = 0;

		for (uint32_t j = 0; j < m; j++) {
			uint32_t before = less.first[j] >= 7 ? less.first[j] + 1u
							     : less.first[j];

			if (before != all.first[j]) {
				assert_int_equal(all.first[j], 7);
				gained++;
			}
		}
		assert_true(gained > 0);
		table_free(&less);
		free(rest);
	}
	table_free(&all);
	fleet_free(&f);
}

static void test_rendezvous_minimal_disruption(void **state)
{
	(void)state;
	check_minimal_disruption(MLV_TABLE_RENDEZVOUS, 0);
}

static void test_ring_minimal_disruption(void **state)
{
	(void)state;
	check_minimal_disruption(MLV_TABLE_RING, 2);
}

/* Maglev does not promise minimal disruption, but removing 1 of 100
 * equal backends must stay near the paper's figure (optimum 1 %). */
static void test_maglev_disruption_bound(void **state)
{
	struct fleet f = fleet_new(100, "mg-");
	struct table all = build(MLV_TABLE_MAGLEV, 65537, 0, f.be, f.n);
	struct mlv_table_backend *rest = without(&f, 42);
	struct table less = build(MLV_TABLE_MAGLEV, 65537, 0, rest, f.n - 1);
	uint32_t moved = 0;

	(void)state;
	for (uint32_t j = 0; j < 65537; j++) {
		uint32_t after = less.first[j] >= 42 ? less.first[j] + 1u
						     : less.first[j];

		moved += after != all.first[j];
	}
	assert_true(moved > 65537 / 100);
	assert_true(moved <= 65537 * 2 / 100);
	table_free(&all);
	table_free(&less);
	free(rest);
	fleet_free(&f);
}

/* ---- weights ---- */

/* Shares of classes of backends with weights 1:2:3:4 (count backends per
 * class) against 10/20/30/40 %, within tol percentage points. */
static void check_weight_shares(enum mlv_table_kind kind, uint32_t vnodes,
				uint32_t per_class, double tol_pp)
{
	struct fleet f = fleet_new(4 * per_class, "w-");
	uint32_t m = 65537, count[4] = { 0 };
	struct table t;

	for (uint32_t i = 0; i < f.n; i++)
		f.be[i].weight = i % 4 + 1;
	t = build(kind, m, vnodes, f.be, f.n);
	for (uint32_t j = 0; j < m; j++)
		count[t.first[j] % 4]++;
	for (uint32_t c = 0; c < 4; c++) {
		double pp = 100.0 * count[c] / m, want = 10.0 * (c + 1);

		if (fabs(pp - want) > tol_pp)
			fail_msg("%s: weight %u class has %.3f %%, want %.1f +- %.2f",
				 mlv_table_kind_name(kind), c + 1, pp, want, tol_pp);
	}
	table_free(&t);
	fleet_free(&f);
}

/* Rendezvous: P(win) = w / sum(w) exactly, so only sampling noise over
 * M = 65537 slots remains (sd 0.19 pp at 40 %): 0.5 pp is 2.6 sd for one
 * backend, more for classes of ten. */
static void test_rendezvous_weights(void **state)
{
	(void)state;
	check_weight_shares(MLV_TABLE_RENDEZVOUS, 0, 1, 0.5);
	check_weight_shares(MLV_TABLE_RENDEZVOUS, 0, 10, 0.5);
}

/* Ring: a backend's arc share has relative sd about 1 / sqrt(points);
 * with vnodes 1000 (1000..4000 points) that is under 0.6 pp at 40 %, and
 * classes of ten average it down: 2 pp and 1 pp are above 3 sd. */
static void test_ring_weights(void **state)
{
	(void)state;
	check_weight_shares(MLV_TABLE_RING, 1000, 1, 2.0);
	check_weight_shares(MLV_TABLE_RING, 1000, 10, 1.0);
}

static void test_maglev_weights(void **state)
{
	(void)state;
	check_weight_shares(MLV_TABLE_MAGLEV, 0, 1, 0.1);
}

/* Equal weights, 100 backends at M = 65537: Maglev is within one slot;
 * rendezvous and ring only within their sampling noise (655 slots each,
 * sd ~26 slots for rendezvous; ring arcs with 1000 points ~3 %). */
static void test_balance(void **state)
{
	struct fleet f = fleet_new(100, "b-");

	(void)state;
	for (uint32_t k = 0; k < N_KINDS; k++) {
		struct table t = build(all_kinds[k], 65537, 10, f.be, f.n);
		uint32_t count[100] = { 0 }, lo = UINT32_MAX, hi = 0;

		for (uint32_t j = 0; j < 65537; j++)
			count[t.first[j]]++;
		for (uint32_t i = 0; i < 100; i++) {
			lo = count[i] < lo ? count[i] : lo;
			hi = count[i] > hi ? count[i] : hi;
		}
		if (all_kinds[k] == MLV_TABLE_MAGLEV) {
			assert_int_equal(lo, 655);
			assert_int_equal(hi, 656);
		} else {
			/* 5 sd of the per-backend noise around 655 */
			assert_true(lo > 655 * 0.8);
			assert_true(hi < 655 * 1.2);
		}
		table_free(&t);
	}
	fleet_free(&f);
}

/* ---- every builder ---- */

/* Second choices are valid: never the first, a backend with weight > 0
 * that may be a second choice; first choices have weight > 0. */
static void check_second_valid(const struct table *t,
			       const struct mlv_table_backend *be, uint32_t n)
{
	for (uint32_t j = 0; j < t->m; j++) {
		assert_true(t->first[j] < n);
		assert_true(be[t->first[j]].weight > 0);
		assert_true(t->second[j] < n);
		assert_int_not_equal(t->second[j], t->first[j]);
		assert_true(be[t->second[j]].weight > 0);
		assert_false(be[t->second[j]].no_second);
	}
}

static void test_second_choice_valid(void **state)
{
	struct fleet f = mixed_fleet();

	(void)state;
	for (uint32_t k = 0; k < N_KINDS; k++) {
		struct table t = build(all_kinds[k], 4093, 20, f.be, f.n);

		check_second_valid(&t, f.be, f.n);
		table_free(&t);
	}
	fleet_free(&f);
}

/* no_second changes no first choice, and for rendezvous and ring the
 * second choice of the down backend's slots is the owner they get when
 * it is removed. */
static void test_no_second(void **state)
{
	struct fleet f = fleet_new(12, "ns-");

	(void)state;
	for (uint32_t k = 0; k < N_KINDS; k++) {
		struct table plain = build(all_kinds[k], 4093, 5, f.be, f.n);
		struct mlv_table_backend *rest = without(&f, 4);
		struct table less = build(all_kinds[k], 4093, 5, rest, f.n - 1);
		struct table down;

		f.be[4].no_second = true;
		down = build(all_kinds[k], 4093, 5, f.be, f.n);
		f.be[4].no_second = false;
		assert_memory_equal(down.first, plain.first, 4093 * 2);
		for (uint32_t j = 0; j < 4093; j++) {
			uint32_t after = less.first[j] >= 4 ? less.first[j] + 1u
							    : less.first[j];

			assert_int_not_equal(down.second[j], 4);
			if (down.first[j] == 4 && all_kinds[k] != MLV_TABLE_MAGLEV)
				assert_int_equal(down.second[j], after);
		}
		table_free(&plain);
		table_free(&less);
		table_free(&down);
		free(rest);
	}
	fleet_free(&f);
}

/* The same set in another order: same slot -> name mappings, same
 * fingerprint. */
static void test_order_independence(void **state)
{
	struct fleet f = mixed_fleet();
	struct mlv_table_backend rev[8];

	(void)state;
	for (uint32_t i = 0; i < f.n; i++)
		rev[i] = f.be[(i * 3 + 5) % f.n];   /* a permutation of 8 */
	for (uint32_t k = 0; k < N_KINDS; k++) {
		struct table a = build(all_kinds[k], 2003, 7, f.be, f.n);
		struct table b = build(all_kinds[k], 2003, 7, rev, f.n);

		assert_true(a.fp == b.fp);
		for (uint32_t j = 0; j < 2003; j++) {
			assert_string_equal(f.be[a.first[j]].name, rev[b.first[j]].name);
			assert_string_equal(f.be[a.second[j]].name,
					    rev[b.second[j]].name);
		}
		table_free(&a);
		table_free(&b);
	}
	fleet_free(&f);
}

/* The fingerprint follows the mapping: the same mapping gives the same
 * value whichever builder made it, a different mapping another one, and
 * backends that own no slot do not count (docs/maglev.md). */
static void test_fingerprint(void **state)
{
	struct fleet f = fleet_new(5, "fp-");
	struct table t[N_KINDS];
	uint32_t order[5] = { 0, 1, 2, 3, 4 };
	uint64_t fp;

	(void)state;
	for (uint32_t k = 0; k < N_KINDS; k++)
		t[k] = build(all_kinds[k], 251, 10, f.be, f.n);
	assert_true(t[0].fp != t[1].fp);
	assert_true(t[1].fp != t[2].fp);
	/* the rendezvous table fingerprinted directly: same value */
	assert_int_equal(mlv_table_fingerprint(f.be, order, f.n, 251,
					       t[1].first, &fp), MLV_OK);
	assert_true(fp == t[1].fp);
	/* a weight-0 backend added changes no slot and no fingerprint */
	{
		struct fleet g = fleet_new(6, "fp-");
		struct table u;

		g.be[5].weight = 0;
		u = build(MLV_TABLE_RENDEZVOUS, 251, 10, g.be, g.n);
		assert_true(u.fp == t[1].fp);
		table_free(&u);
		fleet_free(&g);
	}
	for (uint32_t k = 0; k < N_KINDS; k++)
		table_free(&t[k]);
	fleet_free(&f);
}

/* No backends, all weights 0, one backend, one eligible backend. */
static void test_small_sets(void **state)
{
	struct fleet f = fleet_new(2, "s-");
	struct mlv_maglev_backend none;
	uint16_t empty_slots[251];
	uint64_t empty_fp;

	(void)state;
	assert_int_equal(mlv_maglev_build(&none, 0, 251, empty_slots, &empty_fp),
			 MLV_OK);
	for (uint32_t k = 0; k < N_KINDS; k++) {
		struct table t = build(all_kinds[k], 251, 3, f.be, 0);

		for (uint32_t j = 0; j < 251; j++) {
			assert_int_equal(t.first[j], NONE);
			assert_int_equal(t.second[j], NONE);
		}
		assert_true(t.fp == empty_fp);
		table_free(&t);

		f.be[0].weight = f.be[1].weight = 0;
		t = build(all_kinds[k], 251, 3, f.be, 2);
		for (uint32_t j = 0; j < 251; j++) {
			assert_int_equal(t.first[j], NONE);
			assert_int_equal(t.second[j], NONE);
		}
		table_free(&t);

		f.be[0].weight = 100;
		t = build(all_kinds[k], 251, 3, f.be, 1);
		for (uint32_t j = 0; j < 251; j++) {
			assert_int_equal(t.first[j], 0);
			assert_int_equal(t.second[j], NONE);
		}
		table_free(&t);

		/* two with slots, one never a second choice: the other is
		 * every second choice except on its own slots */
		f.be[1].weight = 100;
		f.be[1].no_second = true;
		t = build(all_kinds[k], 251, 3, f.be, 2);
		for (uint32_t j = 0; j < 251; j++)
			assert_int_equal(t.second[j], t.first[j] == 0 ? NONE : 0);
		table_free(&t);
		f.be[1].no_second = false;
	}
	fleet_free(&f);
}

/* second may be NULL; the first choices do not change. */
static void test_without_second(void **state)
{
	struct fleet f = mixed_fleet();

	(void)state;
	for (uint32_t k = 0; k < N_KINDS; k++) {
		struct mlv_table_spec spec = { all_kinds[k], 1009, 4 };
		struct table t = build(all_kinds[k], 1009, 4, f.be, f.n);
		uint16_t first[1009];
		uint64_t fp;

		assert_int_equal(mlv_table_build(&spec, f.be, f.n, first, NULL, &fp),
				 MLV_OK);
		assert_memory_equal(first, t.first, sizeof(first));
		assert_true(fp == t.fp);
		table_free(&t);
	}
	fleet_free(&f);
}

static void test_bad_input(void **state)
{
	struct fleet f = fleet_new(3, "bad-");
	uint16_t slots[251];
	struct mlv_table_spec spec = { MLV_TABLE_RENDEZVOUS, 251, 10 };

	(void)state;
	assert_int_equal(mlv_table_build(NULL, f.be, 3, slots, NULL, NULL), MLV_E_INVAL);
	assert_int_equal(mlv_table_build(&spec, f.be, 3, NULL, NULL, NULL), MLV_E_INVAL);
	assert_int_equal(mlv_table_build(&spec, NULL, 3, slots, NULL, NULL), MLV_E_INVAL);
	spec.kind = MLV_TABLE__COUNT;
	assert_int_equal(mlv_table_build(&spec, f.be, 3, slots, NULL, NULL), MLV_E_INVAL);
	assert_null(mlv_table_ops_of(MLV_TABLE__COUNT));
	assert_string_equal(mlv_table_kind_name(MLV_TABLE__COUNT), "unknown");
	spec.kind = MLV_TABLE_RENDEZVOUS;
	spec.size = 250;   /* not prime */
	assert_int_equal(mlv_table_build(&spec, f.be, 3, slots, NULL, NULL), MLV_E_INVAL);
	spec.size = 251;
	f.be[1].name = f.be[2].name;   /* duplicate */
	assert_int_equal(mlv_table_build(&spec, f.be, 3, slots, NULL, NULL), MLV_E_INVAL);
	f.be[1].name = "";
	assert_int_equal(mlv_table_build(&spec, f.be, 3, slots, NULL, NULL), MLV_E_INVAL);
	f.be[1].name = NULL;
	assert_int_equal(mlv_table_build(&spec, f.be, 3, slots, NULL, NULL), MLV_E_INVAL);
	f.be[1].name = f.names[1];
	f.be[1].weight = MLV_MAGLEV_MAX_WEIGHT + 1;
	assert_int_equal(mlv_table_build(&spec, f.be, 3, slots, NULL, NULL), MLV_E_INVAL);
	f.be[1].weight = 100;
	assert_int_equal(mlv_table_build(&spec, f.be, 3, slots, NULL, NULL), MLV_OK);
	/* ring: vnodes range and the point limit */
	spec.kind = MLV_TABLE_RING;
	spec.vnodes = 0;
	assert_int_equal(mlv_table_build(&spec, f.be, 3, slots, NULL, NULL), MLV_E_INVAL);
	spec.vnodes = MLV_RING_MAX_VNODES + 1;
	assert_int_equal(mlv_table_build(&spec, f.be, 3, slots, NULL, NULL), MLV_E_INVAL);
	spec.vnodes = MLV_RING_MAX_VNODES;
	f.be[0].weight = MLV_RING_MAX_POINTS / MLV_RING_MAX_VNODES + 1;
	assert_int_equal(mlv_table_build(&spec, f.be, 3, slots, NULL, NULL), MLV_E_RANGE);
	fleet_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rendezvous_matches_reference),
		cmocka_unit_test(test_ring_matches_reference),
		cmocka_unit_test(test_maglev_first_and_second),
		cmocka_unit_test(test_maglev_second_random),
		cmocka_unit_test(test_second_separable),
		cmocka_unit_test(test_rendezvous_minimal_disruption),
		cmocka_unit_test(test_ring_minimal_disruption),
		cmocka_unit_test(test_maglev_disruption_bound),
		cmocka_unit_test(test_rendezvous_weights),
		cmocka_unit_test(test_ring_weights),
		cmocka_unit_test(test_maglev_weights),
		cmocka_unit_test(test_balance),
		cmocka_unit_test(test_second_choice_valid),
		cmocka_unit_test(test_no_second),
		cmocka_unit_test(test_order_independence),
		cmocka_unit_test(test_fingerprint),
		cmocka_unit_test(test_small_sets),
		cmocka_unit_test(test_without_second),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
