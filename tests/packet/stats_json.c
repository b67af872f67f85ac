/* SPDX-License-Identifier: BSD-3-Clause */
#include "tests/packet/stats_json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *stats_load(const char *path, char *why, size_t why_len)
{
	json_error_t err;
	json_t *doc = json_load_file(path, 0, &err);

	if (!doc && why)
		snprintf(why, why_len, "%s", err.text);
	return doc;
}

static bool get_u64(json_t *obj, const char *key, uint64_t *out)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

bool stats_counter(json_t *doc, const char *name, uint64_t *out)
{
	return get_u64(json_object_get(json_object_get(doc, "totals"),
				       "counters"), name, out);
}

bool stats_drop(json_t *doc, const char *reason, uint64_t *out)
{
	return get_u64(json_object_get(json_object_get(doc, "totals"), "drops"),
		       reason, out);
}

bool stats_drop_total(json_t *doc, uint64_t *out)
{
	return stats_drop(doc, "total", out);
}

bool stats_conntrack(json_t *doc, const char *name, uint64_t *out)
{
	return get_u64(json_object_get(json_object_get(doc, "totals"),
				       "conntrack"), name, out);
}

bool stats_generation(json_t *doc, uint64_t *out)
{
	return get_u64(doc, "generation", out);
}

bool stats_final(json_t *doc)
{
	return json_is_true(json_object_get(doc, "final"));
}

static json_t *find_named(json_t *arr, const char *name)
{
	size_t i;
	json_t *o;

	json_array_foreach(arr, i, o) {
		const char *n = json_string_value(json_object_get(o, "name"));

		if (n && strcmp(n, name) == 0)
			return o;
	}
	return NULL;
}

json_t *stats_vip(json_t *doc, const char *name)
{
	return find_named(json_object_get(doc, "vips"), name);
}

json_t *stats_backend(json_t *vip, const char *name)
{
	return find_named(json_object_get(vip, "backends"), name);
}

bool stats_flow_counter(json_t *obj, const char *name, uint64_t *out)
{
	return get_u64(json_object_get(obj, "counters"), name, out);
}

bool stats_fingerprint(json_t *vip, uint64_t *out)
{
	const char *s = json_string_value(json_object_get(vip, "fingerprint"));
	char *end;

	if (!s)
		return false;
	errno = 0;
	*out = strtoull(s, &end, 16);
	return errno == 0 && end != s && *end == '\0';
}
