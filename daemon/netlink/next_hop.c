/* SPDX-License-Identifier: BSD-3-Clause */
#include "daemon/netlink/next_hop.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "control/base/log.h"
#include "dataplane/ports/plan.h"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint32_t mlv_next_hop_wanted(const struct mlv_config *cfg, bool *wanted)
{
	struct mlv_port_plan plan;
	char why[256];
	uint32_t n = 0;

	memset(wanted, 0, cfg->n_ports * sizeof(*wanted));
	if (mlv_port_plan_make(cfg, &plan, why, sizeof(why)) != MLV_OK)
		return 0;   /* the daemon refused such a config long before */
	for (uint32_t i = 0; i < cfg->n_ports; i++) {
		wanted[i] = plan.auto_next_hop[i];
		n += wanted[i];
	}
	return n;
}

enum mlv_err mlv_next_hop_check(const struct mlv_config *cfg,
				const int *ifindex, char *err, size_t err_len)
{
	bool wanted[MLV_MAX_PORTS];

	if (cfg->n_ports > MLV_MAX_PORTS)
		return MLV_E_CONFIG;
	mlv_next_hop_wanted(cfg, wanted);
	for (uint32_t i = 0; i < cfg->n_ports; i++) {
		if (!wanted[i] || ifindex[i] > 0)
			continue;
		snprintf(err, err_len, "port %s: next_hop: auto needs a port "
			 "backed by a kernel interface (net_af_xdp or "
			 "net_af_packet with iface=, or net_tap), whose "
			 "neighbour table gives the MAC; device '%s' has none: "
			 "set next_hop to the MAC of the next hop toward the "
			 "backends, e.g. next_hop: \"02:00:00:00:00:01\"",
			 cfg->ports[i].name, cfg->ports[i].device);
		return MLV_E_CONFIG;
	}
	return MLV_OK;
}

static void set_wanted(struct mlv_next_hops *nh, const struct mlv_config *cfg)
{
	bool wanted[MLV_MAX_PORTS];

	mlv_next_hop_wanted(cfg, wanted);
	for (uint32_t i = 0; i < nh->n_ports; i++) {
		if (!wanted[i])
			memset(nh->port[i].fam, 0, sizeof(nh->port[i].fam));
		nh->port[i].wanted = wanted[i] && nh->port[i].ifindex > 0;
	}
}

static int cmp_ip(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct mlv_ip));
}

static struct mlv_next_hop_backend *find_backend(const struct mlv_next_hops *nh,
						 const struct mlv_ip *addr)
{
	/* addr is the first member: the key compares as a backend */
	_Static_assert(offsetof(struct mlv_next_hop_backend, addr) == 0,
		       "cmp_ip compares backends by their address");
	if (!nh->n_backends)
		return NULL;
	return bsearch(addr, nh->backends, nh->n_backends,
		       sizeof(*nh->backends), cmp_ip);
}

/* The interface that resolves l2dsr backends: the first transmitting
 * port with a kernel interface (a generation has one MAC per backend,
 * so ports transmitting l2dsr frames are expected to share the link). */
static int backend_ifindex(const struct mlv_next_hops *nh,
			   const struct mlv_config *cfg)
{
	struct mlv_port_plan plan;
	char why[256];

	if (mlv_port_plan_make(cfg, &plan, why, sizeof(why)) != MLV_OK)
		return 0;
	for (uint32_t i = 0; i < nh->n_ports; i++)
		if (plan.transmits[i] && nh->port[i].ifindex > 0)
			return nh->port[i].ifindex;
	return 0;
}

/* The l2dsr backend addresses of cfg without a configured MAC, sorted
 * and distinct; what was known of an address that stays is kept. */
static enum mlv_err set_backends(struct mlv_next_hops *nh,
				 const struct mlv_config *cfg)
{
	struct mlv_next_hop_backend *all;
	size_t total = 0, n = 0;
	int ifindex = backend_ifindex(nh, cfg);

	for (uint32_t v = 0; v < cfg->n_vips; v++)
		if (cfg->vips[v].forwarding == MLV_FWD_L2DSR)
			total += cfg->vips[v].n_backends;
	all = calloc(total ? total : 1, sizeof(*all));
	if (!all)
		return MLV_E_NOMEM;
	for (uint32_t v = 0; v < cfg->n_vips; v++) {
		const struct mlv_vip_config *vc = &cfg->vips[v];

		if (vc->forwarding != MLV_FWD_L2DSR)
			continue;
		for (uint32_t b = 0; b < vc->n_backends; b++)
			if (!vc->backends[b].has_mac)
				all[n++].addr = vc->backends[b].address;
	}
	qsort(all, n, sizeof(*all), cmp_ip);
	total = n;
	n = 0;
	for (size_t i = 0; i < total; i++) {
		const struct mlv_next_hop_backend *old;

		if (n && mlv_ip_equal(&all[n - 1].addr, &all[i].addr))
			continue;
		all[n] = all[i];
		all[n].ifindex = ifindex;
		old = find_backend(nh, &all[i].addr);
		if (old && old->ifindex == ifindex && old->resolved) {
			all[n].resolved = true;
			memcpy(all[n].mac, old->mac, 6);
		}
		n++;
	}
	free(nh->backends);
	nh->backends = all;
	nh->n_backends = n;
	if (n && !ifindex)
		mlv_warn("%zu l2dsr backend(s) without 'mac' and no transmitting "
			 "port with a kernel interface: they stay unusable", n);
	return MLV_OK;
}

enum mlv_err mlv_next_hops_init(struct mlv_next_hops *nh,
				const struct mlv_config *cfg,
				const int *ifindex)
{
	memset(nh, 0, sizeof(*nh));
	nh->n_ports = cfg->n_ports < MLV_MAX_PORTS ? cfg->n_ports : MLV_MAX_PORTS;
	for (uint32_t i = 0; i < nh->n_ports; i++)
		nh->port[i].ifindex = ifindex[i];
	set_wanted(nh, cfg);
	/* rtnetlink stays open for the daemon's life once any port has a
	 * kernel interface: a reload may turn auto resolution on */
	for (uint32_t i = 0; i < nh->n_ports; i++)
		if (nh->port[i].ifindex > 0)
			nh->active = true;
	if (!nh->active)
		return MLV_OK;
	if (set_backends(nh, cfg) != MLV_OK) {
		nh->active = false;
		errno = ENOMEM;
		return MLV_E_IO;
	}
	if (mlv_rtnl_open(&nh->nl) != MLV_OK) {
		nh->active = false;
		return MLV_E_IO;
	}
	nh->reroute = true;
	return MLV_OK;
}

void mlv_next_hops_free(struct mlv_next_hops *nh)
{
	mlv_rtnl_close(&nh->nl);
	free(nh->backends);
	nh->backends = NULL;
	nh->n_backends = 0;
	nh->active = false;
}

enum mlv_err mlv_next_hops_reconfigure(struct mlv_next_hops *nh,
				       const struct mlv_config *cfg)
{
	if (!nh->active)
		return MLV_OK;
	set_wanted(nh, cfg);
	nh->reroute = true;
	return set_backends(nh, cfg);
}

bool mlv_next_hops_backend_mac(const struct mlv_next_hops *nh,
			       const struct mlv_ip *addr, uint8_t mac[6])
{
	const struct mlv_next_hop_backend *b = find_backend(nh, addr);

	if (!b || !b->resolved)
		return false;
	memcpy(mac, b->mac, 6);
	return true;
}

int mlv_next_hops_fd(const struct mlv_next_hops *nh)
{
	return nh->active ? mlv_rtnl_monitor_fd(&nh->nl) : -1;
}

static bool port_wanted(int ifindex, void *ctx)
{
	const struct mlv_next_hops *nh = ctx;

	for (uint32_t i = 0; i < nh->n_ports; i++)
		if (nh->port[i].wanted && nh->port[i].ifindex == ifindex)
			return true;
	/* backends all resolve on one interface */
	return nh->n_backends && nh->backends[0].ifindex == ifindex;
}

void mlv_next_hops_on_notify(struct mlv_next_hops *nh)
{
	struct mlv_rtnl_changes ch;

	if (!nh->active)
		return;
	mlv_rtnl_monitor_read(&nh->nl, port_wanted, nh, &ch);
	nh->refresh |= ch.neigh;
	nh->reroute |= ch.route;
}

/* Every distinct outer destination of cfg (ipip and gue backends),
 * sorted; NULL (and *n 0) when there are none or memory ran out. */
static struct mlv_ip *outer_destinations(const struct mlv_config *cfg,
					 size_t *n)
{
	size_t total = 0, k = 0;
	struct mlv_ip *all;

	*n = 0;
	for (uint32_t v = 0; v < cfg->n_vips; v++)
		if (cfg->vips[v].forwarding != MLV_FWD_L2DSR)
			total += cfg->vips[v].n_backends;
	if (!total)
		return NULL;
	all = malloc(total * sizeof(*all));
	if (!all)
		return NULL;
	for (uint32_t v = 0; v < cfg->n_vips; v++) {
		const struct mlv_vip_config *vc = &cfg->vips[v];

		if (vc->forwarding == MLV_FWD_L2DSR)
			continue;
		for (uint32_t b = 0; b < vc->n_backends; b++)
			all[k++] = vc->backends[b].address;
	}
	qsort(all, total, sizeof(*all), cmp_ip);
	for (size_t i = 0; i < total; i++)
		if (*n == 0 || !mlv_ip_equal(&all[*n - 1], &all[i]))
			all[(*n)++] = all[i];
	return all;
}

#define MAX_VIAS 8

static int fam_index(uint8_t family)
{
	return family == MLV_AF_INET6;
}

/* The port's next hop of one family: the route's next-hop address most
 * of that family's backends share (ties: the lowest address), so the
 * choice does not depend on file order. Backends routed elsewhere are
 * reported once per route pass. */
static void route_port(struct mlv_next_hops *nh, uint32_t i,
		       const struct mlv_port_config *pc, uint8_t family,
		       const struct mlv_ip *dst, size_t n_dst)
{
	struct mlv_next_hop_port *p = &nh->port[i];
	struct mlv_next_hop_via *f = &p->fam[fam_index(family)];
	struct { struct mlv_ip ip; size_t n; } vias[MAX_VIAS];
	size_t n_vias = 0, unrouted = 0, best = 0;
	char a[MLV_IP_STRLEN], b[MLV_IP_STRLEN];

	for (size_t d = 0; d < n_dst; d++) {
		struct mlv_ip via;
		int dev = 0;
		size_t j;

		if (dst[d].family != family)
			continue;
		if (mlv_rtnl_route(&nh->nl, &dst[d], p->ifindex, &via, &dev)) {
			if (unrouted++ == 0)
				mlv_warn("port %s: no route to backend %s via "
					 "this interface (ifindex %d)", pc->name,
					 mlv_ip_format(&dst[d], a, sizeof(a)),
					 p->ifindex);
			continue;
		}
		for (j = 0; j < n_vias; j++)
			if (mlv_ip_equal(&vias[j].ip, &via))
				break;
		if (j == n_vias && n_vias < MAX_VIAS) {
			vias[n_vias].ip = via;
			vias[n_vias++].n = 0;
		}
		if (j < n_vias)
			vias[j].n++;
	}
	for (size_t j = 1; j < n_vias; j++)
		if (vias[j].n > vias[best].n ||
		    (vias[j].n == vias[best].n &&
		     cmp_ip(&vias[j].ip, &vias[best].ip) < 0))
			best = j;
	if (!n_vias) {
		f->have_via = false;
		f->resolved = false;
		return;
	}
	if (!f->have_via || !mlv_ip_equal(&f->via, &vias[best].ip)) {
		f->resolved = false;
		mlv_info("port %s: IPv%d next hop %s (from the kernel's routes)",
			 pc->name, family == MLV_AF_INET6 ? 6 : 4,
			 mlv_ip_format(&vias[best].ip, a, sizeof(a)));
	}
	f->via = vias[best].ip;
	f->have_via = true;
	if (n_vias > 1)
		mlv_warn("port %s: the kernel routes some IPv%d backends via %s, "
			 "not %s; a port has one next hop per family, so they "
			 "are sent to %s too (route them alike, or set next_hop)",
			 pc->name, family == MLV_AF_INET6 ? 6 : 4,
			 mlv_ip_format(&vias[best == 0 ? 1 : 0].ip, b, sizeof(b)),
			 mlv_ip_format(&vias[best].ip, a, sizeof(a)), a);
	if (unrouted > 1)
		mlv_warn("port %s: %zu backends have no route via this interface",
			 pc->name, unrouted);
}

static void reroute(struct mlv_next_hops *nh, const struct mlv_config *cfg)
{
	size_t n_dst;
	struct mlv_ip *dst = outer_destinations(cfg, &n_dst);

	for (uint32_t i = 0; i < nh->n_ports; i++)
		if (nh->port[i].wanted) {
			route_port(nh, i, &cfg->ports[i], MLV_AF_INET, dst, n_dst);
			route_port(nh, i, &cfg->ports[i], MLV_AF_INET6, dst,
				   n_dst);
		}
	free(dst);
}

/* One neighbour look-up per wanted port and routed family; solicit those
 * missing. */
static void lookup(struct mlv_next_hops *nh, const struct mlv_config *cfg)
{
	char a[MLV_IP_STRLEN], m[MLV_MAC_STRLEN];

	for (uint32_t i = 0; i < nh->n_ports; i++) {
		struct mlv_next_hop_port *p = &nh->port[i];

		for (int k = 0; k < 2 && p->wanted; k++) {
			struct mlv_next_hop_via *f = &p->fam[k];
			struct mlv_mac mac;
			bool valid;

			if (!f->have_via)
				continue;
			if (mlv_rtnl_neigh(&nh->nl, p->ifindex, &f->via,
					   mac.bytes, &valid) != MLV_OK) {
				mlv_debug("port %s: neighbour look-up failed: %s",
					  cfg->ports[i].name, strerror(errno));
				continue;
			}
			if (!valid) {
				if (mlv_rtnl_solicit(p->ifindex, &f->via) != MLV_OK)
					mlv_debug("port %s: cannot solicit %s: %s",
						  cfg->ports[i].name,
						  mlv_ip_format(&f->via, a,
								sizeof(a)),
						  strerror(errno));
				/* a known MAC stays in use while the kernel
				 * re-resolves: a neighbour rarely changes its
				 * MAC, and zeros would send everything
				 * nowhere */
				continue;
			}
			if (!f->resolved || memcmp(f->mac, mac.bytes, 6) != 0) {
				mlv_info("port %s: next hop %s is %s",
					 cfg->ports[i].name,
					 mlv_ip_format(&f->via, a, sizeof(a)),
					 mlv_mac_format(&mac, m, sizeof(m)));
				memcpy(f->mac, mac.bytes, 6);
				f->resolved = true;
			}
		}
	}
}

/* One neighbour look-up per l2dsr backend to resolve; solicit those
 * missing (the kernel then resolves the backend itself, on the link).
 * Returns whether some backend's MAC appeared or changed. */
static bool lookup_backends(struct mlv_next_hops *nh)
{
	char a[MLV_IP_STRLEN], m[MLV_MAC_STRLEN];
	bool changed = false;

	for (size_t i = 0; i < nh->n_backends; i++) {
		struct mlv_next_hop_backend *b = &nh->backends[i];
		struct mlv_mac mac;
		bool valid;

		if (b->ifindex <= 0)
			continue;
		if (mlv_rtnl_neigh(&nh->nl, b->ifindex, &b->addr, mac.bytes,
				   &valid) != MLV_OK) {
			mlv_debug("l2dsr backend %s: neighbour look-up failed: %s",
				  mlv_ip_format(&b->addr, a, sizeof(a)),
				  strerror(errno));
			continue;
		}
		if (!valid) {
			if (mlv_rtnl_solicit(b->ifindex, &b->addr) != MLV_OK)
				mlv_debug("l2dsr backend %s: cannot solicit: %s",
					  mlv_ip_format(&b->addr, a, sizeof(a)),
					  strerror(errno));
			/* a known MAC stays in use while the kernel
			 * re-resolves, as for next hops */
			continue;
		}
		if (!b->resolved || memcmp(b->mac, mac.bytes, 6) != 0) {
			mlv_info("l2dsr backend %s is %s",
				 mlv_ip_format(&b->addr, a, sizeof(a)),
				 mlv_mac_format(&mac, m, sizeof(m)));
			memcpy(b->mac, mac.bytes, 6);
			b->resolved = true;
			changed = true;
		}
	}
	return changed;
}

bool mlv_next_hops_update(struct mlv_next_hops *nh,
			  const struct mlv_config *cfg,
			  struct mlv_gen_port_info *info, bool force)
{
	bool changed = false;

	if (!nh->active)
		return false;
	if (force || nh->reroute)
		reroute(nh, cfg);
	lookup(nh, cfg);
	changed = lookup_backends(nh);
	nh->reroute = nh->refresh = false;
	nh->last_check_ms = now_ms();
	for (uint32_t i = 0; i < nh->n_ports; i++) {
		const struct mlv_next_hop_port *p = &nh->port[i];
		const struct mlv_next_hop_via *v4 = &p->fam[0], *v6 = &p->fam[1];
		uint8_t *dst[2] = { info[i].next_hop, info[i].next_hop6 };
		/* a port with IPv6 backends only has its next_hop from
		 * IPv6's, so that it is never zeros while one is known */
		const uint8_t *want[2] = {
			v4->resolved ? v4->mac :
			!v4->have_via && v6->resolved ? v6->mac : NULL,
			v6->resolved ? v6->mac : NULL,
		};

		if (!p->wanted)
			continue;
		for (int k = 0; k < 2; k++) {
			if (!want[k] || memcmp(dst[k], want[k], 6) == 0)
				continue;
			memcpy(dst[k], want[k], 6);
			changed = true;
		}
	}
	return changed;
}

/* Every family with a route resolved, and at least one family. */
static bool port_resolved(const struct mlv_next_hop_port *p)
{
	for (int k = 0; k < 2; k++)
		if (p->fam[k].have_via && !p->fam[k].resolved)
			return false;
	return p->fam[0].resolved || p->fam[1].resolved;
}

bool mlv_next_hops_all_resolved(const struct mlv_next_hops *nh)
{
	for (uint32_t i = 0; i < nh->n_ports; i++)
		if (nh->port[i].wanted && !port_resolved(&nh->port[i]))
			return false;
	for (size_t i = 0; i < nh->n_backends; i++)
		if (nh->backends[i].ifindex > 0 && !nh->backends[i].resolved)
			return false;
	return true;
}

bool mlv_next_hops_wait(struct mlv_next_hops *nh, const struct mlv_config *cfg,
			struct mlv_gen_port_info *info, uint32_t timeout_ms)
{
	uint64_t end = now_ms() + timeout_ms;

	if (!nh->active)
		return true;
	mlv_next_hops_update(nh, cfg, info, true);
	while (!mlv_next_hops_all_resolved(nh)) {
		struct pollfd pfd = { .fd = mlv_next_hops_fd(nh), .events = POLLIN };
		uint64_t now = now_ms();
		int wait;

		if (now >= end)
			return false;
		/* a notification, or the retry interval, whichever is first */
		wait = (int)(end - now < MLV_NEXT_HOP_RETRY_MS ? end - now :
			     MLV_NEXT_HOP_RETRY_MS);
		if (poll(&pfd, 1, wait) > 0)
			mlv_next_hops_on_notify(nh);
		mlv_next_hops_update(nh, cfg, info, false);
	}
	return true;
}
