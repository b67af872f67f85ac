/* SPDX-License-Identifier: BSD-3-Clause */
/* The hashes the rendezvous and ring builders share (a wire format:
 * docs/table-builders.md, "Hashes"). Names are hashed once per build with
 * SipHash-2-4 under a fixed key, like the Maglev permutations; everything
 * per slot or per ring point is the 64-bit MurmurHash3 finalizer (fmix64)
 * of that name hash combined with a counter, which is cheap enough for
 * the M x N scores rendezvous needs.
 *
 * Pure functions; any thread.
 */
#ifndef MLV_TABLE_HASH_H
#define MLV_TABLE_HASH_H

#include <stdint.h>
#include <string.h>

#include "control/base/siphash.h"

/* "maglevd-r1-key-0" and "maglevd-k1-key-0" as SipHash key bytes. */
#define MLV_TABLE_KEY(a, b) { { 'm', 'a', 'g', 'l', 'e', 'v', 'd', '-', \
				(a), (b), '-', 'k', 'e', 'y', '-', '0' } }

/* MurmurHash3's 64-bit finalizer: a bijection with full avalanche. */
static inline uint64_t mlv_fmix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

/* SipHash-2-4 of the name's bytes (no NUL) under key. */
static inline uint64_t mlv_table_name_hash(const struct mlv_siphash_key *key,
					   const char *name)
{
	return mlv_siphash24(key, name, strlen(name));
}

/* The 64-bit value of (name hash h, counter i): a rendezvous score input
 * (i = slot) or a ring position (i = point number or slot). */
static inline uint64_t mlv_table_mix(uint64_t h, uint64_t i)
{
	return mlv_fmix64(h ^ mlv_fmix64(i));
}

#endif
