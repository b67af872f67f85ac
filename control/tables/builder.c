/* SPDX-License-Identifier: BSD-3-Clause */
/* The table-builder dispatcher: input validation and name order shared by
 * every builder, the ops look-up, and the fingerprint (docs/maglev.md
 * format, so a fingerprint means the same thing whichever builder filled
 * the table): the fingerprint itself is mlv_maglev_fingerprint. */
#include "control/tables/builder.h"

#include <stdlib.h>
#include <string.h>

static const struct mlv_table_ops *const builders[MLV_TABLE__COUNT] = {
	[MLV_TABLE_MAGLEV] = &mlv_table_maglev_ops,
	[MLV_TABLE_RENDEZVOUS] = &mlv_table_rendezvous_ops,
	[MLV_TABLE_RING] = &mlv_table_ring_ops,
};

const struct mlv_table_ops *mlv_table_ops_of(enum mlv_table_kind kind)
{
	if ((unsigned)kind >= MLV_TABLE__COUNT)
		return NULL;
	return builders[kind];
}

const char *mlv_table_kind_name(enum mlv_table_kind kind)
{
	static const char *const names[MLV_TABLE__COUNT] = {
#define MLV_TABLE_KIND_NAME(name, text) [MLV_TABLE_##name] = text,
		MLV_TABLE_KINDS(MLV_TABLE_KIND_NAME)
#undef MLV_TABLE_KIND_NAME
	};

	return (unsigned)kind < MLV_TABLE__COUNT ? names[kind] : "unknown";
}

/* qsort_r is a GNU extension with an argument order BSD does not share;
 * sorting (name, index) pairs keeps this portable. */

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct mlv_maglev_named *)a)->name,
		      ((const struct mlv_maglev_named *)b)->name);
}

/* order[k] = caller index of the k-th name in strcmp order. MLV_E_INVAL
 * on a duplicate name. */
static enum mlv_err name_order(const struct mlv_table_backend *backends,
			       uint32_t n, uint32_t *order)
{
	struct mlv_maglev_named *tmp = malloc((n ? n : 1) * sizeof(*tmp));
	enum mlv_err err = MLV_OK;

	if (!tmp)
		return MLV_E_NOMEM;
	for (uint32_t i = 0; i < n; i++)
		tmp[i] = (struct mlv_maglev_named){ backends[i].name, i };
	qsort(tmp, n, sizeof(*tmp), by_name);
	for (uint32_t k = 0; k < n; k++) {
		if (k > 0 && strcmp(tmp[k - 1].name, tmp[k].name) == 0) {
			err = MLV_E_INVAL;
			break;
		}
		order[k] = tmp[k].index;
	}
	free(tmp);
	return err;
}

enum mlv_err mlv_table_fingerprint(const struct mlv_table_backend *backends,
				   const uint32_t *by_name_order, uint32_t n,
				   uint32_t m, const uint16_t *slots,
				   uint64_t *out)
{
	struct mlv_maglev_named *named = malloc((n ? n : 1) * sizeof(*named));
	uint32_t *rank = malloc((n ? n : 1) * sizeof(*rank));

	if (!named || !rank) {
		free(named);
		free(rank);
		return MLV_E_NOMEM;
	}
	for (uint32_t k = 0; k < n; k++)
		named[k] = (struct mlv_maglev_named){
			backends[by_name_order[k]].name, by_name_order[k] };
	*out = mlv_maglev_fingerprint(named, n, m, slots, rank);
	free(named);
	free(rank);
	return MLV_OK;
}

static bool valid_input(const struct mlv_table_spec *spec,
			const struct mlv_table_backend *backends, uint32_t n,
			const uint16_t *first)
{
	if (!spec || !first || (n > 0 && !backends) ||
	    n > MLV_MAGLEV_MAX_BACKENDS || !mlv_table_ops_of(spec->kind) ||
	    mlv_maglev_check_size(spec->size) != MLV_OK)
		return false;
	if (spec->kind == MLV_TABLE_RING &&
	    (spec->vnodes < 1 || spec->vnodes > MLV_RING_MAX_VNODES))
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (!backends[i].name || backends[i].name[0] == '\0' ||
		    backends[i].weight > MLV_MAGLEV_MAX_WEIGHT)
			return false;
	return true;
}

bool mlv_table_second_separable(enum mlv_table_kind kind)
{
	const struct mlv_table_ops *ops = mlv_table_ops_of(kind);

	return ops && ops->second;
}

enum mlv_err mlv_table_build_second(const struct mlv_table_spec *spec,
				    const struct mlv_table_backend *backends,
				    uint32_t n, const uint16_t *first,
				    uint16_t *second)
{
	struct mlv_table_input in = {
		.backends = backends, .n = n, .spec = spec,
	};
	uint32_t *order;
	enum mlv_err err;

	if (!valid_input(spec, backends, n, first) || !second ||
	    !mlv_table_second_separable(spec->kind))
		return MLV_E_INVAL;
	order = malloc((n ? n : 1) * sizeof(*order));
	if (!order)
		return MLV_E_NOMEM;
	err = name_order(backends, n, order);
	if (!err) {
		in.by_name = order;
		err = mlv_table_ops_of(spec->kind)->second(&in, first, second);
	}
	free(order);
	return err;
}

enum mlv_err mlv_table_build(const struct mlv_table_spec *spec,
			     const struct mlv_table_backend *backends,
			     uint32_t n, uint16_t *first, uint16_t *second,
			     uint64_t *fingerprint)
{
	struct mlv_table_input in = {
		.backends = backends, .n = n, .spec = spec,
	};
	uint32_t *order;
	enum mlv_err err;

	if (!valid_input(spec, backends, n, first))
		return MLV_E_INVAL;
	order = malloc((n ? n : 1) * sizeof(*order));
	if (!order)
		return MLV_E_NOMEM;
	err = name_order(backends, n, order);
	if (err)
		goto out;
	in.by_name = order;
	err = mlv_table_ops_of(spec->kind)->build(&in, first, second);
	if (err)
		goto out;
	if (fingerprint)
		err = mlv_table_fingerprint(backends, order, n, spec->size,
					    first, fingerprint);
out:
	free(order);
	return err;
}
