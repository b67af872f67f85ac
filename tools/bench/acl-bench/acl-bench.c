/* SPDX-License-Identifier: BSD-3-Clause */
/* acl-bench: maglevd's source-ACL look-up (dataplane/view/acl.h)
 * against DPDK's rte_lpm (IPv4) and rte_lpm6 (IPv6), in one run, on the
 * same prefixes and the same source addresses.
 *
 *   acl-bench [EAL args] -- [--quick] [--prefixes N] [--lookups N] [--reps N]
 *             [--ours-only]
 *
 * The prefixes: N random allow / deny prefixes of each family, about a
 * third nested in an earlier one (longer), the rest of length 8..32
 * (IPv4) or 16..128 (IPv6), all distinct. rte_lpm answers the same
 * longest-prefix match (next hop 1 = allow, 0 = deny, a miss = the
 * default verdict), so every answer of both is compared: the run fails
 * on the first difference.
 *
 * Address sets: "spread", --lookups addresses, half uniformly random and
 * half inside random prefixes (every look-up lands on a different part of
 * the structures: a worst case for caches, rte_lpm's 64 MiB tbl24
 * first); "hot", 1024 such addresses repeated (a worker seeing the same
 * clients over and over).
 *
 * Variants: ours (mlv_acl_allows, one at a time, as pass 3 calls it),
 * lpm (rte_lpm_lookup / rte_lpm6_lookup, one at a time), lpm-bulk
 * (rte_lpm_lookup_bulk / rte_lpm6_lookup_bulk_func over 32 addresses).
 * Times are the thread's CPU time per look-up, the best of --reps runs,
 * the variants interleaved. Build: the time to build each from the
 * prefixes (ours: mlv_acl_build; rte: create + every add), best of the
 * runs, and the memory each holds (ours: its intervals and direct
 * index; rte: tbl24 and the tbl8 groups configured). --ours-only leaves
 * DPDK's out, for sizes its tables cannot hold in the memory given
 * (1,000,000 prefixes need up to a million tbl8 groups, 1 GiB).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>

#include "control/generation/acl.h"

#define BURST 32u
#define HOT 1024u

struct opts {
	uint32_t prefixes, lookups, reps;
	bool ours_only;   /* no rte_lpm: for sizes it cannot hold */
};

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next64(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void randomize_from(uint8_t *a, unsigned from, unsigned width)
{
	for (unsigned b = from; b < width; b++) {
		uint8_t m = (uint8_t)(0x80u >> (b % 8));

		if (next64() & 1)
			a[b / 8] |= m;
		else
			a[b / 8] &= (uint8_t)~m;
	}
}

static int cmp_rule(const void *x, const void *y)
{
	const struct mlv_acl_rule *a = x, *b = y;
	int c = memcmp(a->addr, b->addr, 16);

	return c ? c : (int)a->len - (int)b->len;
}

/* n distinct rules of family; returns how many (<= n after dropping
 * repeats). */
static uint32_t make_rules(struct mlv_acl_rule *r, uint32_t n, uint8_t family)
{
	unsigned width = family == 4 ? 32 : 128, min = family == 4 ? 8 : 16;
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct mlv_acl_rule *x = &r[i];
		const struct mlv_acl_rule *p = i ? &r[next64() % i] : NULL;

		memset(x, 0, sizeof(*x));
		if (p && p->len < width && next64() % 3 == 0) {
			memcpy(x->addr, p->addr, 16);
			x->len = (uint8_t)(p->len + 1 + next64() % (width - p->len));
			randomize_from(x->addr, p->len, width);
		} else {
			x->len = (uint8_t)(min + next64() % (width - min + 1));
			randomize_from(x->addr, 0, width);
		}
		for (unsigned b = x->len; b < width; b++)
			x->addr[b / 8] &= (uint8_t)~(0x80u >> (b % 8));
		x->allow = next64() & 1;
	}
	qsort(r, n, sizeof(*r), cmp_rule);
	for (uint32_t i = 0; i < n; i++)
		if (k == 0 || cmp_rule(&r[i], &r[k - 1]) != 0)
			r[k++] = r[i];
	/* shuffle back to a random order: the builders must not get it
	 * sorted */
	for (uint32_t i = k; i > 1; i--) {
		uint32_t j = (uint32_t)(next64() % i);
		struct mlv_acl_rule t = r[i - 1];

		r[i - 1] = r[j];
		r[j] = t;
	}
	return k;
}

/* Half uniformly random, half inside a random rule. */
static void make_addrs(uint8_t (*a)[16], uint32_t n, const struct mlv_acl_rule *r,
		       uint32_t n_rules, uint8_t family)
{
	unsigned width = family == 4 ? 32 : 128;

	for (uint32_t i = 0; i < n; i++) {
		memset(a[i], 0, 16);
		if (i & 1) {
			const struct mlv_acl_rule *x = &r[next64() % n_rules];

			memcpy(a[i], x->addr, 16);
			randomize_from(a[i], x->len, width);
		} else {
			randomize_from(a[i], 0, width);
		}
	}
}

static uint32_t be32(const uint8_t *a)
{
	return (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 |
	       (uint32_t)a[2] << 8 | a[3];
}

struct fam {
	uint8_t family;
	uint32_t n_rules;
	struct mlv_acl_rule *rules;
	bool def;                 /* the verdict of a miss */
	struct mlv_acl *ours;
	struct rte_lpm *lpm;
	struct rte_lpm6 *lpm6;
	double build_ours, build_rte;   /* ns, best */
	size_t mem_rte;
};

static int build_rte(struct fam *f, int rep)
{
	char name[32];

	snprintf(name, sizeof(name), "acl%u_%d", f->family, rep);
	if (f->family == 4) {
		struct rte_lpm_config c = {
			.max_rules = f->n_rules, .number_tbl8s = f->n_rules + 256,
		};

		f->lpm = rte_lpm_create(name, (int)rte_socket_id(), &c);
		if (!f->lpm)
			return -1;
		for (uint32_t i = 0; i < f->n_rules; i++)
			if (rte_lpm_add(f->lpm, be32(f->rules[i].addr),
					f->rules[i].len, f->rules[i].allow) < 0)
				return -1;
		f->mem_rte = ((size_t)1 << 24) * sizeof(struct rte_lpm_tbl_entry) +
			     (size_t)c.number_tbl8s * 256 *
			     sizeof(struct rte_lpm_tbl_entry);
	} else {
		struct rte_lpm6_config c = {
			.max_rules = f->n_rules, .number_tbl8s = f->n_rules * 14,
		};

		f->lpm6 = rte_lpm6_create(name, (int)rte_socket_id(), &c);
		if (!f->lpm6)
			return -1;
		for (uint32_t i = 0; i < f->n_rules; i++)
			if (rte_lpm6_add(f->lpm6, f->rules[i].addr, f->rules[i].len,
					 f->rules[i].allow) < 0)
				return -1;
		/* tbl24 (2^24 entries of 4 bytes) and the tbl8 groups */
		f->mem_rte = ((size_t)1 << 24) * 4 + (size_t)c.number_tbl8s * 256 * 4;
	}
	return 0;
}

static void free_rte(struct fam *f)
{
	rte_lpm_free(f->lpm);
	rte_lpm6_free(f->lpm6);
	f->lpm = NULL;
	f->lpm6 = NULL;
}

static int build(struct fam *f, uint32_t reps, bool ours_only)
{
	f->build_ours = f->build_rte = 1e30;
	for (uint32_t r = 0; r < reps; r++) {
		double t0, t1, t2;

		mlv_acl_release(f->ours);
		f->ours = NULL;
		free_rte(f);
		t0 = now_ns();
		if (mlv_acl_build(f->family, f->rules, f->n_rules, &f->ours) != MLV_OK)
			return -1;
		t1 = now_ns();
		if (!ours_only && build_rte(f, (int)r) < 0)
			return -1;
		t2 = now_ns();
		if (t1 - t0 < f->build_ours)
			f->build_ours = t1 - t0;
		if (t2 - t1 < f->build_rte)
			f->build_rte = t2 - t1;
	}
	return 0;
}

/* rte's verdict for a, or -1 on a failure. */
static int rte_verdict(const struct fam *f, const uint8_t *a)
{
	uint32_t nh4;
	uint32_t nh6;
	int rc;

	if (f->family == 4) {
		rc = rte_lpm_lookup(f->lpm, be32(a), &nh4);
		return rc == 0 ? (int)nh4 : rc == -ENOENT ? f->def : -1;
	}
	rc = rte_lpm6_lookup(f->lpm6, a, &nh6);
	return rc == 0 ? (int)nh6 : rc == -ENOENT ? f->def : -1;
}

enum variant { V_OURS, V_LPM, V_LPM_BULK, V__COUNT };
static const char *const vname[V__COUNT] = { "ours", "lpm", "lpm-bulk" };

/* One timed pass of variant v over n addresses; returns ns per look-up
 * and adds the allowed count to *sink (so nothing is optimised away). */
static double run(const struct fam *f, enum variant v, uint8_t (*a)[16],
		  uint32_t n, uint64_t *sink)
{
	uint64_t allowed = 0;
	double t0 = now_ns();

	switch (v) {
	case V_OURS:
		for (uint32_t i = 0; i < n; i++)
			allowed += mlv_acl_allows(f->ours, a[i]);
		break;
	case V_LPM:
		for (uint32_t i = 0; i < n; i++) {
			uint32_t nh = f->def;

			if (f->family == 4)
				rte_lpm_lookup(f->lpm, be32(a[i]), &nh);
			else
				rte_lpm6_lookup(f->lpm6, a[i], &nh);
			allowed += nh;
		}
		break;
	case V_LPM_BULK:
		for (uint32_t i = 0; i + BURST <= n; i += BURST) {
			if (f->family == 4) {
				uint32_t ips[BURST], nh[BURST];

				for (uint32_t k = 0; k < BURST; k++)
					ips[k] = be32(a[i + k]);
				rte_lpm_lookup_bulk(f->lpm, ips, nh, BURST);
				for (uint32_t k = 0; k < BURST; k++)
					allowed += nh[k] & RTE_LPM_LOOKUP_SUCCESS ?
						   (nh[k] & 1) : f->def;
			} else {
				int32_t nh[BURST];

				rte_lpm6_lookup_bulk_func(f->lpm6, &a[i], nh, BURST);
				for (uint32_t k = 0; k < BURST; k++)
					allowed += nh[k] < 0 ? f->def : (uint64_t)nh[k];
			}
		}
		break;
	default:
		break;
	}
	*sink += allowed;
	return (now_ns() - t0) / n;
}

static int bench_family(uint8_t family, const struct opts *o)
{
	struct fam f = { .family = family };
	uint8_t (*spread)[16], (*hot)[16];
	uint32_t n_hot_runs = o->lookups / HOT ? o->lookups / HOT : 1;
	double best[2][V__COUNT];
	uint64_t sink = 0, allowed = 0;

	f.rules = malloc((size_t)o->prefixes * sizeof(*f.rules));
	spread = malloc((size_t)o->lookups * 16);
	hot = malloc((size_t)HOT * n_hot_runs * 16);
	if (!f.rules || !spread || !hot)
		return -1;
	f.n_rules = make_rules(f.rules, o->prefixes, family);
	for (uint32_t i = 0; i < f.n_rules; i++)
		f.def |= f.rules[i].allow;
	f.def = !f.def;
	if (build(&f, o->reps, o->ours_only) < 0) {
		fprintf(stderr, "acl-bench: IPv%u build failed: %s\n", family,
			rte_strerror(rte_errno));
		return -1;
	}
	make_addrs(spread, o->lookups, f.rules, f.n_rules, family);
	make_addrs(hot, HOT, f.rules, f.n_rules, family);
	for (uint32_t r = 1; r < n_hot_runs; r++)
		memcpy(hot[r * HOT], hot[0], HOT * 16);
	/* every answer, both sets */
	for (uint32_t i = 0; !o->ours_only && i < o->lookups; i++) {
		int want = rte_verdict(&f, spread[i]);

		if (want < 0 || mlv_acl_allows(f.ours, spread[i]) != (want == 1)) {
			fprintf(stderr, "acl-bench: IPv%u: ours and rte_lpm differ "
				"on address %u\n", family, i);
			return -1;
		}
		allowed += want;
	}
	for (int s = 0; s < 2; s++)
		for (int v = 0; v < V__COUNT; v++)
			best[s][v] = 1e30;
	for (uint32_t r = 0; r < o->reps; r++)
		for (int v = 0; v < (o->ours_only ? 1 : V__COUNT); v++) {
			double t = run(&f, (enum variant)v, spread, o->lookups, &sink);

			if (t < best[0][v])
				best[0][v] = t;
			t = run(&f, (enum variant)v, hot, HOT * n_hot_runs, &sink);
			if (t < best[1][v])
				best[1][v] = t;
		}

	printf("IPv%u: %u prefixes (%u intervals)", family, f.n_rules, f.ours->n);
	if (o->ours_only) {
		printf(": build %.2f ms, %.1f KiB; spread %.2f ns, hot %.2f ns\n",
		       f.build_ours / 1e6,
		       ((double)f.ours->n * (family == 4 ? 4 : 16) +
			((double)(1u << f.ours->bits) + 1) * 4) / 1024.0,
		       best[0][V_OURS], best[1][V_OURS]);
		goto out;
	}
	printf(", %.1f %% of the spread set allowed\n",
	       100.0 * (double)allowed / o->lookups);
	printf("  build   ours %8.2f ms  %8.1f KiB | rte_lpm%s %8.2f ms  %8.1f MiB\n",
	       f.build_ours / 1e6,
	       ((double)f.ours->n * (family == 4 ? 4 : 16) +
		((double)(1u << f.ours->bits) + 1) * 4) / 1024.0,
	       family == 4 ? " " : "6", f.build_rte / 1e6,
	       (double)f.mem_rte / (1024.0 * 1024.0));
	for (int s = 0; s < 2; s++) {
		printf("  %-6s", s ? "hot" : "spread");
		for (int v = 0; v < V__COUNT; v++)
			printf("  %s %6.2f ns", vname[v], best[s][v]);
		printf("  | ours / lpm %.2f, ours / lpm-bulk %.2f\n",
		       best[s][V_OURS] / best[s][V_LPM],
		       best[s][V_OURS] / best[s][V_LPM_BULK]);
	}
out:
	if (sink == 42)
		printf("\n");   /* keeps sink alive */
	mlv_acl_release(f.ours);
	free_rte(&f);
	free(f.rules);
	free(spread);
	free(hot);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "prefixes", required_argument, NULL, 'p' },
		{ "lookups", required_argument, NULL, 'l' },
		{ "reps", required_argument, NULL, 'r' },
		{ "ours-only", no_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { 10000, 1u << 20, 5 };
	int n = rte_eal_init(argc, argv), c;

	if (n < 0) {
		fprintf(stderr, "acl-bench: EAL init failed\n");
		return 1;
	}
	argc -= n;
	argv += n;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'q':
			o.prefixes = 1000;
			o.lookups = 1u << 14;
			o.reps = 1;
			break;
		case 'p':
			o.prefixes = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'l':
			o.lookups = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'r':
			o.reps = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'o':
			o.ours_only = true;
			break;
		default:
			fprintf(stderr, "usage: acl-bench [EAL args] -- [--quick] "
				"[--prefixes N] [--lookups N] [--reps N] [--ours-only]\n");
			return 2;
		}
	}
	if (o.prefixes == 0 || o.prefixes > MLV_ACL_MAX_PREFIXES ||
	    o.lookups < BURST || o.reps == 0) {
		fprintf(stderr, "acl-bench: bad --prefixes, --lookups or --reps\n");
		return 2;
	}
	o.lookups -= o.lookups % BURST;
	if (bench_family(4, &o) < 0 || bench_family(6, &o) < 0) {
		rte_eal_cleanup();
		return 1;
	}
	rte_eal_cleanup();
	return 0;
}
