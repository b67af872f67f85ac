/* SPDX-License-Identifier: BSD-3-Clause */
/* The floor side of a run: rates between two snapshots (snapshot.c) of
 * dp-bench-floor's stats file (floor.c). Packets forwarded are the
 * TX-packets of the net_null port, as for testpmd; the window is the
 * floor's own uptime between the two files. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "tools/bench/dp-bench/result.h"

/* The counters of one snapshot, all present or the file is refused. */
struct floor_snap {
	double pid, uptime_s, rx, tx, misses, drops, sched_ns;
};

static int load(const char *path, struct floor_snap *s)
{
	json_error_t e;
	json_t *doc = json_load_file(path, 0, &e);
	int rc = 0;

	if (!doc) {
		fprintf(stderr, "dp-bench-result: %s:%d: %s\n", path, e.line,
			e.text);
		return 1;
	}
	if (dpb_json_number(doc, "pid", &s->pid) ||
	    dpb_json_number(doc, "uptime_s", &s->uptime_s) ||
	    dpb_json_number(doc, "rx_packets", &s->rx) ||
	    dpb_json_number(doc, "tx_packets", &s->tx) ||
	    dpb_json_number(doc, "misses", &s->misses) ||
	    dpb_json_number(doc, "drops", &s->drops) ||
	    dpb_json_number(doc, "dpb_sched_ns", &s->sched_ns)) {
		fprintf(stderr, "dp-bench-result: %s: not a snapshot-floor "
			"file of dp-bench-floor's stats\n", path);
		rc = 1;
	}
	json_decref(doc);
	return rc;
}

int dpb_cmd_floor(int argc, char **argv)
{
	struct dpb_window_args o;
	struct floor_snap a, b;
	double dt, cpu_s, rx, tx;
	int rc = dpb_window_args(argc, argv, "floor", &o);
	const char *sc = o.scenario, *pa = o.before, *pb = o.after;
	const double tsc_hz = o.tsc_hz;

	if (rc)
		return rc;
	if (load(pa, &a) || load(pb, &b))
		return 1;
	dt = b.uptime_s - a.uptime_s;
	cpu_s = (b.sched_ns - a.sched_ns) / 1e9;
	rx = b.rx - a.rx;
	tx = b.tx - a.tx;
	if (a.pid != b.pid || dt <= 0 || cpu_s <= 0) {
		fprintf(stderr, "dp-bench-result: %s and %s are not two "
			"successive snapshots of one dp-bench-floor\n", pa, pb);
		return 1;
	}
	if (tx <= 0 || rx <= 0) {
		fprintf(stderr, "dp-bench-result: dp-bench-floor forwarded no "
			"packet in the %.2f s window (received %.0f)\n", dt, rx);
		return 1;
	}
	return dpb_emit(json_pack(
		"{s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:I, s:o*, s:f, s:f}",
		"tool", "floor", "scenario", sc,
		"mpps", tx / dt / 1e6, "mpps_cpu", tx / cpu_s / 1e6,
		"rx_mpps", rx / dt / 1e6, "cpu_share", cpu_s / dt,
		"window_s", dt, "packets", (json_int_t)rx,
		"cycles_per_packet_all",
		tsc_hz > 0 ? json_real(tsc_hz * cpu_s / rx) : NULL,
		"ct_new_per_packet", (b.misses - a.misses) / rx,
		"drops_per_packet", (b.drops - a.drops) / rx));
}
