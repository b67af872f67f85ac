/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target for what health checks read and write on the wire
 * (control/health/http.c and dns.c). The first byte picks the part:
 *
 *   'H': the rest is what an HTTP backend answers. The engine parses the
 *        status line each time bytes arrive, so every prefix is parsed:
 *        a verdict, once reached, must not change as more bytes come,
 *        and a status is three digits.
 *   'D': a DNS name (up to a NUL), two bytes of id, then what a server
 *        answers. A query is built for the name (it must be one exactly
 *        when the name is valid); the answer is parsed against it, and
 *        so is the query itself with the answer's first four bytes as
 *        its header (so the matching path is reached, not only the
 *        refusals).
 *   other: a path and a Host header text (NUL-separated) for the request
 *        an http check sends: it is built only from texts that pass the
 *        checks, and then holds no line break but its own.
 *
 * Inputs are copied into exact-size heap buffers, so ASan sees any read
 * past them. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "control/health/health_internal.h"
#include "tests/fuzz/fuzz_check.h"

static void *dup_exact(const uint8_t *data, size_t size)
{
	void *p = malloc(size ? size : 1);

	CHECK(p != NULL);
	memcpy(p, data, size);
	return p;
}

static void fuzz_http(const uint8_t *data, size_t size)
{
	enum health_http_parse first = HTTP_NEED_MORE;
	uint16_t status = 0, first_status = 0;
	char shown[64];

	for (size_t len = 0; len <= size; len++) {
		char *buf = dup_exact(data, len);
		enum health_http_parse v =
			health_http_parse_status(buf, len, &status);

		free(buf);
		CHECK(v == HTTP_NEED_MORE || v == HTTP_STATUS ||
		      v == HTTP_MALFORMED);
		if (first != HTTP_NEED_MORE) {
			CHECK(v == first);
			CHECK(v != HTTP_STATUS || status == first_status);
			continue;
		}
		first = v;
		if (v == HTTP_STATUS) {
			CHECK(len == 13);
			CHECK(status <= 999);
			first_status = status;
		} else if (v == HTTP_NEED_MORE) {
			CHECK(len < 13);
		}
	}
	health_printable((const char *)data, size, shown, sizeof(shown));
	CHECK(strlen(shown) == (size < sizeof(shown) ? size : sizeof(shown) - 1));
}

static void fuzz_dns(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size < 300 ? size : 300);
	uint8_t query[300], rcode = 0xff;
	char name[300], text[32];
	size_t name_len, qlen;
	uint16_t id;

	if (!nul || (size_t)(nul - data) + 3 > size)
		return;
	name_len = (size_t)(nul - data);
	memcpy(name, data, name_len + 1);
	id = (uint16_t)(nul[1] << 8 | nul[2]);
	data = nul + 3;
	size -= name_len + 3;

	qlen = health_dns_query(name, id, query, sizeof(query));
	CHECK((qlen != 0) == health_dns_name_ok(name));
	if (qlen == 0)
		return;
	CHECK(qlen <= sizeof(query));
	CHECK(query[0] == id >> 8 && query[1] == (id & 0xff));

	uint8_t *answer = dup_exact(data, size);
	if (health_dns_parse(answer, size, query, qlen, &rcode) == DNS_ANSWER) {
		CHECK(size >= qlen && rcode <= 15);
		CHECK(answer[0] == query[0] && answer[1] == query[1]);
	}
	free(answer);

	/* the query echoed with the answer's header bytes */
	if (size >= 4) {
		answer = dup_exact(query, qlen);
		memcpy(answer, data, 4);
		if (health_dns_parse(answer, qlen, query, qlen, &rcode) ==
		    DNS_ANSWER)
			CHECK((answer[2] & 0x80) && rcode <= 15);
		free(answer);
	}
	health_dns_rcode_name(rcode, text, sizeof(text));
	CHECK(text[0] != '\0');
}

static void fuzz_request(const uint8_t *data, size_t size)
{
	char *path = malloc(size + 1), *host, req[1024];
	struct health_spec spec;
	size_t len;

	CHECK(path != NULL);
	memcpy(path, data, size);
	path[size] = '\0';
	host = memchr(path, '\0', size) ? path + strlen(path) + 1 : path + size;
	if (health_http_path_ok(path) && health_http_host_ok(host)) {
		memset(&spec, 0, sizeof(spec));
		spec.type = MLV_HEALTH_HTTP;
		spec.path = path;
		spec.host = host;
		spec.port = (uint16_t)(size * 7);
		spec.address.family = size & 1 ? MLV_AF_INET6 : MLV_AF_INET;
		memset(spec.address.bytes, 0x5a, sizeof(spec.address.bytes));
		len = health_http_request(&spec, req, sizeof(req));
		CHECK(len < sizeof(req));
		if (len) {
			const char *end = strstr(req, "\r\n\r\n");

			CHECK(strlen(req) == len);
			CHECK(end != NULL && end + 4 == req + len);
			/* one line per header, none smuggled in */
			for (size_t i = 0; i < len; i++)
				if (req[i] == '\n')
					CHECK(i > 0 && req[i - 1] == '\r');
		}
	}
	free(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	switch (data[0]) {
	case 'H':
		fuzz_http(data + 1, size - 1);
		break;
	case 'D':
		fuzz_dns(data + 1, size - 1);
		break;
	default:
		fuzz_request(data + 1, size - 1);
		break;
	}
	return 0;
}
