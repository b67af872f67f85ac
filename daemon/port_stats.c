/* SPDX-License-Identifier: BSD-3-Clause */
#include "daemon/port_stats.h"

#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>

#include "daemon/daemon.h"

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

struct mlv_nic_stats {
	uint32_t n;       /* ports read; kept when they close */
	struct mlv_port_stats ps[MLV_MAX_PORTS];
	struct xstats_buf x[MLV_MAX_PORTS];
};

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
	struct mlv_nic_stats *s = d->nic;

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return 0;
		d->nic = s;
	}
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
	}
	*out = s->ps;
	return s->n;
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
