/* SPDX-License-Identifier: BSD-3-Clause */
/* The Maglev table fill engine: Pseudocode 1 with the weighted turn order of
 * docs/maglev.md, on lanes already prepared (hashed, sorted, weight > 0).
 * Internal to control/tables/maglev.c and maglev_fill.c; the public API is
 * maglev.h.
 *
 * Pure computation on caller-provided memory; any thread, one fill per
 * struct mlv_fill at a time.
 */
#ifndef MLV_MAGLEV_FILL_H
#define MLV_MAGLEV_FILL_H

#include <stddef.h>
#include <stdint.h>

/* How many permutation entries a lane tests at once once the table is half
 * full (see maglev_fill.c). */
#define MLV_PROBE_WIDTH 8

/* One backend that takes turns: where its permutation goes next and how far
 * it steps. ahead[k] = k * skip mod m, so the next MLV_PROBE_WIDTH entries
 * are pos + ahead[k], computed independently of each other rather than as a
 * chain of dependent additions. */
struct mlv_lane {
	uint32_t pos;
	uint32_t stride;    /* MLV_PROBE_WIDTH * skip mod m */
	uint32_t ahead[MLV_PROBE_WIDTH];
	uint32_t inv_skip;  /* skip^-1 mod m, 0 until the end game needs it */
};

struct mlv_fill {
	/* inputs */
	uint32_t m;               /* prime, 2 .. MLV_MAGLEV_MAX_SIZE */
	uint32_t nlanes;          /* 0 .. MLV_MAGLEV_MAX_BACKENDS */
	struct mlv_lane *lane;    /* in turn order (name order); mutated */
	uint16_t *id;             /* slot value each lane writes */
	uint32_t *weight;         /* per lane, 1 .. MLV_MAGLEV_MAX_WEIGHT */
	/* scratch, sized by the mlv_fill_*_size() helpers below */
	uint32_t *credit;         /* nlanes */
	uint32_t *queue;          /* nlanes */
	uint64_t *heap;           /* nlanes */
	uint64_t *taken;          /* mlv_fill_taken_words(m) */
	uint32_t *empty;          /* mlv_fill_empty_size(m) */
	/* output */
	uint16_t *slots;          /* m */
	/* private to maglev_fill.c */
	uint32_t left, endgame_at, cursor, queued, wmax, sched;
	uint64_t barrett;
};

/* 64-bit words of scratch for mlv_fill.taken (a byte map or a bitmap,
 * depending on m; see maglev_fill.c). */
size_t mlv_fill_taken_words(uint32_t m);

/* Entries of scratch for mlv_fill.empty. */
uint32_t mlv_fill_empty_size(uint32_t m);

/* Set up a lane with permutation (offset, skip), offset < m, 1 <= skip < m. */
void mlv_lane_init(struct mlv_lane *l, uint32_t offset, uint32_t skip,
		   uint32_t m);

/* Fill f->slots. With no lanes every slot gets MLV_MAGLEV_NO_BACKEND.
 * Cannot fail: inputs are validated by the callers in maglev.c. */
void mlv_fill_run(struct mlv_fill *f);

#endif
