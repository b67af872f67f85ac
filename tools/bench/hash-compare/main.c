/* SPDX-License-Identifier: BSD-3-Clause */
/* hash-compare: the consistent-hashing comparison behind
 * docs/table-builders.md, reproduced with maglevd's code.
 *
 * 1. n nodes (default 100) and 10^6 keys: peak/mean load and the keys
 *    moved when one node is removed or added, for mod-N, ring (V = 100,
 *    1000), rendezvous, jump, multi-probe (K = 21) and Maglev (M = 65537),
 *    plus maglevd's rendezvous and ring tables (M = 65537). Medians over
 *    trials with different node names; a random node leaves (mod-N and
 *    jump: the last one), a new name joins.
 * 2. The Maglev paper's Fig. 12 setup: 1000 backends, k of them removed at
 *    random, the fraction of table entries that change, against the
 *    optimum (the removed backends' own entries). Means over trials.
 * 3. maglevd's three table builders: build time (thread CPU time), how
 *    often a slot's second choice is the owner the rebuilt table gives it
 *    when its first choice is removed, and, when a backend is added, how
 *    often a slot it takes has its previous owner as its new second choice
 *    (the hop a restarted instance sends: docs/second-chance.md).
 *
 * It also checks what the algorithms promise (ring, rendezvous, jump and
 * multi-probe move no key they need not; mod-N moves most; rendezvous and
 * ring second choices equal the rebuilt owner, and after an addition the
 * previous owner) and exits 1 if a promise
 * is broken, 2 on bad usage.
 *
 *   hash-compare [--json] [--quick] [--keys N] [--nodes N] [--trials N]
 *                [--seed N]
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "control/tables/builder.h"
#include "tools/bench/hash-compare/schemes.h"

#define NAME_LEN 32

struct opts {
	bool json;
	bool quick;
	uint32_t keys;
	uint32_t nodes;
	uint32_t trials;
	uint64_t seed;
};

/* ---- helpers ---- */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t rand_below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(splitmix(s) % n);
}

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, uint32_t n)
{
	qsort(v, n, sizeof(*v), dbl_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fprintf(stderr, "hash-compare: out of memory\n");
		exit(1);
	}
	return p;
}

/* names[0..n] for one trial: n nodes plus one spare that joins. */
static char **trial_names(uint32_t trial, uint32_t n)
{
	char **names = xmalloc((n + 1) * sizeof(*names));

	for (uint32_t i = 0; i <= n; i++) {
		names[i] = xmalloc(NAME_LEN);
		snprintf(names[i], NAME_LEN, "t%u-node-%u", trial, i);
	}
	return names;
}

static void free_names(char **names, uint32_t n)
{
	for (uint32_t i = 0; i <= n; i++)
		free(names[i]);
	free(names);
}

static void *build_or_die(const struct hc_scheme *s, char *const *names,
			  uint32_t n)
{
	void *st = s->build(s, names, n);

	if (!st) {
		fprintf(stderr, "hash-compare: cannot build %s over %u nodes\n",
			s->name, n);
		exit(1);
	}
	return st;
}

/* ---- 1: the comparison ---- */

struct row {
	const struct hc_scheme *s;
	double peak_mean, rel_sd;
	double remove_moved, remove_extra;   /* fractions of all keys */
	double add_moved, add_extra;
};

/* One trial of one scheme; results appended to the per-trial arrays. */
static void compare_trial(const struct hc_scheme *s, const uint64_t *keys,
			  uint32_t n_keys, uint32_t n, uint32_t trial,
			  uint64_t *rng, double *out /* 6 values */)
{
	char **names = trial_names(trial, n);
	char **rest = xmalloc(n * sizeof(*rest));
	uint32_t *owner = xmalloc(n_keys * sizeof(*owner));
	uint32_t *count = calloc(n, sizeof(*count));
	uint32_t gone = s->numbered ? n - 1 : rand_below(rng, n);
	uint64_t moved = 0, extra = 0, peak = 0;
	double mean = (double)n_keys / n, var = 0;
	void *st;

	if (!count)
		exit(1);
	st = build_or_die(s, names, n);
	for (uint32_t k = 0; k < n_keys; k++) {
		owner[k] = s->lookup(st, keys[k]);
		count[owner[k]]++;
	}
	s->free(st);
	for (uint32_t i = 0; i < n; i++) {
		peak = count[i] > peak ? count[i] : peak;
		var += (count[i] - mean) * (count[i] - mean);
	}
	out[0] = peak / mean;
	out[1] = sqrt(var / n) / mean;

	/* one node leaves: indices above it shift down by one */
	for (uint32_t i = 0, j = 0; i < n; i++)
		if (i != gone)
			rest[j++] = names[i];
	st = build_or_die(s, rest, n - 1);
	for (uint32_t k = 0; k < n_keys; k++) {
		uint32_t o = s->lookup(st, keys[k]);

		o += o >= gone;
		if (o != owner[k]) {
			moved++;
			extra += owner[k] != gone;
		}
	}
	s->free(st);
	out[2] = (double)moved / n_keys;
	out[3] = (double)extra / n_keys;

	/* one node joins, as index n */
	moved = extra = 0;
	st = build_or_die(s, names, n + 1);
	for (uint32_t k = 0; k < n_keys; k++) {
		uint32_t o = s->lookup(st, keys[k]);

		if (o != owner[k]) {
			moved++;
			extra += o != n;
		}
	}
	s->free(st);
	out[4] = (double)moved / n_keys;
	out[5] = (double)extra / n_keys;
	free(count);
	free(owner);
	free(rest);
	free_names(names, n);
}

static void run_comparison(const struct opts *o, struct row *rows)
{
	uint64_t *keys = xmalloc(o->keys * sizeof(*keys));
	uint64_t kseed = o->seed;
	double *v = xmalloc((size_t)6 * o->trials * sizeof(*v));
	double *col = xmalloc(o->trials * sizeof(*col));

	for (uint32_t k = 0; k < o->keys; k++)
		keys[k] = splitmix(&kseed);
	for (uint32_t i = 0; i < hc_n_schemes; i++) {
		uint64_t rng = o->seed * 31 + i;
		double *res[6] = { &rows[i].peak_mean, &rows[i].rel_sd,
				   &rows[i].remove_moved, &rows[i].remove_extra,
				   &rows[i].add_moved, &rows[i].add_extra };

		rows[i].s = &hc_schemes[i];
		for (uint32_t t = 0; t < o->trials; t++)
			compare_trial(&hc_schemes[i], keys, o->keys, o->nodes, t,
				      &rng, &v[6 * t]);
		for (uint32_t c = 0; c < 6; c++) {
			for (uint32_t t = 0; t < o->trials; t++)
				col[t] = v[6 * t + c];
			*res[c] = median(col, o->trials);
		}
	}
	free(col);
	free(v);
	free(keys);
}

/* ---- 2: Maglev paper Fig. 12 ---- */

struct fig12 {
	uint32_t m, k;
	double changed, optimal;   /* fractions of table entries, means */
};

static const uint32_t fig12_k_full[] = { 1, 2, 5, 10, 20, 50, 100 };
static const uint32_t fig12_k_quick[] = { 1, 10 };
static const uint32_t fig12_m_full[] = { 65537, 655373 };
#define FIG12_N 1000u

static uint16_t *maglev_table(char *const *names, uint32_t n, uint32_t m,
			      const bool *skip)
{
	struct mlv_table_backend *be = xmalloc(n * sizeof(*be));
	struct mlv_table_spec spec = { MLV_TABLE_MAGLEV, m, 0 };
	uint16_t *slots = xmalloc(m * sizeof(*slots));

	/* removed backends keep their index with weight 0: they own nothing
	 * and the indices of the others do not shift */
	for (uint32_t i = 0; i < n; i++)
		be[i] = (struct mlv_table_backend){ names[i],
			skip && skip[i] ? 0 : 100, false };
	if (mlv_table_build(&spec, be, n, slots, NULL, NULL) != MLV_OK) {
		fprintf(stderr, "hash-compare: maglev build failed\n");
		exit(1);
	}
	free(be);
	return slots;
}

static uint32_t run_fig12(const struct opts *o, struct fig12 *out)
{
	const uint32_t *ks = o->quick ? fig12_k_quick : fig12_k_full;
	uint32_t n_k = o->quick ? 2 : 7, n_m = o->quick ? 1 : 2, rows = 0;
	uint32_t trials = o->quick ? 2 : 20;
	uint64_t rng = o->seed * 7919;

	for (uint32_t mi = 0; mi < n_m; mi++) {
		uint32_t m = fig12_m_full[mi];

		for (uint32_t ki = 0; ki < n_k; ki++) {
			struct fig12 *r = &out[rows++];

			*r = (struct fig12){ m, ks[ki], 0, 0 };
			for (uint32_t t = 0; t < trials; t++) {
				char **names = trial_names(t, FIG12_N);
				bool *gone = calloc(FIG12_N, sizeof(*gone));
				uint16_t *before, *after;
				uint32_t changed = 0, own = 0;

				if (!gone)
					exit(1);
				for (uint32_t removed = 0; removed < ks[ki];) {
					uint32_t x = rand_below(&rng, FIG12_N);

					removed += !gone[x];
					gone[x] = true;
				}
				before = maglev_table(names, FIG12_N, m, NULL);
				after = maglev_table(names, FIG12_N, m, gone);
				for (uint32_t j = 0; j < m; j++) {
					changed += before[j] != after[j];
					own += gone[before[j]];
				}
				r->changed += (double)changed / m / trials;
				r->optimal += (double)own / m / trials;
				free(before);
				free(after);
				free(gone);
				free_names(names, FIG12_N);
			}
		}
	}
	return rows;
}

/* ---- 3: maglevd's builders: build time and second choices ---- */

struct builder_row {
	enum mlv_table_kind kind;
	uint32_t n;
	double build_ms;           /* median, with second choices */
	double second_agrees;      /* fraction of a removed backend's slots */
	double add_second_prev;    /* fraction of an added backend's slots
				      whose second choice is their previous
				      owner */
};

static void run_builders(const struct opts *o, struct builder_row *out,
			 uint32_t *n_out)
{
	static const uint32_t sizes[] = { 100, 1000 };
	uint32_t m = 65537, rows = 0, trials = o->quick ? 1 : 5;
	uint64_t rng = o->seed * 104729;

	for (uint32_t si = 0; si < (o->quick ? 1u : 2u); si++) {
		uint32_t n = sizes[si];

		for (uint32_t k = 0; k < MLV_TABLE__COUNT; k++) {
			struct builder_row *r = &out[rows++];
			double *ms = xmalloc(trials * sizeof(*ms));
			uint64_t agree = 0, own = 0, taken = 0, prev_second = 0;

			r->kind = (enum mlv_table_kind)k;
			r->n = n;
			for (uint32_t t = 0; t < trials; t++) {
				char **names = trial_names(t, n);
				struct mlv_table_backend *be = xmalloc((n + 1) * sizeof(*be));
				struct mlv_table_spec spec = { r->kind, m, 10 };
				uint16_t *first = xmalloc(m * 2), *second = xmalloc(m * 2);
				uint16_t *after = xmalloc(m * 2);
				uint32_t gone = rand_below(&rng, n);
				double t0;

				for (uint32_t i = 0; i <= n; i++)
					be[i] = (struct mlv_table_backend){
						names[i], 100, false };
				t0 = cpu_ms();
				if (mlv_table_build(&spec, be, n, first, second, NULL))
					exit(1);
				ms[t] = cpu_ms() - t0;
				be[gone].weight = 0;
				if (mlv_table_build(&spec, be, n, after, NULL, NULL))
					exit(1);
				for (uint32_t j = 0; j < m; j++) {
					if (first[j] != gone)
						continue;
					own++;
					agree += second[j] == after[j];
				}
				/* names[n] joins the table of the first n */
				be[gone].weight = 100;
				if (mlv_table_build(&spec, be, n + 1, after, second, NULL))
					exit(1);
				for (uint32_t j = 0; j < m; j++) {
					if (after[j] != n)
						continue;
					taken++;
					prev_second += second[j] == first[j];
				}
				free(first);
				free(second);
				free(after);
				free(be);
				free_names(names, n);
			}
			r->build_ms = median(ms, trials);
			r->second_agrees = own ? (double)agree / own : 1;
			r->add_second_prev = taken ? (double)prev_second / taken : 1;
			free(ms);
		}
	}
	*n_out = rows;
}

/* ---- checks: what the algorithms promise ---- */

static int check(const struct opts *o, const struct row *rows, uint32_t n_rows,
		 const struct builder_row *br, uint32_t n_br)
{
	int bad = 0;

	for (uint32_t i = 0; i < n_rows; i++) {
		const char *f = rows[i].s->family;
		bool minimal = strcmp(f, "modn") != 0 && strcmp(f, "maglev") != 0;

		if (minimal && (rows[i].remove_extra > 0 || rows[i].add_extra > 0)) {
			fprintf(stderr, "hash-compare: %s moved keys it need not "
				"(remove %.4f %%, add %.4f %%)\n", rows[i].s->name,
				100 * rows[i].remove_extra, 100 * rows[i].add_extra);
			bad = 1;
		}
		/* mod-N keeps a key only if h mod n == h mod (n+1): 1/(n+1) */
		if (strcmp(f, "modn") == 0 &&
		    rows[i].add_moved < 0.9 * o->nodes / (o->nodes + 1.0)) {
			fprintf(stderr, "hash-compare: mod-N moved only %.2f %%\n",
				100 * rows[i].add_moved);
			bad = 1;
		}
	}
	for (uint32_t i = 0; i < n_br; i++)
		if (br[i].kind != MLV_TABLE_MAGLEV &&
		    (br[i].second_agrees != 1 || br[i].add_second_prev != 1)) {
			fprintf(stderr, "hash-compare: %s second choices differ "
				"from the rebuilt table or the previous owner\n",
				mlv_table_kind_name(br[i].kind));
			bad = 1;
		}
	return bad;
}

/* ---- output ---- */

static void print_human(const struct opts *o, const struct row *rows,
			const struct fig12 *f12, uint32_t n_f12,
			const struct builder_row *br, uint32_t n_br)
{
	printf("1. n = %u nodes, %u keys, median of %u trials (seed %llu)\n\n",
	       o->nodes, o->keys, o->trials, (unsigned long long)o->seed);
	printf("%-31s %9s %7s   %-17s   %-17s\n", "", "", "",
	       "remove one node", "add one node");
	printf("%-31s %9s %7s   %8s %8s   %8s %8s\n", "scheme", "peak/mean",
	       "rel.sd", "moved", "extra", "moved", "extra");
	for (uint32_t i = 0; i < hc_n_schemes; i++)
		printf("%-31s %9.3f %6.1f%%   %7.2f%% %7.2f%%   %7.2f%% %7.2f%%\n",
		       rows[i].s->name, rows[i].peak_mean, 100 * rows[i].rel_sd,
		       100 * rows[i].remove_moved, 100 * rows[i].remove_extra,
		       100 * rows[i].add_moved, 100 * rows[i].add_extra);
	printf("ideal: remove moves 1/n = %.2f %%, add 1/(n+1) = %.2f %%, "
	       "extra 0 (keys that did not have to move)\n\n",
	       100.0 / o->nodes, 100.0 / (o->nodes + 1));

	printf("2. Maglev paper Fig. 12: %u backends, k removed at random, "
	       "table entries changed (mean of %u)\n\n", FIG12_N,
	       o->quick ? 2 : 20);
	printf("%8s %5s %9s %9s %7s\n", "M", "k", "changed", "optimal", "ratio");
	for (uint32_t i = 0; i < n_f12; i++)
		printf("%8u %5u %8.3f%% %8.3f%% %7.2f\n", f12[i].m, f12[i].k,
		       100 * f12[i].changed, 100 * f12[i].optimal,
		       f12[i].changed / f12[i].optimal);

	printf("\n3. maglevd table builders, M = 65537: build time (with second "
	       "choices, CPU ms, median),\n   second choice = owner after "
	       "the first is removed (agrees), and second choice =\n"
	       "   previous owner in the slots an added backend takes "
	       "(add: prev)\n\n");
	printf("%-11s %6s %10s %10s %10s\n", "builder", "N", "build ms",
	       "agrees", "add: prev");
	for (uint32_t i = 0; i < n_br; i++)
		printf("%-11s %6u %10.1f %9.1f%% %9.1f%%\n",
		       mlv_table_kind_name(br[i].kind), br[i].n, br[i].build_ms,
		       100 * br[i].second_agrees, 100 * br[i].add_second_prev);
}

static int print_json(const struct opts *o, const struct row *rows,
		      const struct fig12 *f12, uint32_t n_f12,
		      const struct builder_row *br, uint32_t n_br)
{
	json_t *root = json_pack("{s:s, s:I, s:I, s:I, s:I, s:b}",
				 "tool", "hash-compare", "nodes", (json_int_t)o->nodes,
				 "keys", (json_int_t)o->keys,
				 "trials", (json_int_t)o->trials,
				 "seed", (json_int_t)o->seed, "quick", o->quick);
	json_t *cmp = json_array(), *fig = json_array(), *bld = json_array();
	int rc = 0;

	if (!root || !cmp || !fig || !bld)
		rc = 1;
	for (uint32_t i = 0; !rc && i < hc_n_schemes; i++)
		rc = json_array_append_new(cmp, json_pack(
			"{s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f}",
			"scheme", rows[i].s->name, "family", rows[i].s->family,
			"peak_mean", rows[i].peak_mean, "rel_sd", rows[i].rel_sd,
			"remove_moved", rows[i].remove_moved,
			"remove_extra", rows[i].remove_extra,
			"add_moved", rows[i].add_moved,
			"add_extra", rows[i].add_extra));
	for (uint32_t i = 0; !rc && i < n_f12; i++)
		rc = json_array_append_new(fig, json_pack(
			"{s:I, s:I, s:I, s:f, s:f}", "m", (json_int_t)f12[i].m,
			"backends", (json_int_t)FIG12_N, "k", (json_int_t)f12[i].k,
			"changed", f12[i].changed, "optimal", f12[i].optimal));
	for (uint32_t i = 0; !rc && i < n_br; i++)
		rc = json_array_append_new(bld, json_pack(
			"{s:s, s:I, s:I, s:f, s:f, s:f}",
			"builder", mlv_table_kind_name(br[i].kind),
			"n", (json_int_t)br[i].n, "m", (json_int_t)65537,
			"build_ms", br[i].build_ms,
			"second_agrees", br[i].second_agrees,
			"add_second_prev", br[i].add_second_prev));
	if (!rc)
		rc = json_object_set(root, "comparison", cmp) ||
		     json_object_set(root, "fig12", fig) ||
		     json_object_set(root, "builders", bld) ||
		     json_dumpf(root, stdout, JSON_INDENT(2)) != 0;
	putchar('\n');
	json_decref(cmp);
	json_decref(fig);
	json_decref(bld);
	json_decref(root);
	if (rc)
		fprintf(stderr, "hash-compare: cannot write JSON\n");
	return rc;
}

/* ---- main ---- */

static int usage(const char *msg)
{
	if (msg)
		fprintf(stderr, "hash-compare: %s\n", msg);
	fprintf(stderr, "usage: hash-compare [--json] [--quick] [--keys N] "
		"[--nodes N] [--trials N] [--seed N]\n");
	return 2;
}

static bool parse_u32(const char *text, uint32_t min, uint32_t max,
		      uint32_t *out)
{
	char *end;
	unsigned long long v = strtoull(text, &end, 10);

	if (*text < '0' || *text > '9' || *end != '\0' || v < min || v > max)
		return false;
	*out = (uint32_t)v;
	return true;
}

int main(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "quick", no_argument, NULL, 'q' },
		{ "keys", required_argument, NULL, 'k' },
		{ "nodes", required_argument, NULL, 'n' },
		{ "trials", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .keys = 0, .nodes = 100, .trials = 0, .seed = 1 };
	struct row rows[16];
	struct fig12 f12[16];
	struct builder_row br[8];
	uint32_t n_f12, n_br, seed;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'j': o.json = true; break;
		case 'q': o.quick = true; break;
		case 'k':
			if (!parse_u32(optarg, 1000, 100000000, &o.keys))
				return usage("--keys must be 1000..100000000");
			break;
		case 'n':
			if (!parse_u32(optarg, 2, 10000, &o.nodes))
				return usage("--nodes must be 2..10000");
			break;
		case 't':
			if (!parse_u32(optarg, 1, 1000, &o.trials))
				return usage("--trials must be 1..1000");
			break;
		case 's':
			if (!parse_u32(optarg, 0, UINT32_MAX, &seed))
				return usage("--seed must be 0..4294967295");
			o.seed = seed;
			break;
		case 'h':
			usage(NULL);
			return 0;
		default:
			return usage(NULL);
		}
	}
	if (optind != argc)
		return usage("unexpected argument");
	if (o.keys == 0)
		o.keys = o.quick ? 100000 : 1000000;
	if (o.trials == 0)
		o.trials = o.quick ? 3 : 10;

	if (hc_n_schemes > sizeof(rows) / sizeof(rows[0]))
		return usage("internal: too many schemes");
	run_comparison(&o, rows);
	n_f12 = run_fig12(&o, f12);
	run_builders(&o, br, &n_br);
	if (o.json)
		rc = print_json(&o, rows, f12, n_f12, br, n_br);
	else
		print_human(&o, rows, f12, n_f12, br, n_br), rc = 0;
	return check(&o, rows, hc_n_schemes, br, n_br) ? 1 : rc;
}
