/* SPDX-License-Identifier: BSD-3-Clause */
/* The running daemon's state, owned by the control thread (the main
 * lcore). Workers see only their struct mlv_worker and the publisher.
 *
 * Life cycle (daemon/main.c, daemon/startup.c): options -> config ->
 * control socket (its lock makes this the only instance on that path) ->
 * health engine synced to the config -> EAL (af_xdp vdevs get the XDP
 * steering program) -> ports -> the pdump server, when capture is
 * possible -> workers + conntrack -> steering maps, next hops ->
 * generation 1 -> launch -> READY=1 -> control loop (signals, control
 * socket, metrics, health checks, config file watch, rtnetlink, timers)
 * -> STOPPING=1 -> stop workers -> close the pdump server, steering and
 * ports -> close metrics and the control socket -> free ->
 * rte_eal_cleanup -> final stats.
 *
 * Every generation after the first is built from the running config plus
 * runtime state: health (control/health/health.h), runtime overrides
 * (daemon/runtime/overrides.h) and resolved next hops (daemon/netlink/next_hop.h), by
 * mlv_daemon_publish, whatever triggered it.
 */
#ifndef MLV_DAEMON_H
#define MLV_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "control/tables/build_pool.h"
#include "control/check_path/check_path.h"
#include "control/config/config.h"
#include "control/ctl/commands.h"
#include "control/ctl/server.h"
#include "control/health/health.h"
#include "control/metrics/metrics.h"
#include "control/publish/publish.h"
#include "control/generation/stats.h"
#include "daemon/capture.h"
#include "daemon/options/eal_args.h"
#include "daemon/netlink/announce.h"
#include "daemon/netlink/next_hop.h"
#include "daemon/netlink/rtnl.h"
#include "daemon/options/options.h"
#include "daemon/runtime/overrides.h"
#include "daemon/runtime/state_file.h"
#include "daemon/steering.h"
#include "dataplane/worker/port.h"
#include "dataplane/worker/worker.h"

/* Why a generation was published: X(id, name). */
#define MLV_PUBLISH_REASONS(X)            \
	X(START,    "start")              \
	X(RELOAD,   "reload")             \
	X(FAILOVER, "failover")           \
	X(HEALTH,   "health")             \
	X(OVERRIDE, "override")           \
	X(NEXT_HOP, "next_hop")          \
	X(SECOND,   "second_choices")     \
	X(SC_WINDOW, "second_chance_window")

enum mlv_publish_reason {
#define MLV_PUBLISH_REASON_ENUM(id, name) MLV_PUBLISH_##id,
	MLV_PUBLISH_REASONS(MLV_PUBLISH_REASON_ENUM)
#undef MLV_PUBLISH_REASON_ENUM
	MLV_PUBLISH__COUNT
};

const char *mlv_publish_reason_name(enum mlv_publish_reason r);

/* The last publish, for the log, the stats file and benchmarks. */
struct mlv_publish_record {
	uint32_t generation;
	enum mlv_publish_reason reason;
	uint32_t vips;
	uint32_t tables_reused;          /* VIP tables copied, not rebuilt */
	uint64_t build_us;               /* mlv_gen_build + mlv_publish */
	uint64_t count[MLV_PUBLISH__COUNT];
};

/* A set of (VIP name, backend name) pairs: sorted, looked up by binary
 * search. */
struct mlv_pair_name {
	char vip[MLV_NAME_MAX];
	char backend[MLV_NAME_MAX];
};

struct mlv_pair_set {
	uint32_t n, cap;
	struct mlv_pair_name *items;
};

struct mlv_daemon {
	const struct mlv_options *opts;
	struct mlv_config *cfg;          /* the running configuration */
	struct mlv_eal_args eal;
	bool eal_ready;                  /* rte_eal_init succeeded */
	struct mlv_capture capture;      /* dpdk-dumpcap's pdump server */
	uint32_t n_workers;
	unsigned worker_lcores[MLV_MAX_WORKERS];
	struct mlv_ports ports;
	/* the kernel interface behind each port (net_af_xdp, net_af_packet,
	 * net_tap), 0 for ports without one */
	int port_ifindex[MLV_MAX_PORTS];
	struct mlv_nic_stats *nic;       /* the ports' NIC counters as last
					    read (daemon/port_stats.h) */
	struct mlv_worker *workers[MLV_MAX_WORKERS];
	bool launched;                   /* workers were launched */
	struct mlv_stats *stats;
	struct mlv_publisher *pub;
	uint32_t generation;             /* number of the current generation */
	struct timespec started;         /* CLOCK_MONOTONIC */
	uint64_t reloads_ok;             /* whatever started them */
	uint64_t reloads_failed;
	struct mlv_publish_record last_publish;

	/* Runtime state layered over the config (daemon/generations.c);
	 * the overrides are kept in state_path across restarts. */
	struct mlv_overrides overrides;
	char state_path[MLV_PATH_MAX + 8];
	/* Second chance's slot histories kept beside it (daemon/
	 * history_glue.c): the loaded file until generation 1 is built, and
	 * what the file holds now (0: nothing written yet). */
	struct mlv_daemon_history *history;
	uint64_t history_digest;
	/* Restart-only settings the file changed: what the last accepted
	 * reload warned about, for status ("dataplane.workers: 1 -> 2"). */
	mlv_ctl_restart_msg restart_pending[MLV_CTL_RESTART_PENDING_MAX];
	uint32_t n_restart_pending;
	struct mlv_health *health;
	bool health_dirty;               /* a health batch changed something */
	/* Pairs the current health batch took down, while the failover
	 * generation is built (daemon/health_glue.c); empty otherwise. */
	struct mlv_pair_set just_down;
	/* Data-path checks (daemon/check_path_glue.c): the tc programs,
	 * loaded at the first such check; the route look-ups that say
	 * which interface a check leaves by; no new load attempt before
	 * check_path_retry_ms (CLOCK_MONOTONIC) after one failed, whose
	 * reason every check gets meanwhile. */
	struct mlv_check_path *check_path;
	struct mlv_rtnl check_rtnl;
	uint64_t check_path_retry_ms;
	char check_path_error[MLV_HEALTH_REASON_MAX];

	/* The control socket; st is its handler's context. */
	struct mlv_ctl_server *ctl;
	struct mlv_ctl_state st;
	const struct mlv_worker_counters *worker_ctr[MLV_MAX_WORKERS];
	const struct mlv_ct *worker_ct[MLV_MAX_WORKERS];
	/* The workers' tallies of tracked flows, for every generation built
	 * (gen->tallies) and the uid check (daemon/generations.c). */
	struct mlv_flow_tally *worker_tally[MLV_MAX_WORKERS];
	struct mlv_flow_tally_set tallies;
	/* `lookup`'s question to the workers (daemon/ctl_glue.c): the last
	 * ticket given out, and the one still outstanding (0: none). */
	uint64_t track_ticket;
	uint64_t track_outstanding;
	/* `conns`' page request in the workers' listing mailboxes: whose it
	 * is (NULL: none pending). */
	const void *list_owner;

	struct mlv_metrics *metrics;     /* Prometheus endpoint, or NULL */

	struct mlv_steering steering;    /* AF_XDP steering programs */
	struct mlv_next_hops next_hops;  /* next_hop: auto, l2dsr MACs */
	/* the config mlv_daemon_publish is building from, for the state
	 * callback; NULL otherwise (then d->cfg) */
	const struct mlv_config *building;

	/* Deferred second choices (daemon/second_choices.c): the current
	 * generation has tables without them; second_since is the last
	 * generation published with some and second_since_us when
	 * (CLOCK_MONOTONIC). */
	bool second_pending;
	uint32_t second_since;
	uint64_t second_since_us;

	/* Second chance's windows (daemon/second_chance.c): no rebuild for
	 * their end before this (CLOCK_MONOTONIC ms) after one failed. */
	uint64_t sc_retry_ms;

	/* Threads that build a generation's tables (daemon/build_threads.c) */
	struct mlv_build_pool *build_pool;

	/* VIP routes for a routing daemon (daemon/announce_glue.c): the
	 * announcer, what it was last brought in line with, and the view
	 * status and metrics read. */
	struct mlv_announce announce;
	bool announce_applied;                  /* the config was applied once */
	uint64_t announce_reloads;              /* reloads_ok when applied */
	uint32_t announce_gen;                  /* generation last seen */
	uint64_t announce_syncs;                /* steering syncs last seen */
	bool announce_stopping;                 /* stopping, last seen */
	bool announce_retry;                    /* a route change failed */
	uint64_t announce_checked_ms;           /* routes last re-asserted */
	/* VIP names the last successful steering sync put in place (sorted):
	 * while a later sync fails, only these may be announced */
	char (*steered_names)[MLV_NAME_MAX];
	uint32_t n_steered, cap_steered;
	uint64_t announce_open_failures;
	struct mlv_ctl_announce announce_view;
	struct mlv_ctl_announce_vip *announce_vips;
	uint32_t announce_vips_cap;

	/* The stop (SIGTERM, SIGINT, `shutdown`): stopping = routes withdrawn
	 * and forwarding until stop_at_ms (CLOCK_MONOTONIC); stop_now = leave
	 * the control loop. */
	bool stopping;
	uint64_t stop_at_ms;
	bool stop_now;
};

/* Start everything up to and including launching the workers with
 * generation 1 published and the control socket listening. Logs the
 * reason and returns an error on failure; mlv_daemon_teardown cleans up
 * whatever was done. Control thread. */
enum mlv_err mlv_daemon_start(struct mlv_daemon *d);

/* Stop the workers (if launched) and wait for them. Control thread. */
void mlv_daemon_stop_workers(struct mlv_daemon *d);

/* Close the pdump server and the steering handles, then the ports
 * (after the workers stopped). Idempotent. Control thread. */
void mlv_daemon_close_ports(struct mlv_daemon *d);

/* Close the control socket and the health engine, then close ports,
 * free generations, conntrack, workers, the config, and clean up the
 * EAL. Safe after a partial start. Control thread. */
void mlv_daemon_teardown(struct mlv_daemon *d);

/* Build generation `generation + 1` from cfg plus the runtime state
 * (mlv_daemon_backend_state, next hops) and publish it; on success
 * d->generation moves, d->last_publish records it and a line with the
 * build time is logged. Logs failures. Control thread. */
enum mlv_err mlv_daemon_publish(struct mlv_daemon *d,
				const struct mlv_config *cfg,
				enum mlv_publish_reason reason);

/* mlv_daemon_publish in two steps, for a reload that looks at what it
 * built before it publishes: mlv_daemon_build builds generation
 * `generation + 1` into *built (logs a failure); then either
 * mlv_daemon_publish_built publishes it (and frees it if that fails) or
 * mlv_daemon_build_discard frees it. Nothing else may publish in between.
 * Control thread. */
struct mlv_daemon_built {
	struct mlv_generation *gen;
	uint64_t t0_us;                  /* CLOCK_MONOTONIC at the start */
	uint64_t cpu0_us;                /* the thread's CPU time then */
};
enum mlv_err mlv_daemon_build(struct mlv_daemon *d,
			      const struct mlv_config *cfg,
			      enum mlv_publish_reason reason,
			      struct mlv_daemon_built *built);
enum mlv_err mlv_daemon_publish_built(struct mlv_daemon *d,
				      struct mlv_daemon_built *built,
				      enum mlv_publish_reason reason);
void mlv_daemon_build_discard(struct mlv_daemon_built *built);

/* The mlv_gen_state_fn of every build and of the control socket
 * (ctx = the daemon): health, then runtime overrides. */
void mlv_daemon_backend_state(const struct mlv_gen_pair *pair,
			      struct mlv_gen_backend_state *out, void *ctx);

/* Load, validate, plan, build, publish; an invalid config, or one whose
 * plan exceeds the running control.reload_budget (MLV_E_LIMIT, unless
 * req->mode forces it), changes nothing (daemon/reload.c). A CHECK mode
 * stops after the plan and publishes nothing; only a CHECK may name
 * req->file (another file, read as far as req->uid may read it;
 * MLV_E_INVAL otherwise). diags (initialised by the
 * caller) receives the loader's diagnostics, plus the daemon's own checks
 * and restart-only warnings; all are logged too. plan, when not NULL
 * (zeroed by the caller, who frees it), gets what the file changes once
 * it loaded. Counts the outcome of a real reload in reloads_ok/failed.
 * Returns MLV_OK or the reason it was rejected. Control thread. */
enum mlv_err mlv_daemon_reload(struct mlv_daemon *d,
			       const struct mlv_ctl_reload_req *req,
			       struct mlv_diags *diags, struct mlv_plan *plan);

/* A reload not started over the control socket (SIGHUP, file change):
 * mlv_daemon_reload, systemd RELOADING/READY, and an entry in the
 * control socket's reload history. what names the trigger for the log. */
void mlv_daemon_reload_from(struct mlv_daemon *d, const char *what);

/* The event loop until SIGTERM/SIGINT (daemon/control_loop.c). sigfd is a
 * signalfd for SIGHUP, SIGTERM and SIGINT. Returns MLV_OK on a stop
 * signal, an error if the loop itself failed. Control thread. */
enum mlv_err mlv_daemon_control_loop(struct mlv_daemon *d, int sigfd);

/* Log each line of diags at warning or error level. */
void mlv_daemon_log_diags(const struct mlv_diags *diags);

/* ---- deferred second choices (daemon/generations.c: the options and
 * the note; daemon/second_choices.c: the steps) ---- */

/* Build options of every publish: second choices deferred beyond the
 * first few tables of a build (docs/generations.md). */
extern const struct mlv_gen_build_opts mlv_daemon_build_opts;

/* Note that generation gen, just published, holds tables without second
 * choices (or none any more). Control thread, from mlv_daemon_publish. */
void mlv_daemon_second_note(struct mlv_daemon *d,
			    const struct mlv_generation *gen);

/* If second choices are pending: compute them for tables of the current
 * generation for about MLV_SECOND_STEP_US, then return, so the control
 * loop keeps serving its sockets between steps; once none is left,
 * publish the follow-up generation that carries them (same first choices
 * and fingerprints). Returns whether more steps are needed (the loop then
 * polls instead of blocking). Control thread. */
bool mlv_daemon_second_step(struct mlv_daemon *d);

/* ---- table build threads (daemon/build_threads.c) ---- */

/* Start control.build_threads - 1 helper threads on control.build_cpus
 * (unset: the CPUs the calling thread may use, so call it after the EAL
 * pinned the control thread) and log how many run where. Logs and
 * returns the error on failure (MLV_E_INVAL: a CPU list the kernel
 * refuses). Control thread. */
enum mlv_err mlv_daemon_build_pool_start(struct mlv_daemon *d);

/* Join the helpers; no build may run after this. Control thread. */
void mlv_daemon_build_pool_stop(struct mlv_daemon *d);

/* ---- control socket (daemon/ctl_glue.c) ---- */

/* Fill d->st (callbacks into the daemon) and create the socket from
 * cfg->control section. Logs and returns the error on failure. */
enum mlv_err mlv_daemon_ctl_open(struct mlv_daemon *d);

/* The workers exist: let the control socket see their counters and
 * connection tables. */
void mlv_daemon_ctl_workers(struct mlv_daemon *d);

/* Start the Prometheus endpoint on cfg->control.metrics_listen (nothing
 * when it is ""), reading the control socket's state. Logs and returns
 * the error on failure. After mlv_daemon_ctl_workers. */
enum mlv_err mlv_daemon_metrics_open(struct mlv_daemon *d);

/* ---- VIP routes and the stop (daemon/announce_glue.c) ---- */

/* Bring the announce table in line with what is serving now: open, move
 * or close the announcer when the config's announce section changed,
 * then keep one route per address of a VIP that is published, steered
 * (AF_XDP maps in place) and has at least min_backends usable backends;
 * none while stopping or before the workers run. Cheap when nothing it
 * depends on changed since the last call: the control loop calls it
 * after every pass. Control thread. */
void mlv_daemon_announce_refresh(struct mlv_daemon *d);

/* Ask the daemon to stop. The first request withdraws every route and
 * keeps forwarding for announce.drain_time (at once when announcing is
 * off or the drain time is 0); now stops at once, and so does a repeated
 * request when repeat_stops (a second signal). why names the trigger for
 * the log. Control thread. */
void mlv_daemon_request_stop(struct mlv_daemon *d, bool now, bool repeat_stops,
			     const char *why);

/* Milliseconds until a draining stop ends (0 when not stopping or due);
 * the control loop's longest wait. Control thread. */
uint64_t mlv_daemon_stop_remaining_ms(const struct mlv_daemon *d);

/* Second chance (docs/second-chance.md, "The window"): milliseconds
 * until the current generation's earliest second-chance window ends and
 * mlv_daemon_sc_step must run (0: due); -1: no window open. Control
 * thread. */
int mlv_daemon_sc_wait_ms(const struct mlv_daemon *d);

/* When a window has ended, publish a generation without its previous
 * owners (reason second_chance_window); a failed build is retried a
 * second later. Control thread. */
void mlv_daemon_sc_step(struct mlv_daemon *d);

/* How long the control loop may sleep before mlv_daemon_announce_refresh
 * must run again (a failed route change is retried, and the routes are
 * re-asserted periodically against changes made behind maglevd's back);
 * -1: no deadline. Control thread. */
int mlv_daemon_announce_wait_ms(const struct mlv_daemon *d);

/* The view struct mlv_ctl_state.announce returns (ctx = the daemon). */
const struct mlv_ctl_announce *mlv_daemon_announce_view(void *ctx);

/* Withdraw every route and close the announcer (teardown). */
void mlv_daemon_announce_close(struct mlv_daemon *d);

/* ---- the state file (daemon/state_glue.c) ---- */

/* Work out state_path and read the overrides kept there (start, before
 * generation 1); those for VIPs or backends the config lacks are
 * dropped. A file that cannot be read is logged and the daemon starts
 * without it. Control thread. */
void mlv_daemon_state_load(struct mlv_daemon *d);

/* Write the overrides to state_path; a failure is logged (the overrides
 * still apply, they are only not kept across a restart). Control thread. */
void mlv_daemon_state_save(struct mlv_daemon *d);

/* ---- the flows file (daemon/flows_glue.c) ---- */

/* Save the workers' tracked flows beside the state file (a graceful
 * stop, after the workers stopped and before the generations are
 * freed). A failure is logged; the next start begins empty then.
 * Control thread. */
void mlv_daemon_flows_save(struct mlv_daemon *d);

/* Put the flows a graceful stop saved back into the workers' tables and
 * remove the file (start, after generation 1 is published, before the
 * workers launch). A file that is not valid, or saved under another
 * worker layout, is logged in one line and nothing is restored.
 * Control thread. */
void mlv_daemon_flows_restore(struct mlv_daemon *d);

/* ---- the history file (daemon/history_glue.c) ---- */

struct mlv_daemon_history;
struct mlv_gen_build_opts;

/* Read second chance's slot histories kept beside the state file into
 * d->history (start, after the state file, before generation 1). A file
 * that is not valid is logged in one line and the daemon starts without
 * it. Control thread. */
void mlv_daemon_history_load(struct mlv_daemon *d);

/* Let a build take d->history's VIPs as the predecessors of the VIPs its
 * previous generation lacks (generation 1's build). Control thread. */
void mlv_daemon_history_opts(struct mlv_daemon *d,
			     struct mlv_gen_build_opts *opts);

/* Free a loaded history (NULL is fine). Control thread. */
void mlv_daemon_history_drop(struct mlv_daemon_history *dh);

/* gen was just published: write its slot histories to the file when
 * they differ from what it holds. A failure is logged (the histories
 * still apply; a restart would forget them). Control thread. */
void mlv_daemon_history_note(struct mlv_daemon *d,
			     const struct mlv_generation *gen);

/* ---- health checks (daemon/health_glue.c) ---- */

/* Raise RLIMIT_NOFILE, create the engine and sync it with d->cfg. */
enum mlv_err mlv_daemon_health_open(struct mlv_daemon *d);

/* The health fd is readable: process; if a batch changed some backend's
 * state, publish. When backends went down, first a failover generation
 * in which they keep their table slots (every table reused, so it is
 * live within milliseconds; their new flows go to each slot's second
 * choice), then the rebuilt one without them (docs/table-builders.md,
 * "Second choices and failover"). */
void mlv_daemon_health_process(struct mlv_daemon *d);

/* ---- data-path checks (daemon/check_path_glue.c) ---- */

/* The health engine's tunnel callbacks (struct mlv_health_tunnel_ops),
 * ctx = d: load the check-path programs when first needed, attach them
 * to the interface the kernel routes the check's backend by, and record
 * the check in their maps; and forget it again. */
struct mlv_health_tunnel_ops mlv_daemon_check_path_ops(struct mlv_daemon *d);

/* Detach the programs and free them (after the health engine is gone). */
void mlv_daemon_check_path_close(struct mlv_daemon *d);

/* ---- the just-down set (daemon/down_pairs.c) ---- */

/* Add the n pairs of a down event to the set; out of memory costs only
 * the failover generation (a warning; the rebuild still happens). */
void mlv_daemon_note_down(struct mlv_daemon *d,
			  const struct mlv_health_pair *pairs, uint32_t n);

/* Sort the set for mlv_daemon_just_down (before the failover build). */
void mlv_daemon_just_down_sort(struct mlv_daemon *d);

/* Whether (vip, backend) is in the current batch's just-down set (sorted). */
bool mlv_daemon_just_down(const struct mlv_daemon *d, const char *vip,
			  const char *backend);

/* Release the just-down set (teardown). */
void mlv_daemon_health_free(struct mlv_daemon *d);

#endif
