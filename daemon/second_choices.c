/* SPDX-License-Identifier: BSD-3-Clause */
/* Deferred second choices in the daemon (docs/generations.md, "Deferred
 * second choices"): a publish that built many tables goes live with their
 * first choices only; the control loop then computes the second choices a
 * few tables at a time between its other work and publishes one follow-up
 * generation that carries them, with every table taken by reference.
 * What a publish defers, and the note that one did, are generations.c's
 * (mlv_daemon_build_opts, mlv_daemon_second_note). */
#include <time.h>

#include "daemon/daemon.h"
#include "control/base/log.h"

/* Work per control-loop step: about one to three tables at the default
 * size, so a control-socket request waits at most this long. */
#define MLV_SECOND_STEP_US 3000u

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

bool mlv_daemon_second_step(struct mlv_daemon *d)
{
	const struct mlv_generation *gen = mlv_publish_current(d->pub);
	uint64_t t0 = now_us();
	uint32_t left = 1;
	enum mlv_err err = MLV_OK;

	if (!d->second_pending || !gen)
		return false;
	while (left > 0 && now_us() - t0 < MLV_SECOND_STEP_US) {
		err = mlv_gen_complete_second(gen, 1, &left);
		if (err)
			break;
	}
	if (err) {
		/* the tables keep working without them; the next publish that
		 * builds tables tries again */
		mlv_warn("second choices: %s; %u table(s) of generation %u "
			 "stay without them", mlv_strerror(err), left,
			 gen->number);
		d->second_pending = false;
		return false;
	}
	if (left > 0)
		return true;
	d->second_pending = false;
	if (mlv_daemon_publish(d, d->cfg, MLV_PUBLISH_SECOND) == MLV_OK)
		mlv_info("second choices: generation %u live %.1f ms after "
			 "generation %u", d->generation,
			 (double)(now_us() - d->second_since_us) / 1000.0,
			 d->second_since);
	return d->second_pending;
}
