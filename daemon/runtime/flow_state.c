/* SPDX-License-Identifier: BSD-3-Clause */
#include "daemon/runtime/flow_state.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "control/base/file.h"

#define MAGIC "MLVFLOWS"
#define HEADER_LEN 64u
#define BACKEND_LEN 136u
#define WORKER_LEN 16u
#define ENTRY_LEN ((uint32_t)sizeof(struct mlv_ct_saved))
#define TRAILER_LEN 8u

_Static_assert(sizeof(struct mlv_ct_saved) == 40,
	       "the file's entry record is the saved entry as it is");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "the file is little-endian, written and read as memory");

/* The header's fields at their offsets. */
struct header {
	char magic[8];
	uint32_t version;
	uint32_t header_len;
	uint64_t saved_unix_ms;
	uint32_t n_workers;
	uint32_t capacity;
	uint32_t n_backends;
	uint32_t entry_len;
	uint64_t n_entries;
	uint64_t layout;
	uint8_t zero[8];
};
_Static_assert(sizeof(struct header) == HEADER_LEN, "header layout");

struct backend_rec {
	uint32_t uid;
	uint32_t zero;
	char vip[MLV_NAME_MAX];
	char backend[MLV_NAME_MAX];
};
_Static_assert(sizeof(struct backend_rec) == BACKEND_LEN, "backend record");

struct worker_rec {
	uint64_t seed;
	uint64_t n;
};
_Static_assert(sizeof(struct worker_rec) == WORKER_LEN, "worker record");

/* The file's length for these counts, or 0 when it would not fit a
 * size_t (counts are checked against their limits first). */
static size_t file_len(uint32_t workers, uint64_t entries, uint32_t backends)
{
	unsigned __int128 n = (unsigned __int128)HEADER_LEN +
			      (unsigned __int128)backends * BACKEND_LEN +
			      (unsigned __int128)workers * WORKER_LEN +
			      (unsigned __int128)entries * ENTRY_LEN +
			      TRAILER_LEN;

	return n > SIZE_MAX ? 0 : (size_t)n;
}

size_t mlv_flow_state_max_size(uint32_t workers, uint32_t capacity,
			       uint32_t backends)
{
	return file_len(workers, (uint64_t)workers * capacity, backends);
}

static bool name_ok(const char *s)
{
	size_t n = strnlen(s, MLV_NAME_MAX);

	/* one name, NUL-terminated, nothing after the NUL */
	if (n == 0 || n == MLV_NAME_MAX)
		return false;
	for (size_t i = n; i < MLV_NAME_MAX; i++)
		if (s[i])
			return false;
	return true;
}

enum mlv_err mlv_flow_state_encode(const struct mlv_flow_state *st,
				   void **buf, size_t *len)
{
	struct header h = { .version = MLV_FLOW_STATE_VERSION,
			    .header_len = HEADER_LEN };
	uint64_t entries = 0;
	uint8_t *p, *o;
	uint64_t sum;
	size_t n;

	if (st->n_workers == 0 || st->n_workers > MLV_MAX_WORKERS ||
	    st->capacity == 0 || st->capacity > MLV_CT_MAX_ENTRIES ||
	    st->n_backends > MLV_FLOW_STATE_MAX_BACKENDS)
		return MLV_E_INVAL;
	for (uint32_t w = 0; w < st->n_workers; w++) {
		if (st->workers[w].n > st->capacity)
			return MLV_E_INVAL;
		entries += st->workers[w].n;
	}
	n = file_len(st->n_workers, entries, st->n_backends);
	if (n == 0)
		return MLV_E_INVAL;
	p = calloc(1, n);
	if (!p)
		return MLV_E_NOMEM;
	memcpy(h.magic, MAGIC, 8);
	h.saved_unix_ms = st->saved_unix_ms;
	h.n_workers = st->n_workers;
	h.capacity = st->capacity;
	h.n_backends = st->n_backends;
	h.entry_len = ENTRY_LEN;
	h.n_entries = entries;
	h.layout = st->layout;
	memcpy(p, &h, sizeof(h));
	o = p + HEADER_LEN;
	for (uint32_t i = 0; i < st->n_backends; i++, o += BACKEND_LEN) {
		struct backend_rec r = { .uid = st->backends[i].uid };

		snprintf(r.vip, sizeof(r.vip), "%s", st->backends[i].vip);
		snprintf(r.backend, sizeof(r.backend), "%s",
			 st->backends[i].backend);
		memcpy(o, &r, sizeof(r));
	}
	for (uint32_t w = 0; w < st->n_workers; w++, o += WORKER_LEN) {
		struct worker_rec r = { st->workers[w].seed, st->workers[w].n };

		memcpy(o, &r, sizeof(r));
	}
	for (uint32_t w = 0; w < st->n_workers; w++) {
		size_t bytes = (size_t)st->workers[w].n * ENTRY_LEN;

		if (bytes)
			memcpy(o, st->workers[w].entries, bytes);
		o += bytes;
	}
	sum = XXH3_64bits(p, n - TRAILER_LEN);
	memcpy(o, &sum, sizeof(sum));
	*buf = p;
	*len = n;
	return MLV_OK;
}

/* Refuse the file: free buf, say why. */
static enum mlv_err refuse(void *buf, enum mlv_err err, char *why,
			   size_t why_len, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static enum mlv_err refuse(void *buf, enum mlv_err err, char *why,
			   size_t why_len, const char *fmt, ...)
{
	va_list ap;

	free(buf);
	if (why && why_len) {
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return err;
}

uint32_t mlv_flow_state_backend_index(const struct mlv_flow_state_backend *b,
				      uint32_t n, uint32_t uid)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (b[mid].uid == uid)
			return mid;
		if (b[mid].uid < uid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return n;
}

/* The entry records of one worker (n of them, starting at rec): every
 * slot inside the table, a tracked state, a time left within the
 * timeouts' range, a uid the backend table names. Returns the index of
 * the first bad one, or n. */
static uint64_t bad_entry(const uint8_t *rec, uint64_t n, uint32_t capacity,
			  const struct mlv_flow_state_backend *b,
			  uint32_t n_backends)
{
	for (uint64_t i = 0; i < n; i++) {
		struct mlv_ct_saved s;

		memcpy(&s, rec + i * ENTRY_LEN, sizeof(s));
		if (s.slot >= capacity ||
		    s.entry.state == MLV_CT_FREE ||
		    s.entry.state >= MLV_CT__NSTATES || s.left_ms == 0 ||
		    s.left_ms > MLV_CT_MAX_TIMEOUT_MS ||
		    mlv_flow_state_backend_index(b, n_backends,
						 s.entry.backend_uid) == n_backends)
			return i;
	}
	return n;
}

enum mlv_err mlv_flow_state_decode(void *buf, size_t len,
				   struct mlv_flow_state *st, char *why,
				   size_t why_len)
{
	const uint8_t *p = buf, *o;
	struct header h;
	uint64_t sum, total = 0;
	const struct backend_rec *b;
	struct mlv_flow_state_backend *out;
	size_t want;

	memset(st, 0, sizeof(*st));
	if (len < HEADER_LEN + TRAILER_LEN || memcmp(p, MAGIC, 8) != 0)
		return refuse(buf, MLV_E_PROTO, why, why_len,
			      "not a maglevd flows file (%zu bytes, no %s "
			      "header)", len, MAGIC);
	memcpy(&h, p, sizeof(h));
	if (h.version != MLV_FLOW_STATE_VERSION)
		return refuse(buf, MLV_E_PROTO, why, why_len,
			      "flows file version %u; this maglevd reads %u",
			      h.version, MLV_FLOW_STATE_VERSION);
	if (h.header_len != HEADER_LEN || h.entry_len != ENTRY_LEN)
		return refuse(buf, MLV_E_PROTO, why, why_len,
			      "header of %u bytes and entries of %u; version "
			      "%u has %u and %u", h.header_len, h.entry_len,
			      MLV_FLOW_STATE_VERSION, HEADER_LEN, ENTRY_LEN);
	if (h.n_workers == 0 || h.n_workers > MLV_MAX_WORKERS ||
	    h.capacity == 0 || h.capacity > MLV_CT_MAX_ENTRIES ||
	    h.capacity % MLV_CT_WAYS != 0 ||
	    h.n_backends > MLV_FLOW_STATE_MAX_BACKENDS ||
	    h.n_entries > (uint64_t)h.n_workers * h.capacity)
		return refuse(buf, MLV_E_RANGE, why, why_len,
			      "%u workers of %u entries, %u backends, %llu "
			      "entries: out of range", h.n_workers,
			      h.capacity, h.n_backends,
			      (unsigned long long)h.n_entries);
	want = file_len(h.n_workers, h.n_entries, h.n_backends);
	if (want != len)
		return refuse(buf, MLV_E_INVAL, why, why_len,
			      "%zu bytes where its counts make %zu (cut short "
			      "or padded)", len, want);
	memcpy(&sum, p + len - TRAILER_LEN, sizeof(sum));
	if (sum != XXH3_64bits(p, len - TRAILER_LEN))
		return refuse(buf, MLV_E_INVAL, why, why_len,
			      "checksum mismatch (damaged)");
	for (size_t i = 0; i < sizeof(h.zero); i++)
		if (h.zero[i])
			return refuse(buf, MLV_E_INVAL, why, why_len,
				      "reserved header bytes not zero");
	o = p + HEADER_LEN;
	b = (const struct backend_rec *)o;
	for (uint32_t i = 0; i < h.n_backends; i++) {
		if (b[i].zero || !name_ok(b[i].vip) || !name_ok(b[i].backend))
			return refuse(buf, MLV_E_INVAL, why, why_len,
				      "backend record %u: bad name", i);
		/* sorted, no uid twice: the entries' uids are looked up */
		if (i > 0 && b[i].uid <= b[i - 1].uid)
			return refuse(buf, MLV_E_INVAL, why, why_len,
				      "backend record %u: uid %u not above "
				      "%u", i, b[i].uid, b[i - 1].uid);
	}
	o += (size_t)h.n_backends * BACKEND_LEN;
	for (uint32_t w = 0; w < h.n_workers; w++) {
		struct worker_rec r;

		memcpy(&r, o + (size_t)w * WORKER_LEN, sizeof(r));
		if (r.n > h.capacity || r.n > h.n_entries - total)
			return refuse(buf, MLV_E_RANGE, why, why_len,
				      "worker %u: %llu entries (table of %u, "
				      "%llu in the file)", w,
				      (unsigned long long)r.n, h.capacity,
				      (unsigned long long)h.n_entries);
		st->workers[w].seed = r.seed;
		st->workers[w].n = r.n;
		total += r.n;
	}
	if (total != h.n_entries)
		return refuse(buf, MLV_E_INVAL, why, why_len,
			      "the workers hold %llu entries, the header says "
			      "%llu", (unsigned long long)total,
			      (unsigned long long)h.n_entries);
	o += (size_t)h.n_workers * WORKER_LEN;
	/* backend_rec is mlv_flow_state_backend with a word of padding
	 * after the uid: copied out rather than aliased, and the entries'
	 * uids looked up in the copy */
	out = calloc(h.n_backends + 1, sizeof(*out));
	if (!out)
		return refuse(buf, MLV_E_NOMEM, why, why_len,
			      "out of memory for %u backends", h.n_backends);
	for (uint32_t i = 0; i < h.n_backends; i++) {
		out[i].uid = b[i].uid;
		memcpy(out[i].vip, b[i].vip, MLV_NAME_MAX);
		memcpy(out[i].backend, b[i].backend, MLV_NAME_MAX);
	}
	for (uint32_t w = 0; w < h.n_workers; w++) {
		uint64_t bad = bad_entry(o, st->workers[w].n, h.capacity, out,
					 h.n_backends);

		if (bad != st->workers[w].n) {
			free(out);
			return refuse(buf, MLV_E_RANGE, why, why_len,
				      "worker %u, entry %llu: slot, state, "
				      "time left or backend out of range", w,
				      (unsigned long long)bad);
		}
		st->workers[w].entries = (const struct mlv_ct_saved *)o;
		o += (size_t)st->workers[w].n * ENTRY_LEN;
	}
	st->saved_unix_ms = h.saved_unix_ms;
	st->n_workers = h.n_workers;
	st->capacity = h.capacity;
	st->layout = h.layout;
	st->n_backends = h.n_backends;
	st->backends = out;
	st->owned = buf;
	return MLV_OK;
}

uint64_t mlv_flow_state_layout(const struct mlv_config *cfg,
			       uint32_t n_workers,
			       const struct mlv_flow_state_queue *q, size_t n)
{
	XXH3_state_t *s = XXH3_createState();
	uint64_t h;

	if (!s)
		return 0;
	XXH3_64bits_reset(s);
	XXH3_64bits_update(s, &n_workers, sizeof(n_workers));
	for (size_t i = 0; i < n; i++) {
		const struct mlv_port_config *pc =
			q[i].port < cfg->n_ports ? &cfg->ports[q[i].port] : NULL;

		XXH3_64bits_update(s, &q[i].worker, sizeof(q[i].worker));
		if (pc) {
			XXH3_64bits_update(s, pc->name, strlen(pc->name) + 1);
			XXH3_64bits_update(s, pc->device,
					   strlen(pc->device) + 1);
		}
		XXH3_64bits_update(s, &q[i].queue, sizeof(q[i].queue));
	}
	h = XXH3_64bits_digest(s);
	XXH3_freeState(s);
	return h;
}

enum mlv_err mlv_flow_state_save(const char *path,
				 const struct mlv_flow_state *st, char *why,
				 size_t why_len)
{
	void *buf = NULL;
	size_t len = 0;
	enum mlv_err err = mlv_flow_state_encode(st, &buf, &len);

	if (err) {
		snprintf(why, why_len, "cannot encode the flows: %s",
			 mlv_strerror(err));
		return err;
	}
	err = mlv_file_replace(path, buf, len, 0600, MLV_FILE_DURABLE, why,
			       why_len);
	free(buf);
	return err;
}

enum mlv_err mlv_flow_state_load(const char *path, size_t max,
				 struct mlv_flow_state *st, char *why,
				 size_t why_len)
{
	char *data = NULL;
	size_t len = 0;
	enum mlv_err err;

	memset(st, 0, sizeof(*st));
	err = mlv_file_read(path, max, &data, &len, why, why_len);
	if (err)
		return err;
	return mlv_flow_state_decode(data, len, st, why, why_len);
}

void mlv_flow_state_free(struct mlv_flow_state *st)
{
	if (!st)
		return;
	free((void *)st->backends);
	free(st->owned);
	memset(st, 0, sizeof(*st));
}
