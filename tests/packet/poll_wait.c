/* SPDX-License-Identifier: BSD-3-Clause */
#include "tests/packet/poll_wait.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

uint64_t poll_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void poll_step(void)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = POLL_WAIT_STEP_MS * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

bool poll_alive(pid_t pid)
{
	char path[64], state = 0;
	FILE *f;

	if (kill(pid, 0) != 0)
		return false;
	/* a zombie (exited, not yet reaped by the driver) is not alive */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
		state = 0;
	fclose(f);
	return state != 'Z' && state != 0;
}
