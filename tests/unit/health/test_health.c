/* SPDX-License-Identifier: BSD-3-Clause */
/* Health-check engine (control/health*.c) against real listeners on
 * loopback that the test owns: a TCP acceptor, a closed port, a listener
 * with a full backlog, and HTTP servers (fixed status, garbage, silent,
 * gated, delayed) run by one server thread.
 *
 * Conditions are polled with a generous deadline (a safety net, never the
 * assertion). Every poll step also checks the batching promise: at most
 * one callback per mlv_health_process() call.
 */
#define _GNU_SOURCE   /* accept4 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "control/config/config.h"
#include "control/health/health.h"
#include "control/health/health_internal.h"

#define DEADLINE_MS 10000

/* ---------------------------------------------------------------- time */

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* -------------------------------------------------------------- server */

enum srv_mode {
	SRV_ACCEPT_CLOSE,   /* accept, close at once (a TCP service) */
	SRV_HTTP,           /* answer each request with `status` */
	SRV_GARBAGE,        /* answer with something that is not HTTP */
	SRV_SILENT,         /* accept, read, never answer */
	SRV_GATED,          /* hold requests until the gate opens, then answer */
	SRV_DELAYED,        /* answer `delay_ms` after the request arrived */
};

#define SRV_MAX_LISTENERS 8
#define SRV_MAX_CLIENTS 256
#define SRV_REQ_MAX 2048

struct listener {
	int fd;
	uint16_t port;
	enum srv_mode mode;
	atomic_int status;             /* SRV_HTTP / SRV_GATED / SRV_DELAYED */
	int delay_ms;                  /* SRV_DELAYED; set before srv_start */
	atomic_uint accepted;
	atomic_uint requests;          /* complete requests received */
	atomic_bool close_req;         /* test asks the thread to close fd */
	atomic_bool closed;
	pthread_mutex_t lock;          /* last_request */
	char last_request[SRV_REQ_MAX];
};

struct client {
	int fd;
	struct listener *l;
	size_t len;
	bool held;                     /* gated or delayed request waiting */
	uint64_t due_ms;               /* SRV_DELAYED: when to answer */
	char buf[SRV_REQ_MAX];
};

struct server {
	pthread_t thread;
	bool running;
	int wake[2];
	atomic_bool stop;
	atomic_bool gate_open;
	atomic_uint gated_answered;
	uint32_t n;
	struct listener l[SRV_MAX_LISTENERS];
	struct client *clients[SRV_MAX_CLIENTS];
};

static int listen_on(int family, int backlog, uint16_t *port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1;
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_loopback;
		len = sizeof(*sin6);
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, backlog) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len)) {
		close(fd);
		return -1;
	}
	*port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					: ((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

/* A loopback port with nothing listening: bound once, then released. */
static uint16_t closed_port(void)
{
	uint16_t port = 0;
	int fd = listen_on(AF_INET, 1, &port);

	assert_true(fd >= 0);
	close(fd);
	return port;
}

static struct listener *srv_add(struct server *s, enum srv_mode mode,
				int status)
{
	struct listener *l = &s->l[s->n++];

	assert_true(s->n <= SRV_MAX_LISTENERS);
	l->fd = listen_on(AF_INET, 128, &l->port);
	assert_true(l->fd >= 0);
	l->mode = mode;
	atomic_store(&l->status, status);
	pthread_mutex_init(&l->lock, NULL);
	return l;
}

static void client_drop(struct server *s, int i)
{
	close(s->clients[i]->fd);
	free(s->clients[i]);
	s->clients[i] = NULL;
}

static void answer(struct server *s, int i)
{
	struct client *c = s->clients[i];
	char resp[256];
	int n;

	if (c->l->mode == SRV_GARBAGE)
		n = snprintf(resp, sizeof(resp), "garbage\r\n\r\n");
	else
		n = snprintf(resp, sizeof(resp),
			     "HTTP/1.1 %d Whatever\r\nContent-Length: 0\r\n"
			     "Connection: close\r\n\r\n",
			     atomic_load(&c->l->status));
	/* A few hundred bytes fit any fresh socket buffer. */
	if (send(c->fd, resp, (size_t)n, MSG_NOSIGNAL) < 0) {
		/* the checker gave up already: fine */
	}
	client_drop(s, i);
}

static void on_client(struct server *s, int i)
{
	struct client *c = s->clients[i];
	ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, 0);

	if (n <= 0) {
		client_drop(s, i);
		return;
	}
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	if (c->held || !strstr(c->buf, "\r\n\r\n"))
		return;
	pthread_mutex_lock(&c->l->lock);
	snprintf(c->l->last_request, sizeof(c->l->last_request), "%s", c->buf);
	pthread_mutex_unlock(&c->l->lock);
	atomic_fetch_add(&c->l->requests, 1);
	switch (c->l->mode) {
	case SRV_HTTP:
	case SRV_GARBAGE:
		answer(s, i);
		break;
	case SRV_GATED:
		c->held = true;
		break;
	case SRV_DELAYED:
		c->held = true;
		c->due_ms = mono_ms() + (uint64_t)c->l->delay_ms;
		break;
	default:
		break;
	}
}

static void on_accept(struct server *s, struct listener *l)
{
	int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
	int i;

	if (fd < 0)
		return;
	atomic_fetch_add(&l->accepted, 1);
	if (l->mode == SRV_ACCEPT_CLOSE) {
		close(fd);
		return;
	}
	for (i = 0; i < SRV_MAX_CLIENTS && s->clients[i]; i++)
		;
	if (i == SRV_MAX_CLIENTS) {
		close(fd);
		return;
	}
	s->clients[i] = calloc(1, sizeof(*s->clients[i]));
	s->clients[i]->fd = fd;
	s->clients[i]->l = l;
}

static void *srv_main(void *arg)
{
	struct server *s = arg;

	while (!atomic_load(&s->stop)) {
		struct pollfd pfd[1 + SRV_MAX_LISTENERS + SRV_MAX_CLIENTS];
		int who[1 + SRV_MAX_LISTENERS + SRV_MAX_CLIENTS];
		int n = 0, wait_ms = 1000;
		char drain[64];
		uint64_t now = mono_ms();

		for (uint32_t i = 0; i < s->n; i++) {
			struct listener *l = &s->l[i];

			if (atomic_load(&l->close_req) && l->fd >= 0) {
				close(l->fd);
				l->fd = -1;
				atomic_store(&l->closed, true);
			}
		}
		if (atomic_load(&s->gate_open))
			for (int i = 0; i < SRV_MAX_CLIENTS; i++)
				if (s->clients[i] && s->clients[i]->held &&
				    s->clients[i]->l->mode == SRV_GATED) {
					answer(s, i);
					atomic_fetch_add(&s->gated_answered, 1);
				}
		/* delayed answers that are due; poll no longer than until
		 * the next one */
		for (int i = 0; i < SRV_MAX_CLIENTS; i++) {
			struct client *c = s->clients[i];

			if (!c || !c->held || c->l->mode != SRV_DELAYED)
				continue;
			if (c->due_ms <= now)
				answer(s, i);
			else if (c->due_ms - now < (uint64_t)wait_ms)
				wait_ms = (int)(c->due_ms - now);
		}
		pfd[n] = (struct pollfd){ .fd = s->wake[0], .events = POLLIN };
		who[n++] = -1;
		for (uint32_t i = 0; i < s->n; i++)
			if (s->l[i].fd >= 0) {
				pfd[n] = (struct pollfd){ .fd = s->l[i].fd,
							  .events = POLLIN };
				who[n++] = (int)i;
			}
		for (int i = 0; i < SRV_MAX_CLIENTS; i++)
			if (s->clients[i]) {
				pfd[n] = (struct pollfd){ .fd = s->clients[i]->fd,
							  .events = POLLIN };
				who[n++] = 1000 + i;
			}
		if (poll(pfd, (nfds_t)n, wait_ms) <= 0)
			continue;
		for (int k = 0; k < n; k++) {
			if (!pfd[k].revents)
				continue;
			if (who[k] < 0) {
				if (read(s->wake[0], drain, sizeof(drain)) < 0) {
					/* nothing to drain */
				}
			} else if (who[k] < 1000) {
				on_accept(s, &s->l[who[k]]);
			} else if (s->clients[who[k] - 1000]) {
				on_client(s, who[k] - 1000);
			}
		}
	}
	return NULL;
}

static void srv_poke(struct server *s)
{
	assert_int_equal(write(s->wake[1], "x", 1), 1);
}

static void srv_start(struct server *s)
{
	assert_int_equal(pipe(s->wake), 0);
	assert_int_equal(pthread_create(&s->thread, NULL, srv_main, s), 0);
	s->running = true;
}

static void srv_stop(struct server *s)
{
	if (s->running) {
		atomic_store(&s->stop, true);
		srv_poke(s);
		pthread_join(s->thread, NULL);
		close(s->wake[0]);
		close(s->wake[1]);
	}
	for (int i = 0; i < SRV_MAX_CLIENTS; i++)
		if (s->clients[i])
			client_drop(s, i);
	for (uint32_t i = 0; i < s->n; i++) {
		if (s->l[i].fd >= 0)
			close(s->l[i].fd);
		pthread_mutex_destroy(&s->l[i].lock);
	}
	free(s);
}

static struct server *srv_new(void)
{
	struct server *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	return s;
}

/* -------------------------------------------------------------- config */

static struct mlv_health_config hc_tcp(uint32_t interval, uint32_t timeout,
				       uint8_t rise, uint8_t fall)
{
	return (struct mlv_health_config){
		.type = MLV_HEALTH_TCP, .interval_ms = interval,
		.timeout_ms = timeout, .rise = rise, .fall = fall,
		.expect_status = 200, .path = "/",
	};
}

static struct mlv_health_config hc_http(uint32_t interval, uint32_t timeout,
					uint8_t rise, uint8_t fall,
					const char *path)
{
	struct mlv_health_config hc = hc_tcp(interval, timeout, rise, fall);

	hc.type = MLV_HEALTH_HTTP;
	snprintf(hc.path, sizeof(hc.path), "%s", path);
	return hc;
}

static struct mlv_config *cfg_new(void)
{
	struct mlv_config *cfg = calloc(1, sizeof(*cfg));

	assert_non_null(cfg);
	return cfg;
}

/* Adds a VIP; the returned pointer is valid until the next cfg_vip. */
static struct mlv_vip_config *cfg_vip(struct mlv_config *cfg, const char *name,
				      uint16_t port,
				      const struct mlv_health_config *hc)
{
	struct mlv_vip_config *v;

	cfg->vips = realloc(cfg->vips, (cfg->n_vips + 1) * sizeof(*cfg->vips));
	assert_non_null(cfg->vips);
	v = &cfg->vips[cfg->n_vips++];
	memset(v, 0, sizeof(*v));
	snprintf(v->name, sizeof(v->name), "%s", name);
	assert_true(mlv_ip_parse("192.0.2.1", &v->address));
	v->port = port;
	v->protocol = IPPROTO_TCP;
	v->table_size = 251;
	v->health = *hc;
	return v;
}

static void cfg_backend(struct mlv_vip_config *v, const char *name,
			const char *addr)
{
	struct mlv_backend_config *b;

	v->backends = realloc(v->backends,
			      (v->n_backends + 1) * sizeof(*v->backends));
	assert_non_null(v->backends);
	b = &v->backends[v->n_backends++];
	memset(b, 0, sizeof(*b));
	snprintf(b->name, sizeof(b->name), "%s", name);
	assert_true(mlv_ip_parse(addr, &b->address));
	b->weight = 100;
}

/* -------------------------------------------------------------- engine */

#define REC_MAX_EVENTS 64
#define REC_MAX_PAIRS 256

struct rec_event {
	bool up;
	uint32_t consecutive;
	uint32_t n_pairs;
	char reason[MLV_HEALTH_REASON_MAX];
	char line[512];                /* mlv_health_event_describe */
	char first_vip[MLV_NAME_MAX];
	char first_backend[MLV_NAME_MAX];
	/* status read from inside the callback, for the first pair */
	struct mlv_health_status st;
	uint32_t n_distinct_vips;
};

struct recorder {
	struct mlv_health *h;
	uint32_t calls;
	uint32_t empty_calls;          /* batches with nothing in them */
	uint32_t last_call_events;
	uint32_t last_call_vip_events;
	uint32_t n_events;
	struct rec_event events[REC_MAX_EVENTS];
	uint32_t n_vip_events;
	uint32_t vip_events_fail_open;
	uint32_t vip_events_all_down;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void on_batch(const struct mlv_health_batch *b, void *ctx)
{
	struct recorder *r = ctx;

	r->calls++;
	r->last_call_events = b->n_events;
	r->last_call_vip_events = b->n_vip_events;
	if (!b->n_events && !b->n_vip_events)
		r->empty_calls++;
	for (uint32_t i = 0; i < b->n_events; i++) {
		const struct mlv_health_event *e = &b->events[i];
		struct rec_event *re;
		const char *names[REC_MAX_PAIRS];
		uint32_t n = e->n_pairs < REC_MAX_PAIRS ? e->n_pairs : REC_MAX_PAIRS;

		if (r->n_events == REC_MAX_EVENTS)
			break;
		re = &r->events[r->n_events++];
		re->up = e->up;
		re->consecutive = e->consecutive;
		re->n_pairs = e->n_pairs;
		snprintf(re->reason, sizeof(re->reason), "%s", e->reason);
		assert_true(mlv_health_event_describe(e, re->line,
						      sizeof(re->line)) > 0);
		if (e->n_pairs) {
			snprintf(re->first_vip, sizeof(re->first_vip), "%s",
				 e->pairs[0].vip);
			snprintf(re->first_backend, sizeof(re->first_backend),
				 "%s", e->pairs[0].backend);
			assert_int_equal(mlv_health_get(r->h, e->pairs[0].vip,
							e->pairs[0].backend,
							&re->st), MLV_OK);
		}
		for (uint32_t k = 0; k < n; k++)
			names[k] = e->pairs[k].vip;
		qsort(names, n, sizeof(names[0]), cmp_str);
		re->n_distinct_vips = n ? 1 : 0;
		for (uint32_t k = 1; k < n; k++)
			if (strcmp(names[k], names[k - 1]))
				re->n_distinct_vips++;
	}
	for (uint32_t i = 0; i < b->n_vip_events; i++) {
		r->n_vip_events++;
		if (b->vip_events[i].all_down)
			r->vip_events_all_down++;
		if (b->vip_events[i].fail_open)
			r->vip_events_fail_open++;
	}
}

static struct mlv_health *engine(struct recorder *r,
				 enum mlv_health_all_down policy,
				 uint32_t max_in_flight)
{
	struct mlv_health_options o = {
		.seed = 42, .max_in_flight = max_in_flight,
		.all_down = policy, .on_batch = on_batch, .ctx = r,
	};
	struct mlv_health *h = NULL;

	memset(r, 0, sizeof(*r));
	assert_int_equal(mlv_health_create(&o, &h), MLV_OK);
	assert_non_null(h);
	assert_true(mlv_health_fd(h) >= 0);
	r->h = h;
	return h;
}

/* One step of the daemon's loop: wait (briefly) for the fd, process. */
static void step(struct mlv_health *h, struct recorder *r)
{
	struct pollfd pfd = { .fd = mlv_health_fd(h), .events = POLLIN };
	uint32_t before = r->calls;

	poll(&pfd, 1, 5);
	assert_int_equal(mlv_health_process(h), MLV_OK);
	/* The batching promise: one callback per process() call at most. */
	assert_true(r->calls - before <= 1);
}

typedef bool (*cond_fn)(struct mlv_health *h, void *arg);

/* Step until cond holds; false if DEADLINE_MS passed first. */
static bool run_until(struct mlv_health *h, struct recorder *r, cond_fn cond,
		      void *arg)
{
	uint64_t end = mono_ms() + DEADLINE_MS;

	while (!cond(h, arg)) {
		if (mono_ms() > end)
			return false;
		step(h, r);
	}
	return true;
}

struct want {
	const char *vip;
	const char *backend;
	uint64_t checks;           /* at least this many completed checks */
	int up;                    /* -1 any, 0 down, 1 up (the checks' verdict) */
};

static bool pair_reached(struct mlv_health *h, void *arg)
{
	const struct want *w = arg;
	struct mlv_health_status st;

	if (mlv_health_get(h, w->vip, w->backend, &st) != MLV_OK)
		return false;
	return st.checks >= w->checks && (w->up < 0 || st.up == (w->up == 1));
}

static void wait_pair(struct mlv_health *h, struct recorder *r,
		      const char *vip, const char *backend, uint64_t checks,
		      int up)
{
	struct want w = { vip, backend, checks, up };

	if (!run_until(h, r, pair_reached, &w)) {
		struct mlv_health_status st;

		if (mlv_health_get(h, vip, backend, &st) == MLV_OK)
			fail_msg("%s/%s: %llu checks, up %d, last \"%s\"; wanted "
				 "%llu checks, up %d", vip, backend,
				 (unsigned long long)st.checks, st.up,
				 st.last_result[0] ? st.last_result : "-",
				 (unsigned long long)checks, up);
		fail_msg("%s/%s: no status", vip, backend);
	}
}

static struct mlv_health_status status_of(struct mlv_health *h,
					  const char *vip, const char *backend)
{
	struct mlv_health_status st;

	assert_int_equal(mlv_health_get(h, vip, backend, &st), MLV_OK);
	return st;
}

static bool flag_set(struct mlv_health *h, void *arg)
{
	(void)h;
	return atomic_load((atomic_bool *)arg);
}

struct count_at_least {
	atomic_uint *counter;
	unsigned n;
};

static bool counter_reached(struct mlv_health *h, void *arg)
{
	const struct count_at_least *c = arg;

	(void)h;
	return atomic_load(c->counter) >= c->n;
}

/* --------------------------------------------------------------- tests */

static void test_http_text(void **state)
{
	uint16_t status = 0;
	struct health_spec spec = {
		.type = MLV_HEALTH_HTTP, .port = 8080, .path = "/healthz",
		.host = "", .expect_status = 200,
	};
	char req[HEALTH_REQUEST_MAX];

	(void)state;
	assert_int_equal(health_http_parse_status("HTTP/1.1 200 OK\r\n", 17,
						  &status), HTTP_STATUS);
	assert_int_equal(status, 200);
	assert_int_equal(health_http_parse_status("HTTP/1.0 503\r\n", 14,
						  &status), HTTP_STATUS);
	assert_int_equal(status, 503);
	assert_int_equal(health_http_parse_status("HTTP/1.", 7, &status),
			 HTTP_NEED_MORE);
	assert_int_equal(health_http_parse_status("", 0, &status),
			 HTTP_NEED_MORE);
	assert_int_equal(health_http_parse_status("garbage", 7, &status),
			 HTTP_MALFORMED);
	assert_int_equal(health_http_parse_status("HTTP/1.1 2x0 OK", 15,
						  &status), HTTP_MALFORMED);
	assert_int_equal(health_http_parse_status("HTTP/1.1 2000", 13,
						  &status), HTTP_MALFORMED);
	assert_int_equal(health_http_parse_status("http/1.1 200 ", 13,
						  &status), HTTP_MALFORMED);

	assert_true(mlv_ip_parse("10.0.0.1", &spec.address));
	assert_true(health_http_request(&spec, req, sizeof(req)) > 0);
	assert_non_null(strstr(req, "GET /healthz HTTP/1.1\r\n"));
	assert_non_null(strstr(req, "\r\nHost: 10.0.0.1:8080\r\n"));
	assert_non_null(strstr(req, "\r\nConnection: close\r\n"));
	assert_non_null(strstr(req, "\r\n\r\n"));
	spec.port = 80;
	assert_true(mlv_ip_parse("fd00::1", &spec.address));
	assert_true(health_http_request(&spec, req, sizeof(req)) > 0);
	assert_non_null(strstr(req, "\r\nHost: [fd00::1]\r\n"));
	spec.host = "svc.example";
	assert_true(health_http_request(&spec, req, sizeof(req)) > 0);
	assert_non_null(strstr(req, "\r\nHost: svc.example\r\n"));
	/* Too small a buffer is refused, not overrun. */
	assert_int_equal(health_http_request(&spec, req, 20), 0);

	assert_true(health_http_path_ok("/a/b?c=d"));
	assert_false(health_http_path_ok("a"));
	assert_false(health_http_path_ok("/a b"));
	assert_false(health_http_path_ok("/a\r\nX: y"));
	assert_true(health_http_host_ok(""));
	assert_false(health_http_host_ok("a\nb"));
}

static void test_tcp_up(void **state)
{
	struct server *s = srv_new();
	struct listener *l = srv_add(s, SRV_ACCEPT_CLOSE, 0);
	struct mlv_health_config hc = hc_tcp(20, 500, 2, 2);
	struct mlv_config *cfg = cfg_new();
	struct recorder r;
	struct mlv_health *h = engine(&r, MLV_HEALTH_FAIL_OPEN, 0);
	struct mlv_health_status st;
	struct mlv_health_stats stats;
	struct count_at_least acc = { &l->accepted, 3 };

	(void)state;
	srv_start(s);
	cfg_backend(cfg_vip(cfg, "web", l->port, &hc), "b1", "127.0.0.1");
	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
	/* Up from the start: a fresh load balancer serves at once. */
	st = status_of(h, "web", "b1");
	assert_true(st.up);
	assert_false(st.has_result);
	assert_int_equal(st.type, MLV_HEALTH_TCP);
	assert_int_equal(st.port, l->port);
	assert_int_equal(st.shared_by, 1);

	wait_pair(h, &r, "web", "b1", 3, -1);
	assert_true(run_until(h, &r, counter_reached, &acc));
	st = status_of(h, "web", "b1");
	assert_true(st.up);
	assert_true(st.has_result);
	assert_true(st.last_ok);
	assert_string_equal(st.last_result, "connected");
	assert_int_equal(st.failures, 0);
	assert_true(st.successes >= 3);
	assert_int_equal(st.transitions, 0);
	assert_true(mlv_health_is_up(h, "web", "b1"));
	assert_int_equal(r.calls, 0);       /* nothing changed state */
	mlv_health_stats(h, &stats);
	assert_int_equal(stats.n_pairs, 1);
	assert_int_equal(stats.n_probes, 1);
	assert_true(stats.counters[MLV_HEALTH_CTR_CHECKS_OK] >= 3);
	assert_int_equal(stats.counters[MLV_HEALTH_CTR_CHECKS_FAILED], 0);

	mlv_health_destroy(h);
	mlv_config_free(cfg);
	srv_stop(s);
}

static void test_tcp_ipv6(void **state)
{
	uint16_t port = 0;
	int fd = listen_on(AF_INET6, 128, &port);
	struct mlv_health_config hc = hc_tcp(20, 500, 1, 1);
	struct mlv_config *cfg;
	struct recorder r;
	struct mlv_health *h;

	(void)state;
	if (fd < 0)
		skip();   /* no IPv6 on loopback here */
	cfg = cfg_new();
	h = engine(&r, MLV_HEALTH_FAIL_CLOSED, 0);
	cfg_backend(cfg_vip(cfg, "v6", port, &hc), "b1", "::1");
	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
	/* The listener never accepts: the kernel completes the handshake
	 * for a backlog of 128, which is all a tcp check asks for. */
	wait_pair(h, &r, "v6", "b1", 2, 1);
	assert_string_equal(status_of(h, "v6", "b1").last_result, "connected");
	mlv_health_destroy(h);
	mlv_config_free(cfg);
	close(fd);
}

static void test_tcp_refused_down_after_fall(void **state)
{
	struct mlv_health_config hc = hc_tcp(20, 500, 2, 3);
	struct mlv_config *cfg = cfg_new();
	struct recorder r;
	struct mlv_health *h = engine(&r, MLV_HEALTH_FAIL_CLOSED, 0);
	struct mlv_health_status st;
	char want[MLV_HEALTH_REASON_MAX];

	(void)state;
	cfg_backend(cfg_vip(cfg, "web", closed_port(), &hc), "dead",
		    "127.0.0.1");
	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
	wait_pair(h, &r, "web", "dead", 1, 0);

	snprintf(want, sizeof(want), "connect: %s", strerror(ECONNREFUSED));
	assert_int_equal(r.calls, 1);
	assert_int_equal(r.n_events, 1);
	assert_false(r.events[0].up);
	assert_int_equal(r.events[0].consecutive, 3);
	assert_string_equal(r.events[0].reason, want);
	assert_int_equal(r.events[0].n_pairs, 1);
	assert_string_equal(r.events[0].first_vip, "web");
	assert_string_equal(r.events[0].first_backend, "dead");
	assert_non_null(strstr(r.events[0].line, "tcp 127.0.0.1:"));
	assert_non_null(strstr(r.events[0].line,
			       "is down after 3 consecutive failures"));
	assert_non_null(strstr(r.events[0].line, want));
	assert_non_null(strstr(r.events[0].line, "affects web/dead"));
	/* The state was already new when the callback read it. */
	assert_false(r.events[0].st.up);
	assert_int_equal(r.events[0].st.failures, 3);
	assert_int_equal(r.events[0].st.checks, 3);

	st = status_of(h, "web", "dead");
	assert_false(st.up);
	assert_false(st.last_ok);
	assert_int_equal(st.transitions, 1);
	assert_true(st.since_unix_ms > 0);
	/* Fail-closed: the only backend down means the VIP has none. */
	assert_false(mlv_health_is_up(h, "web", "dead"));
	assert_true(st.vip_all_down);
	assert_false(st.effective_up);
	assert_int_equal(r.vip_events_all_down, 1);
	assert_int_equal(r.vip_events_fail_open, 0);

	mlv_health_destroy(h);
	mlv_config_free(cfg);
}

static void test_tcp_timeout_full_backlog(void **state)
{
	uint16_t port = 0;
	/* Backlog 0 holds one finished handshake; with it taken, the kernel
	 * drops further SYNs, so a connect neither succeeds nor fails. */
	int lfd = listen_on(AF_INET, 0, &port);
	int filler = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct mlv_health_config hc = hc_tcp(100, 40, 1, 1);
	struct mlv_config *cfg = cfg_new();
	struct recorder r;
	struct mlv_health *h = engine(&r, MLV_HEALTH_FAIL_OPEN, 0);
	struct mlv_health_status st;

	(void)state;
	assert_true(lfd >= 0 && filler >= 0);
	assert_int_equal(connect(filler, (struct sockaddr *)&sin, sizeof(sin)), 0);
	cfg_backend(cfg_vip(cfg, "web", port, &hc), "stuck", "127.0.0.1");
	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
	wait_pair(h, &r, "web", "stuck", 1, 0);
	st = status_of(h, "web", "stuck");
	assert_string_equal(st.last_result, "timeout after 40ms while connecting");
	assert_int_equal(r.n_events, 1);
	assert_string_equal(r.events[0].reason, st.last_result);
	/* Fail-open: down by its checks, yet kept in the table. */
	assert_true(st.vip_all_down);
	assert_true(st.effective_up);
	assert_true(mlv_health_is_up(h, "web", "stuck"));
	assert_int_equal(r.vip_events_fail_open, 1);

	mlv_health_destroy(h);
	mlv_config_free(cfg);
	close(filler);
	close(lfd);
}

static void test_http_status_and_garbage(void **state)
{
	struct server *s = srv_new();
	struct listener *ok = srv_add(s, SRV_HTTP, 200);
	struct listener *bad = srv_add(s, SRV_HTTP, 503);
	struct listener *junk = srv_add(s, SRV_GARBAGE, 0);
	struct mlv_health_config hc = hc_http(20, 500, 1, 1, "/healthz");
	struct mlv_health_config hc_host = hc;
	struct mlv_config *cfg = cfg_new();
	struct recorder r;
	struct mlv_health *h = engine(&r, MLV_HEALTH_FAIL_CLOSED, 0);
	struct mlv_health_status st;
	struct mlv_vip_config *v;
	char host[64];

	(void)state;
	srv_start(s);
	snprintf(hc_host.host, sizeof(hc_host.host), "svc.example");
	cfg_backend(cfg_vip(cfg, "ok", ok->port, &hc), "b", "127.0.0.1");
	cfg_backend(cfg_vip(cfg, "bad", bad->port, &hc), "b", "127.0.0.1");
	cfg_backend(cfg_vip(cfg, "junk", junk->port, &hc), "b", "127.0.0.1");
	/* health.port overrides the VIP port (which has no listener). */
	hc_host.port = ok->port;
	v = cfg_vip(cfg, "named", closed_port(), &hc_host);
	cfg_backend(v, "b", "127.0.0.1");
	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);

	wait_pair(h, &r, "bad", "b", 1, 0);
	wait_pair(h, &r, "junk", "b", 1, 0);
	wait_pair(h, &r, "ok", "b", 2, 1);
	wait_pair(h, &r, "named", "b", 2, 1);

	st = status_of(h, "ok", "b");
	assert_string_equal(st.last_result, "HTTP 200");
	assert_int_equal(st.transitions, 0);
	st = status_of(h, "bad", "b");
	assert_string_equal(st.last_result, "HTTP 503 (expected 200)");
	st = status_of(h, "junk", "b");
	assert_non_null(strstr(st.last_result, "malformed status line"));
	assert_non_null(strstr(st.last_result, "garbage"));
	assert_string_equal(status_of(h, "named", "b").last_result, "HTTP 200");

	/* What the servers received. The "named" VIP's checks went to the
	 * ok listener too, so read bad's for the default Host header. */
	pthread_mutex_lock(&bad->lock);
	snprintf(host, sizeof(host), "\r\nHost: 127.0.0.1:%u\r\n", bad->port);
	assert_non_null(strstr(bad->last_request, "GET /healthz HTTP/1.1\r\n"));
	assert_non_null(strstr(bad->last_request, host));
	assert_non_null(strstr(bad->last_request, "\r\nConnection: close\r\n"));
	pthread_mutex_unlock(&bad->lock);
	/* Keep stepping until a request with the configured Host arrives. */
	{
		uint64_t end = mono_ms() + DEADLINE_MS;
		bool seen = false;

		while (!seen && mono_ms() < end) {
			step(h, &r);
			pthread_mutex_lock(&ok->lock);
			seen = strstr(ok->last_request,
				      "\r\nHost: svc.example\r\n") != NULL;
			pthread_mutex_unlock(&ok->lock);
		}
		assert_true(seen);
	}

	mlv_health_destroy(h);
	mlv_config_free(cfg);
	srv_stop(s);
}

static void test_http_timeout_and_never_blocks(void **state)
{
	struct server *s = srv_new();
	struct listener *silent = srv_add(s, SRV_SILENT, 0);
	struct listener *silent2 = srv_add(s, SRV_SILENT, 0);
	struct mlv_health_config quick = hc_http(100, 40, 1, 1, "/quick");
	struct mlv_health_config slow = hc_http(20000, 10000, 1, 1, "/slow");
	struct mlv_config *cfg = cfg_new();
	struct recorder r;
	struct mlv_health *h = engine(&r, MLV_HEALTH_FAIL_OPEN, 0);
	struct mlv_health_status st;
	struct count_at_least slow_request = { &silent2->requests, 1 };

	(void)state;
	srv_start(s);
	cfg_backend(cfg_vip(cfg, "quick", silent->port, &quick), "b",
		    "127.0.0.1");
	cfg_backend(cfg_vip(cfg, "slow", silent2->port, &slow), "b",
		    "127.0.0.1");
	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);

	wait_pair(h, &r, "quick", "b", 1, 0);
	st = status_of(h, "quick", "b");
	assert_string_equal(st.last_result,
			    "timeout after 40ms waiting for the status line");

	/* The slow check's request reached its server, and process()
	 * keeps returning while the answer is outstanding: nothing waits
	 * for the 10 s timeout. */
	assert_true(run_until(h, &r, counter_reached, &slow_request));
	for (int i = 0; i < 20; i++)
		step(h, &r);
	st = status_of(h, "slow", "b");
	assert_true(st.in_flight);
	assert_int_equal(st.checks, 0);
	assert_true(st.up);

	mlv_health_destroy(h);
	mlv_config_free(cfg);
	srv_stop(s);
}

static void test_rise_fall_exact(void **state)
{
	struct server *s = srv_new();
	struct listener *l = srv_add(s, SRV_HTTP, 200);
	struct mlv_health_config hc = hc_http(20, 500, 2, 3, "/");
	struct mlv_config *cfg = cfg_new();
	struct recorder r;
	struct mlv_health *h = engine(&r, MLV_HEALTH_FAIL_CLOSED, 0);
	struct mlv_health_status st;
	uint64_t end;

	(void)state;
	srv_start(s);
	cfg_backend(cfg_vip(cfg, "web", l->port, &hc), "b", "127.0.0.1");
	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
	wait_pair(h, &r, "web", "b", 2, 1);

	atomic_store(&l->status, 503);
	/* Up while fewer than `fall` failures in a row; down exactly at it. */
	end = mono_ms() + DEADLINE_MS;
	do {
		step(h, &r);
		st = status_of(h, "web", "b");
		if (st.up)
			assert_true(st.failures < 3);
		else
			assert_true(st.failures >= 3);
	} while (st.up && mono_ms() < end);
	assert_false(st.up);
	assert_int_equal(r.n_events, 1);
	assert_false(r.events[0].up);
	assert_int_equal(r.events[0].consecutive, 3);
	assert_int_equal(r.events[0].st.failures, 3);
	assert_string_equal(r.events[0].reason, "HTTP 503 (expected 200)");

	atomic_store(&l->status, 200);
	end = mono_ms() + DEADLINE_MS;
	do {
		step(h, &r);
		st = status_of(h, "web", "b");
		if (!st.up)
			assert_true(st.successes < 2);
		else
			assert_true(st.successes >= 2);
	} while (!st.up && mono_ms() < end);
	assert_true(st.up);
	assert_int_equal(r.n_events, 2);
	assert_true(r.events[1].up);
	assert_int_equal(r.events[1].consecutive, 2);
	assert_int_equal(r.events[1].st.successes, 2);
	assert_string_equal(r.events[1].reason, "HTTP 200");
	assert_non_null(strstr(r.events[1].line, "http://127.0.0.1:"));
	assert_non_null(strstr(r.events[1].line,
			       "/ is up after 2 consecutive successes (HTTP 200)"));
	assert_int_equal(st.transitions, 2);

	mlv_health_destroy(h);
	mlv_config_free(cfg);
	srv_stop(s);
}

static void test_sync_keeps_state(void **state)
{
	struct server *s = srv_new();
	struct listener *live = srv_add(s, SRV_ACCEPT_CLOSE, 0);
	uint16_t dead_port = closed_port();
	struct mlv_health_config hc = hc_tcp(20, 500, 2, 1);
	struct mlv_health_config hc_dead = hc;
	struct mlv_config *cfg1 = cfg_new(), *cfg2 = cfg_new(),
			  *cfg3 = cfg_new(), *cfg4 = cfg_new(),
			  *empty = cfg_new();
	struct mlv_vip_config *v;
	struct recorder r;
	struct mlv_health *h = engine(&r, MLV_HEALTH_FAIL_CLOSED, 0);
	struct mlv_health_status st;
	struct mlv_health_stats stats;
	uint64_t dead_checks;
	bool changed = true;

	(void)state;
	srv_start(s);
	hc_dead.port = dead_port;
	/* cfg1: VIP a (live on the VIP port), VIP d (dead via health.port). */
	cfg_backend(cfg_vip(cfg1, "a", live->port, &hc), "live", "127.0.0.1");
	cfg_backend(cfg_vip(cfg1, "d", live->port, &hc_dead), "dead",
		    "127.0.0.1");
	/* cfg2 = cfg1 + VIP b whose backend is the same target as a/live. */
	cfg_backend(cfg_vip(cfg2, "a", live->port, &hc), "live", "127.0.0.1");
	cfg_backend(cfg_vip(cfg2, "d", live->port, &hc_dead), "dead",
		    "127.0.0.1");
	cfg_backend(cfg_vip(cfg2, "b", live->port, &hc), "x", "127.0.0.1");
	/* cfg3: a/live removed; d/dead with a new interval (a new spec). */
	hc_dead.interval_ms = 30;
	cfg_backend(cfg_vip(cfg3, "d", live->port, &hc_dead), "dead",
		    "127.0.0.1");
	cfg_backend(cfg_vip(cfg3, "b", live->port, &hc), "x", "127.0.0.1");
	/* cfg4: d/dead becomes a `none` check: up by definition. */
	hc_dead.type = MLV_HEALTH_NONE;
	v = cfg_vip(cfg4, "d", live->port, &hc_dead);
	cfg_backend(v, "dead", "127.0.0.1");
	cfg_backend(cfg_vip(cfg4, "b", live->port, &hc), "x", "127.0.0.1");

	assert_int_equal(mlv_health_sync(h, cfg1, &changed), MLV_OK);
	assert_false(changed);     /* new pairs start up, as unknown ones answer */
	wait_pair(h, &r, "d", "dead", 1, 0);
	wait_pair(h, &r, "a", "live", 2, 1);
	dead_checks = status_of(h, "d", "dead").checks;

	assert_int_equal(mlv_health_sync(h, cfg2, &changed), MLV_OK);
	assert_false(changed);
	st = status_of(h, "d", "dead");
	assert_false(st.up);                       /* state kept */
	assert_true(st.checks >= dead_checks);     /* counters kept */
	assert_int_equal(st.transitions, 1);
	st = status_of(h, "b", "x");
	assert_int_equal(st.shared_by, 2);         /* joined a/live's probe */
	assert_true(st.checks >= 2);
	mlv_health_stats(h, &stats);
	assert_int_equal(stats.n_pairs, 3);
	assert_int_equal(stats.n_probes, 2);
	assert_int_equal(stats.n_vips, 3);

	assert_int_equal(mlv_health_sync(h, cfg3, &changed), MLV_OK);
	assert_false(changed);
	assert_int_equal(mlv_health_get(h, "a", "live", &st), MLV_E_NOT_FOUND);
	assert_int_equal(mlv_health_vip_get(h, "a", &(struct mlv_health_vip_status){ 0 }),
			 MLV_E_NOT_FOUND);
	st = status_of(h, "d", "dead");
	assert_false(st.up);              /* new spec, known-down backend */
	assert_int_equal(st.checks, 0);   /* a new probe counts afresh */
	assert_int_equal(status_of(h, "b", "x").shared_by, 1);
	wait_pair(h, &r, "d", "dead", 1, 0);

	assert_int_equal(mlv_health_sync(h, cfg4, &changed), MLV_OK);
	assert_true(changed);             /* d/dead now answers up */
	st = status_of(h, "d", "dead");
	assert_true(st.up);
	assert_int_equal(st.type, MLV_HEALTH_NONE);
	assert_true(mlv_health_is_up(h, "d", "dead"));

	assert_int_equal(mlv_health_sync(h, empty, &changed), MLV_OK);
	mlv_health_stats(h, &stats);
	assert_int_equal(stats.n_pairs, 0);
	assert_int_equal(stats.n_probes, 0);
	assert_int_equal(stats.n_vips, 0);
	assert_int_equal(stats.in_flight, 0);
	assert_true(mlv_health_is_up(h, "b", "x"));   /* unknown: up */

	mlv_health_destroy(h);
	mlv_config_free(cfg1);
	mlv_config_free(cfg2);
	mlv_config_free(cfg3);
	mlv_config_free(cfg4);
	mlv_config_free(empty);
	srv_stop(s);
}

#define SHARED_VIPS 200

static bool shared_down_reported(struct mlv_health *h, void *arg)
{
	struct recorder *r = arg;

	(void)h;
	return r->n_events > 0;
}

static void test_shared_backend_probed_once(void **state)
{
	struct server *s = srv_new();
	struct listener *shared = srv_add(s, SRV_ACCEPT_CLOSE, 0);
	struct listener *other = srv_add(s, SRV_ACCEPT_CLOSE, 0);
	struct mlv_health_config hc = hc_tcp(20, 500, 2, 2);
	struct mlv_config *cfg = cfg_new();
	struct recorder r;
	struct mlv_health *h = engine(&r, MLV_HEALTH_FAIL_CLOSED, 0);
	struct mlv_health_status st;
	struct mlv_health_stats stats;
	unsigned accepted;

	(void)state;
	srv_start(s);
	for (int i = 0; i < SHARED_VIPS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "vip-%03d", i);
		/* The same address, port and check spec in every VIP. */
		cfg_backend(cfg_vip(cfg, name, shared->port, &hc), "shared",
			    "127.0.0.1");
	}
	cfg_backend(cfg_vip(cfg, "elsewhere", other->port, &hc), "o",
		    "127.0.0.1");
	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
	mlv_health_stats(h, &stats);
	assert_int_equal(stats.n_pairs, SHARED_VIPS + 1);
	assert_int_equal(stats.n_probes, 2);

	wait_pair(h, &r, "vip-000", "shared", 5, 1);
	st = status_of(h, "vip-000", "shared");
	accepted = atomic_load(&shared->accepted);
	/* One connection per check (plus one possibly in flight), not one
	 * per VIP. */
	assert_true(accepted <= st.checks + 1);
	assert_int_equal(st.shared_by, SHARED_VIPS);
	for (int i = 0; i < SHARED_VIPS; i += 37) {
		char name[32];

		snprintf(name, sizeof(name), "vip-%03d", i);
		assert_int_equal(status_of(h, name, "shared").checks, st.checks);
	}

	/* The shared backend fails: one report, every pair in it. */
	atomic_store(&shared->close_req, true);
	srv_poke(s);
	assert_true(run_until(h, &r, flag_set, &shared->closed));
	assert_true(run_until(h, &r, shared_down_reported, &r));
	assert_int_equal(r.calls, 1);
	assert_int_equal(r.n_events, 1);
	assert_false(r.events[0].up);
	assert_int_equal(r.events[0].n_pairs, SHARED_VIPS);
	assert_int_equal(r.events[0].n_distinct_vips, SHARED_VIPS);
	assert_non_null(strstr(r.events[0].line, "/shared and 199 more"));
	for (int i = 0; i < SHARED_VIPS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "vip-%03d", i);
		assert_false(mlv_health_is_up(h, name, "shared"));
	}
	/* Each of those VIPs lost its only backend: reported in the same
	 * callback. */
	assert_int_equal(r.last_call_vip_events, SHARED_VIPS);
	assert_int_equal(r.vip_events_all_down, SHARED_VIPS);
	assert_true(mlv_health_is_up(h, "elsewhere", "o"));

	mlv_health_destroy(h);
	mlv_config_free(cfg);
	srv_stop(s);
}

#define GATED_PROBES 10

static void test_batch_one_callback(void **state)
{
	struct server *s = srv_new();
	struct listener *g = srv_add(s, SRV_GATED, 503);
	struct mlv_config *cfg = cfg_new();
	struct recorder r;
	struct mlv_health *h = engine(&r, MLV_HEALTH_FAIL_OPEN, 0);
	struct count_at_least held = { &g->requests, GATED_PROBES };
	struct count_at_least answered = { &s->gated_answered, GATED_PROBES };
	struct pollfd pfd;

	(void)state;
	srv_start(s);
	for (int i = 0; i < GATED_PROBES; i++) {
		char name[32], path[32];
		struct mlv_health_config hc;

		snprintf(name, sizeof(name), "v%d", i);
		snprintf(path, sizeof(path), "/p%d", i);   /* distinct probes */
		hc = hc_http(60000, 30000, 1, 1, path);
		cfg_backend(cfg_vip(cfg, name, g->port, &hc), "b", "127.0.0.1");
	}
	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
	assert_true(run_until(h, &r, counter_reached, &held));
	assert_int_equal(r.calls, 0);

	/* All ten answers are in their sockets before the next process(). */
	atomic_store(&s->gate_open, true);
	srv_poke(s);
	{
		/* Not stepping the engine meanwhile: waiting on the server. */
		uint64_t end = mono_ms() + DEADLINE_MS;

		while (!counter_reached(h, &answered) && mono_ms() < end)
			usleep(1000);
		assert_true(counter_reached(h, &answered));
	}
	pfd = (struct pollfd){ .fd = mlv_health_fd(h), .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, DEADLINE_MS), 1);
	assert_int_equal(mlv_health_process(h), MLV_OK);

	assert_int_equal(r.calls, 1);
	assert_int_equal(r.last_call_events, GATED_PROBES);
	for (int i = 0; i < GATED_PROBES; i++) {
		assert_false(r.events[i].up);
		assert_string_equal(r.events[i].reason, "HTTP 503 (expected 200)");
		assert_int_equal(r.events[i].n_pairs, 1);
	}
	/* Each VIP had one backend: all ten went all-down and fail open. */
	assert_int_equal(r.last_call_vip_events, GATED_PROBES);
	assert_int_equal(r.vip_events_fail_open, GATED_PROBES);
	assert_true(mlv_health_is_up(h, "v3", "b"));
	assert_false(status_of(h, "v3", "b").up);

	mlv_health_destroy(h);
	mlv_config_free(cfg);
	srv_stop(s);
}

static bool all_checked(struct mlv_health *h, void *arg)
{
	const int *n = arg;

	for (int i = 0; i < *n; i++) {
		char name[16];
		struct mlv_health_status st;

		snprintf(name, sizeof(name), "v%d", i);
		if (mlv_health_get(h, name, "b", &st) || st.checks < 1)
			return false;
	}
	return true;
}

static void test_max_in_flight(void **state)
{
	struct server *s = srv_new();
	struct listener *silent = srv_add(s, SRV_SILENT, 0);
	struct mlv_config *cfg = cfg_new();
	struct recorder r;
	struct mlv_health *h = engine(&r, MLV_HEALTH_FAIL_OPEN, 2);
	struct mlv_health_stats stats;
	uint64_t end = mono_ms() + DEADLINE_MS;
	int n = 6;

	(void)state;
	srv_start(s);
	for (int i = 0; i < n; i++) {
		char name[16], path[16];
		struct mlv_health_config hc;

		snprintf(name, sizeof(name), "v%d", i);
		snprintf(path, sizeof(path), "/p%d", i);
		/* every first check within 100 ms, each holding its slot
		 * 500 ms: more are due than the two slots */
		hc = hc_http(100, 500, 1, 1, path);
		cfg_backend(cfg_vip(cfg, name, silent->port, &hc), "b",
			    "127.0.0.1");
	}
	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
	while (!all_checked(h, &n) && mono_ms() < end) {
		step(h, &r);
		mlv_health_stats(h, &stats);
		assert_true(stats.in_flight <= 2);
	}
	assert_true(all_checked(h, &n));
	mlv_health_stats(h, &stats);
	assert_int_equal(stats.max_in_flight, 2);
	assert_true(stats.counters[MLV_HEALTH_CTR_DEFERRED] > 0);

	mlv_health_destroy(h);
	mlv_config_free(cfg);
	srv_stop(s);
}

static void test_none_sends_nothing(void **state)
{
	struct server *s = srv_new();
	struct listener *l = srv_add(s, SRV_ACCEPT_CLOSE, 0);
	struct listener *watch = srv_add(s, SRV_ACCEPT_CLOSE, 0);
	struct mlv_health_config none = { .type = MLV_HEALTH_NONE };
	struct mlv_health_config hc = hc_tcp(20, 500, 1, 1);
	struct mlv_config *cfg = cfg_new();
	struct recorder r;
	struct mlv_health *h = engine(&r, MLV_HEALTH_FAIL_CLOSED, 0);
	struct mlv_health_status st;
	struct mlv_health_stats stats;

	(void)state;
	srv_start(s);
	cfg_backend(cfg_vip(cfg, "dns", watch->port, &none), "b", "127.0.0.1");
	cfg_backend(cfg_vip(cfg, "web", l->port, &hc), "b", "127.0.0.1");
	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
	/* Let the tcp check run a few times: time passes for both. */
	wait_pair(h, &r, "web", "b", 3, 1);
	st = status_of(h, "dns", "b");
	assert_int_equal(st.type, MLV_HEALTH_NONE);
	assert_true(st.up);
	assert_false(st.in_flight);
	assert_int_equal(st.checks, 0);
	assert_int_equal(atomic_load(&watch->accepted), 0);
	mlv_health_stats(h, &stats);
	assert_int_equal(stats.n_probes, 2);
	assert_int_equal(stats.counters[MLV_HEALTH_CTR_CHECKS_STARTED],
			 stats.counters[MLV_HEALTH_CTR_CHECKS_OK] +
			 stats.counters[MLV_HEALTH_CTR_CHECKS_FAILED] +
			 stats.in_flight);

	mlv_health_destroy(h);
	mlv_config_free(cfg);
	srv_stop(s);
}

static void test_bad_input(void **state)
{
	struct mlv_health_options o = { .all_down = (enum mlv_health_all_down)7 };
	struct mlv_health_config hc = hc_http(20, 10, 1, 1, "/");
	struct mlv_config *good = cfg_new(), *bad = cfg_new();
	struct mlv_vip_config *v;
	struct mlv_health *h = NULL;
	struct recorder r;
	struct mlv_health_status st;
	char err[256];
	bool changed = true;

	(void)state;
	assert_int_equal(mlv_health_create(NULL, &h), MLV_E_INVAL);
	assert_int_equal(mlv_health_create(&o, &h), MLV_E_INVAL);
	assert_null(h);
	assert_int_equal(mlv_health_sync(NULL, good, NULL), MLV_E_INVAL);
	assert_int_equal(mlv_health_process(NULL), MLV_E_INVAL);
	assert_int_equal(mlv_health_fd(NULL), -1);
	mlv_health_destroy(NULL);

	h = engine(&r, MLV_HEALTH_FAIL_OPEN, 0);
	assert_int_equal(mlv_health_sync(h, NULL, NULL), MLV_E_INVAL);
	assert_int_equal(mlv_health_get(h, NULL, "b", &st), MLV_E_INVAL);
	assert_int_equal(mlv_health_get(h, "x", "y", &st), MLV_E_NOT_FOUND);
	assert_true(mlv_health_is_up(h, "x", "y"));
	assert_true(mlv_health_is_up(NULL, "x", "y"));

	cfg_backend(cfg_vip(good, "web", 80, &hc), "b", "127.0.0.1");
	assert_int_equal(mlv_health_sync(h, good, NULL), MLV_OK);

	/* Each bad spec: rejected whole, with a sentence naming the pair,
	 * and the engine keeps its pairs. */
	struct {
		const char *says;
	} cases[] = {
		{ .says = "interval" },
		{ .says = "rise and fall" },
		{ .says = "health path" },
		{ .says = "health host" },
		{ .says = "expect" },
		{ .says = "type" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mlv_health_config b = hc;

		switch (i) {
		case 0: b.interval_ms = 0; break;
		case 1: b.fall = 0; break;
		case 2: snprintf(b.path, sizeof(b.path), "/a b"); break;
		case 3: snprintf(b.host, sizeof(b.host), "x\r\nEvil: 1"); break;
		case 4: b.expect_status = 42; break;
		case 5: b.type = (enum mlv_health_type)9; break;
		}
		mlv_config_free(bad);
		bad = cfg_new();
		cfg_backend(cfg_vip(bad, "web", 80, &b), "b", "127.0.0.1");
		assert_int_equal(mlv_health_check_config(bad, err, sizeof(err)),
				 MLV_E_INVAL);
		assert_non_null(strstr(err, "VIP 'web' backend 'b'"));
		assert_non_null(strstr(err, cases[i].says));
		assert_int_equal(mlv_health_sync(h, bad, &changed), MLV_E_INVAL);
		assert_false(changed);
		assert_non_null(strstr(mlv_health_error(h), cases[i].says));
		assert_int_equal(mlv_health_get(h, "web", "b", &st), MLV_OK);
		assert_int_equal(st.type, MLV_HEALTH_HTTP);
	}

	/* Duplicates. */
	mlv_config_free(bad);
	bad = cfg_new();
	v = cfg_vip(bad, "web", 80, &hc);
	cfg_backend(v, "b", "127.0.0.1");
	cfg_backend(v, "b", "127.0.0.2");
	assert_int_equal(mlv_health_sync(h, bad, NULL), MLV_E_INVAL);
	assert_non_null(strstr(mlv_health_error(h), "appears twice"));
	mlv_config_free(bad);
	bad = cfg_new();
	cfg_backend(cfg_vip(bad, "web", 80, &hc), "a", "127.0.0.1");
	cfg_backend(cfg_vip(bad, "web", 81, &hc), "b", "127.0.0.1");
	assert_int_equal(mlv_health_sync(h, bad, NULL), MLV_E_INVAL);
	assert_non_null(strstr(mlv_health_error(h), "VIP 'web' appears twice"));
	/* No port at all. */
	mlv_config_free(bad);
	bad = cfg_new();
	cfg_backend(cfg_vip(bad, "web", 0, &hc), "a", "127.0.0.1");
	assert_int_equal(mlv_health_check_config(bad, NULL, 0), MLV_E_INVAL);
	/* A backend without an address. */
	mlv_config_free(bad);
	bad = cfg_new();
	v = cfg_vip(bad, "web", 80, &hc);
	cfg_backend(v, "a", "127.0.0.1");
	v->backends[0].address.family = MLV_AF_NONE;
	assert_int_equal(mlv_health_check_config(bad, err, sizeof(err)),
			 MLV_E_INVAL);
	assert_non_null(strstr(err, "no address"));

	assert_int_equal(mlv_health_get(h, "web", "b", &st), MLV_OK);
	mlv_health_destroy(h);
	mlv_config_free(good);
	mlv_config_free(bad);
}

/* ------------------------------------------- a busy control thread */

/* The control thread busy elsewhere (a large table build) until
 * mono_ms() reaches until_ms: the engine is not called meanwhile. This
 * blocking delay is the condition under test; callers bound it. */
static void busy_until(uint64_t until_ms)
{
	uint64_t now;

	while ((now = mono_ms()) < until_ms)
		usleep((useconds_t)((until_ms - now) * 1000));
}

/* Poll cond while not calling the engine (its answers pile up unread). */
static bool wait_without_engine(cond_fn cond, void *arg)
{
	uint64_t end = mono_ms() + DEADLINE_MS;

	while (!cond(NULL, arg)) {
		if (mono_ms() > end)
			return false;
		usleep(1000);
	}
	return true;
}

/* More probes than one epoll_wait batch of the engine reads (64). */
#define BUSY_PROBES 100
#define BUSY_TIMEOUT_MS 200

/* BUSY_PROBES VIPs "v<i>", each with backend "b" on 127.0.0.1:port. The
 * intervals differ, so each pair is its own probe; 60 s long, so each
 * probe runs exactly one check during a test. */
static void cfg_busy(struct mlv_config *cfg, enum mlv_health_type type,
		     uint16_t port)
{
	for (int i = 0; i < BUSY_PROBES; i++) {
		char name[16];
		struct mlv_health_config hc =
			hc_tcp(60000 + (uint32_t)i, BUSY_TIMEOUT_MS, 1, 1);

		hc.type = type;
		snprintf(name, sizeof(name), "v%d", i);
		cfg_backend(cfg_vip(cfg, name, port, &hc), "b", "127.0.0.1");
	}
}

/* Let every first check of a fresh sync fall due, then start them all in
 * one process() call, so that all are in flight together. Returns a time
 * no earlier than their starts: each deadline is at most the timeout
 * after it. */
static uint64_t start_all_together(struct mlv_health *h, uint32_t n)
{
	struct mlv_health_stats stats;

	busy_until(mono_ms() + HEALTH_FIRST_CHECK_SPREAD_MS + 1);
	assert_int_equal(mlv_health_process(h), MLV_OK);
	mlv_health_stats(h, &stats);
	assert_int_equal(stats.in_flight, n);
	return mono_ms() + 1;
}

static bool busy_all_done(struct mlv_health *h, void *arg)
{
	(void)arg;
	for (int i = 0; i < BUSY_PROBES; i++) {
		char name[16];
		struct mlv_health_status st;

		snprintf(name, sizeof(name), "v%d", i);
		if (mlv_health_get(h, name, "b", &st) || st.checks < 1)
			return false;
	}
	return true;
}

/* Every probe ran one check, and it succeeded with `result`. */
static void assert_busy_all_ok(struct mlv_health *h, const char *result)
{
	struct mlv_health_stats stats;

	for (int i = 0; i < BUSY_PROBES; i++) {
		char name[16];
		struct mlv_health_status st;

		snprintf(name, sizeof(name), "v%d", i);
		st = status_of(h, name, "b");
		assert_int_equal(st.checks, 1);
		assert_string_equal(st.last_result, result);
		assert_true(st.last_ok);
		assert_true(st.up);
	}
	mlv_health_stats(h, &stats);
	assert_int_equal(stats.counters[MLV_HEALTH_CTR_CHECKS_OK], BUSY_PROBES);
	assert_int_equal(stats.counters[MLV_HEALTH_CTR_CHECKS_FAILED], 0);
}

/* The engine, config and server of one busy-thread test: BUSY_PROBES
 * checks of one type against one listener of s. */
struct busy_case {
	struct server *s;
	struct mlv_config *cfg;
	struct recorder r;
	struct mlv_health *h;
};

static void busy_case_start(struct busy_case *c, struct server *s,
			    enum mlv_health_type type, uint16_t port)
{
	c->s = s;
	c->cfg = cfg_new();
	c->h = engine(&c->r, MLV_HEALTH_FAIL_OPEN, 2 * BUSY_PROBES);
	srv_start(s);
	cfg_busy(c->cfg, type, port);
	assert_int_equal(mlv_health_sync(c->h, c->cfg, NULL), MLV_OK);
}

static void busy_case_end(struct busy_case *c)
{
	mlv_health_destroy(c->h);
	mlv_config_free(c->cfg);
	srv_stop(c->s);
}

static void test_busy_thread_tcp_connects_count(void **state)
{
	struct server *s = srv_new();
	struct listener *l = srv_add(s, SRV_ACCEPT_CLOSE, 0);
	struct count_at_least handshakes = { &l->accepted, BUSY_PROBES };
	struct busy_case c;
	uint64_t started;

	(void)state;
	busy_case_start(&c, s, MLV_HEALTH_TCP, l->port);
	started = start_all_together(c.h, BUSY_PROBES);
	/* Every handshake completes while the control thread is busy, and
	 * stays busy past every deadline. */
	assert_true(wait_without_engine(counter_reached, &handshakes));
	busy_until(started + BUSY_TIMEOUT_MS + 10);

	/* One call: each connect that finished counts as finished, however
	 * many are waiting to be read. */
	assert_int_equal(mlv_health_process(c.h), MLV_OK);
	assert_busy_all_ok(c.h, "connected");
	assert_int_equal(c.r.calls, 0);

	busy_case_end(&c);
}

static void test_busy_thread_http_connects_then_answers(void **state)
{
	struct server *s = srv_new();
	struct listener *l = srv_add(s, SRV_HTTP, 200);
	struct count_at_least handshakes = { &l->accepted, BUSY_PROBES };
	struct busy_case c;
	uint64_t started;

	(void)state;
	busy_case_start(&c, s, MLV_HEALTH_HTTP, l->port);
	started = start_all_together(c.h, BUSY_PROBES);
	assert_true(wait_without_engine(counter_reached, &handshakes));
	busy_until(started + BUSY_TIMEOUT_MS + 10);

	/* The connects were in time; the requests leave only now, past the
	 * deadlines. The delay was the engine's, so the backends still get
	 * to answer, and do. */
	assert_true(run_until(c.h, &c.r, busy_all_done, NULL));
	assert_busy_all_ok(c.h, "HTTP 200");
	assert_int_equal(c.r.calls, 0);
	assert_int_equal(atomic_load(&l->requests), BUSY_PROBES);

	busy_case_end(&c);
}

static void test_busy_thread_http_answers_waiting(void **state)
{
	struct server *s = srv_new();
	struct listener *g = srv_add(s, SRV_GATED, 200);
	struct count_at_least held = { &g->requests, BUSY_PROBES };
	struct count_at_least answered = { &s->gated_answered, BUSY_PROBES };
	struct busy_case c;
	uint64_t sent;

	(void)state;
	busy_case_start(&c, s, MLV_HEALTH_HTTP, g->port);
	start_all_together(c.h, BUSY_PROBES);
	assert_true(run_until(c.h, &c.r, counter_reached, &held));
	assert_int_equal(c.r.calls, 0);
	/* Every request is out: each deadline is at most a timeout away. */
	sent = mono_ms() + 1;

	/* Every answer arrives while the control thread is busy past every
	 * deadline. */
	atomic_store(&s->gate_open, true);
	srv_poke(s);
	assert_true(wait_without_engine(counter_reached, &answered));
	busy_until(sent + BUSY_TIMEOUT_MS + 10);

	assert_int_equal(mlv_health_process(c.h), MLV_OK);
	assert_busy_all_ok(c.h, "HTTP 200");
	assert_int_equal(c.r.calls, 0);

	busy_case_end(&c);
}

#define LATE_PROBES 20

static bool late_all_checked(struct mlv_health *h, void *arg)
{
	const uint64_t *at_least = arg;

	for (int i = 0; i < LATE_PROBES; i++) {
		char name[16];
		struct mlv_health_status st;

		snprintf(name, sizeof(name), "v%d", i);
		if (mlv_health_get(h, name, "b", &st) ||
		    st.checks < at_least[i])
			return false;
	}
	return true;
}

static void test_busy_thread_missed_intervals(void **state)
{
	struct server *s = srv_new();
	struct listener *l = srv_add(s, SRV_ACCEPT_CLOSE, 0);
	struct mlv_config *cfg = cfg_new();
	struct recorder r;
	struct mlv_health *h = engine(&r, MLV_HEALTH_FAIL_OPEN, 0);
	struct mlv_health_stats before, after;
	uint64_t want[LATE_PROBES];

	(void)state;
	srv_start(s);
	for (int i = 0; i < LATE_PROBES; i++) {
		char name[16];
		struct mlv_health_config hc = hc_tcp(40 + (uint32_t)i, 20, 1, 1);

		snprintf(name, sizeof(name), "v%d", i);
		cfg_backend(cfg_vip(cfg, name, l->port, &hc), "b", "127.0.0.1");
		want[i] = 2;
	}
	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
	assert_true(run_until(h, &r, late_all_checked, want));

	/* Busy for ten intervals of the slowest probe: every probe misses
	 * several checks. */
	mlv_health_stats(h, &before);
	busy_until(mono_ms() + 10 * (40 + LATE_PROBES));
	assert_int_equal(mlv_health_process(h), MLV_OK);
	mlv_health_stats(h, &after);
	/* The probes that all fell due during the stall do not all start in
	 * the same instant. */
	assert_true(after.counters[MLV_HEALTH_CTR_CHECKS_STARTED] -
		    before.counters[MLV_HEALTH_CTR_CHECKS_STARTED] <
		    LATE_PROBES);

	/* Each runs again, and nothing missed counted as a failure. */
	for (int i = 0; i < LATE_PROBES; i++) {
		char name[16];

		snprintf(name, sizeof(name), "v%d", i);
		want[i] = status_of(h, name, "b").checks + 1;
	}
	assert_true(run_until(h, &r, late_all_checked, want));
	mlv_health_stats(h, &after);
	assert_int_equal(after.counters[MLV_HEALTH_CTR_CHECKS_FAILED], 0);
	assert_int_equal(after.counters[MLV_HEALTH_CTR_TRANSITIONS], 0);
	assert_int_equal(r.calls, 0);

	mlv_health_destroy(h);
	mlv_config_free(cfg);
	srv_stop(s);
}

/* ------------------------------------------- look-ups by config position */

/* cfg's (v, i) answers as the look-up by name does. */
static void assert_positions_agree(const struct mlv_health *h,
				   const struct mlv_config *cfg)
{
	for (uint32_t v = 0; v < cfg->n_vips; v++) {
		const struct mlv_vip_config *vc = &cfg->vips[v];

		for (uint32_t i = 0; i < vc->n_backends; i++)
			assert_int_equal(
				mlv_health_is_up_at(h, v, i, vc->name,
						    vc->backends[i].name),
				mlv_health_is_up(h, vc->name,
						 vc->backends[i].name));
	}
}

/* The index holds cfg's pairs in cfg's order: the fast path is taken. */
static void assert_index_mirrors(const struct mlv_health *h,
				 const struct mlv_config *cfg)
{
	assert_int_equal(h->index.n_vips, cfg->n_vips);
	for (uint32_t v = 0; v < cfg->n_vips; v++) {
		const struct mlv_vip_config *vc = &cfg->vips[v];

		assert_int_equal(h->index.first[v + 1] - h->index.first[v],
				 vc->n_backends);
		for (uint32_t i = 0; i < vc->n_backends; i++) {
			const struct health_pair *p =
				h->index.pairs[h->index.first[v] + i];

			assert_non_null(p);
			assert_string_equal(p->vip->name, vc->name);
			assert_string_equal(p->backend, vc->backends[i].name);
		}
	}
}

/* mlv_health_is_up_at: right by position after a sync, rebuilt by the
 * next sync (reordered VIPs and backends), kept by a rejected one,
 * emptied by an empty config; and right whatever the position given
 * (another config's, out of range, or UINT32_MAX for unknown). */
static void test_is_up_at_positions(void **state)
{
	struct mlv_health_config none = { .type = MLV_HEALTH_NONE };
	struct mlv_health_config hc = hc_tcp(20, 500, 1, 1);
	struct mlv_config *a = cfg_new(), *b = cfg_new(), *bad = cfg_new();
	struct mlv_config *empty = cfg_new();
	uint16_t port = closed_port();
	struct mlv_vip_config *v;
	struct recorder r;
	struct mlv_health *h = engine(&r, MLV_HEALTH_FAIL_CLOSED, 0);

	(void)state;
	/* a: live (no checks: up) then dead (refused: down) */
	v = cfg_vip(a, "live", 80, &none);
	cfg_backend(v, "b1", "127.0.0.1");
	cfg_backend(v, "b2", "127.0.0.2");
	v = cfg_vip(a, "dead", port, &hc);
	cfg_backend(v, "b1", "127.0.0.1");
	cfg_backend(v, "b2", "127.0.0.2");
	/* b: the same pairs, VIPs and backends in the other order */
	v = cfg_vip(b, "dead", port, &hc);
	cfg_backend(v, "b2", "127.0.0.2");
	cfg_backend(v, "b1", "127.0.0.1");
	v = cfg_vip(b, "live", 80, &none);
	cfg_backend(v, "b2", "127.0.0.2");
	cfg_backend(v, "b1", "127.0.0.1");
	/* bad: a duplicate VIP name, which sync rejects */
	cfg_backend(cfg_vip(bad, "x", 80, &none), "b1", "127.0.0.1");
	cfg_backend(cfg_vip(bad, "x", 80, &none), "b1", "127.0.0.1");

	/* before any sync: every pair is up, at any position */
	assert_true(mlv_health_is_up_at(h, 1, 0, "dead", "b1"));

	assert_int_equal(mlv_health_sync(h, a, NULL), MLV_OK);
	assert_index_mirrors(h, a);
	wait_pair(h, &r, "dead", "b1", 1, 0);
	wait_pair(h, &r, "dead", "b2", 1, 0);
	assert_true(mlv_health_is_up_at(h, 0, 0, "live", "b1"));
	assert_true(mlv_health_is_up_at(h, 0, 1, "live", "b2"));
	assert_false(mlv_health_is_up_at(h, 1, 0, "dead", "b1"));
	assert_false(mlv_health_is_up_at(h, 1, 1, "dead", "b2"));
	assert_positions_agree(h, a);
	/* wrong positions: the names decide */
	assert_false(mlv_health_is_up_at(h, 0, 0, "dead", "b1"));
	assert_true(mlv_health_is_up_at(h, 1, 1, "live", "b2"));
	assert_false(mlv_health_is_up_at(h, 7, 9, "dead", "b2"));
	assert_false(mlv_health_is_up_at(h, UINT32_MAX, UINT32_MAX, "dead",
					 "b1"));
	assert_true(mlv_health_is_up_at(h, 1, 0, "gone", "b1"));
	assert_true(mlv_health_is_up_at(h, 1, 0, "dead", "b3"));
	assert_true(mlv_health_is_up_at(NULL, 1, 0, "dead", "b1"));
	assert_true(mlv_health_is_up_at(h, 1, 0, NULL, "b1"));

	/* the next sync rebuilds the index for its config; states stay */
	assert_int_equal(mlv_health_sync(h, b, NULL), MLV_OK);
	assert_index_mirrors(h, b);
	assert_false(mlv_health_is_up_at(h, 0, 0, "dead", "b2"));
	assert_false(mlv_health_is_up_at(h, 0, 1, "dead", "b1"));
	assert_true(mlv_health_is_up_at(h, 1, 0, "live", "b2"));
	assert_positions_agree(h, b);
	/* positions of the old config still answer right */
	assert_positions_agree(h, a);

	/* a rejected config changes nothing, the index included */
	assert_int_equal(mlv_health_sync(h, bad, NULL), MLV_E_INVAL);
	assert_index_mirrors(h, b);
	assert_false(mlv_health_is_up_at(h, 0, 1, "dead", "b1"));

	/* no pairs left: unknown pairs are up */
	assert_int_equal(mlv_health_sync(h, empty, NULL), MLV_OK);
	assert_int_equal(h->index.n_vips, 0);
	assert_true(mlv_health_is_up_at(h, 0, 1, "dead", "b1"));

	mlv_health_destroy(h);
	mlv_config_free(a);
	mlv_config_free(b);
	mlv_config_free(bad);
	mlv_config_free(empty);
}

/* ------------------------------------------------------ udp and dns */

/* A UDP responder on loopback, on a thread of its own: echo answers
 * "be1 " + the datagram; dns answers with the query's id and rcode (and,
 * first, once with a wrong id, which the check must skip); silent reads
 * and never answers. */
enum udp_mode { UDP_ECHO, UDP_DNS, UDP_SILENT };

struct udp_srv {
	int fd;
	uint16_t port;
	enum udp_mode mode;
	uint8_t rcode;
	atomic_bool stop;
	pthread_t thread;
};

static void *udp_main(void *arg)
{
	struct udp_srv *u = arg;
	uint8_t buf[512], out[520];

	while (!atomic_load(&u->stop)) {
		struct pollfd pfd = { .fd = u->fd, .events = POLLIN };
		struct sockaddr_storage from;
		socklen_t flen = sizeof(from);
		ssize_t n;

		if (poll(&pfd, 1, 20) <= 0)
			continue;
		n = recvfrom(u->fd, buf, sizeof(buf), 0,
			     (struct sockaddr *)&from, &flen);
		if (n < 0 || u->mode == UDP_SILENT)
			continue;
		if (u->mode == UDP_ECHO) {
			memcpy(out, "be1 ", 4);
			memcpy(out + 4, buf, (size_t)n);
			sendto(u->fd, out, (size_t)n + 4, 0,
			       (struct sockaddr *)&from, flen);
			continue;
		}
		if (n < 12)
			continue;
		memcpy(out, buf, (size_t)n);
		out[2] = 0x81;                   /* QR, RD */
		/* someone else's id first, with the other verdict: a check
		 * that took it would get the result wrong */
		out[3] = 0x80 | (u->rcode ? 0 : 5);
		out[0] ^= 0x55;
		sendto(u->fd, out, (size_t)n, 0, (struct sockaddr *)&from, flen);
		out[0] ^= 0x55;
		out[3] = 0x80 | u->rcode;        /* RA, rcode */
		sendto(u->fd, out, (size_t)n, 0, (struct sockaddr *)&from, flen);
	}
	return NULL;
}

static void udp_start(struct udp_srv *u, enum udp_mode mode, uint8_t rcode)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);

	memset(u, 0, sizeof(*u));
	u->mode = mode;
	u->rcode = rcode;
	u->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(u->fd >= 0);
	assert_int_equal(bind(u->fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(u->fd, (struct sockaddr *)&sin, &len), 0);
	u->port = ntohs(sin.sin_port);
	assert_int_equal(pthread_create(&u->thread, NULL, udp_main, u), 0);
}

static void udp_stop(struct udp_srv *u)
{
	atomic_store(&u->stop, true);
	pthread_join(u->thread, NULL);
	close(u->fd);           /* the port is closed: ICMP unreachable now */
}

static struct mlv_health_config hc_udp(const char *send, const char *receive)
{
	struct mlv_health_config hc = hc_tcp(20, 200, 1, 2);

	hc.type = MLV_HEALTH_UDP;
	snprintf(hc.send, sizeof(hc.send), "%s", send);
	snprintf(hc.receive, sizeof(hc.receive), "%s", receive);
	return hc;
}

static void test_udp_reply_unreachable_and_mismatch(void **state)
{
	struct mlv_health_config ok = hc_udp("ping", "ping"), any = hc_udp("", "");
	struct mlv_health_config wrong = hc_udp("ping", "pong");
	struct mlv_config *cfg = cfg_new();
	struct recorder r;
	struct mlv_health *h = engine(&r, MLV_HEALTH_FAIL_CLOSED, 0);
	struct mlv_health_status st;
	struct udp_srv u;

	(void)state;
	udp_start(&u, UDP_ECHO, 0);
	cfg_backend(cfg_vip(cfg, "dns", u.port, &ok), "be1", "127.0.0.1");
	cfg_backend(cfg_vip(cfg, "any", u.port, &any), "be1", "127.0.0.1");
	cfg_backend(cfg_vip(cfg, "strict", u.port, &wrong), "be1", "127.0.0.1");
	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
	wait_pair(h, &r, "dns", "be1", 3, 1);
	wait_pair(h, &r, "any", "be1", 3, 1);
	wait_pair(h, &r, "strict", "be1", 2, 0);
	st = status_of(h, "dns", "be1");
	assert_true(st.last_ok);
	assert_string_equal(st.last_result, "reply of 8 bytes");
	st = status_of(h, "strict", "be1");
	assert_string_equal(st.last_result, "reply without \"pong\": \"be1 ping\"");

	/* the echo goes away: the port answers with ICMP, down after fall */
	udp_stop(&u);
	wait_pair(h, &r, "dns", "be1", 5, 0);
	st = status_of(h, "dns", "be1");
	assert_string_equal(st.last_result, "port unreachable (ICMP)");
	assert_non_null(strstr(r.events[r.n_events - 1].line, "udp 127.0.0.1:"));
	mlv_health_destroy(h);
	mlv_config_free(cfg);
}

static void test_udp_silent_times_out(void **state)
{
	struct mlv_health_config hc = hc_udp("ping", "");
	struct mlv_config *cfg = cfg_new();
	struct recorder r;
	struct mlv_health *h = engine(&r, MLV_HEALTH_FAIL_CLOSED, 0);
	struct udp_srv u;

	(void)state;
	udp_start(&u, UDP_SILENT, 0);
	cfg_backend(cfg_vip(cfg, "v", u.port, &hc), "be1", "127.0.0.1");
	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
	wait_pair(h, &r, "v", "be1", 2, 0);
	assert_string_equal(status_of(h, "v", "be1").last_result,
			    "timeout after 200ms without a reply");
	udp_stop(&u);
	mlv_health_destroy(h);
	mlv_config_free(cfg);
}

static void test_dns(void **state)
{
	struct mlv_health_config hc = hc_udp("", "");
	struct mlv_config *cfg = cfg_new();
	struct recorder r;
	struct mlv_health *h = engine(&r, MLV_HEALTH_FAIL_CLOSED, 0);
	struct udp_srv ok, refused;
	uint8_t q[64];

	(void)state;
	/* the question on the wire */
	assert_int_equal(health_dns_query("example.com.", 0x1234, q, sizeof(q)),
			 12 + 13 + 4);
	assert_memory_equal(q, "\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"
			    "\x07" "example" "\x03" "com" "\x00" "\x00\x01\x00\x01",
			    29);
	/* an answer is ours only with the id and the question */
	{
		uint8_t a[64], rcode = 0xff;

		memcpy(a, q, 29);
		a[2] |= 0x80;            /* QR */
		a[3] = 3;                /* NXDOMAIN */
		assert_int_equal(health_dns_parse(a, 29, q, 29, &rcode),
				 DNS_ANSWER);
		assert_int_equal(rcode, 3);
		a[1] ^= 1;               /* another id */
		assert_int_equal(health_dns_parse(a, 29, q, 29, &rcode),
				 DNS_NOT_OURS);
		a[1] ^= 1;
		a[14] = 'E';             /* another name */
		assert_int_equal(health_dns_parse(a, 29, q, 29, &rcode),
				 DNS_NOT_OURS);
		a[14] = 'x';
		assert_int_equal(health_dns_parse(a, 28, q, 29, &rcode),
				 DNS_NOT_OURS);   /* cut short */
		a[2] &= 0x7f;            /* a query, not a response */
		assert_int_equal(health_dns_parse(a, 29, q, 29, &rcode),
				 DNS_NOT_OURS);
	}
	assert_false(health_dns_name_ok("a..b"));
	assert_false(health_dns_name_ok("has space.example"));
	assert_false(health_dns_name_ok(""));

	hc.type = MLV_HEALTH_DNS;
	snprintf(hc.query, sizeof(hc.query), "example.com");
	udp_start(&ok, UDP_DNS, 0);
	udp_start(&refused, UDP_DNS, 5);
	cfg_backend(cfg_vip(cfg, "ok", ok.port, &hc), "ns1", "127.0.0.1");
	cfg_backend(cfg_vip(cfg, "refused", refused.port, &hc), "ns1",
		    "127.0.0.1");
	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
	wait_pair(h, &r, "ok", "ns1", 3, 1);
	wait_pair(h, &r, "refused", "ns1", 2, 0);
	assert_string_equal(status_of(h, "ok", "ns1").last_result, "DNS NOERROR");
	assert_string_equal(status_of(h, "refused", "ns1").last_result,
			    "DNS REFUSED");
	udp_stop(&ok);
	udp_stop(&refused);
	mlv_health_destroy(h);
	mlv_config_free(cfg);
}

/* ------------------------------------------------ check durations */

/* The buckets docs/health.md and docs/metrics.md promise, in ns. */
static const uint64_t documented_bounds_ns[] = {
	500000, 1000000, 2500000, 5000000, 10000000, 25000000, 50000000,
	100000000, 250000000, 500000000, 1000000000, 2500000000, 5000000000,
};
#define N_DOCUMENTED_BOUNDS \
	(sizeof(documented_bounds_ns) / sizeof(documented_bounds_ns[0]))

/* Index of the bucket whose bound is ms milliseconds. */
static size_t le_ms(uint64_t ms)
{
	for (size_t i = 0; i < N_DOCUMENTED_BOUNDS; i++)
		if (documented_bounds_ns[i] == ms * 1000000)
			return i;
	fail_msg("no bucket at %llu ms", (unsigned long long)ms);
	return 0;
}

static struct mlv_health_durations durations_of(struct mlv_health *h,
						const char *vip,
						const char *backend)
{
	struct mlv_health_durations d;

	assert_int_equal(mlv_health_check_durations(h, vip, backend, &d),
			 MLV_OK);
	/* what a histogram is, whatever the checks were */
	for (size_t i = 0; i + 1 < MLV_HEALTH_DURATION_BUCKETS; i++)
		assert_true(d.le[i] <= d.le[i + 1]);
	assert_true(d.le[MLV_HEALTH_DURATION_BUCKETS - 1] <= d.count);
	assert_int_equal(d.results[MLV_HEALTH_RESULT_OK] +
			 d.results[MLV_HEALTH_RESULT_FAILED] +
			 d.results[MLV_HEALTH_RESULT_TIMEOUT], d.count);
	return d;
}

/* (vip, backend)'s durations, when every check it made (on one probe
 * all along) ended with r. */
static struct mlv_health_durations all_ended(struct mlv_health *h,
					     const char *vip,
					     const char *backend,
					     enum mlv_health_result r)
{
	struct mlv_health_durations d = durations_of(h, vip, backend);

	assert_int_equal(d.count, status_of(h, vip, backend).checks);
	assert_int_equal(d.results[r], d.count);
	return d;
}

static void assert_durations_equal(const struct mlv_health_durations *a,
				   const struct mlv_health_durations *b)
{
	for (size_t i = 0; i < MLV_HEALTH_DURATION_BUCKETS; i++)
		assert_int_equal(a->le[i], b->le[i]);
	assert_int_equal(a->count, b->count);
	assert_int_equal(a->sum_ns, b->sum_ns);
	for (int r = 0; r < MLV_HEALTH_RESULT__COUNT; r++)
		assert_int_equal(a->results[r], b->results[r]);
}

struct want_observed {
	const char *vip;
	const char *backend;
	uint64_t count;
};

static bool observed_reached(struct mlv_health *h, void *arg)
{
	const struct want_observed *w = arg;
	struct mlv_health_durations d;

	return mlv_health_check_durations(h, w->vip, w->backend, &d) ==
	       MLV_OK && d.count >= w->count;
}

/* pair joins p, as a sync puts it on a probe: its figures stay what they
 * were. */
static void join(struct health_pair *pair, struct health_probe *p)
{
	struct health_tally was, now;

	health_pair_tally(pair, &was);
	pair->probe = p;
	health_pair_rebase(pair, &was);
	health_pair_tally(pair, &now);
	assert_memory_equal(&now, &was, sizeof(now));
}

/* The buckets are the documented ones, a bound counts as inside its
 * bucket ("le": at most), and a pair's offset makes its figures start at
 * zero on a probe that has counted already and carry over to another. */
static void test_duration_buckets_and_offsets(void **state)
{
	static const uint64_t ms = 1000000;
	struct health_probe probe = { 0 }, other = { 0 };
	struct health_pair pair = { 0 };
	struct health_tally t = { 0 }, now;

	(void)state;
	assert_int_equal(MLV_HEALTH_DURATION_BUCKETS, N_DOCUMENTED_BOUNDS);
	for (size_t i = 0; i < N_DOCUMENTED_BOUNDS; i++)
		assert_int_equal(mlv_health_duration_bounds_ns[i],
				 documented_bounds_ns[i]);
	assert_string_equal(mlv_health_result_name(MLV_HEALTH_RESULT_OK), "ok");
	assert_string_equal(mlv_health_result_name(MLV_HEALTH_RESULT_FAILED),
			    "failed");
	assert_string_equal(mlv_health_result_name(MLV_HEALTH_RESULT_TIMEOUT),
			    "timeout");
	assert_string_equal(mlv_health_result_name(MLV_HEALTH_RESULT__COUNT),
			    "unknown");

	health_tally_observe(&t, 0, MLV_HEALTH_RESULT_OK);
	health_tally_observe(&t, ms / 2, MLV_HEALTH_RESULT_OK);
	health_tally_observe(&t, ms / 2 + 1, MLV_HEALTH_RESULT_FAILED);
	health_tally_observe(&t, 100 * ms, MLV_HEALTH_RESULT_OK);
	health_tally_observe(&t, 5000 * ms, MLV_HEALTH_RESULT_TIMEOUT);
	health_tally_observe(&t, 5000 * ms + 1, MLV_HEALTH_RESULT_TIMEOUT);
	assert_int_equal(t.bucket[0], 2);           /* 0 and exactly 0.5 ms */
	assert_int_equal(t.bucket[1], 1);           /* just above */
	assert_int_equal(t.bucket[le_ms(100)], 1);
	assert_int_equal(t.bucket[le_ms(5000)], 1);
	assert_int_equal(t.bucket[MLV_HEALTH_DURATION_BUCKETS], 1); /* +Inf */
	assert_int_equal(t.sum_ns, ms / 2 + ms / 2 + 1 + 100 * ms +
				   2 * 5000 * ms + 1);
	assert_int_equal(t.results[MLV_HEALTH_RESULT_OK], 3);
	assert_int_equal(t.results[MLV_HEALTH_RESULT_FAILED], 1);
	assert_int_equal(t.results[MLV_HEALTH_RESULT_TIMEOUT], 2);

	/* a new pair joins a probe that has counted six checks: zero */
	probe.tally = t;
	join(&pair, &probe);
	health_pair_tally(&pair, &now);
	assert_int_equal(now.sum_ns, 0);
	assert_int_equal(now.results[MLV_HEALTH_RESULT_OK], 0);
	/* the probe's next check is the pair's first */
	health_tally_observe(&probe.tally, 3 * ms, MLV_HEALTH_RESULT_OK);
	health_pair_tally(&pair, &now);
	assert_int_equal(now.bucket[le_ms(5)], 1);
	assert_int_equal(now.sum_ns, 3 * ms);
	assert_int_equal(now.results[MLV_HEALTH_RESULT_OK], 1);
	assert_int_equal(now.bucket[0] + now.bucket[1], 0);
	/* moved to a probe with other figures: it goes on from its own */
	health_tally_observe(&other.tally, 7 * ms, MLV_HEALTH_RESULT_FAILED);
	health_tally_observe(&other.tally, 7 * ms, MLV_HEALTH_RESULT_FAILED);
	join(&pair, &other);
	health_tally_observe(&other.tally, 20 * ms, MLV_HEALTH_RESULT_TIMEOUT);
	health_pair_tally(&pair, &now);
	assert_int_equal(now.bucket[le_ms(5)], 1);
	assert_int_equal(now.bucket[le_ms(10)], 0);
	assert_int_equal(now.bucket[le_ms(25)], 1);
	assert_int_equal(now.sum_ns, 3 * ms + 20 * ms);
	assert_int_equal(now.results[MLV_HEALTH_RESULT_FAILED], 0);
	assert_int_equal(now.results[MLV_HEALTH_RESULT_TIMEOUT], 1);
}

/* A responder on loopback that answers 120 ms after each request: every
 * such check lands above 0.1 s, a prompt one below; counts and sums add
 * up with the checks the engine reports. */
static void test_durations_of_delayed_answers(void **state)
{
	struct server *s = srv_new();
	struct listener *fast = srv_add(s, SRV_HTTP, 200);
	struct listener *slow = srv_add(s, SRV_DELAYED, 200);
	struct mlv_health_config hc = hc_http(300, 250, 1, 1, "/");
	struct mlv_config *cfg = cfg_new();
	struct recorder r;
	struct mlv_health *h = engine(&r, MLV_HEALTH_FAIL_OPEN, 0);
	struct mlv_health_durations d;
	const uint64_t delay_ns = 120 * 1000000ull;

	(void)state;
	slow->delay_ms = 120;
	srv_start(s);
	cfg_backend(cfg_vip(cfg, "fast", fast->port, &hc), "b", "127.0.0.1");
	cfg_backend(cfg_vip(cfg, "slow", slow->port, &hc), "b", "127.0.0.1");
	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
	d = durations_of(h, "slow", "b");
	assert_int_equal(d.count, 0);
	assert_int_equal(d.sum_ns, 0);

	wait_pair(h, &r, "slow", "b", 3, -1);
	wait_pair(h, &r, "fast", "b", 3, -1);

	assert_string_equal(status_of(h, "slow", "b").last_result, "HTTP 200");
	d = all_ended(h, "slow", "b", MLV_HEALTH_RESULT_OK);
	/* the server waits 120 ms once it has the request, which the check
	 * sends after its start: nothing at or below 0.1 s ... */
	assert_int_equal(d.le[le_ms(100)], 0);
	/* ... and each ended before its 250 ms deadline */
	assert_int_equal(d.le[le_ms(250)], d.count);
	/* (the server's clock reads whole milliseconds, so its wait may be
	 * up to one short of the delay) */
	assert_true(d.sum_ns > d.count * (delay_ns - 1000000));
	assert_true(d.sum_ns <= d.count * 250 * 1000000ull);

	d = all_ended(h, "fast", "b", MLV_HEALTH_RESULT_OK);
	assert_int_equal(d.le[le_ms(100)], d.count);
	assert_true(d.sum_ns < d.count * delay_ns);

	mlv_health_destroy(h);
	mlv_config_free(cfg);
	srv_stop(s);
}

/* A timed-out check is observed, as docs/health.md says: result timeout,
 * at a duration of at least its timeout. A refused one is a failure,
 * quick. The engine's counters agree. */
static void test_durations_of_timeouts_and_refusals(void **state)
{
	struct mlv_health_config silent = hc_udp("ping", "");
	struct mlv_health_config refused = hc_tcp(50, 40, 1, 1);
	struct mlv_config *cfg = cfg_new();
	struct recorder r;
	struct mlv_health *h = engine(&r, MLV_HEALTH_FAIL_CLOSED, 0);
	struct mlv_health_durations ds, dr;
	struct mlv_health_stats stats;
	const uint64_t timeout_ns = 60 * 1000000ull;
	struct udp_srv u;

	(void)state;
	silent.interval_ms = 150;
	silent.timeout_ms = 60;
	udp_start(&u, UDP_SILENT, 0);
	cfg_backend(cfg_vip(cfg, "silent", u.port, &silent), "b", "127.0.0.1");
	cfg_backend(cfg_vip(cfg, "refused", closed_port(), &refused), "b",
		    "127.0.0.1");
	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
	wait_pair(h, &r, "silent", "b", 3, 0);
	wait_pair(h, &r, "refused", "b", 3, 0);

	assert_string_equal(status_of(h, "silent", "b").last_result,
			    "timeout after 60ms without a reply");
	ds = all_ended(h, "silent", "b", MLV_HEALTH_RESULT_TIMEOUT);
	/* each lasted its timeout at least: none at or below 0.05 s */
	assert_int_equal(ds.le[le_ms(50)], 0);
	assert_true(ds.sum_ns >= ds.count * timeout_ns);
	assert_int_equal(ds.le[le_ms(250)], ds.count);

	dr = all_ended(h, "refused", "b", MLV_HEALTH_RESULT_FAILED);
	assert_int_equal(dr.le[le_ms(100)], dr.count);

	/* nothing else ran: the pairs hold every check the engine counted */
	mlv_health_stats(h, &stats);
	assert_int_equal(stats.counters[MLV_HEALTH_CTR_CHECKS_OK], 0);
	assert_int_equal(stats.counters[MLV_HEALTH_CTR_CHECKS_FAILED],
			 ds.count + dr.count);

	udp_stop(&u);
	mlv_health_destroy(h);
	mlv_config_free(cfg);
}

/* A pair's figures are its own: a pair that joins a shared probe starts
 * at zero and then sees the same checks as the others; a changed check
 * carries them over; a pair removed and added back starts again. */
static void test_durations_follow_the_pair(void **state)
{
	struct mlv_health_config hc = hc_tcp(20, 500, 1, 1);
	struct mlv_health_config hc2 = hc_tcp(25, 500, 1, 1);
	struct mlv_health_config none = { .type = MLV_HEALTH_NONE };
	uint16_t port = closed_port();
	struct mlv_config *cfg1 = cfg_new(), *cfg2 = cfg_new(),
			  *cfg3 = cfg_new(), *cfg4 = cfg_new(),
			  *cfg5 = cfg_new();
	struct recorder r;
	struct mlv_health *h = engine(&r, MLV_HEALTH_FAIL_OPEN, 0);
	struct mlv_health_durations a1, a2, c2, d;
	struct want_observed c_seen = { "c", "b2", 2 };
	uint64_t moved_checks;

	(void)state;
	cfg_backend(cfg_vip(cfg1, "a", port, &hc), "b", "127.0.0.1");
	cfg_backend(cfg_vip(cfg1, "n", port, &none), "b", "127.0.0.1");
	/* cfg2: c/b2 checks the same target the same way as a/b */
	cfg_backend(cfg_vip(cfg2, "a", port, &hc), "b", "127.0.0.1");
	cfg_backend(cfg_vip(cfg2, "c", port, &hc), "b2", "127.0.0.1");
	/* cfg3: a/b's check changes (interval): another probe */
	cfg_backend(cfg_vip(cfg3, "a", port, &hc2), "b", "127.0.0.1");
	cfg_backend(cfg_vip(cfg3, "c", port, &hc), "b2", "127.0.0.1");
	/* cfg4: a/b removed; cfg5: back, on c/b2's probe again */
	cfg_backend(cfg_vip(cfg4, "c", port, &hc), "b2", "127.0.0.1");
	cfg_backend(cfg_vip(cfg5, "c", port, &hc), "b2", "127.0.0.1");
	cfg_backend(cfg_vip(cfg5, "a", port, &hc), "b", "127.0.0.1");

	assert_int_equal(mlv_health_sync(h, cfg1, NULL), MLV_OK);
	wait_pair(h, &r, "a", "b", 3, 0);
	a1 = durations_of(h, "a", "b");
	assert_int_equal(a1.count, status_of(h, "a", "b").checks);
	assert_int_equal(durations_of(h, "n", "b").count, 0);

	/* c/b2 joins a/b's probe, which has counted: c starts at zero */
	assert_int_equal(mlv_health_sync(h, cfg2, NULL), MLV_OK);
	assert_int_equal(status_of(h, "c", "b2").shared_by, 2);
	d = durations_of(h, "c", "b2");
	assert_int_equal(d.count, 0);
	assert_int_equal(d.sum_ns, 0);
	assert_int_equal(d.results[MLV_HEALTH_RESULT_FAILED], 0);
	d = durations_of(h, "a", "b");
	assert_durations_equal(&d, &a1);
	/* from then on both see the same checks */
	assert_true(run_until(h, &r, observed_reached, &c_seen));
	a2 = durations_of(h, "a", "b");
	c2 = durations_of(h, "c", "b2");
	assert_int_equal(a2.count - a1.count, c2.count);
	assert_int_equal(a2.sum_ns - a1.sum_ns, c2.sum_ns);
	for (size_t i = 0; i < MLV_HEALTH_DURATION_BUCKETS; i++)
		assert_int_equal(a2.le[i] - a1.le[i], c2.le[i]);
	assert_int_equal(c2.results[MLV_HEALTH_RESULT_FAILED], c2.count);

	/* a/b's check changes: a new probe, counting from zero; the pair's
	 * figures go on from where they were */
	assert_int_equal(mlv_health_sync(h, cfg3, NULL), MLV_OK);
	assert_int_equal(status_of(h, "a", "b").checks, 0);
	assert_int_equal(status_of(h, "a", "b").shared_by, 1);
	d = durations_of(h, "a", "b");
	assert_durations_equal(&d, &a2);
	wait_pair(h, &r, "a", "b", 2, 0);
	moved_checks = status_of(h, "a", "b").checks;
	d = durations_of(h, "a", "b");
	assert_int_equal(d.count, a2.count + moved_checks);
	assert_int_equal(d.results[MLV_HEALTH_RESULT_FAILED],
			 a2.results[MLV_HEALTH_RESULT_FAILED] + moved_checks);
	assert_true(d.sum_ns > a2.sum_ns);

	/* removed: gone; added back onto c/b2's busy probe: from zero */
	assert_int_equal(mlv_health_sync(h, cfg4, NULL), MLV_OK);
	assert_int_equal(mlv_health_check_durations(h, "a", "b", &d),
			 MLV_E_NOT_FOUND);
	assert_int_equal(mlv_health_sync(h, cfg5, NULL), MLV_OK);
	assert_int_equal(status_of(h, "a", "b").shared_by, 2);
	assert_true(durations_of(h, "c", "b2").count > 0);
	d = durations_of(h, "a", "b");
	assert_int_equal(d.count, 0);
	assert_int_equal(d.sum_ns, 0);

	assert_int_equal(mlv_health_check_durations(NULL, "a", "b", &d),
			 MLV_E_INVAL);
	assert_int_equal(mlv_health_check_durations(h, NULL, "b", &d),
			 MLV_E_INVAL);
	assert_int_equal(mlv_health_check_durations(h, "a", NULL, &d),
			 MLV_E_INVAL);
	assert_int_equal(mlv_health_check_durations(h, "a", "b", NULL),
			 MLV_E_INVAL);
	assert_int_equal(mlv_health_check_durations(h, "nope", "b", &d),
			 MLV_E_NOT_FOUND);

	mlv_health_destroy(h);
	mlv_config_free(cfg1);
	mlv_config_free(cfg2);
	mlv_config_free(cfg3);
	mlv_config_free(cfg4);
	mlv_config_free(cfg5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http_text),
		cmocka_unit_test(test_tcp_up),
		cmocka_unit_test(test_tcp_ipv6),
		cmocka_unit_test(test_tcp_refused_down_after_fall),
		cmocka_unit_test(test_udp_reply_unreachable_and_mismatch),
		cmocka_unit_test(test_udp_silent_times_out),
		cmocka_unit_test(test_dns),
		cmocka_unit_test(test_tcp_timeout_full_backlog),
		cmocka_unit_test(test_http_status_and_garbage),
		cmocka_unit_test(test_http_timeout_and_never_blocks),
		cmocka_unit_test(test_rise_fall_exact),
		cmocka_unit_test(test_sync_keeps_state),
		cmocka_unit_test(test_shared_backend_probed_once),
		cmocka_unit_test(test_batch_one_callback),
		cmocka_unit_test(test_max_in_flight),
		cmocka_unit_test(test_none_sends_nothing),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_busy_thread_tcp_connects_count),
		cmocka_unit_test(test_busy_thread_http_connects_then_answers),
		cmocka_unit_test(test_busy_thread_http_answers_waiting),
		cmocka_unit_test(test_busy_thread_missed_intervals),
		cmocka_unit_test(test_is_up_at_positions),
		cmocka_unit_test(test_duration_buckets_and_offsets),
		cmocka_unit_test(test_durations_of_delayed_answers),
		cmocka_unit_test(test_durations_of_timeouts_and_refusals),
		cmocka_unit_test(test_durations_follow_the_pair),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
