/* SPDX-License-Identifier: BSD-3-Clause */
/* Aligned text tables (table.h). */
#define _GNU_SOURCE   /* vasprintf */
#include "tools/bin/maglevctl/table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void table_init(struct table *t, size_t ncols)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
}

void table_cell(struct table *t, const char *fmt, ...)
{
	char *text = NULL;
	va_list ap;

	if (t->failed)
		return;
	if (t->ncells == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		char **p = realloc(t->cells, cap * sizeof(*p));

		if (!p) {
			t->failed = true;
			return;
		}
		t->cells = p;
		t->cap = cap;
	}
	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	if (!text) {
		t->failed = true;
		return;
	}
	t->cells[t->ncells++] = text;
}

bool table_print(const struct table *t, FILE *f)
{
	size_t *width;

	if (t->failed)
		return false;
	width = calloc(t->ncols ? t->ncols : 1, sizeof(*width));
	if (!width)
		return false;
	for (size_t i = 0; i < t->ncells; i++) {
		size_t n = strlen(t->cells[i]);

		if (n > width[i % t->ncols])
			width[i % t->ncols] = n;
	}
	for (size_t i = 0; i < t->ncells; i++) {
		size_t col = i % t->ncols;
		bool last = col + 1 == t->ncols || i + 1 == t->ncells;

		if (last)
			fprintf(f, "%s\n", t->cells[i]);
		else
			fprintf(f, "%-*s  ", (int)width[col], t->cells[i]);
	}
	free(width);
	return true;
}

void table_free(struct table *t)
{
	for (size_t i = 0; i < t->ncells; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}
