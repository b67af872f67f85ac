#include "gen_index.h"

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

/* Multiply-xorshift over the five 32-bit words of the key: cheap, and
 * mixes every address byte into the low bits the mask keeps. */
static uint32_t vip_key_hash(const struct mlv_gen_vip_key *key)
{
	uint32_t w[5];
	uint64_t h = 0x9e3779b97f4a7c15ull;

	memcpy(w, key, sizeof(w));
	for (int i = 0; i < 5; i++) {
		h = (h ^ w[i]) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return (uint32_t)h;
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
	uint32_t i = vip_key_hash(key) & t->mask;

	/* Load factor <= 1/2 guarantees an empty slot ends every probe. */
	for (;;) {
		struct mlv_gen_vip_slot *s = &t->slots[i];

		if (s->key.family == 0 ||
		    memcmp(&s->key, key, sizeof(*key)) == 0)
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
	uint32_t i = mlv_gen_mix32(uid) & m->mask;

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
	uint32_t i = mlv_gen_mix32(uid) & m->mask;

	if (uid == 0)
		return MLV_GEN_INDEX_NONE;
	while (m->slots[i].uid != 0) {
		if (m->slots[i].uid == uid)
			return m->slots[i].index;
		i = (i + 1) & m->mask;
	}
	return MLV_GEN_INDEX_NONE;
}
