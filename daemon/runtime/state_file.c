/* SPDX-License-Identifier: BSD-3-Clause */
#include "daemon/runtime/state_file.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "control/base/file.h"
#include "control/tables/maglev.h"

#define STATE_VERSION 1

enum mlv_err mlv_state_file_path(const char *state_file, const char *socket,
				 char *out, size_t len)
{
	bool own = state_file && state_file[0];
	int n;

	if (!own && !(socket && socket[0]))
		return MLV_E_INVAL;
	n = own ? snprintf(out, len, "%s", state_file) :
		  snprintf(out, len, "%s.state", socket);
	return n > 0 && (size_t)n < len ? MLV_OK : MLV_E_INVAL;
}

/* One override from its JSON object; a sentence in why when it is not
 * one. */
static bool override_of(const json_t *e, struct mlv_override *ov, char *why,
			size_t why_len)
{
	const json_t *vip = json_object_get(e, "vip");
	const json_t *backend = json_object_get(e, "backend");
	const json_t *drain = json_object_get(e, "drain");
	const json_t *weight = json_object_get(e, "weight");

	memset(ov, 0, sizeof(*ov));
	if (!json_is_object(e) || !json_is_string(vip) ||
	    !json_is_string(backend) || !json_is_boolean(drain) ||
	    !(json_is_null(weight) || json_is_integer(weight))) {
		snprintf(why, why_len, "an override is not {vip: string, backend: "
			 "string, drain: bool, weight: integer or null}");
		return false;
	}
	if (json_string_length(vip) == 0 ||
	    json_string_length(vip) >= sizeof(ov->vip) ||
	    json_string_length(backend) == 0 ||
	    json_string_length(backend) >= sizeof(ov->backend)) {
		snprintf(why, why_len, "a VIP or backend name is empty or longer "
			 "than %zu bytes", sizeof(ov->vip) - 1);
		return false;
	}
	if (json_is_integer(weight) &&
	    (json_integer_value(weight) < 0 ||
	     json_integer_value(weight) > MLV_MAGLEV_MAX_WEIGHT)) {
		snprintf(why, why_len, "weight %lld of %s/%s is out of 0..%u",
			 (long long)json_integer_value(weight),
			 json_string_value(vip), json_string_value(backend),
			 MLV_MAGLEV_MAX_WEIGHT);
		return false;
	}
	memcpy(ov->vip, json_string_value(vip), json_string_length(vip));
	memcpy(ov->backend, json_string_value(backend),
	       json_string_length(backend));
	ov->drain = json_is_true(drain);
	ov->has_weight = json_is_integer(weight);
	ov->weight = ov->has_weight ? (uint32_t)json_integer_value(weight) : 0;
	return true;
}

enum mlv_err mlv_state_file_load(const char *path, struct mlv_overrides *o,
				 char *why, size_t why_len)
{
	char detail[160] = "";
	json_error_t jerr;
	const json_t *list;
	json_t *doc = NULL, *e;
	char *text = NULL;
	size_t len, i;
	enum mlv_err err;

	err = mlv_file_read(path, MLV_STATE_FILE_MAX, &text, &len, why, why_len);
	if (err == MLV_E_NOT_FOUND)
		return MLV_OK;
	if (err)
		return err;
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (!doc) {
		snprintf(why, why_len, "%s:%d:%d: %s", path, jerr.line,
			 jerr.column, jerr.text);
		return MLV_E_INVAL;
	}
	list = json_object_get(doc, "overrides");
	if (!json_is_object(doc) ||
	    json_integer_value(json_object_get(doc, "maglevd_state")) !=
	    STATE_VERSION || !json_is_array(list)) {
		snprintf(why, why_len, "%s: not a maglevd state file (version %d)",
			 path, STATE_VERSION);
		err = MLV_E_INVAL;
		goto out;
	}
	json_array_foreach(list, i, e) {
		struct mlv_override ov;

		if (!override_of(e, &ov, detail, sizeof(detail))) {
			snprintf(why, why_len, "%s: override %zu: %s", path, i,
				 detail);
			err = MLV_E_INVAL;
			goto out;
		}
		err = mlv_overrides_put(o, &ov, NULL);
		if (err) {
			snprintf(why, why_len, "%s: %s", path, mlv_strerror(err));
			goto out;
		}
	}
out:
	if (err) {
		mlv_overrides_free(o);
		mlv_overrides_init(o);
	}
	json_decref(doc);
	return err;
}

enum mlv_err mlv_state_file_save(const char *path,
				 const struct mlv_overrides *o, char *why,
				 size_t why_len)
{
	json_t *list = json_array(), *doc;
	enum mlv_err err = MLV_E_NOMEM;
	char *text = NULL;

	for (uint32_t i = 0; list && i < o->n; i++) {
		const struct mlv_override *ov = &o->items[i];

		if (json_array_append_new(list, json_pack(
			    "{s:s, s:s, s:b, s:o}", "vip", ov->vip,
			    "backend", ov->backend, "drain", ov->drain,
			    "weight", ov->has_weight ?
			    json_integer(ov->weight) : json_null()))) {
			json_decref(list);
			list = NULL;
		}
	}
	doc = list ? json_pack("{s:i, s:o}", "maglevd_state", STATE_VERSION,
			       "overrides", list) : NULL;
	if (doc)
		text = json_dumps(doc, JSON_INDENT(1) | JSON_SORT_KEYS);
	json_decref(doc);
	if (!text) {
		snprintf(why, why_len, "%s: out of memory", path);
		return err;
	}
	err = mlv_file_replace(path, text, strlen(text), 0600, MLV_FILE_DURABLE,
			       why, why_len);
	free(text);
	return err;
}
