/* The running daemon's state, owned by the control thread (the main
 * lcore). Workers see only their struct mlv_worker and the publisher.
 *
 * Life cycle (daemon/main.c): options -> config -> EAL -> ports ->
 * workers + conntrack -> generation 1 -> launch -> control loop (signals,
 * timers: reload, stats file, reclaim) -> stop workers -> close ports ->
 * free -> rte_eal_cleanup -> final stats file.
 */
#ifndef MLV_DAEMON_H
#define MLV_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "control/config.h"
#include "control/publish.h"
#include "control/stats.h"
#include "daemon/eal_args.h"
#include "daemon/options.h"
#include "dataplane/port.h"
#include "dataplane/worker.h"

struct mlv_daemon {
	const struct mlv_options *opts;
	struct mlv_config *cfg;          /* the running configuration */
	struct mlv_eal_args eal;
	bool eal_ready;                  /* rte_eal_init succeeded */
	uint32_t n_workers;
	unsigned worker_lcores[MLV_MAX_WORKERS];
	struct mlv_ports ports;
	struct mlv_worker *workers[MLV_MAX_WORKERS];
	bool launched;                   /* workers were launched */
	struct mlv_stats *stats;
	struct mlv_publisher *pub;
	uint32_t generation;             /* number of the current generation */
	struct timespec started;         /* CLOCK_MONOTONIC */
	uint64_t reloads_ok;
	uint64_t reloads_failed;
};

/* Start everything up to and including launching the workers with
 * generation 1 published. Logs the reason and returns an error on
 * failure; mlv_daemon_teardown cleans up whatever was done. Control
 * thread. */
enum mlv_err mlv_daemon_start(struct mlv_daemon *d);

/* Stop the workers (if launched) and wait for them. Control thread. */
void mlv_daemon_stop_workers(struct mlv_daemon *d);

/* Close ports, free generations, conntrack, workers, the config, and
 * clean up the EAL. Safe after a partial start. Control thread. */
void mlv_daemon_teardown(struct mlv_daemon *d);

/* Build generation `generation + 1` from cfg and publish it; on success
 * d->generation moves. Logs failures. Control thread. */
enum mlv_err mlv_daemon_publish(struct mlv_daemon *d,
				const struct mlv_config *cfg);

/* SIGHUP: load, validate, build, publish; an invalid config changes
 * nothing (daemon/reload.c). Control thread. */
void mlv_daemon_reload(struct mlv_daemon *d);

/* The event loop until SIGTERM/SIGINT (daemon/control_loop.c). sigfd is a
 * signalfd for SIGHUP, SIGTERM and SIGINT. Returns MLV_OK on a stop
 * signal, an error if the loop itself failed. Control thread. */
enum mlv_err mlv_daemon_control_loop(struct mlv_daemon *d, int sigfd);

/* Log each line of diags at warning or error level. */
void mlv_daemon_log_diags(const struct mlv_diags *diags);

#endif
