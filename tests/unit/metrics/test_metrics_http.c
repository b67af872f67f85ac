/* SPDX-License-Identifier: BSD-3-Clause */
/* The metrics HTTP server on 127.0.0.1:0, driven the way the daemon
 * drives it: one thread, mlv_metrics_process() called only when
 * mlv_metrics_fd() is readable. Clients are plain non-blocking sockets
 * polled from the same thread, so a server call that blocked would hang
 * the test (the safety deadline then fails it) instead of passing. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "control/metrics/metrics.h"
#include "tests/support/ctl_fixture.h"
#include "tests/unit/metrics/test_metrics_util.h"

/* Not a timing assertion: only stops a hung test. */
#define SAFETY_S 60

struct client {
	int fd;
	char *buf;
	size_t len, cap;
	bool done;               /* EOF seen */
};

struct http_reply {
	int status;
	char content_type[128];
	char allow[64];
	long content_length;     /* -1 if absent */
	const char *body;
	size_t body_len;
};

/* A plain client; from (IPv4 only, NULL for any) picks its source
 * address: the whole of 127.0.0.0/8 is loopback, so a test can play
 * clients on several addresses. */
static int connect_to(uint16_t port, int family, const char *from)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		fail_msg("socket: %s", strerror(errno));
	if (from) {
		struct sockaddr_in src = { .sin_family = AF_INET };

		assert_int_equal(inet_pton(AF_INET, from, &src.sin_addr), 1);
		if (bind(fd, (struct sockaddr *)&src, sizeof(src)) != 0)
			fail_msg("bind %s: %s", from, strerror(errno));
	}
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		in6->sin6_addr = in6addr_loopback;
		len = sizeof(*in6);
	}
	/* Loopback connects complete in the kernel's backlog, before the
	 * server accepts: no server turn is needed here. */
	if (connect(fd, (struct sockaddr *)&ss, len) != 0)
		fail_msg("connect: %s", strerror(errno));
	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	return fd;
}

static void client_open_from(struct client *c, uint16_t port, int family,
			     const char *from, const char *request)
{
	memset(c, 0, sizeof(*c));
	c->fd = connect_to(port, family, from);
	c->cap = 4096;
	c->buf = malloc(c->cap);
	assert_non_null(c->buf);
	c->buf[0] = '\0';
	/* small enough for an empty socket buffer: sent in one go */
	if (request)
		assert_int_equal(send(c->fd, request, strlen(request), MSG_NOSIGNAL),
				 (ssize_t)strlen(request));
}

static void client_open(struct client *c, uint16_t port, int family,
			const char *request)
{
	client_open_from(c, port, family, NULL, request);
}

static void client_read(struct client *c)
{
	for (;;) {
		ssize_t n;

		if (c->cap - c->len < 4096) {
			c->cap *= 2;
			c->buf = realloc(c->buf, c->cap);
			assert_non_null(c->buf);
		}
		n = recv(c->fd, c->buf + c->len, c->cap - c->len - 1, 0);
		if (n > 0) {
			c->len += (size_t)n;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			c->done = true;     /* EOF, or reset by the server */
		break;
	}
	c->buf[c->len] = '\0';
}

static void client_close(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
}

typedef bool (*until_fn)(struct mlv_metrics *m, struct client *cs, size_t n,
			 void *arg);

static bool all_done(struct mlv_metrics *m, struct client *cs, size_t n,
		     void *arg)
{
	(void)m;
	(void)arg;
	for (size_t i = 0; i < n; i++)
		if (cs[i].fd >= 0 && !cs[i].done)
			return false;
	return true;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Run the event loop over the server fd and the clients until `until`
 * holds (true) or max_ms have passed (false). The server is processed
 * only when its fd says so; `until` is asked at least every 50 ms. */
static bool pump_for(struct mlv_metrics *m, struct client *cs, size_t n,
		     until_fn until, void *arg, uint64_t max_ms)
{
	struct pollfd *pfd = calloc(n + 1, sizeof(*pfd));
	uint64_t give_up = mono_ms() + max_ms;
	bool held;

	assert_non_null(pfd);
	while (!(held = until(m, cs, n, arg)) && mono_ms() < give_up) {
		pfd[0] = (struct pollfd){ .fd = mlv_metrics_fd(m), .events = POLLIN };
		for (size_t i = 0; i < n; i++)
			pfd[i + 1] = (struct pollfd){
				.fd = cs[i].done ? -1 : cs[i].fd, .events = POLLIN };
		if (poll(pfd, n + 1, 50) < 0 && errno != EINTR)
			fail_msg("poll: %s", strerror(errno));
		if (pfd[0].revents & POLLIN)
			assert_int_equal(mlv_metrics_process(m), MLV_OK);
		for (size_t i = 0; i < n; i++)
			if (pfd[i + 1].revents)
				client_read(&cs[i]);
	}
	free(pfd);
	return held;
}

static void pump(struct mlv_metrics *m, struct client *cs, size_t n,
		 until_fn until, void *arg)
{
	if (!pump_for(m, cs, n, until, arg, SAFETY_S * 1000u))
		fail_msg("no progress within %d s", SAFETY_S);
}

/* until_fn: *(uint64_t *)arg, a mono_ms() time, has come. */
static bool time_came(struct mlv_metrics *m, struct client *cs, size_t n,
		      void *arg)
{
	(void)m;
	(void)cs;
	(void)n;
	return mono_ms() >= *(const uint64_t *)arg;
}

/* Serve for MLV_METRICS_EVICT_AGE_MS: the connections open now become
 * old enough for a newer client to take their place. */
static void let_age(struct mlv_metrics *m)
{
	uint64_t at = mono_ms() + MLV_METRICS_EVICT_AGE_MS;

	pump(m, NULL, 0, time_came, &at);
}

static void header(const char *head, const char *name, char *out, size_t len)
{
	size_t n = strlen(name);

	out[0] = '\0';
	for (const char *l = strstr(head, "\r\n"); l && l[2] != '\r';
	     l = strstr(l + 2, "\r\n")) {
		if (strncasecmp(l + 2, name, n) == 0 && l[2 + n] == ':') {
			const char *v = l + 3 + n, *e = strstr(v, "\r\n");

			while (*v == ' ')
				v++;
			snprintf(out, len, "%.*s", (int)(e - v), v);
			return;
		}
	}
}

static struct http_reply parse(const struct client *c)
{
	struct http_reply r = { .content_length = -1 };
	const char *end = strstr(c->buf, "\r\n\r\n");
	char cl[32];

	if (!end || sscanf(c->buf, "HTTP/1.%*d %d", &r.status) != 1)
		fail_msg("not an HTTP reply: %.200s", c->buf);
	header(c->buf, "Content-Type", r.content_type, sizeof(r.content_type));
	header(c->buf, "Allow", r.allow, sizeof(r.allow));
	header(c->buf, "Content-Length", cl, sizeof(cl));
	if (cl[0])
		r.content_length = strtol(cl, NULL, 10);
	r.body = end + 4;
	r.body_len = c->len - (size_t)(r.body - c->buf);
	return r;
}

static const char scrape_req[] =
	"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

/* One request on a fresh connection, answered and closed. */
static struct http_reply fetch(struct mlv_metrics *m, struct client *c,
			       const char *method, const char *path)
{
	char req[256];

	snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: localhost\r\n"
		 "Connection: close\r\n\r\n", method, path);
	client_open(c, mlv_metrics_port(m), AF_INET, req);
	pump(m, c, 1, all_done, NULL);
	return parse(c);
}

/* ---- fixture ---- */

struct env {
	struct ctl_fx fx;
	struct mlv_metrics *m;
};

/* The limits the eviction tests work against: a few connections an
 * address, so that a handful of clients reach them. */
#define TIGHT_MAX_CONNECTIONS 128u
#define TIGHT_PER_ADDRESS 8u

static struct mlv_metrics *start_limits(struct ctl_fx *fx, const char *listen,
					uint32_t max_conn, uint32_t per_address,
					uint32_t timeout_ms)
{
	struct mlv_metrics_params p = {
		.listen = listen, .src = { .ctl = &fx->st },
		.max_connections = max_conn, .max_per_address = per_address,
		.timeout_ms = timeout_ms,
	};
	struct mlv_metrics *m = NULL;
	char err[256] = "";

	if (mlv_metrics_create(&p, &m, err, sizeof(err)) != MLV_OK)
		fail_msg("metrics: %s", err);
	assert_true(mlv_metrics_port(m) != 0);
	assert_true(mlv_metrics_fd(m) >= 0);
	return m;
}

static struct mlv_metrics *start(struct ctl_fx *fx, const char *listen,
				 uint32_t max_conn, uint32_t timeout_ms)
{
	return start_limits(fx, listen, max_conn, 0, timeout_ms);
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	ctl_fx_init(&e->fx);
	e->m = start(&e->fx, "127.0.0.1:0", 0, 0);
	*state = e;
	return 0;
}

/* The server with TIGHT_* limits. */
static int setup_tight(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	ctl_fx_init(&e->fx);
	e->m = start_limits(&e->fx, "127.0.0.1:0", TIGHT_MAX_CONNECTIONS,
			    TIGHT_PER_ADDRESS, 0);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	mlv_metrics_destroy(e->m);
	ctl_fx_free(&e->fx);
	free(e);
	return 0;
}

/* ---- tests ---- */

static void test_get_metrics(void **state)
{
	struct env *e = *state;
	struct mlv_metrics_server_stats st;
	const struct mlv_gen_vip *web = &e->fx.gen->vips[0];
	struct http_reply r;
	struct client c;
	char *body;

	/* a value to find in the page */
	e->fx.gen->backend_ctr[1][mlv_gen_backend_index(e->fx.gen, &web->backends[0])]
		.v[MLV_FLOW_PACKETS] = 4242;
	r = fetch(e->m, &c, "GET", "/metrics");
	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
	assert_int_equal(r.content_length, (long)r.body_len);
	body = strndup(r.body, r.body_len);
	assert_non_null(body);
	tm_check_structure(body);
	assert_true(tm_has(body, "maglevd_build_info{version="));
	{
		char series[256];

		snprintf(series, sizeof(series),
			 "maglevd_backend_packets_total{vip=\"%s\",backend=\"%s\"}",
			 web->name, web->backends[0].name);
		assert_true(tm_value(body, series) == 4242);
	}
	free(body);
	client_close(&c);
	mlv_metrics_stats(e->m, &st);
	assert_int_equal(st.scrapes, 1);
}

static void test_routes(void **state)
{
	struct env *e = *state;
	struct mlv_metrics_server_stats st;
	struct http_reply r;
	struct client c;

	r = fetch(e->m, &c, "GET", "/");
	assert_int_equal(r.status, 200);
	assert_true(strncmp(r.content_type, "text/html", 9) == 0);
	assert_non_null(memmem(r.body, r.body_len, "href=\"/metrics\"", 15));
	client_close(&c);

	r = fetch(e->m, &c, "GET", "/metricsx");
	assert_int_equal(r.status, 404);
	client_close(&c);
	r = fetch(e->m, &c, "GET", "/metrics/");
	assert_int_equal(r.status, 404);
	client_close(&c);

	/* HEAD: the headers of the page, no body */
	r = fetch(e->m, &c, "HEAD", "/metrics");
	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type, MLV_METRICS_CONTENT_TYPE);
	assert_true(r.content_length > 100);
	assert_int_equal(r.body_len, 0);
	client_close(&c);

	r = fetch(e->m, &c, "POST", "/metrics");
	assert_int_equal(r.status, 405);
	assert_string_equal(r.allow, "GET, HEAD");
	client_close(&c);

	/* a body on a GET is refused, not read */
	client_open(&c, mlv_metrics_port(e->m), AF_INET,
		    "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
		    "Connection: close\r\n\r\nhello");
	pump(e->m, &c, 1, all_done, NULL);
	assert_int_equal(parse(&c).status, 413);
	client_close(&c);

	/* a query string does not change the path */
	r = fetch(e->m, &c, "GET", "/metrics?x=1");
	assert_int_equal(r.status, 200);
	client_close(&c);

	mlv_metrics_stats(e->m, &st);
	assert_int_equal(st.not_found, 2);
	assert_int_equal(st.bad_method, 1);
	assert_int_equal(st.index, 1);
	assert_int_equal(st.scrapes, 2);
}

static void test_garbage_request(void **state)
{
	struct env *e = *state;
	struct http_reply r;
	struct client c;

	client_open(&c, mlv_metrics_port(e->m), AF_INET,
		    "\x01\x02 not http at all\r\n\r\n");
	pump(e->m, &c, 1, all_done, NULL);
	/* an error status or a plain close; never a hang or a crash */
	if (c.len > 0) {
		r = parse(&c);
		assert_true(r.status >= 400);
	}
	client_close(&c);

	/* a client that asks and resets the connection at once: the reply
	 * hits a dead socket, which must not kill the process (SIGPIPE) */
	for (int i = 0; i < 5; i++) {
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };

		client_open(&c, mlv_metrics_port(e->m), AF_INET,
			    "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
		assert_int_equal(setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &lg,
					    sizeof(lg)), 0);
		client_close(&c);
	}
	r = fetch(e->m, &c, "GET", "/metrics");
	assert_int_equal(r.status, 200);
	client_close(&c);
}

/* Prometheus keeps its connection open between scrapes. */
static void test_keep_alive(void **state)
{
	struct env *e = *state;
	struct mlv_metrics_server_stats st;
	struct client c;
	const char *second;

	client_open(&c, mlv_metrics_port(e->m), AF_INET,
		    "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
		    "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
	pump(e->m, &c, 1, all_done, NULL);
	second = strstr(c.buf + 1, "HTTP/1.1 200");

	assert_true(strncmp(c.buf, "HTTP/1.1 200", 12) == 0);
	assert_non_null(second);
	assert_null(strstr(second + 1, "HTTP/1.1 "));
	mlv_metrics_stats(e->m, &st);
	assert_int_equal(st.scrapes, 2);
	client_close(&c);
}

/* Slow clients that sent half a request hold their connections open;
 * everyone else still gets served, and all were opened before the
 * server got a single turn. Each client has an address of its own
 * (127.0.1.N), as many Prometheus servers would. */
static void test_many_concurrent(void **state)
{
	enum { SLOW = 5, FAST = 60 };
	struct env *e = *state;
	struct client c[SLOW + FAST];
	struct mlv_metrics_server_stats st;
	char from[16];

	for (int i = 0; i < SLOW + FAST; i++) {
		snprintf(from, sizeof(from), "127.0.1.%d", i + 1);
		client_open_from(&c[i], mlv_metrics_port(e->m), AF_INET, from,
				 i < SLOW ? "GET /metr" : scrape_req);
	}
	pump(e->m, c + SLOW, FAST, all_done, NULL);
	for (int i = SLOW; i < SLOW + FAST; i++) {
		struct http_reply r = parse(&c[i]);

		assert_int_equal(r.status, 200);
		assert_int_equal(r.content_length, (long)r.body_len);
	}
	for (int i = 0; i < SLOW; i++)
		assert_false(c[i].done);        /* still waiting, still open */
	mlv_metrics_stats(e->m, &st);
	assert_int_equal(st.scrapes, FAST);
	for (int i = 0; i < SLOW + FAST; i++)
		client_close(&c[i]);
}

/* The server holds at least *arg connections. */
static bool connections_at_least(struct mlv_metrics *m, struct client *cs,
				 size_t n, void *arg)
{
	struct mlv_metrics_server_stats st;

	(void)cs;
	(void)n;
	mlv_metrics_stats(m, &st);
	return st.connections >= *(uint32_t *)arg;
}

/* Beyond max_connections a new client takes the place of the
 * connection that has waited longest for its request: the oldest idle
 * one is closed unanswered, the late scrape is answered while the other
 * idle one stays open. */
static void test_connection_limit(void **state)
{
	struct env *e = *state;
	struct mlv_metrics *m = start(&e->fx, "127.0.0.1:0", 2, 0);
	struct mlv_metrics_server_stats st;
	struct client idle[2], late;
	uint32_t one = 1, two = 2;

	client_open(&idle[0], mlv_metrics_port(m), AF_INET, NULL);
	pump(m, idle, 1, connections_at_least, &one);
	client_open(&idle[1], mlv_metrics_port(m), AF_INET, NULL);
	pump(m, idle, 2, connections_at_least, &two);
	let_age(m);
	client_open(&late, mlv_metrics_port(m), AF_INET, scrape_req);
	pump(m, &late, 1, all_done, NULL);
	assert_int_equal(parse(&late).status, 200);
	pump(m, idle, 1, all_done, NULL);
	assert_int_equal(idle[0].len, 0);                 /* closed, unanswered */
	mlv_metrics_stats(m, &st);
	assert_int_equal(st.evicted, 1);
	assert_int_equal(st.refused, 0);
	assert_false(idle[1].done);
	for (int i = 0; i < 2; i++)
		client_close(&idle[i]);
	client_close(&late);
	mlv_metrics_destroy(m);
}

/* An idle connection is closed after timeout_ms: the server's fd wakes
 * the loop for it, without any client activity or loop timer. */
static void test_idle_timeout(void **state)
{
	struct env *e = *state;
	struct mlv_metrics *m = start(&e->fx, "127.0.0.1:0", 0, 1000);
	struct client c;
	uint32_t one = 1;

	assert_int_equal(mlv_metrics_timeout_ms(m), -1);   /* nothing open */
	client_open(&c, mlv_metrics_port(m), AF_INET, NULL);
	pump(m, &c, 1, connections_at_least, &one);
	assert_true(mlv_metrics_timeout_ms(m) >= 0);
	assert_true(mlv_metrics_timeout_ms(m) <= 1000);
	pump(m, &c, 1, all_done, NULL);
	assert_int_equal(c.len, 0);                        /* closed, unanswered */
	client_close(&c);
	mlv_metrics_destroy(m);
}

/* ---- clients that try to starve the others ---- */

#define SCRAPE_WITHIN_MS 2000u
#define ATTACKER "127.0.0.2"

/* Slow clients that each send one more byte of a header every
 * `every_ms`, never finishing it, while the loop runs for the others. */
struct trickle {
	struct client *slow;
	size_t n_slow;
	uint64_t every_ms, next_ms;
	uint64_t until_ms;           /* for trickle_until */
	unsigned sent;               /* bytes each */
};

static void trickle_step(struct trickle *t)
{
	static const char part[] = "X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	uint64_t now = mono_ms();

	if (now < t->next_ms)
		return;
	t->next_ms = now + t->every_ms;
	for (size_t i = 0; i < t->n_slow; i++) {
		struct client *c = &t->slow[i];

		if (c->done)
			continue;
		/* the server may have closed it: that ends its part */
		if (send(c->fd, &part[t->sent % (sizeof(part) - 1)], 1,
			 MSG_NOSIGNAL) != 1 && errno != EAGAIN)
			c->done = true;
	}
	t->sent++;
}

static bool trickle_until_done(struct mlv_metrics *m, struct client *cs,
			       size_t n, void *arg)
{
	trickle_step(arg);
	return all_done(m, cs, n, NULL);
}

/* Trickle until the trickle's until_ms. */
static bool trickle_until(struct mlv_metrics *m, struct client *cs, size_t n,
			  void *arg)
{
	struct trickle *t = arg;

	trickle_step(t);
	return time_came(m, cs, n, &t->until_ms);
}

/* Scrape from 127.0.0.1 and require the page within SCRAPE_WITHIN_MS
 * while `t` (may be NULL) keeps trickling. */
static void scrape_in_time(struct mlv_metrics *m, struct trickle *t)
{
	struct client c;
	uint64_t t0, aged = mono_ms() + MLV_METRICS_EVICT_AGE_MS;

	/* the attack in place for a moment, as it would be (a scrape
	 * within MLV_METRICS_EVICT_AGE_MS of a burst may be refused) */
	if (t)
		t->until_ms = aged;
	pump(m, NULL, 0, t ? trickle_until : time_came, t ? (void *)t : &aged);
	t0 = mono_ms();

	client_open(&c, mlv_metrics_port(m), AF_INET, scrape_req);
	if (!pump_for(m, &c, 1, t ? trickle_until_done : all_done, t,
		      SCRAPE_WITHIN_MS))
		fail_msg("no reply to a scrape within %u ms", SCRAPE_WITHIN_MS);
	assert_int_equal(parse(&c).status, 200);
	print_message("scrape answered in %" PRIu64 " ms\n", mono_ms() - t0);
	client_close(&c);
}

/* A slowloris: 40 connections from `from` (NULL: the scrape's own
 * address), each trickling a request that never ends, while a scrape
 * must be answered; the server's counters after it in *st. */
static void slowloris(struct env *e, const char *from,
		      struct mlv_metrics_server_stats *st)
{
	enum { SLOW = 40 };
	struct client slow[SLOW];
	struct trickle t = { .slow = slow, .n_slow = SLOW, .every_ms = 100 };
	uint32_t some = TIGHT_PER_ADDRESS;

	for (int i = 0; i < SLOW; i++)
		client_open_from(&slow[i], mlv_metrics_port(e->m), AF_INET,
				 from, "GET /metrics HTTP/1.1\r\n");
	/* the attack is in place: the server has taken some of them */
	pump(e->m, NULL, 0, connections_at_least, &some);
	scrape_in_time(e->m, &t);
	mlv_metrics_stats(e->m, st);
	print_message("slow connections: %" PRIu64 " refused, %" PRIu64
		      " evicted\n", st->refused, st->evicted);
	/* the ones over the limit are closed, one way or the other */
	assert_true(st->evicted + st->refused >=
		    SLOW - TIGHT_PER_ADDRESS);
	for (int i = 0; i < SLOW; i++)
		client_close(&slow[i]);
}

/* From another address: that address holds at most max_per_address
 * connections, the scrape is not in their way. */
static void test_slowloris_other_address(void **state)
{
	struct mlv_metrics_server_stats st;

	slowloris(*state, ATTACKER, &st);
	assert_true(st.connections <= TIGHT_PER_ADDRESS);
}

/* From the scrape's own address (Prometheus on the same host as the
 * attacker, or behind one NAT): the connections trickling their headers
 * make room for the scrape, the oldest first, once they are older than
 * MLV_METRICS_EVICT_AGE_MS; the ones beyond the limit that came in a
 * burst are refused. */
static void test_slowloris_same_address(void **state)
{
	struct mlv_metrics_server_stats st;

	slowloris(*state, NULL, &st);
	assert_true(st.evicted >= 1);   /* the scrape took a slow one's slot */
}

/* Raise the soft fd limit toward want (up to the hard one); the limit
 * now. */
static rlim_t fds_for(rlim_t want)
{
	struct rlimit rl;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < want && rl.rlim_max > rl.rlim_cur) {
		rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	return rl.rlim_cur;
}

/* With the default limits: 1000 clients from the scrape's own address,
 * each trickling a request that never ends and back the moment the
 * server closes it (its request deadline, 5 s), while scrapes come every
 * 300 ms for 7 s: each is answered within SCRAPE_WITHIN_MS, none
 * refused. */
static void test_reconnecting_slow_clients(void **state)
{
	enum { SLOW = 1000, SPARE = 200, SCRAPES = 24 };
	struct env *e = *state;
	struct client *slow;
	struct trickle t;
	struct mlv_metrics_server_stats st;
	uint32_t some = SLOW / 2;
	uint64_t back = 0;

	if (fds_for(SLOW + SPARE) < SLOW + SPARE) {
		print_message("fd limit too low for %d clients\n", SLOW);
		skip();
		return;
	}
	slow = calloc(SLOW, sizeof(*slow));
	assert_non_null(slow);
	t = (struct trickle){ .slow = slow, .n_slow = SLOW, .every_ms = 100 };
	for (int i = 0; i < SLOW; i++)
		client_open(&slow[i], mlv_metrics_port(e->m), AF_INET,
			    "GET /metrics HTTP/1.1\r\n");
	pump(e->m, NULL, 0, connections_at_least, &some);
	for (int k = 0; k < SCRAPES; k++) {
		/* the ones the server closed come back at once */
		for (int i = 0; i < SLOW; i++) {
			if (!slow[i].done)
				continue;
			client_close(&slow[i]);
			client_open(&slow[i], mlv_metrics_port(e->m), AF_INET,
				    "GET /metrics HTTP/1.1\r\n");
			back++;
		}
		scrape_in_time(e->m, &t);
		t.until_ms = mono_ms() + 300;
		pump(e->m, NULL, 0, trickle_until, &t);
	}
	mlv_metrics_stats(e->m, &st);
	/* the deadline closed them, and they came back */
	assert_true(back >= SLOW / 2);
	print_message("%d slow clients, %" PRIu64 " of them back after a "
		      "close: %u connections, %" PRIu64 " refused, %"
		      PRIu64 " evicted\n", SLOW, back, st.connections,
		      st.refused, st.evicted);
	assert_int_equal(st.refused, 0);
	for (int i = 0; i < SLOW; i++)
		client_close(&slow[i]);
	free(slow);
}

/* 2000 idle connections from one address (fewer if the fd limit is
 * lower) do not keep a scrape waiting either. */
static void test_idle_flood(void **state)
{
	/* SPARE: the server's own fds and the ones it accepts */
	enum { WANT = 2000, SPARE = 200 };
	struct env *e = *state;
	struct rlimit rl;
	struct client *idle;
	uint32_t some = TIGHT_PER_ADDRESS;
	size_t n = WANT;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < WANT + SPARE && rl.rlim_max > rl.rlim_cur) {
		rl.rlim_cur = rl.rlim_max < WANT + SPARE ? rl.rlim_max :
			      WANT + SPARE;
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	if (rl.rlim_cur < 2 * SPARE) {
		print_message("fd limit %lu: too low for a flood\n",
			      (unsigned long)rl.rlim_cur);
		skip();
		return;
	}
	if (rl.rlim_cur < WANT + SPARE) {
		n = (size_t)rl.rlim_cur - SPARE;
		print_message("fd limit %lu: %zu idle connections\n",
			      (unsigned long)rl.rlim_cur, n);
	}
	idle = calloc(n, sizeof(*idle));
	assert_non_null(idle);
	for (size_t i = 0; i < n; i++)
		client_open_from(&idle[i], mlv_metrics_port(e->m), AF_INET,
				 ATTACKER, NULL);
	pump(e->m, NULL, 0, connections_at_least, &some);
	scrape_in_time(e->m, NULL);
	for (size_t i = 0; i < n; i++)
		client_close(&idle[i]);
	free(idle);
}

static void count_line(void *ctx, const char *line)
{
	(void)line;
	(*(unsigned *)ctx)++;
}

static bool refusals_seen(struct mlv_metrics *m, struct client *cs, size_t n,
			  void *arg)
{
	struct mlv_metrics_server_stats st;

	(void)cs;
	(void)n;
	mlv_metrics_stats(m, &st);
	return *(unsigned *)arg + st.log_dropped >= 22;
}

/* Each client over the per-address limit is refused (the ones it would
 * replace are too new) or replaces one, a log message; a flood of them
 * reaches the log as at most 10 lines. */
static void test_log_rate(void **state)
{
	enum { N = 30 };         /* 8 kept, 22 refused (the 8 too new to go) */
	struct env *e = *state;
	unsigned lines = 0;
	struct mlv_metrics_params p = {
		.listen = "127.0.0.1:0", .src = { .ctl = &e->fx.st },
		.max_connections = TIGHT_MAX_CONNECTIONS,
		.max_per_address = TIGHT_PER_ADDRESS,
		.log = count_line, .log_ctx = &lines,
	};
	struct mlv_metrics_server_stats st;
	struct mlv_metrics *m = NULL;
	struct client c[N];
	char err[256];

	assert_int_equal(mlv_metrics_create(&p, &m, err, sizeof(err)), MLV_OK);
	for (int i = 0; i < N; i++)
		client_open_from(&c[i], mlv_metrics_port(m), AF_INET, ATTACKER,
				 NULL);
	pump(m, NULL, 0, refusals_seen, &lines);
	mlv_metrics_stats(m, &st);
	assert_true(lines <= 10);
	assert_true(st.log_dropped >= 12);
	for (int i = 0; i < N; i++)
		client_close(&c[i]);
	mlv_metrics_destroy(m);
}

/* The first reply has arrived whole (by its Content-Length). */
static bool reply_whole(struct mlv_metrics *m, struct client *cs, size_t n,
			void *arg)
{
	const char *end = strstr(cs->buf, "\r\n\r\n");
	char cl[32];

	(void)m;
	(void)n;
	(void)arg;
	if (!end)
		return false;
	header(cs->buf, "Content-Length", cl, sizeof(cl));
	return cl[0] && cs->len - (size_t)(end + 4 - cs->buf) >=
			(size_t)strtol(cl, NULL, 10);
}

/* A client that keeps a header coming a byte at a time, faster than the
 * idle timeout, is still closed once its request is timeout_ms late:
 * the loop is woken for it by the server's fd alone. */
static void test_request_deadline(void **state)
{
	enum { TIMEOUT_MS = 1000 };
	struct env *e = *state;
	struct mlv_metrics *m = start(&e->fx, "127.0.0.1:0", 0, TIMEOUT_MS);
	struct mlv_metrics_server_stats st;
	struct client c;
	struct trickle t = { .slow = &c, .n_slow = 1, .every_ms = 100 };
	uint64_t t0 = mono_ms(), took;

	client_open(&c, mlv_metrics_port(m), AF_INET, "GET /metrics HTTP/1.1\r\n");
	if (!pump_for(m, &c, 1, trickle_until_done, &t, 5 * TIMEOUT_MS))
		fail_msg("a trickling request still open after %d ms",
			 5 * TIMEOUT_MS);
	took = mono_ms() - t0;
	assert_true(took >= TIMEOUT_MS - 100);
	assert_true(t.sent >= 5);          /* it did keep sending */
	assert_int_equal(c.len, 0);        /* closed, unanswered */
	mlv_metrics_stats(m, &st);
	assert_int_equal(st.request_timeouts, 1);
	client_close(&c);

	/* on a kept-alive connection the deadline starts again once a reply
	 * is sent, and the answered request was not cut short by it */
	client_open(&c, mlv_metrics_port(m), AF_INET,
		    "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
	pump(m, &c, 1, reply_whole, NULL);
	assert_int_equal(parse(&c).status, 200);
	t = (struct trickle){ .slow = &c, .n_slow = 1, .every_ms = 100 };
	t0 = mono_ms();
	if (!pump_for(m, &c, 1, trickle_until_done, &t, 5 * TIMEOUT_MS))
		fail_msg("a trickling second request still open after %d ms",
			 5 * TIMEOUT_MS);
	assert_true(mono_ms() - t0 >= TIMEOUT_MS - 100);
	mlv_metrics_stats(m, &st);
	assert_int_equal(st.request_timeouts, 2);
	assert_int_equal(st.scrapes, 1);
	client_close(&c);
	mlv_metrics_destroy(m);
}

static void test_ipv6_listen(void **state)
{
	struct env *e = *state;
	struct mlv_metrics_params p = {
		.listen = "[::1]:0", .src = { .ctl = &e->fx.st },
	};
	struct mlv_metrics *m = NULL;
	struct client c;
	char err[256];
	int probe = socket(AF_INET6, SOCK_STREAM, 0);

	if (probe < 0) {
		skip();
		return;
	}
	close(probe);
	if (mlv_metrics_create(&p, &m, err, sizeof(err)) != MLV_OK) {
		/* a host without ::1 configured */
		print_message("no IPv6 loopback: %s\n", err);
		return;
	}
	client_open(&c, mlv_metrics_port(m), AF_INET6, scrape_req);
	pump(m, &c, 1, all_done, NULL);
	assert_int_equal(parse(&c).status, 200);
	client_close(&c);
	mlv_metrics_destroy(m);
}

static void test_bad_parameters(void **state)
{
	static const char *const bad[] = {
		"", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1",
		"127.0.0.1:80x", "localhost:9478", "::1:9478", "[127.0.0.1]:80",
		"[::1]9478", "[::1:9478", "300.0.0.1:80",
	};
	struct env *e = *state;
	struct mlv_metrics_params p = { .src = { .ctl = &e->fx.st } };
	struct mlv_metrics *m = NULL;
	char err[256], busy[32];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p.listen = bad[i];
		err[0] = '\0';
		assert_int_equal(mlv_metrics_create(&p, &m, err, sizeof(err)),
				 MLV_E_INVAL);
		assert_non_null(strstr(err, "not IP:PORT"));
	}
	/* the port the fixture's server holds */
	snprintf(busy, sizeof(busy), "127.0.0.1:%u", mlv_metrics_port(e->m));
	p.listen = busy;
	assert_int_equal(mlv_metrics_create(&p, &m, err, sizeof(err)), MLV_E_IO);
	assert_non_null(strstr(err, busy));
	assert_non_null(strstr(err, "cannot listen"));
	p.listen = "127.0.0.1:0";
	p.src.ctl = NULL;
	assert_int_equal(mlv_metrics_create(&p, &m, err, sizeof(err)), MLV_E_INVAL);
	assert_int_equal(mlv_metrics_create(NULL, &m, NULL, 0), MLV_E_INVAL);
	mlv_metrics_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_get_metrics, setup, teardown),
		cmocka_unit_test_setup_teardown(test_routes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keep_alive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_concurrent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connection_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slowloris_other_address, setup_tight, teardown),
		cmocka_unit_test_setup_teardown(test_slowloris_same_address, setup_tight, teardown),
		cmocka_unit_test_setup_teardown(test_idle_flood, setup_tight, teardown),
		cmocka_unit_test_setup_teardown(test_reconnecting_slow_clients, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_request_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_rate, setup_tight, teardown),
		cmocka_unit_test_setup_teardown(test_ipv6_listen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_parameters, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
