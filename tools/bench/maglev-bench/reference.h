/* SPDX-License-Identifier: BSD-3-Clause */
/* A straightforward implementation of Pseudocode 1 of the Maglev paper
 * (Eisenbud et al., NSDI 2016) with maglevd's name hashing and weighted turn
 * order, written from docs/maglev.md. It exists only so maglev-bench can
 * check that control/tables/maglev.c builds identical tables and measure how much
 * faster it is; the daemon never links it.
 *
 * Single-threaded tool code; any thread.
 */
#ifndef MLV_MAGLEV_REFERENCE_H
#define MLV_MAGLEV_REFERENCE_H

#include <stdint.h>

#include "control/base/error.h"
#include "control/tables/maglev.h"

/* Same contract as mlv_maglev_build() without the fingerprint: slots[j] is
 * an index into backends[] or MLV_MAGLEV_NO_BACKEND. Returns MLV_E_INVAL on
 * bad input (size, NULL/empty/duplicate name, weight, n), MLV_E_NOMEM. */
enum mlv_err mlv_ref_maglev_build(const struct mlv_maglev_backend *backends,
				  uint32_t n, uint32_t m, uint16_t *slots);

#endif
