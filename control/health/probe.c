/* SPDX-License-Identifier: BSD-3-Clause */
/* Checks on the wire: the non-blocking TCP connect and the HTTP exchange,
 * and the UDP and DNS request/reply, as small state machines driven by
 * the engine's epoll.
 *
 * connect (EINPROGRESS) --EPOLLOUT--> tcp: success
 *                                     http: send request --> read until
 *                                     "HTTP/x.y NNN " --> compare status
 * udp, dns: a connected datagram socket: send --> EPOLLIN --> the reply
 *                                     (udp: contains `receive`; dns: our id,
 *                                     RCODE NOERROR); an ICMP port
 *                                     unreachable arrives as ECONNREFUSED
 * A deadline in the heap (started + timeout) covers the whole check, except
 * that a stage the engine itself started late gets a timeout of its own
 * (stage_started_late).
 *
 * Sockets are closed with SO_LINGER {on, 0}: an RST instead of a FIN, so
 * the checker leaves no TIME_WAIT behind (100,000 checks a second would
 * otherwise exhaust ephemeral ports), as HAProxy does for its checks. */
#define _GNU_SOURCE   /* memmem */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control/health/health_internal.h"

/* epoll tag: the conn's index + 1 (0 is the timerfd) and its sequence. */
static uint64_t conn_tag(const struct health_conn *c)
{
	return ((uint64_t)c->seq << 32) | (uint64_t)(c->index + 1);
}

static struct health_conn *conn_get(struct mlv_health *h)
{
	struct health_conn *c = h->free_conns;

	if (h->in_flight >= h->max_in_flight)
		return NULL;
	if (c) {
		h->free_conns = c->next_free;
	} else {
		struct health_conn **nc;

		/* The pool grows to max_in_flight at most; keep the pointer
		 * array exactly sized to that bound's growth steps. */
		nc = realloc(h->conns, ((size_t)h->n_conns + 1) * sizeof(*nc));
		if (!nc)
			return NULL;
		h->conns = nc;
		c = calloc(1, sizeof(*c));
		if (!c)
			return NULL;
		c->index = h->n_conns;
		h->conns[h->n_conns++] = c;
	}
	c->next_free = NULL;
	c->fd = -1;
	c->seq++;
	c->rx_len = 0;
	c->req_len = 0;
	c->req_sent = 0;
	h->in_flight++;
	return c;
}

static void conn_put(struct mlv_health *h, struct health_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);   /* also leaves the epoll set */
	c->fd = -1;
	/* After the close: its reset still takes the data path. */
	if (c->tunneled && h->opts.tunnel.close)
		h->opts.tunnel.close(h->opts.tunnel.ctx, &c->tun);
	c->tunneled = false;
	c->probe = NULL;
	c->seq++;           /* any event still queued for it is now stale */
	c->next_free = h->free_conns;
	h->free_conns = c;
	h->in_flight--;
}

void health_check_abort(struct mlv_health *h, struct health_probe *p)
{
	if (!p->conn)
		return;
	conn_put(h, p->conn);
	p->conn = NULL;
}

void health_probe_stop(struct mlv_health *h, struct health_probe *p)
{
	health_check_abort(h, p);
	health_heap_remove(h, p);
	health_wait_remove(h, p);
	p->phase = PHASE_OFF;
}

void health_conns_free(struct mlv_health *h)
{
	for (uint32_t i = 0; i < h->n_conns; i++) {
		if (h->conns[i]->fd >= 0)
			close(h->conns[i]->fd);
		if (h->conns[i]->tunneled && h->opts.tunnel.close)
			h->opts.tunnel.close(h->opts.tunnel.ctx,
					     &h->conns[i]->tun);
		free(h->conns[i]);
	}
	free(h->conns);
	h->conns = NULL;
	h->n_conns = 0;
	h->free_conns = NULL;
	h->in_flight = 0;
}

/* The check has its verdict: its socket goes back to the pool first, so
 * the result's bookkeeping (result.c) never reaches back into this file. */
static void finish(struct mlv_health *h, struct health_probe *p,
		   enum mlv_health_result r, const char *text, uint64_t now)
{
	health_check_abort(h, p);
	health_probe_finish(h, p, r, text, now);
}

/* The check could not be run for a reason of ours, not the backend's
 * (no fd, no memory): try again next interval without counting it. */
static void local_error(struct mlv_health *h, struct health_probe *p,
			uint64_t now)
{
	health_check_abort(h, p);
	h->counters[MLV_HEALTH_CTR_LOCAL_ERRORS]++;
	p->phase = PHASE_SCHEDULED;
	if (health_heap_set(h, p, now + (uint64_t)p->spec.interval_ms * 1000000u))
		p->phase = PHASE_OFF;   /* no memory even for the heap */
}

static void fail_errno(struct mlv_health *h, struct health_probe *p,
		       const char *what, int err, uint64_t now)
{
	char text[MLV_HEALTH_REASON_MAX];

	snprintf(text, sizeof(text), "%s: %s", what, strerror(err));
	finish(h, p, MLV_HEALTH_RESULT_FAILED, text, now);
}

static int watch(struct mlv_health *h, struct health_conn *c, uint32_t events,
		 bool add)
{
	struct epoll_event ev = { .events = events, .data.u64 = conn_tag(c) };

	return epoll_ctl(h->ep, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, c->fd, &ev);
}

static socklen_t target_addr(const struct health_spec *s,
			     struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (s->address.family == MLV_AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(s->port);
		memcpy(&sin->sin_addr, s->address.bytes, 4);
		return sizeof(*sin);
	}
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(s->port);
	memcpy(&sin6->sin6_addr, s->address.bytes, 16);
	return sizeof(*sin6);
}

/* A data-path check's socket before its connect (struct
 * mlv_health_tunnel): a TTL of 1, so that a host that would forward the
 * VIP's packet rather than take it (no VIP on its lo) drops it instead
 * of sending it on to the VIP's other backends, whose answer would pass
 * the check; bound to a port of its own, which tells its packets apart
 * (the bind reserves the port against every other socket's); and
 * announced to the check path. false: the check has ended. */
static bool tunnel_open(struct mlv_health *h, struct health_conn *c,
			uint64_t now)
{
	struct health_probe *p = c->probe;
	const struct health_spec *s = &p->spec;
	struct sockaddr_storage ss = { 0 };
	socklen_t len = sizeof(ss);
	char why[MLV_HEALTH_REASON_MAX - 16] = "";
	char text[MLV_HEALTH_REASON_MAX];
	int one = 1;
	bool v6 = s->address.family == MLV_AF_INET6;
	enum mlv_err err;

	ss.ss_family = v6 ? AF_INET6 : AF_INET;
	if ((v6 ? setsockopt(c->fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &one,
			     sizeof(one))
		: setsockopt(c->fd, IPPROTO_IP, IP_TTL, &one, sizeof(one))) ||
	    bind(c->fd, (struct sockaddr *)&ss,
		 v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in)) ||
	    getsockname(c->fd, (struct sockaddr *)&ss, &len)) {
		local_error(h, p, now);
		return false;
	}
	c->tun = (struct mlv_health_tunnel){
		.backend = s->address,
		.port = s->port,
		.local_port = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
				       : ((struct sockaddr_in *)&ss)->sin_port),
		.vip = s->vip,
		.forwarding = s->forwarding,
		.gue_port = s->gue_port,
		.has_mac = s->has_mac,
		.mac = s->mac,
		.outer_source = s->outer_source,
	};
	if (!h->opts.tunnel.open) {
		finish(h, p, MLV_HEALTH_RESULT_FAILED,
		       "data path: not available", now);
		return false;
	}
	err = h->opts.tunnel.open(h->opts.tunnel.ctx, &c->tun, why,
				  sizeof(why));
	if (err != MLV_OK) {
		snprintf(text, sizeof(text), "data path: %s",
			 why[0] ? why : mlv_strerror(err));
		finish(h, p, MLV_HEALTH_RESULT_FAILED, text, now);
		return false;
	}
	c->tunneled = true;
	return true;
}

/* A datagram check's reply (udp, dns). Datagrams from elsewhere cannot
 * arrive on a connected socket; a dns reply to another id (a late one to
 * an earlier check) is skipped. */
static void read_datagram(struct mlv_health *h, struct health_conn *c,
			  uint64_t now)
{
	struct health_probe *p = c->probe;
	char text[MLV_HEALTH_REASON_MAX], shown[48], rc[16];
	uint8_t rcode;

	for (;;) {
		ssize_t n = recv(c->fd, c->rx, sizeof(c->rx), MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECONNREFUSED)
				finish(h, p,
						    MLV_HEALTH_RESULT_FAILED,
						    "port unreachable (ICMP)",
						    now);
			else if (errno != EAGAIN && errno != EWOULDBLOCK)
				fail_errno(h, p, "recv", errno, now);
			return;
		}
		if (p->spec.type == MLV_HEALTH_DNS) {
			if (health_dns_parse((const uint8_t *)c->rx, (size_t)n,
					     (const uint8_t *)c->req, c->req_len,
					     &rcode) != DNS_ANSWER)
				continue;
			snprintf(text, sizeof(text), "DNS %s",
				 health_dns_rcode_name(rcode, rc, sizeof(rc)));
			finish(h, p, rcode == 0 ?
					    MLV_HEALTH_RESULT_OK :
					    MLV_HEALTH_RESULT_FAILED,
					    text, now);
			return;
		}
		if (p->spec.host[0] == '\0' ||
		    memmem(c->rx, (size_t)n, p->spec.host,
			   strlen(p->spec.host)) != NULL) {
			snprintf(text, sizeof(text), "reply of %zd bytes", n);
			finish(h, p, MLV_HEALTH_RESULT_OK, text,
					    now);
		} else {
			snprintf(text, sizeof(text), "reply without \"%s\": "
				 "\"%s\"", p->spec.host,
				 health_printable(c->rx, (size_t)n, shown,
						  sizeof(shown)));
			finish(h, p, MLV_HEALTH_RESULT_FAILED,
					    text, now);
		}
		return;
	}
}

static void read_status(struct mlv_health *h, struct health_conn *c,
			uint64_t now)
{
	struct health_probe *p = c->probe;
	char text[MLV_HEALTH_REASON_MAX];
	char shown[HEALTH_STATUS_PREFIX + 1];
	uint16_t status = 0;

	for (;;) {
		ssize_t n = recv(c->fd, c->rx + c->rx_len,
				 sizeof(c->rx) - c->rx_len, MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				fail_errno(h, p, "recv", errno, now);
			return;
		}
		if (n == 0) {
			if (c->rx_len)
				snprintf(text, sizeof(text),
					 "HTTP: connection closed after %u "
					 "bytes, before a status line",
					 c->rx_len);
			else
				snprintf(text, sizeof(text),
					 "HTTP: connection closed without a "
					 "response");
			finish(h, p, MLV_HEALTH_RESULT_FAILED,
					    text, now);
			return;
		}
		c->rx_len = (uint16_t)(c->rx_len + n);
		switch (health_http_parse_status(c->rx, c->rx_len, &status)) {
		case HTTP_NEED_MORE:
			continue;
		case HTTP_MALFORMED:
			snprintf(text, sizeof(text),
				 "HTTP: malformed status line \"%s\"",
				 health_printable(c->rx, c->rx_len, shown,
						  sizeof(shown)));
			finish(h, p, MLV_HEALTH_RESULT_FAILED,
					    text, now);
			return;
		case HTTP_STATUS:
			if (status == p->spec.expect_status) {
				snprintf(text, sizeof(text), "HTTP %u", status);
				finish(h, p, MLV_HEALTH_RESULT_OK,
						    text, now);
			} else {
				snprintf(text, sizeof(text),
					 "HTTP %u (expected %u)", status,
					 p->spec.expect_status);
				finish(h, p,
						    MLV_HEALTH_RESULT_FAILED,
						    text, now);
			}
			return;
		}
	}
}

/* The engine moves a check on to its next stage only when it runs. If
 * that is at or after the deadline, the backend finished its part in time
 * as far as anyone can tell, and the delay was the engine's (the control
 * thread was busy): the stage it starts now, whose time the backend never
 * had, gets a whole timeout. At most twice per check (connect done,
 * request sent after a wait), so a check cannot be prolonged for ever;
 * an http check lasts at most three timeouts plus the engine's delays.
 * p is in the heap (its deadline), so this cannot allocate. */
static void stage_started_late(struct mlv_health *h, struct health_probe *p,
			       uint64_t now)
{
	if (now >= p->due_ns)
		(void)health_heap_set(h, p, now + (uint64_t)p->spec.timeout_ms *
							  1000000u);
}

/* registered: whether c->fd is already in the epoll set. */
static void send_request(struct mlv_health *h, struct health_conn *c,
			 bool registered, uint64_t now)
{
	struct health_probe *p = c->probe;
	/* Resuming after waiting for room in the socket buffer. */
	bool resumed = c->stage == CONN_SENDING;

	c->stage = CONN_SENDING;
	while (c->req_sent < c->req_len) {
		ssize_t n = send(c->fd, c->req + c->req_sent,
				 c->req_len - c->req_sent,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				if (watch(h, c, EPOLLOUT, !registered))
					local_error(h, p, now);
				return;
			}
			fail_errno(h, p, "send", errno, now);
			return;
		}
		c->req_sent = (uint16_t)(c->req_sent + n);
	}
	if (resumed)
		stage_started_late(h, p, now);
	c->stage = CONN_READING;
	if (watch(h, c, EPOLLIN, !registered)) {
		local_error(h, p, now);
		return;
	}
	/* The answer may already be there (loopback): read without waiting
	 * for another round through epoll. */
	read_status(h, c, now);
}

static void connected(struct mlv_health *h, struct health_conn *c,
		      bool registered, uint64_t now)
{
	if (c->probe->spec.type == MLV_HEALTH_TCP) {
		finish(h, c->probe, MLV_HEALTH_RESULT_OK,
				    "connected", now);
		return;
	}
	stage_started_late(h, c->probe, now);
	send_request(h, c, registered, now);
}

/* udp and dns: the request into c->req, a connected datagram socket, the
 * send; then the reply (read_datagram) or the deadline. */
static void start_datagram(struct mlv_health *h, struct health_conn *c,
			   uint64_t now)
{
	struct health_probe *p = c->probe;
	int family = p->spec.address.family == MLV_AF_INET ? AF_INET : AF_INET6;
	struct sockaddr_storage ss;
	socklen_t sslen;
	uint16_t id;
	size_t n;

	if (p->spec.type == MLV_HEALTH_DNS) {
		/* an id nobody can guess, against spoofed answers (a
		 * counter only while the kernel's pool is not ready) */
		if (getrandom(&id, sizeof(id), GRND_NONBLOCK) !=
		    (ssize_t)sizeof(id))
			id = (uint16_t)(c->seq * 40503u + c->index);
		n = health_dns_query(p->spec.path, id,
				     (uint8_t *)c->req, sizeof(c->req));
	} else {
		n = strlen(p->spec.path);
		memcpy(c->req, p->spec.path, n);
	}
	/* mlv_health_check_config bounds the texts, so the request fits */
	if (p->spec.type == MLV_HEALTH_DNS && n == 0) {
		local_error(h, p, now);
		return;
	}
	c->req_len = (uint16_t)n;
	c->fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       IPPROTO_UDP);
	if (c->fd < 0 ||
	    health_heap_set(h, p, now + (uint64_t)p->spec.timeout_ms * 1000000u)) {
		local_error(h, p, now);
		return;
	}
	sslen = target_addr(&p->spec, &ss);
	if (connect(c->fd, (struct sockaddr *)&ss, sslen) != 0) {
		fail_errno(h, p, "connect", errno, now);
		return;
	}
	/* one datagram, empty if send is "" (a valid UDP request) */
	if (send(c->fd, c->req, c->req_len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)
			local_error(h, p, now);
		else
			fail_errno(h, p, "send", errno, now);
		return;
	}
	c->stage = CONN_READING;
	if (watch(h, c, EPOLLIN, true)) {
		local_error(h, p, now);
		return;
	}
	read_datagram(h, c, now);
}

void health_check_start(struct mlv_health *h, struct health_probe *p,
			uint64_t now)
{
	struct sockaddr_storage ss;
	socklen_t sslen;
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct health_conn *c;
	int family = p->spec.address.family == MLV_AF_INET ? AF_INET : AF_INET6;

	if (h->in_flight >= h->max_in_flight ||
	    (h->wait_head && p->phase != PHASE_WAITING)) {
		/* Out of slots, or others already waiting: join the end of
		 * the line (first come, first served, so a probe whose check
		 * just ended cannot take the slot back from the waiters);
		 * process() starts waiters as checks end. */
		health_wait_push(h, p);
		return;
	}
	health_wait_remove(h, p);
	c = conn_get(h);
	if (!c) {
		local_error(h, p, now);
		return;
	}
	/* The check's clock starts now, not at the now of the call: one
	 * call starts up to a thousand checks, and both the deadline and the
	 * measured duration (the duration histogram) run from this check's
	 * own start. */
	now = health_now_ns();
	c->probe = p;
	p->conn = c;
	p->phase = PHASE_RUNNING;
	p->postponed = false;
	p->started_ns = now;
	h->counters[MLV_HEALTH_CTR_CHECKS_STARTED]++;

	if (p->spec.type == MLV_HEALTH_UDP || p->spec.type == MLV_HEALTH_DNS) {
		start_datagram(h, c, now);
		return;
	}
	c->fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       IPPROTO_TCP);
	if (c->fd < 0 ||
	    setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) ||
	    health_heap_set(h, p, now + (uint64_t)p->spec.timeout_ms * 1000000u)) {
		local_error(h, p, now);
		return;
	}
	if (p->spec.type == MLV_HEALTH_HTTP) {
		size_t n = health_http_request(&p->spec, c->req, sizeof(c->req));

		/* mlv_health_check_config bounds path and host, so this
		 * cannot happen; a local error rather than a crash if it did. */
		if (n == 0) {
			local_error(h, p, now);
			return;
		}
		c->req_len = (uint16_t)n;
	}
	if (p->spec.via == MLV_HEALTH_VIA_DATA_PATH &&
	    !tunnel_open(h, c, now))
		return;
	sslen = target_addr(&p->spec, &ss);
	if (connect(c->fd, (struct sockaddr *)&ss, sslen) == 0) {
		connected(h, c, false, now);
		return;
	}
	if (errno != EINPROGRESS) {
		fail_errno(h, p, "connect", errno, now);
		return;
	}
	c->stage = CONN_CONNECTING;
	if (watch(h, c, EPOLLOUT, true))
		local_error(h, p, now);
}

void health_check_event(struct mlv_health *h, uint64_t data, uint32_t events,
			uint64_t now)
{
	uint32_t index = (uint32_t)data - 1;
	uint32_t seq = (uint32_t)(data >> 32);
	struct health_conn *c;
	int err = 0;
	socklen_t len = sizeof(err);

	if (index >= h->n_conns)
		return;
	c = h->conns[index];
	if (!c->probe || c->seq != seq)
		return;   /* the check ended (timeout, sync) since */
	switch (c->stage) {
	case CONN_CONNECTING:
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len))
			err = errno;
		if (err)
			fail_errno(h, c->probe, "connect", err, now);
		else if (events & EPOLLOUT)
			connected(h, c, true, now);
		else if (events & (EPOLLERR | EPOLLHUP))
			finish(h, c->probe,
					    MLV_HEALTH_RESULT_FAILED,
					    "connect: connection failed", now);
		break;
	case CONN_SENDING:
		send_request(h, c, true, now);
		break;
	case CONN_READING:
		if (c->probe->spec.type == MLV_HEALTH_UDP ||
		    c->probe->spec.type == MLV_HEALTH_DNS)
			read_datagram(h, c, now);
		else
			read_status(h, c, now);
		break;
	}
}

void health_check_timeout(struct mlv_health *h, struct health_probe *p,
			  uint64_t now)
{
	static const char *const during[] = {
		[CONN_CONNECTING] = "while connecting",
		[CONN_SENDING] = "while sending the request",
		[CONN_READING] = "waiting for the status line",
	};
	char text[MLV_HEALTH_REASON_MAX];
	bool datagram = p->spec.type == MLV_HEALTH_UDP ||
			p->spec.type == MLV_HEALTH_DNS;

	snprintf(text, sizeof(text), "timeout after %ums %s",
		 p->spec.timeout_ms, datagram ? "without a reply" :
		 p->conn ? during[p->conn->stage] : "");
	finish(h, p, MLV_HEALTH_RESULT_TIMEOUT, text, now);
}
