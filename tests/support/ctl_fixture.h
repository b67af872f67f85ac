/* SPDX-License-Identifier: BSD-3-Clause */
/* Test fixture for the control socket: a real config (YAML), a real
 * generation (mlv_gen_build) with counters, a fake daemon behind struct
 * mlv_ctl_state (overrides, health, reload, tracked flows), and the
 * server running in its own thread, driven by mlv_ctl_process the way the
 * daemon's event loop drives it. Clients are plain blocking sockets.
 *
 * Callbacks run on the server thread; the test thread reads what they
 * recorded only after the reply to the request that caused them, which
 * the socket orders after them. */
#ifndef MLV_TEST_CTL_FIXTURE_H
#define MLV_TEST_CTL_FIXTURE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "control/ctl/commands.h"
#include "control/ctl/server.h"

#define FX_MAX_OV 16
#define FX_WORKERS 2

struct fx_override {
	char vip[MLV_NAME_MAX];
	char backend[MLV_NAME_MAX];
	bool drain;
	bool has_weight;
	uint32_t weight;
};

struct ctl_fx {
	char dir[64];                  /* temp dir, removed at teardown */
	char path[128];                /* socket path (in a subdirectory) */
	struct mlv_config *cfg;
	struct mlv_generation *gen;
	struct mlv_stats *stats;
	struct mlv_worker_counters ctr[FX_WORKERS];
	const struct mlv_worker_counters *ctr_ptr[FX_WORKERS];
	struct mlv_ct *ct[FX_WORKERS];
	const struct mlv_ct *ct_ptr[FX_WORKERS];
	struct mlv_flow_tally *tally[FX_WORKERS];  /* the workers' tallies */
	/* conns: the fake workers page through ct[w] (real tables) with
	 * mlv_ct_scan, answering a post on the next poll, at clock list_now */
	struct mlv_ct_entry list_page[128];
	uint32_t list_n, list_next, list_now;
	bool list_posted[FX_WORKERS];
	uint32_t list_first[FX_WORKERS], list_cap[FX_WORKERS];
	uint32_t list_posts;
	struct mlv_flow_tally_set tallies;
	struct mlv_ctl_state st;
	struct mlv_ctl_server *srv;
	pthread_t thread;
	int stop_fd;                   /* eventfd: stops the server thread */
	bool running;

	/* the fake daemon */
	struct fx_override ov[FX_MAX_OV];
	uint32_t n_ov;
	int override_calls;
	bool reload_fails;             /* next reload loads broken YAML */
	const char *reload_yaml;       /* else this YAML, if set (not the
					  fixture's own) */
	int reload_calls;
	enum mlv_ctl_reload_mode reload_mode;  /* the last reload's */
	char reload_file[256];                 /* its file, "" for none */
	uint32_t reload_uid;                   /* its requester */
	char down_vip[MLV_NAME_MAX];   /* this backend is unhealthy */
	char down_backend[MLV_NAME_MAX];
	/* the fake workers behind track_post/poll/cancel */
	bool tracked;                  /* they track tracked_key */
	struct mlv_flow_key tracked_key;
	uint32_t tracked_uid;
	uint32_t tracked_worker;
	uint32_t tracked_expires_ms;
	int answer_after;              /* polls before the answer (0: first) */
	bool mute;                     /* never answer */
	int busy_posts;                /* refuse this many posts first */
	int polls_left;
	uint64_t ticket;
	struct mlv_flow_key asked;
	int track_posts, track_polls, track_cancels;
};

/* Build config, generation and state; nothing listens yet. */
void ctl_fx_init(struct ctl_fx *fx);

/* Start the server at fx->path with p (path, handle and ctx are filled
 * in; zeros elsewhere mean defaults) and its thread. Asserts success. */
void ctl_fx_start(struct ctl_fx *fx, struct mlv_ctl_server_params p);

/* Stop the thread and destroy the server (the socket file goes). */
void ctl_fx_stop(struct ctl_fx *fx);

/* ctl_fx_stop if running, free everything, remove the temp dir. */
void ctl_fx_free(struct ctl_fx *fx);

/* Connected blocking client with a receive timeout as a safety net
 * against a hung test (never an assertion on time). */
int ctl_connect(const char *path);

/* Send all of text (MSG_NOSIGNAL). Returns false on error. */
bool ctl_send(int fd, const char *text, size_t len);

/* The next line without '\n' (malloc'd), or NULL at EOF/error. */
char *ctl_read_line(int fd);

/* Send request + '\n' on fd and parse the reply line; asserts a reply. */
json_t *ctl_call(int fd, const char *request);

/* The same on a fresh connection. */
json_t *ctl_call1(struct ctl_fx *fx, const char *request);

/* A reply's "error" text ("" if none) and whether it is ok:true. */
const char *ctl_error(const json_t *reply);
bool ctl_ok(const json_t *reply);

/* The server's counters, read on its thread through a status request. */
json_t *ctl_server_counters(struct ctl_fx *fx);

#endif
