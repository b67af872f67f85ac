/* SPDX-License-Identifier: BSD-3-Clause */
/* The maglevd side of a run: rates and costs over the window between two
 * snapshots (snapshot.c) of the daemon's stats file (daemon/stats_file.c).
 * The window is the daemon's own uptime between the two files. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench/dp-bench/result.h"

struct snapshot {
	json_t *doc;
	double uptime_s;
	double pid;
};

static int load(const char *path, struct snapshot *s)
{
	json_error_t e;

	s->doc = json_load_file(path, 0, &e);
	if (!s->doc) {
		fprintf(stderr, "dp-bench-result: %s:%d: %s\n", path, e.line,
			e.text);
		return 1;
	}
	if (dpb_json_number(s->doc, "uptime_s", &s->uptime_s) ||
	    dpb_json_number(s->doc, "pid", &s->pid)) {
		fprintf(stderr, "dp-bench-result: %s: no uptime_s/pid: not a "
			"maglevd stats file\n", path);
		return 1;
	}
	return 0;
}

/* after - before of the counter at path; -1 if either lacks it. */
static double delta(const struct snapshot *a, const struct snapshot *b,
		    const char *path)
{
	double x, y;

	if (dpb_json_number(a->doc, path, &x) ||
	    dpb_json_number(b->doc, path, &y))
		return -1;
	return y - x;
}

/* Only the drop reasons that moved, so a clean run shows {}. */
static json_t *drops_moved(const struct snapshot *a, const struct snapshot *b)
{
	json_t *out = json_object();
	json_t *drops = json_object_get(json_object_get(b->doc, "totals"),
					"drops");
	const char *reason;
	json_t *v;
	char path[128];

	if (!out || !drops)
		return out;
	json_object_foreach(drops, reason, v) {
		double d;

		if (strcmp(reason, "total") == 0)
			continue;
		snprintf(path, sizeof(path), "totals.drops.%s", reason);
		d = delta(a, b, path);
		if (d > 0)
			json_object_set_new(out, reason,
					    json_integer((json_int_t)d));
	}
	return out;
}

int dpb_cmd_maglevd(int argc, char **argv)
{
	struct dpb_window_args o;
	struct snapshot a = {0}, b = {0};
	double dt, rx, fwd, busy, ct_new, evicted, ns0, ns1, cpu_s;
	bool preempted;
	json_t *rec;
	int rc = dpb_window_args(argc, argv, "maglevd", &o);
	const char *sc = o.scenario, *pa = o.before, *pb = o.after;
	const double tsc_hz = o.tsc_hz;

	if (rc)
		return rc;
	rc = 1;
	if (load(pa, &a) || load(pb, &b))
		goto out;
	dt = b.uptime_s - a.uptime_s;
	if (a.pid != b.pid || dt <= 0) {
		fprintf(stderr, "dp-bench-result: %s and %s are not two "
			"successive snapshots of one daemon\n", pa, pb);
		goto out;
	}
	if (dpb_json_number(a.doc, "dpb_sched_ns", &ns0) ||
	    dpb_json_number(b.doc, "dpb_sched_ns", &ns1) || ns1 <= ns0) {
		fprintf(stderr, "dp-bench-result: %s, %s: no worker CPU time "
			"(take them with snapshot-maglevd)\n", pa, pb);
		goto out;
	}
	cpu_s = (ns1 - ns0) / 1e9;
	rx = delta(&a, &b, "totals.counters.rx_packets");
	fwd = delta(&a, &b, "totals.counters.forwarded");
	busy = delta(&a, &b, "totals.counters.busy_cycles");
	ct_new = delta(&a, &b, "totals.counters.ct_new");
	evicted = delta(&a, &b, "totals.conntrack.evictions");
	if (rx < 0 || fwd < 0 || busy < 0 || ct_new < 0) {
		fprintf(stderr, "dp-bench-result: the stats files lack "
			"rx_packets/forwarded/busy_cycles/ct_new\n");
		goto out;
	}
	if (fwd <= 0) {
		fprintf(stderr, "dp-bench-result: maglevd forwarded no packet "
			"in the %.2f s window (received %.0f)\n", dt, rx);
		goto out;
	}
	/* BUSY_CYCLES are TSC deltas around each burst: when the kernel
	 * takes the CPU away in the middle of one, the time off the CPU
	 * counts as busy. More busy cycles than the thread had on the CPU
	 * says that happened; cycles_per_packet is then inflated. */
	preempted = tsc_hz > 0 && busy > tsc_hz * cpu_s * 1.01;
	rec = json_pack("{s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:I, s:f, s:o*,"
			" s:f, s:o*, s:o*, s:b}",
			"tool", "maglevd", "scenario", sc,
			"mpps", fwd / dt / 1e6,
			"mpps_cpu", fwd / cpu_s / 1e6,
			"rx_mpps", rx / dt / 1e6,
			"cpu_share", cpu_s / dt,
			"window_s", dt,
			"packets", (json_int_t)rx,
			"cycles_per_packet", busy / rx,
			"cycles_per_packet_all",
			tsc_hz > 0 ? json_real(tsc_hz * cpu_s / rx) : NULL,
			"ct_new_per_packet", ct_new / rx,
			"ct_evictions_per_packet",
			evicted >= 0 ? json_real(evicted / rx) : NULL,
			"drops", drops_moved(&a, &b),
			"busy_cycles_include_preemption", preempted);
	rc = dpb_emit(rec);
out:
	json_decref(a.doc);
	json_decref(b.doc);
	return rc;
}
