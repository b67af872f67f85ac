/* SPDX-License-Identifier: BSD-3-Clause */
/* Walk a YAML tree with the schema tables (schema_internal.h): defaults,
 * unknown and duplicate keys, required keys, types and ranges. Every
 * problem is reported and the walk goes on, so one run lists them all. */
#include "control/config/schema_internal.h"

#include <stdlib.h>
#include <string.h>

#include "control/config/diags.h"

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

/* ---- defaults ---- */

static void apply_defaults(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_map *map,
			   void *obj)
{
	unsigned i;

	for (i = 0; i < map->n_keys; i++) {
		const struct mlv_cfg_key *k = &map->keys[i];

		if (k->type == MLV_CT_MAP) {
			apply_defaults(ctx, k->sub, mlv_cfg_field(obj, k->offset));
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
			mlv_cfg_convert_scalar(ctx, k, &n, obj);
		}
	}
}

/* ---- containers ---- */

static void walk_map(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_map *map,
		     const struct mlv_ynode *node, void *obj);

/* A sequence of scalars for key k into a new array of elem_size entries
 * (k->offset) and its count (k->aux): at most k->max of them, each a
 * non-null scalar converted by item; `noun` names the entries in the
 * count error, `want` what one must be. Returns false if any entry was
 * rejected (each reported) or on nomem. */
static bool walk_scalar_list(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_key *k,
			     const struct mlv_ynode *n, void *obj,
			     size_t elem_size, const char *noun,
			     const char *want, mlv_cfg_item_fn item)
{
	char **list = mlv_cfg_field(obj, k->offset);
	uint32_t *count = mlv_cfg_field(obj, k->aux);
	const struct mlv_ynode *it;
	bool ok = true;

	if (n->n > (uint64_t)k->max) {
		mlv_cfg_error(ctx, n->pos, "too many %s in '%s' (%u; at most %lld)",
			      noun, k->name, n->n, (long long)k->max);
		return false;
	}
	*list = calloc(n->n ? n->n : 1, elem_size);
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
				      "each entry of '%s' must be %s, got %s",
				      k->name, want, mlv_ynode_kind_name(it));
			ok = false;
			continue;
		}
		switch (item(ctx, k, it, *list + (size_t)*count * elem_size)) {
		case MLV_CFG_ITEM_OK:
			(*count)++;
			break;
		case MLV_CFG_ITEM_BAD:
			ok = false;
			break;
		case MLV_CFG_ITEM_NOMEM:
			ctx->nomem = true;
			return false;
		}
	}
	return ok;
}

static enum mlv_cfg_item string_item(struct mlv_cfg_ctx *ctx,
				     const struct mlv_cfg_key *k,
				     const struct mlv_ynode *it, void *elem)
{
	(void)ctx;
	(void)k;
	*(char **)elem = strdup(it->text);
	return *(char **)elem ? MLV_CFG_ITEM_OK : MLV_CFG_ITEM_NOMEM;
}

static bool walk_list(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_key *k,
		      const struct mlv_ynode *n, void *obj)
{
	const struct mlv_cfg_list *l = k->sub;
	void **array = mlv_cfg_field(obj, k->offset);
	uint32_t *count = mlv_cfg_field(obj, k->aux);
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
			*(struct mlv_src_pos *)mlv_cfg_field(elem, l->pos_offset) = it->pos;
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

			walk_map(ctx, k->sub, n, mlv_cfg_field(obj, k->offset));
			return ctx->diags->n_errors == errors;
		}
		break;
	case MLV_CT_LIST:
	case MLV_CT_STRING_LIST:
	case MLV_CT_PREFIX_LIST:
		if (is_null || n->kind == MLV_YNODE_SEQ) {
			/* an empty "include:" is an empty list */
			static const struct mlv_ynode empty = { .kind = MLV_YNODE_SEQ };
			struct mlv_ynode e = empty;
			const struct mlv_ynode *seq = is_null ? &e : n;

			e.pos = n->pos;
			if (k->type == MLV_CT_LIST)
				return walk_list(ctx, k, seq, obj);
			if (k->type == MLV_CT_STRING_LIST)
				return walk_scalar_list(ctx, k, seq, obj,
							sizeof(char *), "entries",
							"a string", string_item);
			return walk_scalar_list(ctx, k, seq, obj,
						sizeof(struct mlv_acl_prefix_config),
						"prefixes", "a CIDR prefix",
						mlv_cfg_prefix_item);
		}
		break;
	default:
		if (n->kind == MLV_YNODE_SCALAR) {
			if (is_null) {
				mlv_cfg_error(ctx, n->pos, "'%s' has no value", k->name);
				return false;
			}
			return mlv_cfg_convert_scalar(ctx, k, n, obj);
		}
		break;
	}
	if (k->type == MLV_CT_ENUM) {
		char choices[128];

		mlv_cfg_error(ctx, n->pos, "'%s' must be %s, got %s", k->name,
			      mlv_cfg_enum_choices(k, choices, sizeof(choices)),
			      mlv_ynode_kind_name(n));
		return false;
	}
	mlv_cfg_error(ctx, n->pos, "'%s' must be %s, got %s", k->name,
		      mlv_cfg_type_desc(k), mlv_ynode_kind_name(n));
	return false;
}

static void walk_map(struct mlv_cfg_ctx *ctx, const struct mlv_cfg_map *map,
		     const struct mlv_ynode *node, void *obj)
{
	struct mlv_cfg_seen seen;
	/* keys an unknown key's "did you mean" named: a required one of
	 * them is not reported missing as well (the typo says it all) */
	bool suggested[MLV_CFG_MAX_KEYS] = { false };
	const struct mlv_ynode *v;
	unsigned i;

	memset(&seen, 0, sizeof(seen));
	seen.map = map;
	seen.node = node;
	for (v = node->kind == MLV_YNODE_MAP ? node->first : NULL; v; v = v->next) {
		const struct mlv_ynode *key = v->key;
		int idx;

		if (key == NULL || key->kind != MLV_YNODE_SCALAR)
			continue;   /* reported by the tree builder */
		idx = mlv_cfg_key_index(map, key->text);
		if (idx < 0) {
			const char *hint = suggest_key(map, key->text);

			if (hint != NULL) {
				mlv_cfg_error(ctx, key->pos,
					      "unknown key '%s' (did you mean '%s'?)",
					      key->text, hint);
				suggested[mlv_cfg_key_index(map, hint)] = true;
			} else
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
			if (k->required && suggested[i]) {
				seen.bad[i] = true;
			} else if (k->required) {
				mlv_cfg_error(ctx, node->pos,
					      "missing required key '%s' in %s",
					      k->name, map->what);
				seen.bad[i] = true;
			}
			continue;
		}
		seen.bad[i] = !convert_value(ctx, k, seen.values[i], obj);
	}
	if (map->finish != NULL && !ctx->nomem)
		map->finish(ctx, obj, &seen);
}

void mlv_cfg_apply(struct mlv_cfg_ctx *ctx, const struct mlv_ynode *root)
{
	apply_defaults(ctx, &mlv_cfg_root, ctx->cfg);
	walk_map(ctx, &mlv_cfg_root, root, ctx->cfg);
}
