/* SPDX-License-Identifier: BSD-3-Clause */
/* DPDK's own log lines through maglevd's logger: each line is a message
 * from source "dpdk" ("maglevd: <level>: dpdk: " in text, a "source"
 * field in JSON, control/base/log.h) and is filtered by --log-level like
 * every other line, its level mapped from DPDK's (rte_log.h):
 * EMERG..ERR -> error, WARNING -> warning, NOTICE and INFO -> info, DEBUG
 * -> debug.
 *
 * Messages known to be harmless that look alarming go to debug: with
 * --in-memory (the default EAL arguments), EAL says hugepages are
 * "reserved, but no mounted hugetlbfs found" (in-memory mode maps them
 * without a mount); on a host with 2 MB pages only, it warns that there
 * are no free 1 GB pages; telemetry warns that it has no legacy socket
 * (maglevd has its own control socket and metrics). */
#define _GNU_SOURCE   /* fopencookie */
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include <rte_log.h>

#include "control/base/log.h"
#include "daemon/dpdk_log.h"

/* The longest DPDK line kept whole; longer ones are cut. */
#define LINE_MAX_BYTES 1024

struct dpdk_log {
	char line[LINE_MAX_BYTES];
	size_t len;
	bool in_memory;
};

static struct dpdk_log state;

static enum mlv_log_level level_of(int dpdk_level)
{
	if (dpdk_level <= (int)RTE_LOG_ERR)
		return MLV_LOG_ERROR;
	if (dpdk_level == (int)RTE_LOG_WARNING)
		return MLV_LOG_WARNING;
	if (dpdk_level <= (int)RTE_LOG_INFO)
		return MLV_LOG_INFO;
	return MLV_LOG_DEBUG;
}

static void emit(struct dpdk_log *s)
{
	enum mlv_log_level level = level_of(rte_log_cur_msg_loglevel());

	while (s->len > 0 && (s->line[s->len - 1] == '\n' ||
			      s->line[s->len - 1] == '\r'))
		s->len--;
	if (s->len == 0)
		return;
	s->line[s->len] = '\0';
	if ((s->in_memory && strstr(s->line, "no mounted hugetlbfs found")) ||
	    strstr(s->line, "No free 1048576 kB hugepages reported") ||
	    strstr(s->line, "No legacy callbacks, legacy socket not created"))
		level = MLV_LOG_DEBUG;
	mlv_log_source(level, "dpdk", "%s", s->line);
	s->len = 0;
}

/* The stream's write: whole lines go to the logger (the FILE's own lock
 * serialises callers). */
static ssize_t cookie_write(void *cookie, const char *buf, size_t size)
{
	struct dpdk_log *s = cookie;

	for (size_t i = 0; i < size; i++) {
		if (buf[i] == '\n') {
			emit(s);
			continue;
		}
		if (s->len < sizeof(s->line) - 1)
			s->line[s->len++] = buf[i];
	}
	return (ssize_t)size;
}

bool mlv_dpdk_log_redirect(bool in_memory)
{
	cookie_io_functions_t io = { .write = cookie_write };
	FILE *f;

	state.len = 0;
	state.in_memory = in_memory;
	f = fopencookie(&state, "w", io);
	if (!f)
		return false;
	setvbuf(f, NULL, _IOLBF, 0);
	if (rte_openlog_stream(f) != 0) {
		fclose(f);
		return false;
	}
	return true;
}
