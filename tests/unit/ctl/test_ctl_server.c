/* SPDX-License-Identifier: BSD-3-Clause */
/* The control socket server: taking the path (mode, directory, stale and
 * live sockets), framing and hostile clients (garbage, oversized lines,
 * half requests, abrupt disconnects, slow readers, 200 at once), and
 * maglevctl against it. Command replies: test_ctl_commands.c.
 *
 * argv[1], when given, is the maglevctl executable to run end to end. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <grp.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "tests/support/ctl_fixture.h"

static const char *maglevctl_path;

static struct mlv_ctl_server_params defaults(void)
{
	return (struct mlv_ctl_server_params){ .mode = 0660 };
}

static int setup(void **state)
{
	struct ctl_fx *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	ctl_fx_init(fx);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	ctl_fx_free(*state);
	free(*state);
	return 0;
}

static int64_t counter(struct ctl_fx *fx, const char *name)
{
	json_t *c = ctl_server_counters(fx);
	int64_t v = json_integer_value(json_object_get(c, name));

	assert_true(json_is_integer(json_object_get(c, name)));
	json_decref(c);
	return v;
}

/* A plain socket at path: bound, optionally listening; returns its fd. */
static int other_socket(const char *path, bool listening)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_true(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path));
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (listening)
		assert_int_equal(listen(fd, 4), 0);
	return fd;
}

static void make_run_dir(struct ctl_fx *fx)
{
	char dir[160];

	snprintf(dir, sizeof(dir), "%s/run", fx->dir);
	assert_int_equal(mkdir(dir, 0755), 0);
}

/* ---- taking the path ---- */

static void test_mode_and_directory(void **state)
{
	static const uint32_t modes[] = { 0600, 0640, 0660, 0620 };
	struct ctl_fx *fx = *state;
	char dir[160];
	struct stat st;

	umask(022);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct mlv_ctl_server_params p = defaults();

		p.mode = modes[i];
		ctl_fx_start(fx, p);
		assert_int_equal(lstat(fx->path, &st), 0);
		assert_true(S_ISSOCK(st.st_mode));
		assert_int_equal(st.st_mode & 07777, modes[i]);
		snprintf(dir, sizeof(dir), "%s/run", fx->dir);
		assert_int_equal(stat(dir, &st), 0);
		assert_true(S_ISDIR(st.st_mode));
		assert_int_equal(st.st_mode & 0777, 0750);
		json_decref(ctl_call1(fx, "{\"command\": \"help\"}"));
		ctl_fx_stop(fx);
		/* the socket file goes with the server */
		assert_int_not_equal(lstat(fx->path, &st), 0);
		assert_int_equal(errno, ENOENT);
	}
}

static void test_bad_modes_refused(void **state)
{
	static const uint32_t world_writable[] = { 0666, 0662, 0777, 0002 };
	struct ctl_fx *fx = *state;
	struct mlv_ctl_server_params p = defaults();
	struct mlv_ctl_server *srv = NULL;
	char err[256];
	struct stat st;

	p.path = fx->path;
	p.handle = mlv_ctl_handle;
	p.ctx = &fx->st;
	for (size_t i = 0; i < sizeof(world_writable) / sizeof(world_writable[0]); i++) {
		p.mode = world_writable[i];
		err[0] = '\0';
		assert_int_equal(mlv_ctl_server_create(&p, &srv, err, sizeof(err)),
				 MLV_E_PERM);
		assert_null(srv);
		assert_non_null(strstr(err, "world-writable"));
		assert_int_not_equal(lstat(fx->path, &st), 0);
	}
	p.mode = 01660;   /* sticky bit: not a permission */
	assert_int_equal(mlv_ctl_server_create(&p, &srv, err, sizeof(err)),
			 MLV_E_INVAL);
	assert_int_equal(mlv_ctl_check_mode(0660), MLV_OK);
	assert_int_equal(mlv_ctl_check_mode(0664), MLV_OK);
	assert_int_equal(mlv_ctl_check_mode(0666), MLV_E_PERM);
}

static void test_stale_socket_replaced(void **state)
{
	struct ctl_fx *fx = *state;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, probe;

	make_run_dir(fx);
	/* a crashed instance: its socket file stays, nobody listens */
	close(other_socket(fx->path, true));
	probe = socket(AF_UNIX, SOCK_STREAM, 0);
	memcpy(sa.sun_path, fx->path, strlen(fx->path));
	assert_int_not_equal(connect(probe, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(errno, ECONNREFUSED);
	close(probe);

	ctl_fx_start(fx, defaults());
	fd = ctl_connect(fx->path);
	json_t *r = ctl_call(fd, "{\"command\": \"status\"}");

	assert_true(ctl_ok(r));
	json_decref(r);
	close(fd);
}

static void test_live_socket_refused(void **state)
{
	struct ctl_fx *fx = *state;
	struct mlv_ctl_server_params p = defaults();
	struct mlv_ctl_server *srv = NULL;
	char err[256] = "";
	int live, c;

	make_run_dir(fx);
	live = other_socket(fx->path, true);
	p.path = fx->path;
	p.handle = mlv_ctl_handle;
	p.ctx = &fx->st;
	assert_int_equal(mlv_ctl_server_create(&p, &srv, err, sizeof(err)),
			 MLV_E_BUSY);
	assert_null(srv);
	assert_non_null(strstr(err, fx->path));
	assert_non_null(strstr(err, "listening"));
	/* the other instance keeps its socket */
	c = ctl_connect(fx->path);
	close(c);
	close(live);
	unlink(fx->path);

	/* a second server on the path of a running one: the lock says no */
	ctl_fx_start(fx, defaults());
	err[0] = '\0';
	assert_int_equal(mlv_ctl_server_create(&p, &srv, err, sizeof(err)),
			 MLV_E_BUSY);
	assert_non_null(strstr(err, "another maglevd"));
	json_t *r = ctl_call1(fx, "{\"command\": \"help\"}");

	assert_true(ctl_ok(r));
	json_decref(r);
}

/* A directory others may write (even a sticky one), or someone else's,
 * or a lock file someone else made: refused, saying why, and nothing
 * is bound. */
static void test_untrusted_directory_refused(void **state)
{
	struct ctl_fx *fx = *state;
	struct mlv_ctl_server_params p = defaults();
	struct mlv_ctl_server *srv = NULL;
	char err[256] = "", dir[160], lock[200];
	struct stat st;
	int fd;

	make_run_dir(fx);
	snprintf(dir, sizeof(dir), "%s/run", fx->dir);
	p.path = fx->path;
	p.handle = mlv_ctl_handle;
	p.ctx = &fx->st;
	assert_int_equal(chmod(dir, 01777), 0);
	assert_int_equal(mlv_ctl_server_create(&p, &srv, err, sizeof(err)),
			 MLV_E_PERM);
	assert_non_null(strstr(err, "writable by others"));
	assert_non_null(strstr(err, dir));
	assert_int_not_equal(lstat(fx->path, &st), 0);
	assert_int_equal(chmod(dir, 0755), 0);
	if (geteuid() != 0)
		return;
	/* someone else's directory */
	assert_int_equal(chown(dir, 65534, 65534), 0);
	assert_int_equal(mlv_ctl_server_create(&p, &srv, err, sizeof(err)),
			 MLV_E_PERM);
	assert_non_null(strstr(err, "owner uid 65534"));
	assert_int_equal(chown(dir, 0, 0), 0);
	/* a lock file someone else put there (while they could) */
	snprintf(lock, sizeof(lock), "%s.lock", fx->path);
	fd = open(lock, O_CREAT | O_WRONLY | O_EXCL, 0644);
	assert_true(fd >= 0);
	assert_int_equal(fchown(fd, 65534, 65534), 0);
	close(fd);
	assert_int_equal(mlv_ctl_server_create(&p, &srv, err, sizeof(err)),
			 MLV_E_PERM);
	assert_non_null(strstr(err, "not a file of ours"));
	assert_int_equal(unlink(lock), 0);
	/* made as it should be: taken */
	ctl_fx_start(fx, defaults());
}

static void test_other_files_refused(void **state)
{
	struct ctl_fx *fx = *state;
	struct mlv_ctl_server_params p = defaults();
	struct mlv_ctl_server *srv = NULL;
	char err[256] = "", buf[16] = "", longpath[200];
	int fd;

	make_run_dir(fx);
	fd = open(fx->path, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "keep", 4), 4);
	close(fd);
	p.path = fx->path;
	p.handle = mlv_ctl_handle;
	p.ctx = &fx->st;
	assert_int_equal(mlv_ctl_server_create(&p, &srv, err, sizeof(err)),
			 MLV_E_EXISTS);
	assert_non_null(strstr(err, "not a socket"));
	fd = open(fx->path, O_RDONLY);
	assert_int_equal(read(fd, buf, sizeof(buf)), 4);
	assert_memory_equal(buf, "keep", 4);
	close(fd);

	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	p.path = longpath;
	assert_int_equal(mlv_ctl_server_create(&p, &srv, err, sizeof(err)),
			 MLV_E_INVAL);
	p.path = "";
	assert_int_equal(mlv_ctl_server_create(&p, &srv, err, sizeof(err)),
			 MLV_E_INVAL);
}

/* ---- hostile and unusual clients ---- */

static void expect_error(int fd, const char *line, const char *needle)
{
	json_t *r = ctl_call(fd, line);

	assert_false(ctl_ok(r));
	if (!strstr(ctl_error(r), needle))
		fail_msg("%s: error \"%s\" lacks \"%s\"", line, ctl_error(r), needle);
	json_decref(r);
}

static void test_garbage(void **state)
{
	struct ctl_fx *fx = *state;
	char *deep;
	int fd;

	ctl_fx_start(fx, defaults());
	fd = ctl_connect(fx->path);
	expect_error(fd, "hello", "invalid JSON");
	expect_error(fd, "{\"command\": \"status\"", "invalid JSON");
	expect_error(fd, "{\"command\": \"status\"} trailing", "invalid JSON");
	expect_error(fd, "[1, 2, 3]", "JSON object");
	expect_error(fd, "42", "JSON object");
	expect_error(fd, "\"status\"", "JSON object");
	expect_error(fd, "null", "JSON object");
	expect_error(fd, "{\"command\": 5}", "\"command\" must be a string");
	expect_error(fd, "{}", "\"command\" must be a string");
	expect_error(fd, "{\"command\": \"status\", \"command\": \"help\"}",
		     "invalid JSON");
	expect_error(fd, "{\"command\": \"nosuch\"}", "unknown command");
	expect_error(fd, "{\"command\": \"help\", \"extra\": 1}",
		     "unknown request field");
	expect_error(fd, "{\"command\": \"table\"}", "missing argument \"vip\"");
	expect_error(fd, "{\"command\": \"table\", \"args\": []}", "must be an object");
	expect_error(fd, "{\"command\": \"table\", \"args\": {\"vip\": 1}}",
		     "non-empty string");
	expect_error(fd, "{\"command\": \"table\", \"args\": {\"vip\": \"web\", \"x\": 1}}",
		     "unknown argument \"x\"");
	expect_error(fd, "{\"command\": \"lookup\", \"args\": {\"vip\": \"web\", "
		     "\"src\": \"198.51.100.1\", \"sport\": 70000}}", "0 to 65535");
	expect_error(fd, "{\"command\": \"stats\", \"args\": {\"per_worker\": 1}}",
		     "true or false");
	expect_error(fd, "\x01\x02\xff\xfe", "invalid JSON");
	expect_error(fd, "{\"command\": \"st\\u0000atus\"}", "invalid JSON");
	/* nesting far beyond any sane request: jansson's depth limit */
	deep = malloc(40001);
	assert_non_null(deep);
	memset(deep, '[', 20000);
	memset(deep + 20000, ']', 20000);
	deep[40000] = '\0';
	expect_error(fd, deep, "invalid JSON");
	free(deep);

	/* blank lines get no reply: the next reply is the request's own */
	assert_true(ctl_send(fd, "\n \r\n", 4));
	json_t *r = ctl_call(fd, "{\"command\": \"help\", \"id\": \"after-blank\"}");

	assert_true(ctl_ok(r));
	assert_string_equal(json_string_value(json_object_get(r, "id")), "after-blank");
	json_decref(r);
	close(fd);
	assert_true(counter(fx, "bad_requests") >= 9);
}

static void test_oversized_line(void **state)
{
	struct ctl_fx *fx = *state;
	size_t big = 1u << 20;
	char *line = malloc(big), *reply, buf[64];
	int fd, other;
	json_t *r;

	assert_non_null(line);
	ctl_fx_start(fx, defaults());
	other = ctl_connect(fx->path);
	fd = ctl_connect(fx->path);
	memset(line, 'x', big);
	/* the server stops reading after 64 KiB and closes: the send fails
	 * part way (EPIPE/ECONNRESET) or completes into buffers */
	(void)ctl_send(fd, line, big);
	reply = ctl_read_line(fd);
	assert_non_null(reply);
	r = json_loads(reply, 0, NULL);
	assert_non_null(r);
	assert_false(ctl_ok(r));
	assert_non_null(strstr(ctl_error(r), "longer than 65536 bytes"));
	json_decref(r);
	free(reply);
	/* then the connection ends: EOF, or a reset for the unread bytes */
	assert_true(recv(fd, buf, sizeof(buf), 0) <= 0);
	close(fd);

	r = ctl_call(other, "{\"command\": \"vips\"}");
	assert_true(ctl_ok(r));
	json_decref(r);
	close(other);
	assert_int_equal(counter(fx, "oversized"), 1);
	free(line);
}

/* A request padded to exactly the line limit passes; one byte more
 * does not. */
static void test_line_limit_boundary(void **state)
{
	struct ctl_fx *fx = *state;
	struct mlv_ctl_server_params p = defaults();
	char line[300];
	const char *req = "{\"command\": \"help\"}";
	json_t *r;
	int fd;

	p.line_max = 256;
	ctl_fx_start(fx, p);
	memset(line, ' ', sizeof(line));
	memcpy(line, req, strlen(req));
	line[256] = '\0';
	fd = ctl_connect(fx->path);
	r = ctl_call(fd, line);
	assert_true(ctl_ok(r));
	json_decref(r);
	/* 257 bytes: refused as soon as the 257th arrives, so the newline
	 * may find the connection closed */
	line[256] = ' ';
	line[257] = '\n';
	(void)ctl_send(fd, line, 258);
	char *reply = ctl_read_line(fd);

	assert_non_null(reply);
	assert_non_null(strstr(reply, "longer than 256 bytes"));
	free(reply);
	close(fd);
}

static void test_200_concurrent_clients(void **state)
{
	enum { N = 200 };
	struct ctl_fx *fx = *state;
	int fd[N];
	char req[128];

	ctl_fx_start(fx, defaults());
	/* all connect and send before any reply is read */
	for (int i = 0; i < N; i++) {
		fd[i] = ctl_connect(fx->path);
		snprintf(req, sizeof(req), "{\"command\": \"%s\", \"id\": %d}\n",
			 i % 2 ? "vips" : "status", i);
		assert_true(ctl_send(fd[i], req, strlen(req)));
	}
	for (int i = N - 1; i >= 0; i--) {
		char *line = ctl_read_line(fd[i]);
		json_t *r;

		assert_non_null(line);
		r = json_loads(line, 0, NULL);
		assert_non_null(r);
		assert_true(ctl_ok(r));
		assert_int_equal(json_integer_value(json_object_get(r, "id")), i);
		assert_true(json_is_array(json_object_get(r, i % 2 ? "vips" : "ports")));
		json_decref(r);
		free(line);
	}
	json_t *c = ctl_server_counters(fx);

	assert_true(json_integer_value(json_object_get(c, "clients")) >= N);
	json_decref(c);
	for (int i = 0; i < N; i++)
		close(fd[i]);
	assert_true(counter(fx, "accepted") >= N + 2);
}

static void test_disconnect_mid_reply(void **state)
{
	struct ctl_fx *fx = *state;
	const char *dump = "{\"command\": \"table\", \"args\": {\"vip\": \"big\", \"dump\": true}}\n";
	char buf[4096];
	int quitter, other;
	json_t *r;

	ctl_fx_start(fx, defaults());
	other = ctl_connect(fx->path);
	quitter = ctl_connect(fx->path);
	/* ~1.3 MB of reply: far more than the socket buffers hold */
	assert_true(ctl_send(quitter, dump, strlen(dump)));
	assert_true(recv(quitter, buf, sizeof(buf), MSG_WAITALL) > 0);
	close(quitter);

	r = ctl_call(other, "{\"command\": \"status\"}");
	assert_true(ctl_ok(r));
	json_decref(r);
	/* the next write to the quitter fails; others carry on */
	r = ctl_call(other, "{\"command\": \"table\", \"args\": {\"vip\": \"web\"}}");
	assert_true(ctl_ok(r));
	json_decref(r);
	close(other);
	for (int i = 0; i < 100 && counter(fx, "disconnects") == 0; i++)
		json_decref(ctl_call1(fx, "{\"command\": \"help\"}"));
	assert_true(counter(fx, "disconnects") >= 1);
}

static void test_half_requests(void **state)
{
	struct ctl_fx *fx = *state;
	const char *whole = "{\"command\": \"help\", \"id\": 1}\n{\"command\": \"vi";
	char buf[16];
	char *line;
	int fd;

	ctl_fx_start(fx, defaults());
	/* half a request, then EOF: dropped, no reply */
	fd = ctl_connect(fx->path);
	assert_true(ctl_send(fd, "{\"command\": \"status\"", 20));
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	assert_int_equal(recv(fd, buf, sizeof(buf), 0), 0);
	close(fd);

	/* a whole request before the half one is still answered */
	fd = ctl_connect(fx->path);
	assert_true(ctl_send(fd, whole, strlen(whole)));
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	line = ctl_read_line(fd);
	assert_non_null(line);
	assert_non_null(strstr(line, "\"id\":1"));
	free(line);
	assert_int_equal(recv(fd, buf, sizeof(buf), 0), 0);
	close(fd);
	assert_int_equal(counter(fx, "half_requests"), 2);
}

/* More requests in one write than a turn handles: the backlog keeps
 * the server's fd readable until all are answered, in order. */
static void test_pipelined_requests(void **state)
{
	enum { N = 5 * MLV_CTL_LINES_PER_TURN + 3 };
	struct ctl_fx *fx = *state;
	static char batch[N * 64];
	size_t len = 0;
	int fd;

	ctl_fx_start(fx, defaults());
	for (int i = 0; i < N; i++)
		len += (size_t)snprintf(batch + len, sizeof(batch) - len,
					"{\"command\": \"vips\", \"id\": %d}\n", i);
	fd = ctl_connect(fx->path);
	assert_true(ctl_send(fd, batch, len));
	for (int i = 0; i < N; i++) {
		char *line = ctl_read_line(fd);
		json_t *r = line ? json_loads(line, 0, NULL) : NULL;

		assert_non_null(r);
		assert_true(ctl_ok(r));
		assert_int_equal(json_integer_value(json_object_get(r, "id")), i);
		json_decref(r);
		free(line);
	}
	close(fd);
}

static void test_reply_too_large(void **state)
{
	struct ctl_fx *fx = *state;
	struct mlv_ctl_server_params p = defaults();
	json_t *r;
	int fd;

	p.reply_max = 1024;
	ctl_fx_start(fx, p);
	fd = ctl_connect(fx->path);
	r = ctl_call(fd, "{\"command\": \"help\"}");
	assert_false(ctl_ok(r));
	assert_non_null(strstr(ctl_error(r), "reply too large"));
	json_decref(r);
	/* the connection stays usable for small replies */
	r = ctl_call(fd, "{\"command\": \"weight\", \"args\": {\"vip\": \"web\", "
		     "\"backend\": \"web-1\"}}");
	assert_true(ctl_ok(r));
	json_decref(r);
	close(fd);
}

/* Clients that stop making progress are dropped by the stall timer:
 * half a request that never ends, and a reader that never reads. */
static void test_stalled_clients_dropped(void **state)
{
	struct ctl_fx *fx = *state;
	struct mlv_ctl_server_params p = defaults();
	const char *dump = "{\"command\": \"table\", \"args\": {\"vip\": \"big\", \"dump\": true}}\n";
	struct pollfd pfd;
	char buf[16];
	int half, slow;

	p.stall_timeout_ms = 50;
	ctl_fx_start(fx, p);
	half = ctl_connect(fx->path);
	assert_true(ctl_send(half, "{\"comm", 6));
	/* blocks until the server closes (30 s receive timeout as a net) */
	assert_int_equal(recv(half, buf, sizeof(buf), 0), 0);
	close(half);

	slow = ctl_connect(fx->path);
	assert_true(ctl_send(slow, dump, strlen(dump)));
	pfd = (struct pollfd){ .fd = slow, .events = POLLRDHUP };
	assert_int_equal(poll(&pfd, 1, 30000), 1);
	assert_true(pfd.revents & (POLLRDHUP | POLLHUP));
	close(slow);
	assert_int_equal(counter(fx, "stalled"), 2);
}

/* max_clients, plus the slots kept for admin peers (without privilege
 * levels, every peer is one). */
static void test_max_clients(void **state)
{
	struct ctl_fx *fx = *state;
	struct mlv_ctl_server_params p = defaults();
	enum { N = 3 + MLV_CTL_ADMIN_RESERVE };
	int fd[N], extra;
	char *line;

	p.max_clients = 3;
	ctl_fx_start(fx, p);
	for (int i = 0; i < N; i++) {
		fd[i] = ctl_connect(fx->path);
		json_decref(ctl_call(fd[i], "{\"command\": \"help\"}"));
	}
	extra = ctl_connect(fx->path);
	line = ctl_read_line(extra);
	assert_non_null(line);
	assert_non_null(strstr(line, "too many control clients"));
	free(line);
	assert_null(ctl_read_line(extra));
	close(extra);
	/* the clients already in are unaffected */
	json_t *r = ctl_call(fd[1], "{\"command\": \"status\"}");

	assert_true(ctl_ok(r));
	assert_int_equal(json_integer_value(json_object_get(
		json_object_get(r, "control"), "refused_full")), 1);
	json_decref(r);
	for (int i = 0; i < N; i++)
		close(fd[i]);
}

/* A reader that takes a little now and then makes progress, yet would
 * hold its reply's share of the budget for ever: dropped at the reply's
 * deadline. */
static void test_reply_deadline(void **state)
{
	struct ctl_fx *fx = *state;
	struct mlv_ctl_server_params p = defaults();
	const char *dump = "{\"command\": \"table\", \"args\": {\"vip\": "
			   "\"big\", \"dump\": true}}\n";
	int fd, bufsz = 4096;
	bool closed = false;
	static char buf[1 << 16];

	p.reply_deadline_ms = 300;
	p.stall_timeout_ms = 10000;
	ctl_fx_start(fx, p);
	fd = ctl_connect(fx->path);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufsz,
				    sizeof(bufsz)), 0);
	assert_true(ctl_send(fd, dump, strlen(dump)));
	/* a few hundred bytes every 20 ms, past the deadline: progress,
	 * never the whole */
	for (int i = 0; i < 25; i++) {
		struct timespec ts = { 0, 20 * 1000000L };

		assert_true(recv(fd, buf, 512, 0) > 0);
		nanosleep(&ts, NULL);
	}
	/* then what the kernel holds, up to the close (10 s at most) */
	for (int i = 0; i < 10000 && !closed; i++) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, 1) == 0)
			continue;
		n = recv(fd, buf, sizeof(buf), 0);
		closed = n == 0 || (n < 0 && errno == ECONNRESET);
	}
	close(fd);
	assert_true(closed);
	assert_int_equal(counter(fx, "stalled"), 1);
}

/* Idle clients are closed after idle_timeout_ms; one waiting on a reply
 * it asked for is not idle. */
static void test_idle_clients_closed(void **state)
{
	struct ctl_fx *fx = *state;
	struct mlv_ctl_server_params p = defaults();
	struct pollfd pfd;
	int idle, busy;

	p.idle_timeout_ms = 100;
	ctl_fx_start(fx, p);
	idle = ctl_connect(fx->path);
	json_decref(ctl_call(idle, "{\"command\": \"help\"}"));
	pfd = (struct pollfd){ .fd = idle, .events = POLLRDHUP };
	assert_int_equal(poll(&pfd, 1, 30000), 1);
	assert_true(pfd.revents & (POLLRDHUP | POLLHUP));
	close(idle);
	assert_int_equal(counter(fx, "idle_closed"), 1);
	/* a client that keeps asking stays */
	busy = ctl_connect(fx->path);
	for (int i = 0; i < 5; i++) {
		json_t *r = ctl_call(busy, "{\"command\": \"status\"}");

		assert_true(ctl_ok(r));
		json_decref(r);
		pfd = (struct pollfd){ .fd = busy, .events = POLLRDHUP };
		assert_int_equal(poll(&pfd, 1, 50), 0);
	}
	close(busy);
}

/* Replies no one reads hold at most the output budget: beyond it a big
 * reply is an error, a small one is still answered; read or dropped,
 * the budget comes back. */
/* Read fd until EOF (or 10 s); returns the bytes read, and whether a
 * whole line came, in *line. */
static size_t read_to_eof(int fd, bool *line)
{
	char buf[65536];
	size_t total = 0;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	*line = false;
	while (poll(&pfd, 1, 10000) == 1) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n <= 0)
			return total;
		total += (size_t)n;
		if (memchr(buf, '\n', (size_t)n))
			*line = true;
	}
	fail_msg("no EOF within 10 s");
	return total;
}

static void test_output_budget(void **state)
{
	struct ctl_fx *fx = *state;
	struct mlv_ctl_server_params p = defaults();
	const char *dump = "{\"command\": \"table\", \"args\": {\"vip\": "
			   "\"big\", \"dump\": true}}\n";
	int sink[4], probe;
	size_t size;
	char *text;
	bool line;
	json_t *r;

	/* a budget for one dump and a half */
	ctl_fx_start(fx, p);
	r = ctl_call1(fx, "{\"command\": \"table\", \"args\": {\"vip\": "
		      "\"big\", \"dump\": true}}");
	assert_true(ctl_ok(r));
	text = json_dumps(r, JSON_COMPACT);
	size = strlen(text);
	free(text);
	json_decref(r);
	ctl_fx_stop(fx);
	p.out_total_max = (uint32_t)(size * 3 / 2);
	ctl_fx_start(fx, p);
	/* dumps no one reads: each newer one sheds the oldest (whatever
	 * the kernel's socket buffers take is out of the budget) */
	for (int i = 0; i < 4; i++) {
		sink[i] = ctl_connect(fx->path);
		assert_true(ctl_send(sink[i], dump, strlen(dump)));
		/* in this order: each is queued (its first bytes sent)
		 * before the next is asked */
		struct pollfd pfd = { .fd = sink[i], .events = POLLIN };

		assert_int_equal(poll(&pfd, 1, 10000), 1);
	}
	probe = ctl_connect(fx->path);
	r = ctl_call(probe, dump);
	assert_true(ctl_ok(r));
	assert_int_equal(json_array_size(json_object_get(r, "slots")),
			 json_integer_value(json_object_get(r, "table_size")));
	json_decref(r);
	assert_true(counter(fx, "shed") >= 1);
	assert_int_equal(counter(fx, "reply_over_budget"), 0);
	assert_true(counter(fx, "out_bytes") <= p.out_total_max);
	/* the first sink was the oldest unread: closed, its reply cut */
	size_t got = read_to_eof(sink[0], &line);

	assert_false(line);
	assert_true(got < size);
	/* small replies come */
	r = ctl_call(probe, "{\"command\": \"status\"}");
	assert_true(ctl_ok(r));
	json_decref(r);
	/* the readers go away: the budget is free again */
	for (int i = 0; i < 4; i++)
		close(sink[i]);
	for (int tries = 0; counter(fx, "out_bytes") > 65536 && tries < 3000;
	     tries++) {
		struct timespec ts = { 0, 10 * 1000000L };

		nanosleep(&ts, NULL);
	}
	assert_true(counter(fx, "out_bytes") <= 65536);
	close(probe);
}

/* Heavy requests take one slice per call: a status asked after many
 * pipelined whatifs (a table build each, on a 655373-slot VIP) is
 * answered while most of them still wait. */
static void test_heavy_slice(void **state)
{
	struct ctl_fx *fx = *state;
	struct mlv_ctl_server_params p = defaults();
	const char *ask = "{\"command\": \"whatif\", \"args\": {\"vip\": "
			  "\"big\", \"backend\": \"big-2\", \"action\": "
			  "\"remove\"}}\n";
	enum { ASKERS = 4, EACH = 8 };
	int fd[ASKERS], probe;
	int64_t handled;
	json_t *r;

	p.heavy = mlv_ctl_request_heavy;
	ctl_fx_start(fx, p);
	for (int i = 0; i < ASKERS; i++) {
		fd[i] = ctl_connect(fx->path);
		for (int k = 0; k < EACH; k++)
			assert_true(ctl_send(fd[i], ask, strlen(ask)));
	}
	probe = ctl_connect(fx->path);
	r = ctl_call(probe, "{\"command\": \"status\"}");
	assert_true(ctl_ok(r));
	/* requests handled before the status: it, and whatifs */
	handled = json_integer_value(json_object_get(
		json_object_get(r, "control"), "requests")) - 1;
	json_decref(r);
	assert_true(handled < ASKERS * EACH / 2);
	assert_true(counter(fx, "heavy_waits") > 0);
	/* and every whatif is answered, in order */
	for (int i = 0; i < ASKERS; i++)
		for (int k = 0; k < EACH; k++) {
			char *line = ctl_read_line(fd[i]);

			assert_non_null(line);
			r = json_loads(line, 0, NULL);
			assert_true(ctl_ok(r));
			json_decref(r);
			free(line);
		}
	r = json_pack("{s:s}", "command", "status");
	assert_false(mlv_ctl_request_heavy(r));
	json_decref(r);
	for (int i = 0; i < ASKERS; i++)
		close(fd[i]);
	close(probe);
}

/* ---- privilege levels ---- */

#define PRIV_SOCKET_GID 47001   /* may connect: read-only */
#define PRIV_ADMIN_GID  47002   /* may also change the daemon */
#define PRIV_UID        65534

/* In a child that drops to uid PRIV_UID with primary group gid and the
 * supplementary groups extra[0..n-1]: connect, send req, and write the
 * reply line (or "CONNECT <errno>") to fd out. Only system calls after
 * the fork: the parent has other threads. */
static void priv_child(const char *path, gid_t gid, const gid_t *extra,
		       size_t n, const char *req, int out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[4096];
	ssize_t got, total = 0;
	int fd;

	if (setgroups(n, extra) != 0 || setgid(gid) != 0 ||
	    setuid(PRIV_UID) != 0)
		_exit(2);
	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;
		int len = snprintf(buf, sizeof(buf), "CONNECT %d\n", e);

		if (write(out, buf, (size_t)len) != len)
			_exit(3);
		_exit(0);
	}
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		_exit(4);
	while (total < (ssize_t)sizeof(buf) - 1 &&
	       (got = read(fd, buf + total, sizeof(buf) - 1 - (size_t)total)) > 0) {
		total += got;
		if (memchr(buf, '\n', (size_t)total))
			break;
	}
	if (write(out, buf, (size_t)total) != total)
		_exit(5);
	_exit(0);
}

/* Whether reply text r is {"ok": want, ...}. */
static bool reply_ok(const char *r, bool want)
{
	json_t *j = json_loads(r, JSON_DISABLE_EOF_CHECK, NULL);
	bool is = j && json_is_boolean(json_object_get(j, "ok")) &&
		  json_is_true(json_object_get(j, "ok")) == want;

	json_decref(j);
	return is;
}

/* The reply a peer with these groups gets for req ("CONNECT n" when it
 * could not connect). */
static char *as_peer(struct ctl_fx *fx, gid_t gid, const gid_t *extra,
		     size_t n, const char *req)
{
	static char line[4096];
	int p[2], status;
	ssize_t got, total = 0;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		priv_child(fx->path, gid, extra, n, req, p[1]);
	}
	close(p[1]);
	while ((got = read(p[0], line + total, sizeof(line) - 1 - (size_t)total)) > 0)
		total += got;
	close(p[0]);
	line[total] = '\0';
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return line;
}

static void test_privilege_levels(void **state)
{
	struct ctl_fx *fx = *state;
	const gid_t admin[] = { PRIV_ADMIN_GID };
	const char *drain = "{\"command\": \"drain\", \"args\": {\"vip\": "
			    "\"web\", \"backend\": \"web-1\"}}\n";
	struct mlv_ctl_server_params p = defaults();
	struct stat st;
	char *r;

	if (geteuid() != 0)
		skip();
	p.mutates = mlv_ctl_request_mutates;
	p.admin_gid = PRIV_ADMIN_GID;
	p.socket_gid = PRIV_SOCKET_GID;
	/* the fixture's directory is root's 0700: let others reach the socket */
	assert_int_equal(chmod(fx->dir, 0755), 0);
	ctl_fx_start(fx, p);
	/* the socket was made with its group, not chowned afterwards */
	assert_int_equal(stat(fx->path, &st), 0);
	assert_int_equal(st.st_gid, PRIV_SOCKET_GID);
	assert_int_equal(st.st_mode & 0777, 0660);

	/* neither group: the socket's mode keeps it out */
	r = as_peer(fx, 65534, NULL, 0, "{\"command\": \"status\"}\n");
	assert_true(strncmp(r, "CONNECT ", 8) == 0);

	/* the socket's group: reads, cannot change anything */
	r = as_peer(fx, PRIV_SOCKET_GID, NULL, 0, "{\"command\": \"status\"}\n");
	assert_true(reply_ok(r, true));
	r = as_peer(fx, PRIV_SOCKET_GID, NULL, 0,
		    "{\"command\": \"weight\", \"args\": {\"vip\": \"web\", "
		    "\"backend\": \"web-1\"}}\n");
	assert_true(reply_ok(r, true));
	r = as_peer(fx, PRIV_SOCKET_GID, NULL, 0, drain);
	assert_true(reply_ok(r, false));
	assert_non_null(strstr(r, "drain changes the daemon and needs the admin "
			       "level"));
	assert_non_null(strstr(r, "uid 65534"));
	r = as_peer(fx, PRIV_SOCKET_GID, NULL, 0,
		    "{\"command\": \"shutdown\", \"args\": {\"now\": true}}\n");
	assert_non_null(strstr(r, "needs the admin level"));
	/* reload needs the admin level; its dry run is a read */
	r = as_peer(fx, PRIV_SOCKET_GID, NULL, 0, "{\"command\": \"reload\"}\n");
	assert_non_null(strstr(r, "reload changes the daemon and needs the "
			       "admin level"));
	assert_int_equal(fx->reload_calls, 0);
	r = as_peer(fx, PRIV_SOCKET_GID, NULL, 0, "{\"command\": \"reload\", "
		    "\"args\": {\"dry_run\": true}}\n");
	assert_true(reply_ok(r, true));
	assert_int_equal(fx->reload_calls, 1);
	assert_int_equal(fx->reload_mode, MLV_CTL_RELOAD_CHECK);
	/* a dry run of another file makes the daemon open and build what
	 * the caller names: the admin level's; it says who asked, to be
	 * read as them */
	r = as_peer(fx, PRIV_SOCKET_GID, NULL, 0, "{\"command\": \"reload\", "
		    "\"args\": {\"dry_run\": true, \"file\": \"/x.yaml\"}}\n");
	assert_non_null(strstr(r, "reload changes the daemon and needs the "
			       "admin level"));
	assert_int_equal(fx->reload_calls, 1);
	{
		const gid_t adm[] = { PRIV_ADMIN_GID };

		r = as_peer(fx, PRIV_SOCKET_GID, adm, 1, "{\"command\": "
			    "\"reload\", \"args\": {\"dry_run\": true, "
			    "\"file\": \"/x.yaml\"}}\n");
	}
	assert_true(reply_ok(r, true));
	assert_int_equal(fx->reload_calls, 2);
	assert_string_equal(fx->reload_file, "/x.yaml");
	assert_int_equal(fx->reload_uid, 65534);
	assert_int_equal(fx->override_calls, 0);
	assert_int_equal(counter(fx, "refused_level"), 4);

	/* admin_group as a supplementary group: may drain */
	r = as_peer(fx, PRIV_SOCKET_GID, admin, 1, drain);
	assert_true(reply_ok(r, true));
	assert_int_equal(fx->override_calls, 1);
	/* and root always */
	{
		json_t *j = ctl_call1(fx, "{\"command\": \"undrain\", \"args\": "
				      "{\"vip\": \"web\", \"backend\": \"web-1\"}}");

		assert_true(ctl_ok(j));
		json_decref(j);
	}
}

/* ---- maglevctl end to end ---- */

/* Run maglevctl with args (shell words, already quoted); capture stdout.
 * Returns its exit status. */
static int run_ctl(char *out, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int run_ctl(char *out, size_t len, const char *fmt, ...)
{
	char cmd[1024], args[768];
	size_t n;
	va_list ap;
	FILE *p;
	int status;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "'%s' %s 2>/dev/null", maglevctl_path, args);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, len - 1, p);
	out[n] = '\0';
	status = pclose(p);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_maglevctl(void **state)
{
	struct ctl_fx *fx = *state;
	static char out[1 << 16];
	json_t *r;

	if (!maglevctl_path)
		skip();
	ctl_fx_start(fx, defaults());
	assert_int_equal(run_ctl(out, sizeof(out), "-s '%s' status", fx->path), 0);
	assert_non_null(strstr(out, "generation  1"));
	assert_int_equal(run_ctl(out, sizeof(out), "-s '%s' backends web", fx->path), 0);
	assert_non_null(strstr(out, "web-4"));
	assert_non_null(strstr(out, "draining"));
	assert_int_equal(run_ctl(out, sizeof(out), "-s '%s' stats --per-worker",
				 fx->path), 0);
	assert_non_null(strstr(out, "rx_packets"));
	assert_non_null(strstr(out, "W1"));

	/* -o json: the raw reply, one line */
	assert_int_equal(run_ctl(out, sizeof(out), "-s '%s' -o json vips", fx->path), 0);
	r = json_loads(out, 0, NULL);
	assert_non_null(r);
	assert_true(ctl_ok(r));
	assert_int_equal(json_array_size(json_object_get(r, "vips")), 3);
	json_decref(r);

	/* options after the command, in either spelling, and the socket
	 * from $MAGLEVD_SOCKET; "--" keeps what follows for the command */
	assert_int_equal(run_ctl(out, sizeof(out), "vips -o json --socket '%s'",
				 fx->path), 0);
	r = json_loads(out, 0, NULL);
	assert_non_null(r);
	assert_int_equal(json_array_size(json_object_get(r, "vips")), 3);
	json_decref(r);
	assert_int_equal(run_ctl(out, sizeof(out), "--timeout=5 backends web "
				 "--output=json -s '%s'", fx->path), 0);
	r = json_loads(out, 0, NULL);
	assert_non_null(r);
	assert_true(ctl_ok(r));
	json_decref(r);
	assert_int_equal(setenv("MAGLEVD_SOCKET", fx->path, 1), 0);
	assert_int_equal(run_ctl(out, sizeof(out), "status -o json"), 0);
	r = json_loads(out, 0, NULL);
	assert_non_null(r);
	assert_true(ctl_ok(r));
	json_decref(r);
	/* -s still wins over the variable */
	assert_int_equal(run_ctl(out, sizeof(out), "status -s '%s/none.sock'",
				 fx->dir), 3);
	assert_int_equal(unsetenv("MAGLEVD_SOCKET"), 0);
	assert_int_equal(run_ctl(out, sizeof(out), "vips -o"), 2);
	assert_int_equal(run_ctl(out, sizeof(out), "vips -o yaml -s '%s'",
				 fx->path), 2);
	assert_int_equal(run_ctl(out, sizeof(out), "-s '%s' backends -- -o",
				 fx->path), 1);   /* "-o" is the VIP's name here */

	/* errors: refused by the daemon (1), usage (2), no daemon (3) */
	assert_int_equal(run_ctl(out, sizeof(out), "-s '%s' drain web nosuch",
				 fx->path), 1);
	assert_int_equal(run_ctl(out, sizeof(out), "-s '%s' -o json table nosuch",
				 fx->path), 1);
	r = json_loads(out, 0, NULL);
	assert_non_null(r);
	assert_false(ctl_ok(r));
	json_decref(r);
	assert_int_equal(run_ctl(out, sizeof(out), "-s '%s' lookup web 1.2.3.4 x",
				 fx->path), 2);
	assert_int_equal(run_ctl(out, sizeof(out), "-s '%s' nosuchcommand",
				 fx->path), 2);
	assert_int_equal(run_ctl(out, sizeof(out), "-s '%s/none.sock' status",
				 fx->dir), 3);

	/* help works without a daemon and comes from the shared table */
	assert_int_equal(run_ctl(out, sizeof(out), "-s /nonexistent help"), 0);
	assert_non_null(strstr(out, "whatif VIP remove|add BACKEND [WEIGHT]"));
	assert_int_equal(run_ctl(out, sizeof(out), "table --help"), 0);
	assert_non_null(strstr(out, "table VIP [--dump]"));
	assert_non_null(strstr(out, "--dump"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_mode_and_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_modes_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_socket_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_live_socket_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_untrusted_directory_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_files_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oversized_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_line_limit_boundary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_200_concurrent_clients, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disconnect_mid_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_half_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pipelined_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reply_too_large, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stalled_clients_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_max_clients, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reply_deadline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_clients_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_heavy_slice, setup, teardown),
		cmocka_unit_test_setup_teardown(test_maglevctl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_privilege_levels, setup,
						teardown),
	};

	if (argc > 1)
		maglevctl_path = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
