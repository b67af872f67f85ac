/* SPDX-License-Identifier: BSD-3-Clause */
/* Writing the Prometheus text exposition format, version 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/): one
 * HELP and one TYPE line per family, then that family's samples, label
 * values and help texts escaped as the format requires.
 *
 * The writer goes to a stdio stream (control/metrics/render.c uses an
 * open_memstream buffer); stream errors are sticky, so callers check
 * ferror() once at the end instead of after every line. Plain C.
 *
 * Threads: pure functions of their arguments plus the stream; any thread
 * that owns the stream.
 */
#ifndef MLV_METRICS_EXPO_H
#define MLV_METRICS_EXPO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Metric types the format knows and maglevd uses. */
enum mlv_expo_type {
	MLV_EXPO_COUNTER,
	MLV_EXPO_GAUGE,
	MLV_EXPO_HISTOGRAM,
};

/* One label of a sample. Names are trusted (maglevd's own identifiers);
 * values are escaped. */
struct mlv_expo_label {
	const char *name;
	const char *value;
};

/* "# HELP name help\n# TYPE name type\n", help escaped (backslash and
 * newline, as the format asks). */
void mlv_expo_family(FILE *f, const char *name, enum mlv_expo_type type,
		     const char *help);

/* value escaped for use between the quotes of a label: backslash, double
 * quote and newline become \\, \" and \n; everything else is copied as
 * is (the format is UTF-8 and takes any other byte). */
void mlv_expo_label_value(FILE *f, const char *value);

/* "name{l1="v1",...} value\n"; no braces when n_labels is 0. The u64
 * form prints the integer exactly (Prometheus parses it as a float, which
 * is exact up to 2^53); the double form prints enough digits to round
 * trip, and NaN / +Inf / -Inf as the format spells them. */
void mlv_expo_sample_u64(FILE *f, const char *name,
			 const struct mlv_expo_label *labels, size_t n_labels,
			 uint64_t value);
void mlv_expo_sample_double(FILE *f, const char *name,
			    const struct mlv_expo_label *labels,
			    size_t n_labels, double value);

/* Longest `le` text mlv_expo_format_bound writes, with the NUL. */
#define MLV_EXPO_BOUND_MAX 32

/* A bucket bound as an `le` value: the shortest text that reads back as
 * the same double ("0.0005", "1", "2.5"), as the Prometheus client
 * libraries write it, so the series are those any other exporter of the
 * same buckets would have. */
void mlv_expo_format_bound(char *buf, size_t len, double bound);

/* One series of a histogram family (mlv_expo_family with
 * MLV_EXPO_HISTOGRAM first):
 *   name_bucket{labels,le="le[i]"} cumulative[i]   for i < n_bounds
 *   name_bucket{labels,le="+Inf"} count
 *   name_sum{labels} sum
 *   name_count{labels} count
 * le[] are the bounds as mlv_expo_format_bound writes them, ascending;
 * cumulative[i] counts the observations <= bound i, so it never
 * decreases and stays <= count (the caller's promise; written as given).
 * le comes last among the labels. */
void mlv_expo_histogram(FILE *f, const char *name,
			const struct mlv_expo_label *labels, size_t n_labels,
			const char *const *le, const uint64_t *cumulative,
			size_t n_bounds, uint64_t count, double sum);

#endif
