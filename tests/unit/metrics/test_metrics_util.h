/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the metrics tests: render a page from a state, read
 * samples back out of it, and check its structure independently of the
 * renderer (families grouped, one HELP and TYPE each, no duplicate
 * series, counters ending in _total, names maglevd_* or the standard
 * process_*). cmocka assertions inside. */
#ifndef MLV_TEST_METRICS_UTIL_H
#define MLV_TEST_METRICS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/metrics/render.h"

/* Render with a fresh renderer; asserts success. free() the result. */
char *tm_render(const struct mlv_metrics_sources *src, size_t *len);

/* The value of the sample whose series text (name plus {labels} exactly
 * as rendered) is `series`. false when there is no such line. */
bool tm_sample(const char *page, const char *series, double *value);

/* tm_sample that must succeed. */
double tm_value(const char *page, const char *series);

/* Whether any line starts with `prefix` (a family or series). */
bool tm_has(const char *page, const char *prefix);

/* The structural checks listed above; fails the test with the line. */
void tm_check_structure(const char *page);

#endif
