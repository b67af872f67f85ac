/* SPDX-License-Identifier: BSD-3-Clause */
#include "daemon/runtime/restart_only.h"

#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void say(void (*report)(const char *, void *), void *ctx,
		uint32_t *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void say(void (*report)(const char *, void *), void *ctx,
		uint32_t *n, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	(*n)++;
	if (report)
		report(msg, ctx);
}

static bool eal_args_equal(const struct mlv_config *a, const struct mlv_config *b)
{
	if (a->n_eal_args != b->n_eal_args)
		return false;
	for (uint32_t i = 0; i < a->n_eal_args; i++)
		if (strcmp(a->eal_args[i], b->eal_args[i]) != 0)
			return false;
	return true;
}

/* Ports compared field by field: the structs carry source positions and
 * padding that differ between two loads of the same text. */
static bool bond_equal(const struct mlv_bond_config *a,
		       const struct mlv_bond_config *b)
{
	if (a->enabled != b->enabled)
		return false;
	if (!a->enabled)
		return true;
	if (a->mode != b->mode || a->n_members != b->n_members ||
	    a->has_mac != b->has_mac || a->link_monitor_ms != b->link_monitor_ms ||
	    (a->has_mac && memcmp(&a->mac, &b->mac, sizeof(a->mac)) != 0))
		return false;
	for (uint32_t i = 0; i < a->n_members; i++)
		if (strcmp(a->members[i], b->members[i]) != 0)
			return false;
	return true;
}

static bool port_equal(const struct mlv_port_config *a,
		       const struct mlv_port_config *b)
{
	return strcmp(a->name, b->name) == 0 &&
	       strcmp(a->device, b->device) == 0 &&
	       mlv_ip_equal(&a->address, &b->address) &&
	       mlv_ip_equal(&a->address6, &b->address6) &&
	       a->next_hop_auto == b->next_hop_auto &&
	       (a->next_hop_auto ||
		memcmp(&a->next_hop, &b->next_hop, sizeof(a->next_hop)) == 0) &&
	       a->host_tap == b->host_tap &&
	       a->host_prefix == b->host_prefix &&
	       a->host_prefix6 == b->host_prefix6 &&
	       a->has_next_hop6 == b->has_next_hop6 &&
	       (!a->has_next_hop6 ||
		memcmp(&a->next_hop6, &b->next_hop6, sizeof(a->next_hop6)) == 0) &&
	       strcmp(a->tx_port, b->tx_port) == 0 &&
	       a->mtu == b->mtu &&
	       a->exception == b->exception &&
	       bond_equal(&a->bond, &b->bond);
}

uint32_t mlv_restart_only_changes(const struct mlv_config *running,
				  const struct mlv_config *next,
				  void (*report)(const char *message, void *ctx),
				  void *ctx)
{
	const struct mlv_conntrack_config *ca = &running->conntrack;
	const struct mlv_conntrack_config *cb = &next->conntrack;
	uint32_t n = 0;

	if (!eal_args_equal(running, next))
		say(report, ctx, &n, "dataplane.eal_args changed");
	if (running->workers != next->workers)
		say(report, ctx, &n, "dataplane.workers: %u -> %u",
		    running->workers, next->workers);
	if (running->idle != next->idle)
		say(report, ctx, &n, "dataplane.idle changed");
	if (running->idle_max_sleep_us != next->idle_max_sleep_us)
		say(report, ctx, &n, "dataplane.idle_max_sleep_us: %u -> %u",
		    running->idle_max_sleep_us, next->idle_max_sleep_us);
	if (running->n_ports != next->n_ports) {
		say(report, ctx, &n, "dataplane.ports: %u -> %u ports",
		    running->n_ports, next->n_ports);
	} else {
		for (uint32_t i = 0; i < running->n_ports; i++)
			if (!port_equal(&running->ports[i], &next->ports[i]))
				say(report, ctx, &n, "dataplane.ports[%u] (%s) "
				    "changed", i, running->ports[i].name);
	}
	if (ca->entries_per_worker != cb->entries_per_worker ||
	    ca->tcp_timeout_ms != cb->tcp_timeout_ms ||
	    ca->tcp_handshake_timeout_ms != cb->tcp_handshake_timeout_ms ||
	    ca->tcp_closing_timeout_ms != cb->tcp_closing_timeout_ms ||
	    ca->udp_timeout_ms != cb->udp_timeout_ms)
		say(report, ctx, &n, "dataplane.conntrack changed");
	if (running->mbufs != next->mbufs)
		say(report, ctx, &n, "dataplane.mbufs: %u -> %u",
		    running->mbufs, next->mbufs);
	if (running->mbuf_size != next->mbuf_size)
		say(report, ctx, &n, "dataplane.mbuf_size: %u -> %u",
		    running->mbuf_size, next->mbuf_size);
	/* the control socket and the metrics listener are set up at start */
	if (strcmp(running->control_socket, next->control_socket) != 0)
		say(report, ctx, &n, "control.socket: %s -> %s",
		    running->control_socket, next->control_socket);
	if (running->control_socket_mode != next->control_socket_mode)
		say(report, ctx, &n, "control.socket_mode: %04o -> %04o",
		    running->control_socket_mode, next->control_socket_mode);
	if (strcmp(running->metrics_listen, next->metrics_listen) != 0)
		say(report, ctx, &n, "control.metrics_listen: \"%s\" -> \"%s\"",
		    running->metrics_listen, next->metrics_listen);
	if (running->metrics_backend_series != next->metrics_backend_series)
		say(report, ctx, &n, "control.metrics_backend_series: %s -> %s",
		    running->metrics_backend_series ? "true" : "false",
		    next->metrics_backend_series ? "true" : "false");
	if (memcmp(&running->metrics_limits, &next->metrics_limits,
		   sizeof(next->metrics_limits)) != 0)
		say(report, ctx, &n, "control.metrics_*: timeout %u -> %u ms, "
		    "max_connections %u -> %u, max_connections_per_address "
		    "%u -> %u",
		    running->metrics_limits.timeout_ms,
		    next->metrics_limits.timeout_ms,
		    running->metrics_limits.max_connections,
		    next->metrics_limits.max_connections,
		    running->metrics_limits.max_per_address,
		    next->metrics_limits.max_per_address);
	/* the table build threads are started once, with their CPUs */
	if (running->build_threads != next->build_threads)
		say(report, ctx, &n, "control.build_threads: %u -> %u",
		    running->build_threads, next->build_threads);
	if (strcmp(running->build_cpus, next->build_cpus) != 0)
		say(report, ctx, &n, "control.build_cpus: \"%s\" -> \"%s\"",
		    running->build_cpus, next->build_cpus);
	/* the socket's groups and the state file are resolved at start */
	if (strcmp(running->socket_group, next->socket_group) != 0)
		say(report, ctx, &n, "control.socket_group: \"%s\" -> \"%s\"",
		    running->socket_group, next->socket_group);
	if (strcmp(running->admin_group, next->admin_group) != 0)
		say(report, ctx, &n, "control.admin_group: \"%s\" -> \"%s\"",
		    running->admin_group, next->admin_group);
	if (strcmp(running->state_file, next->state_file) != 0)
		say(report, ctx, &n, "control.state_file: \"%s\" -> \"%s\"",
		    running->state_file, next->state_file);
	/* a file cannot loosen the budget that judges it */
	if (memcmp(&running->reload_budget, &next->reload_budget,
		   sizeof(next->reload_budget)) != 0)
		say(report, ctx, &n, "control.reload_budget: vips_removed %u -> "
		    "%u, backends_lost %u -> %u, connections_moved %u -> %u",
		    running->reload_budget.max_vips_removed_pct,
		    next->reload_budget.max_vips_removed_pct,
		    running->reload_budget.max_backends_lost_pct,
		    next->reload_budget.max_backends_lost_pct,
		    running->reload_budget.max_connections_moved_pct,
		    next->reload_budget.max_connections_moved_pct);
	return n;
}

#define SWAP(a, b) do { __typeof__(a) tmp_ = (a); (a) = (b); (b) = tmp_; } while (0)
/* char arrays of equal size, which plain assignment cannot swap */
#define SWAP_ARRAY(a, b) do {                                  \
	char tmp_[sizeof(a)];                                  \
	_Static_assert(sizeof(a) == sizeof(b), "sizes differ"); \
	memcpy(tmp_, (a), sizeof(tmp_));                       \
	memcpy((a), (b), sizeof(tmp_));                        \
	memcpy((b), tmp_, sizeof(tmp_));                       \
} while (0)

void mlv_restart_only_keep(struct mlv_config *running, struct mlv_config *next)
{
	SWAP(running->n_eal_args, next->n_eal_args);
	SWAP(running->eal_args, next->eal_args);
	SWAP(running->workers, next->workers);
	SWAP(running->idle, next->idle);
	SWAP(running->idle_max_sleep_us, next->idle_max_sleep_us);
	SWAP(running->n_ports, next->n_ports);
	SWAP(running->ports, next->ports);
	SWAP(running->conntrack, next->conntrack);
	SWAP(running->mbufs, next->mbufs);
	SWAP(running->mbuf_size, next->mbuf_size);
	SWAP_ARRAY(running->control_socket, next->control_socket);
	SWAP(running->control_socket_mode, next->control_socket_mode);
	SWAP_ARRAY(running->metrics_listen, next->metrics_listen);
	SWAP(running->metrics_limits, next->metrics_limits);
	SWAP(running->metrics_backend_series, next->metrics_backend_series);
	SWAP(running->build_threads, next->build_threads);
	SWAP_ARRAY(running->build_cpus, next->build_cpus);
	SWAP_ARRAY(running->socket_group, next->socket_group);
	SWAP_ARRAY(running->admin_group, next->admin_group);
	SWAP_ARRAY(running->state_file, next->state_file);
	SWAP(running->reload_budget, next->reload_budget);
}
