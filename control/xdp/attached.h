/* SPDX-License-Identifier: BSD-3-Clause */
/* Userspace: the XDP program attached to a network interface, whoever
 * loaded it (our loaders, or DPDK's net_af_xdp PMD from an xdp_prog=
 * object): which program it is, file descriptors of its maps by name, and
 * detaching it. Uses libbpf's low-level API only, so it works on a
 * program this process did not load.
 *
 * Threads: any one thread at a time per interface; no shared state.
 * Errors come back as enum mlv_err with a one-line explanation written to
 * errbuf (when not NULL), naming the interface. */
#ifndef MLV_BPF_XDP_ATTACHED_H
#define MLV_BPF_XDP_ATTACHED_H

#include <stddef.h>
#include <stdint.h>

#include "control/base/error.h"

/* The attached program: id 0 if none. mode_flags is the XDP_FLAGS_*_MODE
 * it runs in (what detaching must pass). */
struct mlv_xdp_attached {
	uint32_t prog_id;
	uint32_t mode_flags;
	char name[16];      /* the program's (function's) name, NUL-ended */
};

/* Query ifindex. MLV_OK with prog_id 0 when nothing is attached;
 * MLV_E_IO if the kernel cannot be asked. When a program is attached in
 * both driver and generic mode, the driver-mode one is reported. */
enum mlv_err mlv_xdp_attached_query(int ifindex, struct mlv_xdp_attached *out,
				    char *errbuf, size_t errlen);

/* A map the caller expects on the attached program. The shape check
 * catches a program from a different build whose key layout differs. */
struct mlv_xdp_map_want {
	const char *name;     /* BPF map name (at most 15 characters) */
	uint32_t type;        /* BPF_MAP_TYPE_* */
	uint32_t key_size;
	uint32_t value_size;
	int fd;               /* out: an fd the caller closes; -1 if not found */
};

/* Open the maps named in want[0..n) of program prog_id. MLV_OK when every
 * one was found with the expected shape; MLV_E_NOT_FOUND if the program or
 * a map is missing; MLV_E_PROTO if a map has another shape; MLV_E_PERM
 * without CAP_BPF/CAP_SYS_ADMIN. On error no fd is left open. */
enum mlv_err mlv_xdp_attached_maps(uint32_t prog_id,
				   struct mlv_xdp_map_want *want, size_t n,
				   char *errbuf, size_t errlen);

/* Detach the program attached to ifindex if its name is prog_name; a
 * program of any other name is left alone (MLV_E_BUSY). *removed says
 * whether one was detached; nothing attached is MLV_OK with *removed
 * false. The detach names the program it replaces (XDP_FLAGS_REPLACE),
 * so a program attached concurrently by someone else is never removed. */
enum mlv_err mlv_xdp_attached_detach(int ifindex, const char *prog_name,
				     int *removed, char *errbuf,
				     size_t errlen);

#endif
