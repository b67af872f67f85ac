/* SPDX-License-Identifier: BSD-3-Clause */
/* The Prometheus endpoint: GET /metrics over HTTP on
 * control.metrics_listen, served by libmicrohttpd inside the control
 * thread's own event loop (docs/metrics.md).
 *
 * libmicrohttpd runs without threads of its own, in its epoll mode: all
 * its sockets sit in one epoll set, which this module nests, together
 * with a timerfd for the connection timeouts and request deadlines, in
 * an epoll fd of its own. The daemon adds mlv_metrics_fd() to its epoll
 * set (EPOLLIN, level-triggered) and calls mlv_metrics_process()
 * whenever it is readable; that is all the wiring needed. Pages are rendered inside
 * mlv_metrics_process from the control thread's state
 * (control/metrics/render.h), so no lock is taken and nothing is shared
 * with libmicrohttpd threads (there are none).
 *
 * Never blocking: every socket is non-blocking. No client can starve
 * the others: a request must arrive whole within timeout_ms of its
 * connection opening (or of the previous reply), however slowly it
 * trickles in, and a connection with nothing moving for as long is
 * closed; one address holds at most max_per_address connections (more
 * are accepted and closed at once); beyond max_connections new clients
 * wait in the listen backlog until a slot frees.
 * Rendering is CPU work proportional to the number of VIPs and backends
 * (docs/metrics.md gives the size per backend).
 *
 * Routes: GET or HEAD /metrics -> the exposition (200, text/plain;
 * version=0.0.4); / -> a short HTML index; any other path 404; any
 * other method 405 with Allow: GET, HEAD; a request with a body 413 (the
 * body is skipped, never stored). Connections are kept alive between
 * requests, as Prometheus expects.
 *
 * Threads: every function is for the control thread, the one that owns
 * the state the sources point to.
 */
#ifndef MLV_METRICS_H
#define MLV_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "control/base/error.h"
#include "control/metrics/render.h"

/* A scrape takes milliseconds to ask for: 5 s is generous for any
 * client and short enough that a stalled one frees its slot soon. An
 * idle connection costs a socket and its epoll entry, and its buffers
 * are bounded (MLV_METRICS_CONN_MEMORY), so the limits are set far above
 * what slow clients can fill, rather than turning newcomers away: a
 * thousand clients trickling their headers from the scrape's own
 * address, each back the moment it is closed, still leave it a slot. */
#define MLV_METRICS_DEFAULT_MAX_CONNECTIONS 4096u
#define MLV_METRICS_DEFAULT_MAX_PER_ADDRESS 2048u
#define MLV_METRICS_DEFAULT_TIMEOUT_MS 5000u
/* Bytes of buffers a connection may hold (libmicrohttpd's pool: the
 * request's headers, the reply's): a scrape's request is a few hundred
 * bytes; a larger one is answered 431 and closed. 4096 connections hold
 * at most 32 MiB. The page itself is not in the pool. */
#define MLV_METRICS_CONN_MEMORY 8192u
/* A scrape's request arrives within a millisecond or so of its
 * connection; 100 ms covers a loaded host, and a client trickling its
 * headers has had far longer by the time a newer one needs its slot. */
#define MLV_METRICS_EVICT_AGE_MS 100u

struct mlv_metrics_params {
	/* "IP:PORT" or "[IP6]:PORT", address literals only (the config's
	 * control.metrics_listen). Port 0 binds a free port: read it back
	 * with mlv_metrics_port() (tests). */
	const char *listen;
	/* Where the numbers come from; copied. src.ctl is required and
	 * must outlive the server, as must everything it points to. */
	struct mlv_metrics_sources src;
	/* 0 = the MLV_METRICS_DEFAULT_* value. A new client beyond either
	 * limit takes the place of the connection that has waited longest
	 * for its request (of its own address when that limit is the one
	 * reached): a client trickling its headers holds a slot only until
	 * someone else needs it, so slow clients cannot take the scrape
	 * away. A connection younger than MLV_METRICS_EVICT_AGE_MS is not
	 * taken (a burst of new clients cannot push out a scrape before
	 * its request was read): when every connection in the way is that
	 * young or being answered, the new one is refused. */
	uint32_t max_connections;    /* open HTTP connections at once */
	uint32_t max_per_address;    /* of them from one client address */
	/* A request must arrive whole within this of its connection
	 * opening or of the previous reply being sent, and a connection
	 * with nothing moving for this long (rounded up to whole seconds)
	 * is closed. */
	uint32_t timeout_ms;
	/* Problems after start (a failed accept, a client error), one line
	 * without newline; NULL = not reported. */
	void (*log)(void *ctx, const char *line);
	void *log_ctx;
};

struct mlv_metrics;

/* Bind and listen. Returns MLV_OK and *out; MLV_E_INVAL for NULL
 * arguments, no src.ctl or a malformed listen string; MLV_E_IO if the
 * socket cannot be bound (address in use, not local) or the epoll/timer
 * fds cannot be made; MLV_E_NOMEM. err (err_len bytes, may be NULL) gets
 * one line naming the address and the reason. */
enum mlv_err mlv_metrics_create(const struct mlv_metrics_params *p,
				struct mlv_metrics **out, char *err,
				size_t err_len);

/* Close every connection and the listener, free everything. NULL is a
 * no-op. */
void mlv_metrics_destroy(struct mlv_metrics *m);

/* The fd to watch for EPOLLIN (level-triggered). It becomes readable
 * when a client needs service and when a connection timeout is due, so
 * watching it is enough: the daemon's loop needs no timer for metrics.
 * Valid until mlv_metrics_destroy. */
int mlv_metrics_fd(const struct mlv_metrics *m);

/* Accept, read requests, render and send pages, close timed-out
 * connections. Never blocks; bounded work per call (the fd stays
 * readable while work remains). Returns MLV_OK, or MLV_E_IO if
 * libmicrohttpd reports an internal failure (the server stays usable;
 * the reason went to the log callback). */
enum mlv_err mlv_metrics_process(struct mlv_metrics *m);

/* Milliseconds until the server next needs mlv_metrics_process()
 * without the fd having fired for a socket (a connection timeout or a
 * request deadline), or -1 for none. Informational: the fd already becomes readable then (an
 * internal timerfd), so a loop may ignore this; one that bounds its
 * epoll_wait with it anyway stays correct. */
int mlv_metrics_timeout_ms(struct mlv_metrics *m);

/* The bound port (the chosen one when listen asked for port 0). */
uint16_t mlv_metrics_port(const struct mlv_metrics *m);

/* What the server has done, for tests and status. */
struct mlv_metrics_server_stats {
	uint64_t scrapes;            /* /metrics pages served */
	uint64_t index;              /* / served */
	uint64_t not_found;          /* 404s */
	uint64_t bad_method;         /* 405s */
	uint64_t render_failures;    /* 500s: out of memory while rendering */
	uint64_t request_timeouts;   /* closed: no whole request in time */
	uint64_t evicted;            /* closed while waiting for a request,
					for a new client over a limit */
	uint64_t refused;            /* new clients over a limit with no
					waiting connection to evict */
	uint64_t log_dropped;        /* libmicrohttpd lines not logged (rate) */
	uint32_t connections;        /* open now */
};

void mlv_metrics_stats(struct mlv_metrics *m,
		       struct mlv_metrics_server_stats *out);

#endif
