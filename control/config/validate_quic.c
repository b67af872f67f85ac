/* SPDX-License-Identifier: BSD-3-Clause */
/* The checks of QUIC connection-ID routing (vips[].quic and
 * vips[].backends[].quic_server_id; docs/forwarding.md, "QUIC
 * connection-ID routing"). Internal to the config loader. */
#include <limits.h>
#include <netinet/in.h>
#include <stdlib.h>

#include "control/config/diags.h"
#include "control/config/validate_internal.h"

struct id_ref {
	uint32_t id;
	uint32_t index;   /* in the VIP's backends (file order) */
};

static int id_ref_cmp(const void *a, const void *b)
{
	const struct id_ref *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Each server ID names one backend of the VIP: a second backend with the
 * same ID is an error at its quic_server_id, naming the first. */
static void check_unique_ids(struct mlv_cfg_ctx *ctx,
			     const struct mlv_vip_config *vip,
			     const struct mlv_ynode *const *items)
{
	struct id_ref *refs = calloc(vip->n_backends, sizeof(*refs));
	uint32_t n = 0;

	if (refs == NULL) {
		ctx->nomem = true;
		return;
	}
	for (uint32_t i = 0; i < vip->n_backends; i++) {
		if (vip->backends[i].quic_server_id == 0)
			continue;
		refs[n].id = vip->backends[i].quic_server_id;
		refs[n].index = i;
		n++;
	}
	qsort(refs, n, sizeof(*refs), id_ref_cmp);
	for (uint32_t i = 1; i < n; i++) {
		const struct id_ref *first = &refs[i - 1];

		if (refs[i].id != first->id)
			continue;
		while (first > refs && first[-1].id == first->id)
			first--;
		struct mlv_src_pos here = mlv_cfg_item_pos(items[refs[i].index],
							   "quic_server_id");
		struct mlv_src_pos there = mlv_cfg_item_pos(items[first->index],
							    "quic_server_id");
		char at[PATH_MAX + 16];

		mlv_cfg_error(ctx, here,
			      "quic_server_id %u of backend '%s' in VIP '%s' is "
			      "already backend '%s''s (at %s): each server ID "
			      "names one backend",
			      refs[i].id, vip->backends[refs[i].index].name,
			      vip->name, vip->backends[first->index].name,
			      mlv_diags_where(ctx->diags, there, here, at,
					      sizeof(at)));
	}
	free(refs);
}

void mlv_cfg_check_quic(struct mlv_cfg_ctx *ctx, const struct mlv_vip_config *vip,
			const struct mlv_cfg_seen *seen)
{
	const struct mlv_ynode *list = mlv_cfg_value(seen, "backends");
	const struct mlv_ynode **items;
	uint32_t i, with_id = 0;

	if (vip->quic && mlv_cfg_usable(seen, "protocol") &&
	    vip->protocol != IPPROTO_UDP)
		mlv_cfg_error(ctx, mlv_cfg_pos(seen, "quic"),
			      "quic is only for UDP VIPs (VIP '%s' is tcp)",
			      vip->name);
	items = mlv_cfg_list_items(ctx, list, vip->n_backends);
	if (items == NULL)
		return;
	for (i = 0; i < vip->n_backends; i++) {
		if (vip->backends[i].quic_server_id == 0)
			continue;
		with_id++;
		if (!vip->quic)
			mlv_cfg_warn(ctx, mlv_cfg_item_pos(items[i], "quic_server_id"),
				     "quic_server_id of backend '%s' is ignored: "
				     "VIP '%s' does not have quic: true",
				     vip->backends[i].name, vip->name);
	}
	if (vip->quic && with_id == 0 && vip->protocol == IPPROTO_UDP)
		mlv_cfg_warn(ctx, mlv_cfg_pos(seen, "quic"),
			     "VIP '%s' has quic: true but no backend has a "
			     "quic_server_id: every packet is balanced by the "
			     "flow hash", vip->name);
	if (vip->quic)
		check_unique_ids(ctx, vip, items);
	free(items);
}
