/* SPDX-License-Identifier: BSD-3-Clause */
/* The history file: second chance's slot histories (mlv_gen_vip.previous,
 * .earlier; docs/second-chance.md, "Hops") kept across any stop, graceful
 * or not, so that a restarted instance names the same former owners as
 * the instances that kept running. Written by the control thread after
 * every generation whose histories changed, and at a graceful stop; read
 * at the next start, before generation 1 is built. Unlike the flows file
 * it is not removed once read: a history stays true until the config
 * changes, and the next build maps it to the config by name.
 *
 * Format, version 1, little-endian, every record 8-byte aligned:
 *
 *   header   32 bytes: magic "MLVSCHST", version, header length, the
 *            save's CLOCK_REALTIME in ms, VIPs, 4 bytes zero
 *   VIPs     n_vips records, in strcmp order of their names, each:
 *            80 bytes: the VIP's name (NUL-padded, NUL-terminated), its
 *            table size, its backends, the window's end in
 *            CLOCK_REALTIME ms (0: closed); the backends' names, 64
 *            bytes each, in strcmp order; the table, the previous and
 *            the earlier owner of every slot, table size x uint16_t
 *            each, as indices in those names (0xFFFF: none); zeros to
 *            the next multiple of 8
 *   trailer  XXH3-64 of everything before it
 *
 * mlv_sc_history_decode trusts nothing: sizes, counts, the checksum, the
 * order and form of every name and every index are checked, and a file
 * that fails any check is refused whole with one sentence. Pure C; any
 * thread; no shared state.
 */
#ifndef MLV_DAEMON_SC_HISTORY_H
#define MLV_DAEMON_SC_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "control/base/error.h"
#include "control/config/config.h"

/* The format this file describes. */
#define MLV_SC_HISTORY_VERSION 1
/* No owner in a slot's arrays. */
#define MLV_SC_HISTORY_NONE 0xFFFFu
/* Backends one VIP's record may name: indices are uint16_t, and
 * MLV_SC_HISTORY_NONE is none. */
#define MLV_SC_HISTORY_MAX_BACKENDS 0xFFFFu

/* One VIP's history. */
struct mlv_sc_history_vip {
	char name[MLV_NAME_MAX];
	uint32_t table_size;                  /* 1 .. MLV_MAGLEV_MAX_SIZE */
	uint32_t n_backends;
	uint64_t window_end_unix_ms;          /* 0: closed */
	const char (*backends)[MLV_NAME_MAX]; /* n_backends, strcmp order */
	const uint16_t *table;                /* table_size each */
	const uint16_t *previous;
	const uint16_t *earlier;
};

struct mlv_sc_history {
	uint64_t saved_unix_ms;   /* CLOCK_REALTIME when saved */
	uint32_t n_vips;
	const struct mlv_sc_history_vip *vips;  /* strcmp order of names */
	void *owned;              /* decode's buffers: mlv_sc_history_free */
	void *owned_vips;
};

/* The bytes of the file for h, in a malloc'd *buf of *len bytes. VIPs
 * and backends must be in strcmp order, names non-empty and shorter
 * than MLV_NAME_MAX. MLV_E_INVAL for anything decode would refuse,
 * MLV_E_NOMEM. Any thread. */
enum mlv_err mlv_sc_history_encode(const struct mlv_sc_history *h,
				   void **buf, size_t *len);

/* Read the file's bytes (buf, len; the buffer is taken over: on MLV_OK h
 * points into it and mlv_sc_history_free frees it, on an error it is
 * freed here). Returns MLV_OK, or MLV_E_PROTO / MLV_E_INVAL /
 * MLV_E_RANGE / MLV_E_NOMEM with one sentence in why. Any thread. */
enum mlv_err mlv_sc_history_decode(void *buf, size_t len,
				   struct mlv_sc_history *h, char *why,
				   size_t why_len);

/* The VIP of h named name, or NULL. Pure; any thread. */
const struct mlv_sc_history_vip *
mlv_sc_history_find(const struct mlv_sc_history *h, const char *name);

/* The longest file a config with these VIPs may need: every VIP's table
 * of at most max_table slots and at most max_backends backends. */
size_t mlv_sc_history_max_size(uint32_t vips, uint32_t max_table,
			       uint32_t max_backends);

/* Write h to path (mlv_file_replace: a checked directory, a temporary
 * file renamed over it; not synced, see sc_history.c). MLV_OK or an
 * error with why. */
enum mlv_err mlv_sc_history_save(const char *path,
				 const struct mlv_sc_history *h, char *why,
				 size_t why_len);

/* Read path (at most max bytes, a regular file in a checked directory,
 * control/base/file.h) into h. MLV_E_NOT_FOUND when there is none;
 * another error with why when it cannot be read or is not valid. */
enum mlv_err mlv_sc_history_load(const char *path, size_t max,
				 struct mlv_sc_history *h, char *why,
				 size_t why_len);

/* Free what decode kept. NULL or an empty h is fine. */
void mlv_sc_history_free(struct mlv_sc_history *h);

#endif
