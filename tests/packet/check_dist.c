/* SPDX-License-Identifier: BSD-3-Clause */
/* The spread of flows over backends.
 *
 * Distribution: with the table built from weights w_i, a new flow lands
 * on backend i with probability p_i = w_i / sum(w) (Maglev's slot shares
 * are within N/M of that, far below the sampling noise here). Over n
 * independent flows the count X_i is Binomial(n, p_i), so
 * z_i = (X_i - n p_i) / sqrt(n p_i (1 - p_i)) is close to standard normal
 * for these n. We accept when every |z_i| <= z*, with z* chosen so that a
 * correct daemon fails with probability at most ALPHA over all k backends
 * checked (two-sided, Bonferroni): P(|Z| > z*) = ALPHA / k. The inputs are
 * fixed, so a pass is reproducible; the bound says how surprising a
 * failure would be, instead of being a tuned magic number.
 *
 * Drained and weight-0 backends must get no flow at all (every flow in
 * the input is new to the daemon). Coverage: in scenarios meant to
 * exercise every encapsulation, each backend that can take flows must
 * have received at least one packet. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "tests/packet/check.h"

#define ALPHA 1e-6

/* z with P(|Z| > z) = p for standard normal Z, by bisection on erfc. */
static double two_sided_z(double p)
{
	double lo = 0, hi = 40;

	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;

		if (erfc(mid / sqrt(2.0)) > p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

static bool takes_flows(const struct sc_backend *b)
{
	return !b->drain && !b->down && b->weight > 0;
}

static void check_vip_distribution(struct check_ctx *c, uint16_t v,
				   double zcrit)
{
	const struct sc_vip *vip = &c->sc->vips[v];
	uint64_t flows[SC_MAX_BACKENDS] = {0}, n = 0;
	double wsum = 0;

	for (uint32_t g = 1; g < c->n_groups; g++) {
		uint32_t first = c->group_first[g];

		if (!c->group_backend[g] || c->sc->frames[first].exp.vip != v)
			continue;
		flows[c->group_backend[g] - 1]++;
		n++;
	}
	for (uint32_t i = 0; i < vip->n_backends; i++)
		if (takes_flows(&vip->backends[i]))
			wsum += vip->backends[i].weight;

	printf("distribution of %" PRIu64 " flows of VIP %s (accept |z| <= %.2f):\n",
	       n, vip->name, zcrit);
	for (uint32_t i = 0; i < vip->n_backends; i++) {
		const struct sc_backend *b = &vip->backends[i];

		if (!takes_flows(b)) {
			printf("  %-10s weight %-4u %-6s flows %" PRIu64 " (must be 0)\n",
			       b->name, b->weight,
			       b->drain ? "drain" : b->down ? "down" : "", flows[i]);
			if (flows[i])
				check_fail(c, "VIP %s: %s backend %s got %" PRIu64
					   " new flows", vip->name,
					   b->drain ? "drained" :
					   b->down ? "down" : "weight-0",
					   b->name, flows[i]);
			continue;
		}
		double p = b->weight / wsum;
		double mean = (double)n * p;
		double sd = sqrt((double)n * p * (1 - p));
		double z = sd > 0 ? ((double)flows[i] - mean) / sd : 0;

		printf("  %-10s weight %-4u expected %7.1f flows %5" PRIu64
		       " z %+.2f\n", b->name, b->weight, mean, flows[i], z);
		if (fabs(z) > zcrit)
			check_fail(c, "VIP %s: backend %s got %" PRIu64 " of %" PRIu64
				   " flows, weights say %.1f +- %.1f (z = %.2f, "
				   "limit %.2f)", vip->name, b->name, flows[i], n,
				   mean, sd, z, zcrit);
	}
}

void check_distribution(struct check_ctx *c)
{
	const struct scenario *sc = c->sc;

	if (sc->check_distribution) {
		uint32_t k = 0;

		for (uint32_t v = 0; v < sc->n_vips; v++)
			for (uint32_t i = 0; i < sc->vips[v].n_backends; i++)
				k += takes_flows(&sc->vips[v].backends[i]);
		double zcrit = two_sided_z(ALPHA / k);

		for (uint16_t v = 0; v < sc->n_vips; v++)
			check_vip_distribution(c, v, zcrit);
	}
	if (!sc->check_coverage)
		return;
	/* both configurations of a storm: backends only config B has (or
	 * that only B lets take flows) prove B was live while packets flowed */
	for (int alt = 0; alt <= (sc->n_alt_vips > 0); alt++) {
		const struct sc_vip *vips = alt ? sc->alt_vips : sc->vips;

		for (uint32_t v = 0; v < sc->n_vips; v++)
			for (uint32_t i = 0; i < vips[v].n_backends; i++)
				if (takes_flows(&vips[v].backends[i]) &&
				    c->out_pkts[v][i] == 0)
					check_fail(c, "VIP %s: backend %s%s received "
						   "no packet, so this scenario did "
						   "not exercise it", vips[v].name,
						   vips[v].backends[i].name,
						   alt ? " (config B)" : "");
	}
}
