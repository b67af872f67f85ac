/* SPDX-License-Identifier: BSD-3-Clause */
/* The flows file (daemon/runtime/flow_state.h): what encode writes,
 * decode reads back field for field; the bytes are where the format
 * says (a header read here by hand); and decode refuses, with a reason
 * and without crashing, every file cut short, every byte flipped (the
 * checksum), another version, other record sizes, and hostile values
 * behind a correct checksum: counts that do not add up, a slot past
 * the table, a state or a time left out of range, a uid no backend
 * record names, names without their NUL, uids out of order. save and
 * load go through a checked directory; the layout hash changes with
 * what routes flows to workers. */
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

#include "control/base/file.h"
#include "daemon/runtime/flow_state.h"

#define CAP 64u

static struct mlv_flow_state_backend backends[3] = {
	{ 5, "web", "b1" }, { 9, "web", "b2" }, { 12, "dns", "d1" },
};
static struct mlv_ct_saved w0[3], w1[2];

/* A state of two workers of CAP entries, five flows over the three
 * backends. */
static void sample(struct mlv_flow_state *st)
{
	memset(st, 0, sizeof(*st));
	for (uint32_t i = 0; i < 3; i++) {
		memset(&w0[i], 0, sizeof(w0[i]));
		w0[i].entry.state = MLV_CT_TCP_ESTABLISHED;
		w0[i].entry.backend_uid = backends[i].uid;
		w0[i].entry.flow[0] = (uint8_t)(0x10 + i);
		w0[i].slot = i * 5;
		w0[i].left_ms = 1000 * (i + 1);
	}
	for (uint32_t i = 0; i < 2; i++) {
		memset(&w1[i], 0, sizeof(w1[i]));
		w1[i].entry.state = MLV_CT_UDP;
		w1[i].entry.backend_uid = 12;
		w1[i].entry.flow[5] = (uint8_t)(0x20 + i);
		w1[i].slot = CAP - 1 - i;
		w1[i].left_ms = MLV_CT_MAX_TIMEOUT_MS;
	}
	st->saved_unix_ms = 1765000000123ull;
	st->n_workers = 2;
	st->capacity = CAP;
	st->layout = 0x1122334455667788ull;
	st->n_backends = 3;
	st->backends = backends;
	st->workers[0] = (struct mlv_flow_state_worker){ 0xabcdefull, 3, w0 };
	st->workers[1] = (struct mlv_flow_state_worker){ 0x12345ull, 2, w1 };
}

static uint8_t *encoded(size_t *len)
{
	struct mlv_flow_state st;
	void *buf;

	sample(&st);
	assert_int_equal(mlv_flow_state_encode(&st, &buf, len), MLV_OK);
	return buf;
}

/* decode a copy of buf (len bytes); returns its result, the reason in
 * why. */
static enum mlv_err decode_copy(const uint8_t *buf, size_t len,
				struct mlv_flow_state *st, char *why,
				size_t why_len)
{
	void *copy = malloc(len ? len : 1);

	assert_non_null(copy);
	memcpy(copy, buf, len);
	return mlv_flow_state_decode(copy, len, st, why, why_len);
}

static void fix_sum(uint8_t *buf, size_t len)
{
	uint64_t sum = XXH3_64bits(buf, len - 8);

	memcpy(buf + len - 8, &sum, 8);
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void round_trip_and_layout(void **state)
{
	size_t len;
	uint8_t *buf = encoded(&len);
	struct mlv_flow_state st;
	char why[256] = "";

	(void)state;
	/* 64 + 3 x 136 + 2 x 16 + 5 x 40 + 8, worked by hand */
	assert_int_equal(len, 64 + 408 + 32 + 200 + 8);
	assert_memory_equal(buf, "MLVFLOWS", 8);
	assert_int_equal(rd32(buf + 8), 1);             /* version */
	assert_int_equal(rd32(buf + 12), 64);           /* header length */
	assert_true(rd64(buf + 16) == 1765000000123ull);
	assert_int_equal(rd32(buf + 24), 2);            /* workers */
	assert_int_equal(rd32(buf + 28), CAP);
	assert_int_equal(rd32(buf + 32), 3);            /* backends */
	assert_int_equal(rd32(buf + 36), 40);           /* entry size */
	assert_true(rd64(buf + 40) == 5);               /* entries */
	assert_true(rd64(buf + 48) == 0x1122334455667788ull);
	assert_int_equal(rd32(buf + 64), 5);            /* first uid */
	assert_string_equal((char *)buf + 64 + 8, "web");
	assert_string_equal((char *)buf + 64 + 8 + 64, "b1");
	assert_int_equal(rd32(buf + 64 + 2 * 136), 12);
	assert_true(rd64(buf + 472) == 0xabcdefull);    /* worker 0's seed */
	assert_true(rd64(buf + 480) == 3);
	assert_true(rd64(buf + len - 8) == XXH3_64bits(buf, len - 8));

	assert_int_equal(decode_copy(buf, len, &st, why, sizeof(why)), MLV_OK);
	assert_int_equal(st.n_workers, 2);
	assert_int_equal(st.capacity, CAP);
	assert_true(st.saved_unix_ms == 1765000000123ull);
	assert_true(st.layout == 0x1122334455667788ull);
	assert_int_equal(st.n_backends, 3);
	for (uint32_t i = 0; i < 3; i++) {
		assert_int_equal(st.backends[i].uid, backends[i].uid);
		assert_string_equal(st.backends[i].vip, backends[i].vip);
		assert_string_equal(st.backends[i].backend,
				    backends[i].backend);
	}
	assert_true(st.workers[0].seed == 0xabcdefull);
	assert_true(st.workers[1].seed == 0x12345ull);
	assert_true(st.workers[0].n == 3 && st.workers[1].n == 2);
	assert_memory_equal(st.workers[0].entries, w0, sizeof(w0));
	assert_memory_equal(st.workers[1].entries, w1, sizeof(w1));
	mlv_flow_state_free(&st);
	mlv_flow_state_free(&st);   /* twice: empty the second time */
	free(buf);
}

/* Every prefix of the file and every single flipped bit: refused. */
static void cut_short_or_damaged(void **state)
{
	size_t len;
	uint8_t *buf = encoded(&len);
	struct mlv_flow_state st;
	char why[256];

	(void)state;
	for (size_t n = 0; n < len; n++) {
		why[0] = '\0';
		assert_int_not_equal(decode_copy(buf, n, &st, why, sizeof(why)),
				     MLV_OK);
		assert_true(why[0] != '\0');
	}
	for (size_t i = 0; i < len; i++)
		for (unsigned bit = 0; bit < 8; bit += 3) {
			buf[i] ^= (uint8_t)(1u << bit);
			assert_int_not_equal(decode_copy(buf, len, &st, why,
							 sizeof(why)), MLV_OK);
			buf[i] ^= (uint8_t)(1u << bit);
		}
	/* padded by a byte: refused too */
	{
		uint8_t *longer = calloc(1, len + 1);

		memcpy(longer, buf, len);
		assert_int_equal(decode_copy(longer, len + 1, &st, why,
					     sizeof(why)), MLV_E_INVAL);
		assert_non_null(strstr(why, "cut short or padded"));
		free(longer);
	}
	free(buf);
}

/* Change a field at off (size bytes) to v, fix the checksum, decode:
 * must be refused with err and a reason containing text. */
static void expect_refused(const uint8_t *orig, size_t len, size_t off,
			   size_t size, uint64_t v, enum mlv_err err,
			   const char *text)
{
	uint8_t *b = malloc(len);
	struct mlv_flow_state st;
	char why[256] = "";

	memcpy(b, orig, len);
	memcpy(b + off, &v, size);
	fix_sum(b, len);
	assert_int_equal(decode_copy(b, len, &st, why, sizeof(why)), err);
	if (!strstr(why, text))
		fail_msg("offset %zu = %llu: \"%s\" lacks \"%s\"", off,
			 (unsigned long long)v, why, text);
	free(b);
}

static void hostile_values(void **state)
{
	size_t len;
	uint8_t *buf = encoded(&len);
	/* offsets, worked from the layout above */
	const size_t be = 64, wk = 64 + 3 * 136, en = wk + 2 * 16;

	(void)state;
	expect_refused(buf, len, 0, 1, 'X', MLV_E_PROTO, "not a maglevd");
	expect_refused(buf, len, 8, 4, 2, MLV_E_PROTO, "version 2");
	expect_refused(buf, len, 8, 4, 0, MLV_E_PROTO, "version 0");
	expect_refused(buf, len, 12, 4, 72, MLV_E_PROTO, "header of 72");
	expect_refused(buf, len, 36, 4, 32, MLV_E_PROTO, "entries of 32");
	expect_refused(buf, len, 24, 4, 0, MLV_E_RANGE, "out of range");
	expect_refused(buf, len, 24, 4, MLV_MAX_WORKERS + 1, MLV_E_RANGE,
		       "out of range");
	expect_refused(buf, len, 28, 4, CAP + 1, MLV_E_RANGE, "out of range");
	expect_refused(buf, len, 28, 4, 0, MLV_E_RANGE, "out of range");
	expect_refused(buf, len, 32, 4, MLV_FLOW_STATE_MAX_BACKENDS + 1,
		       MLV_E_RANGE, "out of range");
	/* more entries than the tables hold; more than the file has */
	expect_refused(buf, len, 40, 8, 2 * CAP + 1, MLV_E_RANGE,
		       "out of range");
	expect_refused(buf, len, 40, 8, 6, MLV_E_INVAL, "cut short or padded");
	expect_refused(buf, len, 56, 1, 1, MLV_E_INVAL, "reserved");
	/* backends: padding, names without NUL or empty, uids out of order */
	expect_refused(buf, len, be + 4, 4, 1, MLV_E_INVAL, "bad name");
	expect_refused(buf, len, be + 8, 1, 0, MLV_E_INVAL, "bad name");
	{
		uint8_t *b = malloc(len);

		memcpy(b, buf, len);
		memset(b + be + 8, 'a', 64);       /* no NUL in the VIP name */
		fix_sum(b, len);
		expect_refused(b, len, be + 8 + 63, 1, 'a', MLV_E_INVAL,
			       "bad name");
		free(b);
	}
	expect_refused(buf, len, be + 8 + 5, 1, 'z', MLV_E_INVAL, "bad name");
	expect_refused(buf, len, be + 136, 4, 5, MLV_E_INVAL, "not above");
	expect_refused(buf, len, be + 136, 4, 4, MLV_E_INVAL, "not above");
	/* workers' counts: past the table, not adding up */
	expect_refused(buf, len, wk + 8, 8, CAP + 1, MLV_E_RANGE, "worker 0");
	expect_refused(buf, len, wk + 8, 8, 2, MLV_E_INVAL, "the header says");
	expect_refused(buf, len, wk + 8, 8, 4, MLV_E_RANGE, "worker 1");
	/* an entry (40 bytes: the 32-byte entry, slot, left): its state
	 * (byte 15), uid (20), slot (32), time left (36) */
	expect_refused(buf, len, en + 15, 1, MLV_CT_FREE, MLV_E_RANGE,
		       "worker 0, entry 0");
	expect_refused(buf, len, en + 40 + 15, 1, MLV_CT__NSTATES,
		       MLV_E_RANGE, "worker 0, entry 1");
	expect_refused(buf, len, en + 20, 4, 6, MLV_E_RANGE, "entry 0");
	expect_refused(buf, len, en + 32, 4, CAP, MLV_E_RANGE, "entry 0");
	expect_refused(buf, len, en + 36, 4, 0, MLV_E_RANGE, "entry 0");
	expect_refused(buf, len, en + 4 * 40 + 36, 4,
		       MLV_CT_MAX_TIMEOUT_MS + 1u, MLV_E_RANGE,
		       "worker 1, entry 1");
	free(buf);
}

static void encode_refuses(void **state)
{
	struct mlv_flow_state st;
	void *buf;
	size_t len;

	(void)state;
	sample(&st);
	st.n_workers = 0;
	assert_int_equal(mlv_flow_state_encode(&st, &buf, &len), MLV_E_INVAL);
	sample(&st);
	st.workers[1].n = CAP + 1;
	assert_int_equal(mlv_flow_state_encode(&st, &buf, &len), MLV_E_INVAL);
}

static void layout_hash(void **state)
{
	static struct mlv_config cfg;
	static struct mlv_port_config ports[2];
	struct mlv_flow_state_queue q[3] = { { 0, 0, 0 }, { 1, 0, 1 },
					     { 1, 1, 0 } };
	uint64_t h;

	(void)state;
	cfg.n_ports = 2;
	cfg.ports = ports;
	snprintf(cfg.ports[0].name, MLV_NAME_MAX, "wan");
	snprintf(cfg.ports[0].device, MLV_PATH_MAX, "0000:01:00.0");
	snprintf(cfg.ports[1].name, MLV_NAME_MAX, "lan");
	snprintf(cfg.ports[1].device, MLV_PATH_MAX, "0000:01:00.1");
	h = mlv_flow_state_layout(&cfg, 2, q, 3);
	assert_true(h == mlv_flow_state_layout(&cfg, 2, q, 3));
	assert_true(h != mlv_flow_state_layout(&cfg, 3, q, 3));
	q[1].queue = 2;
	assert_true(h != mlv_flow_state_layout(&cfg, 2, q, 3));
	q[1].queue = 1;
	snprintf(cfg.ports[1].device, MLV_PATH_MAX, "0000:02:00.1");
	assert_true(h != mlv_flow_state_layout(&cfg, 2, q, 3));
}

/* save, then load through the file system; a missing file is
 * MLV_E_NOT_FOUND; remove takes the name away. */
static void save_and_load(void **state)
{
	char dir[] = "/tmp/mlv-flow-state-XXXXXX", path[128], why[256] = "";
	struct mlv_flow_state st, back;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state.flows", dir);
	assert_int_equal(mlv_flow_state_load(path, 1 << 20, &back, why,
					     sizeof(why)), MLV_E_NOT_FOUND);
	sample(&st);
	assert_int_equal(mlv_flow_state_save(path, &st, why, sizeof(why)),
			 MLV_OK);
	assert_int_equal(mlv_flow_state_load(path, 1 << 20, &back, why,
					     sizeof(why)), MLV_OK);
	assert_true(back.workers[1].n == 2);
	assert_memory_equal(back.workers[1].entries, w1, sizeof(w1));
	mlv_flow_state_free(&back);
	/* larger than max: refused as read */
	assert_int_not_equal(mlv_flow_state_load(path, 100, &back, why,
						 sizeof(why)), MLV_OK);
	assert_int_equal(mlv_file_remove(path, why, sizeof(why)), MLV_OK);
	assert_int_equal(mlv_file_remove(path, why, sizeof(why)),
			 MLV_E_NOT_FOUND);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip_and_layout),
		cmocka_unit_test(cut_short_or_damaged),
		cmocka_unit_test(hostile_values),
		cmocka_unit_test(encode_refuses),
		cmocka_unit_test(layout_hash),
		cmocka_unit_test(save_and_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
