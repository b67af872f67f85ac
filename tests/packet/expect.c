/* SPDX-License-Identifier: BSD-3-Clause */
#include "tests/packet/expect.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/tables/builder.h"
#include "dataplane/packet/flow_hash.h"

int expect_build(struct expect_tables *out, const struct sc_vip *vips,
		 uint32_t n)
{
	memset(out, 0, sizeof(*out));
	for (uint32_t v = 0; v < n; v++) {
		const struct sc_vip *vip = &vips[v];
		struct mlv_table_backend tb[SC_MAX_BACKENDS];
		struct mlv_table_spec spec = {
			.kind = (enum mlv_table_kind)vip->table,
			.size = vip->table_size,
			.vnodes = vip->vnodes ? vip->vnodes : MLV_RING_DEFAULT_VNODES,
		};
		struct expect_table *t = &out->t[v];
		enum mlv_err err;

		for (uint32_t i = 0; i < vip->n_backends; i++) {
			tb[i].name = vip->backends[i].name;
			tb[i].weight = vip->backends[i].drain ? 0 :
				       vip->backends[i].weight;
			tb[i].no_second = vip->backends[i].down;
			t->down[i] = vip->backends[i].down;
		}
		t->size = vip->table_size;
		t->hash = vip->hash;
		t->prefix6 = vip->prefix6 ? vip->prefix6 : 128;
		t->one_port = vip->port_last ? 0 : vip->port;
		t->slots = calloc(t->size, sizeof(*t->slots));
		t->second = calloc(t->size, sizeof(*t->second));
		out->n = v + 1;
		if (!t->slots || !t->second) {
			fprintf(stderr, "expect: out of memory\n");
			expect_free(out);
			return -1;
		}
		err = mlv_table_build(&spec, tb, vip->n_backends, t->slots,
				      t->second, &t->fingerprint);
		if (err) {
			fprintf(stderr, "expect: table build for %s: %s\n",
				vip->name, mlv_strerror(err));
			expect_free(out);
			return -1;
		}
	}
	return 0;
}

void expect_free(struct expect_tables *t)
{
	for (uint32_t v = 0; v < t->n; v++) {
		free(t->t[v].slots);
		free(t->t[v].second);
	}
	memset(t, 0, sizeof(*t));
}

uint32_t expect_hash(const struct mlv_flow_key *key)
{
	return mlv_flow_hash(key);
}

uint32_t expect_slot_hash(const struct expect_tables *t, uint16_t vip,
			  const struct mlv_flow_key *key)
{
	const struct expect_table *tab = &t->t[vip];
	struct mlv_flow_key k = *key;

	switch (tab->hash) {
	case 1:   /* 3tuple: no source port; a VIP of one port always has
		     that destination port, fragments included */
		k.sport = 0;
		if (tab->one_port)
			k.dport = htons(tab->one_port);
		break;
	case 2:   /* source: no ports; IPv6 source cut to its prefix */
		k.sport = 0;
		k.dport = 0;
		if (k.family == 6)
			for (uint32_t bit = tab->prefix6; bit < 128; bit++)
				k.src[bit / 8] &= (uint8_t)~(0x80u >> (bit % 8));
		break;
	default:
		break;
	}
	return expect_hash(&k);
}

void expect_choices(const struct expect_tables *t, uint16_t vip,
		    const struct mlv_flow_key *key, int *first, int *second)
{
	const struct expect_table *tab = &t->t[vip];
	uint32_t slot = expect_slot_hash(t, vip, key) % tab->size;

	*first = tab->slots[slot] == MLV_MAGLEV_NO_BACKEND ? -1 : tab->slots[slot];
	*second = tab->second[slot] == MLV_MAGLEV_NO_BACKEND ? -1
							     : tab->second[slot];
}

int expect_backend(const struct expect_tables *t, uint16_t vip,
		   const struct mlv_flow_key *key)
{
	int first, second;

	expect_choices(t, vip, key, &first, &second);
	if (first < 0 || !t->t[vip].down[first])
		return first;
	return second >= 0 && !t->t[vip].down[second] ? second : -1;
}
