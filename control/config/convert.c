/* SPDX-License-Identifier: BSD-3-Clause */
/* Scalar YAML values -> model fields, one converter per schema type
 * (schema_internal.h), each reporting its own errors with the value's
 * line:col. */
#include "control/config/schema_internal.h"

#include <stdlib.h>
#include <string.h>

#include "control/tables/maglev.h"

const char *mlv_cfg_format_duration(uint32_t ms, char *buf, size_t len)
{
	if (ms != 0 && ms % 3600000u == 0)
		snprintf(buf, len, "%uh", ms / 3600000u);
	else if (ms != 0 && ms % 60000u == 0)
		snprintf(buf, len, "%um", ms / 60000u);
	else if (ms != 0 && ms % 1000u == 0)
		snprintf(buf, len, "%us", ms / 1000u);
	else
		snprintf(buf, len, "%ums", ms);
	return buf;
}

const char *mlv_cfg_type_desc(const struct mlv_cfg_key *k)
{
	switch (k->type) {
	case MLV_CT_STRING:
	case MLV_CT_NAME:
		return "a string";
	case MLV_CT_UINT:
	case MLV_CT_TABLE_SIZE:
		return "an integer";
	case MLV_CT_LOAD_FACTOR:
		return "a number";
	case MLV_CT_BOOL:
		return "true or false";
	case MLV_CT_DURATION:
		return "a duration";
	case MLV_CT_ENUM:
		return "a word";   /* convert_value names the choices */
	case MLV_CT_IP:
		return "an IP address";
	case MLV_CT_MAC:
		return "a MAC address";
	case MLV_CT_NEXT_HOP:
		return "auto or a MAC address";
	case MLV_CT_MSS_CLAMP:
		return "auto, off or an integer";
	case MLV_CT_FILE_MODE:
		return "an octal mode";
	case MLV_CT_HOST_PORT:
		return "host:port";
	case MLV_CT_PORT_SPEC:
		return "a port, a range A-B or any";
	case MLV_CT_STRING_LIST:
	case MLV_CT_LIST:
		return "a list";
	case MLV_CT_PREFIX_LIST:
		return "a list of CIDR prefixes";
	case MLV_CT_PREFIX:
		return "a CIDR prefix";
	case MLV_CT_MAP:
		return "a mapping";
	}
	return "a value";
}

static void store_uint(void *p, size_t size, uint64_t v)
{
	if (size == 1)
		*(uint8_t *)p = (uint8_t)v;
	else if (size == 2)
		*(uint16_t *)p = (uint16_t)v;
	else
		*(uint32_t *)p = (uint32_t)v;
}

static bool all_digits(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* Integers are plain decimal: no quotes (a quoted "80" is a string in
 * YAML), no hex/octal/underscores that YAML 1.1 and 1.2 read differently. */
static bool parse_uint(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_key *k,
		       const struct mlv_ynode *n, int64_t min, int64_t max,
		       uint64_t *out)
{
	const char *t = n->text;
	bool negative = t[0] == '-';
	uint64_t v = 0;
	const char *p;

	if (!n->plain) {
		mlv_cfg_error(ctx, n->pos,
			      "'%s' must be an integer, not a quoted string", k->name);
		return false;
	}
	if (negative)   /* kept apart to say "out of range", not "garbage" */
		t++;
	if (!all_digits(t)) {
		mlv_cfg_error(ctx, n->pos, "'%s' must be an integer, got '%s'",
			      k->name, n->text);
		return false;
	}
	for (p = t; *p; p++) {
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > (uint64_t)INT64_MAX / 10)
			break;
	}
	/* Every schema minimum is >= 0, so unsigned compares are exact. */
	if (negative || *p != '\0' || v < (uint64_t)min || v > (uint64_t)max) {
		mlv_cfg_error(ctx, n->pos,
			      "'%s' is %s; it must be between %lld and %lld",
			      k->name, n->text, (long long)min, (long long)max);
		return false;
	}
	*out = v;
	return true;
}

static bool convert_string(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_key *k,
			   const struct mlv_ynode *n, char *dst)
{
	size_t max = k->max > 0 ? (size_t)k->max : k->size - 1;
	size_t i;

	if (strlen(n->text) != n->len) {
		mlv_cfg_error(ctx, n->pos, "'%s' contains a NUL character", k->name);
		return false;
	}
	if (n->len > max) {
		mlv_cfg_error(ctx, n->pos, "'%s' is too long (%u bytes; at most %zu)",
			      k->name, n->len, max);
		return false;
	}
	if ((int64_t)n->len < k->min) {
		mlv_cfg_error(ctx, n->pos, "'%s' must not be empty", k->name);
		return false;
	}
	if (k->type == MLV_CT_NAME) {
		/* Names go into Maglev hashes, JSON, Prometheus labels and
		 * maglevctl arguments: keep them plain. */
		for (i = 0; i < n->len; i++) {
			char c = n->text[i];
			bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
				     (c >= '0' && c <= '9');

			if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-'))) {
				mlv_cfg_error(ctx, n->pos,
					      "invalid %s '%s': use letters, digits, '.', '_' and '-', starting with a letter or digit",
					      k->name, n->text);
				return false;
			}
		}
	}
	memcpy(dst, n->text, n->len + 1);
	return true;
}

/* "ipip, gue or l2dsr" */
const char *mlv_cfg_enum_choices(const struct mlv_cfg_key *k, char *buf,
				size_t len)
{
	const struct mlv_cfg_enum *e;
	size_t used = 0;

	buf[0] = '\0';
	for (e = k->sub; e->name != NULL && used < len; e++) {
		const char *sep = e == k->sub ? "" : (e[1].name == NULL ? " or " : ", ");
		int w = snprintf(buf + used, len - used, "%s%s", sep, e->name);

		if (w < 0)
			break;
		used += (size_t)w;
	}
	return buf;
}

static bool convert_enum(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_key *k,
			 const struct mlv_ynode *n, void *dst)
{
	const struct mlv_cfg_enum *e;
	char expected[128];

	for (e = k->sub; e->name != NULL; e++) {
		if (strcmp(e->name, n->text) == 0) {
			if (k->size == 1)
				*(uint8_t *)dst = (uint8_t)e->value;
			else
				*(int *)dst = e->value;
			return true;
		}
	}
	mlv_cfg_error(ctx, n->pos, "invalid %s '%s' (expected %s)", k->name,
		      n->text, mlv_cfg_enum_choices(k, expected, sizeof(expected)));
	return false;
}

static bool convert_mac(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_key *k,
			const struct mlv_ynode *n, struct mlv_mac *mac)
{
	static const struct mlv_mac zero;

	if (!mlv_mac_parse(n->text, mac)) {
		mlv_cfg_error(ctx, n->pos,
			      "invalid MAC address '%s' for '%s' (expected six hex pairs like 02:00:00:00:01:21)",
			      n->text, k->name);
		return false;
	}
	if ((mac->bytes[0] & 1) || memcmp(mac, &zero, sizeof(zero)) == 0) {
		mlv_cfg_error(ctx, n->pos,
			      "'%s' must be a unicast MAC address, not %s",
			      k->name, n->text);
		return false;
	}
	return true;
}

static bool convert_ip(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_key *k,
		       const struct mlv_ynode *n, struct mlv_ip *ip)
{
	if (!mlv_ip_parse(n->text, ip)) {
		mlv_cfg_error(ctx, n->pos, "invalid IP address '%s' for '%s'",
			      n->text, k->name);
		return false;
	}
	if (k->min != 0 && ip->family != k->min) {
		mlv_cfg_error(ctx, n->pos, "'%s' must be an IPv%d address, got %s",
			      k->name, (int)k->min, n->text);
		memset(ip, 0, sizeof(*ip));
		return false;
	}
	return true;
}

static bool convert_file_mode(struct mlv_cfg_ctx *ctx,
			      const struct mlv_cfg_key *k,
			      const struct mlv_ynode *n, uint32_t *mode)
{
	const char *p;
	uint32_t v = 0;

	/* Plain 0660 and quoted "0660" both mean octal: that is what the
	 * writer of either form wants, whatever YAML version reads it. */
	for (p = n->text; *p >= '0' && *p <= '7' && v <= 07777; p++)
		v = v * 8 + (uint32_t)(*p - '0');
	if (p == n->text || *p != '\0' || v > 0777) {
		mlv_cfg_error(ctx, n->pos,
			      "invalid %s '%s' (expected an octal mode like \"0660\")",
			      k->name, n->text);
		return false;
	}
	if (v & 0002) {
		mlv_cfg_error(ctx, n->pos,
			      "%s %04o makes the socket world-writable; use 0660 or stricter",
			      k->name, v);
		return false;
	}
	*mode = v;
	return true;
}

static bool convert_host_port(struct mlv_cfg_ctx *ctx,
			      const struct mlv_cfg_key *k,
			      const struct mlv_ynode *n, char *dst)
{
	char host[MLV_IP_STRLEN + 2];
	const char *colon, *port;
	struct mlv_ip ip;
	size_t hlen;
	unsigned long v;

	if (n->len == 0) {   /* "" turns the listener off */
		dst[0] = '\0';
		return true;
	}
	if (n->text[0] == '[') {
		const char *end = strchr(n->text, ']');

		if (end == NULL || end[1] != ':')
			goto bad;
		hlen = (size_t)(end - n->text - 1);
		if (hlen >= sizeof(host))
			goto bad;
		memcpy(host, n->text + 1, hlen);
		colon = end + 1;
	} else {
		colon = strrchr(n->text, ':');
		if (colon == NULL)
			goto bad;
		hlen = (size_t)(colon - n->text);
		if (hlen >= sizeof(host))
			goto bad;
		memcpy(host, n->text, hlen);
	}
	host[hlen] = '\0';
	port = colon + 1;
	if (!mlv_ip_parse(host, &ip) ||
	    (n->text[0] == '[') != (ip.family == MLV_AF_INET6) ||
	    !all_digits(port) || strlen(port) > 5)
		goto bad;
	v = strtoul(port, NULL, 10);
	if (v < 1 || v > 65535)
		goto bad;
	if (n->len >= k->size)
		goto bad;
	memcpy(dst, n->text, n->len + 1);
	return true;
bad:
	mlv_cfg_error(ctx, n->pos,
		      "invalid %s '%s' (expected IP:PORT such as 127.0.0.1:9478 or [::1]:9478, or \"\" to disable)",
		      k->name, n->text);
	return false;
}

static bool convert_table_size(struct mlv_cfg_ctx *ctx,
			       const struct mlv_cfg_key *k,
			       const struct mlv_ynode *n, uint32_t *dst)
{
	uint32_t below, above;
	uint64_t v;

	if (!parse_uint(ctx, k, n, MLV_MAGLEV_MIN_SIZE, MLV_MAGLEV_MAX_SIZE, &v))
		return false;
	switch (mlv_maglev_check_size((uint32_t)v)) {
	case MLV_OK:
		*dst = (uint32_t)v;
		return true;
	case MLV_E_INVAL:
		mlv_nearest_primes((uint32_t)v, &below, &above);
		mlv_cfg_error(ctx, n->pos,
			      "%s %s is not prime; the nearest primes are %u and %u",
			      k->name, n->text, below, above);
		return false;
	default:
		mlv_cfg_error(ctx, n->pos,
			      "%s %s is out of range; it must be a prime between %u and %u",
			      k->name, n->text, MLV_MAGLEV_MIN_SIZE,
			      MLV_MAGLEV_MAX_SIZE);
		return false;
	}
}

/* A load factor such as 1.25: plain decimal digits with an optional
 * fraction (no sign, exponent, hex or quotes, like integers); 0 means
 * off, anything else must lie in min..max thousandths. */
static bool convert_load_factor(struct mlv_cfg_ctx *ctx,
				const struct mlv_cfg_key *k,
				const struct mlv_ynode *n, double *dst)
{
	const char *p = n->text;
	size_t int_digits = 0, frac_digits = 1;
	double v;

	while (*p >= '0' && *p <= '9') {
		p++;
		int_digits++;
	}
	if (*p == '.')
		for (p++, frac_digits = 0; *p >= '0' && *p <= '9'; p++)
			frac_digits++;
	/* At most 6 integer digits: the range check below cannot overflow
	 * and strtod reads exactly the text checked here. */
	if (!n->plain || int_digits == 0 || int_digits > 6 || frac_digits == 0 ||
	    *p != '\0') {
		mlv_cfg_error(ctx, n->pos,
			      "'%s' must be a number such as 1.25 (or 0 for off), got '%s'",
			      k->name, n->text);
		return false;
	}
	v = strtod(n->text, NULL);   /* "C" locale: maglevd never sets one */
	if (v != 0 && (v * 1000 < (double)k->min || v * 1000 > (double)k->max)) {
		mlv_cfg_error(ctx, n->pos,
			      "'%s' is %s; it must be 0 (off) or between %g and %g",
			      k->name, n->text, (double)k->min / 1000,
			      (double)k->max / 1000);
		return false;
	}
	*dst = v;
	return true;
}

/* mss_clamp: the words auto and off, or an MSS in bytes. */
static bool convert_mss_clamp(struct mlv_cfg_ctx *ctx,
			      const struct mlv_cfg_key *k,
			      const struct mlv_ynode *n, uint16_t *dst)
{
	uint64_t v;

	if (n->plain && strcmp(n->text, "auto") == 0) {
		*dst = MLV_MSS_CLAMP_AUTO;
		return true;
	}
	if (n->plain && strcmp(n->text, "off") == 0) {
		*dst = MLV_MSS_CLAMP_OFF;
		return true;
	}
	if (!n->plain || !all_digits(n->text[0] == '-' ? n->text + 1 : n->text)) {
		mlv_cfg_error(ctx, n->pos,
			      "'%s' must be auto, off or an MSS in bytes (%lld..%lld), got '%s'",
			      k->name, (long long)k->min, (long long)k->max,
			      n->text);
		return false;
	}
	if (!parse_uint(ctx, k, n, k->min, k->max, &v))
		return false;
	*dst = (uint16_t)v;
	return true;
}

bool mlv_cfg_convert_scalar(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_key *k,
			   const struct mlv_ynode *n, void *obj)
{
	void *dst = mlv_cfg_field(obj, k->offset);
	uint64_t v;
	uint32_t ms;
	char a[32], b[32];

	switch (k->type) {
	case MLV_CT_STRING:
	case MLV_CT_NAME:
		return convert_string(ctx, k, n, dst);
	case MLV_CT_UINT:
		if (!parse_uint(ctx, k, n, k->min, k->max, &v))
			return false;
		store_uint(dst, k->size, v);
		return true;
	case MLV_CT_BOOL:
		if (n->plain && (strcmp(n->text, "true") == 0 ||
				 strcmp(n->text, "false") == 0)) {
			*(bool *)dst = n->text[0] == 't';
			return true;
		}
		mlv_cfg_error(ctx, n->pos, "'%s' must be true or false, got '%s'",
			      k->name, n->text);
		return false;
	case MLV_CT_DURATION:
		if (!mlv_parse_duration_ms(n->text, &ms)) {
			mlv_cfg_error(ctx, n->pos,
				      "invalid duration '%s' for '%s' (write a whole number and a unit: 500ms, 1s, 5m, 1h)",
				      n->text, k->name);
			return false;
		}
		if (ms < k->min || ms > k->max) {
			mlv_cfg_error(ctx, n->pos,
				      "'%s' is %s; it must be between %s and %s",
				      k->name, n->text,
				      mlv_cfg_format_duration((uint32_t)k->min, a, sizeof(a)),
				      mlv_cfg_format_duration((uint32_t)k->max, b, sizeof(b)));
			return false;
		}
		*(uint32_t *)dst = ms;
		return true;
	case MLV_CT_ENUM:
		return convert_enum(ctx, k, n, dst);
	case MLV_CT_IP:
		return convert_ip(ctx, k, n, dst);
	case MLV_CT_MAC:
		if (!convert_mac(ctx, k, n, dst))
			return false;
		*(bool *)mlv_cfg_field(obj, k->aux) = true;
		return true;
	case MLV_CT_NEXT_HOP:
		if (strcmp(n->text, "auto") == 0) {
			*(bool *)dst = true;
			return true;
		}
		if (!convert_mac(ctx, k, n, mlv_cfg_field(obj, k->aux)))
			return false;
		*(bool *)dst = false;
		return true;
	case MLV_CT_FILE_MODE:
		return convert_file_mode(ctx, k, n, dst);
	case MLV_CT_HOST_PORT:
		return convert_host_port(ctx, k, n, dst);
	case MLV_CT_TABLE_SIZE:
		return convert_table_size(ctx, k, n, dst);
	case MLV_CT_LOAD_FACTOR:
		return convert_load_factor(ctx, k, n, dst);
	case MLV_CT_PORT_SPEC:
		return mlv_cfg_convert_port_spec(ctx, k, n, obj);
	case MLV_CT_MSS_CLAMP:
		return convert_mss_clamp(ctx, k, n, dst);
	case MLV_CT_PREFIX:
		return mlv_cfg_convert_prefix(ctx, k, n, dst);
	case MLV_CT_STRING_LIST:
	case MLV_CT_PREFIX_LIST:
	case MLV_CT_MAP:
	case MLV_CT_LIST:
		break;
	}
	return false;
}
