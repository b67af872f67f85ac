/* SPDX-License-Identifier: BSD-3-Clause */
/* Aligned text tables for maglevctl's human-readable output: cells are
 * added row by row, widths are computed when printing. */
#ifndef MAGLEVCTL_TABLE_H
#define MAGLEVCTL_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct table {
	size_t ncols;
	size_t ncells;
	size_t cap;
	char **cells;        /* row-major */
	bool failed;         /* a cell could not be stored */
};

/* An empty table of ncols columns; the first row added is the header. */
void table_init(struct table *t, size_t ncols);

/* Append one cell (printf-style) to the current row; rows wrap after
 * ncols cells. A failure is remembered and reported by table_print. */
void table_cell(struct table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Print with columns separated by two spaces, the last column not
 * padded. Returns false if memory ran out while filling the table. */
bool table_print(const struct table *t, FILE *f);

void table_free(struct table *t);

#endif
