/* SPDX-License-Identifier: BSD-3-Clause */
#include "control/generation/stats.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/view/index.h"

/* Totals by uid: linear probing, load <= 1/2, backward-shift deletion
 * (no tombstones, so a long-running daemon's map does not degrade). VIP
 * and backend uids come from one counter, so one map holds both. Not the
 * generation's uid index (dataplane/view/index.h, which says why the tables
 * differ): that one is fixed when a generation is built and never
 * deletes. */
struct totals_entry {
	uint32_t uid;                 /* 0 = empty */
	struct mlv_flow_counters c;
	struct mlv_vip_drops d;       /* a VIP's drops (zero for a backend) */
};

struct mlv_stats {
	struct totals_entry *slots;
	uint32_t mask;
	uint32_t n;
	struct mlv_generation **tracked;
	uint32_t n_tracked;
	uint32_t cap_tracked;
};

#define STATS_MIN_SLOTS 64u

static uint32_t home(const struct mlv_stats *s, uint32_t uid)
{
	return mlv_fmix32(uid) & s->mask;
}

static struct totals_entry *map_find(const struct mlv_stats *s, uint32_t uid)
{
	for (uint32_t i = home(s, uid); s->slots[i].uid != 0; i = (i + 1) & s->mask)
		if (s->slots[i].uid == uid)
			return &s->slots[i];
	return NULL;
}

/* Existing or new zeroed entry; the caller reserved room. */
static struct totals_entry *map_insert(struct mlv_stats *s, uint32_t uid)
{
	uint32_t i = home(s, uid);

	for (; s->slots[i].uid != 0; i = (i + 1) & s->mask)
		if (s->slots[i].uid == uid)
			return &s->slots[i];
	memset(&s->slots[i], 0, sizeof(s->slots[i]));
	s->slots[i].uid = uid;
	s->n++;
	return &s->slots[i];
}

/* Make room for `extra` more entries; nothing changes on failure. */
static enum mlv_err map_reserve(struct mlv_stats *s, uint64_t extra)
{
	uint64_t need = 2 * ((uint64_t)s->n + extra);
	uint64_t cap = (uint64_t)s->mask + 1;
	struct totals_entry *old = s->slots;
	uint32_t old_cap = s->mask + 1;

	if (need <= cap)
		return MLV_OK;
	while (cap < need)
		cap <<= 1;
	if (cap > (1ull << 31))
		return MLV_E_NOMEM;
	s->slots = calloc(cap, sizeof(*s->slots));
	if (!s->slots) {
		s->slots = old;
		return MLV_E_NOMEM;
	}
	s->mask = (uint32_t)cap - 1;
	s->n = 0;
	for (uint32_t i = 0; i < old_cap; i++)
		if (old[i].uid != 0)
			*map_insert(s, old[i].uid) = old[i];
	free(old);
	return MLV_OK;
}

static void map_delete(struct mlv_stats *s, uint32_t uid)
{
	struct totals_entry *e = map_find(s, uid);
	uint32_t i, j;

	if (!e)
		return;
	i = (uint32_t)(e - s->slots);
	/* Shift back later members of the probe run that may not stay
	 * behind the hole: those whose home is not cyclically in (i, j]. */
	for (j = (i + 1) & s->mask; s->slots[j].uid != 0; j = (j + 1) & s->mask) {
		uint32_t k = home(s, s->slots[j].uid);
		bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);

		if (!stays) {
			s->slots[i] = s->slots[j];
			i = j;
		}
	}
	s->slots[i].uid = 0;
	s->n--;
}

enum mlv_err mlv_stats_create(struct mlv_stats **out)
{
	struct mlv_stats *s;

	if (!out)
		return MLV_E_INVAL;
	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return MLV_E_NOMEM;
	s->slots = calloc(STATS_MIN_SLOTS, sizeof(*s->slots));
	if (!s->slots) {
		free(s);
		return MLV_E_NOMEM;
	}
	s->mask = STATS_MIN_SLOTS - 1;
	*out = s;
	return MLV_OK;
}

void mlv_stats_destroy(struct mlv_stats *stats)
{
	if (!stats)
		return;
	free(stats->slots);
	free(stats->tracked);
	free(stats);
}

static int tracked_index(const struct mlv_stats *s,
			 const struct mlv_generation *gen)
{
	for (uint32_t i = 0; i < s->n_tracked; i++)
		if (s->tracked[i] == gen)
			return (int)i;
	return -1;
}

enum mlv_err mlv_stats_track(struct mlv_generation *gen, void *ctx)
{
	struct mlv_stats *s = ctx;
	enum mlv_err err;

	if (!s || !gen)
		return MLV_E_INVAL;
	if (tracked_index(s, gen) >= 0)
		return MLV_OK;
	if (s->n_tracked == s->cap_tracked) {
		uint32_t cap = s->cap_tracked ? 2 * s->cap_tracked : 4;
		struct mlv_generation **t = realloc(s->tracked, cap * sizeof(*t));

		if (!t)
			return MLV_E_NOMEM;
		s->tracked = t;
		s->cap_tracked = cap;
	}
	/* Reserving every entry now is what lets mlv_stats_fold run without
	 * allocating when the generation is freed. */
	err = map_reserve(s, (uint64_t)gen->n_vips + gen->n_all_backends);
	if (err)
		return err;
	for (uint32_t v = 0; v < gen->n_vips; v++)
		map_insert(s, gen->vips[v].uid);
	for (uint32_t b = 0; b < gen->n_all_backends; b++)
		map_insert(s, gen->all_backends[b].uid);
	s->tracked[s->n_tracked++] = gen;
	return MLV_OK;
}

static uint64_t load_ctr(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* out += sum over workers of rows [first, first + n) of gen's per-worker
 * backend counters. */
static void add_rows(struct mlv_flow_counters *out,
		     const struct mlv_generation *gen, uint32_t first,
		     uint32_t n)
{
	for (uint32_t w = 0; w < gen->n_workers; w++)
		for (uint32_t r = first; r < first + n; r++)
			for (int c = 0; c < MLV_FLOW__COUNT; c++)
				out->v[c] += load_ctr(&gen->backend_ctr[w][r].v[c]);
}

/* out += gen's live counts for uid. Workers count a packet only on its
 * backend's row, and that backend is one of its VIP's in the same
 * generation (dataplane/worker/forward.c), so a VIP's counts are its backends'
 * rows summed: they are one contiguous slice of all_backends
 * (control/generation/generation.c, fill_vips). */
static void add_live(struct mlv_flow_counters *out,
		     const struct mlv_generation *gen, uint32_t uid, bool is_vip)
{
	if (is_vip) {
		const struct mlv_gen_vip *v = mlv_gen_find_vip_uid(gen, uid);

		if (v && v->n_backends > 0)
			add_rows(out, gen, mlv_gen_backend_index(gen, v->backends),
				 v->n_backends);
	} else {
		const struct mlv_gen_backend *b = mlv_gen_find_backend_uid(gen, uid);

		if (b)
			add_rows(out, gen, mlv_gen_backend_index(gen, b), 1);
	}
}

bool mlv_stats_holds_uid(const struct mlv_stats *stats, uint32_t uid)
{
	return stats && uid != 0 && map_find(stats, uid) != NULL;
}

static bool held_by_tracked(const struct mlv_stats *s, uint32_t uid,
			    bool is_vip)
{
	for (uint32_t i = 0; i < s->n_tracked; i++) {
		const struct mlv_generation *g = s->tracked[i];

		if (is_vip ? mlv_gen_find_vip_uid(g, uid) != NULL
			   : mlv_gen_find_backend_uid(g, uid) != NULL)
			return true;
	}
	return false;
}

/* d += gen's live drops of the VIP with uid, summed over the workers. */
static void add_live_drops(struct mlv_vip_drops *d,
			   const struct mlv_generation *gen, uint32_t uid)
{
	const struct mlv_gen_vip *v = mlv_gen_find_vip_uid(gen, uid);
	uint32_t i;

	if (!v)
		return;
	i = mlv_gen_vip_index(gen, v);
	for (uint32_t w = 0; w < gen->n_workers; w++)
		for (int r = 0; r < MLV_VDROP__COUNT; r++)
			d->v[r] += load_ctr(&gen->vip_drops[w][i].v[r]);
}

/* Add gen's live counts for uid to its totals entry (a VIP's: all its
 * backends' rows in gen, so the counts of a backend that a later
 * generation removed stay in its VIP's total). An entry can only be
 * missing if gen was never tracked; then it is created if memory allows. */
static void fold_one(struct mlv_stats *s, const struct mlv_generation *gen,
		     uint32_t uid, bool is_vip)
{
	struct totals_entry *e = map_find(s, uid);

	if (!e) {
		if (map_reserve(s, 1) != MLV_OK)
			return;
		e = map_insert(s, uid);
	}
	add_live(&e->c, gen, uid, is_vip);
	if (is_vip)
		add_live_drops(&e->d, gen, uid);
}

void mlv_stats_fold(struct mlv_generation *gen, void *ctx)
{
	struct mlv_stats *s = ctx;
	int t;

	if (!s || !gen)
		return;
	for (uint32_t v = 0; v < gen->n_vips; v++)
		fold_one(s, gen, gen->vips[v].uid, true);
	for (uint32_t b = 0; b < gen->n_all_backends; b++)
		fold_one(s, gen, gen->all_backends[b].uid, false);

	t = tracked_index(s, gen);
	if (t >= 0)
		s->tracked[t] = s->tracked[--s->n_tracked];

	/* Nothing can ask for a uid no live generation holds any more. */
	for (uint32_t v = 0; v < gen->n_vips; v++)
		if (!held_by_tracked(s, gen->vips[v].uid, true))
			map_delete(s, gen->vips[v].uid);
	for (uint32_t b = 0; b < gen->n_all_backends; b++)
		if (!held_by_tracked(s, gen->all_backends[b].uid, false))
			map_delete(s, gen->all_backends[b].uid);
}

/* Folded totals for uid plus the live rows of every tracked generation
 * holding it, and of gen if untracked: the flow counters into c and, for
 * a VIP, its drops into d (either may be NULL; s may be NULL: gen's live
 * rows only). */
static void add_gen(struct mlv_flow_counters *c, struct mlv_vip_drops *d,
		    const struct mlv_generation *g, uint32_t uid, bool is_vip)
{
	if (c)
		add_live(c, g, uid, is_vip);
	if (d && is_vip)
		add_live_drops(d, g, uid);
}

static void cumulative(const struct mlv_stats *s,
		       const struct mlv_generation *gen, uint32_t uid,
		       bool is_vip, struct mlv_flow_counters *c,
		       struct mlv_vip_drops *d)
{
	const struct totals_entry *e = s ? map_find(s, uid) : NULL;

	if (c)
		*c = e ? e->c : (struct mlv_flow_counters){ { 0 } };
	if (d)
		*d = e ? e->d : (struct mlv_vip_drops){ { 0 } };
	for (uint32_t i = 0; s && i < s->n_tracked; i++)
		add_gen(c, d, s->tracked[i], uid, is_vip);
	if (gen && (!s || tracked_index(s, gen) < 0))
		add_gen(c, d, gen, uid, is_vip);
}

void mlv_stats_vip(const struct mlv_stats *stats,
		   const struct mlv_generation *gen,
		   const struct mlv_gen_vip *vip,
		   struct mlv_flow_counters *out)
{
	cumulative(stats, gen, vip->uid, true, out, NULL);
}

void mlv_stats_vip_drops(const struct mlv_stats *stats,
			 const struct mlv_generation *gen,
			 const struct mlv_gen_vip *vip, struct mlv_vip_drops *out)
{
	cumulative(stats, gen, vip->uid, true, NULL, out);
}

void mlv_stats_backend(const struct mlv_stats *stats,
		       const struct mlv_generation *gen,
		       const struct mlv_gen_backend *backend,
		       struct mlv_flow_counters *out)
{
	cumulative(stats, gen, backend->uid, false, out, NULL);
}

void mlv_stats_workers(const struct mlv_worker_counters *const *per_worker,
		       uint32_t n_workers, struct mlv_worker_counters *out)
{
	memset(out, 0, sizeof(*out));
	for (uint32_t w = 0; w < n_workers; w++) {
		const struct mlv_worker_counters *wc = per_worker[w];

		if (!wc)
			continue;
		for (int c = 0; c < MLV_CTR__COUNT; c++)
			out->ctr[c] += load_ctr(&wc->ctr[c]);
		for (int d = 0; d < MLV_DROP__COUNT; d++)
			out->drop[d] += load_ctr(&wc->drop[d]);
	}
}

uint32_t mlv_stats_tracked(const struct mlv_stats *stats)
{
	return stats->n_tracked;
}
