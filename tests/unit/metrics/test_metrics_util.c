/* SPDX-License-Identifier: BSD-3-Clause */
/* Metrics test helpers (test_metrics_util.h). */
#include "tests/unit/metrics/test_metrics_util.h"

#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

char *tm_render(const struct mlv_metrics_sources *src, size_t *len)
{
	struct mlv_metrics_renderer *r;
	char *text = NULL;
	size_t n = 0;

	assert_int_equal(mlv_metrics_renderer_create(&r), MLV_OK);
	assert_int_equal(mlv_metrics_render(r, src, &text, &n), MLV_OK);
	assert_non_null(text);
	assert_int_equal(strlen(text), n);
	mlv_metrics_renderer_destroy(r);
	if (len)
		*len = n;
	return text;
}

bool tm_sample(const char *page, const char *series, double *value)
{
	size_t n = strlen(series);

	for (const char *line = page; line && *line;) {
		const char *nl = strchr(line, '\n');

		if (strncmp(line, series, n) == 0 && line[n] == ' ') {
			*value = strtod(line + n + 1, NULL);
			return true;
		}
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

double tm_value(const char *page, const char *series)
{
	double v = 0;

	if (!tm_sample(page, series, &v))
		fail_msg("no sample %s in the page", series);
	return v;
}

bool tm_has(const char *page, const char *prefix)
{
	size_t n = strlen(prefix);

	for (const char *line = page; line && *line;) {
		const char *nl = strchr(line, '\n');

		if (strncmp(line, prefix, n) == 0)
			return true;
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

/* ---- structure ---- */

static bool name_char(int c, bool first)
{
	return c == '_' || c == ':' || isalpha(c) || (!first && isdigit(c));
}

/* Length of a metric or label name at s (0 if none). */
static size_t name_len(const char *s)
{
	size_t n = 0;

	while (s[n] && name_char((unsigned char)s[n], n == 0))
		n++;
	return n;
}

/* Skip {name="value",...} at *p; false if malformed. */
static bool skip_labels(const char **p)
{
	const char *s = *p;

	if (*s != '{')
		return true;
	s++;
	while (*s != '}') {
		size_t n = name_len(s);

		if (n == 0 || strncmp(s + n, "=\"", 2) != 0)
			return false;
		s += n + 2;
		while (*s != '"') {
			if (*s == '\0' || *s == '\n')
				return false;
			if (*s == '\\') {
				if (s[1] != '\\' && s[1] != '"' && s[1] != 'n')
					return false;
				s++;
			}
			s++;
		}
		s++;
		if (*s == ',')
			s++;
		else if (*s != '}')
			return false;
	}
	*p = s + 1;
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void tm_check_structure(const char *page)
{
	char family[128] = "", helped[128] = "", type[16] = "";
	char **seen_families = NULL, **series = NULL;
	size_t n_families = 0, n_series = 0;
	char *copy = strdup(page), *save = NULL;

	assert_non_null(copy);
	assert_true(strlen(page) > 0 && page[strlen(page) - 1] == '\n');
	for (char *line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "# HELP ", 7) == 0) {
			size_t n = name_len(line + 7);

			if (n == 0 || n >= sizeof(helped) || line[7 + n] != ' ')
				fail_msg("bad HELP line: %s", line);
			memcpy(helped, line + 7, n);
			helped[n] = '\0';
			for (size_t i = 0; i < n_families; i++)
				if (strcmp(seen_families[i], helped) == 0)
					fail_msg("family %s appears twice", helped);
			seen_families = realloc(seen_families,
						(n_families + 1) * sizeof(char *));
			assert_non_null(seen_families);
			seen_families[n_families++] = strdup(helped);
			family[0] = '\0';
		} else if (strncmp(line, "# TYPE ", 7) == 0) {
			size_t n = name_len(line + 7);

			if (n != strlen(helped) || strncmp(line + 7, helped, n) != 0)
				fail_msg("TYPE without its HELP just before: %s", line);
			snprintf(type, sizeof(type), "%s", line + 8 + n);
			if (strcmp(type, "counter") && strcmp(type, "gauge"))
				fail_msg("unexpected type: %s", line);
			if (strcmp(type, "counter") == 0 &&
			    (n < 6 || strcmp(helped + n - 6, "_total") != 0))
				fail_msg("counter without _total: %s", line);
			/* ours, or the standard process_* ones */
			if (strncmp(helped, "maglevd_", 8) != 0 &&
			    strncmp(helped, "process_", 8) != 0)
				fail_msg("family without the maglevd_ prefix: %s", line);
			memcpy(family, helped, n + 1);
		} else if (line[0] == '#') {
			fail_msg("unexpected comment: %s", line);
		} else {
			size_t n = name_len(line);
			const char *p = line + n;
			char *end;

			if (family[0] == '\0' || n != strlen(family) ||
			    strncmp(line, family, n) != 0)
				fail_msg("sample outside its family (%s): %s",
					 family, line);
			if (!skip_labels(&p) || *p != ' ')
				fail_msg("bad labels: %s", line);
			strtod(p + 1, &end);
			if (end == p + 1 || *end != '\0')
				fail_msg("bad value: %s", line);
			series = realloc(series, (n_series + 1) * sizeof(char *));
			assert_non_null(series);
			series[n_series++] = strndup(line, (size_t)(p - line));
		}
	}
	qsort(series, n_series, sizeof(char *), cmp_str);
	for (size_t i = 1; i < n_series; i++)
		if (strcmp(series[i - 1], series[i]) == 0)
			fail_msg("duplicate series %s", series[i]);
	for (size_t i = 0; i < n_series; i++)
		free(series[i]);
	for (size_t i = 0; i < n_families; i++)
		free(seen_families[i]);
	free(series);
	free(seen_families);
	free(copy);
}
