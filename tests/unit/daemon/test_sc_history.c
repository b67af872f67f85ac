/* SPDX-License-Identifier: BSD-3-Clause */
/* The history file (daemon/runtime/sc_history.h): what encode writes,
 * decode reads back field for field; the bytes are where the format says
 * (the header and the first VIP record read here by hand, offsets worked
 * out from the format's text); and decode refuses, with a reason and
 * without crashing, every file cut short, every byte flipped (the
 * checksum), another version, and hostile values behind a correct
 * checksum: a VIP count the bytes cannot hold, a table size out of range,
 * an index past the backends, a former owner that is the owner or
 * repeats, an earlier owner without a previous one, names without their
 * NUL or out of order, padding that is not zero, bytes after the last
 * record. save and load go through a checked directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <xxhash.h>

#include "daemon/runtime/sc_history.h"

#define N MLV_SC_HISTORY_NONE

static const char names_a[3][MLV_NAME_MAX] = { "be1", "be2", "be3" };
static const char names_b[2][MLV_NAME_MAX] = { "d1", "d2" };
/* VIP "dns": 5 slots; VIP "web": 7 slots (7 x 3 x 2 = 42 bytes of
 * arrays, padded to 48) */
static const uint16_t ta[7] = { 0, 1, 2, 0, 1, 2, 0 };
static const uint16_t pa[7] = { 1, N, 0, 2, N, 1, 1 };
static const uint16_t ea[7] = { 2, N, N, 1, N, 0, N };
static const uint16_t tb[5] = { 0, 1, 0, 1, N };
static const uint16_t pb[5] = { 1, N, N, 0, 0 };
static const uint16_t eb[5] = { N, N, N, N, 1 };

static void sample(struct mlv_sc_history *h,
		   struct mlv_sc_history_vip *v)
{
	memset(h, 0, sizeof(*h));
	memset(v, 0, 2 * sizeof(*v));
	snprintf(v[0].name, sizeof(v[0].name), "dns");
	v[0].table_size = 5;
	v[0].n_backends = 2;
	v[0].backends = names_b;
	v[0].table = tb;
	v[0].previous = pb;
	v[0].earlier = eb;
	snprintf(v[1].name, sizeof(v[1].name), "web");
	v[1].table_size = 7;
	v[1].n_backends = 3;
	v[1].window_end_unix_ms = 1765000060000ull;
	v[1].backends = names_a;
	v[1].table = ta;
	v[1].previous = pa;
	v[1].earlier = ea;
	h->saved_unix_ms = 1765000000123ull;
	h->n_vips = 2;
	h->vips = v;
}

/* The sample's bytes, by hand: header 32; dns: 80 + 2 x 64 + 30 = 238,
 * padded to 240; web: 80 + 3 x 64 + 42 = 314, padded to 320; trailer
 * 8. */
#define DNS_AT 32u
#define WEB_AT (32u + 240u)
#define SAMPLE_LEN (32u + 240u + 320u + 8u)

static void encode_sample(uint8_t **buf, size_t *len)
{
	struct mlv_sc_history h;
	struct mlv_sc_history_vip v[2];

	sample(&h, v);
	assert_int_equal(mlv_sc_history_encode(&h, (void **)buf, len), MLV_OK);
}

static uint32_t u32_at(const uint8_t *p, size_t off)
{
	uint32_t x;

	memcpy(&x, p + off, sizeof(x));
	return x;
}

static void test_layout(void **state)
{
	uint8_t *buf;
	size_t len;
	uint64_t x;
	uint16_t s;
	(void)state;

	encode_sample(&buf, &len);
	assert_int_equal(len, SAMPLE_LEN);
	assert_memory_equal(buf, "MLVSCHST", 8);
	assert_int_equal(u32_at(buf, 8), MLV_SC_HISTORY_VERSION);
	assert_int_equal(u32_at(buf, 12), 32);
	memcpy(&x, buf + 16, 8);
	assert_true(x == 1765000000123ull);
	assert_int_equal(u32_at(buf, 24), 2);
	assert_string_equal((const char *)buf + DNS_AT, "dns");
	assert_int_equal(u32_at(buf, DNS_AT + 64), 5);
	assert_int_equal(u32_at(buf, DNS_AT + 68), 2);
	assert_string_equal((const char *)buf + DNS_AT + 80, "d1");
	assert_string_equal((const char *)buf + DNS_AT + 144, "d2");
	/* dns's earlier owner of slot 4 (d2 = 1): after 5 table and 5
	 * previous entries */
	memcpy(&s, buf + DNS_AT + 208 + 2 * 10 + 2 * 4, 2);
	assert_int_equal(s, 1);
	assert_string_equal((const char *)buf + WEB_AT, "web");
	memcpy(&x, buf + WEB_AT + 72, 8);
	assert_true(x == 1765000060000ull);
	memcpy(&x, buf + len - 8, 8);
	assert_true(x == XXH3_64bits(buf, len - 8));
	free(buf);
}

static void test_round_trip(void **state)
{
	struct mlv_sc_history h;
	const struct mlv_sc_history_vip *w;
	uint8_t *buf;
	size_t len;
	char why[256];
	(void)state;

	encode_sample(&buf, &len);
	assert_int_equal(mlv_sc_history_decode(buf, len, &h, why, sizeof(why)),
			 MLV_OK);
	assert_int_equal(h.n_vips, 2);
	assert_true(h.saved_unix_ms == 1765000000123ull);
	assert_null(mlv_sc_history_find(&h, "nope"));
	assert_ptr_equal(mlv_sc_history_find(&h, "dns"), &h.vips[0]);
	w = mlv_sc_history_find(&h, "web");
	assert_non_null(w);
	assert_int_equal(w->table_size, 7);
	assert_int_equal(w->n_backends, 3);
	assert_true(w->window_end_unix_ms == 1765000060000ull);
	assert_string_equal(w->backends[2], "be3");
	assert_memory_equal(w->table, ta, sizeof(ta));
	assert_memory_equal(w->previous, pa, sizeof(pa));
	assert_memory_equal(w->earlier, ea, sizeof(ea));
	assert_memory_equal(h.vips[0].earlier, eb, sizeof(eb));
	assert_int_equal(h.vips[0].window_end_unix_ms, 0);
	mlv_sc_history_free(&h);
}

/* Decode a copy of file[0..len) whose checksum is made right again
 * first (fix) or left as it is; returns the result, why filled. */
static enum mlv_err decode_copy(const uint8_t *file, size_t len, bool fix,
				char *why, size_t why_len)
{
	struct mlv_sc_history h;
	uint8_t *c = malloc(len ? len : 1);
	enum mlv_err err;

	assert_non_null(c);
	memcpy(c, file, len);
	if (fix && len >= 8) {
		uint64_t sum = XXH3_64bits(c, len - 8);

		memcpy(c + len - 8, &sum, 8);
	}
	why[0] = '\0';
	err = mlv_sc_history_decode(c, len, &h, why, why_len);
	if (err == MLV_OK)
		mlv_sc_history_free(&h);
	else
		assert_true(why[0] != '\0');
	return err;
}

static void test_cut_and_flipped(void **state)
{
	uint8_t *buf;
	size_t len;
	char why[256];
	(void)state;

	encode_sample(&buf, &len);
	for (size_t n = 0; n < len; n++)
		assert_int_not_equal(decode_copy(buf, n, false, why,
						 sizeof(why)), MLV_OK);
	for (size_t i = 0; i < len; i++) {
		buf[i] ^= 0x40;
		assert_int_not_equal(decode_copy(buf, len, false, why,
						 sizeof(why)), MLV_OK);
		buf[i] ^= 0x40;
	}
	assert_int_equal(decode_copy(buf, len, false, why, sizeof(why)),
			 MLV_OK);
	free(buf);
}

/* One hostile change at off (n bytes of val) behind a correct checksum:
 * refused, and the reason contains want. */
static void hostile(size_t off, const void *val, size_t n, const char *want)
{
	uint8_t *buf;
	size_t len;
	char why[256];

	encode_sample(&buf, &len);
	memcpy(buf + off, val, n);
	assert_int_not_equal(decode_copy(buf, len, true, why, sizeof(why)),
			     MLV_OK);
	if (!strstr(why, want))
		fail_msg("offset %zu: \"%s\" does not say \"%s\"", off, why,
			 want);
	free(buf);
}

static void test_hostile(void **state)
{
	const uint32_t v2 = 2, many = 70000, big = 1u << 30, zero = 0;
	const uint16_t three = 3, one = 1, two = 2;
	const char x = 'x', a = 'a';
	const size_t web_arr = WEB_AT + 80 + 3 * 64;
	(void)state;

	hostile(8, &v2, 4, "version 2");
	hostile(24, &many, 4, "out of range");
	hostile(28, &one, 2, "reserved");
	hostile(DNS_AT + 64, &big, 4, "table size");
	hostile(DNS_AT + 64, &zero, 4, "table size");
	/* a shorter table: every later record misread */
	hostile(DNS_AT + 64, &v2, 4, "");
	/* web's backend count 3 + 'x' << 16 */
	hostile(WEB_AT + 70, &x, 1, "backend count");
	/* web's slot 0 owner 3: past its three backends */
	hostile(web_arr, &three, 2, "no backend");
	/* web's slot 1: previous 1 is its owner */
	hostile(web_arr + 14 + 2, &one, 2, "repeat");
	/* web's slot 0: earlier 1 is its previous */
	hostile(web_arr + 28, &one, 2, "repeat");
	/* web's slot 0: earlier 0 is its owner */
	hostile(web_arr + 28, &zero, 2, "repeat");
	/* web's slot 4: an earlier owner without a previous one */
	hostile(web_arr + 28 + 8, &two, 2, "repeat");
	/* "be1" made "xe1", "bx1", "bex": after "be2"; a byte after its
	 * NUL, or in place of the last NUL */
	for (int i = 0; i < MLV_NAME_MAX; i++)
		if (i != 3)
			hostile(WEB_AT + 80 + (size_t)i, &x, 1,
				i < 3 ? "order" : "bad");
	/* "be2" made "ae2": before "be1"; "web" made "aeb": before "dns" */
	hostile(WEB_AT + 80 + 64, &a, 1, "order");
	hostile(WEB_AT, &a, 1, "order");
	/* padding after web's 42 bytes of arrays */
	hostile(web_arr + 42, &x, 1, "padding");
}

/* Bytes after the last record, and a header of a wrong length. */
static void test_sizes(void **state)
{
	uint8_t *buf, *longer;
	size_t len;
	char why[256];
	const uint32_t hl = 40;
	(void)state;

	encode_sample(&buf, &len);
	longer = calloc(1, len + 8);
	assert_non_null(longer);
	memcpy(longer, buf, len - 8);
	assert_int_not_equal(decode_copy(longer, len + 8, true, why,
					 sizeof(why)), MLV_OK);
	assert_non_null(strstr(why, "after the last"));
	memcpy(buf + 12, &hl, 4);
	assert_int_not_equal(decode_copy(buf, len, true, why, sizeof(why)),
			     MLV_OK);
	assert_non_null(strstr(why, "header"));
	free(longer);
	free(buf);
}

/* encode refuses what decode would: VIPs out of order, a bad index. */
static void test_encode_checks(void **state)
{
	struct mlv_sc_history h;
	struct mlv_sc_history_vip v[2], t;
	void *buf = NULL;
	size_t len = 0;
	(void)state;

	sample(&h, v);
	t = v[0];
	v[0] = v[1];
	v[1] = t;
	assert_int_equal(mlv_sc_history_encode(&h, &buf, &len), MLV_E_INVAL);
	sample(&h, v);
	v[1].n_backends = 0x10000;
	assert_int_equal(mlv_sc_history_encode(&h, &buf, &len), MLV_E_INVAL);
	sample(&h, v);
	h.n_vips = 0;
	assert_int_equal(mlv_sc_history_encode(&h, &buf, &len), MLV_OK);
	assert_int_equal(len, 40);
	free(buf);
}

static void test_save_load(void **state)
{
	char dir[] = "/tmp/mlv-sch-XXXXXX", path[128], why[256];
	struct mlv_sc_history h, back;
	struct mlv_sc_history_vip v[2];
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x.history", dir);
	assert_int_equal(mlv_sc_history_load(path, 1 << 20, &back, why,
					     sizeof(why)), MLV_E_NOT_FOUND);
	sample(&h, v);
	assert_int_equal(mlv_sc_history_save(path, &h, why, sizeof(why)),
			 MLV_OK);
	assert_int_equal(mlv_sc_history_load(path, 1 << 20, &back, why,
					     sizeof(why)), MLV_OK);
	assert_int_equal(back.n_vips, 2);
	assert_memory_equal(back.vips[1].previous, pa, sizeof(pa));
	mlv_sc_history_free(&back);
	/* larger than the caller's bound: refused */
	assert_int_not_equal(mlv_sc_history_load(path, 100, &back, why,
						 sizeof(why)), MLV_OK);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
	assert_true(mlv_sc_history_max_size(2, 7, 3) >= SAMPLE_LEN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_cut_and_flipped),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_encode_checks),
		cmocka_unit_test(test_save_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
