/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the metrics tests: render a page from a state, read
 * samples back out of it, and check its structure independently of the
 * renderer (families grouped, one HELP and TYPE each, no duplicate
 * series, counters ending in _total, names maglevd_* or the standard
 * process_*, histograms whole), and run a health engine until its checks
 * have happened. cmocka assertions inside. */
#ifndef MLV_TEST_METRICS_UTIL_H
#define MLV_TEST_METRICS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/metrics/render.h"

struct mlv_health;

/* Render with a fresh renderer; asserts success. free() the result. */
char *tm_render(const struct mlv_metrics_sources *src, size_t *len);

/* The value of the sample whose series text (name plus {labels} exactly
 * as rendered) is `series`. false when there is no such line. */
bool tm_sample(const char *page, const char *series, double *value);

/* tm_sample that must succeed. */
double tm_value(const char *page, const char *series);

/* Whether any line starts with `prefix` (a family or series). */
bool tm_has(const char *page, const char *prefix);

/* The structural checks listed above; fails the test with the line.
 * Histogram families are checked as the format defines them: per series,
 * _bucket lines with ascending le ending in "+Inf", cumulative counts
 * that never decrease, the +Inf bucket equal to _count, and a _sum. */
void tm_check_structure(const char *page);

/* The same checks without failing: the first problem, written into buf
 * (len bytes) and returned, or NULL for a page that passes. */
const char *tm_structure_problem(const char *page, char *buf, size_t len);

/* A TCP listener on 127.0.0.1 that never accepts (the kernel completes
 * up to 128 handshakes, all a tcp check asks for); *port its port.
 * Returns the fd. */
int tm_listen_loopback(uint16_t *port);

/* A config whose VIP "web" checks (tcp, to port, every 100 ms)
 * "web-1" at 127.0.0.1 and "web-2" at 127.0.0.2, and whose VIP "quiet"
 * has "q-1" with type none. With tm_listen_loopback's port, web-1's
 * checks succeed and web-2's are refused (nothing listens on
 * 127.0.0.2). mlv_config_free() it. */
struct mlv_config *tm_checked_config(uint16_t port);

/* Drive h as the daemon does (wait for its fd, process) until (vip,
 * backend) has completed at least `checks` checks; fails the test after
 * 10 s. */
void tm_health_wait(struct mlv_health *h, const char *vip,
		    const char *backend, uint64_t checks);

/* A port_stats source (struct mlv_ctl_state) with two ports: "ext"
 * (rx_packets 100, rx_missed 7, tx_bytes 6400, xstats rx_good_packets 100,
 * rx_missed_errors 7, rx_q0_errors 1) and "int" (whose PMD gave no
 * counters: ok false). */
uint32_t tm_fake_ports(void *ctx, const struct mlv_port_stats **out);

/* A steer_counters source: interfaces "eth0" and "eth1", outcome c of
 * interface i counting 1000 * (i + 1) + c. */
enum mlv_err tm_fake_steer(void *ctx, uint32_t i, const char **interface,
			   uint64_t out[MLV_STEER_CTR__COUNT]);

#endif
