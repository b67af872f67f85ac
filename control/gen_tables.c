/* Shared, reference-counted VIP tables (see gen_tables.h). Each table is
 * one aligned allocation: the header, the first and second choices, then
 * the canonical key the table was built from (kept for the full compare
 * that confirms a hash match). */
#include "gen_tables.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "control/siphash.h"

#define TABLE_ALIGN 64 /* cache line, as the generation's own arrays */

struct gen_tables_slot {
	struct mlv_gen_table *table; /* NULL: empty */
	bool taken;                  /* already in held[] */
	bool from_prev;              /* held by the previous generation */
};

/* Only this process compares these hashes, and every hit is confirmed by
 * a full key compare, so a fixed key is enough. */
static const struct mlv_siphash_key tables_key = { {
	0x6d, 0x6c, 0x76, 0x2d, 0x74, 0x61, 0x62, 0x6c,
	0x65, 0x2d, 0x73, 0x68, 0x61, 0x72, 0x65, 0x31,
} };

static size_t round_up(size_t v, size_t align)
{
	return (v + align - 1) & ~(align - 1);
}

static uint8_t *put(uint8_t *p, const void *v, size_t n)
{
	memcpy(p, v, n);
	return p + n;
}

/* The canonical encoding of in into t->key_buf; returns its length or 0
 * on allocation failure. Host byte order: keys never leave the process. */
static size_t encode_key(struct mlv_gen_tables *t,
			 const struct mlv_gen_table_input *in)
{
	uint32_t kind = (uint32_t)in->spec.kind;
	uint32_t vnodes = in->spec.kind == MLV_TABLE_RING ? in->spec.vnodes : 0;
	size_t need = 4 * sizeof(uint32_t) + sizeof(double);
	uint8_t *p;

	for (uint32_t i = 0; i < in->n; i++)
		need += sizeof(uint32_t) + 1 + sizeof(uint16_t) +
			strlen(in->backends[i].name);
	if (need > t->key_cap) {
		uint8_t *buf = realloc(t->key_buf, need);

		if (!buf)
			return 0;
		t->key_buf = buf;
		t->key_cap = need;
	}
	p = t->key_buf;
	p = put(p, &kind, sizeof(kind));
	p = put(p, &in->spec.size, sizeof(in->spec.size));
	p = put(p, &vnodes, sizeof(vnodes));
	p = put(p, &in->max_load, sizeof(in->max_load));
	p = put(p, &in->n, sizeof(in->n));
	for (uint32_t i = 0; i < in->n; i++) {
		const struct mlv_table_backend *b = &in->backends[i];
		/* names are bounded by MLV_NAME_MAX, far below 64 KiB */
		uint16_t len = (uint16_t)strlen(b->name);
		uint8_t no_second = b->no_second;

		p = put(p, &b->weight, sizeof(b->weight));
		p = put(p, &no_second, 1);
		p = put(p, &len, sizeof(len));
		p = put(p, b->name, len);
	}
	return (size_t)(p - t->key_buf);
}

static struct gen_tables_slot *probe(struct mlv_gen_tables *t, uint64_t hash,
				     const uint8_t *key, size_t len)
{
	for (uint32_t i = (uint32_t)hash & t->mask;; i = (i + 1) & t->mask) {
		struct gen_tables_slot *s = &t->slots[i];

		if (!s->table)
			return s;
		if (s->table->key_hash == hash && s->table->key_len == len &&
		    memcmp(s->table->key, key, len) == 0)
			return s;
	}
}

enum mlv_err mlv_gen_tables_begin(struct mlv_gen_tables *t,
				  struct mlv_gen_table **held, uint32_t max_held,
				  struct mlv_gen_table *const *prev,
				  uint32_t n_prev)
{
	uint64_t want = 2 * ((uint64_t)max_held + n_prev) + 1;
	uint32_t cap = 1;

	while (cap < want)
		cap <<= 1;
	memset(t, 0, sizeof(*t));
	t->held = held;
	t->max_held = max_held;
	t->mask = cap - 1;
	t->slots = calloc(cap, sizeof(*t->slots));
	if (!t->slots)
		return MLV_E_NOMEM;
	for (uint32_t i = 0; i < n_prev; i++) {
		struct gen_tables_slot *s = probe(t, prev[i]->key_hash,
						  prev[i]->key, prev[i]->key_len);

		s->table = prev[i];
		s->from_prev = true;
	}
	return MLV_OK;
}

static enum mlv_err build_table(const struct mlv_gen_table_input *in,
				const uint8_t *key, size_t key_len,
				uint64_t hash, struct mlv_gen_table **out)
{
	size_t arr = round_up((size_t)in->spec.size * sizeof(uint16_t),
			      TABLE_ALIGN);
	size_t first_off = round_up(sizeof(struct mlv_gen_table), TABLE_ALIGN);
	size_t key_off = first_off + 2 * arr;
	struct mlv_gen_table *tb;
	uint16_t *first, *second;
	uint8_t *base;
	enum mlv_err err;

	base = aligned_alloc(TABLE_ALIGN, round_up(key_off + key_len, TABLE_ALIGN));
	if (!base)
		return MLV_E_NOMEM;
	tb = (struct mlv_gen_table *)(void *)base;
	first = (uint16_t *)(void *)(base + first_off);
	second = (uint16_t *)(void *)(base + first_off + arr);
	err = mlv_table_build(&in->spec, in->backends, in->n, first, second,
			      &tb->fingerprint);
	if (err) {
		free(base);
		return err;
	}
	memcpy(base + key_off, key, key_len);
	tb->refs = 0;
	tb->size = in->spec.size;
	tb->key_hash = hash;
	tb->first = first;
	tb->second = second;
	tb->key_len = key_len;
	tb->key = base + key_off;
	*out = tb;
	return MLV_OK;
}

enum mlv_err mlv_gen_tables_acquire(struct mlv_gen_tables *t,
				    const struct mlv_gen_table_input *in,
				    const struct mlv_gen_table **out,
				    enum mlv_gen_table_source *source)
{
	struct gen_tables_slot *s;
	size_t len;
	uint64_t hash;
	enum mlv_err err;

	len = encode_key(t, in);
	if (len == 0)
		return MLV_E_NOMEM;
	hash = mlv_siphash24(&tables_key, t->key_buf, len);
	s = probe(t, hash, t->key_buf, len);
	if (s->table && s->taken) {
		*out = s->table;
		*source = s->from_prev ? MLV_GEN_TABLE_REUSED :
					 MLV_GEN_TABLE_SHARED;
		return MLV_OK;
	}
	if (t->n_held == t->max_held)
		return MLV_E_RANGE;
	if (s->table) {
		*source = MLV_GEN_TABLE_REUSED;
	} else {
		err = build_table(in, t->key_buf, len, hash, &s->table);
		if (err)
			return err;
		*source = MLV_GEN_TABLE_BUILT;
	}
	s->taken = true;
	s->table->refs++;
	t->held[t->n_held++] = s->table;
	*out = s->table;
	return MLV_OK;
}

void mlv_gen_tables_end(struct mlv_gen_tables *t)
{
	free(t->slots);
	free(t->key_buf);
	t->slots = NULL;
	t->key_buf = NULL;
}

void mlv_gen_tables_release(struct mlv_gen_table *const *held, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (--held[i]->refs == 0)
			free(held[i]); /* the header starts the allocation */
}
