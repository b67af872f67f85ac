/* SPDX-License-Identifier: BSD-3-Clause */
/* The Maglev lookup-table builder (Eisenbud et al., NSDI 2016, Pseudocode 1)
 * with weights. Plain C, no DPDK: shared by the daemon, tools and tests.
 *
 * A backend's identity is its name. Given the same set of (name, weight)
 * pairs, every maglevd instance builds the same slot -> name mapping and the
 * same fingerprint, whatever order the caller lists them in. Slot values are
 * indices into the caller's array, so callers that want byte-identical
 * arrays across instances pass backends sorted by name (strcmp order), as
 * the generation builder does. Hash functions and seeds: docs/maglev.md.
 *
 * All functions are pure and thread-safe (no global state); call them from
 * any thread. They allocate scratch memory with malloc.
 */
#ifndef MLV_MAGLEV_H
#define MLV_MAGLEV_H

#include <stdbool.h>
#include <stdint.h>

#include "control/base/error.h"

/* Slot value meaning "no backend can take new flows" (all weights 0). */
#define MLV_MAGLEV_NO_BACKEND   0xFFFFu
/* Largest backend count a 16-bit slot can index (0xFFFF is reserved). */
#define MLV_MAGLEV_MAX_BACKENDS 65535u
/* Table sizes: prime, within [MIN, MAX]; DEFAULT as the paper suggests. */
#define MLV_MAGLEV_DEFAULT_SIZE 65537u
#define MLV_MAGLEV_MIN_SIZE     251u
#define MLV_MAGLEV_MAX_SIZE     5000011u
/* Largest weight a backend may have. */
#define MLV_MAGLEV_MAX_WEIGHT   1000000u

struct mlv_maglev_backend {
	const char *name;   /* identity; unique within one build */
	uint32_t weight;    /* share of slots; 0 = keep known, own no slot */
};

/* True if n is prime. */
bool mlv_is_prime(uint32_t n);

/* Largest prime <= n (0 if none) and smallest prime >= n (0 if none fits
 * in 32 bits), for error messages that name the nearest allowed sizes. */
void mlv_nearest_primes(uint32_t n, uint32_t *below, uint32_t *above);

/* MLV_OK if m is an allowed table size (prime, within MIN..MAX),
 * MLV_E_RANGE if out of bounds, MLV_E_INVAL if not prime. */
enum mlv_err mlv_maglev_check_size(uint32_t m);

/* Build an m-slot table for n backends into slots[0..m-1]. Each slot holds
 * an index into backends[], or MLV_MAGLEV_NO_BACKEND when every weight is 0
 * (or n == 0). *fingerprint (if not NULL) receives a 64-bit digest of the
 * slot -> backend-name mapping that does not depend on the input order.
 * Returns MLV_E_INVAL on a bad size, duplicate, NULL or empty name, n too
 * large, a weight above MLV_MAGLEV_MAX_WEIGHT or a NULL array (backends may
 * be NULL only when n == 0); MLV_E_NOMEM if scratch allocation fails. slots
 * is unspecified on error. */
enum mlv_err mlv_maglev_build(const struct mlv_maglev_backend *backends,
			      uint32_t n, uint32_t m, uint16_t *slots,
			      uint64_t *fingerprint);

/* The same algorithm with explicit per-backend permutation parameters
 * (offset < m, 1 <= skip < m) instead of name hashes, in the given order;
 * for reproducing the paper's Table 1 and for tests. weight may be NULL
 * (all 1). Same returns as mlv_maglev_build, except that m may be any prime
 * from 2 to MLV_MAGLEV_MAX_SIZE (the paper's example uses 7). */
enum mlv_err mlv_maglev_build_perm(const uint32_t *offset,
				   const uint32_t *skip,
				   const uint32_t *weight, uint32_t n,
				   uint32_t m, uint16_t *slots);

/* The permutation parameters mlv_maglev_build derives from a backend name
 * for table size m (prime, >= 2): offset = h1(name) mod m and
 * skip = h2(name) mod (m - 1) + 1, h1/h2 being SipHash-2-4 of the name's
 * bytes under the keys in docs/maglev.md. For tools that explain a table
 * (whatif, docs examples) and tests. MLV_E_INVAL on a NULL/empty name or
 * m < 2. */
enum mlv_err mlv_maglev_name_perm(const char *name, uint32_t m,
				  uint32_t *offset, uint32_t *skip);

/* One backend's name and its index in the caller's array. */
struct mlv_maglev_named {
	const char *name;
	uint32_t index;
};

/* The fingerprint (docs/maglev.md, "Fingerprint") of an m-slot table filled
 * by any builder: slots hold caller indices < n, anything else counts as no
 * backend. named[0..n-1] lists every backend in strcmp order of name; rank
 * is scratch of n entries. Returns the 64-bit digest; it does not depend on
 * the input order, and backends that own no slot do not affect it. Pure:
 * any thread, on tables no thread is writing. */
uint64_t mlv_maglev_fingerprint(const struct mlv_maglev_named *named,
				uint32_t n, uint32_t m, const uint16_t *slots,
				uint32_t *rank);

/* A reusable builder: keeps its scratch memory between builds, so a thread
 * that rebuilds many tables (the control thread on reload) does not pay for
 * allocating and faulting in fresh scratch each time. Output is identical
 * to mlv_maglev_build. A builder is used by one thread at a time; different
 * builders are independent. */
struct mlv_maglev_builder;

/* Allocate an empty builder into *out. MLV_E_INVAL if out is NULL,
 * MLV_E_NOMEM on allocation failure. */
enum mlv_err mlv_maglev_builder_new(struct mlv_maglev_builder **out);

/* Free a builder and its scratch; NULL is a no-op. */
void mlv_maglev_builder_free(struct mlv_maglev_builder *b);

/* mlv_maglev_build using b's scratch (grown as needed, never shrunk until
 * mlv_maglev_builder_free). Same arguments and returns, plus MLV_E_INVAL if
 * b is NULL. */
enum mlv_err mlv_maglev_builder_build(struct mlv_maglev_builder *b,
				      const struct mlv_maglev_backend *backends,
				      uint32_t n, uint32_t m, uint16_t *slots,
				      uint64_t *fingerprint);

#endif
