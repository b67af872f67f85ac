/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to the metrics server. Control thread only. The files call
 * one way: metrics.c (lifecycle and event loop) calls http.c (requests),
 * conns.c (admission, request deadlines) and log.c (messages, the
 * clock); http.c calls conns.c; conns.c calls log.c. */
#ifndef MLV_METRICS_INTERNAL_H
#define MLV_METRICS_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "control/metrics/metrics.h"

/* A client address as the admission compares them. */
struct mlv_metrics_addr {
	uint8_t family;               /* AF_INET, AF_INET6; 0: unknown */
	uint8_t bytes[16];
};

/* One open connection (MHD's socket context). While its next request
 * is awaited it sits in the server's waiting list, oldest deadline
 * first: every deadline is "now + timeout", so appending keeps the order. */
struct mlv_metrics_conn {
	struct MHD_Connection *conn;
	TAILQ_ENTRY(mlv_metrics_conn) wait_link;   /* the waiting list */
	LIST_ENTRY(mlv_metrics_conn) all_link;     /* every connection */
	struct mlv_metrics_addr addr;
	uint64_t deadline_ms;         /* CLOCK_MONOTONIC */
	uint64_t opened_ms;           /* accepted, CLOCK_MONOTONIC */
	bool waiting;                 /* in the waiting list */
	bool evicted;                 /* shut for a newer client, closing */
};

struct mlv_metrics {
	struct MHD_Daemon *mhd;
	int ep;                       /* ours: MHD's epoll fd + tfd */
	int tfd;                      /* the next timeout or deadline */
	uint32_t timeout_ms;
	TAILQ_HEAD(, mlv_metrics_conn) waiting;   /* oldest first */
	LIST_HEAD(, mlv_metrics_conn) all;        /* every connection MHD holds */
	uint32_t max_connections;         /* not evicted, in all */
	uint32_t max_per_address;
	uint16_t port;
	struct mlv_metrics_sources src;
	struct mlv_metrics_renderer *renderer;
	void (*log)(void *ctx, const char *line);
	void *log_ctx;
	char last_error[256];         /* MHD's last message, for create() */
	uint64_t log_window_ms;       /* start of the rate window */
	uint32_t log_lines;           /* forwarded in it */
	uint64_t log_dropped_window;  /* dropped in it, not yet reported */
	struct mlv_metrics_server_stats stats;
};

/* libmicrohttpd's access handler; cls is the struct mlv_metrics. */
enum MHD_Result mlv_metrics_http_handle(void *cls,
					struct MHD_Connection *conn,
					const char *url, const char *method,
					const char *version,
					const char *upload_data,
					size_t *upload_data_size,
					void **req_cls);

/* ---- log.c ---- */
/* CLOCK_MONOTONIC in milliseconds. */
uint64_t mlv_metrics_now_ms(void);
/* Close the log's rate window if LOG_WINDOW_MS have passed since it
 * opened, reporting how many lines it left out. */
void mlv_metrics_log_window(struct mlv_metrics *m, uint64_t now);
/* libmicrohttpd's logger (cls: the struct mlv_metrics): keeps the line
 * as last_error and logs it under the rate limit. */
__attribute__((format(printf, 2, 0)))
void mlv_metrics_mhd_log(void *cls, const char *fmt, va_list ap);
/* One of our own messages, under the same rate limit as MHD's. */
__attribute__((format(printf, 2, 3)))
void mlv_metrics_note(struct mlv_metrics *m, const char *fmt, ...);

/* ---- conns.c: libmicrohttpd's callbacks (cls: the struct mlv_metrics) ---- */
/* Its accept policy: every new client is taken; one over a limit takes
 * the place of the connection that waited longest for its request, and
 * is refused only when no connection in its way is waiting. */
enum MHD_Result mlv_metrics_admit(void *cls, const struct sockaddr *sa,
				  socklen_t len);
/* A connection opened (its deadline starts) or closed (it is freed). */
void mlv_metrics_on_connection(void *cls, struct MHD_Connection *conn,
			       void **socket_context,
			       enum MHD_ConnectionNotificationCode code);
/* A reply was sent: a kept-alive connection awaits its next request. */
void mlv_metrics_on_completed(void *cls, struct MHD_Connection *conn,
			      void **req_cls,
			      enum MHD_RequestTerminationCode code);
/* Close every connection whose request deadline is <= now. */
void mlv_metrics_expire(struct mlv_metrics *m, uint64_t now);
/* The request on conn arrived whole: its deadline no longer applies
 * (the reply is under way). */
void mlv_metrics_request_done(struct mlv_metrics *m,
			      struct MHD_Connection *conn);

#endif
