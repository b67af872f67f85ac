/* SPDX-License-Identifier: BSD-3-Clause */
/* A connection-tracking table lent out to be saved and filled back
 * (conntrack.h, "Saving and restoring a table across a restart"). */
#include "dataplane/packet/conntrack.h"

uint64_t mlv_ct_seed(const struct mlv_ct *ct)
{
	return ct->seed;
}

enum mlv_err mlv_ct_set_seed(struct mlv_ct *ct, uint64_t seed)
{
	if (ct->occupancy != 0)
		return MLV_E_BUSY;
	ct->seed = seed;
	return MLV_OK;
}

uint32_t mlv_ct_export(const struct mlv_ct *ct, uint32_t first,
		       uint32_t max_buckets, uint32_t now_ms,
		       struct mlv_ct_saved *out, uint32_t cap, uint32_t *n)
{
	uint32_t b = first;

	*n = 0;
	for (; b < ct->n_buckets && b - first < max_buckets; b++) {
		const struct mlv_ct_entry *bucket =
			&ct->entries[(size_t)b * MLV_CT_WAYS];

		if (*n + MLV_CT_WAYS > cap)
			break;
		for (uint32_t w = 0; w < MLV_CT_WAYS; w++) {
			const struct mlv_ct_entry *e = &bucket[w];

			if (e->state == MLV_CT_FREE ||
			    !mlv_ct__live(e->expires_ms, now_ms))
				continue;
			out[*n].entry = *e;
			out[*n].slot = b * MLV_CT_WAYS + w;
			out[*n].left_ms = e->expires_ms - now_ms;
			(*n)++;
		}
	}
	return b >= ct->n_buckets ? 0 : b;
}

bool mlv_ct_restore(struct mlv_ct *ct, const struct mlv_ct_saved *s,
		    uint32_t now_ms)
{
	struct mlv_ct_entry *bucket, *slot = NULL;
	uint8_t state = s->entry.state;
	uint32_t left = s->left_ms, first;

	if (s->slot / MLV_CT_WAYS >= ct->n_buckets || state == MLV_CT_FREE ||
	    state >= MLV_CT__NSTATES || left == 0)
		return false;
	if (left > ct->timeout_ms[state])
		left = ct->timeout_ms[state];
	bucket = &ct->entries[(size_t)(s->slot / MLV_CT_WAYS) * MLV_CT_WAYS];
	/* the saved way first: the flow's look-ups start there, and one in
	 * another way costs a look-up a scan of the bucket */
	first = s->slot % MLV_CT_WAYS;
	for (uint32_t i = 0; i < MLV_CT_WAYS && !slot; i++) {
		struct mlv_ct_entry *e = &bucket[(first + i) % MLV_CT_WAYS];

		if (e->state == MLV_CT_FREE ||
		    !mlv_ct__live(e->expires_ms, now_ms))
			slot = e;
	}
	if (!slot)
		return false;
	if (slot->state != MLV_CT_FREE) {
		/* an expired flow not swept yet: let go of it first */
		mlv_ct__released(ct, slot);
		ct->occupancy--;
		ct->stats.expired_reused++;
	}
	*slot = s->entry;
	slot->expires_ms = now_ms + left;
	slot->cached_gen = 0;
	slot->backend_all_idx = 0;
	if (ct->tally)
		mlv_ct__tally_on(ct->tally, slot->backend_uid, state);
	ct->occupancy++;
	ct->stats.inserts++;
	return true;
}
