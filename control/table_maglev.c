/* Maglev through the table-builder interface: first choices are exactly
 * mlv_maglev_build's table (control/maglev.c, docs/maglev.md); this file
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
 */
#include "table_builder.h"

#include <stdlib.h>

/* One eligible backend's walk along its permutation. */
struct lane {
	uint32_t turn;       /* steps taken so far: next visit is step turn */
	uint32_t pos;        /* permutation[turn] */
	uint32_t skip;
	uint32_t weight;
	uint32_t rank;       /* name order, for ties */
	uint16_t index;      /* caller index */
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

/* second[] for n_lanes >= 2 eligible lanes. Time advances in windows of
 * one turn of the lightest lane: within a window every lane makes all the
 * visits that fall in it (in any order, keeping each slot's earliest),
 * and a slot that met a non-owner in a window is final, since every later
 * visit is later in time. Same result as visiting in strict time order,
 * without a priority queue. */
static enum mlv_err walk(struct lane *lanes, uint32_t n_lanes, uint32_t m,
			 const uint16_t *first, uint16_t *second)
{
	struct visit *best = calloc(m, sizeof(*best));
	uint32_t *touched = malloc(m * sizeof(*touched));
	uint8_t *done = calloc(m, 1);
	uint32_t wmin = UINT32_MAX, left = m;

	if (!best || !touched || !done) {
		free(best);
		free(touched);
		free(done);
		return MLV_E_NOMEM;
	}
	for (uint32_t i = 0; i < n_lanes; i++)
		if (lanes[i].weight < wmin)
			wmin = lanes[i].weight;
	/* Ends within M windows: every lane, the lightest included, passes
	 * every slot within M turns, and some lane other than a slot's owner
	 * exists (n_lanes >= 2). A window costs O(lanes + its visits). */
	for (uint64_t win = 1; left > 0; win++) {
		uint32_t n_touched = 0;

		for (uint32_t a = 0; a < n_lanes; a++) {
			struct lane *l = &lanes[a];

			/* turns whose time (turn + 1) / weight <= win / wmin */
			while ((uint64_t)(l->turn + 1) * wmin <=
			       win * l->weight && l->turn < m) {
				uint32_t p = l->pos;

				if (!done[p] && first[p] != l->index) {
					if (best[p].turn1 == 0)
						touched[n_touched++] = p;
					if (best[p].turn1 == 0 ||
					    before(lanes, l->turn + 1, a, best[p]))
						best[p] = (struct visit){
							l->turn + 1, a };
				}
				l->turn++;
				l->pos = p + l->skip >= m ? p + l->skip - m
							  : p + l->skip;
			}
		}
		for (uint32_t t = 0; t < n_touched; t++) {
			uint32_t p = touched[t];

			second[p] = lanes[best[p].lane].index;
			done[p] = 1;
		}
		left -= n_touched;
	}
	free(best);
	free(touched);
	free(done);
	return MLV_OK;
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
			.rank = r, .index = (uint16_t)i,
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
};
