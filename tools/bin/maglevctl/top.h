/* SPDX-License-Identifier: BSD-3-Clause */
/* maglevctl top: a live view of per-VIP and per-backend packet, byte and
 * new-flow rates, drops by reason and conntrack occupancy, refreshed in
 * place (ANSI escapes on a terminal; plain successive frames otherwise).
 * It polls the daemon's stats, vips and backends commands over one
 * control-socket connection and turns counter deltas into rates with the
 * stats reply's time_ns (the daemon's monotonic clock). Single-threaded.
 */
#ifndef MAGLEVCTL_TOP_H
#define MAGLEVCTL_TOP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

/* `maglevctl top`: argv[0] is "top". Returns maglevctl's exit status (0
 * after -n frames or Ctrl-C, 1 the daemon refused a request, 2 bad usage,
 * 3 no reply). */
int maglevctl_top(const char *socket_path, int timeout_s, int argc,
		  char **argv);

/* ---- one frame (top_view.c) ---- */

/* One poll: the three replies (owned) and look-up indexes over them. */
struct top_sample {
	int64_t time_ns;         /* stats.time_ns */
	json_t *stats;
	json_t *vips;            /* the vips array */
	json_t *backends;        /* the backends array */
	json_t *vip_index;       /* name -> VIP object */
	json_t *backend_index;   /* "vip\x1fbackend" -> backend object */
	uint32_t generation;
};

/* Build the indexes of s (after its replies are in). false when memory
 * ran out. */
bool top_sample_index(struct top_sample *s);

/* Drop the replies and indexes; the struct is zeroed. */
void top_sample_clear(struct top_sample *s);

struct top_view_opts {
	bool ansi;               /* redraw in place with escape codes */
	int max_rows;            /* table rows that fit; 0 = no limit */
	double interval_s;
	const char *vip;         /* only this VIP; NULL = all */
};

/* Print one frame: rates from prev to cur (cur->time_ns > prev->time_ns).
 * first says it is the first frame (clear the screen). */
void top_view_frame(const struct top_sample *prev,
		    const struct top_sample *cur,
		    const struct top_view_opts *o, bool first, FILE *out);

#endif
