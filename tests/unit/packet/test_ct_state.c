/* SPDX-License-Identifier: BSD-3-Clause */
/* Connection tracking lent out and filled back (conntrack.h, "Saving and
 * restoring a table across a restart"): a table of the same capacity
 * given the saved seed finds every exported flow again, IPv4 and IPv6,
 * with its backend, state and time left; without the seed its IPv6 flows
 * are not found; a restore never overwrites a live flow, takes an
 * expired one's way, clamps the time left to the state's timeout,
 * refuses what is out of range, and counts the flows in the tally. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dataplane/packet/conntrack.h"
#include "dataplane/packet/flow_tally.h"

#define T_TCP 300000u
#define T_UDP 30000u

static const struct mlv_ct_params params = {
	.entries = 1024,
	.tcp_timeout_ms = T_TCP,
	.tcp_handshake_timeout_ms = 5000,
	.tcp_closing_timeout_ms = 10000,
	.udp_timeout_ms = T_UDP,
	.other_timeout_ms = 2000,
};

static void *alloc(size_t size, void *ctx)
{
	(void)ctx;
	return calloc(1, size);
}

static void release(void *ptr, void *ctx)
{
	(void)ctx;
	free(ptr);
}

static struct mlv_ct *make(void)
{
	struct mlv_ct *ct = mlv_ct_create(&params, alloc, release, NULL);

	assert_non_null(ct);
	return ct;
}

/* Flow i: IPv4 for even i, IPv6 for odd; TCP but every fifth UDP. */
static void key_of(uint32_t i, struct mlv_flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = i % 2 ? 6 : 4;
	k->proto = i % 5 == 0 ? 17 : 6;
	k->src[0] = 10;
	k->src[1] = (uint8_t)(i >> 8);
	k->src[2] = (uint8_t)i;
	k->src[k->family == 6 ? 15 : 3] = (uint8_t)(i * 7);
	k->dst[0] = 192;
	k->dst[3] = 10;
	k->sport = (uint16_t)(1024 + i);
	k->dport = 80;
}

/* A hash of i's own, spread over the buckets (the table takes any). */
static uint32_t hash_of(uint32_t i)
{
	uint32_t h = i * 2654435761u;

	return h ^ (h >> 15);
}

/* Track n flows in ct at now: flow i to backend 100 + i % 3, TCP ones
 * established (SYN then ACK), UDP ones as UDP. */
static void track(struct mlv_ct *ct, uint32_t n, uint32_t now)
{
	for (uint32_t i = 0; i < n; i++) {
		struct mlv_flow_key k;
		bool is_new;
		struct mlv_ct_entry *e;

		key_of(i, &k);
		e = mlv_ct_lookup_or_insert(ct, &k, hash_of(i), now, &is_new);
		assert_true(is_new);
		e->backend_uid = 100 + i % 3;
		assert_true(mlv_ct_update(ct, e, k.proto == 6 ? 0x02 : 0, now));
		if (k.proto == 6) {
			e = mlv_ct_lookup(ct, &k, hash_of(i), now);
			assert_non_null(e);
			mlv_ct_update(ct, e, 0x10, now);
		}
	}
}

static uint32_t export_all(const struct mlv_ct *ct, uint32_t now,
			   struct mlv_ct_saved *out, uint32_t cap)
{
	uint32_t next = 0, total = 0, got;

	do {
		next = mlv_ct_export(ct, next, 7, now, out + total,
				     cap - total, &got);
		total += got;
	} while (next != 0);
	return total;
}

static void round_trip(void **state)
{
	struct mlv_ct *a = make(), *b = make(), *c = make();
	static struct mlv_ct_saved saved[1024];
	struct mlv_flow_tally *tally;
	const uint32_t n = 300, t_save = 5000, t_load = 777;
	uint32_t got;

	(void)state;
	assert_int_equal(mlv_flow_tally_create(&tally), MLV_OK);
	mlv_ct_set_tally(b, tally);
	track(a, n, 1000);
	got = export_all(a, t_save, saved, 1024);
	assert_int_equal(got, n);
	for (uint32_t i = 0; i < got; i++) {
		/* tracked at 1000, exported at 5000: 4 s of the timeout gone */
		uint32_t t = saved[i].entry.state == MLV_CT_UDP ? T_UDP : T_TCP;

		assert_int_equal(saved[i].left_ms, t - 4000);
		assert_true(saved[i].slot < 1024);
	}
	/* another process's table: its clock elsewhere, the seed given */
	assert_int_equal(mlv_ct_set_seed(b, mlv_ct_seed(a)), MLV_OK);
	for (uint32_t i = 0; i < got; i++)
		assert_true(mlv_ct_restore(b, &saved[i], t_load));
	assert_int_equal(mlv_ct_occupancy(b), n);
	/* each in the way it had: the one its look-ups try first */
	{
		static struct mlv_ct_saved again[1024];
		uint32_t n2 = export_all(b, t_load, again, 1024);

		assert_int_equal(n2, got);
		for (uint32_t i = 0; i < n2; i++) {
			bool same = false;

			for (uint32_t j = 0; j < got && !same; j++)
				same = !memcmp(again[i].entry.flow,
					       saved[j].entry.flow, 14) &&
				       again[i].slot == saved[j].slot;
			assert_true(same);
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		struct mlv_flow_key k;
		const struct mlv_ct_entry *e;

		key_of(i, &k);
		e = mlv_ct_lookup(b, &k, hash_of(i), t_load);
		assert_non_null(e);
		assert_int_equal(e->backend_uid, 100 + i % 3);
		assert_int_equal(e->state, k.proto == 6 ?
				 MLV_CT_TCP_ESTABLISHED : MLV_CT_UDP);
		assert_int_equal(e->expires_ms - t_load,
				 (k.proto == 6 ? T_TCP : T_UDP) - 4000);
		assert_int_equal(e->cached_gen, 0);
	}
	/* the tally counts them by backend: 100 for flows 0, 3, 6, ... */
	{
		struct mlv_flow_tally *const per[1] = { tally };
		const struct mlv_flow_tally_set set = { 1, per };
		uint64_t counts[2];

		mlv_flow_tally_backend(&set, 100, counts);
		assert_int_equal(counts[0] + counts[1], (n + 2) / 3);
		/* all established or UDP: active */
		assert_int_equal(counts[1], 0);
	}
	/* without the seed the IPv6 fingerprints do not match: only the
	 * IPv4 flows are found */
	for (uint32_t i = 0; i < got; i++)
		assert_true(mlv_ct_restore(c, &saved[i], t_load));
	for (uint32_t i = 0; i < n; i++) {
		struct mlv_flow_key k;

		key_of(i, &k);
		assert_true((mlv_ct_lookup(c, &k, hash_of(i), t_load) != NULL) ==
			    (k.family == 4));
	}
	/* a seed is set only on an empty table */
	assert_int_equal(mlv_ct_set_seed(b, 1), MLV_E_BUSY);
	mlv_ct_destroy(a);
	mlv_ct_destroy(b);
	mlv_ct_destroy(c);
	mlv_flow_tally_destroy(tally);
}

/* One bucket: four live flows fill it and a fifth finds no room; an
 * expired one gives its way up; out of range is refused. */
static void restore_rules(void **state)
{
	struct mlv_ct *ct = make();
	struct mlv_ct_saved s;
	const uint32_t now = 50000;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.entry.state = MLV_CT_TCP_ESTABLISHED;
	s.entry.backend_uid = 7;
	s.entry.flow[0] = 1;
	s.slot = 3 * MLV_CT_WAYS;
	s.left_ms = 1000;
	for (uint8_t i = 0; i < MLV_CT_WAYS; i++) {
		s.entry.flow[1] = i;
		assert_true(mlv_ct_restore(ct, &s, now));
	}
	s.entry.flow[1] = 9;
	assert_false(mlv_ct_restore(ct, &s, now));
	assert_int_equal(mlv_ct_occupancy(ct), MLV_CT_WAYS);
	/* 1 s later they expired: the fifth takes a way, none more */
	assert_true(mlv_ct_restore(ct, &s, now + 1000));
	assert_int_equal(mlv_ct_occupancy(ct), MLV_CT_WAYS);
	/* the time left is at most the state's timeout here */
	s.slot = 4 * MLV_CT_WAYS;
	s.left_ms = MLV_CT_MAX_TIMEOUT_MS;
	assert_true(mlv_ct_restore(ct, &s, now));
	{
		struct mlv_ct_saved out[MLV_CT_WAYS];
		uint32_t got;

		mlv_ct_export(ct, 4, 1, now, out, MLV_CT_WAYS, &got);
		assert_int_equal(got, 1);
		assert_int_equal(out[0].left_ms, T_TCP);
	}
	/* out of range: a slot past the table, no state, no time */
	s.slot = 1024;
	assert_false(mlv_ct_restore(ct, &s, now));
	s.slot = 5 * MLV_CT_WAYS + 2;
	s.entry.state = MLV_CT_FREE;
	assert_false(mlv_ct_restore(ct, &s, now));
	s.entry.state = MLV_CT__NSTATES;
	assert_false(mlv_ct_restore(ct, &s, now));
	s.entry.state = MLV_CT_UDP;
	s.left_ms = 0;
	assert_false(mlv_ct_restore(ct, &s, now));
	mlv_ct_destroy(ct);
}

/* export pages through the table in whole buckets and stops before a
 * bucket whose flows might not fit. */
static void export_pages(void **state)
{
	struct mlv_ct *ct = make();
	struct mlv_ct_saved out[8];
	uint32_t got, next, total = 0, calls = 0;

	(void)state;
	track(ct, 200, 0);
	next = 0;
	do {
		next = mlv_ct_export(ct, next, 1000, 10, out, 8, &got);
		assert_true(got <= 8);
		total += got;
		calls++;
	} while (next != 0 && calls < 1000);
	assert_int_equal(total, 200);
	mlv_ct_destroy(ct);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(restore_rules),
		cmocka_unit_test(export_pages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
