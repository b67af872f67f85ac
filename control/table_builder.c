/* The table-builder dispatcher: input validation and name order shared by
 * every builder, the ops look-up, and the fingerprint (docs/maglev.md
 * format, so a fingerprint means the same thing whichever builder filled
 * the table). */
#include "table_builder.h"

#include <stdlib.h>
#include <string.h>

#include "siphash.h"

/* docs/maglev.md, "Keys": h3 is the fingerprint key. */
static const struct mlv_siphash_key key_fingerprint = { {
	'm', 'a', 'g', 'l', 'e', 'v', 'd', '-', 'h', '3', '-', 'k', 'e', 'y',
	'-', '0' } };

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
struct named {
	const char *name;
	uint32_t index;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->name,
		      ((const struct named *)b)->name);
}

/* order[k] = caller index of the k-th name in strcmp order. MLV_E_INVAL
 * on a duplicate name. */
static enum mlv_err name_order(const struct mlv_table_backend *backends,
			       uint32_t n, uint32_t *order)
{
	struct named *tmp = malloc((n ? n : 1) * sizeof(*tmp));
	enum mlv_err err = MLV_OK;

	if (!tmp)
		return MLV_E_NOMEM;
	for (uint32_t i = 0; i < n; i++)
		tmp[i] = (struct named){ backends[i].name, i };
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

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

enum mlv_err mlv_table_fingerprint(const struct mlv_table_backend *backends,
				   const uint32_t *by_name_order, uint32_t n,
				   uint32_t m, const uint16_t *slots,
				   uint64_t *out)
{
	struct mlv_siphash_state st;
	uint32_t *rank = calloc(n ? n : 1, sizeof(*rank));
	uint32_t owners = 0;
	bool stray = false, rank_is_index;
	uint8_t buf[1024];

	if (!rank)
		return MLV_E_NOMEM;
	for (uint32_t j = 0; j < m; j++) {
		if (slots[j] < n)
			rank[slots[j]] = 1;
		stray |= slots[j] >= n && slots[j] != MLV_MAGLEV_NO_BACKEND;
	}
	/* "owns a slot" flags -> ranks among the owners, in name order */
	rank_is_index = !stray;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t *r = &rank[by_name_order[k]];

		rank_is_index &= by_name_order[k] == k && *r != 0;
		*r = *r ? owners++ : MLV_MAGLEV_NO_BACKEND;
	}
	mlv_siphash24_init(&st, &key_fingerprint);
	put_le32(buf, m);
	put_le32(buf + 4, owners);
	mlv_siphash24_update(&st, buf, 8);
	for (uint32_t k = 0; k < n; k++) {
		const char *name = backends[by_name_order[k]].name;
		size_t len = strlen(name);

		if (rank[by_name_order[k]] == MLV_MAGLEV_NO_BACKEND)
			continue;
		put_le32(buf, (uint32_t)len);
		mlv_siphash24_update(&st, buf, 4);
		mlv_siphash24_update(&st, name, len);
	}
	/* The usual case (the generation builder passes backends in name
	 * order, all owning slots): every slot's rank is its value, so on a
	 * little-endian host the array already is the stream's u16le ranks.
	 * Translating it slot by slot cost more than the hash itself
	 * (perf of 1000 table builds at M = 65537: 7 % against 4.5 %). */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	rank_is_index = false;
#endif
	if (rank_is_index)
		mlv_siphash24_update(&st, slots, (size_t)m * sizeof(*slots));
	for (uint32_t j = rank_is_index ? m : 0; j < m;) {
		uint32_t end = m - j > sizeof(buf) / 2 ? j + sizeof(buf) / 2 : m;
		size_t used = 0;

		for (; j < end; j++) {
			uint32_t r = slots[j] < n ? rank[slots[j]]
						  : MLV_MAGLEV_NO_BACKEND;

			buf[used++] = (uint8_t)r;
			buf[used++] = (uint8_t)(r >> 8);
		}
		mlv_siphash24_update(&st, buf, used);
	}
	*out = mlv_siphash24_final(&st);
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
