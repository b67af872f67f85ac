/* SPDX-License-Identifier: BSD-3-Clause */
/* The new-flow rate limit against its contract (docs/forwarding.md,
 * "New-flow rate limits"): of the new flows offered above the rate to
 * the paced scenario's limited VIP, the daemon admits what a token
 * bucket of new_flows_burst refilled at new_flows_per_second admits over
 * the window pkt-pace fed them in, within the timing slack of a feeder
 * and a daemon sharing two cores. The established flows in the same
 * input are checked by check_totals: every one of their packets passes. */
#include <inttypes.h>
#include <stdio.h>

#include "tests/packet/check.h"

/* How far the daemon's view of the window may differ from the feeder's:
 * the FIFO's buffering and the first and last bursts' scheduling. */
#define RATE_SLACK_MS 150

void check_rate(struct check_ctx *c, uint64_t window_ms)
{
	const struct scenario *sc = c->sc;
	const struct sc_vip *v;
	uint64_t offered = 0, admitted = 0, burst, lo, hi;

	if (!sc->paced)
		return;
	v = &sc->vips[sc->rate_vip];
	for (uint32_t i = 0; i < sc->n_frames; i++) {
		if (sc->frames[i].exp.outcome != SC_MAY_LIMIT)
			continue;
		offered++;
		admitted += c->forwarded[i] != 0;
	}
	/* one worker: the VIP's whole rate and burst */
	burst = v->new_flows_burst ? v->new_flows_burst :
		(v->new_flows_per_second + 9) / 10;
	hi = burst + (uint64_t)v->new_flows_per_second *
		     (window_ms + RATE_SLACK_MS) / 1000;
	lo = window_ms > RATE_SLACK_MS ?
		(uint64_t)v->new_flows_per_second *
		(window_ms - RATE_SLACK_MS) / 1000 : 0;
	printf("rate limit: VIP %s, %u new flows/s (burst %" PRIu64 "): %" PRIu64
	       " of %" PRIu64 " new flows admitted in %" PRIu64 " ms "
	       "(bounds %" PRIu64 "..%" PRIu64 ")\n", v->name,
	       v->new_flows_per_second, burst, admitted, offered, window_ms,
	       lo, hi);
	if (offered <= hi)
		check_fail(c, "scenario bug: %" PRIu64 " new flows offered in %"
			   PRIu64 " ms do not exceed the rate's %" PRIu64,
			   offered, window_ms, hi);
	if (admitted < lo || admitted > hi)
		check_fail(c, "VIP %s admitted %" PRIu64 " new flows in %" PRIu64
			   " ms; its rate %u/s with burst %" PRIu64 " allows %"
			   PRIu64 "..%" PRIu64, v->name, admitted, window_ms,
			   v->new_flows_per_second, burst, lo, hi);
}
