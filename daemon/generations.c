/* SPDX-License-Identifier: BSD-3-Clause */
/* Building and publishing generations from the config plus runtime
 * state, whatever asked for it (start, reload, health, override, next
 * hop). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "daemon/daemon.h"
#include "control/base/log.h"

static const char *const reason_names[MLV_PUBLISH__COUNT] = {
#define REASON_NAME(id, name) [MLV_PUBLISH_##id] = name,
	MLV_PUBLISH_REASONS(REASON_NAME)
#undef REASON_NAME
};

const char *mlv_publish_reason_name(enum mlv_publish_reason r)
{
	return (unsigned)r < MLV_PUBLISH__COUNT ? reason_names[r] : "unknown";
}

/* pair's backend in cfg: at its position when that holds it (a build of
 * cfg), else by name (the control socket); NULL if cfg has no such pair. */
static const struct mlv_backend_config *
config_backend(const struct mlv_config *cfg, const struct mlv_gen_pair *pair,
	       const struct mlv_vip_config **vc_out)
{
	const struct mlv_vip_config *vc = NULL;

	if (pair->vip_index < cfg->n_vips &&
	    strcmp(cfg->vips[pair->vip_index].name, pair->vip) == 0)
		vc = &cfg->vips[pair->vip_index];
	else
		vc = mlv_config_vip(cfg, pair->vip);
	*vc_out = vc;
	if (!vc)
		return NULL;
	if (pair->backend_index < vc->n_backends &&
	    strcmp(vc->backends[pair->backend_index].name, pair->backend) == 0)
		return &vc->backends[pair->backend_index];
	for (uint32_t b = 0; b < vc->n_backends; b++)
		if (strcmp(vc->backends[b].name, pair->backend) == 0)
			return &vc->backends[b];
	return NULL;
}

/* An l2dsr backend without a configured MAC: the one the kernel's
 * neighbour table gave (daemon/netlink/next_hop.h); none yet leaves has_mac false
 * and the builder keeps the backend out of the table. The config is the
 * one being built (a reload builds before it becomes d->cfg). The
 * look-ups only run while such backends exist. */
static void l2dsr_mac(const struct mlv_daemon *d,
		      const struct mlv_gen_pair *pair,
		      struct mlv_gen_backend_state *out)
{
	const struct mlv_config *cfg = d->building ? d->building : d->cfg;
	const struct mlv_vip_config *vc;
	const struct mlv_backend_config *bc;

	if (!d->next_hops.n_backends || !cfg)
		return;
	bc = config_backend(cfg, pair, &vc);
	if (!bc || vc->forwarding != MLV_FWD_L2DSR || bc->has_mac)
		return;
	out->has_mac = mlv_next_hops_backend_mac(&d->next_hops, &bc->address,
						 out->mac);
}

/* Called for each of a build's 10^5 pairs: the health answer comes by
 * position (control/health/health.h, mlv_health_is_up_at); the name look-ups
 * below run only while their sets are non-empty. */
void mlv_daemon_backend_state(const struct mlv_gen_pair *pair,
			      struct mlv_gen_backend_state *out, void *ctx)
{
	const struct mlv_daemon *d = ctx;

	out->healthy = mlv_health_is_up_at(d->health, pair->vip_index,
					   pair->backend_index, pair->vip,
					   pair->backend);
	/* the failover generation of a health batch: the backends it took
	 * down keep their slots for one generation */
	if (!out->healthy && d->just_down.n)
		out->keep_slots = mlv_daemon_just_down(d, pair->vip,
						       pair->backend);
	mlv_overrides_apply(&d->overrides, pair->vip, pair->backend, out);
	l2dsr_mac(d, pair, out);
}

static uint64_t clock_us(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t now_us(void)
{
	return clock_us(CLOCK_MONOTONIC);
}

/* Second choices computed within a build before the rest are deferred:
 * four tables at the default size, a few milliseconds; small configs
 * (and the tests that count their generations) never defer. */
#define SECOND_SLOTS_NOW (4u * 65537u)

const struct mlv_gen_build_opts mlv_daemon_build_opts = {
	.defer_second = true,
	.second_slots_now = SECOND_SLOTS_NOW,
};

void mlv_daemon_second_note(struct mlv_daemon *d,
			    const struct mlv_generation *gen)
{
	if (!gen->n_tables_no_second) {
		d->second_pending = false;
		return;
	}
	/* the follow-up is timed from the last publish that left tables
	 * without them (its own tables, or older ones it took over) */
	d->second_since = gen->number;
	d->second_since_us = now_us();
	d->second_pending = true;
}

/* mlv_gen_build_opts.uid_free: a uid is free when no uid sharing its
 * tally slot is held by a live generation (every live generation is
 * tracked by the stats, whose totals map holds exactly their uids) and
 * no worker counts a flow there (flows still tracked to a backend that
 * left). Once no live generation holds a uid, no worker can count a new
 * flow in it, so an empty slot stays empty. Uids below MLV_TALLY_SLOTS
 * share their slot with none: no look-up for them. */
static bool uid_free(void *ctx, uint32_t uid)
{
	const struct mlv_daemon *d = ctx;

	for (uint32_t a = uid; a >= MLV_TALLY_SLOTS;) {
		a -= MLV_TALLY_SLOTS;
		if (mlv_stats_holds_uid(d->stats, a))
			return false;
	}
	return mlv_flow_tally_slot_empty(&d->tallies, uid);
}

enum mlv_err mlv_daemon_build(struct mlv_daemon *d,
			      const struct mlv_config *cfg,
			      enum mlv_publish_reason reason,
			      struct mlv_daemon_built *out)
{
	struct mlv_gen_build_opts opts = mlv_daemon_build_opts;
	uint32_t number = d->generation + 1;
	enum mlv_err err;

	memset(out, 0, sizeof(*out));
	out->t0_us = now_us();
	/* the control thread's own time: on a busy machine the wall time
	 * also counts the time it waited for a CPU */
	out->cpu0_us = clock_us(CLOCK_THREAD_CPUTIME_ID);
	/* The current generation carries uids forward and lends unchanged
	 * tables (control/generation/generation.h); the control thread may read it:
	 * only it frees generations. */
	d->building = cfg;
	opts.pool = d->build_pool;
	opts.tallies = &d->tallies;
	opts.uid_free = uid_free;
	opts.uid_free_ctx = d;
	mlv_daemon_history_opts(d, &opts);
	err = mlv_gen_build_opt(cfg, d->ports.info, d->n_workers, number,
				mlv_daemon_backend_state, d,
				mlv_publish_current(d->pub),
				&opts, &out->gen);
	d->building = NULL;
	if (err)
		mlv_err_log("cannot build generation %u (%s): %s", number,
			    mlv_publish_reason_name(reason), mlv_strerror(err));
	return err;
}

void mlv_daemon_build_discard(struct mlv_daemon_built *built)
{
	mlv_gen_free(built->gen);
	built->gen = NULL;
}

enum mlv_err mlv_daemon_publish_built(struct mlv_daemon *d,
				      struct mlv_daemon_built *built,
				      enum mlv_publish_reason reason)
{
	struct mlv_generation *gen = built->gen;
	uint32_t number = gen->number;
	struct mlv_publish_record *rec = &d->last_publish;
	char deferred[64] = "";
	enum mlv_err err;

	built->gen = NULL;
	mlv_gen_tally_bind(gen);
	err = mlv_publish(d->pub, gen);
	if (err) {
		mlv_err_log("cannot publish generation %u (%s): %s", number,
			    mlv_publish_reason_name(reason), mlv_strerror(err));
		mlv_gen_free(gen);
		return err;
	}
	d->generation = number;
	rec->generation = number;
	rec->reason = reason;
	rec->vips = gen->n_vips;
	rec->tables_reused = gen->n_tables_reused;
	rec->build_us = now_us() - built->t0_us;
	rec->count[reason]++;
	if (gen->n_tables_no_second)
		snprintf(deferred, sizeof(deferred), "; second choices of %u "
			 "table(s) to follow", gen->n_tables_no_second);
	mlv_info("generation %u published (%s): %u VIP(s), %u table(s) "
		 "rebuilt, %u reused, in %.1f ms (%.1f ms CPU)%s", number,
		 mlv_publish_reason_name(reason), gen->n_vips,
		 gen->n_vips - gen->n_tables_reused, gen->n_tables_reused,
		 (double)rec->build_us / 1000.0,
		 (double)(clock_us(CLOCK_THREAD_CPUTIME_ID) - built->cpu0_us) /
		 1000.0, deferred);
	mlv_daemon_second_note(d, gen);
	mlv_daemon_history_note(d, gen);
	return MLV_OK;
}

enum mlv_err mlv_daemon_publish(struct mlv_daemon *d,
				const struct mlv_config *cfg,
				enum mlv_publish_reason reason)
{
	struct mlv_daemon_built built;
	enum mlv_err err = mlv_daemon_build(d, cfg, reason, &built);

	return err ? err : mlv_daemon_publish_built(d, &built, reason);
}
