/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to the metrics server (metrics.c: lifecycle and event loop;
 * http.c: requests). Control thread only. */
#ifndef MLV_METRICS_INTERNAL_H
#define MLV_METRICS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

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

/* The request on conn arrived whole: its deadline no longer applies
 * (the reply is under way). */
void mlv_metrics_request_done(struct mlv_metrics *m,
			      struct MHD_Connection *conn);

#endif
