/* SPDX-License-Identifier: BSD-3-Clause */
/* Adding to, ordering and printing a struct mlv_diags (declared in
 * config.h): the loader collects them, callers print them. Same thread
 * rules as config.h. */
#ifndef MLV_CONFIG_DIAGS_H
#define MLV_CONFIG_DIAGS_H

#include <stdarg.h>

#include "control/config/config.h"

/* At most this many diagnostics are stored; a hostile file could produce
 * one per node. Past the limit the last stored item says so, and
 * n_errors keeps counting. */
#define MLV_DIAGS_MAX 1000u

/* Append a diagnostic formatted like printf. Returns MLV_E_NOMEM if it
 * could not be stored (n_errors still counts an error), else MLV_OK. */
enum mlv_err mlv_diag_add(struct mlv_diags *d, enum mlv_diag_level level,
			  struct mlv_src_pos pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
enum mlv_err mlv_diag_vadd(struct mlv_diags *d, enum mlv_diag_level level,
			   struct mlv_src_pos pos, const char *fmt,
			   va_list ap)
	__attribute__((format(printf, 4, 0)));

/* Stable sort of items[from..n-1] by (line, col), so the report reads in
 * file order although checks run in schema order. */
void mlv_diags_sort(struct mlv_diags *d, uint32_t from);

/* Record a fragment's name; *index receives its file number for
 * positions (1, 2, ...). MLV_E_NOMEM on failure. */
enum mlv_err mlv_diags_add_fragment(struct mlv_diags *d, const char *name,
				    uint32_t *index);

/* Where `there` is, said from a message about `here`: "line 12" in the
 * same file, "vips.d/api.yaml:12" in another. Returns buf. */
const char *mlv_diags_where(const struct mlv_diags *d, struct mlv_src_pos there,
			    struct mlv_src_pos here, char *buf, size_t len);

/* Replace d->file with a copy of name. MLV_E_NOMEM on failure. */
enum mlv_err mlv_diags_set_file(struct mlv_diags *d, const char *name);

#endif
