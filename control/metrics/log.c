/* SPDX-License-Identifier: BSD-3-Clause */
/* The metrics server's messages, libmicrohttpd's and its own, under one
 * rate limit; and its clock. Control thread only. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "control/metrics/metrics_internal.h"

uint64_t mlv_metrics_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* At most LOG_BURST of libmicrohttpd's lines reach the log per
 * LOG_WINDOW_MS: every client refused over a limit is a line, and a
 * flood of clients must not become a flood of log writes on the control
 * thread. What was left out is counted once the window is over. */
#define LOG_BURST 10u
#define LOG_WINDOW_MS 60000u

void mlv_metrics_log_window(struct mlv_metrics *m, uint64_t now)
{
	char line[128];

	if (now - m->log_window_ms < LOG_WINDOW_MS)
		return;
	if (m->log_dropped_window && m->log) {
		snprintf(line, sizeof(line), "metrics: %" PRIu64 " more "
			 "messages left out (at most %u a minute are logged)",
			 m->log_dropped_window, LOG_BURST);
		m->log(m->log_ctx, line);
	}
	m->log_window_ms = now;
	m->log_lines = 0;
	m->log_dropped_window = 0;
}

void mlv_metrics_note(struct mlv_metrics *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mlv_metrics_mhd_log(m, fmt, ap);
	va_end(ap);
}

void mlv_metrics_mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct mlv_metrics *m = cls;
	size_t n;

	vsnprintf(m->last_error, sizeof(m->last_error), fmt, ap);
	n = strlen(m->last_error);
	while (n > 0 && (m->last_error[n - 1] == '\n' || m->last_error[n - 1] == '.'))
		m->last_error[--n] = '\0';
	if (!m->log)
		return;
	mlv_metrics_log_window(m, mlv_metrics_now_ms());
	if (m->log_lines < LOG_BURST) {
		m->log_lines++;
		m->log(m->log_ctx, m->last_error);
	} else {
		m->log_dropped_window++;
		m->stats.log_dropped++;
	}
}
