/* SPDX-License-Identifier: BSD-3-Clause */
/* flows-bench: what a graceful restart's flows file costs (daemon/runtime/
 * flow_state.h): for F tracked flows (half IPv4, half IPv6) over W worker
 * tables of E entries each, the file's size and the time of each step of
 * a save (export the tables, encode, write and sync) and of a restore
 * (read, decode and check, put back into fresh tables), then a check
 * that every flow is found again with its backend.
 *
 *   flows-bench [--flows F] [--workers W] [--entries E] [--dir DIR]
 *               (defaults: 1000000 flows, 1 worker, 2^21 entries, /tmp)
 *
 * Exit status 0 when every flow came back; 1 otherwise; 2 bad usage. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "control/base/file.h"
#include "dataplane/packet/conntrack.h"
#include "dataplane/packet/flow_hash.h"
#include "daemon/runtime/flow_state.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void *alloc(size_t size, void *ctx)
{
	(void)ctx;
	return calloc(1, size);
}

static void release(void *ptr, void *ctx)
{
	(void)ctx;
	free(ptr);
}

static struct mlv_ct_params params_of(uint32_t entries)
{
	return (struct mlv_ct_params){
		.entries = entries, .tcp_timeout_ms = 900000,
		.tcp_handshake_timeout_ms = 5000,
		.tcp_closing_timeout_ms = 10000, .udp_timeout_ms = 300000,
		.other_timeout_ms = 300000,
	};
}

/* Flow i: a client address and port of its own to one VIP. */
static void key_of(uint64_t i, struct mlv_flow_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = i & 1 ? 6 : 4;
	k->proto = 6;
	k->src[0] = 10;
	memcpy(&k->src[k->family == 6 ? 8 : 1], &i, 3);
	k->dst[0] = 192;
	k->dst[3] = 10;
	k->sport = (uint16_t)(1024 + (i >> 24));
	k->dport = 80;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "flows", required_argument, NULL, 'f' },
		{ "workers", required_argument, NULL, 'w' },
		{ "entries", required_argument, NULL, 'e' },
		{ "dir", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t flows = 1000000, placed = 0, found = 0, held = 0;
	uint32_t workers = 1, entries = 1u << 21, restored = 0;
	const char *dir = "/tmp";
	static struct mlv_flow_state_backend be[4];
	struct mlv_ct *ct[MLV_MAX_WORKERS], *back[MLV_MAX_WORKERS];
	struct mlv_ct_saved *saved[MLV_MAX_WORKERS];
	struct mlv_flow_state st, in;
	struct mlv_ct_params p;
	char path[4096], why[512];
	double t0, t_export, t_encode_write, t_read_decode, t_restore;
	struct stat sb;
	size_t len;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'f': flows = strtoull(optarg, NULL, 10); break;
		case 'w': workers = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'e': entries = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'd': dir = optarg; break;
		default:
			fprintf(stderr, "usage: flows-bench [--flows F] "
				"[--workers W] [--entries E] [--dir DIR]\n");
			return 2;
		}
	}
	p = params_of(entries);
	if (workers == 0 || workers > MLV_MAX_WORKERS ||
	    mlv_ct_check_params(&p, NULL) != MLV_OK) {
		fprintf(stderr, "flows-bench: workers 1..%d, entries 1..%u\n",
			MLV_MAX_WORKERS, MLV_CT_MAX_ENTRIES);
		return 2;
	}
	for (uint32_t i = 0; i < 4; i++) {
		be[i].uid = 10 + i;
		snprintf(be[i].vip, MLV_NAME_MAX, "web");
		snprintf(be[i].backend, MLV_NAME_MAX, "b%u", i + 1);
	}
	for (uint32_t w = 0; w < workers; w++) {
		ct[w] = mlv_ct_create(&p, alloc, release, NULL);
		back[w] = mlv_ct_create(&p, alloc, release, NULL);
		if (!ct[w] || !back[w])
			return 1;
	}
	/* flow i on worker i % W, established, to backend uid 10 + i % 4 */
	for (uint64_t i = 0; i < flows; i++) {
		struct mlv_flow_key k;
		struct mlv_ct_entry *e;
		bool is_new;

		key_of(i, &k);
		e = mlv_ct_lookup_or_insert(ct[i % workers], &k,
					    mlv_flow_hash(&k), 0, &is_new);
		e->backend_uid = 10 + (uint32_t)(i % 4);
		placed += mlv_ct_update(ct[i % workers], e, 0x10, 0);
	}

	t0 = now_ms();
	memset(&st, 0, sizeof(st));
	for (uint32_t w = 0; w < workers; w++) {
		uint32_t next = 0, got, cap = mlv_ct_occupancy(ct[w]) + 4;

		saved[w] = malloc((size_t)cap * sizeof(*saved[w]));
		st.workers[w].entries = saved[w];
		st.workers[w].seed = mlv_ct_seed(ct[w]);
		do {
			next = mlv_ct_export(ct[w], next, 65536, 1000,
					     saved[w] + st.workers[w].n,
					     cap - (uint32_t)st.workers[w].n,
					     &got);
			st.workers[w].n += got;
		} while (next != 0);
	}
	t_export = now_ms() - t0;
	st.n_workers = workers;
	st.capacity = mlv_ct_capacity(ct[0]);
	st.n_backends = 4;
	st.backends = be;
	snprintf(path, sizeof(path), "%s/flows-bench.%d.flows", dir,
		 (int)getpid());
	t0 = now_ms();
	if (mlv_flow_state_save(path, &st, why, sizeof(why)) != MLV_OK) {
		fprintf(stderr, "flows-bench: %s\n", why);
		return 1;
	}
	t_encode_write = now_ms() - t0;
	t0 = now_ms();
	if (mlv_flow_state_load(path, mlv_flow_state_max_size(workers,
			st.capacity, 4), &in, why, sizeof(why)) != MLV_OK) {
		fprintf(stderr, "flows-bench: %s\n", why);
		return 1;
	}
	t_read_decode = now_ms() - t0;
	/* the file's size as written */
	len = stat(path, &sb) == 0 ? (size_t)sb.st_size : 0;
	mlv_file_remove(path, why, sizeof(why));
	t0 = now_ms();
	for (uint32_t w = 0; w < workers; w++) {
		mlv_ct_set_seed(back[w], in.workers[w].seed);
		for (uint64_t i = 0; i < in.workers[w].n; i++)
			restored += mlv_ct_restore(back[w],
						   &in.workers[w].entries[i], 0);
	}
	t_restore = now_ms() - t0;
	for (uint64_t i = 0; i < flows; i++) {
		struct mlv_flow_key k;
		const struct mlv_ct_entry *e;

		/* a full bucket evicted some while the tables filled: the
		 * flows to find again are those the tables still held */
		key_of(i, &k);
		if (!mlv_ct_lookup(ct[i % workers], &k, mlv_flow_hash(&k), 1))
			continue;
		held++;
		e = mlv_ct_lookup(back[i % workers], &k, mlv_flow_hash(&k), 1);
		found += e && e->backend_uid == 10 + i % 4;
	}
	printf("flows-bench: %llu flows tracked (of %llu inserted, the rest "
	       "evicted by full buckets), %u worker(s) of %u entries\n",
	       (unsigned long long)held, (unsigned long long)flows, workers,
	       st.capacity);
	printf("  file          %.1f MiB (%.1f bytes a flow)\n",
	       (double)len / 1048576.0, held ? (double)len / held : 0.0);
	printf("  save:    export %.1f ms, encode+write+sync %.1f ms\n",
	       t_export, t_encode_write);
	printf("  restore: read+decode %.1f ms, put back %.1f ms\n",
	       t_read_decode, t_restore);
	printf("  found again: %llu of %llu (%u restored)\n",
	       (unsigned long long)found, (unsigned long long)held, restored);
	mlv_flow_state_free(&in);
	for (uint32_t w = 0; w < workers; w++) {
		free(saved[w]);
		mlv_ct_destroy(ct[w]);
		mlv_ct_destroy(back[w]);
	}
	return found == held && restored == held && held > 0 && placed > 0 ?
	       0 : 1;
}
