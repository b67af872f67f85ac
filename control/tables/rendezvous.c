/* SPDX-License-Identifier: BSD-3-Clause */
/* Rendezvous (highest random weight) tables: slot j goes to the backend
 * with the best score for j; weighted by the logarithmic method
 * (Schindelhauer & Schomaker, SPAA 2005): score = -ln(u) / w, lowest
 * wins, with u in (0,1) from a fixed hash of (backend name, slot). Then
 * P(b wins) = w_b / sum(w) exactly, and removing a backend moves only its
 * own slots (every other slot's minimum is unchanged); adding one moves
 * slots only to it. The second choice is the winner among the eligible
 * backends once the first is left out. Rules: docs/table-builders.md.
 *
 * Cost: M x N hashes. Backends are grouped by weight: within a group the
 * larger u is the lower score, so only each group's leaders need a
 * logarithm (none at all when every weight is equal).
 */
#include "control/tables/builder.h"

#include <math.h>
#include <stdlib.h>

#include "control/tables/hash_internal.h"

/* docs/table-builders.md, "Hashes": the rendezvous name key. */
static const struct mlv_siphash_key key_rendezvous = MLV_TABLE_KEY('r', '1');

/* A candidate for a slot: 52-bit u numerator and member position. */
struct cand {
	uint64_t u52;
	uint32_t m;              /* member, or UINT32_MAX for none */
};

#define NO_CAND ((struct cand){ 0, UINT32_MAX })

/* Backends that take part (weight > 0), grouped by weight, each group in
 * name order. */
struct hrw_set {
	uint32_t n;              /* members */
	uint32_t n_groups;
	uint64_t *h;             /* name hash, by member */
	uint32_t *rank;          /* position in name order (ties: lower wins) */
	uint16_t *index;         /* caller index */
	uint8_t *eligible;       /* may be a second choice */
	uint32_t *group_start;   /* n_groups + 1 member offsets */
	double *group_weight;
	struct cand *lead;       /* scratch: 2 per group, see hrw_slot */
};

static void set_free(struct hrw_set *s)
{
	free(s->h);
	free(s->rank);
	free(s->index);
	free(s->eligible);
	free(s->group_start);
	free(s->group_weight);
	free(s->lead);
}

struct member_key {
	uint32_t weight;
	uint32_t rank;
	uint32_t index;
};

static int by_weight_then_rank(const void *a, const void *b)
{
	const struct member_key *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight < y->weight ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static enum mlv_err set_init(const struct mlv_table_input *in,
			     struct hrw_set *s)
{
	struct member_key *keys = malloc((in->n ? in->n : 1) * sizeof(*keys));
	size_t cap = in->n ? in->n : 1;
	uint32_t n = 0;

	*s = (struct hrw_set){ 0 };
	s->h = malloc(cap * sizeof(*s->h));
	s->rank = malloc(cap * sizeof(*s->rank));
	s->index = malloc(cap * sizeof(*s->index));
	s->eligible = malloc(cap * sizeof(*s->eligible));
	s->group_start = malloc((cap + 1) * sizeof(*s->group_start));
	s->group_weight = malloc(cap * sizeof(*s->group_weight));
	s->lead = malloc(2 * cap * sizeof(*s->lead));
	if (!keys || !s->h || !s->rank || !s->index || !s->eligible ||
	    !s->group_start || !s->group_weight || !s->lead) {
		free(keys);
		set_free(s);
		return MLV_E_NOMEM;
	}
	for (uint32_t k = 0; k < in->n; k++) {
		uint32_t i = in->by_name[k];

		if (in->backends[i].weight > 0)
			keys[n++] = (struct member_key){
				in->backends[i].weight, k, i };
	}
	qsort(keys, n, sizeof(*keys), by_weight_then_rank);
	for (uint32_t m = 0; m < n; m++) {
		const struct mlv_table_backend *b = &in->backends[keys[m].index];

		s->h[m] = mlv_table_name_hash(&key_rendezvous, b->name);
		s->rank[m] = keys[m].rank;
		s->index[m] = (uint16_t)keys[m].index;
		s->eligible[m] = !b->no_second;
		if (m == 0 || keys[m].weight != keys[m - 1].weight) {
			s->group_start[s->n_groups] = m;
			s->group_weight[s->n_groups++] = keys[m].weight;
		}
	}
	s->group_start[s->n_groups] = n;
	s->n = n;
	free(keys);
	return MLV_OK;
}

/* a beats b within one weight group: larger u, then lower name rank. */
static inline bool beats_in_group(const struct hrw_set *s, struct cand a,
				  struct cand b)
{
	if (b.m == UINT32_MAX)
		return a.m != UINT32_MAX;
	if (a.m == UINT32_MAX)
		return false;
	if (a.u52 != b.u52)
		return a.u52 > b.u52;
	return s->rank[a.m] < s->rank[b.m];
}

/* -ln(u) / w with u = (u52 + 0.5) / 2^52: exact in a double (53 bits)
 * and strictly inside (0, 1). */
static inline double score(uint64_t u52, double w)
{
	return -log(((double)u52 + 0.5) * 0x1p-52) / w;
}

/* Across groups: lower score, then lower name rank. */
struct scored {
	double s;
	uint32_t m;
};

static inline void consider(const struct hrw_set *s, struct scored *best,
			    struct cand c, double w, bool need_log)
{
	struct scored x;

	if (c.m == UINT32_MAX)
		return;
	x.s = need_log ? score(c.u52, w) : -(double)c.u52;
	x.m = c.m;
	if (best->m == UINT32_MAX || x.s < best->s ||
	    (x.s == best->s && s->rank[x.m] < s->rank[best->m]))
		*best = x;
}

/* One slot: the first choice and (if want_second) the second. One pass
 * keeps, per weight group, its best member and its two best eligible
 * members; the second choice is then each group's best eligible member
 * other than the first, compared across groups like the first. */
static void hrw_slot(const struct hrw_set *s, uint64_t fj, bool want_second,
		     uint32_t *first_m, uint32_t *second_m)
{
	struct scored first = { 0, UINT32_MAX }, second = { 0, UINT32_MAX };
	bool need_log = s->n_groups > 1;
	struct cand *lead = s->lead;

	for (uint32_t g = 0; g < s->n_groups; g++) {
		struct cand best = NO_CAND, e1 = NO_CAND, e2 = NO_CAND;

		for (uint32_t m = s->group_start[g]; m < s->group_start[g + 1]; m++) {
			struct cand c = { mlv_fmix64(s->h[m] ^ fj) >> 12, m };

			if (beats_in_group(s, c, best))
				best = c;
			if (!want_second || !s->eligible[m])
				continue;
			if (beats_in_group(s, c, e1)) {
				e2 = e1;
				e1 = c;
			} else if (beats_in_group(s, c, e2)) {
				e2 = c;
			}
		}
		consider(s, &first, best, s->group_weight[g], need_log);
		lead[2 * g] = e1;
		lead[2 * g + 1] = e2;
	}
	*first_m = first.m;
	if (!want_second)
		return;
	for (uint32_t g = 0; g < s->n_groups; g++) {
		struct cand c = lead[2 * g].m == first.m ? lead[2 * g + 1]
							 : lead[2 * g];

		consider(s, &second, c, s->group_weight[g], need_log);
	}
	*second_m = second.m;
}

static enum mlv_err rendezvous_build(const struct mlv_table_input *in,
				     uint16_t *first, uint16_t *second)
{
	struct hrw_set s;
	enum mlv_err err = set_init(in, &s);

	if (err)
		return err;
	for (uint32_t j = 0; j < in->spec->size; j++) {
		uint32_t f = UINT32_MAX, sc = UINT32_MAX;

		hrw_slot(&s, mlv_fmix64(j), second != NULL, &f, &sc);
		first[j] = f == UINT32_MAX ? MLV_MAGLEV_NO_BACKEND : s.index[f];
		if (second)
			second[j] = sc == UINT32_MAX ? MLV_MAGLEV_NO_BACKEND
						     : s.index[sc];
	}
	set_free(&s);
	return MLV_OK;
}

const struct mlv_table_ops mlv_table_rendezvous_ops = {
	.kind = MLV_TABLE_RENDEZVOUS,
	.name = "rendezvous",
	.build = rendezvous_build,
};
