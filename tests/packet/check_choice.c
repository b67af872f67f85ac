/* SPDX-License-Identifier: BSD-3-Clause */
/* The backend every input frame must reach, worked out before reading the
 * output by replaying the data path's choices in input order (one worker
 * and one queue: the daemon sees the frames in file order).
 *
 * VIPs without down backends or max_load: the table's owner of the key's
 * slot, frame by frame, as before second choices existed.
 *
 * VIPs with a `state: down` backend or `max_load` (docs/table-builders.md):
 * each flow (a scenario group, one flow key) is placed at its first frame
 * and keeps that backend, as conntrack keeps it:
 * - the slot's owner; its second choice if the owner is down (none if
 *   that is down too);
 * - with max_load c, the second choice if the owner already holds
 *   count >= c x w / W x (m + 1) of the VIP's m placed flows (W: the sum
 *   of the weights of the backends taking new flows), Mirrokni, Thorup &
 *   Zadimoghaddam's capacity ceil(c (m + 1) w / W) for integer counts.
 * Flows are never re-placed: the scenario keeps every flow tracked (a
 * large connection table, no expiry within the run). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/packet/check.h"

#define UNPLACED INT16_MIN

struct vip_load {
	bool stateful;
	double bound[SC_MAX_BACKENDS];   /* max_load x w / W */
	uint64_t count[SC_MAX_BACKENDS];
	uint64_t total;
	uint64_t diverted;               /* to the second choice by the bound */
	uint64_t failed_over;            /* to the second choice: owner down */
	uint64_t first_over;             /* flows whose owner was full */
};

static void init_loads(const struct scenario *sc, struct vip_load *loads)
{
	for (uint32_t v = 0; v < sc->n_vips; v++) {
		const struct sc_vip *vip = &sc->vips[v];
		struct vip_load *l = &loads[v];
		double sum = 0;

		*l = (struct vip_load){ .stateful = vip->max_load > 0 };
		for (uint32_t b = 0; b < vip->n_backends; b++) {
			const struct sc_backend *be = &vip->backends[b];

			l->stateful |= be->down;
			if (!be->down && !be->drain)
				sum += be->weight;
		}
		/* the same double arithmetic as the generation builder */
		for (uint32_t b = 0; b < vip->n_backends; b++) {
			const struct sc_backend *be = &vip->backends[b];

			l->bound[b] = vip->max_load > 0 && sum > 0 && !be->down &&
				      !be->drain ? vip->max_load * be->weight / sum : 0;
		}
	}
}

/* Place a new flow of VIP v with key. */
static int place(struct check_ctx *c, struct vip_load *l, uint16_t v,
		 const struct mlv_flow_key *key)
{
	const struct sc_vip *vip = &c->sc->vips[v];
	int first, second, chosen;

	expect_choices(&c->tabs, v, key, &first, &second);
	if (first < 0) {
		chosen = -1;
	} else if (vip->backends[first].down) {
		chosen = second >= 0 && !vip->backends[second].down ? second : -1;
		l->failed_over += chosen >= 0;
	} else if (vip->max_load > 0 &&
		   (double)l->count[first] >= l->bound[first] * ((double)l->total + 1)) {
		l->first_over++;
		chosen = second >= 0 ? second : first;
		l->diverted += chosen != first;
	} else {
		chosen = first;
	}
	if (chosen >= 0) {
		l->count[chosen]++;
		l->total++;
	}
	return chosen;
}

static void report(struct check_ctx *c, const struct vip_load *loads)
{
	for (uint32_t v = 0; v < c->sc->n_vips; v++) {
		const struct sc_vip *vip = &c->sc->vips[v];
		const struct vip_load *l = &loads[v];

		if (!l->stateful)
			continue;
		printf("VIP %s: %" PRIu64 " flows placed, %" PRIu64 " failed over "
		       "(owner down), %" PRIu64 " diverted by max_load %.2f:",
		       vip->name, l->total, l->failed_over, l->diverted,
		       vip->max_load);
		for (uint32_t b = 0; b < vip->n_backends; b++)
			printf(" %s=%" PRIu64, vip->backends[b].name, l->count[b]);
		putchar('\n');
		if (vip->max_load > 0 && l->diverted == 0)
			check_fail(c, "VIP %s has max_load but no flow needed its "
				   "second choice: the scenario does not exercise "
				   "the bound", vip->name);
	}
}

void check_plan_choices(struct check_ctx *c)
{
	const struct scenario *sc = c->sc;
	struct vip_load loads[SC_MAX_VIPS];
	int16_t *group = malloc((c->n_groups ? c->n_groups : 1) * sizeof(*group));

	if (!group) {
		check_fail(c, "out of memory");
		return;
	}
	for (uint32_t g = 0; g < c->n_groups; g++)
		group[g] = UNPLACED;
	init_loads(sc, loads);
	for (uint32_t i = 0; i < sc->n_frames; i++) {
		const struct sc_expect *e = &sc->frames[i].exp;
		struct vip_load *l = &loads[e->vip];

		if (e->outcome != SC_FORWARD && e->outcome != SC_MAY_LIMIT) {
			c->want[i] = -1;
			continue;
		}
		if (e->to_backend) {
			/* routed by its QUIC connection ID: neither the
			 * table nor conntrack, so no flow is placed */
			c->want[i] = (int16_t)(e->to_backend - 1);
			continue;
		}
		if (!l->stateful) {
			c->want[i] = (int16_t)expect_backend(&c->tabs, e->vip, &e->key);
			continue;
		}
		if (!e->group) {
			check_fail(c, "scenario bug: frame %u (%s) of VIP %s has no "
				   "flow group", i, e->what, sc->vips[e->vip].name);
			continue;
		}
		if (group[e->group] == UNPLACED)
			group[e->group] = (int16_t)place(c, l, e->vip, &e->key);
		c->want[i] = group[e->group];
	}
	for (uint32_t v = 0; v < sc->n_vips; v++) {
		c->want_second_down += loads[v].failed_over;
		c->want_second_loaded += loads[v].diverted;
	}
	report(c, loads);
	free(group);
}
