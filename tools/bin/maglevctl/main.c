/* SPDX-License-Identifier: BSD-3-Clause */
/* maglevctl: a thin client for maglevd's control socket. It turns a
 * command line into one JSON request (using the command table shared
 * with the daemon, control/protocol/spec.h), sends it, reads the one-line
 * reply and prints it as tables (default) or raw JSON (-o json).
 *
 * Exit status: 0 the daemon replied ok; 1 it replied with an error;
 * 2 bad usage; 3 no reply (cannot connect, connection lost, timeout, a
 * reply that is not JSON); 4 drain --wait ran out of time with open
 * connections left.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "control/protocol/spec.h"
#include "tools/bin/maglevctl/render.h"
#include "tools/bin/maglevctl/top.h"
#include "tools/bin/maglevctl/wait.h"

#define DEFAULT_SOCKET "/run/maglevd/maglevd.sock"
#define DEFAULT_TIMEOUT_S 60
/* drain --wait without -t: the default idle timeout of an established
 * TCP flow (dataplane.conntrack.tcp_timeout), by which an idle flow has
 * left the table. */
#define DEFAULT_WAIT_S 300
/* Largest reply accepted: the daemon's own cap (control/ctl/server.h)
 * plus the newline. */
#define REPLY_MAX ((64u << 20) + 1)

enum { EXIT_OK = 0, EXIT_REFUSED = 1, EXIT_USAGE = 2,
       EXIT_NO_REPLY = MAGLEVCTL_EXIT_NO_REPLY };

static void usage(FILE *out)
{
	fprintf(out,
"usage: maglevctl [-s SOCKET] [-o text|json] [-t SECONDS] COMMAND [ARGS...]\n"
"       maglevctl COMMAND --help\n"
"\n"
"The options may also stand after the command (maglevctl vips -o json).\n"
"\n"
"  -s, --socket SOCKET   control socket (default $MAGLEVD_SOCKET, else\n"
"                        " DEFAULT_SOCKET ")\n"
"  -o, --output FORMAT   text (tables, the default) or json (the raw reply)\n"
"  -t, --timeout SECONDS give up waiting for the reply (default %d)\n"
"  -h, --help            this help\n"
"      --version         print maglevctl's version and exit\n"
"\n"
"exit status: 0 ok, 1 the daemon replied with an error, 2 bad usage,\n"
"3 no reply (not running, connection lost, timeout), 4 drain --wait\n"
"timed out with connections left\n"
"\n"
"commands:\n", DEFAULT_TIMEOUT_S);
	render_command_list(out);
	fprintf(out, "  %-44s %s\n", "drain VIP BACKEND --wait [-t SECONDS]",
		"then wait until it holds no open connection on this "
		"instance (default 300 s)");
	fprintf(out, "  %-44s %s\n", "top [VIP] [-i SECONDS] [-n COUNT]",
		"live per-VIP and per-backend rates (top --help)");
}

/* Connect to path; -1 with a message on failure. */
static int connect_to(const char *path, int timeout_s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = timeout_s };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "maglevctl: socket path too long: %s\n", path);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "maglevctl: socket: %s\n", strerror(errno));
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		fprintf(stderr, "maglevctl: cannot connect to %s: %s "
			"(is maglevd running? -s names another socket)\n",
			path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static bool send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

/* Read up to the first '\n'; returns a malloc'd NUL-terminated line
 * without it, or NULL with a message. */
static char *read_line(int fd)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap), *nl;

	while (buf) {
		ssize_t n;

		if (len + 1 == cap) {
			char *p = cap >= REPLY_MAX ? NULL : realloc(buf, cap * 2);

			if (!p) {
				fprintf(stderr, "maglevctl: reply too large\n");
				break;
			}
			buf = p;
			cap *= 2;
		}
		n = recv(fd, buf + len, cap - 1 - len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "maglevctl: %s before a complete reply\n",
				n == 0 ? "connection closed" :
				errno == EAGAIN ? "timed out" : strerror(errno));
			break;
		}
		nl = memchr(buf + len, '\n', (size_t)n);
		len += (size_t)n;
		if (nl) {
			*nl = '\0';
			return buf;
		}
	}
	free(buf);
	return NULL;
}

/* Send request, return the reply line (malloc'd) or NULL. */
static char *exchange(const char *path, int timeout_s, const json_t *req)
{
	char *text = json_dumps(req, JSON_COMPACT), *line = NULL;
	int fd;

	if (!text) {
		fprintf(stderr, "maglevctl: out of memory\n");
		return NULL;
	}
	fd = connect_to(path, timeout_s);
	if (fd >= 0) {
		size_t n = strlen(text);

		text[n] = '\n';   /* json_dumps left room for the NUL */
		if (send_all(fd, text, n + 1))
			line = read_line(fd);
		else
			fprintf(stderr, "maglevctl: cannot send to %s: %s\n", path,
				strerror(errno));
		close(fd);
	}
	free(text);
	return line;
}

struct globals {
	const char *path;
	bool json_out;
	int timeout_s;
	bool timeout_set;   /* -t given: it also bounds drain --wait */
};

/* Apply one global option (opt: 's', 'o' or 't') with its value. */
static bool set_global(struct globals *g, int opt, const char *value)
{
	char *end;

	switch (opt) {
	case 's':
		g->path = value;
		return true;
	case 'o':
		if (strcmp(value, "json") && strcmp(value, "text")) {
			fprintf(stderr, "maglevctl: -o takes text or json\n");
			return false;
		}
		g->json_out = strcmp(value, "json") == 0;
		return true;
	case 't': {
		long t = strtol(value, &end, 10);

		if (*end || end == value || t <= 0 || t > 86400) {
			fprintf(stderr, "maglevctl: -t takes 1 to 86400 seconds\n");
			return false;
		}
		g->timeout_s = (int)t;
		g->timeout_set = true;
		return true;
	}
	}
	return false;
}

/* Global options after the command word ("vips -o json"): applied and
 * removed from argv[0..*argc-1], the command's own words, so they may
 * stand anywhere on the line. A "--" ends the search (and is dropped:
 * what follows is the command's). Returns false on a
 * bad value or a missing one (a message is printed). */
static bool take_globals(struct globals *g, int *argc, char **argv)
{
	static const struct { const char *s, *l; int opt; } names[] = {
		{ "-s", "--socket", 's' },
		{ "-o", "--output", 'o' },
		{ "-t", "--timeout", 't' },
	};
	int out = 0;

	for (int i = 0; i < *argc; i++) {
		const char *w = argv[i], *value = NULL;
		int opt = 0;

		if (strcmp(w, "--") == 0) {
			/* the rest is the command's, as it is */
			while (++i < *argc)
				argv[out++] = argv[i];
			break;
		}
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			size_t n = strlen(names[k].l);

			if (strcmp(w, names[k].s) == 0 || strcmp(w, names[k].l) == 0) {
				opt = names[k].opt;
				if (i + 1 >= *argc) {
					fprintf(stderr, "maglevctl: %s needs a value\n", w);
					return false;
				}
				value = argv[++i];
			} else if (strncmp(w, names[k].l, n) == 0 && w[n] == '=') {
				opt = names[k].opt;
				value = w + n + 1;
			}
			if (opt)
				break;
		}
		if (!opt) {
			argv[out++] = argv[i];
			continue;
		}
		if (!set_global(g, opt, value))
			return false;
	}
	*argc = out;
	return true;
}

static bool wants_help(int argc, char *const *argv)
{
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return true;
	return false;
}

/* reload's file as an absolute path: the daemon's working directory is
 * not the caller's. realpath also resolves links the way the caller sees
 * them. False (said on stderr) if it does not resolve. */
static bool absolute_file(json_t *args)
{
	const char *file = json_string_value(json_object_get(args, "file"));
	char *abs;
	int rc;

	if (!file || file[0] == '/')
		return true;
	abs = realpath(file, NULL);
	if (!abs) {
		fprintf(stderr, "maglevctl: reload: %s: %s\n", file,
			strerror(errno));
		return false;
	}
	rc = json_object_set_new(args, "file", json_string(abs));
	free(abs);
	if (rc != 0)
		fprintf(stderr, "maglevctl: out of memory\n");
	return rc == 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *env = getenv("MAGLEVD_SOCKET");
	struct globals g = { .path = env && env[0] ? env : DEFAULT_SOCKET,
			     .timeout_s = DEFAULT_TIMEOUT_S };
	const struct mlv_ctl_cmd_spec *cmd;
	int opt, rc, n_words;
	bool wait = false;
	json_t *args, *req, *reply;
	json_error_t jerr;
	char err[512], *line;

	/* '+': stop at the command; options after it are taken below */
	while ((opt = getopt_long(argc, argv, "+s:o:t:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 's':
		case 'o':
		case 't':
			if (!set_global(&g, opt, optarg))
				return EXIT_USAGE;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("maglevctl %s\n", MLV_VERSION);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	n_words = argc - optind - 1;
	if (!take_globals(&g, &n_words, argv + optind + 1))
		return EXIT_USAGE;
	argc = optind + 1 + n_words;
	/* top is a client-side loop over several commands, not one */
	if (strcmp(argv[optind], "top") == 0)
		return maglevctl_top(g.path, g.timeout_s, argc - optind,
				     argv + optind);
	cmd = mlv_ctl_cmd_find(argv[optind]);
	if (!cmd) {
		fprintf(stderr, "maglevctl: unknown command \"%s\"; "
			"`maglevctl help` lists them\n", argv[optind]);
		return EXIT_USAGE;
	}
	argc -= optind + 1;
	argv += optind + 1;
	wait = maglevctl_take_wait(&argc, argv);
	if (wait && cmd->id != MLV_CTL_CMD_DRAIN) {
		fprintf(stderr, "maglevctl: --wait is for drain only\n");
		return EXIT_USAGE;
	}
	if (wants_help(argc, argv)) {
		render_command_help(cmd, stdout);
		return EXIT_OK;
	}
	if (cmd->id == MLV_CTL_CMD_HELP && !g.json_out && argc == 0) {
		usage(stdout);          /* the table is compiled in */
		return EXIT_OK;
	}
	args = mlv_ctl_args_from_argv(cmd, argc, argv, err, sizeof(err));
	if (!args) {
		fprintf(stderr, "maglevctl: %s\n", err);
		return EXIT_USAGE;
	}
	if (cmd->id == MLV_CTL_CMD_RELOAD && !absolute_file(args)) {
		json_decref(args);
		return EXIT_USAGE;
	}
	req = json_pack("{s:s, s:o}", "command", cmd->name, "args", args);
	if (!req) {
		fprintf(stderr, "maglevctl: out of memory\n");
		return EXIT_NO_REPLY;
	}
	line = exchange(g.path, g.timeout_s, req);
	json_decref(req);
	if (!line)
		return EXIT_NO_REPLY;
	reply = json_loads(line, 0, &jerr);
	if (!json_is_object(reply) || !json_is_boolean(json_object_get(reply, "ok"))) {
		fprintf(stderr, "maglevctl: the reply is not a control-protocol "
			"reply: %s\n", reply ? "no \"ok\" field" : jerr.text);
		json_decref(reply);
		free(line);
		return EXIT_NO_REPLY;
	}
	rc = json_is_true(json_object_get(reply, "ok")) ? EXIT_OK : EXIT_REFUSED;
	if (g.json_out)
		printf("%s\n", line);
	else if (rc != EXIT_OK)
		render_error(reply, stderr);
	else if (!render_reply(cmd, reply, stdout))
		fprintf(stderr, "maglevctl: out of memory while printing\n");
	free(line);
	if (rc == EXIT_OK && wait) {
		fflush(stdout);
		rc = maglevctl_wait_drained(exchange, g.path, g.timeout_s,
					    g.timeout_set ? g.timeout_s :
					    DEFAULT_WAIT_S, reply, g.json_out,
					    stdout);
	}
	json_decref(reply);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "maglevctl: writing output: %s\n", strerror(errno));
		return EXIT_NO_REPLY;
	}
	return rc;
}
