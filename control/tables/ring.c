/* SPDX-License-Identifier: BSD-3-Clause */
/* Ring (Karger et al., STOC 1997; ketama-style successor rule) tables:
 * each backend puts weight x vnodes points on a 64-bit ring, each slot is
 * a point too, and a slot belongs to the backend owning the first backend
 * point clockwise from it (position >= the slot's, wrapping). A backend's
 * points depend on its own name and weight only, so removing it moves only
 * its slots (to the next backend clockwise) and adding one moves slots
 * only to it. The second choice is the next *different* eligible backend
 * clockwise: the owner the slot would get if the first were removed.
 * Rules: docs/table-builders.md.
 */
#include "control/tables/builder.h"

#include <stdlib.h>
#include <string.h>

#include "control/tables/hash_internal.h"

/* docs/table-builders.md, "Hashes": the ring name key. Slots use the
 * hash of the empty name, which no backend can have. */
static const struct mlv_siphash_key key_ring = MLV_TABLE_KEY('k', '1');

/* The ring: positions sorted ascending, with the name rank of each
 * point's backend. Points with equal positions (a 2^-64 event) stay in
 * the order they were made (name order, then point number), so every
 * instance sorts the same. */
struct ring {
	uint64_t *pos;
	uint16_t *rank;
	uint32_t n;
};

/* Stable LSD radix sort of (pos, rank) by pos, 8 bits per pass, using
 * tmp_pos/tmp_rank (n each) as the second buffer: about 4x faster than
 * qsort at a million points, where qsort would be most of the build. */
static void sort_points(struct ring *r, uint64_t *tmp_pos, uint16_t *tmp_rank)
{
	uint64_t *src = r->pos, *dst = tmp_pos;
	uint16_t *src_r = r->rank, *dst_r = tmp_rank;

	for (unsigned shift = 0; shift < 64; shift += 8) {
		uint32_t count[256] = { 0 }, start[256], sum = 0;

		for (uint32_t i = 0; i < r->n; i++)
			count[(src[i] >> shift) & 0xff]++;
		if (count[(src[0] >> shift) & 0xff] == r->n)
			continue;   /* every point has this digit: nothing moves */
		for (unsigned d = 0; d < 256; d++) {
			start[d] = sum;
			sum += count[d];
		}
		for (uint32_t i = 0; i < r->n; i++) {
			uint32_t at = start[(src[i] >> shift) & 0xff]++;

			dst[at] = src[i];
			dst_r[at] = src_r[i];
		}
		/* swap buffers: the sorted data is now in dst */
		uint64_t *tp = src;
		uint16_t *tr = src_r;

		src = dst;
		src_r = dst_r;
		dst = tp;
		dst_r = tr;
	}
	if (src != r->pos) {
		memcpy(r->pos, src, r->n * sizeof(*src));
		memcpy(r->rank, src_r, r->n * sizeof(*src_r));
	}
}

uint32_t mlv_ring_successor(const uint64_t *pos, uint32_t n, uint64_t h)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (pos[mid] < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == n ? 0 : lo;
}

/* next[i] = rank of the first eligible backend clockwise after point i
 * that differs from point i's backend, or UINT32_MAX. Two backward laps:
 * c1 is the nearest eligible point ahead, c2 the nearest one ahead whose
 * backend differs from c1's; the second lap sees the wrap-around. */
static void next_distinct(const struct ring *r, const uint8_t *eligible,
			  uint32_t *next)
{
	uint32_t c1 = UINT32_MAX, c2 = UINT32_MAX;

	for (uint64_t i = 2 * (uint64_t)r->n; i-- > 0;) {
		uint32_t p = (uint32_t)(i % r->n);
		uint32_t rk = r->rank[p];

		if (i < r->n)
			next[p] = c1 != UINT32_MAX && r->rank[c1] != rk ? r->rank[c1]
				  : c2 != UINT32_MAX ? r->rank[c2] : UINT32_MAX;
		if (!eligible[rk])
			continue;
		if (c1 != UINT32_MAX && r->rank[c1] != rk)
			c2 = c1;
		c1 = p;
	}
}

static enum mlv_err ring_build(const struct mlv_table_input *in,
			       uint16_t *first, uint16_t *second)
{
	uint32_t m = in->spec->size, vnodes = in->spec->vnodes;
	uint64_t total = 0, slot_h = mlv_table_name_hash(&key_ring, "");
	struct ring r = { NULL, NULL, 0 };
	uint64_t *tmp_pos = NULL;
	uint16_t *tmp_rank = NULL;
	uint32_t *next = NULL;
	uint8_t *eligible = NULL;
	enum mlv_err err = MLV_E_NOMEM;

	for (uint32_t i = 0; i < in->n; i++)
		total += (uint64_t)in->backends[i].weight * vnodes;
	if (total > MLV_RING_MAX_POINTS)
		return MLV_E_RANGE;
	if (total == 0) {
		for (uint32_t j = 0; j < m; j++) {
			first[j] = MLV_MAGLEV_NO_BACKEND;
			if (second)
				second[j] = MLV_MAGLEV_NO_BACKEND;
		}
		return MLV_OK;
	}
	r.pos = malloc(total * sizeof(*r.pos));
	r.rank = malloc(total * sizeof(*r.rank));
	tmp_pos = malloc(total * sizeof(*tmp_pos));
	tmp_rank = malloc(total * sizeof(*tmp_rank));
	eligible = malloc(in->n * sizeof(*eligible));
	if (second)
		next = malloc(total * sizeof(*next));
	if (!r.pos || !r.rank || !tmp_pos || !tmp_rank || !eligible ||
	    (second && !next))
		goto out;

	/* points in name order, then point number: the tie order */
	for (uint32_t rk = 0; rk < in->n; rk++) {
		const struct mlv_table_backend *b = &in->backends[in->by_name[rk]];
		uint32_t count = b->weight * vnodes;
		uint64_t h;

		eligible[rk] = b->weight > 0 && !b->no_second;
		if (count == 0)
			continue;
		h = mlv_table_name_hash(&key_ring, b->name);
		for (uint32_t k = 0; k < count; k++) {
			r.pos[r.n] = mlv_table_mix(h, k);
			r.rank[r.n++] = (uint16_t)rk;
		}
	}
	sort_points(&r, tmp_pos, tmp_rank);
	if (second)
		next_distinct(&r, eligible, next);

	for (uint32_t j = 0; j < m; j++) {
		uint32_t p = mlv_ring_successor(r.pos, r.n, mlv_table_mix(slot_h, j));

		first[j] = (uint16_t)in->by_name[r.rank[p]];
		if (second)
			second[j] = next[p] == UINT32_MAX ? MLV_MAGLEV_NO_BACKEND
					: (uint16_t)in->by_name[next[p]];
	}
	err = MLV_OK;
out:
	free(r.pos);
	free(r.rank);
	free(tmp_pos);
	free(tmp_rank);
	free(next);
	free(eligible);
	return err;
}

const struct mlv_table_ops mlv_table_ring_ops = {
	.kind = MLV_TABLE_RING,
	.name = "ring",
	.build = ring_build,
};
