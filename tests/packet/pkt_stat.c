/* SPDX-License-Identifier: BSD-3-Clause */
/* pkt-stat: the driver's view of the daemon's stats file.
 *
 *   pkt-stat wait FILE COUNTER MIN TIMEOUT_S PID
 *       wait until worker counter COUNTER >= MIN; exit 0, or 1 (with the
 *       last value) if the daemon PID exits or TIMEOUT_S passes first
 *   pkt-stat wait-exit PID TIMEOUT_S
 *       wait until process PID has exited (the caller then reaps it);
 *       exit 0, or 1 on timeout
 *   pkt-stat get FILE COUNTER     print a worker counter
 *   pkt-stat generation FILE      print the generation number
 *
 * Written in C with jansson so the tests need no extra tool (jq). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/packet/poll_wait.h"
#include "tests/packet/stats_json.h"

static int get(const char *file, const char *counter, uint64_t *v,
	       char *why, size_t why_len)
{
	json_t *doc = stats_load(file, why, why_len);
	bool ok;

	if (!doc)
		return -1;
	ok = counter ? stats_counter(doc, counter, v) : stats_generation(doc, v);
	json_decref(doc);
	if (!ok) {
		snprintf(why, why_len, "no %s in the stats file",
			 counter ? counter : "generation");
		return -1;
	}
	return 0;
}

static int wait_for(const char *file, const char *counter, uint64_t min,
		    uint64_t timeout_ms, pid_t pid)
{
	uint64_t deadline = poll_now_ms() + timeout_ms, v = 0;
	char why[256] = "stats file not written yet";
	bool have = false;

	for (;;) {
		if (get(file, counter, &v, why, sizeof(why)) == 0) {
			have = true;
			if (v >= min)
				return 0;
		}
		if (!poll_alive(pid)) {
			/* one last read: the daemon writes the file at exit */
			if (get(file, counter, &v, why, sizeof(why)) == 0 && v >= min)
				return 0;
			fprintf(stderr, "pkt-stat: maglevd (pid %d) exited while "
				"waiting for %s >= %llu (last %s %llu)\n", (int)pid,
				counter, (unsigned long long)min,
				have ? "value" : "read failed:",
				(unsigned long long)v);
			return 1;
		}
		if (poll_now_ms() > deadline) {
			fprintf(stderr, "pkt-stat: timeout waiting for %s >= %llu: "
				"%s%llu\n", counter, (unsigned long long)min,
				have ? "last value " : why,
				have ? (unsigned long long)v : 0ull);
			return 1;
		}
		poll_step();
	}
}

static int wait_exit(pid_t pid, uint64_t timeout_ms)
{
	uint64_t deadline = poll_now_ms() + timeout_ms;

	while (poll_alive(pid)) {
		if (poll_now_ms() > deadline)
			return 1;
		poll_step();
	}
	return 0;
}

int main(int argc, char **argv)
{
	char why[256];
	uint64_t v;

	if (argc == 7 && strcmp(argv[1], "wait") == 0)
		return wait_for(argv[2], argv[3], strtoull(argv[4], NULL, 10),
				strtoull(argv[5], NULL, 10) * 1000,
				(pid_t)atoi(argv[6]));
	if (argc == 4 && strcmp(argv[1], "wait-exit") == 0)
		return wait_exit((pid_t)atoi(argv[2]),
				 strtoull(argv[3], NULL, 10) * 1000);
	if ((argc == 4 && strcmp(argv[1], "get") == 0) ||
	    (argc == 3 && strcmp(argv[1], "generation") == 0)) {
		if (get(argv[2], argc == 4 ? argv[3] : NULL, &v, why, sizeof(why))) {
			fprintf(stderr, "pkt-stat: %s\n", why);
			return 1;
		}
		printf("%llu\n", (unsigned long long)v);
		return 0;
	}
	fprintf(stderr, "usage: pkt-stat wait FILE COUNTER MIN TIMEOUT_S PID\n"
		"       pkt-stat wait-exit PID TIMEOUT_S\n"
		"       pkt-stat get FILE COUNTER\n"
		"       pkt-stat generation FILE\n");
	return 2;
}
