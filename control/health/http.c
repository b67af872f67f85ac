/* SPDX-License-Identifier: BSD-3-Clause */
/* The HTTP side of http checks: the request text and the status line.
 * Hand-rolled: a check sends one fixed request and reads 13 bytes of the
 * answer; no HTTP library on Debian offers a non-blocking client that
 * would fit the engine's own epoll without pulling in much more (libcurl's
 * multi interface wants to own the sockets and timers). */
#include <stdio.h>
#include <string.h>

#include "control/health/health_internal.h"

static bool visible(unsigned char c)
{
	/* Not a control character, not a space; bytes >= 0x80 (UTF-8)
	 * pass, as most servers accept them. */
	return c > 0x20 && c != 0x7f;
}

bool health_http_path_ok(const char *path)
{
	if (!path || path[0] != '/')
		return false;
	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		if (!visible(*p))
			return false;
	return true;
}

bool health_http_host_ok(const char *host)
{
	if (!host)
		return false;
	for (const unsigned char *p = (const unsigned char *)host; *p; p++)
		if (!visible(*p))
			return false;
	return true;
}

size_t health_http_request(const struct health_spec *spec, char *buf,
			   size_t len)
{
	char addr[MLV_IP_STRLEN];
	char host[MLV_IP_STRLEN + 8];
	const char *host_hdr = spec->host;
	int n;

	if (!host_hdr || !host_hdr[0]) {
		/* RFC 9110 7.2: uri-host [":" port], the port left out when it
		 * is the scheme's default; IPv6 literals in brackets. */
		/* A data-path check asks the VIP, as a client does. */
		const struct mlv_ip *ip =
			spec->via == MLV_HEALTH_VIA_DATA_PATH ? &spec->vip
							      : &spec->address;
		bool v6 = ip->family == MLV_AF_INET6;

		mlv_ip_format(ip, addr, sizeof(addr));
		if (spec->port == 80)
			snprintf(host, sizeof(host), v6 ? "[%s]" : "%s", addr);
		else
			snprintf(host, sizeof(host), v6 ? "[%s]:%u" : "%s:%u",
				 addr, spec->port);
		host_hdr = host;
	}
	n = snprintf(buf, len,
		     "GET %s HTTP/1.1\r\n"
		     "Host: %s\r\n"
		     "User-Agent: maglevd-health\r\n"
		     "Accept: */*\r\n"
		     "Connection: close\r\n"
		     "\r\n",
		     spec->path, host_hdr);
	if (n < 0 || (size_t)n >= len)
		return 0;
	return (size_t)n;
}

enum health_http_parse health_http_parse_status(const char *buf, size_t len,
						uint16_t *status)
{
	/* 'd' = a digit, 'e' = the byte after the code; the rest literal. */
	static const char pattern[] = "HTTP/d.d ddde";
	size_t i;

	for (i = 0; i < len && i < sizeof(pattern) - 1; i++) {
		unsigned char c = (unsigned char)buf[i];

		switch (pattern[i]) {
		case 'd':
			if (c < '0' || c > '9')
				return HTTP_MALFORMED;
			break;
		case 'e':
			if (c != ' ' && c != '\r' && c != '\n')
				return HTTP_MALFORMED;
			break;
		default:
			if (c != (unsigned char)pattern[i])
				return HTTP_MALFORMED;
		}
	}
	if (i < sizeof(pattern) - 1)
		return HTTP_NEED_MORE;
	*status = (uint16_t)((buf[9] - '0') * 100 + (buf[10] - '0') * 10 +
			     (buf[11] - '0'));
	return HTTP_STATUS;
}

char *health_printable(const char *data, size_t len, char *out,
		       size_t out_len)
{
	size_t i;

	if (out_len == 0)
		return out;
	for (i = 0; i < len && i + 1 < out_len; i++) {
		unsigned char c = (unsigned char)data[i];

		out[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	out[i] = '\0';
	return out;
}
