/* SPDX-License-Identifier: BSD-3-Clause */
/* Backends for the table-builder tests: n backends named "<prefix><i>",
 * all of one weight, in index order. The builders take different backend
 * structs (struct mlv_maglev_backend, struct mlv_table_backend), both
 * with .name and .weight, so the fleet is declared for one of them:
 *
 *   FLEET_DECLARE(struct mlv_table_backend, 100)
 *
 * declares struct fleet { be, names, n }, fleet_new(n, prefix) and
 * fleet_free(&f). Include after <cmocka.h>. */
#ifndef MLV_TEST_FLEET_H
#define MLV_TEST_FLEET_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FLEET_NAME_LEN 24

#define FLEET_DECLARE(BACKEND, WEIGHT)                                      \
	struct fleet {                                                      \
		BACKEND *be;                                                \
		char (*names)[FLEET_NAME_LEN];                              \
		uint32_t n;                                                 \
	};                                                                  \
                                                                            \
	static struct fleet fleet_new(uint32_t n, const char *prefix)      \
	{                                                                   \
		struct fleet f = { .n = n };                                \
                                                                            \
		f.be = calloc(n ? n : 1, sizeof(*f.be));                    \
		f.names = calloc(n ? n : 1, sizeof(*f.names));              \
		assert_non_null(f.be);                                      \
		assert_non_null(f.names);                                   \
		for (uint32_t i = 0; i < n; i++) {                          \
			snprintf(f.names[i], FLEET_NAME_LEN, "%s%u", prefix, i); \
			f.be[i].name = f.names[i];                          \
			f.be[i].weight = (WEIGHT);                          \
		}                                                           \
		return f;                                                   \
	}                                                                   \
                                                                            \
	static void fleet_free(struct fleet *f)                             \
	{                                                                   \
		free(f->be);                                                \
		free(f->names);                                             \
	}

#endif
