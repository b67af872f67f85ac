/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/view/index.h"

#include <string.h>

uint32_t mlv_gen_index_slots(uint32_t n)
{
	uint32_t slots = 2;

	/* Callers bound n (MLV_MAX_VIPS, uint32 backend counts checked
	 * against this limit) so the doubling cannot overflow. */
	while (slots < 2ull * n && slots < (1u << 31))
		slots <<= 1;
	return slots;
}

/* The key as two 64-bit words and one 32-bit word. */
struct vip_key_words {
	uint64_t a, b;
	uint32_t c;
};

static inline struct vip_key_words vip_key_words(const struct mlv_gen_vip_key *k)
{
	struct vip_key_words w;

	memcpy(&w.a, k->addr, 8);
	memcpy(&w.b, k->addr + 8, 8);
	memcpy(&w.c, &k->port_be, 4);
	return w;
}

/* Three independent multiplies folded together, so every address byte
 * reaches the low bits the mask keeps. A worker probes this on every VIP
 * memo miss (dataplane/worker/forward.c), where a chain of five dependent
 * multiply-xorshift rounds would be most of a probe's latency. */
static uint32_t vip_key_hash(const struct vip_key_words *w)
{
	uint64_t h = (w->a * 0x9e3779b97f4a7c15ull) ^
		     (w->b * 0xff51afd7ed558ccdull) ^
		     ((uint64_t)w->c * 0xc4ceb9fe1a85ec53ull);

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return (uint32_t)(h >> 32);
}

void mlv_gen_vip_index_init(struct mlv_gen_vip_index *t,
			    struct mlv_gen_vip_slot *slots, uint32_t n_slots)
{
	t->slots = slots;
	t->mask = n_slots - 1;
}

struct mlv_gen_vip_slot *mlv_gen_vip_index_probe(
	const struct mlv_gen_vip_index *t, const struct mlv_gen_vip_key *key)
{
	struct vip_key_words w = vip_key_words(key);
	uint32_t i = vip_key_hash(&w) & t->mask;

	/* Load factor <= 1/2 guarantees an empty slot ends every probe. */
	for (;;) {
		struct mlv_gen_vip_slot *s = &t->slots[i];
		struct vip_key_words sw = vip_key_words(&s->key);

		if (s->key.family == 0 ||
		    ((sw.a ^ w.a) | (sw.b ^ w.b) | (uint64_t)(sw.c ^ w.c)) == 0)
			return s;
		i = (i + 1) & t->mask;
	}
}

uint32_t mlv_gen_vip_index_find(const struct mlv_gen_vip_index *t,
				const struct mlv_gen_vip_key *key)
{
	const struct mlv_gen_vip_slot *s = mlv_gen_vip_index_probe(t, key);

	return s->key.family == 0 ? MLV_GEN_INDEX_NONE : s->vip;
}

void mlv_gen_uid_map_init(struct mlv_gen_uid_map *m,
			  struct mlv_gen_uid_slot *slots, uint32_t n_slots)
{
	m->slots = slots;
	m->mask = n_slots - 1;
}

bool mlv_gen_uid_map_insert(struct mlv_gen_uid_map *m, uint32_t uid,
			    uint32_t index)
{
	uint32_t i = mlv_fmix32(uid) & m->mask;

	if (uid == 0)
		return false;
	while (m->slots[i].uid != 0) {
		if (m->slots[i].uid == uid)
			return false;
		i = (i + 1) & m->mask;
	}
	m->slots[i].uid = uid;
	m->slots[i].index = index;
	return true;
}

uint32_t mlv_gen_uid_map_find(const struct mlv_gen_uid_map *m, uint32_t uid)
{
	uint32_t i = mlv_fmix32(uid) & m->mask;

	if (uid == 0)
		return MLV_GEN_INDEX_NONE;
	while (m->slots[i].uid != 0) {
		if (m->slots[i].uid == uid)
			return m->slots[i].index;
		i = (i + 1) & m->mask;
	}
	return MLV_GEN_INDEX_NONE;
}
