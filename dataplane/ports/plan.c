/* SPDX-License-Identifier: BSD-3-Clause */
#include "dataplane/ports/plan.h"

#include <stdio.h>
#include <string.h>

static uint16_t port_index(const struct mlv_config *cfg, const char *name)
{
	for (uint32_t i = 0; i < cfg->n_ports; i++)
		if (strcmp(cfg->ports[i].name, name) == 0)
			return (uint16_t)i;
	return MLV_PORT_NONE;
}

static bool vips_need_next_hop(const struct mlv_config *cfg)
{
	for (uint32_t i = 0; i < cfg->n_vips; i++)
		if (cfg->vips[i].forwarding != MLV_FWD_L2DSR)
			return true;
	return false;
}

enum mlv_err mlv_port_plan_make(const struct mlv_config *cfg,
				struct mlv_port_plan *plan,
				char *err, size_t errlen)
{
	bool need_next_hop = vips_need_next_hop(cfg);

	memset(plan, 0, sizeof(*plan));
	plan->exception = MLV_PORT_NONE;
	plan->exception_out = MLV_PORT_NONE;
	if (cfg->n_ports == 0 || cfg->n_ports > MLV_MAX_PORTS) {
		snprintf(err, errlen, "dataplane.ports: %u ports (1..%u allowed)",
			 cfg->n_ports, MLV_MAX_PORTS);
		return MLV_E_CONFIG;
	}
	plan->n_ports = cfg->n_ports;

	for (uint32_t i = 0; i < cfg->n_ports; i++) {
		const struct mlv_port_config *p = &cfg->ports[i];
		uint16_t tx = (uint16_t)i;

		if (p->tx_port[0]) {
			tx = port_index(cfg, p->tx_port);
			if (tx == MLV_PORT_NONE) {
				snprintf(err, errlen, "port %s: tx_port '%s' is "
					 "not a configured port", p->name,
					 p->tx_port);
				return MLV_E_CONFIG;
			}
		}
		plan->tx_of[i] = tx;
		plan->transmits[tx] = true;
		if (p->exception) {
			if (plan->exception != MLV_PORT_NONE) {
				snprintf(err, errlen, "port %s: only one port may "
					 "be the exception port (%s is already)",
					 p->name,
					 cfg->ports[plan->exception].name);
				return MLV_E_CONFIG;
			}
			plan->exception = (uint16_t)i;
		}
	}

	for (uint32_t i = 0; i < cfg->n_ports; i++) {
		if (plan->exception_out == MLV_PORT_NONE &&
		    i != plan->exception)
			plan->exception_out = (uint16_t)i;
		plan->auto_next_hop[i] = need_next_hop && plan->transmits[i] &&
					 cfg->ports[i].next_hop_auto;
	}
	return MLV_OK;
}

uint32_t mlv_port_plan_mbufs(uint32_t n_rx_desc_total,
			     uint32_t n_tx_desc_total, uint32_t n_workers,
			     uint32_t n_ports, uint32_t burst,
			     uint32_t cache_size, uint32_t n_lcores)
{
	/* per worker: one receive burst in hand plus a full transmit buffer
	 * per port */
	uint64_t need = (uint64_t)n_rx_desc_total + n_tx_desc_total +
			(uint64_t)n_workers * burst * (1 + n_ports) +
			(uint64_t)cache_size * n_lcores;
	uint64_t size = 1;

	while (size - 1 < need)
		size <<= 1;
	if (size - 1 > UINT32_MAX)
		return 0;
	return (uint32_t)(size - 1);
}
