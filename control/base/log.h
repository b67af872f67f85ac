/* SPDX-License-Identifier: BSD-3-Clause */
/* The daemon's log: one line per message on stderr (which systemd's
 * journal captures), filtered by a level set from --log-level.
 *
 * Line formats (docs/operations.md#logs):
 *   text, stderr is the journal:  <6>maglevd: info: message
 *   text, anything else:          2025-01-31T12:34:56.789Z maglevd: info: message
 *   json:                         {"time":"2025-01-31T12:34:56.789Z",
 *                                  "level":"info","message":"message"}
 *                                 (with "source":"dpdk" on DPDK's lines,
 *                                 and the "<N>" prefix too on the journal)
 * The journal has its own timestamps and reads the syslog priority from
 * the "<N>" prefix (sd-daemon(3)), so `journalctl -p warning` works;
 * elsewhere each line carries its time, in UTC with milliseconds.
 *
 * Threads: any thread may log, but workers only do so at start and stop,
 * never per packet. A message is formatted into a stack buffer and written
 * with one write(2), so lines from different threads do not interleave.
 */
#ifndef MLV_DAEMON_LOG_H
#define MLV_DAEMON_LOG_H

#include <stdarg.h>
#include <stdbool.h>

/* X(name, text, syslog priority) */
#define MLV_LOG_LEVELS(X)           \
	X(ERROR,   "error",   3)    \
	X(WARNING, "warning", 4)    \
	X(INFO,    "info",    6)    \
	X(DEBUG,   "debug",   7)

enum mlv_log_level {
#define MLV_LOG_ENUM(name, text, prio) MLV_LOG_##name,
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

enum mlv_log_format {
	MLV_LOG_FORMAT_TEXT = 0,
	MLV_LOG_FORMAT_JSON,
};

/* Parse "text" | "json" (--log-format). False on anything else. */
bool mlv_log_format_parse(const char *text, enum mlv_log_format *out);

/* True if fd is the journal's stream: JOURNAL_STREAM holds "DEV:INO"
 * and they are fd's st_dev and st_ino (sd-daemon(3), systemd.exec(5)). */
bool mlv_log_fd_is_journal(int fd);

/* Where lines go (stderr by default) and in which format; looks at
 * JOURNAL_STREAM once, here. Call at start, like mlv_log_set_level. */
void mlv_log_setup(int fd, enum mlv_log_format format);

/* True if the last mlv_log_setup found the journal. */
bool mlv_log_to_journal(void);

/* Write one line at level (formats above). */
void mlv_log(enum mlv_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The same, from a named source ("dpdk"): "source: " before the message
 * in text, a "source" field in JSON. */
void mlv_log_source(enum mlv_log_level level, const char *source,
		    const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void mlv_log_vsource(enum mlv_log_level level, const char *source,
		     const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

#define mlv_err_log(...)   mlv_log(MLV_LOG_ERROR, __VA_ARGS__)
#define mlv_warn(...)      mlv_log(MLV_LOG_WARNING, __VA_ARGS__)
#define mlv_info(...)      mlv_log(MLV_LOG_INFO, __VA_ARGS__)
#define mlv_debug(...)     mlv_log(MLV_LOG_DEBUG, __VA_ARGS__)

#endif
