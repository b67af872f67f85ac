/* SPDX-License-Identifier: BSD-3-Clause */
/* Duration text ("500ms", "1s", "5m", "1h") -> milliseconds.
 *
 * Hand-written because no library in the build parses durations, and the
 * accepted grammar must be exactly what docs/config.md says: one unsigned
 * decimal number immediately followed by one unit, nothing else (no sign,
 * no fraction, no spaces, no bare numbers whose unit would be a guess). */
#include "control/config/config.h"

#include <string.h>

bool mlv_parse_duration_ms(const char *text, uint32_t *out_ms)
{
	static const struct {
		const char *suffix;
		uint64_t ms;
	} units[] = {
		/* "ms" before "m" and "s": the longest suffix must win. */
		{ "ms", 1 },
		{ "s", 1000 },
		{ "m", 60 * 1000 },
		{ "h", 60 * 60 * 1000 },
	};
	uint64_t value = 0;
	const char *p;
	size_t i;

	if (text == NULL || out_ms == NULL)
		return false;
	for (p = text; *p >= '0' && *p <= '9'; p++) {
		value = value * 10 + (uint64_t)(*p - '0');
		if (value > UINT32_MAX)   /* stops long inputs from wrapping */
			return false;
	}
	if (p == text)
		return false;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(p, units[i].suffix) == 0) {
			value *= units[i].ms;
			if (value > UINT32_MAX)
				return false;
			*out_ms = (uint32_t)value;
			return true;
		}
	}
	return false;
}
