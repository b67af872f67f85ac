/* SPDX-License-Identifier: BSD-3-Clause */
/* The packet-test checker's shared state and its parts: every output
 * frame is matched to the input frame it came from and verified byte by
 * byte (check_frame.c, check_icmp.c), then the totals are compared with
 * the expectations and with the daemon's stats file (check_totals.c,
 * check_stats.c), and flow distributions with the weights
 * (check_dist.c). Test code; single-threaded. */
#ifndef PKT_CHECK_H
#define PKT_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "tests/packet/expect.h"
#include "tests/packet/frame_index.h"
#include "tests/packet/scenario.h"

struct check_ctx {
	const struct scenario *sc;
	struct expect_tables tabs;      /* config A (vips[]) */
	struct expect_tables alt_tabs;  /* config B (alt_vips[]), storms only */
	bool storm;
	struct frame_index index;       /* input IP packet bytes -> frame */

	/* How often each input frame was fed to the daemon (1 normally;
	 * cyclic repetition in storms). */
	uint64_t *fed;

	/* Results per input frame. */
	uint64_t *forwarded;            /* output frames carrying it */
	uint64_t *icmp_replies;         /* ICMP replies to it: too-big, echo */
	uint8_t *backend_of;            /* backend index + 1 (0: none yet) */

	/* The backend each input frame must reach (index, -1 for none), for
	 * every scenario but storms: the table's choice, replayed in input
	 * order with bounded loads where a VIP has max_load
	 * (check_choice.c). NULL for storms. */
	int16_t *want;
	/* New flows the daemon must have sent to a second choice: first
	 * down, first above max_load. */
	uint64_t want_second_down;
	uint64_t want_second_loaded;
	/* Per input frame with exp.mss: the IP packet it must arrive as,
	 * built by check_mss_prepare; NULL for the others (NULL array when
	 * no frame has one). */
	uint8_t **mss_ip;
	uint64_t want_mss_clamped;      /* SYNs the daemon must have clamped */

	/* Per group: backend index + 1 and the frame that set it. */
	uint8_t *group_backend;
	uint32_t *group_first;
	uint32_t n_groups;

	/* Per VIP and backend, from the output: packets and inner bytes. */
	uint64_t out_pkts[SC_MAX_VIPS][SC_MAX_BACKENDS];
	uint64_t out_bytes[SC_MAX_VIPS][SC_MAX_BACKENDS];

	uint64_t n_out;                 /* frames in the output pcap */
	uint64_t n_out_forward;
	uint64_t n_out_icmp;
	uint64_t n_in;                  /* frames fed in total */

	uint32_t failures;
	uint32_t printed;
};

/* Report a failure (printed for the first 40; all are counted). */
void check_fail(struct check_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Verify output frame number out_no (data, len) and record what it
 * carried. */
void check_output_frame(struct check_ctx *c, uint64_t out_no,
			const uint8_t *data, uint32_t len);

/* Verify an output frame that is not encapsulated traffic: it must be an
 * ICMP too-big reply to an input expected to get one. Returns false if
 * the frame is not an ICMP reply at all (the caller reports it). */
bool check_icmp_reply(struct check_ctx *c, uint64_t out_no,
		      const uint8_t *data, uint32_t len);

/* After all output frames: each input's fate matches its expectation. */
void check_totals(struct check_ctx *c);

/* Paced scenarios: the limited VIP's admitted new flows against its rate
 * over the window_ms the feeder took (check_rate.c). */
void check_rate(struct check_ctx *c, uint64_t window_ms);

/* The daemon's stats file accounts for every input frame. */
void check_stats(struct check_ctx *c, const char *stats_path);

/* Verify an ICMP echo reply byte for byte (check_echo.c); false if the
 * frame is not an echo reply at all. */
bool check_echo_reply(struct check_ctx *c, uint64_t out_no,
		      const uint8_t *data, uint32_t len);

/* Fill c->want and the second-choice totals (not for storms): every
 * input frame in order, each new flow (group) placed as the data path
 * places it. Fails the check if a VIP with max_load never needed its
 * second choice (the scenario would not test the bound). */
void check_plan_choices(struct check_ctx *c);

/* Flow distribution over backends versus weights, drained backends
 * empty, and (for the basic scenarios) every backend exercised. */
void check_distribution(struct check_ctx *c);

/* For every input frame whose expectation carries an MSS (exp.mss),
 * build the IP packet the backend must get, from the input's bytes: each
 * TCP MSS option above exp.mss set to it and the TCP checksum computed
 * from scratch (check_mss.c); the frame index then matches output on
 * those. Returns 0, or -1 (a scenario bug: no such option, a bad input
 * checksum; or no memory). */
int check_mss_prepare(struct check_ctx *c);
void check_mss_free(struct check_ctx *c);

/* Format an address for messages. */
const char *check_addr(uint8_t family, const uint8_t *a, char *buf,
		       unsigned len);

#endif
