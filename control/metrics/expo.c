/* SPDX-License-Identifier: BSD-3-Clause */
/* Prometheus text exposition writer (expo.h).
 *
 * Hand-written on purpose: Debian 12 packages no C client library for
 * Prometheus (prometheus-client-c is not in the archive), and the format
 * is a few lines of text whose only subtle part, escaping, lives here.
 *
 * A page holds a few lines per backend, so at 100 000 backends it is
 * about 50 MB of samples: the per-sample path uses the unlocked stdio
 * calls (the stream belongs to one thread) and formats integers itself
 * instead of parsing a printf format per sample, which makes it several
 * times faster (docs/metrics.md, "How it is served", has the render
 * time). */
#define _GNU_SOURCE
#include "control/metrics/expo.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *type_name(enum mlv_expo_type t)
{
	switch (t) {
	case MLV_EXPO_COUNTER:   return "counter";
	case MLV_EXPO_HISTOGRAM: return "histogram";
	case MLV_EXPO_GAUGE:     break;
	}
	return "gauge";
}

/* Escape backslash and newline always, the double quote only in label
 * values (HELP texts keep it). */
static void put_escaped(FILE *f, const char *s, bool quote)
{
	/* Runs without special characters (all of them, in practice) are
	 * written in one call. */
	while (*s) {
		size_t run = strcspn(s, quote ? "\\\n\"" : "\\\n");

		fwrite_unlocked(s, 1, run, f);
		s += run;
		switch (*s) {
		case '\\':
			fputs_unlocked("\\\\", f);
			break;
		case '\n':
			fputs_unlocked("\\n", f);
			break;
		case '"':
			fputs_unlocked("\\\"", f);
			break;
		default:
			return;         /* the NUL */
		}
		s++;
	}
}

void mlv_expo_family(FILE *f, const char *name, enum mlv_expo_type type,
		     const char *help)
{
	fprintf(f, "# HELP %s ", name);
	put_escaped(f, help, false);
	fprintf(f, "\n# TYPE %s %s\n", name, type_name(type));
}

void mlv_expo_label_value(FILE *f, const char *value)
{
	put_escaped(f, value, true);
}

static void put_label(FILE *f, const struct mlv_expo_label *l)
{
	fputs_unlocked(l->name, f);
	fputs_unlocked("=\"", f);
	put_escaped(f, l->value, true);
	putc_unlocked('"', f);
}

/* name + suffix, then {labels} with extra (may be NULL) as the last one;
 * no braces when there is no label at all. */
static void put_series(FILE *f, const char *name, const char *suffix,
		       const struct mlv_expo_label *labels, size_t n,
		       const struct mlv_expo_label *extra)
{
	fputs_unlocked(name, f);
	fputs_unlocked(suffix, f);
	if (n == 0 && !extra)
		return;
	putc_unlocked('{', f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			putc_unlocked(',', f);
		put_label(f, &labels[i]);
	}
	if (extra) {
		if (n)
			putc_unlocked(',', f);
		put_label(f, extra);
	}
	putc_unlocked('}', f);
}

/* " value\n" */
static void put_u64(FILE *f, uint64_t value)
{
	char digits[24], *p = digits + sizeof(digits);

	*--p = '\n';
	do {
		*--p = (char)('0' + value % 10);
		value /= 10;
	} while (value);
	*--p = ' ';
	fwrite_unlocked(p, 1, (size_t)(digits + sizeof(digits) - p), f);
}

static void put_double(FILE *f, double value)
{
	if (isnan(value))
		fputs(" NaN\n", f);
	else if (isinf(value))
		fputs(value > 0 ? " +Inf\n" : " -Inf\n", f);
	else
		fprintf(f, " %.17g\n", value);
}

void mlv_expo_sample_u64(FILE *f, const char *name,
			 const struct mlv_expo_label *labels, size_t n_labels,
			 uint64_t value)
{
	put_series(f, name, "", labels, n_labels, NULL);
	put_u64(f, value);
}

void mlv_expo_sample_double(FILE *f, const char *name,
			    const struct mlv_expo_label *labels,
			    size_t n_labels, double value)
{
	put_series(f, name, "", labels, n_labels, NULL);
	put_double(f, value);
}

void mlv_expo_format_bound(char *buf, size_t len, double bound)
{
	if (len == 0)
		return;
	if (isinf(bound) || isnan(bound)) {
		snprintf(buf, len, "%s", isnan(bound) ? "NaN" :
			 bound > 0 ? "+Inf" : "-Inf");
		return;
	}
	/* 17 significant digits always read back (IEEE 754 double) */
	for (int digits = 1; digits <= 17; digits++) {
		snprintf(buf, len, "%.*g", digits, bound);
		if (strtod(buf, NULL) == bound)
			return;
	}
}

void mlv_expo_histogram(FILE *f, const char *name,
			const struct mlv_expo_label *labels, size_t n_labels,
			const char *const *le, const uint64_t *cumulative,
			size_t n_bounds, uint64_t count, double sum)
{
	struct mlv_expo_label bound = { .name = "le" };

	for (size_t i = 0; i < n_bounds; i++) {
		bound.value = le[i];
		put_series(f, name, "_bucket", labels, n_labels, &bound);
		put_u64(f, cumulative[i]);
	}
	bound.value = "+Inf";
	put_series(f, name, "_bucket", labels, n_labels, &bound);
	put_u64(f, count);
	put_series(f, name, "_sum", labels, n_labels, NULL);
	put_double(f, sum);
	put_series(f, name, "_count", labels, n_labels, NULL);
	put_u64(f, count);
}
