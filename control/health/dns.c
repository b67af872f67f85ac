/* SPDX-License-Identifier: BSD-3-Clause */
/* The DNS side of dns checks: one question (RFC 1035, 4.1) and the header
 * of the answer. Hand-rolled: a check sends one fixed query and reads 12
 * bytes of the reply; the resolver libraries on Debian (libresolv, c-ares,
 * ldns) resolve through the system's configuration, while a check must ask
 * one given server and never block the control thread. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "control/health/health_internal.h"

#define DNS_HEADER 12
#define DNS_TYPE_A 1
#define DNS_CLASS_IN 1
#define DNS_FLAG_QR 0x80     /* in the third byte */
#define DNS_FLAG_RD 0x01     /* likewise */

static bool label_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '_';
}

bool health_dns_name_ok(const char *name)
{
	size_t len = strnlen(name, MLV_PATH_MAX), label = 0;

	if (len == 0 || len == MLV_PATH_MAX)
		return false;
	if (name[len - 1] == '.')
		len--;               /* the root's dot */
	if (len == 0 || len > 253)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (name[i] == '.') {
			if (label == 0)
				return false;
			label = 0;
		} else if (!label_char(name[i]) || ++label > 63) {
			return false;
		}
	}
	return label > 0;
}

size_t health_dns_query(const char *name, uint16_t id, uint8_t *buf,
			size_t len)
{
	size_t n = DNS_HEADER, start = 0, name_len;

	if (!health_dns_name_ok(name))
		return 0;
	name_len = strlen(name);
	if (name[name_len - 1] == '.')
		name_len--;
	/* header, the labels with their lengths, the root, type, class */
	if (len < DNS_HEADER + name_len + 2 + 4)
		return 0;
	memset(buf, 0, DNS_HEADER);
	buf[0] = (uint8_t)(id >> 8);
	buf[1] = (uint8_t)id;
	buf[2] = DNS_FLAG_RD;
	buf[5] = 1;                  /* QDCOUNT */
	for (size_t i = 0; i <= name_len; i++) {
		if (i == name_len || name[i] == '.') {
			buf[n++] = (uint8_t)(i - start);
			memcpy(buf + n, name + start, i - start);
			n += i - start;
			start = i + 1;
		}
	}
	buf[n++] = 0;                /* the root */
	buf[n++] = 0;
	buf[n++] = DNS_TYPE_A;
	buf[n++] = 0;
	buf[n++] = DNS_CLASS_IN;
	return n;
}

enum health_dns_reply health_dns_parse(const uint8_t *buf, size_t len,
				       const uint8_t *query, size_t query_len,
				       uint8_t *rcode)
{
	/* ours: a response with the query's id that asks the query's one
	 * question (RFC 5452, 4.1), not just any packet with the id */
	if (query_len < DNS_HEADER || len < query_len ||
	    !(buf[2] & DNS_FLAG_QR) || buf[0] != query[0] ||
	    buf[1] != query[1] || buf[4] != 0 || buf[5] != 1 ||
	    memcmp(buf + DNS_HEADER, query + DNS_HEADER,
		   query_len - DNS_HEADER) != 0)
		return DNS_NOT_OURS;
	*rcode = buf[3] & 0x0f;
	return DNS_ANSWER;
}

const char *health_dns_rcode_name(uint8_t rcode, char *buf, size_t len)
{
	static const char *const names[] = {
		"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED",
	};

	if (rcode < sizeof(names) / sizeof(names[0]))
		snprintf(buf, len, "%s", names[rcode]);
	else
		snprintf(buf, len, "RCODE %u", rcode);
	return buf;
}
