/* SPDX-License-Identifier: BSD-3-Clause */
#include "control/base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const level_names[] = {
#define MLV_LOG_NAME(name, text, prio) text,
	MLV_LOG_LEVELS(MLV_LOG_NAME)
#undef MLV_LOG_NAME
};

static const int level_priorities[] = {
#define MLV_LOG_PRIO(name, text, prio) prio,
	MLV_LOG_LEVELS(MLV_LOG_PRIO)
#undef MLV_LOG_PRIO
};

/* Written once before other threads start, read afterwards: no atomics. */
static enum mlv_log_level current_level = MLV_LOG_INFO;
static enum mlv_log_format current_format = MLV_LOG_FORMAT_TEXT;
static bool to_journal;
static int out_fd = STDERR_FILENO;

bool mlv_log_level_parse(const char *text, enum mlv_log_level *out)
{
	for (int i = 0; i < MLV_LOG__COUNT; i++) {
		if (strcmp(text, level_names[i]) == 0) {
			*out = (enum mlv_log_level)i;
			return true;
		}
	}
	return false;
}

const char *mlv_log_level_name(enum mlv_log_level level)
{
	if ((unsigned)level >= MLV_LOG__COUNT)
		return "?";
	return level_names[level];
}

bool mlv_log_format_parse(const char *text, enum mlv_log_format *out)
{
	if (strcmp(text, "text") == 0)
		*out = MLV_LOG_FORMAT_TEXT;
	else if (strcmp(text, "json") == 0)
		*out = MLV_LOG_FORMAT_JSON;
	else
		return false;
	return true;
}

void mlv_log_set_level(enum mlv_log_level level)
{
	current_level = level;
}

enum mlv_log_level mlv_log_get_level(void)
{
	return current_level;
}

bool mlv_log_enabled(enum mlv_log_level level)
{
	return level <= current_level;
}

bool mlv_log_fd_is_journal(int fd)
{
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	int end = 0;

	if (!env || sscanf(env, "%llu:%llu%n", &dev, &ino, &end) != 2 ||
	    env[end] != '\0' || fstat(fd, &st) != 0)
		return false;
	return (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

void mlv_log_setup(int fd, enum mlv_log_format format)
{
	out_fd = fd;
	current_format = format;
	to_journal = mlv_log_fd_is_journal(fd);
}

bool mlv_log_to_journal(void)
{
	return to_journal;
}

/* A line being built. put() appends while room is left, always keeping
 * three bytes (for JSON's closing quote and brace, and the newline); a
 * line that does not fit is cut, never overrun. */
struct line {
	char buf[2048];
	size_t n;
};

static void put(struct line *l, const char *s, size_t len)
{
	size_t room = sizeof(l->buf) - 3 - l->n;

	if (len > room)
		len = room;
	memcpy(l->buf + l->n, s, len);
	l->n += len;
}

/* All of s or nothing: a JSON escape cut in half would end the string. */
static void put_whole(struct line *l, const char *s, size_t len)
{
	if (len > sizeof(l->buf) - 3 - l->n)
		return;
	memcpy(l->buf + l->n, s, len);
	l->n += len;
}

static void puts_(struct line *l, const char *s)
{
	put(l, s, strlen(s));
}

/* A JSON string's contents (RFC 8259): quote, backslash and control
 * characters escaped; other bytes as they are. */
static void put_json(struct line *l, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };

		if (c == '"' || c == '\\') {
			char two[2] = { '\\', (char)c };
			put_whole(l, two, 2);
		} else if (c == '\n') {
			put_whole(l, "\\n", 2);
		} else if (c == '\t') {
			put_whole(l, "\\t", 2);
		} else if (c < 0x20) {
			put_whole(l, esc, 6);
		} else {
			put_whole(l, (const char *)&c, 1);
		}
	}
}

/* ISO 8601 in UTC with milliseconds: 2025-01-31T12:34:56.789Z. */
static void put_time(struct line *l)
{
	struct timespec ts;
	struct tm tm;
	char buf[64];
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(buf, sizeof(buf) - 6, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, 6, ".%03uZ", (unsigned)(ts.tv_nsec / 1000000) % 1000u);
	puts_(l, buf);
}

void mlv_log_vsource(enum mlv_log_level level, const char *source,
		     const char *fmt, va_list ap)
{
	struct line l = { .n = 0 };
	char msg[2048];

	if (!mlv_log_enabled(level))
		return;
	if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
		msg[0] = '\0';
	if (to_journal) {
		/* sd-daemon(3): journald reads the priority from "<N>" */
		char prio[4] = { '<', (char)('0' + level_priorities[level]),
				 '>', '\0' };
		puts_(&l, prio);
	}
	if (current_format == MLV_LOG_FORMAT_JSON) {
		puts_(&l, "{\"time\":\"");
		put_time(&l);
		puts_(&l, "\",\"level\":\"");
		puts_(&l, mlv_log_level_name(level));
		if (source) {
			puts_(&l, "\",\"source\":\"");
			put_json(&l, source);
		}
		puts_(&l, "\",\"message\":\"");
		put_json(&l, msg);
		/* room for these was kept by put() */
		l.buf[l.n++] = '"';
		l.buf[l.n++] = '}';
	} else {
		if (!to_journal) {
			put_time(&l);
			puts_(&l, " ");
		}
		puts_(&l, "maglevd: ");
		puts_(&l, mlv_log_level_name(level));
		puts_(&l, ": ");
		if (source) {
			puts_(&l, source);
			puts_(&l, ": ");
		}
		puts_(&l, msg);
	}
	l.buf[l.n++] = '\n';
	/* One write per line; a failing stderr is nothing we can report. */
	if (write(out_fd, l.buf, l.n) < 0)
		return;
}

void mlv_log_source(enum mlv_log_level level, const char *source,
		    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mlv_log_vsource(level, source, fmt, ap);
	va_end(ap);
}

void mlv_log(enum mlv_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mlv_log_vsource(level, NULL, fmt, ap);
	va_end(ap);
}
