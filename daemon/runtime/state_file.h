/* SPDX-License-Identifier: BSD-3-Clause */
/* The runtime overrides kept across restarts (control.state_file,
 * docs/operations.md "Runtime state across restarts"): drains and weights
 * set over the control socket, so that an instance taken out for
 * maintenance comes back the way it left. One JSON document,
 *
 *   {"maglevd_state": 1,
 *    "overrides": [{"vip": "web", "backend": "b1", "drain": true,
 *                   "weight": null}, ...]}
 *
 * replaced whole on every change (control/base/file.h) and read once at
 * start, before generation 1 is built. Overrides whose VIP or backend the
 * config no longer has are dropped after reading, as a reload drops them.
 *
 * Threads: control thread only.
 */
#ifndef MLV_DAEMON_STATE_FILE_H
#define MLV_DAEMON_STATE_FILE_H

#include <stddef.h>

#include "control/base/error.h"
#include "daemon/runtime/overrides.h"

/* Largest state file read: 65535 VIPs' worth of overrides fit many times. */
#define MLV_STATE_FILE_MAX (16u << 20)

/* The state file of cfg: control.state_file, or the socket's path +
 * ".state". Writes into out (len bytes); MLV_E_INVAL if it does not fit. */
enum mlv_err mlv_state_file_path(const char *state_file, const char *socket,
				 char *out, size_t len);

/* Read path into o (which should be empty). A missing file is MLV_OK with
 * nothing read. A file that is not valid (not a regular file, not JSON of
 * the form above, a name too long, a weight out of range) is MLV_E_INVAL
 * with a sentence in why, and o is left empty: the daemon starts without
 * it rather than with half of it. */
enum mlv_err mlv_state_file_load(const char *path, struct mlv_overrides *o,
				 char *why, size_t why_len);

/* Replace path with o. MLV_OK, or an error with a sentence in why (the
 * previous file stays). */
enum mlv_err mlv_state_file_save(const char *path,
				 const struct mlv_overrides *o, char *why,
				 size_t why_len);

#endif
