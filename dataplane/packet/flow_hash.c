/* SPDX-License-Identifier: BSD-3-Clause */
/* The flow hash (see flow_hash.h and docs/flow-hash.md, which is the
 * normative description):
 *
 *   c = CRC32C register started at MLV_FLOW_HASH_SEED, fed the 40 key
 *       bytes in memory order (= five little-endian 64-bit words), no final
 *       inversion;
 *   h = murmur3 fmix32(c).
 *
 * Why not rte_hash_crc(): the packet core builds without DPDK (tools,
 * tests, fuzzer), and this function is a wire format between maglevd
 * instances, so it is pinned down here rather than inherited from a
 * library whose fallback paths might change.
 *
 * Two implementations with identical output: SSE4.2 CRC32 instructions,
 * and a slicing-by-8 table for CPUs without them. The choice is made once;
 * per call the cost is one indirect call. The data plane avoids even that
 * with mlv_flow_hash_inline (flow_hash.h).
 */
#include "dataplane/packet/flow_hash.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define MLV_HAVE_SSE42_PATH 1
#endif

#define CRC32C_POLY_REFLECTED 0x82F63B78u
#define KEY_WORDS (sizeof(struct mlv_flow_key) / 8)

_Static_assert(sizeof(struct mlv_flow_key) % 8 == 0, "key is whole 64-bit words");

/* ---- portable: slicing-by-8 ------------------------------------------ */

static uint32_t crc_tab[8][256];
static pthread_once_t crc_tab_once = PTHREAD_ONCE_INIT;

static void crc_tab_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int b = 0; b < 8; b++)
			c = (c >> 1) ^ (CRC32C_POLY_REFLECTED & (0u - (c & 1)));
		crc_tab[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_tab[t][i] = (crc_tab[t - 1][i] >> 8) ^
					crc_tab[0][crc_tab[t - 1][i] & 0xff];
}

/* Reads bytes, not words, so it gives the same result on big-endian CPUs. */
static uint32_t hash_table(const struct mlv_flow_key *key)
{
	const uint8_t *p = (const uint8_t *)key;
	uint32_t c = MLV_FLOW_HASH_SEED;

	for (size_t i = 0; i < KEY_WORDS; i++, p += 8) {
		uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 |
				   (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
		c = crc_tab[7][lo & 0xff] ^ crc_tab[6][(lo >> 8) & 0xff] ^
		    crc_tab[5][(lo >> 16) & 0xff] ^ crc_tab[4][lo >> 24] ^
		    crc_tab[3][p[4]] ^ crc_tab[2][p[5]] ^
		    crc_tab[1][p[6]] ^ crc_tab[0][p[7]];
	}
	return mlv_fmix32(c);
}

static const struct mlv_flow_hash_ops table_ops = { "table", hash_table };

/* ---- x86: SSE4.2 CRC32 instruction ------------------------------------ */

#ifdef MLV_HAVE_SSE42_PATH
__attribute__((target("sse4.2")))
static uint32_t hash_sse42(const struct mlv_flow_key *key)
{
	const uint8_t *p = (const uint8_t *)key;
#ifdef __x86_64__
	uint64_t c = MLV_FLOW_HASH_SEED;
	for (size_t i = 0; i < KEY_WORDS; i++) {
		uint64_t w;
		memcpy(&w, p + 8 * i, 8);   /* x86 is little-endian */
		c = _mm_crc32_u64(c, w);
	}
	return mlv_fmix32((uint32_t)c);
#else
	uint32_t c = MLV_FLOW_HASH_SEED;
	for (size_t i = 0; i < 2 * KEY_WORDS; i++) {
		uint32_t w;
		memcpy(&w, p + 4 * i, 4);
		c = _mm_crc32_u32(c, w);
	}
	return mlv_fmix32(c);
#endif
}

static const struct mlv_flow_hash_ops sse42_ops = { "sse4.2", hash_sse42 };

static int cpu_has_sse42(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("sse4.2");
}
#endif

/* ---- selection --------------------------------------------------------- */

static const struct mlv_flow_hash_ops *active;   /* written once, release */
static const struct mlv_flow_hash_ops *impls[2];
static unsigned n_impls;
static pthread_once_t select_once = PTHREAD_ONCE_INIT;

static void select_impl(void)
{
	pthread_once(&crc_tab_once, crc_tab_init);
	impls[n_impls++] = &table_ops;
	const struct mlv_flow_hash_ops *best = &table_ops;
#ifdef MLV_HAVE_SSE42_PATH
	if (cpu_has_sse42()) {
		impls[n_impls++] = &sse42_ops;
		best = &sse42_ops;
	}
#endif
	__atomic_store_n(&active, best, __ATOMIC_RELEASE);
}

const struct mlv_flow_hash_ops *mlv_flow_hash_active(void)
{
	pthread_once(&select_once, select_impl);
	return active;
}

const struct mlv_flow_hash_ops *const *mlv_flow_hash_impls(unsigned *n)
{
	pthread_once(&select_once, select_impl);
	*n = n_impls;
	return impls;
}

/* Choose before main() so no worker pays for it on its first packet. */
__attribute__((constructor)) static void flow_hash_preselect(void)
{
	mlv_flow_hash_active();
}

uint32_t mlv_flow_hash(const struct mlv_flow_key *key)
{
	/* Acquire pairs with the release in select_impl: the tables the
	 * chosen implementation reads are complete. */
	const struct mlv_flow_hash_ops *o =
		__atomic_load_n(&active, __ATOMIC_ACQUIRE);
	if (__builtin_expect(o == NULL, 0))
		o = mlv_flow_hash_active();
	return o->hash(key);
}
