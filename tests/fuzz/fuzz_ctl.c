/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target for the control socket: the input is what one client
 * sends (request lines, JSON or not) to a real server (control/ctl/
 * server.c) whose handler is the real dispatcher (mlv_ctl_handle: the
 * argument checks against control/protocol/spec.c, then the commands)
 * over the fake daemon of tests/support/ctl_fixture.c (a real config and
 * generation, fake workers, reloads and overrides). The server runs on
 * this thread, driven like the daemon drives it; the client sends the
 * input, closes its sending side and reads until the server closes.
 *
 * Every reply must be a JSON object with a boolean "ok" and, when false,
 * an "error" string; every complete line that is not blank gets exactly
 * one reply (while no line is over the limit, which ends the connection
 * after an error reply); the server must end the
 * connection and forget the client; nothing may leak. Limits are small
 * (lines of 1 KiB, replies of 16 KiB) so their errors are reached too.
 * The connection is at the admin level, so mutating commands reach their
 * handlers; runtime overrides are undone after each input. The
 * fixture's VIP "big" (655373 slots) makes a table dump take tens of
 * milliseconds, so seeds and dictionary name "web" only.
 *
 * Each line also goes through maglevctl's side of the table: split into
 * words, a line whose first word is a command has the rest turned into
 * an args object (mlv_ctl_args_from_argv), which must then pass the
 * daemon's check (mlv_ctl_args_check), as spec.h promises. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <cmocka.h>
#include <jansson.h>

#include "control/ctl/commands.h"
#include "control/ctl/server.h"
#include "control/protocol/spec.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/support/ctl_fixture.h"

#define LINE_MAX_BYTES  1024u
#define REPLY_MAX_BYTES (16u << 10)
#define DEADLINE_NS     (30ull * 1000000000ull)

static struct ctl_fx fx;
static bool ready;

static void cleanup(void)
{
	mlv_ctl_server_destroy(fx.srv);
	fx.srv = NULL;
	fx.st.server = NULL;
	ctl_fx_free(&fx);
}

static void init(void)
{
	struct mlv_ctl_server_params p = {
		.mode = 0600,
		.handle = mlv_ctl_handle,
		.mutates = mlv_ctl_request_mutates,
		.line_max = LINE_MAX_BYTES,
		.reply_max = REPLY_MAX_BYTES,
	};
	char err[256] = "";

	ctl_fx_init(&fx);
	p.path = fx.path;
	p.ctx = &fx.st;
	p.admin_gid = (uint32_t)getegid();
	if (mlv_ctl_server_create(&p, &fx.srv, err, sizeof(err)) != MLV_OK) {
		fprintf(stderr, "fuzz_ctl: server: %s\n", err);
		abort();
	}
	fx.st.server = fx.srv;
	ready = true;
	atexit(cleanup);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int connect_client(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	CHECK(fd >= 0);
	memcpy(sa.sun_path, fx.path, strlen(fx.path));
	CHECK(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	return fd;
}

/* Drive the server until it closes fd's connection, sending data on the
 * way; what came back goes to *out (malloc'd, NUL-terminated). */
static size_t exchange(int fd, const uint8_t *data, size_t size, char **out)
{
	uint64_t deadline = now_ns() + DEADLINE_NS;
	size_t sent = 0, len = 0, cap = 4096;
	char *buf = malloc(cap);
	bool shut = false;

	CHECK(buf != NULL);
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = mlv_ctl_fd(fx.srv), .events = POLLIN },
			{ .fd = fd, .events = POLLIN },
		};
		ssize_t n;

		if (sent < size) {
			n = send(fd, data + sent, size - sent,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n > 0)
				sent += (size_t)n;
			else
				CHECK(errno == EAGAIN || errno == EWOULDBLOCK);
		}
		if (sent == size && !shut) {
			CHECK(shutdown(fd, SHUT_WR) == 0);
			shut = true;
		}
		CHECK(mlv_ctl_process(fx.srv) == MLV_OK);
		if (len + 1 == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			CHECK(buf != NULL);
		}
		n = recv(fd, buf + len, cap - len - 1, MSG_DONTWAIT);
		if (n == 0)
			break;
		if (n > 0) {
			len += (size_t)n;
			continue;
		}
		/* the server drops a client whose request line is too long
		 * without reading the rest: a reset then ends it */
		if (errno == ECONNRESET)
			break;
		CHECK(errno == EAGAIN || errno == EWOULDBLOCK);
		CHECK(now_ns() < deadline);
		(void)poll(pfd, 2, 10);
	}
	buf[len] = '\0';
	*out = buf;
	return len;
}

/* Every line a JSON object with a boolean "ok" and an "error" string
 * when it is false. Returns the number of replies. */
static size_t check_replies(char *text, size_t len)
{
	size_t n = 0;
	char *line = text, *end = text + len;

	CHECK(len == 0 || text[len - 1] == '\n');
	while (line < end) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		json_error_t jerr;
		json_t *reply, *ok;

		CHECK(nl != NULL);
		reply = json_loadb(line, (size_t)(nl - line), 0, &jerr);
		if (!reply)
			fprintf(stderr, "fuzz_ctl: reply is not JSON: %.*s\n",
				(int)(nl - line), line);
		CHECK(json_is_object(reply));
		ok = json_object_get(reply, "ok");
		CHECK(json_is_boolean(ok));
		if (!json_is_true(ok))
			CHECK(json_is_string(json_object_get(reply, "error")));
		json_decref(reply);
		n++;
		line = nl + 1;
	}
	return n;
}

/* maglevctl's words for one line, checked as the daemon checks them. */
static void check_argv(const uint8_t *line, size_t len)
{
	char *text = malloc(len + 1), *words[32], *save = NULL, err[256];
	const struct mlv_ctl_cmd_spec *cmd;
	int n = 0;

	CHECK(text != NULL);
	memcpy(text, line, len);
	text[len] = '\0';
	for (char *w = strtok_r(text, " \t\r", &save); w && n < 32;
	     w = strtok_r(NULL, " \t\r", &save))
		words[n++] = w;
	cmd = n ? mlv_ctl_cmd_find(words[0]) : NULL;
	if (cmd) {
		json_t *args = mlv_ctl_args_from_argv(cmd, n - 1, words + 1,
						      err, sizeof(err));

		if (args && !mlv_ctl_args_check(cmd, args, err, sizeof(err))) {
			fprintf(stderr, "fuzz_ctl: maglevctl's args for '%s' "
				"fail the daemon's check: %s\n", cmd->name, err);
			abort();
		}
		json_decref(args);
		mlv_ctl_synopsis(cmd, err, sizeof(err));
		CHECK(strlen(err) < sizeof(err));
	}
	free(text);
}

/* Whether the server answers this line: not blank once the trailing
 * CR, spaces and tabs it ignores are gone. */
static bool answered(const uint8_t *line, size_t len)
{
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' ||
		       line[len - 1] == '\t'))
		len--;
	return len > 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mlv_ctl_server_stats st;
	size_t lines = 0, want = 0, start = 0, len, got;
	bool oversized = false;
	char *out, detail[128];
	int fd;

	if (!ready)
		init();
	for (size_t i = 0; i < size; i++) {
		if (data[i] != '\n')
			continue;
		check_argv(data + start, i - start);
		oversized |= i - start > LINE_MAX_BYTES;
		want += answered(data + start, i - start);
		start = i + 1;
		lines++;
	}
	oversized |= size - start > LINE_MAX_BYTES;

	fd = connect_client();
	len = exchange(fd, data, size, &out);
	close(fd);
	got = check_replies(out, len);
	if (oversized)
		CHECK(got <= lines + 1);
	else if (got != want) {
		fprintf(stderr, "fuzz_ctl: %zu replies to %zu requests\n", got,
			want);
		abort();
	}
	free(out);

	/* the server forgot the client: nothing is left of it */
	CHECK(mlv_ctl_process(fx.srv) == MLV_OK);
	mlv_ctl_server_get_stats(fx.srv, &st);
	CHECK(st.clients == 0);

	/* the fake daemon as it started, so an input means the same alone */
	if (fx.n_ov > 0) {
		fx.n_ov = 0;
		CHECK(fx.st.set_overrides(fx.st.ctx, NULL, 0, detail,
					  sizeof(detail)) == MLV_OK);
	}
	return 0;
}
