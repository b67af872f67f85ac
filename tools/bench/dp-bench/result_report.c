/* SPDX-License-Identifier: BSD-3-Clause */
/* The report over a results file: one row per scenario with testpmd io,
 * testpmd 5tswap and maglevd side by side, the ratio maglevd / 5tswap
 * against the scenario's goal, and maglevd's cost per packet. A second
 * table, for the scenarios dp-bench-floor ran on, sets the floor (the
 * least work of any conntrack balancer, floor.c) between the two:
 * floor / 5tswap is the best ratio any balancer reaches here, maglevd /
 * floor is maglevd's own overhead. The first table's layout does not
 * depend on the floor, so a reader of it parses runs with and without
 * one alike.
 *
 * Rates are per second of the forwarding thread's CPU time by default
 * ("mpps_cpu"): on a machine whose cores other work shares, that is what
 * the forwarder achieves while it runs; --wall reports per wall-clock
 * second ("mpps"). On an idle machine the two agree (the cpu column is
 * 100 %). A run repeated (dp-bench --repeat) is represented by its median
 * run, a real run rather than an average, so its cycles and conntrack
 * figures belong to the same measurement; the JSON lists every repeat. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "tools/bench/dp-bench/result.h"

#define MAX_SCENARIOS 64

enum run { RUN_IO, RUN_SWAP, RUN_MLV, RUN_FLOOR, RUN__N };
static const char *const run_key[RUN__N] = {
	[RUN_IO] = "testpmd_io", [RUN_SWAP] = "testpmd_5tswap",
	[RUN_MLV] = "maglevd", [RUN_FLOOR] = "floor",
};

struct row {
	const char *name;
	json_t *scenario;        /* the "scenario" record, or NULL */
	json_t *runs[RUN__N];    /* arrays of run records, by enum run */
	json_t *io, *swap, *mlv, *flr; /* the median run of each, or NULL */
	json_t *na;              /* array of "na" records */
};

struct rows {
	struct row r[MAX_SCENARIOS];
	unsigned n;
	json_t *all;             /* owns every record */
	const char *rate;        /* "mpps_cpu" or "mpps": the basis */
};

static struct row *row_of(struct rows *rs, const char *name)
{
	for (unsigned i = 0; i < rs->n; i++)
		if (strcmp(rs->r[i].name, name) == 0)
			return &rs->r[i];
	if (rs->n == MAX_SCENARIOS)
		return NULL;
	rs->r[rs->n] = (struct row){
		.name = name, .na = json_array(),
		.runs = {json_array(), json_array(), json_array(),
			 json_array()},
	};
	/* counted even if an allocation failed: dpb_cmd_report frees the
	 * row (json_decref(NULL) is a no-op) */
	rs->n++;
	for (int k = 0; k < RUN__N; k++)
		if (!rs->r[rs->n - 1].runs[k])
			return NULL;
	return rs->r[rs->n - 1].na ? &rs->r[rs->n - 1] : NULL;
}

static int add_record(struct rows *rs, json_t *rec, const char *path,
		      unsigned lineno)
{
	const char *tool = json_string_value(json_object_get(rec, "tool"));
	const char *sc = json_string_value(json_object_get(rec, "scenario"));
	const char *mode = json_string_value(json_object_get(rec, "mode"));
	struct row *r;

	if (!tool || !sc) {
		fprintf(stderr, "%s:%u: a record without tool/scenario\n", path,
			lineno);
		return 1;
	}
	if (!(r = row_of(rs, sc))) {
		fprintf(stderr, "%s:%u: more than %d scenarios\n", path, lineno,
			MAX_SCENARIOS);
		return 1;
	}
	if (strcmp(tool, "scenario") == 0)
		r->scenario = rec;
	else if (strcmp(tool, "maglevd") == 0)
		json_array_append(r->runs[RUN_MLV], rec);
	else if (strcmp(tool, "floor") == 0)
		json_array_append(r->runs[RUN_FLOOR], rec);
	else if (strcmp(tool, "testpmd") == 0 && mode &&
		 strcmp(mode, "io") == 0)
		json_array_append(r->runs[RUN_IO], rec);
	else if (strcmp(tool, "testpmd") == 0 && mode &&
		 strcmp(mode, "5tswap") == 0)
		json_array_append(r->runs[RUN_SWAP], rec);
	else if (strcmp(tool, "na") == 0)
		json_array_append(r->na, rec);
	else
		fprintf(stderr, "%s:%u: record of unknown kind '%s' ignored\n",
			path, lineno, tool);
	return 0;
}

static int load(const char *path, struct rows *rs)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	int rc = 0;

	if (!f) {
		perror(path);
		return 1;
	}
	rs->all = json_array();
	while (rs->all && getline(&line, &cap, f) > 0) {
		json_error_t e;
		json_t *rec;

		lineno++;
		if (line[0] == '\n')
			continue;
		rec = json_loads(line, 0, &e);
		if (!rec) {
			fprintf(stderr, "%s:%u: %s\n", path, lineno, e.text);
			rc = 1;
			break;
		}
		/* the array keeps the record (and the strings rows point to)
		 * alive until the end */
		if (json_array_append_new(rs->all, rec) ||
		    add_record(rs, rec, path, lineno)) {
			rc = 1;
			break;
		}
	}
	free(line);
	fclose(f);
	return rs->all ? rc : 1;
}

static double num(const json_t *rec, const char *key)
{
	const json_t *v = rec ? json_object_get(rec, key) : NULL;

	return v && json_is_number(v) ? json_number_value(v) : -1;
}

/* The run with the median rate (the lower of the middle two for an even
 * count), or NULL for none. An insertion sort: a handful of repeats. */
static json_t *median_run(const json_t *runs, const char *rate)
{
	json_t *v[64];
	size_t n = json_array_size(runs);

	if (n == 0)
		return NULL;
	if (n > 64)
		n = 64;
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_array_get(runs, i);
		size_t j = i;

		for (; j > 0 && num(v[j - 1], rate) > num(x, rate); j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	return v[(n - 1) / 2];
}

static void pick_medians(struct rows *rs)
{
	for (unsigned i = 0; i < rs->n; i++) {
		struct row *r = &rs->r[i];

		r->io = median_run(r->runs[RUN_IO], rs->rate);
		r->swap = median_run(r->runs[RUN_SWAP], rs->rate);
		r->mlv = median_run(r->runs[RUN_MLV], rs->rate);
		r->flr = median_run(r->runs[RUN_FLOOR], rs->rate);
	}
}

/* Every repeat's rate by key, in run order. */
static json_t *rate_list(const json_t *runs, const char *key)
{
	json_t *out = json_array(), *rec;
	size_t k;

	json_array_foreach(runs, k, rec)
		if (out)
			json_array_append_new(out, json_real(num(rec, key)));
	return out;
}

/* a / b by key, or -1 when either is missing. */
static double ratio_of(const json_t *a, const json_t *b, const char *key)
{
	double x = num(a, key), y = num(b, key);

	return x > 0 && y > 0 ? x / y : -1;
}

/* maglevd / 5tswap by key, or -1 when either is missing. */
static double ratio(const struct row *r, const char *key)
{
	return ratio_of(r->mlv, r->swap, key);
}

/* run / 5tswap repeat by repeat (run: RUN_MLV or RUN_FLOOR): the k-th
 * run of each, made a few seconds apart in the same repeat (dp-bench runs
 * io, 5tswap, maglevd, floor, io, ...), so a drift of the host's speed
 * between repeats, which moves 5tswap's rate most, cancels in each. In
 * run order into out; returns how many, 0 when the two have different
 * numbers of runs (a run missing: no pairing by position). */
static size_t paired_ratios(const struct row *r, enum run run, const char *key,
			    double *out, size_t cap)
{
	size_t n = json_array_size(r->runs[run]);

	if (n == 0 || n != json_array_size(r->runs[RUN_SWAP]) || n > cap)
		return 0;
	for (size_t k = 0; k < n; k++) {
		out[k] = ratio_of(json_array_get(r->runs[run], k),
				  json_array_get(r->runs[RUN_SWAP], k), key);
		if (out[k] < 0)
			return 0;
	}
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* "least median greatest" of run's paired ratios into buf, or n/a. */
static void paired_cells(const struct row *r, enum run run, const char *key,
			 char *buf, size_t len)
{
	double q[64];
	size_t n = paired_ratios(r, run, key, q, 64);

	if (n < 2) {
		snprintf(buf, len, "%6s %6s %6s", "n/a", "n/a", "n/a");
		return;
	}
	qsort(q, n, sizeof(q[0]), cmp_double);
	snprintf(buf, len, "%6.2f %6.2f %6.2f", q[0], q[(n - 1) / 2], q[n - 1]);
}

/* The paired ratios of every scenario repeated more than once: how far
 * one repeat's ratio strays from the ratio of record (of the medians). */
static void print_paired(const struct rows *rs)
{
	bool any = false;

	for (unsigned i = 0; i < rs->n; i++) {
		const struct row *r = &rs->r[i];
		double q[64];
		size_t n = paired_ratios(r, RUN_MLV, rs->rate, q, 64);
		char mlv[64], flr[64];

		if (n < 2)
			continue;
		if (!any)
			printf("\n%-16s %7s %20s %20s\n%-16s %7s %6s %6s %6s "
			       "%6s %6s %6s\n", "", "", "maglevd / 5tswap",
			       "floor / 5tswap", "scenario", "repeats", "min",
			       "median", "max", "min", "median", "max");
		any = true;
		paired_cells(r, RUN_MLV, rs->rate, mlv, sizeof(mlv));
		paired_cells(r, RUN_FLOOR, rs->rate, flr, sizeof(flr));
		printf("%-16s %7zu %s %s\n", r->name, n, mlv, flr);
	}
	if (any)
		printf("\nmin, median, max: repeat by repeat (each maglevd or "
		       "floor run over the 5tswap\nrun of the same repeat), the "
		       "spread the host's speed gives a single ratio. The\ngoal "
		       "is judged on the ratio column above, of the medians.\n");
}

/* The smallest share of its CPU the forwarding thread had in the
 * scenario's three median runs, or -1. */
static double min_cpu_share(const struct row *r)
{
	const json_t *runs[] = {r->io, r->swap, r->mlv};
	double lo = -1;

	for (int k = 0; k < 3; k++) {
		double v = num(runs[k], "cpu_share");

		if (v >= 0 && (lo < 0 || v < lo))
			lo = v;
	}
	return lo;
}

static void cell(char *buf, size_t len, double v, int decimals)
{
	if (v < 0)
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.*f", decimals, v);
}

/* The floor table: only rows with a floor run. */
static void print_floor_table(const struct rows *rs)
{
	bool any = false;

	for (unsigned i = 0; i < rs->n; i++) {
		const struct row *r = &rs->r[i];
		double goal = num(r->scenario, "goal");
		double fs = ratio_of(r->flr, r->swap, rs->rate);
		double cpu = num(r->flr, "cpu_share");
		char c[7][32], g[64];

		if (!r->flr)
			continue;
		if (!any)
			printf("\n%-16s %7s %7s %7s %6s %6s %7s %7s %5s  %s\n",
			       "scenario", "floor", "5tswap", "maglevd", "fl/5t",
			       "mlv/fl", "all/pkt", "new/pkt", "cpu%",
			       "goal (ratio) for any balancer");
		any = true;
		cell(c[0], sizeof(c[0]), num(r->flr, rs->rate), 2);
		cell(c[1], sizeof(c[1]), num(r->swap, rs->rate), 2);
		cell(c[2], sizeof(c[2]), num(r->mlv, rs->rate), 2);
		cell(c[3], sizeof(c[3]), fs, 2);
		cell(c[4], sizeof(c[4]), ratio_of(r->mlv, r->flr, rs->rate), 2);
		cell(c[5], sizeof(c[5]), num(r->flr, "cycles_per_packet_all"),
		     0);
		cell(c[6], sizeof(c[6]), num(r->flr, "ct_new_per_packet"), 3);
		if (goal <= 0)
			snprintf(g, sizeof(g), "-");
		else if (fs < 0)
			snprintf(g, sizeof(g), ">= %.1f: not measured", goal);
		else
			snprintf(g, sizeof(g), ">= %.1f: %s", goal,
				 fs >= goal ? "reachable" : "out of reach here");
		printf("%-16s %7s %7s %7s %6s %6s %7s %7s %5.0f  %s\n", r->name,
		       c[0], c[1], c[2], c[3], c[4], c[5], c[6],
		       cpu >= 0 ? 100 * cpu : 0, g);
	}
	if (!any)
		return;
	printf("\nfloor: dp-bench-floor (tools/bench/dp-bench/floor_path.h), only "
	       "the work any conntrack\nload balancer must do (check, "
	       "5-tuple, CRC32, look-up in maglevd's table geometry,\n"
	       "insert on a miss, ipip), same input, core and pool; Mpps as "
	       "above. fl/5t: floor /\n5tswap, the best ratio any such "
	       "balancer reaches here; mlv/fl: maglevd / floor,\nmaglevd's "
	       "own overhead. all/pkt, new/pkt, cpu%%: the floor's, as "
	       "above.\n");
}

static void print_table(const struct rows *rs)
{
	printf("%-16s %7s %7s %7s %6s %7s %7s %7s %5s  %s\n", "scenario",
	       "io", "5tswap", "maglevd", "ratio", "cyc/pkt", "all/pkt",
	       "new/pkt", "cpu%", "goal (ratio)");
	for (unsigned i = 0; i < rs->n; i++) {
		const struct row *r = &rs->r[i];
		double goal = num(r->scenario, "goal"), q = ratio(r, rs->rate);
		double share = min_cpu_share(r);
		char c[8][32], g[48];

		cell(c[0], sizeof(c[0]), num(r->io, rs->rate), 2);
		cell(c[1], sizeof(c[1]), num(r->swap, rs->rate), 2);
		cell(c[2], sizeof(c[2]), num(r->mlv, rs->rate), 2);
		cell(c[3], sizeof(c[3]), q, 2);
		cell(c[4], sizeof(c[4]), num(r->mlv, "cycles_per_packet"), 0);
		if (json_is_true(json_object_get(r->mlv,
						 "busy_cycles_include_preemption")))
			strcat(c[4], "*");
		cell(c[5], sizeof(c[5]), num(r->mlv, "cycles_per_packet_all"),
		     0);
		cell(c[6], sizeof(c[6]), num(r->mlv, "ct_new_per_packet"), 3);
		cell(c[7], sizeof(c[7]), share >= 0 ? 100 * share : -1, 0);
		if (goal <= 0)
			snprintf(g, sizeof(g), "-");
		else if (q < 0)
			snprintf(g, sizeof(g), ">= %.1f: not measured", goal);
		else
			snprintf(g, sizeof(g), ">= %.1f: %s", goal,
				 q >= goal ? "met" : "MISSED");
		printf("%-16s %7s %7s %7s %6s %7s %7s %7s %5s  %s\n", r->name,
		       c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], g);
	}
	printf("\nio, 5tswap, maglevd: millions of packets forwarded per "
	       "second %s (testpmd: TX-packets\nof the net_null port; "
	       "maglevd: 'forwarded'). ratio: maglevd / testpmd 5tswap.\n"
	       "cyc/pkt: maglevd worker TSC cycles of burst work per received "
	       "packet (BUSY_CYCLES /\nRX_PACKETS: forwarding and transmit, "
	       "not rte_eth_rx_burst); * = inflated by time off the\nCPU "
	       "inside bursts. all/pkt: every CPU cycle of the worker thread "
	       "per packet. new/pkt:\nconntrack entries created per received "
	       "packet. cpu%%: the least share of its CPU a\nforwarding "
	       "thread had in the three runs (below 100: other work shared "
	       "the core).\n",
	       strcmp(rs->rate, "mpps") == 0 ? "of wall-clock time"
					      : "of the forwarding thread's CPU time");
	print_floor_table(rs);
	print_paired(rs);

	for (unsigned i = 0; i < rs->n; i++) {
		const struct row *r = &rs->r[i];
		const char *d = json_string_value(
			json_object_get(r->scenario, "description"));
		size_t k;
		json_t *na;

		if (d)
			printf("%s%-16s %s\n", i ? "" : "\n", r->name, d);
		json_array_foreach(r->na, k, na)
			printf("%-16s   n/a %s: %s\n", "",
			       json_string_value(json_object_get(na, "run")),
			       json_string_value(json_object_get(na, "reason")));
	}
}

static json_t *machine(void)
{
	char line[512], model[256] = "unknown";
	struct utsname u;
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && colon) {
			snprintf(model, sizeof(model), "%s", colon + 2);
			model[strcspn(model, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
	if (uname(&u) != 0)
		strcpy(u.release, "unknown");
	return json_pack("{s:s, s:i, s:s}", "cpu", model, "cpus",
			 (int)sysconf(_SC_NPROCESSORS_ONLN), "kernel", u.release);
}

/* paired_ratios as a JSON array in run order; NULL (left out) when the
 * runs do not pair. */
static json_t *paired_list(const struct row *r, enum run run, const char *key)
{
	double q[64];
	size_t n = paired_ratios(r, run, key, q, 64);
	json_t *out;

	if (n == 0 || !(out = json_array()))
		return NULL;
	for (size_t k = 0; k < n; k++)
		json_array_append_new(out, json_real(q[k]));
	return out;
}

static int print_json(const struct rows *rs)
{
	json_t *arr = json_array();

	if (!arr)
		return 1;
	for (unsigned i = 0; i < rs->n; i++) {
		const struct row *r = &rs->r[i];
		double goal = num(r->scenario, "goal");
		double q = ratio(r, rs->rate), qw = ratio(r, "mpps");
		double fs = ratio_of(r->flr, r->swap, rs->rate);
		double mf = ratio_of(r->mlv, r->flr, rs->rate);
		json_t *o = json_pack(
			"{s:s, s:O*, s:O*, s:O*, s:O*, s:O*, s:o*, s:o*, s:o*,"
			" s:o*, s:o*, s:O, s:o*, s:o*, s:{s:o*, s:o*, s:o*, s:o*}}",
			"scenario", r->name, "setup", r->scenario,
			run_key[RUN_IO], r->io, run_key[RUN_SWAP], r->swap,
			run_key[RUN_MLV], r->mlv, run_key[RUN_FLOOR], r->flr,
			"ratio_maglevd_5tswap", q >= 0 ? json_real(q) : NULL,
			"ratio_maglevd_5tswap_wall", qw >= 0 ? json_real(qw) : NULL,
			"goal_met", goal > 0 && q >= 0 ? json_boolean(q >= goal)
						       : NULL,
			"ratio_floor_5tswap", fs >= 0 ? json_real(fs) : NULL,
			"ratio_maglevd_floor", mf >= 0 ? json_real(mf) : NULL,
			"not_available", r->na,
			"ratio_maglevd_5tswap_by_repeat",
			paired_list(r, RUN_MLV, rs->rate),
			"ratio_floor_5tswap_by_repeat",
			paired_list(r, RUN_FLOOR, rs->rate),
			"every_repeat",
			run_key[RUN_IO], rate_list(r->runs[RUN_IO], rs->rate),
			run_key[RUN_SWAP], rate_list(r->runs[RUN_SWAP], rs->rate),
			run_key[RUN_MLV], rate_list(r->runs[RUN_MLV], rs->rate),
			run_key[RUN_FLOOR],
			rate_list(r->runs[RUN_FLOOR], rs->rate));

		if (!o || json_array_append_new(arr, o)) {
			json_decref(arr);
			return 1;
		}
	}
	return dpb_emit(json_pack("{s:s, s:s, s:o*, s:o}", "benchmark",
				  "dp-bench", "rate", rs->rate, "machine",
				  machine(), "scenarios", arr));
}

int dpb_cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{"wall", no_argument, NULL, 'w'},
		{NULL, 0, NULL, 0},
	};
	static struct rows rs;
	bool json = false;
	int c, rc;

	rs.rate = "mpps_cpu";
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'w')
			rs.rate = "mpps";
		else
			return 2;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "dp-bench-result report: one results file\n");
		return 2;
	}
	rc = load(argv[optind], &rs);
	if (rc == 0) {
		pick_medians(&rs);
		if (json)
			rc = print_json(&rs);
		else
			print_table(&rs);
	}
	for (unsigned i = 0; i < rs.n; i++) {
		json_decref(rs.r[i].na);
		for (int k = 0; k < RUN__N; k++)
			json_decref(rs.r[i].runs[k]);
	}
	json_decref(rs.all);
	return rc;
}
