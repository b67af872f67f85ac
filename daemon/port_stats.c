/* SPDX-License-Identifier: BSD-3-Clause */
#include "daemon/port_stats.h"

#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>

#include "control/base/log.h"
#include "daemon/daemon.h"
#include "dataplane/worker/bond.h"

/* One port's extended statistics: DPDK's names and values, and the
 * (name, value) pairs handed out, which point into names. */
struct xstats_buf {
	struct rte_eth_xstat_name *names;
	struct rte_eth_xstat *vals;
	struct mlv_port_xstat *out;
	uint32_t cap;
	int n_names;        /* names[] holds this many; 0: none yet. A
			       started port's set does not change, so they
			       are asked for again only when the count does */
};

/* What the link watch last logged of one port. */
struct link_seen {
	bool known;
	bool up;
	uint32_t n;                        /* members */
	bool member_up[MLV_PORT_MAX_MEMBERS];
	bool member_active[MLV_PORT_MAX_MEMBERS];
};

struct mlv_nic_stats {
	uint32_t n;       /* ports read; kept when they close */
	struct mlv_port_stats ps[MLV_MAX_PORTS];
	struct xstats_buf x[MLV_MAX_PORTS];
	char member_name[MLV_MAX_PORTS][MLV_PORT_MAX_MEMBERS][RTE_ETH_NAME_MAX_LEN];
	struct link_seen seen[MLV_MAX_PORTS];
};

static struct mlv_nic_stats *nic(struct mlv_daemon *d)
{
	if (!d->nic)
		d->nic = calloc(1, sizeof(*d->nic));
	return d->nic;
}

/* Port i's link and, for a bond, its members' states and counters into
 * p (names kept in s). */
static void read_links(struct mlv_nic_stats *s, uint32_t i, uint16_t port_id,
		       bool bond, struct mlv_port_stats *p)
{
	struct mlv_bond_member m[MLV_PORT_MAX_MEMBERS];
	struct rte_eth_link link;
	uint32_t n = bond ? mlv_bond_members(port_id, m, MLV_PORT_MAX_MEMBERS) : 0;

	p->link = rte_eth_link_get_nowait(port_id, &link) != 0 ?
		  MLV_PORT_LINK_UNKNOWN : link.link_status == RTE_ETH_LINK_UP ?
		  MLV_PORT_LINK_UP : MLV_PORT_LINK_DOWN;
	p->n_members = n;
	if (n)      /* the driver keeps a bond up while it lists any member */
		p->link = MLV_PORT_LINK_DOWN;
	for (uint32_t k = 0; k < n; k++) {
		struct mlv_port_member *pm = &p->members[k];
		struct rte_eth_stats e;

		if (rte_eth_dev_get_name_by_port(m[k].port_id,
						 s->member_name[i][k]) != 0)
			snprintf(s->member_name[i][k], RTE_ETH_NAME_MAX_LEN,
				 "port%u", m[k].port_id);
		pm->device = s->member_name[i][k];
		pm->up = m[k].up;
		if (pm->up)
			p->link = MLV_PORT_LINK_UP;
		pm->active = m[k].active;
		if (rte_eth_stats_get(m[k].port_id, &e) == 0) {
			pm->rx_packets = e.ipackets;
			pm->tx_packets = e.opackets;
			pm->rx_errors = e.ierrors + e.imissed;
			pm->tx_errors = e.oerrors;
		}
	}
}

static void read_xstats(uint16_t port_id, struct xstats_buf *b,
			struct mlv_port_stats *p)
{
	int n = rte_eth_xstats_get(port_id, NULL, 0), got;

	p->n_xstats = 0;
	if (n <= 0)
		return;
	if ((uint32_t)n > b->cap) {
		struct rte_eth_xstat_name *names = realloc(b->names,
			(size_t)n * sizeof(*names));
		struct rte_eth_xstat *vals;
		struct mlv_port_xstat *out;

		if (!names)
			return;
		b->names = names;
		vals = realloc(b->vals, (size_t)n * sizeof(*vals));
		if (!vals)
			return;
		b->vals = vals;
		out = realloc(b->out, (size_t)n * sizeof(*out));
		if (!out)
			return;
		b->out = out;
		b->cap = (uint32_t)n;
	}
	if (n != b->n_names) {
		b->n_names = 0;
		if (rte_eth_xstats_get_names(port_id, b->names, (unsigned)n) != n)
			return;
		b->n_names = n;
	}
	got = rte_eth_xstats_get(port_id, b->vals, (unsigned)n);
	if (got <= 0 || got > n)
		return;     /* the set grew between the calls: next time */
	for (int i = 0; i < got; i++) {
		if (b->vals[i].id >= (uint64_t)n)
			continue;
		b->out[p->n_xstats].name = b->names[b->vals[i].id].name;
		b->out[p->n_xstats].value = b->vals[i].value;
		p->n_xstats++;
	}
	p->xstats = b->out;
}

uint32_t mlv_daemon_port_stats(struct mlv_daemon *d,
			       const struct mlv_port_stats **out)
{
	struct mlv_nic_stats *s = nic(d);

	if (!s)
		return 0;
	if (d->ports.n > 0)
		s->n = d->ports.n < d->cfg->n_ports ? d->ports.n : d->cfg->n_ports;
	for (uint32_t i = 0; i < s->n && i < d->ports.n; i++) {
		const struct mlv_port *port = &d->ports.port[i];
		struct mlv_port_stats *p = &s->ps[i];
		struct rte_eth_stats e;

		p->name = d->cfg->ports[i].name;
		p->device = d->cfg->ports[i].device;
		if (!port->started)
			continue;   /* closed: its last reading stays */
		if (rte_eth_stats_get(port->port_id, &e) != 0) {
			p->ok = false;
			continue;
		}
		p->ok = true;
		p->v[MLV_PORT_CTR_RX_PACKETS] = e.ipackets;
		p->v[MLV_PORT_CTR_TX_PACKETS] = e.opackets;
		p->v[MLV_PORT_CTR_RX_BYTES] = e.ibytes;
		p->v[MLV_PORT_CTR_TX_BYTES] = e.obytes;
		p->v[MLV_PORT_CTR_RX_MISSED] = e.imissed;
		p->v[MLV_PORT_CTR_RX_ERRORS] = e.ierrors;
		p->v[MLV_PORT_CTR_TX_ERRORS] = e.oerrors;
		p->v[MLV_PORT_CTR_RX_NOMBUF] = e.rx_nombuf;
		read_xstats(port->port_id, &s->x[i], p);
		read_links(s, i, port->port_id, port->bond, p);
	}
	*out = s->ps;
	return s->n;
}

void mlv_daemon_watch_links(struct mlv_daemon *d)
{
	struct mlv_nic_stats *s = nic(d);

	for (uint32_t i = 0; s && i < d->ports.n && i < d->cfg->n_ports; i++) {
		const struct mlv_port *port = &d->ports.port[i];
		const char *name = d->cfg->ports[i].name;
		struct link_seen *w = &s->seen[i];
		struct mlv_port_stats now;
		char using[160] = "";
		size_t used = 0;
		bool up, moved;

		if (!port->started)
			continue;
		memset(&now, 0, sizeof(now));
		read_links(s, i, port->port_id, port->bond, &now);
		if (now.link == MLV_PORT_LINK_UNKNOWN)
			continue;
		up = now.link == MLV_PORT_LINK_UP;
		/* the port's link, or which members carry the traffic */
		moved = !w->known || w->up != up || w->n != now.n_members;
		for (uint32_t k = 0; k < now.n_members; k++) {
			const struct mlv_port_member *m = &now.members[k];

			if (w->known && k < w->n && w->member_up[k] != m->up)
				mlv_log(m->up ? MLV_LOG_INFO : MLV_LOG_WARNING,
					"port %s: bond member %s: link %s", name,
					m->device, m->up ? "up" : "down");
			moved |= k >= w->n || w->member_active[k] != m->active;
			if (m->active && used < sizeof(using))
				used += (size_t)snprintf(using + used,
					sizeof(using) - used, "%s%s",
					used ? ", " : "", m->device);
			w->member_up[k] = m->up;
			w->member_active[k] = m->active;
		}
		if (moved && now.n_members)
			mlv_log(up && used ? MLV_LOG_INFO : MLV_LOG_WARNING,
				"port %s: link %s; traffic on %s", name,
				up ? "up" : "down", used ? using : "no member");
		else if (moved && w->known)
			mlv_log(up ? MLV_LOG_INFO : MLV_LOG_WARNING,
				"port %s: link %s", name, up ? "up" : "down");
		w->known = true;
		w->up = up;
		w->n = now.n_members;
	}
}

void mlv_daemon_port_stats_free(struct mlv_daemon *d)
{
	if (!d->nic)
		return;
	for (uint32_t i = 0; i < MLV_MAX_PORTS; i++) {
		free(d->nic->x[i].names);
		free(d->nic->x[i].vals);
		free(d->nic->x[i].out);
	}
	free(d->nic);
	d->nic = NULL;
}
