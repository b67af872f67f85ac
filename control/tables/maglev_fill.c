/* SPDX-License-Identifier: BSD-3-Clause */
/* The fill engine. It must produce exactly the table of the plain loop in
 * docs/maglev.md ("Turn order and filling"); tools/bench/maglev-bench/reference.c
 * is that loop, and the unit tests and every benchmark run compare the two.
 *
 * Where the time goes in the plain loop, and what is done about it:
 *  - a division per probe: permutations are walked by adding skip and
 *    subtracting m on wrap-around;
 *  - the slot array as "taken" marker: a byte map (2m bytes, 128 KiB at
 *    m = 65537, in L2) up to MLV_FILL_BYTEMAP_MAX_SIZE, a bitmap above it
 *    (2m bits, in a 48 KiB L1 up to m = 196K): a byte probe is a plain
 *    load, a bit probe also needs a shift and a mask (the byte map makes
 *    the fill 4-12 % faster at m = 65537, N = 100), but past L2 the byte
 *    map's misses cost more (1.6x slower at 655373);
 *  - the probe loop exits unpredictably: a lane tests MLV_SPARSE_WIDTH
 *    entries per step while the table is less than half full (byte map
 *    only) and MLV_PROBE_WIDTH beyond, and takes the first free one with
 *    a bit scan,
 *    so a turn is nearly always a single step until the table is quite
 *    full, and the loads of a step are independent;
 *  - each turn's loads wait for the previous turn's bitmap store, whose
 *    address is known only at the end of that turn: the next turn's walk is
 *    started before the current turn's slot is marked, then corrected in
 *    the rare case both chose the same slot;
 *  - the last ~0.75 sqrt(m) free slots cost about m / free probes per turn
 *    to find by walking: the end game computes, for every free slot, how
 *    many steps the lane needs to reach it and takes the nearest
 *    (claim_scan);
 *  - unequal weights: one credit test per lane per round is an
 *    unpredictable branch; a round's turns are computed at once without
 *    branches (SCHED_CREDIT), and skewed weights, which leave most lanes
 *    idle in most rounds, use a heap that jumps from turn to turn
 *    (SCHED_HEAP).
 *
 * Left out, on tools/bench/maglev-bench A/B runs (the machine of
 * docs/benchmarks.md, "The machine"): AVX2 gathers for the 8 probes (no
 * gain at 65537), remembering the other free entries of a lane's last
 * 8-probe window (2-4 %), two pipelined turns instead of one,
 * MLV_PROBE_WIDTH probes from the first turn (8 % slower than one probe a
 * step), the switch to the wide step at 1/3, 2/3 or 3/4 full instead of
 * 1/2 (1-3 % slower).
 */
#include "control/tables/maglev_fill_internal.h"

#include <stdbool.h>
#include <string.h>

#include "control/tables/maglev.h"
#include "control/tables/mod_arith_internal.h"

/* The end game starts with about MLV_ENDGAME_PERCENT / 100 * sqrt(m) free
 * slots: a scan step (claim_scan) costs a few probes of the walk, and a
 * turn costs `free` scan steps or about m / free probes. In
 * tools/bench/maglev-bench A/B runs 40 and 150 are no better. */
#define MLV_ENDGAME_PERCENT 75

/* Entries a lane tests per step while the table is less than half full:
 * a plain one-probe loop mispredicts its exit on about a quarter of the
 * turns there. With the byte map 2 and 4 give the same, 12 % less fill
 * time than 1 at m = 65537, N = 100. With the bitmap (large m, beyond L1)
 * each extra probe is a load that may miss: on the Zen 5 machine of
 * docs/benchmarks.md, idle, 2 takes 10-12 % less fill time than 1 at
 * m = 655373 and 3 or 4 no less than 2 (4 measured 15-20 % slower than
 * 1 there under load). */
#define MLV_SPARSE_WIDTH 4
#define MLV_SPARSE_BITS_WIDTH 2
_Static_assert(MLV_SPARSE_WIDTH < MLV_PROBE_WIDTH &&
	       MLV_SPARSE_BITS_WIDTH < MLV_PROBE_WIDTH,
	       "walk() steps by ahead[width]");

/* Largest m whose "taken" marker is a byte map (2m bytes; see the top of
 * the file): 256 KiB fits the L2 of any x86 server core of the last
 * decade. */
#define MLV_FILL_BYTEMAP_MAX_SIZE 131072u

enum mlv_sched {
	SCHED_ROUND_ROBIN,  /* equal weights: every lane, every round */
	SCHED_CREDIT,       /* unequal weights, most lanes busy each round */
	SCHED_HEAP,         /* skewed weights, most lanes idle each round */
};

/* ---- arithmetic ---------------------------------------------------------- */

static uint32_t isqrt(uint32_t m)
{
	uint32_t r = 1;

	while ((uint64_t)(r + 1) * (r + 1) <= m)
		r++;
	return r;
}

/* ---- sizes and lanes ----------------------------------------------------- */

static inline bool use_bytemap(uint32_t m)
{
	return m <= MLV_FILL_BYTEMAP_MAX_SIZE;
}

size_t mlv_fill_taken_words(uint32_t m)
{
	return use_bytemap(m) ? (2 * (size_t)m + 7) / 8
			      : (2 * (size_t)m + 63) / 64;
}

uint32_t mlv_fill_empty_size(uint32_t m)
{
	uint32_t e = isqrt(m) * MLV_ENDGAME_PERCENT / 100;

	return e < m ? e : m;
}

void mlv_lane_init(struct mlv_lane *l, uint32_t offset, uint32_t skip,
		   uint32_t m)
{
	l->pos = offset;
	l->inv_skip = 0;
	l->ahead[0] = 0;
	for (int k = 1; k < MLV_PROBE_WIDTH; k++)
		l->ahead[k] = mlv_add_mod(l->ahead[k - 1], skip, m);
	l->stride = mlv_add_mod(l->ahead[MLV_PROBE_WIDTH - 1], skip, m);
}

/* ---- turn order ---------------------------------------------------------- */

/* docs/maglev.md, "Turn order and filling": in each round every lane adds
 * 2w to its credit (which starts at wmax) and takes a turn, in lane order,
 * when the credit reaches 2 wmax. So lane k's t-th turn (t >= 1) falls in
 * round ceil((2t - 1) wmax / 2w), and ordering turns by (round, lane) is
 * the round-by-round order: that is the heap key. */
static inline uint64_t turn_key(uint64_t turn, uint32_t w, uint32_t wmax,
				uint32_t lane)
{
	uint64_t round = ((2 * turn - 1) * wmax + 2 * (uint64_t)w - 1) /
			 (2 * (uint64_t)w);

	return round << 16 | lane;
}

static void sift_down(uint64_t *heap, uint32_t len, uint32_t i)
{
	uint64_t key = heap[i];

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= len)
			break;
		if (c + 1 < len && heap[c + 1] < heap[c])
			c++;
		if (key <= heap[c])
			break;
		heap[i] = heap[c];
		i = c;
	}
	heap[i] = key;
}

static void sched_init(struct mlv_fill *f)
{
	uint32_t wmin = UINT32_MAX, wmax = 0;
	uint64_t wsum = 0;

	for (uint32_t k = 0; k < f->nlanes; k++) {
		wmin = f->weight[k] < wmin ? f->weight[k] : wmin;
		wmax = f->weight[k] > wmax ? f->weight[k] : wmax;
		wsum += f->weight[k];
	}
	f->wmax = wmax;
	f->cursor = 0;
	if (wmin == wmax) {
		f->sched = SCHED_ROUND_ROBIN;
	} else if ((uint64_t)wmax * f->nlanes <= 4 * wsum) {
		/* At least a quarter of the lane visits give a turn. */
		f->sched = SCHED_CREDIT;
		f->queued = 0;
		for (uint32_t k = 0; k < f->nlanes; k++)
			f->credit[k] = wmax;
	} else {
		f->sched = SCHED_HEAP;
		for (uint32_t k = 0; k < f->nlanes; k++) {
			f->credit[k] = 1;   /* turns so far + 1 */
			f->heap[k] = turn_key(1, f->weight[k], wmax, k);
		}
		for (uint32_t i = f->nlanes / 2; i-- > 0;)
			sift_down(f->heap, f->nlanes, i);
	}
}

/* SCHED_CREDIT: queue a whole round's turns at once, without a branch per
 * lane (whether a lane's credit suffices is data, not a pattern the branch
 * predictor could learn). Out of line so that the per-turn loop it is
 * called from keeps its registers. */
static __attribute__((noinline)) void queue_round(struct mlv_fill *f)
{
	const uint32_t full = 2 * f->wmax;
	uint32_t n = 0;

	for (uint32_t i = 0; i < f->nlanes; i++) {
		/* < 4 * MLV_MAGLEV_MAX_WEIGHT: no overflow */
		uint32_t cr = f->credit[i] + 2 * f->weight[i];
		uint32_t turn = cr >= full;

		f->credit[i] = cr - (turn ? full : 0);
		f->queue[n] = i;
		n += turn;
	}
	f->cursor = 0;
	f->queued = n;
}

/* The lane whose turn is next. Depends only on the weights, never on the
 * table, so it can be asked one turn ahead. */
static inline uint32_t next_turn(struct mlv_fill *f, enum mlv_sched sched)
{
	uint32_t k;

	switch (sched) {
	case SCHED_ROUND_ROBIN:
		k = f->cursor;
		f->cursor = k + 1 == f->nlanes ? 0 : k + 1;
		return k;
	case SCHED_CREDIT:
		while (f->cursor == f->queued)
			queue_round(f);
		return f->queue[f->cursor++];
	case SCHED_HEAP:
	default:
		k = (uint32_t)(f->heap[0] & 0xFFFF);
		f->heap[0] = turn_key(++f->credit[k], f->weight[k], f->wmax, k);
		sift_down(f->heap, f->nlanes, 0);
		return k;
	}
}

/* ---- claiming ------------------------------------------------------------ */

/* Entries j and j + m of taken (bits, or bytes with bytemap) both mean
 * "slot j has an owner", so a probe at pos + ahead[k] (both < m) needs no
 * wrap-around. */
static inline uint32_t taken_bit(const uint64_t *taken, uint32_t c,
				 bool bytemap)
{
	if (bytemap)
		return ((const uint8_t *)taken)[c];
	return (uint32_t)(taken[c >> 6] >> (c & 63)) & 1;
}

static inline void mark_taken(uint64_t *taken, uint32_t c, uint32_t m,
			      bool bytemap)
{
	if (bytemap) {
		((uint8_t *)taken)[c] = 1;
		((uint8_t *)taken)[c + m] = 1;
		return;
	}
	taken[c >> 6] |= 1ULL << (c & 63);
	taken[(c + m) >> 6] |= 1ULL << ((c + m) & 63);
}

/* Bit k set: the lane's entry c + ahead[k] is free, for k < width. */
static inline uint32_t free_mask(const struct mlv_lane *l,
				 const uint64_t *taken, uint32_t c, int width,
				 bool bytemap)
{
	uint32_t taken_mask = 0;

#pragma GCC unroll 16
	for (int k = 0; k < width; k++)
		taken_mask |= taken_bit(taken, c + l->ahead[k], bytemap) << k;
	return ~taken_mask & ((1u << width) - 1);
}

/* The slot the lane's turn claims: the first free entry of its permutation
 * from pos on (one exists while the table is not full). Does not mark it.
 * While the table is less than half full, MLV_SPARSE_BITS_WIDTH probes
 * per step with the bitmap, MLV_SPARSE_WIDTH with the byte map;
 * MLV_PROBE_WIDTH beyond (widths 4, 6 or 16 there, or 16 probes per step
 * near the end, are all slower). */
static inline uint32_t walk(const struct mlv_lane *l, const uint64_t *taken,
			    uint32_t m, bool dense, bool bytemap)
{
	const int sparse = bytemap ? MLV_SPARSE_WIDTH : MLV_SPARSE_BITS_WIDTH;
	uint32_t c = l->pos, avail;

	if (!dense) {
		for (;;) {
			avail = free_mask(l, taken, c, sparse, bytemap);
			if (avail != 0)
				return mlv_add_mod(c,
						   l->ahead[__builtin_ctz(avail)],
						   m);
			c = mlv_add_mod(c, l->ahead[sparse], m);
		}
	}
	for (;;) {
		avail = free_mask(l, taken, c, MLV_PROBE_WIDTH, bytemap);
		if (avail != 0)
			return mlv_add_mod(c, l->ahead[__builtin_ctz(avail)], m);
		c = mlv_add_mod(c, l->stride, m);
	}
}

/* The same slot in the end game, from the list of free slots: the lane
 * reaches free slot e after (e - pos) * skip^-1 mod m steps; take the
 * nearest and drop it from the list. */
static uint32_t claim_scan(struct mlv_fill *f, struct mlv_lane *l)
{
	uint64_t best = UINT64_MAX;
	uint32_t pos = l->pos, m = f->m, c;

	if (l->inv_skip == 0)
		l->inv_skip = mlv_inverse_mod(l->ahead[1], m);
	for (uint32_t i = 0; i < f->left; i++) {
		uint32_t e = f->empty[i];
		uint32_t delta = e >= pos ? e - pos : e + m - pos;
		uint64_t key = (uint64_t)mlv_mul_mod(delta, l->inv_skip, m,
						 f->barrett) << 32 | i;

		best = key < best ? key : best;
	}
	c = f->empty[(uint32_t)best];
	f->empty[(uint32_t)best] = f->empty[f->left - 1];
	return c;
}

static void collect_empty(struct mlv_fill *f, bool bytemap)
{
	uint32_t cnt = 0;

	if (bytemap) {
		const uint8_t *taken = (const uint8_t *)f->taken;
		uint32_t j = 0;

		/* eight entries a test: all but about sqrt(m) are taken */
		for (; j + 8 <= f->m; j += 8) {
			uint64_t eight;

			memcpy(&eight, taken + j, sizeof(eight));
			if (eight == 0x0101010101010101ULL)
				continue;
			for (uint32_t i = j; i < j + 8; i++)
				if (!taken[i])
					f->empty[cnt++] = i;
		}
		for (; j < f->m; j++)
			if (!taken[j])
				f->empty[cnt++] = j;
		return;
	}
	for (uint32_t w = 0; w < (f->m + 63) / 64; w++) {
		uint64_t bits = ~f->taken[w];

		while (bits != 0) {
			uint32_t j = w * 64 + (uint32_t)__builtin_ctzll(bits);

			if (j >= f->m)
				break;
			f->empty[cnt++] = j;
			bits &= bits - 1;
		}
	}
}

/* Turns until endgame_at slots are left, walking permutations. The walk
 * for the next turn starts before the current slot is marked (see the top
 * of the file); it is redone if it may have seen stale state: same lane
 * (its pos moves) or same slot. Hot state lives in locals: stores through
 * the lane and slot arrays could otherwise alias the fields of *f. */
static inline __attribute__((always_inline)) void
fill_walking(struct mlv_fill *f, enum mlv_sched sched, bool bytemap)
{
	const uint32_t m = f->m, dense_at = m / 2, endgame_at = f->endgame_at;
	struct mlv_lane *const lane = f->lane;
	uint64_t *const taken = f->taken;
	uint16_t *const slots = f->slots;
	const uint16_t *const id = f->id;
	uint32_t left = f->left;
	uint32_t k = next_turn(f, sched);
	uint32_t c = walk(&lane[k], taken, m, left <= dense_at, bytemap);

	for (;;) {
		bool ahead = left - 1 > endgame_at;
		uint32_t k2 = 0, c2 = 0;

		if (ahead) {
			k2 = next_turn(f, sched);
			if (k2 != k)
				c2 = walk(&lane[k2], taken, m,
					  left <= dense_at, bytemap);
		}
		/* lane k owns slot c from now on */
		mark_taken(taken, c, m, bytemap);
		slots[c] = id[k];
		lane[k].pos = mlv_add_mod(c, lane[k].ahead[1], m);
		left--;
		if (!ahead)
			break;
		if (__builtin_expect(k2 == k || c2 == c, 0))
			c2 = walk(&lane[k2], taken, m, left <= dense_at,
				  bytemap);
		k = k2;
		c = c2;
	}
	f->left = left;
}

static inline __attribute__((always_inline)) void
fill_with(struct mlv_fill *f, enum mlv_sched sched, bool bytemap)
{
	if (f->left > f->endgame_at)
		fill_walking(f, sched, bytemap);
	if (f->left > 0)
		collect_empty(f, bytemap);
	while (f->left > 0) {
		uint32_t k = next_turn(f, sched);
		struct mlv_lane *l = &f->lane[k];
		uint32_t c = claim_scan(f, l);

		f->slots[c] = f->id[k];
		l->pos = mlv_add_mod(c, l->ahead[1], f->m);
		f->left--;
	}
}

/* One specialised copy of the loops per schedule and marker, each a
 * function of its own so that each gets its own register allocation (one
 * function holding all six is up to 10 % slower in some maglev-bench
 * runs). */
#define MLV_FILL_VARIANT(name, sched, bytemap)                               \
	static __attribute__((noinline)) void name(struct mlv_fill *f)      \
	{                                                                    \
		fill_with(f, sched, bytemap);                                \
	}
MLV_FILL_VARIANT(fill_round_robin_bits, SCHED_ROUND_ROBIN, false)
MLV_FILL_VARIANT(fill_round_robin_bytes, SCHED_ROUND_ROBIN, true)
MLV_FILL_VARIANT(fill_credit_bits, SCHED_CREDIT, false)
MLV_FILL_VARIANT(fill_credit_bytes, SCHED_CREDIT, true)
MLV_FILL_VARIANT(fill_heap_bits, SCHED_HEAP, false)
MLV_FILL_VARIANT(fill_heap_bytes, SCHED_HEAP, true)
#undef MLV_FILL_VARIANT

void mlv_fill_run(struct mlv_fill *f)
{
	if (f->nlanes == 0) {
		for (uint32_t j = 0; j < f->m; j++)
			f->slots[j] = MLV_MAGLEV_NO_BACKEND;
		return;
	}
	memset(f->taken, 0, mlv_fill_taken_words(f->m) * sizeof(*f->taken));
	f->left = f->m;
	f->endgame_at = mlv_fill_empty_size(f->m);
	f->barrett = mlv_barrett(f->m);
	sched_init(f);
	switch (f->sched) {
	case SCHED_ROUND_ROBIN:
		if (use_bytemap(f->m))
			fill_round_robin_bytes(f);
		else
			fill_round_robin_bits(f);
		break;
	case SCHED_CREDIT:
		if (use_bytemap(f->m))
			fill_credit_bytes(f);
		else
			fill_credit_bits(f);
		break;
	default:
		if (use_bytemap(f->m))
			fill_heap_bytes(f);
		else
			fill_heap_bits(f);
		break;
	}
}
