/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal to the metrics server (metrics.c: lifecycle and event loop;
 * http.c: requests). Control thread only. */
#ifndef MLV_METRICS_INTERNAL_H
#define MLV_METRICS_INTERNAL_H

#include <microhttpd.h>

#include "control/metrics/metrics.h"

struct mlv_metrics {
	struct MHD_Daemon *mhd;
	int ep;                       /* ours: MHD's epoll fd + tfd */
	int tfd;                      /* MHD's next timeout */
	uint16_t port;
	struct mlv_metrics_sources src;
	struct mlv_metrics_renderer *renderer;
	void (*log)(void *ctx, const char *line);
	void *log_ctx;
	char last_error[256];         /* MHD's last message, for create() */
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

#endif
