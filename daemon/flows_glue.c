/* SPDX-License-Identifier: BSD-3-Clause */
/* The flows file (daemon/runtime/flow_state.h, docs/operations.md "Flows
 * across a restart") in the daemon: the workers' connection-tracking
 * tables saved at a graceful stop, once the workers stopped, and put back
 * at the next start, after generation 1 is published (its uids name the
 * backends) and before the workers launch.
 *
 * Workers own their tables; the control thread touches them only while
 * no worker runs (conntrack.h allows it then). A restored flow goes back
 * into the table of the worker with the same index, in the same slot:
 * packets reach a worker by its receive queues, and a start with the
 * same workers, ports and queues (the file's layout) gives each worker
 * the queues it had, which the ports' RSS fills the same way. Under
 * another layout nothing is restored (a flow's worker would be a guess,
 * and an entry in the wrong worker is never found). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/daemon.h"
#include "control/base/file.h"
#include "control/base/log.h"
#include "daemon/runtime/flow_state.h"

/* Buckets exported per call: a bounded copy buffer. */
#define EXPORT_BUCKETS 4096u

static uint64_t realtime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint64_t monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The flows file beside the state file; false when there is none. */
static bool flows_path(const struct mlv_daemon *d, char *out, size_t len)
{
	int n;

	if (!d->state_path[0])
		return false;
	n = snprintf(out, len, "%s.flows", d->state_path);
	return n > 0 && (size_t)n < len;
}

/* The layout of d's workers' receive queues. */
static uint64_t layout_of(const struct mlv_daemon *d)
{
	struct mlv_flow_state_queue q[MLV_MAX_WORKERS * MLV_MAX_PORTS];
	size_t n = 0;

	for (uint32_t w = 0; w < d->n_workers; w++)
		for (uint16_t i = 0; i < d->workers[w]->n_rxq &&
		     n < sizeof(q) / sizeof(q[0]); i++) {
			q[n].worker = w;
			q[n].port = d->workers[w]->rxq[i].cfg_idx;
			q[n].queue = d->workers[w]->rxq[i].queue_id;
			n++;
		}
	return mlv_flow_state_layout(d->cfg, d->n_workers, q, n);
}

static int by_uid(const void *a, const void *b)
{
	uint32_t x = ((const struct mlv_flow_state_backend *)a)->uid;
	uint32_t y = ((const struct mlv_flow_state_backend *)b)->uid;

	return x < y ? -1 : x > y;
}

/* Every (VIP, backend) pair of gen, sorted by uid, in *out. */
static enum mlv_err backends_of(const struct mlv_generation *gen,
				struct mlv_flow_state_backend **out,
				uint32_t *n)
{
	struct mlv_flow_state_backend *b;

	*out = NULL;
	*n = 0;
	if (gen->n_all_backends > MLV_FLOW_STATE_MAX_BACKENDS)
		return MLV_E_LIMIT;
	b = calloc(gen->n_all_backends + 1, sizeof(*b));
	if (!b)
		return MLV_E_NOMEM;
	for (uint32_t i = 0; i < gen->n_all_backends; i++) {
		const struct mlv_gen_backend *be = &gen->all_backends[i];

		b[i].uid = be->uid;
		snprintf(b[i].vip, sizeof(b[i].vip), "%s",
			 gen->vips[be->vip_index].name);
		snprintf(b[i].backend, sizeof(b[i].backend), "%s", be->name);
	}
	qsort(b, gen->n_all_backends, sizeof(*b), by_uid);
	*out = b;
	*n = gen->n_all_backends;
	return MLV_OK;
}

/* Worker w's live flows whose backend gen still has, into *out (n). */
static enum mlv_err export_worker(const struct mlv_worker *w,
				  const struct mlv_flow_state_backend *b,
				  uint32_t n_backends,
				  struct mlv_ct_saved **out, uint64_t *n)
{
	uint32_t cap = mlv_ct_occupancy(w->ct) + MLV_CT_WAYS, got, next = 0;
	uint32_t chunk = EXPORT_BUCKETS * MLV_CT_WAYS, now = mlv_worker_now_ms(w);
	struct mlv_ct_saved *all = malloc((size_t)cap * sizeof(*all));
	struct mlv_ct_saved *buf = malloc((size_t)chunk * sizeof(*buf));
	uint64_t kept = 0;

	if (!all || !buf) {
		free(all);
		free(buf);
		return MLV_E_NOMEM;
	}
	do {
		next = mlv_ct_export(w->ct, next, EXPORT_BUCKETS, now, buf,
				     chunk, &got);
		for (uint32_t i = 0; i < got && kept < cap; i++)
			if (mlv_flow_state_backend_index(b, n_backends,
				buf[i].entry.backend_uid) < n_backends)
				all[kept++] = buf[i];
	} while (next != 0);
	free(buf);
	*out = all;
	*n = kept;
	return MLV_OK;
}

void mlv_daemon_flows_save(struct mlv_daemon *d)
{
	const struct mlv_generation *gen =
		d->pub ? mlv_publish_current(d->pub) : NULL;
	struct mlv_flow_state_backend *b = NULL;
	struct mlv_ct_saved *saved[MLV_MAX_WORKERS] = { 0 };
	struct mlv_flow_state st;
	char path[MLV_PATH_MAX + 16], why[512];
	uint64_t t0 = monotonic_ms(), total = 0;
	enum mlv_err err;

	if (!gen || d->n_workers == 0 || d->launched ||
	    !flows_path(d, path, sizeof(path)))
		return;
	memset(&st, 0, sizeof(st));
	err = backends_of(gen, &b, &st.n_backends);
	for (uint32_t w = 0; !err && w < d->n_workers; w++) {
		err = export_worker(d->workers[w], b, st.n_backends,
				    &saved[w], &st.workers[w].n);
		st.workers[w].entries = saved[w];
		st.workers[w].seed = mlv_ct_seed(d->workers[w]->ct);
		total += st.workers[w].n;
	}
	if (err) {
		mlv_err_log("flows file %s: not saved: %s; the next start "
			    "begins with empty connection tables", path,
			    mlv_strerror(err));
		goto out;
	}
	st.backends = b;
	st.saved_unix_ms = realtime_ms();
	st.n_workers = d->n_workers;
	st.capacity = mlv_ct_capacity(d->workers[0]->ct);
	st.layout = layout_of(d);
	if (mlv_flow_state_save(path, &st, why, sizeof(why)) != MLV_OK)
		mlv_err_log("flows file: not saved: %s; the next start begins "
			    "with empty connection tables", why);
	else
		mlv_info("flows file %s: %llu tracked flow(s) of %u worker(s) "
			 "saved in %llu ms", path, (unsigned long long)total,
			 d->n_workers,
			 (unsigned long long)(monotonic_ms() - t0));
out:
	for (uint32_t w = 0; w < MLV_MAX_WORKERS; w++)
		free(saved[w]);
	free(b);
}

/* What a restore did, for its log line. */
struct restore_counts {
	uint64_t restored, gone, expired, no_room;
};

/* Put worker w's saved flows back, their uids mapped from the file's
 * backends to gen's by name, their time left less age_ms. */
static void restore_worker(struct mlv_worker *w,
			   const struct mlv_flow_state *st, uint32_t wi,
			   const uint32_t *uid_now, uint64_t age_ms,
			   struct restore_counts *c)
{
	const struct mlv_flow_state_worker *sw = &st->workers[wi];
	uint32_t now = mlv_worker_now_ms(w);

	for (uint64_t i = 0; i < sw->n; i++) {
		struct mlv_ct_saved s = sw->entries[i];
		/* decode checked that every uid is in the table */
		uint32_t idx = mlv_flow_state_backend_index(st->backends,
			st->n_backends, s.entry.backend_uid);

		if (idx == st->n_backends || !uid_now[idx]) {
			c->gone++;
			continue;
		}
		if (s.left_ms <= age_ms) {
			c->expired++;
			continue;
		}
		s.left_ms -= (uint32_t)age_ms;
		s.entry.backend_uid = uid_now[idx];
		if (mlv_ct_restore(w->ct, &s, now))
			c->restored++;
		else
			c->no_room++;
	}
}

void mlv_daemon_flows_restore(struct mlv_daemon *d)
{
	const struct mlv_generation *gen =
		d->pub ? mlv_publish_current(d->pub) : NULL;
	struct restore_counts c = { 0 };
	struct mlv_flow_state st;
	char path[MLV_PATH_MAX + 16], why[512];
	uint64_t t0 = monotonic_ms(), now, age, saved_n = 0;
	uint32_t *uid_now = NULL, capacity;
	enum mlv_err err;
	size_t max;

	if (!gen || d->n_workers == 0 || d->launched ||
	    !flows_path(d, path, sizeof(path)))
		return;
	capacity = mlv_ct_capacity(d->workers[0]->ct);
	max = mlv_flow_state_max_size(d->n_workers, capacity,
				      MLV_FLOW_STATE_MAX_BACKENDS);
	err = mlv_flow_state_load(path, max, &st, why, sizeof(why));
	if (err == MLV_E_NOT_FOUND)
		return;
	/* read once: a later start must not find these flows again */
	{
		char gone[512];

		if (mlv_file_remove(path, gone, sizeof(gone)) != MLV_OK)
			mlv_warn("flows file: cannot remove it after reading: "
				 "%s", gone);
	}
	if (err) {
		mlv_err_log("flows file %s: %s; starting with empty connection "
			    "tables", path, why);
		return;
	}
	for (uint32_t w = 0; w < st.n_workers; w++)
		saved_n += st.workers[w].n;
	if (st.n_workers != d->n_workers || st.capacity != capacity ||
	    st.layout != layout_of(d)) {
		mlv_warn("flows file %s: saved by %u worker(s) of %u entries "
			 "on another queue layout than this start's %u of %u: "
			 "its %llu flow(s) are not restored (a flow's worker "
			 "would be a guess)", path, st.n_workers, st.capacity,
			 d->n_workers, capacity,
			 (unsigned long long)saved_n);
		goto out;
	}
	uid_now = calloc(st.n_backends + 1, sizeof(*uid_now));
	if (!uid_now) {
		mlv_err_log("flows file %s: out of memory; starting with empty "
			    "connection tables", path);
		goto out;
	}
	for (uint32_t i = 0; i < st.n_backends; i++) {
		const struct mlv_gen_vip *v =
			mlv_gen_find_vip_named(gen, st.backends[i].vip);
		const struct mlv_gen_backend *b =
			v ? mlv_gen_find_backend_named(v, st.backends[i].backend) :
			    NULL;

		uid_now[i] = b ? b->uid : 0;
	}
	now = realtime_ms();
	age = now > st.saved_unix_ms ? now - st.saved_unix_ms : 0;
	for (uint32_t w = 0; w < d->n_workers; w++) {
		if (mlv_ct_set_seed(d->workers[w]->ct, st.workers[w].seed)) {
			mlv_err_log("flows file: worker %u's table is in use; "
				    "its flows are not restored", w);
			continue;
		}
		restore_worker(d->workers[w], &st, w, uid_now, age, &c);
	}
	mlv_info("flows file %s: %llu of %llu flow(s) restored, saved %llu "
		 "ms ago (%llu to backends no longer configured, %llu expired "
		 "meanwhile, %llu without room) in %llu ms", path,
		 (unsigned long long)c.restored, (unsigned long long)saved_n,
		 (unsigned long long)age, (unsigned long long)c.gone,
		 (unsigned long long)c.expired, (unsigned long long)c.no_room,
		 (unsigned long long)(monotonic_ms() - t0));
out:
	free(uid_now);
	mlv_flow_state_free(&st);
}
