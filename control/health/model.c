/* SPDX-License-Identifier: BSD-3-Clause */
/* The engine's model, read by every other file: the keys its tables hash
 * on, the look-ups by key, the clocks, and a pair's effective state.
 * Nothing here changes the model, so every file may use it. Control
 * thread only. */
#include <string.h>
#include <time.h>

#include "control/health/health_internal.h"
#include "control/base/siphash.h"

/* ---- keys ---- */

/* Any fixed key will do: the hashes never leave the process. */
static const struct mlv_siphash_key health_key = {
	.bytes = { 'm', 'a', 'g', 'l', 'e', 'v', 'd', '-',
		   'h', 'e', 'a', 'l', 't', 'h', '-', '1' },
};

static uint64_t name_pair_hash(const char *a, const char *b)
{
	struct mlv_siphash_state st;

	mlv_siphash24_init(&st, &health_key);
	/* The NULs separate the names: ("ab", "c") != ("a", "bc"). */
	mlv_siphash24_update(&st, a, strlen(a) + 1);
	mlv_siphash24_update(&st, b, strlen(b) + 1);
	return mlv_siphash24_final(&st);
}

uint64_t health_pair_hash(const char *vip, const char *backend)
{
	return name_pair_hash(vip, backend);
}

uint64_t health_vip_hash(const char *vip)
{
	return mlv_siphash24(&health_key, vip, strlen(vip));
}

uint64_t health_spec_hash(const struct health_spec *s)
{
	struct mlv_siphash_state st;
	/* Field by field: no struct padding in the hash. */
	uint32_t words[6] = { (uint32_t)s->type, s->port, s->rise, s->fall,
			      s->interval_ms, s->timeout_ms };
	uint16_t expect = s->expect_status;

	mlv_siphash24_init(&st, &health_key);
	mlv_siphash24_update(&st, words, sizeof(words));
	mlv_siphash24_update(&st, &expect, sizeof(expect));
	mlv_siphash24_update(&st, &s->address, sizeof(s->address));
	if (s->via == MLV_HEALTH_VIA_DATA_PATH) {
		uint32_t dp[4] = { (uint32_t)s->forwarding, s->gue_port,
				   s->has_mac, s->outer_source.len };

		mlv_siphash24_update(&st, dp, sizeof(dp));
		mlv_siphash24_update(&st, &s->vip, sizeof(s->vip));
		mlv_siphash24_update(&st, &s->mac, sizeof(s->mac));
		mlv_siphash24_update(&st, &s->outer_source.ip,
				     sizeof(s->outer_source.ip));
	}
	mlv_siphash24_update(&st, s->path, strlen(s->path) + 1);
	mlv_siphash24_update(&st, s->host, strlen(s->host) + 1);
	return mlv_siphash24_final(&st);
}

bool health_spec_equal(const struct health_spec *a,
		       const struct health_spec *b)
{
	return a->type == b->type && a->port == b->port &&
	       a->rise == b->rise && a->fall == b->fall &&
	       a->interval_ms == b->interval_ms &&
	       a->timeout_ms == b->timeout_ms &&
	       a->expect_status == b->expect_status &&
	       mlv_ip_equal(&a->address, &b->address) &&
	       a->via == b->via && mlv_ip_equal(&a->vip, &b->vip) &&
	       a->forwarding == b->forwarding && a->gue_port == b->gue_port &&
	       a->has_mac == b->has_mac &&
	       memcmp(&a->mac, &b->mac, sizeof(a->mac)) == 0 &&
	       mlv_ip_equal(&a->outer_source.ip, &b->outer_source.ip) &&
	       a->outer_source.len == b->outer_source.len &&
	       strcmp(a->path, b->path) == 0 && strcmp(a->host, b->host) == 0;
}

/* ---- look-ups ---- */

struct health_pair *health_pair_find(const struct mlv_health *h,
				     const char *vip, const char *backend)
{
	uint64_t hash = health_pair_hash(vip, backend);

	for (struct health_hnode *n = health_htable_bucket(&h->pairs, hash); n;
	     n = n->next) {
		struct health_pair *pair =
			HEALTH_CONTAINER_OF(n, struct health_pair, hnode);

		if (n->hash == hash && strcmp(pair->backend, backend) == 0 &&
		    strcmp(pair->vip->name, vip) == 0)
			return pair;
	}
	return NULL;
}

struct health_vip *health_vip_find(const struct mlv_health *h, const char *vip)
{
	uint64_t hash = health_vip_hash(vip);

	for (struct health_hnode *n = health_htable_bucket(&h->vips, hash); n;
	     n = n->next) {
		struct health_vip *v = HEALTH_CONTAINER_OF(n, struct health_vip,
							   hnode);

		if (n->hash == hash && strcmp(v->name, vip) == 0)
			return v;
	}
	return NULL;
}

struct health_probe *health_probe_find(const struct mlv_health *h,
				      const struct health_spec *s, uint64_t hash)
{
	for (struct health_hnode *n = health_htable_bucket(&h->probes, hash); n;
	     n = n->next) {
		struct health_probe *p = HEALTH_CONTAINER_OF(n, struct health_probe,
							     hnode);

		if (n->hash == hash && health_spec_equal(&p->spec, s))
			return p;
	}
	return NULL;
}

/* ---- clocks ---- */

uint64_t health_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int64_t health_unix_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- effective state ---- */

bool health_vip_all_down(const struct health_vip *v)
{
	return v->n_pairs > 0 && v->n_down == v->n_pairs;
}

bool health_pair_effective(const struct mlv_health *h,
			   const struct health_pair *pair)
{
	return pair->probe->up ||
	       (h->opts.all_down == MLV_HEALTH_FAIL_OPEN &&
		health_vip_all_down(pair->vip));
}
