/* SPDX-License-Identifier: BSD-3-Clause */
/* The testpmd side of a run: two snapshots (snapshot.c) of its periodic
 * port statistics (`--stats-period 1`, non-interactive), of which we take
 * the TX-packets of port 1, the net_null port it forwards into. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench/dp-bench/result.h"

int dpb_cmd_testpmd(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"scenario", required_argument, NULL, 's'},
		{"mode", required_argument, NULL, 'm'},
		{"before", required_argument, NULL, 'a'},
		{"after", required_argument, NULL, 'b'},
		{"tsc-hz", required_argument, NULL, 't'},
		{NULL, 0, NULL, 0},
	};
	const char *sc = NULL, *mode = NULL, *pa = NULL, *pb = NULL;
	json_t *a = NULL, *b = NULL;
	double tsc_hz = 0, tx0, tx1, ns0, ns1, t0, t1, pkts, cpu_s, dt;
	json_error_t e;
	int c, rc = 1;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's': sc = optarg; break;
		case 'm': mode = optarg; break;
		case 'a': pa = optarg; break;
		case 'b': pb = optarg; break;
		case 't': tsc_hz = atof(optarg); break;
		default: return 2;
		}
	}
	if (!sc || !mode || !pa || !pb || optind != argc) {
		fprintf(stderr, "dp-bench-result testpmd: --scenario, --mode, "
			"--before and --after are required\n");
		return 2;
	}
	if (!(a = json_load_file(pa, 0, &e)) || !(b = json_load_file(pb, 0, &e))) {
		fprintf(stderr, "dp-bench-result: %s\n", e.text);
		goto out;
	}
	if (dpb_json_number(a, "tx_packets", &tx0) ||
	    dpb_json_number(b, "tx_packets", &tx1) ||
	    dpb_json_number(a, "dpb_sched_ns", &ns0) ||
	    dpb_json_number(b, "dpb_sched_ns", &ns1) ||
	    dpb_json_number(a, "dpb_mono_s", &t0) ||
	    dpb_json_number(b, "dpb_mono_s", &t1)) {
		fprintf(stderr, "dp-bench-result: %s, %s: not testpmd "
			"snapshots\n", pa, pb);
		goto out;
	}
	pkts = tx1 - tx0;
	cpu_s = (ns1 - ns0) / 1e9;
	dt = t1 - t0;
	if (pkts <= 0 || cpu_s <= 0 || dt <= 0) {
		fprintf(stderr, "dp-bench-result: testpmd forwarded no packet "
			"between %s and %s\n", pa, pb);
		goto out;
	}
	rc = dpb_emit(json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:I, s:o*}",
				"tool", "testpmd", "scenario", sc, "mode", mode,
				"mpps", pkts / dt / 1e6,
				"mpps_cpu", pkts / cpu_s / 1e6,
				"cpu_share", cpu_s / dt, "window_s", dt,
				"packets", (json_int_t)pkts,
				"cycles_per_packet_all",
				tsc_hz > 0 ? json_real(tsc_hz * cpu_s / pkts)
					   : NULL));
out:
	json_decref(a);
	json_decref(b);
	return rc;
}
