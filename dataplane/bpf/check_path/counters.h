/* SPDX-License-Identifier: BSD-3-Clause */
/* What the check-path programs did: one per-CPU counter per outcome.
 * X-macro shared by the BPF programs (indices) and control/check_path
 * (names for the control socket and metrics). */
#ifndef MLV_BPF_CHECK_PATH_COUNTERS_H
#define MLV_BPF_CHECK_PATH_COUNTERS_H

/* X(enum suffix, name, meaning) */
#define MLV_CP_COUNTERS(X)                                                 \
	X(CARRIED, "carried",                                              \
	  "check packets re-addressed to the VIP and sent as the data plane sends the VIP's") \
	X(RETURNED, "returned",                                            \
	  "replies from the VIP re-addressed to the backend for the check's socket") \
	X(DROPPED, "dropped",                                              \
	  "check packets that could not be re-addressed or encapsulated: dropped, never sent bare")

enum mlv_cp_counter {
#define MLV_CP_CTR_ENUM(id, name, help) MLV_CP_CTR_##id,
	MLV_CP_COUNTERS(MLV_CP_CTR_ENUM)
#undef MLV_CP_CTR_ENUM
	MLV_CP_CTR__COUNT
};

#endif
