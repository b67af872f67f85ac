/* SPDX-License-Identifier: BSD-3-Clause */
/* The parallel table build (docs/generations.md, "Parallel build";
 * control/tables/build_pool.h, control/generation/vip_tables.h): the build pool runs every
 * job once and reports the lowest failing one; a generation of many
 * distinct VIPs built on 1 and on 3 threads has the same tables, second
 * choices, fingerprints and counters as the serial build, along a chain
 * of rebuilds; the tables match mlv_table_build of each VIP's published
 * (name, weight, no_second) set; a failing table fails the whole build
 * and the pool stays usable. */
#define _GNU_SOURCE /* cpu_set_t */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "control/tables/build_pool.h"
#include "control/config/config.h"
#include "control/generation/vip_tables.h"
#include "control/generation/generation.h"
#include "control/tables/builder.h"
#include "tests/support/config_load.h"

#define M 1009
#define N_VIPS 48
#define N_SHARED 4          /* extra VIPs with vip-000's backend set */
#define PER_VIP 8
#define POOL_NAMES 40
#define MAX_BACKENDS 16

/* ---- the pool on its own ------------------------------------------------ */

struct count_ctx {
	atomic_uint calls[1000];
	uint32_t out[1000];
	uint32_t fail_a, fail_b;  /* indices that fail, with different errors */
};

static enum mlv_err count_job(void *ctx, uint32_t i)
{
	struct count_ctx *c = ctx;

	atomic_fetch_add(&c->calls[i], 1);
	c->out[i] = i * 2654435761u;
	if (i == c->fail_a)
		return MLV_E_RANGE;
	if (i == c->fail_b)
		return MLV_E_NOMEM;
	return MLV_OK;
}

static void run_counted(struct mlv_build_pool *pool, uint32_t n,
			uint32_t fail_a, uint32_t fail_b, enum mlv_err want)
{
	struct count_ctx *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	c->fail_a = fail_a;
	c->fail_b = fail_b;
	assert_int_equal(mlv_build_pool_run(pool, n, count_job, c), want);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(atomic_load(&c->calls[i]), 1);
		assert_int_equal(c->out[i], i * 2654435761u);
	}
	for (uint32_t i = n; i < 1000; i++)
		assert_int_equal(atomic_load(&c->calls[i]), 0);
	free(c);
}

static void test_pool_runs_every_job_once(void **state)
{
	struct mlv_build_pool *pool;
	(void)state;

	assert_int_equal(mlv_build_pool_new(3, NULL, &pool), MLV_OK);
	assert_int_equal(mlv_build_pool_threads(pool), 3);
	run_counted(pool, 1000, UINT32_MAX, UINT32_MAX, MLV_OK);
	/* the lowest failing index decides, whichever thread ran it */
	run_counted(pool, 1000, 700, 300, MLV_E_NOMEM);
	run_counted(pool, 1000, 300, 700, MLV_E_RANGE);
	/* many small batches back to back: no helper may take a job of the
	 * next batch with the previous one's context */
	for (uint32_t b = 0; b < 300; b++)
		run_counted(pool, 1 + b % 7, UINT32_MAX, UINT32_MAX, MLV_OK);
	run_counted(pool, 0, UINT32_MAX, UINT32_MAX, MLV_OK);
	mlv_build_pool_free(pool);

	/* no pool and a pool of one run on the caller, with the same result */
	run_counted(NULL, 1000, 700, 300, MLV_E_NOMEM);
	assert_int_equal(mlv_build_pool_new(1, NULL, &pool), MLV_OK);
	assert_int_equal(mlv_build_pool_threads(pool), 1);
	run_counted(pool, 1000, 300, 700, MLV_E_RANGE);
	mlv_build_pool_free(pool);
	mlv_build_pool_free(NULL);
}

static void test_pool_bad_arguments(void **state)
{
	struct mlv_build_pool *pool = (void *)1;
	cpu_set_t none;
	(void)state;

	assert_int_equal(mlv_build_pool_new(0, NULL, &pool), MLV_E_RANGE);
	assert_null(pool);
	assert_int_equal(mlv_build_pool_new(MLV_BUILD_MAX_THREADS + 1, NULL,
					     &pool), MLV_E_RANGE);
	CPU_ZERO(&none);
	assert_int_equal(mlv_build_pool_new(2, &none, &pool), MLV_E_INVAL);
	assert_null(pool);
	/* a CPU this machine does not have: the kernel refuses it */
	CPU_SET(CPU_SETSIZE - 1, &none);
	assert_int_equal(mlv_build_pool_new(2, &none, &pool), MLV_E_INVAL);
	assert_null(pool);
}

/* ---- generations -------------------------------------------------------- */

static char *yaml_text(void)
{
	size_t cap = 256 * 1024, len = 0;
	char *y = malloc(cap);
	uint32_t seed = 12345;

	assert_non_null(y);
	len += (size_t)snprintf(y + len, cap - len,
		"dataplane:\n"
		"  ports:\n"
		"    - {name: ext, device: net_null0, address: 10.99.0.1, "
		"next_hop: \"02:00:00:00:00:fe\"}\n"
		"defaults: {table_size: %u}\n"
		"vips:\n", M);
	for (uint32_t v = 0; v < N_VIPS + N_SHARED; v++) {
		static const char *const kinds[] = { "maglev", "rendezvous", "ring" };
		bool used[POOL_NAMES] = { false };
		uint32_t set_of = v < N_VIPS ? v : 0;

		len += (size_t)snprintf(y + len, cap - len,
			"  - name: vip-%03u\n    address: 192.0.%u.%u\n"
			"    port: 80\n    protocol: tcp\n    table: %s\n"
			"%s    backends:\n", v, 2 + v / 200, 1 + v % 200,
			kinds[set_of % 3],
			set_of % 7 == 3 ? "    max_load: 1.5\n" : "");
		/* s-00 in every VIP, then PER_VIP - 1 drawn; the shared VIPs
		 * repeat vip-000's draw */
		if (v >= N_VIPS)
			seed = 12345;
		used[0] = true;
		for (uint32_t k = 0; k < PER_VIP; k++) {
			uint32_t b = 0;

			while (k > 0 && used[b]) {
				seed = seed * 1103515245u + 12345u;
				b = 1 + (seed >> 16) % (POOL_NAMES - 1);
			}
			used[b] = true;
			len += (size_t)snprintf(y + len, cap - len,
				"      - {name: s-%02u, address: 10.99.1.%u, "
				"weight: %u%s}\n", b, 1 + b, 1 + b % 3,
				set_of % 5 == 4 && k == 1 ? ", state: down" : "");
		}
		assert_true(len < cap);
	}
	return y;
}

static struct mlv_config *load_cfg(void)
{
	struct mlv_config *cfg = NULL;
	char *y = yaml_text();

	cfg = config_load_ok(y, strlen(y));
	free(y);
	assert_non_null(cfg);
	return cfg;
}

/* Runtime state per step of a chain: 0 all healthy; 1 s-00 failed
 * (every VIP rebuilt); 2 also s-05 at another weight (its VIPs rebuilt,
 * the others reused); 3 every
 * backend of the ring VIPs at a weight whose ring has too many points. */
static void state_of(const struct mlv_gen_pair *pair,
		     struct mlv_gen_backend_state *out, void *ctx)
{
	int step = *(const int *)ctx;

	if ((step == 1 || step == 2) && strcmp(pair->backend, "s-00") == 0)
		out->healthy = false;
	if (step == 2 && strcmp(pair->backend, "s-05") == 0) {
		out->has_weight_override = true;
		out->weight_override = 7;
	}
	if (step == 3 && pair->vip_index < N_VIPS && pair->vip_index % 3 == 2) {
		out->has_weight_override = true;
		out->weight_override = MLV_MAGLEV_MAX_WEIGHT;
	}
}

static enum mlv_err build(const struct mlv_config *cfg, int *step,
			  const struct mlv_generation *prev,
			  struct mlv_build_pool *pool,
			  struct mlv_generation **out)
{
	struct mlv_gen_port_info info = { .mac = { 2, 0, 0, 0, 0, 1 },
					  .next_hop = { 2, 0, 0, 0, 0, 0xfe } };
	/* deferred second choices after the first few tables, as the
	 * daemon does: the decision must not depend on the threads */
	struct mlv_gen_build_opts opts = {
		.defer_second = true, .second_slots_now = 5 * M, .pool = pool,
	};

	return mlv_gen_build_opt(cfg, &info, 1, prev ? prev->number + 1 : 1,
				 state_of, step, prev, &opts, out);
}

static void assert_same_gen(const struct mlv_generation *a,
			    const struct mlv_generation *b)
{
	assert_int_equal(a->n_vips, b->n_vips);
	assert_int_equal(a->n_tables_built, b->n_tables_built);
	assert_int_equal(a->n_tables_shared, b->n_tables_shared);
	assert_int_equal(a->n_tables_reused, b->n_tables_reused);
	assert_int_equal(a->n_tables_no_second, b->n_tables_no_second);
	for (uint32_t v = 0; v < a->n_vips; v++) {
		const struct mlv_gen_vip *x = &a->vips[v], *y = &b->vips[v];

		assert_string_equal(x->name, y->name);
		assert_true(x->fingerprint == y->fingerprint);
		assert_memory_equal(x->table, y->table, M * sizeof(uint16_t));
		assert_memory_equal(x->second, y->second, M * sizeof(uint16_t));
	}
}

/* Every VIP's first choices and fingerprint are mlv_table_build's for
 * its published backends. */
static void assert_tables_expected(const struct mlv_generation *g)
{
	uint16_t *first = malloc(M * sizeof(*first));

	assert_non_null(first);
	for (uint32_t v = 0; v < g->n_vips; v++) {
		const struct mlv_gen_vip *vip = &g->vips[v];
		struct mlv_table_backend be[MAX_BACKENDS];
		struct mlv_table_spec spec = { .kind = vip->table_kind,
					       .size = vip->table_size,
					       .vnodes = vip->vnodes };
		uint64_t fp;

		assert_true(vip->n_backends <= MAX_BACKENDS);
		for (uint32_t b = 0; b < vip->n_backends; b++)
			be[b] = (struct mlv_table_backend){
				vip->backends[b].name, vip->backends[b].weight,
				vip->backends[b].no_second };
		assert_int_equal(mlv_table_build(&spec, be, vip->n_backends,
						 first, NULL, &fp), MLV_OK);
		assert_memory_equal(vip->table, first, M * sizeof(*first));
		assert_true(vip->fingerprint == fp);
	}
	free(first);
}

/* Three steps of a chain on pool; gens[0..2] receive them. */
static void chain(const struct mlv_config *cfg, struct mlv_build_pool *pool,
		  struct mlv_generation *gens[3])
{
	for (int step = 0; step < 3; step++)
		assert_int_equal(build(cfg, &step, step ? gens[step - 1] : NULL,
				       pool, &gens[step]), MLV_OK);
}

static void free_chain(struct mlv_generation *gens[3])
{
	for (int i = 2; i >= 0; i--)
		mlv_gen_free(gens[i]);
}

static void test_same_generation_on_any_threads(void **state)
{
	struct mlv_config *cfg = load_cfg();
	struct mlv_generation *serial[3], *one[3], *three[3];
	struct mlv_build_pool *p1, *p3;
	(void)state;

	assert_int_equal(mlv_build_pool_new(1, NULL, &p1), MLV_OK);
	assert_int_equal(mlv_build_pool_new(3, NULL, &p3), MLV_OK);
	chain(cfg, NULL, serial);
	chain(cfg, p1, one);
	chain(cfg, p3, three);

	/* the fixture does what it is for: many tables built per step, some
	 * shared, some reused, some deferred */
	assert_true(serial[0]->n_tables_built >= N_VIPS - 1);
	assert_true(serial[0]->n_tables_shared >= N_SHARED);
	assert_true(serial[0]->n_tables_no_second > 0);
	assert_true(serial[1]->n_tables_built >= N_VIPS - 1);
	assert_true(serial[2]->n_tables_reused > 0);
	for (int i = 0; i < 3; i++) {
		assert_tables_expected(serial[i]);
		assert_same_gen(serial[i], one[i]);
		assert_same_gen(serial[i], three[i]);
	}
	/* the shared VIPs share vip-000's table object */
	assert_ptr_equal(three[0]->vips[N_VIPS].table, three[0]->vips[0].table);

	free_chain(serial);
	free_chain(one);
	free_chain(three);
	mlv_build_pool_free(p1);
	mlv_build_pool_free(p3);
	mlv_gen_tables_pool_drain();
	mlv_config_free(cfg);
}

static void test_failing_table_fails_build(void **state)
{
	struct mlv_config *cfg = load_cfg();
	struct mlv_generation *g1 = NULL, *bad = (void *)1, *g2 = NULL;
	struct mlv_build_pool *pool;
	int step = 0;
	(void)state;

	assert_int_equal(mlv_build_pool_new(3, NULL, &pool), MLV_OK);
	assert_int_equal(build(cfg, &step, NULL, pool, &g1), MLV_OK);
	/* the ring VIPs' tables cannot be built: the whole build fails,
	 * with or without helpers, and publishes nothing */
	step = 3;
	assert_int_equal(build(cfg, &step, g1, pool, &bad), MLV_E_RANGE);
	assert_null(bad);
	bad = (void *)1;
	assert_int_equal(build(cfg, &step, g1, NULL, &bad), MLV_E_RANGE);
	assert_null(bad);
	/* the previous generation is intact and the pool still works */
	assert_tables_expected(g1);
	step = 1;
	assert_int_equal(build(cfg, &step, g1, pool, &g2), MLV_OK);
	assert_tables_expected(g2);
	mlv_gen_free(g2);
	mlv_gen_free(g1);
	mlv_build_pool_free(pool);
	mlv_gen_tables_pool_drain();
	mlv_config_free(cfg);
}

/* A VIP that reads second choices at once takes a table an earlier VIP
 * queued without them in the same build: the queue is filled first, so
 * the completed copy starts from the real first choices. */
static void test_complete_queued_table(void **state)
{
	struct mlv_table_backend be[3] = {
		{ "x-1", 1, false }, { "x-2", 1, false }, { "x-3", 2, false },
	};
	struct mlv_gen_table_input in = {
		.spec = { .kind = MLV_TABLE_MAGLEV, .size = M },
		.backends = be, .n = 3, .defer_second = true,
	};
	uint16_t *first = malloc(M * sizeof(*first));
	uint16_t *second = malloc(M * sizeof(*second));
	struct mlv_gen_table *held[2];
	const struct mlv_gen_table *t1, *t2;
	enum mlv_gen_table_source src;
	struct mlv_build_pool *pool;
	struct mlv_gen_tables t;
	uint64_t fp;
	(void)state;

	assert_non_null(first);
	assert_non_null(second);
	assert_int_equal(mlv_table_build(&in.spec, be, 3, first, second, &fp),
			 MLV_OK);
	assert_int_equal(mlv_build_pool_new(2, NULL, &pool), MLV_OK);
	assert_int_equal(mlv_gen_tables_begin(&t, held, 2, NULL, 0), MLV_OK);
	t.pool = pool;
	assert_int_equal(mlv_gen_tables_acquire(&t, &in, &t1, &src), MLV_OK);
	assert_int_equal(src, MLV_GEN_TABLE_BUILT);
	assert_false(t1->has_second);
	in.second_now = true;
	assert_int_equal(mlv_gen_tables_acquire(&t, &in, &t2, &src), MLV_OK);
	assert_int_equal(src, MLV_GEN_TABLE_BUILT);
	assert_ptr_equal(t1->with_second, t2);
	assert_int_equal(mlv_gen_tables_run(&t), MLV_OK);
	mlv_gen_tables_end(&t);
	assert_memory_equal(t1->first, first, M * sizeof(*first));
	assert_memory_equal(t2->first, first, M * sizeof(*first));
	assert_memory_equal(t2->second, second, M * sizeof(*second));
	assert_true(t1->fingerprint == fp && t2->fingerprint == fp);
	mlv_gen_tables_release(held, t.n_held);
	mlv_gen_tables_pool_drain();
	mlv_build_pool_free(pool);
	free(first);
	free(second);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_runs_every_job_once),
		cmocka_unit_test(test_pool_bad_arguments),
		cmocka_unit_test(test_same_generation_on_any_threads),
		cmocka_unit_test(test_failing_table_fails_build),
		cmocka_unit_test(test_complete_queued_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
