/* SPDX-License-Identifier: BSD-3-Clause */
/* Data-path checks in the engine (control/health/health.h, struct
 * mlv_health_tunnel): against loopback listeners, with tunnel callbacks
 * that record what they are given and look at the check's socket. Each
 * check is announced once its socket is bound to a port of its own and
 * has a TTL / hop limit of 1, before it connects, with the VIP's address
 * and forwarding; it is forgotten only after the socket is closed; a
 * failed or missing announcement fails the check with its reason; the
 * HTTP Host header names the VIP; an ipip VIP's ipip_source prefix of
 * the backend's family reaches the tunnel (and only ipip's); a data-path
 * check never shares a probe with a direct one, nor with one of another
 * source prefix. (The packets themselves: check_path_bpf and the lab's
 * lab-health-data-path-*.) */
#define _GNU_SOURCE   /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "control/health/health.h"

#define DEADLINE_MS 10000
#define MAX_SEEN 64

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ------------------------------------------------------- the sockets */

static int listen_on(int family, uint16_t *port)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len;
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
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
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, len), 0);
	assert_int_equal(listen(fd, 64), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
	*port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
					: ((struct sockaddr_in6 *)&ss)->sin6_port);
	return fd;
}

/* This process's TCP socket bound to local port port (host order), or -1. */
static int socket_on_port(uint16_t port)
{
	for (int fd = 0; fd < 1024; fd++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int type = 0;
		socklen_t tlen = sizeof(type);
		uint16_t p;

		if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0 ||
		    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) != 0 ||
		    type != SOCK_STREAM)
			continue;
		if (ss.ss_family == AF_INET)
			p = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		else if (ss.ss_family == AF_INET6)
			p = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		else
			continue;
		if (p == port)
			return fd;
	}
	return -1;
}

/* ------------------------------------------------- the tunnel's side */

struct seen {
	struct mlv_health_tunnel t;
	int ttl;              /* of the check's socket at open */
	bool port_reserved;   /* another bind to the port failed */
	bool still_open;      /* at close: a socket still had the port */
};

struct tun {
	enum mlv_err answer;  /* what open returns */
	const char *why;
	uint32_t opens, closes;
	struct seen open[MAX_SEEN];
	struct seen close[MAX_SEEN];
};

static enum mlv_err t_open(void *ctx, const struct mlv_health_tunnel *t,
			   char *why, size_t len)
{
	struct tun *u = ctx;
	struct seen s = { .t = *t, .ttl = -1 };
	int fd = socket_on_port(t->local_port);
	bool v6 = t->backend.family == MLV_AF_INET6;

	if (fd >= 0) {
		socklen_t l = sizeof(s.ttl);
		struct sockaddr_storage ss = { 0 };
		int other = socket(v6 ? AF_INET6 : AF_INET,
				   SOCK_STREAM | SOCK_CLOEXEC, 0);

		getsockopt(fd, v6 ? IPPROTO_IPV6 : IPPROTO_IP,
			   v6 ? IPV6_UNICAST_HOPS : IP_TTL, &s.ttl, &l);
		ss.ss_family = v6 ? AF_INET6 : AF_INET;
		if (v6)
			((struct sockaddr_in6 *)&ss)->sin6_port = htons(t->local_port);
		else
			((struct sockaddr_in *)&ss)->sin_port = htons(t->local_port);
		s.port_reserved = other >= 0 &&
			bind(other, (struct sockaddr *)&ss,
			     v6 ? sizeof(struct sockaddr_in6)
				: sizeof(struct sockaddr_in)) != 0 &&
			errno == EADDRINUSE;
		if (other >= 0)
			close(other);
	}
	if (u->opens < MAX_SEEN)
		u->open[u->opens] = s;
	u->opens++;
	if (u->answer != MLV_OK && u->why)
		snprintf(why, len, "%s", u->why);
	return u->answer;
}

static void t_close(void *ctx, const struct mlv_health_tunnel *t)
{
	struct tun *u = ctx;
	struct seen s = { .t = *t };

	s.still_open = socket_on_port(t->local_port) >= 0;
	if (u->closes < MAX_SEEN)
		u->close[u->closes] = s;
	u->closes++;
}

/* ------------------------------------------------------------ config */

static struct mlv_config *cfg_one(const char *vip_addr, const char *backend,
				  uint16_t port, enum mlv_health_type type,
				  enum mlv_health_via via)
{
	struct mlv_config *cfg = calloc(1, sizeof(*cfg));
	struct mlv_vip_config *v;
	struct mlv_backend_config *b;

	assert_non_null(cfg);
	cfg->vips = calloc(2, sizeof(*cfg->vips));
	assert_non_null(cfg->vips);
	cfg->n_vips = 1;
	v = &cfg->vips[0];
	snprintf(v->name, sizeof(v->name), "v");
	assert_true(mlv_ip_parse(vip_addr, &v->address));
	v->port = port;
	v->protocol = IPPROTO_TCP;
	v->forwarding = MLV_FWD_GUE;
	v->gue_port = 6080;
	v->table_size = 251;
	v->health = (struct mlv_health_config){
		.type = type, .via = via, .interval_ms = 100,
		.timeout_ms = 80, .rise = 1, .fall = 2, .expect_status = 200,
		.path = "/healthz",
	};
	v->backends = calloc(1, sizeof(*v->backends));
	assert_non_null(v->backends);
	v->n_backends = 1;
	b = &v->backends[0];
	snprintf(b->name, sizeof(b->name), "b");
	assert_true(mlv_ip_parse(backend, &b->address));
	b->weight = 100;
	return cfg;
}

static void cfg_free(struct mlv_config *cfg)
{
	for (uint32_t i = 0; i < cfg->n_vips; i++)
		free(cfg->vips[i].backends);
	free(cfg->vips);
	free(cfg);
}

static struct mlv_health *engine(struct tun *u)
{
	struct mlv_health_options o = { .seed = 7 };
	struct mlv_health *h = NULL;

	if (u)
		o.tunnel = (struct mlv_health_tunnel_ops){
			.open = t_open, .close = t_close, .ctx = u };
	assert_int_equal(mlv_health_create(&o, &h), MLV_OK);
	return h;
}

/* An HTTP server for one listener, run between the engine's steps on the
 * same thread: answers every request with 200 and keeps the last Host
 * header. */
#define SRV_CLIENTS 16
struct http_srv {
	int lfd;
	int c[SRV_CLIENTS];   /* accepted, waiting for their request; 0 = free */
	char host[128];
};

static void http_serve(struct http_srv *s)
{
	int fd;

	while ((fd = accept4(s->lfd, NULL, NULL,
			     SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		int k;

		for (k = 0; k < SRV_CLIENTS && s->c[k]; k++)
			;
		if (k == SRV_CLIENTS)
			close(fd);
		else
			s->c[k] = fd;
	}
	for (int k = 0; k < SRV_CLIENTS; k++) {
		char req[2048];
		const char *hp, *end;
		ssize_t n;

		if (!s->c[k])
			continue;
		n = recv(s->c[k], req, sizeof(req) - 1, MSG_PEEK);
		if (n < 0 && errno == EAGAIN)
			continue;
		if (n > 0) {
			req[n] = '\0';
			if (!strstr(req, "\r\n\r\n"))
				continue;   /* not all there yet */
			hp = strstr(req, "\r\nHost: ");
			if (hp) {
				hp += 8;
				end = strstr(hp, "\r\n");
				snprintf(s->host, sizeof(s->host), "%.*s",
					 end ? (int)(end - hp) : 0, hp);
			}
			(void)!write(s->c[k], "HTTP/1.1 200 OK\r\n"
				     "Content-Length: 0\r\n\r\n", 38);
		}
		close(s->c[k]);
		s->c[k] = 0;
	}
}

static void http_stop(struct http_srv *s)
{
	for (int k = 0; k < SRV_CLIENTS; k++)
		if (s->c[k])
			close(s->c[k]);
	close(s->lfd);
}

/* Process until the pair has completed at least n checks. */
static struct mlv_health_status run_checks(struct mlv_health *h, uint64_t n,
					   struct http_srv *srv)
{
	struct mlv_health_status st;
	uint64_t end = mono_ms() + DEADLINE_MS;

	for (;;) {
		struct pollfd pfd = { .fd = mlv_health_fd(h), .events = POLLIN };

		assert_int_equal(mlv_health_get(h, "v", "b", &st), MLV_OK);
		if (st.checks >= n)
			return st;
		assert_true(mono_ms() < end);
		poll(&pfd, 1, 5);
		assert_int_equal(mlv_health_process(h), MLV_OK);
		if (srv)
			http_serve(srv);
	}
}

/* ------------------------------------------------------------- tests */

static void tcp_case(int family, const char *vip, const char *backend)
{
	uint16_t port;
	int lfd = listen_on(family, &port);
	struct mlv_config *cfg = cfg_one(vip, backend, port, MLV_HEALTH_TCP,
					 MLV_HEALTH_VIA_DATA_PATH);
	struct tun *u = calloc(1, sizeof(*u));
	struct mlv_health *h;
	struct mlv_health_status st;
	struct mlv_ip want_vip, want_be;

	assert_non_null(u);
	h = engine(u);
	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
	st = run_checks(h, 3, NULL);
	assert_true(st.up);
	assert_string_equal(st.last_result, "connected");
	assert_int_equal(st.via, MLV_HEALTH_VIA_DATA_PATH);
	assert_true(mlv_ip_parse(vip, &want_vip));
	assert_true(mlv_ip_parse(backend, &want_be));
	assert_true(mlv_ip_equal(&st.vip, &want_vip));
	assert_true(u->opens >= 3 && u->opens <= MAX_SEEN);
	for (uint32_t i = 0; i < u->opens; i++) {
		const struct seen *s = &u->open[i];

		assert_true(mlv_ip_equal(&s->t.backend, &want_be));
		assert_true(mlv_ip_equal(&s->t.vip, &want_vip));
		assert_int_equal(s->t.port, port);
		assert_int_equal(s->t.forwarding, MLV_FWD_GUE);
		assert_int_equal(s->t.gue_port, 6080);
		assert_false(s->t.has_mac);
		assert_int_not_equal(s->t.local_port, 0);
		assert_int_equal(s->ttl, 1);
		assert_true(s->port_reserved);
	}
	mlv_health_destroy(h);
	/* every open closed, each after its socket */
	assert_int_equal(u->closes, u->opens);
	for (uint32_t i = 0; i < u->closes; i++) {
		assert_false(u->close[i].still_open);
		assert_int_equal(u->close[i].t.local_port, u->open[i].t.local_port);
	}
	free(u);
	cfg_free(cfg);
	close(lfd);
}

static void test_tcp_announced_and_forgotten(void **state)
{
	(void)state;
	tcp_case(AF_INET, "192.0.2.1", "127.0.0.1");
	tcp_case(AF_INET6, "2001:db8::1", "::1");
}

/* A check the tunnel refuses fails, with the tunnel's reason, and is
 * never "closed" on the tunnel's side. */
static void test_refused_fails_with_reason(void **state)
{
	uint16_t port;
	int lfd = listen_on(AF_INET, &port);
	struct mlv_config *cfg = cfg_one("192.0.2.1", "127.0.0.1", port,
					 MLV_HEALTH_TCP, MLV_HEALTH_VIA_DATA_PATH);
	struct tun u = { .answer = MLV_E_NOT_FOUND,
			 .why = "no route to the backend" };
	struct mlv_health *h = engine(&u);
	struct mlv_health_status st;
	(void)state;

	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
	st = run_checks(h, 2, NULL);
	assert_false(st.up);
	assert_string_equal(st.last_result, "data path: no route to the backend");
	mlv_health_destroy(h);
	assert_true(u.opens >= 2);
	assert_int_equal(u.closes, 0);
	cfg_free(cfg);
	close(lfd);
}

/* Without tunnel callbacks a data-path check cannot run: it fails. */
static void test_not_available(void **state)
{
	uint16_t port;
	int lfd = listen_on(AF_INET, &port);
	struct mlv_config *cfg = cfg_one("192.0.2.1", "127.0.0.1", port,
					 MLV_HEALTH_TCP, MLV_HEALTH_VIA_DATA_PATH);
	struct mlv_health *h = engine(NULL);
	struct mlv_health_status st;
	(void)state;

	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
	st = run_checks(h, 2, NULL);
	assert_false(st.up);
	assert_string_equal(st.last_result, "data path: not available");
	mlv_health_destroy(h);
	cfg_free(cfg);
	close(lfd);
}

/* The Host header names what the check reaches: the VIP through the data
 * path, the backend directly. */
static void test_http_host(void **state)
{
	static const struct { enum mlv_health_via via; const char *host; } c[] = {
		{ MLV_HEALTH_VIA_DATA_PATH, "192.0.2.1" },
		{ MLV_HEALTH_VIA_DIRECT, "127.0.0.1" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct http_srv srv = { 0 };
		uint16_t port;
		struct mlv_config *cfg;
		struct tun u = { .answer = MLV_OK };
		struct mlv_health *h;
		struct mlv_health_status st;
		char want[64];

		srv.lfd = listen_on(AF_INET, &port);
		cfg = cfg_one("192.0.2.1", "127.0.0.1", port, MLV_HEALTH_HTTP,
			      c[i].via);
		h = engine(&u);
		assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
		st = run_checks(h, 2, &srv);
		assert_string_equal(st.last_result, "HTTP 200");
		snprintf(want, sizeof(want), "%s:%u", c[i].host, port);
		assert_string_equal(srv.host, want);
		assert_int_equal(st.via, c[i].via);
		mlv_health_destroy(h);
		assert_int_equal(u.opens, u.closes);
		if (c[i].via == MLV_HEALTH_VIA_DIRECT)
			assert_int_equal(u.opens, 0);
		cfg_free(cfg);
		http_stop(&srv);
	}
}

/* The same backend and check, direct for one VIP and through the data
 * path for another (and for a third VIP address): three probes, since
 * they may disagree. */
static void test_probe_identity(void **state)
{
	struct mlv_config *cfg = cfg_one("192.0.2.1", "127.0.0.1", 9,
					 MLV_HEALTH_TCP, MLV_HEALTH_VIA_DIRECT);
	struct tun u = { .answer = MLV_OK };
	struct mlv_health *h = engine(&u);
	struct mlv_health_stats hs;
	(void)state;

	cfg->vips = realloc(cfg->vips, 3 * sizeof(*cfg->vips));
	assert_non_null(cfg->vips);
	for (int k = 1; k <= 2; k++) {
		struct mlv_vip_config *v = &cfg->vips[k];

		*v = cfg->vips[0];
		snprintf(v->name, sizeof(v->name), "v%d", k);
		v->health.via = MLV_HEALTH_VIA_DATA_PATH;
		if (k == 2)
			assert_true(mlv_ip_parse("192.0.2.2", &v->address));
		v->backends = calloc(1, sizeof(*v->backends));
		assert_non_null(v->backends);
		v->backends[0] = cfg->vips[0].backends[0];
	}
	cfg->n_vips = 3;
	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
	mlv_health_stats(h, &hs);
	assert_int_equal(hs.n_pairs, 3);
	assert_int_equal(hs.n_probes, 3);
	mlv_health_destroy(h);
	cfg_free(cfg);
}

static struct mlv_ip_prefix prefix_of(const char *text)
{
	struct mlv_ip_prefix p;

	assert_null(mlv_ip_prefix_parse(text, &p));
	return p;
}

/* An ipip VIP's ipip_source (IPv4 backend) or ipip_source6 (IPv6) is
 * the tunnel's outer_source; a gue VIP's tunnel has none, whatever its
 * model holds. */
static void test_ipip_outer_source(void **state)
{
	static const struct {
		int family;
		const char *vip, *backend;
		enum mlv_forwarding fwd;
		const char *want;   /* NULL: none */
	} c[] = {
		{ AF_INET, "192.0.2.1", "127.0.0.1", MLV_FWD_IPIP, "10.77.0.16/28" },
		{ AF_INET6, "2001:db8::1", "::1", MLV_FWD_IPIP, "fd00:77::100/120" },
		{ AF_INET, "192.0.2.1", "127.0.0.1", MLV_FWD_GUE, NULL },
		{ AF_INET6, "2001:db8::1", "::1", MLV_FWD_GUE, NULL },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint16_t port;
		int lfd = listen_on(c[i].family, &port);
		struct mlv_config *cfg = cfg_one(c[i].vip, c[i].backend, port,
						 MLV_HEALTH_TCP,
						 MLV_HEALTH_VIA_DATA_PATH);
		struct tun u = { .answer = MLV_OK };
		struct mlv_health *h;
		struct mlv_health_status st;

		cfg->vips[0].forwarding = c[i].fwd;
		cfg->vips[0].ipip_source = prefix_of("10.77.0.16/28");
		cfg->vips[0].ipip_source6 = prefix_of("fd00:77::100/120");
		h = engine(&u);
		assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
		st = run_checks(h, 2, NULL);
		assert_true(st.up);
		assert_true(u.opens >= 2 && u.opens <= MAX_SEEN);
		for (uint32_t k = 0; k < u.opens; k++) {
			const struct mlv_ip_prefix *got = &u.open[k].t.outer_source;
			struct mlv_ip_prefix want = { 0 };

			if (c[i].want)
				want = prefix_of(c[i].want);
			assert_int_equal(u.open[k].t.forwarding, c[i].fwd);
			assert_int_equal(got->ip.family, want.ip.family);
			assert_true(mlv_ip_equal(&got->ip, &want.ip));
			assert_int_equal(got->len, want.len);
		}
		mlv_health_destroy(h);
		assert_int_equal(u.closes, u.opens);
		cfg_free(cfg);
		close(lfd);
	}
}

/* Data-path ipip checks of one backend and VIP address that differ only
 * in the VIP's ipip_source (address or length) are checks of their own:
 * the backend may accept one source and not the other. ipip_source6
 * does not matter to an IPv4 backend. */
static void test_probe_identity_source(void **state)
{
	static const char *const src[] = {
		NULL,               /* no prefix */
		"10.77.0.16/28",
		"10.77.0.16/28",    /* shares with the one above */
		"10.77.0.32/28",
		"10.77.0.16/29",
	};
	const uint32_t n = sizeof(src) / sizeof(src[0]);
	struct mlv_config *cfg = cfg_one("192.0.2.1", "127.0.0.1", 9,
					 MLV_HEALTH_TCP,
					 MLV_HEALTH_VIA_DATA_PATH);
	struct tun u = { .answer = MLV_OK };
	struct mlv_health *h = engine(&u);
	struct mlv_health_stats hs;
	(void)state;

	cfg->vips = realloc(cfg->vips, n * sizeof(*cfg->vips));
	assert_non_null(cfg->vips);
	cfg->vips[0].forwarding = MLV_FWD_IPIP;
	cfg->vips[0].gue_port = 0;
	for (uint32_t k = 0; k < n; k++) {
		struct mlv_vip_config *v = &cfg->vips[k];

		if (k) {
			*v = cfg->vips[0];
			v->backends = calloc(1, sizeof(*v->backends));
			assert_non_null(v->backends);
			v->backends[0] = cfg->vips[0].backends[0];
		}
		snprintf(v->name, sizeof(v->name), "v%u", k);
		if (src[k])
			v->ipip_source = prefix_of(src[k]);
		if (k == 2)
			v->ipip_source6 = prefix_of("fd00:77::100/120");
	}
	cfg->n_vips = n;
	assert_int_equal(mlv_health_sync(h, cfg, NULL), MLV_OK);
	mlv_health_stats(h, &hs);
	assert_int_equal(hs.n_pairs, n);
	assert_int_equal(hs.n_probes, n - 1);
	mlv_health_destroy(h);
	cfg_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp_announced_and_forgotten),
		cmocka_unit_test(test_refused_fails_with_reason),
		cmocka_unit_test(test_not_available),
		cmocka_unit_test(test_http_host),
		cmocka_unit_test(test_probe_identity),
		cmocka_unit_test(test_ipip_outer_source),
		cmocka_unit_test(test_probe_identity_source),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
