/* SPDX-License-Identifier: BSD-3-Clause */
/* A small pool of helper threads that run a batch of independent jobs
 * together with the control thread: the generation build uses it to build
 * the lookup tables of one generation in parallel (docs/generations.md,
 * "Parallel build").
 *
 * A pool of n threads is the control thread plus n - 1 plain pthreads
 * (not EAL lcores: the EAL pins the control thread to the main lcore, and
 * these need their own CPUs). The helpers sleep on a condition variable
 * between batches, so an idle pool costs nothing. mlv_build_pool_run posts
 * a batch, works on it itself, and returns once every job is done; jobs
 * are handed out with one atomic counter, in index order, whoever is free
 * first takes the next.
 *
 * Threads: mlv_build_pool_new, _run, _threads and _free are for one
 * thread only (the control thread), never concurrently. The job function
 * runs on the caller's thread and on the helpers at the same time, so it
 * must only write state that belongs to its own job index.
 *
 * Memory ordering: everything the caller wrote before mlv_build_pool_run
 * is visible to every job (the batch is posted under the pool's mutex,
 * and a helper takes that mutex before it starts), and everything every
 * job wrote is visible to the caller when mlv_build_pool_run returns (a
 * helper leaves the batch under the mutex, the caller waits under it:
 * release by the helper, acquire by the caller).
 *
 * Plain C and pthreads; no DPDK.
 */
#ifndef MLV_BUILD_POOL_H
#define MLV_BUILD_POOL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* cpu_set_t */
#endif
#include <sched.h>
#include <stdint.h>

#include "control/base/error.h"

#define MLV_BUILD_MAX_THREADS 64

struct mlv_build_pool;

/* One job: index in 0..n_jobs-1 of the batch; ctx as given to run. */
typedef enum mlv_err (*mlv_build_job_fn)(void *ctx, uint32_t index);

/* A pool of n_threads (1..MLV_BUILD_MAX_THREADS, the caller included):
 * starts n_threads - 1 helpers, each allowed on the CPUs of cpus (NULL:
 * the CPUs the calling thread may run on). n_threads == 1 starts no
 * thread. Returns MLV_OK and *out, MLV_E_RANGE for a bad n_threads,
 * MLV_E_INVAL for an empty set or one the kernel refuses (no online CPU
 * in it), MLV_E_NOMEM, or MLV_E_IO when a thread cannot be created.
 * Nothing to undo on error. */
enum mlv_err mlv_build_pool_new(uint32_t n_threads, const cpu_set_t *cpus,
				struct mlv_build_pool **out);

/* Threads that work on a batch, the caller included (1 for a NULL pool). */
uint32_t mlv_build_pool_threads(const struct mlv_build_pool *pool);

/* Run fn(ctx, i) for every i in 0..n_jobs-1, on the calling thread and
 * the helpers, and return when all are done. A NULL pool or a pool of one
 * thread runs them in order on the calling thread. Every job runs even if
 * another fails; returns MLV_OK or the error of the failing job with the
 * lowest index (the same error a serial run would stop at). */
enum mlv_err mlv_build_pool_run(struct mlv_build_pool *pool, uint32_t n_jobs,
				mlv_build_job_fn fn, void *ctx);

/* Stop and join the helpers and free the pool. NULL is a no-op. Not
 * while a batch runs (the same thread calls both). */
void mlv_build_pool_free(struct mlv_build_pool *pool);

#endif
