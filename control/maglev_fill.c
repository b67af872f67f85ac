/* The fill engine. It must produce exactly the table of the plain loop in
 * docs/maglev.md ("Turn order and filling"); tools/maglev-bench/reference.c
 * is that loop, and the unit tests and every benchmark run compare the two.
 *
 * Where the time goes in the plain loop, and what is done about it:
 *  - a division per probe: permutations are walked by adding skip and
 *    subtracting m on wrap-around;
 *  - the slot array as "taken" marker: a bitmap instead (2m bits, 16 KiB at
 *    m = 65537, in L1);
 *  - once the table is half full, the probe loop exits unpredictably: a
 *    lane tests MLV_PROBE_WIDTH entries per step and takes the first free
 *    one with a bit scan, so a turn is nearly always a single step until
 *    the table is quite full, and the loads of a step are independent;
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
 * Ideas measured and dropped (tools/maglev-bench A/B runs on the reference
 * machine of docs/benchmarks.md): a byte map instead of the bitmap (faster
 * at m = 65537, 1.6x slower at 655373), AVX2 gathers for the 8 probes (no
 * gain at 65537), remembering the other free entries of a lane's last
 * 8-probe window (2-4 %), two pipelined turns instead of one.
 */
#include "maglev_fill.h"

#include <stdbool.h>
#include <string.h>

#include "maglev.h"

/* The end game starts with about MLV_ENDGAME_PERCENT / 100 * sqrt(m) free
 * slots: a scan step (claim_scan) costs a few probes of the walk, and a
 * turn costs `free` scan steps or about m / free probes. Measured with
 * tools/maglev-bench-style A/B runs: 40 and 150 were no better. */
#define MLV_ENDGAME_PERCENT 75

enum mlv_sched {
	SCHED_ROUND_ROBIN,  /* equal weights: every lane, every round */
	SCHED_CREDIT,       /* unequal weights, most lanes busy each round */
	SCHED_HEAP,         /* skewed weights, most lanes idle each round */
};

/* ---- arithmetic ---------------------------------------------------------- */

static inline uint32_t add_mod(uint32_t a, uint32_t b, uint32_t m)
{
	uint32_t s = a + b;   /* a, b < m <= MLV_MAGLEV_MAX_SIZE: no overflow */

	return s >= m ? s - m : s;
}

/* a * b mod m for a, b < m < 2^23, by Barrett reduction: the product fits
 * in 46 bits and the estimated quotient is at most one too small. */
static inline uint32_t mul_mod(uint32_t a, uint32_t b, uint32_t m,
			       uint64_t barrett)
{
	uint64_t x = (uint64_t)a * b;
	uint64_t q = (uint64_t)(((unsigned __int128)x * barrett) >> 64);
	uint64_t r = x - q * m;

	return (uint32_t)(r >= m ? r - m : r);
}

/* skip^-1 mod m (m prime, 0 < skip < m), by the extended Euclid. */
static uint32_t inverse_mod(uint32_t skip, uint32_t m)
{
	int64_t t = 0, new_t = 1, r = m, new_r = skip;

	while (new_r != 0) {
		int64_t q = r / new_r, tmp;

		tmp = t - q * new_t;
		t = new_t;
		new_t = tmp;
		tmp = r - q * new_r;
		r = new_r;
		new_r = tmp;
	}
	return (uint32_t)(t < 0 ? t + m : t);
}

static uint32_t isqrt(uint32_t m)
{
	uint32_t r = 1;

	while ((uint64_t)(r + 1) * (r + 1) <= m)
		r++;
	return r;
}

/* ---- sizes and lanes ----------------------------------------------------- */

size_t mlv_fill_taken_words(uint32_t m)
{
	return (2 * (size_t)m + 63) / 64;
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
		l->ahead[k] = add_mod(l->ahead[k - 1], skip, m);
	l->stride = add_mod(l->ahead[MLV_PROBE_WIDTH - 1], skip, m);
}

/* ---- turn order ---------------------------------------------------------- */

/* docs/maglev.md, "Turn order": in each round every lane adds 2w to its
 * credit (which starts at wmax) and takes a turn, in lane order, when the
 * credit reaches 2 wmax. So lane k's t-th turn (t >= 1) falls in round
 * ceil((2t - 1) wmax / 2w), and ordering turns by (round, lane) is the
 * round-by-round order: that is the heap key. */
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

/* Bits j and j + m of taken both mean "slot j has an owner", so a probe at
 * pos + ahead[k] (both < m) needs no wrap-around. */
static inline uint64_t taken_bit(const uint64_t *taken, uint32_t c)
{
	return (taken[c >> 6] >> (c & 63)) & 1;
}

static inline void mark_taken(uint64_t *taken, uint32_t c, uint32_t m)
{
	taken[c >> 6] |= 1ULL << (c & 63);
	taken[(c + m) >> 6] |= 1ULL << ((c + m) & 63);
}

/* The slot the lane's turn claims: the first free entry of its permutation
 * from pos on (one exists while the table is not full). Does not mark it.
 * While the table is less than half full a plain loop is cheapest; beyond
 * that, MLV_PROBE_WIDTH probes per step (measured: switching at 1/3 or 4/5
 * full, widths 4, 6 or 16, or 16 probes per step near the end were all
 * slower). */
static inline uint32_t walk(const struct mlv_lane *l, const uint64_t *taken,
			    uint32_t m, bool dense)
{
	uint32_t c = l->pos, free_mask;

	if (!dense) {
		while (taken_bit(taken, c))
			c = add_mod(c, l->ahead[1], m);
		return c;
	}
	for (;;) {
		uint32_t taken_mask = 0;

#pragma GCC unroll 16
		for (int k = 0; k < MLV_PROBE_WIDTH; k++)
			taken_mask |= (uint32_t)taken_bit(taken,
							  c + l->ahead[k]) << k;
		free_mask = ~taken_mask & ((1u << MLV_PROBE_WIDTH) - 1);
		if (free_mask != 0)
			return add_mod(c, l->ahead[__builtin_ctz(free_mask)],
				       m);
		c = add_mod(c, l->stride, m);
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
		l->inv_skip = inverse_mod(l->ahead[1], m);
	for (uint32_t i = 0; i < f->left; i++) {
		uint32_t e = f->empty[i];
		uint32_t delta = e >= pos ? e - pos : e + m - pos;
		uint64_t key = (uint64_t)mul_mod(delta, l->inv_skip, m,
						 f->barrett) << 32 | i;

		best = key < best ? key : best;
	}
	c = f->empty[(uint32_t)best];
	f->empty[(uint32_t)best] = f->empty[f->left - 1];
	return c;
}

static void collect_empty(struct mlv_fill *f)
{
	uint32_t cnt = 0;

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
fill_walking(struct mlv_fill *f, enum mlv_sched sched)
{
	const uint32_t m = f->m, dense_at = m / 2, endgame_at = f->endgame_at;
	struct mlv_lane *const lane = f->lane;
	uint64_t *const taken = f->taken;
	uint16_t *const slots = f->slots;
	const uint16_t *const id = f->id;
	uint32_t left = f->left;
	uint32_t k = next_turn(f, sched);
	uint32_t c = walk(&lane[k], taken, m, left <= dense_at);

	for (;;) {
		bool ahead = left - 1 > endgame_at;
		uint32_t k2 = 0, c2 = 0;

		if (ahead) {
			k2 = next_turn(f, sched);
			if (k2 != k)
				c2 = walk(&lane[k2], taken, m,
					  left <= dense_at);
		}
		/* lane k owns slot c from now on */
		mark_taken(taken, c, m);
		slots[c] = id[k];
		lane[k].pos = add_mod(c, lane[k].ahead[1], m);
		left--;
		if (!ahead)
			break;
		if (__builtin_expect(k2 == k || c2 == c, 0))
			c2 = walk(&lane[k2], taken, m, left <= dense_at);
		k = k2;
		c = c2;
	}
	f->left = left;
}

static inline __attribute__((always_inline)) void
fill_with(struct mlv_fill *f, enum mlv_sched sched)
{
	if (f->left > f->endgame_at)
		fill_walking(f, sched);
	if (f->left > 0)
		collect_empty(f);
	while (f->left > 0) {
		uint32_t k = next_turn(f, sched);
		struct mlv_lane *l = &f->lane[k];
		uint32_t c = claim_scan(f, l);

		f->slots[c] = f->id[k];
		l->pos = add_mod(c, l->ahead[1], f->m);
		f->left--;
	}
}

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
	f->barrett = UINT64_MAX / f->m;
	sched_init(f);
	switch (f->sched) {
	case SCHED_ROUND_ROBIN:
		fill_with(f, SCHED_ROUND_ROBIN);
		break;
	case SCHED_CREDIT:
		fill_with(f, SCHED_CREDIT);
		break;
	default:
		fill_with(f, SCHED_HEAP);
		break;
	}
}
