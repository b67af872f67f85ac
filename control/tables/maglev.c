/* SPDX-License-Identifier: BSD-3-Clause */
/* Maglev table builder: validation, name hashing and ordering, scratch
 * memory, the fingerprint. The fill itself is maglev_fill.c. The format
 * (hashes, keys, turn order, fingerprint) is specified in docs/maglev.md.
 */
#include "control/tables/maglev.h"

#include <stdlib.h>
#include <string.h>

/* The fingerprint hashes a stream built in pieces; the state lives on the
 * stack (XXH3_state_t is only declared with static linking enabled), so a
 * fingerprint allocates nothing. */
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "control/tables/maglev_fill_internal.h"
#include "control/base/siphash.h"

/* docs/maglev.md, "Keys": the ASCII strings "maglevd-h1-key-0" and
 * "maglevd-h2-key-0" as SipHash keys k0..k15. */
#define MLV_KEY(digit) { { 'm', 'a', 'g', 'l', 'e', 'v', 'd', '-', 'h', \
			   (digit), '-', 'k', 'e', 'y', '-', '0' } }
static const struct mlv_siphash_key key_offset = MLV_KEY('1');
static const struct mlv_siphash_key key_skip = MLV_KEY('2');

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

struct mlv_maglev_builder {
	struct mlv_maglev_named *named;  size_t named_cap;
	uint32_t *owned;          size_t owned_cap;
	struct mlv_lane *lane;    size_t lane_cap;
	uint16_t *lane_id;        size_t lane_id_cap;
	uint32_t *lane_weight;    size_t lane_weight_cap;
	uint32_t *credit;         size_t credit_cap;
	uint32_t *queue;          size_t queue_cap;
	uint64_t *heap;           size_t heap_cap;
	uint64_t *taken;          size_t taken_cap;
	uint32_t *empty;          size_t empty_cap;
};

/* Grow the buffer at *p to at least bytes; contents are not preserved. */
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
	free(b->owned);
	free(b->lane);
	free(b->lane_id);
	free(b->lane_weight);
	free(b->credit);
	free(b->queue);
	free(b->heap);
	free(b->taken);
	free(b->empty);
	free(b);
}

/* Scratch for a fill of n lanes into m slots, wired into *f. */
static enum mlv_err fill_prepare(struct mlv_maglev_builder *b, uint32_t n,
				 uint32_t m, struct mlv_fill *f)
{
	size_t cnt = n ? n : 1;
	enum mlv_err err;

	if ((err = reserve(&b->lane, &b->lane_cap, cnt * sizeof(*b->lane))) ||
	    (err = reserve(&b->lane_id, &b->lane_id_cap,
			   cnt * sizeof(*b->lane_id))) ||
	    (err = reserve(&b->lane_weight, &b->lane_weight_cap,
			   cnt * sizeof(*b->lane_weight))) ||
	    (err = reserve(&b->credit, &b->credit_cap,
			   cnt * sizeof(*b->credit))) ||
	    (err = reserve(&b->queue, &b->queue_cap,
			   cnt * sizeof(*b->queue))) ||
	    (err = reserve(&b->heap, &b->heap_cap, cnt * sizeof(*b->heap))) ||
	    (err = reserve(&b->taken, &b->taken_cap,
			   mlv_fill_taken_words(m) * sizeof(*b->taken))) ||
	    (err = reserve(&b->empty, &b->empty_cap,
			   (size_t)mlv_fill_empty_size(m) * sizeof(*b->empty))))
		return err;
	*f = (struct mlv_fill){
		.m = m, .lane = b->lane, .id = b->lane_id,
		.weight = b->lane_weight, .credit = b->credit,
		.queue = b->queue, .heap = b->heap,
		.taken = b->taken, .empty = b->empty,
	};
	return MLV_OK;
}

/* Append a lane (a backend with weight > 0) in turn order. */
static void add_lane(struct mlv_fill *f, uint32_t offset, uint32_t skip,
		     uint32_t weight, uint32_t id)
{
	mlv_lane_init(&f->lane[f->nlanes], offset, skip, f->m);
	f->id[f->nlanes] = (uint16_t)id;
	f->weight[f->nlanes] = weight;
	f->nlanes++;
}

/* ---- fingerprint --------------------------------------------------------- */

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Up to this many backends without a slot (a failed or drained one has
 * weight 0) take ranks_past_gaps, one vectorised pass over the slots each;
 * with more, the table-driven translation is as cheap. */
#define FP_MAX_GAPS 16

/* slots[0..len-1] as the stream's u16 ranks into out, for a table whose
 * ranks grow with the index (input in name order, no stray value): a
 * slot's rank is its value less the number of non-owners gap[] below it;
 * NO_BACKEND stays itself. Whole-array passes of compares and subtracts
 * the compiler vectorises: the table-driven translation adds about 55 us
 * to a table's fingerprint (100 backends, one without slots, M = 65537),
 * several times the XXH3 hash of its stream (docs/maglev.md,
 * "Fingerprint"). */
static void ranks_past_gaps(const uint16_t *slots, uint32_t len,
			    const uint16_t *gap, uint32_t n_gaps, uint16_t n,
			    uint16_t *out)
{
	memcpy(out, slots, (size_t)len * sizeof(*out));
	for (uint32_t g = 0; g < n_gaps; g++) {
		uint16_t z = gap[g];

		for (uint32_t i = 0; i < len; i++)
			out[i] -= (uint16_t)(slots[i] > z && slots[i] < n);
	}
}

uint64_t mlv_maglev_fingerprint(const struct mlv_maglev_named *named,
				uint32_t n, uint32_t m, const uint16_t *slots,
				uint32_t *rank)
{
	XXH3_state_t st;
	uint8_t buf[1024];
	uint16_t gap[FP_MAX_GAPS];  /* index order: the non-owners' indices */
	uint32_t owners = 0, n_gaps = 0;
	bool stray = false, index_order;

	memset(rank, 0, (size_t)n * sizeof(*rank));
	for (uint32_t j = 0; j < m; j++) {
		if (slots[j] < n)
			rank[slots[j]] = 1;
		stray |= slots[j] >= n && slots[j] != MLV_MAGLEV_NO_BACKEND;
	}
	/* Turn "owns a slot" flags into ranks among owners, in name order. */
	index_order = !stray && n <= MLV_MAGLEV_MAX_BACKENDS;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t *r = &rank[named[k].index];

		index_order &= named[k].index == k;
		if (!*r && n_gaps++ < FP_MAX_GAPS)
			gap[n_gaps - 1] = (uint16_t)named[k].index;
		*r = *r ? owners++ : MLV_MAGLEV_NO_BACKEND;
	}

	/* docs/maglev.md, "Fingerprint": XXH3-64, seed 0. Reset and update
	 * fail only on a NULL state or a NULL input with a length, which
	 * cannot happen here. */
	XXH3_INITSTATE(&st);
	(void)XXH3_64bits_reset(&st);
	put_le32(buf, m);
	put_le32(buf + 4, owners);
	(void)XXH3_64bits_update(&st, buf, 8);
	for (uint32_t k = 0; k < n; k++) {
		size_t len;

		if (rank[named[k].index] == MLV_MAGLEV_NO_BACKEND)
			continue;
		len = strlen(named[k].name);
		put_le32(buf, (uint32_t)len);
		(void)XXH3_64bits_update(&st, buf, 4);
		(void)XXH3_64bits_update(&st, named[k].name, len);
	}
	/* The usual cases (input in name order: the generation builder's)
	 * need no table look-up per slot, and on a little-endian host the
	 * u16 values already are the stream's u16le ranks. Every backend
	 * owning a slot: each slot's rank is its value, hash the array as it
	 * is. A few without (after a failure): ranks_past_gaps. Translating
	 * slot by slot costs more than hashing the stream, even with
	 * SipHash-2-4 (perf of 1000 table builds at M = 65537: 7 % against
	 * 4.5 %). */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	index_order = false;
#endif
	if (index_order && n_gaps == 0) {
		(void)XXH3_64bits_update(&st, slots,
					 (size_t)m * sizeof(*slots));
		return XXH3_64bits_digest(&st);
	}
	if (index_order && n_gaps <= FP_MAX_GAPS) {
		uint16_t out[sizeof(buf) / sizeof(uint16_t)];
		const uint32_t chunk = sizeof(out) / sizeof(out[0]);

		for (uint32_t j = 0; j < m; j += chunk) {
			uint32_t len = m - j < chunk ? m - j : chunk;

			ranks_past_gaps(slots + j, len, gap, n_gaps,
					(uint16_t)n, out);
			(void)XXH3_64bits_update(&st, out,
						 (size_t)len * sizeof(*out));
		}
		return XXH3_64bits_digest(&st);
	}
	for (uint32_t j = 0; j < m;) {
		uint32_t end = m - j > sizeof(buf) / 2 ? j + sizeof(buf) / 2
						       : m;
		size_t used = 0;

		for (; j < end; j++) {
			uint32_t r = slots[j] < n ? rank[slots[j]]
						  : MLV_MAGLEV_NO_BACKEND;

			buf[used++] = (uint8_t)r;
			buf[used++] = (uint8_t)(r >> 8);
		}
		(void)XXH3_64bits_update(&st, buf, used);
	}
	return XXH3_64bits_digest(&st);
}

/* ---- entry points -------------------------------------------------------- */

static int by_name(const void *a, const void *b)
{
	const struct mlv_maglev_named *x = a, *y = b;

	return strcmp(x->name, y->name);
}

enum mlv_err mlv_maglev_builder_build(struct mlv_maglev_builder *b,
				      const struct mlv_maglev_backend *backends,
				      uint32_t n, uint32_t m, uint16_t *slots,
				      uint64_t *fingerprint_out)
{
	struct mlv_fill f;
	enum mlv_err err;

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
	    (err = fill_prepare(b, n, m, &f)))
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
		if ((err = mlv_maglev_name_perm(backends[i].name, m, &offset,
						&skip)))
			return err;
		add_lane(&f, offset, skip, backends[i].weight, i);
	}
	f.slots = slots;
	mlv_fill_run(&f);
	if (fingerprint_out != NULL)
		*fingerprint_out = mlv_maglev_fingerprint(b->named, n, m, slots,
							   b->owned);
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
	struct mlv_fill f;
	enum mlv_err err;

	if (slots == NULL || (n > 0 && (offset == NULL || skip == NULL)) ||
	    n > MLV_MAGLEV_MAX_BACKENDS || m > MLV_MAGLEV_MAX_SIZE ||
	    !mlv_is_prime(m))
		return MLV_E_INVAL;
	for (uint32_t i = 0; i < n; i++)
		if (offset[i] >= m || skip[i] < 1 || skip[i] >= m ||
		    (weight != NULL && weight[i] > MLV_MAGLEV_MAX_WEIGHT))
			return MLV_E_INVAL;
	if ((err = mlv_maglev_builder_new(&b)) ||
	    (err = fill_prepare(b, n, m, &f)))
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t w = weight != NULL ? weight[i] : 1;

		if (w > 0)
			add_lane(&f, offset[i], skip[i], w, i);
	}
	f.slots = slots;
	mlv_fill_run(&f);
out:
	mlv_maglev_builder_free(b);
	return err;
}
