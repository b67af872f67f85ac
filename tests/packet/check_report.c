/* SPDX-License-Identifier: BSD-3-Clause */
/* How every check of pkt-check reports: a failure line (the first 40
 * printed, all counted) and addresses as text. */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>

#include "tests/packet/check.h"

void check_fail(struct check_ctx *c, const char *fmt, ...)
{
	va_list ap;

	c->failures++;
	if (c->printed >= 40) {
		if (c->printed++ == 40)
			fprintf(stderr, "FAIL: (further failures not shown)\n");
		return;
	}
	c->printed++;
	fputs("FAIL: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char *check_addr(uint8_t family, const uint8_t *a, char *buf,
		       unsigned len)
{
	if (!inet_ntop(family == 4 ? AF_INET : AF_INET6, a, buf, len))
		snprintf(buf, len, "?");
	return buf;
}
