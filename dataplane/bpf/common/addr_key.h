/* SPDX-License-Identifier: BSD-3-Clause */
/* The key of every BPF map indexed by an IP address alone (VIP addresses
 * for the steering program's fragment/ICMP cases, this host's addresses
 * for the decapsulator). Shared by the BPF programs and their userspace
 * loaders, so it uses only <linux/types.h> types and has no padding the
 * two sides could fill differently. */
#ifndef MLV_BPF_ADDR_KEY_H
#define MLV_BPF_ADDR_KEY_H

#include <linux/types.h>

/* Address family tags stored in keys: 4 and 6, like control/base/addr.h
 * (MLV_AF_INET / MLV_AF_INET6), not the socket AF_* numbers. */
#define MLV_BPF_FAMILY_V4 4
#define MLV_BPF_FAMILY_V6 6

struct mlv_bpf_addr_key {
	__u8 family;    /* MLV_BPF_FAMILY_V4 or _V6 */
	__u8 pad[3];    /* always zero */
	__u8 addr[16];  /* network order; IPv4 in addr[0..3], rest zero */
};

#endif
