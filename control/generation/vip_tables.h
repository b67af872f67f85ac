/* SPDX-License-Identifier: BSD-3-Clause */
/* Lookup tables shared between VIPs and between generations.
 *
 * A VIP's first- and second-choice arrays and its fingerprint are a pure
 * function of its table input: builder, size, vnodes (ring), max_load
 * (compared too, so that a bounded-load change counts as a change) and the
 * name-ordered (name, effective weight, no_second) list. One generation
 * build therefore builds each distinct input once, and a table whose input
 * is unchanged is shared with the generation before instead of copied.
 * Tables are read-only once built, so sharing them with workers is safe.
 *
 * Second choices may be deferred (docs/generations.md, "Deferred second
 * choices"): a table built with defer_second has exact first choices and
 * fingerprint but every second choice MLV_MAGLEV_NO_BACKEND (has_second
 * false). mlv_gen_table_complete later builds a new table object with the
 * same first choices plus the second ones and links it from the old one
 * (with_second); the next build that would take the old table takes the
 * completed one instead. A published table is never changed in place.
 *
 * Building is split in two (docs/generations.md, "Parallel build"):
 * mlv_gen_tables_acquire decides, on the control thread and in VIP order,
 * which tables are reused, shared or new, allocates the new ones and
 * queues them; mlv_gen_tables_run then fills the queued tables, on the
 * threads of a build pool (control/tables/build_pool.h), each job writing only
 * its own table. The decisions do not depend on the number of threads,
 * so neither does the generation.
 *
 * Reference counts are plain integers: only the control thread touches
 * them (mlv_gen_build takes references, mlv_gen_free drops them, and
 * generations are freed on the control thread after their RCU grace
 * period, control/publish/publish.c). Workers only read the arrays, and an array
 * stays alive while any generation a worker may hold refers to it.
 */
#ifndef MLV_GEN_TABLES_H
#define MLV_GEN_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/base/error.h"
#include "control/tables/builder.h"

struct mlv_build_pool;

/* One built table: immutable once mlv_gen_tables_run filled it, except
 * refs and with_second (control thread only, never read by workers). */
struct mlv_gen_table {
	uint32_t refs;           /* generations holding it (plus the table
				    it completes, see with_second) */
	bool has_second;         /* false: second[] is all NO_BACKEND until
				    a completed copy replaces it */
	struct mlv_gen_table *with_second; /* the completed copy (this
				    table holds one reference), or NULL */
	uint32_t size;           /* slots */
	uint64_t key_hash;       /* SipHash of key[] */
	uint64_t fingerprint;    /* set by mlv_gen_tables_run */
	const uint16_t *first;   /* [size] */
	const uint16_t *second;  /* [size] */
	size_t key_len;
	const uint8_t *key;      /* canonical encoding of the table input */
	size_t bytes;            /* of the allocation this header starts */
};

/* How a VIP got its table in one build, for counters and logs. */
enum mlv_gen_table_source {
	MLV_GEN_TABLE_BUILT,     /* built by this build, first VIP to need it */
	MLV_GEN_TABLE_SHARED,    /* built earlier in this build for another VIP */
	MLV_GEN_TABLE_REUSED,    /* held by the previous generation (whether
				    this is the first VIP to take it or not) */
};

/* One table input: the VIP's builder parameters and its backends in name
 * order. */
struct mlv_gen_table_input {
	struct mlv_table_spec spec;
	double max_load;
	/* The VIP reads second choices as soon as it is published (bounded
	 * loads, a backend that owns slots while unusable): a table without
	 * them is completed (mlv_gen_table_complete) before it is taken. */
	bool second_now;
	/* If a new table must be built: build it without second choices if
	 * its builder can add them later (mlv_table_second_separable).
	 * Ignored with second_now. */
	bool defer_second;
	const struct mlv_table_backend *backends;
	uint32_t n;
};

/* Build-time state: an index of the previous generation's tables and of
 * those taken so far, and the list (held[], room for one per VIP) of
 * tables the new generation holds a reference to. */
struct mlv_gen_tables {
	struct mlv_gen_table **held;   /* caller-provided, [max_held] */
	uint32_t n_held, max_held;
	struct gen_tables_slot *slots; /* open addressing on key_hash */
	uint32_t mask;
	uint8_t *key_buf;              /* scratch for one encoding */
	size_t key_cap;
	/* Tables queued for mlv_gen_tables_run; jobs[0..n_run-1] are
	 * filled already. */
	struct mlv_gen_table **jobs;
	uint32_t n_jobs, jobs_cap, n_run;
	/* Threads for mlv_gen_tables_run: set after begin; NULL (begin's
	 * value) runs the jobs on the calling thread. */
	struct mlv_build_pool *pool;
};

/* Start a build that will hold at most max_held tables in held[],
 * reusing any of prev[0..n_prev-1] (the previous generation's held list;
 * NULL/0 for none). Returns MLV_OK or MLV_E_NOMEM (nothing to undo).
 * Control thread. */
enum mlv_err mlv_gen_tables_begin(struct mlv_gen_tables *t,
				  struct mlv_gen_table **held, uint32_t max_held,
				  struct mlv_gen_table *const *prev,
				  uint32_t n_prev);

/* The table for in: one of the previous generation's (reused; the new
 * generation takes one reference however many VIPs use it), one taken
 * earlier in this build (shared), or a new one (built), allocated and
 * queued for mlv_gen_tables_run: its size, key, has_second and the
 * first/second pointers are final at once, its first[] (and second[],
 * unless deferred) and fingerprint only after the run. Sets *out and
 * *source. Errors: MLV_E_RANGE when held[] is full, MLV_E_NOMEM, and
 * those of mlv_gen_tables_run (a VIP that must complete a table queued
 * earlier in this build runs the queue first). Control thread, between
 * begin and end. */
enum mlv_err mlv_gen_tables_acquire(struct mlv_gen_tables *t,
				    const struct mlv_gen_table_input *in,
				    const struct mlv_gen_table **out,
				    enum mlv_gen_table_source *source);

/* Fill every table acquire queued since the last run (mlv_table_build
 * from the table's own key), on t->pool's threads. Returns MLV_OK or the
 * error of the first failing table in queue order (those of
 * mlv_table_build: MLV_E_RANGE for a ring with too many points,
 * MLV_E_INVAL, MLV_E_NOMEM); the tables stay held either way, so a
 * failed build frees them with the generation. On return the tables'
 * bytes are visible to the caller (control/tables/build_pool.h). Control
 * thread, between begin and end. */
enum mlv_err mlv_gen_tables_run(struct mlv_gen_tables *t);

/* The table this build would give in without building one: taken
 * earlier in this build or held by the previous generation (a completed
 * copy in place of the one it completes), or NULL. Takes no reference.
 * MLV_E_NOMEM leaves *out NULL. Control thread, between begin and end. */
enum mlv_err mlv_gen_tables_find(struct mlv_gen_tables *t,
				 const struct mlv_gen_table_input *in,
				 const struct mlv_gen_table **out);

/* If tb has no second choices and no completed copy yet, build the copy
 * (same first choices, fingerprint and key, plus the second choices of
 * mlv_table_build_second) and link it as tb->with_second. Returns MLV_OK
 * (also when there was nothing to do), MLV_E_NOMEM, or the builder's
 * error. Takes about as long as the second choices of one table (docs/
 * benchmarks.md, "Control plane"). Control thread. */
enum mlv_err mlv_gen_table_complete(struct mlv_gen_table *tb);

/* Free the build-time index (held[] and its references stay with the
 * caller). Control thread. */
void mlv_gen_tables_end(struct mlv_gen_tables *t);

/* Drop one reference to each of held[0..n-1], freeing a table when its
 * last reference goes (and then dropping its reference to its completed
 * copy). Control thread, once no worker can see a
 * generation that points at them (after the grace period). */
void mlv_gen_tables_release(struct mlv_gen_table *const *held, uint32_t n);

/* Free the allocations kept from freed tables for reuse (up to 256 MiB;
 * vip_tables.c says why). For a clean exit, after the last generation is
 * freed. Control thread. */
void mlv_gen_tables_pool_drain(void);

#endif
