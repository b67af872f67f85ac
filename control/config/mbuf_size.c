/* SPDX-License-Identifier: BSD-3-Clause */
#include "control/config/mbuf_size.h"

uint32_t mlv_mbuf_size_min(uint32_t mtu)
{
	return MLV_MBUF_HEADROOM + mtu + MLV_FRAME_OVERHEAD;
}

uint32_t mlv_mbuf_size(const struct mlv_config *cfg)
{
	uint32_t max_mtu = 0, room;

	if (cfg->mbuf_size)
		return cfg->mbuf_size;
	for (uint32_t i = 0; i < cfg->n_ports; i++)
		if (cfg->ports[i].mtu > max_mtu)
			max_mtu = cfg->ports[i].mtu;
	/* whole cache lines of frame after the headroom */
	room = MLV_MBUF_HEADROOM + (max_mtu + MLV_FRAME_OVERHEAD + 63) / 64 * 64;
	if (room < MLV_MBUF_DEFAULT_SIZE)
		room = MLV_MBUF_DEFAULT_SIZE;
	return room > MLV_MBUF_MAX_SIZE ? MLV_MBUF_MAX_SIZE : room;
}
