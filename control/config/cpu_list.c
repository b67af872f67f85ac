/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU list parsing and formatting (see cpu_list.h). */
#include "control/config/cpu_list.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* One CPU number at *p, advancing *p. False if none or too large. */
static bool cpu_number(const char **p, unsigned *cpu, bool *too_big)
{
	char *end;
	unsigned long v;

	*too_big = false;
	if (!isdigit((unsigned char)**p))
		return false;
	v = strtoul(*p, &end, 10);
	*p = end;
	if (v >= CPU_SETSIZE) {
		*too_big = true;
		return false;
	}
	*cpu = (unsigned)v;
	return true;
}

static enum mlv_err fail(char *why, size_t why_len, enum mlv_err err,
			 const char *msg)
{
	if (why && why_len)
		snprintf(why, why_len, "%s", msg);
	return err;
}

enum mlv_err mlv_cpu_list_parse(const char *text, cpu_set_t *set,
				char *why, size_t why_len)
{
	const char *p = text;
	bool too_big;

	CPU_ZERO(set);
	if (!text)
		return fail(why, why_len, MLV_E_INVAL, "no CPU list");
	for (;;) {
		unsigned lo, hi;

		p = skip_space(p);
		if (!cpu_number(&p, &lo, &too_big))
			goto bad_number;
		hi = lo;
		p = skip_space(p);
		if (*p == '-') {
			p = skip_space(p + 1);
			if (!cpu_number(&p, &hi, &too_big))
				goto bad_number;
			if (hi < lo)
				return fail(why, why_len, MLV_E_INVAL,
					    "a CPU range must go up (\"a-b\" with a <= b)");
			p = skip_space(p);
		}
		for (unsigned c = lo; c <= hi; c++)
			CPU_SET(c, set);
		if (*p == '\0')
			return MLV_OK;
		if (*p != ',')
			return fail(why, why_len, MLV_E_INVAL,
				    "expected a CPU list like \"0-1,4\"");
		p++;
	}
bad_number:
	if (too_big)
		return fail(why, why_len, MLV_E_RANGE,
			    "CPU number too large (CPU_SETSIZE is 1024)");
	return fail(why, why_len, MLV_E_INVAL,
		    "expected a CPU list like \"0-1,4\"");
}

char *mlv_cpu_list_format(const cpu_set_t *set, char *buf, size_t len)
{
	size_t used = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (unsigned c = 0; c < CPU_SETSIZE; c++) {
		unsigned hi = c;
		int n;

		if (!CPU_ISSET(c, set))
			continue;
		while (hi + 1 < CPU_SETSIZE && CPU_ISSET(hi + 1, set))
			hi++;
		n = hi == c ? snprintf(buf + used, len - used, "%s%u",
				       used ? "," : "", c)
			    : snprintf(buf + used, len - used, "%s%u-%u",
				       used ? "," : "", c, hi);
		if (n < 0 || (size_t)n >= len - used) {
			buf[used] = '\0'; /* whole items only */
			break;
		}
		used += (size_t)n;
		c = hi;
	}
	return buf;
}
