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

/* Polls in a row that must find no open connection before the wait
 * ends: a handshake under way (opening) becomes established within one
 * poll. */
#define MAGLEVCTL_WAIT_QUIET_POLLS 2

/* Wait for the backends the drain reply names (vip/backend, or the
 * parallel vips/backends arrays of a host-wide drain) to hold no open
 * connection on this instance: no active tracked flow (established TCP,
 * UDP, other) in MAGLEVCTL_WAIT_QUIET_POLLS polls of `backends` in a
 * row, 200 ms apart, for at most wait_s seconds. Opening and closing
 * entries (inactive) are reported but do not hold the wait: a closing
 * one only waits out its conntrack timeout. The counts are this
 * daemon's: flows of the backend tracked by another instance are not
 * seen. Prints progress and the outcome to out (one JSON object with
 * json: "remaining" and "active" the open connections, "inactive" the
 * others). Returns 0 when none is open, MAGLEVCTL_EXIT_WAIT_TIMEOUT
 * when some remain at the deadline, MAGLEVCTL_EXIT_NO_REPLY when the
 * daemon stops answering. */
int maglevctl_wait_drained(maglevctl_exchange_fn exchange, const char *path,
			   int timeout_s, int wait_s, const json_t *drain_reply,
			   bool json_out, FILE *out);

#endif
