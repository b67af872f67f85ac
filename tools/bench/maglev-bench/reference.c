/* SPDX-License-Identifier: BSD-3-Clause */
/* Deliberately plain: the permutation is computed as the paper writes it,
 * permutation[i][j] = (offset + j * skip) mod M, with a 64-bit modulo per
 * probe, an int32 entry[] initialised to -1 and one credit check per backend
 * per round. The keys are restated from docs/maglev.md rather than taken
 * from control/tables/maglev.c, so the benchmark also checks the documented format.
 */
#include "tools/bench/maglev-bench/reference.h"

#include <stdlib.h>
#include <string.h>

#include "control/base/siphash.h"

/* docs/maglev.md, "Keys": ASCII "maglevd-h1-key-0" and "maglevd-h2-key-0". */
static const struct mlv_siphash_key ref_key_offset = {
	{ 'm', 'a', 'g', 'l', 'e', 'v', 'd', '-', 'h', '1', '-', 'k', 'e', 'y',
	  '-', '0' } };
static const struct mlv_siphash_key ref_key_skip = {
	{ 'm', 'a', 'g', 'l', 'e', 'v', 'd', '-', 'h', '2', '-', 'k', 'e', 'y',
	  '-', '0' } };

struct ref_backend {
	const char *name;
	uint32_t index;     /* position in the caller's array */
	uint32_t weight;
	uint64_t offset;
	uint64_t skip;
	uint64_t next;      /* j of the next permutation entry to try */
	uint64_t credit;
};

static int ref_by_name(const void *a, const void *b)
{
	const struct ref_backend *x = a, *y = b;

	return strcmp(x->name, y->name);
}

enum mlv_err mlv_ref_maglev_build(const struct mlv_maglev_backend *backends,
				  uint32_t n, uint32_t m, uint16_t *slots)
{
	struct ref_backend *be = NULL;
	int32_t *entry = NULL;
	uint32_t max_weight = 0;
	uint64_t filled = 0;
	enum mlv_err err = MLV_E_INVAL;

	if (mlv_maglev_check_size(m) != MLV_OK || slots == NULL ||
	    n > MLV_MAGLEV_MAX_BACKENDS || (n > 0 && backends == NULL))
		return MLV_E_INVAL;
	err = MLV_E_NOMEM;
	be = calloc(n ? n : 1, sizeof(*be));
	entry = malloc((size_t)m * sizeof(*entry));
	if (be == NULL || entry == NULL)
		goto out;

	err = MLV_E_INVAL;
	for (uint32_t i = 0; i < n; i++) {
		const char *name = backends[i].name;

		if (name == NULL || name[0] == '\0' ||
		    backends[i].weight > MLV_MAGLEV_MAX_WEIGHT)
			goto out;
		be[i].name = name;
		be[i].index = i;
		be[i].weight = backends[i].weight;
		be[i].offset = mlv_siphash24(&ref_key_offset, name,
					     strlen(name)) % m;
		be[i].skip = mlv_siphash24(&ref_key_skip, name,
					   strlen(name)) % (m - 1) + 1;
		if (be[i].weight > max_weight)
			max_weight = be[i].weight;
	}
	qsort(be, n, sizeof(*be), ref_by_name);
	for (uint32_t i = 1; i < n; i++)
		if (strcmp(be[i - 1].name, be[i].name) == 0)
			goto out;

	for (uint32_t j = 0; j < m; j++)
		entry[j] = -1;
	/* docs/maglev.md, "Turn order": credit in half-turns, starting at
	 * half a turn, so turn counts are rounded to nearest, not down. */
	for (uint32_t i = 0; i < n; i++)
		be[i].credit = max_weight;
	if (max_weight > 0) {
		for (;;) {
			for (uint32_t i = 0; i < n; i++) {
				uint64_t c;

				if (be[i].weight == 0)
					continue;
				be[i].credit += 2 * (uint64_t)be[i].weight;
				if (be[i].credit < 2 * (uint64_t)max_weight)
					continue;
				be[i].credit -= 2 * (uint64_t)max_weight;
				c = (be[i].offset + be[i].next * be[i].skip) % m;
				while (entry[c] >= 0) {
					be[i].next++;
					c = (be[i].offset +
					     be[i].next * be[i].skip) % m;
				}
				entry[c] = (int32_t)be[i].index;
				be[i].next++;
				if (++filled == m)
					goto done;
			}
		}
	}
done:
	for (uint32_t j = 0; j < m; j++)
		slots[j] = entry[j] < 0 ? MLV_MAGLEV_NO_BACKEND
					: (uint16_t)entry[j];
	err = MLV_OK;
out:
	free(entry);
	free(be);
	return err;
}
