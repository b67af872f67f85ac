/* SPDX-License-Identifier: BSD-3-Clause */
/* Matching the engine to a config: validation, the (VIP, backend) pairs,
 * the shared probes they map to, and the VIP records that count how many
 * of their backends are down. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/health/health_internal.h"

/* The check for backend b of VIP v; strings point into the config. */
static void spec_of(const struct mlv_vip_config *v,
		    const struct mlv_backend_config *b, struct health_spec *s)
{
	const struct mlv_health_config *hc = &v->health;

	memset(s, 0, sizeof(*s));
	s->type = hc->type;
	s->address = b->address;
	s->port = hc->port ? hc->port : v->port;
	s->path = "";
	s->host = "";
	if (hc->type == MLV_HEALTH_NONE)
		return;   /* no traffic: nothing else tells two apart */
	s->interval_ms = hc->interval_ms;
	s->timeout_ms = hc->timeout_ms;
	s->rise = hc->rise;
	s->fall = hc->fall;
	if (hc->via == MLV_HEALTH_VIA_DATA_PATH &&
	    (hc->type == MLV_HEALTH_TCP || hc->type == MLV_HEALTH_HTTP)) {
		s->via = MLV_HEALTH_VIA_DATA_PATH;
		s->vip = v->address;
		s->forwarding = v->forwarding;
		s->gue_port = v->forwarding == MLV_FWD_GUE ? v->gue_port : 0;
		s->has_mac = v->forwarding == MLV_FWD_L2DSR && b->has_mac;
		if (s->has_mac)
			s->mac = b->mac;
		/* the outer header is of the backend's family */
		if (v->forwarding == MLV_FWD_IPIP)
			s->outer_source = b->address.family == MLV_AF_INET6
						  ? v->ipip_source6
						  : v->ipip_source;
	}
	if (hc->type == MLV_HEALTH_HTTP) {
		s->expect_status = hc->expect_status;
		s->path = hc->path;
		s->host = hc->host;
	} else if (hc->type == MLV_HEALTH_UDP) {
		s->path = hc->send;
		s->host = hc->receive;
	} else if (hc->type == MLV_HEALTH_DNS) {
		s->path = hc->query;
	}
}

/* ---- creating and freeing ---- */

static struct health_vip *vip_get(struct mlv_health *h, const char *name)
{
	struct health_vip *v = health_vip_find(h, name);

	if (v)
		return v;
	v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	snprintf(v->name, sizeof(v->name), "%s", name);
	v->hnode.hash = health_vip_hash(name);
	if (health_htable_insert(&h->vips, &v->hnode)) {
		free(v);
		return NULL;
	}
	return v;
}

static struct health_pair *pair_new(struct mlv_health *h, struct health_vip *v,
				    const char *backend)
{
	struct health_pair *pair = calloc(1, sizeof(*pair));

	if (!pair)
		return NULL;
	pair->vip = v;
	snprintf(pair->backend, sizeof(pair->backend), "%s", backend);
	pair->hnode.hash = health_pair_hash(v->name, backend);
	pair->eff_before = true;   /* unknown pairs answer "up" */
	if (health_htable_insert(&h->pairs, &pair->hnode)) {
		free(pair);
		return NULL;
	}
	return pair;
}

/* Most probes have no path or host (tcp, none): share one "" rather
 * than allocate two empty strings per probe. */
static const char no_text[] = "";

static const char *text_copy(const char *text)
{
	return text[0] ? strdup(text) : no_text;
}

static void text_free(const char *text)
{
	if (text && text != no_text)
		free((char *)text);
}

static void probe_free(struct mlv_health *h, struct health_probe *p)
{
	health_probe_stop(h, p);
	health_htable_remove(&h->probes, &p->hnode);
	text_free(p->spec.path);
	text_free(p->spec.host);
	free(p->pairs);
	free(p->pub);
	free(p);
}

static struct health_probe *probe_new(struct mlv_health *h,
				      const struct health_spec *s,
				      uint64_t hash, bool up, uint64_t now)
{
	struct health_probe *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->spec = *s;
	p->spec.path = text_copy(s->path);
	p->spec.host = text_copy(s->host);
	p->heap_idx = UINT32_MAX;
	p->hnode.hash = hash;
	p->created_sync = h->sync_count;
	/* A none check is up by definition. */
	p->up = up || s->type == MLV_HEALTH_NONE;
	p->since_unix_ms = health_unix_ms();
	if (!p->spec.path || !p->spec.host ||
	    health_htable_insert(&h->probes, &p->hnode)) {
		text_free(p->spec.path);
		text_free(p->spec.host);
		free(p);
		return NULL;
	}
	if (s->type != MLV_HEALTH_NONE && health_schedule_first(h, p, now)) {
		probe_free(h, p);
		return NULL;
	}
	return p;
}

static bool probe_reserve(struct health_probe *p, uint32_t need)
{
	uint32_t cap = p->cap_pairs ? p->cap_pairs : 4;
	struct health_pair **np;
	struct mlv_health_pair *pub;

	if (need <= p->cap_pairs)
		return true;
	while (cap < need)
		cap *= 2;
	np = realloc(p->pairs, (size_t)cap * sizeof(*np));
	if (!np)
		return false;
	p->pairs = np;
	pub = realloc(p->pub, (size_t)cap * sizeof(*pub));
	if (!pub)
		return false;
	p->pub = pub;
	p->cap_pairs = cap;
	return true;
}

/* Needs room (probe_reserve) for one more pair. */
static void attach(struct health_pair *pair, struct health_probe *p)
{
	pair->probe = p;
	pair->probe_slot = p->n_pairs;
	p->pairs[p->n_pairs] = pair;
	p->pub[p->n_pairs] = (struct mlv_health_pair){
		.vip = pair->vip->name, .backend = pair->backend };
	p->n_pairs++;
}

static void detach(struct health_pair *pair)
{
	struct health_probe *p = pair->probe;
	uint32_t last = p->n_pairs - 1;

	if (pair->probe_slot != last) {
		struct health_pair *moved = p->pairs[last];

		p->pairs[pair->probe_slot] = moved;
		p->pub[pair->probe_slot] = p->pub[last];
		moved->probe_slot = pair->probe_slot;
	}
	p->n_pairs--;
	pair->probe = NULL;
}

/* ---- sync ---- */

struct sync_walk {
	struct mlv_health *h;
	bool changed;
};

static void snapshot_pair(struct health_hnode *n, void *ctx)
{
	struct sync_walk *w = ctx;
	struct health_pair *pair = HEALTH_CONTAINER_OF(n, struct health_pair, hnode);

	pair->existed = true;
	pair->eff_before = health_pair_effective(w->h, pair);
}

static void drop_unseen_pair(struct health_hnode *n, void *ctx)
{
	struct sync_walk *w = ctx;
	struct health_pair *pair = HEALTH_CONTAINER_OF(n, struct health_pair, hnode);

	if (pair->seen_sync == w->h->sync_count)
		return;
	if (pair->probe)
		detach(pair);
	health_htable_remove(&w->h->pairs, n);
	free(pair);
}

static void drop_unused_probe(struct health_hnode *n, void *ctx)
{
	struct sync_walk *w = ctx;
	struct health_probe *p = HEALTH_CONTAINER_OF(n, struct health_probe, hnode);

	if (p->n_pairs == 0)
		probe_free(w->h, p);
}

static void reset_vip(struct health_hnode *n, void *ctx)
{
	struct health_vip *v = HEALTH_CONTAINER_OF(n, struct health_vip, hnode);

	(void)ctx;
	v->n_pairs = 0;
	v->n_down = 0;
}

static void count_pair(struct health_hnode *n, void *ctx)
{
	struct health_pair *pair = HEALTH_CONTAINER_OF(n, struct health_pair, hnode);

	(void)ctx;
	pair->vip->n_pairs++;
	if (!pair->probe->up)
		pair->vip->n_down++;
}

static void settle_vip(struct health_hnode *n, void *ctx)
{
	struct sync_walk *w = ctx;
	struct health_vip *v = HEALTH_CONTAINER_OF(n, struct health_vip, hnode);

	if (v->n_pairs == 0) {
		health_htable_remove(&w->h->vips, n);
		free(v);
		return;
	}
	v->all_down_reported = health_vip_all_down(v);
}

static void compare_pair(struct health_hnode *n, void *ctx)
{
	struct sync_walk *w = ctx;
	struct health_pair *pair = HEALTH_CONTAINER_OF(n, struct health_pair, hnode);

	if (health_pair_effective(w->h, pair) != pair->eff_before)
		w->changed = true;
}

/* Put (v, b) on the probe for its spec. */
static enum mlv_err sync_pair(struct mlv_health *h, struct health_vip *v,
			      const struct mlv_vip_config *vc,
			      const struct mlv_backend_config *bc, uint64_t now,
			      struct health_pair **out)
{
	struct health_pair *pair = health_pair_find(h, v->name, bc->name);
	struct health_tally was;
	struct health_spec spec;
	struct health_probe *p;
	uint64_t hash;
	bool inherited;

	if (!pair) {
		pair = pair_new(h, v, bc->name);
		if (!pair)
			return MLV_E_NOMEM;
	}
	pair->seen_sync = h->sync_count;
	*out = pair;
	spec_of(vc, bc, &spec);
	if (pair->probe && health_spec_equal(&pair->probe->spec, &spec))
		return MLV_OK;

	/* A changed spec keeps what was known about the backend: a down
	 * backend stays down until the new check has seen `rise` successes. */
	inherited = pair->probe ? pair->probe->up : true;
	hash = health_spec_hash(&spec);
	p = health_probe_find(h, &spec, hash);
	if (!p) {
		p = probe_new(h, &spec, hash, inherited, now);
	} else if (p->created_sync == h->sync_count && !inherited &&
		   spec.type != MLV_HEALTH_NONE) {
		/* Created in this sync for pairs with different histories:
		 * down if any of them was. */
		p->up = false;
	}
	if (!p || !probe_reserve(p, p->n_pairs + 1)) {
		if (!pair->probe) {   /* a new pair: do not keep it half-made */
			health_htable_remove(&h->pairs, &pair->hnode);
			free(pair);
		}
		return MLV_E_NOMEM;
	}
	/* The pair's durations go on from what it had (zero if new). */
	health_pair_tally(pair, &was);
	if (pair->probe)
		detach(pair);
	attach(pair, p);
	health_pair_rebase(pair, &was);
	return MLV_OK;
}

enum mlv_err mlv_health_sync(struct mlv_health *h,
			     const struct mlv_config *cfg, bool *changed)
{
	struct sync_walk w = { .h = h };
	enum mlv_err err;
	uint64_t now;

	if (changed)
		*changed = false;
	if (!h)
		return MLV_E_INVAL;
	err = mlv_health_check_config(cfg, h->error, sizeof(h->error));
	if (err)
		return err;
	h->sync_count++;
	health_htable_each(&h->pairs, snapshot_pair, &w);
	health_index_begin(h, cfg);
	now = health_now_ns();
	for (uint32_t vi = 0; !err && vi < cfg->n_vips; vi++) {
		const struct mlv_vip_config *vc = &cfg->vips[vi];
		struct health_vip *v = vip_get(h, vc->name);

		if (!v) {
			err = MLV_E_NOMEM;
			break;
		}
		v->seen_sync = h->sync_count;
		for (uint32_t bi = 0; !err && bi < vc->n_backends; bi++) {
			struct health_pair *pair = NULL;

			err = sync_pair(h, v, vc, &vc->backends[bi], now,
					&pair);
			health_index_set(h, vi, bi, err ? NULL : pair);
		}
	}
	/* After a failure the pairs not reached yet are unseen but still
	 * wanted by the old config: keep them. */
	if (!err)
		health_htable_each(&h->pairs, drop_unseen_pair, &w);
	health_htable_each(&h->probes, drop_unused_probe, &w);
	health_htable_each(&h->vips, reset_vip, &w);
	health_htable_each(&h->pairs, count_pair, &w);
	health_htable_each(&h->vips, settle_vip, &w);
	health_htable_each(&h->pairs, compare_pair, &w);
	health_rearm(h, now);
	if (changed)
		*changed = w.changed;
	if (err) {
		/* the engine holds a mix of both configs: by name only */
		health_index_clear(h);
		snprintf(h->error, sizeof(h->error), "%s", mlv_strerror(err));
	}
	return err;
}

static void free_pair(struct health_hnode *n, void *ctx)
{
	struct mlv_health *h = ctx;

	health_htable_remove(&h->pairs, n);
	free(HEALTH_CONTAINER_OF(n, struct health_pair, hnode));
}

static void free_probe(struct health_hnode *n, void *ctx)
{
	probe_free(ctx, HEALTH_CONTAINER_OF(n, struct health_probe, hnode));
}

static void free_vip(struct health_hnode *n, void *ctx)
{
	struct mlv_health *h = ctx;

	health_htable_remove(&h->vips, n);
	free(HEALTH_CONTAINER_OF(n, struct health_vip, hnode));
}

void health_model_free(struct mlv_health *h)
{
	if (h->pairs.buckets)
		health_htable_each(&h->pairs, free_pair, h);
	if (h->probes.buckets)
		health_htable_each(&h->probes, free_probe, h);
	if (h->vips.buckets)
		health_htable_each(&h->vips, free_vip, h);
}
