/* SPDX-License-Identifier: BSD-3-Clause */
/* The daemon's log: one line per message on stderr (which systemd's
 * journal captures), filtered by a level set from --log-level.
 *
 * Threads: any thread may log, but workers only do so at start and stop,
 * never per packet. A message is formatted into a stack buffer and written
 * with one write(2), so lines from different threads do not interleave.
 */
#ifndef MLV_DAEMON_LOG_H
#define MLV_DAEMON_LOG_H

#include <stdbool.h>

#define MLV_LOG_LEVELS(X)        \
	X(ERROR,   "error")      \
	X(WARNING, "warning")    \
	X(INFO,    "info")       \
	X(DEBUG,   "debug")

enum mlv_log_level {
#define MLV_LOG_ENUM(name, text) MLV_LOG_##name,
	MLV_LOG_LEVELS(MLV_LOG_ENUM)
#undef MLV_LOG_ENUM
	MLV_LOG__COUNT
};

/* Parse "error" | "warning" | "info" | "debug". False on anything else. */
bool mlv_log_level_parse(const char *text, enum mlv_log_level *out);
const char *mlv_log_level_name(enum mlv_log_level level);

/* Messages above level are discarded. Call once at start, before any
 * thread but the control thread exists; the default is INFO. */
void mlv_log_set_level(enum mlv_log_level level);
enum mlv_log_level mlv_log_get_level(void);

/* True if a message at level would be written: lets callers skip building
 * expensive arguments. */
bool mlv_log_enabled(enum mlv_log_level level);

/* Write "maglevd: <level>: <message>\n" to stderr. */
void mlv_log(enum mlv_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define mlv_err_log(...)   mlv_log(MLV_LOG_ERROR, __VA_ARGS__)
#define mlv_warn(...)      mlv_log(MLV_LOG_WARNING, __VA_ARGS__)
#define mlv_info(...)      mlv_log(MLV_LOG_INFO, __VA_ARGS__)
#define mlv_debug(...)     mlv_log(MLV_LOG_DEBUG, __VA_ARGS__)

#endif
