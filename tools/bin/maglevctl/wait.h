/* SPDX-License-Identifier: BSD-3-Clause */
/* maglevctl drain --wait: after a drain is applied, poll the daemon's
 * tracked-connection counts of the drained backends until they reach
 * zero or the time runs out. Client side, so no daemon thread waits. */
#ifndef MAGLEVCTL_WAIT_H
#define MAGLEVCTL_WAIT_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

/* Exit statuses the wait shares with maglevctl's (main.c): no reply, and
 * a wait that timed out with connections left. */
#define MAGLEVCTL_EXIT_NO_REPLY 3
#define MAGLEVCTL_EXIT_WAIT_TIMEOUT 4

/* One request, one reply line (malloc'd), or NULL with a message. */
typedef char *(*maglevctl_exchange_fn)(const char *path, int timeout_s,
				       const json_t *req);

/* Remove every "--wait" from argv[0 .. *argc - 1]; true if there was one. */
bool maglevctl_take_wait(int *argc, char **argv);

/* Wait for the backends the drain reply names (vip/backend, or the
 * parallel vips/backends arrays of a host-wide drain) to hold no tracked
 * connection, polling `backends` every 200 ms, for at most wait_s
 * seconds. Prints progress and the outcome to out (one JSON object with
 * json). Returns 0 when they are empty, MAGLEVCTL_EXIT_WAIT_TIMEOUT when
 * connections remain at the deadline, MAGLEVCTL_EXIT_NO_REPLY when the
 * daemon stops answering. */
int maglevctl_wait_drained(maglevctl_exchange_fn exchange, const char *path,
			   int timeout_s, int wait_s, const json_t *drain_reply,
			   bool json_out, FILE *out);

#endif
