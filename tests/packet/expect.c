#include "expect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/maglev.h"
#include "dataplane/flow_hash.h"

int expect_build(struct expect_tables *out, const struct sc_vip *vips,
		 uint32_t n)
{
	memset(out, 0, sizeof(*out));
	for (uint32_t v = 0; v < n; v++) {
		const struct sc_vip *vip = &vips[v];
		struct mlv_maglev_backend mb[SC_MAX_BACKENDS];
		struct expect_table *t = &out->t[v];
		enum mlv_err err;

		for (uint32_t i = 0; i < vip->n_backends; i++) {
			mb[i].name = vip->backends[i].name;
			mb[i].weight = vip->backends[i].drain ? 0 :
				       vip->backends[i].weight;
		}
		t->size = vip->table_size;
		t->slots = calloc(t->size, sizeof(*t->slots));
		out->n = v + 1;
		if (!t->slots) {
			fprintf(stderr, "expect: out of memory\n");
			expect_free(out);
			return -1;
		}
		err = mlv_maglev_build(mb, vip->n_backends, t->size, t->slots,
				       &t->fingerprint);
		if (err) {
			fprintf(stderr, "expect: maglev build for %s: %s\n",
				vip->name, mlv_strerror(err));
			expect_free(out);
			return -1;
		}
	}
	return 0;
}

void expect_free(struct expect_tables *t)
{
	for (uint32_t v = 0; v < t->n; v++)
		free(t->t[v].slots);
	memset(t, 0, sizeof(*t));
}

uint32_t expect_hash(const struct mlv_flow_key *key)
{
	return mlv_flow_hash(key);
}

int expect_backend(const struct expect_tables *t, uint16_t vip,
		   const struct mlv_flow_key *key)
{
	const struct expect_table *tab = &t->t[vip];
	uint16_t s = tab->slots[expect_hash(key) % tab->size];

	return s == MLV_MAGLEV_NO_BACKEND ? -1 : s;
}
