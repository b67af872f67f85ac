/* SPDX-License-Identifier: BSD-3-Clause */
/* Cross-field config checks: the rules no single key's type can express. */
#include "control/config/validate_internal.h"

#include <limits.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "control/config/cpu_list.h"
#include "control/config/diags.h"
#include "control/tables/maglev.h"
#include "control/config/mbuf_size.h"
#include "control/tables/builder.h"

static const char *fwd_name(enum mlv_forwarding f)
{
	return mlv_forwarding_name(f);
}

static bool is_unicast(const struct mlv_ip *ip)
{
	static const uint8_t zero[16];

	if (ip->family == MLV_AF_INET) {
		if (memcmp(ip->bytes, zero, 4) == 0 || ip->bytes[0] >= 224)
			return false;   /* 0.0.0.0, multicast, class E, broadcast */
		return true;
	}
	return memcmp(ip->bytes, zero, 16) != 0 && ip->bytes[0] != 0xff;
}

/* ---- health ---- */

void mlv_cfg_finish_health(struct mlv_cfg_ctx *ctx, void *obj,
			   const struct mlv_cfg_seen *seen)
{
	struct mlv_health_config *h = obj;
	char a[32], b[32];

	if (mlv_cfg_usable(seen, "timeout") && mlv_cfg_usable(seen, "interval") &&
	    h->timeout_ms >= h->interval_ms) {
		/* Point at whichever of the two this mapping set. */
		const char *at = mlv_cfg_value(seen, "timeout") != NULL ? "timeout"
									: "interval";

		mlv_cfg_error(ctx, mlv_cfg_pos(seen, at),
			      "health timeout (%s) must be shorter than the interval (%s)",
			      mlv_cfg_format_duration(h->timeout_ms, a, sizeof(a)),
			      mlv_cfg_format_duration(h->interval_ms, b, sizeof(b)));
	}
	if (mlv_cfg_given(seen, "path") && h->path[0] != '/')
		mlv_cfg_error(ctx, mlv_cfg_pos(seen, "path"),
			      "health path '%s' must start with '/'", h->path);
	/* A datagram check has no connection the data path could carry
	 * back to the checker's socket (docs/health.md); an inherited
	 * via: data_path does not reach udp and dns checks. */
	if (h->via == MLV_HEALTH_VIA_DATA_PATH &&
	    (h->type == MLV_HEALTH_UDP || h->type == MLV_HEALTH_DNS)) {
		if (mlv_cfg_given(seen, "via"))
			mlv_cfg_error(ctx, mlv_cfg_pos(seen, "via"),
				      "health via: data_path needs type tcp or http (this check is %s): "
				      "remove via (a %s check goes straight to the backend), or check "
				      "a TCP port the backends serve on the VIP's address",
				      h->type == MLV_HEALTH_UDP ? "udp" : "dns",
				      h->type == MLV_HEALTH_UDP ? "udp" : "dns");
		h->via = MLV_HEALTH_VIA_DIRECT;
	}
}

/* ---- dataplane ---- */

/* An mbuf must hold the largest frame any port may receive behind the
 * encapsulation headroom: the port with the largest MTU decides. */
static void check_mbuf_size(struct mlv_cfg_ctx *ctx, const struct mlv_config *cfg,
			    const struct mlv_cfg_seen *seen)
{
	const struct mlv_port_config *widest = NULL;

	if (cfg->mbuf_size == 0 || !mlv_cfg_given(seen, "mbuf_size"))
		return;
	for (uint32_t i = 0; i < cfg->n_ports; i++)
		if (widest == NULL || cfg->ports[i].mtu > widest->mtu)
			widest = &cfg->ports[i];
	if (widest != NULL && cfg->mbuf_size < mlv_mbuf_size_min(widest->mtu))
		mlv_cfg_error(ctx, mlv_cfg_pos(seen, "mbuf_size"),
			      "'mbuf_size' is %u; port '%s' (mtu %u) needs at least %u: "
			      "%u bytes of headroom for the outer headers, the mtu and "
			      "%u for Ethernet, two VLAN tags and the FCS",
			      cfg->mbuf_size, widest->name, widest->mtu,
			      mlv_mbuf_size_min(widest->mtu), MLV_MBUF_HEADROOM,
			      MLV_FRAME_OVERHEAD);
}

/* host_tap: the exception port the host's traffic of the first port
 * goes through, added after the configured ports. Exception frames
 * from the host leave by the first other port (dataplane/worker), so
 * only the first port may have it, and no other exception port. */
static void add_host_port(struct mlv_cfg_ctx *ctx, struct mlv_config *cfg,
			  const struct mlv_ynode **items,
			  const struct mlv_port_config *exception)
{
	struct mlv_port_config *grown, *host;
	const struct mlv_port_config *p;
	char name[MLV_NAME_MAX];
	const uint32_t at = 0;

	for (uint32_t i = 1; i < cfg->n_ports; i++) {
		if (cfg->ports[i].host_tap) {
			mlv_cfg_error(ctx, mlv_cfg_item_pos(items[i], "host_tap"),
				      "host_tap is for the first port only (port '%s' is number %u): the host's replies leave by the first port",
				      cfg->ports[i].name, i + 1);
			return;
		}
	}
	if (cfg->n_ports == 0 || !cfg->ports[at].host_tap)
		return;
	p = &cfg->ports[at];
	if (exception != NULL) {
		mlv_cfg_error(ctx, mlv_cfg_item_pos(items[at], "host_tap"),
			      "port '%s': host_tap makes the host TAP the exception port, and '%s' already is one",
			      p->name, exception->name);
		return;
	}
	if (strlen(MLV_HOST_TAP_IFPREFIX) + strlen(p->name) > 15) {
		mlv_cfg_error(ctx, mlv_cfg_item_pos(items[at], "name"),
			      "port '%s': with host_tap its name makes the interface name '%s%s', longer than 15 bytes; use a shorter name",
			      p->name, MLV_HOST_TAP_IFPREFIX, p->name);
		return;
	}
	if (p->address.family == MLV_AF_NONE && p->address6.family == MLV_AF_NONE) {
		mlv_cfg_error(ctx, mlv_cfg_item_pos(items[at], "host_tap"),
			      "port '%s': host_tap gives the host the port's addresses, and it has none",
			      p->name);
		return;
	}
	if (cfg->n_ports == MLV_MAX_PORTS) {
		mlv_cfg_error(ctx, mlv_cfg_item_pos(items[at], "host_tap"),
			      "port '%s': host_tap adds a port, and there are %u already",
			      p->name, MLV_MAX_PORTS);
		return;
	}
	snprintf(name, sizeof(name), "%.*s-host", (int)(sizeof(name) - 6),
		 p->name);
	if (mlv_config_port(cfg, name) != NULL) {
		mlv_cfg_error(ctx, mlv_cfg_item_pos(items[at], "host_tap"),
			      "port '%s': host_tap adds the port '%s', and a port has that name",
			      p->name, name);
		return;
	}
	grown = realloc(cfg->ports, (cfg->n_ports + 1) * sizeof(*grown));
	if (grown == NULL) {
		mlv_cfg_error(ctx, items[at]->pos, "out of memory");
		return;
	}
	cfg->ports = grown;
	p = &cfg->ports[at];
	host = &cfg->ports[cfg->n_ports++];
	memset(host, 0, sizeof(*host));
	memcpy(host->name, name, sizeof(host->name));
	snprintf(host->device, sizeof(host->device), "%s", MLV_HOST_TAP_DEVICE);
	memcpy(host->tx_port, p->name, sizeof(host->tx_port));
	memcpy(host->host_for, p->name, sizeof(host->host_for));
	host->mtu = p->mtu;
	host->exception = true;
	host->pos = p->pos;
}

void mlv_cfg_finish_bond(struct mlv_cfg_ctx *ctx, void *obj,
			 const struct mlv_cfg_seen *seen)
{
	struct mlv_bond_config *b = obj;
	const struct mlv_ynode **items;

	b->enabled = true;
	b->pos = seen->node->pos;
	if (!mlv_cfg_given(seen, "members"))
		return;     /* required: reported by the walk */
	if (b->n_members < 2) {
		mlv_cfg_error(ctx, mlv_cfg_pos(seen, "members"),
			      "a bond needs two members or more, got %u",
			      b->n_members);
		return;
	}
	items = mlv_cfg_list_items(ctx, mlv_cfg_value(seen, "members"),
				   b->n_members);
	if (items == NULL)
		return;
	for (uint32_t i = 0; i < b->n_members; i++) {
		if (strncmp(b->members[i], MLV_BOND_DEVICE_PREFIX,
			    strlen(MLV_BOND_DEVICE_PREFIX)) == 0)
			mlv_cfg_error(ctx, items[i]->pos,
				      "bond member '%s' is a bonded device; members are the NICs (or vdevs) under the bond",
				      b->members[i]);
		for (uint32_t j = 0; j < i; j++)
			if (strcmp(b->members[i], b->members[j]) == 0) {
				mlv_cfg_error(ctx, items[i]->pos,
					      "bond member '%s' is listed twice",
					      b->members[i]);
				break;
			}
	}
	free(items);
}

/* Bonds: a bonded port's device is the bond maglevd creates (DPDK's
 * bonding driver takes only names of its own prefix), and no device is
 * both a member and a port, or a member of two bonds. */
static void check_bonds(struct mlv_cfg_ctx *ctx, const struct mlv_config *cfg,
			const struct mlv_ynode **items)
{
	for (uint32_t i = 0; i < cfg->n_ports; i++) {
		const struct mlv_port_config *p = &cfg->ports[i];

		if (p->bond.enabled &&
		    strncmp(p->device, MLV_BOND_DEVICE_PREFIX,
			    strlen(MLV_BOND_DEVICE_PREFIX)) != 0)
			mlv_cfg_error(ctx, mlv_cfg_item_pos(items[i], "device"),
				      "port '%s' has a bond, so its device is the bonded device maglevd creates: name it %s<something> (e.g. %s0), not '%s'",
				      p->name, MLV_BOND_DEVICE_PREFIX,
				      MLV_BOND_DEVICE_PREFIX, p->device);
		if (p->bond.enabled && strlen(p->device) >= MLV_BOND_NAME_MAX)
			mlv_cfg_error(ctx, mlv_cfg_item_pos(items[i], "device"),
				      "port '%s': a bonded device's name is at most %u bytes (DPDK's limit)",
				      p->name, MLV_BOND_NAME_MAX - 1);
		if (!p->bond.enabled &&
		    strncmp(p->device, MLV_BOND_DEVICE_PREFIX,
			    strlen(MLV_BOND_DEVICE_PREFIX)) == 0)
			mlv_cfg_error(ctx, mlv_cfg_item_pos(items[i], "device"),
				      "port '%s': device '%s' is a bonded device; describe it with a bond: mapping (members, mode) instead of EAL arguments",
				      p->name, p->device);
		for (uint32_t m = 0; p->bond.enabled && m < p->bond.n_members; m++) {
			const char *dev = p->bond.members[m];

			for (uint32_t j = 0; j < cfg->n_ports; j++) {
				const struct mlv_port_config *q = &cfg->ports[j];

				if (strcmp(q->device, dev) == 0)
					mlv_cfg_error(ctx, mlv_cfg_item_pos(items[i], "bond"),
						      "bond member '%s' of port '%s' is also the device of port '%s'",
						      dev, p->name, q->name);
				for (uint32_t k = 0; j < i && q->bond.enabled &&
				     k < q->bond.n_members; k++)
					if (strcmp(q->bond.members[k], dev) == 0)
						mlv_cfg_error(ctx, mlv_cfg_item_pos(items[i], "bond"),
							      "bond member '%s' of port '%s' is already a member of port '%s'",
							      dev, p->name, q->name);
			}
		}
	}
}

void mlv_cfg_finish_dataplane(struct mlv_cfg_ctx *ctx, void *obj,
			      const struct mlv_cfg_seen *seen)
{
	struct mlv_config *cfg = obj;
	const struct mlv_ynode **items;
	const struct mlv_port_config *exception = NULL;
	uint32_t i, j;

	check_mbuf_size(ctx, cfg, seen);
	if (mlv_cfg_given(seen, "ports") && cfg->n_ports == 0)
		mlv_cfg_error(ctx, mlv_cfg_pos(seen, "ports"),
			      "at least one port is required");
	items = mlv_cfg_list_items(ctx, mlv_cfg_value(seen, "ports"), cfg->n_ports);
	if (items == NULL)
		return;
	for (i = 0; i < cfg->n_ports; i++) {
		const struct mlv_port_config *p = &cfg->ports[i];

		for (j = 0; j < i && p->name[0]; j++) {
			if (strcmp(cfg->ports[j].name, p->name) == 0) {
				mlv_cfg_error(ctx, mlv_cfg_item_pos(items[i], "name"),
					      "duplicate port name '%s' (first at line %u)",
					      p->name, cfg->ports[j].pos.line);
				break;
			}
		}
		for (j = 0; j < i && p->device[0]; j++) {
			const struct mlv_port_config *q = &cfg->ports[j];

			if (strcmp(q->device, p->device) != 0)
				continue;
			/* one device, several VLANs of it: a port each */
			if (p->vlan && q->vlan && p->vlan != q->vlan &&
			    !p->bond.enabled && !q->bond.enabled)
				continue;
			if (p->vlan && p->vlan == q->vlan)
				mlv_cfg_error(ctx, mlv_cfg_item_pos(items[i], "vlan"),
					      "ports '%s' and '%s' are both VLAN %u of device '%s'",
					      q->name, p->name, p->vlan, p->device);
			else
				mlv_cfg_error(ctx, mlv_cfg_item_pos(items[i], "device"),
					      "device '%s' is already used by port '%s' (ports share a device only as different VLANs of it, each with vlan:, and not a bond)",
					      p->device, q->name);
			break;
		}
		if (p->tx_port[0] != '\0') {
			if (strcmp(p->tx_port, p->name) == 0) {
				mlv_cfg_error(ctx, mlv_cfg_item_pos(items[i], "tx_port"),
					      "port '%s' names itself as tx_port; leave tx_port out for one-arm mode",
					      p->name);
			} else if (mlv_config_port(cfg, p->tx_port) == NULL) {
				mlv_cfg_error(ctx, mlv_cfg_item_pos(items[i], "tx_port"),
					      "tx_port '%s' is not the name of a port",
					      p->tx_port);
			}
		}
		if (p->has_next_hop6 && p->next_hop_auto)
			mlv_cfg_error(ctx, mlv_cfg_item_pos(items[i], "next_hop6"),
				      "port '%s': next_hop6 is for a port whose next_hop is a MAC; with next_hop: auto each family's next hop comes from the kernel's routes",
				      p->name);
		if (p->exception) {
			if (exception != NULL)
				mlv_cfg_error(ctx, mlv_cfg_item_pos(items[i], "exception"),
					      "only one port can be the exception port ('%s' already is)",
					      exception->name);
			else
				exception = p;
		}
	}
	check_bonds(ctx, cfg, items);
	add_host_port(ctx, cfg, items, exception);
	free(items);
}

/* ---- VIPs ---- */

void mlv_cfg_init_vip(struct mlv_cfg_ctx *ctx, void *elem)
{
	struct mlv_vip_config *vip = elem;

	vip->forwarding = ctx->cfg->default_forwarding;
	vip->table_size = ctx->cfg->default_table_size;
	vip->health = ctx->cfg->default_health;
	vip->table = ctx->cfg->default_table;
	vip->max_load = ctx->cfg->default_max_load;
	vip->vnodes = ctx->cfg->default_vnodes;
	vip->min_backends = ctx->cfg->default_min_backends;
	vip->icmp_echo = ctx->cfg->default_icmp_echo;
	vip->new_flows_per_second = ctx->cfg->default_new_flows_per_second;
	vip->new_flows_burst = ctx->cfg->default_new_flows_burst;
	vip->hash = ctx->cfg->default_hash;
	vip->mss_clamp = ctx->cfg->default_mss_clamp;
	vip->second_chance = ctx->cfg->default_second_chance;
	vip->ipip_source = ctx->cfg->default_ipip_source;
	vip->ipip_source6 = ctx->cfg->default_ipip_source6;
}

/* ipip_source / ipip_source6 choose outer sources of ipip packets: on a
 * VIP forwarded otherwise, setting one is an error (gue varies its UDP
 * source port, l2dsr has no outer header) and the defaults do not reach
 * it. */
static void check_ipip_source(struct mlv_cfg_ctx *ctx,
			      struct mlv_vip_config *vip,
			      const struct mlv_cfg_seen *seen)
{
	static const char *const keys[] = { "ipip_source", "ipip_source6" };

	if (vip->forwarding == MLV_FWD_IPIP)
		return;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (mlv_cfg_given(seen, keys[i]))
			mlv_cfg_error(ctx, mlv_cfg_pos(seen, keys[i]),
				      "%s is only used with forwarding: ipip (VIP '%s' is %s): "
				      "gue spreads flows by its UDP source port",
				      keys[i], vip->name,
				      mlv_forwarding_name(vip->forwarding));
	memset(&vip->ipip_source, 0, sizeof(vip->ipip_source));
	memset(&vip->ipip_source6, 0, sizeof(vip->ipip_source6));
}

/* A VIP's traffic may arrive on any port and leaves by that port's
 * transmitting port (itself, or its tx_port), so every transmitting port
 * needs an address of each backend family. The first one without one of
 * family, or -1; *via is a port that transmits through it. */
static int tx_port_without(const struct mlv_config *cfg, uint8_t family,
			   uint32_t *via)
{
	for (uint32_t i = 0; i < cfg->n_ports; i++) {
		const char *name = cfg->ports[i].tx_port;
		uint32_t tx = i;
		const struct mlv_port_config *pc;

		if (name[0] != '\0') {
			for (tx = 0; tx < cfg->n_ports; tx++)
				if (strcmp(cfg->ports[tx].name, name) == 0)
					break;
			if (tx == cfg->n_ports)
				continue;   /* an unknown tx_port is an error already */
		}
		pc = &cfg->ports[tx];
		if ((family == MLV_AF_INET ? pc->address.family :
		     pc->address6.family) != family) {
			*via = i;
			return (int)tx;
		}
	}
	return -1;
}

/* The arguments of the --vdev (or --vdev=) EAL option for device dev,
 * "name,key=value,..."; NULL if there is none. */
static const char *vdev_args(const struct mlv_config *cfg, const char *dev)
{
	size_t n = strlen(dev);

	for (uint32_t i = 0; i < cfg->n_eal_args; i++) {
		const char *a = cfg->eal_args[i];

		if (strncmp(a, "--vdev=", 7) == 0)
			a += 7;
		else if (strcmp(a, "--vdev") == 0 && i + 1 < cfg->n_eal_args)
			a = cfg->eal_args[++i];
		else
			continue;
		if (strncmp(a, dev, n) == 0 && (a[n] == ',' || a[n] == '\0'))
			return a;
	}
	return NULL;
}

/* Whether the port's device is a vdev over a kernel interface, which the
 * kernel keeps a neighbour table for: net_af_xdp or net_af_packet with
 * iface=, or net_tap. Text rules because the config is checked before
 * any device exists; the daemon asks the driver. */
static bool device_has_kernel_iface(const struct mlv_config *cfg,
				    const char *dev)
{
	const char *args = vdev_args(cfg, dev);

	/* host_tap: the port's kernel side is its host TAP */
	for (uint32_t i = 0; i < cfg->n_ports; i++)
		if (cfg->ports[i].host_tap && strcmp(cfg->ports[i].device, dev) == 0)
			return true;

	if (strncmp(dev, "net_tap", 7) == 0)
		return true;
	if (strncmp(dev, "net_af_xdp", 10) != 0 &&
	    strncmp(dev, "net_af_packet", 13) != 0)
		return false;
	return strstr(dev, "iface=") != NULL ||
	       (args != NULL && strstr(args, "iface=") != NULL);
}

/* The first port that transmits (some port's tx_port, or a port without
 * one) and has a kernel interface: true and its index in *idx. False
 * with *idx the first transmitting port, for the message. */
static bool first_kernel_tx_port(const struct mlv_config *cfg, uint32_t *idx)
{
	bool found_tx = false;

	for (uint32_t i = 0; i < cfg->n_ports; i++) {
		bool transmits = cfg->ports[i].tx_port[0] == '\0';

		for (uint32_t j = 0; j < cfg->n_ports && !transmits; j++)
			transmits = strcmp(cfg->ports[j].tx_port,
					   cfg->ports[i].name) == 0;
		if (!transmits)
			continue;
		if (!found_tx)
			*idx = i;
		found_tx = true;
		if (device_has_kernel_iface(cfg, cfg->ports[i].device)) {
			*idx = i;
			return true;
		}
	}
	return false;
}

/* Can this VIP's forwarding method carry traffic to backend b? */
static void check_backend_carriable(struct mlv_cfg_ctx *ctx,
				    const struct mlv_vip_config *vip,
				    const struct mlv_backend_config *b,
				    const struct mlv_ynode *item)
{
	uint8_t fam = b->address.family;

	if (vip->forwarding == MLV_FWD_L2DSR) {
		/* The frame goes to the backend's MAC unchanged; the address
		 * family does not matter, the MAC does. Without 'mac' the
		 * daemon looks the address up in the neighbour table of a
		 * transmitting port's kernel interface (daemon/netlink/next_hop.h). */
		uint32_t tx = 0;

		if (b->has_mac || ctx->cfg->n_ports == 0 ||
		    first_kernel_tx_port(ctx->cfg, &tx))
			return;
		mlv_cfg_error(ctx, item->pos,
			      "l2dsr backend '%s' has no 'mac', and no transmitting port has a kernel interface whose neighbour table could give it (port '%s' is device '%s'): set 'mac', or use net_af_xdp or net_af_packet with iface=",
			      b->name, ctx->cfg->ports[tx].name,
			      ctx->cfg->ports[tx].device);
		return;
	}
	if (fam == MLV_AF_NONE)
		return;
	if (vip->forwarding == MLV_FWD_IPIP && vip->address.family == MLV_AF_INET6 &&
	    fam == MLV_AF_INET) {
		mlv_cfg_error(ctx, mlv_cfg_item_pos(item, "address"),
			      "ipip cannot carry IPv6 VIP '%s' to IPv4 backend '%s' (there is no IPv6-in-IPv4 here); use an IPv6 backend address or forwarding: gue",
			      vip->name, b->name);
		return;
	}
	uint32_t via = 0;
	int tx = tx_port_without(ctx->cfg, fam, &via);
	bool *reported = &ctx->tx_family_reported[fam == MLV_AF_INET6];

	if (tx < 0 || *reported)
		return;
	*reported = true;
	if ((uint32_t)tx == via)
		mlv_cfg_error(ctx, mlv_cfg_item_pos(item, "address"),
			      "backend '%s' is IPv%d but port '%s' has no %s to send %s packets from (a VIP's traffic may arrive on any port)",
			      b->name, fam, ctx->cfg->ports[tx].name,
			      fam == MLV_AF_INET ? "IPv4 'address'" : "IPv6 'address6'",
			      fwd_name(vip->forwarding));
	else
		mlv_cfg_error(ctx, mlv_cfg_item_pos(item, "address"),
			      "backend '%s' is IPv%d but port '%s', the tx_port of port '%s', has no %s to send %s packets from",
			      b->name, fam, ctx->cfg->ports[tx].name,
			      ctx->cfg->ports[via].name,
			      fam == MLV_AF_INET ? "IPv4 'address'" : "IPv6 'address6'",
			      fwd_name(vip->forwarding));
}

struct name_ref {
	const char *name;
	uint32_t index;
};

static int name_ref_cmp(const void *a, const void *b)
{
	const struct name_ref *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c != 0)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Report every name that repeats an earlier one (file order). */
static void check_unique_names(struct mlv_cfg_ctx *ctx, const char *what,
			       const char *const *names, uint32_t n,
			       const struct mlv_ynode **items,
			       const char *where)
{
	struct name_ref *refs;
	uint32_t i;

	if (n < 2)
		return;
	refs = calloc(n, sizeof(*refs));
	if (refs == NULL) {
		ctx->nomem = true;
		return;
	}
	for (i = 0; i < n; i++) {
		refs[i].name = names[i];
		refs[i].index = i;
	}
	qsort(refs, n, sizeof(*refs), name_ref_cmp);
	for (i = 1; i < n; i++) {
		const struct name_ref *first = &refs[i - 1];

		if (refs[i].name[0] == '\0' || strcmp(refs[i].name, first->name) != 0)
			continue;
		while (first > refs && strcmp(first[-1].name, first->name) == 0)
			first--;
		struct mlv_src_pos here = mlv_cfg_item_pos(items[refs[i].index],
							   "name");
		char at[PATH_MAX + 16];

		mlv_cfg_error(ctx, here,
			      "duplicate %s name '%s'%s (first at %s)", what,
			      refs[i].name, where,
			      mlv_diags_where(ctx->diags,
					      items[first->index]->pos, here,
					      at, sizeof(at)));
	}
	free(refs);
}

static int backend_name_cmp(const void *a, const void *b)
{
	const struct mlv_backend_config *x = a, *y = b;

	return strcmp(x->name, y->name);
}

static void check_backends(struct mlv_cfg_ctx *ctx, struct mlv_vip_config *vip,
			   const struct mlv_cfg_seen *seen)
{
	const struct mlv_ynode **items;
	const char **names;
	char where[MLV_NAME_MAX + 16];
	bool fwd_known = mlv_cfg_usable(seen, "forwarding") &&
			 vip->address.family != MLV_AF_NONE;
	uint32_t i;

	items = mlv_cfg_list_items(ctx, mlv_cfg_value(seen, "backends"), vip->n_backends);
	if (items == NULL)
		return;
	names = calloc(vip->n_backends, sizeof(*names));
	if (names == NULL) {
		ctx->nomem = true;
		goto out;
	}
	for (i = 0; i < vip->n_backends; i++) {
		const struct mlv_backend_config *b = &vip->backends[i];

		names[i] = b->name;
		if (items[i]->kind != MLV_YNODE_MAP)
			continue;
		if (b->address.family != MLV_AF_NONE && !is_unicast(&b->address))
			mlv_cfg_error(ctx, mlv_cfg_item_pos(items[i], "address"),
				      "backend address of '%s' must be a unicast address",
				      b->name);
		if (fwd_known)
			check_backend_carriable(ctx, vip, b, items[i]);
		/* The probe is addressed to the backend and re-addressed
		 * to the VIP on its way out (docs/health.md): one family. */
		if (vip->health.via == MLV_HEALTH_VIA_DATA_PATH &&
		    vip->health.type != MLV_HEALTH_NONE &&
		    b->address.family != MLV_AF_NONE &&
		    vip->address.family != MLV_AF_NONE &&
		    b->address.family != vip->address.family)
			mlv_cfg_error(ctx, mlv_cfg_item_pos(items[i], "address"),
				      "backend '%s' of VIP '%s' is IPv%d and the VIP IPv%d: health via: data_path needs both of one family",
				      b->name, vip->name,
				      b->address.family == MLV_AF_INET ? 4 : 6,
				      vip->address.family == MLV_AF_INET ? 4 : 6);
	}
	snprintf(where, sizeof(where), " in VIP '%s'", vip->name);
	check_unique_names(ctx, "backend", names, vip->n_backends, items, where);
out:
	free(names);
	free(items);
}

/* vnodes belongs to rings; a ring must fit MLV_RING_MAX_POINTS. */
static void check_table_choice(struct mlv_cfg_ctx *ctx,
			       const struct mlv_vip_config *vip,
			       const struct mlv_cfg_seen *seen)
{
	uint64_t points = 0;

	if (!mlv_cfg_usable(seen, "table") || !mlv_cfg_usable(seen, "vnodes"))
		return;
	if (mlv_cfg_given(seen, "vnodes") && vip->table != MLV_TABLE_RING)
		mlv_cfg_error(ctx, mlv_cfg_pos(seen, "vnodes"),
			      "vnodes is only used with table: ring (VIP '%s' uses %s)",
			      vip->name, mlv_table_kind_name(vip->table));
	if (vip->table != MLV_TABLE_RING)
		return;
	for (uint32_t i = 0; i < vip->n_backends; i++)
		points += (uint64_t)vip->backends[i].weight * vip->vnodes;
	if (points > MLV_RING_MAX_POINTS)
		mlv_cfg_error(ctx, mlv_cfg_pos(seen, "vnodes"),
			      "ring of VIP '%s' would have %llu points (sum of weight x vnodes %u); at most %u: lower vnodes or the weights",
			      vip->name, (unsigned long long)points, vip->vnodes,
			      MLV_RING_MAX_POINTS);
}

/* MSS clamping rewrites TCP SYNs: a UDP VIP has none, so it may not
 * set it, and defaults.mss_clamp does not reach it. */
static void check_mss_clamp(struct mlv_cfg_ctx *ctx, struct mlv_vip_config *vip,
			    const struct mlv_cfg_seen *seen)
{
	if (vip->protocol == IPPROTO_TCP || !mlv_cfg_usable(seen, "protocol"))
		return;
	if (mlv_cfg_given(seen, "mss_clamp"))
		mlv_cfg_error(ctx, mlv_cfg_pos(seen, "mss_clamp"),
			      "mss_clamp is only used with protocol: tcp (VIP '%s' is %s)",
			      vip->name, mlv_proto_name(vip->protocol));
	vip->mss_clamp = MLV_MSS_CLAMP_OFF;
}

/* Second chance's hops travel in GUE private data and only TCP has the
 * socket state a backend tests, so a VIP that sets second_chance with
 * another method or protocol is an error; defaults.second_chance does
 * not reach such a VIP. */
static void check_second_chance(struct mlv_cfg_ctx *ctx,
				struct mlv_vip_config *vip,
				const struct mlv_cfg_seen *seen)
{
	const char *why = NULL;

	if (!vip->second_chance.enabled || !mlv_cfg_usable(seen, "forwarding") ||
	    !mlv_cfg_usable(seen, "protocol"))
		return;
	if (vip->forwarding != MLV_FWD_GUE)
		why = "forwarding: gue";
	else if (vip->protocol != IPPROTO_TCP)
		why = "protocol: tcp";
	if (why == NULL)
		return;
	if (mlv_cfg_given(seen, "second_chance"))
		mlv_cfg_error(ctx, mlv_cfg_pos(seen, "second_chance"),
			      "second_chance needs %s (VIP '%s' is %s %s): its hops travel in GUE private data and backends test TCP sockets",
			      why, vip->name, fwd_name(vip->forwarding),
			      mlv_proto_name(vip->protocol));
	vip->second_chance.enabled = false;
}

void mlv_cfg_finish_control(struct mlv_cfg_ctx *ctx, void *obj,
			    const struct mlv_cfg_seen *seen)
{
	const struct mlv_config *cfg = obj;
	const struct mlv_metrics_limits *ml = &cfg->metrics_limits;
	cpu_set_t set;
	char why[96];

	if (ml->max_per_address > ml->max_connections &&
	    mlv_cfg_usable(seen, "metrics_max_connections") &&
	    mlv_cfg_usable(seen, "metrics_max_connections_per_address"))
		mlv_cfg_error(ctx, mlv_cfg_pos(seen,
				"metrics_max_connections_per_address"),
			      "control.metrics_max_connections_per_address %u "
			      "is above control.metrics_max_connections %u",
			      ml->max_per_address, ml->max_connections);
	if (!mlv_cfg_given(seen, "build_cpus") || cfg->build_cpus[0] == '\0')
		return;
	if (mlv_cpu_list_parse(cfg->build_cpus, &set, why, sizeof(why)) != MLV_OK)
		mlv_cfg_error(ctx, mlv_cfg_pos(seen, "build_cpus"),
			      "control.build_cpus \"%s\": %s", cfg->build_cpus,
			      why);
}

void mlv_cfg_finish_announce(struct mlv_cfg_ctx *ctx, void *obj,
			     const struct mlv_cfg_seen *seen)
{
	const struct mlv_config *cfg = obj;
	/* RT_TABLE_DEFAULT, RT_TABLE_MAIN, RT_TABLE_LOCAL: the host's own
	 * routing reads them, so VIP routes there would steer the host's
	 * traffic for the VIPs into the announce device. */
	static const char *const reserved[] = { "default", "main", "local" };

	if (cfg->announce_table >= 253 && cfg->announce_table <= 255)
		mlv_cfg_error(ctx, mlv_cfg_pos(seen, "table"),
			      "announce.table %u is the kernel's '%s' table; "
			      "use a table of its own (e.g. 100)",
			      cfg->announce_table,
			      reserved[cfg->announce_table - 253]);
}

/* A UDP VIP checked by tcp or http tests a TCP service: on the VIP's own
 * port (health.port unset or equal to it) one the VIP does not have (a
 * backend would look down, and fail open), through the data path on
 * another port of the VIP's address one the VIP does not name. Both are
 * warnings: a TCP service beside a UDP one exists (DNS), but an operator
 * should say so in the VIP's own health. */
static void check_udp_health(struct mlv_cfg_ctx *ctx,
			     const struct mlv_vip_config *vip,
			     const struct mlv_cfg_seen *seen)
{
	const struct mlv_health_config *h = &vip->health;
	bool own = mlv_cfg_given(seen, "health");
	const char *type = h->type == MLV_HEALTH_TCP ? "tcp" : "http";
	struct mlv_src_pos at = own ? mlv_cfg_pos(seen, "health") : vip->pos;

	if (vip->protocol != IPPROTO_UDP || mlv_vip_port_wild(vip) ||
	    (h->type != MLV_HEALTH_TCP && h->type != MLV_HEALTH_HTTP))
		return;
	if (h->port == 0 || h->port == vip->port)
		mlv_cfg_warn(ctx, at,
			     "VIP '%s' is UDP but its health check is %s on the "
			     "VIP's own port %u%s%s: that checks a TCP service it "
			     "does not have (a backend would look down, and "
			     "fail open); use type udp or dns, or set health.port "
			     "to a TCP port the backends serve",
			     vip->name, type, vip->port,
			     h->via == MLV_HEALTH_VIA_DATA_PATH ?
			     " through the data path" : "",
			     own ? "" : " (from defaults.health)");
	else if (h->via == MLV_HEALTH_VIA_DATA_PATH && !own)
		mlv_cfg_warn(ctx, at,
			     "VIP '%s' is UDP but inherits defaults.health: a %s "
			     "check through the data path to port %u of the "
			     "VIP's address, a TCP service there rather than "
			     "the VIP (shared with any VIP checked the same "
			     "way); give the VIP its own health, type udp or "
			     "dns", vip->name, type, h->port);
}

void mlv_cfg_finish_vip(struct mlv_cfg_ctx *ctx, void *obj,
			const struct mlv_cfg_seen *seen)
{
	struct mlv_vip_config *vip = obj;

	if (vip->address.family != MLV_AF_NONE && !is_unicast(&vip->address))
		mlv_cfg_error(ctx, mlv_cfg_pos(seen, "address"),
			      "VIP address must be a unicast address");
	if (mlv_cfg_given(seen, "gue_port") && mlv_cfg_usable(seen, "forwarding") &&
	    vip->forwarding != MLV_FWD_GUE)
		mlv_cfg_error(ctx, mlv_cfg_pos(seen, "gue_port"),
			      "gue_port is only used with forwarding: gue (VIP '%s' uses %s)",
			      vip->name, fwd_name(vip->forwarding));
	check_mss_clamp(ctx, vip, seen);
	check_ipip_source(ctx, vip, seen);
	check_second_chance(ctx, vip, seen);
	check_backends(ctx, vip, seen);
	mlv_cfg_check_quic(ctx, vip, seen);
	if (ctx->nomem)
		return;
	if (ctx->cfg->announce_table != 0 && vip->min_backends > vip->n_backends)
		mlv_cfg_warn(ctx, mlv_cfg_given(seen, "announce") ?
				  mlv_cfg_pos(seen, "announce") : vip->pos,
			     "VIP '%s' is never announced: announce.min_backends "
			     "%u is more than its %u backends", vip->name,
			     vip->min_backends, vip->n_backends);
	check_table_choice(ctx, vip, seen);
	if (mlv_cfg_given(seen, "new_flows_burst") && vip->new_flows_burst &&
	    mlv_cfg_usable(seen, "new_flows_per_second") &&
	    vip->new_flows_per_second == 0)
		mlv_cfg_error(ctx, mlv_cfg_pos(seen, "new_flows_burst"),
			      "new_flows_burst limits nothing without "
			      "new_flows_per_second (VIP '%s' has no rate)",
			      vip->name);
	mlv_cfg_check_vip_ports_hash(ctx, vip, seen);
	mlv_cfg_check_acl(ctx, vip, seen);
	check_udp_health(ctx, vip, seen);
	if (vip->n_backends == 0)
		mlv_cfg_warn(ctx, mlv_cfg_given(seen, "backends") ?
				  mlv_cfg_pos(seen, "backends") : vip->pos,
			     "VIP '%s' has no backends%s; its traffic will be dropped",
			     vip->name, mlv_cfg_given(seen, "backends") ? "" :
			     " (no 'backends' key)");
	if (mlv_cfg_usable(seen, "table_size") && vip->table_size != 0 &&
	    vip->n_backends > vip->table_size / 100)
		mlv_cfg_warn(ctx, mlv_cfg_pos(seen, "table_size"),
			     "VIP '%s' has %u backends for %u table slots; Maglev balances evenly only while backends <= table_size/100 (%u); raise table_size",
			     vip->name, vip->n_backends, vip->table_size,
			     vip->table_size / 100);
	/* Name order makes every instance build byte-identical tables. */
	if (vip->n_backends > 1)
		qsort(vip->backends, vip->n_backends, sizeof(*vip->backends),
		      backend_name_cmp);
}

/* ---- the whole file ---- */

void mlv_cfg_finish_root(struct mlv_cfg_ctx *ctx, void *obj,
			 const struct mlv_cfg_seen *seen)
{
	struct mlv_config *cfg = obj;
	const struct mlv_ynode **items;
	const char **names;
	uint32_t i;

	items = mlv_cfg_list_items(ctx, mlv_cfg_value(seen, "vips"), cfg->n_vips);
	if (items == NULL)
		return;
	names = calloc(cfg->n_vips, sizeof(*names));
	if (names == NULL) {
		ctx->nomem = true;
		goto out;
	}
	for (i = 0; i < cfg->n_vips; i++)
		names[i] = cfg->vips[i].name;
	check_unique_names(ctx, "VIP", names, cfg->n_vips, items, "");
	mlv_cfg_check_unique_vips(ctx, cfg, items);
out:
	free(names);
	free(items);
}
