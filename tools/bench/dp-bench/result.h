/* SPDX-License-Identifier: BSD-3-Clause */
/* dp-bench-result: one JSON record per benchmark run, and the report over
 * all of them. dp-bench.sh calls one subcommand per run and appends the
 * printed line to its results file (JSON Lines); `report` renders that
 * file as a table or one JSON document.
 *
 * Record kinds ("tool" member): "scenario" (what a scenario is, its goal),
 * "testpmd", "maglevd" and "floor" (a measured run; floor is
 * dp-bench-floor, floor.c), "na" (a run that could not be made, with
 * the reason). Single-threaded program; every function
 * returns 0 or prints a message to stderr and returns non-zero. */
#ifndef DPB_RESULT_H
#define DPB_RESULT_H

#include <jansson.h>

/* Print rec on one line on stdout and take its reference. 0 or 1. */
int dpb_emit(json_t *rec);

/* dp-bench-result snapshot-maglevd --input STATS --pid P --thread NAME
 *                                  --out FILE [--timeout S]
 * dp-bench-result snapshot-testpmd --input LOG --pid P --thread NAME
 *                                  --out FILE [--timeout S]
 * Wait for the forwarder's next counter reading (a rewritten maglevd
 * stats file; a new testpmd statistics block) and save it with the CPU
 * time so far of its thread NAME. snapshot.c. Exit 0; 1 on a timeout
 * (default 10 s) or a missing thread; 2 on bad usage. */
int dpb_cmd_snapshot_maglevd(int argc, char **argv);
int dpb_cmd_snapshot_testpmd(int argc, char **argv);
/* snapshot-floor is snapshot-maglevd on dp-bench-floor's stats file: the
 * same rewritten-file protocol. */

/* dp-bench-result maglevd --scenario S --before A --after B [--tsc-hz HZ]
 * The rates and costs between two snapshot-maglevd files: Mpps per wall
 * second (the daemon's uptime) and per second of worker CPU time, the
 * worker's share of its CPU, busy cycles per packet. Exit 0; 1 if the
 * files are unusable or maglevd forwarded nothing; 2 on bad usage. */
int dpb_cmd_maglevd(int argc, char **argv);

/* dp-bench-result testpmd --scenario S --mode io|5tswap --before A
 *                         --after B [--tsc-hz HZ]
 * The same for two snapshot-testpmd files. Exit as above. */
int dpb_cmd_testpmd(int argc, char **argv);

/* dp-bench-result floor --scenario S --before A --after B [--tsc-hz HZ]
 * The same for two snapshot-floor files of dp-bench-floor (result_floor.c):
 * Mpps (TX-packets of the net_null port), CPU share, cycles and conntrack
 * inserts per packet. Exit as above. */
int dpb_cmd_floor(int argc, char **argv);

/* dp-bench-result report [--json] [--wall] FILE
 * Render the records of FILE: rates per second of the forwarding
 * thread's CPU time, or with --wall per wall-clock second. Exit 0, or 1
 * if FILE is unreadable. */
int dpb_cmd_report(int argc, char **argv);

/* The options of the commands over two snapshots of a stats file
 * (maglevd, floor): --scenario S --before A --after B [--tsc-hz HZ]. */
struct dpb_window_args {
	const char *scenario, *before, *after;
	double tsc_hz;   /* 0: not given */
};

/* Parse them for command cmd (named in the messages). 0, or 2 (the
 * exit status of bad usage) after a message. */
int dpb_window_args(int argc, char **argv, const char *cmd,
		    struct dpb_window_args *out);

/* Look up a number at a dotted path ("totals.counters.rx_packets") in
 * doc. 0 and *out, or -1 if absent or not a number. */
int dpb_json_number(const json_t *doc, const char *path, double *out);

#endif
