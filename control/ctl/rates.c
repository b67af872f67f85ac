/* SPDX-License-Identifier: BSD-3-Clause */
/* Rates for the `stats` command: the control thread samples the workers'
 * summed counters periodically (mlv_ctl_sample) and `stats` divides the
 * difference of the last two samples by the time between them, so every
 * client sees the same rates without keeping state of its own. */
#include "control/ctl/commands_internal.h"

#include "control/generation/stats.h"

void mlv_ctl_sample(struct mlv_ctl_state *st, uint64_t now_ns)
{
	struct mlv_ctl_rate_samples *r = &st->rates;

	if (!st->worker_ctr || st->n_workers == 0)
		return;
	if (r->n > 0 && now_ns <= r->cur_ns)
		return;
	r->prev = r->cur;
	r->prev_ns = r->cur_ns;
	mlv_stats_workers(st->worker_ctr, st->n_workers, &r->cur);
	r->cur_ns = now_ns;
	if (r->n < 2)
		r->n++;
}

/* Totals only grow, but the workers' counters are read racily and a
 * worker block could be replaced: never report a negative rate. */
static double per_second(uint64_t before, uint64_t after, double interval_s)
{
	return after > before ? (double)(after - before) / interval_s : 0.0;
}

static bool set_rate(json_t *o, const char *key, uint64_t before,
		     uint64_t after, double interval_s)
{
	return json_object_set_new(o, key, json_real(per_second(before, after,
							       interval_s))) == 0;
}

json_t *mlv_ctl_rates_json(const struct mlv_ctl_state *st)
{
	const struct mlv_ctl_rate_samples *r = &st->rates;
	uint64_t drops_before = 0, drops_after = 0;
	double interval_s;
	json_t *o, *drops;

	if (r->n < 2)
		return json_null();
	interval_s = (double)(r->cur_ns - r->prev_ns) / 1e9;
	o = json_pack("{s:f}", "interval_s", interval_s);
	drops = json_object();
	if (!o || !drops || json_object_set_new(o, "drops", drops)) {
		if (!o)
			json_decref(drops);
		goto fail;
	}
	for (int i = 0; i < MLV_CTR__COUNT; i++)
		if (!set_rate(o, mlv_worker_counter_name((enum mlv_worker_counter)i),
			      r->prev.ctr[i], r->cur.ctr[i], interval_s))
			goto fail;
	for (int i = 0; i < MLV_DROP__COUNT; i++) {
		drops_before += r->prev.drop[i];
		drops_after += r->cur.drop[i];
		if (!set_rate(drops, mlv_drop_reason_name((enum mlv_drop_reason)i),
			      r->prev.drop[i], r->cur.drop[i], interval_s))
			goto fail;
	}
	if (!set_rate(drops, "total", drops_before, drops_after, interval_s))
		goto fail;
	return o;
fail:
	json_decref(o);
	return NULL;
}
