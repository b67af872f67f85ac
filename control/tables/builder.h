/* SPDX-License-Identifier: BSD-3-Clause */
/* Lookup-table builders: Maglev, rendezvous (HRW) and a consistent-hash
 * ring, all compiled into the same M-slot table of 16-bit backend indices,
 * so the data path's per-packet cost (one array read) does not depend on
 * the choice. Each builder also gives every slot a *second choice*: the
 * runner-up backend for that slot, which the data path uses for instant
 * failover and bounded loads (docs/table-builders.md).
 *
 * Selection goes through a small ops table (one struct mlv_table_ops per
 * builder), in the style of DPDK l3fwd's lookup methods, not #ifdefs.
 *
 * A backend's identity is its name. Given the same (name, weight,
 * no_second) set, every instance builds the same slot -> name mapping,
 * second-choice mapping and fingerprint whatever order the caller lists
 * the backends in. Slot values are indices into the caller's array. The
 * hashes and rules are a wire format: docs/table-builders.md.
 *
 * Plain C, no DPDK. All functions are pure and thread-safe (no global
 * state); call them from any thread. They allocate scratch memory with
 * malloc.
 */
#ifndef MLV_TABLE_BUILDER_H
#define MLV_TABLE_BUILDER_H

#include <stdbool.h>
#include <stdint.h>

#include "control/base/error.h"
#include "control/tables/maglev.h"

/* How a VIP's lookup table is built (docs/table-builders.md):
 * X(ENUM_SUFFIX, config name). */
#define MLV_TABLE_KINDS(X)            \
	X(MAGLEV, "maglev")           \
	X(RENDEZVOUS, "rendezvous")   \
	X(RING, "ring")

enum mlv_table_kind {
#define MLV_TABLE_KIND_ENUM(name, text) MLV_TABLE_##name,
	MLV_TABLE_KINDS(MLV_TABLE_KIND_ENUM)
#undef MLV_TABLE_KIND_ENUM
	MLV_TABLE__COUNT
};

/* Ring points per unit of weight: default, and the allowed range. */
#define MLV_RING_DEFAULT_VNODES 10u
#define MLV_RING_MAX_VNODES     1000u
/* Most points one ring may have (sum of weight x vnodes): 24 bytes of
 * scratch each while building, 48 MiB at the limit. */
#define MLV_RING_MAX_POINTS     (1u << 21)
/* Largest max_load a VIP may set (a factor of the mean). */
#define MLV_MAX_LOAD_LIMIT      100.0

struct mlv_table_backend {
	const char *name;   /* identity; non-empty, unique within one build */
	uint32_t weight;    /* 0..MLV_MAGLEV_MAX_WEIGHT; 0 = owns no slot and
			       is never a second choice */
	bool no_second;     /* owns its slots but is never a second choice
			       (a backend that is down: its slots' flows go to
			       their second choices, which must be usable) */
};

struct mlv_table_spec {
	enum mlv_table_kind kind;
	uint32_t size;      /* M: prime, MLV_MAGLEV_MIN_SIZE..MAX_SIZE */
	uint32_t vnodes;    /* ring only: points per unit of weight,
			       1..MLV_RING_MAX_VNODES; ignored by the others */
};

/* What the dispatcher hands a builder after validating it: backends in
 * the caller's order plus their name order, for deterministic ties. */
struct mlv_table_input {
	const struct mlv_table_backend *backends;
	uint32_t n;
	const uint32_t *by_name;   /* caller indices in strcmp order of name */
	const struct mlv_table_spec *spec;
};

/* One builder. build() fills first[0..M-1] with the owner of each slot
 * (MLV_MAGLEV_NO_BACKEND when every weight is 0) and, when second is not
 * NULL, second[0..M-1] with the slot's second choice: a backend with
 * weight > 0 and !no_second, different from first[j], or
 * MLV_MAGLEV_NO_BACKEND when there is none. Returns MLV_OK,
 * MLV_E_NOMEM, or MLV_E_RANGE (ring: too many points).
 * second(), where not NULL, computes second[] alone from the first[]
 * build() made for the same input, exactly as build() would have: for
 * builders whose second choices cost as much as the first, so they can be
 * computed later (docs/generations.md, "Deferred second choices"). */
struct mlv_table_ops {
	enum mlv_table_kind kind;
	const char *name;          /* the config word */
	enum mlv_err (*build)(const struct mlv_table_input *in,
			      uint16_t *first, uint16_t *second);
	enum mlv_err (*second)(const struct mlv_table_input *in,
			       const uint16_t *first, uint16_t *second);
};

/* The builder for kind, or NULL for a value outside the enum. */
const struct mlv_table_ops *mlv_table_ops_of(enum mlv_table_kind kind);

/* The config word for kind ("maglev", ...), or "unknown". */
const char *mlv_table_kind_name(enum mlv_table_kind kind);

/* Validate, order by name, and run spec->kind's builder (see struct
 * mlv_table_ops for first/second). *fingerprint (if not NULL) receives the
 * digest of the slot -> name mapping of first[], in the format of
 * docs/maglev.md ("Fingerprint"), whichever builder made it. second may
 * be NULL when the caller does not need second choices (it is also
 * cheaper). Returns MLV_E_INVAL on a NULL spec/first, an unknown kind, a
 * bad size or vnodes, NULL/empty/duplicate names, a weight above
 * MLV_MAGLEV_MAX_WEIGHT, n above MLV_MAGLEV_MAX_BACKENDS, or backends NULL
 * with n > 0; MLV_E_RANGE when a ring would exceed MLV_RING_MAX_POINTS;
 * MLV_E_NOMEM. first and second are unspecified on error. */
enum mlv_err mlv_table_build(const struct mlv_table_spec *spec,
			     const struct mlv_table_backend *backends,
			     uint32_t n, uint16_t *first, uint16_t *second,
			     uint64_t *fingerprint);

/* Whether kind's second choices can be computed after its first ones
 * (mlv_table_build_second); false for a value outside the enum. */
bool mlv_table_second_separable(enum mlv_table_kind kind);

/* second[0..M-1] for first[], which mlv_table_build made from the same
 * spec and backends (in any order of the same set): byte-identical to the
 * second[] mlv_table_build would have filled. Returns MLV_OK,
 * MLV_E_INVAL (the input errors of mlv_table_build, a NULL second, or a
 * kind that is not separable), or MLV_E_NOMEM. Any thread. */
enum mlv_err mlv_table_build_second(const struct mlv_table_spec *spec,
				    const struct mlv_table_backend *backends,
				    uint32_t n, const uint16_t *first,
				    uint16_t *second);

/* The fingerprint of slots (an m-slot table over backends[0..n-1]) in the
 * docs/maglev.md format: independent of the input order, unaffected by
 * backends that own no slot. by_name lists the caller indices in strcmp
 * order of name. Returns MLV_OK and *out, or MLV_E_NOMEM. */
enum mlv_err mlv_table_fingerprint(const struct mlv_table_backend *backends,
				   const uint32_t *by_name, uint32_t n,
				   uint32_t m, const uint16_t *slots,
				   uint64_t *out);

/* The ring's successor rule: the index of the first of the n sorted
 * points pos[] at or after h, wrapping to 0 past the last (n > 0). Shared
 * by the ring builder and tools/bench/hash-compare. Pure; any thread. */
uint32_t mlv_ring_successor(const uint64_t *pos, uint32_t n, uint64_t h);

/* The builders (maglev_second.c, rendezvous.c, ring.c). */
extern const struct mlv_table_ops mlv_table_maglev_ops;
extern const struct mlv_table_ops mlv_table_rendezvous_ops;
extern const struct mlv_table_ops mlv_table_ring_ops;

#endif
