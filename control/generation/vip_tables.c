/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared, reference-counted VIP tables (see vip_tables.h). Each table is
 * one aligned allocation: the header, the first and second choices, then
 * the canonical key the table was built from (kept for the full compare
 * that confirms a hash match, and decoded again to complete a table's
 * deferred second choices). */
#include "control/generation/vip_tables.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "control/tables/build_pool.h"
#include "control/base/siphash.h"

#define TABLE_ALIGN 64 /* cache line, as the generation's own arrays */

struct gen_tables_slot {
	struct mlv_gen_table *table; /* NULL: empty */
	bool taken;                  /* already in held[] */
	bool from_prev;              /* held by the previous generation */
	/* 1 + its index in jobs[] if this build queued table (0: not
	 * queued); still unfilled while > n_run */
	uint32_t job;
};

/* Only this process compares these hashes, and every hit is confirmed by
 * a full key compare, so a fixed key is enough. */
static const struct mlv_siphash_key tables_key = { {
	0x6d, 0x6c, 0x76, 0x2d, 0x74, 0x61, 0x62, 0x6c,
	0x65, 0x2d, 0x73, 0x68, 0x61, 0x72, 0x65, 0x31,
} };

/* Freed table allocations kept for the next build. A table is one
 * allocation of a few hundred KiB, above malloc's mmap threshold: a fresh
 * one is a fresh mapping whose pages the kernel faults in and zeroes as
 * the builder first writes them, and freeing it unmaps it again. A
 * rebuild of every table after a failure frees (once its grace period
 * ends) as many tables as the next rebuild or second-choice completion
 * needs, so keeping them turns those page faults into plain stores.
 * LIFO lists, one per allocation size, for a few sizes; bounded in bytes.
 * Control thread only, like the reference counts. */
#define POOL_SIZES 8
#define POOL_MAX_BYTES ((size_t)256 << 20)

struct pooled {
	struct pooled *next;
};

static struct {
	size_t bytes[POOL_SIZES];       /* allocation size of each list; 0 unused */
	struct pooled *head[POOL_SIZES];
	size_t held;                    /* bytes in every list */
} pool;

static void *pool_get(size_t bytes)
{
	for (uint32_t i = 0; i < POOL_SIZES; i++) {
		struct pooled *p = pool.head[i];

		if (pool.bytes[i] != bytes || !p)
			continue;
		pool.head[i] = p->next;
		pool.held -= bytes;
		return p;
	}
	return NULL;
}

static void pool_put(void *mem, size_t bytes)
{
	uint32_t free_list = POOL_SIZES;

	if (pool.held + bytes <= POOL_MAX_BYTES) {
		for (uint32_t i = 0; i < POOL_SIZES; i++) {
			if (pool.bytes[i] == bytes) {
				free_list = i;
				break;
			}
			if (!pool.head[i] && free_list == POOL_SIZES)
				free_list = i;
		}
	}
	if (free_list == POOL_SIZES) {
		free(mem);
		return;
	}
	pool.bytes[free_list] = bytes;
	((struct pooled *)mem)->next = pool.head[free_list];
	pool.head[free_list] = mem;
	pool.held += bytes;
}

void mlv_gen_tables_pool_drain(void)
{
	for (uint32_t i = 0; i < POOL_SIZES; i++) {
		while (pool.head[i]) {
			struct pooled *p = pool.head[i];

			pool.head[i] = p->next;
			free(p);
		}
		pool.bytes[i] = 0;
	}
	pool.held = 0;
}

static size_t round_up(size_t v, size_t align)
{
	return (v + align - 1) & ~(align - 1);
}

/* The second choices of a table built without them: every slot
 * MLV_MAGLEV_NO_BACKEND, one read-only array per table size shared by all
 * such tables, rather than each table setting its own (in a 1000-table
 * rebuild at 65537 that is 131 MB of 0xff, which with its page faults
 * takes about 1 % of the build). Never written after it is set; kept for
 * the life of the process (tables of any generation may point at it). For
 * NONE_SIZES sizes at most: a table of any other size fills its own
 * array. Control thread only. */
#define NONE_SIZES 4

static struct {
	uint32_t size;
	uint16_t *none;
} none_arrays[NONE_SIZES];

static const uint16_t *none_array(uint32_t size)
{
	for (uint32_t i = 0; i < NONE_SIZES; i++) {
		uint16_t *none;

		if (none_arrays[i].none && none_arrays[i].size == size)
			return none_arrays[i].none;
		if (none_arrays[i].none)
			continue;
		none = aligned_alloc(TABLE_ALIGN,
				     round_up((size_t)size * sizeof(*none),
					      TABLE_ALIGN));
		if (!none)
			return NULL;
		memset(none, 0xff, (size_t)size * sizeof(*none));
		none_arrays[i].size = size;
		none_arrays[i].none = none;
		return none;
	}
	return NULL;
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
			strlen(in->backends[i].name) + 1;
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
		/* with its NUL, so a decoded key can point at the name */
		p = put(p, b->name, (size_t)len + 1);
	}
	return (size_t)(p - t->key_buf);
}

static const uint8_t *get(const uint8_t *p, void *v, size_t n)
{
	memcpy(v, p, n);
	return p + n;
}

/* The table input back from a key encode_key wrote (this process, so
 * trusted): *backends is allocated, the names point into key. */
static enum mlv_err decode_key(const uint8_t *key,
			       struct mlv_gen_table_input *in,
			       struct mlv_table_backend **backends)
{
	uint32_t kind, n;
	struct mlv_table_backend *bs;
	const uint8_t *p = key;

	memset(in, 0, sizeof(*in));
	p = get(p, &kind, sizeof(kind));
	p = get(p, &in->spec.size, sizeof(in->spec.size));
	p = get(p, &in->spec.vnodes, sizeof(in->spec.vnodes));
	p = get(p, &in->max_load, sizeof(in->max_load));
	p = get(p, &n, sizeof(n));
	in->spec.kind = (enum mlv_table_kind)kind;
	bs = malloc((n ? n : 1) * sizeof(*bs));
	if (!bs)
		return MLV_E_NOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t no_second;
		uint16_t len;

		p = get(p, &bs[i].weight, sizeof(bs[i].weight));
		p = get(p, &no_second, 1);
		p = get(p, &len, sizeof(len));
		bs[i].no_second = no_second;
		bs[i].name = (const char *)p;
		p += (size_t)len + 1;
	}
	in->backends = bs;
	in->n = n;
	*backends = bs;
	return MLV_OK;
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
		/* a completed copy stands in for the table it completes */
		struct mlv_gen_table *tb = prev[i]->with_second ?
					   prev[i]->with_second : prev[i];
		struct gen_tables_slot *s = probe(t, tb->key_hash, tb->key,
						  tb->key_len);

		s->table = tb;
		s->from_prev = true;
	}
	return MLV_OK;
}

/* One allocation for a table of size slots and a key of key_len bytes,
 * the key copied in, the arrays left for the caller; NULL when out of
 * memory. */
static struct mlv_gen_table *alloc_table(uint32_t size, const uint8_t *key,
					 size_t key_len, uint64_t hash,
					 uint16_t **first, uint16_t **second)
{
	size_t arr = round_up((size_t)size * sizeof(uint16_t), TABLE_ALIGN);
	size_t first_off = round_up(sizeof(struct mlv_gen_table), TABLE_ALIGN);
	size_t key_off = first_off + 2 * arr;
	size_t bytes = round_up(key_off + key_len, TABLE_ALIGN);
	struct mlv_gen_table *tb;
	uint8_t *base;

	base = pool_get(bytes);
	if (!base)
		base = aligned_alloc(TABLE_ALIGN, bytes);
	if (!base)
		return NULL;
	tb = (struct mlv_gen_table *)(void *)base;
	*first = (uint16_t *)(void *)(base + first_off);
	*second = (uint16_t *)(void *)(base + first_off + arr);
	memcpy(base + key_off, key, key_len);
	*tb = (struct mlv_gen_table){
		.size = size, .key_hash = hash, .first = *first,
		.second = *second, .key_len = key_len, .key = base + key_off,
		.bytes = bytes,
	};
	return tb;
}

/* Allocate the table for in, with its key, has_second and (deferred)
 * second choices final, and queue it for mlv_gen_tables_run, which fills
 * first[], second[] and the fingerprint. Everything shared between
 * tables (the freed-table pool, the "none" arrays) is touched here, on
 * the control thread, so the jobs only write their own table. */
static enum mlv_err queue_table(struct mlv_gen_tables *t,
				const struct mlv_gen_table_input *in,
				const uint8_t *key, size_t key_len,
				uint64_t hash, struct mlv_gen_table **out)
{
	bool defer = in->defer_second && !in->second_now &&
		     mlv_table_second_separable(in->spec.kind);
	struct mlv_gen_table *tb;
	uint16_t *first, *second;

	if (t->n_jobs == t->jobs_cap) {
		uint32_t cap = t->jobs_cap ? 2 * t->jobs_cap : 64;
		struct mlv_gen_table **jobs = realloc(t->jobs,
						      cap * sizeof(*jobs));

		if (!jobs)
			return MLV_E_NOMEM;
		t->jobs = jobs;
		t->jobs_cap = cap;
	}
	tb = alloc_table(in->spec.size, key, key_len, hash, &first, &second);
	if (!tb)
		return MLV_E_NOMEM;
	/* the data path reads second[] whenever a slot's owner is unusable:
	 * "none" until the completed copy replaces this table */
	if (defer) {
		const uint16_t *none = none_array(in->spec.size);

		if (none)
			tb->second = none;
		else
			memset(second, 0xff,
			       (size_t)in->spec.size * sizeof(*second));
	}
	tb->has_second = !defer;
	t->jobs[t->n_jobs++] = tb;
	*out = tb;
	return MLV_OK;
}

/* One job of mlv_gen_tables_run: build queued table index of the batch
 * from its own key. Any thread; writes only that table (its arrays, which
 * no one reads before the run returns, and its fingerprint). */
static enum mlv_err fill_job(void *ctx, uint32_t index)
{
	const struct mlv_gen_tables *t = ctx;
	struct mlv_gen_table *tb = t->jobs[t->n_run + index];
	struct mlv_table_backend *backends = NULL;
	struct mlv_gen_table_input in;
	uint64_t fingerprint = 0;
	enum mlv_err err;

	err = decode_key(tb->key, &in, &backends);
	if (err)
		return err;
	/* the arrays are this table's own (alloc_table): const only to
	 * everyone who gets the table after this */
	err = mlv_table_build(&in.spec, in.backends, in.n, (uint16_t *)tb->first,
			      tb->has_second ? (uint16_t *)tb->second : NULL,
			      &fingerprint);
	free(backends);
	tb->fingerprint = fingerprint;
	return err;
}

enum mlv_err mlv_gen_tables_run(struct mlv_gen_tables *t)
{
	uint32_t n = t->n_jobs - t->n_run;
	enum mlv_err err;

	if (n == 0)
		return MLV_OK;
	err = mlv_build_pool_run(t->pool, n, fill_job, t);
	t->n_run = t->n_jobs;
	return err;
}

enum mlv_err mlv_gen_table_complete(struct mlv_gen_table *tb)
{
	struct mlv_table_backend *backends = NULL;
	struct mlv_gen_table_input in;
	struct mlv_gen_table *done;
	uint16_t *first, *second;
	enum mlv_err err;

	if (tb->has_second || tb->with_second)
		return MLV_OK;
	done = alloc_table(tb->size, tb->key, tb->key_len, tb->key_hash,
			   &first, &second);
	if (!done)
		return MLV_E_NOMEM;
	err = decode_key(tb->key, &in, &backends);
	if (err)
		goto fail;
	memcpy(first, tb->first, (size_t)tb->size * sizeof(*first));
	err = mlv_table_build_second(&in.spec, in.backends, in.n, first,
				     second);
	if (err)
		goto fail;
	free(backends);
	done->fingerprint = tb->fingerprint;
	done->has_second = true;
	done->refs = 1;          /* tb's */
	tb->with_second = done;
	return MLV_OK;
fail:
	free(backends);
	pool_put(done, done->bytes);
	return err;
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
	if (s->table && !s->table->has_second && in->second_now) {
		/* this VIP reads second choices now: complete the table; the
		 * copy replaces it here, and in the next build (with_second) */
		if (t->n_held == t->max_held)
			return MLV_E_RANGE;
		/* completing copies first[]: a table this build queued must be
		 * filled first (rare: an earlier VIP with the same input did
		 * not read second choices at once) */
		if (s->job > t->n_run) {
			err = mlv_gen_tables_run(t);
			if (err)
				return err;
		}
		err = mlv_gen_table_complete(s->table);
		if (err)
			return err;
		s->table = s->table->with_second;
		s->taken = false;
		s->from_prev = false;
		s->job = 0;
		*source = MLV_GEN_TABLE_BUILT;
		goto take;
	}
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
		err = queue_table(t, in, t->key_buf, len, hash, &s->table);
		if (err)
			return err;
		s->job = t->n_jobs;
		*source = MLV_GEN_TABLE_BUILT;
	}
take:
	s->taken = true;
	s->table->refs++;
	t->held[t->n_held++] = s->table;
	*out = s->table;
	return MLV_OK;
}

enum mlv_err mlv_gen_tables_find(struct mlv_gen_tables *t,
				 const struct mlv_gen_table_input *in,
				 const struct mlv_gen_table **out)
{
	size_t len = encode_key(t, in);
	uint64_t hash;

	*out = NULL;
	if (len == 0)
		return MLV_E_NOMEM;
	hash = mlv_siphash24(&tables_key, t->key_buf, len);
	*out = probe(t, hash, t->key_buf, len)->table;
	return MLV_OK;
}

void mlv_gen_tables_end(struct mlv_gen_tables *t)
{
	free(t->slots);
	free(t->key_buf);
	free(t->jobs);
	t->slots = NULL;
	t->key_buf = NULL;
	t->jobs = NULL;
}

void mlv_gen_tables_release(struct mlv_gen_table *const *held, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct mlv_gen_table *tb = held[i];

		/* a chain is at most two long: a completed copy has its
		 * second choices, so nothing completes it */
		while (tb && --tb->refs == 0) {
			struct mlv_gen_table *next = tb->with_second;

			/* the header starts the allocation */
			pool_put(tb, tb->bytes);
			tb = next;
		}
	}
}
