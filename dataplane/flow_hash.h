/* The flow hash: which Maglev slot a flow lands in is
 * table[mlv_flow_hash(key) % M], so every maglevd instance must compute the
 * same value. The function is fixed and documented in docs/flow-hash.md
 * like a wire format. Plain C, pure: any thread. */
#ifndef MLV_FLOW_HASH_H
#define MLV_FLOW_HASH_H

#include <stdint.h>

#include "flow_key.h"

/* Hash all 40 bytes of key. The result does not depend on the CPU or on
 * the implementation chosen (hardware CRC32C when the CPU has it, a table
 * otherwise: identical output). */
uint32_t mlv_flow_hash(const struct mlv_flow_key *key);

/* The seed the CRC32C register starts from (docs/flow-hash.md). */
#define MLV_FLOW_HASH_SEED 0x4D474C56u

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
