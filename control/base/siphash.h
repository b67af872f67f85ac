/* SPDX-License-Identifier: BSD-3-Clause */
/* SipHash-2-4 with a 64-bit output (Aumasson & Bernstein, 2012).
 *
 * Used where maglevd needs a keyed hash whose output is part of a "wire
 * format" that every instance must agree on: backend-name hashes for the
 * Maglev permutations (docs/maglev.md) and for the rendezvous and ring
 * builders (docs/table-builders.md, "Hashes"). Hand-rolled because no
 * library maglevd already depends on exposes SipHash from plain C
 * (libsodium's crypto_shorthash would be a new dependency for ~60 lines);
 * checked against the reference test vectors in tests/unit/base/test_siphash.c.
 *
 * Pure functions; any thread.
 */
#ifndef MLV_SIPHASH_H
#define MLV_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

/* A 128-bit key as the 16 bytes the SipHash paper calls k0..k15. */
struct mlv_siphash_key {
	uint8_t bytes[16];
};

/* SipHash-2-4 of len bytes at data (may be NULL when len == 0) under key.
 * Returns the 64-bit result; its little-endian encoding is the 8-byte output
 * of the reference implementation. */
uint64_t mlv_siphash24(const struct mlv_siphash_key *key, const void *data,
		       size_t len);

/* Incremental form, for hashing a long byte stream without building it in
 * memory. Feeding the bytes in any split gives the same result as one
 * mlv_siphash24() call over their concatenation. */
struct mlv_siphash_state {
	uint64_t v0, v1, v2, v3;
	uint64_t tail;      /* pending bytes, little-endian, low first */
	uint32_t ntail;     /* pending byte count, 0..7 */
	uint64_t total;     /* bytes fed so far (only the low 8 bits are used) */
};

/* Start a hash under key. */
void mlv_siphash24_init(struct mlv_siphash_state *st,
			const struct mlv_siphash_key *key);
/* Feed len bytes (data may be NULL when len == 0). */
void mlv_siphash24_update(struct mlv_siphash_state *st, const void *data,
			  size_t len);
/* Finish and return the hash; st must be re-initialised before reuse. */
uint64_t mlv_siphash24_final(struct mlv_siphash_state *st);

#endif
