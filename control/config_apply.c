/* Walk a YAML tree with the schema tables (config_schema.h): defaults,
 * unknown and duplicate keys, required keys, types and ranges. Every
 * problem is reported and the walk goes on, so one run lists them all. */
#include "config_schema.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "config_diags.h"
#include "maglev.h"

/* ---- diagnostics helpers ---- */

static void cfg_vreport(struct mlv_cfg_ctx *ctx, enum mlv_diag_level level,
			struct mlv_src_pos pos, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

static void cfg_vreport(struct mlv_cfg_ctx *ctx, enum mlv_diag_level level,
			struct mlv_src_pos pos, const char *fmt, va_list ap)
{
	if (mlv_diag_vadd(ctx->diags, level, pos, fmt, ap))
		ctx->nomem = true;
}

void mlv_cfg_error(struct mlv_cfg_ctx *ctx, struct mlv_src_pos pos,
		   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cfg_vreport(ctx, MLV_DIAG_ERROR, pos, fmt, ap);
	va_end(ap);
}

void mlv_cfg_warn(struct mlv_cfg_ctx *ctx, struct mlv_src_pos pos,
		  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cfg_vreport(ctx, MLV_DIAG_WARNING, pos, fmt, ap);
	va_end(ap);
}

static int key_index(const struct mlv_cfg_map *map, const char *name)
{
	unsigned i;

	for (i = 0; i < map->n_keys; i++)
		if (strcmp(map->keys[i].name, name) == 0)
			return (int)i;
	return -1;
}

const struct mlv_ynode *mlv_cfg_value(const struct mlv_cfg_seen *seen,
				      const char *key)
{
	int i = key_index(seen->map, key);

	return i < 0 ? NULL : seen->values[i];
}

bool mlv_cfg_given(const struct mlv_cfg_seen *seen, const char *key)
{
	int i = key_index(seen->map, key);

	return i >= 0 && seen->values[i] != NULL && !seen->bad[i];
}

bool mlv_cfg_usable(const struct mlv_cfg_seen *seen, const char *key)
{
	int i = key_index(seen->map, key);

	return i >= 0 && !seen->bad[i];
}

struct mlv_src_pos mlv_cfg_pos(const struct mlv_cfg_seen *seen,
			       const char *key)
{
	const struct mlv_ynode *v = mlv_cfg_value(seen, key);

	return v != NULL ? v->pos : seen->node->pos;
}

struct mlv_src_pos mlv_cfg_item_pos(const struct mlv_ynode *item,
				    const char *key)
{
	const struct mlv_ynode *v = mlv_ynode_get(item, key);

	return v != NULL ? v->pos : item->pos;
}

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

/* ---- "did you mean" ---- */

/* Levenshtein distance, capped: keys are short, so a row on the stack. */
static unsigned edit_distance(const char *a, const char *b)
{
	unsigned row[64];
	size_t la = strlen(a), lb = strlen(b), i, j;

	if (la >= 64 || lb >= 64)
		return 64;
	for (j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (i = 1; i <= la; i++) {
		unsigned diag = row[0];

		row[0] = (unsigned)i;
		for (j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static const char *suggest_key(const struct mlv_cfg_map *map, const char *bad)
{
	const char *best = NULL;
	unsigned best_d = 3;   /* more than 2 edits is a different word */
	unsigned i;

	for (i = 0; i < map->n_keys; i++) {
		unsigned d = edit_distance(bad, map->keys[i].name);

		if (d < best_d && d < strlen(map->keys[i].name)) {
			best = map->keys[i].name;
			best_d = d;
		}
	}
	return best;
}

/* ---- scalar conversion ---- */

static void *field(void *obj, size_t offset)
{
	return (char *)obj + offset;
}

static const char *type_desc(const struct mlv_cfg_key *k)
{
	switch (k->type) {
	case MLV_CT_STRING:
	case MLV_CT_NAME:
		return "a string";
	case MLV_CT_UINT:
	case MLV_CT_TABLE_SIZE:
		return "an integer";
	case MLV_CT_BOOL:
		return "true or false";
	case MLV_CT_DURATION:
		return "a duration";
	case MLV_CT_ENUM:
		return "one of the listed words";
	case MLV_CT_IP:
		return "an IP address";
	case MLV_CT_MAC:
		return "a MAC address";
	case MLV_CT_NEXT_HOP:
		return "auto or a MAC address";
	case MLV_CT_FILE_MODE:
		return "an octal mode";
	case MLV_CT_HOST_PORT:
		return "host:port";
	case MLV_CT_STRING_LIST:
	case MLV_CT_LIST:
		return "a list";
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
	if (t[0] == '+' || negative)
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
		mlv_cfg_error(ctx, n->pos, "'%s' is too long (%u characters; at most %zu)",
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

static bool convert_enum(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_key *k,
			 const struct mlv_ynode *n, void *dst)
{
	const struct mlv_cfg_enum *e;
	char expected[128] = "";
	size_t used = 0;

	for (e = k->sub; e->name != NULL; e++) {
		if (strcmp(e->name, n->text) == 0) {
			if (k->size == 1)
				*(uint8_t *)dst = (uint8_t)e->value;
			else
				*(int *)dst = e->value;
			return true;
		}
	}
	for (e = k->sub; e->name != NULL && used < sizeof(expected); e++) {
		const char *sep = e == k->sub ? "" : (e[1].name == NULL ? " or " : ", ");
		int w = snprintf(expected + used, sizeof(expected) - used, "%s%s",
				 sep, e->name);

		if (w < 0)
			break;
		used += (size_t)w;
	}
	mlv_cfg_error(ctx, n->pos, "invalid %s '%s' (expected %s)", k->name,
		      n->text, expected);
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

/* Convert one scalar value. The node is a non-null scalar. */
static bool convert_scalar(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_key *k,
			   const struct mlv_ynode *n, void *obj)
{
	void *dst = field(obj, k->offset);
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
		*(bool *)field(obj, k->aux) = true;
		return true;
	case MLV_CT_NEXT_HOP:
		if (strcmp(n->text, "auto") == 0) {
			*(bool *)dst = true;
			return true;
		}
		if (!convert_mac(ctx, k, n, field(obj, k->aux)))
			return false;
		*(bool *)dst = false;
		return true;
	case MLV_CT_FILE_MODE:
		return convert_file_mode(ctx, k, n, dst);
	case MLV_CT_HOST_PORT:
		return convert_host_port(ctx, k, n, dst);
	case MLV_CT_TABLE_SIZE:
		return convert_table_size(ctx, k, n, dst);
	case MLV_CT_STRING_LIST:
	case MLV_CT_MAP:
	case MLV_CT_LIST:
		break;
	}
	return false;
}

/* ---- defaults ---- */

static void apply_defaults(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_map *map,
			   void *obj)
{
	unsigned i;

	for (i = 0; i < map->n_keys; i++) {
		const struct mlv_cfg_key *k = &map->keys[i];

		if (k->type == MLV_CT_MAP) {
			apply_defaults(ctx, k->sub, field(obj, k->offset));
		} else if (k->def != NULL) {
			/* Defaults are YAML text run through the same
			 * converter as the file, so docs and code agree; a
			 * bad default is a bug the unit tests catch. */
			struct mlv_ynode n;

			memset(&n, 0, sizeof(n));
			n.kind = MLV_YNODE_SCALAR;
			n.text = k->def;
			n.len = (uint32_t)strlen(k->def);
			n.plain = true;
			convert_scalar(ctx, k, &n, obj);
		}
	}
}

/* ---- containers ---- */

static void walk_map(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_map *map,
		     const struct mlv_ynode *node, void *obj);

static bool walk_string_list(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_key *k,
			     const struct mlv_ynode *n, void *obj)
{
	char ***list = field(obj, k->offset);
	uint32_t *count = field(obj, k->aux);
	const struct mlv_ynode *it;
	bool ok = true;

	if (n->n > (uint64_t)k->max) {
		mlv_cfg_error(ctx, n->pos, "too many entries in '%s' (%u; at most %lld)",
			      k->name, n->n, (long long)k->max);
		return false;
	}
	*list = calloc(n->n ? n->n : 1, sizeof(char *));
	if (*list == NULL) {
		ctx->nomem = true;
		return false;
	}
	for (it = n->first; it != NULL; it = it->next) {
		if (it->kind == MLV_YNODE_INVALID) {
			ok = false;
			continue;
		}
		if (it->kind != MLV_YNODE_SCALAR || mlv_ynode_is_null(it) ||
		    strlen(it->text) != it->len) {
			mlv_cfg_error(ctx, it->pos,
				      "each entry of '%s' must be a string, got %s",
				      k->name, mlv_ynode_kind_name(it));
			ok = false;
			continue;
		}
		(*list)[*count] = strdup(it->text);
		if ((*list)[*count] == NULL) {
			ctx->nomem = true;
			return false;
		}
		(*count)++;
	}
	return ok;
}

static bool walk_list(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_key *k,
		      const struct mlv_ynode *n, void *obj)
{
	const struct mlv_cfg_list *l = k->sub;
	void **array = field(obj, k->offset);
	uint32_t *count = field(obj, k->aux);
	const struct mlv_ynode *it;
	uint32_t errors = ctx->diags->n_errors;
	uint32_t i;

	if (n->n > l->max) {
		mlv_cfg_error(ctx, n->pos, "too many %s in '%s' (%u; at most %u)",
			      l->items, k->name, n->n, l->max);
		return false;
	}
	*array = calloc(n->n ? n->n : 1, l->elem_size);
	if (*array == NULL) {
		ctx->nomem = true;
		return false;
	}
	/* The count covers every item, also rejected ones, so finish hooks
	 * can pair elements with item nodes by index. */
	*count = n->n;
	for (it = n->first, i = 0; it != NULL && !ctx->nomem; it = it->next, i++) {
		void *elem = (char *)*array + (size_t)i * l->elem_size;

		apply_defaults(ctx, l->elem, elem);
		if (l->init != NULL)
			l->init(ctx, elem);
		if (l->pos_offset != MLV_CFG_NO_OFFSET)
			*(struct mlv_src_pos *)field(elem, l->pos_offset) = it->pos;
		if (it->kind == MLV_YNODE_MAP)
			walk_map(ctx, l->elem, it, elem);
		else if (it->kind != MLV_YNODE_INVALID)
			mlv_cfg_error(ctx, it->pos, "each %s in '%s' must be a mapping, got %s",
				      l->item, k->name, mlv_ynode_kind_name(it));
	}
	return ctx->diags->n_errors == errors;
}

/* Convert the value of one key. Returns false if it was rejected. */
static bool convert_value(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_key *k,
			  const struct mlv_ynode *n, void *obj)
{
	bool is_null = mlv_ynode_is_null(n);

	if (n->kind == MLV_YNODE_INVALID)
		return false;
	switch (k->type) {
	case MLV_CT_MAP:
		/* An empty "health:" is an empty mapping: defaults apply. */
		if (n->kind == MLV_YNODE_MAP || is_null) {
			uint32_t errors = ctx->diags->n_errors;

			walk_map(ctx, k->sub, n, field(obj, k->offset));
			return ctx->diags->n_errors == errors;
		}
		break;
	case MLV_CT_LIST:
	case MLV_CT_STRING_LIST:
		if (is_null) {
			static const struct mlv_ynode empty = { .kind = MLV_YNODE_SEQ };
			struct mlv_ynode e = empty;

			e.pos = n->pos;
			return k->type == MLV_CT_LIST ? walk_list(ctx, k, &e, obj)
						      : walk_string_list(ctx, k, &e, obj);
		}
		if (n->kind == MLV_YNODE_SEQ)
			return k->type == MLV_CT_LIST ? walk_list(ctx, k, n, obj)
						      : walk_string_list(ctx, k, n, obj);
		break;
	default:
		if (n->kind == MLV_YNODE_SCALAR) {
			if (is_null) {
				mlv_cfg_error(ctx, n->pos, "'%s' has no value", k->name);
				return false;
			}
			return convert_scalar(ctx, k, n, obj);
		}
		break;
	}
	mlv_cfg_error(ctx, n->pos, "'%s' must be %s, got %s", k->name,
		      type_desc(k), mlv_ynode_kind_name(n));
	return false;
}

static void walk_map(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_map *map,
		     const struct mlv_ynode *node, void *obj)
{
	struct mlv_cfg_seen seen;
	const struct mlv_ynode *v;
	uint32_t errors = ctx->diags->n_errors;
	unsigned i;

	memset(&seen, 0, sizeof(seen));
	seen.map = map;
	seen.node = node;
	for (v = node->kind == MLV_YNODE_MAP ? node->first : NULL; v; v = v->next) {
		const struct mlv_ynode *key = v->key;
		int idx;

		if (key == NULL || key->kind != MLV_YNODE_SCALAR)
			continue;   /* reported by the tree builder */
		idx = key_index(map, key->text);
		if (idx < 0) {
			const char *hint = suggest_key(map, key->text);

			if (hint != NULL)
				mlv_cfg_error(ctx, key->pos,
					      "unknown key '%s' (did you mean '%s'?)",
					      key->text, hint);
			else
				mlv_cfg_error(ctx, key->pos, "unknown key '%s'",
					      key->text);
			continue;
		}
		if (seen.values[idx] != NULL) {
			mlv_cfg_error(ctx, key->pos,
				      "duplicate key '%s' (first at line %u)",
				      key->text, seen.values[idx]->key->pos.line);
			continue;
		}
		seen.values[idx] = v;
	}
	for (i = 0; i < map->n_keys && !ctx->nomem; i++) {
		const struct mlv_cfg_key *k = &map->keys[i];

		if (seen.values[i] == NULL) {
			if (k->required) {
				mlv_cfg_error(ctx, node->pos,
					      "missing required key '%s' in %s",
					      k->name, map->what);
				seen.bad[i] = true;
			}
			continue;
		}
		seen.bad[i] = !convert_value(ctx, k, seen.values[i], obj);
	}
	seen.errors = ctx->diags->n_errors != errors;
	if (map->finish != NULL && !ctx->nomem)
		map->finish(ctx, obj, &seen);
}

void mlv_cfg_apply(struct mlv_cfg_ctx *ctx, const struct mlv_ynode *root)
{
	apply_defaults(ctx, &mlv_cfg_root, ctx->cfg);
	walk_map(ctx, &mlv_cfg_root, root, ctx->cfg);
}
