/* SPDX-License-Identifier: BSD-3-Clause */
#include "control/base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const level_names[] = {
#define MLV_LOG_NAME(name, text) text,
	MLV_LOG_LEVELS(MLV_LOG_NAME)
#undef MLV_LOG_NAME
};

/* Written once before other threads start, read afterwards: no atomics. */
static enum mlv_log_level current_level = MLV_LOG_INFO;

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

void mlv_log(enum mlv_log_level level, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	int n, m;

	if (!mlv_log_enabled(level))
		return;
	n = snprintf(line, sizeof(line), "maglevd: %s: ",
		     mlv_log_level_name(level));
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	n += m;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2; /* truncated: still end the line */
	line[n++] = '\n';
	/* One write per line; a failing stderr is nothing we can report. */
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}
