/* SPDX-License-Identifier: BSD-3-Clause */
/* Userspace: make a BPF hash map or LPM trie hold exactly a given set of
 * entries, changing only what differs, so a reload never empties the map
 * even briefly. Shared by the steering control module and the decap loader.
 *
 * Threads: one thread per map at a time (the BPF program may read the
 * map concurrently: each update/delete is atomic per entry). */
#ifndef MLV_BPF_MAP_SYNC_H
#define MLV_BPF_MAP_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include "control/base/error.h"

/* What a sync changed. */
struct mlv_map_sync_stats {
	uint32_t added;      /* keys that were not in the map */
	uint32_t updated;    /* keys present with another value */
	uint32_t removed;    /* keys not in the wanted set */
	uint32_t unchanged;
};

/* Make map fd (a hash map of key_size/value_size) equal to the n entries
 * keys[i] -> values[i] (arrays of key_size and value_size strides;
 * duplicate keys are allowed and must carry equal values). Missing and changed
 * entries are written first, then stale ones deleted, so an entry in both
 * the old and the new set is never absent. Returns MLV_OK; MLV_E_LIMIT if
 * the map is full (it then holds the old set plus part of the new);
 * MLV_E_PERM, MLV_E_IO on other kernel errors; MLV_E_NOMEM. *stats (may
 * be NULL) is filled on success. */
enum mlv_err mlv_map_sync(int fd, uint32_t key_size, uint32_t value_size,
			  const void *keys, const void *values, size_t n,
			  struct mlv_map_sync_stats *stats);

/* mlv_map_sync for a BPF_MAP_TYPE_LPM_TRIE. Its lookup is a longest-prefix
 * match, not an exact one (a wanted 10.1.2.0/24 would seem present
 * while 10.0.0.0/8 is), so every wanted entry is written; writing a
 * prefix that is there replaces it in place, so it is never absent
 * either. Same results as mlv_map_sync. */
enum mlv_err mlv_lpm_sync(int fd, uint32_t key_size, uint32_t value_size,
			  const void *keys, const void *values, size_t n);

/* Sum a per-CPU array of n u64 counters into out[0..n). Returns MLV_OK,
 * MLV_E_NOMEM, or MLV_E_IO/MLV_E_PERM if a lookup fails. */
enum mlv_err mlv_percpu_sum(int fd, uint32_t n, uint64_t *out);

#endif
