/* SPDX-License-Identifier: BSD-3-Clause */
#include "daemon/runtime/sc_history.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "control/base/file.h"
#include "control/tables/maglev.h"

#define MAGIC "MLVSCHST"
#define HEADER_LEN 32u
#define VIP_LEN 80u
#define NAME_LEN ((uint32_t)MLV_NAME_MAX)
#define TRAILER_LEN 8u

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "the file is little-endian, written and read as memory");

struct header {
	char magic[8];
	uint32_t version;
	uint32_t header_len;
	uint64_t saved_unix_ms;
	uint32_t n_vips;
	uint32_t zero;
};
_Static_assert(sizeof(struct header) == HEADER_LEN, "header layout");

struct vip_rec {
	char name[MLV_NAME_MAX];
	uint32_t table_size;
	uint32_t n_backends;
	uint64_t window_end_unix_ms;
};
_Static_assert(sizeof(struct vip_rec) == VIP_LEN, "VIP record");

/* One VIP record's length, from its counts (both within their limits,
 * so no overflow in 64 bits). */
static uint64_t vip_len(uint32_t table_size, uint32_t n_backends)
{
	uint64_t n = VIP_LEN + (uint64_t)n_backends * NAME_LEN +
		     3ull * 2 * table_size;

	return (n + 7) & ~7ull;
}

size_t mlv_sc_history_max_size(uint32_t vips, uint32_t max_table,
			       uint32_t max_backends)
{
	unsigned __int128 n = (unsigned __int128)vips *
			      vip_len(max_table, max_backends) +
			      HEADER_LEN + TRAILER_LEN;

	return n > SIZE_MAX ? SIZE_MAX : (size_t)n;
}

/* One name, NUL-terminated, nothing after the NUL. */
static bool name_ok(const char *s)
{
	size_t n = strnlen(s, MLV_NAME_MAX);

	if (n == 0 || n == MLV_NAME_MAX)
		return false;
	for (size_t i = n; i < MLV_NAME_MAX; i++)
		if (s[i])
			return false;
	return true;
}

/* The first slot of a table_size array whose index is neither below
 * n_backends nor MLV_SC_HISTORY_NONE (a table with no usable backend has
 * none), or table_size. */
static uint32_t bad_index(const uint16_t *a, uint32_t table_size,
			  uint32_t n_backends)
{
	for (uint32_t s = 0; s < table_size; s++)
		if (a[s] >= n_backends && a[s] != MLV_SC_HISTORY_NONE)
			return s;
	return table_size;
}

/* Whether a slot's history is a history: its two former owners differ
 * from each other and from the owner, and an earlier owner comes only
 * after a previous one. The first slot that is not, or table_size. */
static uint32_t bad_history(const uint16_t *t, const uint16_t *p,
			    const uint16_t *e, uint32_t table_size)
{
	const uint16_t none = MLV_SC_HISTORY_NONE;

	for (uint32_t s = 0; s < table_size; s++)
		if ((p[s] != none && p[s] == t[s]) ||
		    (e[s] != none && (p[s] == none || e[s] == p[s] ||
				      e[s] == t[s])))
			return s;
	return table_size;
}

static bool counts_ok(uint32_t table_size, uint32_t n_backends)
{
	return table_size >= 1 && table_size <= MLV_MAGLEV_MAX_SIZE &&
	       n_backends <= MLV_SC_HISTORY_MAX_BACKENDS;
}

enum mlv_err mlv_sc_history_encode(const struct mlv_sc_history *h,
				   void **buf, size_t *len)
{
	struct header hd = { .version = MLV_SC_HISTORY_VERSION,
			     .header_len = HEADER_LEN };
	uint64_t n = HEADER_LEN + TRAILER_LEN;
	uint8_t *p, *o;
	uint64_t sum;

	if (h->n_vips > MLV_MAX_VIPS || (h->n_vips && !h->vips))
		return MLV_E_INVAL;
	for (uint32_t v = 0; v < h->n_vips; v++) {
		const struct mlv_sc_history_vip *r = &h->vips[v];

		if (!counts_ok(r->table_size, r->n_backends) ||
		    strnlen(r->name, MLV_NAME_MAX) == 0 ||
		    strnlen(r->name, MLV_NAME_MAX) == MLV_NAME_MAX ||
		    (v > 0 && strcmp(h->vips[v - 1].name, r->name) >= 0) ||
		    !r->table || !r->previous || !r->earlier ||
		    (r->n_backends && !r->backends))
			return MLV_E_INVAL;
		for (uint32_t b = 0; b < r->n_backends; b++)
			if (strnlen(r->backends[b], NAME_LEN) == 0 ||
			    strnlen(r->backends[b], NAME_LEN) == NAME_LEN ||
			    (b > 0 && strcmp(r->backends[b - 1],
					     r->backends[b]) >= 0))
				return MLV_E_INVAL;
		n += vip_len(r->table_size, r->n_backends);
	}
	if (n > SIZE_MAX)
		return MLV_E_INVAL;
	p = calloc(1, (size_t)n);
	if (!p)
		return MLV_E_NOMEM;
	memcpy(hd.magic, MAGIC, 8);
	hd.saved_unix_ms = h->saved_unix_ms;
	hd.n_vips = h->n_vips;
	memcpy(p, &hd, sizeof(hd));
	o = p + HEADER_LEN;
	for (uint32_t v = 0; v < h->n_vips; v++) {
		const struct mlv_sc_history_vip *r = &h->vips[v];
		struct vip_rec rec = { .table_size = r->table_size,
				       .n_backends = r->n_backends,
				       .window_end_unix_ms =
					       r->window_end_unix_ms };
		size_t arr = (size_t)r->table_size * 2;
		uint8_t *start = o;

		snprintf(rec.name, sizeof(rec.name), "%s", r->name);
		memcpy(o, &rec, sizeof(rec));
		o += VIP_LEN;
		for (uint32_t b = 0; b < r->n_backends; b++, o += NAME_LEN)
			snprintf((char *)o, NAME_LEN, "%s", r->backends[b]);
		memcpy(o, r->table, arr);
		memcpy(o + arr, r->previous, arr);
		memcpy(o + 2 * arr, r->earlier, arr);
		o = start + vip_len(r->table_size, r->n_backends);
	}
	sum = XXH3_64bits(p, (size_t)n - TRAILER_LEN);
	memcpy(o, &sum, sizeof(sum));
	*buf = p;
	*len = (size_t)n;
	return MLV_OK;
}

/* Refuse the file: free what there is, say why. */
static enum mlv_err refuse(void *buf, void *vips, enum mlv_err err,
			   char *why, size_t why_len, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static enum mlv_err refuse(void *buf, void *vips, enum mlv_err err,
			   char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	free(buf);
	free(vips);
	if (why && why_len) {
		va_start(ap, fmt);
		vsnprintf(why, why_len, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* Check the VIP record at p + *off (left bytes before the trailer) and
 * fill r from it; moves *off past it. NULL, or what is wrong. */
static const char *read_vip(const uint8_t *p, uint64_t *off, uint64_t left,
			    struct mlv_sc_history_vip *r)
{
	struct vip_rec rec;
	const uint8_t *o;
	uint64_t len;
	size_t arr;

	if (left < VIP_LEN)
		return "cut short in a VIP record";
	memcpy(&rec, p + *off, sizeof(rec));
	if (!name_ok(rec.name))
		return "a VIP record with a bad name";
	if (!counts_ok(rec.table_size, rec.n_backends))
		return "a VIP record with a table size or a backend count "
		       "out of range";
	len = vip_len(rec.table_size, rec.n_backends);
	if (len > left)
		return "cut short in a VIP record";
	o = p + *off + VIP_LEN;
	memcpy(r->name, rec.name, sizeof(r->name));
	r->table_size = rec.table_size;
	r->n_backends = rec.n_backends;
	r->window_end_unix_ms = rec.window_end_unix_ms;
	r->backends = (const char (*)[MLV_NAME_MAX])(const void *)o;
	for (uint32_t b = 0; b < rec.n_backends; b++)
		if (!name_ok(r->backends[b]) ||
		    (b > 0 && strcmp(r->backends[b - 1], r->backends[b]) >= 0))
			return "a backend name that is bad or out of order";
	o += (size_t)rec.n_backends * NAME_LEN;
	arr = (size_t)rec.table_size * 2;
	r->table = (const uint16_t *)(const void *)o;
	r->previous = (const uint16_t *)(const void *)(o + arr);
	r->earlier = (const uint16_t *)(const void *)(o + 2 * arr);
	if (bad_index(r->table, rec.table_size, rec.n_backends) !=
		    rec.table_size ||
	    bad_index(r->previous, rec.table_size, rec.n_backends) !=
		    rec.table_size ||
	    bad_index(r->earlier, rec.table_size, rec.n_backends) !=
		    rec.table_size)
		return "a slot naming no backend of its VIP";
	if (bad_history(r->table, r->previous, r->earlier, rec.table_size) !=
	    rec.table_size)
		return "a slot whose former owners repeat its owner or each "
		       "other";
	for (const uint8_t *z = o + 3 * arr; z < p + *off + len; z++)
		if (*z)
			return "padding not zero";
	*off += len;
	return NULL;
}

enum mlv_err mlv_sc_history_decode(void *buf, size_t len,
				   struct mlv_sc_history *h, char *why,
				   size_t why_len)
{
	const uint8_t *p = buf;
	struct mlv_sc_history_vip *vips;
	struct header hd;
	uint64_t off = HEADER_LEN, sum;

	memset(h, 0, sizeof(*h));
	if (len < HEADER_LEN + TRAILER_LEN || memcmp(p, MAGIC, 8) != 0)
		return refuse(buf, NULL, MLV_E_PROTO, why, why_len,
			      "not a maglevd history file (%zu bytes, no %s "
			      "header)", len, MAGIC);
	memcpy(&hd, p, sizeof(hd));
	if (hd.version != MLV_SC_HISTORY_VERSION)
		return refuse(buf, NULL, MLV_E_PROTO, why, why_len,
			      "history file version %u; this maglevd reads %u",
			      hd.version, MLV_SC_HISTORY_VERSION);
	if (hd.header_len != HEADER_LEN || hd.zero)
		return refuse(buf, NULL, MLV_E_PROTO, why, why_len,
			      "header of %u bytes (version %u has %u) or "
			      "reserved bytes not zero", hd.header_len,
			      MLV_SC_HISTORY_VERSION, HEADER_LEN);
	if (hd.n_vips > MLV_MAX_VIPS ||
	    (uint64_t)hd.n_vips * VIP_LEN > len - HEADER_LEN - TRAILER_LEN)
		return refuse(buf, NULL, MLV_E_RANGE, why, why_len,
			      "%u VIPs in %zu bytes: out of range", hd.n_vips,
			      len);
	memcpy(&sum, p + len - TRAILER_LEN, sizeof(sum));
	if (sum != XXH3_64bits(p, len - TRAILER_LEN))
		return refuse(buf, NULL, MLV_E_INVAL, why, why_len,
			      "checksum mismatch (damaged or cut short)");
	vips = calloc(hd.n_vips + 1, sizeof(*vips));
	if (!vips)
		return refuse(buf, NULL, MLV_E_NOMEM, why, why_len,
			      "out of memory for %u VIPs", hd.n_vips);
	for (uint32_t v = 0; v < hd.n_vips; v++) {
		const char *bad = read_vip(p, &off, len - TRAILER_LEN - off,
					   &vips[v]);

		if (!bad && v > 0 && strcmp(vips[v - 1].name, vips[v].name) >= 0)
			bad = "VIP names out of order";
		if (bad)
			return refuse(buf, vips, MLV_E_INVAL, why, why_len,
				      "VIP record %u: %s", v, bad);
	}
	if (off != len - TRAILER_LEN)
		return refuse(buf, vips, MLV_E_INVAL, why, why_len,
			      "%llu bytes after the last VIP record",
			      (unsigned long long)(len - TRAILER_LEN - off));
	h->saved_unix_ms = hd.saved_unix_ms;
	h->n_vips = hd.n_vips;
	h->vips = vips;
	h->owned = buf;
	h->owned_vips = vips;
	return MLV_OK;
}

const struct mlv_sc_history_vip *
mlv_sc_history_find(const struct mlv_sc_history *h, const char *name)
{
	uint32_t lo = 0, hi = h ? h->n_vips : 0;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = strcmp(h->vips[mid].name, name);

		if (c == 0)
			return &h->vips[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

enum mlv_err mlv_sc_history_save(const char *path,
				 const struct mlv_sc_history *h, char *why,
				 size_t why_len)
{
	void *buf = NULL;
	size_t len = 0;
	enum mlv_err err = mlv_sc_history_encode(h, &buf, &len);

	if (err) {
		snprintf(why, why_len, "cannot encode the histories: %s",
			 mlv_strerror(err));
		return err;
	}
	/* not synced: written at every table change, it must not hold the
	 * control thread for the disk; a process crash keeps it (the page
	 * cache does), a host crash leaves the last file the disk kept or
	 * a damaged one, which the reader refuses */
	err = mlv_file_replace(path, buf, len, 0600, 0, why, why_len);
	free(buf);
	return err;
}

enum mlv_err mlv_sc_history_load(const char *path, size_t max,
				 struct mlv_sc_history *h, char *why,
				 size_t why_len)
{
	char *data = NULL;
	size_t len = 0;
	enum mlv_err err;

	memset(h, 0, sizeof(*h));
	err = mlv_file_read(path, max, &data, &len, why, why_len);
	if (err)
		return err;
	return mlv_sc_history_decode(data, len, h, why, why_len);
}

void mlv_sc_history_free(struct mlv_sc_history *h)
{
	if (!h)
		return;
	free(h->owned_vips);
	free(h->owned);
	memset(h, 0, sizeof(*h));
}
