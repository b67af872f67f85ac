/* SPDX-License-Identifier: BSD-3-Clause */
/* The mbuf data room a config's ports need. The data room is the bytes
 * of an mbuf's buffer, headroom included, as rte_pktmbuf_pool_create and
 * testpmd's --mbuf-size count it. Every frame a port may receive must fit
 * one segment (scatter is off, so the parser always sees whole headers)
 * behind the headroom that encapsulation writes its outer headers into.
 *
 * Plain C without DPDK, so the config validator can check
 * dataplane.mbuf_size; dataplane/worker/port.c asserts that the constants match
 * DPDK's. Pure functions: any thread.
 */
#ifndef MLV_MBUF_SIZE_H
#define MLV_MBUF_SIZE_H

#include <stdint.h>

#include "control/config/config.h"

#define MLV_MBUF_HEADROOM 128        /* RTE_PKTMBUF_HEADROOM */
#define MLV_MBUF_DEFAULT_SIZE (2048 + MLV_MBUF_HEADROOM) /* RTE_MBUF_DEFAULT_BUF_SIZE */
#define MLV_MBUF_MAX_SIZE 65535      /* DPDK keeps it in a uint16_t */
/* Ethernet header, two VLAN tags and the FCS around an MTU-sized packet */
#define MLV_FRAME_OVERHEAD (14 + 2 * 4 + 4)

/* The smallest data room for frames of a port with this MTU: headroom +
 * mtu + MLV_FRAME_OVERHEAD. */
uint32_t mlv_mbuf_size_min(uint32_t mtu);

/* The data room the pools use: cfg->mbuf_size if set, else the smallest
 * room for the largest port MTU rounded up to 64 bytes, and never less
 * than DPDK's default. */
uint32_t mlv_mbuf_size(const struct mlv_config *cfg);

#endif
