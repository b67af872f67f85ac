/* Maglev table builder. The format (hashes, keys, turn order, fingerprint)
 * is specified in docs/maglev.md; tools/maglev-bench/reference.c is the
 * straightforward version this one must match byte for byte.
 *
 * Why it is faster than the reference while producing the same table:
 *  - a backend's permutation is walked by adding skip and subtracting m on
 *    wrap-around, never by a division;
 *  - "slot taken" lives in a bitmap (8 KiB for m = 65537, so it stays in
 *    L1), not in the slot array itself;
 *  - once the table is half full, most probes hit taken slots, so each
 *    backend tests four permutation entries per step (independent loads the
 *    CPU overlaps) instead of one (fewer mispredicted loop exits);
 *  - equal weights, the common case, take turns round-robin with no per-turn
 *    bookkeeping; unequal weights use a heap keyed by (round, name rank), so
 *    a skewed weight set cannot make the build scan idle backends.
 */
#include "maglev.h"

#include <stdlib.h>
#include <string.h>

#include "siphash.h"

/* docs/maglev.md, "Keys": the ASCII strings "maglevd-h1-key-0",
 * "maglevd-h2-key-0", "maglevd-h3-key-0" as SipHash keys k0..k15. */
#define MLV_KEY(digit) { { 'm', 'a', 'g', 'l', 'e', 'v', 'd', '-', 'h', \
			   (digit), '-', 'k', 'e', 'y', '-', '0' } }
static const struct mlv_siphash_key key_offset = MLV_KEY('1');
static const struct mlv_siphash_key key_skip = MLV_KEY('2');
static const struct mlv_siphash_key key_fingerprint = MLV_KEY('3');

/* ---- sizes and primes ---------------------------------------------------- */

bool mlv_is_prime(uint32_t n)
{
	if (n < 2)
		return false;
	if (n < 4)
		return true;
	if (n % 2 == 0 || n % 3 == 0)
		return false;
	for (uint32_t d = 5; (uint64_t)d * d <= n; d += 6)
		if (n % d == 0 || n % (d + 2) == 0)
			return false;
	return true;
}

void mlv_nearest_primes(uint32_t n, uint32_t *below, uint32_t *above)
{
	if (below != NULL) {
		uint32_t k = n;

		while (k >= 2 && !mlv_is_prime(k))
			k--;
		*below = k >= 2 ? k : 0;
	}
	if (above != NULL) {
		uint32_t k = n < 2 ? 2 : n;

		while (!mlv_is_prime(k) && k != UINT32_MAX)
			k++;
		*above = mlv_is_prime(k) ? k : 0;
	}
}

enum mlv_err mlv_maglev_check_size(uint32_t m)
{
	if (m < MLV_MAGLEV_MIN_SIZE || m > MLV_MAGLEV_MAX_SIZE)
		return MLV_E_RANGE;
	return mlv_is_prime(m) ? MLV_OK : MLV_E_INVAL;
}

enum mlv_err mlv_maglev_name_perm(const char *name, uint32_t m,
				  uint32_t *offset, uint32_t *skip)
{
	size_t len;

	if (name == NULL || name[0] == '\0' || m < 2 || offset == NULL ||
	    skip == NULL)
		return MLV_E_INVAL;
	len = strlen(name);
	*offset = (uint32_t)(mlv_siphash24(&key_offset, name, len) % m);
	*skip = (uint32_t)(mlv_siphash24(&key_skip, name, len) % (m - 1)) + 1;
	return MLV_OK;
}

/* ---- scratch ------------------------------------------------------------- */

/* How many permutation entries a lane tests at once once the table is half
 * full (see claim_walk). */
#define MLV_PROBE_WIDTH 8

/* One backend that takes turns: where its permutation goes next and how far
 * it steps. step[k] = (k + 1) * skip mod m, so MLV_PROBE_WIDTH entries
 * ahead are computed independently of each other rather than as a chain of
 * dependent additions. Hot, so separate from the cold per-backend data. */
struct mlv_lane {
	uint32_t pos;
	uint32_t inv_skip;  /* skip^-1 mod m, 0 until the end game needs it */
	uint32_t step[MLV_PROBE_WIDTH];
};

struct mlv_named {
	const char *name;
	uint32_t index;     /* position in the caller's array */
};

struct mlv_maglev_builder {
	struct mlv_named *named;  size_t named_cap;
	struct mlv_lane *lane;    size_t lane_cap;
	uint16_t *lane_id;        size_t lane_id_cap;
	uint32_t *lane_weight;    size_t lane_weight_cap;
	uint32_t *lane_turns;     size_t lane_turns_cap;
	uint64_t *heap;           size_t heap_cap;
	uint64_t *taken;          size_t taken_cap;
	uint32_t *owned;          size_t owned_cap;
	uint32_t *empty;          size_t empty_cap;
};

/* Grow *p to hold at least bytes; contents are not preserved. */
static enum mlv_err reserve(void *p, size_t *cap, size_t bytes)
{
	void **pp = p;
	void *fresh;

	if (bytes <= *cap)
		return MLV_OK;
	fresh = malloc(bytes);
	if (fresh == NULL)
		return MLV_E_NOMEM;
	free(*pp);
	*pp = fresh;
	*cap = bytes;
	return MLV_OK;
}

enum mlv_err mlv_maglev_builder_new(struct mlv_maglev_builder **out)
{
	if (out == NULL)
		return MLV_E_INVAL;
	*out = calloc(1, sizeof(**out));
	return *out != NULL ? MLV_OK : MLV_E_NOMEM;
}

void mlv_maglev_builder_free(struct mlv_maglev_builder *b)
{
	if (b == NULL)
		return;
	free(b->named);
	free(b->lane);
	free(b->lane_id);
	free(b->lane_weight);
	free(b->lane_turns);
	free(b->heap);
	free(b->taken);
	free(b->owned);
	free(b->empty);
	free(b);
}

#ifndef MLV_ENDGAME_FACTOR
#define MLV_ENDGAME_FACTOR 2
#endif
/* When to stop walking permutations and scan the untaken slots instead
 * (claim_scan): a walk costs about m/left probes, a scan left steps, so
 * they cost the same near left = sqrt(m); the factor was tuned with
 * tools/maglev-bench. */
static uint32_t endgame_size(uint32_t m)
{
	uint32_t r = 1;

	while ((uint64_t)(r + 1) * (r + 1) <= m)
		r++;
	r *= MLV_ENDGAME_FACTOR;
	return r < m ? r : m;
}

static enum mlv_err reserve_lanes(struct mlv_maglev_builder *b, uint32_t n,
				  uint32_t m)
{
	size_t cnt = n ? n : 1;
	size_t words = ((size_t)m + 63) / 64;
	enum mlv_err err;

	if ((err = reserve(&b->lane, &b->lane_cap, cnt * sizeof(*b->lane))) ||
	    (err = reserve(&b->lane_id, &b->lane_id_cap,
			   cnt * sizeof(*b->lane_id))) ||
	    (err = reserve(&b->lane_weight, &b->lane_weight_cap,
			   cnt * sizeof(*b->lane_weight))) ||
	    (err = reserve(&b->lane_turns, &b->lane_turns_cap,
			   cnt * sizeof(*b->lane_turns))) ||
	    (err = reserve(&b->heap, &b->heap_cap, cnt * sizeof(*b->heap))) ||
	    (err = reserve(&b->taken, &b->taken_cap,
			   words * sizeof(*b->taken))) ||
	    (err = reserve(&b->empty, &b->empty_cap,
			   (size_t)endgame_size(m) * sizeof(*b->empty))))
		return err;
	return MLV_OK;
}

/* ---- filling ------------------------------------------------------------- */

struct mlv_fill {
	uint32_t m;
	uint32_t nlanes;          /* lanes with weight > 0, in turn order */
	struct mlv_lane *lane;
	const uint16_t *id;       /* slot value each lane writes */
	const uint32_t *weight;
	uint32_t *turns;
	uint64_t *heap;
	uint64_t *taken;          /* bit j set: slot j has an owner */
	uint16_t *slots;
	uint32_t left;            /* slots without an owner */
	uint32_t endgame_at;      /* switch to the end game at this many left */
	uint32_t *empty;          /* end game: the slots without an owner */
	uint64_t barrett;         /* floor((2^64 - 1) / m), for mul_mod */
};

static inline uint32_t add_mod(uint32_t a, uint32_t b, uint32_t m)
{
	uint32_t s = a + b;   /* a, b < m <= MLV_MAGLEV_MAX_SIZE: no overflow */

	return s >= m ? s - m : s;
}

/* a * b mod m for a, b < m < 2^23, by Barrett reduction: the product fits
 * in 46 bits, the estimated quotient is at most one too small. */
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
	int64_t t = 0, new_t = 1;
	int64_t r = m, new_r = skip;

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

static inline bool is_taken(const uint64_t *taken, uint32_t c)
{
	return (taken[c >> 6] >> (c & 63)) & 1;
}

/* One turn of Pseudocode 1: the lane claims the first untaken slot at or
 * after its position in its permutation. The table is not full, so an
 * untaken slot exists and the walk ends.
 *
 * While the table is sparse the first probe nearly always succeeds, so a
 * plain loop is cheapest. Once it is half full a one-probe loop exits
 * unpredictably; testing MLV_PROBE_WIDTH entries per step and picking the
 * first untaken one with a bit scan makes the step count per turn nearly
 * always 1 until the table is quite full, and then the independent loads
 * overlap instead of following one dependent chain. */
static inline uint32_t claim_walk(struct mlv_lane *l, uint64_t *taken,
				  uint32_t m, bool dense)
{
	uint32_t c = l->pos;

	if (!dense) {
		while (is_taken(taken, c))
			c = add_mod(c, l->step[0], m);
	} else {
		for (;;) {
			uint32_t cand[MLV_PROBE_WIDTH];
			uint32_t free_mask = !is_taken(taken, c);

			cand[0] = c;
			for (int k = 1; k < MLV_PROBE_WIDTH; k++) {
				cand[k] = add_mod(c, l->step[k - 1], m);
				free_mask |= (uint32_t)!is_taken(taken, cand[k])
					     << k;
			}
			if (free_mask != 0) {
				c = cand[__builtin_ctz(free_mask)];
				break;
			}
			c = add_mod(c, l->step[MLV_PROBE_WIDTH - 1], m);
		}
	}
	taken[c >> 6] |= 1ULL << (c & 63);
	return c;
}

/* The same turn once few slots are left. Walking would cost about m/left
 * probes per turn, mostly over taken slots; instead compute, for every
 * untaken slot e, how many steps the lane needs to reach it,
 * (e - pos) * skip^-1 mod m, and take the nearest. Same slot, cost O(left). */
static uint32_t claim_scan(struct mlv_fill *f, struct mlv_lane *l)
{
	uint64_t best = UINT64_MAX;
	uint32_t pos = l->pos, m = f->m, c;

	if (l->inv_skip == 0)
		l->inv_skip = inverse_mod(l->step[0], m);
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

/* Lane k's turn: claim a slot, write its id, advance. */
static inline void take_turn(struct mlv_fill *f, uint32_t k)
{
	struct mlv_lane *l = &f->lane[k];
	uint32_t c;

	if (f->left > f->endgame_at) {
		c = claim_walk(l, f->taken, f->m, f->left <= f->m / 2);
		if (f->left - 1 == f->endgame_at)
			collect_empty(f);
	} else {
		c = claim_scan(f, l);
	}
	l->pos = add_mod(c, l->step[0], f->m);
	f->slots[c] = f->id[k];
	f->left--;
}

/* Equal weights: every lane takes a turn every round, in lane order. */
static void fill_round_robin(struct mlv_fill *f)
{
	for (;;) {
		for (uint32_t k = 0; k < f->nlanes; k++) {
			take_turn(f, k);
			if (f->left == 0)
				return;
		}
	}
}

/* Turn order (docs/maglev.md): rounds; in each, every lane adds 2 * w to
 * its credit, which starts at wmax, and takes a turn, in lane order, if the
 * credit reaches 2 * wmax (then loses 2 * wmax). So after r rounds a lane has
 * had round-half-up(r * w / wmax) turns, and its t-th turn (t >= 1) falls in
 * round ceil((2t - 1) * wmax / (2w)). Sorting turns by (round, lane) gives
 * exactly the round-by-round order. */
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

/* Unequal weights, most lanes busy: walk the rounds, crediting each lane
 * (credits stay below 4 * MLV_MAGLEV_MAX_WEIGHT: no overflow). */
static void fill_credit(struct mlv_fill *f, uint32_t wmax)
{
	uint32_t *credit = f->turns;

	for (uint32_t k = 0; k < f->nlanes; k++)
		credit[k] = wmax;
	for (;;) {
		for (uint32_t k = 0; k < f->nlanes; k++) {
			credit[k] += 2 * f->weight[k];
			if (credit[k] < 2 * wmax)
				continue;
			credit[k] -= 2 * wmax;
			take_turn(f, k);
			if (f->left == 0)
				return;
		}
	}
}

/* Skewed weights, most lanes idle in most rounds: jump from turn to turn
 * with a heap instead of visiting idle lanes. */
static void fill_heap(struct mlv_fill *f, uint32_t wmax)
{
	for (uint32_t k = 0; k < f->nlanes; k++) {
		f->turns[k] = 1;
		f->heap[k] = turn_key(1, f->weight[k], wmax, k);
	}
	for (uint32_t i = f->nlanes / 2; i-- > 0;)
		sift_down(f->heap, f->nlanes, i);
	for (;;) {
		uint32_t k = (uint32_t)(f->heap[0] & 0xFFFF);

		take_turn(f, k);
		if (f->left == 0)
			return;
		f->heap[0] = turn_key(++f->turns[k], f->weight[k], wmax, k);
		sift_down(f->heap, f->nlanes, 0);
	}
}

static void fill(struct mlv_fill *f)
{
	uint32_t wmin = UINT32_MAX, wmax = 0;
	uint64_t wsum = 0;

	if (f->nlanes == 0) {
		for (uint32_t j = 0; j < f->m; j++)
			f->slots[j] = MLV_MAGLEV_NO_BACKEND;
		return;
	}
	for (uint32_t k = 0; k < f->nlanes; k++) {
		wmin = f->weight[k] < wmin ? f->weight[k] : wmin;
		wmax = f->weight[k] > wmax ? f->weight[k] : wmax;
		wsum += f->weight[k];
	}
	memset(f->taken, 0, ((size_t)f->m + 63) / 64 * sizeof(*f->taken));
	f->left = f->m;
	f->barrett = UINT64_MAX / f->m;
	if (f->left <= f->endgame_at)
		collect_empty(f);
	if (wmin == wmax)
		fill_round_robin(f);
	else if ((uint64_t)wmax * f->nlanes <= 4 * wsum)
		fill_credit(f, wmax);
	else
		fill_heap(f, wmax);
}

static void fill_start(struct mlv_fill *f, struct mlv_maglev_builder *b,
		       uint32_t m, uint32_t nlanes, uint16_t *slots)
{
	*f = (struct mlv_fill){
		.m = m, .nlanes = nlanes, .lane = b->lane, .id = b->lane_id,
		.weight = b->lane_weight, .turns = b->lane_turns,
		.heap = b->heap, .taken = b->taken, .slots = slots,
		.endgame_at = endgame_size(m), .empty = b->empty,
	};
	fill(f);
}

static void lane_init(struct mlv_lane *l, uint32_t offset, uint32_t skip,
		      uint32_t m)
{
	l->pos = offset;
	l->inv_skip = 0;
	l->step[0] = skip;
	for (int k = 1; k < MLV_PROBE_WIDTH; k++)
		l->step[k] = add_mod(l->step[k - 1], skip, m);
}

/* ---- fingerprint --------------------------------------------------------- */

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* docs/maglev.md, "Fingerprint". named[] is in name order; owned[] is
 * scratch of n entries, reused to map caller index -> owner rank. */
static uint64_t fingerprint(const struct mlv_named *named, uint32_t n,
			    uint32_t m, const uint16_t *slots, uint32_t *owned)
{
	struct mlv_siphash_state st;
	uint8_t buf[1024];
	uint32_t owners = 0;

	memset(owned, 0, (size_t)n * sizeof(*owned));
	for (uint32_t j = 0; j < m; j++)
		if (slots[j] != MLV_MAGLEV_NO_BACKEND)
			owned[slots[j]] = 1;
	/* Turn "owns a slot" flags into ranks among owners, in name order. */
	for (uint32_t k = 0; k < n; k++) {
		uint32_t *o = &owned[named[k].index];

		*o = *o ? owners++ : MLV_MAGLEV_NO_BACKEND;
	}

	mlv_siphash24_init(&st, &key_fingerprint);
	put_le32(buf, m);
	put_le32(buf + 4, owners);
	mlv_siphash24_update(&st, buf, 8);
	for (uint32_t k = 0; k < n; k++) {
		size_t len;

		if (owned[named[k].index] == MLV_MAGLEV_NO_BACKEND)
			continue;
		len = strlen(named[k].name);
		put_le32(buf, (uint32_t)len);
		mlv_siphash24_update(&st, buf, 4);
		mlv_siphash24_update(&st, named[k].name, len);
	}
	for (uint32_t j = 0; j < m;) {
		uint32_t fill_to = j + sizeof(buf) / 2 < m ? j + sizeof(buf) / 2
							     : m;
		size_t used = 0;

		for (; j < fill_to; j++) {
			uint32_t r = slots[j] == MLV_MAGLEV_NO_BACKEND
					     ? MLV_MAGLEV_NO_BACKEND
					     : owned[slots[j]];

			buf[used++] = (uint8_t)r;
			buf[used++] = (uint8_t)(r >> 8);
		}
		mlv_siphash24_update(&st, buf, used);
	}
	return mlv_siphash24_final(&st);
}

/* ---- entry points -------------------------------------------------------- */

static int by_name(const void *a, const void *b)
{
	const struct mlv_named *x = a, *y = b;

	return strcmp(x->name, y->name);
}

enum mlv_err mlv_maglev_builder_build(struct mlv_maglev_builder *b,
				      const struct mlv_maglev_backend *backends,
				      uint32_t n, uint32_t m, uint16_t *slots,
				      uint64_t *fingerprint_out)
{
	struct mlv_fill f = { 0 };
	enum mlv_err err;
	uint32_t nlanes = 0;

	if (b == NULL || slots == NULL || (n > 0 && backends == NULL) ||
	    n > MLV_MAGLEV_MAX_BACKENDS || mlv_maglev_check_size(m) != MLV_OK)
		return MLV_E_INVAL;
	for (uint32_t i = 0; i < n; i++)
		if (backends[i].name == NULL || backends[i].name[0] == '\0' ||
		    backends[i].weight > MLV_MAGLEV_MAX_WEIGHT)
			return MLV_E_INVAL;
	if ((err = reserve(&b->named, &b->named_cap,
			   (n ? n : 1) * sizeof(*b->named))) ||
	    (err = reserve(&b->owned, &b->owned_cap,
			   (n ? n : 1) * sizeof(*b->owned))) ||
	    (err = reserve_lanes(b, n, m)))
		return err;

	/* Name order makes the table independent of the caller's order. */
	for (uint32_t i = 0; i < n; i++) {
		b->named[i].name = backends[i].name;
		b->named[i].index = i;
	}
	qsort(b->named, n, sizeof(*b->named), by_name);
	for (uint32_t k = 1; k < n; k++)
		if (strcmp(b->named[k - 1].name, b->named[k].name) == 0)
			return MLV_E_INVAL;

	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = b->named[k].index;
		uint32_t offset, skip;

		if (backends[i].weight == 0)
			continue;
		err = mlv_maglev_name_perm(backends[i].name, m, &offset, &skip);
		if (err)
			return err;
		lane_init(&b->lane[nlanes], offset, skip, m);
		b->lane_id[nlanes] = (uint16_t)i;
		b->lane_weight[nlanes] = backends[i].weight;
		nlanes++;
	}

	fill_start(&f, b, m, nlanes, slots);
	if (fingerprint_out != NULL)
		*fingerprint_out = fingerprint(b->named, n, m, slots, b->owned);
	return MLV_OK;
}

enum mlv_err mlv_maglev_build(const struct mlv_maglev_backend *backends,
			      uint32_t n, uint32_t m, uint16_t *slots,
			      uint64_t *fingerprint_out)
{
	struct mlv_maglev_builder *b;
	enum mlv_err err;

	if ((err = mlv_maglev_builder_new(&b)))
		return err;
	err = mlv_maglev_builder_build(b, backends, n, m, slots,
				       fingerprint_out);
	mlv_maglev_builder_free(b);
	return err;
}

enum mlv_err mlv_maglev_build_perm(const uint32_t *offset,
				   const uint32_t *skip,
				   const uint32_t *weight, uint32_t n,
				   uint32_t m, uint16_t *slots)
{
	struct mlv_maglev_builder *b = NULL;
	struct mlv_fill f = { 0 };
	enum mlv_err err;
	uint32_t nlanes = 0;

	if (slots == NULL || (n > 0 && (offset == NULL || skip == NULL)) ||
	    n > MLV_MAGLEV_MAX_BACKENDS || m > MLV_MAGLEV_MAX_SIZE ||
	    !mlv_is_prime(m))
		return MLV_E_INVAL;
	for (uint32_t i = 0; i < n; i++)
		if (offset[i] >= m || skip[i] < 1 || skip[i] >= m ||
		    (weight != NULL && weight[i] > MLV_MAGLEV_MAX_WEIGHT))
			return MLV_E_INVAL;
	if ((err = mlv_maglev_builder_new(&b)) ||
	    (err = reserve_lanes(b, n, m)))
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t w = weight != NULL ? weight[i] : 1;

		if (w == 0)
			continue;
		lane_init(&b->lane[nlanes], offset[i], skip[i], m);
		b->lane_id[nlanes] = (uint16_t)i;
		b->lane_weight[nlanes] = w;
		nlanes++;
	}
	fill_start(&f, b, m, nlanes, slots);
out:
	mlv_maglev_builder_free(b);
	return err;
}
