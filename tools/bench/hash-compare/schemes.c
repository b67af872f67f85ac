/* SPDX-License-Identifier: BSD-3-Clause */
/* The schemes hash-compare measures. The key-based ones are written from
 * their papers (and match the published comparison's program in shape):
 * Karger et al.'s ring with V points per node and the successor rule,
 * Thaler & Ravishankar's highest random weight, Lamping & Veach's jump
 * hash (their Figure 1), Appleton & O'Reilly's multi-probe with K probes.
 * The table-based ones call maglevd's builders. */
#include "tools/bench/hash-compare/schemes.h"

#include <stdlib.h>
#include <string.h>

#include "control/base/siphash.h"
#include "control/tables/builder.h"

static const struct mlv_siphash_key name_key = { {
	'h', 'a', 's', 'h', '-', 'c', 'o', 'm', 'p', 'a', 'r', 'e', '-', 'k',
	'e', 'y' } };

uint64_t hc_mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

uint64_t hc_name_hash(const char *name)
{
	return mlv_siphash24(&name_key, name, strlen(name));
}

/* ---- mod-N and jump: nodes are numbers ---- */

struct counted {
	uint32_t n;
};

static void *counted_build(const struct hc_scheme *s, char *const *names,
			   uint32_t n)
{
	struct counted *c = malloc(sizeof(*c));

	(void)s;
	(void)names;
	if (c)
		c->n = n;
	return c;
}

static uint32_t modn_lookup(const void *st, uint64_t key)
{
	return (uint32_t)(key % ((const struct counted *)st)->n);
}

/* Lamping & Veach, "A Fast, Minimal Memory, Consistent Hash Algorithm"
 * (2014), Figure 1. */
static uint32_t jump_lookup(const void *st, uint64_t key)
{
	int64_t b = -1, j = 0, n = ((const struct counted *)st)->n;

	while (j < n) {
		b = j;
		key = key * 2862933555777941757ULL + 1;
		j = (int64_t)((double)(b + 1) *
			      ((double)(1LL << 31) / (double)((key >> 33) + 1)));
	}
	return (uint32_t)b;
}

/* ---- rings: ring (V points per node) and multi-probe (1 point, K
 * probes) ---- */

struct ring_point {
	uint64_t pos;
	uint32_t owner;
};

struct ring {
	uint32_t n_points;
	uint32_t probes;          /* multi-probe K */
	uint64_t *pos;            /* sorted */
	uint32_t *owner;
};

static int point_cmp(const void *a, const void *b)
{
	const struct ring_point *x = a, *y = b;

	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return x->owner < y->owner ? -1 : x->owner > y->owner;
}

static void ring_free(void *st)
{
	struct ring *r = st;

	if (!r)
		return;
	free(r->pos);
	free(r->owner);
	free(r);
}

static void *ring_build_points(char *const *names, uint32_t n, uint32_t per,
			       uint32_t probes)
{
	struct ring *r = calloc(1, sizeof(*r));
	struct ring_point *pt = malloc((size_t)n * per * sizeof(*pt));

	if (!r || !pt)
		goto fail;
	r->n_points = n * per;
	r->probes = probes;
	r->pos = malloc(r->n_points * sizeof(*r->pos));
	r->owner = malloc(r->n_points * sizeof(*r->owner));
	if (!r->pos || !r->owner)
		goto fail;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t h = hc_name_hash(names[i]);

		for (uint32_t k = 0; k < per; k++)
			pt[i * per + k] = (struct ring_point){
				per == 1 ? h : hc_mix(h ^ hc_mix(k)), i };
	}
	qsort(pt, r->n_points, sizeof(*pt), point_cmp);
	for (uint32_t p = 0; p < r->n_points; p++) {
		r->pos[p] = pt[p].pos;
		r->owner[p] = pt[p].owner;
	}
	free(pt);
	return r;
fail:
	free(pt);
	ring_free(r);
	return NULL;
}

static void *ring_build(const struct hc_scheme *s, char *const *names,
			uint32_t n)
{
	return ring_build_points(names, n, s->param, 0);
}

static void *mp_build(const struct hc_scheme *s, char *const *names,
		      uint32_t n)
{
	return ring_build_points(names, n, 1, s->param);
}

static uint32_t ring_lookup(const void *st, uint64_t key)
{
	const struct ring *r = st;

	return r->owner[mlv_ring_successor(r->pos, r->n_points, key)];
}

/* Appleton & O'Reilly, "Multi-probe consistent hashing" (2015): hash the
 * key K times, keep the probe closest (clockwise) to its successor. */
static uint32_t mp_lookup(const void *st, uint64_t key)
{
	const struct ring *r = st;
	uint64_t best_d = UINT64_MAX;
	uint32_t best = 0;

	for (uint32_t p = 0; p < r->probes; p++) {
		uint64_t ph = hc_mix(key ^ hc_mix(0x9e3779b97f4a7c15ULL * (p + 1)));
		uint32_t i = mlv_ring_successor(r->pos, r->n_points, ph);
		uint64_t d = r->pos[i] - ph;   /* wraps past 2^64 as it should */

		if (d < best_d) {
			best_d = d;
			best = r->owner[i];
		}
	}
	return best;
}

/* ---- rendezvous (HRW), per key ---- */

struct hrw {
	uint32_t n;
	uint64_t *h;
};

static void hrw_free(void *st)
{
	struct hrw *h = st;

	if (h)
		free(h->h);
	free(h);
}

static void *hrw_build(const struct hc_scheme *s, char *const *names,
		       uint32_t n)
{
	struct hrw *h = malloc(sizeof(*h));

	(void)s;
	if (!h)
		return NULL;
	h->n = n;
	h->h = malloc(n * sizeof(*h->h));
	if (!h->h) {
		free(h);
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++)
		h->h[i] = hc_name_hash(names[i]);
	return h;
}

static uint32_t hrw_lookup(const void *st, uint64_t key)
{
	const struct hrw *h = st;
	uint64_t best_w = 0;
	uint32_t best = 0;

	for (uint32_t i = 0; i < h->n; i++) {
		uint64_t w = hc_mix(h->h[i] ^ key);

		if (w > best_w || i == 0) {
			best_w = w;
			best = i;
		}
	}
	return best;
}

/* ---- maglevd's tables ---- */

struct table {
	uint32_t m;
	uint16_t *slots;
};

static void table_free(void *st)
{
	struct table *t = st;

	if (t)
		free(t->slots);
	free(t);
}

static void *table_build(const struct hc_scheme *s, char *const *names,
			 uint32_t n, enum mlv_table_kind kind)
{
	struct mlv_table_spec spec = { kind, s->param, s->vnodes };
	struct table *t = malloc(sizeof(*t));
	struct mlv_table_backend *be = malloc((n ? n : 1) * sizeof(*be));

	if (!t || !be)
		goto fail;
	t->m = s->param;
	t->slots = malloc(t->m * sizeof(*t->slots));
	if (!t->slots)
		goto fail;
	for (uint32_t i = 0; i < n; i++)
		be[i] = (struct mlv_table_backend){ names[i], 100, false };
	if (mlv_table_build(&spec, be, n, t->slots, NULL, NULL) != MLV_OK)
		goto fail;
	free(be);
	return t;
fail:
	free(be);
	table_free(t);
	return NULL;
}

static void *maglev_build(const struct hc_scheme *s, char *const *names,
			  uint32_t n)
{
	return table_build(s, names, n, MLV_TABLE_MAGLEV);
}

static void *rendezvous_table_build(const struct hc_scheme *s,
				    char *const *names, uint32_t n)
{
	return table_build(s, names, n, MLV_TABLE_RENDEZVOUS);
}

static void *ring_table_build(const struct hc_scheme *s, char *const *names,
			      uint32_t n)
{
	return table_build(s, names, n, MLV_TABLE_RING);
}

static uint32_t table_lookup(const void *st, uint64_t key)
{
	const struct table *t = st;

	return t->slots[key % t->m];
}

const struct hc_scheme hc_schemes[] = {
	{ "mod-N", "modn", true, 0, 0, counted_build, modn_lookup, free },
	{ "ring V=100", "ring", false, 100, 0, ring_build, ring_lookup, ring_free },
	{ "ring V=1000", "ring", false, 1000, 0, ring_build, ring_lookup, ring_free },
	{ "rendezvous", "rendezvous", false, 0, 0, hrw_build, hrw_lookup, hrw_free },
	{ "jump", "jump", true, 0, 0, counted_build, jump_lookup, free },
	{ "multi-probe K=21", "multi-probe", false, 21, 0, mp_build, mp_lookup,
	  ring_free },
	{ "maglev M=65537", "maglev", false, 65537, 0, maglev_build,
	  table_lookup, table_free },
	/* maglevd's other builders, compiled into the same M-slot table */
	{ "table: rendezvous M=65537", "maglevd-rendezvous", false, 65537, 0,
	  rendezvous_table_build, table_lookup, table_free },
	{ "table: ring M=65537 (1000 pts)", "maglevd-ring", false, 65537, 10,
	  ring_table_build, table_lookup, table_free },
};

const uint32_t hc_n_schemes = sizeof(hc_schemes) / sizeof(hc_schemes[0]);
