/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading maglevd's stats file (--stats-file; its format is in
 * docs/operations.md): the one place the packet tests know its JSON
 * layout. The daemon replaces the file atomically (write + rename), so a
 * read never sees half of it. Test code; single-threaded. */
#ifndef PKT_STATS_JSON_H
#define PKT_STATS_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* Parse path. Returns the document (json_decref it) or NULL; *why gets a
 * reason when not NULL. */
json_t *stats_load(const char *path, char *why, size_t why_len);

/* Worker counter by its counters.h name ("rx_packets", "forwarded"...),
 * summed over workers. False if absent. */
bool stats_counter(json_t *doc, const char *name, uint64_t *out);

/* Drops by reason name ("not_vip", ...). False if absent. */
bool stats_drop(json_t *doc, const char *reason, uint64_t *out);

/* The sum of all drop reasons, as the daemon reports it. */
bool stats_drop_total(json_t *doc, uint64_t *out);

/* True if this is the document written at exit. */
bool stats_final(json_t *doc);

/* A connection-tracking total ("occupancy", "capacity", "evictions"). */
bool stats_conntrack(json_t *doc, const char *name, uint64_t *out);

/* The published generation number. */
bool stats_generation(json_t *doc, uint64_t *out);

/* The VIP object named name, or NULL. */
json_t *stats_vip(json_t *doc, const char *name);

/* The backend object named name in a VIP object, or NULL. */
json_t *stats_backend(json_t *vip, const char *name);

/* A flow counter ("packets", "bytes", "new_flows") of a VIP or backend
 * object. */
bool stats_flow_counter(json_t *obj, const char *name, uint64_t *out);

/* A VIP's table fingerprint. */
bool stats_fingerprint(json_t *vip, uint64_t *out);

#endif
