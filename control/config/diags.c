/* SPDX-License-Identifier: BSD-3-Clause */
/* Collected config diagnostics: storage, ordering and printing. */
#include "control/config/diags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mlv_diags_init(struct mlv_diags *d)
{
	memset(d, 0, sizeof(*d));
}

void mlv_diags_free(struct mlv_diags *d)
{
	if (d == NULL)
		return;
	free(d->file);
	for (uint32_t i = 0; i < d->n_fragments; i++)
		free(d->fragments[i]);
	free(d->fragments);
	free(d->items);
	memset(d, 0, sizeof(*d));
}

const char *mlv_diags_file(const struct mlv_diags *d, uint32_t file)
{
	if (file > 0 && file <= d->n_fragments && d->fragments[file - 1])
		return d->fragments[file - 1];
	return d->file ? d->file : "<config>";
}

enum mlv_err mlv_diags_add_fragment(struct mlv_diags *d, const char *name,
				    uint32_t *index)
{
	char **grown = realloc(d->fragments,
			       (d->n_fragments + 1) * sizeof(*grown));
	char *copy = strdup(name);

	if (grown)
		d->fragments = grown;
	if (!grown || !copy) {
		free(copy);
		return MLV_E_NOMEM;
	}
	d->fragments[d->n_fragments++] = copy;
	*index = d->n_fragments;
	return MLV_OK;
}

const char *mlv_diags_where(const struct mlv_diags *d, struct mlv_src_pos there,
			    struct mlv_src_pos here, char *buf, size_t len)
{
	if (there.file == here.file)
		snprintf(buf, len, "line %u", there.line);
	else
		snprintf(buf, len, "%s:%u", mlv_diags_file(d, there.file),
			 there.line);
	return buf;
}

enum mlv_err mlv_diags_set_file(struct mlv_diags *d, const char *name)
{
	char *copy = strdup(name != NULL ? name : "<config>");

	if (copy == NULL)
		return MLV_E_NOMEM;
	free(d->file);
	d->file = copy;
	return MLV_OK;
}

static enum mlv_err diags_grow(struct mlv_diags *d)
{
	uint32_t cap = d->cap ? d->cap * 2 : 16;
	struct mlv_diag *items;

	if (cap > MLV_DIAGS_MAX)
		cap = MLV_DIAGS_MAX;
	items = realloc(d->items, cap * sizeof(*items));
	if (items == NULL)
		return MLV_E_NOMEM;
	d->items = items;
	d->cap = cap;
	return MLV_OK;
}

enum mlv_err mlv_diag_vadd(struct mlv_diags *d, enum mlv_diag_level level,
			   struct mlv_src_pos pos, const char *fmt, va_list ap)
{
	struct mlv_diag *item;
	enum mlv_err err;

	if (level == MLV_DIAG_ERROR)
		d->n_errors++;
	if (d->n >= MLV_DIAGS_MAX)
		return MLV_OK;
	if (d->n == d->cap) {
		err = diags_grow(d);
		if (err)
			return err;
	}
	item = &d->items[d->n++];
	item->level = level;
	item->pos = pos;
	if (d->n == MLV_DIAGS_MAX) {
		/* The last slot explains why the list stops here. */
		item->level = MLV_DIAG_ERROR;
		snprintf(item->message, sizeof(item->message),
			 "too many diagnostics; only the first %u are shown",
			 MLV_DIAGS_MAX - 1);
		return MLV_OK;
	}
	vsnprintf(item->message, sizeof(item->message), fmt, ap);
	/* Messages quote file text; a newline or escape sequence in it must
	 * not break the one-line "file:line:col: message" format. */
	for (char *c = item->message; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return MLV_OK;
}

enum mlv_err mlv_diag_add(struct mlv_diags *d, enum mlv_diag_level level,
			  struct mlv_src_pos pos, const char *fmt, ...)
{
	enum mlv_err err;
	va_list ap;

	va_start(ap, fmt);
	err = mlv_diag_vadd(d, level, pos, fmt, ap);
	va_end(ap);
	return err;
}

static bool pos_before(const struct mlv_src_pos *a, const struct mlv_src_pos *b)
{
	if (a->file != b->file)
		return a->file < b->file;
	return a->line < b->line || (a->line == b->line && a->col < b->col);
}

void mlv_diags_sort(struct mlv_diags *d, uint32_t from)
{
	uint32_t i, j;

	/* Insertion sort: stable, and n is bounded by MLV_DIAGS_MAX. The
	 * overflow note stays last whatever its position. */
	uint32_t end = d->n == MLV_DIAGS_MAX ? d->n - 1 : d->n;

	for (i = from + 1; i < end; i++) {
		struct mlv_diag tmp = d->items[i];

		for (j = i; j > from && pos_before(&tmp.pos, &d->items[j - 1].pos); j--)
			d->items[j] = d->items[j - 1];
		d->items[j] = tmp;
	}
}

void mlv_diags_print(const struct mlv_diags *d, FILE *f)
{
	uint32_t i;

	for (i = 0; i < d->n; i++) {
		const struct mlv_diag *it = &d->items[i];
		const char *level = it->level == MLV_DIAG_WARNING ? "warning" : "error";
		const char *file = mlv_diags_file(d, it->pos.file);

		if (it->pos.line == 0)
			fprintf(f, "%s: %s: %s\n", file, level, it->message);
		else
			fprintf(f, "%s:%u:%u: %s: %s\n", file, it->pos.line,
				it->pos.col, level, it->message);
	}
}
