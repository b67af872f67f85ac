/* SPDX-License-Identifier: BSD-3-Clause */
/* Modular arithmetic for Maglev permutations (m prime, below 2^23): shared
 * by the first-choice fill (maglev_fill.c) and the second-choice walk
 * (maglev_second.c), which both need the step at which a permutation
 * offset + r * skip reaches a slot. Pure functions, any thread. */
#ifndef MLV_MOD_ARITH_H
#define MLV_MOD_ARITH_H

#include <stdint.h>

/* a + b mod m for a, b < m <= MLV_MAGLEV_MAX_SIZE (no overflow). */
static inline uint32_t mlv_add_mod(uint32_t a, uint32_t b, uint32_t m)
{
	uint32_t s = a + b;

	return s >= m ? s - m : s;
}

/* The Barrett constant of m for mlv_mul_mod. */
static inline uint64_t mlv_barrett(uint32_t m)
{
	return UINT64_MAX / m;
}

/* a * b mod m for a, b < m < 2^23, by Barrett reduction (a division per
 * probe is what the plain loop pays): the product fits in 46 bits and the
 * estimated quotient is at most one too small. barrett = mlv_barrett(m). */
static inline uint32_t mlv_mul_mod(uint32_t a, uint32_t b, uint32_t m,
				   uint64_t barrett)
{
	uint64_t x = (uint64_t)a * b;
	uint64_t q = (uint64_t)(((unsigned __int128)x * barrett) >> 64);
	uint64_t r = x - q * m;

	return (uint32_t)(r >= m ? r - m : r);
}

/* skip^-1 mod m (m prime, 0 < skip < m), by the extended Euclid. */
static inline uint32_t mlv_inverse_mod(uint32_t skip, uint32_t m)
{
	int64_t t = 0, new_t = 1, r = m, new_r = skip;

	while (new_r != 0) {
		int64_t q = r / new_r, tmp;

		tmp = t - q * new_t;
		t = new_t;
		new_t = tmp;
		tmp = r - q * new_r;
		r = new_r;
		new_r = tmp;
	}
	return (uint32_t)(t < 0 ? t + m : t);
}

#endif
