/* SPDX-License-Identifier: BSD-3-Clause */
#include "control/base/siphash.h"

#define ROTL64(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

/* Byte-order independent little-endian load, so the hash is the same on
 * every host (it is part of a documented format). */
static inline uint64_t load_le64(const uint8_t *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
	       (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 |
	       (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
	       (uint64_t)p[7] << 56;
}

static inline void sipround(struct mlv_siphash_state *st)
{
	st->v0 += st->v1;
	st->v1 = ROTL64(st->v1, 13);
	st->v1 ^= st->v0;
	st->v0 = ROTL64(st->v0, 32);
	st->v2 += st->v3;
	st->v3 = ROTL64(st->v3, 16);
	st->v3 ^= st->v2;
	st->v0 += st->v3;
	st->v3 = ROTL64(st->v3, 21);
	st->v3 ^= st->v0;
	st->v2 += st->v1;
	st->v1 = ROTL64(st->v1, 17);
	st->v1 ^= st->v2;
	st->v2 = ROTL64(st->v2, 32);
}

static inline void compress(struct mlv_siphash_state *st, uint64_t m)
{
	st->v3 ^= m;
	sipround(st);
	sipround(st);
	st->v0 ^= m;
}

void mlv_siphash24_init(struct mlv_siphash_state *st,
			const struct mlv_siphash_key *key)
{
	uint64_t k0 = load_le64(key->bytes);
	uint64_t k1 = load_le64(key->bytes + 8);

	/* "somepseudorandomlygeneratedbytes", from the SipHash paper. */
	st->v0 = k0 ^ 0x736f6d6570736575ULL;
	st->v1 = k1 ^ 0x646f72616e646f6dULL;
	st->v2 = k0 ^ 0x6c7967656e657261ULL;
	st->v3 = k1 ^ 0x7465646279746573ULL;
	st->tail = 0;
	st->ntail = 0;
	st->total = 0;
}

void mlv_siphash24_update(struct mlv_siphash_state *st, const void *data,
			  size_t len)
{
	const uint8_t *p = data;

	st->total += len;
	/* Top up a partial word first. */
	while (st->ntail != 0 && len != 0) {
		st->tail |= (uint64_t)*p++ << (8 * st->ntail);
		len--;
		if (++st->ntail == 8) {
			compress(st, st->tail);
			st->tail = 0;
			st->ntail = 0;
		}
	}
	for (; len >= 8; p += 8, len -= 8)
		compress(st, load_le64(p));
	for (; len != 0; len--)
		st->tail |= (uint64_t)*p++ << (8 * st->ntail++);
}

uint64_t mlv_siphash24_final(struct mlv_siphash_state *st)
{
	/* Last block: pending bytes plus the length mod 256 in the top byte. */
	compress(st, st->tail | (st->total & 0xff) << 56);
	st->v2 ^= 0xff;
	sipround(st);
	sipround(st);
	sipround(st);
	sipround(st);
	return st->v0 ^ st->v1 ^ st->v2 ^ st->v3;
}

uint64_t mlv_siphash24(const struct mlv_siphash_key *key, const void *data,
		       size_t len)
{
	struct mlv_siphash_state st;

	mlv_siphash24_init(&st, key);
	mlv_siphash24_update(&st, data, len);
	return mlv_siphash24_final(&st);
}
