/* SPDX-License-Identifier: BSD-3-Clause */
/* The VIPs of more than one port (a range "A-B" or `any`) inside a
 * generation, found in O(1) whatever their number: the exact
 * (address, port, protocol) table (dataplane/view/index.h) misses, then
 *
 *   wild index (address, port 0, protocol) -> entry {any VIP, port map}
 *   port map: top[port >> 8] -> a VIP (every port of those 256 has the
 *             same one), or a leaf: leaf[port & 255] -> a VIP
 *
 * so a range VIP costs one more hash probe and at most two loads. The
 * map holds each port's VIP with the `any` VIP already in the ports no
 * range has: exact port > range > any is settled when the generation is
 * built. Memory: a map (1 KiB) per (address, protocol) with ranges, and
 * a leaf (512 bytes) for each 256-port block a range starts or ends
 * inside: at most 2 KiB per range VIP, beside the generation's other
 * tables. The structure and its look-up: dataplane/view/port_map.h;
 * its build, internal to the generation builder and its tests, here.
 */
#ifndef MLV_GEN_PORT_MAP_H
#define MLV_GEN_PORT_MAP_H

#include <stdint.h>

#include "control/base/error.h"
#include "dataplane/view/port_map.h"

struct mlv_gen_vip;

/* Room for n_vips VIPs of which n_ranges are ranges: how many of each
 * element to give mlv_gen_port_maps_init. Pure. */
#define MLV_PORT_MAP_TOPS(n_ranges) (n_ranges)
#define MLV_PORT_MAP_LEAVES(n_ranges) (2 * (n_ranges))

/* Point m at zeroed memory: index_slots slots (mlv_gen_index_slots of
 * the VIP count), n_vips wild entries, MLV_PORT_MAP_TOPS / _LEAVES of the
 * range count. Control thread (building). */
void mlv_gen_port_maps_init(struct mlv_gen_port_maps *m,
			    struct mlv_gen_vip_slot *slots, uint32_t n_slots,
			    struct mlv_gen_wild *wild, uint32_t (*top)[256],
			    uint16_t (*leaf)[256]);

/* Add every VIP of vips[0, n) that has more than one port. MLV_E_INVAL
 * if two are `any` on one address and protocol, or two ranges there
 * overlap (the config check reports both with positions first);
 * MLV_E_NOMEM. Control thread. */
enum mlv_err mlv_gen_port_maps_build(struct mlv_gen_port_maps *m,
				     const struct mlv_gen_vip *vips, uint32_t n);

#endif
