/* SPDX-License-Identifier: BSD-3-Clause */
/* What the schema walk and the finish hooks share: reporting an error or
 * a warning at a position, and reading what a walked mapping was given.
 * Every other file of the walk calls these; they call only diags and the
 * YAML tree. */
#include "control/config/schema_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "control/config/diags.h"
#include "control/config/validate_internal.h"

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

int mlv_cfg_key_index(const struct mlv_cfg_map *map, const char *name)
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
	int i = mlv_cfg_key_index(seen->map, key);

	return i < 0 ? NULL : seen->values[i];
}

bool mlv_cfg_given(const struct mlv_cfg_seen *seen, const char *key)
{
	int i = mlv_cfg_key_index(seen->map, key);

	return i >= 0 && seen->values[i] != NULL && !seen->bad[i];
}

bool mlv_cfg_usable(const struct mlv_cfg_seen *seen, const char *key)
{
	int i = mlv_cfg_key_index(seen->map, key);

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

const struct mlv_ynode **mlv_cfg_list_items(struct mlv_cfg_ctx *ctx,
					    const struct mlv_ynode *list,
					    uint32_t n)
{
	const struct mlv_ynode **items;
	const struct mlv_ynode *it;
	uint32_t i = 0;

	if (list == NULL || list->kind != MLV_YNODE_SEQ || list->n != n || n == 0)
		return NULL;
	items = calloc(n, sizeof(*items));
	if (items == NULL) {
		ctx->nomem = true;
		return NULL;
	}
	for (it = list->first; it != NULL; it = it->next)
		items[i++] = it;
	return items;
}
