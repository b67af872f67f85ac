/* SPDX-License-Identifier: BSD-3-Clause */
/* The host TAP of a port without a kernel interface (host_tap: true, a
 * PCI NIC): the kernel side of the port. maglevd sends it every frame
 * that is not for a VIP and sends what the kernel writes to it out of
 * the port (its exception port), so the kernel answers ARP and neighbour
 * solicitations for the port's addresses, resolves next hops (next_hop:
 * auto reads its neighbour table), and runs health checks and BGP over
 * the NIC. For that the interface takes the port's MAC and addresses.
 * Threads: control thread only.
 */
#ifndef MLV_DAEMON_HOST_TAP_H
#define MLV_DAEMON_HOST_TAP_H

#include <stddef.h>
#include <stdint.h>

#include "control/base/addr.h"
#include "control/base/error.h"

/* Give interface ifname the MAC mac, the addresses addr4/prefix4 and
 * addr6/prefix6 (either of family MLV_AF_NONE: none; IPv6 without
 * duplicate address detection, the port's address is its own), and
 * bring it up. Idempotent (a restart finds them set). MLV_OK, or an
 * error with a sentence in why naming the step and the kernel's
 * reason. */
enum mlv_err mlv_host_tap_setup(const char *ifname, const uint8_t mac[6],
				const struct mlv_ip *addr4, uint32_t prefix4,
				const struct mlv_ip *addr6, uint32_t prefix6,
				char *why, size_t why_len);

#endif
