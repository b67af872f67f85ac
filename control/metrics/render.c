/* SPDX-License-Identifier: BSD-3-Clause */
/* The /metrics page (render.h): process, configuration, worker,
 * conntrack, health-engine and XDP families here; VIPs and backends in
 * render_lb.c. Names and units: docs/metrics.md. */
#define _GNU_SOURCE
#include "control/metrics/render.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "control/ctl/port_stats.h"
#include "dataplane/bpf/check_path/counters.h"
#include "control/tables/maglev.h"
#include "control/metrics/page_internal.h"

#ifndef MLV_VERSION
#define MLV_VERSION "unknown"
#endif

struct mlv_metrics_renderer {
	/* Slots per backend of one generation, [n_slots]. Keyed by pointer
	 * and number: numbers only grow, so a freed generation's address
	 * reused by a later one cannot match a stale cache. */
	const struct mlv_generation *slots_gen;
	uint32_t slots_gen_number;
	uint32_t *slots;
	uint32_t n_slots;
	double start_time;          /* unix seconds; 0 until first computed */
	int64_t last_reload_ok;     /* unix seconds of the newest successful
				       reload seen in the log; 0 = none */
};

enum mlv_err mlv_metrics_renderer_create(struct mlv_metrics_renderer **out)
{
	if (!out)
		return MLV_E_INVAL;
	*out = calloc(1, sizeof(**out));
	return *out ? MLV_OK : MLV_E_NOMEM;
}

void mlv_metrics_renderer_destroy(struct mlv_metrics_renderer *r)
{
	if (!r)
		return;
	free(r->slots);
	free(r);
}

/* ---- cached derived state ---- */

static enum mlv_err refresh_slots(struct mlv_metrics_renderer *r,
				  const struct mlv_generation *gen)
{
	uint32_t *slots;

	if (r->slots_gen == gen && r->slots_gen_number == gen->number)
		return MLV_OK;
	slots = calloc(gen->n_all_backends ? gen->n_all_backends : 1,
		       sizeof(*slots));
	if (!slots)
		return MLV_E_NOMEM;
	for (uint32_t v = 0; v < gen->n_vips; v++) {
		const struct mlv_gen_vip *vip = &gen->vips[v];
		uint32_t base = mlv_gen_backend_index(gen, vip->backends);

		if (vip->n_backends == 0)
			continue;
		for (uint32_t s = 0; s < vip->table_size; s++) {
			uint16_t b = vip->table[s];

			if (b != MLV_MAGLEV_NO_BACKEND && b < vip->n_backends)
				slots[base + b]++;
		}
	}
	free(r->slots);
	r->slots = slots;
	r->n_slots = gen->n_all_backends;
	r->slots_gen = gen;
	r->slots_gen_number = gen->number;
	return MLV_OK;
}

/* Unix time the daemon started: now minus the monotonic time since
 * st->started, computed once so the value does not jitter between
 * scrapes. Milliseconds are plenty. */
static double start_time(struct mlv_metrics_renderer *r,
			 const struct mlv_ctl_state *st)
{
	struct timespec rt, mono;
	double up;

	if (r->start_time != 0)
		return r->start_time;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	up = (double)(mono.tv_sec - st->started.tv_sec) +
	     (double)(mono.tv_nsec - st->started.tv_nsec) / 1e9;
	r->start_time = (double)(int64_t)(((double)rt.tv_sec +
					   (double)rt.tv_nsec / 1e9 - up) * 1000.0) / 1000.0;
	return r->start_time;
}

/* ---- process and configuration ---- */

/* The standard process_* families every Prometheus exporter has, from
 * /proc/self (Linux proc(5)): CPU time, memory, descriptors. A value that
 * cannot be read leaves its family out. */
static void page_process_std(struct mlv_metrics_page *p, double start)
{
	long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	unsigned long utime = 0, stime = 0, vsize = 0;
	long rss = 0;
	struct rlimit rl;
	char buf[1024], *close_paren;
	uint64_t fds = 0;
	struct dirent *e;
	size_t n = 0;
	FILE *f;
	DIR *dir;

	f = fopen("/proc/self/stat", "re");
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	/* after the command name (which may hold spaces), field 3 on:
	 * utime and stime are fields 14 and 15, vsize 23, rss 24 */
	close_paren = strrchr(buf, ')');
	if (close_paren && tick > 0 && page > 0 &&
	    sscanf(close_paren + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
		   "%*u %lu %lu %*d %*d %*d %*d %*d %*d %*u %lu %ld",
		   &utime, &stime, &vsize, &rss) == 4) {
		mlv_expo_family(p->f, "process_cpu_seconds_total",
				MLV_EXPO_COUNTER,
				"user and system CPU time spent, in seconds");
		mlv_expo_sample_double(p->f, "process_cpu_seconds_total", NULL,
				       0, (double)(utime + stime) / (double)tick);
		mlv_expo_family(p->f, "process_virtual_memory_bytes",
				MLV_EXPO_GAUGE, "virtual memory size, in bytes");
		mlv_expo_sample_u64(p->f, "process_virtual_memory_bytes", NULL,
				    0, vsize);
		mlv_expo_family(p->f, "process_resident_memory_bytes",
				MLV_EXPO_GAUGE, "resident memory size, in bytes");
		mlv_expo_sample_u64(p->f, "process_resident_memory_bytes", NULL,
				    0, (uint64_t)(rss > 0 ? rss : 0) *
				    (uint64_t)page);
	}
	dir = opendir("/proc/self/fd");
	if (dir) {
		while ((e = readdir(dir)) != NULL)
			fds += e->d_name[0] != '.';
		closedir(dir);
		mlv_expo_family(p->f, "process_open_fds", MLV_EXPO_GAUGE,
				"open file descriptors");
		/* the directory's own descriptor was counted too */
		mlv_expo_sample_u64(p->f, "process_open_fds", NULL, 0,
				    fds ? fds - 1 : 0);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		mlv_expo_family(p->f, "process_max_fds", MLV_EXPO_GAUGE,
				"the most file descriptors the process may open");
		mlv_expo_sample_u64(p->f, "process_max_fds", NULL, 0,
				    (uint64_t)rl.rlim_cur);
	}
	mlv_expo_family(p->f, "process_start_time_seconds", MLV_EXPO_GAUGE,
			"start time of the process since the unix epoch, in "
			"seconds");
	mlv_expo_sample_double(p->f, "process_start_time_seconds", NULL, 0,
			       start);
}

static void page_process(struct mlv_metrics_page *p,
			 struct mlv_metrics_renderer *r)
{
	const struct mlv_expo_label version = { "version", MLV_VERSION };

	mlv_expo_family(p->f, "maglevd_build_info", MLV_EXPO_GAUGE,
			"maglevd build; always 1, the version is a label");
	mlv_expo_sample_u64(p->f, "maglevd_build_info", &version, 1, 1);
	mlv_expo_family(p->f, "maglevd_start_time_seconds", MLV_EXPO_GAUGE,
			"unix time the daemon started");
	mlv_expo_sample_double(p->f, "maglevd_start_time_seconds", NULL, 0,
			       start_time(r, p->st));
	page_process_std(p, start_time(r, p->st));
}

static void page_reloads(struct mlv_metrics_page *p,
			 struct mlv_metrics_renderer *r)
{
	const struct mlv_ctl_reload_log *log = &p->st->reloads;
	const struct mlv_expo_label ok = { "result", "ok" };
	const struct mlv_expo_label failed = { "result", "failed" };
	bool last_ok = true;    /* the config loaded at start counts */

	for (uint32_t i = 0; i < log->n && i < MLV_CTL_RELOAD_HISTORY; i++)
		if (log->entries[i].ok && log->entries[i].time > r->last_reload_ok)
			r->last_reload_ok = log->entries[i].time;
	if (log->n > 0)
		last_ok = log->entries[(log->next + MLV_CTL_RELOAD_HISTORY - 1) %
				       MLV_CTL_RELOAD_HISTORY].ok;

	if (p->gen) {
		mlv_expo_family(p->f, "maglevd_generation", MLV_EXPO_GAUGE,
				"number of the generation the workers use; "
				"moves by one per publish");
		mlv_expo_sample_u64(p->f, "maglevd_generation", NULL, 0,
				    p->gen->number);
	}
	mlv_expo_family(p->f, "maglevd_reloads_total", MLV_EXPO_COUNTER,
			"configuration reloads by result (socket, SIGHUP or "
			"file change); a failed one changes nothing");
	mlv_expo_sample_u64(p->f, "maglevd_reloads_total", &ok, 1, log->n_ok);
	mlv_expo_sample_u64(p->f, "maglevd_reloads_total", &failed, 1,
			    log->n_failed);
	mlv_expo_family(p->f, "maglevd_last_reload_successful", MLV_EXPO_GAUGE,
			"1 if the last reload succeeded (or none was tried), "
			"0 if it was rejected");
	mlv_expo_sample_u64(p->f, "maglevd_last_reload_successful", NULL, 0,
			    last_ok);
	mlv_expo_family(p->f, "maglevd_last_reload_success_timestamp_seconds",
			MLV_EXPO_GAUGE, "unix time of the last successful "
			"reload, or of the start when there was none");
	mlv_expo_sample_double(p->f,
			       "maglevd_last_reload_success_timestamp_seconds",
			       NULL, 0, r->last_reload_ok ?
			       (double)r->last_reload_ok : start_time(r, p->st));
}

/* ---- workers and conntrack: one series per worker ---- */

static void worker_label(char *buf, size_t len, uint32_t w,
			 struct mlv_expo_label *l)
{
	snprintf(buf, len, "%u", w);
	l->name = "worker";
	l->value = buf;
}

static uint64_t load_ctr(const uint64_t *c)
{
	/* racy by design (dataplane/packet/counters.h): relaxed, untorn */
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/* Prometheus names for the worker counters whose own name (the JSON
 * one, dataplane/packet/counters.h) lacks the unit the naming rules ask
 * for; the rest are "maglevd_worker_<name>_total". BUSY_CYCLES is shown
 * in seconds (cycles / TSC Hz), and left out when the TSC rate is not
 * known. docs/metrics.md has the old names under "Renamed metrics". */
static const char *const worker_metric[MLV_CTR__COUNT] = {
	[MLV_CTR_FORWARDED] = "forwarded_packets",
	[MLV_CTR_ICMP_SENT] = "icmp_sent_packets",
	[MLV_CTR_EXCEPTION] = "exception_packets",
	[MLV_CTR_BUSY_CYCLES] = "busy_seconds",
};

static void page_workers(struct mlv_metrics_page *p)
{
	const struct mlv_ctl_state *st = p->st;
	char name[MLV_METRICS_NAME_MAX], help[MLV_METRICS_HELP_MAX], wbuf[12];
	struct mlv_expo_label l[2];

	if (!st->worker_ctr || st->n_workers == 0)
		return;
	for (int c = 0; c < MLV_CTR__COUNT; c++) {
		bool seconds = c == MLV_CTR_BUSY_CYCLES;

		if (seconds && st->tsc_hz == 0)
			continue;
		snprintf(name, sizeof(name), "maglevd_worker_%s_total",
			 worker_metric[c] ? worker_metric[c] :
			 mlv_worker_counter_name((enum mlv_worker_counter)c));
		snprintf(help, sizeof(help), "%s, per worker%s",
			 mlv_worker_counter_help((enum mlv_worker_counter)c),
			 seconds ? ", in seconds" : "");
		mlv_expo_family(p->f, name, MLV_EXPO_COUNTER, help);
		for (uint32_t w = 0; w < st->n_workers; w++) {
			uint64_t v;

			if (!st->worker_ctr[w])
				continue;
			worker_label(wbuf, sizeof(wbuf), w, &l[0]);
			v = load_ctr(&st->worker_ctr[w]->ctr[c]);
			if (seconds)
				mlv_expo_sample_double(p->f, name, l, 1,
						       (double)v /
						       (double)st->tsc_hz);
			else
				mlv_expo_sample_u64(p->f, name, l, 1, v);
		}
	}
	mlv_expo_family(p->f, "maglevd_dropped_packets_total", MLV_EXPO_COUNTER,
			"received frames dropped, by worker and reason "
			"(docs/metrics.md lists the reasons)");
	for (uint32_t w = 0; w < st->n_workers; w++) {
		if (!st->worker_ctr[w])
			continue;
		worker_label(wbuf, sizeof(wbuf), w, &l[0]);
		for (int d = 0; d < MLV_DROP__COUNT; d++) {
			l[1].name = "reason";
			l[1].value = mlv_drop_reason_name((enum mlv_drop_reason)d);
			mlv_expo_sample_u64(p->f, "maglevd_dropped_packets_total",
					    l, 2,
					    load_ctr(&st->worker_ctr[w]->drop[d]));
		}
	}
}

static void page_conntrack(struct mlv_metrics_page *p)
{
	const struct mlv_ctl_state *st = p->st;
	char wbuf[12];
	struct mlv_expo_label l;

	if (!st->worker_ct || st->n_workers == 0)
		return;
	mlv_expo_family(p->f, "maglevd_conntrack_entries", MLV_EXPO_GAUGE,
			"connection-tracking entries in use, per worker");
	for (uint32_t w = 0; w < st->n_workers; w++) {
		if (!st->worker_ct[w])
			continue;
		worker_label(wbuf, sizeof(wbuf), w, &l);
		mlv_expo_sample_u64(p->f, "maglevd_conntrack_entries", &l, 1,
				    mlv_ct_occupancy(st->worker_ct[w]));
	}
	mlv_expo_family(p->f, "maglevd_conntrack_entries_limit", MLV_EXPO_GAUGE,
			"connection-tracking capacity, per worker");
	for (uint32_t w = 0; w < st->n_workers; w++) {
		if (!st->worker_ct[w])
			continue;
		worker_label(wbuf, sizeof(wbuf), w, &l);
		mlv_expo_sample_u64(p->f, "maglevd_conntrack_entries_limit", &l, 1,
				    mlv_ct_capacity(st->worker_ct[w]));
	}
}

/* ---- health engine and XDP steering ---- */

static void gauge1(FILE *f, const char *name, const char *help, uint64_t v)
{
	mlv_expo_family(f, name, MLV_EXPO_GAUGE, help);
	mlv_expo_sample_u64(f, name, NULL, 0, v);
}

static void page_health(struct mlv_metrics_page *p)
{
	static const char *const names[] = {
#define MLV_HEALTH_NAME(id, name, help) name,
		MLV_HEALTH_COUNTERS(MLV_HEALTH_NAME)
#undef MLV_HEALTH_NAME
	};
	static const char *const helps[] = {
#define MLV_HEALTH_HELP(id, name, help) help,
		MLV_HEALTH_COUNTERS(MLV_HEALTH_HELP)
#undef MLV_HEALTH_HELP
	};
	char name[MLV_METRICS_NAME_MAX];
	struct mlv_health_stats hs;

	if (!p->st->health)
		return;
	mlv_health_stats(p->st->health, &hs);
	for (int c = 0; c < MLV_HEALTH_CTR__COUNT; c++) {
		snprintf(name, sizeof(name), "maglevd_health_%s_total", names[c]);
		mlv_expo_family(p->f, name, MLV_EXPO_COUNTER, helps[c]);
		mlv_expo_sample_u64(p->f, name, NULL, 0, hs.counters[c]);
	}
	gauge1(p->f, "maglevd_health_probes",
	       "distinct health-check targets (shared by the (VIP, backend) "
	       "pairs that check the same thing)", hs.n_probes);
	gauge1(p->f, "maglevd_health_checks_in_flight",
	       "health checks running now", hs.in_flight);
	gauge1(p->f, "maglevd_health_checks_in_flight_limit",
	       "most health checks allowed to run at once", hs.max_in_flight);
	gauge1(p->f, "maglevd_health_checks_waiting",
	       "due health checks waiting for a free slot", hs.waiting);
}

static void page_check_path(struct mlv_metrics_page *p)
{
	static const char *const names[] = {
#define MLV_CP_NAME(id, name, help) name,
		MLV_CP_COUNTERS(MLV_CP_NAME)
#undef MLV_CP_NAME
	};
	static const char name[] = "maglevd_health_data_path_packets_total";
	uint64_t v[MLV_CP_CTR__COUNT];
	struct mlv_expo_label l = { .name = "counter" };

	if (!p->st->check_path_counters ||
	    !p->st->check_path_counters(p->st->ctx, v))
		return;
	mlv_expo_family(p->f, name, MLV_EXPO_COUNTER,
			"packets of health checks through the data path: "
			"carried (re-addressed to the VIP and encapsulated), "
			"returned (replies re-addressed to the check's "
			"socket), dropped (could not be carried)");
	for (int c = 0; c < MLV_CP_CTR__COUNT; c++) {
		l.value = names[c];
		mlv_expo_sample_u64(p->f, name, &l, 1, v[c]);
	}
}

static void page_xdp(struct mlv_metrics_page *p)
{
	static const char *const outcomes[] = {
#define MLV_STEER_NAME(id, name, help) name,
		MLV_STEER_COUNTERS(MLV_STEER_NAME)
#undef MLV_STEER_NAME
	};
	static const char name[] = "maglevd_xdp_steer_frames_total";
	uint64_t v[MLV_STEER_CTR__COUNT];
	struct mlv_expo_label l[2] = { { .name = "interface" },
				       { .name = "outcome" } };
	bool family = false;
	enum mlv_err err = MLV_OK;

	if (!p->src->steer_counters)
		return;
	/* one interface per port at most */
	for (uint32_t i = 0; i < MLV_MAX_PORTS && err != MLV_E_NOT_FOUND; i++) {
		err = p->src->steer_counters(p->src->steer_ctx, i, &l[0].value, v);
		if (err != MLV_OK)
			continue;
		if (!family)
			mlv_expo_family(p->f, name, MLV_EXPO_COUNTER,
					"frames seen by the XDP steering "
					"program, per interface, by what it did "
					"with them (every frame counted once)");
		family = true;
		for (int c = 0; c < MLV_STEER_CTR__COUNT; c++) {
			l[1].value = outcomes[c];
			mlv_expo_sample_u64(p->f, name, l, 2, v[c]);
		}
	}
}

/* ---- NIC counters per port (control/ctl/port_stats.h) ---- */

/* Each port's link and, for a bonded port, each member's link, whether
 * it carries traffic and its own frame and error counters. */
static void page_port_links(struct mlv_metrics_page *p,
			    const struct mlv_port_stats *ps, uint32_t n)
{
	static const char *const dir[2] = { "rx", "tx" };
	struct mlv_expo_label l[3] = { { .name = "port" }, { .name = "member" },
				       { .name = "direction" } };
	bool bond = false;

	mlv_expo_family(p->f, "maglevd_port_link_up", MLV_EXPO_GAUGE,
			"1 while the port's link is up (a bonded port: while "
			"a member's is), 0 while it is down");
	for (uint32_t i = 0; i < n; i++) {
		bond |= ps[i].n_members > 0;
		if (ps[i].link == MLV_PORT_LINK_UNKNOWN)
			continue;
		l[0].value = ps[i].name;
		mlv_expo_sample_u64(p->f, "maglevd_port_link_up", l, 1,
				    ps[i].link == MLV_PORT_LINK_UP);
	}
	if (!bond)
		return;
	/* each family's samples together, as the exposition format wants */
	for (int f = 0; f < 4; f++) {
		static const char *const fam[4] = {
			"maglevd_port_member_link_up",
			"maglevd_port_member_active",
			"maglevd_port_member_packets_total",
			"maglevd_port_member_errors_total",
		};
		/* parenthesised: one string each (clang's
		 * -Wstring-concatenation) */
		static const char *const help[4] = {
			"a bonded port's member: 1 while its link is up",
			("a bonded port's member: 1 while it carries traffic "
			 "(active-backup: the member in use; 802.3ad: in the "
			 "aggregate)"),
			"frames a bonded port's member received (rx) and sent (tx)",
			("a bonded port's member: frames received in error or "
			 "missed (rx), failed to send (tx)"),
		};

		mlv_expo_family(p->f, fam[f], f < 2 ? MLV_EXPO_GAUGE :
				MLV_EXPO_COUNTER, help[f]);
		for (uint32_t i = 0; i < n; i++) {
			l[0].value = ps[i].name;
			for (uint32_t m = 0; m < ps[i].n_members; m++) {
				const struct mlv_port_member *mb = &ps[i].members[m];
				const uint64_t v[4][2] = {
					{ mb->up, 0 }, { mb->active, 0 },
					{ mb->rx_packets, mb->tx_packets },
					{ mb->rx_errors, mb->tx_errors },
				};

				l[1].value = mb->device;
				if (f < 2) {
					mlv_expo_sample_u64(p->f, fam[f], l, 2,
							    v[f][0]);
					continue;
				}
				for (int d = 0; d < 2; d++) {
					l[2].value = dir[d];
					mlv_expo_sample_u64(p->f, fam[f], l, 3,
							    v[f][d]);
				}
			}
		}
	}
}

static void page_ports(struct mlv_metrics_page *p)
{
	const struct mlv_port_stats *ps = NULL;
	char name[MLV_METRICS_NAME_MAX];
	struct mlv_expo_label l[2] = { { .name = "port" }, { .name = "xstat" } };
	uint32_t n;
	bool any = false;

	if (!p->st->port_stats)
		return;
	n = p->st->port_stats(p->st->ctx, &ps);
	for (uint32_t i = 0; i < n; i++)
		any |= ps[i].ok;
	if (!any)
		return;
	for (int c = 0; c < MLV_PORT_CTR__COUNT; c++) {
		snprintf(name, sizeof(name), "maglevd_port_%s_total",
			 mlv_port_counter_metric((enum mlv_port_counter)c));
		mlv_expo_family(p->f, name, MLV_EXPO_COUNTER,
				mlv_port_counter_help((enum mlv_port_counter)c));
		for (uint32_t i = 0; i < n; i++) {
			if (!ps[i].ok)
				continue;
			l[0].value = ps[i].name;
			mlv_expo_sample_u64(p->f, name, l, 1, ps[i].v[c]);
		}
	}
	page_port_links(p, ps, n);
	mlv_expo_family(p->f, "maglevd_port_xstat_errors_total",
			MLV_EXPO_COUNTER,
			"the NIC's extended counters of errors, drops, misses "
			"and discards, by the PMD's name (every xstat: "
			"maglevctl stats --ports)");
	for (uint32_t i = 0; i < n; i++) {
		l[0].value = ps[i].name;
		for (uint32_t x = 0; ps[i].ok && x < ps[i].n_xstats; x++) {
			if (!mlv_port_xstat_is_error(ps[i].xstats[x].name))
				continue;
			l[1].value = ps[i].xstats[x].name;
			mlv_expo_sample_u64(p->f, "maglevd_port_xstat_errors_total",
					    l, 2, ps[i].xstats[x].value);
		}
	}
}

/* ---- VIP routes and the stop (docs/scale-out.md) ---- */

static void page_announce(struct mlv_metrics_page *p)
{
	const struct mlv_ctl_announce *a = p->st->announce ?
					   p->st->announce(p->st->ctx) : NULL;
	struct mlv_expo_label l;

	if (!a)
		return;
	mlv_expo_family(p->f, "maglevd_stopping", MLV_EXPO_GAUGE,
			"1 while a graceful stop drains: routes withdrawn, "
			"still forwarding");
	mlv_expo_sample_u64(p->f, "maglevd_stopping", NULL, 0, a->stopping);
	mlv_expo_family(p->f, "maglevd_stop_remaining_seconds", MLV_EXPO_GAUGE,
			"time left before a stopping instance exits (0 when "
			"not stopping)");
	mlv_expo_sample_double(p->f, "maglevd_stop_remaining_seconds", NULL, 0,
			       a->stopping ? (double)a->stop_in_ms / 1000.0 : 0);
	if (!a->enabled)
		return;
	gauge1(p->f, "maglevd_announce_routes",
	       "VIP routes in the announce table now", a->routes);
	mlv_expo_family(p->f, "maglevd_announce_events_total", MLV_EXPO_COUNTER,
			"VIP routes added (announce) and deleted (withdraw)");
	l = (struct mlv_expo_label){ "event", "announce" };
	mlv_expo_sample_u64(p->f, "maglevd_announce_events_total", &l, 1,
			    a->announces);
	l.value = "withdraw";
	mlv_expo_sample_u64(p->f, "maglevd_announce_events_total", &l, 1,
			    a->withdraws);
	mlv_expo_family(p->f, "maglevd_announce_errors_total", MLV_EXPO_COUNTER,
			"route changes the kernel refused and failed openings "
			"of the announce device");
	mlv_expo_sample_u64(p->f, "maglevd_announce_errors_total", NULL, 0,
			    a->errors);
	mlv_expo_family(p->f, "maglevd_vip_announced", MLV_EXPO_GAUGE,
			"1 while the VIP's address is announced");
	l.name = "vip";
	for (uint32_t i = 0; i < a->n_vips; i++) {
		l.value = a->vips[i].name;
		mlv_expo_sample_u64(p->f, "maglevd_vip_announced", &l, 1,
				    a->vips[i].announced);
	}
	mlv_expo_family(p->f, "maglevd_vip_serving", MLV_EXPO_GAUGE,
			"1 while the VIP is published, steered and has "
			"announce.min_backends usable backends");
	for (uint32_t i = 0; i < a->n_vips; i++) {
		l.value = a->vips[i].name;
		mlv_expo_sample_u64(p->f, "maglevd_vip_serving", &l, 1,
				    a->vips[i].serving);
	}
}

/* ---- the page ---- */

enum mlv_err mlv_metrics_render(struct mlv_metrics_renderer *r,
				const struct mlv_metrics_sources *src,
				char **text, size_t *len)
{
	struct mlv_metrics_page p = { .src = src };
	enum mlv_err err = MLV_OK;
	char *buf = NULL;
	size_t n = 0;

	if (!r || !src || !src->ctl || !text || !len)
		return MLV_E_INVAL;
	p.st = src->ctl;
	p.gen = p.st->generation ? p.st->generation(p.st->ctx) : NULL;
	{
		const struct mlv_config *cfg = p.st->config ?
					       p.st->config(p.st->ctx) : NULL;

		p.backend_series = !cfg || cfg->metrics_backend_series;
	}
	if (p.gen) {
		err = refresh_slots(r, p.gen);
		if (err)
			return err;
		p.slots = r->slots;
	}
	/* open_memstream grows the buffer and keeps a running length, and
	 * its errors are sticky: one check at the end covers every write. */
	p.f = open_memstream(&buf, &n);
	if (!p.f)
		return MLV_E_NOMEM;
	page_process(&p, r);
	page_reloads(&p, r);
	page_workers(&p);
	page_conntrack(&p);
	err = mlv_metrics_page_lb(&p);
	page_health(&p);
	page_check_path(&p);
	page_xdp(&p);
	page_ports(&p);
	page_announce(&p);
	if (ferror(p.f) && !err)
		err = MLV_E_NOMEM;
	if (fclose(p.f) != 0 && !err)
		err = MLV_E_NOMEM;
	if (err) {
		free(buf);
		return err;
	}
	*text = buf;
	*len = n;
	return MLV_OK;
}
