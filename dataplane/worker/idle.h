/* SPDX-License-Identifier: BSD-3-Clause */
/* The adaptive idle policy of a worker (dataplane.idle: adaptive): after a
 * run of empty polls, spin with a CPU pause hint, then sleep for growing
 * periods (1, 2, 4 ... up to idle_max_sleep_us microseconds); the first
 * packet brings it back to full polling. With `poll` it never backs off.
 * This lets maglevd share a small host with its clients and backends at a
 * cost of at most idle_max_sleep_us of latency for the first packet after
 * a quiet spell, which the RX ring absorbs.
 *
 * Pure state machine, no DPDK and no clock: the worker performs the
 * action it returns, and tests step it without time. Owner worker.
 */
#ifndef MLV_IDLE_H
#define MLV_IDLE_H

#include <stdbool.h>
#include <stdint.h>

/* Empty polls before pausing, and before the first sleep. About 10 us and
 * 100 us of spinning on this class of machine: short enough to give the
 * core away quickly, long enough that back-to-back bursts never sleep. */
#define MLV_IDLE_PAUSE_AFTER 256u
#define MLV_IDLE_SLEEP_AFTER 2048u

enum mlv_idle_action {
	MLV_IDLE_SPIN = 0,   /* poll again at once */
	MLV_IDLE_PAUSE,      /* rte_pause(), then poll */
	MLV_IDLE_SLEEP,      /* sleep *sleep_us, then poll */
};

struct mlv_idle {
	bool adaptive;
	uint32_t max_sleep_us;   /* >= 1 */
	uint32_t empty_polls;
	uint32_t sleep_us;       /* next sleep; doubles up to max_sleep_us */
};

static inline void mlv_idle_init(struct mlv_idle *s, bool adaptive,
				 uint32_t max_sleep_us)
{
	s->adaptive = adaptive;
	s->max_sleep_us = max_sleep_us ? max_sleep_us : 1;
	s->empty_polls = 0;
	s->sleep_us = 1;
}

/* After one poll of every RX queue that received n_rx frames in total:
 * what to do before the next poll. */
static inline enum mlv_idle_action mlv_idle_step(struct mlv_idle *s,
						 uint32_t n_rx,
						 uint32_t *sleep_us)
{
	if (n_rx || !s->adaptive) {
		s->empty_polls = 0;
		s->sleep_us = 1;
		return MLV_IDLE_SPIN;
	}
	if (s->empty_polls < MLV_IDLE_SLEEP_AFTER) {
		s->empty_polls++;
		return s->empty_polls > MLV_IDLE_PAUSE_AFTER ? MLV_IDLE_PAUSE
							     : MLV_IDLE_SPIN;
	}
	*sleep_us = s->sleep_us;
	if (s->sleep_us < s->max_sleep_us) {
		s->sleep_us *= 2;
		if (s->sleep_us > s->max_sleep_us)
			s->sleep_us = s->max_sleep_us;
	}
	return MLV_IDLE_SLEEP;
}

#endif
