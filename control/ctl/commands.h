/* SPDX-License-Identifier: BSD-3-Clause */
/* The control-socket commands (the table is control/protocol/spec.h; the
 * protocol and every reply: docs/control-protocol.md).
 *
 * Handlers read the daemon through struct mlv_ctl_state, which the daemon
 * fills in once and passes as the server's ctx with mlv_ctl_handle as
 * its handler. Every pointer and callback in it may be NULL: a command
 * that needs a missing piece replies {"ok": false, "error": "... not
 * available"} instead of failing.
 *
 * Threads: everything runs on the control thread, inside
 * mlv_ctl_process. The generation a handler gets from `generation` stays
 * valid for the whole handler because only the control thread frees
 * generations (control/publish/publish.h), and a handler never holds it across a
 * reload or override callback.
 */
#ifndef MLV_CTL_COMMANDS_H
#define MLV_CTL_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "control/config/config.h"
#include "control/config/plan.h"
#include "control/ctl/port_stats.h"
#include "control/ctl/server.h"
#include "control/base/error.h"
#include "control/generation/generation.h"
#include "control/generation/stats.h"
#include "dataplane/packet/conntrack.h"
#include "dataplane/packet/counters.h"
#include "dataplane/packet/flow_key.h"

/* Runtime overrides the control socket can ask for: X(ID, name). */
#define MLV_CTL_OVERRIDE_OPS(X)          \
	X(DRAIN,        "drain")         \
	X(UNDRAIN,      "undrain")       \
	X(WEIGHT,       "weight")        \
	X(WEIGHT_RESET, "weight_reset")

enum mlv_ctl_override_op {
#define MLV_CTL_OV_ENUM(id, name) MLV_CTL_OV_##id,
	MLV_CTL_OVERRIDE_OPS(MLV_CTL_OV_ENUM)
#undef MLV_CTL_OV_ENUM
	MLV_CTL_OV__COUNT
};

const char *mlv_ctl_override_op_name(enum mlv_ctl_override_op op);

struct mlv_ctl_override {
	enum mlv_ctl_override_op op;
	const char *vip;         /* a VIP of the current generation */
	const char *backend;     /* a backend of that VIP */
	uint32_t weight;         /* MLV_CTL_OV_WEIGHT: 0..MLV_MAGLEV_MAX_WEIGHT */
};

/* The last reloads, whatever started them (socket, SIGHUP, inotify). */
#define MLV_CTL_RELOAD_HISTORY 8

struct mlv_health;

struct mlv_ctl_reload_entry {
	int64_t time;            /* CLOCK_REALTIME seconds */
	bool ok;
	uint32_t generation;     /* current after the reload */
	char summary[200];       /* first error, or "" */
};

/* What the `reload` command asks for (its flags force and dry_run). */
enum mlv_ctl_reload_mode {
	MLV_CTL_RELOAD_APPLY = 0,  /* publish if it fits control.reload_budget */
	MLV_CTL_RELOAD_FORCE,      /* publish even beyond the budget */
	MLV_CTL_RELOAD_CHECK,      /* load, check and plan; publish nothing */
	MLV_CTL_RELOAD_CHECK_FORCE /* the same, judged as a forced reload */
};

/* One reload request: how (mode) and what. */
struct mlv_ctl_reload_req {
	enum mlv_ctl_reload_mode mode;
	/* A CHECK mode's file to load instead of the configured one, read
	 * only as far as uid may read it (mlv_config_load_for); NULL: the
	 * configured file, read as the daemon. */
	const char *file;
	uint32_t uid;            /* the requester's (SO_PEERCRED) */
};

struct mlv_ctl_reload_log {
	struct mlv_ctl_reload_entry entries[MLV_CTL_RELOAD_HISTORY];
	uint32_t next;           /* slot the next entry goes to */
	uint32_t n;              /* entries held, <= MLV_CTL_RELOAD_HISTORY */
	uint64_t n_ok;
	uint64_t n_failed;
};

/* What the workers know about one flow (the `lookup` command). */
struct mlv_ctl_tracked {
	bool found;              /* false: no worker tracks it */
	uint32_t worker;         /* the worker that does (the first one) */
	uint32_t backend_uid;    /* mlv_gen_find_backend_uid; may be gone */
	uint8_t state;           /* enum mlv_ct_state */
	uint32_t expires_in_ms;  /* from when the worker looked */
};

/* One page of a worker's tracked flows (the `conns` command): copies of
 * its live conntrack entries, valid until the next list_post. */
struct mlv_ctl_conn_page {
	uint32_t n;
	const struct mlv_ct_entry *e;
	uint32_t next;           /* the next page's first bucket; 0: done */
	uint32_t now_ms;         /* the worker's clock when it copied them */
	uint32_t timeout_ms[MLV_CT__NSTATES];   /* its idle timeouts */
};

/* The last two samples of the summed worker counters, from which `stats`
 * reports per-second rates (mlv_ctl_sample). */
struct mlv_ctl_rate_samples {
	struct mlv_worker_counters prev, cur;
	uint64_t prev_ns, cur_ns;   /* CLOCK_MONOTONIC of each sample */
	uint32_t n;                 /* samples taken, saturating at 2 */
};

/* One VIP as the announcer sees it (docs/scale-out.md). */
struct mlv_ctl_announce_vip {
	char name[MLV_NAME_MAX];
	bool serving;            /* published, steering in place, at least
				    min_backends usable backends */
	bool announced;          /* its address's route is in the table */
	uint32_t usable;         /* backends that can take new flows */
	uint32_t min_backends;
};

/* The announcer and the stop, for status and metrics. */
struct mlv_ctl_announce {
	bool enabled;            /* announce.table is set */
	bool open;               /* the device and the socket are up */
	uint32_t table;
	char device[16];
	uint32_t routes;         /* routes in the table now */
	uint64_t announces;      /* routes added */
	uint64_t withdraws;      /* routes deleted */
	uint64_t errors;         /* route changes the kernel refused, and
				    failed attempts to open the device */
	char last_error[160];    /* "" if none */
	bool stopping;           /* routes withdrawn, forwarding until the
				    drain time ends */
	uint64_t stop_in_ms;     /* while stopping */
	uint32_t n_vips;
	const struct mlv_ctl_announce_vip *vips;
};

/* Most restart-only changes status lists, and one's text (with the NUL). */
#define MLV_CTL_RESTART_PENDING_MAX 32
#define MLV_CTL_RESTART_PENDING_LEN 160
typedef char mlv_ctl_restart_msg[MLV_CTL_RESTART_PENDING_LEN];

/* How long `lookup` waits for the workers before replying without them. */
#define MLV_CTL_TRACK_TIMEOUT_MS 100u
/* How long `conns` pages through the workers' tables before it answers
 * with what it has and a cursor to go on from. */
#define MLV_CTL_CONNS_TIMEOUT_MS 5000u
/* The most flows `conns` asks one worker for in one page; the worker's
 * mailbox (dataplane/worker/worker.h) holds at least as many. */
#define MLV_LIST_PAGE_MAX 128u

struct mlv_ctl_state {
	void *ctx;               /* passed to every callback below */

	/* The running config and the current generation (control thread:
	 * return the daemon's pointers; NULL before there is one). */
	const struct mlv_config *(*config)(void *ctx);
	const struct mlv_generation *(*generation)(void *ctx);

	/* Cumulative per-VIP / per-backend counters (control/generation/stats.h). */
	const struct mlv_stats *stats;

	/* Per-worker counter blocks and conntrack tables, [n_workers]; an
	 * entry may be NULL. Read racily (dataplane/packet/counters.h). */
	uint32_t n_workers;
	const struct mlv_worker_counters *const *worker_ctr;
	const struct mlv_ct *const *worker_ct;

	/* Every port's NIC counters, read now (control/ctl/port_stats.h):
	 * returns how many, *out valid until the next call. NULL: no ports'
	 * counters ("ports" left out of `stats`, no maglevd_port_*). */
	uint32_t (*port_stats)(void *ctx, const struct mlv_port_stats **out);

	struct timespec started;          /* CLOCK_MONOTONIC at start */
	uint64_t tsc_hz;                  /* TSC cycles per second, for the
					     busy-cycle counters in seconds;
					     0: unknown */
	const char *config_path;          /* NULL: the config's own path */

	/* Health and runtime overrides per (VIP, backend): the same function
	 * the daemon passes to mlv_gen_build, so what status shows is what
	 * the tables were built from. */
	mlv_gen_state_fn backend_state;
	void *backend_state_ctx;

	/* The health-check engine (control/health/health.h) behind backend_state,
	 * for the `health` command; NULL: "health checks not available". */
	const struct mlv_health *health;
	/* The data-path checks' packet counters (dataplane/bpf/check_path/
	 * counters.h), summed over CPUs, into out; false when no check goes
	 * through the data path (the programs are not attached). NULL: the
	 * same. A callback keeps this library free of libbpf. Control
	 * thread. */
	bool (*check_path_counters)(void *ctx, uint64_t *out);

	/* Reload the config file and publish it (req: see struct
	 * mlv_ctl_reload_req). On failure the running generation is
	 * untouched and diags holds the errors (diags is initialised and
	 * freed by the caller); warnings may come with success. plan
	 * (zeroed by the caller, freed with mlv_plan_free) gets what the new
	 * file changes whenever it loaded; a refusal for the budget returns
	 * MLV_E_LIMIT. */
	enum mlv_err (*reload)(void *ctx, const struct mlv_ctl_reload_req *req,
			       struct mlv_diags *diags, struct mlv_plan *plan);

	/* Apply runtime overrides to n (VIP, backend) pairs (1 for `drain
	 * VIP BACKEND`, every VIP that has the backend for `drain '*'
	 * BACKEND`) and publish them as one generation. Returns MLV_OK or an
	 * error with a sentence in detail (detail_len bytes), the running
	 * generation then unchanged. Among several pairs, one with nothing
	 * to undo is skipped; with none left, that refusal is the answer.
	 * NULL: "runtime overrides not available". */
	enum mlv_err (*set_overrides)(void *ctx,
				      const struct mlv_ctl_override *ovs,
				      uint32_t n, char *detail,
				      size_t detail_len);

	/* Whether a worker tracks a flow, asked without touching the
	 * workers' tables (they are theirs): track_post sends the question
	 * (key, hash = mlv_flow_hash(key)) to every worker and returns
	 * MLV_OK with a *ticket, or MLV_E_BUSY while an earlier question is
	 * outstanding (ask again later). track_poll returns MLV_OK with
	 * *done false until every worker answered, then *done true and *out
	 * (the question is then no longer outstanding); another error ends
	 * the wait. track_cancel gives a posted, unfinished question up (its
	 * answers are discarded). All NULL: lookup says "tracked": null. */
	enum mlv_err (*track_post)(void *ctx, const struct mlv_flow_key *key,
				   uint32_t hash, uint64_t *ticket);
	enum mlv_err (*track_poll)(void *ctx, uint64_t ticket, bool *done,
				   struct mlv_ctl_tracked *out);
	void (*track_cancel)(void *ctx, uint64_t ticket);

	/* Pages of a worker's tracked flows (`conns`), read by the worker
	 * itself in its housekeeping step, one request at a time whoever
	 * asks (owner names the asker): list_post asks worker `worker` for
	 * the page of at most `cap` (>= 4) flows from bucket `first`, MLV_OK,
	 * or MLV_E_BUSY while another owner's page or the worker's mailbox
	 * is pending, MLV_E_RANGE for no such worker; list_poll gives MLV_OK
	 * with *done false until it answered, then *done true and *page (the
	 * request is then over), MLV_E_INVAL for a request not owner's;
	 * list_cancel gives owner's pending request up. All NULL: conns
	 * says that the workers cannot be asked. */
	enum mlv_err (*list_post)(void *ctx, const void *owner, uint32_t worker,
				  uint32_t first, uint32_t cap);
	enum mlv_err (*list_poll)(void *ctx, const void *owner, uint32_t worker,
				  bool *done, struct mlv_ctl_conn_page *page);
	void (*list_cancel)(void *ctx, const void *owner);

	/* The restart-only settings the running file changed (the last
	 * accepted reload warned about them): *n messages such as
	 * "dataplane.workers: 1 -> 2". NULL: status lists none. */
	const mlv_ctl_restart_msg *(*restart_pending)(void *ctx, uint32_t *n);

	/* The announcer's state, for status and metrics; NULL: status says
	 * "announce": null and metrics leave the families out. */
	const struct mlv_ctl_announce *(*announce)(void *ctx);

	/* Stop the daemon: withdraw every route and keep forwarding for the
	 * drain time (now false), or exit at once (now true; also cuts a
	 * drain under way short). The daemon stops after the reply is sent.
	 * Returns MLV_OK or an error with a sentence in detail. NULL:
	 * "shutdown not available". */
	enum mlv_err (*shutdown)(void *ctx, bool now, char *detail,
				 size_t detail_len);

	/* For status: the server's own counters (may be NULL). */
	const struct mlv_ctl_server *server;

	/* Kept by this module; the daemon adds its own reloads with
	 * mlv_ctl_note_reload. Zero-initialise. */
	struct mlv_ctl_reload_log reloads;

	/* Kept by mlv_ctl_sample for the rates in `stats`. Zero-initialise. */
	struct mlv_ctl_rate_samples rates;

	/* Set by mlv_ctl_handle only while a handler runs: where a handler
	 * that must wait (lookup) defers its reply. */
	struct mlv_ctl_deferred *defer;
	/* Set by mlv_ctl_handle only while a handler runs: who asked. */
	const struct mlv_ctl_peer *peer;
};

/* The server handler (mlv_ctl_handler_fn): ctx is a struct
 * mlv_ctl_state. Checks "command" and "args" against the table, runs the
 * command and returns its reply (a new reference), or NULL if memory ran
 * out or (defer->poll set) the reply is deferred: `lookup` waits up to
 * MLV_CTL_TRACK_TIMEOUT_MS for the workers' answer. defer may be NULL:
 * then nothing is deferred and lookup says "tracked": null. */
json_t *mlv_ctl_handle(const json_t *request,
		       const struct mlv_ctl_peer *peer, void *ctx,
		       struct mlv_ctl_deferred *defer);

/* Whether request changes the daemon: reload (but for a dry run of the
 * configured file), drain, undrain, shutdown, and weight with a weight
 * or --reset (weight alone shows the weights).
 * The mlv_ctl_mutates_fn of the server (privilege levels). Any thread. */
bool mlv_ctl_request_mutates(const json_t *request);

/* Whether request is heavy (mlv_ctl_heavy_fn): vips, backends, table,
 * conns, whatif and health, whose replies or work grow with the VIPs,
 * backends, slots or flows. Any thread. */
bool mlv_ctl_request_heavy(const json_t *request);

/* Record a reload in the status history: ok, the generation current
 * afterwards, and a one-line summary (the first error; NULL or "" if
 * none). The `reload` command records its own; the daemon calls this for
 * reloads started elsewhere (SIGHUP, file change). */
void mlv_ctl_note_reload(struct mlv_ctl_state *st, bool ok,
			 uint32_t generation, const char *summary);

/* Take a sample of the workers' summed counters (and drops) at now_ns
 * (CLOCK_MONOTONIC nanoseconds), keeping it and the one before: `stats`
 * reports rates over the interval between the two. Call periodically
 * (the daemon: once per second); a sample whose now_ns is not after the
 * last one is ignored, so the interval is never zero or negative. No-op
 * without worker counters. Control thread only (the same thread as the
 * handlers that read the samples); the worker counters are read racily
 * as in mlv_stats_workers. */
void mlv_ctl_sample(struct mlv_ctl_state *st, uint64_t now_ns);

#endif
