/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests of the QUIC connection-ID parser: v1 and v2 server IDs read
 * from connection IDs written bit by bit here from the layout in
 * docs/forwarding.md ("QUIC connection-ID routing"), every other kind of
 * payload (long header, fixed bit clear, unknown version, too short,
 * ID 0), bounds, and the encoder against the decoder. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "dataplane/packet/quic.h"

/* A short header (fixed bit set, spin and key-phase bits set too: the
 * parser must ignore them) followed by cid[0..7] and a few bytes of
 * packet number and protected payload. */
static uint32_t short_pkt(uint8_t *out, const uint8_t cid[8])
{
	out[0] = 0x40 | 0x20 | 0x04 | 0x03;
	memcpy(out + 1, cid, 8);
	memset(out + 9, 0xEE, 7);
	return 16;
}

static void test_v1(void **state)
{
	/* version 01, then the 16-bit ID 0xBEEF = 1011 1110 1110 1111 in
	 * bits 2..17: 01|101111 10111011 11|xxxxxx */
	const uint8_t cid[8] = { 0x6F, 0xBB, 0xC0 | 0x15, 1, 2, 3, 4, 5 };
	uint8_t pkt[32];
	uint32_t id = 0;

	(void)state;
	assert_int_equal(mlv_quic_server_id(pkt, short_pkt(pkt, cid), &id),
			 MLV_QUIC_ID);
	assert_int_equal(id, 0xBEEF);
	/* the smallest and the largest v1 IDs */
	{
		const uint8_t one[8] = { 0x40, 0x00, 0x40, 0, 0, 0, 0, 0 };
		const uint8_t max[8] = { 0x7F, 0xFF, 0xC0, 0, 0, 0, 0, 0 };

		assert_int_equal(mlv_quic_server_id(pkt, short_pkt(pkt, one), &id),
				 MLV_QUIC_ID);
		assert_int_equal(id, 1);
		assert_int_equal(mlv_quic_server_id(pkt, short_pkt(pkt, max), &id),
				 MLV_QUIC_ID);
		assert_int_equal(id, 0xFFFF);
	}
}

static void test_v2(void **state)
{
	/* version 10, six free bits, then bytes 1..3 big-endian */
	const uint8_t cid[8] = { 0x80 | 0x2A, 0x12, 0x34, 0x56, 9, 9, 9, 9 };
	const uint8_t max[8] = { 0xBF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0 };
	uint8_t pkt[32];
	uint32_t id = 0;

	(void)state;
	assert_int_equal(mlv_quic_server_id(pkt, short_pkt(pkt, cid), &id),
			 MLV_QUIC_ID);
	assert_int_equal(id, 0x123456);
	assert_int_equal(mlv_quic_server_id(pkt, short_pkt(pkt, max), &id),
			 MLV_QUIC_ID);
	assert_int_equal(id, 0xFFFFFF);
}

static void test_no_id(void **state)
{
	const uint8_t v0[8] = { 0x3F, 0xFF, 0xFF, 0xFF, 1, 1, 1, 1 };
	const uint8_t v3[8] = { 0xFF, 0x12, 0x34, 0x56, 1, 1, 1, 1 };
	const uint8_t zero1[8] = { 0x40, 0x00, 0x3F, 7, 7, 7, 7, 7 };
	const uint8_t zero2[8] = { 0xBF, 0x00, 0x00, 0x00, 7, 7, 7, 7 };
	uint8_t pkt[32];
	uint32_t id = 77;

	(void)state;
	assert_int_equal(mlv_quic_server_id(pkt, short_pkt(pkt, v0), &id),
			 MLV_QUIC_NO_ID);
	assert_int_equal(mlv_quic_server_id(pkt, short_pkt(pkt, v3), &id),
			 MLV_QUIC_NO_ID);
	assert_int_equal(mlv_quic_server_id(pkt, short_pkt(pkt, zero1), &id),
			 MLV_QUIC_NO_ID);
	assert_int_equal(mlv_quic_server_id(pkt, short_pkt(pkt, zero2), &id),
			 MLV_QUIC_NO_ID);
	assert_int_equal(id, 77);   /* untouched */
}

/* 1 + 8 bytes are needed; each shorter length is NO_ID, read within
 * bounds (the buffer ends where len says: a heap block of exactly len
 * bytes, so that a sanitizer build sees any overread). */
static void test_too_short(void **state)
{
	const uint8_t cid[8] = { 0x80, 0x00, 0x00, 0x05, 1, 1, 1, 1 };
	uint8_t full[16];
	uint32_t id = 0;

	(void)state;
	short_pkt(full, cid);
	for (uint32_t len = 1; len <= 9; len++) {
		uint8_t *p = malloc(len);

		assert_non_null(p);
		memcpy(p, full, len);
		assert_int_equal(mlv_quic_server_id(p, len, &id),
				 len == 9 ? MLV_QUIC_ID : MLV_QUIC_NO_ID);
		free(p);
	}
	assert_int_equal(id, 5);
	assert_int_equal(mlv_quic_server_id(full, 0, &id), MLV_QUIC_NOT_SHORT);
}

static void test_not_short(void **state)
{
	const uint8_t cid[8] = { 0x80, 0x00, 0x00, 0x05, 1, 1, 1, 1 };
	uint8_t pkt[32];
	uint32_t id = 0;

	(void)state;
	short_pkt(pkt, cid);
	/* long header (Initial, Handshake, ...): the client's choice */
	pkt[0] = 0xC0;
	assert_int_equal(mlv_quic_server_id(pkt, 16, &id), MLV_QUIC_NOT_SHORT);
	pkt[0] = 0xE0;
	assert_int_equal(mlv_quic_server_id(pkt, 16, &id), MLV_QUIC_NOT_SHORT);
	/* the long-header bit alone, fixed bit clear */
	pkt[0] = 0x80;
	assert_int_equal(mlv_quic_server_id(pkt, 16, &id), MLV_QUIC_NOT_SHORT);
	/* fixed bit clear: not QUIC v1 (e.g. DNS, whose first byte is an ID) */
	pkt[0] = 0x3F;
	assert_int_equal(mlv_quic_server_id(pkt, 16, &id), MLV_QUIC_NOT_SHORT);
	pkt[0] = 0x00;
	assert_int_equal(mlv_quic_server_id(pkt, 16, &id), MLV_QUIC_NOT_SHORT);
	assert_int_equal(id, 0);
}

static void test_encode_round_trip(void **state)
{
	static const uint32_t ids[] = { 1, 2, 3, 0xFF, 0x100, 0x3FF, 0x400,
					0xFFFF, 0x10000, 0xABCDEF, 0xFFFFFF };
	uint8_t pkt[32];
	uint32_t id;

	(void)state;
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		for (unsigned v = MLV_QUIC_CID_V1; v <= MLV_QUIC_CID_V2; v++) {
			uint8_t cid[8];
			int rc;

			/* the server's own bits, all ones: encoding keeps
			 * those outside the ID */
			memset(cid, 0xFF, sizeof(cid));
			rc = mlv_quic_cid_encode(cid, v, ids[i]);
			if (v == MLV_QUIC_CID_V1 && ids[i] > 0xFFFF) {
				assert_int_equal(rc, -1);
				continue;
			}
			assert_int_equal(rc, 0);
			assert_int_equal(cid[0] >> 6, v);
			assert_memory_equal(cid + 4, "\xFF\xFF\xFF\xFF", 4);
			if (v == MLV_QUIC_CID_V1)
				assert_int_equal(cid[2] & 0x3F, 0x3F);
			else
				assert_int_equal(cid[0] & 0x3F, 0x3F);
			id = 0;
			assert_int_equal(mlv_quic_server_id(pkt, short_pkt(pkt, cid),
							    &id), MLV_QUIC_ID);
			assert_int_equal(id, ids[i]);
		}
	}
	{
		uint8_t cid[8] = { 0 };

		assert_int_equal(mlv_quic_cid_encode(cid, MLV_QUIC_CID_V1, 0), -1);
		assert_int_equal(mlv_quic_cid_encode(cid, MLV_QUIC_CID_V2, 0), -1);
		assert_int_equal(mlv_quic_cid_encode(cid, MLV_QUIC_CID_V2,
						     0x1000000), -1);
		assert_int_equal(mlv_quic_cid_encode(cid, 3, 5), -1);
		assert_int_equal(mlv_quic_cid_encode(cid, 0, 5), -1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v1),
		cmocka_unit_test(test_v2),
		cmocka_unit_test(test_no_id),
		cmocka_unit_test(test_too_short),
		cmocka_unit_test(test_not_short),
		cmocka_unit_test(test_encode_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
