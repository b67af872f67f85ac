/* SPDX-License-Identifier: BSD-3-Clause */
/* The history file (daemon/runtime/sc_history.h, docs/second-chance.md,
 * "Across restarts") in the daemon: second chance's slot histories
 * written beside the state file whenever a published generation changes
 * them, and read at the next start, before generation 1 is built, which
 * takes them as the previous generation of each VIP it names
 * (mlv_gen_build_opts.prior). Written on every change rather than at a
 * graceful stop only, so a crash keeps them too. Control thread. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xxhash.h>

#include "daemon/daemon.h"
#include "control/base/log.h"
#include "control/generation/second_chance.h"
#include "daemon/runtime/sc_history.h"

/* The loaded file and the VIPs made of it for generation 1's build. */
struct mlv_daemon_history {
	struct mlv_sc_history file;
	struct mlv_gen_vip *vips;        /* file.n_vips */
	struct mlv_gen_backend *backends; /* all of theirs */
};

static uint64_t realtime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static bool history_path(const struct mlv_daemon *d, char *out, size_t len)
{
	int n;

	if (!d->state_path[0])
		return false;
	n = snprintf(out, len, "%s.history", d->state_path);
	return n > 0 && (size_t)n < len;
}

/* Whether vip's history goes into the file. */
static bool kept(const struct mlv_gen_vip *vip)
{
	return vip->second_chance && vip->previous && vip->earlier &&
	       vip->table;
}

/* What the file holds of gen: a hash of each kept VIP's name, table size,
 * backends and window deadline, which change whenever its history does
 * (a table change opens a window; a backend leaving changes the count).
 * 0 when no VIP keeps one. */
static uint64_t digest_of(const struct mlv_generation *gen)
{
	XXH3_state_t *s = XXH3_createState();
	uint64_t h = 0;
	bool any = false;

	if (!s)
		return 1;   /* unknown: differs from a saved digest */
	XXH3_64bits_reset(s);
	for (uint32_t v = 0; v < gen->n_vips; v++) {
		const struct mlv_gen_vip *vip = &gen->vips[v];

		if (!kept(vip))
			continue;
		any = true;
		XXH3_64bits_update(s, vip->name, strlen(vip->name) + 1);
		XXH3_64bits_update(s, &vip->table_size, sizeof(vip->table_size));
		XXH3_64bits_update(s, &vip->n_backends, sizeof(vip->n_backends));
		XXH3_64bits_update(s, &vip->previous_until_ms,
				   sizeof(vip->previous_until_ms));
		for (uint32_t b = 0; b < vip->n_backends; b++)
			XXH3_64bits_update(s, vip->backends[b].name,
					   strlen(vip->backends[b].name) + 1);
	}
	if (any)
		h = XXH3_64bits_digest(s) | 1;
	XXH3_freeState(s);
	return h;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct mlv_sc_history_vip *)a)->name,
		      ((const struct mlv_sc_history_vip *)b)->name);
}

/* gen's kept histories as the file's records: their arrays point into
 * gen, the backends' names are copied into *names (one array for all). */
static enum mlv_err records_of(const struct mlv_generation *gen,
			       uint64_t now_mono, uint64_t now_unix,
			       struct mlv_sc_history_vip **out, uint32_t *n,
			       char (**names)[MLV_NAME_MAX])
{
	struct mlv_sc_history_vip *r;
	char (*nm)[MLV_NAME_MAX];
	uint32_t k = 0, total = 0;

	for (uint32_t v = 0; v < gen->n_vips; v++)
		if (kept(&gen->vips[v]))
			total += gen->vips[v].n_backends;
	r = calloc(gen->n_vips + 1, sizeof(*r));
	nm = calloc(total + 1, sizeof(*nm));
	if (!r || !nm) {
		free(r);
		free(nm);
		return MLV_E_NOMEM;
	}
	*names = nm;
	for (uint32_t v = 0; v < gen->n_vips; v++) {
		const struct mlv_gen_vip *vip = &gen->vips[v];

		if (!kept(vip))
			continue;
		if (vip->n_backends > MLV_SC_HISTORY_MAX_BACKENDS)
			continue;
		snprintf(r[k].name, sizeof(r[k].name), "%s", vip->name);
		r[k].table_size = vip->table_size;
		r[k].n_backends = vip->n_backends;
		r[k].window_end_unix_ms = vip->window_open &&
			vip->previous_until_ms > now_mono ?
			now_unix + (vip->previous_until_ms - now_mono) : 0;
		/* a generation's backends are in strcmp order of names */
		r[k].backends = (const char (*)[MLV_NAME_MAX])nm;
		for (uint32_t b = 0; b < vip->n_backends; b++, nm++)
			memcpy(*nm, vip->backends[b].name, MLV_NAME_MAX);
		r[k].table = vip->table;
		r[k].previous = vip->previous;
		r[k].earlier = vip->earlier;
		k++;
	}
	qsort(r, k, sizeof(*r), by_name);
	*out = r;
	*n = k;
	return MLV_OK;
}

void mlv_daemon_history_note(struct mlv_daemon *d,
			     const struct mlv_generation *gen)
{
	struct mlv_sc_history h = { .saved_unix_ms = 0 };
	struct mlv_sc_history_vip *r = NULL;
	char (*names)[MLV_NAME_MAX] = NULL;
	char path[MLV_PATH_MAX + 16], why[512];
	uint64_t digest = digest_of(gen);
	enum mlv_err err;

	if (digest == d->history_digest || !history_path(d, path, sizeof(path)))
		return;
	h.saved_unix_ms = realtime_ms();
	err = records_of(gen, mlv_gen_sc_now_ms(), h.saved_unix_ms, &r,
			 &h.n_vips, &names);
	if (err) {
		mlv_warn("history file %s: not saved: %s", path,
			 mlv_strerror(err));
		return;
	}
	h.vips = r;
	if (mlv_sc_history_save(path, &h, why, sizeof(why)) != MLV_OK) {
		mlv_warn("history file: not saved: %s; a restart would forget "
			 "second chance's former slot owners", why);
	} else {
		d->history_digest = digest;
		mlv_debug("history file %s: %u VIP(s) saved", path, h.n_vips);
	}
	free(r);
	free(names);
}

/* mlv_gen_build_opts.prior: the loaded VIP of that name. */
static const struct mlv_gen_vip *prior(void *ctx, const char *name)
{
	const struct mlv_daemon_history *dh = ctx;
	const struct mlv_sc_history_vip *r =
		mlv_sc_history_find(&dh->file, name);

	return r ? &dh->vips[r - dh->file.vips] : NULL;
}

/* The VIPs generation 1 takes as its predecessors: what
 * mlv_gen_sc_build reads, the window's deadline on this boot's
 * monotonic clock. */
static enum mlv_err make_vips(struct mlv_daemon_history *dh)
{
	const struct mlv_sc_history *f = &dh->file;
	uint64_t unix_now = realtime_ms(), mono_now = mlv_gen_sc_now_ms();
	uint64_t total = 0;
	struct mlv_gen_backend *b;

	for (uint32_t v = 0; v < f->n_vips; v++)
		total += f->vips[v].n_backends;
	dh->vips = calloc(f->n_vips + 1, sizeof(*dh->vips));
	dh->backends = calloc(total + 1, sizeof(*dh->backends));
	if (!dh->vips || !dh->backends)
		return MLV_E_NOMEM;
	b = dh->backends;
	for (uint32_t v = 0; v < f->n_vips; v++) {
		const struct mlv_sc_history_vip *r = &f->vips[v];
		struct mlv_gen_vip *vip = &dh->vips[v];

		memcpy(vip->name, r->name, sizeof(vip->name));
		vip->table_size = r->table_size;
		vip->n_backends = r->n_backends;
		vip->backends = b;
		for (uint32_t i = 0; i < r->n_backends; i++, b++) {
			memcpy(b->name, r->backends[i], MLV_NAME_MAX);
			b->index = i;
		}
		vip->table = r->table;
		vip->previous = r->previous;
		vip->earlier = r->earlier;
		vip->second_chance = true;
		if (r->window_end_unix_ms > unix_now)
			vip->previous_until_ms = mono_now +
				(r->window_end_unix_ms - unix_now);
		vip->window_open = vip->previous_until_ms > mono_now;
	}
	return MLV_OK;
}

/* The longest file accepted: every VIP of the config, each with the
 * config's largest table and twice its largest backend list (backends
 * may have left while the daemon was stopped), and a margin. */
static size_t max_size(const struct mlv_config *cfg)
{
	uint32_t table = 1, backends = 0;

	for (uint32_t v = 0; v < cfg->n_vips; v++) {
		if (cfg->vips[v].table_size > table)
			table = cfg->vips[v].table_size;
		if (cfg->vips[v].n_backends > backends)
			backends = cfg->vips[v].n_backends;
	}
	backends = backends * 2 + 256;
	if (backends > MLV_SC_HISTORY_MAX_BACKENDS)
		backends = MLV_SC_HISTORY_MAX_BACKENDS;
	return mlv_sc_history_max_size(cfg->n_vips + 16, table, backends);
}

void mlv_daemon_history_load(struct mlv_daemon *d)
{
	struct mlv_daemon_history *dh;
	char path[MLV_PATH_MAX + 16], why[512];
	enum mlv_err err;

	if (!history_path(d, path, sizeof(path)))
		return;
	dh = calloc(1, sizeof(*dh));
	if (!dh) {
		mlv_err_log("history file %s: out of memory; starting without "
			    "it", path);
		return;
	}
	err = mlv_sc_history_load(path, max_size(d->cfg), &dh->file, why,
				  sizeof(why));
	if (err == MLV_E_NOT_FOUND) {
		free(dh);
		return;
	}
	if (err || (err = make_vips(dh)) != MLV_OK) {
		mlv_err_log("history file %s: %s; starting without second "
			    "chance's former slot owners", path,
			    err == MLV_E_NOMEM ? "out of memory" : why);
		mlv_daemon_history_drop(dh);
		return;
	}
	mlv_info("history file %s: former slot owners of %u VIP(s), saved "
		 "%llu ms ago", path, dh->file.n_vips,
		 (unsigned long long)(realtime_ms() > dh->file.saved_unix_ms ?
				      realtime_ms() - dh->file.saved_unix_ms :
				      0));
	d->history = dh;
}

void mlv_daemon_history_opts(struct mlv_daemon *d,
			     struct mlv_gen_build_opts *opts)
{
	if (!d->history)
		return;
	opts->prior = prior;
	opts->prior_ctx = d->history;
}

void mlv_daemon_history_drop(struct mlv_daemon_history *dh)
{
	if (!dh)
		return;
	mlv_sc_history_free(&dh->file);
	free(dh->vips);
	free(dh->backends);
	free(dh);
}
