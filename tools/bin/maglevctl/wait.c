/* SPDX-License-Identifier: BSD-3-Clause */
/* maglevctl drain --wait (wait.h). */
#include "tools/bin/maglevctl/wait.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POLL_MS 200

bool maglevctl_take_wait(int *argc, char **argv)
{
	int out = 0;
	bool found = false;

	for (int i = 0; i < *argc; i++) {
		if (strcmp(argv[i], "--wait") == 0)
			found = true;
		else
			argv[out++] = argv[i];
	}
	*argc = out;
	return found;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static json_int_t num(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* The (vip, backend) pairs a drain reply names, as an array of
 * [vip, backend]; NULL if it names none. */
static json_t *drained_pairs(const json_t *reply)
{
	const json_t *vips = json_object_get(reply, "vips");
	const json_t *backends = json_object_get(reply, "backends");
	json_t *pairs = json_array();
	size_t i;
	json_t *v;

	if (!pairs)
		return NULL;
	if (json_is_array(vips) && json_is_array(backends)) {
		json_array_foreach(vips, i, v)
			json_array_append_new(pairs, json_pack("[O, O]", v,
					      json_array_get(backends, i)));
	} else if (json_is_string(json_object_get(reply, "vip")) &&
		   json_is_string(json_object_get(reply, "backend"))) {
		json_array_append_new(pairs, json_pack("[O, O]",
				      json_object_get(reply, "vip"),
				      json_object_get(reply, "backend")));
	}
	if (json_array_size(pairs) == 0) {
		json_decref(pairs);
		return NULL;
	}
	return pairs;
}

/* The tracked connections of pairs now: false if the daemon did not
 * answer. A pair the daemon no longer lists holds none. */
static bool remaining(maglevctl_exchange_fn exchange, const char *path,
		      int timeout_s, const json_t *pairs, json_int_t *active,
		      json_int_t *inactive)
{
	json_t *req = json_pack("{s:s, s:{}}", "command", "backends", "args");
	char *line = req ? exchange(path, timeout_s, req) : NULL;
	json_t *reply = line ? json_loads(line, 0, NULL) : NULL;
	const json_t *list = json_object_get(reply, "backends");
	size_t i, j;
	json_t *b, *p;

	json_decref(req);
	free(line);
	*active = *inactive = 0;
	if (!json_is_true(json_object_get(reply, "ok")) || !json_is_array(list)) {
		json_decref(reply);
		return false;
	}
	json_array_foreach(list, i, b) {
		json_array_foreach(pairs, j, p) {
			if (json_equal(json_object_get(b, "vip"), json_array_get(p, 0)) &&
			    json_equal(json_object_get(b, "name"), json_array_get(p, 1))) {
				*active += num(b, "active_connections");
				*inactive += num(b, "inactive_connections");
			}
		}
	}
	json_decref(reply);
	return true;
}

int maglevctl_wait_drained(maglevctl_exchange_fn exchange, const char *path,
			   int timeout_s, int wait_s, const json_t *drain_reply,
			   bool json_out, FILE *out)
{
	json_t *pairs = drained_pairs(drain_reply);
	double start = now_s(), deadline = start + wait_s;
	json_int_t active = 0, inactive = 0, last = -1;
	unsigned quiet = 0;
	int rc;

	if (!pairs) {
		fprintf(stderr, "maglevctl: the reply names no backend to wait for\n");
		return MAGLEVCTL_EXIT_NO_REPLY;
	}
	for (;;) {
		if (!remaining(exchange, path, timeout_s, pairs, &active, &inactive)) {
			rc = MAGLEVCTL_EXIT_NO_REPLY;
			break;
		}
		/* what is left is what is open: closing entries wait out
		 * their timeout in conntrack but carry nothing; a handshake
		 * under way turns active within a poll, so it takes two
		 * quiet polls in a row */
		quiet = active == 0 ? quiet + 1 : 0;
		if (quiet >= MAGLEVCTL_WAIT_QUIET_POLLS) {
			rc = 0;
			break;
		}
		if (now_s() >= deadline) {
			rc = MAGLEVCTL_EXIT_WAIT_TIMEOUT;
			break;
		}
		if (!json_out && active != last)
			fprintf(out, "waiting: %lld open connection(s) on this "
				"instance (%lld opening or closing)\n",
				(long long)active, (long long)inactive);
		last = active;
		fflush(out);
		nanosleep(&(struct timespec){ .tv_nsec = POLL_MS * 1000000L }, NULL);
	}
	if (rc == MAGLEVCTL_EXIT_NO_REPLY)
		fprintf(stderr, "maglevctl: the daemon stopped answering while "
			"waiting for the drain\n");
	else if (json_out)
		fprintf(out, "{\"ok\": %s, \"drained\": %s, \"remaining\": %lld, "
			"\"active\": %lld, \"inactive\": %lld, "
			"\"waited_s\": %.1f}\n", rc == 0 ? "true" : "false",
			rc == 0 ? "true" : "false", (long long)active,
			(long long)active, (long long)inactive, now_s() - start);
	else if (rc == 0)
		fprintf(out, "drained: no open connection left on this instance "
			"(%.1f s)%s\n", now_s() - start, inactive ?
			"; closing entries wait out their timeouts" : "");
	else
		fprintf(out, "timeout after %d s: %lld open connection(s) remain "
			"on this instance (%lld opening or closing)\n", wait_s,
			(long long)active, (long long)inactive);
	json_decref(pairs);
	return rc;
}
