/* SPDX-License-Identifier: BSD-3-Clause */
/* maglevctl top (top.h): options, the control-socket connection and the
 * polling loop. Frames are drawn by top_view.c. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "tools/bin/maglevctl/top.h"

enum { EXIT_OK = 0, EXIT_REFUSED = 1, EXIT_USAGE = 2, EXIT_NO_REPLY = 3 };

/* Lines above the table: summary (4), blank, header; plus one for the
 * "more rows" line. */
#define TOP_HEADER_LINES 7
/* Largest reply accepted, as for every maglevctl command. */
#define REPLY_MAX ((64u << 20) + 1)

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *out)
{
	fputs(
"usage: maglevctl [-s SOCKET] top [VIP] [-i SECONDS] [-n COUNT]\n"
"\n"
"A live view of per-VIP and per-backend packet, byte and new-flow rates,\n"
"drops by reason and conntrack occupancy, refreshed in place.\n"
"\n"
"  VIP                  only this VIP and its backends\n"
"  -i, --interval SECS  time between refreshes (default 1, at least 0.01)\n"
"  -n, --iterations N   print N frames, then exit (default: until Ctrl-C)\n"
"  -h, --help           this help\n"
"\n"
"On a terminal the frame is redrawn in place; otherwise frames follow\n"
"each other, separated by a blank line (for scripts and logs).\n", out);
}

/* ---- the connection ---- */

struct conn {
	const char *path;
	int timeout_s;
	int fd;
	char *buf;               /* bytes received past the last reply */
	size_t len, cap;
};

static bool conn_open(struct conn *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = c->timeout_s };

	if (strlen(c->path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "maglevctl: socket path too long: %s\n", c->path);
		return false;
	}
	memcpy(sa.sun_path, c->path, strlen(c->path));
	c->len = 0;
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 ||
	    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0 ||
	    connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		fprintf(stderr, "maglevctl: cannot connect to %s: %s "
			"(is maglevd running? -s names another socket)\n",
			c->path, strerror(errno));
		if (c->fd >= 0)
			close(c->fd);
		c->fd = -1;
		return false;
	}
	return true;
}

static void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->len = 0;
}

static bool send_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* The next reply line, parsed; NULL on a lost connection or bad JSON. */
static json_t *read_reply(struct conn *c)
{
	for (;;) {
		char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
		ssize_t n;

		if (nl) {
			size_t line = (size_t)(nl - c->buf);
			json_t *j = json_loadb(c->buf, line, 0, NULL);

			memmove(c->buf, nl + 1, c->len - line - 1);
			c->len -= line + 1;
			return j;
		}
		if (c->len + 1 >= c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 65536;
			char *p = cap > REPLY_MAX ? NULL : realloc(c->buf, cap);

			if (!p)
				return NULL;
			c->buf = p;
			c->cap = cap;
		}
		n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
		if (n < 0 && errno == EINTR && !stop_requested)
			continue;
		if (n <= 0)
			return NULL;
		c->len += (size_t)n;
	}
}

/* One request; the reply, which may be ok:false. On a lost connection,
 * reconnect once and retry (the daemon may have dropped an idle client
 * or restarted). NULL with a message if that fails too. */
static json_t *call(struct conn *c, const char *request)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		json_t *reply;

		if (c->fd < 0 && !conn_open(c))
			return NULL;
		if (send_all(c->fd, request, strlen(request))) {
			reply = read_reply(c);
			if (json_is_object(reply) &&
			    json_is_boolean(json_object_get(reply, "ok")))
				return reply;
			json_decref(reply);
		}
		conn_close(c);
		if (stop_requested)
			return NULL;
	}
	fprintf(stderr, "maglevctl: no reply from %s\n", c->path);
	return NULL;
}

/* ---- polling ---- */

/* Fill s from the daemon; returns an exit status (EXIT_OK on success). */
static int poll_sample(struct conn *c, const char *vip, struct top_sample *s)
{
	json_t *r[3] = { NULL, NULL, NULL };
	char backends_req[256];
	int rc = EXIT_OK;

	if (vip) {
		json_t *req = json_pack("{s:s, s:{s:s}}", "command", "backends",
					"args", "vip", vip);
		char *text = req ? json_dumps(req, JSON_COMPACT) : NULL;

		json_decref(req);
		if (!text || strlen(text) + 2 > sizeof(backends_req)) {
			free(text);
			fprintf(stderr, "maglevctl: VIP name too long\n");
			return EXIT_USAGE;
		}
		snprintf(backends_req, sizeof(backends_req), "%s\n", text);
		free(text);
	} else {
		snprintf(backends_req, sizeof(backends_req),
			 "{\"command\":\"backends\"}\n");
	}
	r[0] = call(c, "{\"command\":\"stats\"}\n");
	r[1] = r[0] ? call(c, "{\"command\":\"vips\"}\n") : NULL;
	r[2] = r[1] ? call(c, backends_req) : NULL;
	if (!r[2]) {
		rc = EXIT_NO_REPLY;
		goto out;
	}
	for (int i = 0; i < 3; i++) {
		if (!json_is_true(json_object_get(r[i], "ok"))) {
			const char *e = json_string_value(json_object_get(r[i], "error"));

			fprintf(stderr, "maglevctl: %s\n", e ? e : "request refused");
			rc = EXIT_REFUSED;
			goto out;
		}
	}
	s->time_ns = json_integer_value(json_object_get(r[0], "time_ns"));
	s->generation = (uint32_t)json_integer_value(json_object_get(r[1], "generation"));
	s->stats = r[0];
	s->vips = json_incref(json_object_get(r[1], "vips"));
	s->backends = json_incref(json_object_get(r[2], "backends"));
	r[0] = NULL;
	if (!json_is_array(s->vips) || !json_is_array(s->backends) ||
	    !top_sample_index(s)) {
		fprintf(stderr, "maglevctl: unexpected reply shape or out of memory\n");
		rc = EXIT_NO_REPLY;
	}
out:
	for (int i = 0; i < 3; i++)
		json_decref(r[i]);
	return rc;
}

static void sleep_until(const struct timespec *t)
{
	while (!stop_requested &&
	       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL) == EINTR)
		;
}

static void advance(struct timespec *t, double s)
{
	long long ns = t->tv_nsec + llround(s * 1e9);

	t->tv_sec += (time_t)(ns / 1000000000LL);
	t->tv_nsec = (long)(ns % 1000000000LL);
}

static int parse_args(int argc, char **argv, struct top_view_opts *o,
		      long *iterations)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int opt;

	/* 0, not 1: glibc then also resets its scanning state, left over
	 * from main's parse that stopped at "top" */
	optind = 0;
	while ((opt = getopt_long(argc, argv, "i:n:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			o->interval_s = strtod(optarg, &end);
			if (*end || !(o->interval_s >= 0.01 && o->interval_s <= 3600)) {
				fprintf(stderr, "maglevctl: top -i takes 0.01 to 3600 seconds\n");
				return EXIT_USAGE;
			}
			break;
		case 'n':
			*iterations = strtol(optarg, &end, 10);
			if (*end || *iterations < 1 || *iterations > 1000000000L) {
				fprintf(stderr, "maglevctl: top -n takes a count from 1\n");
				return EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc)
		o->vip = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "maglevctl: top takes at most one VIP\n");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int maglevctl_top(const char *socket_path, int timeout_s, int argc,
		  char **argv)
{
	struct top_view_opts o = { .interval_s = 1.0 };
	struct top_sample prev = { 0 }, cur = { 0 };
	struct conn c = { .path = socket_path, .timeout_s = timeout_s, .fd = -1 };
	struct sigaction sa = { .sa_handler = on_signal };
	struct timespec next;
	long iterations = 0, frames = 0;
	int rc = parse_args(argc, argv, &o, &iterations);

	if (rc != EXIT_OK)
		return rc < 0 ? EXIT_OK : rc;
	o.ansi = isatty(STDOUT_FILENO);
	if (o.ansi) {
		struct winsize ws;

		if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 &&
		    ws.ws_row > TOP_HEADER_LINES + 1)
			o.max_rows = ws.ws_row - TOP_HEADER_LINES;
	}
	/* Ctrl-C ends the loop (and the frame in progress) cleanly. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	clock_gettime(CLOCK_MONOTONIC, &next);
	/* The first poll is only the baseline: every frame shows rates. */
	rc = poll_sample(&c, o.vip, &prev);
	while (rc == EXIT_OK && !stop_requested &&
	       (iterations == 0 || frames < iterations)) {
		advance(&next, o.interval_s);
		sleep_until(&next);
		if (stop_requested)
			break;
		rc = poll_sample(&c, o.vip, &cur);
		if (rc != EXIT_OK)
			break;
		if (cur.time_ns > prev.time_ns)
			top_view_frame(&prev, &cur, &o, frames++ == 0, stdout);
		top_sample_clear(&prev);
		prev = cur;
		memset(&cur, 0, sizeof(cur));
	}
	if (stop_requested && rc == EXIT_NO_REPLY)
		rc = EXIT_OK;           /* interrupted mid-request */
	top_sample_clear(&prev);
	top_sample_clear(&cur);
	conn_close(&c);
	free(c.buf);
	if (fflush(stdout) != 0 && rc == EXIT_OK) {
		fprintf(stderr, "maglevctl: writing output: %s\n", strerror(errno));
		rc = EXIT_NO_REPLY;
	}
	return rc;
}
