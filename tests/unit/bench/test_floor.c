/* SPDX-License-Identifier: BSD-3-Clause */
/* dp-bench-floor's per-packet steps (tools/bench/dp-bench/floor_pkt.h): the
 * checks drop what the floor must not forward, the key is the frame's
 * 5-tuple, a flow keeps its backend, a full bucket gives up a way, and
 * the ipip header it prepends verifies. Frames come from
 * tests/support/frames.c (independent RFC 1071 checksums); mbufs are set
 * up by hand over a buffer, so no EAL is needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tools/bench/dp-bench/floor_path.h"
#include "tools/bench/dp-bench/floor_pkt.h"
#include "tests/support/frames.h"

#define HEADROOM 128u
#define BUF_SIZE 2048u

struct fixture {
	struct floor_path path;
	struct floor_entry entries[2 * FLOOR_WAYS];
	struct rte_mbuf m;
	uint8_t buf[BUF_SIZE];
};

static int setup(void **state)
{
	/* aligned_alloc wants a whole number of alignments */
	struct fixture *f = aligned_alloc(64, (sizeof(*f) + 63) / 64 * 64);

	if (!f)
		return -1;
	memset(f, 0, sizeof(*f));
	f->path.entries = f->entries;
	f->path.n_buckets = 2;
	f->path.mtu = 1500;
	for (uint32_t s = 0; s < FLOOR_LOOKUP_SIZE; s++)
		f->path.lookup[s] = (uint8_t)(s % FLOOR_MAX_BACKENDS);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

/* Put frame s into f->m; its length. */
static uint32_t load(struct fixture *f, const struct frame_spec *s)
{
	uint32_t len = frame_build(f->buf + HEADROOM, BUF_SIZE - HEADROOM, s,
				   NULL, NULL);

	assert_true(len > 0);
	memset(&f->m, 0, sizeof(f->m));
	f->m.buf_addr = f->buf;
	f->m.buf_len = BUF_SIZE;
	f->m.data_off = HEADROOM;
	f->m.data_len = (uint16_t)len;
	f->m.pkt_len = len;
	f->m.nb_segs = 1;
	return len;
}

static int parse(struct fixture *f, uint64_t key[2], uint16_t *ip_len)
{
	return floor_parse(&f->path, &f->m, key, ip_len);
}

static void test_key_is_the_5tuple(void **state)
{
	struct fixture *f = *state;
	struct frame_spec s;
	uint64_t key[2] = {0}, other[2] = {0};
	uint16_t ip_len = 0;
	uint8_t want[8];

	frame_spec_init(&s, 4, 17);
	s.sport = 1234;
	s.dport = 53;
	load(f, &s);
	assert_int_equal(parse(f, key, &ip_len), 1);
	assert_int_equal(ip_len, 20 + 8);
	memcpy(want, s.src, 4);
	memcpy(want + 4, s.dst, 4);
	assert_memory_equal(&key[0], want, 8);
	/* ports in network order, then the protocol */
	assert_int_equal(key[1], (uint64_t)17 << 32 |
				 (uint64_t)(53 >> 8 | (53 & 0xff) << 8) << 16 |
				 (uint64_t)(1234 >> 8 | (1234 & 0xff) << 8));

	s.sport = 1235;
	load(f, &s);
	assert_int_equal(parse(f, other, &ip_len), 1);
	assert_int_equal(other[0], key[0]);
	assert_int_not_equal(other[1], key[1]);
	assert_int_not_equal(floor_hash(other), floor_hash(key));
}

static void test_drops(void **state)
{
	struct fixture *f = *state;
	struct frame_spec s;
	uint64_t key[2] = {0};
	uint16_t ip_len = 0;

	frame_spec_init(&s, 4, 6);
	load(f, &s);
	assert_int_equal(parse(f, key, &ip_len), 1);

	frame_spec_init(&s, 4, 1);          /* ICMP */
	load(f, &s);
	assert_int_equal(parse(f, key, &ip_len), 0);

	frame_spec_init(&s, 6, 6);          /* IPv6 */
	load(f, &s);
	assert_int_equal(parse(f, key, &ip_len), 0);

	frame_spec_init(&s, 4, 6);          /* VLAN tag */
	s.vlan = true;
	load(f, &s);
	assert_int_equal(parse(f, key, &ip_len), 0);

	frame_spec_init(&s, 4, 6);          /* IPv4 options */
	s.ip_opt_len = 4;
	load(f, &s);
	assert_int_equal(parse(f, key, &ip_len), 0);

	frame_spec_init(&s, 4, 6);          /* first fragment */
	s.mf = true;
	load(f, &s);
	assert_int_equal(parse(f, key, &ip_len), 0);

	frame_spec_init(&s, 4, 6);          /* later fragment */
	s.frag_offset = 185;
	load(f, &s);
	assert_int_equal(parse(f, key, &ip_len), 0);

	frame_spec_init(&s, 4, 6);          /* truncated before the ports */
	load(f, &s);
	f->m.data_len = RTE_ETHER_HDR_LEN + 20 + 3;
	assert_int_equal(parse(f, key, &ip_len), 0);

	frame_spec_init(&s, 4, 6);          /* outer packet over the MTU */
	s.payload_len = 1500 - 40 - 20 + 1;
	load(f, &s);
	assert_int_equal(parse(f, key, &ip_len), 0);
	s.payload_len--;
	load(f, &s);
	assert_int_equal(parse(f, key, &ip_len), 1);
}

static void test_flow_keeps_its_backend(void **state)
{
	struct fixture *f = *state;
	uint64_t key[2] = {0x0102030405060708u, (uint64_t)6 << 32 | 0x50001234u};
	uint32_t h = floor_hash(key), misses = 0, b;

	b = floor_backend(&f->path, key, h, &misses);
	assert_int_equal(misses, 1);
	assert_int_equal(b, f->path.lookup[h % FLOOR_LOOKUP_SIZE]);
	/* the table, not the lookup array, decides from now on */
	f->path.lookup[h % FLOOR_LOOKUP_SIZE] = (uint8_t)((b + 1) %
							  FLOOR_MAX_BACKENDS);
	assert_int_equal(floor_backend(&f->path, key, h, &misses), b);
	assert_int_equal(misses, 1);
}

static bool in_table(const struct fixture *f, const uint64_t key[2])
{
	for (uint32_t i = 0; i < f->path.n_buckets * FLOOR_WAYS; i++)
		if (f->entries[i].key[0] == key[0] &&
		    f->entries[i].key[1] == key[1])
			return true;
	return false;
}

/* Five flows in one 4-way bucket, all preferring the same way: the first
 * four fill the bucket without displacing each other, the fifth takes a
 * way from one of them, and then hits. */
static void test_full_bucket_evicts_one(void **state)
{
	struct fixture *f = *state;
	uint64_t key[5][2];
	uint32_t misses = 0, present = 0, n = 0, want = UINT32_MAX;

	f->path.n_buckets = 1;
	for (uint32_t c = 0; n < 5; c++) {
		uint64_t k[2] = {0x0a000000u + c, (uint64_t)6 << 32 | 80u};
		uint32_t way = floor_hash(k) & (FLOOR_WAYS - 1);

		assert_true(c < 1000);
		if (want == UINT32_MAX)
			want = way;
		if (way != want)
			continue;
		memcpy(key[n++], k, sizeof(k));
	}
	for (uint32_t i = 0; i < 4; i++)
		floor_backend(&f->path, key[i], floor_hash(key[i]), &misses);
	for (uint32_t i = 0; i < 4; i++)
		assert_true(in_table(f, key[i]));
	floor_backend(&f->path, key[4], floor_hash(key[4]), &misses);
	assert_int_equal(misses, 5);
	for (uint32_t i = 0; i < 4; i++)
		present += in_table(f, key[i]);
	assert_int_equal(present, 3);
	assert_true(in_table(f, key[4]));
	floor_backend(&f->path, key[4], floor_hash(key[4]), &misses);
	assert_int_equal(misses, 5);
}

static void test_encap_verifies(void **state)
{
	struct fixture *f = *state;
	struct rte_ether_addr hop = {{0x02, 0, 0, 0, 0, 0x03}};
	struct rte_ether_addr src = {{0x02, 0, 0, 0, 0, 0x09}};
	struct floor_tmpl t;
	struct frame_spec s;
	uint8_t inner[64], *out;
	uint64_t key[2] = {0};
	uint16_t ip_len = 0;
	uint32_t len;

	floor_tmpl_init(&t, &hop, &src, rte_cpu_to_be_32(0x0a630002u),
			rte_cpu_to_be_32(0x0a63010bu));
	for (uint32_t pad = 0; pad <= 6; pad += 6) {
		frame_spec_init(&s, 4, 6);
		s.payload_len = 7;      /* an odd length for the checksum */
		s.eth_pad = pad;        /* trailer after the IP packet */
		len = load(f, &s);
		memcpy(inner, f->buf + HEADROOM + RTE_ETHER_HDR_LEN,
		       len - RTE_ETHER_HDR_LEN - pad);
		assert_int_equal(parse(f, key, &ip_len), 1);
		assert_int_equal(floor_encap(&t, &f->m, ip_len), 1);

		out = rte_pktmbuf_mtod(&f->m, uint8_t *);
		assert_int_equal(f->m.data_len, len + 20);
		assert_memory_equal(out, hop.addr_bytes, 6);
		assert_memory_equal(out + 6, src.addr_bytes, 6);
		assert_int_equal(out[12], 0x08);
		assert_int_equal(out[13], 0x00);
		/* outer header: IPv4 in IPv4, length = inner + 20 */
		assert_int_equal(out[14], 0x45);
		assert_int_equal(out[14 + 9], 4);
		assert_int_equal(out[14 + 2] << 8 | out[14 + 3], ip_len + 20);
		assert_true(frame_ip_checksums_ok(out + 14, ip_len + 20u));
		assert_int_equal(frame_csum(out + 14, 20, 0), 0);
		/* the inner packet untouched */
		assert_memory_equal(out + 34, inner, ip_len);
	}
}

static void test_encap_needs_headroom(void **state)
{
	struct fixture *f = *state;
	struct rte_ether_addr a = {{0}};
	struct floor_tmpl t;
	struct frame_spec s;
	uint64_t key[2] = {0};
	uint16_t ip_len = 0;

	floor_tmpl_init(&t, &a, &a, 0, 0);
	frame_spec_init(&s, 4, 6);
	load(f, &s);
	assert_int_equal(parse(f, key, &ip_len), 1);
	f->m.data_off = 19;
	memmove(f->buf + 19, f->buf + HEADROOM, f->m.data_len);
	assert_int_equal(floor_encap(&t, &f->m, ip_len), 0);
	assert_int_equal(f->m.data_off, 19);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_key_is_the_5tuple, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_drops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flow_keeps_its_backend,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_bucket_evicts_one,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_encap_verifies, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_encap_needs_headroom,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
