/* SPDX-License-Identifier: BSD-3-Clause */
/* Look-ups in a loaded config by name, and the names of the forwarding
 * methods (the schema's enum table and the reverse look-up). */
#include "control/config/config.h"

#include <stdlib.h>
#include <string.h>

#include "control/config/schema_internal.h"

const struct mlv_cfg_enum mlv_cfg_forwarding_names[] = {
	{ "ipip", MLV_FWD_IPIP },
	{ "gue", MLV_FWD_GUE },
	{ "l2dsr", MLV_FWD_L2DSR },
	{ NULL, 0 },
};

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
