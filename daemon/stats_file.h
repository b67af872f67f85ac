/* SPDX-License-Identifier: BSD-3-Clause */
/* The stats file (--stats-file): every counter of the running daemon as
 * one JSON document, replaced atomically (written to a temporary file in
 * the same directory, then renamed over the old one), so a reader never
 * sees a half-written file. Written every --stats-interval and once more
 * at exit with "final": true, after the workers and ports stopped.
 * Field reference: docs/operations.md.
 *
 * Threads: control thread only (reads the workers' counters racily, see
 * dataplane/packet/counters.h).
 */
#ifndef MLV_STATS_FILE_H
#define MLV_STATS_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "control/base/error.h"

struct mlv_daemon;

/* The document for d now; final marks the last one. Returns a new
 * reference, or NULL if memory ran out. */
json_t *mlv_stats_json(struct mlv_daemon *d, bool final);

/* Write doc to path atomically and safely (mlv_file_replace: a checked
 * directory, an unguessable temporary name, never through a link).
 * Returns MLV_OK, or an error with a sentence in why. */
enum mlv_err mlv_stats_file_write(const char *path, const json_t *doc,
				  char *why, size_t why_len);

#endif
