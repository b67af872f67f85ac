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

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- libmicrohttpd's messages ---- */

/* At most LOG_BURST of libmicrohttpd's lines reach the log per
 * LOG_WINDOW_MS: every client refused over a limit is a line, and a
 * flood of clients must not become a flood of log writes on the control
 * thread. What was left out is counted once the window is over. */
#define LOG_BURST 10u
#define LOG_WINDOW_MS 60000u

static void log_window(struct mlv_metrics *m, uint64_t now)
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

__attribute__((format(printf, 2, 0)))
static void mhd_log(void *cls, const char *fmt, va_list ap);

/* One of our own messages, under the same rate limit as MHD's. */
__attribute__((format(printf, 2, 3)))
static void note(struct mlv_metrics *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mhd_log(m, fmt, ap);
	va_end(ap);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct mlv_metrics *m = cls;
	size_t n;

	vsnprintf(m->last_error, sizeof(m->last_error), fmt, ap);
	n = strlen(m->last_error);
	while (n > 0 && (m->last_error[n - 1] == '\n' || m->last_error[n - 1] == '.'))
		m->last_error[--n] = '\0';
	if (!m->log)
		return;
	log_window(m, now_ms());
	if (m->log_lines < LOG_BURST) {
		m->log_lines++;
		m->log(m->log_ctx, m->last_error);
	} else {
		m->log_dropped_window++;
		m->stats.log_dropped++;
	}
}

/* ---- request deadlines ---- */

/* libmicrohttpd's own timeout counts from a connection's last activity,
 * so a client that trickles a byte now and then never meets it. Every
 * connection therefore also gets a deadline for its next request to
 * arrive whole, from the moment it opens or its previous reply was sent;
 * the request's arrival (mlv_metrics_request_done) lifts it. */

static void unwait(struct mlv_metrics *m, struct mlv_metrics_conn *c)
{
	if (!c->waiting)
		return;
	TAILQ_REMOVE(&m->waiting, c, wait_link);
	c->waiting = false;
}

static void await_request(struct mlv_metrics *m, struct mlv_metrics_conn *c)
{
	unwait(m, c);
	c->deadline_ms = now_ms() + m->timeout_ms;
	TAILQ_INSERT_TAIL(&m->waiting, c, wait_link);
	c->waiting = true;
}

static struct mlv_metrics_conn *conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return info ? info->socket_context : NULL;
}

/* libmicrohttpd has no call that closes a connection. Shutting its
 * socket down (the fd stays libmicrohttpd's) wakes its epoll set, and
 * its next read sees the end and closes the connection. */
static void close_now(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

	if (info)
		(void)shutdown(info->connect_fd, SHUT_RDWR);
}

/* ---- admission ---- */

static struct mlv_metrics_addr addr_of(const struct sockaddr *sa)
{
	struct mlv_metrics_addr a = { 0 };

	if (sa && sa->sa_family == AF_INET) {
		a.family = AF_INET;
		memcpy(a.bytes, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa && sa->sa_family == AF_INET6) {
		a.family = AF_INET6;
		memcpy(a.bytes, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
	return a;
}

static bool same_addr(const struct mlv_metrics_addr *a,
		      const struct mlv_metrics_addr *b)
{
	return a->family == b->family && memcmp(a->bytes, b->bytes, 16) == 0;
}

static void addr_text(const struct mlv_metrics_addr *a, char *buf, size_t len)
{
	if (!a->family || !inet_ntop(a->family, a->bytes, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

/* Close c, which waits for its request, for a new client (the oldest
 * waiting is the one that has had longest to send it). */
static void evict(struct mlv_metrics *m, struct mlv_metrics_conn *c,
		  const char *why)
{
	char who[INET6_ADDRSTRLEN];

	unwait(m, c);
	c->evicted = true;
	close_now(c->conn);
	m->stats.evicted++;
	addr_text(&c->addr, who, sizeof(who));
	note(m, "metrics: closed a connection from %s still without a whole "
	     "request, for a new client (%s)", who, why);
}

/* The oldest connection waiting for its request, from a (NULL: any),
 * if it has been open for MLV_METRICS_EVICT_AGE_MS; else NULL. The
 * waiting list is in order of waiting since, so the first match is the
 * oldest. */
static struct mlv_metrics_conn *oldest_waiting(struct mlv_metrics *m,
					       const struct mlv_metrics_addr *a)
{
	uint64_t now = now_ms();
	struct mlv_metrics_conn *c;

	TAILQ_FOREACH(c, &m->waiting, wait_link)
		if (!a || same_addr(&c->addr, a))
			return now - c->opened_ms >= MLV_METRICS_EVICT_AGE_MS ?
			       c : NULL;
	return NULL;
}

/* MHD's accept policy: every new client is taken; one over a limit
 * takes the place of the connection that waited longest for its request
 * (MLV_METRICS_DEFAULT_MAX_* in metrics.h), and is refused only when no
 * connection in its way is waiting. */
static enum MHD_Result admit(void *cls, const struct sockaddr *sa,
			     socklen_t len)
{
	struct mlv_metrics *m = cls;
	struct mlv_metrics_addr a = addr_of(sa);
	struct mlv_metrics_conn *c, *victim = NULL;
	uint32_t total = 0, mine = 0;
	const char *why = NULL;

	(void)len;
	LIST_FOREACH(c, &m->all, all_link) {
		if (c->evicted)
			continue;
		total++;
		mine += same_addr(&c->addr, &a);
	}
	if (mine >= m->max_per_address) {
		why = "its address is at the limit of connections";
		victim = oldest_waiting(m, &a);
	} else if (total >= m->max_connections) {
		why = "at the limit of connections";
		victim = oldest_waiting(m, NULL);
	} else {
		return MHD_YES;
	}
	if (!victim) {
		char who[INET6_ADDRSTRLEN];

		m->stats.refused++;
		addr_text(&a, who, sizeof(who));
		note(m, "metrics: refused a client from %s: %s, each one "
		     "being answered or just opened", who, why);
		return MHD_NO;
	}
	evict(m, victim, why);
	return MHD_YES;
}

static void on_connection(void *cls, struct MHD_Connection *conn,
			  void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct mlv_metrics *m = cls;
	struct mlv_metrics_conn *c = *socket_context;
	const union MHD_ConnectionInfo *info;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		c = calloc(1, sizeof(*c));
		if (!c) {
			/* without a deadline it could be held forever */
			close_now(conn);
			return;
		}
		c->conn = conn;
		c->opened_ms = now_ms();
		info = MHD_get_connection_info(conn,
					       MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		c->addr = addr_of(info ? info->client_addr : NULL);
		LIST_INSERT_HEAD(&m->all, c, all_link);
		*socket_context = c;
		await_request(m, c);
		return;
	}
	if (c) {
		unwait(m, c);
		LIST_REMOVE(c, all_link);
		free(c);
		*socket_context = NULL;
	}
}

/* A reply was sent: a kept-alive connection now awaits its next
 * request. (Any other ending closes the connection.) */
static void on_completed(void *cls, struct MHD_Connection *conn,
			 void **req_cls, enum MHD_RequestTerminationCode code)
{
	struct mlv_metrics_conn *c = conn_of(conn);

	(void)req_cls;
	if (c && code == MHD_REQUEST_TERMINATED_COMPLETED_OK)
		await_request(cls, c);
}

void mlv_metrics_request_done(struct mlv_metrics *m,
			      struct MHD_Connection *conn)
{
	struct mlv_metrics_conn *c = conn_of(conn);

	if (c)
		unwait(m, c);
}

static void expire(struct mlv_metrics *m, uint64_t now)
{
	struct mlv_metrics_conn *c;

	while ((c = TAILQ_FIRST(&m->waiting)) && c->deadline_ms <= now) {

		unwait(m, c);
		close_now(c->conn);
		m->stats.request_timeouts++;
	}
}

/* ---- timer ---- */

/* Milliseconds to the earlier of MHD's next timeout and the first
 * request deadline; false for neither. */
static bool next_timeout(struct mlv_metrics *m, uint64_t *out)
{
	MHD_UNSIGNED_LONG_LONG ms = 0;
	bool any = MHD_get_timeout(m->mhd, &ms) == MHD_YES;

	if (!TAILQ_EMPTY(&m->waiting)) {
		uint64_t now = now_ms();
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
		flags, 0, admit, m, mlv_metrics_http_handle, m,
		/* first, so that MHD's messages about the options reach it */
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, m,
		MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)sa,
		/* the limits are admit()'s; MHD's own, above them, leaves
		 * room for the evicted connections it has not closed yet */
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)(2u * m->max_connections),
		/* whole seconds, rounded up */
		MHD_OPTION_CONNECTION_TIMEOUT,
		(unsigned int)((m->timeout_ms + 999u) / 1000u),
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, m,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, m,
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
	m->log_window_ms = now_ms();
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
	now = now_ms();
	log_window(m, now);
	/* before MHD_run, which then reads the ends of what this shut */
	expire(m, now);
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
