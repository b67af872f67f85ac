/* SPDX-License-Identifier: BSD-3-Clause */
/* The records that tell the check-path programs which connections are
 * data-path health checks (docs/health.md, "Checks through the data
 * path"). Written by maglevd's control thread (control/check_path), read
 * by the tc programs; shared by both sides. Addresses are 16 bytes, an
 * IPv4 address in the first four; ports in network byte order, as the
 * programs read them from the packet. */
#ifndef MLV_BPF_CHECK_PATH_STRUCTS_H
#define MLV_BPF_CHECK_PATH_STRUCTS_H

#include <linux/types.h>

/* Values of mlv_cp_out.method: how the data plane forwards the VIP. */
#define MLV_CP_IPIP  0
#define MLV_CP_GUE   1
#define MLV_CP_L2DSR 2

/* An outgoing check packet: addressed by the kernel to the backend. */
struct mlv_cp_out_key {
	__u8 backend[16];      /* the packet's destination */
	__be16 port;           /* its destination port: the check port */
	__be16 local_port;     /* its source port: the check socket's own */
	__u8 family;           /* 4 or 6 */
	__u8 pad[3];
};

/* What the packet becomes. */
struct mlv_cp_out {
	__u8 vip[16];          /* the destination the backend sees */
	__u8 mac[6];           /* l2dsr with has_mac: the destination MAC */
	__u8 has_mac;
	__u8 method;           /* MLV_CP_* */
	__be16 gue_port;       /* gue: outer UDP destination port */
	__u8 pad[2];
	__u8 src_prefix[16];   /* ipip with has_src: the outer source's
				  prefix, of the packet's family, its host
				  bits zero */
	__u8 src_len;          /* its length: the host bits (at most the
				  last 32) come from the flow hash */
	__u8 has_src;          /* 0: the outer source is the packet's own */
	__u8 pad2[2];
};

/* A reply: from the VIP to the check socket's port. */
struct mlv_cp_in_key {
	__u8 vip[16];          /* the packet's source */
	__be16 port;           /* its source port: the check port */
	__be16 local_port;     /* its destination port */
	__u8 family;
	__u8 pad[3];
};

/* What its source becomes: the address the check socket connected to. */
struct mlv_cp_in {
	__u8 backend[16];
};

#endif
