/* SPDX-License-Identifier: BSD-3-Clause */
/* When each probe checks next: the first check at a random phase, the
 * period with jitter, postponing after a stall, the wait list for free
 * slots, and the timerfd armed for the earliest of them. Moves probes
 * between the heap and the wait list; never opens a socket. Control
 * thread only. */
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>

#include "control/health/health_internal.h"

#define NS_PER_MS 1000000ull
/* Jitter of each interval: +-1/10 of it. */
#define JITTER_DIVISOR 10u

uint64_t health_random(struct mlv_health *h, uint64_t bound)
{
	/* splitmix64 (Steele, Lea, Flood 2014): tiny, seedable, and good
	 * enough for spreading timers; the bias of % is irrelevant here. */
	uint64_t z = (h->rng += 0x9e3779b97f4a7c15ull);

	if (bound == 0)
		return 0;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return z % bound;
}

/* A random phase in [0, min(interval, HEALTH_FIRST_CHECK_SPREAD_MS)). */
static uint64_t random_phase(struct mlv_health *h, const struct health_probe *p)
{
	uint64_t spread = p->spec.interval_ms < HEALTH_FIRST_CHECK_SPREAD_MS ?
				  p->spec.interval_ms : HEALTH_FIRST_CHECK_SPREAD_MS;

	return health_random(h, spread * NS_PER_MS);
}

enum mlv_err health_schedule_first(struct mlv_health *h, struct health_probe *p,
				   uint64_t now)
{
	p->phase = PHASE_SCHEDULED;
	p->postponed = false;
	return health_heap_set(h, p, now + random_phase(h, p));
}

static uint64_t jitter_ns(const struct health_probe *p)
{
	return (uint64_t)p->spec.interval_ms * NS_PER_MS / JITTER_DIVISOR;
}

/* Whether a start due at due_ns has missed its time: more than the jitter
 * (which allows some lateness by design) has passed since. The engine is
 * woken at every due time, so this means the control thread was busy. */
static bool start_missed(const struct health_probe *p, uint64_t due_ns,
			 uint64_t now)
{
	return now > due_ns && now - due_ns > jitter_ns(p);
}

/* Start p's check at a random phase within min(interval, the first-check
 * spread) from now, as a first check: after a stall every probe due
 * during it would otherwise connect in one burst. Once per check (the
 * flag is cleared when the check starts), so lateness that persists
 * cannot postpone a probe for ever. Never before the next process() call,
 * so a probe has at most one result, hence at most one transition, per
 * batch. p must be in the heap (so this cannot allocate). */
static void postpone(struct mlv_health *h, struct health_probe *p,
		     uint64_t now)
{
	p->postponed = true;
	p->phase = PHASE_SCHEDULED;
	if (health_heap_set(h, p, now + 1 + random_phase(h, p)))
		p->phase = PHASE_OFF;
}

bool health_postpone_if_late(struct mlv_health *h, struct health_probe *p,
			     uint64_t now)
{
	if (p->postponed || !start_missed(p, p->due_ns, now))
		return false;
	postpone(h, p, now);
	return true;
}

void health_schedule_next(struct mlv_health *h, struct health_probe *p,
			  uint64_t now)
{
	uint64_t interval = (uint64_t)p->spec.interval_ms * NS_PER_MS;
	uint64_t jitter = jitter_ns(p);
	/* The period runs from start to start, so slow answers do not
	 * stretch it; started + interval - jitter is always > started. */
	uint64_t next = p->started_ns + interval - jitter +
			health_random(h, 2 * jitter + 1);

	/* Handled so late that the next start has passed: the intervals
	 * missed meanwhile are not made up. */
	if (start_missed(p, next, now)) {
		postpone(h, p, now);
		return;
	}
	/* Not in this process() call: one result per probe per batch. */
	if (next <= now)
		next = now + 1;
	p->phase = PHASE_SCHEDULED;
	/* p is still in the heap (its deadline), so this cannot allocate. */
	if (health_heap_set(h, p, next))
		p->phase = PHASE_OFF;
}

void health_wait_push(struct mlv_health *h, struct health_probe *p)
{
	if (p->phase == PHASE_WAITING)
		return;
	health_heap_remove(h, p);
	p->phase = PHASE_WAITING;
	p->wait_prev = h->wait_tail;
	p->wait_next = NULL;
	if (h->wait_tail)
		h->wait_tail->wait_next = p;
	else
		h->wait_head = p;
	h->wait_tail = p;
	h->n_waiting++;
	h->counters[MLV_HEALTH_CTR_DEFERRED]++;
}

void health_wait_remove(struct mlv_health *h, struct health_probe *p)
{
	if (p->phase != PHASE_WAITING)
		return;
	if (p->wait_prev)
		p->wait_prev->wait_next = p->wait_next;
	else
		h->wait_head = p->wait_next;
	if (p->wait_next)
		p->wait_next->wait_prev = p->wait_prev;
	else
		h->wait_tail = p->wait_prev;
	p->wait_prev = p->wait_next = NULL;
	p->phase = PHASE_OFF;
	h->n_waiting--;
}

void health_rearm(struct mlv_health *h, uint64_t now)
{
	struct health_probe *top = health_heap_top(h);
	uint64_t want = 0;
	struct itimerspec its;

	if (h->wait_head && h->in_flight < h->max_in_flight)
		want = now;
	else if (top)
		want = top->due_ns;
	/* A due time already reached is re-armed every time: the expiry may
	 * have been consumed while work is still pending. */
	if (want == h->armed_ns && (want == 0 || want > now))
		return;
	memset(&its, 0, sizeof(its));
	/* A time in the past fires at once; all zeroes disarm. */
	its.it_value.tv_sec = (time_t)(want / 1000000000ull);
	its.it_value.tv_nsec = (long)(want % 1000000000ull);
	if (timerfd_settime(h->tfd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		h->armed_ns = want;
	else
		h->counters[MLV_HEALTH_CTR_LOCAL_ERRORS]++;
}
