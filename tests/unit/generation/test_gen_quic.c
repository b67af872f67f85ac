/* SPDX-License-Identifier: BSD-3-Clause */
/* The generation's QUIC server-ID maps: every quic VIP maps each of its
 * backends' server IDs to that backend (whatever the config order: the
 * builder sorts backends by name), misses everything else, keeps its IDs
 * apart from another VIP's, carries nothing for a VIP without quic, and
 * refuses a duplicate ID. */
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

#define MAX_BE 64

struct fx {
	struct mlv_config cfg;
	struct mlv_port_config port;
	struct mlv_gen_port_info info;
	struct mlv_vip_config vips[3];
	struct mlv_backend_config be[3][MAX_BE];
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
	snprintf(f->port.name, sizeof(f->port.name), "ext");
	f->port.address = ip("10.99.0.1");
	f->port.mtu = 1500;
	f->cfg.ports = &f->port;
	f->cfg.n_ports = 1;
	f->cfg.vips = f->vips;
	f->cfg.workers = 1;
	return f;
}

static struct mlv_vip_config *fx_vip(struct fx *f, const char *name,
				     const char *addr, bool quic)
{
	uint32_t n = f->cfg.n_vips++;
	struct mlv_vip_config *v = &f->vips[n];

	snprintf(v->name, sizeof(v->name), "%s", name);
	v->address = ip(addr);
	v->port = 443;
	v->protocol = IPPROTO_UDP;
	v->forwarding = MLV_FWD_IPIP;
	v->table_size = 251;
	v->quic = quic;
	v->backends = f->be[n];
	return v;
}

static void fx_backend(struct mlv_vip_config *v, const char *name,
		       uint32_t server_id)
{
	struct mlv_backend_config *b = &v->backends[v->n_backends];

	assert_true(v->n_backends < MAX_BE);
	snprintf(b->name, sizeof(b->name), "%s", name);
	b->address = ip("10.99.1.1");
	b->address.bytes[3] = (uint8_t)(v->n_backends + 1);
	b->weight = 100;
	b->quic_server_id = server_id;
	v->n_backends++;
}

static struct mlv_generation *build(struct fx *f)
{
	struct mlv_generation *g = NULL;

	assert_int_equal(mlv_gen_build(&f->cfg, &f->info, 1, 1, NULL, NULL,
				       NULL, &g), MLV_OK);
	assert_non_null(g);
	return g;
}

static void test_lookup(void **state)
{
	struct fx *f = fx_new();
	struct mlv_generation *g;
	const struct mlv_gen_vip *q, *p, *r;
	char name[16];

	(void)state;
	/* 40 backends listed in reverse name order, IDs spread over the
	 * v1 and v2 ranges; every third one without an ID */
	struct mlv_vip_config *v = fx_vip(f, "q", "192.0.2.1", true);
	for (int i = 39; i >= 0; i--) {
		snprintf(name, sizeof(name), "b%02d", i);
		fx_backend(v, name, i % 3 == 2 ? 0 : (uint32_t)(i * 40503 % 16777215 + 1));
	}
	v = fx_vip(f, "plain", "192.0.2.2", false);
	fx_backend(v, "p1", 7);   /* ignored: the VIP has no quic */
	v = fx_vip(f, "r", "192.0.2.3", true);
	fx_backend(v, "r1", 41);
	fx_backend(v, "r2", 1);   /* b00's ID in q too */
	g = build(f);
	q = &g->vips[0];
	p = &g->vips[1];
	r = &g->vips[2];

	assert_true(q->quic);
	assert_false(p->quic);
	assert_null(p->quic_ids);
	assert_int_equal(p->backends[0].quic_server_id, 0);
	assert_true(r->quic);
	for (int i = 0; i < 40; i++) {
		uint32_t id = i % 3 == 2 ? 0 : (uint32_t)(i * 40503 % 16777215 + 1);
		const struct mlv_gen_backend *b;

		snprintf(name, sizeof(name), "b%02d", i);
		/* sorted by name: b00 is backends[0] */
		assert_string_equal(q->backends[i].name, name);
		assert_int_equal(q->backends[i].quic_server_id, id);
		if (id == 0)
			continue;
		b = mlv_gen_quic_backend(q, id);
		assert_non_null(b);
		assert_ptr_equal(b, &q->backends[i]);
	}
	assert_null(mlv_gen_quic_backend(q, 0));
	assert_null(mlv_gen_quic_backend(q, 2));
	assert_null(mlv_gen_quic_backend(q, 16777215));
	assert_null(mlv_gen_quic_backend(q, 41));   /* r's, not q's */
	assert_ptr_equal(mlv_gen_quic_backend(r, 41), &r->backends[0]);
	assert_ptr_equal(mlv_gen_quic_backend(r, 1), &r->backends[1]);
	assert_ptr_equal(mlv_gen_quic_backend(q, 1), &q->backends[0]);
	assert_null(mlv_gen_quic_backend(r, 40504));
	/* load factor <= 1/2 */
	assert_true(q->quic_mask + 1 >= 2 * 40);
	mlv_gen_free(g);
	free(f);
}

static void test_no_backends_and_duplicates(void **state)
{
	struct fx *f = fx_new();
	struct mlv_generation *g = NULL;
	struct mlv_vip_config *v;

	(void)state;
	v = fx_vip(f, "empty", "192.0.2.1", true);
	g = build(f);
	assert_true(g->vips[0].quic);
	assert_null(mlv_gen_quic_backend(&g->vips[0], 5));
	mlv_gen_free(g);

	fx_backend(v, "a", 5);
	fx_backend(v, "b", 5);
	g = NULL;
	assert_int_equal(mlv_gen_build(&f->cfg, &f->info, 1, 1, NULL, NULL,
				       NULL, &g), MLV_E_INVAL);
	assert_null(g);
	/* the same IDs are fine when the VIP does not route by them */
	v->quic = false;
	g = build(f);
	mlv_gen_free(g);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_no_backends_and_duplicates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
