/* SPDX-License-Identifier: BSD-3-Clause */
/* Small integer hashes every layer may use. Pure; any thread. */
#ifndef MLV_HASH_H
#define MLV_HASH_H

#include <stdint.h>

/* murmur3's 32-bit finalizer (Appleby, MurmurHash3 fmix32): a bijection
 * in which every input bit affects every output bit. It is part of the
 * flow hash (docs/flow-hash.md), a wire format, so it never changes. */
static inline uint32_t mlv_fmix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85EBCA6Bu;
	h ^= h >> 13;
	h *= 0xC2B2AE35u;
	h ^= h >> 16;
	return h;
}

#endif
