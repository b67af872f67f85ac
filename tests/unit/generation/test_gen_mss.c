/* SPDX-License-Identifier: BSD-3-Clause */
/* The MSS clamp a generation gives each VIP: auto from mtu_room and the
 * VIP's family, an explicit N never above it, off, UDP VIPs never; and
 * the one-byte SYN mask the workers test. */
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

static struct mlv_ip ip(const char *text)
{
	struct mlv_ip a;

	assert_true(mlv_ip_parse(text, &a));
	return a;
}

static void test_pure(void **state)
{
	(void)state;
	assert_int_equal(mlv_gen_mss_clamp(MLV_MSS_CLAMP_AUTO, MLV_AF_INET, 1480), 1440);
	assert_int_equal(mlv_gen_mss_clamp(MLV_MSS_CLAMP_AUTO, MLV_AF_INET6, 1460), 1400);
	assert_int_equal(mlv_gen_mss_clamp(MLV_MSS_CLAMP_OFF, MLV_AF_INET, 1480), 0);
	assert_int_equal(mlv_gen_mss_clamp(1200, MLV_AF_INET, 1480), 1200);
	assert_int_equal(mlv_gen_mss_clamp(1460, MLV_AF_INET, 1480), 1440);
	assert_int_equal(mlv_gen_mss_clamp(1440, MLV_AF_INET, 1480), 1440);
	assert_int_equal(mlv_gen_mss_clamp(8960, MLV_AF_INET6, 9000), 8940);
	/* no room known (no transmit port): N as is, auto off */
	assert_int_equal(mlv_gen_mss_clamp(1200, MLV_AF_INET, 0), 1200);
	assert_int_equal(mlv_gen_mss_clamp(MLV_MSS_CLAMP_AUTO, MLV_AF_INET, 0), 0);
	assert_int_equal(mlv_gen_mss_clamp(MLV_MSS_CLAMP_AUTO, MLV_AF_INET6, 60), 0);
}

struct fx {
	struct mlv_config cfg;
	struct mlv_port_config port;
	struct mlv_gen_port_info info;
	struct mlv_vip_config vips[8];
	struct mlv_backend_config be[8];
};

static struct mlv_vip_config *add_vip(struct fx *f, const char *name,
				      const char *addr, uint8_t proto,
				      enum mlv_forwarding fwd, const char *be,
				      uint16_t mss)
{
	uint32_t n = f->cfg.n_vips++;
	struct mlv_vip_config *v = &f->vips[n];
	struct mlv_backend_config *b = &f->be[n];

	snprintf(v->name, sizeof(v->name), "%s", name);
	v->address = ip(addr);
	v->port = (uint16_t)(80 + n);
	v->protocol = proto;
	v->forwarding = fwd;
	v->gue_port = 6080;
	v->table_size = 251;
	v->mss_clamp = mss;
	v->backends = b;
	v->n_backends = 1;
	snprintf(b->name, sizeof(b->name), "b%u", n);
	b->address = ip(be);
	b->weight = 100;
	b->has_mac = true;    /* l2dsr */
	b->mac.bytes[0] = 2;
	b->mac.bytes[5] = (uint8_t)n;
	return v;
}

static const struct mlv_gen_vip *named(const struct mlv_generation *g,
				       const char *name)
{
	for (uint32_t i = 0; i < g->n_vips; i++)
		if (strcmp(g->vips[i].name, name) == 0)
			return &g->vips[i];
	fail_msg("no VIP %s", name);
	return NULL;
}

static void test_built(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct mlv_generation *g = NULL;
	const struct mlv_gen_vip *v;
	(void)state;

	assert_non_null(f);
	f->cfg.ports = &f->port;
	f->cfg.n_ports = 1;
	f->cfg.vips = f->vips;
	f->cfg.workers = 1;
	snprintf(f->port.name, sizeof(f->port.name), "ext");
	f->port.address = ip("10.99.0.1");
	f->port.address6 = ip("fd00:99::1");
	f->port.mtu = 1500;
	memcpy(f->info.mac, (uint8_t[]){ 2, 0, 0, 0, 0, 1 }, 6);
	memcpy(f->info.next_hop, (uint8_t[]){ 2, 0, 0, 0, 1, 1 }, 6);

	add_vip(f, "ipip4", "192.0.2.10", IPPROTO_TCP, MLV_FWD_IPIP,
		"10.99.1.11", MLV_MSS_CLAMP_AUTO);
	add_vip(f, "ipip6", "2001:db8::10", IPPROTO_TCP, MLV_FWD_IPIP,
		"fd00:99:1::11", MLV_MSS_CLAMP_AUTO);
	add_vip(f, "gue4", "192.0.2.11", IPPROTO_TCP, MLV_FWD_GUE,
		"10.99.1.12", MLV_MSS_CLAMP_AUTO);
	add_vip(f, "dsr6", "2001:db8::11", IPPROTO_TCP, MLV_FWD_L2DSR,
		"fd00:99:1::12", MLV_MSS_CLAMP_AUTO);
	add_vip(f, "n1200", "192.0.2.12", IPPROTO_TCP, MLV_FWD_IPIP,
		"10.99.1.13", 1200);
	add_vip(f, "n1460", "192.0.2.13", IPPROTO_TCP, MLV_FWD_IPIP,
		"10.99.1.14", 1460);
	add_vip(f, "off", "192.0.2.14", IPPROTO_TCP, MLV_FWD_IPIP,
		"10.99.1.15", MLV_MSS_CLAMP_OFF);
	/* the loader never gives a UDP VIP a clamp; the builder ignores one */
	add_vip(f, "udp", "192.0.2.15", IPPROTO_UDP, MLV_FWD_IPIP,
		"10.99.1.16", MLV_MSS_CLAMP_AUTO);

	assert_int_equal(mlv_gen_build(&f->cfg, &f->info, 1, 1, NULL, NULL,
				       NULL, &g), MLV_OK);
	v = named(g, "ipip4");
	assert_int_equal(v->mtu_room, 1480);
	assert_int_equal(v->mss_clamp, 1440);
	assert_int_equal(v->mss_syn_mask, 0x02);
	v = named(g, "ipip6");
	assert_int_equal(v->mss_clamp, 1460 - 60);
	v = named(g, "gue4");
	assert_int_equal(v->mss_clamp, 1468 - 40);
	v = named(g, "dsr6");
	assert_int_equal(v->mss_clamp, 1500 - 60);
	assert_int_equal(named(g, "n1200")->mss_clamp, 1200);
	assert_int_equal(named(g, "n1460")->mss_clamp, 1440);
	v = named(g, "off");
	assert_int_equal(v->mss_clamp, 0);
	assert_int_equal(v->mss_syn_mask, 0);
	v = named(g, "udp");
	assert_int_equal(v->mss_clamp, 0);
	assert_int_equal(v->mss_syn_mask, 0);
	mlv_gen_free(g);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pure),
		cmocka_unit_test(test_built),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
