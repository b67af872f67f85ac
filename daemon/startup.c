/* SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE   /* asprintf */
/* Bringing the data plane up and down, in that order and its reverse. */
#include <errno.h>
#include <net/if.h>
#include <glob.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include <rte_ethdev.h>

#include "control/generation/vip_tables.h"
#include "daemon/daemon.h"
#include "daemon/port_stats.h"
#include "daemon/dpdk_log.h"
#include "control/base/log.h"
#include "daemon/notify.h"
#include "daemon/netlink/host_tap.h"
#include "daemon/netlink/vlan.h"

/* How long start-up waits for next_hop: auto to resolve before
 * generation 1 (the kernel answers in milliseconds when the neighbour is
 * there; a dead next hop should not hold the daemon back for long). */
#define NEXT_HOP_START_WAIT_MS 3000u


/* The hugepages of every size the kernel has reserved, and how many of
 * them are free (/sys/kernel/mm/hugepages/hugepages-*kB). False if that
 * cannot be read. */
static bool hugepages(uint64_t *total, uint64_t *free_pages)
{
	glob_t g;
	bool ok = false;

	if (glob("/sys/kernel/mm/hugepages/hugepages-*kB", GLOB_ONLYDIR, NULL,
		 &g) != 0)
		return false;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		static const char *const files[] = { "nr_hugepages",
						     "free_hugepages" };
		uint64_t *out[] = { total, free_pages };

		for (size_t k = 0; k < 2; k++) {
			char path[512];
			unsigned long long v;
			FILE *f;

			snprintf(path, sizeof(path), "%s/%s", g.gl_pathv[i],
				 files[k]);
			f = fopen(path, "re");
			if (!f)
				continue;
			if (fscanf(f, "%llu", &v) == 1) {
				*out[k] += v;
				ok = true;
			}
			fclose(f);
		}
	}
	globfree(&g);
	return ok;
}

/* The port the loader added for host_tap (its host_for names the port
 * it serves), or -1. */
static int host_port(const struct mlv_config *cfg, int *served)
{
	for (uint32_t i = 0; i < cfg->n_ports; i++)
		if (cfg->ports[i].host_for[0]) {
			const struct mlv_port_config *p =
				mlv_config_port(cfg, cfg->ports[i].host_for);

			*served = p ? (int)(p - cfg->ports) : -1;
			return *served >= 0 ? (int)i : -1;
		}
	return -1;
}

/* host_tap: the TAP's vdev, unless the EAL arguments name it already
 * (an operator's own options for it). */
static enum mlv_err add_host_tap_vdev(struct mlv_daemon *d)
{
	int served, h = host_port(d->cfg, &served);
	size_t n = strlen(MLV_HOST_TAP_DEVICE);
	char *arg;

	if (h < 0)
		return MLV_OK;
	for (int i = 1; i < d->eal.argc; i++) {
		const char *a = d->eal.argv[i];

		if (strncmp(a, "--vdev=", 7) == 0)
			a += 7;
		if (strncmp(a, MLV_HOST_TAP_DEVICE, n) == 0 &&
		    (a[n] == ',' || a[n] == '\0'))
			return MLV_OK;
	}
	if (asprintf(&arg, "--vdev=%s,iface=%s%s", MLV_HOST_TAP_DEVICE,
		     MLV_HOST_TAP_IFPREFIX, d->cfg->ports[served].name) < 0 ||
	    mlv_eal_args_append(&d->eal, arg) != MLV_OK) {
		mlv_err_log("EAL arguments: %s", mlv_strerror(MLV_E_NOMEM));
		return MLV_E_NOMEM;
	}
	return MLV_OK;
}

/* host_tap: the TAP's interface takes the served port's MAC and
 * addresses once the ports are up (the port's MAC is known only then). */
static enum mlv_err host_tap_up(struct mlv_daemon *d)
{
	int served, h = host_port(d->cfg, &served);
	const struct mlv_port_config *p;
	char ifname[MLV_NAME_MAX + 8], why[512];

	if (h < 0)
		return MLV_OK;
	p = &d->cfg->ports[served];
	snprintf(ifname, sizeof(ifname), "%s%s", MLV_HOST_TAP_IFPREFIX, p->name);
	if (mlv_host_tap_setup(ifname, d->ports.info[served].mac, &p->address,
			       p->host_prefix, &p->address6, p->host_prefix6,
			       why, sizeof(why)) != MLV_OK) {
		mlv_err_log("%s", why);
		return MLV_E_IO;
	}
	mlv_info("port %s: the host's traffic goes through %s (host_tap)",
		 p->name, ifname);
	return MLV_OK;
}

static enum mlv_err init_eal(struct mlv_daemon *d)
{
	const struct mlv_options *o = d->opts;
	char *const *args = o->has_eal_override ? o->eal_override : d->cfg->eal_args;
	int n = o->has_eal_override ? o->n_eal_override : (int)d->cfg->n_eal_args;
	enum mlv_err err;
	char why[512];
	int ret;

	/* before DPDK, which would print its usage text instead */
	err = mlv_eal_args_check_cpus(args, n, d->cfg->workers, NULL, 0, why,
				      sizeof(why));
	if (err) {
		mlv_err_log("%s", why);
		return err;
	}
	err = mlv_eal_args_build("maglevd", args, n, d->cfg->workers,
				 o->log_level, &d->eal);
	if (err) {
		mlv_err_log("EAL arguments: %s", mlv_strerror(err));
		return err;
	}
	err = add_host_tap_vdev(d);
	if (err)
		return err;
	/* af_xdp vdevs: our steering program (needs the control socket's
	 * lock, taken before: see mlv_daemon_start) */
	err = mlv_steering_prepare(&d->steering, &d->eal, d->cfg->control_socket);
	if (err)
		return err;
	if (mlv_log_enabled(MLV_LOG_DEBUG)) {
		char line[1024];
		size_t used = 0;

		line[0] = '\0';
		for (int i = 1; i < d->eal.argc && used < sizeof(line); i++)
			used += (size_t)snprintf(line + used, sizeof(line) - used,
						 " %s", d->eal.argv[i]);
		mlv_debug("EAL arguments:%s", line);
	}
	{
		bool in_memory = false;

		for (int i = 1; i < d->eal.argc; i++)
			in_memory |= strcmp(d->eal.argv[i], "--in-memory") == 0;
		if (!mlv_dpdk_log_redirect(in_memory))
			mlv_warn("DPDK's log lines go to stderr as they are: %s",
				 strerror(errno));
	}
	ret = rte_eal_init(d->eal.argc, d->eal.argv);
	if (ret < 0) {
		int e = rte_errno;
		uint64_t total = 0, free = 0;

		/* EAL says "Permission denied" when no hugepage is free:
		 * say what is wrong instead */
		if (hugepages(&total, &free) && free == 0) {
			mlv_err_log("DPDK EAL initialisation failed: no free "
				    "hugepages (%llu reserved, all in use by "
				    "other processes, or none reserved); "
				    "reserve more (tools/setup.sh, or "
				    "vm.nr_hugepages; docs/deployment.md)",
				    (unsigned long long)total);
			return MLV_E_DPDK;
		}
		mlv_err_log("DPDK EAL initialisation failed: %s (EAL arguments "
			    "come from dataplane.eal_args or after \"--\")",
			    rte_strerror(e));
		return MLV_E_DPDK;
	}
	d->eal_ready = true;
	return MLV_OK;
}

/* After the ports started, so that a capture finds them ready and the
 * log line follows those naming their devices. Capture is a diagnostic:
 * the daemon runs on without it. */
static void capture_open(struct mlv_daemon *d)
{
	char why[256];
	enum mlv_err err;

	err = mlv_capture_open(&d->capture, &d->eal, why, sizeof(why));
	if (err)
		mlv_warn("packet capture: unavailable, %s (%s)", why,
			 mlv_strerror(err));
}

static enum mlv_err pick_lcores(struct mlv_daemon *d)
{
	unsigned lcore;

	d->n_workers = 0;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (d->n_workers == d->cfg->workers)
			break;
		d->worker_lcores[d->n_workers++] = lcore;
	}
	if (d->n_workers < d->cfg->workers) {
		mlv_err_log("dataplane.workers is %u but the EAL has %u worker "
			    "lcore(s) besides the main one (%u); give it %u "
			    "lcores, e.g. -l 0-%u", d->cfg->workers, d->n_workers,
			    rte_get_main_lcore(), d->cfg->workers + 1,
			    d->cfg->workers);
		return MLV_E_CONFIG;
	}
	if (rte_lcore_count() > d->n_workers + 1)
		mlv_warn("the EAL has %u lcores; only %u are used (1 control + "
			 "%u workers)", rte_lcore_count(), d->n_workers + 1,
			 d->n_workers);
	return MLV_OK;
}

static enum mlv_err create_workers(struct mlv_daemon *d)
{
	const struct mlv_conntrack_config *c = &d->cfg->conntrack;
	struct mlv_ct_params ct = {
		.entries = c->entries_per_worker,
		.tcp_timeout_ms = c->tcp_timeout_ms,
		.tcp_handshake_timeout_ms = c->tcp_handshake_timeout_ms,
		.tcp_closing_timeout_ms = c->tcp_closing_timeout_ms,
		.udp_timeout_ms = c->udp_timeout_ms,
		/* fragments: as long as a UDP flow; they carry no state */
		.other_timeout_ms = c->udp_timeout_ms,
	};
	const char *why = NULL;
	enum mlv_err err;

	err = mlv_ct_check_params(&ct, &why);
	if (err) {
		mlv_err_log("dataplane.conntrack: %s", why ? why : mlv_strerror(err));
		return MLV_E_CONFIG;
	}
	for (uint32_t i = 0; i < d->n_workers; i++) {
		struct mlv_worker_params p = {
			.id = i,
			.lcore = d->worker_lcores[i],
			.pub = d->pub,
			.ct = &ct,
			.ports = &d->ports,
			.idle = d->cfg->idle,
			.idle_max_sleep_us = d->cfg->idle_max_sleep_us,
		};

		err = mlv_worker_create(&p, &d->workers[i]);
		if (err) {
			mlv_err_log("worker %u: cannot allocate it and %u "
				    "conntrack entries (%zu MB): %s", i,
				    ct.entries, mlv_ct_mem_size(ct.entries) >> 20,
				    mlv_strerror(err));
			return err;
		}
	}
	mlv_info("%u worker(s), %u conntrack entries each (%zu MB)",
		 d->n_workers, mlv_ct_capacity(d->workers[0]->ct),
		 mlv_ct_mem_size(ct.entries) >> 20);
	return MLV_OK;
}

static enum mlv_err launch(struct mlv_daemon *d)
{
	for (uint32_t i = 0; i < d->n_workers; i++) {
		int ret = rte_eal_remote_launch(mlv_worker_run, d->workers[i],
						d->worker_lcores[i]);

		if (ret != 0) {
			mlv_err_log("cannot launch worker %u on lcore %u: %s", i,
				    d->worker_lcores[i], rte_strerror(-ret));
			/* those already running are stopped by teardown */
			return MLV_E_DPDK;
		}
		d->launched = true;
	}
	return MLV_OK;
}

/* A VLAN port on a kernel interface: its kernel side is the VLAN's
 * interface on that one (daemon/netlink/vlan.h), where the VLAN's
 * addresses and neighbours are; without one, the trunk itself, said
 * once in the log. */
static void vlan_interfaces(struct mlv_daemon *d)
{
	struct mlv_rtnl nl = { 0 };
	bool open = false;

	for (uint32_t i = 0; i < d->ports.n; i++) {
		const struct mlv_port_config *pc = &d->cfg->ports[i];
		int child = 0;
		char name[IF_NAMESIZE] = "?";

		if (!pc->vlan || d->port_ifindex[i] <= 0)
			continue;
		if (!open && mlv_rtnl_open_requests(&nl) != MLV_OK) {
			mlv_warn("port %s: cannot look for its VLAN %u "
				 "interface: %s", pc->name, pc->vlan,
				 strerror(errno));
			return;
		}
		open = true;
		(void)if_indextoname((unsigned)d->port_ifindex[i], name);
		if (mlv_rtnl_vlan_child(&nl, d->port_ifindex[i], pc->vlan,
					&child) == MLV_OK) {
			char vname[IF_NAMESIZE] = "?";

			(void)if_indextoname((unsigned)child, vname);
			mlv_info("port %s: VLAN %u's interface is %s on %s",
				 pc->name, pc->vlan, vname, name);
			d->port_ifindex[i] = child;
		} else {
			mlv_warn("port %s: %s has no VLAN %u interface; "
				 "next_hop: auto resolves on %s itself",
				 pc->name, name, pc->vlan, name);
		}
	}
	if (open)
		mlv_rtnl_close(&nl);
}

/* The kernel interface behind each port, from the driver (net_af_xdp,
 * net_af_packet and net_tap report it; PCI, pcap files, null, ring do
 * not; a bond: its primary member's), for next_hop: auto. */
static void find_ifindexes(struct mlv_daemon *d)
{
	for (uint32_t i = 0; i < d->ports.n; i++) {
		struct rte_eth_dev_info info;

		d->port_ifindex[i] = 0;
		if (rte_eth_dev_info_get(d->ports.port[i].port_id, &info) == 0)
			d->port_ifindex[i] = (int)info.if_index;
		/* a bond has no interface of its own: its primary member's
		 * (the kernel side of net_af_packet / net_af_xdp members) */
		if (d->ports.port[i].bond) {
			uint16_t m;

			if (rte_eth_dev_get_port_by_name(d->cfg->ports[i].bond.members[0],
							 &m) == 0 &&
			    rte_eth_dev_info_get(m, &info) == 0)
				d->port_ifindex[i] = (int)info.if_index;
		}
	}
	vlan_interfaces(d);
	/* host_tap: the served port's kernel side is its TAP */
	int served, h = host_port(d->cfg, &served);

	if (h >= 0)
		d->port_ifindex[served] = d->port_ifindex[h];
}

/* next_hop: auto: every port that needs it must have a kernel
 * interface; wait a little for the first resolution so generation 1
 * does not start with an unknown next hop. */
static enum mlv_err next_hops_up(struct mlv_daemon *d)
{
	char why[512];

	find_ifindexes(d);
	if (mlv_next_hop_check(d->cfg, d->port_ifindex, why, sizeof(why))) {
		mlv_err_log("%s", why);
		return MLV_E_CONFIG;
	}
	if (mlv_next_hops_init(&d->next_hops, d->cfg, d->port_ifindex)) {
		mlv_err_log("next_hop: auto: rtnetlink: %s", strerror(errno));
		return MLV_E_IO;
	}
	if (!mlv_next_hops_wait(&d->next_hops, d->cfg, d->ports.info,
				NEXT_HOP_START_WAIT_MS))
		mlv_warn("next_hop: auto: not all resolved after %u ms; "
			 "encapsulated packets leave with destination MAC "
			 "00:00:00:00:00:00 and l2dsr backends without 'mac' "
			 "stay out of the table until the kernel resolves them "
			 "(retried every %u ms)",
			 NEXT_HOP_START_WAIT_MS, MLV_NEXT_HOP_RETRY_MS);
	return MLV_OK;
}

enum mlv_err mlv_daemon_start(struct mlv_daemon *d)
{
	struct mlv_publish_hooks hooks = {
		.on_publish = mlv_stats_track,
		.on_free = mlv_stats_fold,
	};
	enum mlv_err err;

	mlv_overrides_init(&d->overrides);
	/* The control socket first: its lock proves no other maglevd runs
	 * on this path before anything is touched (a second instance stops
	 * here, before the EAL), which is what lets the steering set-up
	 * remove a dead instance's XDP program. Clients that connect now
	 * wait in the backlog until the control loop serves them. */
	if ((err = mlv_daemon_ctl_open(d)))
		return err;
	/* overrides kept by the last run, before anything is built */
	mlv_daemon_state_load(d);
	/* and second chance's slot histories, for generation 1's build */
	mlv_daemon_history_load(d);
	if ((err = mlv_daemon_health_open(d)))
		return err;
	if ((err = init_eal(d)) || (err = pick_lcores(d)))
		return err;
	if ((err = mlv_daemon_build_pool_start(d)))
		return err;
	if ((err = mlv_ports_open(&d->ports, d->cfg, d->worker_lcores,
				  d->n_workers)))
		return err;
	if ((err = host_tap_up(d)))
		return err;
	capture_open(d);
	if ((err = mlv_stats_create(&d->stats))) {
		mlv_err_log("statistics: %s", mlv_strerror(err));
		return err;
	}
	hooks.ctx = d->stats;
	if ((err = mlv_publish_create(d->n_workers, &hooks, &d->pub))) {
		mlv_err_log("publisher: %s", mlv_strerror(err));
		return err;
	}
	if ((err = create_workers(d)))
		return err;
	mlv_daemon_ctl_workers(d);
	if ((err = mlv_daemon_metrics_open(d)))
		return err;
	if ((err = mlv_steering_open(&d->steering, d->cfg)))
		return err;
	if ((err = next_hops_up(d)))
		return err;
	err = mlv_daemon_publish(d, d->cfg, MLV_PUBLISH_START);
	/* generation 1 took the histories; later builds have their own */
	mlv_daemon_history_drop(d->history);
	d->history = NULL;
	if (err)
		return err;
	/* generation 1's uids name the backends the saved flows go to */
	mlv_daemon_flows_restore(d);
	if ((err = launch(d)))
		return err;
	mlv_info("running: generation %u, %u VIP(s), %u port(s), %u worker(s)",
		 d->generation, d->cfg->n_vips, d->ports.n, d->n_workers);
	mlv_notify_ready(d->generation, d->cfg->n_vips);
	return MLV_OK;
}

void mlv_daemon_stop_workers(struct mlv_daemon *d)
{
	if (!d->launched)
		return;
	for (uint32_t i = 0; i < d->n_workers; i++)
		if (d->workers[i])
			mlv_worker_request_stop(d->workers[i]);
	rte_eal_mp_wait_lcore();
	for (uint32_t i = 0; i < d->n_workers; i++)
		if (d->workers[i] && d->workers[i]->exit_err)
			mlv_err_log("worker %u had stopped early: %s", i,
				    mlv_strerror(d->workers[i]->exit_err));
	d->launched = false;
}

void mlv_daemon_close_ports(struct mlv_daemon *d)
{
	/* no capture may start on a port being closed */
	mlv_capture_close(&d->capture);
	/* our handles first; closing the port detaches the driver's
	 * program */
	mlv_steering_close(&d->steering);
	if (d->eal_ready) {
		const struct mlv_port_stats *last;

		/* the final stats file shows the NIC counters of the end */
		mlv_daemon_port_stats(d, &last);
		mlv_ports_close(&d->ports);
	}
}

void mlv_daemon_teardown(struct mlv_daemon *d)
{
	int ret;

	mlv_daemon_announce_close(d);
	mlv_daemon_stop_workers(d);
	mlv_daemon_close_ports(d);
	mlv_daemon_history_drop(d->history);
	d->history = NULL;
	/* Nothing may read generations, stats or workers after this. */
	mlv_metrics_destroy(d->metrics);
	d->metrics = NULL;
	mlv_ctl_server_destroy(d->ctl);
	d->ctl = NULL;
	d->st.server = NULL;
	mlv_health_destroy(d->health);
	d->health = NULL;
	/* after the engine: its last sockets' close still took the path */
	mlv_daemon_check_path_close(d);
	mlv_daemon_health_free(d);
	d->st.health = NULL;
	mlv_next_hops_free(&d->next_hops);
	/* Frees every generation through the stats fold hook. */
	mlv_publish_destroy(d->pub);
	d->pub = NULL;
	mlv_daemon_build_pool_stop(d);
	mlv_gen_tables_pool_drain();
	mlv_stats_destroy(d->stats);
	d->stats = NULL;
	for (uint32_t i = 0; i < MLV_MAX_WORKERS; i++) {
		mlv_worker_destroy(d->workers[i]);
		d->workers[i] = NULL;
	}
	/* rte_eal_cleanup closes every device, also one the ports left
	 * open because closing it would crash (mlv_ports_close) */
	if (d->eal_ready && d->ports.device_left_open)
		d->eal_ready = false;
	if (d->eal_ready) {
		ret = rte_eal_cleanup();
		if (ret != 0)
			mlv_warn("EAL cleanup: %s", rte_strerror(-ret));
		d->eal_ready = false;
	}
	mlv_eal_args_free(&d->eal);
	mlv_overrides_free(&d->overrides);
	mlv_daemon_port_stats_free(d);
	mlv_config_free(d->cfg);
	d->cfg = NULL;
}
