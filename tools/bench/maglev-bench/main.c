/* SPDX-License-Identifier: BSD-3-Clause */
/* maglev-bench: control/tables/maglev.c against the straightforward reference
 * (reference.c) on the same inputs, in one run.
 *
 * For every scenario it builds the table with both (several repetitions,
 * alternating which goes first), checks that every pair of tables is
 * identical, and reports the median build times and their ratio, the balance
 * (fewest/most slots a backend owns) and the disruption (fraction of slots
 * whose backend changes when one backend is removed, and when one is added).
 * Exits 1 if any table differs or a build fails, 2 on bad usage.
 *
 *   maglev-bench [--json] [--quick] [--reps N]
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "control/tables/maglev.h"
#include "tools/bench/maglev-bench/reference.h"

enum weight_kind {
	WEIGHTS_EQUAL,    /* all 1 */
	WEIGHTS_1TO4,     /* 1, 2, 3, 4, 1, 2, ... */
	WEIGHTS_SKEWED,   /* one backend 1000, the others 1 */
};

static const char *const weight_kind_name[] = {
	[WEIGHTS_EQUAL] = "equal",
	[WEIGHTS_1TO4] = "1:2:3:4",
	[WEIGHTS_SKEWED] = "1000:1:...:1",
};

struct scenario {
	uint32_t m;
	uint32_t n;
	enum weight_kind weights;
};

static const struct scenario full_set[] = {
	{ 65537, 10, WEIGHTS_EQUAL },   { 65537, 100, WEIGHTS_EQUAL },
	{ 65537, 1000, WEIGHTS_EQUAL }, { 655373, 10, WEIGHTS_EQUAL },
	{ 655373, 100, WEIGHTS_EQUAL }, { 655373, 1000, WEIGHTS_EQUAL },
	{ 65537, 100, WEIGHTS_1TO4 },   { 655373, 1000, WEIGHTS_1TO4 },
	{ 65537, 1000, WEIGHTS_SKEWED },
};

static const struct scenario quick_set[] = {
	{ 65537, 10, WEIGHTS_EQUAL },
	{ 65537, 100, WEIGHTS_EQUAL },
	{ 65537, 100, WEIGHTS_1TO4 },
	{ 65537, 100, WEIGHTS_SKEWED },
};

struct result {
	const struct scenario *sc;
	double ref_ms;          /* medians */
	double ours_ms;
	double reuse_ms;        /* ours with a reused mlv_maglev_builder */
	bool identical;
	uint32_t slots_min;     /* over backends with weight > 0 */
	uint32_t slots_max;
	double remove_moved;    /* fraction of slots whose backend changed */
	double add_moved;
};

/* The backend set of one scenario, in a shuffled (but fixed) order so the
 * builders' name sorting is exercised. Room for one extra backend. */
struct backend_set {
	struct mlv_maglev_backend *be;
	char (*names)[24];
	uint32_t n;
};

/* CPU time of this thread: on a shared machine, time slices given to other
 * processes while a build runs would otherwise count against it, and more
 * often against the slower build. */
static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int cnt)
{
	qsort(v, (size_t)cnt, sizeof(*v), cmp_double);
	return cnt % 2 ? v[cnt / 2] : (v[cnt / 2 - 1] + v[cnt / 2]) / 2;
}

/* xorshift64*: a fixed, seedable shuffle; quality is irrelevant here. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static int backend_set_init(struct backend_set *set, const struct scenario *sc)
{
	uint64_t seed = 0x9E3779B97F4A7C15ULL ^ sc->m ^ (uint64_t)sc->n << 32;

	set->n = sc->n;
	set->be = calloc(sc->n + 1, sizeof(*set->be));
	set->names = calloc(sc->n + 1, sizeof(*set->names));
	if (set->be == NULL || set->names == NULL)
		return -1;
	for (uint32_t i = 0; i < sc->n + 1; i++) {
		snprintf(set->names[i], sizeof(set->names[i]), "backend-%u", i);
		set->be[i].name = set->names[i];
		switch (sc->weights) {
		case WEIGHTS_EQUAL:
			set->be[i].weight = 1;
			break;
		case WEIGHTS_1TO4:
			set->be[i].weight = 1 + i % 4;
			break;
		case WEIGHTS_SKEWED:
			set->be[i].weight = i == 0 ? 1000 : 1;
			break;
		}
	}
	/* Shuffle the first n; entry n stays the "added" backend. */
	for (uint32_t i = sc->n; i > 1; i--) {
		uint32_t j = (uint32_t)(next_rand(&seed) % i);
		struct mlv_maglev_backend t = set->be[i - 1];

		set->be[i - 1] = set->be[j];
		set->be[j] = t;
	}
	return 0;
}

static void backend_set_free(struct backend_set *set)
{
	free(set->be);
	free(set->names);
}

/* Fraction of slots whose backend name differs between two tables. */
static double moved_fraction(const struct mlv_maglev_backend *a,
			     const uint16_t *ta,
			     const struct mlv_maglev_backend *b,
			     const uint16_t *tb, uint32_t m)
{
	uint32_t moved = 0;

	for (uint32_t j = 0; j < m; j++) {
		bool none_a = ta[j] == MLV_MAGLEV_NO_BACKEND;
		bool none_b = tb[j] == MLV_MAGLEV_NO_BACKEND;

		if (none_a != none_b ||
		    (!none_a && strcmp(a[ta[j]].name, b[tb[j]].name) != 0))
			moved++;
	}
	return (double)moved / m;
}

static int run_scenario(const struct scenario *sc, int reps,
			struct result *res)
{
	struct backend_set set = { 0 };
	struct mlv_maglev_builder *builder = NULL;
	struct mlv_maglev_backend *fewer = NULL;
	uint16_t *ref = NULL, *ours = NULL, *other = NULL;
	uint32_t *owned = NULL;
	double *t_ref = NULL, *t_ours = NULL, *t_reuse = NULL;
	int rc = -1;

	memset(res, 0, sizeof(*res));
	res->sc = sc;
	res->identical = true;
	ref = malloc(sc->m * sizeof(*ref));
	ours = malloc(sc->m * sizeof(*ours));
	other = malloc(sc->m * sizeof(*other));
	owned = calloc(sc->n, sizeof(*owned));
	fewer = calloc(sc->n, sizeof(*fewer));
	t_ref = calloc((size_t)reps, sizeof(*t_ref));
	t_ours = calloc((size_t)reps, sizeof(*t_ours));
	t_reuse = calloc((size_t)reps, sizeof(*t_reuse));
	if (ref == NULL || ours == NULL || other == NULL || owned == NULL ||
	    fewer == NULL || t_ref == NULL || t_ours == NULL ||
	    t_reuse == NULL || backend_set_init(&set, sc) != 0 ||
	    mlv_maglev_builder_new(&builder) != MLV_OK) {
		fprintf(stderr, "maglev-bench: out of memory\n");
		goto out;
	}

	for (int r = 0; r < reps; r++) {
		enum mlv_err e_ref, e_ours, e_reuse;
		double t0, t1, t2, t3;

		/* Alternate the order so neither side always runs with the
		 * other's data in the cache. */
		if (r % 2 == 0) {
			t0 = now_ms();
			e_ref = mlv_ref_maglev_build(set.be, sc->n, sc->m, ref);
			t1 = now_ms();
			e_ours = mlv_maglev_build(set.be, sc->n, sc->m, ours,
						  NULL);
			t2 = now_ms();
			t_ref[r] = t1 - t0;
			t_ours[r] = t2 - t1;
		} else {
			t0 = now_ms();
			e_ours = mlv_maglev_build(set.be, sc->n, sc->m, ours,
						  NULL);
			t1 = now_ms();
			e_ref = mlv_ref_maglev_build(set.be, sc->n, sc->m, ref);
			t2 = now_ms();
			t_ours[r] = t1 - t0;
			t_ref[r] = t2 - t1;
		}
		t2 = now_ms();
		e_reuse = mlv_maglev_builder_build(builder, set.be, sc->n,
						   sc->m, other, NULL);
		t3 = now_ms();
		t_reuse[r] = t3 - t2;
		if (e_ref || e_ours || e_reuse) {
			fprintf(stderr, "maglev-bench: M=%u N=%u: build "
				"failed: reference %s, ours %s, builder %s\n",
				sc->m, sc->n, mlv_strerror(e_ref),
				mlv_strerror(e_ours), mlv_strerror(e_reuse));
			goto out;
		}
		if (memcmp(ref, ours, sc->m * sizeof(*ref)) != 0 ||
		    memcmp(ref, other, sc->m * sizeof(*ref)) != 0)
			res->identical = false;
	}
	res->ref_ms = median(t_ref, reps);
	res->ours_ms = median(t_ours, reps);
	res->reuse_ms = median(t_reuse, reps);

	res->slots_min = UINT32_MAX;
	for (uint32_t j = 0; j < sc->m; j++)
		if (ours[j] != MLV_MAGLEV_NO_BACKEND)
			owned[ours[j]]++;
	for (uint32_t i = 0; i < sc->n; i++) {
		if (set.be[i].weight == 0)
			continue;
		res->slots_min = owned[i] < res->slots_min ? owned[i]
							   : res->slots_min;
		res->slots_max = owned[i] > res->slots_max ? owned[i]
							   : res->slots_max;
	}

	/* Disruption: drop the backend in the middle of the input, then
	 * add the spare one (entry n of the set). */
	memcpy(fewer, set.be, sc->n * sizeof(*fewer));
	fewer[sc->n / 2] = fewer[sc->n - 1];
	if (mlv_maglev_build(fewer, sc->n - 1, sc->m, other, NULL) != MLV_OK)
		goto out;
	res->remove_moved = moved_fraction(set.be, ours, fewer, other, sc->m);
	if (mlv_maglev_build(set.be, sc->n + 1, sc->m, other, NULL) != MLV_OK)
		goto out;
	res->add_moved = moved_fraction(set.be, ours, set.be, other, sc->m);
	rc = 0;
out:
	mlv_maglev_builder_free(builder);
	backend_set_free(&set);
	free(ref);
	free(ours);
	free(other);
	free(owned);
	free(fewer);
	free(t_ref);
	free(t_ours);
	free(t_reuse);
	return rc;
}

static void print_human(const struct result *res, size_t cnt, int reps)
{
	printf("Maglev table build: straightforward reference vs "
	       "control/tables/maglev.c, median of %d (thread CPU time)\n\n", reps);
	printf("%8s %5s %-12s %9s %9s %6s %9s %9s %8s %8s %8s %8s\n", "M", "N",
	       "weights", "ref ms", "ours ms", "ratio", "reused ms",
	       "identical", "min", "max", "remove%", "add%");
	for (size_t i = 0; i < cnt; i++) {
		const struct result *r = &res[i];

		printf("%8u %5u %-12s %9.3f %9.3f %5.2fx %9.3f %9s %8u %8u "
		       "%7.3f%% %7.3f%%\n",
		       r->sc->m, r->sc->n, weight_kind_name[r->sc->weights],
		       r->ref_ms, r->ours_ms, r->ref_ms / r->ours_ms,
		       r->reuse_ms, r->identical ? "yes" : "NO", r->slots_min,
		       r->slots_max, 100 * r->remove_moved,
		       100 * r->add_moved);
	}
	printf("\nratio: reference / ours (medians). reused: ours with a "
	       "reused mlv_maglev_builder. identical: every table of every "
	       "repetition equals the reference's.\nmin/max: fewest/most "
	       "slots owned by one backend. remove%%/add%%: slots whose "
	       "backend changes when one backend is removed/added (the least "
	       "possible is about 100/N %%).\n");
}

static int print_json(const struct result *res, size_t cnt, int reps)
{
	json_t *root = json_object(), *arr = json_array();
	int rc = -1;

	if (root == NULL || arr == NULL ||
	    json_object_set_new(root, "benchmark",
				json_string("maglev-table-build")) ||
	    json_object_set_new(root, "repetitions", json_integer(reps)) ||
	    json_object_set(root, "results", arr))
		goto out;
	for (size_t i = 0; i < cnt; i++) {
		const struct result *r = &res[i];
		json_t *o = json_pack(
			"{s:I, s:I, s:s, s:f, s:f, s:f, s:f, s:b, s:I, s:I, "
			"s:f, s:f}",
			"m", (json_int_t)r->sc->m, "n", (json_int_t)r->sc->n,
			"weights", weight_kind_name[r->sc->weights],
			"reference_ms", r->ref_ms, "ours_ms", r->ours_ms,
			"ratio", r->ref_ms / r->ours_ms, "ours_reused_ms",
			r->reuse_ms, "identical", r->identical,
			"slots_min", (json_int_t)r->slots_min, "slots_max",
			(json_int_t)r->slots_max, "remove_moved_fraction",
			r->remove_moved, "add_moved_fraction", r->add_moved);

		if (o == NULL || json_array_append_new(arr, o))
			goto out;
	}
	if (json_dumpf(root, stdout, JSON_INDENT(2)) != 0)
		goto out;
	putchar('\n');
	rc = 0;
out:
	json_decref(arr);
	json_decref(root);
	return rc;
}

static void usage(FILE *to)
{
	fprintf(to,
		"usage: maglev-bench [--json] [--quick] [--reps N]\n"
		"  --json    machine-readable output\n"
		"  --quick   small smoke run (CI)\n"
		"  --reps N  repetitions per scenario, median reported "
		"(default 11, quick 3)\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "quick", no_argument, NULL, 'q' },
		{ "reps", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct scenario *set = full_set;
	size_t cnt = sizeof(full_set) / sizeof(full_set[0]);
	struct result *res;
	bool json = false, all_identical = true;
	int reps = 0, opt;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 'q':
			set = quick_set;
			cnt = sizeof(quick_set) / sizeof(quick_set[0]);
			break;
		case 'r': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end != '\0' || v < 1 || v > 1000) {
				fprintf(stderr, "maglev-bench: --reps wants "
					"1..1000, got '%s'\n", optarg);
				return 2;
			}
			reps = (int)v;
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (reps == 0)
		reps = set == quick_set ? 3 : 11;

	res = calloc(cnt, sizeof(*res));
	if (res == NULL) {
		fprintf(stderr, "maglev-bench: out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < cnt; i++) {
		if (run_scenario(&set[i], reps, &res[i]) != 0) {
			free(res);
			return 1;
		}
		if (!res[i].identical) {
			all_identical = false;
			fprintf(stderr, "maglev-bench: M=%u N=%u weights %s: "
				"tables differ from the reference\n",
				set[i].m, set[i].n,
				weight_kind_name[set[i].weights]);
		}
	}
	if (json) {
		if (print_json(res, cnt, reps) != 0) {
			fprintf(stderr, "maglev-bench: JSON output failed\n");
			free(res);
			return 1;
		}
	} else {
		print_human(res, cnt, reps);
	}
	free(res);
	return all_identical ? 0 : 1;
}
