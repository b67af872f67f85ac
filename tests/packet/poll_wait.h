/* SPDX-License-Identifier: BSD-3-Clause */
/* Waiting for a condition on the daemon's stats file without fixed
 * sleeps: re-read the file every POLL_WAIT_STEP_MS until the condition
 * holds, the daemon has exited, or a deadline passes. Test code;
 * single-threaded. */
#ifndef PKT_POLL_WAIT_H
#define PKT_POLL_WAIT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define POLL_WAIT_STEP_MS 2

/* Monotonic milliseconds. */
uint64_t poll_now_ms(void);

/* Sleep one polling step. */
void poll_step(void);

/* True while process pid exists and is not a zombie of ours. */
bool poll_alive(pid_t pid);

#endif
