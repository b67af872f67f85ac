/* SPDX-License-Identifier: BSD-3-Clause */
/* Second chance in a generation (docs/second-chance.md): each slot's
 * history of former owners, carried through later generations, past the
 * window and through later changes, dropped with a removed backend or a
 * new table size; the window after a change and its likely holders; the
 * hops a packet carries (mlv_gen_sc_hops); the templates'
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

/* Whether every generation of g[0..n) has a backend named name. */
static bool in_all(struct mlv_generation *const *g, uint32_t n,
		   const char *vip, const char *name)
{
	for (uint32_t k = 0; k < n; k++)
		if (!has_backend(vip_named(g[k], vip), name))
			return false;
	return true;
}

/* The last generation's slot history of VIP "v" against a naive
 * reference walked from the tables of the whole sequence g[0..n): for
 * each slot, going back from the generation before the last while the
 * table size stays, the owners that are not the owner now, are still
 * configured in every later generation and were not seen yet, the first
 * two (sequences of three generations or fewer, or without removals, so
 * that the depth of two never hides an older owner). Returns how many
 * slots have a history. */
static uint32_t check_history(struct mlv_generation *const *g, uint32_t n)
{
	const struct mlv_gen_vip *v = vip_named(g[n - 1], "v");
	uint32_t with = 0;

	for (uint32_t s = 0; s < v->table_size; s++) {
		const char *now = name_at(v, v->table[s]);
		const char *want[2] = { NULL, NULL };
		uint32_t got = 0;

		for (uint32_t k = n - 1; k-- > 0 && got < 2;) {
			const struct mlv_gen_vip *o = vip_named(g[k], "v");
			const char *nm;

			if (o->table_size != v->table_size)
				break;
			nm = name_at(o, o->table[s]);
			if (!nm || same_name(nm, now) ||
			    !in_all(g + k + 1, n - k - 1, "v", nm) ||
			    (got > 0 && same_name(want[0], nm)))
				continue;
			want[got++] = nm;
		}
		with += got > 0;
		if (!v->previous) {
			assert_int_equal(got, 0);
			continue;
		}
		if (!same_name(name_at(v, v->previous[s]), want[0]) ||
		    !same_name(name_at(v, v->earlier[s]), want[1]))
			fail_msg("slot %u: history %s, %s; want %s, %s", s,
				 name_at(v, v->previous[s]) ?: "-",
				 name_at(v, v->earlier[s]) ?: "-",
				 want[0] ?: "-", want[1] ?: "-");
	}
	if (with == 0) {
		assert_null(v->previous);
		assert_null(v->earlier);
	}
	return with;
}

/* The likely holder of every slot: the previous owner while the window
 * is open, none after it (no backend drains here). */
static void check_holders(const struct mlv_gen_vip *v, bool open)
{
	for (uint32_t s = 0; s < v->table_size; s++) {
		const struct mlv_gen_backend *h = mlv_gen_likely_holder(v, s);
		const char *want = open && v->previous ?
				   name_at(v, v->previous[s]) : NULL;

		assert_true(same_name(h ? h->name : NULL, want));
	}
}

/* A backend joins, the window opens; a rebuild without a table change
 * keeps the history and the deadline; the window's end closes it but
 * keeps the history, which stays through later changes to other slots.
 * Only the second-chance VIP has one, and only its templates the hop
 * block. */
static void test_window(void **state)
{
	struct mlv_config *c4 = cfg_of("maglev", 1009, true, false);
	struct mlv_config *c5 = cfg_of("maglev", 1009, true, true);
	struct mlv_config *no1 = cfg_of("maglev", 1009, false, true);
	struct mlv_generation *g[5];
	const struct mlv_gen_vip *v;
	(void)state;

	g[0] = gen_at(c4, NULL, 1000);
	assert_null(vip_named(g[0], "v")->previous);
	assert_true(vip_named(g[0], "v")->second_chance);
	assert_false(vip_named(g[0], "off")->second_chance);
	assert_false(vip_named(g[0], "ipip")->second_chance);
	assert_int_equal(mlv_gen_sc_expiry(g[0]), 0);

	g[1] = gen_at(c5, g[0], 2000);
	v = vip_named(g[1], "v");
	assert_non_null(v->previous);
	assert_true(check_history(g, 2) > 0);
	assert_int_equal(v->previous_until_ms, 2000 + 60000);
	assert_true(v->window_open);
	assert_true(v->features & MLV_VIP_F_HOLDERS);
	check_holders(v, true);
	assert_null(vip_named(g[1], "off")->previous);
	assert_null(vip_named(g[1], "ipip")->previous);
	assert_int_equal(mlv_gen_sc_expiry(g[1]), 62000);

	/* the templates: 12 bytes of hops after the GUE header over IPv4 */
	assert_int_equal(v->backends[0].encap[0].sc_off, 14 + 20 + 8 + 4);
	assert_int_equal(v->backends[0].encap[0].len, 14 + 20 + 8 + 4 + 12);
	assert_int_equal(vip_named(g[1], "off")->backends[0].encap[0].sc_off, 0);
	assert_int_equal(v->mtu_room + 12, vip_named(g[1], "off")->mtu_room);

	g[2] = gen_at(c5, g[1], 30000);
	v = vip_named(g[2], "v");
	assert_true(check_history(g, 3) > 0);
	assert_int_equal(v->previous_until_ms, 62000);
	assert_true(v->window_open);

	/* the window ends: the same history, no likely holder */
	g[3] = gen_at(c5, g[2], 62000);
	v = vip_named(g[3], "v");
	assert_true(check_history(g, 4) > 0);
	assert_false(v->window_open);
	assert_false(v->features & MLV_VIP_F_HOLDERS);
	check_holders(v, false);
	assert_int_equal(mlv_gen_sc_expiry(g[3]), 0);
	assert_int_equal(mlv_gen_sc_window_left_ms(v, 62000), 0);

	/* long after, another change: the slots s-5 took keep s-5's
	 * predecessors unless they moved again, and a window opens */
	g[4] = gen_at(no1, g[3], 900000);
	v = vip_named(g[4], "v");
	assert_true(check_history(g, 5) > 0);
	assert_true(v->window_open);
	assert_int_equal(mlv_gen_sc_expiry(g[4]), 960000);

	for (int k = 4; k >= 0; k--)
		mlv_gen_free(g[k]);
	mlv_config_free(no1);
	mlv_config_free(c5);
	mlv_config_free(c4);
}

/* A second change inside the window: s-5 joins, then s-1, which takes
 * slots from s-5 among others: those slots name s-5 and, before it,
 * their first owner; the deadline moves. s-1 joining as s-5 leaves
 * instead: a removed backend is never a hop. A new table size has no
 * history. */
static void test_changes_in_window(void **state)
{
	static const char *const kinds[] = { "rendezvous", "ring", "maglev" };
	(void)state;

	for (int k = 0; k < 3; k++) {
		struct mlv_config *base = cfg_of(kinds[k], 1009, false, false);
		struct mlv_config *add5 = cfg_of(kinds[k], 1009, false, true);
		struct mlv_config *both = cfg_of(kinds[k], 1009, true, true);
		struct mlv_config *swap = cfg_of(kinds[k], 1009, true, false);
		struct mlv_config *big = cfg_of(kinds[k], 1013, true, true);
		struct mlv_generation *g[4];
		const struct mlv_gen_vip *v;
		uint32_t two = 0;

		g[0] = gen_at(base, NULL, 1000);
		g[1] = gen_at(add5, g[0], 2000);
		g[2] = gen_at(both, g[1], 5000);
		v = vip_named(g[2], "v");
		assert_true(check_history(g, 3) > 0);
		assert_int_equal(v->previous_until_ms, 65000);
		for (uint32_t s = 0; s < v->table_size; s++)
			two += v->earlier[s] != NONE;
		/* some slots changed twice and keep both former owners */
		print_message("%s: %u slots keep two former owners\n",
			      kinds[k], two);
		assert_true(two > 0);
		mlv_gen_free(g[2]);

		g[2] = gen_at(swap, g[1], 5000);
		v = vip_named(g[2], "v");
		assert_true(check_history(g, 3) > 0);
		for (uint32_t s = 0; s < v->table_size; s++) {
			assert_false(same_name(name_at(v, v->previous[s]), "s-5"));
			assert_false(same_name(name_at(v, v->earlier[s]), "s-5"));
		}
		g[3] = gen_at(big, g[2], 6000);
		assert_null(vip_named(g[3], "v")->previous);
		assert_null(vip_named(g[3], "v")->earlier);
		for (int i = 3; i >= 0; i--)
			mlv_gen_free(g[i]);
		mlv_config_free(big);
		mlv_config_free(swap);
		mlv_config_free(both);
		mlv_config_free(add5);
		mlv_config_free(base);
	}
}

/* The hops of slot s for a packet to backend b, by name: the previous
 * owner, the owner, the earlier owner, the drained s-2 where it would
 * own the slot, the second choice, without b, none, repeats or a
 * backend that is down, at most two. */
static void check_hops(const struct mlv_gen_vip *v, uint32_t s,
		       const struct mlv_gen_backend *b)
{
	/* the undrained owner counts when it is the draining s-2
	 * (test_drained_everywhere checks the undrained table itself) */
	const char *u = v->undrained ? name_at(v, v->undrained[s]) : NULL;
	const char *cand[5] = {
		v->previous ? name_at(v, v->previous[s]) : NULL,
		name_at(v, v->table[s]),
		v->earlier ? name_at(v, v->earlier[s]) : NULL,
		same_name(u, "s-2") && strcmp(s2_state, "drain") == 0 ? u : NULL,
		name_at(v, v->second[s]),
	};
	const char *want[2];
	const struct mlv_gen_backend *hops[MLV_SC_MAX_HOPS];
	uint32_t n_want = 0, n;

	for (int c = 0; c < 5 && n_want < 2; c++) {
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

/* Every slot of v, for a new flow and for a tracked flow to each
 * backend; returns the slots with more candidates than hops. */
static uint32_t hops_of_vip(const struct mlv_gen_vip *v)
{
	uint32_t more = 0;

	for (uint32_t s = 0; s < v->table_size; s++) {
		/* a new flow: to the owner */
		check_hops(v, s, &v->backends[v->table[s]]);
		/* a tracked flow elsewhere: to each backend in turn */
		for (uint32_t b = 0; b < v->n_backends; b++)
			check_hops(v, s, &v->backends[b]);
		more += v->previous && v->previous[s] != NONE &&
			v->previous[s] != v->second[s];
	}
	return more;
}

static void hops_of_all(void)
{
	struct mlv_config *base = cfg_of("maglev", 1009, false, false);
	struct mlv_config *add5 = cfg_of("maglev", 1009, false, true);
	struct mlv_config *both = cfg_of("maglev", 1009, true, true);
	struct mlv_generation *g1 = gen_at(base, NULL, 1000);
	struct mlv_generation *g2 = gen_at(add5, g1, 2000);
	struct mlv_generation *g3 = gen_at(both, g2, 3000);
	uint32_t earlier = 0;

	/* some slots offer three candidates, so the cap of two is exercised */
	assert_true(hops_of_vip(vip_named(g2, "v")) > 0);
	assert_true(hops_of_vip(vip_named(g3, "v")) > 0);
	for (uint32_t s = 0; s < vip_named(g3, "v")->table_size; s++)
		earlier += vip_named(g3, "v")->earlier[s] != NONE;
	assert_true(earlier > 0);
	mlv_gen_free(g3);
	mlv_gen_free(g2);
	mlv_gen_free(g1);
	mlv_config_free(both);
	mlv_config_free(add5);
	mlv_config_free(base);
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
