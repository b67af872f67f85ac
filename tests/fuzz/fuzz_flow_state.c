/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target for the flows file's reader (daemon/runtime/
 * flow_state.c, mlv_flow_state_decode): whatever the bytes, it returns
 * without reading outside them, and what it accepts holds together: its
 * counts within their limits and the buffer, every entry's slot,
 * state, time left and uid in range, the backends sorted with
 * terminated names.
 *
 * Input: byte 0, then the file. With byte 0's low bit set the file's
 * trailing checksum is recomputed first, so that mutations reach the
 * checks behind it instead of all failing the checksum. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "daemon/runtime/flow_state.h"
#include "tests/fuzz/fuzz_check.h"

static void check_accepted(const struct mlv_flow_state *st, size_t len)
{
	uint64_t total = 0;

	CHECK(st->n_workers >= 1 && st->n_workers <= MLV_MAX_WORKERS);
	CHECK(st->capacity >= 1 && st->capacity <= MLV_CT_MAX_ENTRIES &&
	      st->capacity % MLV_CT_WAYS == 0);
	CHECK(st->n_backends <= MLV_FLOW_STATE_MAX_BACKENDS);
	for (uint32_t i = 0; i < st->n_backends; i++) {
		CHECK(memchr(st->backends[i].vip, 0, MLV_NAME_MAX) != NULL);
		CHECK(memchr(st->backends[i].backend, 0, MLV_NAME_MAX) != NULL);
		CHECK(i == 0 || st->backends[i].uid > st->backends[i - 1].uid);
	}
	for (uint32_t w = 0; w < st->n_workers; w++) {
		const struct mlv_flow_state_worker *sw = &st->workers[w];

		CHECK(sw->n <= st->capacity);
		total += sw->n;
		for (uint64_t i = 0; i < sw->n; i++) {
			const struct mlv_ct_saved *s = &sw->entries[i];
			bool known = false;

			CHECK(s->slot < st->capacity);
			CHECK(s->entry.state != MLV_CT_FREE &&
			      s->entry.state < MLV_CT__NSTATES);
			CHECK(s->left_ms >= 1 &&
			      s->left_ms <= MLV_CT_MAX_TIMEOUT_MS);
			for (uint32_t k = 0; k < st->n_backends && !known; k++)
				known = st->backends[k].uid ==
					s->entry.backend_uid;
			CHECK(known);
		}
	}
	CHECK(total * sizeof(struct mlv_ct_saved) < len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mlv_flow_state st;
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
	if (mlv_flow_state_decode(buf, len, &st, why, sizeof(why)) == MLV_OK) {
		check_accepted(&st, len);
		mlv_flow_state_free(&st);
	} else {
		CHECK(why[0] != '\0');   /* every refusal says why */
	}
	return 0;
}
