/* SPDX-License-Identifier: BSD-3-Clause */
/* Second chance in a generation (docs/second-chance.md): the previous
 * owners a table change leaves for second_chance.window, carried while
 * the table stays and dropped when the window ends or the table's size
 * changes; the hops a packet carries (mlv_gen_sc_hops); the templates'
 * hop block and the MTU room it costs; and what a restarted instance,
 * which has no previous generation, still sends: after a backend joins,
 * the previous owner of each slot it takes is the slot's new second
 * choice (rendezvous and ring always, Maglev mostly).
 *
 * Expectations are written with backend names, from the tables of the
 * generations themselves, never from the code under test's index maps. */
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
#include "control/generation/second_chance.h"
#include "tests/support/config_load.h"

#define NONE MLV_GEN_NO_HOP

/* s-2's state in cfg_of's configs */
static const char *s2_state = "active";

/* VIP v: gue, second chance (window 60 s) from defaults; off: the same
 * without it; ipip: ipip, which defaults.second_chance does not reach. */
static struct mlv_config *cfg_of(const char *table, uint32_t size,
				 bool with_s1, bool with_s5)
{
	char be[512], y[2048];

	snprintf(be, sizeof(be),
		 "    backends:\n%s"
		 "      - {name: s-2, address: 10.99.1.2, state: %s}\n"
		 "      - {name: s-3, address: 10.99.1.3, weight: 200}\n"
		 "      - {name: s-4, address: 10.99.1.4}\n%s",
		 with_s1 ? "      - {name: s-1, address: 10.99.1.1}\n" : "",
		 s2_state, with_s5 ? "      - {name: s-5, address: 10.99.1.5}\n" : "");
	snprintf(y, sizeof(y),
		 "dataplane:\n"
		 "  ports:\n"
		 "    - {name: ext, device: net_null0, address: 10.99.0.1, "
		 "next_hop: \"02:00:00:00:00:fe\"}\n"
		 "defaults:\n"
		 "  table_size: %u\n"
		 "  table: %s\n"
		 "  forwarding: gue\n"
		 "  second_chance: {enabled: true, window: 60s}\n"
		 "vips:\n"
		 "  - name: v\n    address: 192.0.2.1\n    port: 80\n"
		 "    protocol: tcp\n%s"
		 "  - name: off\n    address: 192.0.2.2\n    port: 80\n"
		 "    protocol: tcp\n    second_chance: {enabled: false}\n%s"
		 "  - name: ipip\n    address: 192.0.2.3\n    port: 80\n"
		 "    protocol: tcp\n    forwarding: ipip\n%s",
		 size, table, be, be, be);
	return config_load_ok(y, strlen(y));
}

static struct mlv_generation *gen_at(const struct mlv_config *cfg,
				     const struct mlv_generation *prev,
				     uint64_t now_ms)
{
	struct mlv_gen_port_info info = { .mac = { 2, 0, 0, 0, 0, 1 },
					  .next_hop = { 2, 0, 0, 0, 0, 0xfe } };
	struct mlv_gen_build_opts opts = { .now_ms = now_ms };
	struct mlv_generation *g = NULL;

	assert_non_null(cfg);
	assert_int_equal(mlv_gen_build_opt(cfg, &info, 1,
					   prev ? prev->number + 1 : 1, NULL,
					   NULL, prev, &opts, &g), MLV_OK);
	return g;
}

static const struct mlv_gen_vip *vip_named(const struct mlv_generation *g,
					   const char *name)
{
	for (uint32_t v = 0; v < g->n_vips; v++)
		if (strcmp(g->vips[v].name, name) == 0)
			return &g->vips[v];
	fail_msg("no VIP %s", name);
	return NULL;
}

static const char *name_at(const struct mlv_gen_vip *v, uint16_t i)
{
	return i == NONE ? NULL : v->backends[i].name;
}

static bool has_backend(const struct mlv_gen_vip *v, const char *name)
{
	for (uint32_t b = 0; name && b < v->n_backends; b++)
		if (strcmp(v->backends[b].name, name) == 0)
			return true;
	return false;
}

static bool same_name(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* v's previous owners after pv, by name: a slot whose owner changed
 * names pv's owner (if still a backend); one that did not, pv's previous
 * owner while carry; never the owner now. Returns the changed slots. */
static uint32_t check_previous(const struct mlv_gen_vip *v,
			       const struct mlv_gen_vip *pv, bool carry)
{
	uint32_t changed = 0, named = 0;

	assert_int_equal(v->table_size, pv->table_size);
	for (uint32_t s = 0; s < v->table_size; s++) {
		const char *now = name_at(v, v->table[s]);
		const char *was = name_at(pv, pv->table[s]);
		const char *want = NULL;

		if (!same_name(now, was)) {
			changed++;
			want = was;
		} else if (carry && pv->previous) {
			want = name_at(pv, pv->previous[s]);
		}
		if (!has_backend(v, want) || same_name(want, now))
			want = NULL;
		named += want != NULL;
		if (!v->previous) {
			assert_null(want);
			continue;
		}
		if (!same_name(name_at(v, v->previous[s]), want))
			fail_msg("slot %u: previous %s, want %s", s,
				 name_at(v, v->previous[s]) ?: "-",
				 want ?: "-");
	}
	if (named == 0)
		assert_null(v->previous);
	return changed;
}

/* A backend joins, the window opens; a rebuild without a table change
 * keeps the hops and the deadline; the window's end drops them. Only the
 * second-chance VIP has them, and only its templates the hop block. */
static void test_window(void **state)
{
	struct mlv_config *c4 = cfg_of("maglev", 1009, true, false);
	struct mlv_config *c5 = cfg_of("maglev", 1009, true, true);
	struct mlv_generation *g1, *g2, *g3, *g4;
	const struct mlv_gen_vip *v;
	(void)state;

	g1 = gen_at(c4, NULL, 1000);
	assert_null(vip_named(g1, "v")->previous);
	assert_true(vip_named(g1, "v")->second_chance);
	assert_false(vip_named(g1, "off")->second_chance);
	assert_false(vip_named(g1, "ipip")->second_chance);
	assert_int_equal(mlv_gen_sc_expiry(g1), 0);

	g2 = gen_at(c5, g1, 2000);
	v = vip_named(g2, "v");
	assert_non_null(v->previous);
	assert_true(check_previous(v, vip_named(g1, "v"), true) > 0);
	assert_int_equal(v->previous_until_ms, 2000 + 60000);
	assert_null(vip_named(g2, "off")->previous);
	assert_null(vip_named(g2, "ipip")->previous);
	assert_int_equal(mlv_gen_sc_expiry(g2), 62000);

	/* the templates: 12 bytes of hops after the GUE header over IPv4 */
	assert_int_equal(v->backends[0].encap[0].sc_off, 14 + 20 + 8 + 4);
	assert_int_equal(v->backends[0].encap[0].len, 14 + 20 + 8 + 4 + 12);
	assert_int_equal(vip_named(g2, "off")->backends[0].encap[0].sc_off, 0);
	assert_int_equal(v->mtu_room + 12, vip_named(g2, "off")->mtu_room);

	g3 = gen_at(c5, g2, 30000);
	v = vip_named(g3, "v");
	assert_int_equal(check_previous(v, vip_named(g2, "v"), true), 0);
	assert_non_null(v->previous);
	assert_int_equal(v->previous_until_ms, 62000);

	g4 = gen_at(c5, g3, 62000);
	assert_null(vip_named(g4, "v")->previous);
	assert_int_equal(mlv_gen_sc_expiry(g4), 0);

	mlv_gen_free(g4);
	mlv_gen_free(g3);
	mlv_gen_free(g2);
	mlv_gen_free(g1);
	mlv_config_free(c5);
	mlv_config_free(c4);
}

/* A second change inside the window: the new changes name their owner
 * before it, the rest keep theirs, a removed backend is never a hop, and
 * the deadline moves; a new table size has no previous owners. */
static void test_changes_in_window(void **state)
{
	struct mlv_config *c4 = cfg_of("rendezvous", 1009, true, false);
	struct mlv_config *c5 = cfg_of("rendezvous", 1009, true, true);
	struct mlv_config *no1 = cfg_of("rendezvous", 1009, false, true);
	struct mlv_config *big = cfg_of("rendezvous", 1013, false, true);
	struct mlv_generation *g1, *g2, *g3, *g4;
	const struct mlv_gen_vip *v;
	(void)state;

	g1 = gen_at(c4, NULL, 1000);
	g2 = gen_at(c5, g1, 2000);
	g3 = gen_at(no1, g2, 5000);
	v = vip_named(g3, "v");
	assert_true(check_previous(v, vip_named(g2, "v"), true) > 0);
	assert_int_equal(v->previous_until_ms, 65000);
	for (uint32_t s = 0; s < v->table_size; s++)
		assert_false(same_name(name_at(v, v->previous[s]), "s-1"));
	g4 = gen_at(big, g3, 6000);
	assert_null(vip_named(g4, "v")->previous);

	mlv_gen_free(g4);
	mlv_gen_free(g3);
	mlv_gen_free(g2);
	mlv_gen_free(g1);
	mlv_config_free(big);
	mlv_config_free(no1);
	mlv_config_free(c5);
	mlv_config_free(c4);
}

/* The hops of slot s for a packet to backend b, by name: the previous
 * owner, the owner, the second choice, without b, none, repeats or a
 * backend that is down, at most two. */
static void check_hops(const struct mlv_gen_vip *v, uint32_t s,
		       const struct mlv_gen_backend *b)
{
	/* the undrained owner counts when it is the draining s-2
	 * (test_drained_everywhere checks the undrained table itself) */
	const char *u = v->undrained ? name_at(v, v->undrained[s]) : NULL;
	const char *cand[4] = {
		v->previous ? name_at(v, v->previous[s]) : NULL,
		name_at(v, v->table[s]),
		same_name(u, "s-2") && strcmp(s2_state, "drain") == 0 ? u : NULL,
		name_at(v, v->second[s]),
	};
	const char *want[2];
	const struct mlv_gen_backend *hops[MLV_SC_MAX_HOPS];
	uint32_t n_want = 0, n;

	for (int c = 0; c < 4 && n_want < 2; c++) {
		if (cand[c] && strcmp(cand[c], "s-2") == 0 &&
		    strcmp(s2_state, "down") == 0)
			continue;
		if (!cand[c] || strcmp(cand[c], b->name) == 0 ||
		    (n_want > 0 && same_name(want[0], cand[c])))
			continue;
		want[n_want++] = cand[c];
	}
	n = mlv_gen_sc_hops(v, s, b, hops);
	assert_int_equal(n, n_want);
	for (uint32_t k = 0; k < n; k++) {
		const struct mlv_gen_backend *h = NULL;

		for (uint32_t i = 0; i < v->n_backends; i++)
			if (strcmp(v->backends[i].name, want[k]) == 0)
				h = &v->backends[i];
		assert_non_null(h);
		assert_ptr_equal(hops[k], h);
	}
}

static void hops_of_all(void)
{
	struct mlv_config *c4 = cfg_of("maglev", 1009, true, false);
	struct mlv_config *c5 = cfg_of("maglev", 1009, true, true);
	struct mlv_generation *g1 = gen_at(c4, NULL, 1000);
	struct mlv_generation *g2 = gen_at(c5, g1, 2000);
	const struct mlv_gen_vip *v = vip_named(g2, "v");
	uint32_t three = 0;

	for (uint32_t s = 0; s < v->table_size; s++) {
		/* a new flow: to the owner */
		check_hops(v, s, &v->backends[v->table[s]]);
		/* a tracked flow elsewhere: to each backend in turn */
		for (uint32_t b = 0; b < v->n_backends; b++)
			check_hops(v, s, &v->backends[b]);
		three += v->previous[s] != NONE && v->previous[s] != v->second[s];
	}
	/* some slots offer three candidates, so the cap of two is exercised */
	assert_true(three > 0);
	mlv_gen_free(g2);
	mlv_gen_free(g1);
	mlv_config_free(c5);
	mlv_config_free(c4);
}

/* Every slot, for a new flow and for a tracked flow to each backend; and
 * again with s-2 down, which keeps its slots but is never a hop. */
static void test_hops(void **state)
{
	(void)state;
	s2_state = "active";
	hops_of_all();
	s2_state = "down";
	hops_of_all();
	s2_state = "drain";
	hops_of_all();
	s2_state = "active";
}

/* A drained backend stays a hop in the slots it would own undrained, on
 * every instance: one built with no previous generation (restarted, or
 * one that never saw the drain) lists s-2 first in exactly the slots
 * that s-2 owns in a generation where it is simply active, and nowhere
 * else; a VIP without second chance has no undrained table. */
static void test_drained_everywhere(void **state)
{
	static const char *const kinds[] = { "rendezvous", "ring", "maglev" };
	(void)state;

	for (int k = 0; k < 3; k++) {
		struct mlv_config *act, *drn;
		struct mlv_generation *ga, *gd;
		const struct mlv_gen_vip *a, *d;
		uint32_t owned = 0;

		s2_state = "active";
		act = cfg_of(kinds[k], 1009, true, false);
		s2_state = "drain";
		drn = cfg_of(kinds[k], 1009, true, false);
		s2_state = "active";
		ga = gen_at(act, NULL, 1000);
		gd = gen_at(drn, NULL, 1000);
		a = vip_named(ga, "v");
		d = vip_named(gd, "v");
		assert_null(a->undrained);
		assert_non_null(d->undrained);
		assert_null(vip_named(gd, "off")->undrained);
		assert_null(d->previous);
		for (uint32_t s = 0; s < d->table_size; s++) {
			const struct mlv_gen_backend *hops[MLV_SC_MAX_HOPS];
			const struct mlv_gen_backend *b = &d->backends[d->table[s]];
			uint32_t n = mlv_gen_sc_hops(d, s, b, hops);
			bool was = same_name(name_at(a, a->table[s]), "s-2");
			bool listed = false;

			assert_false(same_name(b->name, "s-2"));
			for (uint32_t h = 0; h < n; h++)
				listed |= same_name(hops[h]->name, "s-2");
			if (was) {
				owned++;
				assert_true(n >= 1);
				assert_string_equal(hops[0]->name, "s-2");
			} else {
				assert_false(listed);
			}
		}
		assert_true(owned > 0);
		print_message("%s: s-2 drained is the first hop of all %u slots "
			      "it owns undrained\n", kinds[k], owned);
		mlv_gen_free(gd);
		mlv_gen_free(ga);
		mlv_config_free(drn);
		mlv_config_free(act);
	}
}

/* A restarted instance builds the new backend set with no previous
 * generation: no previous owners, so its packets carry the second choice;
 * in the slots the new backend took, that is the previous owner for
 * rendezvous and ring always, and for Maglev in most of them. */
static void test_restarted_instance(void **state)
{
	static const char *const kinds[] = { "rendezvous", "ring", "maglev" };
	(void)state;

	for (int k = 0; k < 3; k++) {
		struct mlv_config *c4 = cfg_of(kinds[k], 1009, true, false);
		struct mlv_config *c5 = cfg_of(kinds[k], 1009, true, true);
		struct mlv_generation *old = gen_at(c4, NULL, 1000);
		struct mlv_generation *fresh = gen_at(c5, NULL, 2000);
		const struct mlv_gen_vip *o = vip_named(old, "v");
		const struct mlv_gen_vip *v = vip_named(fresh, "v");
		uint32_t taken = 0, saved = 0;

		assert_null(v->previous);
		for (uint32_t s = 0; s < v->table_size; s++) {
			const struct mlv_gen_backend *hops[MLV_SC_MAX_HOPS];
			const struct mlv_gen_backend *b = &v->backends[v->table[s]];

			if (strcmp(b->name, "s-5") != 0)
				continue;
			taken++;
			assert_int_equal(mlv_gen_sc_hops(v, s, b, hops), 1);
			saved += same_name(name_at(v, v->second[s]),
					   name_at(o, o->table[s]));
		}
		assert_true(taken > 0);
		print_message("%s: the previous owner is the second choice in %u of the %u slots s-5 takes\n",
			      kinds[k], saved, taken);
		if (k < 2)
			assert_int_equal(saved, taken);
		else
			assert_true(saved * 10 >= taken * 8);
		mlv_gen_free(fresh);
		mlv_gen_free(old);
		mlv_config_free(c5);
		mlv_config_free(c4);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_changes_in_window),
		cmocka_unit_test(test_hops),
		cmocka_unit_test(test_drained_everywhere),
		cmocka_unit_test(test_restarted_instance),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
