/* SPDX-License-Identifier: BSD-3-Clause */
/* MSS clamping (dataplane/packet/mss.h): the option walk over real
 * option layouts, what it must leave alone, and the incremental checksum
 * checked against a full checksum computed here from scratch over the
 * pseudo-header and segment, for IPv4 and IPv6. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "dataplane/packet/mss.h"

/* ---- an independent checksum (RFC 1071, byte by byte) ---- */

static uint32_t sum_bytes(uint32_t s, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		s += (i & 1) ? p[i] : (uint32_t)p[i] << 8;
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static const uint8_t src4[4] = { 198, 18, 0, 1 };
static const uint8_t dst4[4] = { 192, 0, 2, 10 };
static const uint8_t src6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0xc1, [15] = 1 };
static const uint8_t dst6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x10 };

static uint32_t pseudo(int family, uint32_t len)
{
	uint32_t s = 0;

	if (family == 4) {
		s = sum_bytes(s, src4, 4);
		s = sum_bytes(s, dst4, 4);
	} else {
		s = sum_bytes(s, src6, 16);
		s = sum_bytes(s, dst6, 16);
	}
	return s + 6 + (len >> 16) + (len & 0xffff);
}

/* Whether the segment's checksum verifies (sums to 0xffff). */
static int csum_ok(int family, const uint8_t *seg, uint32_t len)
{
	return fold(sum_bytes(pseudo(family, len), seg, len)) == 0xffff;
}

static void csum_fill(int family, uint8_t *seg, uint32_t len)
{
	uint16_t c;

	seg[16] = seg[17] = 0;
	c = (uint16_t)~fold(sum_bytes(pseudo(family, len), seg, len));
	seg[16] = (uint8_t)(c >> 8);
	seg[17] = (uint8_t)c;
}

/* A SYN: 20-byte header, then opts (padded with EOL to a multiple of 4),
 * then payload_len bytes; checksum filled. Returns the segment length. */
static uint32_t syn(int family, uint8_t *seg, const uint8_t *opts,
		    uint32_t opts_len, uint32_t payload_len)
{
	uint32_t olen = (opts_len + 3) & ~3u;
	uint32_t len = 20 + olen + payload_len;

	memset(seg, 0, len);
	seg[0] = 0x9c; seg[1] = 0x40;         /* 40000 */
	seg[2] = 0x00; seg[3] = 0x50;         /* 80 */
	seg[4] = 0x12; seg[5] = 0x34; seg[6] = 0x56; seg[7] = 0x78;
	seg[12] = (uint8_t)((20 + olen) / 4 << 4);
	seg[13] = 0x02;                       /* SYN */
	seg[14] = 0xff; seg[15] = 0xff;
	if (opts_len)
		memcpy(seg + 20, opts, opts_len);
	for (uint32_t i = 0; i < payload_len; i++)
		seg[20 + olen + i] = (uint8_t)(i * 7 + 3);
	csum_fill(family, seg, len);
	return len;
}

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

/* Linux's SYN: MSS, SACK-permitted, timestamps, NOP, window scale. */
static const uint8_t linux_opts[] = {
	2, 4, 0x05, 0xb4,                    /* MSS 1460 */
	4, 2,                                /* SACK permitted */
	8, 10, 1, 2, 3, 4, 0, 0, 0, 0,       /* timestamps */
	1,                                   /* NOP */
	3, 3, 7,                             /* window scale 7 */
};

static void test_linux_syn_clamped(void **state)
{
	uint8_t seg[128], before[128];
	uint32_t len = syn(4, seg, linux_opts, sizeof(linux_opts), 0);
	(void)state;

	memcpy(before, seg, len);
	assert_true(csum_ok(4, seg, len));
	assert_int_equal(mlv_mss_clamp(seg, len, 1440), 1);
	assert_int_equal(rd16(seg + 22), 1440);
	assert_true(csum_ok(4, seg, len));
	/* only the MSS value and the checksum changed */
	for (uint32_t i = 0; i < len; i++)
		if (i != 16 && i != 17 && i != 22 && i != 23)
			assert_int_equal(seg[i], before[i]);
	/* a second pass finds nothing above the clamp */
	assert_int_equal(mlv_mss_clamp(seg, len, 1440), 0);
}

/* Options before the MSS, including a single NOP that puts the MSS
 * value at an odd offset (its bytes straddle two checksum words). */
static void test_options_before_mss(void **state)
{
	static const uint8_t even[] = {
		1, 1, 4, 2, 8, 10, 9, 9, 9, 9, 8, 8, 8, 8,   /* NOP NOP SACKP TS */
		3, 3, 9, 1,                                   /* WS, NOP */
		2, 4, 0x23, 0x28,                             /* MSS 9000 */
	};
	static const uint8_t odd[] = {
		1, 2, 4, 0x05, 0xb4, 1, 1, 1,                 /* NOP MSS NOPs */
	};
	uint8_t seg[128];
	uint32_t len;
	(void)state;

	len = syn(4, seg, even, sizeof(even), 0);
	assert_int_equal(mlv_mss_clamp(seg, len, 1440), 1);
	assert_int_equal(rd16(seg + 20 + 20), 1440);
	assert_true(csum_ok(4, seg, len));

	for (uint32_t payload = 0; payload < 4; payload++) {
		len = syn(4, seg, odd, sizeof(odd), payload);
		assert_true(csum_ok(4, seg, len));
		assert_int_equal(mlv_mss_clamp(seg, len, 1380), 1);
		assert_int_equal(rd16(seg + 23), 1380);
		assert_true(csum_ok(4, seg, len));
	}
}

static void test_ipv6(void **state)
{
	uint8_t seg[256];
	uint32_t len = syn(6, seg, linux_opts, sizeof(linux_opts), 100);
	(void)state;

	assert_true(csum_ok(6, seg, len));
	assert_int_equal(mlv_mss_clamp(seg, len, 1420), 1);
	assert_int_equal(rd16(seg + 22), 1420);
	assert_true(csum_ok(6, seg, len));
}

/* Every checksum value and MSS value pair the update can meet: the full
 * checksum after the rewrite still verifies. */
static void test_many_checksums(void **state)
{
	uint8_t seg[64];
	(void)state;

	for (uint32_t mss = 537; mss < 65535; mss += 251) {
		for (uint32_t seq = 0; seq < 0x10000; seq += 4099) {
			uint8_t opts[] = { 2, 4, (uint8_t)(mss >> 8), (uint8_t)mss };
			uint32_t len = syn(4, seg, opts, sizeof(opts), 0);

			/* vary the data, and so the checksum */
			seg[6] = (uint8_t)(seq >> 8);
			seg[7] = (uint8_t)seq;
			csum_fill(4, seg, len);
			assert_int_equal(mlv_mss_clamp(seg, len, 536), 1);
			assert_int_equal(rd16(seg + 22), 536);
			assert_true(csum_ok(4, seg, len));
		}
	}
}

/* The update preserves the checksum relative to the data: a wrong one
 * stays wrong by the same amount, an unfilled (offloaded) one stays
 * what the device completes. */
static void test_wrong_checksum_stays_relative(void **state)
{
	uint8_t seg[64];
	uint32_t len = syn(4, seg, linux_opts, sizeof(linux_opts), 0);
	uint32_t before, after;
	(void)state;

	seg[17] ^= 0x5a;
	before = fold(sum_bytes(pseudo(4, len), seg, len));
	assert_int_equal(mlv_mss_clamp(seg, len, 1000), 1);
	after = fold(sum_bytes(pseudo(4, len), seg, len));
	assert_int_equal(before, after);
}

static void test_untouched(void **state)
{
	static const uint8_t no_mss[] = { 1, 1, 4, 2, 1, 3, 3, 7 };
	static const uint8_t low[] = { 2, 4, 0x05, 0x00 };          /* 1280 */
	static const uint8_t equal[] = { 2, 4, 0x05, 0xa0 };        /* 1440 */
	static const uint8_t bad_len[] = { 2, 3, 0x05, 0xb4 };      /* not MSS */
	static const uint8_t after_eol[] = { 0, 0, 0, 0, 2, 4, 0x05, 0xb4 };
	const struct { const uint8_t *o; uint32_t n; } cases[] = {
		{ no_mss, sizeof(no_mss) }, { low, sizeof(low) },
		{ equal, sizeof(equal) }, { bad_len, sizeof(bad_len) },
		{ after_eol, sizeof(after_eol) }, { NULL, 0 },
	};
	uint8_t seg[64], before[64];
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t len = syn(4, seg, cases[i].o, cases[i].n, 5);

		memcpy(before, seg, len);
		assert_int_equal(mlv_mss_clamp(seg, len, 1440), 0);
		assert_memory_equal(seg, before, len);
	}
}

/* Malformed lists change nothing, even with an MSS option before the
 * fault; nothing is read beyond the data offset or room. */
static void test_malformed(void **state)
{
	static const uint8_t len0[] = { 2, 4, 0x05, 0xb4, 8, 0, 1, 1 };
	static const uint8_t len1[] = { 2, 4, 0x05, 0xb4, 4, 1, 1, 1 };
	static const uint8_t past[] = { 2, 4, 0x05, 0xb4, 8, 10, 1, 1 };
	static const uint8_t no_len[] = { 1, 1, 1, 2 };              /* kind last */
	static const uint8_t mss_cut[] = { 1, 1, 2, 4 };             /* value past doff */
	const struct { const uint8_t *o; uint32_t n; } cases[] = {
		{ len0, sizeof(len0) }, { len1, sizeof(len1) },
		{ past, sizeof(past) }, { no_len, sizeof(no_len) },
		{ mss_cut, sizeof(mss_cut) },
	};
	uint8_t seg[64], before[64];
	uint32_t len;
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		len = syn(4, seg, cases[i].o, cases[i].n, 8);
		memcpy(before, seg, len);
		assert_int_equal(mlv_mss_clamp(seg, len, 1000), 0);
		assert_memory_equal(seg, before, len);
	}
	/* data offset beyond room, or below 20 */
	len = syn(4, seg, linux_opts, sizeof(linux_opts), 0);
	memcpy(before, seg, len);
	assert_int_equal(mlv_mss_clamp(seg, len - 1, 1000), 0);
	assert_int_equal(mlv_mss_clamp(seg, 19, 1000), 0);
	seg[12] = 4 << 4;
	assert_int_equal(mlv_mss_clamp(seg, len, 1000), 0);
	seg[12] = before[12];
	assert_memory_equal(seg, before, len);
}

/* Two MSS options: the receiver may use either, so both are lowered. */
static void test_two_mss_options(void **state)
{
	static const uint8_t two[] = { 2, 4, 0x05, 0xb4, 1, 2, 4, 0x23, 0x28 };
	uint8_t seg[64];
	uint32_t len = syn(6, seg, two, sizeof(two), 0);
	(void)state;

	assert_int_equal(mlv_mss_clamp(seg, len, 1400), 2);
	assert_int_equal(rd16(seg + 22), 1400);
	assert_int_equal(rd16(seg + 27), 1400);
	assert_true(csum_ok(6, seg, len));
}

static void test_update16(void **state)
{
	(void)state;
	/* RFC 1624 section 4's example: HC 0xdd2f, m 0x5555 -> m' 0x3285 */
	assert_int_equal(mlv_csum_update16(0xdd2f, 0x5555, 0x3285), 0x0000);
	/* no change, no effect (other than -0 folding) */
	assert_int_equal(mlv_csum_update16(0x1234, 0xabcd, 0xabcd), 0x1234);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linux_syn_clamped),
		cmocka_unit_test(test_options_before_mss),
		cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_many_checksums),
		cmocka_unit_test(test_wrong_checksum_stays_relative),
		cmocka_unit_test(test_untouched),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_two_mss_options),
		cmocka_unit_test(test_update16),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
