/* SPDX-License-Identifier: BSD-3-Clause */
/* The table-build thread pool (see build_pool.h). */
#include "control/tables/build_pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* The batch being run; fields other than next are written by the
 * control thread under the mutex while no helper is in a batch. */
struct batch {
	mlv_build_job_fn fn;
	void *ctx;
	uint32_t n_jobs;
	/* the next job index to hand out; relaxed: the batch itself was
	 * published under the mutex, and the jobs are independent */
	atomic_uint_fast32_t next;
	/* lowest failing index so far (n_jobs: none) and its error;
	 * merged under the mutex */
	uint32_t fail_index;
	enum mlv_err fail_err;
};

struct mlv_build_pool {
	uint32_t n_threads;        /* the caller included */
	pthread_t *helpers;        /* [n_threads - 1] */
	uint32_t n_started;

	pthread_mutex_t lock;
	pthread_cond_t work;       /* helpers wait here for a batch or stop */
	pthread_cond_t idle;       /* the caller waits here for busy == 0 */
	uint64_t seq;              /* batches posted so far */
	bool open;                 /* the current batch still takes helpers */
	bool stop;
	uint32_t busy;             /* helpers inside the current batch */
	struct batch batch;
};

/* Take and run jobs until none is left; the lowest failing index and
 * its error into *fail_index / *fail_err. */
static void drain(struct batch *b, uint32_t *fail_index, enum mlv_err *fail_err)
{
	for (;;) {
		uint32_t i = (uint32_t)atomic_fetch_add_explicit(
			&b->next, 1, memory_order_relaxed);
		enum mlv_err err;

		if (i >= b->n_jobs)
			return;
		err = b->fn(b->ctx, i);
		if (err && i < *fail_index) {
			*fail_index = i;
			*fail_err = err;
		}
	}
}

static void merge_fail(struct batch *b, uint32_t index, enum mlv_err err)
{
	if (index < b->fail_index) {
		b->fail_index = index;
		b->fail_err = err;
	}
}

static void *helper_main(void *arg)
{
	struct mlv_build_pool *pool = arg;
	uint64_t seen = 0;

	pthread_mutex_lock(&pool->lock);
	for (;;) {
		uint32_t fail_index = UINT32_MAX;
		enum mlv_err fail_err = MLV_OK;

		while (!pool->stop && !(pool->open && pool->seq != seen))
			pthread_cond_wait(&pool->work, &pool->lock);
		if (pool->stop)
			break;
		/* Join only while the batch is open: the caller closes it
		 * (under the mutex) only once busy is 0, so a helper never
		 * takes a job index of a later batch with this one's fn. */
		seen = pool->seq;
		pool->busy++;
		pthread_mutex_unlock(&pool->lock);

		drain(&pool->batch, &fail_index, &fail_err);

		pthread_mutex_lock(&pool->lock);
		merge_fail(&pool->batch, fail_index, fail_err);
		/* unlocking after this publishes the jobs' writes to the
		 * caller, which reads busy under the same mutex */
		if (--pool->busy == 0)
			pthread_cond_signal(&pool->idle);
	}
	pthread_mutex_unlock(&pool->lock);
	return NULL;
}

uint32_t mlv_build_pool_threads(const struct mlv_build_pool *pool)
{
	return pool ? pool->n_threads : 1;
}

enum mlv_err mlv_build_pool_run(struct mlv_build_pool *pool, uint32_t n_jobs,
				mlv_build_job_fn fn, void *ctx)
{
	uint32_t fail_index = UINT32_MAX;
	enum mlv_err fail_err = MLV_OK;
	struct batch *b;

	if (!pool || pool->n_threads == 1 || n_jobs <= 1) {
		/* no hand-off: a serial build pays nothing for the pool */
		enum mlv_err first = MLV_OK;

		for (uint32_t i = 0; i < n_jobs; i++) {
			enum mlv_err err = fn(ctx, i);

			if (err && first == MLV_OK)
				first = err;
		}
		return first;
	}

	b = &pool->batch;
	pthread_mutex_lock(&pool->lock);
	b->fn = fn;
	b->ctx = ctx;
	b->n_jobs = n_jobs;
	b->fail_index = n_jobs;
	b->fail_err = MLV_OK;
	atomic_store_explicit(&b->next, 0, memory_order_relaxed);
	pool->seq++;
	pool->open = true;
	pthread_cond_broadcast(&pool->work);
	pthread_mutex_unlock(&pool->lock);

	drain(b, &fail_index, &fail_err);

	pthread_mutex_lock(&pool->lock);
	merge_fail(b, fail_index, fail_err);
	/* Every index is handed out (drain saw the end), and a helper that
	 * took one stays busy until it has finished it. */
	while (pool->busy > 0)
		pthread_cond_wait(&pool->idle, &pool->lock);
	pool->open = false;
	fail_err = b->fail_index < n_jobs ? b->fail_err : MLV_OK;
	pthread_mutex_unlock(&pool->lock);
	return fail_err;
}

/* Stop and join the helpers started so far. */
static void stop_helpers(struct mlv_build_pool *pool)
{
	pthread_mutex_lock(&pool->lock);
	pool->stop = true;
	pthread_cond_broadcast(&pool->work);
	pthread_mutex_unlock(&pool->lock);
	for (uint32_t i = 0; i < pool->n_started; i++)
		pthread_join(pool->helpers[i], NULL);
	pool->n_started = 0;
}

/* Run on a thread of its own until the pool stops. */
static enum mlv_err start_helper(struct mlv_build_pool *pool,
				 const pthread_attr_t *attr)
{
	uint32_t i = pool->n_started;
	char name[32];
	int rc = pthread_create(&pool->helpers[i], attr, helper_main, pool);

	if (rc != 0)
		/* EINVAL: the kernel refused the affinity (no online CPU
		 * in the set) */
		return rc == EINVAL ? MLV_E_INVAL :
		       rc == EAGAIN ? MLV_E_NOMEM : MLV_E_IO;
	pool->n_started++;
	/* i < MLV_BUILD_MAX_THREADS: within the kernel's 15 characters */
	snprintf(name, sizeof(name), "mlv-build-%u", i + 1);
	/* a name only helps top and gdb: failure is harmless */
	(void)pthread_setname_np(pool->helpers[i], name);
	return MLV_OK;
}

enum mlv_err mlv_build_pool_new(uint32_t n_threads, const cpu_set_t *cpus,
				struct mlv_build_pool **out)
{
	struct mlv_build_pool *pool;
	pthread_attr_t attr;
	cpu_set_t own;
	enum mlv_err err = MLV_E_NOMEM;

	*out = NULL;
	if (n_threads < 1 || n_threads > MLV_BUILD_MAX_THREADS)
		return MLV_E_RANGE;
	if (!cpus) {
		if (pthread_getaffinity_np(pthread_self(), sizeof(own), &own) != 0)
			return MLV_E_INVAL;
		cpus = &own;
	}
	if (CPU_COUNT(cpus) == 0)
		return MLV_E_INVAL;

	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return MLV_E_NOMEM;
	pool->n_threads = n_threads;
	pool->helpers = calloc(n_threads, sizeof(*pool->helpers));
	if (!pool->helpers)
		goto fail_pool;
	if (pthread_mutex_init(&pool->lock, NULL) != 0)
		goto fail_pool;
	if (pthread_cond_init(&pool->work, NULL) != 0)
		goto fail_lock;
	if (pthread_cond_init(&pool->idle, NULL) != 0)
		goto fail_work;
	if (pthread_attr_init(&attr) != 0)
		goto fail_idle;
	/* set at creation, so no helper ever runs on a CPU outside the set */
	if (pthread_attr_setaffinity_np(&attr, sizeof(*cpus), cpus) != 0) {
		err = MLV_E_INVAL;
		goto fail_attr;
	}
	while (pool->n_started + 1 < n_threads) {
		err = start_helper(pool, &attr);
		if (err)
			goto fail_attr;
	}
	pthread_attr_destroy(&attr);
	*out = pool;
	return MLV_OK;

fail_attr:
	pthread_attr_destroy(&attr);
	stop_helpers(pool);
fail_idle:
	pthread_cond_destroy(&pool->idle);
fail_work:
	pthread_cond_destroy(&pool->work);
fail_lock:
	pthread_mutex_destroy(&pool->lock);
fail_pool:
	free(pool->helpers);
	free(pool);
	return err;
}

void mlv_build_pool_free(struct mlv_build_pool *pool)
{
	if (!pool)
		return;
	stop_helpers(pool);
	pthread_cond_destroy(&pool->idle);
	pthread_cond_destroy(&pool->work);
	pthread_mutex_destroy(&pool->lock);
	free(pool->helpers);
	free(pool);
}
