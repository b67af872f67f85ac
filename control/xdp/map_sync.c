/* SPDX-License-Identifier: BSD-3-Clause */
/* Map synchronisation and per-CPU counter sums: see map_sync.h. */
#define _GNU_SOURCE   /* qsort_r */
#include "control/xdp/map_sync.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>


static int cmp_key(const void *a, const void *b, void *key_size)
{
	return memcmp(a, b, *(const uint32_t *)key_size);
}

/* Is key among the sorted records? */
static int wanted(const void *key, const uint8_t *sorted, size_t n,
		  uint32_t key_size, uint32_t rec)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = memcmp(key, sorted + mid * rec, key_size);

		if (c == 0)
			return 1;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return 0;
}

/* Write every record that is missing or differs; with write_all, every
 * record (a map whose lookup is not by exact key). */
static enum mlv_err write_wanted(int fd, const uint8_t *sorted, size_t n,
				 uint32_t key_size, uint32_t value_size,
				 int write_all, uint8_t *scratch,
				 struct mlv_map_sync_stats *st)
{
	uint32_t rec = key_size + value_size;

	for (size_t i = 0; i < n; i++) {
		const uint8_t *key = sorted + i * rec;
		const uint8_t *val = key + key_size;
		int present;

		if (i && !memcmp(key, key - rec, key_size))
			continue;   /* a duplicate (equal value, per the contract) */
		present = !write_all &&
			bpf_map_lookup_elem(fd, key, scratch) == 0;
		if (present && !memcmp(scratch, val, value_size)) {
			st->unchanged++;
			continue;
		}
		if (bpf_map_update_elem(fd, key, val, BPF_ANY))
			return mlv_err_from_errno(errno);
		if (present)
			st->updated++;
		else
			st->added++;
	}
	return MLV_OK;
}

/* Delete every key of the map that is not wanted. Keys are collected
 * first: deleting while walking would restart the walk. */
static enum mlv_err delete_stale(int fd, const uint8_t *sorted, size_t n,
				 uint32_t key_size, uint32_t rec,
				 struct mlv_map_sync_stats *st)
{
	uint8_t *stale = NULL, *cur, *next;
	size_t n_stale = 0, cap = 0;
	enum mlv_err err = MLV_OK;
	void *prev_key = NULL;

	cur = malloc(2 * (size_t)key_size);
	if (!cur)
		return MLV_E_NOMEM;
	next = cur + key_size;
	while (bpf_map_get_next_key(fd, prev_key, next) == 0) {
		if (!wanted(next, sorted, n, key_size, rec)) {
			if (n_stale == cap) {
				size_t ncap = cap ? 2 * cap : 64;
				uint8_t *grown = realloc(stale, ncap * key_size);

				if (!grown) {
					err = MLV_E_NOMEM;
					goto out;
				}
				stale = grown;
				cap = ncap;
			}
			memcpy(stale + n_stale++ * key_size, next, key_size);
		}
		memcpy(cur, next, key_size);
		prev_key = cur;
	}
	if (errno != ENOENT) {
		err = mlv_err_from_errno(errno);
		goto out;
	}
	for (size_t i = 0; i < n_stale; i++) {
		if (bpf_map_delete_elem(fd, stale + i * key_size) &&
		    errno != ENOENT) {
			err = mlv_err_from_errno(errno);
			goto out;
		}
		st->removed++;
	}
out:
	free(stale);
	free(cur);
	return err;
}

static enum mlv_err sync_map(int fd, uint32_t key_size, uint32_t value_size,
			     const void *keys, const void *values, size_t n,
			     int write_all, struct mlv_map_sync_stats *stats)
{
	struct mlv_map_sync_stats st = { 0 };
	uint32_t rec = key_size + value_size;
	uint8_t *sorted = NULL, *scratch = NULL;
	enum mlv_err err;

	if (!key_size || !value_size || (n && (!keys || !values)))
		return MLV_E_INVAL;
	sorted = malloc(n ? n * rec : 1);
	scratch = malloc(value_size);
	if (!sorted || !scratch) {
		err = MLV_E_NOMEM;
		goto out;
	}
	/* packed (key, value) records, sorted by key for the lookups below */
	for (size_t i = 0; i < n; i++) {
		memcpy(sorted + i * rec, (const uint8_t *)keys + i * key_size,
		       key_size);
		memcpy(sorted + i * rec + key_size,
		       (const uint8_t *)values + i * value_size, value_size);
	}
	qsort_r(sorted, n, rec, cmp_key, &key_size);

	err = write_wanted(fd, sorted, n, key_size, value_size, write_all,
			   scratch, &st);
	if (!err)
		err = delete_stale(fd, sorted, n, key_size, rec, &st);
	if (!err && stats)
		*stats = st;
out:
	free(scratch);
	free(sorted);
	return err;
}

enum mlv_err mlv_map_sync(int fd, uint32_t key_size, uint32_t value_size,
			  const void *keys, const void *values, size_t n,
			  struct mlv_map_sync_stats *stats)
{
	return sync_map(fd, key_size, value_size, keys, values, n, 0, stats);
}

enum mlv_err mlv_lpm_sync(int fd, uint32_t key_size, uint32_t value_size,
			  const void *keys, const void *values, size_t n)
{
	return sync_map(fd, key_size, value_size, keys, values, n, 1, NULL);
}

enum mlv_err mlv_percpu_sum(int fd, uint32_t n, uint64_t *out)
{
	int n_cpus = libbpf_num_possible_cpus();
	uint64_t *vals;
	enum mlv_err err = MLV_OK;

	if (n_cpus <= 0)
		return MLV_E_IO;
	vals = calloc((size_t)n_cpus, sizeof(*vals));
	if (!vals)
		return MLV_E_NOMEM;
	for (uint32_t i = 0; i < n; i++) {
		out[i] = 0;
		if (bpf_map_lookup_elem(fd, &i, vals)) {
			err = mlv_err_from_errno(errno);
			break;
		}
		for (int c = 0; c < n_cpus; c++)
			out[i] += vals[c];
	}
	free(vals);
	return err;
}
