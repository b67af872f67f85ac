/* dp-bench-result: one JSON record per benchmark run, and the report over
 * all of them. dp-bench.sh calls one subcommand per run and appends the
 * printed line to its results file (JSON Lines); `report` renders that
 * file as a table or one JSON document.
 *
 * Record kinds ("tool" member): "scenario" (what a scenario is, its goal),
 * "testpmd" and "maglevd" (a measured run), "na" (a run that could not
 * be made, with the reason). Single-threaded program; every function
 * returns 0 or prints a message to stderr and returns non-zero. */
#ifndef DPB_RESULT_H
#define DPB_RESULT_H

#include <jansson.h>

/* Print rec on one line on stdout and take its reference. 0 or 1. */
int dpb_emit(json_t *rec);

/* dp-bench-result maglevd --scenario S --before A.json --after B.json
 *                         [--tsc-hz HZ]
 * The rates over the window between two maglevd stats files (the
 * daemon's --stats-file, written at different times): its own uptime
 * gives the interval. Exit 0; 1 if the files are unusable or the window
 * saw no packet; 2 on bad usage. */
int dpb_cmd_maglevd(int argc, char **argv);

/* dp-bench-result testpmd --scenario S --mode io|5tswap --log FILE
 *                         [--skip N]
 * The forwarding rate from the output of `dpdk-testpmd --stats-period 1`:
 * the mean of the per-period Tx-pps samples of port 1 (the net_null
 * port) after the first N (default 2: start-up). Exit 0; 1 if there are
 * no usable samples or they are all zero; 2 on bad usage. */
int dpb_cmd_testpmd(int argc, char **argv);

/* dp-bench-result report [--json] FILE
 * Render the records of FILE. Exit 0, or 1 if FILE is unreadable. */
int dpb_cmd_report(int argc, char **argv);

/* Look up a number at a dotted path ("totals.counters.rx_packets") in
 * doc. 0 and *out, or -1 if absent or not a number. */
int dpb_json_number(const json_t *doc, const char *path, double *out);

#endif
