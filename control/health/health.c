/* SPDX-License-Identifier: BSD-3-Clause */
/* The health engine's core: life cycle, the event loop step, rise/fall,
 * scheduling with jitter, batching of transitions, and the queries. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "control/health/health_internal.h"

#define NS_PER_MS 1000000ull
/* Jitter of each interval: +-1/10 of it. */
#define JITTER_DIVISOR 10u
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

uint64_t health_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int64_t health_unix_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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

/* ---- scheduling ---- */

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

static void schedule_next(struct mlv_health *h, struct health_probe *p,
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

void health_probe_stop(struct mlv_health *h, struct health_probe *p)
{
	health_check_abort(h, p);
	health_heap_remove(h, p);
	health_wait_remove(h, p);
	p->phase = PHASE_OFF;
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

/* ---- results ---- */

bool health_vip_all_down(const struct health_vip *v)
{
	return v->n_pairs > 0 && v->n_down == v->n_pairs;
}

bool health_pair_effective(const struct mlv_health *h,
			   const struct health_pair *pair)
{
	return pair->probe->up ||
	       (h->opts.all_down == MLV_HEALTH_FAIL_OPEN &&
		health_vip_all_down(pair->vip));
}

/* Grow *arr (elements of size) to hold at least need. */
static bool reserve(void **arr, uint32_t *cap, uint32_t need, size_t size)
{
	uint32_t n = *cap ? *cap : 16;
	void *na;

	if (need <= *cap)
		return true;
	while (n < need)
		n *= 2;
	na = realloc(*arr, (size_t)n * size);
	if (!na)
		return false;
	*arr = na;
	*cap = n;
	return true;
}

static void note_changed(struct mlv_health *h, struct health_probe *p)
{
	if (p->in_batch)
		return;
	if (!reserve((void **)&h->changed, &h->cap_changed, h->n_changed + 1,
		     sizeof(*h->changed))) {
		h->batch_lost = true;
		return;
	}
	p->in_batch = true;
	h->changed[h->n_changed++] = p;
}

static void note_vip(struct mlv_health *h, struct health_vip *v)
{
	if (v->touched)
		return;
	if (!reserve((void **)&h->touched, &h->cap_touched, h->n_touched + 1,
		     sizeof(*h->touched))) {
		h->batch_lost = true;
		return;
	}
	v->touched = true;
	h->touched[h->n_touched++] = v;
}

static void transition(struct mlv_health *h, struct health_probe *p, bool up)
{
	p->up = up;
	p->transitions++;
	p->since_unix_ms = health_unix_ms();
	h->counters[MLV_HEALTH_CTR_TRANSITIONS]++;
	for (uint32_t i = 0; i < p->n_pairs; i++) {
		struct health_vip *v = p->pairs[i]->vip;

		if (up)
			v->n_down--;
		else
			v->n_down++;
		note_vip(h, v);
	}
	note_changed(h, p);
}

void health_probe_finish(struct mlv_health *h, struct health_probe *p,
			 enum mlv_health_result r, const char *result,
			 uint64_t now)
{
	bool ok = r == MLV_HEALTH_RESULT_OK;

	/* A clock of its own rather than now: a call handles up to 64
	 * events with one now, read before it looked for any of them. */
	health_tally_observe(&p->tally, health_now_ns() - p->started_ns, r);
	health_check_abort(h, p);
	p->checks++;
	p->has_result = true;
	p->last_ok = ok;
	strncpy(p->last_result, result, sizeof(p->last_result) - 1);
	p->last_result[sizeof(p->last_result) - 1] = '\0';
	if (ok) {
		h->counters[MLV_HEALTH_CTR_CHECKS_OK]++;
		if (p->successes < UINT32_MAX)
			p->successes++;
		p->failures = 0;
		if (!p->up && p->successes >= p->spec.rise)
			transition(h, p, true);
	} else {
		h->counters[MLV_HEALTH_CTR_CHECKS_FAILED]++;
		if (p->failures < UINT32_MAX)
			p->failures++;
		p->successes = 0;
		if (p->up && p->failures >= p->spec.fall)
			transition(h, p, false);
	}
	schedule_next(h, p, now);
}

/* Report what this call changed, in one callback. */
static void emit_batch(struct mlv_health *h)
{
	uint32_t n_vip_events = 0;
	bool ok;

	if (!h->n_changed && !h->n_touched && !h->batch_lost)
		return;
	ok = reserve((void **)&h->events, &h->cap_events, h->n_changed,
		     sizeof(*h->events)) &&
	     reserve((void **)&h->vip_events, &h->cap_vip_events, h->n_touched,
		     sizeof(*h->vip_events));
	if (!ok) {
		/* Report nothing in detail, but report: the daemon rebuilds
		 * from the queries, which are right. */
		h->n_changed = 0;
		h->n_touched = 0;
		h->batch_lost = true;
	}
	for (uint32_t i = 0; i < h->n_changed; i++) {
		struct health_probe *p = h->changed[i];

		h->events[i] = (struct mlv_health_event){
			.type = p->spec.type,
			.address = p->spec.address,
			.port = p->spec.port,
			.path = p->spec.path,
			.up = p->up,
			.reason = p->last_result,
			.consecutive = p->up ? p->successes : p->failures,
			.n_pairs = p->n_pairs,
			.pairs = p->pub,
		};
	}
	for (uint32_t i = 0; i < h->n_touched; i++) {
		struct health_vip *v = h->touched[i];
		bool all_down = health_vip_all_down(v);

		if (all_down == v->all_down_reported)
			continue;
		v->all_down_reported = all_down;
		h->vip_events[n_vip_events++] = (struct mlv_health_vip_event){
			.vip = v->name,
			.all_down = all_down,
			.fail_open = all_down &&
				     h->opts.all_down == MLV_HEALTH_FAIL_OPEN,
		};
	}
	if (h->opts.on_batch) {
		struct mlv_health_batch b = {
			.n_events = h->n_changed,
			.events = h->events,
			.n_vip_events = n_vip_events,
			.vip_events = h->vip_events,
		};

		h->opts.on_batch(&b, h->opts.ctx);
	}
	for (uint32_t i = 0; i < h->n_changed; i++)
		h->changed[i]->in_batch = false;
	for (uint32_t i = 0; i < h->n_touched; i++)
		h->touched[i]->touched = false;
	h->n_changed = 0;
	h->n_touched = 0;
	h->batch_lost = false;
}

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
		else if (!p->postponed && start_missed(p, p->due_ns, now))
			postpone(h, p, now);
		else
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
	emit_batch(h);
	return err;
}

/* ---- queries ---- */

enum mlv_err mlv_health_get(const struct mlv_health *h, const char *vip,
			    const char *backend, struct mlv_health_status *out)
{
	const struct health_pair *pair;
	const struct health_probe *p;

	if (!h || !vip || !backend || !out)
		return MLV_E_INVAL;
	pair = health_pair_find(h, vip, backend);
	if (!pair)
		return MLV_E_NOT_FOUND;
	p = pair->probe;
	memset(out, 0, sizeof(*out));
	out->type = p->spec.type;
	out->address = p->spec.address;
	out->port = p->spec.port;
	out->up = p->up;
	out->effective_up = health_pair_effective(h, pair);
	out->vip_all_down = health_vip_all_down(pair->vip);
	out->in_flight = p->phase == PHASE_RUNNING;
	out->successes = p->successes;
	out->failures = p->failures;
	out->checks = p->checks;
	out->transitions = p->transitions;
	out->since_unix_ms = p->since_unix_ms;
	out->has_result = p->has_result;
	out->last_ok = p->last_ok;
	memcpy(out->last_result, p->last_result, sizeof(out->last_result));
	out->shared_by = p->n_pairs;
	return MLV_OK;
}

bool mlv_health_is_up(const struct mlv_health *h, const char *vip,
		      const char *backend)
{
	const struct health_pair *pair;

	if (!h || !vip || !backend)
		return true;
	pair = health_pair_find(h, vip, backend);
	return !pair || health_pair_effective(h, pair);
}

enum mlv_err mlv_health_vip_get(const struct mlv_health *h, const char *vip,
				struct mlv_health_vip_status *out)
{
	const struct health_vip *v;

	if (!h || !vip || !out)
		return MLV_E_INVAL;
	v = health_vip_find(h, vip);
	if (!v)
		return MLV_E_NOT_FOUND;
	out->n_backends = v->n_pairs;
	out->n_down = v->n_down;
	out->all_down = health_vip_all_down(v);
	out->fail_open = out->all_down &&
			 h->opts.all_down == MLV_HEALTH_FAIL_OPEN;
	return MLV_OK;
}

void mlv_health_stats(const struct mlv_health *h, struct mlv_health_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!h)
		return;
	out->n_vips = h->vips.n;
	out->n_pairs = h->pairs.n;
	out->n_probes = h->probes.n;
	out->in_flight = h->in_flight;
	out->waiting = h->n_waiting;
	out->max_in_flight = h->max_in_flight;
	memcpy(out->counters, h->counters, sizeof(out->counters));
}
