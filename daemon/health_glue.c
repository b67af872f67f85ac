/* SPDX-License-Identifier: BSD-3-Clause */
/* The health-check engine (control/health/health.h, docs/health.md) in the
 * daemon: created before generation 1, processed from the control loop;
 * each batch of transitions is logged and published as one generation. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "daemon/daemon.h"
#include "control/base/log.h"

/* The engine holds a socket per check in flight and sizes its limit from
 * RLIMIT_NOFILE; the soft limit (often 1024) is raised to the hard one
 * so a large config is not throttled by a default. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		mlv_warn("cannot raise the open file limit to %llu: %s",
			 (unsigned long long)rl.rlim_max, strerror(errno));
}

/* Called from inside mlv_health_process: logs, remembers which pairs
 * went down and marks the daemon dirty; publishing happens after
 * process() returns (the engine must not be re-entered, and one
 * generation covers the whole batch). */
static void on_health(const struct mlv_health_batch *b, void *ctx)
{
	struct mlv_daemon *d = ctx;
	char line[512];

	for (uint32_t i = 0; i < b->n_events; i++) {
		const struct mlv_health_event *e = &b->events[i];

		mlv_health_event_describe(e, line, sizeof(line));
		mlv_log(e->up ? MLV_LOG_INFO : MLV_LOG_WARNING, "health: %s",
			line);
		if (!e->up)
			mlv_daemon_note_down(d, e->pairs, e->n_pairs);
	}
	for (uint32_t i = 0; i < b->n_vip_events; i++) {
		const struct mlv_health_vip_event *v = &b->vip_events[i];

		if (v->all_down)
			mlv_warn("health: every backend of VIP %s is down; %s",
				 v->vip, v->fail_open ?
				 "failing open: the table keeps every backend" :
				 "its new flows are dropped");
		else
			mlv_info("health: VIP %s has a backend up again", v->vip);
	}
	d->health_dirty = true;
}

enum mlv_err mlv_daemon_health_open(struct mlv_daemon *d)
{
	struct timespec now;
	enum mlv_err err;

	raise_nofile();
	clock_gettime(CLOCK_REALTIME, &now);
	err = mlv_health_create(&(struct mlv_health_options){
		/* different per start, so instances started together do not
		 * check in lock-step */
		.seed = (uint64_t)now.tv_sec * 1000000000u +
			(uint64_t)now.tv_nsec,
		.all_down = MLV_HEALTH_FAIL_OPEN,
		.on_batch = on_health,
		.ctx = d,
		.tunnel = mlv_daemon_check_path_ops(d),
	}, &d->health);
	if (err) {
		mlv_err_log("health checks: %s", mlv_strerror(err));
		return err;
	}
	err = mlv_health_sync(d->health, d->cfg, NULL);
	if (err) {
		mlv_err_log("health checks: %s", err == MLV_E_INVAL ?
			    mlv_health_error(d->health) : mlv_strerror(err));
		return err == MLV_E_INVAL ? MLV_E_CONFIG : err;
	}
	return MLV_OK;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

void mlv_daemon_health_process(struct mlv_daemon *d)
{
	uint64_t t0 = now_us();

	if (mlv_health_process(d->health) != MLV_OK)
		mlv_warn("health checks: epoll failed: %s", strerror(errno));
	if (!d->health_dirty)
		return;
	d->health_dirty = false;
	if (d->just_down.n) {
		mlv_daemon_just_down_sort(d);
		if (mlv_daemon_publish(d, d->cfg, MLV_PUBLISH_FAILOVER) == MLV_OK)
			mlv_info("health: failover generation %u live %.1f ms "
				 "after the check results were read",
				 d->generation, (double)(now_us() - t0) / 1000.0);
		d->just_down.n = 0;
	}
	/* on failure the old generation keeps serving; the next batch or
	 * reload tries again */
	if (mlv_daemon_publish(d, d->cfg, MLV_PUBLISH_HEALTH) == MLV_OK)
		mlv_info("health: generation %u live %.1f ms after the check "
			 "results were read", d->generation,
			 (double)(now_us() - t0) / 1000.0);
}
