/* SPDX-License-Identifier: BSD-3-Clause */
/* The Maglev table builder (control/tables/maglev.c).
 *
 * Expected values come from outside the implementation: the paper's Table 1,
 * arithmetic on M and the weights, the reference implementation in
 * tools/bench/maglev-bench (straightforward Pseudocode 1), and the worked examples
 * in docs/maglev.md, which were computed with an independent Python
 * implementation of that document. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "control/tables/maglev.h"
#include "tools/bench/maglev-bench/reference.h"
#include "tests/support/fleet.h"


/* n backends named "<prefix><i>", weight 1, in index order. */
FLEET_DECLARE(struct mlv_maglev_backend, 1)

static uint16_t *table_new(uint32_t m)
{
	uint16_t *t = malloc(m * sizeof(*t));

	assert_non_null(t);
	return t;
}

/* counts[i] = slots owned by backend i; returns slots with no backend. */
static uint32_t count_slots(const uint16_t *slots, uint32_t m, uint32_t n,
			    uint32_t *counts)
{
	uint32_t none = 0;

	memset(counts, 0, n * sizeof(*counts));
	for (uint32_t j = 0; j < m; j++) {
		if (slots[j] == MLV_MAGLEV_NO_BACKEND) {
			none++;
			continue;
		}
		assert_true(slots[j] < n);
		counts[slots[j]]++;
	}
	return none;
}

/* Slots whose backend name differs between two builds. */
static uint32_t slots_moved(const struct mlv_maglev_backend *a,
			    const uint16_t *ta,
			    const struct mlv_maglev_backend *b,
			    const uint16_t *tb, uint32_t m)
{
	uint32_t moved = 0;

	for (uint32_t j = 0; j < m; j++) {
		if (ta[j] == MLV_MAGLEV_NO_BACKEND ||
		    tb[j] == MLV_MAGLEV_NO_BACKEND) {
			moved += ta[j] != tb[j];
			continue;
		}
		moved += strcmp(a[ta[j]].name, b[tb[j]].name) != 0;
	}
	return moved;
}

/* Fixed-seed shuffle (xorshift64*), so failures reproduce. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static void shuffle(struct mlv_maglev_backend *be, uint32_t n, uint64_t *seed)
{
	for (uint32_t i = n; i > 1; i--) {
		uint32_t j = (uint32_t)(rnd(seed) % i);
		struct mlv_maglev_backend t = be[i - 1];

		be[i - 1] = be[j];
		be[j] = t;
	}
}

/* ---- the paper ----------------------------------------------------------- */

/* Eisenbud et al., Table 1: M = 7, B0 (offset 3, skip 4), B1 (0, 2),
 * B2 (3, 1). */
static void test_paper_table1(void **state)
{
	const uint32_t offset[] = { 3, 0, 3 }, skip[] = { 4, 2, 1 };
	const uint16_t before[] = { 1, 0, 1, 0, 2, 2, 0 };
	const uint32_t offset_after[] = { 3, 3 }, skip_after[] = { 4, 1 };
	const uint16_t after[] = { 0, 0, 0, 0, 1, 1, 1 };   /* B0 x4, B2 x3 */
	uint16_t slots[7];

	(void)state;
	assert_int_equal(mlv_maglev_build_perm(offset, skip, NULL, 3, 7,
					       slots), MLV_OK);
	assert_memory_equal(slots, before, sizeof(before));

	assert_int_equal(mlv_maglev_build_perm(offset_after, skip_after, NULL,
					       2, 7, slots), MLV_OK);
	assert_memory_equal(slots, after, sizeof(after));
}

/* Removing B1 by weight 0 instead: same table, B2 keeps index 2. */
static void test_paper_table1_weight0(void **state)
{
	const uint32_t offset[] = { 3, 0, 3 }, skip[] = { 4, 2, 1 };
	const uint32_t weight[] = { 1, 0, 1 };
	const uint16_t after[] = { 0, 0, 0, 0, 2, 2, 2 };
	uint16_t slots[7];

	(void)state;
	assert_int_equal(mlv_maglev_build_perm(offset, skip, weight, 3, 7,
					       slots), MLV_OK);
	assert_memory_equal(slots, after, sizeof(after));
}

/* Table 1 with weights 2:1:1, worked by hand from the turn rule in
 * docs/maglev.md (credit starts at wmax = 2, +2w per round, a turn costs 4):
 * round 1: B0 -> 3, B1 -> 0, B2 -> 4; round 2: B0 -> 1 (0 and 4 are
 * taken); round 3: B0 -> 5, B1 -> 2, B2 -> 6 (5 was just taken). */
static void test_weighted_turn_order(void **state)
{
	const uint32_t offset[] = { 3, 0, 3 }, skip[] = { 4, 2, 1 };
	const uint32_t weight[] = { 2, 1, 1 };
	const uint16_t expect[] = { 1, 0, 1, 0, 2, 0, 2 };
	uint16_t slots[7];

	(void)state;
	assert_int_equal(mlv_maglev_build_perm(offset, skip, weight, 3, 7,
					       slots), MLV_OK);
	assert_memory_equal(slots, expect, sizeof(expect));
}

/* ---- the documented format ----------------------------------------------- */

/* docs/maglev.md, "Worked example". */
static void test_worked_example_perm(void **state)
{
	static const struct {
		const char *name;
		uint32_t m, offset, skip;
	} ex[] = {
		{ "web-1", 65537, 4100, 22243 },
		{ "web-2", 65537, 55016, 53432 },
		{ "web-3", 65537, 33251, 55655 },
		{ "web-1", 251, 157, 163 },
		{ "web-2", 251, 72, 190 },
		{ "web-3", 251, 224, 117 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
		uint32_t offset, skip;

		assert_int_equal(mlv_maglev_name_perm(ex[i].name, ex[i].m,
						      &offset, &skip), MLV_OK);
		assert_int_equal(offset, ex[i].offset);
		assert_int_equal(skip, ex[i].skip);
	}
}

static void test_worked_example_fingerprint(void **state)
{
	struct mlv_maglev_backend web[] = {
		{ "web-1", 1 }, { "web-2", 1 }, { "web-3", 1 },
	};
	/* The same set in another order and a weight-0 backend: the
	 * slot -> name mapping, hence the fingerprint, is unchanged. */
	struct mlv_maglev_backend web_shuffled[] = {
		{ "web-3", 1 }, { "web-0", 0 }, { "web-1", 1 }, { "web-2", 1 },
	};
	uint16_t slots[251];
	uint32_t counts[4];
	uint64_t fp;

	(void)state;
	assert_int_equal(mlv_maglev_build(web, 3, 251, slots, &fp), MLV_OK);
	assert_int_equal(fp, 0xb37b7abbe391d6a2ULL);
	count_slots(slots, 251, 3, counts);
	assert_int_equal(counts[0], 84);
	assert_int_equal(counts[1], 84);
	assert_int_equal(counts[2], 83);

	assert_int_equal(mlv_maglev_build(web_shuffled, 4, 251, slots, &fp),
			 MLV_OK);
	assert_int_equal(fp, 0xb37b7abbe391d6a2ULL);

	web[0].weight = 2;
	assert_int_equal(mlv_maglev_build(web, 3, 251, slots, &fp), MLV_OK);
	assert_int_equal(fp, 0x6f33e1326f740918ULL);

	assert_int_equal(mlv_maglev_build(NULL, 0, 251, slots, &fp), MLV_OK);
	assert_int_equal(fp, 0xcbe30bface7c12c6ULL);
}

/* Backends without slots (weight 0) in a name-ordered input: the
 * fingerprint's fast path for it (control/tables/maglev.c, ranks_past_gaps) must
 * agree with the table-driven translation of a reversed input and with
 * the input that leaves those backends out, for a gap at the start, a few
 * spread out, and more than that path takes. */
static void test_fingerprint_gaps_name_order(void **state)
{
	enum { N = 40, M = 4099 };
	static const uint32_t gap_counts[] = { 1, 3, 16, 17, 39 };
	struct mlv_maglev_backend in_order[N], reversed[N], owners_only[N];
	char names[N][8];
	uint16_t *slots = table_new(M);

	(void)state;
	for (uint32_t i = 0; i < N; i++)
		snprintf(names[i], sizeof(names[i]), "g-%02u", i);
	for (size_t c = 0; c < sizeof(gap_counts) / sizeof(gap_counts[0]); c++) {
		uint32_t n_owners = 0;
		uint64_t fp_order, fp_reversed, fp_owners;

		for (uint32_t i = 0; i < N; i++) {
			/* gaps taken in the order 0, the odd indices, the
			 * even ones: the first at the start, then spread */
			uint32_t pos = i == 0 ? 0 : i % 2 ? (i + 1) / 2 : N / 2 + i / 2;
			bool gap = pos < gap_counts[c];

			in_order[i] = (struct mlv_maglev_backend){ names[i], gap ? 0 : 1 + i % 3 };
			reversed[N - 1 - i] = in_order[i];
			if (!gap)
				owners_only[n_owners++] = in_order[i];
		}
		assert_true(n_owners > 0 && n_owners < N);
		assert_int_equal(mlv_maglev_build(in_order, N, M, slots, &fp_order), MLV_OK);
		assert_int_equal(mlv_maglev_build(reversed, N, M, slots, &fp_reversed), MLV_OK);
		assert_int_equal(mlv_maglev_build(owners_only, n_owners, M, slots, &fp_owners),
				 MLV_OK);
		assert_int_equal(fp_order, fp_reversed);
		assert_int_equal(fp_order, fp_owners);
	}
	/* every backend a gap: every slot NO_BACKEND, as with none at all */
	{
		uint64_t fp_none, fp_empty;

		for (uint32_t i = 0; i < 4; i++)
			in_order[i] = (struct mlv_maglev_backend){ names[i], 0 };
		assert_int_equal(mlv_maglev_build(in_order, 4, M, slots, &fp_none), MLV_OK);
		assert_int_equal(mlv_maglev_build(NULL, 0, M, slots, &fp_empty), MLV_OK);
		assert_int_equal(fp_none, fp_empty);
	}
	free(slots);
}

/* ---- balance ------------------------------------------------------------- */

static void test_equal_weights_floor_ceil(void **state)
{
	static const uint32_t sizes[] = { 251, 257, 1009, 4099, 65537 };
	static const uint32_t counts_n[] = { 1, 2, 3, 5, 7, 10, 33, 100,
					     250, 251, 300, 1000 };

	(void)state;
	for (size_t a = 0; a < sizeof(sizes) / sizeof(sizes[0]); a++) {
		uint32_t m = sizes[a];
		uint16_t *slots = table_new(m);

		for (size_t b = 0; b < sizeof(counts_n) / sizeof(counts_n[0]);
		     b++) {
			uint32_t n = counts_n[b];
			struct fleet f = fleet_new(n, "node-");
			uint32_t *counts = calloc(n, sizeof(*counts));

			assert_non_null(counts);
			assert_int_equal(mlv_maglev_build(f.be, n, m, slots,
							  NULL), MLV_OK);
			assert_int_equal(count_slots(slots, m, n, counts), 0);
			for (uint32_t i = 0; i < n; i++) {
				if (counts[i] != m / n &&
				    counts[i] != (m + n - 1) / n)
					fail_msg("M=%u N=%u: backend %u owns "
						 "%u slots", m, n, i,
						 counts[i]);
			}
			free(counts);
			fleet_free(&f);
		}
		free(slots);
	}
}

static void check_shares(uint32_t m, const uint32_t *weight, uint32_t n,
			 double tolerance_pp)
{
	struct fleet f = fleet_new(n, "w-");
	uint16_t *slots = table_new(m);
	uint32_t *counts = calloc(n, sizeof(*counts));
	uint64_t wsum = 0;

	assert_non_null(counts);
	for (uint32_t i = 0; i < n; i++) {
		f.be[i].weight = weight[i];
		wsum += weight[i];
	}
	assert_int_equal(mlv_maglev_build(f.be, n, m, slots, NULL), MLV_OK);
	assert_int_equal(count_slots(slots, m, n, counts), 0);
	for (uint32_t i = 0; i < n; i++) {
		double got = 100.0 * counts[i] / m;
		double want = 100.0 * weight[i] / (double)wsum;

		if (got - want > tolerance_pp || want - got > tolerance_pp)
			fail_msg("M=%u backend %u weight %u: %.4f%% of slots, "
				 "want %.4f%%", m, i, weight[i], got, want);
	}
	free(counts);
	free(slots);
	fleet_free(&f);
}

static void test_weights_1234(void **state)
{
	const uint32_t w4[] = { 1, 2, 3, 4 };
	const uint32_t w4_big[] = { 100, 200, 300, 400 };
	const uint32_t w4_rev[] = { 4, 3, 2, 1 };

	(void)state;
	check_shares(65537, w4, 4, 0.1);
	check_shares(65537, w4_big, 4, 0.1);
	check_shares(65537, w4_rev, 4, 0.1);
	check_shares(655373, w4, 4, 0.1);
}

/* 40 backends, ten of each weight 1..4: each weight class as a whole gets
 * its 10/20/30/40 %. */
static void test_weights_1234_classes(void **state)
{
	const uint32_t m = 65537, n = 40;
	struct fleet f = fleet_new(n, "c-");
	uint16_t *slots = table_new(m);
	uint32_t counts[40], cls[4] = { 0 };

	(void)state;
	for (uint32_t i = 0; i < n; i++)
		f.be[i].weight = 1 + i % 4;
	assert_int_equal(mlv_maglev_build(f.be, n, m, slots, NULL), MLV_OK);
	count_slots(slots, m, n, counts);
	for (uint32_t i = 0; i < n; i++)
		cls[i % 4] += counts[i];
	for (uint32_t c = 0; c < 4; c++) {
		double got = 100.0 * cls[c] / m, want = 10.0 * (c + 1);

		assert_true(got - want <= 0.1 && want - got <= 0.1);
	}
	free(slots);
	fleet_free(&f);
}

/* Weights 1 and 2 at M = 65537: 65537 / 3 = 21845.67, so 21846 and 43691
 * (the turn counts are rounded to nearest). */
static void test_weights_1_2(void **state)
{
	struct mlv_maglev_backend be[] = { { "light", 1 }, { "heavy", 2 } };
	uint16_t *slots = table_new(65537);
	uint32_t counts[2];

	(void)state;
	assert_int_equal(mlv_maglev_build(be, 2, 65537, slots, NULL), MLV_OK);
	assert_int_equal(count_slots(slots, 65537, 2, counts), 0);
	assert_int_equal(counts[0], 21846);
	assert_int_equal(counts[1], 43691);
	free(slots);
}

/* One heavy backend among many light ones takes the heap path. The light
 * ones, all of one weight, differ by at most one slot; the heavy one is
 * within 1 % of its ideal share. */
static void test_weights_skewed(void **state)
{
	const uint32_t m = 65537, n = 500;
	struct fleet f = fleet_new(n, "s-");
	uint16_t *slots = table_new(m);
	uint32_t counts[500], lo = UINT32_MAX, hi = 0;
	double ideal = (double)m * 1000 / (1000 + n - 1);

	(void)state;
	f.be[7].weight = 1000;
	assert_int_equal(mlv_maglev_build(f.be, n, m, slots, NULL), MLV_OK);
	assert_int_equal(count_slots(slots, m, n, counts), 0);
	for (uint32_t i = 0; i < n; i++) {
		if (i == 7)
			continue;
		lo = counts[i] < lo ? counts[i] : lo;
		hi = counts[i] > hi ? counts[i] : hi;
	}
	assert_true(hi - lo <= 1);
	assert_true(counts[7] > ideal * 0.99 && counts[7] < ideal * 1.01);
	free(slots);
	fleet_free(&f);
}

/* ---- identity and order -------------------------------------------------- */

static void test_order_independence(void **state)
{
	const uint32_t m = 65537, n = 200;
	struct fleet f = fleet_new(n, "backend-");
	struct mlv_maglev_backend *sorted = calloc(n, sizeof(*sorted));
	uint16_t *base = table_new(m), *other = table_new(m);
	uint64_t seed = 42, fp_base, fp;

	(void)state;
	assert_non_null(sorted);
	for (uint32_t i = 0; i < n; i++)
		f.be[i].weight = 1 + i % 7;
	assert_int_equal(mlv_maglev_build(f.be, n, m, base, &fp_base), MLV_OK);
	for (int round = 0; round < 5; round++) {
		shuffle(f.be, n, &seed);
		assert_int_equal(mlv_maglev_build(f.be, n, m, other, &fp),
				 MLV_OK);
		assert_int_equal(fp, fp_base);
		/* base was built from index order, i.e. the names array */
		for (uint32_t j = 0; j < m; j++)
			assert_string_equal(f.be[other[j]].name,
					    f.names[base[j]]);
	}

	/* Sorted by name, two arrays holding different copies of the names
	 * give byte-identical tables. */
	memcpy(sorted, f.be, n * sizeof(*sorted));
	for (uint32_t i = 1; i < n; i++) {
		struct mlv_maglev_backend key = sorted[i];
		uint32_t k = i;

		while (k > 0 && strcmp(sorted[k - 1].name, key.name) > 0) {
			sorted[k] = sorted[k - 1];
			k--;
		}
		sorted[k] = key;
	}
	/* name order: the fingerprint hashes the slot array as it is
	 * (control/tables/maglev.c); it must equal the translated one of any other
	 * order */
	assert_int_equal(mlv_maglev_build(sorted, n, m, base, &fp), MLV_OK);
	assert_int_equal(fp, fp_base);
	assert_int_equal(mlv_maglev_build(sorted, n, m, base, &fp_base),
			 MLV_OK);
	for (uint32_t i = 0; i < n; i++)
		sorted[i].name = strdup(sorted[i].name);
	assert_int_equal(mlv_maglev_build(sorted, n, m, other, &fp), MLV_OK);
	assert_memory_equal(base, other, m * sizeof(*base));
	assert_int_equal(fp, fp_base);
	for (uint32_t i = 0; i < n; i++)
		free((char *)sorted[i].name);

	free(sorted);
	free(base);
	free(other);
	fleet_free(&f);
}

/* Random sets (names, weights incl. 0, sizes) against the straightforward
 * reference: the optimised walk, the end-game scan, and all three turn
 * schedulers must not change a single slot. */
static void test_matches_reference(void **state)
{
	static const uint32_t sizes[] = { 251, 1009, 65537, 655373 };
	uint64_t seed = 7;

	(void)state;
	for (int round = 0; round < 24; round++) {
		uint32_t m = sizes[round % 4];
		uint32_t n = (uint32_t)(rnd(&seed) % 300);
		struct fleet f = fleet_new(n, "r-");
		uint16_t *ours = table_new(m), *ref = table_new(m);
		uint32_t style = (uint32_t)(rnd(&seed) % 4);

		for (uint32_t i = 0; i < n; i++) {
			snprintf(f.names[i], FLEET_NAME_LEN, "%llx",
				 (unsigned long long)rnd(&seed));
			f.be[i].weight =
				style == 0 ? 1
				: style == 1 ? (uint32_t)(rnd(&seed) % 5)
				: style == 2 ? 1 + (uint32_t)(rnd(&seed) % 3)
				: (i == 0 ? MLV_MAGLEV_MAX_WEIGHT : 1);
		}
		assert_int_equal(mlv_maglev_build(f.be, n, m, ours, NULL),
				 MLV_OK);
		assert_int_equal(mlv_ref_maglev_build(f.be, n, m, ref), MLV_OK);
		assert_memory_equal(ours, ref, m * sizeof(*ours));
		free(ours);
		free(ref);
		fleet_free(&f);
	}
}

/* docs/maglev.md "Turn order and filling", written out as plainly as
 * possible, for explicit permutations. */
static void spec_fill(const uint32_t *offset, const uint32_t *skip,
		      const uint32_t *weight, uint32_t n, uint32_t m,
		      uint16_t *slots)
{
	uint64_t credit[64], next[64];
	uint32_t wmax = 0, filled = 0;

	assert_true(n <= 64);
	for (uint32_t i = 0; i < n; i++)
		wmax = weight[i] > wmax ? weight[i] : wmax;
	for (uint32_t j = 0; j < m; j++)
		slots[j] = MLV_MAGLEV_NO_BACKEND;
	for (uint32_t i = 0; i < n; i++) {
		credit[i] = wmax;
		next[i] = 0;
	}
	while (wmax > 0 && filled < m) {
		for (uint32_t i = 0; i < n && filled < m; i++) {
			uint64_t c;

			if (weight[i] == 0)
				continue;
			credit[i] += 2 * weight[i];
			if (credit[i] < 2 * (uint64_t)wmax)
				continue;
			credit[i] -= 2 * (uint64_t)wmax;
			c = (offset[i] + next[i] * skip[i]) % m;
			while (slots[c] != MLV_MAGLEV_NO_BACKEND)
				c = (offset[i] + ++next[i] * skip[i]) % m;
			slots[c] = (uint16_t)i;
			next[i]++;
			filled++;
		}
	}
}

/* Explicit permutations on small and odd sizes (m below the 8-entry probe
 * window, m = 2, more backends than slots, zero weights, skewed weights)
 * against the plain loop above. */
static void test_build_perm_small_sizes(void **state)
{
	static const uint32_t sizes[] = { 2, 3, 5, 7, 11, 13, 17, 31, 61, 97,
					  251, 1009 };
	uint64_t seed = 99;

	(void)state;
	for (size_t a = 0; a < sizeof(sizes) / sizeof(sizes[0]); a++) {
		uint32_t m = sizes[a];

		for (int round = 0; round < 40; round++) {
			uint32_t n = 1 + (uint32_t)(rnd(&seed) % 64);
			uint32_t offset[64], skip[64], weight[64];
			uint16_t ours[1009], want[1009];

			for (uint32_t i = 0; i < n; i++) {
				offset[i] = (uint32_t)(rnd(&seed) % m);
				skip[i] = 1 + (uint32_t)(rnd(&seed) % (m - 1));
				weight[i] = round % 4 == 0 ? 1
					  : round % 4 == 1
						  ? (uint32_t)(rnd(&seed) % 4)
					  : round % 4 == 2
						  ? 1 + (uint32_t)(rnd(&seed) % 9)
						  : (i == 0 ? 5000 : 1);
			}
			assert_int_equal(mlv_maglev_build_perm(offset, skip,
							       weight, n, m,
							       ours), MLV_OK);
			spec_fill(offset, skip, weight, n, m, want);
			assert_memory_equal(ours, want, m * sizeof(*ours));
		}
	}
}

/* A reused builder, grown and shrunk, gives the one-shot result. */
static void test_builder_reuse(void **state)
{
	static const struct { uint32_t m, n; } seq[] = {
		{ 655373, 1000 }, { 251, 3 }, { 65537, 100 }, { 251, 0 },
		{ 1009, 2000 },
	};
	struct mlv_maglev_builder *b;

	(void)state;
	assert_int_equal(mlv_maglev_builder_new(&b), MLV_OK);
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		struct fleet f = fleet_new(seq[i].n, "reuse-");
		uint16_t *one = table_new(seq[i].m), *re = table_new(seq[i].m);
		uint64_t fp_one, fp_re;

		assert_int_equal(mlv_maglev_build(f.be, f.n, seq[i].m, one,
						  &fp_one), MLV_OK);
		assert_int_equal(mlv_maglev_builder_build(b, f.be, f.n,
							  seq[i].m, re, &fp_re),
				 MLV_OK);
		assert_memory_equal(one, re, seq[i].m * sizeof(*one));
		assert_int_equal(fp_one, fp_re);
		free(one);
		free(re);
		fleet_free(&f);
	}
	mlv_maglev_builder_free(b);
	mlv_maglev_builder_free(NULL);
}

/* ---- edge cases ---------------------------------------------------------- */

static void test_no_backends(void **state)
{
	uint16_t *slots = table_new(65537);
	struct mlv_maglev_backend idle[] = { { "a", 0 }, { "b", 0 } };
	uint64_t fp_empty, fp_idle;

	(void)state;
	assert_int_equal(mlv_maglev_build(NULL, 0, 65537, slots, &fp_empty),
			 MLV_OK);
	for (uint32_t j = 0; j < 65537; j++)
		assert_int_equal(slots[j], MLV_MAGLEV_NO_BACKEND);
	/* All weights 0: known backends, no slots, same (empty) mapping. */
	assert_int_equal(mlv_maglev_build(idle, 2, 65537, slots, &fp_idle),
			 MLV_OK);
	for (uint32_t j = 0; j < 65537; j++)
		assert_int_equal(slots[j], MLV_MAGLEV_NO_BACKEND);
	assert_int_equal(fp_idle, fp_empty);
	free(slots);
}

static void test_one_backend(void **state)
{
	struct mlv_maglev_backend solo[] = { { "solo", 3 } };
	uint16_t *slots = table_new(65537);
	uint64_t fp_solo, fp_other;

	(void)state;
	assert_int_equal(mlv_maglev_build(solo, 1, 65537, slots, &fp_solo),
			 MLV_OK);
	for (uint32_t j = 0; j < 65537; j++)
		assert_int_equal(slots[j], 0);
	solo[0].name = "other";
	assert_int_equal(mlv_maglev_build(solo, 1, 65537, slots, &fp_other),
			 MLV_OK);
	assert_int_not_equal(fp_solo, fp_other);   /* the name matters */
	free(slots);
}

static void test_weight_zero(void **state)
{
	const uint32_t m = 4099, n = 20;
	struct fleet f = fleet_new(n, "z-");
	struct fleet g = fleet_new(n, "z-");
	uint16_t *with = table_new(m), *without = table_new(m);
	uint32_t counts[20];
	uint64_t fp_with, fp_without;

	(void)state;
	f.be[5].weight = 0;
	assert_int_equal(mlv_maglev_build(f.be, n, m, with, &fp_with), MLV_OK);
	assert_int_equal(count_slots(with, m, n, counts), 0);
	assert_int_equal(counts[5], 0);
	/* Same as not listing it at all. */
	g.be[5] = g.be[n - 1];
	assert_int_equal(mlv_maglev_build(g.be, n - 1, m, without,
					  &fp_without), MLV_OK);
	assert_int_equal(slots_moved(f.be, with, g.be, without, m), 0);
	assert_int_equal(fp_with, fp_without);
	free(with);
	free(without);
	fleet_free(&f);
	fleet_free(&g);
}

static void test_bad_input(void **state)
{
	struct mlv_maglev_backend dup[] = { { "a", 1 }, { "b", 1 }, { "a", 2 } };
	struct mlv_maglev_backend null_name[] = { { "a", 1 }, { NULL, 1 } };
	struct mlv_maglev_backend empty_name[] = { { "", 1 } };
	struct mlv_maglev_backend heavy[] = {
		{ "a", MLV_MAGLEV_MAX_WEIGHT + 1 },
	};
	struct mlv_maglev_backend ok[] = { { "a", 1 } };
	const uint32_t offset[] = { 0 }, skip[] = { 1 }, zero[] = { 0 };
	const uint32_t big_off[] = { 7 }, big_skip[] = { 7 };
	uint16_t *slots = table_new(65537);
	uint32_t o, k;
	uint64_t fp;

	(void)state;
	assert_int_equal(mlv_maglev_build(dup, 3, 251, slots, &fp),
			 MLV_E_INVAL);
	assert_int_equal(mlv_maglev_build(null_name, 2, 251, slots, &fp),
			 MLV_E_INVAL);
	assert_int_equal(mlv_maglev_build(empty_name, 1, 251, slots, &fp),
			 MLV_E_INVAL);
	assert_int_equal(mlv_maglev_build(heavy, 1, 251, slots, &fp),
			 MLV_E_INVAL);
	assert_int_equal(mlv_maglev_build(ok, 1, 250, slots, &fp),
			 MLV_E_INVAL);   /* below the minimum size */
	assert_int_equal(mlv_maglev_build(ok, 1, 65536, slots, &fp),
			 MLV_E_INVAL);   /* not prime */
	assert_int_equal(mlv_maglev_build(ok, 1, 5000012, slots, &fp),
			 MLV_E_INVAL);
	assert_int_equal(mlv_maglev_build(ok, 1, 251, NULL, &fp),
			 MLV_E_INVAL);
	assert_int_equal(mlv_maglev_build(NULL, 1, 251, slots, &fp),
			 MLV_E_INVAL);
	/* Rejected on the count alone, before the array is read. */
	assert_int_equal(mlv_maglev_build(ok, MLV_MAGLEV_MAX_BACKENDS + 1, 251,
					  slots, &fp), MLV_E_INVAL);
	assert_int_equal(mlv_maglev_builder_build(NULL, ok, 1, 251, slots,
						  &fp), MLV_E_INVAL);
	assert_int_equal(mlv_maglev_builder_new(NULL), MLV_E_INVAL);

	/* Explicit permutations: offset < m, 1 <= skip < m, m prime. */
	assert_int_equal(mlv_maglev_build_perm(big_off, skip, NULL, 1, 7,
					       slots), MLV_E_INVAL);
	assert_int_equal(mlv_maglev_build_perm(offset, big_skip, NULL, 1, 7,
					       slots), MLV_E_INVAL);
	assert_int_equal(mlv_maglev_build_perm(offset, zero, NULL, 1, 7,
					       slots), MLV_E_INVAL);
	assert_int_equal(mlv_maglev_build_perm(offset, skip, NULL, 1, 8,
					       slots), MLV_E_INVAL);
	assert_int_equal(mlv_maglev_build_perm(NULL, skip, NULL, 1, 7,
					       slots), MLV_E_INVAL);

	assert_int_equal(mlv_maglev_name_perm(NULL, 251, &o, &k),
			 MLV_E_INVAL);
	assert_int_equal(mlv_maglev_name_perm("", 251, &o, &k), MLV_E_INVAL);
	assert_int_equal(mlv_maglev_name_perm("a", 1, &o, &k), MLV_E_INVAL);
	assert_int_equal(mlv_maglev_name_perm("a", 251, NULL, &k),
			 MLV_E_INVAL);
	free(slots);
}

/* ---- sizes --------------------------------------------------------------- */

static void test_is_prime_against_sieve(void **state)
{
	enum { LIMIT = 100000 };
	static bool composite[LIMIT];

	(void)state;
	composite[0] = composite[1] = true;
	for (uint32_t i = 2; (uint64_t)i * i < LIMIT; i++)
		if (!composite[i])
			for (uint32_t j = i * i; j < LIMIT; j += i)
				composite[j] = true;
	for (uint32_t i = 0; i < LIMIT; i++)
		if (mlv_is_prime(i) == composite[i])
			fail_msg("mlv_is_prime(%u) is wrong", i);
	/* Largest 32-bit prime, and its composite neighbours. */
	assert_true(mlv_is_prime(4294967291u));
	assert_false(mlv_is_prime(4294967293u));
	assert_false(mlv_is_prime(UINT32_MAX));
}

static void test_sizes(void **state)
{
	uint32_t below, above;

	(void)state;
	assert_int_equal(mlv_maglev_check_size(MLV_MAGLEV_DEFAULT_SIZE),
			 MLV_OK);
	assert_int_equal(mlv_maglev_check_size(MLV_MAGLEV_MIN_SIZE), MLV_OK);
	assert_int_equal(mlv_maglev_check_size(MLV_MAGLEV_MAX_SIZE), MLV_OK);
	assert_int_equal(mlv_maglev_check_size(655373), MLV_OK);
	assert_int_equal(mlv_maglev_check_size(65536), MLV_E_INVAL);
	assert_int_equal(mlv_maglev_check_size(65535), MLV_E_INVAL);
	assert_int_equal(mlv_maglev_check_size(250), MLV_E_RANGE);
	assert_int_equal(mlv_maglev_check_size(241), MLV_E_RANGE);   /* prime */
	assert_int_equal(mlv_maglev_check_size(5000012), MLV_E_RANGE);
	assert_int_equal(mlv_maglev_check_size(0), MLV_E_RANGE);

	mlv_nearest_primes(65536, &below, &above);
	assert_int_equal(below, 65521);
	assert_int_equal(above, 65537);
	mlv_nearest_primes(65537, &below, &above);
	assert_int_equal(below, 65537);
	assert_int_equal(above, 65537);
	mlv_nearest_primes(1000000, &below, &above);
	assert_int_equal(below, 999983);
	assert_int_equal(above, 1000003);
	mlv_nearest_primes(1, &below, &above);
	assert_int_equal(below, 0);
	assert_int_equal(above, 2);
	mlv_nearest_primes(UINT32_MAX, &below, &above);
	assert_int_equal(below, 4294967291u);
	assert_int_equal(above, 0);
	mlv_nearest_primes(10, NULL, &above);     /* either may be NULL */
	assert_int_equal(above, 11);
}

/* ---- disruption ---------------------------------------------------------- */

/* Removing 1 of 100 equal backends at M = 65537: its 1 % of slots must
 * move (the optimum); Maglev moves a little more (the paper: about 1.6 %);
 * the requirement is at most 2 %. */
static void test_disruption_remove_one_of_100(void **state)
{
	const uint32_t m = 65537, n = 100;
	struct fleet f = fleet_new(n, "backend-");
	uint16_t *before = table_new(m), *after = table_new(m);
	uint32_t moved;
	double fraction;

	(void)state;
	assert_int_equal(mlv_maglev_build(f.be, n, m, before, NULL), MLV_OK);
	f.be[37] = f.be[n - 1];
	assert_int_equal(mlv_maglev_build(f.be, n - 1, m, after, NULL),
			 MLV_OK);
	/* after[] indexes the shortened array: compare by name via names[] */
	moved = 0;
	for (uint32_t j = 0; j < m; j++)
		moved += strcmp(f.names[before[j]], f.be[after[j]].name) != 0;
	fraction = (double)moved / m;
	print_message("removing 1 of 100 backends moved %u of %u slots "
		      "(%.3f %%)\n", moved, m, 100 * fraction);
	assert_true(fraction > 0.01);
	assert_true(fraction <= 0.02);
	free(before);
	free(after);
	fleet_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paper_table1),
		cmocka_unit_test(test_paper_table1_weight0),
		cmocka_unit_test(test_weighted_turn_order),
		cmocka_unit_test(test_worked_example_perm),
		cmocka_unit_test(test_worked_example_fingerprint),
		cmocka_unit_test(test_fingerprint_gaps_name_order),
		cmocka_unit_test(test_equal_weights_floor_ceil),
		cmocka_unit_test(test_weights_1234),
		cmocka_unit_test(test_weights_1234_classes),
		cmocka_unit_test(test_weights_1_2),
		cmocka_unit_test(test_weights_skewed),
		cmocka_unit_test(test_order_independence),
		cmocka_unit_test(test_matches_reference),
		cmocka_unit_test(test_build_perm_small_sizes),
		cmocka_unit_test(test_builder_reuse),
		cmocka_unit_test(test_no_backends),
		cmocka_unit_test(test_one_backend),
		cmocka_unit_test(test_weight_zero),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_is_prime_against_sieve),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_disruption_remove_one_of_100),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
