/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit tests for the flow hash. The expected values come from an
 * independent implementation of the definition in docs/flow-hash.md (a
 * bitwise CRC32C, itself checked against published CRC32C vectors) and
 * from the documented test vectors, which were computed with Python's
 * crcmod, not with this code. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <string.h>

#include "dataplane/packet/flow_hash.h"
#include "tests/support/frames.h"

/* CRC32C straight from its definition: reflected polynomial 0x82F63B78,
 * one bit at a time, register as given, no final inversion. */
static uint32_t crc32c_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int b = 0; b < 8; b++)
			crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
	}
	return crc;
}

/* murmur3 fmix32 (Appleby, MurmurHash3.cpp). */
static uint32_t ref_fmix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85EBCA6Bu;
	h ^= h >> 13;
	h *= 0xC2B2AE35u;
	h ^= h >> 16;
	return h;
}

static uint32_t ref_flow_hash(const struct mlv_flow_key *k)
{
	return ref_fmix32(crc32c_bitwise(0x4D474C56u, (const uint8_t *)k, 40));
}

static uint32_t rnd(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static void random_key(struct mlv_flow_key *k, uint32_t *x)
{
	uint8_t *b = (uint8_t *)k;
	for (size_t i = 0; i < sizeof(*k); i++)
		b[i] = (uint8_t)rnd(x);
	k->family = (rnd(x) & 1) ? 4 : 6;
	if (k->family == 4) {
		memset(k->src + 4, 0, 12);
		memset(k->dst + 4, 0, 12);
	}
	k->pad[0] = k->pad[1] = 0;
}

static void test_crc32c_reference(void **state)
{
	(void)state;
	/* The check value of CRC-32C (init and final XOR 0xFFFFFFFF). */
	const uint8_t check[] = "123456789";
	assert_int_equal(~crc32c_bitwise(~0u, check, 9), 0xE3069283u);

	/* RFC 3720 B.4 (iSCSI) vectors. */
	uint8_t buf[32];
	memset(buf, 0, 32);
	assert_int_equal(~crc32c_bitwise(~0u, buf, 32), 0x8A9136AAu);
	memset(buf, 0xff, 32);
	assert_int_equal(~crc32c_bitwise(~0u, buf, 32), 0x62A8AB43u);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	assert_int_equal(~crc32c_bitwise(~0u, buf, 32), 0x46DD794Eu);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	assert_int_equal(~crc32c_bitwise(~0u, buf, 32), 0x113FDB5Cu);
	assert_int_equal(MLV_FLOW_HASH_SEED, 0x4D474C56u);
}

static void make_key(struct mlv_flow_key *k, const char *src, const char *dst,
		     uint16_t sport, uint16_t dport, uint8_t proto)
{
	memset(k, 0, sizeof(*k));
	k->family = (uint8_t)frame_addr(k->src, src);
	frame_addr(k->dst, dst);
	k->sport = htons(sport);
	k->dport = htons(dport);
	k->proto = proto;
}

/* The vectors of docs/flow-hash.md. */
static void test_documented_vectors(void **state)
{
	(void)state;
	static const struct {
		const char *src, *dst;
		uint16_t sport, dport;
		uint8_t proto;
		uint32_t crc, hash;
	} v[] = {
		{ "198.51.100.1", "192.0.2.10", 40000, 80, 6, 0x2C08565Cu, 0x69D0E373u },
		{ "198.51.100.1", "192.0.2.10", 0, 0, 6, 0x3D9D433Cu, 0x6E7101A5u },
		{ "10.1.2.3", "192.0.2.53", 5353, 53, 17, 0x478D04F7u, 0x6CFF1B36u },
		{ "2001:db8:1::1", "2001:db8::53", 53000, 53, 17, 0x559B7E2Fu, 0xDE25B07Bu },
		{ "2001:db8:1::1", "2001:db8::10", 40000, 443, 6, 0xC8A82986u, 0xD334BFA9u },
	};
	unsigned n_impl;
	const struct mlv_flow_hash_ops *const *impl = mlv_flow_hash_impls(&n_impl);

	struct mlv_flow_key k;
	memset(&k, 0, sizeof(k));
	assert_int_equal(crc32c_bitwise(0x4D474C56u, (uint8_t *)&k, 40), 0xAD5D4ED3u);
	assert_int_equal(mlv_flow_hash(&k), 0xED8A68ADu);

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		make_key(&k, v[i].src, v[i].dst, v[i].sport, v[i].dport, v[i].proto);
		assert_int_equal(crc32c_bitwise(0x4D474C56u, (uint8_t *)&k, 40), v[i].crc);
		assert_int_equal(mlv_flow_hash(&k), v[i].hash);
		for (unsigned j = 0; j < n_impl; j++)
			assert_int_equal(impl[j]->hash(&k), v[i].hash);
	}
	/* The documented Maglev slot of the first vector at M = 65537. */
	make_key(&k, v[0].src, v[0].dst, v[0].sport, v[0].dport, v[0].proto);
	assert_int_equal(mlv_flow_hash(&k) % 65537, 31139);
}

static void test_implementations_agree(void **state)
{
	(void)state;
	unsigned n_impl;
	const struct mlv_flow_hash_ops *const *impl = mlv_flow_hash_impls(&n_impl);

	assert_true(n_impl >= 1);
	assert_string_equal(impl[0]->name, "table");
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("sse4.2")) {
		assert_int_equal(n_impl, 2);
		assert_string_equal(impl[1]->name, "sse4.2");
		assert_ptr_equal(mlv_flow_hash_active(), impl[1]);
	}
#endif
	uint32_t x = 0xC0FFEE;
	struct mlv_flow_key k;
	for (int i = 0; i < 200000; i++) {
		random_key(&k, &x);
		uint32_t want = ref_flow_hash(&k);
		assert_int_equal(mlv_flow_hash(&k), want);
		for (unsigned j = 0; j < n_impl; j++)
			assert_int_equal(impl[j]->hash(&k), want);
	}
}

/* Maglev uses hash % M, and RSS-like consumers use low bits: flows that
 * differ only in the client port must spread evenly over low-bit buckets
 * and over a prime modulus. Deterministic inputs; the bound is ~6 sigma
 * of a chi-square with the given degrees of freedom. */
static void test_low_bit_spread(void **state)
{
	(void)state;
	static uint32_t b256[256], b251[251];
	struct mlv_flow_key k;

	make_key(&k, "198.51.100.1", "192.0.2.10", 0, 80, 6);
	for (uint32_t port = 0; port < 65536; port++) {
		k.sport = htons((uint16_t)port);
		uint32_t h = mlv_flow_hash(&k);
		b256[h & 255]++;
		b251[h % 251]++;
	}
	double chi256 = 0, chi251 = 0, e256 = 65536.0 / 256, e251 = 65536.0 / 251;
	for (int i = 0; i < 256; i++)
		chi256 += (b256[i] - e256) * (b256[i] - e256) / e256;
	for (int i = 0; i < 251; i++)
		chi251 += (b251[i] - e251) * (b251[i] - e251) / e251;
	assert_true(chi256 < 255 + 6 * 22.6);
	assert_true(chi251 < 250 + 6 * 22.4);
}

/* Every key bit flips each output bit about half the time. */
static void test_avalanche(void **state)
{
	(void)state;
	static uint32_t flips[32];
	uint32_t x = 99;
	unsigned trials = 0;
	struct mlv_flow_key k, k2;

	for (int i = 0; i < 300; i++) {
		random_key(&k, &x);
		uint32_t h = mlv_flow_hash(&k);
		for (int bit = 0; bit < 38 * 8; bit++) {   /* not family/pad */
			k2 = k;
			((uint8_t *)&k2)[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			uint32_t d = h ^ mlv_flow_hash(&k2);
			for (int o = 0; o < 32; o++)
				flips[o] += (d >> o) & 1;
			trials++;
		}
	}
	for (int o = 0; o < 32; o++) {
		double f = (double)flips[o] / trials;
		assert_true(f > 0.47 && f < 0.53);
	}
}

/* The inlined per-packet variant gives the reference value. Built twice
 * (tests/meson.build): plain, where it is mlv_flow_hash, and with
 * -msse4.2, where it is the inlined CRC32 instructions. */
static void test_inline_matches_reference(void **state)
{
	(void)state;
	uint32_t x = 12345;
	struct mlv_flow_key k;

	for (int i = 0; i < 10000; i++) {
		random_key(&k, &x);
		assert_int_equal(mlv_flow_hash_inline(&k), ref_flow_hash(&k));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c_reference),
		cmocka_unit_test(test_documented_vectors),
		cmocka_unit_test(test_implementations_agree),
		cmocka_unit_test(test_low_bit_spread),
		cmocka_unit_test(test_avalanche),
		cmocka_unit_test(test_inline_matches_reference),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
