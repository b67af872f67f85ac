/* SPDX-License-Identifier: BSD-3-Clause */
/* dp-bench-result: see result.h. Subcommands:
 *
 *   scenario --name S --desc TEXT [--goal RATIO] [--flows K] [--frames N]
 *            [--ct-entries C] [--forwarding F]
 *   na --scenario S --run RUN --reason TEXT
 *   snapshot-maglevd, snapshot-testpmd, snapshot-floor ...   (snapshot.c)
 *   maglevd ...   (result_maglevd.c)
 *   testpmd ...   (result_testpmd.c)
 *   floor ...     (result_floor.c)
 *   report ...    (result_report.c)
 *   tsc-hz        the TSC frequency, measured against CLOCK_MONOTONIC_RAW
 *   number FILE PATH   the number at a dotted PATH in the JSON document
 *                      FILE; exit 1 if FILE or the number is missing (the
 *                      driver's readiness poll on maglevd's stats file)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>

#include "tools/bench/dp-bench/result.h"

static bool parse_double(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return s[0] && !*end && !errno && *out >= 0;
}

static int cmd_scenario(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"name", required_argument, NULL, 'n'},
		{"desc", required_argument, NULL, 'd'},
		{"goal", required_argument, NULL, 'g'},
		{"flows", required_argument, NULL, 'k'},
		{"frames", required_argument, NULL, 'f'},
		{"ct-entries", required_argument, NULL, 'c'},
		{"forwarding", required_argument, NULL, 'w'},
		{NULL, 0, NULL, 0},
	};
	const char *name = NULL, *desc = NULL, *fwd = "";
	double goal = 0, flows = 0, frames = 0, ct = 0;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		bool ok = true;

		switch (c) {
		case 'n': name = optarg; break;
		case 'd': desc = optarg; break;
		case 'w': fwd = optarg; break;
		case 'g': ok = parse_double(optarg, &goal); break;
		case 'k': ok = parse_double(optarg, &flows); break;
		case 'f': ok = parse_double(optarg, &frames); break;
		case 'c': ok = parse_double(optarg, &ct); break;
		default: ok = false;
		}
		if (!ok) {
			fprintf(stderr, "dp-bench-result scenario: bad option or "
				"value\n");
			return 2;
		}
	}
	if (!name || !desc || optind != argc) {
		fprintf(stderr, "dp-bench-result scenario: --name and --desc "
			"are required\n");
		return 2;
	}
	return dpb_emit(json_pack("{s:s, s:s, s:s, s:f, s:I, s:I, s:I, s:s}",
				  "tool", "scenario", "scenario", name,
				  "description", desc, "goal", goal,
				  "flows", (json_int_t)flows,
				  "frames", (json_int_t)frames,
				  "ct_entries", (json_int_t)ct,
				  "forwarding", fwd));
}

static int cmd_na(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"scenario", required_argument, NULL, 's'},
		{"run", required_argument, NULL, 'r'},
		{"reason", required_argument, NULL, 'w'},
		{NULL, 0, NULL, 0},
	};
	const char *sc = NULL, *run = NULL, *why = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's': sc = optarg; break;
		case 'r': run = optarg; break;
		case 'w': why = optarg; break;
		default: return 2;
		}
	}
	if (!sc || !run || !why || optind != argc) {
		fprintf(stderr, "dp-bench-result na: --scenario, --run and "
			"--reason are required\n");
		return 2;
	}
	return dpb_emit(json_pack("{s:s, s:s, s:s, s:s}", "tool", "na",
				  "scenario", sc, "run", run, "reason", why));
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* rte_get_tsc_hz() needs an initialised EAL; measuring takes 200 ms
 * and no hugepages. */
static int cmd_tsc_hz(void)
{
	struct timespec pause = {.tv_sec = 0, .tv_nsec = 200 * 1000 * 1000};
	double t0 = mono_s();
	uint64_t c0 = rte_rdtsc();

	nanosleep(&pause, NULL);
	printf("%.0f\n", (double)(rte_rdtsc() - c0) / (mono_s() - t0));
	return 0;
}

static int cmd_number(int argc, char **argv)
{
	json_error_t e;
	json_t *doc;
	double v;
	int rc = 1;

	if (argc != 4) {
		fprintf(stderr, "dp-bench-result number FILE PATH\n");
		return 2;
	}
	/* quiet when the file is absent: the daemon may not have written
	 * it yet, and the caller polls */
	doc = json_load_file(argv[2], 0, &e);
	if (doc && dpb_json_number(doc, argv[3], &v) == 0) {
		printf("%.0f\n", v);
		rc = 0;
	}
	json_decref(doc);
	return rc;
}

static void usage(FILE *f)
{
	fputs("usage: dp-bench-result scenario|na|snapshot-maglevd|"
	      "snapshot-testpmd|snapshot-floor|maglevd|testpmd|floor|report|"
	      "tsc-hz|number\n"
	      "       [options] (see tools/bench/dp-bench/result.h)\n", f);
}

int main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	/* the subcommands parse argv[1..]: argv[1] plays the program name */
	if (strcmp(cmd, "scenario") == 0)
		return cmd_scenario(argc - 1, argv + 1);
	if (strcmp(cmd, "na") == 0)
		return cmd_na(argc - 1, argv + 1);
	if (strcmp(cmd, "snapshot-maglevd") == 0)
		return dpb_cmd_snapshot_maglevd(argc - 1, argv + 1);
	if (strcmp(cmd, "snapshot-floor") == 0)
		return dpb_cmd_snapshot_maglevd(argc - 1, argv + 1);
	if (strcmp(cmd, "snapshot-testpmd") == 0)
		return dpb_cmd_snapshot_testpmd(argc - 1, argv + 1);
	if (strcmp(cmd, "maglevd") == 0)
		return dpb_cmd_maglevd(argc - 1, argv + 1);
	if (strcmp(cmd, "testpmd") == 0)
		return dpb_cmd_testpmd(argc - 1, argv + 1);
	if (strcmp(cmd, "floor") == 0)
		return dpb_cmd_floor(argc - 1, argv + 1);
	if (strcmp(cmd, "report") == 0)
		return dpb_cmd_report(argc - 1, argv + 1);
	if (strcmp(cmd, "number") == 0)
		return cmd_number(argc, argv);
	if (strcmp(cmd, "tsc-hz") == 0 && argc == 2)
		return cmd_tsc_hz();
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
		usage(stdout);
		return 0;
	}
	usage(stderr);
	return 2;
}
