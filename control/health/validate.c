/* SPDX-License-Identifier: BSD-3-Clause */
/* Validation of the health part of a config, before the engine touches
 * anything: every (VIP, backend) must give a check the engine can run and
 * a request nothing can be injected into. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/health/health_internal.h"

static bool name_ok(const char *name)
{
	size_t len = strnlen(name, MLV_NAME_MAX);

	return len > 0 && len < MLV_NAME_MAX;
}

static bool text_fits(const char *text)
{
	return strnlen(text, MLV_PATH_MAX) < MLV_PATH_MAX;
}

/* A problem with one backend's check, or NULL. */
static const char *spec_problem(const struct mlv_vip_config *v,
				const struct mlv_backend_config *b)
{
	const struct mlv_health_config *hc = &v->health;

	if (b->address.family != MLV_AF_INET && b->address.family != MLV_AF_INET6)
		return "the backend has no address";
	switch (hc->type) {
	case MLV_HEALTH_NONE:
		return NULL;
	case MLV_HEALTH_TCP:
	case MLV_HEALTH_HTTP:
	case MLV_HEALTH_UDP:
	case MLV_HEALTH_DNS:
		break;
	default:
		return "unknown health check type";
	}
	if (hc->interval_ms == 0 || hc->timeout_ms == 0)
		return "health interval and timeout must be greater than 0";
	if (hc->rise == 0 || hc->fall == 0)
		return "health rise and fall must be at least 1";
	if (hc->port == 0 && v->port == 0)
		return "no port to check: set health.port (the VIP has none)";
	if (hc->type == MLV_HEALTH_TCP)
		return NULL;
	if (hc->type == MLV_HEALTH_UDP)
		return text_fits(hc->send) && text_fits(hc->receive) ? NULL :
		       "health send or receive is not terminated";
	if (hc->type == MLV_HEALTH_DNS)
		return text_fits(hc->query) && health_dns_name_ok(hc->query) ?
		       NULL : "health query must be a DNS name (labels of "
		       "letters, digits, '-' or '_', at most 253 bytes)";
	if (hc->expect_status < 100 || hc->expect_status > 599)
		return "health expect must be an HTTP status (100..599)";
	if (!text_fits(hc->path) || !text_fits(hc->host))
		return "health path or host is not terminated";
	if (!health_http_path_ok(hc->path))
		return "health path must start with '/' and contain no spaces "
		       "or control characters";
	if (!health_http_host_ok(hc->host))
		return "health host must contain no spaces or control characters";
	return NULL;
}

/* Open-addressing set of name pairs, for duplicate detection. */
struct name_set {
	uint64_t *hashes;
	const char **a, **b;
	uint32_t mask;
};

static bool name_set_init(struct name_set *s, uint64_t n)
{
	uint64_t size = 16;

	while (size < 2 * n)
		size *= 2;
	if (size > (1ull << 31))
		return false;
	s->mask = (uint32_t)size - 1;
	s->hashes = calloc(size, sizeof(*s->hashes));
	s->a = calloc(size, sizeof(*s->a));
	s->b = calloc(size, sizeof(*s->b));
	return s->hashes && s->a && s->b;
}

static void name_set_free(struct name_set *s)
{
	free(s->hashes);
	free(s->a);
	free(s->b);
}

/* Add (a, b); false if it was already there. */
static bool name_set_add(struct name_set *s, const char *a, const char *b)
{
	uint64_t hash = health_pair_hash(a, b);

	for (uint32_t i = (uint32_t)hash & s->mask;; i = (i + 1) & s->mask) {
		if (!s->a[i]) {
			s->hashes[i] = hash;
			s->a[i] = a;
			s->b[i] = b;
			return true;
		}
		if (s->hashes[i] == hash && strcmp(s->a[i], a) == 0 &&
		    strcmp(s->b[i], b) == 0)
			return false;
	}
}

enum mlv_err mlv_health_check_config(const struct mlv_config *cfg, char *err,
				     size_t err_len)
{
	struct name_set vips = { 0 }, pairs = { 0 };
	uint64_t n_pairs = 0;
	enum mlv_err rc = MLV_E_INVAL;
	const char *why = NULL;
	uint32_t vi = 0, bi = 0;
	char buf[8];

	if (!err || !err_len) {
		err = buf;
		err_len = sizeof(buf);
	}
	err[0] = '\0';
	if (!cfg || (cfg->n_vips && !cfg->vips)) {
		snprintf(err, err_len, "no config");
		return MLV_E_INVAL;
	}
	for (vi = 0; vi < cfg->n_vips; vi++) {
		const struct mlv_vip_config *v = &cfg->vips[vi];

		if (!name_ok(v->name)) {
			snprintf(err, err_len, "VIP #%u: bad or missing name", vi);
			return MLV_E_INVAL;
		}
		if (v->n_backends && !v->backends) {
			snprintf(err, err_len, "VIP '%s': no backend list", v->name);
			return MLV_E_INVAL;
		}
		n_pairs += v->n_backends;
	}
	if (!name_set_init(&vips, cfg->n_vips) || !name_set_init(&pairs, n_pairs)) {
		snprintf(err, err_len, "out of memory");
		rc = MLV_E_NOMEM;
		goto out;
	}
	for (vi = 0; vi < cfg->n_vips; vi++) {
		const struct mlv_vip_config *v = &cfg->vips[vi];

		if (!name_set_add(&vips, v->name, "")) {
			snprintf(err, err_len, "VIP '%s' appears twice", v->name);
			goto out;
		}
		for (bi = 0; bi < v->n_backends; bi++) {
			const struct mlv_backend_config *b = &v->backends[bi];

			if (!name_ok(b->name)) {
				snprintf(err, err_len,
					 "VIP '%s' backend #%u: bad or missing name",
					 v->name, bi);
				goto out;
			}
			if (!name_set_add(&pairs, v->name, b->name)) {
				snprintf(err, err_len,
					 "VIP '%s': backend '%s' appears twice",
					 v->name, b->name);
				goto out;
			}
			why = spec_problem(v, b);
			if (why) {
				snprintf(err, err_len, "VIP '%s' backend '%s': %s",
					 v->name, b->name, why);
				goto out;
			}
		}
	}
	rc = MLV_OK;
out:
	name_set_free(&vips);
	name_set_free(&pairs);
	return rc;
}
