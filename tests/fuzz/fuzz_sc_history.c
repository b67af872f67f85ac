/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target for the history file's reader (daemon/runtime/
 * sc_history.c, mlv_sc_history_decode): whatever the bytes, it returns
 * without reading outside them, and what it accepts holds together: the
 * VIPs in order with terminated names, each table size and backend count
 * within its limits, every index a backend or none, every slot's former
 * owners distinct from the owner and from each other.
 *
 * Input: byte 0, then the file. With byte 0's low bit set the file's
 * trailing checksum is recomputed first, so that mutations reach the
 * checks behind it instead of all failing the checksum. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "control/tables/maglev.h"
#include "daemon/runtime/sc_history.h"
#include "tests/fuzz/fuzz_check.h"

static void check_vip(const struct mlv_sc_history_vip *v)
{
	const uint16_t none = MLV_SC_HISTORY_NONE;

	CHECK(memchr(v->name, 0, MLV_NAME_MAX) != NULL && v->name[0]);
	CHECK(v->table_size >= 1 && v->table_size <= MLV_MAGLEV_MAX_SIZE);
	CHECK(v->n_backends <= MLV_SC_HISTORY_MAX_BACKENDS);
	for (uint32_t b = 0; b < v->n_backends; b++) {
		CHECK(memchr(v->backends[b], 0, MLV_NAME_MAX) != NULL);
		CHECK(b == 0 || strcmp(v->backends[b - 1], v->backends[b]) < 0);
	}
	for (uint32_t s = 0; s < v->table_size; s++) {
		uint16_t t = v->table[s], p = v->previous[s], e = v->earlier[s];

		CHECK(t == none || t < v->n_backends);
		CHECK(p == none || (p < v->n_backends && p != t));
		CHECK(e == none || (e < v->n_backends && p != none &&
				    e != p && e != t));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mlv_sc_history h;
	char why[256];
	uint8_t *buf;
	size_t len;

	if (size < 1)
		return 0;
	len = size - 1;
	/* exactly the file's bytes: ASan sees a read past them */
	buf = malloc(len ? len : 1);
	CHECK(buf != NULL);
	memcpy(buf, data + 1, len);
	if ((data[0] & 1) && len >= 8) {
		uint64_t sum = XXH3_64bits(buf, len - 8);

		memcpy(buf + len - 8, &sum, 8);
	}
	why[0] = '\0';
	if (mlv_sc_history_decode(buf, len, &h, why, sizeof(why)) == MLV_OK) {
		for (uint32_t v = 0; v < h.n_vips; v++) {
			check_vip(&h.vips[v]);
			CHECK(v == 0 ||
			      strcmp(h.vips[v - 1].name, h.vips[v].name) < 0);
			CHECK(mlv_sc_history_find(&h, h.vips[v].name) ==
			      &h.vips[v]);
		}
		mlv_sc_history_free(&h);
	} else {
		CHECK(why[0] != '\0');   /* every refusal says why */
	}
	return 0;
}
