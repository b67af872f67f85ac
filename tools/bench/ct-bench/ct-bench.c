/* SPDX-License-Identifier: BSD-3-Clause */
/* ct-bench: maglevd's connection-tracking table against rte_hash, in one
 * run, on the same keys, hashes and access order.
 *
 *   ct-bench [EAL args] -- [--quick] [--json] [--entries N] [--reps N]
 *
 * Scenarios (each on fresh tables of --entries slots):
 *   hit        F flows tracked (64K and 1M by default), look-ups of those
 *              flows in random order;
 *   hit-full   the table full (every slot in use), look-ups of flows it
 *              holds;
 *   miss-full  the table full, look-ups of flows it does not hold;
 *   new-full   the table full, every op a new flow first seen mid-stream
 *              (ACK): miss + insert; ours evicts its stalest flow,
 *              rte_hash (which cannot evict) deletes its oldest key and
 *              adds the new one;
 *   syn-full   the table full of established flows, every op a new SYN:
 *              ours leaves them untracked rather than evict established
 *              flows (rte_hash not run: it has no such policy).
 * Variants:
 *   ours-burst   bursts of 32: mlv_ct_prefetch all, then look up each
 *                (what a worker does); a hit also refreshes the entry
 *                (mlv_ct_update), a miss claims the slot;
 *   ours-single  one at a time, no prefetch;
 *   rte-single   rte_hash_lookup_with_hash_data (+ del/add for new-full);
 *   rte-bulk     rte_hash_lookup_with_hash_bulk_data on 32 keys (+ del/add).
 * rte_hash's hit is a pure read (no expiry refresh): its best case.
 *
 * Times are the thread's CPU time around each run (CLOCK_THREAD_CPUTIME_ID),
 * per op: on a shared machine, time the scheduler gives other processes
 * is not counted. Each figure is the best of --reps runs (what other
 * processes still cost, e.g. caches they evict, only ever adds time; the
 * runs of all variants are interleaved, so each has the same chance of a
 * quiet moment); --json also gives the median. Nothing here
 * asserts a time; the run fails only if a table gives a wrong answer.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "dataplane/packet/conntrack.h"
#include "dataplane/packet/flow_hash.h"

#define BURST 32u
#define MAX_REPS 99u
/* rte_hash's new flows are KS_NEW keys from here on, ours' from 0. */
#define RTE_NEW_KEYS (UINT32_MAX / 2)
/* The bench's clock advances 1 ms every 8192 ops (~8 Mpps). */
#define OPS_PER_MS_SHIFT 13

enum variant { V_OURS_BURST, V_OURS_SINGLE, V_RTE_SINGLE, V_RTE_BULK, V__COUNT };
static const char *const variant_name[V__COUNT] = {
	"ours-burst", "ours-single", "rte-single", "rte-bulk"};

/* Key spaces, so keys of one role can never collide with another's. */
enum key_space { KS_TRACKED = 1, KS_ABSENT = 2, KS_NEW = 3 };

struct item {
	struct mlv_flow_key key;
	uint32_t hash;
	uint32_t pad;
};

struct opts {
	bool quick, json;
	uint32_t entries;
	uint32_t reps;
	uint32_t trace_ops;    /* length of a look-up trace */
	uint32_t run_ops;      /* look-ups per run: a segment of the trace */
	uint32_t new_ops;      /* new flows per run */
	uint32_t flows[2];     /* tracked-flow counts of the hit scenarios */
};

struct result {
	char scenario[32];
	uint32_t flows;        /* flows tracked (ours; rte_hash may differ when full) */
	uint32_t rte_flows;
	double ns[V__COUNT];       /* best of the runs */
	double ns_median[V__COUNT];
	uint64_t rte_add_failures;
};

struct bench {
	struct opts o;
	struct mlv_ct *ct;
	struct rte_hash *h;
	uint32_t ours_now_base;     /* ours' clock: base + ops >> shift */
	uint64_t ours_ops;
	uint64_t sink;              /* keeps results live */
	uint32_t ours_next, rte_next, rte_del_next;   /* new-flow key cursors */
	struct result res[8];
	uint32_t n_res;
};

/* ---- keys ------------------------------------------------------------ */

/* A bijection on 32 bits (xorshift-multiply), so key i of a space is
 * distinct from every other i. */
static uint32_t mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/* Flow i of a space: client 10.x.y.z:port -> VIP 192.0.2.<space>:80.
 * (address, source port) carries all 32 bits of mix32(i) plus i >> 24. */
static void make_item(struct item *it, enum key_space space, uint32_t i)
{
	uint32_t m = mix32(i);

	memset(it, 0, sizeof(*it));
	it->key.family = 4;
	it->key.proto = 6;
	it->key.src[0] = 10;
	it->key.src[1] = (uint8_t)(m >> 24);
	it->key.src[2] = (uint8_t)(m >> 16);
	it->key.src[3] = (uint8_t)(m >> 8);
	it->key.dst[0] = 192;
	it->key.dst[2] = 2;
	it->key.dst[3] = (uint8_t)space;
	it->key.sport = (uint16_t)((m & 0xff) | ((i >> 24) << 8));
	it->key.dport = 80;
	it->hash = mlv_flow_hash(&it->key);
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ---- tables ---------------------------------------------------------- */

static void *ct_alloc(size_t size, void *ctx)
{
	(void)ctx;
	return rte_zmalloc_socket("ct-bench", size, 64, (int)rte_socket_id());
}

static void ct_release(void *ptr, void *ctx)
{
	(void)ctx;
	rte_free(ptr);
}

static const struct mlv_ct_params ct_params_template = {
	.tcp_timeout_ms = 300000,
	.tcp_handshake_timeout_ms = 5000,
	.tcp_closing_timeout_ms = 10000,
	.udp_timeout_ms = 30000,
	.other_timeout_ms = 5000,
};

static int fresh_tables(struct bench *b)
{
	struct mlv_ct_params p = ct_params_template;

	mlv_ct_destroy(b->ct);
	p.entries = b->o.entries;
	b->ct = mlv_ct_create(&p, ct_alloc, ct_release, NULL);
	if (b->ct == NULL) {
		fprintf(stderr, "ct-bench: cannot allocate %zu bytes for our table "
			"(raise -m)\n", mlv_ct_mem_size(p.entries));
		return -1;
	}
	b->ours_now_base = 1000;
	b->ours_ops = 0;

	if (b->h != NULL) {
		rte_hash_reset(b->h);
		return 0;
	}
	struct rte_hash_parameters hp = {
		.name = "ct-bench",
		.entries = mlv_ct_capacity(b->ct),
		.key_len = sizeof(struct mlv_flow_key),
		.hash_func = rte_hash_crc,
		.hash_func_init_val = 0,
		.socket_id = (int)rte_socket_id(),
	};

	b->h = rte_hash_create(&hp);
	if (b->h == NULL) {
		fprintf(stderr, "ct-bench: rte_hash_create: %s (raise -m)\n",
			rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

static inline uint32_t ours_now(const struct bench *b)
{
	return b->ours_now_base + (uint32_t)(b->ours_ops >> OPS_PER_MS_SHIFT);
}

/* One packet of an established flow (ACK) or a new one (SYN) into ours. */
static inline bool ours_packet(struct bench *b, const struct item *it,
			       uint8_t flags, uint32_t now)
{
	bool is_new;
	struct mlv_ct_entry *e =
		mlv_ct_lookup_or_insert(b->ct, &it->key, it->hash, now, &is_new);

	if (is_new)
		e->backend_uid = it->hash;
	mlv_ct_update(b->ct, e, flags, now);
	b->sink += e->backend_uid;
	return !is_new;
}

static int rte_add(struct bench *b, const struct item *it)
{
	return rte_hash_add_key_with_hash_data(b->h, &it->key, it->hash,
					       (void *)(uintptr_t)it->hash);
}

/* ---- timed runs -------------------------------------------------------- */

/* CPU time of this thread: time the scheduler gives other processes on
 * a shared machine is not counted, which wall-clock (TSC) time would. */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Run variant v over n items; returns nanoseconds of thread CPU time. *hits counts look-ups
 * that found their flow. insert: ours looks up or inserts and runs the
 * state machine on a packet with TCP flags `flags`; otherwise it only
 * looks up. rte_replace: on a miss rte_hash deletes del[i] (its oldest
 * key) and adds the new one. */
static uint64_t run_variant(struct bench *b, enum variant v,
			    const struct item *tr, const struct item *del,
			    uint32_t n, bool insert, uint8_t flags,
			    bool rte_replace, uint64_t *hits, uint64_t *add_fail)
{
	uint64_t h = 0, fail = 0, t0, t1;

	t0 = thread_cpu_ns();
	switch (v) {
	case V_OURS_BURST:
		for (uint32_t i = 0; i < n; i += BURST) {
			uint32_t m = n - i < BURST ? n - i : BURST;
			uint32_t now = ours_now(b);

			for (uint32_t j = 0; j < m; j++)
				mlv_ct_prefetch(b->ct, tr[i + j].hash);
			if (insert) {
				for (uint32_t j = 0; j < m; j++)
					h += ours_packet(b, &tr[i + j], flags, now);
			} else {
				for (uint32_t j = 0; j < m; j++) {
					const struct mlv_ct_entry *e = mlv_ct_lookup(
						b->ct, &tr[i + j].key, tr[i + j].hash, now);
					h += e != NULL;
				}
			}
			b->ours_ops += m;
		}
		break;
	case V_OURS_SINGLE:
		for (uint32_t i = 0; i < n; i++) {
			uint32_t now = ours_now(b);

			if (insert) {
				h += ours_packet(b, &tr[i], flags, now);
			} else {
				h += mlv_ct_lookup(b->ct, &tr[i].key, tr[i].hash,
						   now) != NULL;
			}
			b->ours_ops++;
		}
		break;
	case V_RTE_SINGLE:
		for (uint32_t i = 0; i < n; i++) {
			void *data;

			if (rte_hash_lookup_with_hash_data(b->h, &tr[i].key, tr[i].hash,
							   &data) >= 0) {
				h++;
				b->sink += (uintptr_t)data;
			} else if (rte_replace) {
				rte_hash_del_key_with_hash(b->h, &del[i].key, del[i].hash);
				fail += rte_add(b, &tr[i]) < 0;
			}
		}
		break;
	case V_RTE_BULK:
		for (uint32_t i = 0; i < n; i += BURST) {
			uint32_t m = n - i < BURST ? n - i : BURST;
			const void *keys[BURST];
			hash_sig_t sigs[BURST];
			void *data[BURST];
			uint64_t mask = 0;

			for (uint32_t j = 0; j < m; j++) {
				keys[j] = &tr[i + j].key;
				sigs[j] = tr[i + j].hash;
			}
			h += (uint64_t)rte_hash_lookup_with_hash_bulk_data(
				b->h, keys, sigs, m, &mask, data);
			for (uint32_t j = 0; j < m; j++) {
				if (mask & (1ull << j)) {
					b->sink += (uintptr_t)data[j];
				} else if (rte_replace) {
					rte_hash_del_key_with_hash(b->h, &del[i + j].key,
								   del[i + j].hash);
					fail += rte_add(b, &tr[i + j]) < 0;
				}
			}
		}
		break;
	default:
		break;
	}
	t1 = thread_cpu_ns();
	*hits = h;
	if (add_fail != NULL)
		*add_fail += fail;
	return t1 - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Best and median of n runs of each variant, into r. */
static void summarize(struct result *r, double ns[V__COUNT][MAX_REPS], uint32_t n)
{
	for (int v = 0; v < V__COUNT; v++) {
		double *x = ns[v];

		if (isnan(x[0])) {   /* variant not run */
			r->ns[v] = r->ns_median[v] = NAN;
			continue;
		}
		qsort(x, n, sizeof(*x), cmp_double);
		r->ns[v] = x[0];
		r->ns_median[v] = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
	}
}

static double per_op(uint64_t ns, uint32_t ops)
{
	return (double)ns / ops;
}

static struct result *new_result(struct bench *b, const char *scenario,
				 uint32_t flows, uint32_t rte_flows)
{
	struct result *r = &b->res[b->n_res++];

	memset(r, 0, sizeof(*r));
	snprintf(r->scenario, sizeof(r->scenario), "%s", scenario);
	r->flows = flows;
	r->rte_flows = rte_flows;
	return r;
}

/* Look-up runs over fixed traces (one for ours, one for rte_hash: the
 * same flows unless the two tables hold different ones): every variant,
 * --reps times, interleaved so drift hits all alike. Run k reads segment
 * k of the trace, so a run does not find the previous run's flows in
 * cache. want_hits: every op must hit (true) or miss (false). */
static int measure_lookups(struct bench *b, struct result *r,
			   const struct item *tr_ours, const struct item *tr_rte,
			   bool want_hits)
{
	double ns[V__COUNT][MAX_REPS];
	uint32_t n = b->o.run_ops, segments = b->o.trace_ops / n;

	for (uint32_t rep = 0; rep < b->o.reps; rep++) {
		size_t off = (size_t)(rep % segments) * n;

		for (int v = 0; v < V__COUNT; v++) {
			bool ours = v == V_OURS_BURST || v == V_OURS_SINGLE;
			uint64_t hits;
			uint64_t c = run_variant(b, (enum variant)v,
						 (ours ? tr_ours : tr_rte) + off,
						 NULL, n, want_hits, MLV_TCP_ACK,
						 false, &hits, NULL);

			if (hits != (want_hits ? n : 0)) {
				fprintf(stderr, "ct-bench: %s %s: %" PRIu64
					" hits of %u look-ups, expected %u\n",
					r->scenario, variant_name[v], hits, n,
					want_hits ? n : 0);
				return -1;
			}
			ns[v][rep] = per_op(c, n);
		}
	}
	summarize(r, ns, b->o.reps);
	return 0;
}

/* ---- scenarios --------------------------------------------------------- */

/* Flows 0 .. flows - 1 into both tables, then look-ups of them. A few
 * may not fit in ours (a bucket of 8 overflows now and then even at half
 * load, and evicts); the trace uses only flows both tables hold. */
static int scenario_hits(struct bench *b, uint32_t flows, struct item *tr)
{
	uint64_t seed = flows;
	uint32_t *present = malloc(sizeof(*present) * (size_t)flows);
	uint32_t both = 0;
	int rc = -1;

	if (present == NULL || fresh_tables(b) != 0)
		goto out;
	for (uint32_t i = 0; i < flows; i++) {
		struct item it;

		make_item(&it, KS_TRACKED, i);
		ours_packet(b, &it, MLV_TCP_ACK, ours_now(b));
		if (rte_add(b, &it) < 0) {
			fprintf(stderr, "ct-bench: rte_hash refused flow %u of %u\n",
				i, flows);
			goto out;
		}
	}
	for (uint32_t i = 0; i < flows; i++) {
		struct item it;

		make_item(&it, KS_TRACKED, i);
		if (mlv_ct_lookup(b->ct, &it.key, it.hash, ours_now(b)))
			present[both++] = i;
	}
	if (both < flows - flows / 16) {
		fprintf(stderr, "ct-bench: only %u of %u flows fit in %u entries; "
			"raise --entries\n", both, flows, mlv_ct_capacity(b->ct));
		goto out;
	}
	for (uint32_t i = 0; i < b->o.trace_ops; i++)
		make_item(&tr[i], KS_TRACKED, present[rng_next(&seed) % both]);
	rc = measure_lookups(b, new_result(b, "hit", mlv_ct_occupancy(b->ct), flows),
			     tr, tr, true);
out:
	free(present);
	return rc;
}

/* Fill ours until every slot is in use and rte_hash until its first
 * refused add. Returns the number of KS_TRACKED keys offered to ours
 * (*rte_n: how many rte_hash took, keys 0 .. *rte_n - 1). */
static int fill_tables(struct bench *b, uint32_t *ours_n, uint32_t *rte_n)
{
	uint32_t cap = mlv_ct_capacity(b->ct);
	uint32_t i = 0;
	bool rte_full = false;

	*rte_n = 0;
	while (mlv_ct_occupancy(b->ct) < cap || !rte_full) {
		struct item it;

		if (i == UINT32_MAX / 2 || (i > 16 * (uint64_t)cap)) {
			fprintf(stderr, "ct-bench: table does not fill up\n");
			return -1;
		}
		make_item(&it, KS_TRACKED, i);
		if (mlv_ct_occupancy(b->ct) < cap) {
			/* the clock runs, so flows differ in staleness and
			 * each eviction takes the oldest, as in a real table */
			ours_packet(b, &it, MLV_TCP_ACK, ours_now(b));
			b->ours_ops++;
		}
		if (!rte_full) {
			if (rte_add(b, &it) < 0)
				rte_full = true;
			else
				*rte_n = i + 1;
		}
		i++;
	}
	*ours_n = i;
	return 0;
}

/* Random look-ups of flows a full table holds: ours holds the survivors
 * of the fill (keys 0 .. ours_n - 1 that it still has), rte_hash keys
 * 0 .. rte_n - 1. Both sets are about one table's worth of flows. */
static int trace_full_hits(struct bench *b, uint32_t ours_n, uint32_t rte_n,
			   struct item *tr_ours, struct item *tr_rte)
{
	uint32_t cap = mlv_ct_capacity(b->ct), held = 0;
	uint32_t *present = malloc(sizeof(*present) * (size_t)cap);
	uint64_t seed = 12345;

	if (present == NULL)
		return -1;
	for (uint32_t i = 0; i < ours_n && held < cap; i++) {
		struct item it;

		make_item(&it, KS_TRACKED, i);
		if (mlv_ct_lookup(b->ct, &it.key, it.hash, ours_now(b)))
			present[held++] = i;
	}
	if (held != cap) {
		fprintf(stderr, "ct-bench: full table holds %u flows of %u\n",
			held, cap);
		free(present);
		return -1;
	}
	for (uint32_t i = 0; i < b->o.trace_ops; i++) {
		make_item(&tr_ours[i], KS_TRACKED, present[rng_next(&seed) % held]);
		make_item(&tr_rte[i], KS_TRACKED, (uint32_t)(rng_next(&seed) % rte_n));
	}
	free(present);
	return 0;
}

/* Every op a new flow into a full table. Each run gets keys nobody has
 * seen. With flags ACK (flows first seen mid-stream, proven) ours evicts
 * its stalest flow every time, and rte_hash deletes its oldest key, in
 * insertion order (0 .. rte_n - 1, then its new keys), and adds the new
 * one. With flags SYN (a SYN flood against a table of established flows)
 * ours leaves every newcomer untracked; rte_hash has no such case and is
 * not run. */
static int measure_new_flows(struct bench *b, const char *name, uint8_t flags,
			     uint32_t rte_n, struct item *tr, struct item *del)
{
	uint32_t cap = mlv_ct_capacity(b->ct);
	bool with_rte = flags != MLV_TCP_SYN;
	struct result *r = new_result(b, name, cap, with_rte ? rte_n : 0);
	double ns[V__COUNT][MAX_REPS];
	uint32_t n = b->o.new_ops;

	for (uint32_t rep = 0; rep < b->o.reps; rep++) {
		for (int v = 0; v < V__COUNT; v++) {
			bool ours = v == V_OURS_BURST || v == V_OURS_SINGLE;
			const struct mlv_ct_stats *st = mlv_ct_get_stats(b->ct);
			uint64_t hits, evict0 = st->evictions, out0 = st->untracked;

			if (!ours && !with_rte) {
				ns[v][rep] = NAN;
				continue;
			}
			for (uint32_t i = 0; i < n; i++) {
				make_item(&tr[i], KS_NEW,
					  ours ? b->ours_next++ : b->rte_next++);
				if (!ours) {
					uint32_t d = b->rte_del_next++;

					if (d < rte_n)
						make_item(&del[i], KS_TRACKED, d);
					else
						make_item(&del[i], KS_NEW,
							  RTE_NEW_KEYS + (d - rte_n));
				}
			}
			uint64_t c = run_variant(b, (enum variant)v, tr, del, n,
						 true, flags, true, &hits,
						 &r->rte_add_failures);
			/* ours: every op evicted (ACK) or stayed out (SYN) */
			uint64_t want_evict = with_rte ? n : 0;

			if (hits != 0 ||
			    (ours && (mlv_ct_occupancy(b->ct) != cap ||
				      st->evictions - evict0 != want_evict ||
				      st->untracked - out0 != n - want_evict))) {
				fprintf(stderr, "ct-bench: %s %s: %" PRIu64
					" hits, occupancy %u of %u, %" PRIu64
					" evictions, %" PRIu64 " untracked\n",
					name, variant_name[v], hits,
					mlv_ct_occupancy(b->ct), cap,
					st->evictions - evict0, st->untracked - out0);
				return -1;
			}
			ns[v][rep] = per_op(c, n);
		}
	}
	summarize(r, ns, b->o.reps);
	return 0;
}

static int scenarios_full(struct bench *b, struct item *tr, struct item *tr2,
			  struct item *del)
{
	uint32_t ours_n, rte_n;
	uint32_t cap;

	if (fresh_tables(b) != 0 || fill_tables(b, &ours_n, &rte_n) != 0)
		return -1;
	b->ours_next = 0;
	b->rte_next = RTE_NEW_KEYS;
	b->rte_del_next = 0;
	cap = mlv_ct_capacity(b->ct);
	if (trace_full_hits(b, ours_n, rte_n, tr, tr2) != 0 ||
	    measure_lookups(b, new_result(b, "hit-full", cap, rte_n), tr, tr2,
			    true) != 0)
		return -1;

	for (uint32_t i = 0; i < b->o.trace_ops; i++)
		make_item(&tr[i], KS_ABSENT, i);
	if (measure_lookups(b, new_result(b, "miss-full", cap, rte_n), tr, tr,
			    false) != 0)
		return -1;

	if (measure_new_flows(b, "new-full", MLV_TCP_ACK, rte_n, tr, del) != 0 ||
	    measure_new_flows(b, "syn-full", MLV_TCP_SYN, rte_n, tr, del) != 0)
		return -1;
	return 0;
}

/* ---- output ------------------------------------------------------------ */

static void print_human(const struct bench *b)
{
	printf("ct-bench: %u entries; ours %zu bytes (%zu B/entry); ns of thread "
	       "CPU time per op, best of %u runs of %u look-ups / %u new flows\n",
	       mlv_ct_capacity(b->ct), mlv_ct_mem_size(b->o.entries),
	       sizeof(struct mlv_ct_entry), b->o.reps, b->o.run_ops, b->o.new_ops);
	printf("%-10s %9s %9s | %10s %11s %10s %9s | %7s %7s\n", "scenario",
	       "flows", "rte flows", "ours-burst", "ours-single", "rte-single",
	       "rte-bulk", "x single", "x bulk");
	for (uint32_t i = 0; i < b->n_res; i++) {
		const struct result *r = &b->res[i];

		if (isnan(r->ns[V_RTE_SINGLE])) {
			printf("%-10s %9u %9s | %7.1f ns %8.1f ns %10s %9s |\n",
			       r->scenario, r->flows, "-", r->ns[V_OURS_BURST],
			       r->ns[V_OURS_SINGLE], "-", "-");
			continue;
		}
		printf("%-10s %9u %9u | %7.1f ns %8.1f ns %7.1f ns %6.1f ns | %6.2fx %6.2fx\n",
		       r->scenario, r->flows, r->rte_flows, r->ns[V_OURS_BURST],
		       r->ns[V_OURS_SINGLE], r->ns[V_RTE_SINGLE], r->ns[V_RTE_BULK],
		       r->ns[V_RTE_SINGLE] / r->ns[V_OURS_SINGLE],
		       r->ns[V_RTE_BULK] / r->ns[V_OURS_BURST]);
		if (r->rte_add_failures)
			printf("%-10s rte_hash refused %" PRIu64 " adds (no room "
			       "after deleting its oldest key)\n", "",
			       r->rte_add_failures);
	}
	printf("x single = rte-single / ours-single, x bulk = rte-bulk / ours-burst "
	       "(above 1: ours is faster)\n");
}

/* A number, or null for a figure not measured (jansson refuses NaN). */
static json_t *json_num(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

static int print_json(const struct bench *b)
{
	json_t *root = json_object(), *arr = json_array();
	int rc = -1;

	if (root == NULL || arr == NULL)
		goto out;
	if (json_object_set_new(root, "entries", json_integer(mlv_ct_capacity(b->ct))) ||
	    json_object_set_new(root, "ours_bytes",
				json_integer((json_int_t)mlv_ct_mem_size(b->o.entries))) ||
	    json_object_set_new(root, "bytes_per_entry",
				json_integer(sizeof(struct mlv_ct_entry))) ||
	    json_object_set_new(root, "tsc_hz", json_integer((json_int_t)rte_get_tsc_hz())) ||
	    json_object_set_new(root, "reps", json_integer(b->o.reps)) ||
	    json_object_set_new(root, "lookups_per_run", json_integer(b->o.run_ops)) ||
	    json_object_set_new(root, "new_flows_per_run", json_integer(b->o.new_ops)))
		goto out;
	for (uint32_t i = 0; i < b->n_res; i++) {
		const struct result *r = &b->res[i];
		json_t *o = json_object(), *ns, *med;

		if (json_array_append_new(arr, o) ||   /* steals o */
		    json_object_set_new(o, "ns_per_op", ns = json_object()) ||
		    json_object_set_new(o, "ns_per_op_median", med = json_object()))
			goto out;
		for (int v = 0; v < V__COUNT; v++)
			if (json_object_set_new(ns, variant_name[v], json_num(r->ns[v])) ||
			    json_object_set_new(med, variant_name[v],
						json_num(r->ns_median[v])))
				goto out;
		if (json_object_set_new(o, "scenario", json_string(r->scenario)) ||
		    json_object_set_new(o, "flows", json_integer(r->flows)) ||
		    json_object_set_new(o, "rte_flows", json_integer(r->rte_flows)) ||
		    json_object_set_new(o, "rte_add_failures",
					json_integer((json_int_t)r->rte_add_failures)) ||
		    json_object_set_new(o, "ratio_single",
					json_num(r->ns[V_RTE_SINGLE] / r->ns[V_OURS_SINGLE])) ||
		    json_object_set_new(o, "ratio_bulk",
					json_num(r->ns[V_RTE_BULK] / r->ns[V_OURS_BURST])))
			goto out;
	}
	if (json_object_set(root, "results", arr) ||
	    json_dumpf(root, stdout, JSON_INDENT(2)) != 0)
		goto out;
	putchar('\n');
	rc = 0;
out:
	json_decref(arr);
	json_decref(root);
	return rc;
}

/* ---- main -------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ct-bench [EAL args] -- [--quick] [--json] [--entries N] [--reps N]\n"
		"  e.g. ct-bench --in-memory --no-pci -m 1024 -l 1 -- --reps 32\n"
		"       ct-bench --no-huge --no-shconf --no-pci -m 256 -- --quick\n"
		"  (--in-memory needs hugepages: DPDK refuses it with --no-huge)\n"
		"  --quick      small tables and short runs (a smoke test)\n"
		"  --json       machine-readable output\n"
		"  --entries N  table slots (default 2097152; quick 65536)\n"
		"  --reps N     runs per figure; the best is reported (default 16)\n");
}

static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end != '\0' || v < lo || v > hi)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* 0: run; 1: --help printed, exit 0; -1: bad arguments (said why). */
static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{"quick", no_argument, NULL, 'q'},
		{"json", no_argument, NULL, 'j'},
		{"entries", required_argument, NULL, 'e'},
		{"reps", required_argument, NULL, 'r'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	uint32_t entries = 0, reps = 0;
	int c;

	memset(o, 0, sizeof(*o));
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'q':
			o->quick = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'e':
			if (parse_u32(optarg, 1024, MLV_CT_MAX_ENTRIES, &entries)) {
				fprintf(stderr, "ct-bench: --entries wants 1024 .. %u\n",
					MLV_CT_MAX_ENTRIES);
				return -1;
			}
			break;
		case 'r':
			if (parse_u32(optarg, 1, MAX_REPS, &reps)) {
				fprintf(stderr, "ct-bench: --reps wants 1 .. %u\n", MAX_REPS);
				return -1;
			}
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ct-bench: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return -1;
	}
	o->entries = entries ? entries : o->quick ? 65536 : 2097152;
	o->reps = reps ? reps : o->quick ? 1 : 16;
	/* Runs of ~10 ms: short enough that some fall between the time
	 * slices of other processes on a shared machine. */
	o->trace_ops = o->quick ? 65536 : 4u << 20;
	o->run_ops = o->quick ? 16384 : 1u << 18;
	o->new_ops = o->quick ? 16384 : 1u << 17;
	/* 64K and 1M flows by default; at most half the table, so that the
	 * hit scenarios measure look-ups rather than eviction */
	uint32_t half = mlv_ct_capacity_for(o->entries) / 2;

	o->flows[0] = o->quick ? 2048 : 65536;
	o->flows[1] = o->quick ? half : 1u << 20;
	for (int i = 0; i < 2; i++)
		if (o->flows[i] > half)
			o->flows[i] = half;
	return 0;
}

int main(int argc, char **argv)
{
	struct bench b;
	struct item *tr = NULL, *tr2 = NULL, *del = NULL;
	int n, rc = 1;

	memset(&b, 0, sizeof(b));
	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "ct-bench: rte_eal_init: %s\n", rte_strerror(rte_errno));
		usage(stderr);
		return 1;
	}
	argv[n] = argv[0];
	rc = parse_args(argc - n, argv + n, &b.o);
	if (rc != 0) {
		rc = rc < 0;   /* --help: done, exit 0 */
		goto out;
	}
	rc = 1;

	uint32_t max_ops = b.o.trace_ops > b.o.new_ops ? b.o.trace_ops : b.o.new_ops;

	tr = malloc(sizeof(*tr) * max_ops);
	tr2 = malloc(sizeof(*tr2) * b.o.trace_ops);
	del = malloc(sizeof(*del) * b.o.new_ops);
	if (tr == NULL || tr2 == NULL || del == NULL) {
		fprintf(stderr, "ct-bench: out of memory for traces\n");
		goto out;
	}
	for (int i = 0; i < 2; i++)
		if (scenario_hits(&b, b.o.flows[i], tr) != 0)
			goto out;
	if (scenarios_full(&b, tr, tr2, del) != 0)
		goto out;
	if (b.o.json ? print_json(&b) : (print_human(&b), 0))
		goto out;
	rc = b.sink == 0;   /* also keeps the results live */
	if (rc)
		fprintf(stderr, "ct-bench: no data seen\n");
out:
	free(tr);
	free(tr2);
	free(del);
	mlv_ct_destroy(b.ct);
	rte_hash_free(b.h);
	rte_eal_cleanup();
	return rc;
}
