/* SPDX-License-Identifier: BSD-3-Clause */
/* The per-VIP and per-backend families of the /metrics page: identity
 * (info gauges), cumulative flow counters (control/generation/stats.h), the
 * state of the current generation (weights, drain, slots, health), and the
 * health checks of each backend (verdict, durations, results). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "control/base/addr.h"
#include "control/metrics/page_internal.h"
#include "control/generation/moves.h"
#include "control/generation/second_chance.h"
#include "control/generation/stats.h"

static const char *vip_addr(const struct mlv_gen_vip *v, char *buf, size_t len)
{
	struct mlv_ip ip = { .family = v->family };

	memcpy(ip.bytes, v->address, sizeof(ip.bytes));
	return mlv_ip_format(&ip, buf, len);
}

/* ---- VIPs ---- */

static void vip_info(struct mlv_metrics_page *p)
{
	const struct mlv_generation *gen = p->gen;
	char addr[MLV_IP_STRLEN], port[16];
	struct mlv_expo_label l[5];

	mlv_expo_family(p->f, "maglevd_vip_info", MLV_EXPO_GAUGE,
			"a configured VIP; always 1, its identity is in the labels");
	for (uint32_t i = 0; i < gen->n_vips; i++) {
		const struct mlv_gen_vip *v = &gen->vips[i];

		/* "80", "8000-8100" or "any" */
		mlv_vip_port_format(ntohs(v->port_be), v->port_last, port,
				    sizeof(port));
		l[0] = (struct mlv_expo_label){ "vip", v->name };
		l[1] = (struct mlv_expo_label){ "address", vip_addr(v, addr, sizeof(addr)) };
		l[2] = (struct mlv_expo_label){ "port", port };
		l[3] = (struct mlv_expo_label){ "protocol", mlv_proto_name(v->protocol) };
		l[4] = (struct mlv_expo_label){ "forwarding",
						mlv_forwarding_name(v->forwarding) };
		mlv_expo_sample_u64(p->f, "maglevd_vip_info", l, 5, 1);
	}
	/* The fingerprint changes with every change of the table (a health
	 * flap too): as a label it would start a new series each time, so it
	 * is the value, its top 53 bits, which a float sample carries
	 * exactly (docs/maglev.md has the whole 64). */
	mlv_expo_family(p->f, "maglevd_vip_table_fingerprint", MLV_EXPO_GAUGE,
			"the top 53 bits of the VIP's table fingerprint: equal "
			"on instances whose tables agree");
	for (uint32_t i = 0; i < gen->n_vips; i++) {
		l[0] = (struct mlv_expo_label){ "vip", gen->vips[i].name };
		mlv_expo_sample_u64(p->f, "maglevd_vip_table_fingerprint", l, 1,
				    gen->vips[i].fingerprint >> 11);
	}
}

/* One gauge family over the VIPs; value(v) picks the field. */
static void vip_gauge(struct mlv_metrics_page *p, const char *name,
		      const char *help,
		      uint64_t (*value)(const struct mlv_gen_vip *v))
{
	struct mlv_expo_label l = { .name = "vip" };

	mlv_expo_family(p->f, name, MLV_EXPO_GAUGE, help);
	for (uint32_t i = 0; i < p->gen->n_vips; i++) {
		l.value = p->gen->vips[i].name;
		mlv_expo_sample_u64(p->f, name, &l, 1, value(&p->gen->vips[i]));
	}
}

static uint64_t vip_table_size(const struct mlv_gen_vip *v) { return v->table_size; }
static uint64_t vip_backends(const struct mlv_gen_vip *v) { return v->n_backends; }
static uint64_t vip_usable(const struct mlv_gen_vip *v) { return v->n_usable; }

/* Second chance (docs/second-chance.md), for the VIPs that have it: the
 * slots whose packets also name their previous owner, and how long they
 * still do. */
static void vip_second_chance(struct mlv_metrics_page *p)
{
	static const char *const slots = "maglevd_vip_second_chance_previous_slots";
	static const char *const left = "maglevd_vip_second_chance_window_left_seconds";
	struct mlv_expo_label l = { .name = "vip" };
	uint64_t now = mlv_gen_sc_now_ms();

	mlv_expo_family(p->f, slots, MLV_EXPO_GAUGE,
			"second_chance VIPs: table slots whose packets also "
			"carry the slot's owner before the last table change");
	for (uint32_t i = 0; i < p->gen->n_vips; i++) {
		const struct mlv_gen_vip *v = &p->gen->vips[i];

		if (!v->second_chance)
			continue;
		l.value = v->name;
		mlv_expo_sample_u64(p->f, slots, &l, 1,
				    mlv_gen_sc_previous_slots(v));
	}
	mlv_expo_family(p->f, left, MLV_EXPO_GAUGE,
			"second_chance VIPs: seconds until the previous "
			"owners leave the packets (0: none carried)");
	for (uint32_t i = 0; i < p->gen->n_vips; i++) {
		const struct mlv_gen_vip *v = &p->gen->vips[i];
		uint64_t ms = mlv_gen_sc_window_left_ms(v, now);

		if (!v->second_chance)
			continue;
		l.value = v->name;
		mlv_expo_sample_u64(p->f, left, &l, 1, (ms + 999) / 1000);
	}
}

static void vip_health(struct mlv_metrics_page *p)
{
	struct mlv_expo_label l = { .name = "vip" };
	struct mlv_health_vip_status vs;

	if (!p->st->health)
		return;
	mlv_expo_family(p->f, "maglevd_vip_all_backends_down", MLV_EXPO_GAUGE,
			"1 while the checks say every backend of the VIP is "
			"down (docs/health.md: fail-open keeps the table)");
	for (uint32_t i = 0; i < p->gen->n_vips; i++) {
		if (mlv_health_vip_get(p->st->health, p->gen->vips[i].name,
				       &vs) != MLV_OK)
			continue;
		l.value = p->gen->vips[i].name;
		mlv_expo_sample_u64(p->f, "maglevd_vip_all_backends_down", &l, 1,
				    vs.all_down);
	}
}

/* ---- backends ---- */

static void backend_labels(const struct mlv_gen_vip *v,
			   const struct mlv_gen_backend *b,
			   struct mlv_expo_label l[2])
{
	l[0] = (struct mlv_expo_label){ "vip", v->name };
	l[1] = (struct mlv_expo_label){ "backend", b->name };
}

static void backend_info(struct mlv_metrics_page *p)
{
	char addr[MLV_IP_STRLEN];
	struct mlv_expo_label l[3];

	mlv_expo_family(p->f, "maglevd_backend_info", MLV_EXPO_GAUGE,
			"a backend of a VIP; always 1, its address is a label");
	for (uint32_t i = 0; i < p->gen->n_vips; i++) {
		const struct mlv_gen_vip *v = &p->gen->vips[i];

		for (uint32_t j = 0; j < v->n_backends; j++) {
			backend_labels(v, &v->backends[j], l);
			l[2] = (struct mlv_expo_label){ "address",
				mlv_ip_format(&v->backends[j].address, addr,
					      sizeof(addr)) };
			mlv_expo_sample_u64(p->f, "maglevd_backend_info", l, 3, 1);
		}
	}
}

/* One gauge family over every backend; value(p, b) picks the figure. */
static void backend_gauge(struct mlv_metrics_page *p, const char *name,
			  const char *help,
			  uint64_t (*value)(const struct mlv_metrics_page *p,
					    const struct mlv_gen_backend *b))
{
	struct mlv_expo_label l[2];

	mlv_expo_family(p->f, name, MLV_EXPO_GAUGE, help);
	for (uint32_t i = 0; i < p->gen->n_vips; i++) {
		const struct mlv_gen_vip *v = &p->gen->vips[i];

		for (uint32_t j = 0; j < v->n_backends; j++) {
			backend_labels(v, &v->backends[j], l);
			mlv_expo_sample_u64(p->f, name, l, 2,
					    value(p, &v->backends[j]));
		}
	}
}

static uint64_t be_up(const struct mlv_metrics_page *p,
		      const struct mlv_gen_backend *b)
{
	(void)p;
	return b->usable;
}

static uint64_t be_draining(const struct mlv_metrics_page *p,
			    const struct mlv_gen_backend *b)
{
	(void)p;
	return b->draining;
}

static uint64_t be_weight(const struct mlv_metrics_page *p,
			  const struct mlv_gen_backend *b)
{
	(void)p;
	return b->weight;
}

static uint64_t be_slots(const struct mlv_metrics_page *p,
			 const struct mlv_gen_backend *b)
{
	return p->slots[mlv_gen_backend_index(p->gen, b)];
}

/* Tracked connections by class (the conntrack tallies, which no publish
 * resets: control/generation/moves.h). */
static uint64_t be_active(const struct mlv_metrics_page *p,
			  const struct mlv_gen_backend *b)
{
	uint64_t n[2];

	mlv_gen_backend_flows(p->gen, b, n);
	return n[MLV_TALLY_ACTIVE];
}

static uint64_t be_inactive(const struct mlv_metrics_page *p,
			    const struct mlv_gen_backend *b)
{
	uint64_t n[2];

	mlv_gen_backend_flows(p->gen, b, n);
	return n[MLV_TALLY_INACTIVE];
}

/* ---- health checks per backend ---- */

/* What the engine says of one backend of the generation. */
struct backend_checks {
	bool checked;                /* the engine checks it (not type none) */
	bool up;
	struct mlv_health_durations d;
};

/* The series of one checked backend, labelled l[0..1] (vip, backend);
 * l[2] is free for one more label. */
typedef void (*checked_fn)(struct mlv_metrics_page *p,
			   struct mlv_expo_label l[3],
			   const struct backend_checks *c, const void *arg);

/* fn(.., arg) for every backend the engine checks, in the generation's
 * order. */
static void each_checked(struct mlv_metrics_page *p,
			 const struct backend_checks *bc, checked_fn fn,
			 const void *arg)
{
	struct mlv_expo_label l[3];

	for (uint32_t i = 0; i < p->gen->n_vips; i++) {
		const struct mlv_gen_vip *v = &p->gen->vips[i];

		for (uint32_t j = 0; j < v->n_backends; j++) {
			const struct mlv_gen_backend *b = &v->backends[j];
			const struct backend_checks *c =
				&bc[mlv_gen_backend_index(p->gen, b)];

			if (!c->checked)
				continue;
			backend_labels(v, b, l);
			fn(p, l, c, arg);
		}
	}
}

#define CHECK_UP "maglevd_backend_check_up"
#define CHECK_DURATION "maglevd_health_check_duration_seconds"
#define CHECK_RESULTS "maglevd_health_check_results_total"

/* The checks' own verdict. */
static void check_up(struct mlv_metrics_page *p, struct mlv_expo_label l[3],
		     const struct backend_checks *c, const void *arg)
{
	(void)arg;
	mlv_expo_sample_u64(p->f, CHECK_UP, l, 2, c->up);
}

/* arg: the `le` texts, formatted once per page rather than per series. */
static void check_duration(struct mlv_metrics_page *p,
			   struct mlv_expo_label l[3],
			   const struct backend_checks *c, const void *arg)
{
	mlv_expo_histogram(p->f, CHECK_DURATION, l, 2, arg, c->d.le,
			   MLV_HEALTH_DURATION_BUCKETS, c->d.count,
			   (double)c->d.sum_ns / 1e9);
}

static void check_results(struct mlv_metrics_page *p,
			  struct mlv_expo_label l[3],
			  const struct backend_checks *c, const void *arg)
{
	(void)arg;
	l[2].name = "result";
	for (int r = 0; r < MLV_HEALTH_RESULT__COUNT; r++) {
		l[2].value = mlv_health_result_name((enum mlv_health_result)r);
		mlv_expo_sample_u64(p->f, CHECK_RESULTS, l, 3, c->d.results[r]);
	}
}

/* The verdict, then every completed check by duration (every result is
 * observed, timeouts too: docs/metrics.md), then the same checks by
 * result. Types none are left out: they never run a check. */
static void check_families(struct mlv_metrics_page *p,
			   const struct backend_checks *bc)
{
	char text[MLV_HEALTH_DURATION_BUCKETS][MLV_EXPO_BOUND_MAX];
	const char *le[MLV_HEALTH_DURATION_BUCKETS];

	for (uint32_t k = 0; k < MLV_HEALTH_DURATION_BUCKETS; k++) {
		mlv_expo_format_bound(text[k], sizeof(text[k]),
				      (double)mlv_health_duration_bounds_ns[k] /
				      1e9);
		le[k] = text[k];
	}
	mlv_expo_family(p->f, CHECK_UP, MLV_EXPO_GAUGE,
			"1 if the backend's health check passes, 0 if it "
			"fails; absent for health type none");
	each_checked(p, bc, check_up, NULL);
	mlv_expo_family(p->f, CHECK_DURATION, MLV_EXPO_HISTOGRAM,
			"duration of the backend's health checks, from opening "
			"the socket to the verdict, every result (timeouts "
			"too)");
	each_checked(p, bc, check_duration, le);
	mlv_expo_family(p->f, CHECK_RESULTS, MLV_EXPO_COUNTER,
			"the backend's completed health checks by result: ok, "
			"failed (refused, wrong answer) or timeout");
	each_checked(p, bc, check_results, NULL);
}

/* Each backend's status and durations are looked up once, not once per
 * family. Returns MLV_OK or MLV_E_NOMEM. */
static enum mlv_err backend_health(struct mlv_metrics_page *p)
{
	const struct mlv_generation *gen = p->gen;
	struct backend_checks *bc;
	struct mlv_health_status hs;

	if (!p->st->health)
		return MLV_OK;
	bc = calloc(gen->n_all_backends ? gen->n_all_backends : 1,
		    sizeof(*bc));
	if (!bc)
		return MLV_E_NOMEM;
	for (uint32_t i = 0; i < gen->n_vips; i++) {
		const struct mlv_gen_vip *v = &gen->vips[i];

		for (uint32_t j = 0; j < v->n_backends; j++) {
			const struct mlv_gen_backend *b = &v->backends[j];
			struct backend_checks *c =
				&bc[mlv_gen_backend_index(gen, b)];

			if (mlv_health_get(p->st->health, v->name, b->name,
					   &hs) != MLV_OK ||
			    hs.type == MLV_HEALTH_NONE)
				continue;
			if (mlv_health_check_durations(p->st->health, v->name,
						       b->name, &c->d) != MLV_OK)
				continue;
			c->checked = true;
			c->up = hs.up;
		}
	}
	check_families(p, bc);
	free(bc);
	return MLV_OK;
}

/* ---- cumulative flow counters ---- */

static void flow_families(struct mlv_metrics_page *p,
			  const struct mlv_flow_counters *vc,
			  const struct mlv_flow_counters *bc)
{
	char name[MLV_METRICS_NAME_MAX], help[MLV_METRICS_HELP_MAX];
	struct mlv_expo_label l[2];

	for (int c = 0; c < MLV_FLOW__COUNT; c++) {
		const char *cn = mlv_flow_counter_name((enum mlv_flow_counter)c);
		const char *ch = mlv_flow_counter_help((enum mlv_flow_counter)c);

		snprintf(name, sizeof(name), "maglevd_vip_%s_total", cn);
		snprintf(help, sizeof(help), "%s, per VIP, summed over workers "
			 "and generations", ch);
		mlv_expo_family(p->f, name, MLV_EXPO_COUNTER, help);
		for (uint32_t i = 0; i < p->gen->n_vips; i++) {
			l[0] = (struct mlv_expo_label){ "vip", p->gen->vips[i].name };
			mlv_expo_sample_u64(p->f, name, l, 1, vc[i].v[c]);
		}
		if (!p->backend_series)
			continue;
		snprintf(name, sizeof(name), "maglevd_backend_%s_total", cn);
		snprintf(help, sizeof(help), "%s, per backend of a VIP, summed "
			 "over workers and generations", ch);
		mlv_expo_family(p->f, name, MLV_EXPO_COUNTER, help);
		for (uint32_t i = 0; i < p->gen->n_vips; i++) {
			const struct mlv_gen_vip *v = &p->gen->vips[i];

			for (uint32_t j = 0; j < v->n_backends; j++) {
				const struct mlv_gen_backend *b = &v->backends[j];

				backend_labels(v, b, l);
				mlv_expo_sample_u64(p->f, name, l, 2,
					bc[mlv_gen_backend_index(p->gen, b)].v[c]);
			}
		}
	}
}

/* Drops that belong to a VIP, one series per (VIP, reason). */
static void vip_drop_family(struct mlv_metrics_page *p,
			    const struct mlv_vip_drops *vd)
{
	static const char name[] = "maglevd_vip_dropped_packets_total";
	struct mlv_expo_label l[2];

	mlv_expo_family(p->f, name, MLV_EXPO_COUNTER,
			"frames addressed to the VIP and dropped, by reason "
			"(the reasons that belong to a VIP), summed over "
			"workers and generations");
	for (uint32_t i = 0; i < p->gen->n_vips; i++) {
		l[0] = (struct mlv_expo_label){ "vip", p->gen->vips[i].name };
		for (int r = 0; r < MLV_VDROP__COUNT; r++) {
			l[1] = (struct mlv_expo_label){ "reason",
				mlv_drop_reason_name(mlv_vip_drop_reason(
					(enum mlv_vip_drop)r)) };
			mlv_expo_sample_u64(p->f, name, l, 2, vd[i].v[r]);
		}
	}
}

/* Each VIP's and backend's totals are looked up once, not once per
 * family: a look-up walks every tracked generation. */
static enum mlv_err flow_counters(struct mlv_metrics_page *p)
{
	const struct mlv_generation *gen = p->gen;
	struct mlv_flow_counters *vc, *bc;
	struct mlv_vip_drops *vd;

	if (!p->st->stats)
		return MLV_OK;
	vc = calloc(gen->n_vips ? gen->n_vips : 1, sizeof(*vc));
	vd = calloc(gen->n_vips ? gen->n_vips : 1, sizeof(*vd));
	bc = calloc(gen->n_all_backends ? gen->n_all_backends : 1, sizeof(*bc));
	if (!vc || !vd || !bc) {
		free(vc);
		free(vd);
		free(bc);
		return MLV_E_NOMEM;
	}
	for (uint32_t i = 0; i < gen->n_vips; i++) {
		mlv_stats_vip(p->st->stats, gen, &gen->vips[i], &vc[i]);
		mlv_stats_vip_drops(p->st->stats, gen, &gen->vips[i], &vd[i]);
	}
	for (uint32_t i = 0; i < gen->n_all_backends; i++)
		mlv_stats_backend(p->st->stats, gen, &gen->all_backends[i], &bc[i]);
	flow_families(p, vc, bc);
	vip_drop_family(p, vd);
	free(vc);
	free(vd);
	free(bc);
	return MLV_OK;
}

static enum mlv_err backend_families(struct mlv_metrics_page *p);

enum mlv_err mlv_metrics_page_lb(struct mlv_metrics_page *p)
{
	enum mlv_err err;

	if (!p->gen)
		return MLV_OK;
	vip_info(p);
	vip_gauge(p, "maglevd_vip_table_slots",
		  "size M of the VIP's lookup table (a prime)", vip_table_size);
	vip_gauge(p, "maglevd_vip_backends",
		  "backends configured for the VIP", vip_backends);
	vip_gauge(p, "maglevd_vip_backends_usable",
		  "backends that can take new flows (up, not draining, "
		  "weight above 0)", vip_usable);
	vip_second_chance(p);
	vip_health(p);
	if (p->backend_series) {
		err = backend_families(p);
		if (err)
			return err;
	}
	return flow_counters(p);
}

/* Every family with a backend label but the flow counters (which
 * flow_counters writes with the VIPs'). */
static enum mlv_err backend_families(struct mlv_metrics_page *p)
{
	backend_info(p);
	backend_gauge(p, "maglevd_backend_up",
		      "1 if the backend is in service (healthy, or the VIP "
		      "fails open; draining counts), 0 if down", be_up);
	backend_gauge(p, "maglevd_backend_draining",
		      "1 if the backend takes no new flows but keeps its "
		      "established ones (config or runtime drain, weight 0)",
		      be_draining);
	backend_gauge(p, "maglevd_backend_weight",
		      "effective weight after runtime overrides and health",
		      be_weight);
	backend_gauge(p, "maglevd_backend_slots",
		      "lookup-table slots the backend owns", be_slots);
	backend_gauge(p, "maglevd_backend_active_connections",
		      "tracked established TCP, UDP and other flows on the "
		      "backend (IPVS ActiveConn); no reload resets it",
		      be_active);
	backend_gauge(p, "maglevd_backend_inactive_connections",
		      "tracked TCP flows on the backend that are opening or "
		      "closing (IPVS InActConn)", be_inactive);
	return backend_health(p);
}
