/* SPDX-License-Identifier: BSD-3-Clause */
#include "daemon/stats_file.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "control/base/file.h"
#include "control/tables/maglev.h"
#include "daemon/daemon.h"
#include "daemon/port_stats.h"

/* json_integer takes a signed 64-bit value: counters stay far below
 * 2^63, so the cast loses nothing in practice. */
static int set_u64(json_t *obj, const char *key, uint64_t v)
{
	return json_object_set_new(obj, key, json_integer((json_int_t)v));
}

static json_t *worker_counters_json(const struct mlv_worker_counters *c)
{
	json_t *obj = json_object();

	if (!obj)
		return NULL;
	for (int i = 0; i < MLV_CTR__COUNT; i++)
		if (set_u64(obj, mlv_worker_counter_name((enum mlv_worker_counter)i),
			    c->ctr[i])) {
			json_decref(obj);
			return NULL;
		}
	return obj;
}

static json_t *drops_json(const struct mlv_worker_counters *c)
{
	json_t *obj = json_object();
	uint64_t total = 0;

	if (!obj)
		return NULL;
	for (int i = 0; i < MLV_DROP__COUNT; i++) {
		total += c->drop[i];
		if (set_u64(obj, mlv_drop_reason_name((enum mlv_drop_reason)i),
			    c->drop[i]))
			goto fail;
	}
	if (set_u64(obj, "total", total))
		goto fail;
	return obj;
fail:
	json_decref(obj);
	return NULL;
}

static json_t *flow_json(const struct mlv_flow_counters *c)
{
	json_t *obj = json_object();

	if (!obj)
		return NULL;
	for (int i = 0; i < MLV_FLOW__COUNT; i++)
		if (set_u64(obj, mlv_flow_counter_name((enum mlv_flow_counter)i),
			    c->v[i])) {
			json_decref(obj);
			return NULL;
		}
	return obj;
}

static json_t *conntrack_json(const struct mlv_ct *ct)
{
	const struct mlv_ct_stats *s = mlv_ct_get_stats(ct);

	return json_pack("{s:I, s:I, s:I, s:I, s:I}",
			 "occupancy", (json_int_t)mlv_ct_occupancy(ct),
			 "capacity", (json_int_t)mlv_ct_capacity(ct),
			 "inserts", (json_int_t)s->inserts,
			 "evictions", (json_int_t)s->evictions,
			 "expired_reused", (json_int_t)s->expired_reused);
}

static json_t *workers_json(const struct mlv_daemon *d,
			    struct mlv_worker_counters *sum, json_t **ct_sum)
{
	const struct mlv_worker_counters *blocks[MLV_MAX_WORKERS];
	uint64_t occ = 0, cap = 0, ev = 0;
	json_t *arr = json_array();

	if (!arr)
		return NULL;
	for (uint32_t i = 0; i < d->n_workers; i++) {
		const struct mlv_worker *w = d->workers[i];
		json_t *o;

		blocks[i] = w ? &w->ctr : NULL;
		if (!w)
			continue;
		occ += mlv_ct_occupancy(w->ct);
		cap += mlv_ct_capacity(w->ct);
		ev += mlv_ct_get_stats(w->ct)->evictions;
		o = json_pack("{s:I, s:I, s:o*, s:o*, s:o*}",
			      "id", (json_int_t)i,
			      "lcore", (json_int_t)w->lcore,
			      "counters", worker_counters_json(&w->ctr),
			      "drops", drops_json(&w->ctr),
			      "conntrack", conntrack_json(w->ct));
		if (!o || json_array_append_new(arr, o))
			goto fail;
	}
	mlv_stats_workers(blocks, d->n_workers, sum);
	*ct_sum = json_pack("{s:I, s:I, s:I}", "occupancy", (json_int_t)occ,
			    "capacity", (json_int_t)cap,
			    "evictions", (json_int_t)ev);
	if (!*ct_sum)
		goto fail;
	return arr;
fail:
	json_decref(arr);
	return NULL;
}

static json_t *backend_json(const struct mlv_daemon *d,
			    const struct mlv_generation *gen,
			    const struct mlv_gen_backend *b)
{
	struct mlv_flow_counters c;
	char addr[MLV_IP_STRLEN];

	mlv_stats_backend(d->stats, gen, b, &c);
	return json_pack("{s:s, s:s, s:I, s:b, s:b, s:o*}",
			 "name", b->name,
			 "address", mlv_ip_format(&b->address, addr, sizeof(addr)),
			 "weight", (json_int_t)b->weight,
			 "usable", b->usable,
			 "draining", b->draining,
			 "counters", flow_json(&c));
}

static json_t *vip_json(const struct mlv_daemon *d,
			const struct mlv_generation *gen,
			const struct mlv_gen_vip *v)
{
	struct mlv_flow_counters c;
	struct mlv_ip ip = { .family = v->family };
	char addr[MLV_IP_STRLEN], fp[19], ports[16];
	json_t *backends = json_array(), *o;

	if (!backends)
		return NULL;
	for (uint32_t i = 0; i < v->n_backends; i++) {
		o = backend_json(d, gen, &v->backends[i]);
		if (!o || json_array_append_new(backends, o)) {
			json_decref(backends);
			return NULL;
		}
	}
	memcpy(ip.bytes, v->address, sizeof(ip.bytes));
	/* 64 bits do not survive a JSON number (IEEE doubles): hex text */
	snprintf(fp, sizeof(fp), "0x%016llx", (unsigned long long)v->fingerprint);
	mlv_stats_vip(d->stats, gen, v, &c);
	return json_pack("{s:s, s:s, s:i, s:s, s:s, s:s, s:I, s:s, s:I, s:I, s:I, s:o*, s:o}",
			 "name", v->name,
			 "address", mlv_ip_format(&ip, addr, sizeof(addr)),
			 "port", (int)ntohs(v->port_be),
			 "ports", mlv_vip_port_format(ntohs(v->port_be),
						      v->port_last, ports,
						      sizeof(ports)),
			 "protocol", mlv_proto_name(v->protocol),
			 "forwarding", mlv_forwarding_name(v->forwarding),
			 "table_size", (json_int_t)v->table_size,
			 "fingerprint", fp,
			 "usable_backends", (json_int_t)v->n_usable,
			 "mtu_room", (json_int_t)v->mtu_room,
			 "mss_clamp", (json_int_t)v->mss_clamp,
			 "counters", flow_json(&c),
			 "backends", backends);
}

static json_t *vips_json(const struct mlv_daemon *d,
			 const struct mlv_generation *gen)
{
	json_t *arr = json_array(), *o;

	if (!arr || !gen)
		return arr;
	for (uint32_t i = 0; i < gen->n_vips; i++) {
		o = vip_json(d, gen, &gen->vips[i]);
		if (!o || json_array_append_new(arr, o)) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static json_t *publishes_json(const struct mlv_publish_record *r,
			      uint32_t pending)
{
	json_t *count = json_object();

	for (int i = 0; count && i < MLV_PUBLISH__COUNT; i++)
		if (set_u64(count, mlv_publish_reason_name((enum mlv_publish_reason)i),
			    r->count[i])) {
			json_decref(count);
			count = NULL;
		}
	return json_pack("{s:o, s:I, s:{s:I, s:s, s:I, s:I, s:f}}",
			 "count", count,
			 "pending", (json_int_t)pending,
			 "last",
			 "generation", (json_int_t)r->generation,
			 "reason", mlv_publish_reason_name(r->reason),
			 "vips", (json_int_t)r->vips,
			 "tables_reused", (json_int_t)r->tables_reused,
			 "build_ms", (double)r->build_us / 1000.0);
}

static json_t *health_json(const struct mlv_health *h)
{
	struct mlv_health_stats s;
	json_t *ctr;

	if (!h)
		return json_null();
	mlv_health_stats(h, &s);
	ctr = json_object();
	for (int i = 0; ctr && i < MLV_HEALTH_CTR__COUNT; i++)
		if (set_u64(ctr, mlv_health_counter_name((enum mlv_health_counter)i),
			    s.counters[i])) {
			json_decref(ctr);
			ctr = NULL;
		}
	return json_pack("{s:I, s:I, s:I, s:o}", "pairs", (json_int_t)s.n_pairs,
			 "probes", (json_int_t)s.n_probes,
			 "in_flight", (json_int_t)s.in_flight, "counters", ctr);
}

/* Ports whose next hop comes from the kernel (next_hop: auto): one
 * entry per port and family that has a route. */
static json_t *next_hops_json(const struct mlv_daemon *d)
{
	const struct mlv_next_hops *nh = &d->next_hops;
	json_t *arr = json_array();

	for (uint32_t i = 0; arr && d->cfg && i < nh->n_ports; i++) {
		const struct mlv_next_hop_port *p = &nh->port[i];

		for (int k = 0; arr && p->wanted && k < 2; k++) {
			const struct mlv_next_hop_via *f = &p->fam[k];
			char ip[MLV_IP_STRLEN], mac[MLV_MAC_STRLEN];
			struct mlv_mac m;

			if (!f->have_via && (k == 1 || p->fam[1].have_via))
				continue;   /* IPv4 listed even unrouted */
			memcpy(m.bytes, f->mac, 6);
			if (json_array_append_new(arr, json_pack(
					"{s:s, s:i, s:i, s:s?, s:s?}",
					"port", d->cfg->ports[i].name,
					"family", k ? 6 : 4,
					"ifindex", p->ifindex,
					"via", f->have_via ?
					mlv_ip_format(&f->via, ip, sizeof(ip)) :
					NULL,
					"mac", f->resolved ?
					mlv_mac_format(&m, mac, sizeof(mac)) :
					NULL))) {
				json_decref(arr);
				arr = NULL;
			}
		}
	}
	return arr;
}

/* l2dsr backends without 'mac': address -> the MAC the kernel's
 * neighbour table gave, or null while unresolved. */
static json_t *l2dsr_macs_json(const struct mlv_next_hops *nh)
{
	json_t *obj = json_object();

	for (size_t i = 0; obj && i < nh->n_backends; i++) {
		const struct mlv_next_hop_backend *b = &nh->backends[i];
		char ip[MLV_IP_STRLEN], mac[MLV_MAC_STRLEN];
		struct mlv_mac m;

		memcpy(m.bytes, b->mac, 6);
		if (json_object_set_new(obj, mlv_ip_format(&b->addr, ip, sizeof(ip)),
				b->resolved ? json_string(mlv_mac_format(
					&m, mac, sizeof(mac))) : json_null())) {
			json_decref(obj);
			obj = NULL;
		}
	}
	return obj;
}

/* The ports' NIC counters with every extended statistic. */
static json_t *ports_json(struct mlv_daemon *d)
{
	const struct mlv_port_stats *ps = NULL;
	uint32_t n;

	if (!d->cfg)
		return json_array();
	n = mlv_daemon_port_stats(d, &ps);
	return mlv_port_stats_array(ps, n, true);
}

json_t *mlv_stats_json(struct mlv_daemon *d, bool final)
{
	const struct mlv_generation *gen =
		d->pub ? mlv_publish_current(d->pub) : NULL;
	struct mlv_worker_counters sum;
	struct timespec now, wall;
	json_t *ct_sum = NULL, *workers, *doc;
	double uptime;

	memset(&sum, 0, sizeof(sum));
	clock_gettime(CLOCK_MONOTONIC, &now);
	clock_gettime(CLOCK_REALTIME, &wall);
	uptime = (double)(now.tv_sec - d->started.tv_sec) +
		 (double)(now.tv_nsec - d->started.tv_nsec) / 1e9;
	workers = workers_json(d, &sum, &ct_sum);
	if (!workers)
		return NULL;
	doc = json_pack("{s:s, s:i, s:b, s:f, s:f, s:I, s:s, s:{s:I, s:I},"
			 " s:I, s:o, s:{s:o*, s:o*, s:o}, s:o*, s:o*, s:o*,"
			 " s:o*, s:o*, s:o*}",
			 "version", MLV_VERSION,
			 "pid", (int)getpid(),
			 "final", final,
			 "time", (double)wall.tv_sec + (double)wall.tv_nsec / 1e9,
			 "uptime_s", uptime,
			 "generation", (json_int_t)d->generation,
			 "config", d->cfg && d->cfg->path ? d->cfg->path : "",
			 "reloads", "ok", (json_int_t)d->reloads_ok,
			 "failed", (json_int_t)d->reloads_failed,
			 "n_workers", (json_int_t)d->n_workers,
			 "workers", workers,
			 "totals",
			 "counters", worker_counters_json(&sum),
			 "drops", drops_json(&sum),
			 "conntrack", ct_sum,
			 "vips", vips_json(d, gen),
			 "publishes", publishes_json(&d->last_publish, d->pub ?
						      mlv_publish_pending(d->pub) : 0),
			 "health", health_json(d->health),
			 "xdp_steer", mlv_steering_json(&d->steering),
			 "next_hops", next_hops_json(d),
			 "l2dsr_macs", l2dsr_macs_json(&d->next_hops));
	if (doc && json_object_set_new(doc, "ports", ports_json(d))) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

enum mlv_err mlv_stats_file_write(const char *path, const json_t *doc,
				  char *why, size_t why_len)
{
	char *text = json_dumps(doc, JSON_INDENT(1) | JSON_SORT_KEYS);
	enum mlv_err err;

	if (!text) {
		snprintf(why, why_len, "out of memory");
		return MLV_E_NOMEM;
	}
	/* readable by all, like `maglevctl stats` is to the socket's group:
	 * monitoring agents read it without privileges */
	err = mlv_file_replace(path, text, strlen(text), 0644, 0, why, why_len);
	free(text);
	return err;
}
