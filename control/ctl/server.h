/* SPDX-License-Identifier: BSD-3-Clause */
/* The control socket: a Unix stream socket speaking line-delimited JSON
 * (docs/control-protocol.md), served by the control thread without ever
 * blocking it.
 *
 * The module owns one epoll instance holding the listening socket, every
 * client, a stall timer, a deferred-reply timer and a backlog eventfd.
 * That epoll fd is itself pollable: the daemon adds mlv_ctl_fd() to its
 * own event loop (EPOLLIN) and calls mlv_ctl_process() whenever it is
 * readable. Everything is non-blocking and level-triggered, so a call may
 * leave work for the next one and the fd stays readable until it is
 * done.
 *
 * Framing and fairness: each request is one line (at most line_max
 * bytes; a longer line gets an error reply and the client is closed).
 * A client's next request is read only once the previous reply has been
 * written out, so a client that does not read its replies stalls only
 * itself, and the queued output per client is bounded by one reply
 * (reply_max; a bigger reply is replaced with an error); the output of
 * all clients together by out_total_max, where the newest reply sheds
 * the oldest unread ones. Each call handles at most
 * MLV_CTL_LINES_PER_TURN requests per client, and heavy requests only
 * within MLV_CTL_HEAVY_SLICE_MS (large dumps are made in steps inside
 * that slice, struct mlv_ctl_deferred.progress), so that a flood of
 * dumps delays a status by about one slice; the rest waits on a backlog
 * that keeps mlv_ctl_fd() readable. A client with unsent output or an
 * unfinished request that makes no progress for stall_timeout_ms is
 * dropped. Half a request at EOF is discarded.
 *
 * Start-up: the socket's directory is created if missing (0755); an
 * existing socket file nobody listens on (a crashed instance) is
 * replaced; one with a live listener is refused, as is any other kind of
 * file; "<path>.lock" (flock) is held for the server's lifetime so two
 * instances starting at once cannot both take the path. The socket file
 * gets `mode` before it accepts connections.
 *
 * Threads: every function runs on the control thread (one thread per
 * server). Requests are handled inside mlv_ctl_process, synchronously or
 * as deferred replies (struct mlv_ctl_deferred).
 */
#ifndef MLV_CTL_SERVER_H
#define MLV_CTL_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "control/base/error.h"

#define MLV_CTL_DEFAULT_MAX_CLIENTS   1024u
#define MLV_CTL_DEFAULT_LINE_MAX      (64u << 10)
#define MLV_CTL_DEFAULT_REPLY_MAX     (64u << 20)
#define MLV_CTL_DEFAULT_STALL_MS      10000u
/* A client with nothing in flight (no request, no reply, nothing
 * deferred) for this long is closed: idle connections cannot hold every
 * slot. `maglevctl top` asks every second or so. */
#define MLV_CTL_DEFAULT_IDLE_MS       60000u
/* Replies queued for all clients together, in bytes: one total, for
 * read-level and admin peers alike. A reply that does not fit sheds the
 * oldest unread replies (their clients are closed) until it does:
 * read-level ones first; an admin's reply may also shed admins'. A
 * read-level reply that still does not fit (admins hold the rest) is
 * refused with an error. */
#define MLV_CTL_DEFAULT_OUT_TOTAL     (64u << 20)
/* Requests whose replies grow with the config or the flows (the heavy
 * ones, mlv_ctl_heavy_fn) share this much of the control thread per
 * mlv_ctl_process call; past it they wait for the next call, in the
 * order they came, while every other request is answered at once. At
 * least one is handled per call. */
#define MLV_CTL_HEAVY_SLICE_MS        5u
/* A reply is read whole within this long after it was queued, or its
 * client is dropped (a reader taking a little now and then is making
 * progress, yet would hold its share of the budget indefinitely). */
#define MLV_CTL_DEFAULT_REPLY_DEADLINE_MS 30000u
/* Connections beyond max_clients kept for admin peers (root,
 * control.admin_group), so that the operator can always connect. */
#define MLV_CTL_ADMIN_RESERVE         16u
#define MLV_CTL_LINES_PER_TURN        16u

/* A reply the handler cannot give at once (it waits on the workers).
 * The server keeps the client's request open and calls poll on every
 * mlv_ctl_process, driven by a 1 ms timer of its own that runs only while
 * something is pending, until poll says it is done; the client's next
 * request is read only after that reply went out. Other clients are
 * served meanwhile. Pending replies are polled in the order they were
 * deferred; heavy ones (mlv_ctl_heavy_fn) share one slice of
 * MLV_CTL_HEAVY_SLICE_MS per call, the oldest first, so that the oldest
 * dump is finished before the next one grows. */
/* The last member of a deferred reply given as JSON text made before
 * (a long array a dump built in steps): the server copies it after the
 * reply's own members rather than dumping objects made only for it. */
struct mlv_ctl_member {
	const char *key;            /* a plain name: written unquoted-safe */
	const char *text;           /* one complete JSON value */
	size_t len;
};

struct mlv_ctl_deferred {
	/* Return true with *reply (a new reference; NULL for "out of
	 * memory") once done, false to be polled again. expired: timeout_ms
	 * has passed since the handler returned, and poll must be done. */
	bool (*poll)(void *arg, bool expired, json_t **reply);
	/* May be NULL. After the poll that gave a reply and before
	 * release: fill *out and return true to end the reply with that
	 * member (it counts towards reply_max like the rest). */
	bool (*member)(void *arg, struct mlv_ctl_member *out);
	/* Free arg: after the final poll, or without one when the client
	 * went away or the server is destroyed. May be NULL. */
	void (*release)(void *arg);
	void *arg;
	uint32_t timeout_ms;
	/* Each poll makes progress (work done in steps, not a wait on the
	 * workers): a heavy reply is polled again while its slice lasts. */
	bool progress;
};

/* Who sent a request: its connection's peer, from SO_PEERCRED when it
 * connected. */
struct mlv_ctl_peer {
	uint32_t uid;               /* UINT32_MAX when it could not be read */
	bool admin;                 /* may run commands that change the daemon */
};

/* Handle one request (a JSON object) from peer and return the reply
 * object: a new reference with "ok" set, or NULL for "out of memory".
 * Or defer: fill *defer (poll set) and return NULL; the server then owns
 * defer->arg. The server adds the request's "id" to the reply if it had
 * one. Called on the control thread from mlv_ctl_process. */
typedef json_t *(*mlv_ctl_handler_fn)(const json_t *request,
				      const struct mlv_ctl_peer *peer,
				      void *ctx,
				      struct mlv_ctl_deferred *defer);

/* Whether a request changes the daemon (reload, drain, ...): those are
 * answered only for connections at the admin level. */
typedef bool (*mlv_ctl_mutates_fn)(const json_t *request);

/* Whether a request is heavy: its reply grows with the config or the
 * flows (dumps, listings), so its handler may hold the control thread
 * for milliseconds (MLV_CTL_HEAVY_SLICE_MS). */
typedef bool (*mlv_ctl_heavy_fn)(const json_t *request);

struct mlv_ctl_server_params {
	const char *path;            /* socket path, 1..107 bytes */
	uint32_t mode;               /* e.g. 0660; o+w (0002) is refused */
	mlv_ctl_handler_fn handle;
	void *ctx;                   /* passed to handle */
	/* Privilege levels (docs/control-protocol.md, "Privileges"): with
	 * mutates set, a connection whose peer (SO_PEERCRED) is neither uid
	 * 0 nor in group admin_gid (its primary or a supplementary group,
	 * SO_PEERGROUPS) gets an error reply for every request mutates says
	 * changes something; handle never sees it. NULL: every connection
	 * may do everything. admin_gid 0: root only (group 0 is root's). */
	mlv_ctl_mutates_fn mutates;
	uint32_t admin_gid;
	/* NULL: no request is heavy (each takes its turn as it comes). */
	mlv_ctl_heavy_fn heavy;
	/* The socket file's group, set by creating it with that effective
	 * group (no chown by path); 0: the process's own. */
	uint32_t socket_gid;
	/* 0 = the MLV_CTL_DEFAULT_* value */
	uint32_t max_clients;        /* more are sent an error and closed */
	uint32_t line_max;           /* longest request line, bytes */
	uint32_t reply_max;          /* longest reply line, bytes */
	uint32_t stall_timeout_ms;
	uint32_t idle_timeout_ms;
	uint32_t reply_deadline_ms;
	uint32_t out_total_max;      /* queued replies of all clients, bytes */
};

/* What the server has seen, for status and tests. */
struct mlv_ctl_server_stats {
	uint64_t accepted;
	uint64_t refused_full;       /* over max_clients */
	uint64_t requests;
	uint64_t bad_requests;       /* not JSON, not an object */
	uint64_t oversized;          /* lines over line_max: client closed */
	uint64_t reply_too_large;    /* replies over reply_max: error sent */
	uint64_t reply_over_budget;  /* over out_total_max: error sent */
	uint64_t shed;               /* closed: the oldest unread reply, shed
					for a newer one */
	uint64_t heavy_waits;        /* times a heavy request was put off to
					   a later call */
	uint64_t idle_closed;        /* closed by the idle timer */
	uint64_t stalled;            /* dropped by the stall timer */
	uint64_t disconnects;        /* resets, hang-ups, write errors */
	uint64_t half_requests;      /* partial lines dropped at EOF */
	uint64_t deferred;           /* replies a handler deferred */
	uint64_t refused_level;      /* requests above the peer's level */
	uint32_t clients;            /* connected now */
	uint32_t pending;            /* deferred replies being made now */
	uint64_t out_bytes;          /* reply buffers held for clients now */
};

struct mlv_ctl_server;

/* Refuse modes with bits outside 0777 (MLV_E_INVAL) or world-writable
 * (MLV_E_PERM). Any thread. */
enum mlv_err mlv_ctl_check_mode(uint32_t mode);

/* Create the socket as described above and start listening. Returns
 * MLV_OK and *out, or: MLV_E_INVAL (bad params, path too long for a Unix
 * socket address), MLV_E_PERM (world-writable mode), MLV_E_BUSY (another
 * instance listens there or holds the lock), MLV_E_EXISTS (the path is
 * not a socket), MLV_E_IO (a system call failed; errno kept),
 * MLV_E_NOMEM. On error a sentence naming the path and the cause is
 * written to err (if not NULL); nothing stays open, and of the files only
 * the directory and the lock file may remain. */
enum mlv_err mlv_ctl_server_create(const struct mlv_ctl_server_params *p,
				   struct mlv_ctl_server **out,
				   char *err, size_t err_len);

/* The fd to watch for EPOLLIN (an epoll fd). Stays the same for the
 * server's lifetime. */
int mlv_ctl_fd(const struct mlv_ctl_server *srv);

/* Handle whatever is ready now (accepts, reads, requests, writes,
 * timers) without blocking: one epoll_wait with timeout 0, then the
 * backlog. Returns MLV_OK, or MLV_E_IO if epoll_wait itself failed. */
enum mlv_err mlv_ctl_process(struct mlv_ctl_server *srv);

/* Close every client and the listening socket, remove the socket file
 * (only if it is still the one this server created) and release the
 * lock. NULL is a no-op. */
void mlv_ctl_server_destroy(struct mlv_ctl_server *srv);

/* A snapshot of the counters. */
void mlv_ctl_server_get_stats(const struct mlv_ctl_server *srv,
			      struct mlv_ctl_server_stats *out);

#endif
