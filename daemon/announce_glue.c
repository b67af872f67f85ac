/* SPDX-License-Identifier: BSD-3-Clause */
/* VIP routes and the graceful stop (docs/scale-out.md).
 *
 * The announce table holds one route per address of a VIP this instance
 * serves: the VIP is in the published generation, the AF_XDP steering
 * maps are in place, and at least announce.min_backends of its backends
 * can take new flows. A VIP whose every checked backend is down is not
 * served, though it fails open (control/health/health.h): its table is
 * then the config's, and an instance whose checks see its backends up
 * serves it better. An address is announced while at least one VIP on
 * it serves: withdrawing an address for one failing port would take every
 * other VIP on it away from this instance too, and from the whole fleet
 * when every instance sees the same failure.
 *
 * Nothing is announced before the workers run, nor while stopping. The
 * control loop calls mlv_daemon_announce_refresh after every pass, so
 * whatever changed the serving set (a publish after health checks, an
 * override or a reload, a steering sync, the stop) is reflected before
 * the loop waits again. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "control/base/log.h"
#include "daemon/daemon.h"
#include "daemon/notify.h"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Open, move to another table or device, or close, as cfg says. */
static void apply_config(struct mlv_daemon *d, const struct mlv_config *cfg)
{
	struct mlv_announce *a = &d->announce;
	char why[sizeof(a->last_error)];

	if (mlv_announce_is_open(a) &&
	    (cfg->announce_table != a->table ||
	     strcmp(cfg->announce_device, a->ifname) != 0)) {
		mlv_info("announce: leaving table %u (device %s)", a->table,
			 a->ifname);
		mlv_announce_close(a);
	}
	if (cfg->announce_table == 0 || mlv_announce_is_open(a))
		return;
	if (mlv_announce_open(a, cfg->announce_device, cfg->announce_table,
			      why, sizeof(why)) != MLV_OK) {
		/* Forwarding goes on; the next reload tries again. */
		d->announce_open_failures++;
		memcpy(a->last_error, why, sizeof(why));
		mlv_err_log("%s; no VIP is announced", why);
		return;
	}
	mlv_info("announce: VIP routes in table %u via %s (protocol %d)",
		 a->table, a->ifname, MLV_RTPROT_MAGLEVD);
}

static bool grow_view(struct mlv_daemon *d, uint32_t n)
{
	struct mlv_ctl_announce_vip *v;

	if (n <= d->announce_vips_cap)
		return true;
	v = realloc(d->announce_vips, (size_t)n * sizeof(*v));
	if (!v)
		return false;
	d->announce_vips = v;
	d->announce_vips_cap = n;
	return true;
}

/* How often the routes are re-asserted (re-added with NLM_F_REPLACE and
 * the device brought up) against a route flush or a device set down
 * behind maglevd's back, and how soon a failed change is tried again. */
#define ANNOUNCE_REASSERT_MS 10000
#define ANNOUNCE_RETRY_MS 1000

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* After a successful steering sync: the VIPs it put in place. */
static void note_steered(struct mlv_daemon *d, const struct mlv_generation *gen)
{
	if (gen->n_vips > d->cap_steered) {
		char (*n)[MLV_NAME_MAX] = realloc(d->steered_names,
						  (size_t)gen->n_vips *
						  sizeof(*n));

		if (!n) {
			d->n_steered = 0;   /* announce nothing new until memory */
			return;
		}
		d->steered_names = n;
		d->cap_steered = gen->n_vips;
	}
	for (uint32_t i = 0; i < gen->n_vips; i++)
		memcpy(d->steered_names[i], gen->vips[i].name, MLV_NAME_MAX);
	d->n_steered = gen->n_vips;
	qsort(d->steered_names, d->n_steered, MLV_NAME_MAX, cmp_name);
}

/* Whether VIP name's frames reach the workers: every VIP when steering
 * is in place (or not used); after a failed sync, the VIPs the last good
 * one put in place (a full map keeps them, docs/deployment.md). */
static bool steered(const struct mlv_daemon *d, const char *name)
{
	if (d->steering.n == 0 || d->steering.in_place)
		return true;
	return d->n_steered > 0 &&
	       bsearch(name, d->steered_names, d->n_steered, MLV_NAME_MAX,
		       cmp_name) != NULL;
}

/* v's address as an mlv_ip: a generation's family is 4 or 6, which are
 * MLV_AF_INET and MLV_AF_INET6. */
_Static_assert(MLV_AF_INET == 4 && MLV_AF_INET6 == 6, "address families");
static struct mlv_ip vip_ip(const struct mlv_gen_vip *v)
{
	struct mlv_ip ip = { .family = v->family };

	memcpy(ip.bytes, v->address, v->family == MLV_AF_INET6 ? 16 : 4);
	return ip;
}

/* Which VIPs serve, into the view; the addresses to announce into want
 * (n_vips entries of room). Returns how many addresses. */
static uint32_t serving(struct mlv_daemon *d, const struct mlv_generation *gen,
			struct mlv_ip *want)
{
	const struct mlv_config *cfg = d->cfg;
	uint32_t n = 0;

	for (uint32_t i = 0; i < gen->n_vips; i++) {
		const struct mlv_gen_vip *v = &gen->vips[i];
		struct mlv_ctl_announce_vip *out = &d->announce_vips[i];
		/* generation VIP i was built from config VIP i */
		uint32_t min = i < cfg->n_vips &&
			       strcmp(cfg->vips[i].name, v->name) == 0 ?
			       cfg->vips[i].min_backends : 1;

		struct mlv_health_vip_status hs;

		memcpy(out->name, v->name, sizeof(out->name));
		out->usable = v->n_usable;
		/* failing open, its table is the config's: every backend
		 * counts as usable there, though the checks see none up */
		if (d->health && mlv_health_vip_get(d->health, v->name, &hs) ==
		    MLV_OK && hs.fail_open)
			out->usable = 0;
		out->min_backends = min;
		out->serving = d->launched && !d->stopping &&
			       steered(d, v->name) && out->usable >= min;
		if (out->serving) {
			want[n++] = vip_ip(v);
		}
	}
	return n;
}

static void log_changes(struct mlv_daemon *d, uint64_t announced,
			uint64_t withdrawn)
{
	const struct mlv_announce *a = &d->announce;

	if (announced == a->announces && withdrawn == a->withdraws)
		return;
	mlv_info("announce: %llu route(s) added, %llu withdrawn; %u in table %u",
		 (unsigned long long)(a->announces - announced),
		 (unsigned long long)(a->withdraws - withdrawn), a->n_routes,
		 a->table);
}

void mlv_daemon_announce_refresh(struct mlv_daemon *d)
{
	const struct mlv_generation *gen = d->pub ? mlv_publish_current(d->pub) :
					   NULL;
	struct mlv_announce *a = &d->announce;
	uint64_t announced = a->announces, withdrawn = a->withdraws;
	uint64_t now = now_ms();
	bool config_changed, reassert;
	struct mlv_ip *want;
	uint32_t n;

	if (!d->cfg || !gen)
		return;
	config_changed = !d->announce_applied ||
			 d->reloads_ok != d->announce_reloads;
	reassert = mlv_announce_is_open(a) &&
		   now - d->announce_checked_ms >= ANNOUNCE_REASSERT_MS;
	if (!config_changed && !reassert && !d->announce_retry &&
	    gen->number == d->announce_gen &&
	    d->steering.syncs == d->announce_syncs &&
	    d->stopping == d->announce_stopping)
		return;
	if (config_changed) {
		apply_config(d, d->cfg);
		d->announce_applied = true;
		d->announce_reloads = d->reloads_ok;
	}
	if (d->steering.syncs != d->announce_syncs && d->steering.in_place)
		note_steered(d, gen);
	if (!grow_view(d, gen->n_vips ? gen->n_vips : 1) ||
	    !(want = malloc((gen->n_vips ? gen->n_vips : 1) * sizeof(*want)))) {
		mlv_err_log("announce: out of memory; routes unchanged");
		d->announce_retry = true;
		return;
	}
	n = serving(d, gen, want);
	d->announce_retry = false;
	if (reassert && mlv_announce_reassert(a) != MLV_OK) {
		mlv_err_log("announce: %s", a->last_error);
		d->announce_retry = true;   /* re-asserted again within a second */
	} else if (reassert) {
		d->announce_checked_ms = now;
	}
	if (mlv_announce_is_open(a) && mlv_announce_set(a, want, n) != MLV_OK) {
		mlv_err_log("announce: %s", a->last_error);
		d->announce_retry = true;   /* the next pass within a second */
	}
	free(want);
	for (uint32_t i = 0; i < gen->n_vips; i++) {
		struct mlv_ip ip = vip_ip(&gen->vips[i]);

		d->announce_vips[i].announced = mlv_announce_has(a, &ip);
	}
	d->announce_view.n_vips = gen->n_vips;
	log_changes(d, announced, withdrawn);
	d->announce_gen = gen->number;
	d->announce_syncs = d->steering.syncs;
	d->announce_stopping = d->stopping;
}

int mlv_daemon_announce_wait_ms(const struct mlv_daemon *d)
{
	uint64_t now, due;

	if (!mlv_announce_is_open(&d->announce))
		return d->announce_retry ? ANNOUNCE_RETRY_MS : -1;
	if (d->announce_retry)
		return ANNOUNCE_RETRY_MS;
	now = now_ms();
	due = d->announce_checked_ms + ANNOUNCE_REASSERT_MS;
	return due > now ? (int)(due - now) : 0;
}

const struct mlv_ctl_announce *mlv_daemon_announce_view(void *ctx)
{
	struct mlv_daemon *d = ctx;
	struct mlv_ctl_announce *v = &d->announce_view;
	const struct mlv_announce *a = &d->announce;

	v->enabled = d->cfg && d->cfg->announce_table != 0;
	v->open = mlv_announce_is_open(a);
	v->table = d->cfg ? d->cfg->announce_table : 0;
	snprintf(v->device, sizeof(v->device), "%s",
		 d->cfg ? d->cfg->announce_device : "");
	v->routes = a->n_routes;
	v->announces = a->announces;
	v->withdraws = a->withdraws;
	v->errors = a->errors + d->announce_open_failures;
	snprintf(v->last_error, sizeof(v->last_error), "%s", a->last_error);
	v->stopping = d->stopping;
	v->stop_in_ms = mlv_daemon_stop_remaining_ms(d);
	v->vips = d->announce_vips;
	if (!d->announce_vips)
		v->n_vips = 0;
	return v;
}

uint64_t mlv_daemon_stop_remaining_ms(const struct mlv_daemon *d)
{
	uint64_t now;

	if (!d->stopping)
		return 0;
	now = now_ms();
	return d->stop_at_ms > now ? d->stop_at_ms - now : 0;
}

void mlv_daemon_request_stop(struct mlv_daemon *d, bool now, bool repeat_stops,
			     const char *why)
{
	uint32_t drain = d->cfg ? d->cfg->announce_drain_ms : 0;

	if (d->stopping && !now && !repeat_stops) {
		mlv_info("%s: already stopping, %llu ms left", why,
			 (unsigned long long)mlv_daemon_stop_remaining_ms(d));
		return;
	}
	if (now || d->stopping || !mlv_announce_is_open(&d->announce) ||
	    drain == 0) {
		mlv_info("%s: stopping%s", why, d->stopping ? " now" : "");
		d->stop_now = true;
		return;
	}
	uint64_t withdrawn = d->announce.withdraws;

	d->stopping = true;
	d->stop_at_ms = now_ms() + drain;
	mlv_daemon_announce_refresh(d);
	mlv_info("%s: %llu VIP route(s) withdrawn; forwarding for %u ms, then "
		 "stopping (again to stop at once)", why,
		 (unsigned long long)(d->announce.withdraws - withdrawn), drain);
	mlv_notify_draining(drain);
}

void mlv_daemon_announce_close(struct mlv_daemon *d)
{
	uint64_t withdrawn = d->announce.withdraws;

	if (mlv_announce_is_open(&d->announce)) {
		mlv_announce_close(&d->announce);
		if (d->announce.withdraws != withdrawn)
			mlv_info("announce: %llu route(s) withdrawn at stop",
				 (unsigned long long)(d->announce.withdraws -
						      withdrawn));
	}
	free(d->announce_vips);
	d->announce_vips = NULL;
	d->announce_vips_cap = 0;
	free(d->steered_names);
	d->steered_names = NULL;
	d->n_steered = d->cap_steered = 0;
}
