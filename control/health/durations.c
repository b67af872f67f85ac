/* SPDX-License-Identifier: BSD-3-Clause */
/* The health engine's check-duration histogram (health.h,
 * mlv_health_check_durations; docs/health.md, "Check durations").
 *
 * A probe keeps one tally of the checks it completed; the (VIP, backend)
 * pairs it serves read it through an offset of their own. A check is then
 * one update whatever the number of pairs sharing the probe (1000 VIPs on
 * one backend cost no more than one), and a pair's figures still belong
 * to the pair: they start at zero when it joins a probe that others
 * already use, and carry over when a sync moves it to another probe.
 * Offsets are differences modulo 2^64, exact for counts and for sums in
 * whole nanoseconds. Control thread only. */
#include <string.h>

#include "control/health/health_internal.h"

#define NS_PER_MS 1000000ull

const uint64_t mlv_health_duration_bounds_ns[MLV_HEALTH_DURATION_BUCKETS] = {
	NS_PER_MS / 2, NS_PER_MS, 5 * NS_PER_MS / 2, 5 * NS_PER_MS,
	10 * NS_PER_MS, 25 * NS_PER_MS, 50 * NS_PER_MS, 100 * NS_PER_MS,
	250 * NS_PER_MS, 500 * NS_PER_MS, 1000 * NS_PER_MS, 2500 * NS_PER_MS,
	5000 * NS_PER_MS,
};

void health_tally_observe(struct health_tally *t, uint64_t ns,
			  enum mlv_health_result r)
{
	uint32_t i = 0;

	/* 13 bounds: a scan is as quick as a search */
	while (i < MLV_HEALTH_DURATION_BUCKETS &&
	       ns > mlv_health_duration_bounds_ns[i])
		i++;
	t->bucket[i]++;
	t->sum_ns += ns;
	if ((unsigned)r < MLV_HEALTH_RESULT__COUNT)
		t->results[r]++;
}

/* out = a + b (sign = 1) or a - b (sign = -1), field by field, mod 2^64. */
static void tally_combine(const struct health_tally *a,
			  const struct health_tally *b, int sign,
			  struct health_tally *out)
{
	for (uint32_t i = 0; i <= MLV_HEALTH_DURATION_BUCKETS; i++)
		out->bucket[i] = sign > 0 ? a->bucket[i] + b->bucket[i]
					  : a->bucket[i] - b->bucket[i];
	out->sum_ns = sign > 0 ? a->sum_ns + b->sum_ns : a->sum_ns - b->sum_ns;
	for (uint32_t i = 0; i < MLV_HEALTH_RESULT__COUNT; i++)
		out->results[i] = sign > 0 ? a->results[i] + b->results[i]
					   : a->results[i] - b->results[i];
}

void health_pair_tally(const struct health_pair *pair,
		       struct health_tally *out)
{
	if (!pair->probe) {
		*out = pair->offset;
		return;
	}
	tally_combine(&pair->probe->tally, &pair->offset, 1, out);
}

void health_pair_rebase(struct health_pair *pair,
			const struct health_tally *was)
{
	tally_combine(was, &pair->probe->tally, -1, &pair->offset);
}

enum mlv_err mlv_health_check_durations(const struct mlv_health *h,
					const char *vip, const char *backend,
					struct mlv_health_durations *out)
{
	const struct health_pair *pair;
	struct health_tally t;
	uint64_t below = 0;

	if (!h || !vip || !backend || !out)
		return MLV_E_INVAL;
	pair = health_pair_find(h, vip, backend);
	if (!pair)
		return MLV_E_NOT_FOUND;
	health_pair_tally(pair, &t);
	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; i < MLV_HEALTH_DURATION_BUCKETS; i++) {
		below += t.bucket[i];
		out->le[i] = below;
	}
	out->count = below + t.bucket[MLV_HEALTH_DURATION_BUCKETS];
	out->sum_ns = t.sum_ns;
	memcpy(out->results, t.results, sizeof(out->results));
	return MLV_OK;
}
