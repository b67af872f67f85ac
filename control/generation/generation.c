/* SPDX-License-Identifier: BSD-3-Clause */
/* The generation builder. One generation is one aligned allocation laid
 * out as: the struct, builder-private look-up tables, VIPs, backends,
 * encapsulation templates, per-worker counters and active-flow counts,
 * and the list of lookup tables it holds. The lookup tables themselves
 * (each VIP's first and second choices) live outside it, shared between
 * VIPs with the same table input and between generations, and
 * reference-counted (control/generation/vip_tables.h). Freeing a generation drops its
 * references and frees the one allocation.
 */
#include "control/generation/generation.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "control/generation/second_chance.h"
#include "control/generation/vip_tables.h"
#include "control/tables/maglev.h"
#include "control/tables/builder.h"
#include "control/generation/port_map_internal.h"

#define GEN_ALIGN 64   /* cache line: tables, counters and the struct */

struct gen_priv {
	uint32_t next_uid;                   /* never reused along a chain */
	/* This build's mlv_gen_build_opts.uid_free (NULL: any uid). */
	bool (*uid_free)(void *ctx, uint32_t uid);
	void *uid_free_ctx;
	struct mlv_gen_lookup lookup;        /* gen->lookup points here */
	const struct mlv_gen_vip **vip_by_name; /* strcmp order */
	struct mlv_gen_table **tables;       /* one reference each */
	uint32_t n_tables;
};

/* Byte offsets of each region inside the generation's allocation. */
struct gen_layout {
	size_t priv, vips, backends, encap;
	size_t exact, any_port, vip_uids, backend_uids, by_name;
	size_t backend_ctr_ptrs, backend_ctr;
	size_t backend_ctr_stride; /* bytes per worker */
	size_t vip_drops_ptrs, vip_drops, vip_drops_stride;
	size_t buckets_ptrs, buckets, buckets_stride;
	size_t tables, quic_ids, total;
	size_t wild_slots, wild, map_tops, map_leaves; /* port_map_internal.h */
	uint32_t vip_index_slots, backend_uid_slots;
	uint64_t quic_slots;       /* every quic VIP's server-ID map */
};

/* Transmit plan resolved from the config before anything is allocated. */
struct port_plan {
	struct mlv_gen_port_info info[MLV_MAX_PORTS];
	uint16_t tx_ports[MLV_MAX_PORTS];
	uint32_t n_tx;
};

static size_t round_up(size_t v, size_t align)
{
	return (v + align - 1) & ~(align - 1);
}

/* Reserve count * elem bytes aligned to align at *cursor. False on
 * overflow. */
static bool place(size_t *cursor, size_t align, size_t count, size_t elem,
		  size_t *off)
{
	size_t bytes, start;

	if (__builtin_mul_overflow(count, elem, &bytes) ||
	    __builtin_add_overflow(*cursor, align - 1, &start))
		return false;
	start &= ~(align - 1);
	if (__builtin_add_overflow(start, bytes, cursor))
		return false;
	*off = start;
	return true;
}

static int cmp_backend_ptr(const void *a, const void *b)
{
	const struct mlv_backend_config *x = *(const struct mlv_backend_config *const *)a;
	const struct mlv_backend_config *y = *(const struct mlv_backend_config *const *)b;

	return strcmp(x->name, y->name);
}

static int cmp_vip_ptr(const void *a, const void *b)
{
	const struct mlv_gen_vip *x = *(const struct mlv_gen_vip *const *)a;
	const struct mlv_gen_vip *y = *(const struct mlv_gen_vip *const *)b;

	return strcmp(x->name, y->name);
}

static int cmp_name_vip_ptr(const void *key, const void *elem)
{
	const struct mlv_gen_vip *v = *(const struct mlv_gen_vip *const *)elem;

	return strcmp(key, v->name);
}

static bool valid_family(uint8_t f)
{
	return f == MLV_AF_INET || f == MLV_AF_INET6;
}

/* Port info from the daemon, with unset fields taken from the config,
 * and transmit slots: one per distinct transmitting port, in port order. */
static enum mlv_err plan_ports(const struct mlv_config *cfg,
			       const struct mlv_gen_port_info *ports,
			       struct port_plan *plan)
{
	int16_t slot_of_port[MLV_MAX_PORTS];
	uint16_t tx_of_port[MLV_MAX_PORTS];

	for (uint32_t i = 0; i < cfg->n_ports; i++) {
		const struct mlv_port_config *pc = &cfg->ports[i];
		struct mlv_gen_port_info *pi = &plan->info[i];

		*pi = ports[i];
		if (pi->mtu == 0)
			pi->mtu = pc->mtu;
		if (pi->address.family == MLV_AF_NONE)
			pi->address = pc->address;
		if (pi->address6.family == MLV_AF_NONE)
			pi->address6 = pc->address6;
		slot_of_port[i] = -1;
	}
	for (uint32_t i = 0; i < cfg->n_ports; i++) {
		const char *via = cfg->ports[i].tx_port;
		uint32_t tx = i;

		if (via[0] != '\0') {
			for (tx = 0; tx < cfg->n_ports; tx++)
				if (strcmp(cfg->ports[tx].name, via) == 0)
					break;
			if (tx == cfg->n_ports)
				return MLV_E_INVAL;
		}
		slot_of_port[tx] = 0; /* marks a transmitting port */
		tx_of_port[i] = (uint16_t)tx;
	}
	for (uint32_t p = 0; p < cfg->n_ports; p++) {
		if (slot_of_port[p] < 0)
			continue;
		slot_of_port[p] = (int16_t)plan->n_tx;
		plan->tx_ports[plan->n_tx++] = (uint16_t)p;
	}
	for (uint32_t i = 0; i < cfg->n_ports; i++)
		plan->info[i].tx_slot = (uint16_t)slot_of_port[tx_of_port[i]];
	return MLV_OK;
}

/* Validate the VIPs, sort each VIP's backends by name into sorted[] (one
 * segment per VIP, in VIP order) and size the allocation. */
static enum mlv_err plan_layout(const struct mlv_config *cfg,
				uint32_t n_workers, uint32_t n_tx,
				const struct mlv_backend_config ***sorted_out,
				uint32_t *n_all_out, uint32_t *max_backends_out,
				struct gen_layout *l)
{
	const struct mlv_backend_config **sorted = NULL;
	uint64_t n_all = 0;
	uint32_t max_backends = 0, n_limited = 0, n_ranges = 0;
	uint64_t quic_slots = 0;
	size_t c = 0;
	enum mlv_err err;

	for (uint32_t v = 0; v < cfg->n_vips; v++) {
		const struct mlv_vip_config *vc = &cfg->vips[v];

		if (!valid_family(vc->address.family) ||
		    (vc->n_backends > 0 && !vc->backends))
			return MLV_E_INVAL;
		if (vc->n_backends > MLV_MAGLEV_MAX_BACKENDS)
			return MLV_E_RANGE;
		err = mlv_maglev_check_size(vc->table_size);
		if (err)
			return err;
		if (mlv_vip_port_last(vc) < vc->port)
			return MLV_E_INVAL;
		n_ranges += mlv_vip_port_wild(vc) && !mlv_vip_port_any(vc);
		n_all += vc->n_backends;
		n_limited += vc->new_flows_per_second > 0;
		if (vc->quic)
			quic_slots += mlv_gen_index_slots(vc->n_backends);
		if (vc->n_backends > max_backends)
			max_backends = vc->n_backends;
	}
	/* Keeps the uid map's slot count (2n rounded up) within uint32, and
	 * gives every uid of one generation its own tally slot (with room
	 * for the uids that leave and whose flows linger). */
	if (n_all + cfg->n_vips > MLV_TALLY_SLOTS / 2)
		return MLV_E_RANGE;

	sorted = malloc((n_all ? n_all : 1) * sizeof(*sorted));
	if (!sorted)
		return MLV_E_NOMEM;
	for (uint32_t v = 0, k = 0; v < cfg->n_vips; v++) {
		const struct mlv_vip_config *vc = &cfg->vips[v];
		const struct mlv_backend_config **seg = &sorted[k];

		bool in_order = true;

		for (uint32_t b = 0; b < vc->n_backends; b++) {
			seg[b] = &vc->backends[b];
			in_order &= b == 0 ||
				    strcmp(seg[b - 1]->name, seg[b]->name) < 0;
		}
		/* Configs usually list backends in name order already (and a
		 * rebuild after a failure sorts 100,000 pairs otherwise): one
		 * compare each instead of a sort. Strictly increasing also
		 * means no duplicates. */
		if (!in_order)
			qsort(seg, vc->n_backends, sizeof(*seg), cmp_backend_ptr);
		for (uint32_t b = 0; b < vc->n_backends; b++) {
			if (!valid_family(seg[b]->address.family) ||
			    (!in_order && b > 0 &&
			     strcmp(seg[b - 1]->name, seg[b]->name) == 0)) {
				free(sorted);
				return MLV_E_INVAL;
			}
		}
		k += vc->n_backends;
	}

	memset(l, 0, sizeof(*l));
	l->quic_slots = quic_slots;
	l->vip_index_slots = mlv_gen_index_slots(cfg->n_vips);
	l->backend_uid_slots = mlv_gen_index_slots((uint32_t)n_all);
	l->backend_ctr_stride = round_up(n_all * sizeof(struct mlv_flow_counters),
					 GEN_ALIGN);
	l->vip_drops_stride = round_up(cfg->n_vips * sizeof(struct mlv_vip_drops),
				       GEN_ALIGN);
	l->buckets_stride = round_up((n_limited ? n_limited : 1) *
				     sizeof(struct mlv_flow_bucket), GEN_ALIGN);
	c = sizeof(struct mlv_generation);
	if (!place(&c, GEN_ALIGN, 1, sizeof(struct gen_priv), &l->priv) ||
	    !place(&c, GEN_ALIGN, cfg->n_vips, sizeof(struct mlv_gen_vip), &l->vips) ||
	    !place(&c, GEN_ALIGN, n_all, sizeof(struct mlv_gen_backend), &l->backends) ||
	    !place(&c, GEN_ALIGN, n_all * n_tx, sizeof(struct mlv_encap_tmpl), &l->encap) ||
	    !place(&c, GEN_ALIGN, l->vip_index_slots, sizeof(struct mlv_gen_vip_slot), &l->exact) ||
	    !place(&c, GEN_ALIGN, l->vip_index_slots, sizeof(struct mlv_gen_vip_slot), &l->any_port) ||
	    !place(&c, GEN_ALIGN, l->vip_index_slots, sizeof(struct mlv_gen_uid_slot), &l->vip_uids) ||
	    !place(&c, GEN_ALIGN, l->backend_uid_slots, sizeof(struct mlv_gen_uid_slot), &l->backend_uids) ||
	    !place(&c, GEN_ALIGN, cfg->n_vips, sizeof(struct mlv_gen_vip *), &l->by_name) ||
	    !place(&c, GEN_ALIGN, n_workers, sizeof(void *), &l->backend_ctr_ptrs) ||
	    !place(&c, GEN_ALIGN, n_workers, l->backend_ctr_stride, &l->backend_ctr) ||
	    !place(&c, GEN_ALIGN, n_workers, sizeof(void *), &l->vip_drops_ptrs) ||
	    !place(&c, GEN_ALIGN, n_workers, l->vip_drops_stride, &l->vip_drops) ||
	    !place(&c, GEN_ALIGN, n_workers, sizeof(void *), &l->buckets_ptrs) ||
	    !place(&c, GEN_ALIGN, n_workers, l->buckets_stride, &l->buckets) ||
	    !place(&c, GEN_ALIGN, cfg->n_vips, sizeof(struct mlv_gen_table *), &l->tables) ||
	    !place(&c, GEN_ALIGN, l->quic_slots, sizeof(struct mlv_gen_uid_slot), &l->quic_ids) ||
	    !place(&c, GEN_ALIGN, l->vip_index_slots, sizeof(struct mlv_gen_vip_slot), &l->wild_slots) ||
	    !place(&c, GEN_ALIGN, cfg->n_vips, sizeof(struct mlv_gen_wild), &l->wild) ||
	    !place(&c, GEN_ALIGN, MLV_PORT_MAP_TOPS(n_ranges), 256 * sizeof(uint32_t), &l->map_tops) ||
	    !place(&c, GEN_ALIGN, MLV_PORT_MAP_LEAVES(n_ranges), 256 * sizeof(uint16_t), &l->map_leaves)) {
		free(sorted);
		return MLV_E_NOMEM;
	}
	l->total = round_up(c, GEN_ALIGN);

	*sorted_out = sorted;
	*n_all_out = (uint32_t)n_all;
	*max_backends_out = max_backends;
	return MLV_OK;
}

/* The next uid the tally may count in (uid_free): in order, skipping one
 * whose slot a live uid or a tracked flow still holds. A bounded number of
 * tries, so that a build cannot spin (and the uids of one build stay
 * within one turn of the slots). */
#define NEXT_UID_TRIES 65536u
static enum mlv_err next_uid(struct gen_priv *p, uint32_t *uid)
{
	for (uint32_t tries = 0; tries < NEXT_UID_TRIES; tries++) {
		uint32_t u;

		if (p->next_uid == UINT32_MAX)
			return MLV_E_LIMIT;
		u = p->next_uid++;
		if (!p->uid_free || p->uid_free(p->uid_free_ctx, u)) {
			*uid = u;
			return MLV_OK;
		}
	}
	return MLV_E_LIMIT;
}

const struct mlv_gen_vip *mlv_gen_find_vip_named(const struct mlv_generation *gen,
						 const char *name)
{
	const struct gen_priv *p;
	const struct mlv_gen_vip *const *hit;

	if (!gen || !name || gen->n_vips == 0)
		return NULL;
	p = gen->priv;
	hit = bsearch(name, p->vip_by_name, gen->n_vips,
		      sizeof(*p->vip_by_name), cmp_name_vip_ptr);
	return hit ? *hit : NULL;
}

const struct mlv_gen_backend *mlv_gen_find_backend_named(
	const struct mlv_gen_vip *vip, const char *name)
{
	for (uint32_t i = 0; vip && name && i < vip->n_backends; i++)
		if (strcmp(vip->backends[i].name, name) == 0)
			return &vip->backends[i];
	return NULL;
}

/* Effective weight, usable, draining and no_second from config plus
 * runtime state (docs/generations.md, "Backend state"). */
static void apply_state(const struct mlv_vip_config *vc, uint32_t vip_index,
			const struct mlv_backend_config *bc,
			mlv_gen_state_fn state, void *ctx,
			struct mlv_gen_backend *b, uint8_t mac[6], bool *kept)
{
	struct mlv_gen_backend_state st = { .healthy = true };
	uint32_t weight;
	bool has_mac, drained;

	if (state) {
		/* bc is one of vc->backends (fill_vips walks them sorted) */
		const struct mlv_gen_pair pair = {
			.vip = vc->name, .backend = bc->name,
			.vip_index = vip_index,
			.backend_index = (uint32_t)(bc - vc->backends),
		};

		state(&pair, &st, ctx);
	}
	weight = st.has_weight_override ? st.weight_override : bc->weight;
	has_mac = st.has_mac || bc->has_mac;
	memcpy(mac, st.has_mac ? st.mac : bc->mac.bytes, 6);
	drained = bc->state == MLV_BACKEND_DRAIN || st.drain_override ||
		  weight == 0;
	b->no_second = bc->state == MLV_BACKEND_DOWN;

	/* An l2dsr backend without a MAC cannot be reached at all. */
	if (!st.healthy || (vc->forwarding == MLV_FWD_L2DSR && !has_mac)) {
		/* keep_slots: its slots stay until a rebuild without it */
		b->usable = false;
		b->draining = false;
		b->weight = st.keep_slots && !drained ? weight : 0;
		*kept = b->weight > 0;
	} else if (bc->state == MLV_BACKEND_DOWN) {
		/* down: keeps its slots, whose flows go to second choices */
		b->usable = false;
		b->draining = false;
		b->weight = weight;
	} else if (drained) {
		b->usable = true;
		b->draining = true;
		b->weight = 0;
		b->undrained_weight = weight;
		return;
	} else {
		b->usable = true;
		b->draining = false;
		b->weight = weight;
	}
	b->undrained_weight = b->weight;
}

/* VIPs and their backends: identity, uids, effective state. */
static enum mlv_err fill_vips(const struct mlv_config *cfg,
			      const struct mlv_backend_config **sorted,
			      mlv_gen_state_fn state, void *ctx,
			      const struct mlv_generation *prev,
			      struct mlv_generation *gen, uint8_t (*macs)[6],
			      bool *kept, const struct mlv_gen_vip **prev_of)
{
	struct gen_priv *p = gen->priv;
	struct mlv_gen_vip *vips = (struct mlv_gen_vip *)gen->vips;
	struct mlv_gen_backend *all = (struct mlv_gen_backend *)gen->all_backends;
	uint32_t k = 0;
	enum mlv_err err;

	for (uint32_t v = 0; v < cfg->n_vips; v++) {
		const struct mlv_vip_config *vc = &cfg->vips[v];
		struct mlv_gen_vip *vip = &vips[v];
		const struct mlv_gen_vip *pv = mlv_gen_find_vip_named(prev, vc->name);
		uint32_t j = 0;

		prev_of[v] = pv;

		memcpy(vip->name, vc->name, sizeof(vip->name));
		vip->name[sizeof(vip->name) - 1] = '\0';
		vip->family = vc->address.family;
		vip->protocol = vc->protocol;
		vip->port_be = htons(vc->port);
		vip->port_last = mlv_vip_port_last(vc);
		vip->hash_fields = (uint8_t)vc->hash;
		mlv_flow_src_mask6(vc->source_prefix6, vip->src_mask6);
		memcpy(vip->address, vc->address.bytes, sizeof(vip->address));
		vip->forwarding = vc->forwarding;
		vip->table_size = vc->table_size;
		vip->table_mod_m = mlv_fastmod_m(vc->table_size);
		vip->table_kind = vc->table;
		vip->vnodes = vc->vnodes;
		vip->max_load = vc->max_load;
		vip->quic = vc->quic;
		vip->second_chance = vc->second_chance.enabled &&
				     vc->forwarding == MLV_FWD_GUE;
		vip->sc_window_ms = vc->second_chance.window_ms;
		vip->n_backends = vc->n_backends;
		/* VIP v's backends are all_backends[k, k + n_backends): one
		 * contiguous slice per VIP, in VIP order, no backend shared.
		 * Per-VIP flow counters are summed from exactly this slice of
		 * backend_ctr (control/generation/stats.c), so keep it that way. */
		vip->backends = &all[k];
		if (pv) {
			vip->uid = pv->uid;
		} else {
			err = next_uid(p, &vip->uid);
			if (err)
				return err;
		}

		for (uint32_t i = 0; i < vc->n_backends; i++, k++) {
			const struct mlv_backend_config *bc = sorted[k];
			struct mlv_gen_backend *b = &all[k];
			int c = 1;

			memcpy(b->name, bc->name, sizeof(b->name));
			b->name[sizeof(b->name) - 1] = '\0';
			b->index = (uint16_t)i;
			b->vip_index = v;
			b->all_index = k;
			b->vip_bounded = vc->max_load > 0;
			b->address = bc->address;
			b->quic_server_id = vc->quic ? bc->quic_server_id : 0;
			apply_state(vc, v, bc, state, ctx, b, macs[k],
				    &kept[k]);
			if (b->weight > 0 && b->usable)
				vip->n_usable++;

			/* Both lists are in strcmp order: one merge walk. */
			while (pv && j < pv->n_backends &&
			       (c = strcmp(pv->backends[j].name, b->name)) < 0)
				j++;
			if (pv && j < pv->n_backends && c == 0) {
				b->uid = pv->backends[j].uid;
			} else {
				err = next_uid(p, &b->uid);
				if (err)
					return err;
			}
		}
	}
	return MLV_OK;
}

/* Each VIP's source ACL: built, or shared with the previous generation's
 * VIP of the same name when its lists are the same (a rebuild for a
 * health change does not redo them). */
static enum mlv_err build_acls(const struct mlv_config *cfg,
			       struct mlv_generation *gen,
			       const struct mlv_gen_vip *const *prev_of)
{
	struct mlv_gen_vip *vips = (struct mlv_gen_vip *)gen->vips;

	for (uint32_t v = 0; v < cfg->n_vips; v++) {
		struct mlv_acl *acl;
		enum mlv_err err = mlv_acl_for_vip(&cfg->vips[v],
						   prev_of[v] ? prev_of[v]->acl : NULL,
						   &acl);

		if (err)
			return err;
		vips[v].acl = acl;
	}
	return MLV_OK;
}

/* Bounded-load shares: max_load x weight / (sum of the weights of the
 * backends that take new flows). */
static void set_load_bounds(struct mlv_gen_vip *vip)
{
	struct mlv_gen_backend *bs = (struct mlv_gen_backend *)vip->backends;
	double sum = 0;

	for (uint32_t b = 0; b < vip->n_backends; b++)
		if (bs[b].usable)
			sum += bs[b].weight;
	for (uint32_t b = 0; b < vip->n_backends; b++)
		bs[b].load_bound = vip->max_load > 0 && sum > 0 && bs[b].usable ?
			vip->max_load * bs[b].weight / sum : 0;
}

/* The VIP's table input into scratch. */
static void table_input(const struct mlv_gen_vip *vip,
			struct mlv_table_backend *scratch,
			struct mlv_gen_table_input *in)
{
	*in = (struct mlv_gen_table_input){
		.spec = { .kind = vip->table_kind, .size = vip->table_size,
			  .vnodes = vip->vnodes },
		.max_load = vip->max_load,
		.backends = scratch,
		.n = vip->n_backends,
	};
	for (uint32_t b = 0; b < vip->n_backends; b++)
		scratch[b] = (struct mlv_table_backend){
			.name = vip->backends[b].name,
			.weight = vip->backends[b].weight,
			.no_second = vip->backends[b].no_second,
		};
}

/* A second-chance VIP with a draining backend that would own slots
 * undrained: its undrained table (view.h) is wanted. */
static bool wants_undrained(const struct mlv_gen_vip *vip)
{
	if (!vip->second_chance)
		return false;
	for (uint32_t b = 0; b < vip->n_backends; b++)
		if (vip->backends[b].draining &&
		    vip->backends[b].undrained_weight > 0)
			return true;
	return false;
}

/* Whether the data path reads vip's second choices as soon as it is
 * published: bounded loads, second chance, or a backend that owns slots
 * but takes no flows (state: down, or keeping its slots for a failover
 * generation). */
static bool reads_second_now(const struct mlv_gen_vip *vip)
{
	/* second chance: every packet carries the slot's second choice */
	if (vip->max_load > 0 || vip->second_chance)
		return true;
	for (uint32_t b = 0; b < vip->n_backends; b++)
		if (vip->backends[b].weight > 0 && !vip->backends[b].usable)
			return true;
	return false;
}

/* Instant failover only works with second choices: if the table a VIP's
 * kept backends would keep their slots in has none yet, they leave the
 * table now instead (a rebuild, as without keep_slots). */
static enum mlv_err settle_kept(struct mlv_gen_tables *t,
				struct mlv_gen_vip *vip, const bool *kept,
				struct mlv_table_backend *scratch,
				struct mlv_gen_table_input *in)
{
	struct mlv_gen_backend *bs = (struct mlv_gen_backend *)vip->backends;
	const struct mlv_gen_table *tb;
	bool any = false;
	enum mlv_err err;

	for (uint32_t b = 0; b < vip->n_backends && !any; b++)
		any = kept[b];
	if (!any)
		return MLV_OK;
	err = mlv_gen_tables_find(t, in, &tb);
	if (err || !tb || tb->has_second)
		return err;
	for (uint32_t b = 0; b < vip->n_backends; b++)
		if (kept[b])
			bs[b].weight = 0;
	table_input(vip, scratch, in);
	return MLV_OK;
}

/* Each VIP's table and second choices: built once per distinct table
 * input (control/generation/vip_tables.h), shared by every VIP with that input, and
 * taken as they are from previous when it holds one for the same input
 * (they are a pure function of it). Second choices are deferred as opts
 * allow. Three passes (docs/generations.md, "Parallel build"): in VIP
 * order on this thread, every decision (reuse, share, build, defer) and
 * the allocations; then the new tables filled on opts->pool's threads;
 * then the fingerprints, which only the fill computes. */
static enum mlv_err build_tables(struct mlv_generation *gen,
				 struct mlv_table_backend *scratch,
				 const bool *kept,
				 const struct mlv_gen_build_opts *opts,
				 const struct mlv_generation *previous)
{
	struct mlv_gen_vip *vips = (struct mlv_gen_vip *)gen->vips;
	struct gen_priv *p = gen->priv;
	const struct gen_priv *pp = previous ? previous->priv : NULL;
	uint64_t second_slots = 0;   /* second choices computed so far */
	const struct mlv_gen_table **tb_of;  /* each VIP's, for pass 3 */
	struct mlv_gen_tables t;
	enum mlv_err err;

	tb_of = malloc((gen->n_vips ? gen->n_vips : 1) * sizeof(*tb_of));
	if (!tb_of)
		return MLV_E_NOMEM;
	err = mlv_gen_tables_begin(&t, p->tables, gen->n_vips,
				   pp ? pp->tables : NULL, pp ? pp->n_tables : 0);
	if (err) {
		free(tb_of);
		return err;
	}
	t.pool = opts->pool;
	for (uint32_t v = 0; v < gen->n_vips; v++) {
		struct mlv_gen_vip *vip = &vips[v];
		uint32_t first_backend = mlv_gen_backend_index(gen, vip->backends);
		const struct mlv_gen_table *tb;
		enum mlv_gen_table_source src;
		struct mlv_gen_table_input in;

		set_load_bounds(vip);
		table_input(vip, scratch, &in);
		err = settle_kept(&t, vip, &kept[first_backend], scratch, &in);
		if (err)
			break;
		in.second_now = reads_second_now(vip);
		in.defer_second = opts->defer_second &&
				  second_slots >= opts->second_slots_now;
		err = mlv_gen_tables_acquire(&t, &in, &tb, &src);
		/* held so far, so a failed build can drop them */
		p->n_tables = t.n_held;
		if (err)
			break;
		/* the arrays' addresses are final; their bytes come in pass 2 */
		vip->table = tb->first;
		vip->second = tb->second;
		tb_of[v] = tb;
		vip->undrained = NULL;
		if (wants_undrained(vip)) {
			const struct mlv_gen_table *ut;
			enum mlv_gen_table_source usrc;

			/* the same input with the drains undone: usually the
			 * table before the drain, reused, else built (its
			 * first choices only are read) */
			table_input(vip, scratch, &in);
			for (uint32_t b = 0; b < vip->n_backends; b++)
				scratch[b].weight =
					vip->backends[b].undrained_weight;
			in.second_now = false;
			in.defer_second = opts->defer_second;
			err = mlv_gen_tables_acquire(&t, &in, &ut, &usrc);
			p->n_tables = t.n_held;
			if (err)
				break;
			vip->undrained = ut->first;
		}
		if (src == MLV_GEN_TABLE_REUSED)
			gen->n_tables_reused++;
		else if (src == MLV_GEN_TABLE_SHARED)
			gen->n_tables_shared++;
		else
			gen->n_tables_built++;
		if (src == MLV_GEN_TABLE_BUILT && tb->has_second)
			second_slots += tb->size;
	}
	if (!err)
		err = mlv_gen_tables_run(&t);
	mlv_gen_tables_end(&t);
	for (uint32_t v = 0; !err && v < gen->n_vips; v++)
		vips[v].fingerprint = tb_of[v]->fingerprint;
	for (uint32_t i = 0; !err && i < p->n_tables; i++)
		gen->n_tables_no_second += !p->tables[i]->has_second;
	free(tb_of);
	return err;
}

static enum mlv_encap_method encap_method(enum mlv_forwarding fwd)
{
	switch (fwd) {
	case MLV_FWD_GUE:
		return MLV_ENCAP_GUE;
	case MLV_FWD_L2DSR:
		return MLV_ENCAP_L2DSR;
	case MLV_FWD_IPIP:
	default:
		return MLV_ENCAP_IPIP;
	}
}

static uint16_t room_after(uint16_t mtu, uint16_t overhead)
{
	return mtu > overhead ? (uint16_t)(mtu - overhead) : 0;
}

uint16_t mlv_gen_mss_clamp(uint16_t setting, uint8_t family, uint16_t mtu_room)
{
	uint16_t hdr = family == MLV_AF_INET6 ? 60 : 40;   /* IP + TCP */
	uint16_t fits = mtu_room > hdr ? (uint16_t)(mtu_room - hdr) : 0;

	if (setting == MLV_MSS_CLAMP_OFF)
		return 0;
	if (setting == MLV_MSS_CLAMP_AUTO)
		return fits;
	/* explicit: never above what fits (0: no room known, N as is) */
	return fits != 0 && fits < setting ? fits : setting;
}

/* One template per (backend, transmit slot), each VIP's MTU room and
 * MSS clamp. */
static enum mlv_err build_encap(const struct mlv_config *cfg,
				struct mlv_generation *gen,
				struct mlv_encap_tmpl *tmpls,
				const uint8_t (*macs)[6])
{
	struct mlv_gen_vip *vips = (struct mlv_gen_vip *)gen->vips;
	struct mlv_gen_backend *all = (struct mlv_gen_backend *)gen->all_backends;

	for (uint32_t v = 0; v < gen->n_vips; v++) {
		struct mlv_gen_vip *vip = &vips[v];
		uint32_t room = UINT32_MAX;

		for (uint32_t s = 0; s < gen->n_tx; s++) {
			const struct mlv_gen_port_info *tx = &gen->ports[gen->tx_ports[s]];

			if (vip->n_backends == 0) {
				uint16_t r = room_after(tx->mtu, mlv_encap_overhead(
					encap_method(vip->forwarding), vip->family,
					vip->second_chance));
				if (r < room)
					room = r;
			}
			for (uint32_t i = 0; i < vip->n_backends; i++) {
				uint32_t bi = mlv_gen_backend_index(gen, &vip->backends[i]);
				const struct mlv_gen_backend *b = &all[bi];
				struct mlv_encap_params ep = {
					.method = encap_method(vip->forwarding),
					.inner_family = vip->family,
					.gue_port = cfg->vips[v].gue_port,
					.second_chance = vip->second_chance,
				};
				uint16_t r;

				memcpy(ep.src_mac, tx->mac, 6);
				if (vip->forwarding == MLV_FWD_L2DSR) {
					memcpy(ep.dst_mac, macs[bi], 6);
				} else {
					const struct mlv_ip *src = b->address.family == MLV_AF_INET6 ?
						&tx->address6 : &tx->address;

					if (src->family != b->address.family)
						return MLV_E_CONFIG;
					memcpy(ep.dst_mac, mlv_gen_port_next_hop(
						       tx, b->address.family), 6);
					const struct mlv_ip_prefix *pfx =
						b->address.family == MLV_AF_INET6 ?
						&cfg->vips[v].ipip_source6 :
						&cfg->vips[v].ipip_source;

					ep.outer_family = b->address.family;
					memcpy(ep.outer_src, src->bytes, 16);
					if (vip->forwarding == MLV_FWD_IPIP &&
					    pfx->ip.family == b->address.family) {
						/* a source prefix: its address,
						 * the flow hash's host bits */
						memcpy(ep.outer_src, pfx->ip.bytes, 16);
						ep.outer_src_len = pfx->len;
					}
					memcpy(ep.outer_dst, b->address.bytes, 16);
				}
				if (mlv_encap_tmpl_init(&tmpls[(size_t)bi * gen->n_tx + s], &ep) != 0)
					return MLV_E_CONFIG;
				r = room_after(tx->mtu, mlv_encap_overhead(
					ep.method, b->address.family,
					vip->second_chance));
				if (r < room)
					room = r;
			}
		}
		vip->mtu_room = room == UINT32_MAX ? 0 : (uint16_t)room;
		vip->mss_clamp = vip->protocol == IPPROTO_TCP ?
			mlv_gen_mss_clamp(cfg->vips[v].mss_clamp, vip->family,
					  vip->mtu_room) : 0;
		vip->mss_syn_mask = vip->mss_clamp ? 0x02 : 0;
	}
	for (uint32_t bi = 0; bi < gen->n_all_backends; bi++)
		all[bi].encap = gen->n_tx ? &tmpls[(size_t)bi * gen->n_tx] : NULL;
	return MLV_OK;
}

/* Each limited VIP's new-flow limit and buckets: its level carried over
 * from previous when the VIP was limited there too (read racily from the
 * workers' buckets: a publish neither refills a bucket nor empties it;
 * the flows admitted between this read and the workers' switch to gen are
 * admitted twice, at most one grace period's worth), else full. */
static void fill_flow_limits(const struct mlv_config *cfg,
			     struct mlv_generation *gen,
			     const struct mlv_generation *previous)
{
	struct mlv_gen_vip *vips = (struct mlv_gen_vip *)gen->vips;
	uint32_t k = 0;

	for (uint32_t v = 0; v < gen->n_vips; v++) {
		const struct mlv_vip_config *vc = &cfg->vips[v];
		struct mlv_gen_vip *vip = &vips[v];
		const struct mlv_gen_vip *pv;

		vip->flow_limit = mlv_flow_limit_make(vc->new_flows_per_second,
						      vc->new_flows_burst,
						      gen->n_workers);
		if (vip->flow_limit.rate == 0)
			continue;
		vip->flow_bucket = k++;
		pv = previous && previous->n_workers == gen->n_workers ?
			mlv_gen_find_vip_uid(previous, vip->uid) : NULL;
		for (uint32_t w = 0; w < gen->n_workers; w++) {
			struct mlv_flow_bucket *b = &gen->flow_buckets[w][vip->flow_bucket];

			if (pv && pv->flow_limit.rate) {
				const struct mlv_flow_bucket *o =
					&previous->flow_buckets[w][pv->flow_bucket];

				b->tokens = __atomic_load_n(&o->tokens, __ATOMIC_RELAXED);
				b->last_ms = __atomic_load_n(&o->last_ms, __ATOMIC_RELAXED);
				if (b->tokens > vip->flow_limit.cap)
					b->tokens = vip->flow_limit.cap;
			} else {
				/* full: the first take refills it anyway */
				b->tokens = vip->flow_limit.cap;
			}
		}
	}
}

/* Set echo_reply on the VIP that answers for each address (the one
 * mlv_gen_find_echo_vip finds) when some VIP on the address says reply
 * and can take new flows: a ping then says this instance serves the
 * address. One look-up per such VIP. */
static void mark_echo_reply(const struct mlv_config *cfg,
			    struct mlv_generation *gen)
{
	for (uint32_t v = 0; v < gen->n_vips; v++) {
		const struct mlv_gen_vip *vip = &gen->vips[v];
		struct mlv_flow_key key = { .family = vip->family };
		const struct mlv_gen_vip *answers;

		if (cfg->vips[v].icmp_echo != MLV_ECHO_REPLY || vip->n_usable == 0)
			continue;
		memcpy(key.dst, vip->address, sizeof(key.dst));
		answers = mlv_gen_find_echo_vip(gen, &key);
		if (answers)
			((struct mlv_gen_vip *)answers)->echo_reply = true;
	}
}

/* Each quic VIP's server-ID map, in slots (zeroed: all empty), one
 * mlv_gen_index_slots(n_backends) run per quic VIP in VIP order, as
 * plan_layout sized them. MLV_E_INVAL for an ID two backends share. */
static enum mlv_err build_quic(struct mlv_generation *gen,
			       struct mlv_gen_uid_slot *slots)
{
	struct mlv_gen_vip *vips = (struct mlv_gen_vip *)gen->vips;

	for (uint32_t v = 0; v < gen->n_vips; v++) {
		struct mlv_gen_vip *vip = &vips[v];
		uint32_t n = mlv_gen_index_slots(vip->n_backends);
		struct mlv_gen_uid_map m;

		if (!vip->quic)
			continue;
		mlv_gen_uid_map_init(&m, slots, n);
		vip->quic_ids = slots;
		vip->quic_mask = m.mask;
		for (uint32_t b = 0; b < vip->n_backends; b++) {
			uint32_t id = vip->backends[b].quic_server_id;

			if (id != 0 && !mlv_gen_uid_map_insert(&m, id, b))
				return MLV_E_INVAL;   /* two backends share it */
		}
		slots += n;
	}
	return MLV_OK;
}

static enum mlv_err build_indices(struct mlv_generation *gen)
{
	struct gen_priv *p = gen->priv;
	enum mlv_err err;

	for (uint32_t v = 0; v < gen->n_vips; v++) {
		const struct mlv_gen_vip *vip = &gen->vips[v];
		struct mlv_gen_vip_key key = {
			.port_be = vip->port_be,
			.proto = vip->protocol,
			.family = vip->family,
		};
		struct mlv_gen_vip_slot *s;

		memcpy(key.addr, vip->address, sizeof(key.addr));
		if (mlv_gen_vip_one_port(vip)) {
			/* one port; ranges and `any`: port_maps */
			s = mlv_gen_vip_index_probe(&p->lookup.exact, &key);
			if (s->key.family != 0)
				return MLV_E_INVAL; /* same address, port and protocol */
			s->key = key;
			s->vip = v;
		}

		/* `any` (port_be 0) comes first, then by first port */
		key.port_be = 0;
		s = mlv_gen_vip_index_probe(&p->lookup.any_port, &key);
		if (s->key.family == 0 ||
		    ntohs(gen->vips[s->vip].port_be) > ntohs(vip->port_be)) {
			s->key = key;
			s->vip = v;
		}

		if (!mlv_gen_uid_map_insert(&p->lookup.vip_uids, vip->uid, v))
			return MLV_E_INVAL;
		p->vip_by_name[v] = vip;
	}
	err = mlv_gen_port_maps_build(&p->lookup.port_maps, gen->vips, gen->n_vips);
	if (err)
		return err;
	qsort(p->vip_by_name, gen->n_vips, sizeof(*p->vip_by_name), cmp_vip_ptr);
	for (uint32_t v = 1; v < gen->n_vips; v++)
		if (strcmp(p->vip_by_name[v - 1]->name, p->vip_by_name[v]->name) == 0)
			return MLV_E_INVAL;

	for (uint32_t b = 0; b < gen->n_all_backends; b++)
		if (!mlv_gen_uid_map_insert(&p->lookup.backend_uids,
					    gen->all_backends[b].uid, b))
			return MLV_E_INVAL;
	return MLV_OK;
}

enum mlv_err mlv_gen_build(const struct mlv_config *cfg,
			   const struct mlv_gen_port_info *ports,
			   uint32_t n_workers, uint32_t number,
			   mlv_gen_state_fn state, void *state_ctx,
			   const struct mlv_generation *previous,
			   struct mlv_generation **out)
{
	return mlv_gen_build_opt(cfg, ports, n_workers, number, state,
				 state_ctx, previous, NULL, out);
}

enum mlv_err mlv_gen_build_opt(const struct mlv_config *cfg,
			       const struct mlv_gen_port_info *ports,
			       uint32_t n_workers, uint32_t number,
			       mlv_gen_state_fn state, void *state_ctx,
			       const struct mlv_generation *previous,
			       const struct mlv_gen_build_opts *opts,
			       struct mlv_generation **out)
{
	static const struct mlv_gen_build_opts no_opts = { .defer_second = false };
	struct port_plan plan = { .n_tx = 0 };
	const struct mlv_backend_config **sorted = NULL;
	struct mlv_table_backend *scratch = NULL;
	const struct mlv_gen_vip **prev_of = NULL;
	uint8_t (*macs)[6] = NULL;
	bool *kept = NULL;
	struct mlv_generation *gen = NULL;
	struct gen_priv *p;
	struct gen_layout l;
	uint32_t n_all = 0, max_backends = 0;
	uint8_t *base;
	enum mlv_err err;

	if (!out)
		return MLV_E_INVAL;
	*out = NULL;
	if (!cfg || (cfg->n_ports > 0 && (!ports || !cfg->ports)) ||
	    (cfg->n_vips > 0 && !cfg->vips))
		return MLV_E_INVAL;
	if (n_workers == 0 || n_workers > MLV_MAX_WORKERS ||
	    cfg->n_ports > MLV_MAX_PORTS || cfg->n_vips > MLV_MAX_VIPS)
		return MLV_E_RANGE;

	err = plan_ports(cfg, ports, &plan);
	if (err)
		return err;
	err = plan_layout(cfg, n_workers, plan.n_tx, &sorted, &n_all,
			  &max_backends, &l);
	if (err)
		return err;

	err = MLV_E_NOMEM;
	scratch = malloc((max_backends ? max_backends : 1) * sizeof(*scratch));
	macs = malloc((n_all ? n_all : 1) * sizeof(*macs));
	kept = calloc(n_all ? n_all : 1, sizeof(*kept));
	prev_of = malloc((cfg->n_vips ? cfg->n_vips : 1) * sizeof(*prev_of));
	gen = aligned_alloc(GEN_ALIGN, l.total);
	if (!scratch || !macs || !kept || !prev_of || !gen) {
		free(gen); /* not yet initialised: not for mlv_gen_free */
		gen = NULL;
		goto fail;
	}
	memset(gen, 0, l.total);
	base = (uint8_t *)gen;

	p = (struct gen_priv *)(void *)(base + l.priv);
	p->next_uid = previous ? ((const struct gen_priv *)previous->priv)->next_uid : 1;
	p->uid_free = opts ? opts->uid_free : NULL;
	p->uid_free_ctx = opts ? opts->uid_free_ctx : NULL;
	mlv_gen_vip_index_init(&p->lookup.exact, (void *)(base + l.exact), l.vip_index_slots);
	mlv_gen_vip_index_init(&p->lookup.any_port, (void *)(base + l.any_port), l.vip_index_slots);
	mlv_gen_port_maps_init(&p->lookup.port_maps, (void *)(base + l.wild_slots),
			       l.vip_index_slots, (void *)(base + l.wild),
			       (void *)(base + l.map_tops),
			       (void *)(base + l.map_leaves));
	mlv_gen_uid_map_init(&p->lookup.vip_uids, (void *)(base + l.vip_uids), l.vip_index_slots);
	mlv_gen_uid_map_init(&p->lookup.backend_uids, (void *)(base + l.backend_uids),
			     l.backend_uid_slots);
	p->vip_by_name = (void *)(base + l.by_name);
	p->tables = (void *)(base + l.tables);

	gen->number = number;
	gen->priv = p;
	gen->lookup = &p->lookup;
	gen->n_vips = cfg->n_vips;
	gen->vips = (void *)(base + l.vips);
	gen->n_all_backends = n_all;
	gen->all_backends = (void *)(base + l.backends);
	gen->n_ports = cfg->n_ports;
	memcpy(gen->ports, plan.info, sizeof(plan.info));
	gen->n_tx = plan.n_tx;
	memcpy(gen->tx_ports, plan.tx_ports, sizeof(plan.tx_ports));
	gen->n_workers = n_workers;
	gen->tallies = opts ? opts->tallies : NULL;
	gen->backend_ctr = (void *)(base + l.backend_ctr_ptrs);
	gen->vip_drops = (void *)(base + l.vip_drops_ptrs);
	gen->flow_buckets = (void *)(base + l.buckets_ptrs);
	for (uint32_t w = 0; w < n_workers; w++) {
		gen->flow_buckets[w] = (void *)(base + l.buckets +
						w * l.buckets_stride);
		gen->backend_ctr[w] = (void *)(base + l.backend_ctr +
					       w * l.backend_ctr_stride);
		gen->vip_drops[w] = (void *)(base + l.vip_drops +
					     w * l.vip_drops_stride);
	}

	err = fill_vips(cfg, sorted, state, state_ctx, previous, gen, macs,
			kept, prev_of);
	p->uid_free = NULL;   /* only this build asks */
	p->uid_free_ctx = NULL;
	if (err)
		goto fail;
	err = build_acls(cfg, gen, prev_of);
	if (err)
		goto fail;
	err = build_tables(gen, scratch, kept, opts ? opts : &no_opts,
			   previous);
	if (err)
		goto fail;
	/* a VIP the previous generation lacks may have a history kept
	 * from before a restart */
	for (uint32_t v = 0; opts && opts->prior && v < gen->n_vips; v++)
		if (!prev_of[v])
			prev_of[v] = opts->prior(opts->prior_ctx,
						 gen->vips[v].name);
	err = mlv_gen_sc_build(gen, prev_of, opts && opts->now_ms ?
			       opts->now_ms : mlv_gen_sc_now_ms());
	if (err)
		goto fail;
	err = build_encap(cfg, gen, (void *)(base + l.encap),
			  (const uint8_t (*)[6])macs);
	if (err)
		goto fail;
	err = build_indices(gen);
	if (err)
		goto fail;
	err = build_quic(gen, (void *)(base + l.quic_ids));
	if (err)
		goto fail;
	mark_echo_reply(cfg, gen);
	fill_flow_limits(cfg, gen, previous);
	for (uint32_t v = 0; v < gen->n_vips; v++) {
		struct mlv_gen_vip *vip = (struct mlv_gen_vip *)&gen->vips[v];

		vip->features = (uint8_t)((vip->acl ? MLV_VIP_F_ACL : 0) |
					  (vip->quic ? MLV_VIP_F_QUIC : 0) |
					  (vip->flow_limit.rate ? MLV_VIP_F_LIMIT : 0) |
					  (vip->second_chance &&
					   ((vip->previous && vip->window_open) ||
					    vip->undrained) ?
					   MLV_VIP_F_HOLDERS : 0));
	}

	*out = gen;
	gen = NULL;
	err = MLV_OK;
fail:
	mlv_gen_free(gen);
	free(prev_of);
	free(kept);
	free(macs);
	free(scratch);
	free(sorted);
	return err;
}

enum mlv_err mlv_gen_complete_second(const struct mlv_generation *gen,
				     uint32_t max_tables, uint32_t *left)
{
	const struct gen_priv *p = gen->priv;
	uint32_t todo = 0;
	enum mlv_err err = MLV_OK;

	for (uint32_t i = 0; i < p->n_tables; i++) {
		struct mlv_gen_table *tb = p->tables[i];

		if (tb->has_second || tb->with_second)
			continue;
		if (max_tables > 0 && !err) {
			err = mlv_gen_table_complete(tb);
			max_tables--;
			if (!err)
				continue;
		}
		todo++;
	}
	*left = todo;
	return err;
}

void mlv_gen_tally_bind(const struct mlv_generation *gen)
{
	const struct mlv_flow_tally_set *set = gen ? gen->tallies : NULL;

	for (uint32_t w = 0; set && w < set->n_workers; w++) {
		struct mlv_flow_tally *t = set->per_worker[w];

		for (uint32_t i = 0; t && i < gen->n_all_backends; i++) {
			const struct mlv_gen_backend *b = &gen->all_backends[i];
			uint32_t vip = b->vip_bounded ?
				       gen->vips[b->vip_index].uid : 0;
			uint32_t *p = &t[mlv_tally_slot(b->uid)].vip_uid;

			if (__atomic_load_n(p, __ATOMIC_RELAXED) != vip)
				__atomic_store_n(p, vip, __ATOMIC_RELAXED);
		}
	}
}

void mlv_gen_free(struct mlv_generation *gen)
{
	const struct gen_priv *p;

	if (!gen)
		return;
	/* Control thread only, so the counts need no atomics (vip_tables.h). */
	p = gen->priv;
	if (p)
		mlv_gen_tables_release(p->tables, p->n_tables);
	for (uint32_t v = 0; gen->vips && v < gen->n_vips; v++)
		mlv_acl_release((struct mlv_acl *)gen->vips[v].acl);
	mlv_gen_sc_free(gen);
	/* Everything else lives in the one allocation that starts with *gen. */
	free(gen);
}
