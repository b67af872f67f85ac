/* SPDX-License-Identifier: BSD-3-Clause */
/* Map keys and values of the decapsulator (xdp_decap.bpf.c), shared with
 * tools/bin/maglev-decap which fills the maps. Only <linux/types.h> types. */
#ifndef MLV_BPF_DECAP_STRUCTS_H
#define MLV_BPF_DECAP_STRUCTS_H

#include <linux/types.h>

#include "dataplane/bpf/common/addr_key.h"

/* decap_addrs value: presence is what matters. */
struct mlv_decap_addr_val {
	__u32 flags;    /* reserved, zero */
};

/* decap_gue_ports key: a UDP destination port that carries GUE. */
struct mlv_decap_port_key {
	__be16 port;    /* network order */
};

/* decap_gue_ports value: presence is what matters. */
struct mlv_decap_port_val {
	__u32 flags;    /* reserved, zero */
};

#endif
