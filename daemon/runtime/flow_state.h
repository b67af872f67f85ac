/* SPDX-License-Identifier: BSD-3-Clause */
/* The flows file: the workers' connection-tracking tables kept across a
 * graceful restart (docs/operations.md "Flows across a restart"), so that
 * a restart or an upgrade does not send tracked flows to the table's
 * choice of the moment. Written by the control thread after the workers
 * stopped, read back at the next start before they start; the daemon
 * removes the file once read, so a later crash does not bring back
 * flows of a run it never saw.
 *
 * Format, version 1, little-endian, every record 8-byte aligned:
 *
 *   header    64 bytes: magic "MLVFLOWS", version, header length, the
 *             save's CLOCK_REALTIME in ms, workers, entries per worker
 *             table, backends, the entry record's size, entries, the
 *             worker layout (mlv_flow_state.layout), 8 bytes zero
 *   backends  n_backends x 136: uid, 4 bytes zero, the VIP's name and
 *             the backend's name (NUL-padded, NUL-terminated)
 *   workers   n_workers x 16: the table's fingerprint seed, its entries
 *   entries   n_entries x sizeof(struct mlv_ct_saved) (40): worker 0's,
 *             then worker 1's, ...
 *   trailer   XXH3-64 of everything before it
 *
 * A flow is kept as its table entry, its slot and its time left
 * (struct mlv_ct_saved): a table of the same capacity and seed takes it
 * back where it was (dataplane/packet/conntrack.h), IPv6 fingerprints
 * included, without the flows' keys. Its backend is a uid of the saving
 * process, which the backend table names, so the next process maps it
 * to its own uid by (VIP, backend) name.
 *
 * mlv_flow_state_decode trusts nothing: sizes, counts, the checksum,
 * every name, slot, state, time and uid are checked, and a file that
 * fails any check is refused whole with one sentence. Pure C; any
 * thread; no shared state.
 */
#ifndef MLV_DAEMON_FLOW_STATE_H
#define MLV_DAEMON_FLOW_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "control/base/error.h"
#include "control/config/config.h"
#include "dataplane/packet/conntrack.h"

/* The format this file describes. */
#define MLV_FLOW_STATE_VERSION 1
/* Backends a file may name (every pair of the saving generation). */
#define MLV_FLOW_STATE_MAX_BACKENDS (1u << 20)

/* One (VIP, backend) pair of the saving process. */
struct mlv_flow_state_backend {
	uint32_t uid;
	char vip[MLV_NAME_MAX];
	char backend[MLV_NAME_MAX];
};

/* One worker's table. */
struct mlv_flow_state_worker {
	uint64_t seed;                       /* mlv_ct_seed */
	uint64_t n;
	const struct mlv_ct_saved *entries;  /* n of them */
};

struct mlv_flow_state {
	uint64_t saved_unix_ms;   /* CLOCK_REALTIME when saved */
	uint32_t n_workers;       /* 1 .. MLV_MAX_WORKERS */
	uint32_t capacity;        /* entries per worker table */
	/* What decides which worker's queue a flow's packets reach
	 * (mlv_flow_state_layout): the flows restore only under the same */
	uint64_t layout;
	uint32_t n_backends;
	/* sorted by uid, no uid twice (encode expects it, decode checks it) */
	const struct mlv_flow_state_backend *backends;
	struct mlv_flow_state_worker workers[MLV_MAX_WORKERS];
	void *owned;              /* decode's buffer: mlv_flow_state_free */
};

/* The index of uid in b[0..n) (sorted by uid, as st->backends), or n
 * when no record has it. Pure; any thread. */
uint32_t mlv_flow_state_backend_index(const struct mlv_flow_state_backend *b,
				      uint32_t n, uint32_t uid);

/* The bytes of the file for st, in a malloc'd *buf of *len bytes.
 * MLV_E_INVAL for counts out of range, MLV_E_NOMEM. Any thread. */
enum mlv_err mlv_flow_state_encode(const struct mlv_flow_state *st,
				   void **buf, size_t *len);

/* Read the file's bytes (buf, len; the buffer is taken over: on MLV_OK
 * st points into it and mlv_flow_state_free frees it, on an error it is
 * freed here). max_workers / max_capacity bound what the reader accepts.
 * Returns MLV_OK, or MLV_E_PROTO / MLV_E_INVAL / MLV_E_RANGE with one
 * sentence in why: a foreign file, another version, cut short, a bad
 * checksum, a count or a record out of range. Any thread. */
enum mlv_err mlv_flow_state_decode(void *buf, size_t len,
				   struct mlv_flow_state *st, char *why,
				   size_t why_len);

/* The longest file for workers x capacity entries and backends names. */
size_t mlv_flow_state_max_size(uint32_t workers, uint32_t capacity,
			       uint32_t backends);

/* One receive queue a worker polls. */
struct mlv_flow_state_queue {
	uint32_t worker;
	uint16_t port;     /* config port index */
	uint16_t queue;
};

/* A hash of what routes a flow's packets to a worker: the workers'
 * count and each receive queue (n, in the workers' order) as (worker,
 * port name, port device, queue). Pure; any thread. */
uint64_t mlv_flow_state_layout(const struct mlv_config *cfg,
			       uint32_t n_workers,
			       const struct mlv_flow_state_queue *q, size_t n);

/* Write st to path (mlv_file_replace: a checked directory, a temporary
 * file renamed over it, synced). MLV_OK or an error with why. */
enum mlv_err mlv_flow_state_save(const char *path,
				 const struct mlv_flow_state *st, char *why,
				 size_t why_len);

/* Read path (at most max bytes, a regular file in a checked directory,
 * control/base/file.h) into st. MLV_E_NOT_FOUND when there is none;
 * another error with why when it cannot be read or is not valid. The
 * caller removes it (mlv_file_remove) once read, valid or not. */
enum mlv_err mlv_flow_state_load(const char *path, size_t max,
				 struct mlv_flow_state *st, char *why,
				 size_t why_len);

/* Free what decode kept. NULL or an empty st is fine. */
void mlv_flow_state_free(struct mlv_flow_state *st);

#endif
