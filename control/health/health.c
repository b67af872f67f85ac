/* SPDX-License-Identifier: BSD-3-Clause */
/* The health engine's top: its life cycle and the event loop step that
 * hands socket events to the checks, runs what is due, re-arms the timer
 * and reports the batch. Control thread only. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "control/health/health_internal.h"

/* Work per process() call, so the control thread stays responsive; what
 * is left keeps the fd readable. Socket events are read EVENTS_PER_WAIT at
 * a time, for up to EVENT_ROUNDS_PER_CALL rounds. */
#define EVENTS_PER_WAIT 64
#define EVENT_ROUNDS_PER_CALL 16u
/* The timerfd can fill a call's first round every time; the socket events
 * after it are finite, so a later round is eventually empty. */
_Static_assert(EVENT_ROUNDS_PER_CALL >= 2, "the drain needs a second round");
#define TIMERS_PER_CALL 1024u
#define MAX_IN_FLIGHT_LIMIT 16384u
#define MIN_IN_FLIGHT 16u

static uint32_t default_max_in_flight(void)
{
	struct rlimit rl;
	uint64_t n = MAX_IN_FLIGHT_LIMIT;

	/* Each check holds one fd; leave the other half to the daemon
	 * (ports, control clients, files). */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		n = rl.rlim_cur / 2;
	if (n < MIN_IN_FLIGHT)
		n = MIN_IN_FLIGHT;
	if (n > MAX_IN_FLIGHT_LIMIT)
		n = MAX_IN_FLIGHT_LIMIT;
	return (uint32_t)n;
}

enum mlv_err mlv_health_create(const struct mlv_health_options *opts,
			       struct mlv_health **out)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0 };
	struct mlv_health *h;
	enum mlv_err err;

	if (!opts || !out)
		return MLV_E_INVAL;
	*out = NULL;
	if (opts->all_down != MLV_HEALTH_FAIL_OPEN &&
	    opts->all_down != MLV_HEALTH_FAIL_CLOSED)
		return MLV_E_INVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return MLV_E_NOMEM;
	h->opts = *opts;
	h->ep = -1;
	h->tfd = -1;
	h->rng = opts->seed;
	h->max_in_flight = opts->max_in_flight ? opts->max_in_flight
					       : default_max_in_flight();

	err = health_htable_init(&h->pairs);
	if (!err)
		err = health_htable_init(&h->probes);
	if (!err)
		err = health_htable_init(&h->vips);
	if (err)
		goto fail;
	h->ep = epoll_create1(EPOLL_CLOEXEC);
	h->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (h->ep < 0 || h->tfd < 0 ||
	    epoll_ctl(h->ep, EPOLL_CTL_ADD, h->tfd, &ev)) {
		err = MLV_E_IO;
		goto fail;
	}
	*out = h;
	return MLV_OK;
fail:
	mlv_health_destroy(h);
	return err;
}

void mlv_health_destroy(struct mlv_health *h)
{
	if (!h)
		return;
	health_model_free(h);
	health_index_clear(h);
	health_conns_free(h);
	health_htable_free(&h->pairs);
	health_htable_free(&h->probes);
	health_htable_free(&h->vips);
	free(h->heap);
	free(h->events);
	free(h->touched);
	free(h->changed);
	free(h->vip_events);
	if (h->tfd >= 0)
		close(h->tfd);
	if (h->ep >= 0)
		close(h->ep);
	free(h);
}

int mlv_health_fd(const struct mlv_health *h)
{
	return h ? h->ep : -1;
}

const char *mlv_health_error(const struct mlv_health *h)
{
	return h ? h->error : "";
}

/* ---- results ---- */

static void drain_timer(struct mlv_health *h)
{
	uint64_t expirations;

	/* EAGAIN: re-armed since it fired; nothing to consume. */
	if (read(h->tfd, &expirations, sizeof(expirations)) > 0)
		h->armed_ns = 0;
}

/* Handle every ready socket event, so that no deadline is judged while a
 * finished check's news is still unread: after the control thread was
 * busy, far more than one epoll_wait's worth may be waiting. Returns true
 * once epoll reports nothing, with *now the time taken just before that
 * empty look: a check still running then had not finished at *now, so a
 * deadline <= *now is a real timeout. Returns false when the rounds ran
 * out (more is ready: the fd stays readable and the next call goes on) or
 * epoll failed (*err set); deadlines then wait for a later call rather
 * than be judged blind. Events come only from checks in flight, at most
 * a few each, and no check starts before the deadlines are judged, so a
 * few calls always drain them. */
static bool handle_ready_events(struct mlv_health *h, uint64_t *now,
				enum mlv_err *err)
{
	struct epoll_event ev[EVENTS_PER_WAIT];

	for (uint32_t round = 0; round < EVENT_ROUNDS_PER_CALL; round++) {
		int n;

		*now = health_now_ns();
		n = epoll_wait(h->ep, ev, EVENTS_PER_WAIT, 0);
		if (n == 0)
			return true;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			*err = MLV_E_IO;
			return false;
		}
		for (int i = 0; i < n; i++) {
			if (ev[i].data.u64 == 0)
				drain_timer(h);
			else
				health_check_event(h, ev[i].data.u64,
						   ev[i].events, *now);
		}
	}
	return false;
}

/* Deadlines and due starts, earliest first, then waiters for free slots. */
static void run_due(struct mlv_health *h, uint64_t now)
{
	uint32_t budget = TIMERS_PER_CALL;
	struct health_probe *p;

	while (budget && (p = health_heap_top(h)) && p->due_ns <= now) {
		budget--;
		if (p->phase == PHASE_RUNNING)
			health_check_timeout(h, p, now);
		else if (!health_postpone_if_late(h, p, now))
			health_check_start(h, p, now);
	}
	while (budget && h->wait_head && h->in_flight < h->max_in_flight) {
		budget--;
		health_check_start(h, h->wait_head, now);
	}
}

enum mlv_err mlv_health_process(struct mlv_health *h)
{
	enum mlv_err err = MLV_OK;
	uint64_t now;

	if (!h)
		return MLV_E_INVAL;
	/* Answers first, then deadlines: a check whose answer and deadline
	 * arrive together counts as answered. */
	if (handle_ready_events(h, &now, &err))
		run_due(h, now);
	health_rearm(h, health_now_ns());
	health_batch_emit(h);
	return err;
}
