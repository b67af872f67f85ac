/* SPDX-License-Identifier: BSD-3-Clause */
/* What a finished check does to its probe: counters, rise and fall, the
 * down counts of its VIPs, its next check, and the batch of transitions
 * the daemon hears about once per process() call. Control thread only. */
#include <stdlib.h>
#include <string.h>

#include "control/health/health_internal.h"

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
	health_schedule_next(h, p, now);
}

/* Report what this call changed, in one callback. */
void health_batch_emit(struct mlv_health *h)
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
			.via = p->spec.via,
			.vip = p->spec.vip,
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
