/* SPDX-License-Identifier: BSD-3-Clause */
/* Generation builder: VIP look-up, uid stability, drain/health, weights,
 * transmit slots and templates, tables against a direct Maglev build. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "control/config/config.h"
#include "control/generation/generation.h"
#include "control/tables/maglev.h"
#include "dataplane/packet/encap.h"

#define FX_MAX_VIPS 1100
#define FX_MAX_BE 8
#define FX_TABLE 251

/* A hand-built config: tests control every field the builder reads. */
struct fx {
	struct mlv_config cfg;
	struct mlv_port_config ports[MLV_MAX_PORTS];
	struct mlv_gen_port_info info[MLV_MAX_PORTS];
	struct mlv_vip_config *vips;
	struct mlv_backend_config (*be)[FX_MAX_BE];
};

static struct mlv_ip ip(const char *text)
{
	struct mlv_ip a;

	assert_true(mlv_ip_parse(text, &a));
	return a;
}

static struct fx *fx_new(void)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->vips = calloc(FX_MAX_VIPS, sizeof(*f->vips));
	f->be = calloc(FX_MAX_VIPS, sizeof(*f->be));
	assert_non_null(f->vips);
	assert_non_null(f->be);
	f->cfg.ports = f->ports;
	f->cfg.vips = f->vips;
	f->cfg.workers = 2;
	return f;
}

static void fx_free(struct fx *f)
{
	free(f->vips);
	free(f->be);
	free(f);
}

/* Port n gets MAC 02:00:00:00:00:n and next hop 02:00:00:00:01:n. The
 * daemon-side info leaves mtu and addresses unset: the config's apply. */
static struct mlv_port_config *fx_port(struct fx *f, const char *name,
				       const char *a4, const char *a6,
				       const char *tx_port, uint16_t mtu)
{
	uint32_t n = f->cfg.n_ports++;
	struct mlv_port_config *p = &f->ports[n];
	struct mlv_gen_port_info *pi = &f->info[n];

	snprintf(p->name, sizeof(p->name), "%s", name);
	if (a4)
		p->address = ip(a4);
	if (a6)
		p->address6 = ip(a6);
	snprintf(p->tx_port, sizeof(p->tx_port), "%s", tx_port ? tx_port : "");
	p->mtu = mtu;
	memcpy(pi->mac, (uint8_t[]){ 2, 0, 0, 0, 0, (uint8_t)n }, 6);
	memcpy(pi->next_hop, (uint8_t[]){ 2, 0, 0, 0, 1, (uint8_t)n }, 6);
	return p;
}

static struct mlv_vip_config *fx_vip(struct fx *f, const char *name,
				     const char *addr, uint16_t port,
				     uint8_t proto, enum mlv_forwarding fwd)
{
	uint32_t n = f->cfg.n_vips++;
	struct mlv_vip_config *v = &f->vips[n];

	assert_true(n < FX_MAX_VIPS);
	snprintf(v->name, sizeof(v->name), "%s", name);
	v->address = ip(addr);
	v->port = port;
	v->protocol = proto;
	v->forwarding = fwd;
	v->gue_port = 6080;
	v->table_size = FX_TABLE;
	v->backends = f->be[n];
	return v;
}

static struct mlv_backend_config *fx_backend(struct mlv_vip_config *v,
					     const char *name, const char *addr,
					     uint32_t weight)
{
	struct mlv_backend_config *b = &v->backends[v->n_backends++];

	assert_true(v->n_backends <= FX_MAX_BE);
	snprintf(b->name, sizeof(b->name), "%s", name);
	b->address = ip(addr);
	b->weight = weight;
	b->state = MLV_BACKEND_ACTIVE;
	return b;
}

/* One-arm port plus the default set of VIPs most tests use. */
static struct fx *fx_basic(void)
{
	struct fx *f = fx_new();
	struct mlv_vip_config *v;

	fx_port(f, "ext", "10.99.0.1", "fd00:99::1", NULL, 1500);
	v = fx_vip(f, "web", "192.0.2.10", 80, IPPROTO_TCP, MLV_FWD_IPIP);
	fx_backend(v, "web-2", "10.99.1.12", 100);
	fx_backend(v, "web-1", "10.99.1.11", 100);
	v = fx_vip(f, "dns", "2001:db8::53", 53, IPPROTO_UDP, MLV_FWD_GUE);
	fx_backend(v, "dns-1", "fd00:99:1::21", 100);
	return f;
}

static struct mlv_generation *build(struct fx *f,
				    const struct mlv_generation *prev,
				    mlv_gen_state_fn state, void *ctx)
{
	struct mlv_generation *g = NULL;
	enum mlv_err err = mlv_gen_build(&f->cfg, f->info, 2,
					 prev ? prev->number + 1 : 1,
					 state, ctx, prev, &g);

	assert_int_equal(err, MLV_OK);
	assert_non_null(g);
	return g;
}

static const struct mlv_gen_vip *vip_named(const struct mlv_generation *g,
					   const char *name)
{
	for (uint32_t i = 0; i < g->n_vips; i++)
		if (strcmp(g->vips[i].name, name) == 0)
			return &g->vips[i];
	return NULL;
}

static const struct mlv_gen_backend *backend_named(const struct mlv_gen_vip *v,
						   const char *name)
{
	for (uint32_t i = 0; v && i < v->n_backends; i++)
		if (strcmp(v->backends[i].name, name) == 0)
			return &v->backends[i];
	return NULL;
}

static struct mlv_flow_key key_for(const char *dst, uint16_t dport,
				   uint8_t proto)
{
	struct mlv_flow_key k;
	struct mlv_ip a = ip(dst);

	memset(&k, 0, sizeof(k));
	memcpy(k.dst, a.bytes, sizeof(k.dst));
	k.family = a.family;
	k.dport = htons(dport);
	k.sport = htons(40000);
	k.proto = proto;
	return k;
}

static const char *find_name(const struct mlv_generation *g, const char *dst,
			     uint16_t dport, uint8_t proto, bool any_port)
{
	struct mlv_flow_key k = key_for(dst, dport, proto);
	const struct mlv_gen_vip *v = mlv_gen_find_vip(g, &k, any_port);

	return v ? v->name : NULL;
}

static uint32_t slots_of(const struct mlv_gen_vip *v, uint16_t index)
{
	uint32_t n = 0;

	for (uint32_t s = 0; s < v->table_size; s++)
		n += v->table[s] == index;
	return n;
}

/* ---- VIP look-up ---- */

static void test_find_vip(void **state)
{
	struct fx *f = fx_new();
	struct mlv_generation *g;
	struct mlv_flow_key k;

	(void)state;
	fx_port(f, "ext", "10.99.0.1", "fd00:99::1", NULL, 1500);
	/* Listed highest port first so "lowest port" is not "first listed". */
	fx_vip(f, "web-tls", "192.0.2.10", 443, IPPROTO_TCP, MLV_FWD_IPIP);
	fx_vip(f, "web", "192.0.2.10", 80, IPPROTO_TCP, MLV_FWD_IPIP);
	fx_vip(f, "web-alt", "192.0.2.10", 8080, IPPROTO_TCP, MLV_FWD_IPIP);
	fx_vip(f, "dns4", "192.0.2.10", 53, IPPROTO_UDP, MLV_FWD_IPIP);
	fx_vip(f, "dns6", "2001:db8::53", 53, IPPROTO_UDP, MLV_FWD_IPIP);
	fx_vip(f, "web6", "2001:db8::80", 80, IPPROTO_TCP, MLV_FWD_IPIP);
	g = build(f, NULL, NULL, NULL);

	assert_string_equal(find_name(g, "192.0.2.10", 80, IPPROTO_TCP, false), "web");
	assert_string_equal(find_name(g, "192.0.2.10", 443, IPPROTO_TCP, false), "web-tls");
	assert_string_equal(find_name(g, "192.0.2.10", 53, IPPROTO_UDP, false), "dns4");
	assert_string_equal(find_name(g, "2001:db8::53", 53, IPPROTO_UDP, false), "dns6");
	assert_string_equal(find_name(g, "2001:db8::80", 80, IPPROTO_TCP, false), "web6");

	/* Port, protocol and address mismatches. */
	assert_null(find_name(g, "192.0.2.10", 81, IPPROTO_TCP, false));
	assert_null(find_name(g, "192.0.2.10", 80, IPPROTO_UDP, false));
	assert_null(find_name(g, "192.0.2.11", 80, IPPROTO_TCP, false));
	assert_null(find_name(g, "2001:db8::53", 53, IPPROTO_TCP, false));
	assert_null(find_name(g, "2001:db8::54", 53, IPPROTO_UDP, false));

	/* The same four bytes as an IPv6 address are another address. */
	k = key_for("192.0.2.10", 80, IPPROTO_TCP);
	k.family = MLV_AF_INET6;
	assert_null(mlv_gen_find_vip(g, &k, false));

	/* Fragments / ICMP errors: any port on the address -> lowest port. */
	assert_string_equal(find_name(g, "192.0.2.10", 0, IPPROTO_TCP, true), "web");
	assert_string_equal(find_name(g, "192.0.2.10", 9999, IPPROTO_TCP, true), "web");
	assert_string_equal(find_name(g, "192.0.2.10", 0, IPPROTO_UDP, true), "dns4");
	assert_string_equal(find_name(g, "2001:db8::80", 0, IPPROTO_TCP, true), "web6");
	assert_null(find_name(g, "192.0.2.10", 0, IPPROTO_TCP, false));
	assert_null(find_name(g, "192.0.2.12", 0, IPPROTO_TCP, true));
	assert_null(find_name(g, "2001:db8::80", 0, IPPROTO_UDP, true));

	mlv_gen_free(g);
	fx_free(f);
}

/* Many VIPs: every one is found by its own key, neighbours are not. */
static void test_find_vip_many(void **state)
{
	struct fx *f = fx_new();
	struct mlv_generation *g;
	char name[32], addr[64];

	(void)state;
	fx_port(f, "ext", "10.99.0.1", "fd00:99::1", NULL, 1500);
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "v%d", i);
		if (i % 2)
			snprintf(addr, sizeof(addr), "10.%d.%d.1", i / 256, i % 256);
		else
			snprintf(addr, sizeof(addr), "2001:db8::%x", i);
		fx_vip(f, name, addr, (uint16_t)(1000 + i), IPPROTO_TCP, MLV_FWD_IPIP);
	}
	g = build(f, NULL, NULL, NULL);
	assert_int_equal(g->n_vips, 1000);
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "v%d", i);
		if (i % 2)
			snprintf(addr, sizeof(addr), "10.%d.%d.1", i / 256, i % 256);
		else
			snprintf(addr, sizeof(addr), "2001:db8::%x", i);
		assert_string_equal(find_name(g, addr, (uint16_t)(1000 + i),
					      IPPROTO_TCP, false), name);
		assert_string_equal(find_name(g, addr, 0, IPPROTO_TCP, true), name);
		assert_null(find_name(g, addr, (uint16_t)(1001 + i), IPPROTO_TCP, false));
	}
	mlv_gen_free(g);
	fx_free(f);
}

/* ---- uids ---- */

static bool uid_seen(const uint32_t *seen, uint32_t n, uint32_t uid)
{
	for (uint32_t i = 0; i < n; i++)
		if (seen[i] == uid)
			return true;
	return false;
}

static void test_uid_stability(void **state)
{
	struct fx *f = fx_basic();
	struct mlv_generation *g1, *g2, *g3, *g4, *g5, *g6;
	const struct mlv_gen_vip *web1, *web3, *web4, *dns6;
	uint32_t seen[64], n_seen = 0;
	struct mlv_vip_config *web = &f->vips[0];
	struct mlv_backend_config removed;

	(void)state;
	g1 = build(f, NULL, NULL, NULL);
	for (uint32_t v = 0; v < g1->n_vips; v++) {
		assert_false(uid_seen(seen, n_seen, g1->vips[v].uid));
		seen[n_seen++] = g1->vips[v].uid;
	}
	for (uint32_t b = 0; b < g1->n_all_backends; b++) {
		assert_false(uid_seen(seen, n_seen, g1->all_backends[b].uid));
		seen[n_seen++] = g1->all_backends[b].uid;
	}

	/* The same config again: every uid carries over. */
	g2 = build(f, g1, NULL, NULL);
	for (uint32_t v = 0; v < g1->n_vips; v++)
		assert_int_equal(g2->vips[v].uid, g1->vips[v].uid);
	for (uint32_t b = 0; b < g1->n_all_backends; b++)
		assert_int_equal(g2->all_backends[b].uid, g1->all_backends[b].uid);

	/* Remove web-1 (config order: web-2, web-1): web-2 keeps its uid. */
	removed = web->backends[1];
	web->n_backends = 1;
	g3 = build(f, g2, NULL, NULL);
	web1 = vip_named(g1, "web");
	web3 = vip_named(g3, "web");
	assert_int_equal(web3->uid, web1->uid);
	assert_int_equal(web3->n_backends, 1);
	assert_int_equal(backend_named(web3, "web-2")->uid,
			 backend_named(web1, "web-2")->uid);

	/* Re-added: a fresh uid, never used before. */
	web->backends[1] = removed;
	web->n_backends = 2;
	g4 = build(f, g3, NULL, NULL);
	web4 = vip_named(g4, "web");
	assert_int_equal(backend_named(web4, "web-2")->uid,
			 backend_named(web1, "web-2")->uid);
	assert_false(uid_seen(seen, n_seen, backend_named(web4, "web-1")->uid));
	seen[n_seen++] = backend_named(web4, "web-1")->uid;

	/* A VIP removed and re-added, and a backend name reused in another
	 * VIP: new identities (a uid is per VIP and backend name pair). */
	f->cfg.n_vips = 1;
	g5 = build(f, g4, NULL, NULL);
	assert_null(vip_named(g5, "dns"));
	f->cfg.n_vips = 2;
	fx_backend(&f->vips[1], "web-1", "fd00:99:1::22", 100);
	g6 = build(f, g5, NULL, NULL);
	dns6 = vip_named(g6, "dns");
	assert_false(uid_seen(seen, n_seen, dns6->uid));
	assert_false(uid_seen(seen, n_seen, backend_named(dns6, "dns-1")->uid));
	assert_false(uid_seen(seen, n_seen, backend_named(dns6, "web-1")->uid));
	assert_int_not_equal(backend_named(dns6, "web-1")->uid,
			     backend_named(vip_named(g6, "web"), "web-1")->uid);
	assert_int_equal(backend_named(vip_named(g6, "web"), "web-1")->uid,
			 backend_named(web4, "web-1")->uid);

	mlv_gen_free(g6);
	mlv_gen_free(g5);
	mlv_gen_free(g1);
	mlv_gen_free(g2);
	mlv_gen_free(g3);
	mlv_gen_free(g4);
	fx_free(f);
}

/* ---- drain, health, overrides ---- */

struct state_table {
	const char *backend;
	struct mlv_gen_backend_state st;
};

static void state_cb(const struct mlv_gen_pair *pair,
		     struct mlv_gen_backend_state *out, void *ctx)
{
	const struct state_table *t = ctx;

	for (; t->backend; t++)
		if (strcmp(t->backend, pair->backend) == 0)
			*out = t->st;
}

static void test_drain_and_health(void **state)
{
	struct fx *f = fx_new();
	struct mlv_vip_config *v;
	struct mlv_generation *g;
	const struct mlv_gen_vip *gv;
	struct state_table states[] = {
		{ "e-rt-drain", { .healthy = true, .drain_override = true } },
		{ "f-down", { .healthy = false } },
		{ NULL, { .healthy = true } },
	};
	struct {
		const char *name;
		bool usable, draining;
	} want[] = {
		{ "a-up", true, false },
		{ "b-up", true, false },
		{ "c-cfg-drain", true, true },
		{ "d-weight0", true, true },
		{ "e-rt-drain", true, true },
		{ "f-down", false, false },
	};

	(void)state;
	fx_port(f, "ext", "10.99.0.1", NULL, NULL, 1500);
	v = fx_vip(f, "web", "192.0.2.10", 80, IPPROTO_TCP, MLV_FWD_IPIP);
	fx_backend(v, "f-down", "10.99.1.16", 100);
	fx_backend(v, "a-up", "10.99.1.11", 100);
	fx_backend(v, "d-weight0", "10.99.1.14", 0);
	fx_backend(v, "c-cfg-drain", "10.99.1.13", 100)->state = MLV_BACKEND_DRAIN;
	fx_backend(v, "e-rt-drain", "10.99.1.15", 100);
	fx_backend(v, "b-up", "10.99.1.12", 100);
	g = build(f, NULL, state_cb, states);
	gv = &g->vips[0];

	assert_int_equal(gv->n_backends, 6);
	assert_int_equal(gv->n_usable, 2);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct mlv_gen_backend *b = &gv->backends[i];

		/* name order, whatever the config order */
		assert_string_equal(b->name, want[i].name);
		assert_int_equal(b->index, i);
		assert_int_equal(b->usable, want[i].usable);
		assert_int_equal(b->draining, want[i].draining);
		if (i >= 2) {
			assert_int_equal(b->weight, 0);
			assert_int_equal(slots_of(gv, (uint16_t)i), 0);
		} else {
			assert_int_equal(b->weight, 100);
			assert_true(slots_of(gv, (uint16_t)i) > 0);
		}
		assert_ptr_equal(mlv_gen_find_backend(g, gv, b->uid), b);
	}
	assert_int_equal(slots_of(gv, 0) + slots_of(gv, 1), gv->table_size);

	mlv_gen_free(g);
	fx_free(f);
}

/* The state callback learns each pair's place in the config, not in the
 * name-sorted generation, and is asked about every pair exactly once. */
struct position_log {
	const struct mlv_config *cfg;
	uint32_t asked[FX_MAX_VIPS][FX_MAX_BE];
};

static void position_cb(const struct mlv_gen_pair *pair,
			struct mlv_gen_backend_state *out, void *ctx)
{
	struct position_log *log = ctx;
	const struct mlv_vip_config *vc;

	(void)out;
	assert_true(pair->vip_index < log->cfg->n_vips);
	vc = &log->cfg->vips[pair->vip_index];
	assert_true(pair->backend_index < vc->n_backends);
	assert_string_equal(vc->name, pair->vip);
	assert_string_equal(vc->backends[pair->backend_index].name,
			    pair->backend);
	log->asked[pair->vip_index][pair->backend_index]++;
}

static void test_state_positions(void **state)
{
	struct fx *f = fx_basic();   /* web lists web-2 before web-1 */
	struct position_log log = { .cfg = &f->cfg };
	struct mlv_generation *g;

	(void)state;
	g = build(f, NULL, position_cb, &log);
	for (uint32_t v = 0; v < f->cfg.n_vips; v++)
		for (uint32_t i = 0; i < f->cfg.vips[v].n_backends; i++)
			assert_int_equal(log.asked[v][i], 1);
	assert_string_equal(vip_named(g, "web")->backends[0].name, "web-1");
	mlv_gen_free(g);
	fx_free(f);
}

/* No backend can take new flows: every slot says "no backend". */
static void test_all_down(void **state)
{
	struct fx *f = fx_basic();
	struct state_table states[] = {
		{ "web-1", { .healthy = false } },
		{ NULL, { .healthy = true } },
	};
	struct mlv_generation *g;
	const struct mlv_gen_vip *web;

	(void)state;
	f->vips[0].backends[0].state = MLV_BACKEND_DRAIN; /* web-2 */
	g = build(f, NULL, state_cb, states);
	web = vip_named(g, "web");
	assert_int_equal(web->n_usable, 0);
	assert_true(backend_named(web, "web-2")->usable);
	assert_false(backend_named(web, "web-1")->usable);
	assert_int_equal(slots_of(web, MLV_MAGLEV_NO_BACKEND), web->table_size);
	mlv_gen_free(g);
	fx_free(f);
}

static void direct_table(const struct mlv_gen_vip *gv, const char *const *names,
			 const uint32_t *weights, uint32_t n, uint16_t *slots,
			 uint64_t *fp)
{
	struct mlv_maglev_backend mb[FX_MAX_BE];

	for (uint32_t i = 0; i < n; i++) {
		mb[i].name = names[i];
		mb[i].weight = weights[i];
	}
	assert_int_equal(mlv_maglev_build(mb, n, gv->table_size, slots, fp), MLV_OK);
}

static void test_weight_override_and_direct_table(void **state)
{
	struct fx *f = fx_new();
	struct mlv_vip_config *v;
	struct mlv_generation *g;
	const struct mlv_gen_vip *gv;
	struct state_table states[] = {
		{ "beta", { .healthy = true, .has_weight_override = true,
			    .weight_override = 300 } },
		{ NULL, { .healthy = true } },
	};
	/* What the builder must feed Maglev: name order, effective weights. */
	const char *names[] = { "alpha", "beta", "gamma" };
	const uint32_t weights[] = { 100, 300, 50 };
	uint16_t direct[FX_TABLE];
	uint64_t fp;

	(void)state;
	fx_port(f, "ext", "10.99.0.1", NULL, NULL, 1500);
	v = fx_vip(f, "web", "192.0.2.10", 80, IPPROTO_TCP, MLV_FWD_IPIP);
	fx_backend(v, "gamma", "10.99.1.13", 50);
	fx_backend(v, "beta", "10.99.1.12", 100);
	fx_backend(v, "alpha", "10.99.1.11", 100);
	g = build(f, NULL, state_cb, states);
	gv = &g->vips[0];

	assert_int_equal(backend_named(gv, "beta")->weight, 300);
	assert_int_equal(backend_named(gv, "alpha")->weight, 100);
	direct_table(gv, names, weights, 3, direct, &fp);
	assert_memory_equal(gv->table, direct, sizeof(direct));
	assert_true(gv->fingerprint == fp);
	/* beta's override makes it the largest owner (3:1 against alpha). */
	assert_true(slots_of(gv, 1) > 2 * slots_of(gv, 0));

	mlv_gen_free(g);
	fx_free(f);
}

/* Unchanged VIPs keep their table; a changed one is rebuilt correctly. */
static void test_table_reuse(void **state)
{
	struct fx *f = fx_basic();
	struct mlv_generation *g1, *g2, *g3, *g4;
	struct state_table drained[] = {
		{ "dns-1", { .healthy = true, .drain_override = true } },
		{ NULL, { .healthy = true } },
	};
	const char *names[] = { "web-1", "web-2" };
	const uint32_t weights[] = { 100, 40 };
	uint16_t direct[FX_TABLE];
	uint64_t fp;

	(void)state;
	g1 = build(f, NULL, NULL, NULL);
	assert_int_equal(g1->n_tables_reused, 0);
	g2 = build(f, g1, NULL, NULL);
	assert_int_equal(g2->n_tables_reused, 2);
	for (uint32_t v = 0; v < 2; v++) {
		/* shared by reference, not copied */
		assert_ptr_equal(g2->vips[v].table, g1->vips[v].table);
		assert_ptr_equal(g2->vips[v].second, g1->vips[v].second);
		assert_true(g2->vips[v].fingerprint == g1->vips[v].fingerprint);
	}

	/* web-2's weight changes: only web is rebuilt, to the right table. */
	f->vips[0].backends[0].weight = 40; /* web-2, config order */
	g3 = build(f, g2, NULL, NULL);
	assert_int_equal(g3->n_tables_reused, 1);
	direct_table(vip_named(g3, "web"), names, weights, 2, direct, &fp);
	assert_memory_equal(vip_named(g3, "web")->table, direct, sizeof(direct));
	assert_true(vip_named(g3, "web")->fingerprint == fp);
	assert_true(fp != vip_named(g2, "web")->fingerprint);

	/* Runtime state counts too: dns-1 drained at runtime empties dns. */
	g4 = build(f, g3, state_cb, drained);
	assert_int_equal(g4->n_tables_reused, 1);
	assert_int_equal(slots_of(vip_named(g4, "dns"), MLV_MAGLEV_NO_BACKEND),
			 FX_TABLE);

	mlv_gen_free(g1);
	mlv_gen_free(g2);
	mlv_gen_free(g3);
	mlv_gen_free(g4);
	fx_free(f);
}

/* How a build got each VIP's table accounts for every VIP. */
static void assert_table_counts(const struct mlv_generation *g,
				uint32_t built, uint32_t shared, uint32_t reused)
{
	assert_int_equal(g->n_tables_built, built);
	assert_int_equal(g->n_tables_shared, shared);
	assert_int_equal(g->n_tables_reused, reused);
	assert_int_equal(built + shared + reused, g->n_vips);
}

/* VIPs over the same backend pool (one service on several ports) share
 * one table; a different weight is a different table. */
static void test_table_shared_between_vips(void **state)
{
	struct fx *f = fx_basic();
	struct mlv_vip_config *v;
	struct mlv_generation *g, *g2, *g3;
	const struct mlv_gen_vip *web, *tls, *alt;
	const char *names[] = { "web-1", "web-2" };
	const uint32_t weights[] = { 100, 100 };
	uint16_t direct[FX_TABLE];
	uint64_t fp;

	(void)state;
	/* same names and weights as web, other addresses and config order */
	v = fx_vip(f, "web-tls", "192.0.2.10", 443, IPPROTO_TCP, MLV_FWD_IPIP);
	fx_backend(v, "web-1", "10.99.2.11", 100);
	fx_backend(v, "web-2", "10.99.2.12", 100);
	v = fx_vip(f, "web-alt", "192.0.2.10", 8080, IPPROTO_TCP, MLV_FWD_IPIP);
	fx_backend(v, "web-1", "10.99.1.11", 100);
	fx_backend(v, "web-2", "10.99.1.12", 99);

	g = build(f, NULL, NULL, NULL);
	web = vip_named(g, "web");
	tls = vip_named(g, "web-tls");
	alt = vip_named(g, "web-alt");
	assert_ptr_equal(tls->table, web->table);
	assert_ptr_equal(tls->second, web->second);
	assert_true(tls->fingerprint == web->fingerprint);
	direct_table(tls, names, weights, 2, direct, &fp);
	assert_memory_equal(tls->table, direct, sizeof(direct));
	assert_true(tls->fingerprint == fp);

	assert_ptr_not_equal(alt->table, web->table);
	assert_ptr_not_equal(alt->second, web->second);
	assert_true(alt->fingerprint != web->fingerprint);
	assert_ptr_not_equal(vip_named(g, "dns")->table, web->table);
	/* web, web-alt and dns built; web-tls shares web's */
	assert_table_counts(g, 3, 1, 0);

	/* Unchanged: every VIP reused, however many share a table. */
	g2 = build(f, g, NULL, NULL);
	assert_table_counts(g2, 0, 0, 4);
	assert_ptr_equal(vip_named(g2, "web-tls")->table, web->table);

	/* web-1's weight changes in web and web-tls: one build for both. */
	f->vips[0].backends[1].weight = 50; /* web-1, config order */
	f->vips[2].backends[0].weight = 50;
	g3 = build(f, g2, NULL, NULL);
	assert_table_counts(g3, 1, 1, 2);
	assert_ptr_equal(vip_named(g3, "web-tls")->table,
			 vip_named(g3, "web")->table);
	assert_ptr_not_equal(vip_named(g3, "web")->table, web->table);
	assert_ptr_equal(vip_named(g3, "web-alt")->table, alt->table);

	mlv_gen_free(g);
	mlv_gen_free(g2);
	mlv_gen_free(g3);
	fx_free(f);
}

/* A table outlives the generation that built it while a later one still
 * holds it, and goes with the last holder (ASan/LSan check both). */
static void test_table_outlives_builder(void **state)
{
	struct fx *f = fx_basic();
	struct mlv_vip_config *v;
	struct mlv_generation *g1, *g2, *g3;
	const char *names[] = { "dns-1" };
	const uint32_t weights[] = { 100 };
	uint16_t direct[FX_TABLE], web_before[FX_TABLE];
	uint64_t fp;

	(void)state;
	v = fx_vip(f, "dns-tcp", "2001:db8::53", 53, IPPROTO_TCP, MLV_FWD_GUE);
	fx_backend(v, "dns-1", "fd00:99:1::21", 100);
	g1 = build(f, NULL, NULL, NULL);
	assert_table_counts(g1, 2, 1, 0);
	memcpy(web_before, vip_named(g1, "web")->table, sizeof(web_before));

	/* web changes; dns and dns-tcp keep g1's one table */
	f->vips[0].backends[0].weight = 40;
	g2 = build(f, g1, NULL, NULL);
	assert_table_counts(g2, 1, 0, 2);
	assert_ptr_equal(vip_named(g2, "dns")->table, vip_named(g1, "dns")->table);
	assert_ptr_equal(vip_named(g2, "dns-tcp")->table,
			 vip_named(g2, "dns")->table);
	assert_memory_not_equal(vip_named(g2, "web")->table, web_before,
				sizeof(web_before));

	mlv_gen_free(g1);
	direct_table(vip_named(g2, "dns"), names, weights, 1, direct, &fp);
	assert_memory_equal(vip_named(g2, "dns")->table, direct, sizeof(direct));
	assert_memory_equal(vip_named(g2, "dns-tcp")->second,
			    vip_named(g2, "dns")->second,
			    FX_TABLE * sizeof(uint16_t));
	assert_true(vip_named(g2, "dns")->fingerprint == fp);

	/* Back to web's first weights: a fresh build, equal to g1's freed one. */
	f->vips[0].backends[0].weight = 100;
	g3 = build(f, g2, NULL, NULL);
	assert_table_counts(g3, 1, 0, 2);
	assert_memory_equal(vip_named(g3, "web")->table, web_before,
			    sizeof(web_before));
	mlv_gen_free(g2);
	assert_memory_equal(vip_named(g3, "dns")->table, direct, sizeof(direct));
	mlv_gen_free(g3);
	fx_free(f);
}

/* ---- ports, transmit slots, templates ---- */

static void test_tx_slots_and_templates(void **state)
{
	struct fx *f = fx_new();
	struct mlv_vip_config *v;
	struct mlv_backend_config *b;
	struct mlv_generation *g;
	const struct mlv_gen_vip *ipip, *gue, *dsr;
	struct mlv_encap_tmpl want;
	struct mlv_encap_params ep;

	(void)state;
	/* ext transmits via int (two-arm); int and mgmt transmit themselves. */
	fx_port(f, "ext", "198.51.100.1", "2001:db8:ffff::1", "int", 1500);
	fx_port(f, "int", "10.99.0.1", "fd00:99::1", NULL, 1500);
	fx_port(f, "mgmt", "10.98.0.1", "fd00:98::1", NULL, 9000);
	v = fx_vip(f, "ipip", "192.0.2.10", 80, IPPROTO_TCP, MLV_FWD_IPIP);
	fx_backend(v, "b4", "10.99.1.11", 100);
	v = fx_vip(f, "gue", "2001:db8::53", 53, IPPROTO_UDP, MLV_FWD_GUE);
	fx_backend(v, "b6", "fd00:99:1::21", 100);
	v = fx_vip(f, "dsr", "192.0.2.20", 80, IPPROTO_TCP, MLV_FWD_L2DSR);
	b = fx_backend(v, "m", "10.99.1.30", 100);
	b->has_mac = true;
	memcpy(b->mac.bytes, (uint8_t[]){ 2, 0xaa, 0, 0, 0, 0x30 }, 6);
	fx_backend(v, "no-mac", "10.99.1.31", 100);
	g = build(f, NULL, NULL, NULL);

	assert_int_equal(g->n_ports, 3);
	assert_int_equal(g->n_tx, 2);
	assert_int_equal(g->tx_ports[g->ports[0].tx_slot], 1);
	assert_int_equal(g->tx_ports[g->ports[1].tx_slot], 1);
	assert_int_equal(g->tx_ports[g->ports[2].tx_slot], 2);
	assert_int_not_equal(g->ports[1].tx_slot, g->ports[2].tx_slot);
	assert_int_equal(g->ports[2].mtu, 9000);

	/* IPv4 backend through "int": outer source = int's IPv4 address,
	 * Ethernet next hop of int, source MAC of int. */
	ipip = vip_named(g, "ipip");
	memset(&ep, 0, sizeof(ep));
	ep.method = MLV_ENCAP_IPIP;
	memcpy(ep.src_mac, f->info[1].mac, 6);
	memcpy(ep.dst_mac, f->info[1].next_hop, 6);
	ep.outer_family = MLV_AF_INET;
	memcpy(ep.outer_src, ip("10.99.0.1").bytes, 16);
	memcpy(ep.outer_dst, ip("10.99.1.11").bytes, 16);
	ep.inner_family = MLV_AF_INET;
	ep.gue_port = 6080;
	assert_int_equal(mlv_encap_tmpl_init(&want, &ep), 0);
	assert_memory_equal(&ipip->backends[0].encap[g->ports[0].tx_slot], &want,
			    sizeof(want));
	assert_memory_equal(ipip->backends[0].encap[g->ports[0].tx_slot].hdr,
			    f->info[1].next_hop, 6);
	assert_memory_equal(ipip->backends[0].encap[g->ports[0].tx_slot].hdr + 6,
			    f->info[1].mac, 6);
	/* ... and through mgmt, mgmt's. */
	memcpy(ep.src_mac, f->info[2].mac, 6);
	memcpy(ep.dst_mac, f->info[2].next_hop, 6);
	memcpy(ep.outer_src, ip("10.98.0.1").bytes, 16);
	assert_int_equal(mlv_encap_tmpl_init(&want, &ep), 0);
	assert_memory_equal(&ipip->backends[0].encap[g->ports[2].tx_slot], &want,
			    sizeof(want));
	/* Smallest room over the transmit ports: 1500 - IPv4 header. */
	assert_int_equal(ipip->mtu_room, 1500 - 20);

	/* IPv6 backend uses the port's IPv6 address; GUE adds UDP + GUE. */
	gue = vip_named(g, "gue");
	memset(&ep, 0, sizeof(ep));
	ep.method = MLV_ENCAP_GUE;
	memcpy(ep.src_mac, f->info[1].mac, 6);
	memcpy(ep.dst_mac, f->info[1].next_hop, 6);
	ep.outer_family = MLV_AF_INET6;
	memcpy(ep.outer_src, ip("fd00:99::1").bytes, 16);
	memcpy(ep.outer_dst, ip("fd00:99:1::21").bytes, 16);
	ep.inner_family = MLV_AF_INET6;
	ep.gue_port = 6080;
	assert_int_equal(mlv_encap_tmpl_init(&want, &ep), 0);
	assert_memory_equal(&gue->backends[0].encap[g->ports[1].tx_slot], &want,
			    sizeof(want));
	assert_int_equal(gue->mtu_room, 1500 - 40 - 8 - 4);

	/* A separate IPv6 next hop on "int" (a router per family): IPv6
	 * backends go there, IPv4 ones stay with next_hop. */
	{
		static const uint8_t v6hop[6] = { 2, 0, 0, 0, 6, 6 };
		struct mlv_generation *g6;

		memcpy(f->info[1].next_hop6, v6hop, 6);
		g6 = build(f, NULL, NULL, NULL);
		memcpy(ep.dst_mac, v6hop, 6);
		assert_int_equal(mlv_encap_tmpl_init(&want, &ep), 0);
		assert_memory_equal(&vip_named(g6, "gue")->backends[0]
				     .encap[g6->ports[1].tx_slot], &want,
				    sizeof(want));
		assert_memory_equal(vip_named(g6, "ipip")->backends[0]
				     .encap[g6->ports[0].tx_slot].hdr,
				    f->info[1].next_hop, 6);
		assert_ptr_equal(mlv_gen_port_next_hop(&f->info[1], MLV_AF_INET6),
				 f->info[1].next_hop6);
		assert_ptr_equal(mlv_gen_port_next_hop(&f->info[2], MLV_AF_INET6),
				 f->info[2].next_hop);
		memset(f->info[1].next_hop6, 0, 6);
		mlv_gen_free(g6);
	}

	/* L2 DSR: destination MAC is the backend's; no MAC = unreachable. */
	dsr = vip_named(g, "dsr");
	assert_memory_equal(backend_named(dsr, "m")->encap[0].hdr,
			    ((uint8_t[]){ 2, 0xaa, 0, 0, 0, 0x30 }), 6);
	assert_memory_equal(backend_named(dsr, "m")->encap[0].hdr + 6,
			    f->info[g->tx_ports[0]].mac, 6);
	assert_true(backend_named(dsr, "m")->usable);
	assert_false(backend_named(dsr, "no-mac")->usable);
	assert_int_equal(dsr->n_usable, 1);
	assert_int_equal(dsr->mtu_room, 1500);

	mlv_gen_free(g);
	fx_free(f);
}

/* A MAC resolved at runtime (neighbour table) replaces a missing one. */
static void test_resolved_mac(void **state)
{
	struct fx *f = fx_new();
	struct mlv_vip_config *v;
	struct mlv_generation *g;
	struct state_table states[] = {
		{ "m", { .healthy = true, .has_mac = true,
			 .mac = { 2, 0xbb, 0, 0, 0, 1 } } },
		{ NULL, { .healthy = true } },
	};

	(void)state;
	fx_port(f, "ext", "10.99.0.1", NULL, NULL, 1500);
	v = fx_vip(f, "dsr", "192.0.2.20", 80, IPPROTO_TCP, MLV_FWD_L2DSR);
	fx_backend(v, "m", "10.99.1.30", 100);
	g = build(f, NULL, state_cb, states);
	assert_true(g->vips[0].backends[0].usable);
	assert_memory_equal(g->vips[0].backends[0].encap[0].hdr, states[0].st.mac, 6);
	mlv_gen_free(g);
	fx_free(f);
}

/* ---- look-up by uid, counters ---- */

static void test_find_backend_by_uid(void **state)
{
	struct fx *f = fx_basic();
	struct mlv_generation *g = build(f, NULL, NULL, NULL);
	const struct mlv_gen_vip *web = vip_named(g, "web"), *dns = vip_named(g, "dns");
	const struct mlv_gen_backend *w1 = backend_named(web, "web-1");
	const struct mlv_gen_backend *d1 = backend_named(dns, "dns-1");
	uint32_t unused = 1;

	(void)state;
	assert_ptr_equal(mlv_gen_find_backend(g, web, w1->uid), w1);
	assert_ptr_equal(mlv_gen_find_backend(g, dns, d1->uid), d1);
	assert_null(mlv_gen_find_backend(g, web, d1->uid));
	assert_null(mlv_gen_find_backend(g, dns, web->uid));
	while (mlv_gen_find_backend_uid(g, unused) || mlv_gen_find_vip_uid(g, unused))
		unused++;
	assert_null(mlv_gen_find_backend(g, web, unused));
	assert_null(mlv_gen_find_backend(g, web, 0));
	assert_ptr_equal(mlv_gen_find_vip_uid(g, dns->uid), dns);
	assert_null(mlv_gen_find_vip_uid(g, d1->uid));
	mlv_gen_free(g);
	fx_free(f);
}

static void test_counters_layout(void **state)
{
	struct fx *f = fx_basic();
	struct mlv_generation *g = build(f, NULL, NULL, NULL);

	(void)state;
	assert_int_equal(g->n_workers, 2);
	for (uint32_t w = 0; w < g->n_workers; w++) {
		assert_int_equal((uintptr_t)g->backend_ctr[w] % 64, 0);
		for (uint32_t b = 0; b < g->n_all_backends; b++)
			for (int c = 0; c < MLV_FLOW__COUNT; c++)
				assert_int_equal(g->backend_ctr[w][b].v[c], 0);
		/* Each worker's block is its own: writing the last entry of
		 * worker w must not show up in worker w+1's first. */
		g->backend_ctr[w][g->n_all_backends - 1].v[MLV_FLOW_BYTES] = 9 + w;
	}
	assert_int_equal(g->backend_ctr[1][0].v[MLV_FLOW_BYTES], 0);
	assert_true(g->backend_ctr[1] >= g->backend_ctr[0] + g->n_all_backends ||
		    g->backend_ctr[0] >= g->backend_ctr[1] + g->n_all_backends);
	mlv_gen_free(g);
	fx_free(f);
}

/* Per-VIP counters are summed from backend rows (control/generation/stats.c), which
 * needs each VIP's backends to be its own contiguous slice of
 * all_backends: together they tile it in VIP order, with no overlap, an
 * empty VIP included. */
static void test_backends_tile_by_vip(void **state)
{
	struct fx *f = fx_basic();
	struct mlv_vip_config *v;
	struct mlv_generation *g;
	uint32_t next = 0;

	(void)state;
	fx_vip(f, "empty", "192.0.2.11", 80, IPPROTO_TCP, MLV_FWD_IPIP);
	v = fx_vip(f, "ntp", "192.0.2.12", 123, IPPROTO_UDP, MLV_FWD_IPIP);
	fx_backend(v, "ntp-b", "10.99.1.32", 100);
	fx_backend(v, "ntp-a", "10.99.1.31", 100);
	g = build(f, NULL, NULL, NULL);
	for (uint32_t i = 0; i < g->n_vips; i++) {
		const struct mlv_gen_vip *gv = &g->vips[i];

		assert_ptr_equal(gv->backends, &g->all_backends[next]);
		for (uint32_t b = 0; b < gv->n_backends; b++) {
			assert_int_equal(gv->backends[b].vip_index, i);
			/* the stored position the data plane counts by */
			assert_int_equal(gv->backends[b].all_index, next + b);
			assert_int_equal(mlv_gen_backend_index(g, &gv->backends[b]),
					 (uint32_t)(&gv->backends[b] - g->all_backends));
		}
		next += gv->n_backends;
	}
	assert_int_equal(next, g->n_all_backends);
	assert_int_equal(vip_named(g, "empty")->n_backends, 0);
	mlv_gen_free(g);
	fx_free(f);
}

/* ---- errors ---- */

static void expect_error(struct fx *f, uint32_t workers, enum mlv_err want)
{
	struct mlv_generation *g = (void *)1;

	assert_int_equal(mlv_gen_build(&f->cfg, f->info, workers, 1, NULL, NULL,
				       NULL, &g), want);
	assert_null(g);
}

static void test_errors(void **state)
{
	struct fx *f;
	struct mlv_generation *g = NULL;

	(void)state;
	f = fx_basic();
	assert_int_equal(mlv_gen_build(NULL, f->info, 1, 1, NULL, NULL, NULL, &g),
			 MLV_E_INVAL);
	assert_int_equal(mlv_gen_build(&f->cfg, f->info, 1, 1, NULL, NULL, NULL,
				       NULL), MLV_E_INVAL);
	expect_error(f, 0, MLV_E_RANGE);
	expect_error(f, MLV_MAX_WORKERS + 1, MLV_E_RANGE);
	fx_free(f);

	/* The same address, port and protocol twice. */
	f = fx_basic();
	fx_vip(f, "web-again", "192.0.2.10", 80, IPPROTO_TCP, MLV_FWD_IPIP);
	expect_error(f, 1, MLV_E_INVAL);
	fx_free(f);

	/* The same VIP name twice. */
	f = fx_basic();
	fx_vip(f, "web", "192.0.2.99", 80, IPPROTO_TCP, MLV_FWD_IPIP);
	expect_error(f, 1, MLV_E_INVAL);
	fx_free(f);

	/* The same backend name twice in one VIP. */
	f = fx_basic();
	fx_backend(&f->vips[0], "web-1", "10.99.1.99", 100);
	expect_error(f, 1, MLV_E_INVAL);
	fx_free(f);

	/* A tx_port that does not exist. */
	f = fx_basic();
	snprintf(f->ports[0].tx_port, sizeof(f->ports[0].tx_port), "nope");
	expect_error(f, 1, MLV_E_INVAL);
	fx_free(f);

	/* IPv6 backends but the transmitting port has no IPv6 address. */
	f = fx_basic();
	f->ports[0].address6.family = MLV_AF_NONE;
	expect_error(f, 1, MLV_E_CONFIG);
	fx_free(f);

	/* IPv6 VIP inside IPv4 IPIP cannot be carried. */
	f = fx_basic();
	fx_backend(fx_vip(f, "v6in4", "2001:db8::99", 80, IPPROTO_TCP,
			  MLV_FWD_IPIP), "x", "10.99.1.50", 100);
	expect_error(f, 1, MLV_E_CONFIG);
	fx_free(f);

	/* Not a prime table size. */
	f = fx_basic();
	f->vips[1].table_size = 1000;
	expect_error(f, 1, MLV_E_INVAL);
	fx_free(f);

	/* A weight Maglev refuses. */
	f = fx_basic();
	f->vips[0].backends[0].weight = MLV_MAGLEV_MAX_WEIGHT + 1;
	expect_error(f, 1, MLV_E_INVAL);
	fx_free(f);
}

/* ---- from YAML ---- */

static const char yaml[] =
	"dataplane:\n"
	"  workers: 1\n"
	"  ports:\n"
	"    - name: ext\n"
	"      device: net_null0\n"
	"      address: 10.99.0.1\n"
	"      address6: fd00:99::1\n"
	"      next_hop: \"02:00:00:00:00:fe\"\n"
	"vips:\n"
	"  - name: web\n"
	"    address: 192.0.2.10\n"
	"    port: 80\n"
	"    protocol: tcp\n"
	"    table_size: 251\n"
	"    health: {type: none}\n"
	"    backends:\n"
	"      - {name: web-3, address: 10.99.1.13, weight: 50, state: drain}\n"
	"      - {name: web-1, address: 10.99.1.11, weight: 100}\n"
	"      - {name: web-2, address: 10.99.1.12, weight: 100}\n"
	"  - name: dns\n"
	"    address: 2001:db8::53\n"
	"    port: 53\n"
	"    protocol: udp\n"
	"    forwarding: gue\n"
	"    gue_port: 6080\n"
	"    health: {type: none}\n"
	"    backends:\n"
	"      - {name: dns-1, address: \"fd00:99:1::21\"}\n";

static void test_from_yaml(void **state)
{
	struct mlv_config *cfg = NULL;
	struct mlv_diags diags;
	struct mlv_gen_port_info info = { .mac = { 2, 0, 0, 0, 0, 1 } };
	struct mlv_generation *g = NULL;
	const struct mlv_gen_vip *web, *dns;
	enum mlv_err err;

	(void)state;
	mlv_diags_init(&diags);
	err = mlv_config_load_buffer("test.yaml", yaml, sizeof(yaml) - 1, &cfg, &diags);
	if (err)
		mlv_diags_print(&diags, stderr);
	assert_int_equal(err, MLV_OK);
	memcpy(info.next_hop, cfg->ports[0].next_hop.bytes, 6);
	assert_int_equal(mlv_gen_build(cfg, &info, 1, 1, NULL, NULL, NULL, &g), MLV_OK);

	web = vip_named(g, "web");
	dns = vip_named(g, "dns");
	assert_ptr_equal(mlv_gen_find_vip(g, &(struct mlv_flow_key){
		.dst = { 192, 0, 2, 10 }, .dport = htons(80),
		.proto = IPPROTO_TCP, .family = 4 }, false), web);
	assert_string_equal(find_name(g, "2001:db8::53", 53, IPPROTO_UDP, false), "dns");
	assert_int_equal(web->n_backends, 3);
	assert_string_equal(web->backends[0].name, "web-1");
	assert_string_equal(web->backends[2].name, "web-3");
	assert_true(web->backends[2].draining);
	assert_int_equal(slots_of(web, 2), 0);
	assert_int_equal(slots_of(web, 0) + slots_of(web, 1), 251);
	assert_int_equal(dns->forwarding, MLV_FWD_GUE);
	assert_int_equal(dns->mtu_room, cfg->ports[0].mtu - 40 - 8 - 4);
	assert_memory_equal(dns->backends[0].encap[0].hdr, cfg->ports[0].next_hop.bytes, 6);

	mlv_gen_free(g);
	mlv_config_free(cfg);
	mlv_diags_free(&diags);
}

/* icmp_echo: the VIP mlv_gen_find_echo_vip finds for an address says
 * echo_reply when any VIP on the address says reply and can take new
 * flows, whatever its own setting. */
static const char echo_yaml[] =
	"dataplane:\n"
	"  workers: 1\n"
	"  ports:\n"
	"    - {name: ext, device: net_null0, address: 10.99.0.1,\n"
	"       address6: \"fd00:99::1\", next_hop: \"02:00:00:00:00:fe\"}\n"
	"defaults: {health: {type: none}, table_size: 251}\n"
	"vips:\n"
	"  - {name: web, address: 192.0.2.10, port: 80, protocol: tcp,\n"
	"     backends: [{name: a, address: 10.99.1.1}]}\n"
	"  - {name: dns, address: 192.0.2.10, port: 53, protocol: udp,\n"
	"     icmp_echo: reply, backends: [{name: a, address: 10.99.1.1}]}\n"
	"  - {name: down, address: 192.0.2.20, port: 80, protocol: tcp,\n"
	"     icmp_echo: reply,\n"
	"     backends: [{name: a, address: 10.99.1.1, state: down}]}\n"
	"  - {name: quiet, address: 192.0.2.30, port: 80, protocol: tcp,\n"
	"     backends: [{name: a, address: 10.99.1.1}]}\n"
	"  - {name: web6, address: \"2001:db8::10\", port: 443, protocol: tcp,\n"
	"     icmp_echo: reply, backends: [{name: a, address: \"fd00:99:1::1\"}]}\n";

static void test_echo_reply(void **state)
{
	struct mlv_config *cfg = NULL;
	struct mlv_diags diags;
	struct mlv_gen_port_info info = { .mac = { 2, 0, 0, 0, 0, 1 } };
	struct mlv_generation *g = NULL;
	struct mlv_flow_key k = { .proto = IPPROTO_ICMP, .family = 4 };

	(void)state;
	mlv_diags_init(&diags);
	assert_int_equal(mlv_config_load_buffer("echo.yaml", echo_yaml,
						sizeof(echo_yaml) - 1, &cfg,
						&diags), MLV_OK);
	memcpy(info.next_hop, cfg->ports[0].next_hop.bytes, 6);
	assert_int_equal(mlv_gen_build(cfg, &info, 1, 1, NULL, NULL, NULL, &g),
			 MLV_OK);

	memcpy(k.dst, (uint8_t[]){ 192, 0, 2, 10 }, 4);
	assert_ptr_equal(mlv_gen_find_echo_vip(g, &k), vip_named(g, "web"));
	assert_true(vip_named(g, "web")->echo_reply);
	assert_false(vip_named(g, "dns")->echo_reply);
	k.dst[3] = 20;
	assert_ptr_equal(mlv_gen_find_echo_vip(g, &k), vip_named(g, "down"));
	assert_false(vip_named(g, "down")->echo_reply);
	k.dst[3] = 30;
	assert_false(mlv_gen_find_echo_vip(g, &k)->echo_reply);
	k.dst[3] = 40;
	assert_null(mlv_gen_find_echo_vip(g, &k));
	memset(&k, 0, sizeof(k));
	k.family = 6;
	k.proto = IPPROTO_ICMPV6;
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::10", k.dst), 1);
	assert_ptr_equal(mlv_gen_find_echo_vip(g, &k), vip_named(g, "web6"));
	assert_true(vip_named(g, "web6")->echo_reply);

	mlv_gen_free(g);
	mlv_config_free(cfg);
	mlv_diags_free(&diags);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find_vip),
		cmocka_unit_test(test_find_vip_many),
		cmocka_unit_test(test_echo_reply),
		cmocka_unit_test(test_uid_stability),
		cmocka_unit_test(test_drain_and_health),
		cmocka_unit_test(test_state_positions),
		cmocka_unit_test(test_all_down),
		cmocka_unit_test(test_weight_override_and_direct_table),
		cmocka_unit_test(test_table_reuse),
		cmocka_unit_test(test_table_shared_between_vips),
		cmocka_unit_test(test_table_outlives_builder),
		cmocka_unit_test(test_tx_slots_and_templates),
		cmocka_unit_test(test_resolved_mac),
		cmocka_unit_test(test_find_backend_by_uid),
		cmocka_unit_test(test_counters_layout),
		cmocka_unit_test(test_backends_tile_by_vip),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_from_yaml),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
