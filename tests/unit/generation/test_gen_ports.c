/* SPDX-License-Identifier: BSD-3-Clause */
/* Range and `any` VIPs in a generation: each port class finds its VIP
 * (exact port > range > any), the port-map edges, duplicates refused, and
 * the slot hash of each hash-field mode against the flow key reduced by
 * hand as docs/flow-hash.md says. */
#include <arpa/inet.h>
#include <malloc.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "control/config/config.h"
#include "control/generation/generation.h"
#include "dataplane/packet/flow_hash.h"

#define N_VIPS 16

struct fx {
	struct mlv_config cfg;
	struct mlv_port_config port;
	struct mlv_gen_port_info info;
	struct mlv_vip_config vips[N_VIPS];
	struct mlv_backend_config be[N_VIPS];
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
	f->cfg.ports = &f->port;
	f->cfg.n_ports = 1;
	f->cfg.vips = f->vips;
	f->cfg.workers = 1;
	snprintf(f->port.name, sizeof(f->port.name), "ext");
	f->port.address = ip("10.99.0.1");
	f->port.address6 = ip("fd00:99::1");
	f->port.mtu = 1500;
	return f;
}

/* port_last 0: one port */
static struct mlv_vip_config *fx_vip(struct fx *f, const char *name,
				     const char *addr, uint16_t port,
				     uint16_t port_last, uint8_t proto)
{
	uint32_t n = f->cfg.n_vips++;
	struct mlv_vip_config *v = &f->vips[n];

	assert_true(n < N_VIPS);
	snprintf(v->name, sizeof(v->name), "%s", name);
	v->address = ip(addr);
	v->port = port;
	v->port_last = port_last;
	v->protocol = proto;
	v->table_size = 251;
	v->source_prefix6 = 128;
	v->backends = &f->be[n];
	v->n_backends = 1;
	snprintf(f->be[n].name, sizeof(f->be[n].name), "b");
	f->be[n].address = ip(v->address.family == MLV_AF_INET ? "10.99.1.1" :
			      "fd00:99:1::1");
	f->be[n].weight = 1;
	return v;
}

static enum mlv_err try_build(struct fx *f, struct mlv_generation **g)
{
	return mlv_gen_build(&f->cfg, &f->info, 1, 1, NULL, NULL, NULL, g);
}

static const char *find(const struct mlv_generation *g, const char *dst,
			uint16_t dport, uint8_t proto, bool any_port)
{
	struct mlv_flow_key k;
	struct mlv_ip a = ip(dst);
	const struct mlv_gen_vip *v;

	memset(&k, 0, sizeof(k));
	memcpy(k.dst, a.bytes, sizeof(k.dst));
	k.family = a.family;
	k.dport = any_port ? 0 : htons(dport);
	k.sport = any_port ? 0 : htons(40000);
	k.proto = proto;
	v = mlv_gen_find_vip(g, &k, any_port);
	return v ? v->name : NULL;
}

static void exact_then_range_then_any(void **state)
{
	struct fx *f = fx_new();
	struct mlv_generation *g = NULL;

	(void)state;
	fx_vip(f, "web", "192.0.2.10", 8050, 0, IPPROTO_TCP);
	/* a range whose ends are inside 256-port blocks, and one spanning
	 * whole blocks */
	fx_vip(f, "range", "192.0.2.10", 8000, 8100, IPPROTO_TCP);
	fx_vip(f, "wide", "192.0.2.10", 9000, 20479, IPPROTO_TCP);
	fx_vip(f, "any", "192.0.2.10", 0, 65535, IPPROTO_TCP);
	fx_vip(f, "udp-range", "192.0.2.10", 1, 2, IPPROTO_UDP);
	fx_vip(f, "v6-any", "2001:db8::10", 0, 65535, IPPROTO_TCP);
	fx_vip(f, "v6-one", "2001:db8::10", 443, 0, IPPROTO_TCP);
	assert_int_equal(try_build(f, &g), MLV_OK);

	assert_string_equal(find(g, "192.0.2.10", 8050, IPPROTO_TCP, false), "web");
	assert_string_equal(find(g, "192.0.2.10", 8000, IPPROTO_TCP, false), "range");
	assert_string_equal(find(g, "192.0.2.10", 8049, IPPROTO_TCP, false), "range");
	assert_string_equal(find(g, "192.0.2.10", 8051, IPPROTO_TCP, false), "range");
	assert_string_equal(find(g, "192.0.2.10", 8100, IPPROTO_TCP, false), "range");
	assert_string_equal(find(g, "192.0.2.10", 7999, IPPROTO_TCP, false), "any");
	assert_string_equal(find(g, "192.0.2.10", 8101, IPPROTO_TCP, false), "any");
	assert_string_equal(find(g, "192.0.2.10", 9000, IPPROTO_TCP, false), "wide");
	assert_string_equal(find(g, "192.0.2.10", 12345, IPPROTO_TCP, false), "wide");
	assert_string_equal(find(g, "192.0.2.10", 20479, IPPROTO_TCP, false), "wide");
	assert_string_equal(find(g, "192.0.2.10", 20480, IPPROTO_TCP, false), "any");
	assert_string_equal(find(g, "192.0.2.10", 65535, IPPROTO_TCP, false), "any");
	assert_string_equal(find(g, "192.0.2.10", 1, IPPROTO_TCP, false), "any");
	/* UDP: only its range; no `any` there */
	assert_string_equal(find(g, "192.0.2.10", 1, IPPROTO_UDP, false), "udp-range");
	assert_string_equal(find(g, "192.0.2.10", 2, IPPROTO_UDP, false), "udp-range");
	assert_null(find(g, "192.0.2.10", 3, IPPROTO_UDP, false));
	assert_null(find(g, "192.0.2.10", 65535, IPPROTO_UDP, false));
	/* other addresses */
	assert_null(find(g, "192.0.2.11", 8050, IPPROTO_TCP, false));
	assert_string_equal(find(g, "2001:db8::10", 443, IPPROTO_TCP, false), "v6-one");
	assert_string_equal(find(g, "2001:db8::10", 80, IPPROTO_TCP, false), "v6-any");
	assert_null(find(g, "2001:db8::10", 80, IPPROTO_UDP, false));
	/* fragments (no port): the `any` VIP, else the lowest first port */
	assert_string_equal(find(g, "192.0.2.10", 0, IPPROTO_TCP, true), "any");
	assert_string_equal(find(g, "192.0.2.10", 0, IPPROTO_UDP, true), "udp-range");
	mlv_gen_free(g);
	free(f);
}

static void port_map_memory_is_bounded(void **state)
{
	struct fx *f = fx_new();
	struct mlv_generation *g = NULL, *g1 = NULL;
	size_t with, without;

	(void)state;
	/* Ranges on 12 addresses: each needs a map (1 KiB) and two leaves
	 * at most; the generation must not grow by 128 KiB per address. */
	for (uint32_t i = 0; i < 12; i++) {
		char a[32], n[16];

		snprintf(a, sizeof(a), "192.0.2.%u", 20 + i);
		snprintf(n, sizeof(n), "r%u", i);
		fx_vip(f, n, a, (uint16_t)(1000 + i), (uint16_t)(60000 + i),
		       IPPROTO_TCP);
	}
	assert_int_equal(try_build(f, &g), MLV_OK);
	for (uint32_t i = 0; i < 12; i++)
		f->vips[i].port_last = 0;
	assert_int_equal(try_build(f, &g1), MLV_OK);
	/* the generation is one allocation (generation.c) */
	with = malloc_usable_size(g);
	without = malloc_usable_size(g1);
	assert_true(with > without);
	assert_true(with - without <= 12 * 2048 + 1024);
	assert_string_equal(find(g, "192.0.2.25", 1005, IPPROTO_TCP, false), "r5");
	assert_string_equal(find(g, "192.0.2.25", 60005, IPPROTO_TCP, false), "r5");
	assert_null(find(g, "192.0.2.25", 60006, IPPROTO_TCP, false));
	assert_null(find(g, "192.0.2.25", 1004, IPPROTO_TCP, false));
	mlv_gen_free(g);
	mlv_gen_free(g1);
	free(f);
}

static void duplicates_and_overlaps_are_refused(void **state)
{
	struct fx *f = fx_new();
	struct mlv_generation *g = NULL;

	(void)state;
	fx_vip(f, "a", "192.0.2.10", 0, 65535, IPPROTO_TCP);
	fx_vip(f, "b", "192.0.2.10", 0, 65535, IPPROTO_TCP);
	assert_int_equal(try_build(f, &g), MLV_E_INVAL);
	assert_null(g);
	f->vips[1].protocol = IPPROTO_UDP;    /* other protocol: fine */
	assert_int_equal(try_build(f, &g), MLV_OK);
	mlv_gen_free(g);
	g = NULL;
	fx_vip(f, "c", "192.0.2.10", 100, 200, IPPROTO_TCP);
	fx_vip(f, "d", "192.0.2.10", 200, 300, IPPROTO_TCP);
	assert_int_equal(try_build(f, &g), MLV_E_INVAL);
	f->vips[3].port = 201;                /* adjacent: fine */
	assert_int_equal(try_build(f, &g), MLV_OK);
	mlv_gen_free(g);
	free(f);
}

static uint32_t hash_of(const struct mlv_flow_key *k)
{
	return mlv_flow_hash(k);
}

static void slot_hash_follows_the_fields(void **state)
{
	struct fx *f = fx_new();
	struct mlv_generation *g = NULL;
	struct mlv_flow_key k, r;
	struct mlv_ip src = ip("2001:db8:c1::1:2"), dst = ip("2001:db8::10");
	const struct mlv_gen_vip *five, *three, *src64, *src128, *range3;

	(void)state;
	fx_vip(f, "five", "2001:db8::10", 443, 0, IPPROTO_TCP);
	fx_vip(f, "three", "2001:db8::10", 444, 0, IPPROTO_TCP)->hash =
		MLV_HASH_3TUPLE;
	fx_vip(f, "src64", "2001:db8::10", 445, 0, IPPROTO_TCP)->hash =
		MLV_HASH_SOURCE;
	f->vips[2].source_prefix6 = 64;
	fx_vip(f, "src128", "2001:db8::10", 446, 0, IPPROTO_TCP)->hash =
		MLV_HASH_SOURCE;
	fx_vip(f, "range3", "2001:db8::10", 1000, 2000, IPPROTO_TCP)->hash =
		MLV_HASH_3TUPLE;
	assert_int_equal(try_build(f, &g), MLV_OK);
	five = mlv_gen_find_vip_named(g, "five");
	three = mlv_gen_find_vip_named(g, "three");
	src64 = mlv_gen_find_vip_named(g, "src64");
	src128 = mlv_gen_find_vip_named(g, "src128");
	range3 = mlv_gen_find_vip_named(g, "range3");

	memset(&k, 0, sizeof(k));
	memcpy(k.src, src.bytes, 16);
	memcpy(k.dst, dst.bytes, 16);
	k.sport = htons(40000);
	k.dport = htons(443);
	k.proto = IPPROTO_TCP;
	k.family = 6;
	assert_int_equal(mlv_gen_slot_hash(five, &k, false, 7), 7);

	r = k;
	r.sport = 0;
	assert_int_equal(mlv_gen_slot_hash(three, &k, false, 7), hash_of(&r));
	r.dport = 0;
	assert_int_equal(mlv_gen_slot_hash(src128, &k, false, 7), hash_of(&r));
	memset(r.src + 8, 0, 8);               /* the first 64 bits kept */
	assert_int_equal(mlv_gen_slot_hash(src64, &k, false, 7), hash_of(&r));
	assert_true(hash_of(&r) != mlv_gen_slot_hash(src128, &k, false, 7));

	/* A fragment (ports 0): under 3tuple a VIP of one port hashes its
	 * port, as the whole datagram's first packet did; a range cannot. */
	r = k;
	r.sport = 0;
	k.sport = 0;
	k.dport = 0;
	r.dport = three->port_be;
	assert_int_equal(mlv_gen_slot_hash(three, &k, true, 7), hash_of(&r));
	r.dport = 0;
	assert_int_equal(mlv_gen_slot_hash(range3, &k, true, 7), hash_of(&r));
	memset(r.src + 8, 0, 8);
	assert_int_equal(mlv_gen_slot_hash(src64, &k, true, 7), hash_of(&r));
	mlv_gen_free(g);
	free(f);
}

/* Random non-overlapping ranges (some inside one 256-port block, some
 * across many, some touching), with and without an `any` VIP and one-port
 * VIPs: every one of the 65536 ports finds the VIP a naive scan of the
 * list says (exact > range > any). */
static void every_port_matches_a_scan(void **state)
{
	(void)state;
	srand(7);
	for (int round = 0; round < 40; round++) {
		struct fx *f = fx_new();
		struct mlv_generation *g = NULL;
		uint32_t next = 1 + (uint32_t)(rand() % 300);
		bool with_any = round % 2;
		char name[16];

		while (f->cfg.n_vips < N_VIPS - 4 && next < 65000) {
			uint32_t len = rand() % 3 == 0 ? (uint32_t)(rand() % 40) :
				       (uint32_t)(rand() % 9000);
			uint32_t last = next + len + 1 > 65535 ? 65535 : next + len + 1;

			snprintf(name, sizeof(name), "r%u", f->cfg.n_vips);
			fx_vip(f, name, "192.0.2.10", (uint16_t)next,
			       (uint16_t)last, IPPROTO_TCP);
			next = last + 1 + (uint32_t)(rand() % 2 ? 0 : rand() % 700);
		}
		for (int k = 0; k < 2; k++) {
			snprintf(name, sizeof(name), "one%d", k);
			fx_vip(f, name, "192.0.2.10", (uint16_t)(1 + rand() % 65535),
			       0, IPPROTO_TCP);
		}
		if (with_any)
			fx_vip(f, "any", "192.0.2.10", 0, 65535, IPPROTO_TCP);
		if (try_build(f, &g) != MLV_OK) {
			/* the two one-port VIPs drew the same port */
			mlv_gen_free(g);
			free(f);
			continue;
		}
		for (uint32_t port = 1; port < 65536; port++) {
			const char *want = NULL;
			const char *got = find(g, "192.0.2.10", (uint16_t)port,
					       IPPROTO_TCP, false);

			for (uint32_t v = 0; v < f->cfg.n_vips && !want; v++) {
				const struct mlv_vip_config *c = &f->vips[v];

				if (c->port_last == 0 && c->port == port)
					want = c->name;
			}
			for (uint32_t v = 0; v < f->cfg.n_vips && !want; v++) {
				const struct mlv_vip_config *c = &f->vips[v];

				if (c->port_last != 0 && c->port != 0 &&
				    c->port <= port && port <= c->port_last)
					want = c->name;
			}
			if (!want && with_any)
				want = "any";
			if ((want == NULL) != (got == NULL) ||
			    (want && strcmp(want, got) != 0))
				fail_msg("round %d port %u: %s, want %s", round,
					 port, got ? got : "none",
					 want ? want : "none");
		}
		mlv_gen_free(g);
		free(f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exact_then_range_then_any),
		cmocka_unit_test(port_map_memory_is_bounded),
		cmocka_unit_test(every_port_matches_a_scan),
		cmocka_unit_test(duplicates_and_overlaps_are_refused),
		cmocka_unit_test(slot_hash_follows_the_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
