/* SPDX-License-Identifier: BSD-3-Clause */
/* The per-VIP and per-backend families of the /metrics page: identity
 * (info gauges), cumulative flow counters (control/generation/stats.h), and the
 * state of the current generation (weights, drain, slots, health). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "control/base/addr.h"
#include "control/metrics/page_internal.h"
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
	char addr[MLV_IP_STRLEN], port[8];
	struct mlv_expo_label l[5];

	mlv_expo_family(p->f, "maglevd_vip_info", MLV_EXPO_GAUGE,
			"a configured VIP; always 1, its identity is in the labels");
	for (uint32_t i = 0; i < gen->n_vips; i++) {
		const struct mlv_gen_vip *v = &gen->vips[i];

		snprintf(port, sizeof(port), "%u", (unsigned)ntohs(v->port_be));
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

/* The checks' own verdict, for pairs the engine actually checks. */
static void backend_check(struct mlv_metrics_page *p)
{
	struct mlv_health_status hs;
	struct mlv_expo_label l[2];

	if (!p->st->health)
		return;
	mlv_expo_family(p->f, "maglevd_backend_check_up", MLV_EXPO_GAUGE,
			"1 if the backend's health check passes, 0 if it "
			"fails; absent for health type none");
	for (uint32_t i = 0; i < p->gen->n_vips; i++) {
		const struct mlv_gen_vip *v = &p->gen->vips[i];

		for (uint32_t j = 0; j < v->n_backends; j++) {
			if (mlv_health_get(p->st->health, v->name,
					   v->backends[j].name, &hs) != MLV_OK ||
			    hs.type == MLV_HEALTH_NONE)
				continue;
			backend_labels(v, &v->backends[j], l);
			mlv_expo_sample_u64(p->f, "maglevd_backend_check_up", l, 2,
					    hs.up);
		}
	}
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

/* Each VIP's and backend's totals are looked up once, not once per
 * family: a look-up walks every tracked generation. */
static enum mlv_err flow_counters(struct mlv_metrics_page *p)
{
	const struct mlv_generation *gen = p->gen;
	struct mlv_flow_counters *vc, *bc;

	if (!p->st->stats)
		return MLV_OK;
	vc = calloc(gen->n_vips ? gen->n_vips : 1, sizeof(*vc));
	bc = calloc(gen->n_all_backends ? gen->n_all_backends : 1, sizeof(*bc));
	if (!vc || !bc) {
		free(vc);
		free(bc);
		return MLV_E_NOMEM;
	}
	for (uint32_t i = 0; i < gen->n_vips; i++)
		mlv_stats_vip(p->st->stats, gen, &gen->vips[i], &vc[i]);
	for (uint32_t i = 0; i < gen->n_all_backends; i++)
		mlv_stats_backend(p->st->stats, gen, &gen->all_backends[i], &bc[i]);
	flow_families(p, vc, bc);
	free(vc);
	free(bc);
	return MLV_OK;
}

enum mlv_err mlv_metrics_page_lb(struct mlv_metrics_page *p)
{
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
	vip_health(p);
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
	backend_check(p);
	return flow_counters(p);
}
