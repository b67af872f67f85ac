/* SPDX-License-Identifier: BSD-3-Clause */
/* What every libFuzzer target here shares: the entry point's prototype
 * and CHECK, an invariant that aborts (so libFuzzer keeps the input as a
 * crash) whatever NDEBUG says. */
#ifndef MLV_FUZZ_CHECK_H
#define MLV_FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c)                                                          \
	do {                                                              \
		if (!(c)) {                                               \
			fprintf(stderr, "%s:%d: invariant failed: %s\n",  \
				__FILE__, __LINE__, #c);                  \
			abort();                                          \
		}                                                         \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
