/* SPDX-License-Identifier: BSD-3-Clause */
/* The flow hash: which Maglev slot a flow lands in is
 * table[mlv_flow_hash(key) % M], so every maglevd instance must compute the
 * same value. The function is fixed and documented in docs/flow-hash.md
 * like a wire format. Plain C, pure: any thread. */
#ifndef MLV_FLOW_HASH_H
#define MLV_FLOW_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "control/base/hash.h"
#include "dataplane/packet/flow_key.h"

/* Hash all 40 bytes of key. The result does not depend on the CPU or on
 * the implementation chosen (hardware CRC32C when the CPU has it, a table
 * otherwise: identical output). */
uint32_t mlv_flow_hash(const struct mlv_flow_key *key);

/* The seed the CRC32C register starts from (docs/flow-hash.md). */
#define MLV_FLOW_HASH_SEED 0x4D474C56u

/* The last step is mlv_fmix32: every input bit affects every output bit,
 * which a CRC alone does not give the low bits Maglev's modulo uses. */

/* mlv_flow_hash inlined, for the per-packet path: the same value, but in
 * code built for SSE4.2 (the data plane is: DPDK's -march) the five
 * CRC32 instructions are inlined instead of reached through a call and
 * an indirect call (20 % more Mpps: docs/benchmarks.md, "Why the data
 * path is as it is"). Elsewhere it is mlv_flow_hash. Pure; any thread. */
#if defined(__x86_64__) && defined(__SSE4_2__)
#include <nmmintrin.h>
#include <string.h>

static inline uint32_t mlv_flow_hash_inline(const struct mlv_flow_key *key)
{
	uint64_t c = MLV_FLOW_HASH_SEED;

	for (size_t i = 0; i < sizeof(*key) / 8; i++) {
		uint64_t w;

		memcpy(&w, (const uint8_t *)key + 8 * i, 8);   /* little-endian */
		c = _mm_crc32_u64(c, w);
	}
	return mlv_fmix32((uint32_t)c);
}
#else
static inline uint32_t mlv_flow_hash_inline(const struct mlv_flow_key *key)
{
	return mlv_flow_hash(key);
}
#endif

/* One implementation of the function above. */
struct mlv_flow_hash_ops {
	const char *name;    /* "sse4.2" or "table" */
	uint32_t (*hash)(const struct mlv_flow_key *key);
};

/* The implementation mlv_flow_hash uses: chosen once by a CPU check (at
 * load time, or on first use, whichever comes first) and never changed.
 * Any thread; returns a static object. */
const struct mlv_flow_hash_ops *mlv_flow_hash_active(void);

/* Every implementation this CPU can run, the portable table one first;
 * *n receives the count. Tests and benchmarks compare them. Any thread. */
const struct mlv_flow_hash_ops *const *mlv_flow_hash_impls(unsigned *n);

#endif
