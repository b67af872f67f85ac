/* SPDX-License-Identifier: BSD-3-Clause */
/* Publishing and reclaiming generations with rte_rcu_qsbr, and counters
 * folded across generations. EAL-free: an rte_rcu_qsbr variable is plain
 * memory, and running without rte_eal_init here is what shows it.
 *
 * Workers are simulated two ways: by calling the worker-side API from the
 * test thread (deterministic grace periods), and by reader pthreads racing
 * the control thread (run under ASan for use-after-free). */
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "control/config/config.h"
#include "control/generation/generation.h"
#include "control/publish/publish.h"
#include "control/generation/stats.h"

#define POISON 0xdeadbeefu

/* ---- a small config, and generations built from it ---- */

struct fx {
	struct mlv_config cfg;
	struct mlv_port_config port;
	struct mlv_gen_port_info info;
	struct mlv_vip_config vip;
	struct mlv_backend_config be[3];
};

static void fx_init(struct fx *f, uint32_t n_backends)
{
	const char *names[] = { "b-1", "b-2", "b-3" };

	memset(f, 0, sizeof(*f));
	snprintf(f->port.name, sizeof(f->port.name), "ext");
	assert_true(mlv_ip_parse("10.99.0.1", &f->port.address));
	f->port.mtu = 1500;
	snprintf(f->vip.name, sizeof(f->vip.name), "web");
	assert_true(mlv_ip_parse("192.0.2.10", &f->vip.address));
	f->vip.port = 80;
	f->vip.protocol = IPPROTO_TCP;
	f->vip.forwarding = MLV_FWD_IPIP;
	f->vip.table_size = 251;
	f->vip.backends = f->be;
	f->vip.n_backends = n_backends;
	for (uint32_t i = 0; i < 3; i++) {
		snprintf(f->be[i].name, sizeof(f->be[i].name), "%s", names[i]);
		assert_true(mlv_ip_parse(i == 0 ? "10.99.1.1" : i == 1 ? "10.99.1.2"
					 : "10.99.1.3", &f->be[i].address));
		f->be[i].weight = 100;
	}
	f->cfg.n_ports = 1;
	f->cfg.ports = &f->port;
	f->cfg.n_vips = 1;
	f->cfg.vips = &f->vip;
}

static struct mlv_generation *gen_build(struct fx *f, uint32_t n_workers,
					uint32_t number,
					const struct mlv_generation *prev)
{
	struct mlv_generation *g = NULL;

	assert_int_equal(mlv_gen_build(&f->cfg, &f->info, n_workers, number,
				       NULL, NULL, prev, &g), MLV_OK);
	return g;
}

/* The free hook records and poisons what it is given. */
struct free_log {
	struct mlv_stats *stats;     /* folded first, if set */
	uint32_t n_freed;
	uint32_t freed[16];          /* numbers of the first 16 freed */
};

static void on_free(struct mlv_generation *gen, void *ctx)
{
	struct free_log *log = ctx;

	if (log->stats)
		mlv_stats_fold(gen, log->stats);
	if (log->n_freed < 16)
		log->freed[log->n_freed] = gen->number;
	log->n_freed++;
	gen->number = POISON;
}

static enum mlv_err on_publish(struct mlv_generation *gen, void *ctx)
{
	struct free_log *log = ctx;

	return log->stats ? mlv_stats_track(gen, log->stats) : MLV_OK;
}

/* ---- deterministic grace periods ---- */

static void test_create_errors(void **state)
{
	struct mlv_publisher *pub = (void *)1;

	(void)state;
	assert_int_equal(mlv_publish_create(0, NULL, &pub), MLV_E_RANGE);
	assert_null(pub);
	assert_int_equal(mlv_publish_create(MLV_MAX_WORKERS + 1, NULL, &pub),
			 MLV_E_RANGE);
	assert_int_equal(mlv_publish_create(1, NULL, NULL), MLV_E_INVAL);
	assert_int_equal(mlv_publish_create(2, NULL, &pub), MLV_OK);
	assert_null(mlv_publish_current(pub));
	assert_int_equal(mlv_publish_worker_register(pub, 2), MLV_E_INVAL);
	assert_int_equal(mlv_publish(pub, NULL), MLV_E_INVAL);
	mlv_publish_destroy(pub);
	mlv_publish_destroy(NULL);
}

static void test_reclaim_waits_for_every_worker(void **state)
{
	struct fx f;
	struct free_log log = { 0 };
	struct mlv_publish_hooks hooks = { .on_free = on_free, .ctx = &log };
	struct mlv_publisher *pub;
	struct mlv_generation *g[6];

	(void)state;
	fx_init(&f, 2);
	assert_int_equal(mlv_publish_create(2, &hooks, &pub), MLV_OK);
	assert_int_equal(mlv_publish_worker_register(pub, 0), MLV_OK);
	assert_int_equal(mlv_publish_worker_register(pub, 1), MLV_OK);

	g[1] = gen_build(&f, 2, 1, NULL);
	assert_int_equal(mlv_publish(pub, g[1]), MLV_OK);
	assert_ptr_equal(mlv_publish_current(pub), g[1]);
	assert_int_equal(mlv_publish_pending(pub), 0);
	assert_int_equal(mlv_publish(pub, g[1]), MLV_E_INVAL);

	/* Replaced while both workers may hold it: nothing is freed, and
	 * reclaim returns at once instead of waiting. */
	g[2] = gen_build(&f, 2, 2, g[1]);
	assert_int_equal(mlv_publish(pub, g[2]), MLV_OK);
	assert_ptr_equal(mlv_publish_current(pub), g[2]);
	assert_int_equal(mlv_publish_pending(pub), 1);
	assert_int_equal(mlv_publish_reclaim(pub), 0);
	assert_int_equal(log.n_freed, 0);

	mlv_publish_quiescent(pub, 0);
	assert_int_equal(mlv_publish_reclaim(pub), 0);
	mlv_publish_quiescent(pub, 1);
	assert_int_equal(mlv_publish_reclaim(pub), 1);
	assert_int_equal(log.n_freed, 1);
	assert_int_equal(log.freed[0], 1);
	assert_int_equal(mlv_publish_pending(pub), 0);

	/* Two queued; a worker's quiescent state covers both. */
	g[3] = gen_build(&f, 2, 3, g[2]);
	assert_int_equal(mlv_publish(pub, g[3]), MLV_OK);
	mlv_publish_quiescent(pub, 0);
	mlv_publish_quiescent(pub, 1);
	g[4] = gen_build(&f, 2, 4, g[3]);
	assert_int_equal(mlv_publish(pub, g[4]), MLV_OK);
	assert_int_equal(mlv_publish_pending(pub), 2);
	/* g2's grace period is over, g3's is not: oldest first, then stop. */
	assert_int_equal(mlv_publish_reclaim(pub), 1);
	assert_int_equal(log.freed[1], 2);
	mlv_publish_quiescent(pub, 0);
	mlv_publish_quiescent(pub, 1);
	assert_int_equal(mlv_publish_reclaim(pub), 1);
	assert_int_equal(log.freed[2], 3);

	/* An offline worker is not waited for; back online it is again. */
	mlv_publish_offline(pub, 1);
	g[5] = gen_build(&f, 2, 5, g[4]);
	assert_int_equal(mlv_publish(pub, g[5]), MLV_OK);
	assert_int_equal(mlv_publish_reclaim(pub), 0);
	mlv_publish_quiescent(pub, 0);
	assert_int_equal(mlv_publish_reclaim(pub), 1);
	assert_int_equal(log.freed[3], 4);
	mlv_publish_online(pub, 1);
	g[0] = gen_build(&f, 2, 6, g[5]);
	assert_int_equal(mlv_publish(pub, g[0]), MLV_OK);
	mlv_publish_quiescent(pub, 0);
	assert_int_equal(mlv_publish_reclaim(pub), 0);
	mlv_publish_quiescent(pub, 1);
	assert_int_equal(mlv_publish_reclaim(pub), 1);

	/* With every worker gone, wait() returns and frees the rest. */
	g[1] = gen_build(&f, 2, 7, g[0]);
	assert_int_equal(mlv_publish(pub, g[1]), MLV_OK);
	mlv_publish_worker_unregister(pub, 0);
	mlv_publish_worker_unregister(pub, 1);
	assert_int_equal(mlv_publish_wait(pub), 1);
	assert_int_equal(log.n_freed, 6);

	/* destroy frees the current one through the hook. */
	mlv_publish_destroy(pub);
	assert_int_equal(log.n_freed, 7);
}

static void test_destroy_frees_pending(void **state)
{
	struct fx f;
	struct free_log log = { 0 };
	struct mlv_publish_hooks hooks = { .on_free = on_free, .ctx = &log };
	struct mlv_publisher *pub;
	struct mlv_generation *prev = NULL;

	(void)state;
	fx_init(&f, 2);
	assert_int_equal(mlv_publish_create(1, &hooks, &pub), MLV_OK);
	assert_int_equal(mlv_publish_worker_register(pub, 0), MLV_OK);
	for (uint32_t n = 1; n <= 4; n++) {
		struct mlv_generation *g = gen_build(&f, 1, n, prev);

		assert_int_equal(mlv_publish(pub, g), MLV_OK);
		prev = g;
	}
	assert_int_equal(mlv_publish_pending(pub), 3);
	mlv_publish_worker_unregister(pub, 0);
	mlv_publish_destroy(pub);
	assert_int_equal(log.n_freed, 4);
}

static enum mlv_err refuse(struct mlv_generation *gen, void *ctx)
{
	(void)gen;
	(void)ctx;
	return MLV_E_NOMEM;
}

static void test_publish_hook_can_refuse(void **state)
{
	struct fx f;
	struct mlv_publish_hooks hooks = { .on_publish = refuse };
	struct mlv_publisher *pub;
	struct mlv_generation *g;

	(void)state;
	fx_init(&f, 1);
	assert_int_equal(mlv_publish_create(1, &hooks, &pub), MLV_OK);
	g = gen_build(&f, 1, 1, NULL);
	assert_int_equal(mlv_publish(pub, g), MLV_E_NOMEM);
	assert_null(mlv_publish_current(pub));
	mlv_publish_destroy(pub);
	mlv_gen_free(g); /* still the caller's */
}

/* ---- counters that survive generations ---- */

static uint64_t vip_packets(const struct mlv_stats *s,
			    const struct mlv_generation *g)
{
	struct mlv_flow_counters c;

	mlv_stats_vip(s, g, &g->vips[0], &c);
	return c.v[MLV_FLOW_PACKETS];
}

static uint64_t backend_packets(const struct mlv_stats *s,
				const struct mlv_generation *g, uint32_t b)
{
	struct mlv_flow_counters c;

	mlv_stats_backend(s, g, &g->vips[0].backends[b], &c);
	return c.v[MLV_FLOW_PACKETS];
}

/* As a worker counts a forwarded packet: on its backend's row only. */
static void count(struct mlv_generation *g, uint32_t worker, uint32_t backend,
		  uint64_t packets)
{
	g->backend_ctr[worker][mlv_gen_backend_index(g, &g->vips[0].backends[backend])]
		.v[MLV_FLOW_PACKETS] += packets;
}

static void test_stats_fold_across_generations(void **state)
{
	struct fx f;
	struct free_log log = { 0 };
	struct mlv_publish_hooks hooks = {
		.on_publish = on_publish, .on_free = on_free, .ctx = &log,
	};
	struct mlv_publisher *pub;
	struct mlv_generation *g1, *g2, *g3, *g4;

	(void)state;
	fx_init(&f, 3);
	assert_int_equal(mlv_stats_create(&log.stats), MLV_OK);
	assert_int_equal(mlv_publish_create(2, &hooks, &pub), MLV_OK);
	assert_int_equal(mlv_publish_worker_register(pub, 0), MLV_OK);
	assert_int_equal(mlv_publish_worker_register(pub, 1), MLV_OK);

	g1 = gen_build(&f, 2, 1, NULL);
	assert_int_equal(mlv_publish(pub, g1), MLV_OK);
	count(g1, 0, 0, 5);
	count(g1, 1, 1, 7);
	assert_int_equal(vip_packets(log.stats, g1), 12);
	assert_int_equal(backend_packets(log.stats, g1, 0), 5);
	assert_int_equal(backend_packets(log.stats, g1, 1), 7);

	/* Replaced but not yet reclaimed: workers may still count into g1,
	 * and what they count there is included. */
	g2 = gen_build(&f, 2, 2, g1);
	assert_int_equal(mlv_publish(pub, g2), MLV_OK);
	assert_int_equal(mlv_stats_tracked(log.stats), 2);
	count(g1, 1, 0, 1);
	count(g2, 0, 0, 3);
	assert_int_equal(vip_packets(log.stats, g2), 16);
	assert_int_equal(backend_packets(log.stats, g2, 0), 9);

	/* After the grace period g1 is folded: the sums do not move. */
	mlv_publish_quiescent(pub, 0);
	mlv_publish_quiescent(pub, 1);
	assert_int_equal(mlv_publish_reclaim(pub), 1);
	assert_int_equal(mlv_stats_tracked(log.stats), 1);
	assert_int_equal(vip_packets(log.stats, g2), 16);
	assert_int_equal(backend_packets(log.stats, g2, 0), 9);
	assert_int_equal(backend_packets(log.stats, g2, 1), 7);

	/* b-2 removed, then re-added: a new identity, counted from zero,
	 * while the others keep their totals. */
	f.vip.n_backends = 1;
	g3 = gen_build(&f, 2, 3, g2);
	assert_int_equal(mlv_publish(pub, g3), MLV_OK);
	mlv_publish_quiescent(pub, 0);
	mlv_publish_quiescent(pub, 1);
	assert_int_equal(mlv_publish_reclaim(pub), 1);
	f.vip.n_backends = 3;
	g4 = gen_build(&f, 2, 4, g3);
	assert_int_equal(mlv_publish(pub, g4), MLV_OK);
	assert_int_equal(backend_packets(log.stats, g4, 1), 0);
	assert_int_equal(backend_packets(log.stats, g4, 0), 9);
	assert_int_equal(vip_packets(log.stats, g4), 16);
	count(g4, 1, 1, 2);
	assert_int_equal(backend_packets(log.stats, g4, 1), 2);
	mlv_publish_quiescent(pub, 0);
	mlv_publish_quiescent(pub, 1);
	assert_int_equal(mlv_publish_reclaim(pub), 1);
	assert_int_equal(vip_packets(log.stats, g4), 18);

	mlv_publish_worker_unregister(pub, 0);
	mlv_publish_worker_unregister(pub, 1);
	mlv_publish_destroy(pub);
	assert_int_equal(mlv_stats_tracked(log.stats), 0);
	mlv_stats_destroy(log.stats);
}

/* A generation nobody published (a dry run) still reports its own live
 * counters on top of the totals. */
static void test_stats_untracked_generation(void **state)
{
	struct fx f;
	struct mlv_stats *s;
	struct mlv_generation *g;

	(void)state;
	fx_init(&f, 2);
	assert_int_equal(mlv_stats_create(&s), MLV_OK);
	g = gen_build(&f, 1, 1, NULL);
	count(g, 0, 1, 4);
	assert_int_equal(vip_packets(s, g), 4);
	assert_int_equal(mlv_stats_track(g, s), MLV_OK);
	assert_int_equal(mlv_stats_track(g, s), MLV_OK); /* idempotent */
	assert_int_equal(vip_packets(s, g), 4);
	mlv_stats_fold(g, s);
	assert_int_equal(mlv_stats_tracked(s), 0);
	mlv_gen_free(g);
	mlv_stats_destroy(s);
}

/* What worker w counted on backend row r of generation `round`, counter
 * c: distinct for every (round, w, r, c), so a row summed twice or missed
 * shows. */
static uint64_t fake_count(uint32_t round, uint32_t w, uint32_t r, int c)
{
	return 10000u * round + 1000u * w + 10u * r + (uint64_t)c + 1;
}

/* Fill every backend row of g as workers would, and add what VIP vip's
 * rows got to *expect. */
static void count_all(struct mlv_generation *g, uint32_t round,
		      const struct mlv_gen_vip *vip,
		      struct mlv_flow_counters *expect)
{
	uint32_t first = mlv_gen_backend_index(g, vip->backends);

	for (uint32_t w = 0; w < g->n_workers; w++)
		for (uint32_t r = 0; r < g->n_all_backends; r++)
			for (int c = 0; c < MLV_FLOW__COUNT; c++) {
				g->backend_ctr[w][r].v[c] = fake_count(round, w, r, c);
				if (r >= first && r < first + vip->n_backends)
					expect->v[c] += fake_count(round, w, r, c);
			}
}

/* mlv_stats_vip == sum of mlv_stats_backend over vip's backends in g,
 * plus `extra` (backends g no longer has). */
static void assert_vip_is_sum(const struct mlv_stats *s,
			      const struct mlv_generation *g,
			      const struct mlv_gen_vip *vip,
			      const struct mlv_flow_counters *extra)
{
	struct mlv_flow_counters got, sum = *extra, b;

	for (uint32_t i = 0; i < vip->n_backends; i++) {
		mlv_stats_backend(s, g, &vip->backends[i], &b);
		for (int c = 0; c < MLV_FLOW__COUNT; c++)
			sum.v[c] += b.v[c];
	}
	mlv_stats_vip(s, g, vip, &got);
	for (int c = 0; c < MLV_FLOW__COUNT; c++)
		assert_int_equal(got.v[c], sum.v[c]);
}

static void assert_counters_equal(const struct mlv_flow_counters *a,
				  const struct mlv_flow_counters *b)
{
	for (int c = 0; c < MLV_FLOW__COUNT; c++)
		assert_int_equal(a->v[c], b->v[c]);
}

/* VIPs have no counter rows: a VIP's counts are its backends' summed, on
 * every worker, and a backend removed by a reload keeps its share in the
 * VIP's total, before and after its last generation is folded. A second
 * VIP, whose rows follow web's and move when web shrinks, shows that no
 * row is counted for the wrong VIP. */
static void test_stats_vip_is_sum_of_backends(void **state)
{
	struct fx f;
	struct mlv_vip_config vips[2];
	struct mlv_backend_config other_be;
	struct mlv_stats *s;
	struct mlv_generation *g1, *g2;
	struct mlv_flow_counters want_web = { 0 }, want_other = { 0 };
	struct mlv_flow_counters removed, got, none = { 0 };

	(void)state;
	fx_init(&f, 3);
	vips[0] = f.vip;
	vips[1] = f.vip;
	snprintf(vips[1].name, sizeof(vips[1].name), "other");
	assert_true(mlv_ip_parse("192.0.2.11", &vips[1].address));
	memset(&other_be, 0, sizeof(other_be));
	snprintf(other_be.name, sizeof(other_be.name), "o-1");
	assert_true(mlv_ip_parse("10.99.2.1", &other_be.address));
	other_be.weight = 100;
	vips[1].backends = &other_be;
	vips[1].n_backends = 1;
	f.cfg.vips = vips;
	f.cfg.n_vips = 2;
	assert_int_equal(mlv_stats_create(&s), MLV_OK);

	g1 = gen_build(&f, 2, 1, NULL);
	assert_int_equal(mlv_stats_track(g1, s), MLV_OK);
	assert_int_equal(g1->vips[0].n_backends, 3);
	count_all(g1, 1, &g1->vips[0], &want_web);
	count_all(g1, 1, &g1->vips[1], &want_other);
	mlv_stats_vip(s, g1, &g1->vips[0], &got);
	assert_counters_equal(&got, &want_web);
	mlv_stats_vip(s, g1, &g1->vips[1], &got);
	assert_counters_equal(&got, &want_other);
	assert_vip_is_sum(s, g1, &g1->vips[0], &none);
	mlv_stats_backend(s, g1, &g1->vips[0].backends[2], &removed);

	/* b-3 goes; g1 is still live (not yet reclaimed). */
	vips[0].n_backends = 2;
	g2 = gen_build(&f, 2, 2, g1);
	assert_int_equal(mlv_stats_track(g2, s), MLV_OK);
	assert_int_equal(g2->vips[0].n_backends, 2);
	count_all(g2, 2, &g2->vips[0], &want_web);
	count_all(g2, 2, &g2->vips[1], &want_other);
	for (int pass = 0; pass < 2; pass++) {
		mlv_stats_vip(s, g2, &g2->vips[0], &got);
		assert_counters_equal(&got, &want_web);
		mlv_stats_vip(s, g2, &g2->vips[1], &got);
		assert_counters_equal(&got, &want_other);
		assert_vip_is_sum(s, g2, &g2->vips[0], &removed);
		assert_vip_is_sum(s, g2, &g2->vips[1], &none);
		/* Second pass: the same after g1 is folded and freed. */
		if (pass == 0) {
			mlv_stats_fold(g1, s);
			mlv_gen_free(g1);
			assert_int_equal(mlv_stats_tracked(s), 1);
		}
	}
	mlv_stats_fold(g2, s);
	mlv_gen_free(g2);
	mlv_stats_destroy(s);
}

/* Many uids dropped at once (half the VIPs removed): the totals of the
 * others must survive the deletions from the totals map. */
#define CHURN_VIPS 600

static void churn_config(struct mlv_config *cfg, struct mlv_vip_config *vips,
			 struct mlv_backend_config *bes, struct mlv_port_config *port,
			 uint32_t step)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->n_ports = 1;
	cfg->ports = port;
	cfg->vips = vips;
	for (uint32_t i = 0; i < CHURN_VIPS; i += step) {
		struct mlv_vip_config *v = &vips[cfg->n_vips++];
		struct mlv_backend_config *b = &bes[i];
		char addr[32];

		memset(v, 0, sizeof(*v));
		snprintf(v->name, sizeof(v->name), "v%u", i);
		snprintf(addr, sizeof(addr), "10.1.%u.%u", i / 256, i % 256);
		assert_true(mlv_ip_parse(addr, &v->address));
		v->port = 80;
		v->protocol = IPPROTO_TCP;
		v->table_size = 251;
		v->n_backends = 1;
		v->backends = b;
		memset(b, 0, sizeof(*b));
		snprintf(b->name, sizeof(b->name), "b");
		assert_true(mlv_ip_parse("10.99.1.1", &b->address));
		b->weight = 1;
	}
}

static void test_stats_many_removed(void **state)
{
	static struct mlv_vip_config vips[CHURN_VIPS];
	static struct mlv_backend_config bes[CHURN_VIPS];
	struct mlv_port_config port = { .name = "p", .mtu = 1500 };
	struct mlv_gen_port_info info = { .mtu = 0 };
	struct mlv_config cfg;
	struct mlv_stats *s;
	struct mlv_generation *g1 = NULL, *g2 = NULL, *g3 = NULL;

	(void)state;
	assert_true(mlv_ip_parse("10.99.0.1", &port.address));
	assert_int_equal(mlv_stats_create(&s), MLV_OK);
	churn_config(&cfg, vips, bes, &port, 1);
	assert_int_equal(mlv_gen_build(&cfg, &info, 1, 1, NULL, NULL, NULL, &g1), MLV_OK);
	assert_int_equal(mlv_stats_track(g1, s), MLV_OK);
	/* VIP i's only backend is all_backends[i]: its VIP counts the same. */
	for (uint32_t i = 0; i < CHURN_VIPS; i++)
		g1->backend_ctr[0][i].v[MLV_FLOW_PACKETS] = 2 * i + 1;

	/* Keep every third VIP; fold g1: the others' uids are dropped. */
	churn_config(&cfg, vips, bes, &port, 3);
	assert_int_equal(mlv_gen_build(&cfg, &info, 1, 2, NULL, NULL, g1, &g2), MLV_OK);
	assert_int_equal(mlv_stats_track(g2, s), MLV_OK);
	mlv_stats_fold(g1, s);
	mlv_gen_free(g1);
	for (uint32_t k = 0; k < g2->n_vips; k++) {
		struct mlv_flow_counters c;
		uint32_t i = 3 * k;

		mlv_stats_vip(s, g2, &g2->vips[k], &c);
		assert_int_equal(c.v[MLV_FLOW_PACKETS], 2 * i + 1);
		mlv_stats_backend(s, g2, &g2->vips[k].backends[0], &c);
		assert_int_equal(c.v[MLV_FLOW_PACKETS], 2 * i + 1);
	}

	/* All back: the removed ones return as new identities, from zero. */
	churn_config(&cfg, vips, bes, &port, 1);
	assert_int_equal(mlv_gen_build(&cfg, &info, 1, 3, NULL, NULL, g2, &g3), MLV_OK);
	assert_int_equal(mlv_stats_track(g3, s), MLV_OK);
	mlv_stats_fold(g2, s);
	mlv_gen_free(g2);
	for (uint32_t i = 0; i < CHURN_VIPS; i++) {
		struct mlv_flow_counters c;

		mlv_stats_vip(s, g3, &g3->vips[i], &c);
		assert_int_equal(c.v[MLV_FLOW_PACKETS], i % 3 ? 0 : 2 * i + 1);
	}
	mlv_stats_fold(g3, s);
	mlv_gen_free(g3);
	mlv_stats_destroy(s);
}

static void test_stats_workers_sum(void **state)
{
	struct mlv_worker_counters w[3];
	const struct mlv_worker_counters *per[4] = { &w[0], NULL, &w[1], &w[2] };
	struct mlv_worker_counters sum;

	(void)state;
	memset(w, 0, sizeof(w));
	for (int i = 0; i < 3; i++) {
		w[i].ctr[MLV_CTR_RX_PACKETS] = 10u << i;
		w[i].drop[MLV_DROP_NOT_VIP] = (uint64_t)i + 1;
	}
	w[2].drop[MLV_DROP__COUNT - 1] = 5;
	mlv_stats_workers(per, 4, &sum);
	assert_int_equal(sum.ctr[MLV_CTR_RX_PACKETS], 10 + 20 + 40);
	assert_int_equal(sum.drop[MLV_DROP_NOT_VIP], 1 + 2 + 3);
	assert_int_equal(sum.drop[MLV_DROP__COUNT - 1], 5);
	assert_int_equal(sum.ctr[MLV_CTR_FORWARDED], 0);
}

/* ---- concurrent readers ---- */

#define N_READERS 3
#define N_PUBLISH 1000

struct reader {
	struct mlv_publisher *pub;
	uint32_t id;
	pthread_t thread;
	uint64_t iterations;   /* atomic */
	uint32_t last_seen;    /* atomic: number of the last generation used */
	uint32_t errors;       /* atomic */
	uint64_t counted;      /* packets this reader counted (after join) */
};

static bool readers_stop; /* atomic */

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	uint32_t last = 0;

	if (mlv_publish_worker_register(r->pub, r->id) != MLV_OK) {
		__atomic_add_fetch(&r->errors, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	while (!__atomic_load_n(&readers_stop, __ATOMIC_ACQUIRE)) {
		const struct mlv_generation *g = mlv_publish_current(r->pub);

		if (g) {
			uint32_t n = g->number;
			const struct mlv_gen_vip *v = &g->vips[0];
			uint32_t weight_sum = 0;

			/* A freed generation would be poisoned (or, under
			 * ASan, a use-after-free report). Numbers only grow. */
			if (n == POISON || n < last)
				__atomic_add_fetch(&r->errors, 1, __ATOMIC_RELAXED);
			/* Use it like a worker: table, backends, counters. */
			for (uint32_t s = r->id; s < v->table_size; s += 5) {
				uint16_t b = v->table[s];

				if (b >= v->n_backends)
					__atomic_add_fetch(&r->errors, 1, __ATOMIC_RELAXED);
				else
					weight_sum += v->backends[b].weight;
			}
			if (weight_sum == 0)
				__atomic_add_fetch(&r->errors, 1, __ATOMIC_RELAXED);
			g->backend_ctr[r->id][mlv_gen_backend_index(g,
					&v->backends[r->id % v->n_backends])]
				.v[MLV_FLOW_PACKETS]++;
			r->counted++;
			/* Still not freed at the end of the critical section. */
			if (g->number != n)
				__atomic_add_fetch(&r->errors, 1, __ATOMIC_RELAXED);
			last = n;
			__atomic_store_n(&r->last_seen, n, __ATOMIC_RELEASE);
		}
		__atomic_add_fetch(&r->iterations, 1, __ATOMIC_RELEASE);
		mlv_publish_quiescent(r->pub, r->id);
	}
	mlv_publish_worker_unregister(r->pub, r->id);
	return NULL;
}

static void test_concurrent_readers(void **state)
{
	struct fx f;
	struct free_log log = { 0 };
	struct mlv_publish_hooks hooks = {
		.on_publish = on_publish, .on_free = on_free, .ctx = &log,
	};
	struct mlv_publisher *pub;
	struct reader readers[N_READERS];
	struct mlv_generation *g;
	uint32_t reclaimed = 0;
	uint64_t counted = 0;
	bool all;

	(void)state;
	fx_init(&f, 3);
	assert_int_equal(mlv_stats_create(&log.stats), MLV_OK);
	assert_int_equal(mlv_publish_create(N_READERS, &hooks, &pub), MLV_OK);
	__atomic_store_n(&readers_stop, false, __ATOMIC_RELEASE);
	memset(readers, 0, sizeof(readers));
	for (uint32_t i = 0; i < N_READERS; i++) {
		readers[i].pub = pub;
		readers[i].id = i;
		assert_int_equal(pthread_create(&readers[i].thread, NULL,
						reader_main, &readers[i]), 0);
	}
	/* Every reader is looping before the first publish. */
	do {
		all = true;
		for (uint32_t i = 0; i < N_READERS; i++)
			all &= __atomic_load_n(&readers[i].iterations, __ATOMIC_ACQUIRE) > 0;
		sched_yield();
	} while (!all);

	for (uint32_t n = 1; n <= N_PUBLISH; n++) {
		/* The control thread may read current without RCU: only it
		 * frees generations. */
		g = gen_build(&f, N_READERS, n,
			      mlv_publish_current(pub));
		f.be[n % 3].weight = 50 + n % 100; /* vary the tables */
		assert_int_equal(mlv_publish(pub, g), MLV_OK);
		reclaimed += mlv_publish_reclaim(pub);
	}

	/* Every reader reaches the last generation, then everything older
	 * is reclaimed while they keep running (reclaim never blocks). */
	do {
		all = true;
		for (uint32_t i = 0; i < N_READERS; i++)
			all &= __atomic_load_n(&readers[i].last_seen, __ATOMIC_ACQUIRE) == N_PUBLISH;
		sched_yield();
	} while (!all);
	while (mlv_publish_pending(pub) > 0) {
		reclaimed += mlv_publish_reclaim(pub);
		sched_yield();
	}
	assert_int_equal(reclaimed, N_PUBLISH - 1);
	assert_int_equal(log.n_freed, N_PUBLISH - 1);
	assert_int_equal(mlv_stats_tracked(log.stats), 1);

	__atomic_store_n(&readers_stop, true, __ATOMIC_RELEASE);
	for (uint32_t i = 0; i < N_READERS; i++) {
		assert_int_equal(pthread_join(readers[i].thread, NULL), 0);
		assert_int_equal(readers[i].errors, 0);
		counted += readers[i].counted;
	}
	/* Every increment made in any of the 1000 generations is accounted
	 * for: folded at reclaim, or live in the current one. */
	g = (struct mlv_generation *)mlv_publish_current(pub);
	assert_int_equal(vip_packets(log.stats, g), counted);

	mlv_publish_destroy(pub);
	assert_int_equal(log.n_freed, N_PUBLISH);
	mlv_stats_destroy(log.stats);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_errors),
		cmocka_unit_test(test_reclaim_waits_for_every_worker),
		cmocka_unit_test(test_destroy_frees_pending),
		cmocka_unit_test(test_publish_hook_can_refuse),
		cmocka_unit_test(test_stats_fold_across_generations),
		cmocka_unit_test(test_stats_untracked_generation),
		cmocka_unit_test(test_stats_vip_is_sum_of_backends),
		cmocka_unit_test(test_stats_many_removed),
		cmocka_unit_test(test_stats_workers_sum),
		cmocka_unit_test(test_concurrent_readers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
