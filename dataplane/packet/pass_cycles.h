/* SPDX-License-Identifier: BSD-3-Clause */
/* TSC cycles per pass of the worker's packet path, for measurement builds
 * only (meson -Dpass_cycles=true; the worker logs them when it stops).
 * Why: whole-run packet rates on a shared host move by ±15–40 % from one
 * run to the next, while the median of 8 pairs of maglevd's own cycles
 * (the passes less the flush) per flush cycle comes within 1.2 % of 1
 * when both sides run the same build (docs/benchmarks.md, "Data-plane
 * commands"). In every other build MLV_PASS_CYCLES is 0 and each use
 * sits under `if (MLV_PASS_CYCLES)`, which the compiler removes. Plain
 * C; written by the owner worker, read once it has stopped. */
#ifndef MLV_PASS_CYCLES_H
#define MLV_PASS_CYCLES_H

#include <stddef.h>
#include <stdint.h>

#ifndef MLV_PASS_CYCLES
#define MLV_PASS_CYCLES 0
#endif

/* X(name, label): the passes of mlv_forward_burst, then the flush. */
#define MLV_PASSES(X)                                                     \
	X(PARSE,   "parse")    /* pass 1 */                               \
	X(VIP,     "vip")      /* pass 2: VIP, flow hash, prefetches */   \
	X(BACKEND, "backend")  /* pass 3 less the flushes it triggers */  \
	X(FLUSH,   "flush")    /* every rte_eth_tx_burst: the PMD */

enum mlv_pass {
#define MLV_PASS_ENUM(name, label) MLV_PASS_##name,
	MLV_PASSES(MLV_PASS_ENUM)
#undef MLV_PASS_ENUM
	MLV_PASS__COUNT
};

struct mlv_pass_cycles {
	uint64_t cycles[MLV_PASS__COUNT];
	uint64_t packets;   /* frames the passes were timed over */
};

/* "parse 11.7 vip 12.1 backend 40.2 flush 13.8 own 64.0 own/flush 4.64"
 * (TSC cycles per packet; own: the passes less the flush) into buf, cut
 * short to len - 1 characters. Returns how many it wanted (snprintf's
 * convention); an empty string and 0 if nothing was timed. Any thread;
 * reads pc only. */
int mlv_pass_cycles_format(const struct mlv_pass_cycles *pc, char *buf,
			   size_t len);

#endif
