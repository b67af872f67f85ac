/* SPDX-License-Identifier: BSD-3-Clause */
/* The metrics server's connections: admission under the limits, with
 * room made for a fresh client by closing the one that has waited
 * longest for its request, and every connection's deadline for its next
 * request. Control thread only. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "control/metrics/metrics_internal.h"

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
	c->deadline_ms = mlv_metrics_now_ms() + m->timeout_ms;
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
	mlv_metrics_note(m, "metrics: closed a connection from %s still "
			 "without a whole request, for a new client (%s)",
			 who, why);
}

/* The oldest connection waiting for its request, from a (NULL: any),
 * if it has been open for MLV_METRICS_EVICT_AGE_MS; else NULL. The
 * waiting list is in order of waiting since, so the first match is the
 * oldest. */
static struct mlv_metrics_conn *oldest_waiting(struct mlv_metrics *m,
					       const struct mlv_metrics_addr *a)
{
	uint64_t now = mlv_metrics_now_ms();
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
enum MHD_Result mlv_metrics_admit(void *cls, const struct sockaddr *sa,
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
		mlv_metrics_note(m, "metrics: refused a client from %s: %s, "
				 "each one being answered or just opened",
				 who, why);
		return MHD_NO;
	}
	evict(m, victim, why);
	return MHD_YES;
}

void mlv_metrics_on_connection(void *cls, struct MHD_Connection *conn,
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
		c->opened_ms = mlv_metrics_now_ms();
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
void mlv_metrics_on_completed(void *cls, struct MHD_Connection *conn,
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

void mlv_metrics_expire(struct mlv_metrics *m, uint64_t now)
{
	struct mlv_metrics_conn *c;

	while ((c = TAILQ_FIRST(&m->waiting)) && c->deadline_ms <= now) {

		unwait(m, c);
		close_now(c->conn);
		m->stats.request_timeouts++;
	}
}
