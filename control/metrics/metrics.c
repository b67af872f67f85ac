/* SPDX-License-Identifier: BSD-3-Clause */
/* The metrics server's lifecycle and its place in the control thread's
 * event loop (metrics.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "control/base/addr.h"
#include "control/metrics/metrics_internal.h"

/* ---- listen address ---- */

/* "IP:PORT" or "[IP6]:PORT", port 0..65535, into *sa. The config
 * validates the same shape (port 1..65535); this parser stands alone so
 * tests and tools can ask for port 0. */
static bool parse_listen(const char *s, struct sockaddr_storage *sa)
{
	char host[MLV_IP_STRLEN];
	const char *port_text;
	struct mlv_ip ip;
	unsigned long port;
	size_t hlen;
	char *end;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return false;
		hlen = (size_t)(close - s - 1);
		if (hlen >= sizeof(host))
			return false;
		memcpy(host, s + 1, hlen);
		port_text = close + 2;
	} else {
		const char *colon = strrchr(s, ':');

		if (!colon)
			return false;
		hlen = (size_t)(colon - s);
		if (hlen >= sizeof(host))
			return false;
		memcpy(host, s, hlen);
		port_text = colon + 1;
	}
	host[hlen] = '\0';
	if (!mlv_ip_parse(host, &ip) ||
	    (s[0] == '[') != (ip.family == MLV_AF_INET6) ||
	    port_text[0] < '0' || port_text[0] > '9')
		return false;
	errno = 0;
	port = strtoul(port_text, &end, 10);
	if (errno || *end || port > 65535)
		return false;
	memset(sa, 0, sizeof(*sa));
	if (ip.family == MLV_AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)sa;

		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		memcpy(&in->sin_addr, ip.bytes, 4);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		memcpy(&in6->sin6_addr, ip.bytes, 16);
	}
	return true;
}

/* ---- timer ---- */

/* Milliseconds to the earlier of MHD's next timeout and the first
 * request deadline; false for neither. */
static bool next_timeout(struct mlv_metrics *m, uint64_t *out)
{
	MHD_UNSIGNED_LONG_LONG ms = 0;
	bool any = MHD_get_timeout(m->mhd, &ms) == MHD_YES;

	if (!TAILQ_EMPTY(&m->waiting)) {
		uint64_t now = mlv_metrics_now_ms();
		uint64_t due = TAILQ_FIRST(&m->waiting)->deadline_ms;
		uint64_t left = due > now ? due - now : 0;

		if (!any || left < ms)
			ms = left;
		any = true;
	}
	*out = ms;
	return any;
}

/* Arm tfd for the next timeout, or disarm it when there is none. A
 * zero timeout (work already pending) fires at once: a timerfd with
 * it_value 0 would mean "disarmed". */
static enum mlv_err rearm(struct mlv_metrics *m)
{
	struct itimerspec its = { 0 };
	uint64_t ms;

	if (next_timeout(m, &ms)) {
		its.it_value.tv_sec = (time_t)(ms / 1000);
		its.it_value.tv_nsec = (long)(ms % 1000) * 1000000L;
		if (ms == 0)
			its.it_value.tv_nsec = 1;
	}
	return timerfd_settime(m->tfd, 0, &its, NULL) == 0 ? MLV_OK : MLV_E_IO;
}

/* ---- lifecycle ---- */

static void set_err(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

static enum mlv_err watch(int ep, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0 ? MLV_OK : MLV_E_IO;
}

static uint32_t or_default(uint32_t v, uint32_t def)
{
	return v ? v : def;
}

static enum mlv_err start_mhd(struct mlv_metrics *m,
			      const struct mlv_metrics_params *p,
			      const struct sockaddr_storage *sa)
{
	unsigned int flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;

	if (sa->ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	m->timeout_ms = or_default(p->timeout_ms, MLV_METRICS_DEFAULT_TIMEOUT_MS);
	m->max_connections = or_default(p->max_connections,
					MLV_METRICS_DEFAULT_MAX_CONNECTIONS);
	m->max_per_address = or_default(p->max_per_address,
					MLV_METRICS_DEFAULT_MAX_PER_ADDRESS);
	/* No MHD_USE_INTERNAL_POLLING_THREAD and no thread pool: MHD runs
	 * only inside MHD_run, on our thread. Epoll, not select: no
	 * FD_SETSIZE bound on the fds of the connections. */
	m->mhd = MHD_start_daemon(
		flags, 0, mlv_metrics_admit, m, mlv_metrics_http_handle, m,
		/* first, so that MHD's messages about the options reach it */
		MHD_OPTION_EXTERNAL_LOGGER, mlv_metrics_mhd_log, m,
		MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)sa,
		/* the limits are admit()'s; MHD's own, above them, leaves
		 * room for the evicted connections it has not closed yet */
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)(2u * m->max_connections),
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)MLV_METRICS_CONN_MEMORY,
		/* whole seconds, rounded up */
		MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned int)((m->timeout_ms + 999u) / 1000u),
		MHD_OPTION_NOTIFY_CONNECTION, mlv_metrics_on_connection, m,
		MHD_OPTION_NOTIFY_COMPLETED, mlv_metrics_on_completed, m,
		MHD_OPTION_END);
	return m->mhd ? MLV_OK : MLV_E_IO;
}

enum mlv_err mlv_metrics_create(const struct mlv_metrics_params *p,
				struct mlv_metrics **out, char *err,
				size_t err_len)
{
	const union MHD_DaemonInfo *info;
	struct sockaddr_storage sa;
	struct mlv_metrics *m;
	enum mlv_err rc;

	if (!p || !out || !p->src.ctl || !p->listen) {
		set_err(err, err_len, "metrics: missing parameters");
		return MLV_E_INVAL;
	}
	if (!parse_listen(p->listen, &sa)) {
		set_err(err, err_len, "metrics: listen address \"%s\" is not "
			"IP:PORT or [IPv6]:PORT", p->listen);
		return MLV_E_INVAL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		set_err(err, err_len, "metrics: out of memory");
		return MLV_E_NOMEM;
	}
	m->ep = m->tfd = -1;
	TAILQ_INIT(&m->waiting);
	LIST_INIT(&m->all);
	m->src = p->src;
	m->log = p->log;
	m->log_ctx = p->log_ctx;
	m->log_window_ms = mlv_metrics_now_ms();
	rc = mlv_metrics_renderer_create(&m->renderer);
	if (rc) {
		set_err(err, err_len, "metrics: %s", mlv_strerror(rc));
		goto fail;
	}
	rc = start_mhd(m, p, &sa);
	if (rc) {
		set_err(err, err_len, "metrics: cannot listen on %s: %s",
			p->listen, m->last_error[0] ? m->last_error :
			"libmicrohttpd refused to start");
		goto fail;
	}
	info = MHD_get_daemon_info(m->mhd, MHD_DAEMON_INFO_BIND_PORT);
	m->port = info ? info->port : 0;
	info = MHD_get_daemon_info(m->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	m->ep = epoll_create1(EPOLL_CLOEXEC);
	m->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	rc = MLV_E_IO;
	if (!info || m->ep < 0 || m->tfd < 0 || watch(m->ep, info->epoll_fd) ||
	    watch(m->ep, m->tfd) || rearm(m)) {
		set_err(err, err_len, "metrics: event loop set-up: %s",
			strerror(errno));
		goto fail;
	}
	*out = m;
	return MLV_OK;
fail:
	mlv_metrics_destroy(m);
	return rc;
}

void mlv_metrics_destroy(struct mlv_metrics *m)
{
	if (!m)
		return;
	if (m->mhd)
		MHD_stop_daemon(m->mhd);
	if (m->tfd >= 0)
		close(m->tfd);
	if (m->ep >= 0)
		close(m->ep);
	mlv_metrics_renderer_destroy(m->renderer);
	free(m);
}

int mlv_metrics_fd(const struct mlv_metrics *m)
{
	return m->ep;
}

static unsigned int connections(struct mlv_metrics *m)
{
	const union MHD_DaemonInfo *info =
		MHD_get_daemon_info(m->mhd, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);

	return info ? info->num_connections : 0;
}

enum mlv_err mlv_metrics_process(struct mlv_metrics *m)
{
	uint64_t expirations, now;
	enum mlv_err rc = MLV_OK;
	unsigned int before = connections(m), after;

	/* Non-blocking; EAGAIN only means the timer was not what woke us. */
	if (read(m->tfd, &expirations, sizeof(expirations)) < 0 &&
	    errno != EAGAIN)
		rc = MLV_E_IO;
	now = mlv_metrics_now_ms();
	mlv_metrics_log_window(m, now);
	/* before MHD_run, which then reads the ends of what this shut */
	mlv_metrics_expire(m, now);
	if (MHD_run(m->mhd) != MHD_YES)
		rc = MLV_E_IO;
	/* At the connection limit MHD takes its listening socket out of its
	 * epoll set, and puts it back only at the start of the next MHD_run
	 * after a connection closed, without reporting a timeout for it. A
	 * client already waiting in the backlog then makes no fd readable,
	 * so while connections close, run again to let MHD re-arm the
	 * listener and accept it (bounded: each round closed something). */
	for (int round = 0; round < 4 && (after = connections(m)) < before;
	     round++) {
		before = after;
		if (MHD_run(m->mhd) != MHD_YES)
			rc = MLV_E_IO;
	}
	if (rearm(m) != MLV_OK)
		rc = MLV_E_IO;
	return rc;
}

int mlv_metrics_timeout_ms(struct mlv_metrics *m)
{
	uint64_t ms;

	if (!next_timeout(m, &ms))
		return -1;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

uint16_t mlv_metrics_port(const struct mlv_metrics *m)
{
	return m->port;
}

void mlv_metrics_stats(struct mlv_metrics *m,
		       struct mlv_metrics_server_stats *out)
{
	*out = m->stats;
	out->connections = connections(m);
}
