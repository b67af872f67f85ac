/* SPDX-License-Identifier: BSD-3-Clause */
/* Maglev through the table-builder interface: first choices are exactly
 * mlv_maglev_build's table (control/tables/maglev.c, docs/maglev.md); this file
 * adds the second choices.
 *
 * The exact runner-up (the owner slot j would get if its first choice
 * were removed) needs one rebuild per backend. Instead maglevd uses
 * Maglev's own preference order: backend b reaches slot j at step
 * r_b(j) of its permutation (offset + r * skip = j mod M), and a backend
 * of weight w takes w turns per unit of time, so it would reach j at time
 * (r_b(j) + 1) / w. The second choice of j is the eligible backend other
 * than the owner that reaches j first (ties: name order). It is found by
 * walking all eligible permutations together in time order until every
 * slot has met a non-owner: about M ln M steps whatever N is, instead of
 * M x N. docs/table-builders.md has the rule and how often it agrees with
 * the rebuilt table.
 *
 * Where the walk's time goes, and what is done about it (the second
 * choices of a table at M = 65537, 100 equal weights, take 0.85-1.0 ms
 * with these measures and 2.5 ms without: hash-compare --quick,
 * docs/benchmarks.md "Control plane" and docs/perf-history.md "Results:
 * distinct backend sets"):
 *  - coupon collecting: the last slots to meet a non-owner take most of
 *    the M ln M visits. Once few are left (left x lanes <= M), each is
 *    settled directly: for every lane, the step r at which it reaches the
 *    slot is (slot - offset) / skip mod M, one multiplication (end_game);
 *  - equal weights (the usual case): every lane makes exactly one visit
 *    per window, in name order, so the first non-owner to reach a slot
 *    wins and the window needs no best-so-far state: second[] itself,
 *    preset to "none", marks the settled slots, updated without a branch
 *    (whether a visit settles a slot is a coin toss) (walk_equal);
 *  - unequal weights: a separate "settled" byte map is not needed either,
 *    second[] marks them; best[] keeps the window's candidates.
 */
#include "control/tables/builder.h"

#include <stdlib.h>
#include <string.h>

#include "control/tables/mod_arith_internal.h"

/* One eligible backend's walk along its permutation. */
struct lane {
	uint32_t turn;       /* steps taken so far: next visit is step turn */
	uint32_t pos;        /* permutation[turn] */
	uint32_t skip;
	uint32_t weight;
	uint32_t rank;       /* name order, for ties */
	uint16_t index;      /* caller index */
	uint32_t offset;     /* permutation[0] */
	uint32_t inv_skip;   /* skip^-1 mod M, for end_game */
};

/* The best non-owner visit of a slot seen so far. */
struct visit {
	uint32_t turn1;      /* turn + 1; 0 = none yet */
	uint32_t lane;
};

/* Visit (turn1, lane a) comes before visit (best.turn1, lane b): time
 * turn1 / weight, exactly in integers (turn1 <= M <= 5000011, weight <=
 * 10^6: < 2^43), then name order. */
static inline bool before(const struct lane *lanes, uint32_t turn1,
			  uint32_t a, struct visit best)
{
	uint64_t ta = (uint64_t)turn1 * lanes[best.lane].weight;
	uint64_t tb = (uint64_t)best.turn1 * lanes[a].weight;

	return ta != tb ? ta < tb : lanes[a].rank < lanes[best.lane].rank;
}

/* Few slots are left: the walk would spend about M / left visits on each,
 * settling one directly costs one step computation per lane. */
static inline bool end_game_due(uint32_t left, uint32_t n_lanes, uint32_t m)
{
	return (uint64_t)left * n_lanes <= m;
}

/* Settle every slot still NONE in second[] by the rule itself: the lane
 * other than the owner with the earliest (r + 1) / weight, r its step to
 * the slot, ties by name. Exact whatever the walk settled before: a slot
 * is only settled by a walk window once no earlier visit can exist. */
static void end_game(struct lane *lanes, uint32_t n_lanes, uint32_t m,
		     const uint16_t *first, uint16_t *second)
{
	uint64_t barrett = mlv_barrett(m);

	for (uint32_t a = 0; a < n_lanes; a++)
		lanes[a].inv_skip = mlv_inverse_mod(lanes[a].skip, m);
	for (uint32_t p = 0; p < m; p++) {
		struct visit best = { 0, 0 };

		if (second[p] != MLV_MAGLEV_NO_BACKEND)
			continue;
		for (uint32_t a = 0; a < n_lanes; a++) {
			const struct lane *l = &lanes[a];
			uint32_t r;

			if (first[p] == l->index)
				continue;
			r = mlv_mul_mod(mlv_add_mod(p, m - l->offset, m),
					l->inv_skip, m, barrett);
			if (best.turn1 == 0 || before(lanes, r + 1, a, best))
				best = (struct visit){ r + 1, a };
		}
		second[p] = lanes[best.lane].index;
	}
}

/* Equal weights: one visit per lane per window, lanes in name order, so a
 * slot's first non-owner visitor is its second choice. Stops for the end
 * game at a window boundary. */
static void walk_equal(struct lane *lanes, uint32_t n_lanes, uint32_t m,
		       const uint16_t *first, uint16_t *second)
{
	uint32_t left = m;

	while (!end_game_due(left, n_lanes, m)) {
		for (uint32_t a = 0; a < n_lanes; a++) {
			struct lane *l = &lanes[a];
			uint32_t p = l->pos;
			uint16_t had = second[p];
			/* half the visits settle a slot, at random: a branch
			 * here mispredicts on most of them */
			bool settle = (had == MLV_MAGLEV_NO_BACKEND) &
				      (first[p] != l->index);

			second[p] = settle ? l->index : had;
			left -= settle;
			l->pos = mlv_add_mod(p, l->skip, m);
		}
	}
}

/* Unequal weights. Time advances in windows of one turn of the lightest
 * lane: within a window every lane makes all the visits that fall in it
 * (in any order, keeping each slot's earliest), and a slot that met a
 * non-owner in a window is final, since every later visit is later in
 * time. Same result as visiting in strict time order, without a priority
 * queue. */
static enum mlv_err walk_weighted(struct lane *lanes, uint32_t n_lanes,
				  uint32_t m, const uint16_t *first,
				  uint16_t *second)
{
	struct visit *best = calloc(m, sizeof(*best));
	uint32_t *touched = malloc(m * sizeof(*touched));
	uint32_t wmin = UINT32_MAX, left = m;

	if (!best || !touched) {
		free(best);
		free(touched);
		return MLV_E_NOMEM;
	}
	for (uint32_t i = 0; i < n_lanes; i++)
		if (lanes[i].weight < wmin)
			wmin = lanes[i].weight;
	/* A window costs O(lanes + its visits); the end game comes before
	 * the M windows in which every lane passes every slot. */
	for (uint64_t win = 1; !end_game_due(left, n_lanes, m); win++) {
		uint32_t n_touched = 0;

		for (uint32_t a = 0; a < n_lanes; a++) {
			struct lane *l = &lanes[a];

			/* turns whose time (turn + 1) / weight <= win / wmin */
			while ((uint64_t)(l->turn + 1) * wmin <=
			       win * l->weight && l->turn < m) {
				uint32_t p = l->pos;

				if (second[p] == MLV_MAGLEV_NO_BACKEND &&
				    first[p] != l->index) {
					if (best[p].turn1 == 0)
						touched[n_touched++] = p;
					if (best[p].turn1 == 0 ||
					    before(lanes, l->turn + 1, a, best[p]))
						best[p] = (struct visit){
							l->turn + 1, a };
				}
				l->turn++;
				l->pos = mlv_add_mod(p, l->skip, m);
			}
		}
		for (uint32_t t = 0; t < n_touched; t++) {
			uint32_t p = touched[t];

			second[p] = lanes[best[p].lane].index;
		}
		left -= n_touched;
	}
	free(best);
	free(touched);
	return MLV_OK;
}

/* second[] for n_lanes >= 2 eligible lanes. */
static enum mlv_err walk(struct lane *lanes, uint32_t n_lanes, uint32_t m,
			 const uint16_t *first, uint16_t *second)
{
	bool equal = true;
	enum mlv_err err = MLV_OK;

	for (uint32_t a = 1; a < n_lanes; a++)
		equal &= lanes[a].weight == lanes[0].weight;
	memset(second, 0xff, (size_t)m * sizeof(*second));
	if (equal)
		walk_equal(lanes, n_lanes, m, first, second);
	else
		err = walk_weighted(lanes, n_lanes, m, first, second);
	if (!err)
		end_game(lanes, n_lanes, m, first, second);
	return err;
}

static enum mlv_err maglev_second(const struct mlv_table_input *in,
				  const uint16_t *first, uint16_t *second)
{
	uint32_t m = in->spec->size, n_lanes = 0;
	struct lane *lanes = malloc((in->n ? in->n : 1) * sizeof(*lanes));
	enum mlv_err err = MLV_OK;

	if (!lanes)
		return MLV_E_NOMEM;
	for (uint32_t r = 0; r < in->n; r++) {
		uint32_t i = in->by_name[r];
		const struct mlv_table_backend *b = &in->backends[i];
		uint32_t offset, skip;

		if (b->weight == 0 || b->no_second)
			continue;
		err = mlv_maglev_name_perm(b->name, m, &offset, &skip);
		if (err)
			goto out;
		lanes[n_lanes++] = (struct lane){
			.pos = offset, .skip = skip, .weight = b->weight,
			.rank = r, .index = (uint16_t)i, .offset = offset,
		};
	}
	if (n_lanes >= 2) {
		err = walk(lanes, n_lanes, m, first, second);
	} else {
		/* none, or one: it is every slot's second choice but its own */
		for (uint32_t j = 0; j < m; j++)
			second[j] = n_lanes == 1 && first[j] != lanes[0].index
					    ? lanes[0].index : MLV_MAGLEV_NO_BACKEND;
	}
out:
	free(lanes);
	return err;
}

static enum mlv_err maglev_build(const struct mlv_table_input *in,
				 uint16_t *first, uint16_t *second)
{
	struct mlv_maglev_backend *mb = malloc((in->n ? in->n : 1) * sizeof(*mb));
	enum mlv_err err;

	if (!mb)
		return MLV_E_NOMEM;
	for (uint32_t i = 0; i < in->n; i++)
		mb[i] = (struct mlv_maglev_backend){ in->backends[i].name,
						     in->backends[i].weight };
	err = mlv_maglev_build(mb, in->n, in->spec->size, first, NULL);
	free(mb);
	if (err || !second)
		return err;
	return maglev_second(in, first, second);
}

const struct mlv_table_ops mlv_table_maglev_ops = {
	.kind = MLV_TABLE_MAGLEV,
	.name = "maglev",
	.build = maglev_build,
	.second = maglev_second,
};
