/* SPDX-License-Identifier: BSD-3-Clause */
/* Config entry points: read the file, build the YAML tree, walk it with
 * the schema, hand back a complete model or every diagnostic. */
#include "control/config/config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "control/config/diags.h"
#include "control/config/schema_internal.h"
#include "control/config/yaml_tree_internal.h"

void mlv_config_free(struct mlv_config *cfg)
{
	uint32_t i;

	if (cfg == NULL)
		return;
	if (cfg->eal_args != NULL)
		for (i = 0; i < cfg->n_eal_args; i++)
			free(cfg->eal_args[i]);
	free(cfg->eal_args);
	free(cfg->ports);
	if (cfg->vips != NULL)
		for (i = 0; i < cfg->n_vips; i++)
			free(cfg->vips[i].backends);
	free(cfg->vips);
	free(cfg->path);
	free(cfg);
}

const struct mlv_vip_config *mlv_config_vip(const struct mlv_config *cfg,
					    const char *name)
{
	uint32_t i;

	for (i = 0; i < cfg->n_vips; i++)
		if (strcmp(cfg->vips[i].name, name) == 0)
			return &cfg->vips[i];
	return NULL;
}

static int cmp_name_backend(const void *key, const void *elem)
{
	return strcmp(key, ((const struct mlv_backend_config *)elem)->name);
}

const struct mlv_backend_config *mlv_config_backend(
	const struct mlv_vip_config *vip, const char *name)
{
	if (vip->n_backends == 0)
		return NULL;
	return bsearch(name, vip->backends, vip->n_backends,
		       sizeof(*vip->backends), cmp_name_backend);
}

const struct mlv_port_config *mlv_config_port(const struct mlv_config *cfg,
					      const char *name)
{
	uint32_t i;

	for (i = 0; i < cfg->n_ports; i++)
		if (strcmp(cfg->ports[i].name, name) == 0)
			return &cfg->ports[i];
	return NULL;
}

const char *mlv_forwarding_name(enum mlv_forwarding f)
{
	const struct mlv_cfg_enum *e;

	for (e = mlv_cfg_forwarding_names; e->name != NULL; e++)
		if (e->value == (int)f)
			return e->name;
	return "unknown";
}

static const struct mlv_src_pos no_pos = { 0, 0 };

/* Check the root, then walk it. Returns MLV_OK or MLV_E_NOMEM; schema
 * errors are left in diags. */
static enum mlv_err build_model(const char *name, const struct mlv_ynode *root,
				struct mlv_diags *diags, struct mlv_config **out)
{
	static const struct mlv_src_pos start = { 1, 1 };
	struct mlv_cfg_ctx ctx = { 0 };
	struct mlv_config *cfg;

	if (root == NULL || mlv_ynode_is_null(root)) {
		mlv_diag_add(diags, MLV_DIAG_ERROR, start, "the configuration is empty");
		return MLV_OK;
	}
	if (root->kind != MLV_YNODE_MAP) {
		if (root->kind != MLV_YNODE_INVALID)
			mlv_diag_add(diags, MLV_DIAG_ERROR, root->pos,
				     "the top level must be a mapping with dataplane, control, defaults and vips, not %s",
				     mlv_ynode_kind_name(root));
		return MLV_OK;
	}
	cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL)
		return MLV_E_NOMEM;
	cfg->path = strdup(name);
	if (cfg->path == NULL) {
		free(cfg);
		return MLV_E_NOMEM;
	}
	ctx.cfg = cfg;
	ctx.diags = diags;
	ctx.nomem = false;
	mlv_cfg_apply(&ctx, root);
	if (ctx.nomem) {
		mlv_config_free(cfg);
		return MLV_E_NOMEM;
	}
	*out = cfg;
	return MLV_OK;
}

enum mlv_err mlv_config_load_buffer(const char *name, const char *data,
				    size_t len, struct mlv_config **out,
				    struct mlv_diags *diags)
{
	struct mlv_config *cfg = NULL;
	struct mlv_ytree *tree = NULL;
	uint32_t first = diags->n, errors = diags->n_errors;
	enum mlv_err err;

	*out = NULL;
	if (name == NULL)
		name = "<config>";
	err = mlv_diags_set_file(diags, name);
	if (err)
		return err;
	if (data == NULL && len != 0)
		return MLV_E_INVAL;
	if (len > MLV_CONFIG_MAX_FILE_BYTES) {
		mlv_diag_add(diags, MLV_DIAG_ERROR, no_pos,
			     "file is too large (%zu bytes; at most %u)", len,
			     MLV_CONFIG_MAX_FILE_BYTES);
		return MLV_E_CONFIG;
	}
	err = mlv_ytree_parse(data != NULL ? data : "", len, diags, &tree);
	if (err == MLV_OK)
		err = build_model(name, mlv_ytree_root(tree), diags, &cfg);
	mlv_ytree_free(tree);
	mlv_diags_sort(diags, first);
	if (err == MLV_OK && diags->n_errors != errors)
		err = MLV_E_CONFIG;
	if (err) {
		mlv_config_free(cfg);
		return err;
	}
	*out = cfg;
	return MLV_OK;
}

/* Read at most MLV_CONFIG_MAX_FILE_BYTES + 1 bytes, so an oversized file
 * (or an endless pipe) is detected without reading all of it. */
static enum mlv_err read_file(FILE *f, char **data, size_t *len)
{
	const size_t limit = (size_t)MLV_CONFIG_MAX_FILE_BYTES + 1;
	size_t cap = 0, n = 0;
	char *buf = NULL, *bigger;

	while (n < limit) {
		size_t got;

		if (n == cap) {
			cap = cap ? cap * 2 : 64 * 1024;
			if (cap > limit)
				cap = limit;
			bigger = realloc(buf, cap);
			if (bigger == NULL) {
				free(buf);
				return MLV_E_NOMEM;
			}
			buf = bigger;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f)) {
				free(buf);
				return MLV_E_IO;
			}
			break;
		}
	}
	*data = buf;
	*len = n;
	return MLV_OK;
}

enum mlv_err mlv_config_load(const char *path, struct mlv_config **out,
			     struct mlv_diags *diags)
{
	enum mlv_err err;
	char *data = NULL;
	size_t len = 0;
	FILE *f;

	*out = NULL;
	err = mlv_diags_set_file(diags, path);
	if (err)
		return err;
	f = fopen(path, "rb");
	if (f == NULL) {
		mlv_diag_add(diags, MLV_DIAG_ERROR, no_pos, "cannot open: %s",
			     strerror(errno));
		return MLV_E_IO;
	}
	err = read_file(f, &data, &len);
	if (err == MLV_E_IO)
		mlv_diag_add(diags, MLV_DIAG_ERROR, no_pos, "cannot read: %s",
			     strerror(errno));
	fclose(f);
	if (err)
		return err;
	err = mlv_config_load_buffer(path, data, len, out, diags);
	free(data);
	return err;
}
