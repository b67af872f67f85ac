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
#include <string.h>

static const char *type_name(enum mlv_expo_type t)
{
	return t == MLV_EXPO_COUNTER ? "counter" : "gauge";
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

static void put_series(FILE *f, const char *name,
		       const struct mlv_expo_label *labels, size_t n)
{
	fputs_unlocked(name, f);
	if (n == 0)
		return;
	putc_unlocked('{', f);
	for (size_t i = 0; i < n; i++) {
		if (i)
			putc_unlocked(',', f);
		fputs_unlocked(labels[i].name, f);
		fputs_unlocked("=\"", f);
		put_escaped(f, labels[i].value, true);
		putc_unlocked('"', f);
	}
	putc_unlocked('}', f);
}

void mlv_expo_sample_u64(FILE *f, const char *name,
			 const struct mlv_expo_label *labels, size_t n_labels,
			 uint64_t value)
{
	char digits[24], *p = digits + sizeof(digits);

	put_series(f, name, labels, n_labels);
	*--p = '\n';
	do {
		*--p = (char)('0' + value % 10);
		value /= 10;
	} while (value);
	*--p = ' ';
	fwrite_unlocked(p, 1, (size_t)(digits + sizeof(digits) - p), f);
}

void mlv_expo_sample_double(FILE *f, const char *name,
			    const struct mlv_expo_label *labels,
			    size_t n_labels, double value)
{
	put_series(f, name, labels, n_labels);
	if (isnan(value))
		fputs(" NaN\n", f);
	else if (isinf(value))
		fputs(value > 0 ? " +Inf\n" : " -Inf\n", f);
	else
		fprintf(f, " %.17g\n", value);
}
