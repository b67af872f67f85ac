/* SPDX-License-Identifier: BSD-3-Clause */
/* Tallies of tracked flows (flow_tally.h): reservation and readers. */
#include "dataplane/packet/flow_tally.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/mman.h>

#define TALLY_BYTES ((size_t)MLV_TALLY_SLOTS * sizeof(struct mlv_flow_tally))

enum mlv_err mlv_flow_tally_create(struct mlv_flow_tally **out)
{
	/* The worker touches it first (mlv_flow_tally_prefault), which puts
	 * each page on the worker's NUMA node. */
	void *p = mmap(NULL, TALLY_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return MLV_E_NOMEM;
	*out = p;
	return MLV_OK;
}

void mlv_flow_tally_prefault(struct mlv_flow_tally *t)
{
	volatile uint8_t *p = (volatile uint8_t *)t;

	/* a write per page: reading a never-written page maps the shared
	 * zero page, which the first write would still have to replace */
	for (size_t off = 0; off < TALLY_BYTES; off += 4096)
		p[off] = p[off];
}

void mlv_flow_tally_destroy(struct mlv_flow_tally *t)
{
	if (t)
		munmap(t, TALLY_BYTES);
}

static uint32_t load(const uint32_t *p)
{
	/* a whole value while the worker writes it with plain stores */
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

void mlv_flow_tally_backend(const struct mlv_flow_tally_set *set, uint32_t uid,
			    uint64_t out[2])
{
	uint32_t s = mlv_tally_slot(uid);

	out[0] = out[1] = 0;
	for (uint32_t w = 0; set && w < set->n_workers; w++) {
		const struct mlv_flow_tally *t = set->per_worker[w];

		if (!t)
			continue;
		out[MLV_TALLY_ACTIVE] += load(&t[s].n[MLV_TALLY_ACTIVE]);
		out[MLV_TALLY_INACTIVE] += load(&t[s].n[MLV_TALLY_INACTIVE]);
	}
}

uint64_t mlv_flow_tally_vip(const struct mlv_flow_tally_set *set, uint32_t uid)
{
	uint32_t s = mlv_tally_slot(uid);
	uint64_t sum = 0;

	for (uint32_t w = 0; set && w < set->n_workers; w++)
		if (set->per_worker[w])
			sum += load(&set->per_worker[w][s].vip_flows);
	return sum;
}

bool mlv_flow_tally_slot_empty(const struct mlv_flow_tally_set *set,
			       uint32_t uid)
{
	uint32_t s = mlv_tally_slot(uid);

	for (uint32_t w = 0; set && w < set->n_workers; w++) {
		const struct mlv_flow_tally *t = set->per_worker[w];

		if (t && (load(&t[s].n[0]) | load(&t[s].n[1]) |
			  load(&t[s].vip_flows)) != 0)
			return false;
	}
	return true;
}
